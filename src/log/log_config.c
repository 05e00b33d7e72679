/*
 * log/log_config.c - defaults and sanity checks of samsa_log_config_t.
 * Threads: any.
 */
#include "log/log_config.h"

#include <stdio.h>

#define LOG_CONFIG_WEEK_MS (7LL * 24 * 3600 * 1000)

void
samsa_log_config_defaults(samsa_log_config_t *cfg)
{
    *cfg = (samsa_log_config_t) {
        .segment_bytes = 1073741824,
        .segment_ms = LOG_CONFIG_WEEK_MS,
        .segment_jitter_ms = 0,
        .segment_index_bytes = 10485760,
        .index_interval_bytes = 4096,
        .retention_ms = LOG_CONFIG_WEEK_MS,
        .retention_bytes = -1,
        .flush_messages = INT64_MAX,
        .flush_ms = INT64_MAX,
        .log_append_time = false,
        .timestamp_before_max_ms = INT64_MAX,
        .timestamp_after_max_ms = 3600000,     /* KIP-1030 */
        .max_message_bytes = 1048588,
        .file_delete_delay_ms = 60000,
        .cleanup_policy = SAMSA_LOG_CLEANUP_DELETE,
        .min_cleanable_ratio = 0.5,
        .delete_retention_ms = 24LL * 3600 * 1000,
        .min_compaction_lag_ms = 0,
        .max_compaction_lag_ms = INT64_MAX,
        .producer_id_expiration_ms = 86400000,
        .producer_id_expiration_check_interval_ms = 600000,
    };
}

static bool
log_config_bad(const char *key, char *errstr, size_t errstr_size)
{
    snprintf(errstr, errstr_size, "invalid value for %s", key);
    return false;
}

bool
samsa_log_config_check(const samsa_log_config_t *cfg, char *errstr,
                       size_t errstr_size)
{
    if (cfg->segment_bytes < 14) {      /* LegacyRecord.RECORD_OVERHEAD_V0 */
        return log_config_bad("segment.bytes", errstr, errstr_size);
    }
    if (cfg->segment_ms < 1) {
        return log_config_bad("segment.ms", errstr, errstr_size);
    }
    if (cfg->segment_jitter_ms < 0) {
        return log_config_bad("segment.jitter.ms", errstr, errstr_size);
    }
    if (cfg->segment_index_bytes < 12) {    /* one time-index entry */
        return log_config_bad("segment.index.bytes", errstr, errstr_size);
    }
    if (cfg->index_interval_bytes < 0) {
        return log_config_bad("index.interval.bytes", errstr, errstr_size);
    }
    if (cfg->flush_messages < 1) {
        return log_config_bad("flush.messages", errstr, errstr_size);
    }
    if (cfg->flush_ms < 0) {
        return log_config_bad("flush.ms", errstr, errstr_size);
    }
    if (cfg->max_message_bytes < 0) {
        return log_config_bad("max.message.bytes", errstr, errstr_size);
    }
    if (cfg->timestamp_before_max_ms < 0) {
        return log_config_bad("message.timestamp.before.max.ms", errstr,
                              errstr_size);
    }
    if (cfg->timestamp_after_max_ms < 0) {
        return log_config_bad("message.timestamp.after.max.ms", errstr,
                              errstr_size);
    }
    if (cfg->file_delete_delay_ms < 0) {
        return log_config_bad("file.delete.delay.ms", errstr, errstr_size);
    }
    if (!(cfg->min_cleanable_ratio >= 0.0 && cfg->min_cleanable_ratio <= 1.0)) {
        return log_config_bad("min.cleanable.dirty.ratio", errstr,
                              errstr_size);
    }
    if (cfg->delete_retention_ms < 0) {
        return log_config_bad("delete.retention.ms", errstr, errstr_size);
    }
    if (cfg->min_compaction_lag_ms < 0) {
        return log_config_bad("min.compaction.lag.ms", errstr, errstr_size);
    }
    if (cfg->max_compaction_lag_ms < 1
        || cfg->max_compaction_lag_ms < cfg->min_compaction_lag_ms) {
        return log_config_bad("max.compaction.lag.ms", errstr, errstr_size);
    }
    return true;
}
