/*
 * net/mempool.c - see mempool.h.  Threads: any (atomics; take's acquire
 * pairs with give's release so that a mute decision sees returned bytes).
 */
#include "net/mempool.h"

void
samsa_mempool_init(samsa_mempool_t *pool, int64_t capacity)
{
    pool->capacity = capacity;
    atomic_init(&pool->available, capacity);
    atomic_init(&pool->max_used, 0);
}

/* Raise the high-water mark to used (a CAS loop: takes race). */
static void
mempool_note_used(samsa_mempool_t *pool, int64_t used)
{
    int64_t  max = atomic_load_explicit(&pool->max_used,
                                        memory_order_relaxed);

    while (used > max
           && !atomic_compare_exchange_weak_explicit(
               &pool->max_used, &max, used, memory_order_relaxed,
               memory_order_relaxed)) {
        /* a failed CAS reloaded max */
    }
}

bool
samsa_mempool_try_take(samsa_mempool_t *pool, int64_t size)
{
    int64_t  avail;

    if (pool->capacity <= 0) {
        return true;
    }
    avail = atomic_load_explicit(&pool->available, memory_order_acquire);
    while (avail > 0) {
        if (atomic_compare_exchange_weak_explicit(
                &pool->available, &avail, avail - size,
                memory_order_acq_rel, memory_order_acquire)) {
            mempool_note_used(pool, pool->capacity - (avail - size));
            return true;
        }
    }
    return false;
}

bool
samsa_mempool_give(samsa_mempool_t *pool, int64_t size)
{
    int64_t  before;

    if (pool->capacity <= 0) {
        return false;
    }
    before = atomic_fetch_add_explicit(&pool->available, size,
                                       memory_order_acq_rel);
    return before <= 0 && before + size > 0;
}

bool
samsa_mempool_is_exhausted(samsa_mempool_t *pool)
{
    return pool->capacity > 0
           && atomic_load_explicit(&pool->available, memory_order_acquire)
                  <= 0;
}

int64_t
samsa_mempool_used(samsa_mempool_t *pool)
{
    if (pool->capacity <= 0) {
        return 0;
    }
    return pool->capacity
           - atomic_load_explicit(&pool->available, memory_order_relaxed);
}

int64_t
samsa_mempool_max_used(samsa_mempool_t *pool)
{
    return atomic_load_explicit(&pool->max_used, memory_order_relaxed);
}
