/*
 * meta/topic_config.h - Kafka's topic-level configs (LogConfig /
 * TopicConfig of Kafka 4): one row per key with its type, default,
 * validator, the broker keys it falls back to (Kafka's synonyms, in
 * Kafka's order) and a documentation line; validation of a set of topic
 * overrides; and the resolver that gives a key's effective value for a
 * topic, its source and its synonyms, as DescribeConfigs reports them
 * (Kafka's ConfigHelper.createTopicConfigEntry) and as the log layer needs
 * them to build a partition's log config.
 *
 * Threads: const data and pure functions; any thread.  The resolver reads
 * the broker's samsa_config_t (read-only after start) and an image the
 * caller holds a reference to.
 */
#ifndef SAMSA_META_TOPIC_CONFIG_H
#define SAMSA_META_TOPIC_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>
#include "log/log_config.h"
#include "meta/image.h"
#include "util/arena.h"
#include "config/config.h"
#include "config/config_defs.h"

/* DescribeConfigs' ConfigSource ids. */
typedef enum samsa_config_source {
    SAMSA_CONFIG_SOURCE_UNKNOWN                       = 0,
    SAMSA_CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG          = 1,
    SAMSA_CONFIG_SOURCE_DYNAMIC_BROKER_CONFIG         = 2,
    SAMSA_CONFIG_SOURCE_DYNAMIC_DEFAULT_BROKER_CONFIG = 3,
    SAMSA_CONFIG_SOURCE_STATIC_BROKER_CONFIG          = 4,
    SAMSA_CONFIG_SOURCE_DEFAULT_CONFIG                = 5,
    SAMSA_CONFIG_SOURCE_DYNAMIC_BROKER_LOGGER_CONFIG  = 6,
} samsa_config_source_t;

/* DescribeConfigs' ConfigType ids (v3+). */
typedef enum samsa_config_wire_type {
    SAMSA_CONFIG_WIRE_UNKNOWN  = 0,
    SAMSA_CONFIG_WIRE_BOOLEAN  = 1,
    SAMSA_CONFIG_WIRE_STRING   = 2,
    SAMSA_CONFIG_WIRE_INT      = 3,
    SAMSA_CONFIG_WIRE_SHORT    = 4,
    SAMSA_CONFIG_WIRE_LONG     = 5,
    SAMSA_CONFIG_WIRE_DOUBLE   = 6,
    SAMSA_CONFIG_WIRE_LIST     = 7,
    SAMSA_CONFIG_WIRE_CLASS    = 8,
    SAMSA_CONFIG_WIRE_PASSWORD = 9,
} samsa_config_wire_type_t;

/* One topic config is a samsa_config_def_t row (config/config_defs.h)
 * with its synonyms: the broker keys it falls back to.  Every topic
 * config, by name. */
extern const samsa_config_def_t  samsa_topic_config_defs[];
extern const size_t              samsa_topic_config_ndefs;

/* The row of key, or NULL for a key that is no topic config. */
const samsa_config_def_t *samsa_topic_config_find(const char *key);

/* DescribeConfigs' ConfigType of a row. */
samsa_config_wire_type_t samsa_topic_config_wire_type(
    const samsa_config_def_t *def);

/* Check one override as Kafka's ConfigDef does; on success *canon (from
 * arena, or NULL to skip) gets the value as Kafka prints it back (numbers
 * without sign or blanks, "true"/"false", list items trimmed and joined by
 * ','); on failure SAMSA_ERR_INVALID_CONFIG and errstr like Kafka's
 * "Invalid value abc for configuration retention.ms: Not a number of type
 * LONG" or "Unknown topic config name: foo". */
SAMSA_MUST_CHECK samsa_err_t samsa_topic_config_check(
    const char *key, const char *value, samsa_arena_t *arena,
    const char **canon, char *errstr, size_t errstr_size);

/* Check a topic's complete set of overrides (a CreateTopics' configs, or
 * the result of an alter): every key known, every value valid and not
 * NULL ("Null value not supported for topic configs: k1,k2"), and the
 * cross-key rules of Kafka's LogConfig.validate with the broker's values
 * filling what the set lacks (min.compaction.lag.ms <=
 * max.compaction.lag.ms; no remote.storage.enable=true, as Samsa has no
 * tiered storage).  SAMSA_ERR_INVALID_CONFIG with errstr on failure. */
SAMSA_MUST_CHECK samsa_err_t samsa_topic_config_validate(
    const samsa_config_t *broker_cfg, const samsa_image_t *img,
    const samsa_image_config_t *cfgs, size_t n, char *errstr,
    size_t errstr_size);

/* One synonym as DescribeConfigs lists it. */
typedef struct samsa_topic_config_source_entry {
    const char             *name;        /* topic key, or a broker key */
    const char             *value;
    samsa_config_source_t   source;
} samsa_topic_config_source_entry_t;

/* A topic key resolved: what DescribeConfigs says of it. */
typedef struct samsa_topic_config_entry {
    const samsa_config_def_t           *def;      /* name, type, doc */
    const char                         *value;    /* effective, canonical */
    samsa_config_source_t               source;
    samsa_topic_config_source_entry_t   synonyms[
                                  1 + 4 * SAMSA_CONFIG_SYNONYMS_MAX];
    size_t                              nsynonyms;
} samsa_topic_config_entry_t;

/* Resolve key for a topic whose overrides are overrides[0..n) (an image
 * topic's configs, or those a request proposes; NULL/0 for none).  The
 * value is the override if there is one, else the first broker synonym
 * that has a value (dynamic per-node, dynamic cluster default, static in
 * server.properties or --override, then its default, scaled to the topic
 * key's unit: retention.ms from log.retention.hours * 3600000), else the
 * topic key's own default.  The synonyms and the source are Kafka's: the
 * override (DYNAMIC_TOPIC_CONFIG), then the broker synonyms grouped by
 * source (DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG,
 * STATIC_BROKER_CONFIG, DEFAULT_CONFIG), dropping those before the first
 * entry named after the first broker synonym, exactly as ConfigHelper
 * does; the source is the first synonym's, or DEFAULT_CONFIG.  img may be
 * NULL (no dynamic broker configs).  Strings are borrowed from the inputs
 * or made in arena.  SAMSA_ERR__NOENT if key is no topic config. */
SAMSA_MUST_CHECK samsa_err_t samsa_topic_config_resolve(
    const samsa_config_t *broker_cfg, const samsa_image_t *img,
    const samsa_image_config_t *overrides, size_t n, const char *key,
    samsa_arena_t *arena, samsa_topic_config_entry_t *out);

/* The effective value of a numeric (INT or LONG), boolean or DOUBLE topic
 * key, as resolved above: what the log layer needs to build a partition's
 * log config.  The key must be a topic config of that type (asserted). */
int64_t samsa_topic_config_long(const samsa_config_t *broker_cfg,
                                const samsa_image_t *img,
                                const samsa_image_config_t *overrides,
                                size_t n, const char *key);
bool    samsa_topic_config_bool(const samsa_config_t *broker_cfg,
                                const samsa_image_t *img,
                                const samsa_image_config_t *overrides,
                                size_t n, const char *key);
double  samsa_topic_config_double(const samsa_config_t *broker_cfg,
                                  const samsa_image_t *img,
                                  const samsa_image_config_t *overrides,
                                  size_t n, const char *key);

/* The log layer's config of a topic with these overrides: every field of
 * samsa_log_config_t from its topic key as resolved above (segment.bytes,
 * segment.ms, segment.jitter.ms, segment.index.bytes,
 * index.interval.bytes, retention.ms, retention.bytes, flush.messages,
 * flush.ms, message.timestamp.*, max.message.bytes, file.delete.delay.ms,
 * cleanup.policy).  Call it when a partition log is created or opened, and
 * again from a change listener when the topic's configs change. */
void samsa_topic_config_to_log(const samsa_config_t *broker_cfg,
                               const samsa_image_t *img,
                               const samsa_image_config_t *overrides,
                               size_t n, samsa_log_config_t *out);

#endif /* SAMSA_META_TOPIC_CONFIG_H */
