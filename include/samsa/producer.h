/*
 * samsa/producer.h - libsamsa's producer, built on the design of Kafka's
 * Java producer: send() appends to a record accumulator (per-partition
 * batches written in wire form, memory from a buffer pool of
 * buffer.memory bytes) and returns; one sender thread per producer drains
 * ready batches to the partition leaders and completes them.
 *
 * Threads: every function may be called from any application thread at
 * the same time, except samsa_producer_close(), which must be the last
 * call on the producer (no send/flush running or following).  Delivery
 * callbacks run on the producer's sender thread, in the order records
 * complete per partition; a callback must not block, and must not call
 * samsa_producer_flush(), samsa_producer_close() or samsa_future_wait()
 * (that would wait for the very thread running it).  It may call
 * samsa_producer_send().
 */
#ifndef SAMSA_PRODUCER_H
#define SAMSA_PRODUCER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/conf.h>
#include <samsa/errors.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct samsa_producer samsa_producer_t;
typedef struct samsa_future   samsa_future_t;

#define SAMSA_PARTITION_ANY   (-1)      /* let the partitioner choose */
#define SAMSA_TIMESTAMP_NOW   (-1LL)    /* the producer's clock at send() */

/* One record header: a string key (not NUL-terminated) and a value
 * (value NULL = null). */
typedef struct samsa_header {
    const char  *key;
    size_t       key_len;
    const void  *value;
    size_t       value_len;
} samsa_header_t;

/* What to send.  key NULL = null key, value NULL = null value (a
 * tombstone); both are copied into the batch before send() returns. */
typedef struct samsa_record {
    const char            *topic;
    int32_t                partition;   /* or SAMSA_PARTITION_ANY */
    const void            *key;
    size_t                 key_len;
    const void            *value;
    size_t                 value_len;
    const samsa_header_t  *headers;
    size_t                 nheaders;
    int64_t                timestamp;   /* ms since the epoch, or
                                           SAMSA_TIMESTAMP_NOW */
} samsa_record_t;

/* What a delivered record became (Java's RecordMetadata).  offset is -1
 * when unknown (acks=0, or an error); topic is borrowed for the call. */
typedef struct samsa_record_md {
    const char  *topic;
    int32_t      partition;
    int64_t      offset;
    int64_t      timestamp;     /* CreateTime, or the broker's LogAppendTime */
    size_t       key_size;
    size_t       value_size;
} samsa_record_md_t;

/* Delivery callback: err is SAMSA_ERR_NONE on success.  @thread sender */
typedef void samsa_delivery_cb(const samsa_record_md_t *md, samsa_err_t err,
                               void *opaque);

/* Create a producer from conf (copied; see samsa/conf.h for the keys) and
 * start its sender thread.  Fails with SAMSA_ERR__CONFIG and errstr naming
 * the key for a bad or conflicting setting (e.g. "enable.idempotence
 * requires acks=all (acks)"); no network I/O happens here.
 * @thread any */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_producer_new(
    const samsa_conf_t *conf, samsa_producer_t **producerp, char *errstr,
    size_t errstr_size);

/* Send one record asynchronously.  Never does network I/O: it waits up to
 * max.block.ms for the topic's metadata (first use of a topic) and for
 * buffer memory, picks the partition (rec->partition; else
 * murmur2(key) % partitions, as Java; else the KIP-794 uniform sticky
 * partitioner), appends the record to its batch and returns.
 * On SAMSA_ERR_NONE the record was accepted: cb (if not NULL) is called
 * exactly once with opaque when it completes, and *futurep (if futurep is
 * not NULL) gets a future to wait on; free it with samsa_future_free().
 * Errors (nothing accepted, cb not called): SAMSA_ERR__TIMED_OUT
 * (metadata or buffer memory not available within max.block.ms: Java's
 * TimeoutException / BufferExhaustedException),
 * SAMSA_ERR_MESSAGE_TOO_LARGE (record over max.request.size or
 * buffer.memory), SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION (partition out of
 * range), SAMSA_ERR__INVALID_ARG (NULL topic), SAMSA_ERR__SHUTDOWN
 * (closing), or a fatal producer error (e.g. PRODUCER_FENCED).  With
 * transactional.id: SAMSA_ERR__STATE outside a transaction (before
 * begin_transaction(), while committing or aborting), the transaction's
 * abortable error in ABORTABLE_ERROR.
 * @thread any (app) */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_producer_send(
    samsa_producer_t *producer, const samsa_record_t *rec,
    samsa_delivery_cb *cb, void *opaque, samsa_future_t **futurep);

/* Make every record accepted so far sendable at once (linger.ms ignored)
 * and wait until all of them completed, up to timeout_ms (-1: no limit).
 * SAMSA_ERR__TIMED_OUT if some were still pending.  @thread any (app) */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_producer_flush(
    samsa_producer_t *producer, int64_t timeout_ms);

/* Stop accepting records, deliver everything accepted (waiting up to
 * timeout_ms, -1: no limit), then fail whatever is left with
 * SAMSA_ERR__SHUTDOWN, stop the sender thread and free the producer.
 * Returns SAMSA_ERR__TIMED_OUT if records had to be failed.  Futures
 * stay valid until freed.  @thread app; the last call on producer */
SAMSA_API samsa_err_t samsa_producer_close(samsa_producer_t *producer,
                                           int64_t timeout_ms);

/* One partition of a topic as the producer's metadata knows it. */
typedef struct samsa_partition_info {
    int32_t  partition;
    int32_t  leader;            /* broker id, -1 if unknown */
} samsa_partition_info_t;

/* The partitions of topic, waiting up to max.block.ms for metadata.
 * *partsp gets an array of *countp entries: free it with samsa_free_mem().
 * @thread any (app) */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_producer_partitions_for(
    samsa_producer_t *producer, const char *topic,
    samsa_partition_info_t **partsp, int32_t *countp);

/* Producer metrics (names after the Java producer's). */
typedef struct samsa_producer_metrics {
    int64_t  record_send_total;     /* records accepted by send() */
    int64_t  record_error_total;    /* records completed with an error */
    int64_t  record_retry_total;    /* records in retried batches */
    int64_t  records_delivered;     /* records completed successfully */
    int64_t  batch_total;           /* batches sent (first tries) */
    int64_t  request_total;         /* Produce requests sent */
    int64_t  bytes_sent;            /* record-batch bytes in requests */
    int64_t  records_in_flight;     /* accepted, not yet completed */
    int64_t  buffer_total_bytes;    /* buffer.memory */
    int64_t  buffer_available_bytes;
    int64_t  bufferpool_wait_time_ns_total;
    int32_t  waiting_threads;       /* app threads blocked on memory */
    int64_t  metadata_requests;
    int64_t  producer_id;           /* -1 without idempotence */
    int16_t  producer_epoch;
    int64_t  batch_split_total;     /* batches split after the broker
                                       rejected them as too large */
    int32_t  partition_inflight_max; /* most batches of one partition
                                       ever in flight at once */
} samsa_producer_metrics_t;

/* A snapshot of the metrics.  @thread any */
SAMSA_API void samsa_producer_metrics(samsa_producer_t *producer,
                                      samsa_producer_metrics_t *m);

/* ---- transactions (transactional.id set) ---------------------------------
 * Java's transactional producer API over the broker's transaction
 * coordinator; docs/PRODUCER.md has the state machine.  Errors common to
 * these calls: SAMSA_ERR__STATE (called in the wrong state, Java's
 * IllegalStateException; also for a producer without transactional.id),
 * the fatal error (PRODUCER_FENCED, INVALID_PRODUCER_EPOCH,
 * TRANSACTIONAL_ID_AUTHORIZATION_FAILED, ...) once one happened: then
 * every call, send() included, fails with it and only close() is left;
 * the abortable error (e.g. a record that failed) while the transaction
 * is in ABORTABLE_ERROR: only abort_transaction() works then.
 * SAMSA_ERR__TIMED_OUT: the call's work goes on; call the same function
 * again to wait for it (Java's retry after a TimeoutException).
 * Threads: any app thread, one transactional call at a time; never from a
 * delivery callback. */

/* One offset for send_offsets_to_transaction: the next record to consume
 * of (topic, partition) (Java's OffsetAndMetadata); metadata may be NULL. */
typedef struct samsa_txn_offset {
    const char  *topic;
    int32_t      partition;
    int64_t      offset;
    const char  *metadata;
} samsa_txn_offset_t;

/* The consumer group the offsets belong to (Java's
 * ConsumerGroupMetadata).  member_id NULL: a group id only (generation -1,
 * member ""), as sendOffsetsToTransaction(offsets, String groupId). */
typedef struct samsa_txn_group {
    const char  *group_id;
    int32_t      generation_id;
    const char  *member_id;
    const char  *group_instance_id;     /* NULL: not a static member */
} samsa_txn_group_t;

/* initTransactions(): find the transaction coordinator
 * (FindCoordinator, key type 1) and get the producer id and epoch for
 * transactional.id (InitProducerId with transaction.timeout.ms), which
 * also fences older producers with the same id and completes their
 * transaction; CONCURRENT_TRANSACTIONS, COORDINATOR_LOAD_IN_PROGRESS,
 * NOT_COORDINATOR are retried with backoff.  Call once, first.
 * Errors: _TIMED_OUT (call again), _STATE, a fatal error. */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_producer_init_transactions(
    samsa_producer_t *producer, int64_t timeout_ms);

/* beginTransaction(): READY -> IN_TRANSACTION; local only. */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_producer_begin_transaction(
    samsa_producer_t *producer);

/* sendOffsetsToTransaction(): AddOffsetsToTxn for group->group_id, then
 * TxnOffsetCommit of the n offsets to the group's coordinator; they become
 * the group's committed offsets only if the transaction commits.
 * Errors: _INVALID_ARG, _TIMED_OUT, _STATE, a fatal error, or an
 * abortable one (the transaction is then ABORTABLE_ERROR). */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t
samsa_producer_send_offsets_to_transaction(
    samsa_producer_t *producer, const samsa_txn_offset_t *offsets, size_t n,
    const samsa_txn_group_t *group, int64_t timeout_ms);

/* commitTransaction(): flush every record of the transaction, then
 * EndTxn(commit).  If a record failed the transaction is ABORTABLE_ERROR
 * and this returns that record's error: abort it.  Errors: _TIMED_OUT
 * (call again), _STATE, abortable or fatal errors. */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_producer_commit_transaction(
    samsa_producer_t *producer, int64_t timeout_ms);

/* abortTransaction(): records not sent yet fail with
 * SAMSA_ERR__TXN_ABORTED, those in flight complete, then EndTxn(abort)
 * (and a new epoch if sequences were left unresolved, KIP-360).  Works in
 * IN_TRANSACTION and ABORTABLE_ERROR.  Errors: _TIMED_OUT (call again),
 * _STATE, a fatal error. */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_producer_abort_transaction(
    samsa_producer_t *producer, int64_t timeout_ms);

/* Wait up to timeout_ms (-1: no limit) for the record to complete.
 * Returns the record's error (SAMSA_ERR_NONE: delivered), with *md filled
 * in when md is not NULL (md->topic lives as long as the future); or
 * SAMSA_ERR__TIMED_OUT if it has not completed yet.
 * @thread any (app; never a delivery callback) */
SAMSA_API samsa_err_t samsa_future_wait(samsa_future_t *future,
                                        int64_t timeout_ms,
                                        samsa_record_md_t *md);

/* True once the record completed.  @thread any */
SAMSA_API bool samsa_future_done(samsa_future_t *future);

/* Release the caller's hold on future (before or after it completed);
 * NULL is a no-op.  @thread any */
SAMSA_API void samsa_future_free(samsa_future_t *future);

/* Free memory libsamsa handed to the caller (partitions_for arrays). */
SAMSA_API void samsa_free_mem(void *p);

#ifdef __cplusplus
}
#endif

#endif /* SAMSA_PRODUCER_H */
