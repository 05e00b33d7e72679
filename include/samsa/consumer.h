/*
 * samsa/consumer.h - libsamsa's consumer, after Kafka's Java consumer
 * (KafkaConsumer): manual assign() or subscribe() to topics (list or
 * regex) in a group over the classic group protocol with client-side
 * assignors (range, roundrobin, cooperative-sticky) or the KIP-848
 * consumer protocol (group.protocol=consumer, server-side assignors,
 * group.remote.assignor), poll() returning records, commits, seeks,
 * pause/resume, offsets for times.
 *
 * Configuration uses the Java consumer's property names and defaults
 * (samsa/conf.h): bootstrap.servers, group.id, group.instance.id,
 * session.timeout.ms (45000), heartbeat.interval.ms (3000),
 * max.poll.interval.ms (300000), auto.offset.reset (latest),
 * enable.auto.commit (true), auto.commit.interval.ms (5000),
 * fetch.min.bytes (1), fetch.max.wait.ms (500), fetch.max.bytes
 * (52428800), max.partition.fetch.bytes (1048576), max.poll.records (500),
 * isolation.level (read_uncommitted), check.crcs (true),
 * partition.assignment.strategy (range,cooperative-sticky),
 * request.timeout.ms (30000), default.api.timeout.ms (60000), ...
 *
 * Threads: one background thread per consumer does all network I/O
 * (fetches, one outstanding Fetch per broker, sent again as soon as the
 * previous answer is in; metadata; the group: join, sync, heartbeats,
 * commits).  The API is for one application thread at a time (as Java's
 * KafkaConsumer, which is not thread-safe), except samsa_consumer_wakeup()
 * (any thread).  Rebalance and commit callbacks run on the application
 * thread inside samsa_consumer_poll() (and samsa_consumer_close()), never
 * on the background thread.
 */
#ifndef SAMSA_CONSUMER_H
#define SAMSA_CONSUMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/conf.h>
#include <samsa/errors.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct samsa_consumer         samsa_consumer_t;
typedef struct samsa_consumer_records samsa_consumer_records_t;

/* Special offsets for samsa_consumer_seek() and friends. */
#define SAMSA_OFFSET_BEGINNING  (-2LL)
#define SAMSA_OFFSET_END        (-1LL)
#define SAMSA_OFFSET_INVALID    (-1001LL)   /* none (e.g. nothing committed) */

typedef enum samsa_timestamp_type {
    SAMSA_TIMESTAMP_NO_TYPE         = -1,
    SAMSA_TIMESTAMP_CREATE_TIME     = 0,
    SAMSA_TIMESTAMP_LOG_APPEND_TIME = 1,
} samsa_timestamp_type_t;

/* One record header.  value NULL = null value (value_len 0); an empty
 * value has a non-NULL pointer and value_len 0. */
typedef struct samsa_consumer_header {
    const char  *key;
    size_t       key_len;
    const void  *value;
    size_t       value_len;
} samsa_consumer_header_t;

/* One record as poll() returns it (Java's ConsumerRecord).  key NULL =
 * null key, value NULL = null value; empty ones have a non-NULL pointer
 * and length 0.  Everything is borrowed from the records set returned by
 * poll() and lives until samsa_consumer_records_free(). */
typedef struct samsa_consumer_record {
    const char                     *topic;
    int32_t                         partition;
    int64_t                         offset;
    int64_t                         timestamp;      /* ms since the epoch */
    samsa_timestamp_type_t          timestamp_type;
    int32_t                         leader_epoch;   /* -1 if unknown */
    const void                     *key;
    size_t                          key_len;
    const void                     *value;
    size_t                          value_len;
    const samsa_consumer_header_t  *headers;
    size_t                          nheaders;
} samsa_consumer_record_t;

/* A topic partition with an offset (input or output) and a per-entry
 * error (output).  topic is borrowed on input; on output (arrays libsamsa
 * allocates) it lives until samsa_tp_array_free(). */
typedef struct samsa_topic_partition {
    const char   *topic;
    int32_t       partition;
    int64_t       offset;       /* or SAMSA_OFFSET_INVALID */
    int64_t       timestamp;    /* offsets_for_times: in and out */
    samsa_err_t   err;
} samsa_topic_partition_t;

/* Free an array libsamsa returned (assignment(), committed() results). */
SAMSA_API void samsa_tp_array_free(samsa_topic_partition_t *tps, size_t n);

typedef enum samsa_rebalance_event {
    SAMSA_REBALANCE_ASSIGNED = 0,   /* onPartitionsAssigned */
    SAMSA_REBALANCE_REVOKED  = 1,   /* onPartitionsRevoked */
    SAMSA_REBALANCE_LOST     = 2,   /* onPartitionsLost */
} samsa_rebalance_event_t;

/* Rebalance listener (Java's ConsumerRebalanceListener).  With an eager
 * assignor (range, roundrobin) REVOKED lists every owned partition before
 * each rejoin and ASSIGNED the whole new assignment; with
 * cooperative-sticky only the partitions that move (REVOKED) and the
 * added ones (ASSIGNED, possibly none).  LOST: the member was fenced or
 * timed out; its partitions may already belong to another member (do not
 * commit them).  The callback may call samsa_consumer_commit_sync(),
 * samsa_consumer_seek() and samsa_consumer_position().
 * @thread app (inside poll/close) */
typedef void samsa_rebalance_cb(samsa_consumer_t *consumer,
                                samsa_rebalance_event_t event,
                                const samsa_topic_partition_t *tps,
                                size_t n, void *opaque);

/* Commit callback (Java's OffsetCommitCallback): err for the whole
 * commit, and each partition's own error in tps[i].err.
 * @thread app (inside poll/close) */
typedef void samsa_commit_cb(samsa_consumer_t *consumer, samsa_err_t err,
                             const samsa_topic_partition_t *tps, size_t n,
                             void *opaque);

/* Create a consumer from conf (copied) and start its background thread.
 * SAMSA_ERR__CONFIG with errstr naming the key for a bad setting
 * (missing bootstrap.servers; session.timeout.ms, heartbeat.interval.ms
 * or partition.assignment.strategy with group.protocol=consumer;
 * group.remote.assignor with classic; group.instance.id without
 * group.id ...).  No network I/O
 * happens here.  @thread any */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_consumer_new(
    const samsa_conf_t *conf, samsa_consumer_t **consumerp, char *errstr,
    size_t errstr_size);

/* Rebalance listener for subscribe(); set before subscribing.  @thread app */
SAMSA_API void samsa_consumer_set_rebalance_cb(samsa_consumer_t *consumer,
                                               samsa_rebalance_cb *cb,
                                               void *opaque);

/* Subscribe to topics (replacing any earlier subscription); partitions
 * come from the group (group.id required: SAMSA_ERR__INVALID_ARG
 * otherwise, as Java's InvalidGroupIdException).  SAMSA_ERR__STATE after
 * assign() (unsubscribe first).  @thread app */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_consumer_subscribe(
    samsa_consumer_t *consumer, const char *const *topics, size_t n);

/* Subscribe to every topic whose whole name matches regex (RE2 syntax,
 * as Kafka's coordinator reads it; internal topics left out while
 * exclude.internal.topics).  Matches are re-evaluated with each
 * metadata refresh (metadata.max.age.ms).  SAMSA_ERR__INVALID_ARG for a
 * bad regex.  @thread app */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_consumer_subscribe_pattern(
    samsa_consumer_t *consumer, const char *regex);

/* Leave the group (revoking partitions first) and drop the subscription
 * or the manual assignment.  @thread app */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_consumer_unsubscribe(
    samsa_consumer_t *consumer);

/* Manual assignment: replaces the assignment with tps (offsets ignored);
 * each partition starts at its committed offset (with group.id), else
 * per auto.offset.reset, unless seek() says otherwise.  n == 0 is
 * unsubscribe().  SAMSA_ERR__STATE while subscribed.  @thread app */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_consumer_assign(
    samsa_consumer_t *consumer, const samsa_topic_partition_t *tps,
    size_t n);

/* The partitions currently assigned (manually or by the group):
 * *tpsp gets an array of *np entries, free with samsa_tp_array_free().
 * @thread app */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_consumer_assignment(
    samsa_consumer_t *consumer, samsa_topic_partition_t **tpsp, size_t *np);

/* Wait up to timeout_ms (0: just look; -1: no limit) for records, run
 * due rebalance and commit callbacks first.  On SAMSA_ERR_NONE *recordsp
 * gets a set of up to max.poll.records records (possibly empty), to be
 * freed with samsa_consumer_records_free().  Errors (no set returned):
 * OFFSET_OUT_OF_RANGE (no committed offset or out of range with
 * auto.offset.reset=none), CORRUPT_MESSAGE (a batch failed its CRC:
 * seek past it), TOPIC_AUTHORIZATION_FAILED and other partition errors,
 * FENCED_INSTANCE_ID (fatal), SAMSA_ERR__STATE (neither subscribed nor
 * assigned), SAMSA_ERR__SHUTDOWN (woken by samsa_consumer_wakeup()).
 * @thread app */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_consumer_poll(
    samsa_consumer_t *consumer, int64_t timeout_ms,
    samsa_consumer_records_t **recordsp);

SAMSA_API size_t samsa_consumer_records_count(
    const samsa_consumer_records_t *records);

/* The i-th record (i < count), or NULL. */
SAMSA_API const samsa_consumer_record_t *samsa_consumer_records_get(
    const samsa_consumer_records_t *records, size_t i);

/* Free a set from poll(); NULL is a no-op.  @thread any */
SAMSA_API void samsa_consumer_records_free(samsa_consumer_records_t *records);

/* Make a poll() in progress (or the next one) return
 * SAMSA_ERR__SHUTDOWN at once.  @thread any */
SAMSA_API void samsa_consumer_wakeup(samsa_consumer_t *consumer);

/* Next fetch position of an assigned partition.  offset may be
 * SAMSA_OFFSET_BEGINNING / SAMSA_OFFSET_END (resolved with ListOffsets
 * before the next fetch).  SAMSA_ERR__STATE if not assigned.
 * @thread app */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_consumer_seek(
    samsa_consumer_t *consumer, const char *topic, int32_t partition,
    int64_t offset);

/* Seek each of tps (n == 0: every assigned partition) to the start/end. */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_consumer_seek_to_beginning(
    samsa_consumer_t *consumer, const samsa_topic_partition_t *tps,
    size_t n);
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_consumer_seek_to_end(
    samsa_consumer_t *consumer, const samsa_topic_partition_t *tps,
    size_t n);

/* The offset of the next record poll() would return for the partition,
 * waiting up to timeout_ms for it to be known (committed offset or
 * reset).  SAMSA_ERR__STATE if not assigned, SAMSA_ERR__TIMED_OUT.
 * @thread app */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_consumer_position(
    samsa_consumer_t *consumer, const char *topic, int32_t partition,
    int64_t timeout_ms, int64_t *offsetp);

/* Stop / restart fetching tps (assigned ones).  @thread app */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_consumer_pause(
    samsa_consumer_t *consumer, const samsa_topic_partition_t *tps,
    size_t n);
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_consumer_resume(
    samsa_consumer_t *consumer, const samsa_topic_partition_t *tps,
    size_t n);

/* For each of tps (topic, partition, timestamp): the earliest offset
 * whose timestamp is >= timestamp, and that record's timestamp, filled
 * in tps[i].offset / tps[i].timestamp (SAMSA_OFFSET_INVALID and -1 when
 * there is none), with per-entry errors in tps[i].err (ListOffsets).
 * Does not need the partitions to be assigned.  @thread app */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_consumer_offsets_for_times(
    samsa_consumer_t *consumer, samsa_topic_partition_t *tps, size_t n,
    int64_t timeout_ms);

/* First / end (high watermark, or last stable offset under
 * read_committed) offsets of tps, in tps[i].offset.  @thread app */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_consumer_beginning_offsets(
    samsa_consumer_t *consumer, samsa_topic_partition_t *tps, size_t n,
    int64_t timeout_ms);
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_consumer_end_offsets(
    samsa_consumer_t *consumer, samsa_topic_partition_t *tps, size_t n,
    int64_t timeout_ms);

/* Lag of an assigned partition from the last fetch response (end offset
 * minus position): SAMSA_ERR__STATE when not known yet (Java's
 * currentLag() empty).  @thread app */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_consumer_current_lag(
    samsa_consumer_t *consumer, const char *topic, int32_t partition,
    int64_t *lagp);

/* The number of partitions of topic from the cluster's metadata, waiting
 * up to timeout_ms (-1: default.api.timeout.ms) for an answer (Java's
 * partitionsFor).  UNKNOWN_TOPIC_OR_PARTITION if the topic does not exist
 * (with allow.auto.create.topics=false, else the broker may create it),
 * SAMSA_ERR__TIMED_OUT when no broker answered.  @thread app */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_consumer_partitions_for(
    samsa_consumer_t *consumer, const char *topic, int64_t timeout_ms,
    int32_t *countp);

/* Commit tps' offsets (the offset of the next record to read), or, with
 * tps NULL, the current position of every assigned partition that moved
 * since the last commit.  Needs group.id.  Waits up to timeout_ms (-1:
 * default.api.timeout.ms), retrying while the coordinator moves.  Errors:
 * the first failing partition's error, or e.g. REBALANCE_IN_PROGRESS /
 * ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID (Java's CommitFailedException),
 * SAMSA_ERR__TIMED_OUT.  @thread app */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_consumer_commit_sync(
    samsa_consumer_t *consumer, const samsa_topic_partition_t *tps,
    size_t n, int64_t timeout_ms);

/* The same without waiting; cb (may be NULL) runs in a later poll().
 * Commits are sent in order.  @thread app */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_consumer_commit_async(
    samsa_consumer_t *consumer, const samsa_topic_partition_t *tps,
    size_t n, samsa_commit_cb *cb, void *opaque);

/* The committed offsets of tps (OffsetFetch), in tps[i].offset
 * (SAMSA_OFFSET_INVALID when none), errors in tps[i].err.  @thread app */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_consumer_committed(
    samsa_consumer_t *consumer, samsa_topic_partition_t *tps, size_t n,
    int64_t timeout_ms);

/* The member id the coordinator gave (a copy, free with
 * samsa_consumer_str_free()), or NULL outside a group. */
SAMSA_API char *samsa_consumer_member_id(samsa_consumer_t *consumer);
SAMSA_API void samsa_consumer_str_free(char *s);

/* Consumer metrics (names after the Java consumer's). */
typedef struct samsa_consumer_metrics {
    int64_t  records_consumed_total;    /* handed to the app by poll() */
    int64_t  bytes_consumed_total;      /* key + value bytes of those */
    int64_t  fetch_total;               /* Fetch requests answered */
    int64_t  fetch_latency_ns_total;    /* sum of their round trips */
    int64_t  rebalance_total;           /* completed joins (SyncGroup) */
    int64_t  rebalance_latency_ns_total;
    int64_t  commit_total;              /* OffsetCommit requests answered */
    int32_t  assigned_partitions;
} samsa_consumer_metrics_t;

/* A snapshot of the metrics.  @thread any */
SAMSA_API void samsa_consumer_metrics(samsa_consumer_t *consumer,
                                      samsa_consumer_metrics_t *m);

/* Close: with enable.auto.commit a final synchronous commit of the
 * positions, the revoked callback, LeaveGroup (not for static members,
 * as Java), then stop the background thread and free everything.
 * Waits up to timeout_ms (-1: 30 s, Java's default) for the commit and
 * the leave.  @thread app; the last call on consumer */
SAMSA_API samsa_err_t samsa_consumer_close(samsa_consumer_t *consumer,
                                           int64_t timeout_ms);

#ifdef __cplusplus
}
#endif

#endif /* SAMSA_CONSUMER_H */
