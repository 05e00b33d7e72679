/*
 * util/queue.c - see queue.h.  Threads: any; q->lock guards the ring.
 */
#include "util/queue.h"

#include <errno.h>
#include <time.h>

#include "util/alloc.h"
#include "util/diag.h"
#include "util/time.h"
#include "util/locked.h"

void
samsa_queue_init(samsa_queue_t *q, size_t cap)
{
    pthread_condattr_t  attr;

    samsa_assert(cap > 0);
    pthread_mutex_init(&q->lock, NULL);
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&q->not_empty, &attr);
    pthread_cond_init(&q->not_full, &attr);
    pthread_condattr_destroy(&attr);
    q->ring = samsa_calloc(cap, sizeof(*q->ring));
    q->cap = cap;
    q->head = 0;
    q->len = 0;
    q->max_len = 0;
}

void
samsa_queue_fini(samsa_queue_t *q)
{
    samsa_free(q->ring);
    q->ring = NULL;
    pthread_cond_destroy(&q->not_full);
    pthread_cond_destroy(&q->not_empty);
    pthread_mutex_destroy(&q->lock);
}

/* @locks q->lock held */
static void
queue_push_locked(samsa_queue_t *q, void *item)
{
    q->ring[(q->head + q->len) % q->cap] = item;
    q->len++;
    if (q->len > q->max_len) {
        q->max_len = q->len;
    }
    pthread_cond_signal(&q->not_empty);
}

void
samsa_queue_put(samsa_queue_t *q, void *item)
{
    pthread_mutex_lock(&q->lock);
    while (q->len == q->cap) {
        pthread_cond_wait(&q->not_full, &q->lock);
    }
    queue_push_locked(q, item);
    pthread_mutex_unlock(&q->lock);
}

bool
samsa_queue_offer(samsa_queue_t *q, void *item)
{
    bool  ok = false;

    pthread_mutex_lock(&q->lock);
    if (q->len < q->cap) {
        queue_push_locked(q, item);
        ok = true;
    }
    pthread_mutex_unlock(&q->lock);
    return ok;
}

void *
samsa_queue_take(samsa_queue_t *q, int64_t timeout_ms)
{
    struct timespec  deadline = { 0, 0 };
    void            *item = NULL;

    if (timeout_ms > 0) {
        deadline = samsa_timespec_after(CLOCK_MONOTONIC, timeout_ms);
    }
    pthread_mutex_lock(&q->lock);
    while (q->len == 0 && timeout_ms != 0) {
        if (timeout_ms < 0) {
            pthread_cond_wait(&q->not_empty, &q->lock);
        } else if (pthread_cond_timedwait(&q->not_empty, &q->lock, &deadline)
                   == ETIMEDOUT) {
            break;
        }
    }
    if (q->len > 0) {
        item = q->ring[q->head];
        q->ring[q->head] = NULL;
        q->head = (q->head + 1) % q->cap;
        q->len--;
        pthread_cond_signal(&q->not_full);
    }
    pthread_mutex_unlock(&q->lock);
    return item;
}

size_t
samsa_queue_size(samsa_queue_t *q)
{
    return SAMSA_LOCKED_READ(&q->lock, q->len);
}

size_t
samsa_queue_max_size(samsa_queue_t *q)
{
    return SAMSA_LOCKED_READ(&q->lock, q->max_len);
}
