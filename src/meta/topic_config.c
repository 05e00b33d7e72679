/*
 * meta/topic_config.c - see topic_config.h.  Types, defaults, validators
 * and synonyms follow Kafka 4's LogConfig, TopicConfig and
 * ServerTopicConfigSynonyms; the broker keys' own defaults come from
 * config/config_defs.c, so a topic key's default is the broker's.  Messages
 * are Kafka's ConfigException ones: "Invalid value V for configuration K:
 * why".
 */
#include "meta/topic_config.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config/config_parse.h"
#include "proto/compress.h"
#include "util/alloc.h"
#include "util/diag.h"

static const char *const  tc_cleanup_policies[] = {
    "compact", "delete", NULL
};
static const char *const  tc_compression_types[] = {
    "uncompressed", "zstd", "lz4", "snappy", "gzip", "producer", NULL
};
static const char *const  tc_timestamp_types[] = {
    "CreateTime", "LogAppendTime", NULL
};

#define TC_MS_PER_MINUTE  60000LL
#define TC_MS_PER_HOUR    3600000LL

/* gzip: a level the codec takes (-1, zlib's default, or 1..9, as Kafka's
 * GzipCompression); num is an INT. */
static bool
tc_check_gzip_level(const char *text, int64_t num, char *why,
                    size_t why_size)
{
    (void) text;
    if (samsa_codec_level_valid(SAMSA_CODEC_GZIP, (int) num)) {
        return true;
    }
    snprintf(why, why_size, "Value must be between 1 and 9, or -1");
    return false;
}

/* Kafka's ThrottledReplicaListValidator: "*", or partition:broker pairs. */
static bool
tc_check_throttled(const char *text, int64_t num, char *why,
                   size_t why_size)
{
    const char  *p = text;

    (void) num;
    if (strcmp(text, "*") == 0 || *text == '\0') {
        return true;
    }
    while (*p != '\0') {
        while (isspace((unsigned char) *p)) {
            p++;
        }
        if (!isdigit((unsigned char) *p)) {
            break;
        }
        while (isdigit((unsigned char) *p)) {
            p++;
        }
        if (*p++ != ':' || !isdigit((unsigned char) *p)) {
            break;
        }
        while (isdigit((unsigned char) *p)) {
            p++;
        }
        while (isspace((unsigned char) *p)) {
            p++;
        }
        if (*p == '\0') {
            return true;
        }
        if (*p++ != ',') {
            break;
        }
    }
    snprintf(why, why_size, "must be the literal '*' or a list of replicas "
             "in the following format: [partitionId]:[brokerId],"
             "[partitionId]:[brokerId],...");
    return false;
}

#define TC_SYN1(a)          { { a, 1 } }
#define TC_NOSYN            { { NULL, 0 } }

const samsa_config_def_t  samsa_topic_config_defs[] = {
    {
        .name = "cleanup.policy", .type = SAMSA_CONFIG_LIST,
        .dflt = "delete", .check = SAMSA_CONFIG_CHECK_ENUM,
        .names = tc_cleanup_policies,
        .synonyms = TC_SYN1("log.cleanup.policy"),
        .doc = "What happens to old log segments: \"delete\" removes them "
               "after the retention time or size, \"compact\" keeps the "
               "latest value of each key; both may be given.",
    },
    {
        .name = "compression.gzip.level", .type = SAMSA_CONFIG_INT,
        .dflt = "-1", .check = SAMSA_CONFIG_CHECK_FN,
        .fn = tc_check_gzip_level,
        .synonyms = TC_SYN1("compression.gzip.level"),
        .doc = "Compression level when compression.type is gzip.",
    },
    {
        .name = "compression.lz4.level", .type = SAMSA_CONFIG_INT,
        .dflt = "9", .check = SAMSA_CONFIG_CHECK_RANGE, .min = 1, .max = 17,
        .synonyms = TC_SYN1("compression.lz4.level"),
        .doc = "Compression level when compression.type is lz4.",
    },
    {
        .name = "compression.type", .type = SAMSA_CONFIG_STRING,
        .dflt = "producer", .check = SAMSA_CONFIG_CHECK_ENUM,
        .names = tc_compression_types,
        .synonyms = TC_SYN1("compression.type"),
        .doc = "Final compression of the topic's batches; \"producer\" "
               "keeps the producer's codec, \"uncompressed\" none.",
    },
    {
        .name = "compression.zstd.level", .type = SAMSA_CONFIG_INT,
        .dflt = "3", .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = -131072, .max = 22,
        .synonyms = TC_SYN1("compression.zstd.level"),
        .doc = "Compression level when compression.type is zstd.",
    },
    {
        .name = "delete.retention.ms", .type = SAMSA_CONFIG_LONG,
        .dflt = "86400000", .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 0, .max = INT64_MAX,
        .synonyms = TC_SYN1("log.cleaner.delete.retention.ms"),
        .doc = "How long delete tombstones are kept in a compacted topic.",
    },
    {
        .name = "file.delete.delay.ms", .type = SAMSA_CONFIG_LONG,
        .dflt = "60000", .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 0, .max = INT64_MAX,
        .synonyms = TC_SYN1("log.segment.delete.delay.ms"),
        .doc = "Time to wait before deleting a file from the filesystem.",
    },
    {
        .name = "flush.messages", .type = SAMSA_CONFIG_LONG,
        .dflt = "9223372036854775807", .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT64_MAX,
        .synonyms = TC_SYN1("log.flush.interval.messages"),
        .doc = "Messages appended to a partition before it is fsynced.",
    },
    {
        .name = "flush.ms", .type = SAMSA_CONFIG_LONG,
        .dflt = "9223372036854775807", .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 0, .max = INT64_MAX,
        .synonyms = { { "log.flush.interval.ms", 1 },
                      { "log.flush.scheduler.interval.ms", 1 } },
        .doc = "Time a message may wait before the partition is fsynced.",
    },
    {
        .name = "follower.replication.throttled.replicas",
        .type = SAMSA_CONFIG_LIST, .dflt = "",
        .check = SAMSA_CONFIG_CHECK_FN, .fn = tc_check_throttled,
        .synonyms = TC_NOSYN,
        .doc = "Replicas whose log replication is throttled on the "
               "follower side: partitionId:brokerId pairs, or '*'.",
    },
    {
        .name = "index.interval.bytes", .type = SAMSA_CONFIG_INT,
        .dflt = "4096", .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 0, .max = INT32_MAX,
        .synonyms = TC_SYN1("log.index.interval.bytes"),
        .doc = "Bytes of log between two offset index entries.",
    },
    {
        .name = "leader.replication.throttled.replicas",
        .type = SAMSA_CONFIG_LIST, .dflt = "",
        .check = SAMSA_CONFIG_CHECK_FN, .fn = tc_check_throttled,
        .synonyms = TC_NOSYN,
        .doc = "Replicas whose log replication is throttled on the leader "
               "side: partitionId:brokerId pairs, or '*'.",
    },
    {
        .name = "local.retention.bytes", .type = SAMSA_CONFIG_LONG,
        .dflt = "-2", .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = -2, .max = INT64_MAX,
        .synonyms = TC_SYN1("log.local.retention.bytes"),
        .doc = "Local size kept before tiered segments are deleted; -2 "
               "means retention.bytes.",
    },
    {
        .name = "local.retention.ms", .type = SAMSA_CONFIG_LONG,
        .dflt = "-2", .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = -2, .max = INT64_MAX,
        .synonyms = TC_SYN1("log.local.retention.ms"),
        .doc = "Local time kept before tiered segments are deleted; -2 "
               "means retention.ms.",
    },
    {
        .name = "max.compaction.lag.ms", .type = SAMSA_CONFIG_LONG,
        .dflt = "9223372036854775807", .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT64_MAX,
        .synonyms = TC_SYN1("log.cleaner.max.compaction.lag.ms"),
        .doc = "Longest time a message stays ineligible for compaction.",
    },
    {
        .name = "max.message.bytes", .type = SAMSA_CONFIG_INT,
        .dflt = "1048588", .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 0, .max = INT32_MAX,
        .synonyms = TC_SYN1("message.max.bytes"),
        .doc = "Largest record batch size the topic accepts.",
    },
    {
        .name = "message.timestamp.after.max.ms", .type = SAMSA_CONFIG_LONG,
        .dflt = "3600000",              /* Kafka 4.0, KIP-1030 */ .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 0, .max = INT64_MAX,
        .synonyms = TC_SYN1("log.message.timestamp.after.max.ms"),
        .doc = "How far in the future a CreateTime timestamp may be.",
    },
    {
        .name = "message.timestamp.before.max.ms", .type = SAMSA_CONFIG_LONG,
        .dflt = "9223372036854775807", .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 0, .max = INT64_MAX,
        .synonyms = TC_SYN1("log.message.timestamp.before.max.ms"),
        .doc = "How far in the past a CreateTime timestamp may be.",
    },
    {
        .name = "message.timestamp.type", .type = SAMSA_CONFIG_STRING,
        .dflt = "CreateTime", .check = SAMSA_CONFIG_CHECK_ENUM,
        .names = tc_timestamp_types,
        .synonyms = TC_SYN1("log.message.timestamp.type"),
        .doc = "Whether batches keep the producer's timestamp (CreateTime) "
               "or get the append time (LogAppendTime).",
    },
    {
        .name = "min.cleanable.dirty.ratio", .type = SAMSA_CONFIG_DOUBLE,
        .dflt = "0.5", .check = SAMSA_CONFIG_CHECK_RANGE,
        .dmin = 0, .dmax = 1,
        .synonyms = TC_SYN1("log.cleaner.min.cleanable.ratio"),
        .doc = "Dirty share of the log above which the cleaner compacts "
               "it.",
    },
    {
        .name = "min.compaction.lag.ms", .type = SAMSA_CONFIG_LONG,
        .dflt = "0", .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 0, .max = INT64_MAX,
        .synonyms = TC_SYN1("log.cleaner.min.compaction.lag.ms"),
        .doc = "Shortest time a message stays uncompacted.",
    },
    {
        .name = "min.insync.replicas", .type = SAMSA_CONFIG_INT,
        .dflt = "1", .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT32_MAX,
        .synonyms = TC_SYN1("min.insync.replicas"),
        .doc = "In-sync replicas that must acknowledge an acks=all write.",
    },
    {
        .name = "preallocate", .type = SAMSA_CONFIG_BOOL, .dflt = "false",
        .synonyms = TC_SYN1("log.preallocate"),
        .doc = "Preallocate the file of a new segment.",
    },
    {
        .name = "remote.log.copy.disable", .type = SAMSA_CONFIG_BOOL,
        .dflt = "false", .synonyms = TC_NOSYN,
        .doc = "Stop copying segments to tiered storage.",
    },
    {
        .name = "remote.log.delete.on.disable", .type = SAMSA_CONFIG_BOOL,
        .dflt = "false", .synonyms = TC_NOSYN,
        .doc = "Delete tiered segments when tiered storage is disabled.",
    },
    {
        .name = "remote.storage.enable", .type = SAMSA_CONFIG_BOOL,
        .dflt = "false", .synonyms = TC_NOSYN,
        .doc = "Enable tiered storage for the topic (Samsa has none).",
    },
    {
        .name = "retention.bytes", .type = SAMSA_CONFIG_LONG, .dflt = "-1",
        .synonyms = TC_SYN1("log.retention.bytes"),
        .doc = "Size a partition's log may grow to before old segments are "
               "deleted; -1 means no limit.",
    },
    {
        .name = "retention.ms", .type = SAMSA_CONFIG_LONG,
        .dflt = "604800000", .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = -1, .max = INT64_MAX,
        .synonyms = { { "log.retention.ms", 1 },
                      { "log.retention.minutes", TC_MS_PER_MINUTE },
                      { "log.retention.hours", TC_MS_PER_HOUR } },
        .doc = "Time a segment is kept before it is deleted; -1 means "
               "forever.",
    },
    {
        .name = "segment.bytes", .type = SAMSA_CONFIG_INT,
        .dflt = "1073741824", .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1048576, .max = INT32_MAX,
        .synonyms = TC_SYN1("log.segment.bytes"),
        .doc = "Size of one segment file.",
    },
    {
        .name = "segment.index.bytes", .type = SAMSA_CONFIG_INT,
        .dflt = "10485760", .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 4, .max = INT32_MAX,
        .synonyms = TC_SYN1("log.index.size.max.bytes"),
        .doc = "Size of the index that maps offsets to file positions.",
    },
    {
        .name = "segment.jitter.ms", .type = SAMSA_CONFIG_LONG, .dflt = "0",
        .check = SAMSA_CONFIG_CHECK_RANGE, .min = 0, .max = INT64_MAX,
        .synonyms = { { "log.roll.jitter.ms", 1 },
                      { "log.roll.jitter.hours", TC_MS_PER_HOUR } },
        .doc = "Largest random jitter subtracted from segment.ms.",
    },
    {
        .name = "segment.ms", .type = SAMSA_CONFIG_LONG,
        .dflt = "604800000", .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT64_MAX,
        .synonyms = { { "log.roll.ms", 1 },
                      { "log.roll.hours", TC_MS_PER_HOUR } },
        .doc = "Time after which a segment is rolled even if not full.",
    },
    {
        .name = "unclean.leader.election.enable", .type = SAMSA_CONFIG_BOOL,
        .dflt = "false",
        .synonyms = TC_SYN1("unclean.leader.election.enable"),
        .doc = "Allow a replica outside the ISR to become leader.",
    },
};

const size_t  samsa_topic_config_ndefs =
    sizeof(samsa_topic_config_defs) / sizeof(samsa_topic_config_defs[0]);

const samsa_config_def_t *
samsa_topic_config_find(const char *key)
{
    size_t  lo = 0, hi = samsa_topic_config_ndefs, mid;
    int     cmp;

    while (lo < hi) {
        mid = (lo + hi) / 2;
        cmp = strcmp(key, samsa_topic_config_defs[mid].name);
        if (cmp == 0) {
            return &samsa_topic_config_defs[mid];
        }
        if (cmp < 0) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    return NULL;
}

samsa_config_wire_type_t
samsa_topic_config_wire_type(const samsa_config_def_t *def)
{
    switch (def->type) {
    case SAMSA_CONFIG_INT:      return SAMSA_CONFIG_WIRE_INT;
    case SAMSA_CONFIG_LONG:     return SAMSA_CONFIG_WIRE_LONG;
    case SAMSA_CONFIG_DOUBLE:   return SAMSA_CONFIG_WIRE_DOUBLE;
    case SAMSA_CONFIG_BOOL:     return SAMSA_CONFIG_WIRE_BOOLEAN;
    case SAMSA_CONFIG_STRING:   return SAMSA_CONFIG_WIRE_STRING;
    case SAMSA_CONFIG_LIST:     return SAMSA_CONFIG_WIRE_LIST;
    case SAMSA_CONFIG_PASSWORD: return SAMSA_CONFIG_WIRE_PASSWORD;
    }
    return SAMSA_CONFIG_WIRE_UNKNOWN;
}

/* ---- parsing values as Kafka's ConfigDef.parseType */

/* Java's Double.toString: shortest digits that read back, plain notation
 * for 1e-3 <= |d| < 1e7 ("0.5", "1.0"), else "1.0E7". */
static void
tc_java_double(double d, char *out, size_t size)
{
    char  buf[40], digits[24];
    int   p, e, nd = 0, i, o = 0;
    char *s;

    if (isnan(d) || isinf(d) || d == 0) {
        snprintf(out, size, "%s", isnan(d) ? "NaN" : isinf(d)
                 ? (d > 0 ? "Infinity" : "-Infinity")
                 : (signbit(d) ? "-0.0" : "0.0"));
        return;
    }
    for (p = 1; p <= 17; p++) {
        snprintf(buf, sizeof(buf), "%.*e", p - 1, d);
        if (strtod(buf, NULL) == d) {
            break;
        }
    }
    for (s = buf; *s != 'e'; s++) {
        if (isdigit((unsigned char) *s)) {
            digits[nd++] = *s;
        }
    }
    digits[nd] = '\0';
    e = atoi(s + 1);
    if (d < 0) {
        buf[o++] = '-';
    }
    if (fabs(d) >= 1e-3 && fabs(d) < 1e7) {
        if (e < 0) {
            buf[o++] = '0';
            buf[o++] = '.';
            for (i = 0; i < -e - 1; i++) {
                buf[o++] = '0';
            }
            for (i = 0; i < nd; i++) {
                buf[o++] = digits[i];
            }
        } else {
            for (i = 0; i <= e; i++) {
                buf[o++] = i < nd ? digits[i] : '0';
            }
            buf[o++] = '.';
            if (nd <= e + 1) {
                buf[o++] = '0';
            }
            for (i = e + 1; i < nd; i++) {
                buf[o++] = digits[i];
            }
        }
        buf[o] = '\0';
    } else {
        snprintf(buf + o, sizeof(buf) - (size_t) o, "%c.%sE%d", digits[0],
                 nd > 1 ? digits + 1 : "0", e);
    }
    snprintf(out, size, "%s", buf);
}

/* A copy of s without Java's trim() characters around it. */
static char *
tc_trim(samsa_arena_t *arena, const char *s)
{
    size_t  n = strlen(s);

    samsa_config_trim_span(&s, &n, SAMSA_CONFIG_TRIM_JAVA);
    return samsa_arena_strndup(arena, s, n);
}

static samsa_err_t tc_invalid(char *errstr, size_t errstr_size,
                              const char *key, const char *value,
                              const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static samsa_err_t
tc_invalid(char *errstr, size_t errstr_size, const char *key,
           const char *value, const char *fmt, ...)
{
    va_list  ap;

    snprintf(errstr, errstr_size, "Invalid value %s for configuration %s: ",
             value, key);
    va_start(ap, fmt);
    samsa_errstr_vappend(errstr, errstr_size, fmt, ap);
    va_end(ap);
    return SAMSA_ERR_INVALID_CONFIG;
}

static samsa_err_t
tc_check_list(const samsa_config_def_t *def, const char *trimmed,
              samsa_arena_t *arena, const char **canon, char *errstr,
              size_t errstr_size)
{
    char                 why[256], names[256];
    samsa_config_list_t  it;
    const char          *span;
    char                *item, *out = samsa_arena_alloc(arena,
                                                        strlen(trimmed) + 1);
    size_t               len, o = 0;

    out[0] = '\0';
    samsa_config_list_init(&it, trimmed);
    while (samsa_config_list_next(&it, &span, &len)) {
        samsa_config_trim_span(&span, &len, SAMSA_CONFIG_TRIM_JAVA);
        item = samsa_arena_strndup(arena, span, len);
        if (def->check == SAMSA_CONFIG_CHECK_ENUM
            && !samsa_config_in(def->names, item)) {
            samsa_config_join(def->names, names, sizeof(names));
            return tc_invalid(errstr, errstr_size, def->name, item,
                              "String must be one of: %s", names);
        }
        o += (size_t) sprintf(out + o, "%s%s", o > 0 ? "," : "", item);
    }
    if (def->check == SAMSA_CONFIG_CHECK_FN
        && !def->fn(trimmed, 0, why, sizeof(why))) {
        return tc_invalid(errstr, errstr_size, def->name, trimmed, "%s", why);
    }
    *canon = out;
    return SAMSA_ERR_NONE;
}

static samsa_err_t
tc_check_number(const samsa_config_def_t *def, const char *value,
                const char *trimmed, samsa_arena_t *arena,
                const char **canon, char *errstr, size_t errstr_size)
{
    char     why[256], num[40];
    int64_t  v;
    bool     is_int = def->type == SAMSA_CONFIG_INT;

    if (samsa_config_parse_i64(trimmed, is_int ? INT32_MIN : INT64_MIN,
                               is_int ? INT32_MAX : INT64_MAX, &v) != NULL) {
        return tc_invalid(errstr, errstr_size, def->name, value,
                          "Not a number of type %s", is_int ? "INT" : "LONG");
    }
    snprintf(num, sizeof(num), "%" PRId64, v);
    if (def->check == SAMSA_CONFIG_CHECK_RANGE && v < def->min) {
        return tc_invalid(errstr, errstr_size, def->name, num,
                          "Value must be at least %" PRId64, def->min);
    }
    if (def->check == SAMSA_CONFIG_CHECK_RANGE && v > def->max) {
        return tc_invalid(errstr, errstr_size, def->name, num,
                          "Value must be no more than %" PRId64, def->max);
    }
    if (def->check == SAMSA_CONFIG_CHECK_FN
        && !def->fn(trimmed, v, why, sizeof(why))) {
        return tc_invalid(errstr, errstr_size, def->name, num, "%s", why);
    }
    *canon = samsa_arena_strndup(arena, num, strlen(num));
    return SAMSA_ERR_NONE;
}

static samsa_err_t
tc_check_double(const samsa_config_def_t *def, const char *value,
                const char *trimmed, samsa_arena_t *arena,
                const char **canon, char *errstr, size_t errstr_size)
{
    char    num[40];
    double  d;

    if (samsa_config_parse_double(trimmed, &d) != NULL) {
        return tc_invalid(errstr, errstr_size, def->name, value,
                          "Not a number of type DOUBLE");
    }
    tc_java_double(d, num, sizeof(num));
    if (def->check == SAMSA_CONFIG_CHECK_RANGE && !(d >= def->dmin)) {
        /* NaN too: Kafka's Range lets it through; nothing can use it */
        return tc_invalid(errstr, errstr_size, def->name, num,
                          "Value must be at least %g", def->dmin);
    }
    if (def->check == SAMSA_CONFIG_CHECK_RANGE && d > def->dmax) {
        return tc_invalid(errstr, errstr_size, def->name, num,
                          "Value must be no more than %g", def->dmax);
    }
    *canon = samsa_arena_strndup(arena, num, strlen(num));
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_topic_config_check(const char *key, const char *value,
                         samsa_arena_t *arena, const char **canon,
                         char *errstr, size_t errstr_size)
{
    const samsa_config_def_t        *def = samsa_topic_config_find(key);
    samsa_arena_t                    local = SAMSA_ARENA_INIT;
    samsa_arena_t                   *a = arena != NULL ? arena : &local;
    const char                      *out = NULL;
    char                            *trimmed;
    char                             names[256];
    samsa_err_t                      err = SAMSA_ERR_NONE;
    bool                             flag = false;

    if (def == NULL) {
        snprintf(errstr, errstr_size, "Unknown topic config name: %s", key);
        return SAMSA_ERR_INVALID_CONFIG;
    }
    trimmed = tc_trim(a, value);
    switch (def->type) {
    case SAMSA_CONFIG_INT:
    case SAMSA_CONFIG_LONG:
        err = tc_check_number(def, value, trimmed, a, &out, errstr,
                              errstr_size);
        break;
    case SAMSA_CONFIG_DOUBLE:
        err = tc_check_double(def, value, trimmed, a, &out, errstr,
                              errstr_size);
        break;
    case SAMSA_CONFIG_BOOL:
        if (!samsa_config_parse_bool(trimmed, &flag)) {
            err = tc_invalid(errstr, errstr_size, key, value,
                             "Expected value to be either true or false");
        }
        out = flag ? "true" : "false";
        break;
    case SAMSA_CONFIG_LIST:
        err = tc_check_list(def, trimmed, a, &out, errstr, errstr_size);
        break;
    case SAMSA_CONFIG_STRING:
    case SAMSA_CONFIG_PASSWORD:
        if (def->check == SAMSA_CONFIG_CHECK_ENUM
            && !samsa_config_in(def->names, trimmed)) {
            samsa_config_join(def->names, names, sizeof(names));
            err = tc_invalid(errstr, errstr_size, key, trimmed,
                             "String must be one of: %s", names);
        }
        out = trimmed;
        break;
    }
    if (canon != NULL) {
        *canon = err == SAMSA_ERR_NONE && arena != NULL ? out : NULL;
    }
    samsa_arena_fini(&local);
    return err;
}

/* ---- broker-level values */

/* The value of broker key name in one layer, or NULL. */
static const char *
tc_layer(const samsa_image_config_t *cfgs, size_t n, const char *name)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        if (strcmp(cfgs[i].name, name) == 0) {
            return cfgs[i].value;
        }
    }
    return NULL;
}

/* The text of broker key name as set in server.properties or --override
 * (explicit) or as its default (!explicit); NULL if there is none or the
 * key is unknown to the broker's table. */
static const char *
tc_static(const samsa_config_t *cfg, const char *name, bool explicit,
          samsa_arena_t *arena)
{
    size_t                     i = samsa_config_defs_index(name);
    const samsa_config_def_t  *def;
    char                       buf[48];
    bool                       from_default;

    if (i == samsa_config_ndefs) {
        return NULL;
    }
    def = &samsa_config_defs[i];
    from_default = strcmp(samsa_config_source(cfg, name), "default") == 0;
    if (!explicit) {
        return def->dflt;
    }
    if (from_default || !samsa_config_is_set(cfg, name)) {
        return NULL;
    }
    switch (def->type) {
    case SAMSA_CONFIG_INT:
        snprintf(buf, sizeof(buf), "%" PRId32, samsa_config_int(cfg, name));
        break;
    case SAMSA_CONFIG_LONG:
        snprintf(buf, sizeof(buf), "%" PRId64, samsa_config_long(cfg, name));
        break;
    case SAMSA_CONFIG_DOUBLE:
        tc_java_double(samsa_config_double(cfg, name), buf, sizeof(buf));
        break;
    case SAMSA_CONFIG_BOOL:
        return samsa_config_bool(cfg, name) ? "true" : "false";
    default:
        return samsa_config_str(cfg, name);
    }
    return samsa_arena_strndup(arena, buf, strlen(buf));
}

/* The layers of broker values, most specific first. */
typedef struct tc_layers {
    const samsa_image_config_t  *node;
    size_t                       nnode;
    const samsa_image_config_t  *cluster;
    size_t                       ncluster;
} tc_layers_t;

static void
tc_layers_init(tc_layers_t *l, const samsa_config_t *cfg,
               const samsa_image_t *img)
{
    char  id[16];

    memset(l, 0, sizeof(*l));
    if (img == NULL) {
        return;
    }
    snprintf(id, sizeof(id), "%" PRId32, cfg->node_id);
    l->node = samsa_image_resource_configs(img, SAMSA_CONFIG_RESOURCE_BROKER,
                                           id, &l->nnode);
    l->cluster = samsa_image_resource_configs(
        img, SAMSA_CONFIG_RESOURCE_BROKER, "", &l->ncluster);
}

/* The value of one broker synonym across the layers, or NULL. */
static const char *
tc_broker_value(const samsa_config_t *cfg, const tc_layers_t *l,
                const char *name, samsa_arena_t *arena)
{
    const char  *v;

    if ((v = tc_layer(l->node, l->nnode, name)) != NULL
        || (v = tc_layer(l->cluster, l->ncluster, name)) != NULL
        || (v = tc_static(cfg, name, true, arena)) != NULL) {
        return v;
    }
    return tc_static(cfg, name, false, arena);
}

/* The broker synonym's value converted to the topic key's type and unit
 * (canonical text), or NULL if it does not parse. */
static const char *
tc_scaled(const samsa_config_def_t *def,
          const samsa_config_synonym_t *syn, const char *text,
          samsa_arena_t *arena)
{
    char         buf[40], err[256];
    const char  *canon;
    int64_t      v;

    if (samsa_topic_config_check(def->name, text, arena, &canon, err,
                                 sizeof(err)) == SAMSA_ERR_NONE
        && syn->scale == 1) {
        return canon;
    }
    if (syn->scale == 1
        || samsa_config_parse_i64(tc_trim(arena, text), INT64_MIN, INT64_MAX,
                                  &v) != NULL) {
        return NULL;
    }
    v = v > INT64_MAX / syn->scale ? INT64_MAX
        : v < INT64_MIN / syn->scale ? INT64_MIN : v * syn->scale;
    if (strcmp(def->name, "retention.ms") == 0 && v < 0) {
        v = -1;                         /* KafkaConfig.logRetentionTimeMillis */
    }
    snprintf(buf, sizeof(buf), "%" PRId64, v);
    return samsa_arena_strndup(arena, buf, strlen(buf));
}

static void
tc_add_synonym(samsa_topic_config_entry_t *out, const char *name,
               const char *value, samsa_config_source_t source)
{
    samsa_topic_config_source_entry_t  *s;

    if (value == NULL) {
        return;
    }
    samsa_assert(out->nsynonyms < sizeof(out->synonyms)
                                  / sizeof(out->synonyms[0]));
    s = &out->synonyms[out->nsynonyms++];
    s->name = name;
    s->value = value;
    s->source = source;
}

/* Kafka's configSynonyms(): by source, then by synonym; then drop the
 * entries before the first one named after the first broker synonym. */
static void
tc_broker_synonyms(const samsa_config_t *cfg, const tc_layers_t *l,
                   const samsa_config_def_t *def, samsa_arena_t *arena,
                   samsa_topic_config_entry_t *out)
{
    const samsa_config_synonym_t            *syn = def->synonyms;
    size_t                                   first = out->nsynonyms, i, k;
    int                                      src;

    for (src = 0; src < 4; src++) {
        for (i = 0; i < SAMSA_CONFIG_SYNONYMS_MAX && syn[i].name; i++) {
            const char  *n = syn[i].name;

            switch (src) {
            case 0:
                tc_add_synonym(out, n, tc_layer(l->node, l->nnode, n),
                               SAMSA_CONFIG_SOURCE_DYNAMIC_BROKER_CONFIG);
                break;
            case 1:
                tc_add_synonym(
                    out, n, tc_layer(l->cluster, l->ncluster, n),
                    SAMSA_CONFIG_SOURCE_DYNAMIC_DEFAULT_BROKER_CONFIG);
                break;
            case 2:
                tc_add_synonym(out, n, tc_static(cfg, n, true, arena),
                               SAMSA_CONFIG_SOURCE_STATIC_BROKER_CONFIG);
                break;
            default:
                tc_add_synonym(out, n, samsa_config_defs_index(n)
                               == samsa_config_ndefs && i == 0 ? def->dflt
                               : tc_static(cfg, n, false, arena),
                               SAMSA_CONFIG_SOURCE_DEFAULT_CONFIG);
                break;
            }
        }
    }
    for (k = first; k < out->nsynonyms
                    && strcmp(out->synonyms[k].name, syn[0].name) != 0; k++) {
    }
    memmove(&out->synonyms[first], &out->synonyms[k],
            (out->nsynonyms - k) * sizeof(out->synonyms[0]));
    out->nsynonyms -= k - first;
}

samsa_err_t
samsa_topic_config_resolve(const samsa_config_t *broker_cfg,
                           const samsa_image_t *img,
                           const samsa_image_config_t *overrides, size_t n,
                           const char *key, samsa_arena_t *arena,
                           samsa_topic_config_entry_t *out)
{
    const samsa_config_def_t        *def = samsa_topic_config_find(key);
    tc_layers_t                      l;
    const char                      *ov, *canon = NULL, *v;
    char                             err[256];
    size_t                           i;

    memset(out, 0, sizeof(*out));
    if (def == NULL) {
        return SAMSA_ERR__NOENT;
    }
    out->def = def;
    tc_layers_init(&l, broker_cfg, img);
    ov = tc_layer(overrides, n, key);
    if (ov != NULL
        && samsa_topic_config_check(key, ov, arena, &canon, err, sizeof(err))
           != SAMSA_ERR_NONE) {
        samsa_warn("ignoring invalid override of %s: %s", key, err);
        canon = NULL;
    }
    tc_add_synonym(out, key, canon, SAMSA_CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG);
    out->value = canon;
    for (i = 0; out->value == NULL && i < SAMSA_CONFIG_SYNONYMS_MAX
                && def->synonyms[i].name != NULL; i++) {
        v = tc_broker_value(broker_cfg, &l, def->synonyms[i].name, arena);
        if (v != NULL) {
            out->value = tc_scaled(def, &def->synonyms[i], v, arena);
        }
    }
    if (out->value == NULL) {
        out->value = def->dflt;
    }
    if (def->synonyms[0].name != NULL) {
        tc_broker_synonyms(broker_cfg, &l, def, arena, out);
    }
    out->source = out->nsynonyms > 0 ? out->synonyms[0].source
                                     : SAMSA_CONFIG_SOURCE_DEFAULT_CONFIG;
    return SAMSA_ERR_NONE;
}

/* Resolve key (of one of the types given) into an arena; asserts. */
static const char *
tc_value(const samsa_config_t *cfg, const samsa_image_t *img,
         const samsa_image_config_t *overrides, size_t n, const char *key,
         samsa_arena_t *arena, samsa_config_type_t t1, samsa_config_type_t t2)
{
    samsa_topic_config_entry_t  e;
    samsa_err_t                 err;

    err = samsa_topic_config_resolve(cfg, img, overrides, n, key, arena, &e);
    samsa_assert(err == SAMSA_ERR_NONE);
    samsa_assert(e.def->type == t1 || e.def->type == t2);
    return e.value;
}

int64_t
samsa_topic_config_long(const samsa_config_t *cfg, const samsa_image_t *img,
                        const samsa_image_config_t *overrides, size_t n,
                        const char *key)
{
    samsa_arena_t  arena = SAMSA_ARENA_INIT;
    int64_t        v = 0;

    if (samsa_config_parse_i64(tc_value(cfg, img, overrides, n, key, &arena,
                                        SAMSA_CONFIG_INT, SAMSA_CONFIG_LONG),
                               INT64_MIN, INT64_MAX, &v) != NULL) {
        samsa_assert(!"unparsable topic config value");
    }
    samsa_arena_fini(&arena);
    return v;
}

bool
samsa_topic_config_bool(const samsa_config_t *cfg, const samsa_image_t *img,
                        const samsa_image_config_t *overrides, size_t n,
                        const char *key)
{
    samsa_arena_t  arena = SAMSA_ARENA_INIT;
    bool           v;

    v = strcmp(tc_value(cfg, img, overrides, n, key, &arena,
                        SAMSA_CONFIG_BOOL, SAMSA_CONFIG_BOOL), "true") == 0;
    samsa_arena_fini(&arena);
    return v;
}

double
samsa_topic_config_double(const samsa_config_t *cfg, const samsa_image_t *img,
                          const samsa_image_config_t *overrides, size_t n,
                          const char *key)
{
    samsa_arena_t  arena = SAMSA_ARENA_INIT;
    double         v;

    v = strtod(tc_value(cfg, img, overrides, n, key, &arena,
                        SAMSA_CONFIG_DOUBLE, SAMSA_CONFIG_DOUBLE), NULL);
    samsa_arena_fini(&arena);
    return v;
}

void
samsa_topic_config_to_log(const samsa_config_t *cfg, const samsa_image_t *img,
                          const samsa_image_config_t *ov, size_t n,
                          samsa_log_config_t *out)
{
    samsa_arena_t  arena = SAMSA_ARENA_INIT;
    const char    *v;

    samsa_log_config_defaults(out);
    out->segment_bytes = (int32_t) samsa_topic_config_long(cfg, img, ov, n,
                                                           "segment.bytes");
    out->segment_ms = samsa_topic_config_long(cfg, img, ov, n, "segment.ms");
    out->segment_jitter_ms = samsa_topic_config_long(cfg, img, ov, n,
                                                     "segment.jitter.ms");
    out->segment_index_bytes = (int32_t) samsa_topic_config_long(
        cfg, img, ov, n, "segment.index.bytes");
    out->index_interval_bytes = (int32_t) samsa_topic_config_long(
        cfg, img, ov, n, "index.interval.bytes");
    out->retention_ms = samsa_topic_config_long(cfg, img, ov, n,
                                                "retention.ms");
    out->retention_bytes = samsa_topic_config_long(cfg, img, ov, n,
                                                   "retention.bytes");
    out->flush_messages = samsa_topic_config_long(cfg, img, ov, n,
                                                  "flush.messages");
    out->flush_ms = samsa_topic_config_long(cfg, img, ov, n, "flush.ms");
    out->timestamp_before_max_ms = samsa_topic_config_long(
        cfg, img, ov, n, "message.timestamp.before.max.ms");
    out->timestamp_after_max_ms = samsa_topic_config_long(
        cfg, img, ov, n, "message.timestamp.after.max.ms");
    out->max_message_bytes = (int32_t) samsa_topic_config_long(
        cfg, img, ov, n, "max.message.bytes");
    out->file_delete_delay_ms = samsa_topic_config_long(
        cfg, img, ov, n, "file.delete.delay.ms");
    out->min_cleanable_ratio = samsa_topic_config_double(
        cfg, img, ov, n, "min.cleanable.dirty.ratio");
    out->delete_retention_ms = samsa_topic_config_long(
        cfg, img, ov, n, "delete.retention.ms");
    out->min_compaction_lag_ms = samsa_topic_config_long(
        cfg, img, ov, n, "min.compaction.lag.ms");
    out->max_compaction_lag_ms = samsa_topic_config_long(
        cfg, img, ov, n, "max.compaction.lag.ms");
    if (cfg != NULL) {              /* broker-wide, not topic keys */
        out->producer_id_expiration_ms =
            samsa_config_int(cfg, "producer.id.expiration.ms");
        out->producer_id_expiration_check_interval_ms =
            samsa_config_int(cfg, "producer.id.expiration.check.interval.ms");
    }
    v = tc_value(cfg, img, ov, n, "message.timestamp.type", &arena,
                 SAMSA_CONFIG_STRING, SAMSA_CONFIG_STRING);
    out->log_append_time = strcmp(v, "LogAppendTime") == 0;
    v = tc_value(cfg, img, ov, n, "cleanup.policy", &arena,
                 SAMSA_CONFIG_LIST, SAMSA_CONFIG_LIST);
    out->cleanup_policy = (strstr(v, "delete") != NULL
                           ? SAMSA_LOG_CLEANUP_DELETE : 0)
                          | (strstr(v, "compact") != NULL
                             ? SAMSA_LOG_CLEANUP_COMPACT : 0);
    samsa_arena_fini(&arena);
}

/* ---- validating a set of overrides */

static samsa_err_t
tc_validate_nulls(const samsa_image_config_t *cfgs, size_t n, char *errstr,
                  size_t errstr_size)
{
    size_t  i, o = 0;
    bool    any = false;

    for (i = 0; i < n; i++) {
        if (cfgs[i].value == NULL) {
            if (!any) {
                o = (size_t) snprintf(errstr, errstr_size, "Null value not "
                                      "supported for topic configs: ");
            }
            if (o < errstr_size) {
                o += (size_t) snprintf(errstr + o, errstr_size - o, "%s%s",
                                       any ? "," : "", cfgs[i].name);
            }
            any = true;
        }
    }
    return any ? SAMSA_ERR_INVALID_CONFIG : SAMSA_ERR_NONE;
}

samsa_err_t
samsa_topic_config_validate(const samsa_config_t *broker_cfg,
                            const samsa_image_t *img,
                            const samsa_image_config_t *cfgs, size_t n,
                            char *errstr, size_t errstr_size)
{
    samsa_err_t  err;
    int64_t      min_lag, max_lag;
    size_t       i;

    err = tc_validate_nulls(cfgs, n, errstr, errstr_size);
    for (i = 0; i < n && err == SAMSA_ERR_NONE; i++) {
        if (samsa_topic_config_find(cfgs[i].name) == NULL) {
            snprintf(errstr, errstr_size, "Unknown topic config name: %s",
                     cfgs[i].name);
            err = SAMSA_ERR_INVALID_CONFIG;
        }
    }
    for (i = 0; i < n && err == SAMSA_ERR_NONE; i++) {
        err = samsa_topic_config_check(cfgs[i].name, cfgs[i].value, NULL,
                                       NULL, errstr, errstr_size);
    }
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    min_lag = samsa_topic_config_long(broker_cfg, img, cfgs, n,
                                      "min.compaction.lag.ms");
    max_lag = samsa_topic_config_long(broker_cfg, img, cfgs, n,
                                      "max.compaction.lag.ms");
    if (min_lag > max_lag) {
        snprintf(errstr, errstr_size, "conflict topic config setting "
                 "min.compaction.lag.ms (%" PRId64 ") > max.compaction.lag.ms "
                 "(%" PRId64 ")", min_lag, max_lag);
        return SAMSA_ERR_INVALID_CONFIG;
    }
    if (samsa_topic_config_bool(broker_cfg, img, cfgs, n,
                                "remote.storage.enable")) {
        snprintf(errstr, errstr_size, "Tiered Storage functionality is "
                 "disabled in the broker. Topic cannot be configured with "
                 "remote log storage.");
        return SAMSA_ERR_INVALID_CONFIG;
    }
    return SAMSA_ERR_NONE;
}
