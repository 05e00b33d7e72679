/*
 * log/log_config.h - one topic's log settings, with Kafka's topic-level
 * names.  The caller (the broker) fills one per topic from the broker's
 * log.* defaults plus the topic's overrides; the log keeps a copy.
 * Threads: a plain value; copy it freely.
 */
#ifndef SAMSA_LOG_LOG_CONFIG_H
#define SAMSA_LOG_LOG_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SAMSA_LOG_CLEANUP_DELETE   0x1      /* cleanup.policy=delete */
#define SAMSA_LOG_CLEANUP_COMPACT  0x2      /* cleanup.policy=compact */

typedef struct samsa_log_config {
    int32_t  segment_bytes;         /* segment.bytes (log.segment.bytes,
                                       1 GiB): roll past this size */
    int64_t  segment_ms;            /* segment.ms (log.roll.ms, 7 days):
                                       roll a segment this old */
    int64_t  segment_jitter_ms;     /* segment.jitter.ms (0): random amount
                                       taken off segment.ms per segment */
    int32_t  segment_index_bytes;   /* segment.index.bytes
                                       (log.index.size.max.bytes, 10 MiB) */
    int32_t  index_interval_bytes;  /* index.interval.bytes
                                       (log.index.interval.bytes, 4096) */
    int64_t  retention_ms;          /* retention.ms (7 days; -1: forever) */
    int64_t  retention_bytes;       /* retention.bytes (-1: no limit) */
    int64_t  flush_messages;        /* flush.messages
                                       (log.flush.interval.messages,
                                       INT64_MAX); 1: group commit */
    int64_t  flush_ms;              /* flush.ms (log.flush.interval.ms,
                                       INT64_MAX) */
    bool     log_append_time;       /* message.timestamp.type: false
                                       CreateTime, true LogAppendTime */
    int64_t  timestamp_before_max_ms;   /* message.timestamp.before.max.ms
                                           (INT64_MAX) */
    int64_t  timestamp_after_max_ms;    /* message.timestamp.after.max.ms
                                           (INT64_MAX) */
    int32_t  max_message_bytes;     /* max.message.bytes (1048588) */
    int64_t  file_delete_delay_ms;  /* file.delete.delay.ms
                                       (log.segment.delete.delay.ms, 60000) */
    int      cleanup_policy;        /* cleanup.policy: SAMSA_LOG_CLEANUP_*
                                       bits (delete) */
    double   min_cleanable_ratio;   /* min.cleanable.dirty.ratio
                                       (log.cleaner.min.cleanable.ratio,
                                       0.5) */
    int64_t  delete_retention_ms;   /* delete.retention.ms
                                       (log.cleaner.delete.retention.ms,
                                       1 day): tombstones and control
                                       batches outlive the cleaning pass
                                       that first saw them this long */
    int64_t  min_compaction_lag_ms; /* min.compaction.lag.ms (0) */
    int64_t  max_compaction_lag_ms; /* max.compaction.lag.ms (INT64_MAX) */
    int64_t  producer_id_expiration_ms; /* the broker's
                                           producer.id.expiration.ms
                                           (86400000): idle producers'
                                           state is dropped after this */
    int64_t  producer_id_expiration_check_interval_ms;
                                    /* producer.id.expiration.check.
                                       interval.ms (600000) */
} samsa_log_config_t;

/* Kafka's defaults for every field. */
void samsa_log_config_defaults(samsa_log_config_t *cfg);

/* Whether cfg is usable; if not, errstr names the offending key. */
bool samsa_log_config_check(const samsa_log_config_t *cfg, char *errstr,
                            size_t errstr_size);

#endif /* SAMSA_LOG_LOG_CONFIG_H */
