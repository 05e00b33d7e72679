/*
 * log/cleaner.h - the log cleaner, Kafka's LogCleaner for topics with
 * cleanup.policy=compact (or compact,delete): it keeps the latest record
 * of each key, drops tombstones (null values) and control batches once
 * delete.retention.ms has passed after the cleaning pass that first saw
 * them (KIP-534 delete horizon in the batch), and never touches the active
 * segment.  Offsets of kept records never change; batches keep their base
 * offset, last offset delta, producer id, epoch and base sequence.
 *
 * A cleaning pass over one log: (1) the dirty section runs from the first
 * dirty offset (cleaner-offset-checkpoint, or the log start) to the first
 * uncleanable one (the active segment, or the first segment holding a
 * record younger than min.compaction.lag.ms); (2) the keys of the dirty
 * section go into an offset map (key -> last offset; exact keys, no
 * hashing collisions) of at most log.cleaner.dedupe.buffer.size / threads
 * bytes, stopping at a segment boundary when full; (3) every sealed
 * segment below the map's end is rewritten, in groups of consecutive
 * segments that fit segment.bytes, into "<base>.log.cleaned" (+ indexes),
 * fdatasynced, renamed ".swap" and swapped in by samsa_plog_clean_swap().
 * A group whose content would not change is left alone.
 *
 * Threads: `logcleaner` threads (log.cleaner.threads) started by the log
 * manager; each claims one log at a time (samsa_plog_clean_claim), so a
 * log is cleaned by one thread at once.  The filter and map functions are
 * pure and run anywhere.  Ownership: the log manager owns the cleaner.
 */
#ifndef SAMSA_LOG_CLEANER_H
#define SAMSA_LOG_CLEANER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>

#include "log/plog.h"
#include "util/buf.h"

#define SAMSA_CLEANER_CHECKPOINT_FILE  "cleaner-offset-checkpoint"

/* ---- offset map ---------------------------------------------------------- */

/* key -> the largest offset seen with it.  Owned by one thread. */
typedef struct samsa_cleaner_map samsa_cleaner_map_t;

/* A map using at most budget bytes (slots and keys). */
samsa_cleaner_map_t *samsa_cleaner_map_new(size_t budget);
void samsa_cleaner_map_free(samsa_cleaner_map_t *map);
void samsa_cleaner_map_clear(samsa_cleaner_map_t *map);

/* Record offset for key (keeping the larger one).  False, and nothing
 * changed, when a new key does not fit the budget. */
bool samsa_cleaner_map_put(samsa_cleaner_map_t *map, const uint8_t *key,
                           size_t len, int64_t offset);

/* The offset recorded for key, or -1. */
int64_t samsa_cleaner_map_get(const samsa_cleaner_map_t *map,
                              const uint8_t *key, size_t len);

size_t samsa_cleaner_map_count(const samsa_cleaner_map_t *map);

/* Add the keys of the records at or after min_offset of one batch read
 * from disk (checked: header, CRC, records).  Control batches add
 * nothing.
 * @returns _FULL when the map filled up (some keys of the batch may be
 * in it), _BAD_MSG for a batch that does not decode. */
SAMSA_MUST_CHECK samsa_err_t samsa_cleaner_map_batch(
    samsa_cleaner_map_t *map, const uint8_t *batch, size_t size,
    int64_t min_offset);

/* ---- filtering one batch ------------------------------------------------- */

typedef struct samsa_cleaner_filter {
    const samsa_cleaner_map_t  *map;        /* NULL: no dedupe (tombstone
                                               and horizon handling only) */
    int64_t                     now_ms;
    int64_t                     delete_retention_ms;
    bool                        retain_empty;   /* keep the batch, without
                                                   records, when none is
                                                   left (the last batch of
                                                   a producer, or of a
                                                   group of segments) */
} samsa_cleaner_filter_t;

typedef struct samsa_cleaner_filter_res {
    bool     changed;           /* the output differs from the input */
    int32_t  kept;              /* records written */
    int32_t  removed;           /* records dropped */
    int64_t  horizon;           /* the output batch's delete horizon, or
                                   -1 (none, or nothing written) */
} samsa_cleaner_filter_res_t;

/* Append to out what is left of the batch (size bytes at batch, checked:
 * header, CRC, records): records whose key has a later offset in the map,
 * records without a key, and tombstones or control batches whose delete
 * horizon has passed are dropped; a batch that keeps tombstones (or is a
 * control batch) and has no horizon yet gets now + delete.retention.ms
 * (attribute bit 6, BaseTimestamp = horizon, record timestamp deltas
 * rebased).  A rewritten batch keeps BaseOffset, LastOffsetDelta,
 * PartitionLeaderEpoch, producer id/epoch/base sequence and codec
 * (recompressed with it); its MaxTimestamp is recomputed for CreateTime.
 * An unchanged batch is copied as is.  A batch left without records is
 * written as an empty batch (RecordsCount 0, control bit cleared) only
 * with retain_empty.
 * @returns _BAD_MSG when the batch does not decode (out unchanged). */
SAMSA_MUST_CHECK samsa_err_t samsa_cleaner_filter_batch(
    const uint8_t *batch, size_t size, const samsa_cleaner_filter_t *f,
    samsa_buf_t *out, samsa_cleaner_filter_res_t *res);

/* ---- cleaning a log ------------------------------------------------------ */

/* Told the bytes a pass read or wrote, after each batch read and each
 * write; may sleep (the I/O throttle). */
typedef void samsa_cleaner_io_fn_t(void *ctx, int64_t bytes);

typedef struct samsa_cleaner_opts {
    int64_t  now_ms;                /* wall clock (injected by tests) */
    size_t   map_bytes;             /* offset map budget */
    bool     force;                 /* clean whatever is cleanable, even
                                       below min.cleanable.dirty.ratio */
    samsa_cleaner_io_fn_t  *io_fn;  /* NULL: none */
    void                   *io_ctx;
} samsa_cleaner_opts_t;

typedef struct samsa_cleaner_stats {
    bool     cleaned;               /* a pass ran */
    int64_t  first_dirty;
    int64_t  end_offset;            /* the new first dirty offset */
    double   dirty_ratio;           /* before the pass */
    int64_t  bytes_read;
    int64_t  bytes_written;         /* of the groups swapped in */
    int64_t  records_removed;
    int32_t  groups_swapped;
    int32_t  segments_replaced;
} samsa_cleaner_stats_t;

/* How dirty a log is now: its dirty ratio (0 when nothing is cleanable)
 * and whether it must be cleaned regardless (max.compaction.lag.ms
 * passed, or a delete horizon came due).  False for logs that are not
 * compacted.  @thread any */
bool samsa_cleaner_log_dirt(samsa_plog_t *plog, int64_t now_ms,
                            double *ratio, bool *must);

/* One cleaning pass over plog if it is due (or opts->force), as above;
 * moves the log's first dirty offset and delete-horizon mark.  A log
 * that changed meanwhile (retention, truncation) keeps the groups not yet
 * swapped for the next pass.  @returns KAFKA_STORAGE_ERROR on I/O errors
 * (the log may go offline); _BAD_MSG if a batch on disk does not decode
 * (nothing swapped in for its group).
 * @thread logcleaner (or a test) */
SAMSA_MUST_CHECK samsa_err_t samsa_cleaner_clean_log(
    samsa_plog_t *plog, const samsa_cleaner_opts_t *opts,
    samsa_cleaner_stats_t *stats);

/* ---- the cleaner threads ------------------------------------------------- */

typedef struct samsa_cleaner_config {
    bool     enable;                /* log.cleaner.enable (true) */
    int32_t  threads;               /* log.cleaner.threads (1) */
    int64_t  backoff_ms;            /* log.cleaner.backoff.ms (15000) */
    int64_t  dedupe_buffer_size;    /* log.cleaner.dedupe.buffer.size
                                       (128 MiB), split among threads */
    double   io_max_bytes_per_second;   /* log.cleaner.io.max.bytes.per.
                                           second (DBL_MAX: no limit), for
                                           all threads together */
} samsa_cleaner_config_t;

void samsa_cleaner_config_defaults(samsa_cleaner_config_t *cfg);

typedef struct samsa_cleaner samsa_cleaner_t;

/* Pick the logs to clean.  fn is called with each log to consider (a
 * snapshot taken by the caller); the cleaner keeps no reference. */
typedef void samsa_cleaner_each_fn_t(void *ctx, void *fn_ctx,
                                     void (*fn)(void *, samsa_plog_t *));

/* After a pass changed a log's first dirty offset (to checkpoint it). */
typedef void samsa_cleaner_done_fn_t(void *ctx);

/* Start cfg->threads threads (none when !enable or threads == 0): each
 * loops over the logs (each_fn), cleans the dirtiest one it can claim,
 * calls done_fn, and sleeps backoff_ms when nothing was due.
 * @returns NULL if a thread could not start. */
samsa_cleaner_t *samsa_cleaner_start(const samsa_cleaner_config_t *cfg,
                                     samsa_cleaner_each_fn_t *each_fn,
                                     samsa_cleaner_done_fn_t *done_fn,
                                     void *ctx);

/* Stop and join the threads (a pass in progress finishes its group). */
void samsa_cleaner_stop(samsa_cleaner_t *cleaner);      /* NULL: no-op */

typedef struct samsa_cleaner_counters {
    uint64_t  passes;               /* cleaning passes run */
    uint64_t  groups_swapped;
    uint64_t  records_removed;
} samsa_cleaner_counters_t;

void samsa_cleaner_counters(samsa_cleaner_t *cleaner,
                            samsa_cleaner_counters_t *out);

#endif /* SAMSA_LOG_CLEANER_H */
