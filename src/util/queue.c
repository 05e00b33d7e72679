/*
 * util/queue.c - see queue.h.  Threads: any; q->lock guards the ring.
 * A put adds to the ring under the lock, then posts the semaphore; a take
 * first claims an item on the semaphore (waiting there, not on a
 * condition variable), then pops one under the lock: every claim has its
 * item, as every post follows its push.  not_full is signalled after the
 * unlock (a waiter woken under the lock would only block on it).
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
    samsa_assert(sem_init(&q->items, 0, 0) == 0);
    pthread_mutex_init(&q->lock, NULL);
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
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
    pthread_mutex_destroy(&q->lock);
    sem_destroy(&q->items);
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
    samsa_assert(sem_post(&q->items) == 0);
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
    if (ok) {
        samsa_assert(sem_post(&q->items) == 0);
    }
    return ok;
}

/* Claim one item on the semaphore, waiting up to timeout_ms (0: not at
 * all, <0: forever); false on timeout. */
static bool
queue_claim(samsa_queue_t *q, int64_t timeout_ms)
{
    struct timespec  deadline;
    int              rc;

    if (timeout_ms == 0) {
        do {
            rc = sem_trywait(&q->items);
        } while (rc != 0 && errno == EINTR);
        return rc == 0;
    }
    if (timeout_ms < 0) {
        do {
            rc = sem_wait(&q->items);
        } while (rc != 0 && errno == EINTR);
        return rc == 0;
    }
    deadline = samsa_timespec_after(CLOCK_MONOTONIC, timeout_ms);
    do {
        rc = sem_clockwait(&q->items, CLOCK_MONOTONIC, &deadline);
    } while (rc != 0 && errno == EINTR);
    return rc == 0;
}

void *
samsa_queue_take(samsa_queue_t *q, int64_t timeout_ms)
{
    void  *item;

    if (!queue_claim(q, timeout_ms)) {
        return NULL;
    }
    pthread_mutex_lock(&q->lock);
    samsa_assert(q->len > 0);
    item = q->ring[q->head];
    q->ring[q->head] = NULL;
    q->head = (q->head + 1) % q->cap;
    q->len--;
    pthread_mutex_unlock(&q->lock);
    pthread_cond_signal(&q->not_full);
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
