/*
 * client/producer/accum.h - the record accumulator (Kafka's RecordAccumulator):
 * per topic-partition queues of batches, shared by the app threads that
 * append and the sender thread that drains.
 *
 * append: find the partition's queue, lock it only to append to its last
 * batch; if that is full, take a buffer from the pool *outside* the lock
 * (this may block up to max.block.ms), lock again and retry before making
 * a new batch (another thread may have made one: the buffer then goes
 * back).  Keyless records without a partition go through the topic's
 * KIP-794 sticky partitioner, consulted and updated under the queue lock.
 * ready: which leaders have a sendable batch (full, linger.ms passed, pool
 * exhausted with waiters, closing or flushing, retry backoff passed);
 * drain: per node up to max.request.size, one batch per partition,
 * starting at a rotating index.
 *
 * Threads: append/flush from app threads; everything marked @thread sender
 * from the sender only.  Locks: accum->tlock (topic table, rwlock) may be
 * held while taking a queue lock; a queue lock may be held while taking
 * the sticky partitioner's lock or accum->inc_lock; nothing else nests.
 */
#ifndef SAMSA_CLIENT_PRODUCER_ACCUM_H
#define SAMSA_CLIENT_PRODUCER_ACCUM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <samsa/producer.h>

#include "client/producer/producer_batch.h"
#include "client/producer/bufpool.h"
#include "client/producer/partitioner.h"

typedef struct samsa_accum samsa_accum_t;
typedef struct samsa_tinfo samsa_tinfo_t;

/* One partition's queue of batches, oldest first. */
typedef struct samsa_pq {
    pthread_mutex_t    lock;
    samsa_producer_batch_t     *head;            /* [lock] */
    samsa_producer_batch_t     *tail;            /* [lock] */
    int32_t            nbatches;        /* [lock] */
    samsa_tinfo_t     *topic;           /* [const] */
    int32_t            partition;       /* [const] */
    /* sender thread only: */
    int32_t            leader;          /* -1: unknown */
    uint64_t           leader_gen;      /* metadata generation of leader */
    bool               muted;           /* a batch of it is in flight and
                                           max.in.flight=1 */
    int32_t            next_seq;        /* idempotence: next base sequence */
    int32_t            inflight;        /* batches in flight (with
                                           idempotence up to max.in.flight,
                                           in sequence order) */
    bool               txn_wait;        /* transactional: not added to the
                                           transaction yet, not drained */
    _Atomic bool       sender_busy;     /* [atomic, set under lock by the
                                           sender] a new batch here cannot
                                           go out before the sender's next
                                           network event (partition muted,
                                           or its leader at
                                           max.in.flight): appends need not
                                           wake the sender */
} samsa_pq_t;

struct samsa_tinfo {
    char              *name;            /* [const] */
    samsa_sticky_t    *sticky;          /* [const] pointer; own lock */
    samsa_pq_t       **pqs;             /* [accum tlock] by partition */
    int32_t            npqs;            /* [accum tlock] */
};

typedef struct samsa_accum_conf {
    size_t             batch_size;              /* batch.size */
    samsa_codec_t      codec;                   /* compression.type */
    int                level;                   /* compression.<c>.level */
    int64_t            linger_ms;               /* linger.ms */
    int64_t            delivery_timeout_ms;     /* delivery.timeout.ms */
    bool               adaptive;                /* partitioner.adaptive... */
    int64_t            availability_timeout_ms; /* partitioner.availab... */
    samsa_bufpool_t   *pool;                    /* borrowed */
    uint64_t           seed;                    /* partitioner randomness */
    bool               transactional;           /* queues start txn_wait */
} samsa_accum_conf_t;

samsa_accum_t *samsa_accum_new(const samsa_accum_conf_t *conf);

/* Free the accumulator; every batch must have been drained or aborted. */
void samsa_accum_free(samsa_accum_t *accum);

typedef struct samsa_append_res {
    int32_t  partition;         /* where the record went */
    bool     batch_full;        /* its batch is full: wake the sender */
    bool     new_batch;         /* it started a new batch: wake too */
    bool     sender_busy;       /* ...unless the sender cannot send it
                                   before its next network event anyway
                                   (samsa_pq_t.sender_busy) */
} samsa_append_res_t;

/* Append one record.  partition < 0 picks with the topic's sticky
 * partitioner over view (which must then have npartitions > 0).  fut may
 * be NULL; cb may be NULL.  Errors: SAMSA_ERR__TIMED_OUT (no buffer
 * memory within max_block_ms), SAMSA_ERR_MESSAGE_TOO_LARGE,
 * SAMSA_ERR__SHUTDOWN (accumulator closed).  @thread app */
SAMSA_MUST_CHECK samsa_err_t samsa_accum_append(
    samsa_accum_t *accum, const char *topic, int32_t partition,
    const samsa_partview_t *view, int64_t ts, const void *key,
    size_t key_len, const void *value, size_t value_len,
    const samsa_rechdr_t *hdrs, size_t nhdrs, samsa_delivery_cb *cb,
    void *opaque, samsa_future_t *fut, int64_t max_block_ms,
    samsa_append_res_t *res);

/* The sender's view of leaders: the broker id leading (topic, partition),
 * or -1 if unknown. */
typedef int32_t samsa_accum_leader_fn(void *ctx, const char *topic,
                                      int32_t partition);

typedef struct samsa_ready {
    int32_t   *nodes;               /* leaders with something sendable */
    int32_t    nnodes;
    int32_t    cap;
    int64_t    next_check_ms;       /* how long until something may be */
    bool       unknown_leaders;     /* a non-empty queue has no leader */
} samsa_ready_t;

void samsa_ready_fini(samsa_ready_t *ready);

/* Leaders with a sendable batch, per the five conditions.  Re-reads
 * leaders through leader_fn when md_gen differs from what each queue saw.
 * Also feeds adaptive partitioning its queue sizes.  @thread sender */
void samsa_accum_ready(samsa_accum_t *accum, uint64_t md_gen,
                       samsa_accum_leader_fn *leader_fn, void *ctx,
                       int64_t now_ms, samsa_ready_t *out);

/* Node latency for adaptive partitioning (updateNodeLatencyStats): node
 * had something ready at now_ms, and could take it (can_drain) or not.
 * Also the test hook that makes a broker "slow".  @thread sender */
void samsa_accum_node_latency(samsa_accum_t *accum, int32_t node,
                              int64_t now_ms, bool can_drain);

/* Take sendable batches led by node: one per unmuted partition whose head
 * batch has no sequence yet or nothing of the partition in flight (a
 * sequenced head is a retry or a split piece: it goes out only after every
 * earlier batch is resolved, one at a time, as Java's
 * shouldStopDrainBatchesForPartition has it), starting
 * at the node's rotating index, until max_size bytes (at least one batch).
 * Each batch is closed (compressed, header written) before it returns.
 * Returns the batches as a list linked by ->next, oldest partition first.
 * @thread sender */
samsa_producer_batch_t *samsa_accum_drain(samsa_accum_t *accum, int32_t node,
                                 size_t max_size, int64_t now_ms);

/* Is node's connection unable to take another request until it answers
 * one (at max.in.flight)? */
typedef bool samsa_accum_busy_fn(void *ctx, int32_t node);

/* At the end of a sender turn, before it waits for the network: mark each
 * queue whose new batches could not go out before the next network event
 * (muted, or its leader busy), so that appends there skip the wakeup (a
 * context switch per batch otherwise, for nothing).  Returns true if a
 * queue stopped being busy while holding batches appended meanwhile
 * without a wakeup: the sender must then take another turn at once.
 * @thread sender  @locks each queue's lock taken */
bool samsa_accum_set_busy(samsa_accum_t *accum, samsa_accum_busy_fn *busy_fn,
                          void *ctx);

/* Put a failed batch back into its queue to be retried after backoff_ms:
 * at the front, or, if it has a sequence, in sequence order among the
 * queued batches of the same producer id and epoch (Java's
 * insertInSequenceOrder).  @thread sender */
void samsa_accum_reenqueue(samsa_accum_t *accum, samsa_producer_batch_t *batch,
                           int64_t backoff_ms, int64_t now_ms);

/* Split a batch the broker rejected with MESSAGE_TOO_LARGE (Java's
 * splitAndReenqueue; see samsa_producer_batch_split for the sizes and sequences)
 * and put the pieces, in order, back into its queue where the batch was
 * (at the front, or in sequence order as samsa_accum_reenqueue), not yet
 * tried;
 * they take its place in the incomplete set (same id: a flush waiting for
 * it waits for them).  Its buffer goes back to the pool and it is freed.
 * Returns the number of pieces, or 0 (batch untouched) if it cannot be
 * split (a single record).  @thread sender */
int32_t samsa_accum_split_reenqueue(samsa_accum_t *accum,
                                    samsa_producer_batch_t *batch);

/* Is some batch queued for batch's partition with an earlier sequence of
 * the same producer id and epoch (a retry of an earlier batch: batch's
 * OUT_OF_ORDER_SEQUENCE_NUMBER is then expected, not a gap)?
 * @thread sender */
bool samsa_accum_has_earlier(samsa_accum_t *accum,
                             const samsa_producer_batch_t *batch);

/* Remove and return (list by ->next) queued batches older than
 * delivery.timeout.ms.  @thread sender */
samsa_producer_batch_t *samsa_accum_expired(samsa_accum_t *accum, int64_t now_ms);

/* Remove and return every queued batch (forced close).  @thread sender */
samsa_producer_batch_t *samsa_accum_take_all(samsa_accum_t *accum);

/* Return a finished batch's buffer to the pool, drop it from the
 * incomplete set (waking flushers) and free it.  @thread sender */
void samsa_accum_release(samsa_accum_t *accum, samsa_producer_batch_t *batch);

/* True if some queue holds a batch.  @thread any */
bool samsa_accum_has_queued(samsa_accum_t *accum);

/* Batches created and not yet released.  @thread any */
int64_t samsa_accum_incomplete(samsa_accum_t *accum);

/* flush(): make everything sendable until samsa_accum_flush_end(), and
 * wait (up to timeout_ms, -1: forever) for batches created before the
 * call to be released.  SAMSA_ERR__TIMED_OUT if some were not.
 * @thread app */
void samsa_accum_flush_begin(samsa_accum_t *accum);
SAMSA_MUST_CHECK samsa_err_t samsa_accum_flush_wait(samsa_accum_t *accum,
                                                    int64_t timeout_ms);
void samsa_accum_flush_end(samsa_accum_t *accum);

/* Closing: appends fail with SAMSA_ERR__SHUTDOWN and every batch counts
 * as ready.  @thread any */
void samsa_accum_close(samsa_accum_t *accum);

/* All queues of all topics, for iteration by the sender (idempotence
 * resets): a sender-owned snapshot, valid until the sender's next call of
 * any samsa_accum_* function.  @thread sender  @locks accum->tlock taken */
samsa_pq_t **samsa_accum_pqs(samsa_accum_t *accum, int32_t *n);

/* New producer id or epoch: every queue's sequences start again at 0.
 * @thread sender */
void samsa_accum_reset_sequences(samsa_accum_t *accum);

/* The queue of (topic, partition) if it exists, else NULL. */
samsa_pq_t *samsa_accum_pq_find(samsa_accum_t *accum, const char *topic,
                                int32_t partition);

#endif /* SAMSA_CLIENT_PRODUCER_ACCUM_H */
