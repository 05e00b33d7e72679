/*
 * net/mempool.h - the budget for request bytes held by one socket server
 * (queued.max.request.bytes; Kafka's SimpleMemoryPool in its non-strict
 * mode).  A receive may take its bytes while any budget is left, even if it
 * is larger than what is left (so that no single request can deadlock the
 * pool); while the budget is exhausted, connections mute themselves and
 * resume when bytes come back.  A capacity <= 0 means unlimited.
 * Threads: any; the counter is atomic.
 */
#ifndef SAMSA_NET_MEMPOOL_H
#define SAMSA_NET_MEMPOOL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct samsa_mempool {
    int64_t           capacity;     /* [const] <= 0: unlimited */
    _Atomic int64_t   available;    /* [atomic] may go below 0 */
    _Atomic int64_t   max_used;     /* [atomic] most bytes ever taken at
                                       once (0 when unlimited) */
} samsa_mempool_t;

void samsa_mempool_init(samsa_mempool_t *pool, int64_t capacity);

/* Take size bytes if any budget is left; false if exhausted. */
bool samsa_mempool_try_take(samsa_mempool_t *pool, int64_t size);

/* Give size bytes back; true if this ended an exhausted period (the caller
 * then wakes whoever muted for memory). */
bool samsa_mempool_give(samsa_mempool_t *pool, int64_t size);

bool samsa_mempool_is_exhausted(samsa_mempool_t *pool);

/* For the metrics (Kafka's MemoryPoolAvailable and MemoryPoolUsed): bytes
 * taken now (0 when unlimited; above the capacity by less than one take
 * at most, the pool being non-strict), and the most taken at once since
 * init. */
int64_t samsa_mempool_used(samsa_mempool_t *pool);
int64_t samsa_mempool_max_used(samsa_mempool_t *pool);

#endif /* SAMSA_NET_MEMPOOL_H */
