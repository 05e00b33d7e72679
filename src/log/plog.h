/*
 * log/plog.h - one partition's log, Kafka's UnifiedLog/LocalLog for one
 * node: <log dir>/<topic>-<partition>/ with its segments, the log start
 * offset, log end offset (LEO), high watermark (= LEO on one node),
 * recovery point, leader-epoch-checkpoint and partition.metadata.
 *
 * Threads: shared by handler threads (append, read, ListOffsets,
 * DeleteRecords), network threads (sendfile of read regions only), the
 * flusher (logflush) and log maintenance (logmaint).  One mutex per plog
 * is held only while appending, rolling, truncating, moving the log start
 * or changing the config, never during an fdatasync.  Reads take no part
 * of it: they load the high watermark (acquire) and take a reference on
 * the current segment list, so an append never blocks a fetch and a
 * retention never pulls a segment from under a region being sent.
 * Flushes are serialised among themselves by a second lock.
 * Lock order: flush lock -> plog lock -> segment-list lock.
 * Ownership: refcounted.  The log manager's registry holds one reference;
 * whoever looks a plog up gets another (samsa_plog_unref() when done).
 * Regions returned by samsa_plog_read() hold a segment reference each.
 */
#ifndef SAMSA_LOG_PLOG_H
#define SAMSA_LOG_PLOG_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>

#include "log/epochs.h"
#include "log/log_config.h"
#include "log/pstate.h"
#include "log/seg.h"
#include "proto/batch.h"
#include "proto/types.h"

typedef struct samsa_plog samsa_plog_t;

/* What samsa_plog_open() knows from the log dir's checkpoints. */
typedef struct samsa_plog_load {
    int64_t  recovery_point;        /* -1: unknown, recover everything */
    int64_t  log_start_offset;      /* -1: unknown */
    bool     clean;                 /* the clean-shutdown marker was there */
    int64_t  now_ms;
} samsa_plog_load_t;

/* Create <parent_dir>/<topic>-<partition>/ with partition.metadata (unless
 * topic_id is zero) and an empty first segment at offset 0; the directory
 * and its parent are fsynced.  _EXISTS if the directory exists.
 * @returns KAFKA_STORAGE_ERROR (samsa_error names the file) on I/O errors.
 * @thread handler (CreateTopics), main */
SAMSA_MUST_CHECK samsa_err_t samsa_plog_create(const char *parent_dir,
                                               const char *topic,
                                               int32_t partition,
                                               samsa_uuid_t topic_id,
                                               const samsa_log_config_t *cfg,
                                               samsa_plog_t **out);

/* Load the existing <parent_dir>/<topic>-<partition>/, recovering it as
 * log/recover.h describes.  @thread main or a recovery thread */
SAMSA_MUST_CHECK samsa_err_t samsa_plog_open(const char *parent_dir,
                                             const char *topic,
                                             int32_t partition,
                                             const samsa_log_config_t *cfg,
                                             const samsa_plog_load_t *load,
                                             samsa_plog_t **out);

samsa_plog_t *samsa_plog_ref(samsa_plog_t *plog);
void samsa_plog_unref(samsa_plog_t *plog);          /* NULL: no-op */

/* Clean close: refuse further appends, write the active segment's closing
 * time-index entry, trim its indexes, fdatasync everything and remove
 * segment files whose deletion was pending; then drop the caller's
 * reference.  Readers holding references keep working.
 * @returns the flush's error (the reference is dropped anyway).
 * @thread main (shutdown) */
samsa_err_t samsa_plog_close(samsa_plog_t *plog);

/* Delete the partition's log: refuse further operations, then rename the
 * directory to "<topic>-<partition>.<32 hex>-delete" (Kafka's name) and
 * fsync its parent.  The files stay readable through open references; the
 * renamed directory is removed later with samsa_plog_remove_dir(), whose
 * argument is copied into renamed (PATH_MAX bytes).
 * @thread handler (DeleteTopics) */
SAMSA_MUST_CHECK samsa_err_t samsa_plog_delete(samsa_plog_t *plog,
                                               char *renamed,
                                               size_t renamed_size);

/* Remove a directory and the files in it (no subdirectories). */
SAMSA_MUST_CHECK samsa_err_t samsa_plog_remove_dir(const char *path);

/* ---- identity and state (any thread, no lock) ---------------------------- */

const char *samsa_plog_topic(const samsa_plog_t *plog);
int32_t samsa_plog_partition(const samsa_plog_t *plog);
samsa_uuid_t samsa_plog_topic_id(const samsa_plog_t *plog);
const char *samsa_plog_dir(const samsa_plog_t *plog);        /* the
                                                               partition's */
const char *samsa_plog_parent_dir(const samsa_plog_t *plog); /* log dir */

int64_t samsa_plog_log_start_offset(samsa_plog_t *plog);
int64_t samsa_plog_log_end_offset(samsa_plog_t *plog);
int64_t samsa_plog_high_watermark(samsa_plog_t *plog);   /* acquire */
int64_t samsa_plog_recovery_point(samsa_plog_t *plog);   /* flushed with
                                                            indexes */
int64_t samsa_plog_durable_offset(samsa_plog_t *plog);   /* .log data
                                                            fdatasynced
                                                            below this */
int64_t samsa_plog_size_bytes(samsa_plog_t *plog);       /* all segments */
size_t samsa_plog_segment_count(samsa_plog_t *plog);
bool samsa_plog_is_offline(samsa_plog_t *plog);          /* after an I/O
                                                            error */

/* ---- config -------------------------------------------------------------- */

/* Replace the topic config (DescribeConfigs/AlterConfigs at run time);
 * segment sizes apply from the next roll.  @thread any @locks plog taken */
void samsa_plog_config_set(samsa_plog_t *plog, const samsa_log_config_t *cfg);
void samsa_plog_config_get(samsa_plog_t *plog, samsa_log_config_t *cfg);

/* ---- append -------------------------------------------------------------- */

typedef struct samsa_plog_append_result samsa_plog_append_result_t;

/* Called with the plog lock held after validation and the producer-state
 * checks (log/pstate.h) and before offsets are assigned: it sees the next
 * offset and may refuse the append (its error is returned; the producer
 * state is rolled back) or mark it a duplicate (res->duplicate, with
 * res->base_offset and last_offset set to the original ones: nothing is
 * written).  It must not block or take locks ordered before the plog
 * lock. */
typedef samsa_err_t samsa_plog_append_hook_t(void *ctx, samsa_plog_t *plog,
                                             const uint8_t *records,
                                             size_t len, int64_t next_offset,
                                             samsa_plog_append_result_t *res);

typedef struct samsa_plog_append_opts {
    int32_t                    leader_epoch;    /* written into each batch's
                                                   PartitionLeaderEpoch */
    bool                       from_client;     /* Produce (not a
                                                   coordinator's markers):
                                                   sequence numbers and
                                                   duplicates are checked */
    samsa_plog_append_hook_t  *hook;            /* NULL: none */
    void                      *hook_ctx;
} samsa_plog_append_opts_t;

struct samsa_plog_append_result {
    int64_t                base_offset;         /* first offset assigned */
    int64_t                last_offset;
    int64_t                log_append_time_ms;  /* -1 unless LogAppendTime */
    int64_t                log_start_offset;
    int64_t                durable_wanted;      /* >= 0: answer only once
                                                   samsa_plog_durable_offset()
                                                   (or the log manager's
                                                   flushed callback) reaches
                                                   this; -1: nothing to
                                                   wait for */
    size_t                 bytes;               /* replica appends: the
                                                   bytes of whole batches
                                                   taken (0: none) */
    bool                   duplicate;           /* a retried idempotent
                                                   batch (or the hook said
                                                   so): base_offset and
                                                   last_offset are the
                                                   original ones, nothing
                                                   was written */
    samsa_batch_summary_t  summary;             /* validation details (batch
                                                   and record of an error,
                                                   message) */
};

/* Append a Produce records blob (rewritten in place: offsets, leader
 * epoch, timestamps and CRCs).  Validates as samsa_batch_validate() with
 * the topic's rules (outside the lock), rejects a blob larger than
 * segment.bytes (RECORD_LIST_TOO_LARGE), rolls the active segment when
 * Kafka would, assigns offsets from the LEO, writes, indexes, and moves
 * LEO and high watermark.  When flush.messages is reached (1: every
 * append, group commit) the append asks for a flush and returns the
 * offset to wait for in res->durable_wanted.
 * Errors: validation errors as samsa_batch_validate(); NOT_LEADER_OR_
 * FOLLOWER after close; UNKNOWN_TOPIC_OR_PARTITION after delete;
 * KAFKA_STORAGE_ERROR on I/O errors (the log goes offline).
 * @thread handler @locks plog taken */
SAMSA_MUST_CHECK samsa_err_t samsa_plog_append(
    samsa_plog_t *plog, uint8_t *records, size_t len,
    const samsa_plog_append_opts_t *opts, samsa_plog_append_result_t *res);

/* ---- replication (log/plog_repl.c; issue 19, docs/REPLICATION.md) ------ */

/* A follower's append (Kafka's appendAsFollower): the whole batches at
 * the front of records (a trailing cut batch is left for the next fetch),
 * exactly as the leader wrote them: offsets, leader epochs, producer
 * ids/epochs/sequences are kept; the producer state, transaction markers
 * and the aborted-transaction index follow from the batches (no sequence
 * or epoch checks: the leader made them); each batch's leader epoch goes
 * into leader-epoch-checkpoint.  The high watermark does not move
 * (samsa_plog_advance_high_watermark does).  res->bytes gets the bytes
 * taken, res->base_offset/last_offset their offsets; res->durable_wanted
 * as samsa_plog_append.
 * Errors: OFFSET_OUT_OF_RANGE when the first batch's base offset is not
 * the LEO or offsets go back (nothing written; res->summary.err_msg says
 * which); CORRUPT_MESSAGE (bad CRC, batch shorter than its header),
 * UNSUPPORTED_FOR_MESSAGE_FORMAT (magic not 2); the rest as
 * samsa_plog_append.  @thread replica fetcher @locks plog taken */
SAMSA_MUST_CHECK samsa_err_t samsa_plog_append_replica(
    samsa_plog_t *plog, const uint8_t *records, size_t len,
    samsa_plog_append_result_t *res);

/* Replication factor above 1 (true): appends stop moving the high
 * watermark, which the replica manager moves (leader: the ISR's smallest
 * LEO; follower: the leader's); the first time, a high watermark read
 * from replication-offset-checkpoint at start
 * (samsa_plog_set_checkpointed_hw) becomes the high watermark, at most
 * the LEO.  false: the high watermark is the LEO again, as on one node.
 * @thread any @locks plog taken */
void samsa_plog_set_replicated(samsa_plog_t *plog, bool replicated);

/* The high watermark replication-offset-checkpoint held for this log at
 * start (-1: none), kept for samsa_plog_set_replicated: a log with one
 * replica keeps high watermark = LEO.  @thread loader @locks plog taken */
void samsa_plog_set_checkpointed_hw(samsa_plog_t *plog, int64_t hw);
bool samsa_plog_is_replicated(samsa_plog_t *plog);

/* Move the high watermark up to hw (at most the LEO; never down).
 * @returns true when it moved.  @thread any @locks plog taken */
bool samsa_plog_advance_high_watermark(samsa_plog_t *plog, int64_t hw);

/* The latest leader epoch in leader-epoch-checkpoint (-1: none): a
 * follower's LastFetchedEpoch.  @thread any */
int32_t samsa_plog_latest_epoch(samsa_plog_t *plog);

/* The leader's check of a fetch's LastFetchedEpoch (KIP-320,
 * samsa_epochs_check_fetch over this log's epochs, LEO and log start),
 * current the leader's epoch now.  @thread handler */
samsa_epochs_fetch_t samsa_plog_check_fetch_epoch(samsa_plog_t *plog,
                                                  int32_t last_fetched_epoch,
                                                  int64_t fetch_offset,
                                                  int32_t current,
                                                  int32_t *div_epoch,
                                                  int64_t *div_end);

/* Where this follower's log truncates on the leader's DivergingEpoch
 * {leader_epoch, leader_end} (samsa_epochs_truncation_offset over its
 * epochs and LEO).  @thread replica fetcher */
int64_t samsa_plog_truncation_offset(samsa_plog_t *plog, int32_t leader_epoch,
                                     int64_t leader_end);

/* ---- producer state and transactions (KIP-98) ----------------------------- */

/* Kafka's last stable offset: the first offset of the oldest open
 * transaction, or the high watermark if that is lower.  @thread any */
int64_t samsa_plog_last_stable_offset(samsa_plog_t *plog);

/* The aborted transactions that may touch a read_committed fetch from
 * fetch_offset up to upper (the offset the fetch may reach): every one
 * whose marker is at or after fetch_offset and whose first offset is
 * below upper, from the transaction indexes of the segment holding
 * fetch_offset on.  fn returns false to stop.  @thread any */
SAMSA_MUST_CHECK samsa_err_t samsa_plog_aborted_txns(
    samsa_plog_t *plog, int64_t fetch_offset, int64_t upper,
    samsa_seg_aborted_fn_t *fn, void *ctx);

/* A copy of every producer's state (samsa_free() it), for
 * DescribeProducers.  @thread any @locks plog taken */
size_t samsa_plog_producers(samsa_plog_t *plog, samsa_pstate_entry_t **out);

/* Drop the state of producers idle for producer.id.expiration.ms (not
 * those with an open transaction), at most every
 * producer.id.expiration.check.interval.ms; samsa_plog_retain() calls it.
 * @returns how many were dropped.  @locks plog taken */
size_t samsa_plog_expire_producers(samsa_plog_t *plog, int64_t now_ms);

/* Keep the active segment's files open from now on, whatever the
 * descriptor cache needs (log/fdcache.h): the metadata log, whose appends
 * must not fail for want of a descriptor.  @locks plog taken */
void samsa_plog_keep_open(samsa_plog_t *plog);

/* ---- read (Fetch) -------------------------------------------------------- */

/* A byte range of one segment's .log to send as is (sendfile).  It holds
 * a segment reference and a pin (seg.h), so the fd stays open, even if
 * retention deletes the segment or the descriptor cache wants room
 * meanwhile; release it once sent (or once its fd was dup'ed), on any
 * thread. */
typedef struct samsa_plog_region {
    samsa_seg_t  *seg;              /* reference; NULL when empty */
    int           fd;               /* the segment's .log; don't close;
                                       valid until the release */
    int64_t       pos;              /* file position of the first byte */
    size_t        len;              /* bytes, 0 when empty */
    int64_t       first_offset;     /* base offset of the first batch */
} samsa_plog_region_t;

void samsa_plog_region_release(samsa_plog_region_t *region);

/* The batches from the one holding offset, up to max_bytes (with
 * min_one_batch the whole first batch even if larger, without it nothing
 * when the first batch does not fit; a later batch may be cut, as Kafka
 * sends it), from one segment, below max_offset
 * (the high watermark or last stable offset the fetch may see).  offset
 * == LEO or >= max_offset gives an empty region.
 * @returns OFFSET_OUT_OF_RANGE outside [log start offset, LEO];
 * KAFKA_STORAGE_ERROR on a read error.
 * @thread handler (no plog lock: never waits for appends) */
SAMSA_MUST_CHECK samsa_err_t samsa_plog_read(samsa_plog_t *plog,
                                             int64_t offset,
                                             int32_t max_bytes,
                                             bool min_one_batch,
                                             int64_t max_offset,
                                             samsa_plog_region_t *out);

/* Read the log from its start to the high watermark in chunks of about
 * chunk_bytes (whole batches; a larger batch whole), handing each chunk
 * to fn with the offset it starts at; fn returns the offset after the
 * last batch it took (<= that offset: stop).  For coordinators that load
 * an internal topic at start.  @returns the read error, or _IO (logged,
 * naming the log) on a short read.  @thread any (no plog lock held) */
typedef int64_t samsa_plog_scan_fn(void *ctx, const uint8_t *buf,
                                   size_t len, int64_t offset);

SAMSA_MUST_CHECK samsa_err_t samsa_plog_scan(samsa_plog_t *plog,
                                             int32_t chunk_bytes,
                                             samsa_plog_scan_fn *fn,
                                             void *ctx);

/* ---- ListOffsets --------------------------------------------------------- */

#define SAMSA_PLOG_TS_LATEST          (-1)
#define SAMSA_PLOG_TS_EARLIEST        (-2)
#define SAMSA_PLOG_TS_MAX_TIMESTAMP   (-3)  /* KIP-734 */
#define SAMSA_PLOG_TS_EARLIEST_LOCAL  (-4)  /* KIP-405: same as earliest */

typedef struct samsa_plog_ts_offset {
    int64_t  timestamp;             /* -1 when not by time */
    int64_t  offset;                /* -1 when nothing matches */
    int32_t  leader_epoch;          /* -1 when unknown */
} samsa_plog_ts_offset_t;

/* Kafka's fetchOffsetByTimestamp: the special values above, or the first
 * offset whose record timestamp is >= timestamp (records of compressed
 * batches are not looked at: the batch's first offset is returned),
 * limited to offsets below the high watermark.
 * @thread handler (no plog lock) */
SAMSA_MUST_CHECK samsa_err_t samsa_plog_offset_for_time(
    samsa_plog_t *plog, int64_t timestamp, samsa_plog_ts_offset_t *out);

/* Kafka's OffsetForLeaderEpoch answer for epoch (UnifiedLog.
 * endOffsetForEpoch; samsa_epochs_end_offset), current the leader's epoch
 * now.  @thread handler (no plog lock) */
void samsa_plog_end_offset_for_epoch(samsa_plog_t *plog, int32_t epoch,
                                     int32_t current, int32_t *found_epoch,
                                     int64_t *end_offset);

/* ---- DeleteRecords, retention, truncation -------------------------------- */

/* Move the log start offset up to offset (-1: the high watermark) and
 * delete the segments wholly below it; *low_watermark gets the new log
 * start.  OFFSET_OUT_OF_RANGE above the high watermark.
 * @thread handler @locks plog taken */
SAMSA_MUST_CHECK samsa_err_t samsa_plog_delete_records(samsa_plog_t *plog,
                                                       int64_t offset,
                                                       int64_t *low_watermark);

/* Apply retention.ms and retention.bytes (cleanup.policy=delete) and the
 * log start offset: delete whole segments from the oldest, never the
 * active one (a non-empty active segment that is due is rolled first, as
 * Kafka does); then remove segment files whose file.delete.delay.ms has
 * passed.  *deleted (may be NULL) gets the number of segments deleted.
 * @thread logmaint @locks plog taken */
SAMSA_MUST_CHECK samsa_err_t samsa_plog_retain(samsa_plog_t *plog,
                                               int64_t now_ms, int *deleted);

/* Unlink the segment files renamed to .deleted whose file.delete.delay.ms
 * has passed (all: every one).  @thread logmaint, main */
void samsa_plog_purge(samsa_plog_t *plog, int64_t now_ms, bool all);

/* Take from the *n elements of *@arr (@size bytes each, with an int64_t
 * due time, monotonic ms, at offset @due_off) those due at @now_ms (all:
 * every one): returns them, in order, in a new array (never NULL; free it
 * with samsa_free) and their count in *ndue; the rest stay, in order, at
 * the front of *@arr, *n then their count.  @locks lock (which guards
 * *@arr, which its writers may realloc, and *n) taken */
void *samsa_log_take_due(pthread_mutex_t *lock, void **arr, size_t *n,
                         size_t size, size_t due_off, int64_t now_ms,
                         bool all, size_t *ndue);

/* Remove everything at or after offset (a follower's divergent end): whole
 * segments, then the batches of the segment holding offset from the one
 * holding it on (so the LEO may end below offset).
 * @thread handler @locks plog taken */
SAMSA_MUST_CHECK samsa_err_t samsa_plog_truncate_to(samsa_plog_t *plog,
                                                    int64_t offset);

/* Kafka's truncateFullyAndStartAt, for a follower whose LEO is below its
 * leader's log start: every segment goes (renamed to .deleted, removed
 * after file.delete.delay.ms), an empty one at offset (above the LEO)
 * becomes the log; log start, LEO, high watermark, recovery point and
 * durable offset are offset; no leader epochs, no producer state are
 * left.  OFFSET_OUT_OF_RANGE for an offset not above the LEO.
 * @thread replica fetcher @locks plog taken */
SAMSA_MUST_CHECK samsa_err_t samsa_plog_truncate_fully(samsa_plog_t *plog,
                                                       int64_t offset);

/* ---- flush --------------------------------------------------------------- */

typedef enum samsa_plog_flush_mode {
    SAMSA_PLOG_FLUSH_DATA,          /* the .log files: durable offset */
    SAMSA_PLOG_FLUSH_FULL,          /* .log and indexes: recovery point */
    SAMSA_PLOG_FLUSH_REQUESTED,     /* what the last request asked for */
} samsa_plog_flush_mode_t;

/* fdatasync every segment holding data not yet flushed (one fdatasync per
 * file covers every append made before it started), fsync the directory
 * if segments were created, then move the durable offset (and, FULL, the
 * recovery point) to the LEO seen at the start.  *flushed (may be NULL)
 * gets the durable offset.  An fdatasync error takes the log offline
 * (KAFKA_STORAGE_ERROR): data may be lost and must not be acknowledged.
 * @thread logflush, logmaint, main (never network) @locks flush taken,
 * then plog briefly */
SAMSA_MUST_CHECK samsa_err_t samsa_plog_flush(samsa_plog_t *plog,
                                              samsa_plog_flush_mode_t mode,
                                              int64_t *flushed);

/* Whether flush.ms has passed since the last flush with data unflushed
 * (logmaint's time-based flush). */
bool samsa_plog_flush_due(samsa_plog_t *plog, int64_t now_ms);

/* Called (outside the plog lock) when an append or a roll wants a flush;
 * the log manager queues the plog for its flusher.  Set once, before the
 * plog is shared. */
typedef void samsa_plog_flush_want_t(void *ctx, samsa_plog_t *plog);
void samsa_plog_set_flusher(samsa_plog_t *plog, samsa_plog_flush_want_t *fn,
                            void *ctx);

/* Ask for a flush (FULL or DATA) through the flusher, as an append does. */
void samsa_plog_request_flush(samsa_plog_t *plog, bool full);

/* The flusher's queue mark: claim returns true if the plog was not queued
 * yet (the caller queues it); the flusher unclaims it before flushing, so
 * an append arriving during that flush queues it again. */
bool samsa_plog_flush_claim(samsa_plog_t *plog);
void samsa_plog_flush_unclaim(samsa_plog_t *plog);

/* ---- log cleaner (log/plog_clean.c; the policy is in log/cleaner.c) ---- */

/* The current segments, oldest first, the last one active: *n references
 * the caller drops with samsa_plog_clean_release().  @thread any */
samsa_seg_t **samsa_plog_clean_snapshot(samsa_plog_t *plog, size_t *n);
void samsa_plog_clean_release(samsa_seg_t **segs, size_t n);

/* Replace the consecutive segments old[0..nold) (sealed, not the active
 * one) with cleaned, whose three files are named "<base>*.swap" (base =
 * old[0]'s, written and fdatasynced by the cleaner), crash-safely, as
 * Kafka's replaceSegments: the old segments' files are renamed to
 * .deleted (unlinked after file.delete.delay.ms), then the .swap files to
 * their final names; the directory is fsynced.  end_offset (the offset
 * after the last old segment) becomes cleaned's end.  _STATE (and
 * nothing is renamed) when the log no longer holds old[] in that order
 * (retention or a truncation got there first); NOT_LEADER_OR_FOLLOWER or
 * UNKNOWN_TOPIC_OR_PARTITION (nothing renamed) after close or delete;
 * KAFKA_STORAGE_ERROR on I/O errors (the log goes offline).
 * @thread logcleaner @locks plog taken */
SAMSA_MUST_CHECK samsa_err_t samsa_plog_clean_swap(samsa_plog_t *plog,
                                                   samsa_seg_t *const *old,
                                                   size_t nold,
                                                   samsa_seg_t *cleaned,
                                                   int64_t end_offset,
                                                   int64_t now_ms);

/* The cleaner's first dirty offset (-1 when it never cleaned the log);
 * set from cleaner-offset-checkpoint at load and after each cleaning. */
int64_t samsa_plog_clean_offset(samsa_plog_t *plog);
void samsa_plog_set_clean_offset(samsa_plog_t *plog, int64_t offset);

/* The earliest delete horizon (KIP-534) the cleaner wrote into the log
 * and has not cleaned after yet (INT64_MAX: none): once it passes, the
 * log is worth cleaning even without new dirty data. */
int64_t samsa_plog_clean_horizon(samsa_plog_t *plog);
void samsa_plog_set_clean_horizon(samsa_plog_t *plog, int64_t horizon_ms);

/* A cleaner thread's claim on the log: true if it was free. */
bool samsa_plog_clean_claim(samsa_plog_t *plog);
void samsa_plog_clean_unclaim(samsa_plog_t *plog);

/* Counters for tests and metrics. */
typedef struct samsa_plog_stats {
    uint64_t  appends;
    uint64_t  flushes;              /* samsa_plog_flush() calls that synced */
    uint64_t  fdatasyncs;           /* files synced */
    uint64_t  rolls;
    uint64_t  messages_in;          /* records appended for clients (Kafka's
                                       MessagesInPerSec) */
    uint64_t  bytes_in;             /* their record-batch bytes
                                       (BytesInPerSec) */
    uint64_t  bytes_out;            /* record bytes handed to fetch
                                       responses (BytesOutPerSec) */
} samsa_plog_stats_t;

void samsa_plog_stats(samsa_plog_t *plog, samsa_plog_stats_t *stats);

/* Count len record bytes sent to a fetcher.  @thread any */
void samsa_plog_count_bytes_out(samsa_plog_t *plog, int64_t len);

#endif /* SAMSA_LOG_PLOG_H */
