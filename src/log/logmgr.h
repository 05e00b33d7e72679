/*
 * log/logmgr.h - the log manager, Kafka's LogManager: every partition log
 * of every log dir, loaded (and recovered) at start, created and deleted
 * at run time, checkpointed, retained and flushed in the background.
 *
 * Per log dir it keeps Kafka's files: recovery-point-offset-checkpoint and
 * log-start-offset-checkpoint ("0\n<n>\n<topic> <partition> <offset>\n"),
 * written periodically and at close, and the clean-shutdown marker
 * .kafka_cleanshutdown, written by a clean close and removed at start.
 *
 * Threads:
 *   logmaint  retention every log.retention.check.interval.ms, time-based
 *             flush requests every log.flush.scheduler.interval.ms (per
 *             topic flush.ms), checkpoints, removal of deleted segments
 *             and partition directories once file.delete.delay.ms passed.
 *   logflush  group commit: takes every partition that asked for a flush
 *             (an append reaching flush.messages, a roll, logmaint),
 *             fdatasyncs each once (covering every batch appended until
 *             then), advances its durable offset and calls on_flushed.
 *   logcleaner  log.cleaner.threads (changed at run time by
 *             samsa_logmgr_cleaner_reconfigure): compaction
 *             (log/cleaner.h); each
 *             cleaning moves the log's first dirty offset, written to
 *             <dir>/cleaner-offset-checkpoint (same format as the other
 *             checkpoints) and read back at load.
 *   recovery  num.recovery.threads.per.data.dir per dir, only during
 *             samsa_logmgr_open().
 * Every other function is safe from any thread (handlers, main); the
 * registry's lock is held only to find, add or remove an entry.
 * Ownership: the manager owns its plogs (one reference each in the
 * registry); lookups hand out extra references.
 */
#ifndef SAMSA_LOG_LOGMGR_H
#define SAMSA_LOG_LOGMGR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>

#include "log/cleaner.h"
#include "log/log_config.h"
#include "log/plog.h"
#include "proto/types.h"

#define SAMSA_LOGMGR_CLEAN_SHUTDOWN_FILE  ".kafka_cleanshutdown"
#define SAMSA_LOGMGR_RECOVERY_POINT_FILE  "recovery-point-offset-checkpoint"
#define SAMSA_LOGMGR_LOG_START_FILE       "log-start-offset-checkpoint"
#define SAMSA_LOGMGR_HIGH_WATERMARK_FILE  "replication-offset-checkpoint"

typedef struct samsa_logmgr samsa_logmgr_t;

/* Durability reached: every offset of topic-partition below
 * flushed_offset is on disk; -1 means the flush failed and the log went
 * offline (answer the waiting requests with KAFKA_STORAGE_ERROR).  Called
 * on logflush (or on the thread running samsa_logmgr_close()), in
 * increasing order per partition, with no log lock held; it must not
 * block (hand the news to the purgatory). */
typedef void samsa_logmgr_flushed_cb_t(void *ctx, const char *topic,
                                       int32_t partition,
                                       int64_t flushed_offset);

/* Fill cfg with topic's log config (broker defaults + topic overrides) for
 * a partition found on disk at start; cfg holds the manager's defaults on
 * entry.  Called on recovery threads. */
typedef void samsa_logmgr_topic_config_cb_t(void *ctx, const char *topic,
                                            samsa_log_config_t *cfg);

typedef struct samsa_logmgr_config {
    const char *const  *dirs;       /* log.dirs; copied */
    size_t              ndirs;
    int64_t             retention_check_interval_ms;
                                    /* log.retention.check.interval.ms
                                       (300000) */
    int64_t             flush_scheduler_interval_ms;
                                    /* log.flush.scheduler.interval.ms
                                       (INT64_MAX) */
    int64_t             flush_offset_checkpoint_interval_ms;
                                    /* log.flush.offset.checkpoint.
                                       interval.ms (60000) */
    int64_t             flush_start_offset_checkpoint_interval_ms;
                                    /* log.flush.start.offset.checkpoint.
                                       interval.ms (60000) */
    int64_t             high_watermark_checkpoint_interval_ms;
                                    /* replica.high.watermark.checkpoint.
                                       interval.ms (5000): how often
                                       replication-offset-checkpoint is
                                       written (and at a clean close) */
    int32_t             recovery_threads_per_dir;
    int64_t             open_files_max;     /* log.open.files.max: budget
                                               of the descriptor cache
                                               (log/fdcache.h); 0: half
                                               of RLIMIT_NOFILE */
                                    /* num.recovery.threads.per.data.dir
                                       (1) */
    samsa_cleaner_config_t  cleaner;    /* log.cleaner.* */
    samsa_log_config_t  defaults;   /* topics the callback leaves alone */
    samsa_logmgr_topic_config_cb_t  *topic_config;      /* may be NULL */
    void                            *topic_config_ctx;
    samsa_logmgr_flushed_cb_t       *on_flushed;        /* may be NULL */
    void                            *on_flushed_ctx;
} samsa_logmgr_config_t;

/* Kafka's defaults; dirs empty. */
void samsa_logmgr_config_defaults(samsa_logmgr_config_t *cfg);

/* Open the log dirs (created if missing): remove "-delete" directories,
 * load and recover every <topic>-<partition> directory (the metadata
 * partition __cluster_metadata-0 is left alone), remove the clean-shutdown
 * markers, start logmaint and logflush.  A partition that cannot be
 * loaded is reported and skipped; a dir that cannot be read is reported
 * and skipped; failing all dirs fails the open (errstr says why).
 * @thread main */
SAMSA_MUST_CHECK samsa_err_t samsa_logmgr_open(
    const samsa_logmgr_config_t *cfg, samsa_logmgr_t **out, char *errstr,
    size_t errstr_size);

/* Clean shutdown: stop the threads, close every log (flush, trim
 * indexes), answer pending flushes, write both checkpoints and, in each
 * dir where all went well, the clean-shutdown marker; then free.  Stop
 * the handlers first: appends after this starts fail.  @thread main */
void samsa_logmgr_close(samsa_logmgr_t *mgr);

/* Set (or, with NULL, remove) the durability callback.  Returns only when
 * no call of the previous callback is running, so its context may be
 * freed after.  @thread any but the callback's */
void samsa_logmgr_set_flushed_cb(samsa_logmgr_t *mgr,
                                 samsa_logmgr_flushed_cb_t *cb, void *ctx);

/* The partition's log with a new reference (samsa_plog_unref() it), or
 * NULL if this broker has none. */
samsa_plog_t *samsa_logmgr_plog_ref(samsa_logmgr_t *mgr, const char *topic,
                                    int32_t partition);

/* Kafka's getOrCreateLog: the existing log (same topic id, or either id
 * zero) or a new one in the log dir holding the fewest partitions.
 * *out (may be NULL) gets a reference.  INCONSISTENT_TOPIC_ID if the
 * existing log has another topic id, INVALID_CONFIG for a bad cfg,
 * KAFKA_STORAGE_ERROR on I/O errors.  @thread handler, main */
SAMSA_MUST_CHECK samsa_err_t samsa_logmgr_plog_create(
    samsa_logmgr_t *mgr, const char *topic, int32_t partition,
    samsa_uuid_t topic_id, const samsa_log_config_t *cfg,
    samsa_plog_t **out);

/* Delete the partition's log: out of the registry at once, directory
 * renamed to "<topic>-<partition>.<uuid>-delete" and removed by logmaint
 * after the topic's file.delete.delay.ms (readers holding references
 * keep reading).  UNKNOWN_TOPIC_OR_PARTITION if there is none. */
SAMSA_MUST_CHECK samsa_err_t samsa_logmgr_plog_delete(samsa_logmgr_t *mgr,
                                                      const char *topic,
                                                      int32_t partition);

/* Apply a topic's new config to each of its partitions (AlterConfigs). */
void samsa_logmgr_topic_config_set(samsa_logmgr_t *mgr, const char *topic,
                                   const samsa_log_config_t *cfg);

/* Call fn for every log (a snapshot; no manager lock held during fn). */
typedef void samsa_logmgr_plog_fn_t(void *ctx, samsa_plog_t *plog);
void samsa_logmgr_foreach(samsa_logmgr_t *mgr, samsa_logmgr_plog_fn_t *fn,
                          void *ctx);

size_t samsa_logmgr_plog_count(samsa_logmgr_t *mgr);

/* Log dirs, for DescribeLogDirs: path, whether it loaded, and the
 * filesystem's total and usable bytes (KIP-827). */
size_t samsa_logmgr_dir_count(const samsa_logmgr_t *mgr);
const char *samsa_logmgr_dir(const samsa_logmgr_t *mgr, size_t i);
bool samsa_logmgr_dir_online(const samsa_logmgr_t *mgr, size_t i);
SAMSA_MUST_CHECK samsa_err_t samsa_logmgr_dir_usage(
    const samsa_logmgr_t *mgr, size_t i, int64_t *total_bytes,
    int64_t *usable_bytes);

/* Write both checkpoint files of every dir now. */
SAMSA_MUST_CHECK samsa_err_t samsa_logmgr_checkpoint(samsa_logmgr_t *mgr);

/* Run one retention pass over every log now (what logmaint does on its
 * schedule). */
void samsa_logmgr_retain(samsa_logmgr_t *mgr, int64_t now_ms);

/* Write every dir's cleaner-offset-checkpoint now (logs that the
 * cleaner has cleaned or that had an entry at load). */
SAMSA_MUST_CHECK samsa_err_t samsa_logmgr_cleaner_checkpoint(
    samsa_logmgr_t *mgr);

/* Apply the cleaner settings want (log.cleaner.threads,
 * log.cleaner.backoff.ms, log.cleaner.dedupe.buffer.size and
 * log.cleaner.io.max.bytes.per.second; its enable is ignored) changed at
 * run time: as Kafka's
 * LogCleaner.reconfigure, the cleaner threads stop (a pass in progress
 * finishes its group) and new ones start, each with an offset map of
 * dedupe_buffer_size / threads bytes; nothing is done when none changed
 * or the manager is closing.  SAMSA_ERR__IO if
 * the new threads could not start (the old settings are then restarted;
 * if even that fails, no cleaner runs until a restart).  Blocks
 * until the threads stopped, with no lock held; a close waits for it.
 * @thread any (the broker's reconf hook) */
SAMSA_MUST_CHECK samsa_err_t samsa_logmgr_cleaner_reconfigure(
    samsa_logmgr_t *mgr, const samsa_cleaner_config_t *want);

/* Whether a new partition's files can be opened now (closing idle log
 * files if needed: log/fdcache.h).  False, with errstr naming
 * RLIMIT_NOFILE and log.open.files.max, when descriptors ran out (counted
 * in the cache's exhausted total): CreateTopics and CreatePartitions are
 * then refused before anything is written.  @thread any */
bool samsa_logmgr_files_available(samsa_logmgr_t *mgr, char *errstr,
                                  size_t errstr_size);

typedef struct samsa_logmgr_stats {
    uint64_t  flush_rounds;         /* logflush wake-ups that flushed */
    uint64_t  plog_flushes;         /* partition flushes they made */
    uint64_t  loaded;               /* logs loaded at open */
    uint64_t  load_failed;
    int64_t   open_files;           /* descriptor cache (log/fdcache.h):
                                       descriptors held now */
    int64_t   open_files_max;       /* its budget, log.open.files.max */
    uint64_t  fd_evictions;         /* segments closed to make room */
    uint64_t  fd_exhausted;         /* refusals: descriptors ran out */
} samsa_logmgr_stats_t;

void samsa_logmgr_stats(samsa_logmgr_t *mgr, samsa_logmgr_stats_t *stats);

#endif /* SAMSA_LOG_LOGMGR_H */
