/*
 * client/producer/bufpool.h - the producer's memory budget (buffer.memory), Kafka's
 * BufferPool: a free list of batch.size ("poolable") buffers plus a count
 * of bytes not yet allocated.  An allocation that cannot be met waits, in
 * FIFO order, up to max.block.ms; the oldest waiter collects freed memory
 * until its whole request is met, so a large request is never starved by
 * small ones.  Buffers of the poolable size go back to the free list;
 * others are freed and their bytes return to the unallocated count.
 * Threads: any (app threads allocate, the sender frees); one mutex.
 */
#ifndef SAMSA_CLIENT_PRODUCER_BUFPOOL_H
#define SAMSA_CLIENT_PRODUCER_BUFPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>

typedef struct samsa_bufpool samsa_bufpool_t;

/* A pool of total_bytes whose free list keeps buffers of poolable bytes. */
samsa_bufpool_t *samsa_bufpool_new(int64_t total_bytes, size_t poolable);

/* Free the pool and its free list; every buffer must be back. */
void samsa_bufpool_free(samsa_bufpool_t *pool);

/* Take a buffer of size bytes, waiting up to max_block_ms (0: no wait)
 * for memory.  SAMSA_ERR_MESSAGE_TOO_LARGE if size exceeds the whole pool;
 * SAMSA_ERR__TIMED_OUT (Kafka's BufferExhaustedException) if the wait ran
 * out; SAMSA_ERR__SHUTDOWN if the pool was closed meanwhile.
 * @thread any  @locks pool taken */
SAMSA_MUST_CHECK samsa_err_t samsa_bufpool_alloc(samsa_bufpool_t *pool,
                                                 size_t size,
                                                 int64_t max_block_ms,
                                                 uint8_t **bufp);

/* Give back a buffer of size bytes (from alloc); NULL is a no-op.
 * @thread any  @locks pool taken */
void samsa_bufpool_dealloc(samsa_bufpool_t *pool, uint8_t *buf, size_t size);

/* Bytes free now: the free list plus the unallocated bytes. */
int64_t samsa_bufpool_available(samsa_bufpool_t *pool);

/* Bytes not yet allocated (the free list excluded). */
int64_t samsa_bufpool_unallocated(samsa_bufpool_t *pool);

/* Threads waiting for memory now (the accumulator's ready() treats a pool
 * with waiters as exhausted: every batch is then sendable). */
int samsa_bufpool_waiters(samsa_bufpool_t *pool);

int64_t samsa_bufpool_total(const samsa_bufpool_t *pool);
size_t  samsa_bufpool_poolable(const samsa_bufpool_t *pool);

/* Total time threads spent waiting for memory, in ns (a metric). */
int64_t samsa_bufpool_wait_ns(samsa_bufpool_t *pool);

/* Wake every waiter with SAMSA_ERR__SHUTDOWN; later allocs that would wait
 * fail at once. */
void samsa_bufpool_close(samsa_bufpool_t *pool);

#endif /* SAMSA_CLIENT_PRODUCER_BUFPOOL_H */
