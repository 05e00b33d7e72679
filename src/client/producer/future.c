/*
 * client/producer/future.c - per-record futures (see future.h).
 * Threads: fields marked [lock] are guarded by fut->lock.
 */
#include "client/producer/future.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "util/alloc.h"
#include "util/time.h"
#include "util/locked.h"

struct samsa_future {
    pthread_mutex_t     lock;
    pthread_cond_t      cond;
    _Atomic int         refs;       /* [atomic] holders; last frees */
    bool                done;       /* [lock] */
    samsa_err_t         err;        /* [lock] */
    samsa_record_md_t   md;         /* [lock] md.topic points to topic */
    char               *topic;      /* [lock] */
};

samsa_future_t *
samsa_future_new(void)
{
    samsa_future_t      *fut = samsa_calloc(1, sizeof(*fut));
    pthread_condattr_t   attr;

    pthread_mutex_init(&fut->lock, NULL);
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&fut->cond, &attr);
    pthread_condattr_destroy(&attr);
    atomic_init(&fut->refs, 2);
    fut->md.offset = -1;
    return fut;
}

static void
future_unref(samsa_future_t *fut)
{
    /* acq_rel: the last holder sees every write the other made */
    if (atomic_fetch_sub_explicit(&fut->refs, 1, memory_order_acq_rel) == 1) {
        pthread_cond_destroy(&fut->cond);
        pthread_mutex_destroy(&fut->lock);
        samsa_free(fut->topic);
        samsa_free(fut);
    }
}

void
samsa_future_complete(samsa_future_t *fut, const samsa_record_md_t *md,
                      samsa_err_t err)
{
    pthread_mutex_lock(&fut->lock);
    fut->md = *md;
    fut->topic = samsa_strdup(md->topic != NULL ? md->topic : "");
    fut->md.topic = fut->topic;
    fut->err = err;
    fut->done = true;
    pthread_cond_broadcast(&fut->cond);
    pthread_mutex_unlock(&fut->lock);
    future_unref(fut);
}

samsa_err_t
samsa_future_wait(samsa_future_t *fut, int64_t timeout_ms,
                  samsa_record_md_t *md)
{
    struct timespec  deadline = { 0, 0 };
    samsa_err_t      err;

    if (timeout_ms >= 0) {
        deadline = samsa_timespec_after(CLOCK_MONOTONIC, timeout_ms);
    }
    pthread_mutex_lock(&fut->lock);
    while (!fut->done) {
        if (timeout_ms < 0) {
            pthread_cond_wait(&fut->cond, &fut->lock);
        } else if (pthread_cond_timedwait(&fut->cond, &fut->lock, &deadline)
                   != 0) {
            break;
        }
    }
    err = fut->done ? fut->err : SAMSA_ERR__TIMED_OUT;
    if (fut->done && md != NULL) {
        *md = fut->md;
    }
    pthread_mutex_unlock(&fut->lock);
    return err;
}

bool
samsa_future_done(samsa_future_t *fut)
{
    return SAMSA_LOCKED_READ(&fut->lock, fut->done);
}

void
samsa_future_free(samsa_future_t *fut)
{
    if (fut != NULL) {
        future_unref(fut);
    }
}
