/*
 * client/producer/bufpool.c - buffer.memory (see bufpool.h).  Follows Kafka's
 * BufferPool.allocate/deallocate: take a free poolable buffer or carve from
 * the unallocated bytes (releasing free-list buffers if needed); otherwise
 * queue as a waiter and accumulate memory as it is freed.
 * Threads: any; every field is guarded by lock except [const] ones.
 */
#include "client/producer/bufpool.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "util/alloc.h"
#include "util/diag.h"
#include "util/time.h"
#include "util/locked.h"

/* A waiter that got no wake-up for this long takes whatever is free
 * (see BUFPOOL_WAKE_DIV). */
#define BUFPOOL_PATIENCE_MS  10
/* The oldest waiter is woken once buffer.memory / BUFPOOL_WAKE_DIV bytes
 * are free (or its whole request, if larger), not at every freed batch:
 * a flat-out sender thread then blocks once per 2 MiB (of the default
 * 32 MiB) instead of once per batch, two context switches each. */
#define BUFPOOL_WAKE_DIV     16

typedef struct bufpool_waiter {
    pthread_cond_t          cond;
    struct bufpool_waiter  *next;
    int64_t                 need;       /* bytes still to collect */
    bool                    patient;    /* waits for wake_bytes */
} bufpool_waiter_t;

struct samsa_bufpool {
    pthread_mutex_t     lock;
    int64_t             total;          /* [const] buffer.memory */
    size_t              poolable;       /* [const] batch.size */
    int64_t             wake_bytes;     /* [const] see BUFPOOL_WAKE_DIV */
    int64_t             unallocated;    /* [lock] Java's nonPooledAvailableMemory */
    uint8_t           **free;           /* [lock] poolable buffers, a stack */
    size_t              nfree;          /* [lock] */
    size_t              free_cap;       /* [lock] */
    bufpool_waiter_t   *wait_head;      /* [lock] FIFO of waiters */
    bufpool_waiter_t   *wait_tail;      /* [lock] */
    int                 nwaiters;       /* [lock] */
    bool                closed;         /* [lock] */
    _Atomic int64_t     wait_ns;        /* [atomic] relaxed: a metric */
};

samsa_bufpool_t *
samsa_bufpool_new(int64_t total_bytes, size_t poolable)
{
    samsa_bufpool_t  *pool = samsa_calloc(1, sizeof(*pool));

    pthread_mutex_init(&pool->lock, NULL);
    pool->total = total_bytes;
    pool->poolable = poolable;
    pool->unallocated = total_bytes;
    pool->wake_bytes = total_bytes / BUFPOOL_WAKE_DIV;
    atomic_init(&pool->wait_ns, 0);
    return pool;
}

void
samsa_bufpool_free(samsa_bufpool_t *pool)
{
    size_t  i;

    if (pool == NULL) {
        return;
    }
    samsa_assert(pool->nwaiters == 0);
    for (i = 0; i < pool->nfree; i++) {
        samsa_free(pool->free[i]);
    }
    samsa_free(pool->free);
    pthread_mutex_destroy(&pool->lock);
    samsa_free(pool);
}

/* Release free-list buffers until size bytes are unallocated (or the list
 * is empty).  @locks pool->lock held */
static void
bufpool_free_up(samsa_bufpool_t *pool, int64_t size)
{
    while (pool->nfree > 0 && pool->unallocated < size) {
        samsa_free(pool->free[--pool->nfree]);
        pool->unallocated += (int64_t) pool->poolable;
    }
}

/* Bytes free now.  @locks pool->lock held */
static int64_t
bufpool_avail(const samsa_bufpool_t *pool)
{
    return pool->unallocated + (int64_t) (pool->nfree * pool->poolable);
}

/* Does waiter w have enough free memory to go on: any, once impatient;
 * else its whole need and at least wake_bytes (or everything, if that is
 * less).  @locks pool->lock held */
static bool
bufpool_enough(const samsa_bufpool_t *pool, const bufpool_waiter_t *w)
{
    int64_t  avail = bufpool_avail(pool), want = w->need;

    if (!w->patient) {
        return avail > 0;
    }
    if (want < pool->wake_bytes) {
        want = pool->wake_bytes;
    }
    return avail >= want || avail >= pool->total;
}

/* Wake the oldest waiter if there is enough memory for it to collect.
 * @locks pool->lock held */
static void
bufpool_signal_head(samsa_bufpool_t *pool)
{
    if (pool->wait_head != NULL && bufpool_enough(pool, pool->wait_head)) {
        pthread_cond_signal(&pool->wait_head->cond);
    }
}

static void
bufpool_waiter_remove(samsa_bufpool_t *pool, bufpool_waiter_t *w)
{
    bufpool_waiter_t  **pp;

    for (pp = &pool->wait_head; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == w) {
            *pp = w->next;
            break;
        }
    }
    pool->wait_tail = NULL;
    for (w = pool->wait_head; w != NULL; w = w->next) {
        pool->wait_tail = w;
    }
    pool->nwaiters--;
}

/* Wait as the tail of the queue until size bytes are collected.  On
 * success *bufp may hold a free-list buffer (then nothing was collected).
 * @locks pool->lock held (released while waiting) */
static samsa_err_t
bufpool_wait(samsa_bufpool_t *pool, size_t size, int64_t max_block_ms,
             uint8_t **bufp)
{
    bufpool_waiter_t  w;
    pthread_condattr_t attr;
    struct timespec   deadline, slice;
    int64_t           deadline_ns = samsa_now_ns() + max_block_ms * 1000000;
    int64_t           got = 0, take, t0 = samsa_now_ns();
    samsa_err_t       err = SAMSA_ERR_NONE;
    int               r = 0;

    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&w.cond, &attr);
    pthread_condattr_destroy(&attr);
    w.next = NULL;
    w.need = (int64_t) size;
    w.patient = true;
    if (pool->wait_tail != NULL) {
        pool->wait_tail->next = &w;
    } else {
        pool->wait_head = &w;
    }
    pool->wait_tail = &w;
    pool->nwaiters++;
    deadline = samsa_timespec_after(CLOCK_MONOTONIC, max_block_ms);
    while (got < (int64_t) size) {
        w.need = (int64_t) size - got;
        if (!pool->closed && r != ETIMEDOUT
            && (pool->wait_head != &w || !bufpool_enough(pool, &w))) {
            if (w.patient) {
                /* wait for wake_bytes, but not for ever: memory held by
                 * batches that do not complete must not keep us waiting
                 * for more than was free when Java's waiter would go */
                slice = samsa_timespec_after(CLOCK_MONOTONIC,
                                             BUFPOOL_PATIENCE_MS);
                if (slice.tv_sec > deadline.tv_sec
                    || (slice.tv_sec == deadline.tv_sec
                        && slice.tv_nsec > deadline.tv_nsec)) {
                    slice = deadline;
                }
                r = pthread_cond_timedwait(&w.cond, &pool->lock, &slice);
                if (r == ETIMEDOUT) {
                    w.patient = pool->wait_head != &w;
                    r = samsa_now_ns() >= deadline_ns ? ETIMEDOUT : 0;
                }
                continue;
            }
            r = pthread_cond_timedwait(&w.cond, &pool->lock, &deadline);
            continue;
        }
        if (pool->closed) {
            err = SAMSA_ERR__SHUTDOWN;
            break;
        }
        if (pool->wait_head != &w || (pool->unallocated <= 0
                                      && pool->nfree == 0)) {
            err = SAMSA_ERR__TIMED_OUT;             /* BufferExhausted */
            break;
        }
        if (got == 0 && size == pool->poolable && pool->nfree > 0) {
            *bufp = pool->free[--pool->nfree];
            got = (int64_t) size;
            break;
        }
        bufpool_free_up(pool, (int64_t) size - got);
        take = (int64_t) size - got;
        if (take > pool->unallocated) {
            take = pool->unallocated;
        }
        pool->unallocated -= take;
        got += take;
    }
    if (err != SAMSA_ERR_NONE) {
        pool->unallocated += got;           /* give back what we collected */
    }
    bufpool_waiter_remove(pool, &w);
    pthread_cond_destroy(&w.cond);
    atomic_fetch_add_explicit(&pool->wait_ns, samsa_now_ns() - t0,
                              memory_order_relaxed);
    return err;
}

samsa_err_t
samsa_bufpool_alloc(samsa_bufpool_t *pool, size_t size, int64_t max_block_ms,
                    uint8_t **bufp)
{
    samsa_err_t  err = SAMSA_ERR_NONE;

    *bufp = NULL;
    if ((int64_t) size > pool->total) {
        return SAMSA_ERR_MESSAGE_TOO_LARGE;
    }
    pthread_mutex_lock(&pool->lock);
    if (pool->closed) {
        err = SAMSA_ERR__SHUTDOWN;
    } else if (size == pool->poolable && pool->nfree > 0) {
        *bufp = pool->free[--pool->nfree];
    } else if (pool->unallocated + (int64_t) (pool->nfree * pool->poolable)
               >= (int64_t) size) {
        bufpool_free_up(pool, (int64_t) size);
        pool->unallocated -= (int64_t) size;
    } else {
        err = bufpool_wait(pool, size, max_block_ms, bufp);
    }
    /* Memory left over after us: let the next waiter have it. */
    bufpool_signal_head(pool);
    pthread_mutex_unlock(&pool->lock);
    if (err == SAMSA_ERR_NONE && *bufp == NULL) {
        *bufp = samsa_malloc(size);
    }
    return err;
}

void
samsa_bufpool_dealloc(samsa_bufpool_t *pool, uint8_t *buf, size_t size)
{
    if (buf == NULL) {
        return;
    }
    pthread_mutex_lock(&pool->lock);
    if (size == pool->poolable) {
        if (pool->nfree == pool->free_cap) {
            pool->free_cap = pool->free_cap ? pool->free_cap * 2 : 16;
            pool->free = samsa_realloc(pool->free,
                                       pool->free_cap * sizeof(*pool->free));
        }
        pool->free[pool->nfree++] = buf;
        buf = NULL;
    } else {
        pool->unallocated += (int64_t) size;
    }
    bufpool_signal_head(pool);
    pthread_mutex_unlock(&pool->lock);
    samsa_free(buf);
}

int64_t
samsa_bufpool_available(samsa_bufpool_t *pool)
{
    return SAMSA_LOCKED_READ(&pool->lock, pool->unallocated
                             + (int64_t) (pool->nfree * pool->poolable));
}

int64_t
samsa_bufpool_unallocated(samsa_bufpool_t *pool)
{
    return SAMSA_LOCKED_READ(&pool->lock, pool->unallocated);
}

int
samsa_bufpool_waiters(samsa_bufpool_t *pool)
{
    return SAMSA_LOCKED_READ(&pool->lock, pool->nwaiters);
}

int64_t
samsa_bufpool_total(const samsa_bufpool_t *pool)
{
    return pool->total;
}

size_t
samsa_bufpool_poolable(const samsa_bufpool_t *pool)
{
    return pool->poolable;
}

int64_t
samsa_bufpool_wait_ns(samsa_bufpool_t *pool)
{
    return atomic_load_explicit(&pool->wait_ns, memory_order_relaxed);
}

void
samsa_bufpool_close(samsa_bufpool_t *pool)
{
    bufpool_waiter_t  *w;

    pthread_mutex_lock(&pool->lock);
    pool->closed = true;
    for (w = pool->wait_head; w != NULL; w = w->next) {
        pthread_cond_signal(&w->cond);
    }
    pthread_mutex_unlock(&pool->lock);
}
