/*
 * util/locked.h - a value under the mutex that guards it: reading it, and
 * waiting for a stop flag it guards.
 *
 * A getter of a field that its owner changes under a lock reads it under
 * the same lock, so that the reader sees a value some locked section left
 * (not a torn or stale one).  SAMSA_LOCKED_READ is that lock, read, unlock
 * written once: SAMSA_LOCKED_READ(&q->lock, q->len) takes q->lock,
 * evaluates q->len, releases the lock and yields the value.  The
 * expression must not lock the same mutex or leave the section.
 *
 * samsa_locked_wait_stop sleeps on a condition variable (set to
 * CLOCK_MONOTONIC) until a monotonic deadline passes or the stop flag that
 * the mutex guards is set, as a background thread's loop waits for its
 * next round.
 *
 * Thread-safe as the mutex it is given.
 */
#ifndef SAMSA_UTIL_LOCKED_H
#define SAMSA_UTIL_LOCKED_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/time.h"

#define SAMSA_LOCKED_READ(mutex, expr)                                       \
    __extension__ ({                                                         \
        pthread_mutex_t  *samsa_lr_m_ = (mutex);                             \
        __typeof__(expr)  samsa_lr_v_;                                       \
        pthread_mutex_lock(samsa_lr_m_);                                     \
        samsa_lr_v_ = (expr);                                                \
        pthread_mutex_unlock(samsa_lr_m_);                                   \
        samsa_lr_v_;                                                         \
    })

/* Wait on cond under lock until samsa_now_ms() reaches until_ms or *stop
 * (guarded by lock) is set.  @returns false when stopped, true when the
 * deadline passed.  @locks lock taken and released */
static inline bool
samsa_locked_wait_stop(pthread_mutex_t *lock, pthread_cond_t *cond,
                       const bool *stop, int64_t until_ms)
{
    struct timespec  ts;
    bool             stopped;

    ts.tv_sec = until_ms / 1000;
    ts.tv_nsec = until_ms % 1000 * 1000000;
    pthread_mutex_lock(lock);
    while (!*stop && samsa_now_ms() < until_ms) {
        pthread_cond_timedwait(cond, lock, &ts);
    }
    stopped = *stop;
    pthread_mutex_unlock(lock);
    return !stopped;
}

#endif /* SAMSA_UTIL_LOCKED_H */
