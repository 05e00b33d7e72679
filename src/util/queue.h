/*
 * util/queue.h - a bounded blocking FIFO of pointers (Java's
 * ArrayBlockingQueue): put blocks while full, offer fails at once, take
 * waits up to a timeout.  The request queue and the processors'
 * new-connection queues are these.
 * Threads: any number of producers and consumers; the queue's mutex guards
 * the ring, and a semaphore counts the items in it, so that a taker waits
 * and is woken without a condition variable: glibc hands a woken cond
 * waiter the mutex marked contended, so its unlock is one more futex
 * call, per hand-off (docs/PERFORMANCE.md).
 * The queue does not own its items: ownership moves with put.
 */
#ifndef SAMSA_UTIL_QUEUE_H
#define SAMSA_UTIL_QUEUE_H

#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct samsa_queue {
    sem_t             items;        /* [atomic] items put, not yet
                                       claimed by a take (<= len) */
    pthread_mutex_t   lock;         /* guards every field below */
    pthread_cond_t    not_full;
    void            **ring;         /* [lock] cap slots */
    size_t            cap;          /* [const] */
    size_t            head;         /* [lock] next to take */
    size_t            len;          /* [lock] items queued */
    size_t            max_len;      /* [lock] most items ever queued */
} samsa_queue_t;

void samsa_queue_init(samsa_queue_t *q, size_t cap);
void samsa_queue_fini(samsa_queue_t *q);     /* items left are not freed */

/* Append item, waiting for room as long as it takes (back pressure). */
void samsa_queue_put(samsa_queue_t *q, void *item);

/* Append item if there is room now; false if full. */
bool samsa_queue_offer(samsa_queue_t *q, void *item);

/* Take the oldest item, waiting up to timeout_ms (0: don't wait, <0:
 * forever); NULL on timeout. */
void *samsa_queue_take(samsa_queue_t *q, int64_t timeout_ms);

size_t samsa_queue_size(samsa_queue_t *q);

/* The most items the queue ever held at once since init (<= cap). */
size_t samsa_queue_max_size(samsa_queue_t *q);

#endif /* SAMSA_UTIL_QUEUE_H */
