/*
 * client/conf.c - samsa_conf_t (samsa/conf.h): the Java producer's and
 * consumer's property names, their defaults and per-value checks, in one
 * table.  The typed,
 * cross-checked form the producer runs on is built by pconf.c.
 * Threads: a samsa_conf_t has one owner at a time; the table is const.
 */
#include <samsa/conf.h>

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client/conf_defs.h"
#include "config/config_parse.h"
#include "proto/compress.h"
#include "util/alloc.h"
#include "util/props.h"
#include "util/diag.h"

struct samsa_conf {
    char   **keys;
    char   **values;
    size_t   n;
    size_t   cap;
};

/* Kafka's producer defaults (ProducerConfig, Kafka 4.0: linger.ms 5). */
const samsa_conf_def_t  samsa_conf_defs[] = {
    { "bootstrap.servers", SAMSA_CONF_LIST, "", 0, 0 },
    { "client.id", SAMSA_CONF_STRING, "", 0, 0 },
    { "acks", SAMSA_CONF_ACKS, "all", 0, 0 },
    { "linger.ms", SAMSA_CONF_LONG, "5", 0, INT32_MAX },
    { "batch.size", SAMSA_CONF_INT, "16384", 0, INT32_MAX },
    { "buffer.memory", SAMSA_CONF_LONG, "33554432", 0, INT64_MAX },
    { "max.block.ms", SAMSA_CONF_LONG, "60000", 0, INT64_MAX },
    { "compression.type", SAMSA_CONF_CODEC, "none", 0, 0 },
    { "compression.gzip.level", SAMSA_CONF_LEVEL, "-1", SAMSA_CODEC_GZIP, 0 },
    { "compression.lz4.level", SAMSA_CONF_LEVEL, "9", SAMSA_CODEC_LZ4, 0 },
    { "compression.zstd.level", SAMSA_CONF_LEVEL, "3", SAMSA_CODEC_ZSTD, 0 },
    { "enable.idempotence", SAMSA_CONF_BOOL, "true", 0, 0 },
    { "max.in.flight.requests.per.connection", SAMSA_CONF_INT, "5", 1,
      INT32_MAX },
    { "retries", SAMSA_CONF_INT, "2147483647", 0, INT32_MAX },
    { "retry.backoff.ms", SAMSA_CONF_LONG, "100", 0, INT64_MAX },
    { "retry.backoff.max.ms", SAMSA_CONF_LONG, "1000", 0, INT64_MAX },
    { "delivery.timeout.ms", SAMSA_CONF_INT, "120000", 0, INT32_MAX },
    { "request.timeout.ms", SAMSA_CONF_INT, "30000", 0, INT32_MAX },
    /* AdminClient (and consumer): a call's overall time limit */
    { "default.api.timeout.ms", SAMSA_CONF_INT, "60000", 0, INT32_MAX },
    { "max.request.size", SAMSA_CONF_INT, "1048576", 0, INT32_MAX },
    { "partitioner.adaptive.partitioning.enable", SAMSA_CONF_BOOL, "true",
      0, 0 },
    { "partitioner.availability.timeout.ms", SAMSA_CONF_LONG, "0", 0,
      INT64_MAX },
    { "partitioner.ignore.keys", SAMSA_CONF_BOOL, "false", 0, 0 },
    { "metadata.max.age.ms", SAMSA_CONF_LONG, "300000", 0, INT64_MAX },
    { "metadata.max.idle.ms", SAMSA_CONF_LONG, "300000", 5000, INT64_MAX },
    { "transactional.id", SAMSA_CONF_STRING, NULL, 0, 0 },
    { "transaction.timeout.ms", SAMSA_CONF_INT, "60000", 0, INT32_MAX },
    { "reconnect.backoff.ms", SAMSA_CONF_LONG, "50", 0, INT64_MAX },
    { "reconnect.backoff.max.ms", SAMSA_CONF_LONG, "1000", 0, INT64_MAX },
    { "socket.connection.setup.timeout.ms", SAMSA_CONF_LONG, "10000", 0,
      INT64_MAX },
    { "connections.max.idle.ms", SAMSA_CONF_LONG, "540000", -1,
      INT64_MAX },
    { "send.buffer.bytes", SAMSA_CONF_INT, "131072", -1, INT32_MAX },
    { "receive.buffer.bytes", SAMSA_CONF_INT, "32768", -1, INT32_MAX },
    { "security.protocol", SAMSA_CONF_PLAINTEXT, "PLAINTEXT", 0, 0 },
    /* Consumer keys (ConsumerConfig, Kafka 4.0 defaults). */
    { "group.id", SAMSA_CONF_STRING, NULL, 0, 0 },
    { "group.instance.id", SAMSA_CONF_STRING, NULL, 0, 0 },
    { "group.protocol", SAMSA_CONF_GROUP_PROTOCOL, "classic", 0, 0 },
    { "group.remote.assignor", SAMSA_CONF_STRING, NULL, 0, 0 },
    { "session.timeout.ms", SAMSA_CONF_INT, "45000", 1, INT32_MAX },
    { "heartbeat.interval.ms", SAMSA_CONF_INT, "3000", 1, INT32_MAX },
    { "max.poll.interval.ms", SAMSA_CONF_INT, "300000", 1, INT32_MAX },
    { "auto.offset.reset", SAMSA_CONF_OFFSET_RESET, "latest", 0, 0 },
    { "enable.auto.commit", SAMSA_CONF_BOOL, "true", 0, 0 },
    { "auto.commit.interval.ms", SAMSA_CONF_INT, "5000", 0, INT32_MAX },
    { "fetch.min.bytes", SAMSA_CONF_INT, "1", 0, INT32_MAX },
    { "fetch.max.wait.ms", SAMSA_CONF_INT, "500", 0, INT32_MAX },
    { "fetch.max.bytes", SAMSA_CONF_INT, "52428800", 0, INT32_MAX },
    { "max.partition.fetch.bytes", SAMSA_CONF_INT, "1048576", 0,
      INT32_MAX },
    { "max.poll.records", SAMSA_CONF_INT, "500", 1, INT32_MAX },
    { "isolation.level", SAMSA_CONF_ISOLATION, "read_uncommitted", 0, 0 },
    { "check.crcs", SAMSA_CONF_BOOL, "true", 0, 0 },
    { "partition.assignment.strategy", SAMSA_CONF_ASSIGNORS,
      "range,cooperative-sticky", 0, 0 },
    { "exclude.internal.topics", SAMSA_CONF_BOOL, "true", 0, 0 },
    { "allow.auto.create.topics", SAMSA_CONF_BOOL, "true", 0, 0 },
    { "client.rack", SAMSA_CONF_STRING, "", 0, 0 },
    { "key.deserializer", SAMSA_CONF_IGNORED, NULL, 0, 0 },
    { "value.deserializer", SAMSA_CONF_IGNORED, NULL, 0, 0 },
    /* Java-only keys: accepted and ignored (bytes in, bytes out). */
    { "key.serializer", SAMSA_CONF_IGNORED, NULL, 0, 0 },
    { "value.serializer", SAMSA_CONF_IGNORED, NULL, 0, 0 },
    { "partitioner.class", SAMSA_CONF_IGNORED, NULL, 0, 0 },
    { "interceptor.classes", SAMSA_CONF_IGNORED, NULL, 0, 0 },
    { "metric.reporters", SAMSA_CONF_IGNORED, NULL, 0, 0 },
    { NULL, SAMSA_CONF_IGNORED, NULL, 0, 0 },
};

const samsa_conf_def_t *
samsa_conf_def_find(const char *key)
{
    const samsa_conf_def_t  *d;

    for (d = samsa_conf_defs; d->name != NULL; d++) {
        if (strcmp(d->name, key) == 0) {
            return d;
        }
    }
    return NULL;
}

bool
samsa_conf_parse_long(const char *s, int64_t *v)
{
    size_t   n;
    char    *t;
    bool     ok;

    while (isspace((unsigned char) *s)) {
        s++;
    }
    n = strlen(s);
    samsa_config_trim_span(&s, &n, SAMSA_CONFIG_TRIM_BLANK);
    t = samsa_strndup(s, n);
    ok = samsa_config_parse_i64(t, INT64_MIN, INT64_MAX, v) == NULL;
    samsa_free(t);
    return ok;
}

bool
samsa_conf_parse_bool(const char *s, bool *v)
{
    return samsa_config_parse_bool(s, v);
}

/* The assignor named by one partition.assignment.strategy item (its
 * short name or Java's class name), or NULL. */
const char *
samsa_conf_assignor_name(const char *item, size_t len)
{
    static const char *const  names[][2] = {
        { "range", "org.apache.kafka.clients.consumer.RangeAssignor" },
        { "roundrobin",
          "org.apache.kafka.clients.consumer.RoundRobinAssignor" },
        { "cooperative-sticky",
          "org.apache.kafka.clients.consumer.CooperativeStickyAssignor" },
    };
    size_t                    i, j;

    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        for (j = 0; j < 2; j++) {
            if (strlen(names[i][j]) == len
                && strncmp(names[i][j], item, len) == 0) {
                return names[i][0];
            }
        }
    }
    return NULL;
}

bool
samsa_conf_assignors_valid(const char *list)
{
    samsa_config_list_t  it;
    const char          *p;
    size_t               n, count = 0;

    samsa_config_list_init(&it, list);
    while (samsa_config_list_next(&it, &p, &n)) {
        samsa_config_trim_span(&p, &n, SAMSA_CONFIG_TRIM_BLANK);
        if (n > 0) {
            if (samsa_conf_assignor_name(p, n) == NULL) {
                return false;
            }
            count++;
        }
    }
    return count > 0;
}

/* The enum keys' names (Kafka's ConfigDef.ValidString lists). */
static const char *const  conf_acks[] = { "all", "-1", "0", "1", NULL };
static const char *const  conf_offset_reset[] = { "latest", "earliest",
                                                   "none", NULL };
static const char *const  conf_isolation[] = { "read_uncommitted",
                                                "read_committed", NULL };
static const char *const  conf_group_protocol[] = { "classic", "consumer",
                                                     NULL };
static const char *const  conf_plaintext[] = { "PLAINTEXT", NULL };

/* Check value against d; errstr names the key. */
static samsa_err_t
conf_check(const samsa_conf_def_t *d, const char *value, char *errstr,
           size_t errstr_size)
{
    const char     *why = NULL;
    int64_t         v;
    bool            b;
    samsa_codec_t   c;

    switch (d->type) {
    case SAMSA_CONF_INT:
    case SAMSA_CONF_LONG:
        if (!samsa_conf_parse_long(value, &v)) {
            why = "not a number";
        } else if (v < d->min || v > d->max) {
            samsa_diag_errstr(errstr, errstr_size,
                "invalid value '%s' for configuration '%s': must be "
                "between %lld and %lld", value, d->name,
                (long long) d->min, (long long) d->max);
            return SAMSA_ERR__CONFIG;
        }
        break;
    case SAMSA_CONF_BOOL:
        if (!samsa_conf_parse_bool(value, &b)) {
            why = "expected true or false";
        }
        break;
    case SAMSA_CONF_ACKS:
        if (!samsa_config_in(conf_acks, value)) {
            why = "expected all, -1, 0 or 1";
        }
        break;
    case SAMSA_CONF_CODEC:
        if (!samsa_codec_parse(value, &c)) {
            why = "expected none, gzip, snappy, lz4 or zstd";
        }
        break;
    case SAMSA_CONF_LEVEL:
        if (!samsa_conf_parse_long(value, &v) || v < INT32_MIN
            || v > INT32_MAX) {
            why = "not a number";
        } else if (!samsa_codec_level_valid((samsa_codec_t) d->min,
                                            (int) v)) {
            why = "not a valid level for this codec";
        }
        break;
    case SAMSA_CONF_OFFSET_RESET:
        if (!samsa_config_in(conf_offset_reset, value)) {
            why = "expected latest, earliest or none";
        }
        break;
    case SAMSA_CONF_ISOLATION:
        if (!samsa_config_in(conf_isolation, value)) {
            why = "expected read_uncommitted or read_committed";
        }
        break;
    case SAMSA_CONF_GROUP_PROTOCOL:
        if (!samsa_config_in_case(conf_group_protocol, value)) {
            why = "expected classic or consumer";
        }
        break;
    case SAMSA_CONF_ASSIGNORS:
        if (!samsa_conf_assignors_valid(value)) {
            why = "expected a list of range, roundrobin, "
                  "cooperative-sticky (or their Java class names)";
        }
        break;
    case SAMSA_CONF_PLAINTEXT:
        if (!samsa_config_in(conf_plaintext, value)) {
            why = "only PLAINTEXT is supported";
        }
        break;
    default:
        break;
    }
    if (why != NULL) {
        samsa_diag_errstr(errstr, errstr_size,
            "invalid value '%s' for configuration '%s': %s", value,
            d->name, why);
        return SAMSA_ERR__CONFIG;
    }
    return SAMSA_ERR_NONE;
}

samsa_conf_t *
samsa_conf_new(void)
{
    return samsa_calloc(1, sizeof(samsa_conf_t));
}

samsa_conf_t *
samsa_conf_dup(const samsa_conf_t *conf)
{
    samsa_conf_t  *c = samsa_conf_new();
    size_t         i;

    c->cap = conf->n;
    c->n = conf->n;
    c->keys = samsa_calloc(c->cap + 1, sizeof(char *));
    c->values = samsa_calloc(c->cap + 1, sizeof(char *));
    for (i = 0; i < conf->n; i++) {
        c->keys[i] = samsa_strdup(conf->keys[i]);
        c->values[i] = samsa_strdup(conf->values[i]);
    }
    return c;
}

void
samsa_conf_free(samsa_conf_t *conf)
{
    size_t  i;

    if (conf == NULL) {
        return;
    }
    for (i = 0; i < conf->n; i++) {
        samsa_free(conf->keys[i]);
        samsa_free(conf->values[i]);
    }
    samsa_free(conf->keys);
    samsa_free(conf->values);
    samsa_free(conf);
}

samsa_err_t
samsa_conf_set(samsa_conf_t *conf, const char *key, const char *value,
               char *errstr, size_t errstr_size)
{
    const samsa_conf_def_t  *d;
    samsa_err_t              err;
    size_t                   i;

    if (key == NULL || value == NULL) {
        samsa_diag_errstr(errstr, errstr_size,
            "configuration key and value must "
            "not be NULL");
        return SAMSA_ERR__INVALID_ARG;
    }
    d = samsa_conf_def_find(key);
    if (d == NULL) {
        samsa_diag_errstr(errstr, errstr_size,
            "unknown configuration '%s'", key);
        return SAMSA_ERR__NOENT;
    }
    err = conf_check(d, value, errstr, errstr_size);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    for (i = 0; i < conf->n; i++) {
        if (strcmp(conf->keys[i], key) == 0) {
            samsa_free(conf->values[i]);
            conf->values[i] = samsa_strdup(value);
            return SAMSA_ERR_NONE;
        }
    }
    if (conf->n == conf->cap) {
        conf->cap = conf->cap ? conf->cap * 2 : 16;
        conf->keys = samsa_realloc(conf->keys, conf->cap * sizeof(char *));
        conf->values = samsa_realloc(conf->values,
                                     conf->cap * sizeof(char *));
    }
    conf->keys[conf->n] = samsa_strdup(key);
    conf->values[conf->n++] = samsa_strdup(value);
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_conf_set_kv(samsa_conf_t *conf, const char *kv, char *errstr,
                  size_t errstr_size)
{
    const char  *eq = strchr(kv, '=');
    char        *key;
    samsa_err_t  err;

    if (eq == NULL || eq == kv) {
        samsa_diag_errstr(errstr, errstr_size,
            "expected key=value, got '%s'", kv);
        return SAMSA_ERR__CONFIG;
    }
    key = samsa_strndup(kv, (size_t) (eq - kv));
    err = samsa_conf_set(conf, key, eq + 1, errstr, errstr_size);
    samsa_free(key);
    return err;
}

samsa_err_t
samsa_conf_load_file(samsa_conf_t *conf, const char *path, char *errstr,
                     size_t errstr_size)
{
    samsa_props_t  *props = samsa_props_new();
    samsa_err_t     err;
    char            why[256];
    size_t          i;

    err = samsa_props_load_file(props, path, errstr, errstr_size);
    for (i = 0; err == SAMSA_ERR_NONE && i < samsa_props_count(props); i++) {
        err = samsa_conf_set(conf, samsa_props_key(props, i),
                             samsa_props_value(props, i), why, sizeof(why));
        if (err != SAMSA_ERR_NONE) {
            samsa_diag_errstr(errstr, errstr_size,
                "%s (%s)", why,
                samsa_props_origin(props, i));
        }
    }
    samsa_props_free(props);
    return err;
}

const char *
samsa_conf_get(const samsa_conf_t *conf, const char *key)
{
    size_t  i;

    for (i = 0; i < conf->n; i++) {
        if (strcmp(conf->keys[i], key) == 0) {
            return conf->values[i];
        }
    }
    return NULL;
}

const char *
samsa_conf_default(const char *key)
{
    const samsa_conf_def_t  *d = samsa_conf_def_find(key);

    return d != NULL ? d->dflt : NULL;
}

const char *
samsa_conf_value(const samsa_conf_t *conf, const char *key)
{
    const char  *v = samsa_conf_get(conf, key);

    return v != NULL ? v : samsa_conf_default(key);
}

int64_t
samsa_conf_long(const samsa_conf_t *conf, const char *key)
{
    int64_t  v = 0;

    samsa_assert(samsa_conf_parse_long(samsa_conf_value(conf, key), &v));
    return v;
}

bool
samsa_conf_bool(const samsa_conf_t *conf, const char *key)
{
    bool  v = false;

    samsa_assert(samsa_conf_parse_bool(samsa_conf_value(conf, key), &v));
    return v;
}
