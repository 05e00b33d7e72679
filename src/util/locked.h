/*
 * util/locked.h - reading one value under the mutex that guards it.
 *
 * A getter of a field that its owner changes under a lock reads it under
 * the same lock, so that the reader sees a value some locked section left
 * (not a torn or stale one).  SAMSA_LOCKED_READ is that lock, read, unlock
 * written once: SAMSA_LOCKED_READ(&q->lock, q->len) takes q->lock,
 * evaluates q->len, releases the lock and yields the value.  The
 * expression must not lock the same mutex or leave the section.
 *
 * Thread-safe as the mutex it is given.
 */
#ifndef SAMSA_UTIL_LOCKED_H
#define SAMSA_UTIL_LOCKED_H

#include <pthread.h>

#define SAMSA_LOCKED_READ(mutex, expr)                                       \
    __extension__ ({                                                         \
        pthread_mutex_t  *samsa_lr_m_ = (mutex);                             \
        __typeof__(expr)  samsa_lr_v_;                                       \
        pthread_mutex_lock(samsa_lr_m_);                                     \
        samsa_lr_v_ = (expr);                                                \
        pthread_mutex_unlock(samsa_lr_m_);                                   \
        samsa_lr_v_;                                                         \
    })

#endif /* SAMSA_UTIL_LOCKED_H */
