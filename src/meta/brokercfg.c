/*
 * meta/brokercfg.c - see brokercfg.h.
 */
#include "meta/brokercfg.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "meta/topic_config.h"
#include "util/alloc.h"
#include "config/config_defs.h"
#include "config/config_parse.h"

/* The broker keys Samsa reconfigures at run time.  Thread counts are
 * checked by Kafka's DynamicThreadPool rule (num.io.threads) or its copy
 * in DataPlaneAcceptor.validateReconfiguration (num.network.threads,
 * applied to every listener); log defaults (Kafka's DynamicLogConfig) by
 * their type and range, and every topic without an override of its own
 * follows them (broker/broker.c applies them again to each topic); the
 * log cleaner's (Kafka's LogCleaner.ReconfigurableConfigs that Samsa's
 * cleaner uses) by their type and range, log.cleaner.threads also by
 * LogCleaner.validateReconfiguration, and with
 * log.cleaner.dedupe.buffer.size by KafkaConfig's at least 1 MiB per
 * cleaner thread; the connection limits (Kafka's
 * DynamicConnectionQuota) by their type and range, and their
 * listener.name.<listener>. forms (ListenerConnectionQuota) by theirs:
 * more than 0; the TLS key and trust stores (Kafka's
 * SslConfigs.RECONFIGURABLE_CONFIGS) only per broker and with a listener
 * prefix (DynamicBrokerConfig.validateConfigs), the stores themselves
 * checked by the server's hook (samsa_brokercfg_check_t). */
typedef enum brokercfg_kind {
    BROKERCFG_THREADS,
    BROKERCFG_LOG_DEFAULT,
    BROKERCFG_CLEANER,
    BROKERCFG_CLEANER_THREADS,
    BROKERCFG_CONN,
    BROKERCFG_CONN_OVERRIDES,
    BROKERCFG_SSL,
} brokercfg_kind_t;

static const struct {
    const char        *name;
    brokercfg_kind_t   kind;
} brokercfg_dynamic[] = {
    { "num.io.threads", BROKERCFG_THREADS },
    { "num.network.threads", BROKERCFG_THREADS },
    { "log.retention.ms", BROKERCFG_LOG_DEFAULT },
    { "log.retention.minutes", BROKERCFG_LOG_DEFAULT },
    { "log.retention.hours", BROKERCFG_LOG_DEFAULT },
    { "log.retention.bytes", BROKERCFG_LOG_DEFAULT },
    { "log.segment.bytes", BROKERCFG_LOG_DEFAULT },
    { "message.max.bytes", BROKERCFG_LOG_DEFAULT },
    { "log.cleaner.threads", BROKERCFG_CLEANER_THREADS },
    { "log.cleaner.backoff.ms", BROKERCFG_CLEANER },
    { "log.cleaner.dedupe.buffer.size", BROKERCFG_CLEANER },
    { "log.cleaner.io.max.bytes.per.second", BROKERCFG_CLEANER },
    { "max.connections", BROKERCFG_CONN },
    { "max.connections.per.ip", BROKERCFG_CONN },
    { "max.connection.creation.rate", BROKERCFG_CONN },
    { "max.connections.per.ip.overrides", BROKERCFG_CONN_OVERRIDES },
    { "ssl.keystore.type", BROKERCFG_SSL },
    { "ssl.keystore.location", BROKERCFG_SSL },
    { "ssl.keystore.password", BROKERCFG_SSL },
    { "ssl.key.password", BROKERCFG_SSL },
    { "ssl.keystore.certificate.chain", BROKERCFG_SSL },
    { "ssl.keystore.key", BROKERCFG_SSL },
    { "ssl.truststore.type", BROKERCFG_SSL },
    { "ssl.truststore.location", BROKERCFG_SSL },
    { "ssl.truststore.password", BROKERCFG_SSL },
    { "ssl.truststore.certificates", BROKERCFG_SSL },
};

#define BROKERCFG_NDYNAMIC \
    (sizeof(brokercfg_dynamic) / sizeof(brokercfg_dynamic[0]))

static int
brokercfg_dynamic_index(const char *key)
{
    size_t  i;

    for (i = 0; i < BROKERCFG_NDYNAMIC; i++) {
        if (strcmp(brokercfg_dynamic[i].name, key) == 0) {
            return (int) i;
        }
    }
    return -1;
}

/* listener.name.<listener>.<key> of a per-listener key that is dynamic
 * (*base: the key without its prefix). */
static bool
brokercfg_listener_key(const char *key, const char **base)
{
    char    listener[64];
    size_t  def;

    return samsa_config_listener_key(key, listener, sizeof(listener), base,
                                     &def)
           && brokercfg_dynamic_index(*base) >= 0;
}

/* A TLS store key without its listener prefix (Kafka refuses it). */
static bool
brokercfg_ssl_unprefixed(const char *key)
{
    int  i = brokercfg_dynamic_index(key);

    return i >= 0 && brokercfg_dynamic[i].kind == BROKERCFG_SSL;
}

/* listener.name.<l>.<a TLS store key>: per broker only. */
static bool
brokercfg_ssl_listener_key(const char *key)
{
    const char  *base;

    return brokercfg_listener_key(key, &base)
           && brokercfg_dynamic[brokercfg_dynamic_index(base)].kind
                  == BROKERCFG_SSL;
}

bool
samsa_brokercfg_is_dynamic(const char *key)
{
    const char  *base;

    return brokercfg_dynamic_index(key) >= 0
           || brokercfg_listener_key(key, &base);
}

void
samsa_brokercfg_levels(const samsa_image_t *img, int32_t node_id,
                       samsa_brokercfg_levels_t *out)
{
    char  me[16];

    snprintf(me, sizeof(me), "%d", (int) node_id);
    out->node = samsa_image_resource_configs(img, SAMSA_CONFIG_RESOURCE_BROKER,
                                             me, &out->nnode);
    out->dflt = samsa_image_resource_configs(img, SAMSA_CONFIG_RESOURCE_BROKER,
                                             "", &out->ndflt);
}

const char *
samsa_brokercfg_find(const samsa_image_config_t *cfgs, size_t n,
                     const char *key)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        if (strcmp(cfgs[i].name, key) == 0) {
            return cfgs[i].value;
        }
    }
    return NULL;
}

const char *
samsa_brokercfg_value(const samsa_config_t *cfg,
                      const samsa_brokercfg_levels_t *lv, const char *key,
                      int *source)
{
    const char  *v = samsa_brokercfg_find(lv->node, lv->nnode, key);

    if (v != NULL) {
        *source = SAMSA_CONFIG_SOURCE_DYNAMIC_BROKER_CONFIG;
        return v;
    }
    v = samsa_brokercfg_find(lv->dflt, lv->ndflt, key);
    if (v != NULL) {
        *source = SAMSA_CONFIG_SOURCE_DYNAMIC_DEFAULT_BROKER_CONFIG;
        return v;
    }
    *source = strcmp(samsa_config_source(cfg, key), "default") == 0
                  ? SAMSA_CONFIG_SOURCE_DEFAULT_CONFIG
                  : SAMSA_CONFIG_SOURCE_STATIC_BROKER_CONFIG;
    return samsa_config_text(cfg, key);
}

/* key's dynamic value: this node's, else the cluster default's; NULL
 * when neither level sets it. */
static const char *
brokercfg_set_value(const samsa_brokercfg_levels_t *lv, const char *key)
{
    const char  *v = samsa_brokercfg_find(lv->node, lv->nnode, key);

    return v != NULL ? v : samsa_brokercfg_find(lv->dflt, lv->ndflt, key);
}

/* A dynamic value as an integer of [min, max]: what strtoll takes whole
 * (blanks before it, none after). */
static bool
brokercfg_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out)
{
    if (s == NULL) {
        return false;
    }
    while (isspace((unsigned char) *s)) {
        s++;
    }
    return samsa_config_parse_i64(s, min, max, out) == NULL;
}

static bool
brokercfg_parse_int(const char *s, int32_t *out)
{
    int64_t  v;

    if (!brokercfg_parse_i64(s, INT32_MIN, INT32_MAX, &v)) {
        return false;
    }
    *out = (int32_t) v;
    return true;
}

static bool
brokercfg_parse_long(const char *s, int64_t *out)
{
    return brokercfg_parse_i64(s, INT64_MIN, INT64_MAX, out);
}

/* A dynamic value as a double: Java's Double.parseDouble
 * (samsa_config_parse_double). */
static bool
brokercfg_parse_double(const char *s, double *out)
{
    return s != NULL && samsa_config_parse_double(s, out) == NULL;
}

/* The typed values: a dynamic value that parses, else the static
 * configuration's (already checked when it loaded). */
int32_t
samsa_brokercfg_int(const samsa_config_t *cfg,
                    const samsa_brokercfg_levels_t *lv, const char *key)
{
    int32_t  n;

    return brokercfg_parse_int(brokercfg_set_value(lv, key), &n)
               ? n : samsa_config_int(cfg, key);
}

int64_t
samsa_brokercfg_long(const samsa_config_t *cfg,
                     const samsa_brokercfg_levels_t *lv, const char *key)
{
    int64_t  n;

    return brokercfg_parse_long(brokercfg_set_value(lv, key), &n)
               ? n : samsa_config_long(cfg, key);
}

double
samsa_brokercfg_double(const samsa_config_t *cfg,
                       const samsa_brokercfg_levels_t *lv, const char *key)
{
    double  d;

    return brokercfg_parse_double(brokercfg_set_value(lv, key), &d)
               ? d : samsa_config_double(cfg, key);
}

void
samsa_brokercfg_cleaner(const samsa_config_t *cfg,
                        const samsa_brokercfg_levels_t *lv,
                        samsa_cleaner_config_t *out)
{
    out->enable = samsa_config_bool(cfg, "log.cleaner.enable");
    out->threads = samsa_brokercfg_int(cfg, lv, "log.cleaner.threads");
    out->backoff_ms = samsa_brokercfg_long(cfg, lv, "log.cleaner.backoff.ms");
    out->dedupe_buffer_size =
        samsa_brokercfg_long(cfg, lv, "log.cleaner.dedupe.buffer.size");
    out->io_max_bytes_per_second = samsa_brokercfg_double(
        cfg, lv, "log.cleaner.io.max.bytes.per.second");
}

int32_t
samsa_brokercfg_listener_int(const samsa_config_t *cfg,
                             const samsa_brokercfg_levels_t *lv,
                             const char *listener, const char *key,
                             bool *prefixed)
{
    const samsa_listener_value_t  *sv;
    const char                    *v;
    char                           lkey[256], lower[64];
    size_t                         i;
    int32_t                        n;

    for (i = 0; listener[i] != '\0' && i + 1 < sizeof(lower); i++) {
        lower[i] = (char) (listener[i] >= 'A' && listener[i] <= 'Z'
                               ? listener[i] - 'A' + 'a' : listener[i]);
    }
    lower[i] = '\0';
    snprintf(lkey, sizeof(lkey), "listener.name.%s.%s", lower, key);
    v = brokercfg_set_value(lv, lkey);
    *prefixed = true;
    if (v != NULL && brokercfg_parse_int(v, &n)) {
        return n;
    }
    sv = samsa_config_listener_value(cfg, listener, key);
    if (sv != NULL) {
        return (int32_t) sv->num;
    }
    *prefixed = false;
    return samsa_brokercfg_int(cfg, lv, key);
}

/* Kafka's "Set(a, b)" rendering of the refused keys. */
static void
brokercfg_refuse(const char *what, const samsa_image_config_t *set, size_t n,
                 bool (*bad)(const char *), char *errstr, size_t errstr_size)
{
    size_t  i, o;
    bool    first = true;

    o = (size_t) snprintf(errstr, errstr_size, "%s: Set(", what);
    for (i = 0; i < n && o < errstr_size; i++) {
        if (bad(set[i].name)) {
            o += (size_t) snprintf(errstr + o, errstr_size - o, "%s%s",
                                   first ? "" : ", ", set[i].name);
            first = false;
        }
    }
    if (o < errstr_size) {
        snprintf(errstr + o, errstr_size - o, ")");
    }
}

/* A known broker key that cannot change at run time (Kafka's
 * nonDynamicProps: unknown keys are let through, as Kafka does). */
static bool
brokercfg_non_dynamic(const char *key)
{
    return samsa_config_defs_index(key) < samsa_config_ndefs
           && !samsa_brokercfg_is_dynamic(key);
}

/* A dynamic value against its key's type and, for log and cleaner
 * settings, its range (Kafka's ConfigDef messages; thread counts have the
 * thread rules below instead). */
static samsa_err_t
brokercfg_check_value(const char *key, const char *text, char *errstr,
                      size_t errstr_size)
{
    brokercfg_kind_t           kind = brokercfg_dynamic[
        brokercfg_dynamic_index(key)].kind;
    bool                       range = kind == BROKERCFG_LOG_DEFAULT
                                       || kind == BROKERCFG_CLEANER
                                       || kind == BROKERCFG_CONN;
    const samsa_config_def_t  *def =
        &samsa_config_defs[samsa_config_defs_index(key)];
    const char                *s = text != NULL ? text : "null";
    int64_t                    v;
    double                     d;

    if (def->type == SAMSA_CONFIG_DOUBLE) {
        if (!brokercfg_parse_double(text, &d)) {
            snprintf(errstr, errstr_size, "Invalid value %s for "
                     "configuration %s: Not a number of type DOUBLE", s,
                     key);
            return SAMSA_ERR_INVALID_CONFIG;
        }
        return SAMSA_ERR_NONE;      /* Kafka's ConfigDef has no range */
    }
    if (!brokercfg_parse_i64(text, def->type == SAMSA_CONFIG_INT
                                       ? INT32_MIN : INT64_MIN,
                             def->type == SAMSA_CONFIG_INT
                                 ? INT32_MAX : INT64_MAX, &v)) {
        snprintf(errstr, errstr_size, "Invalid value %s for configuration "
                 "%s: Not a number of type %s", s, key,
                 def->type == SAMSA_CONFIG_INT ? "INT" : "LONG");
        return SAMSA_ERR_INVALID_CONFIG;
    }
    if (range && def->check == SAMSA_CONFIG_CHECK_RANGE && v < def->min) {
        snprintf(errstr, errstr_size, "Invalid value %s for configuration "
                 "%s: Value must be at least %lld", s, key,
                 (long long) def->min);
        return SAMSA_ERR_INVALID_CONFIG;
    }
    if (range && def->check == SAMSA_CONFIG_CHECK_RANGE && v > def->max) {
        snprintf(errstr, errstr_size, "Invalid value %s for configuration "
                 "%s: Value must be no more than %lld", s, key,
                 (long long) def->max);
        return SAMSA_ERR_INVALID_CONFIG;
    }
    return SAMSA_ERR_NONE;
}

/* DynamicThreadPool.validateReconfiguration. */
static samsa_err_t
brokercfg_check_threads(const char *key, int32_t cur, int32_t v,
                        char *errstr, size_t errstr_size)
{
    const char  *why;

    if (v <= 0) {
        snprintf(errstr, errstr_size, "Dynamic thread count update "
                 "validation failed for %s=%d, value should be at least 1",
                 key, (int) v);
        return SAMSA_ERR_INVALID_CONFIG;
    }
    if (v > SAMSA_BROKERCFG_THREADS_MAX) {
        snprintf(errstr, errstr_size, "Dynamic thread count update "
                 "validation failed for %s=%d, value should be at most %d "
                 "(Samsa's limit)", key, (int) v,
                 SAMSA_BROKERCFG_THREADS_MAX);
        return SAMSA_ERR_INVALID_CONFIG;
    }
    if (v < cur / 2) {
        why = "at least half";
    } else if ((int64_t) v > (int64_t) cur * 2) {
        why = "not be greater than double";
    } else {
        return SAMSA_ERR_NONE;
    }
    snprintf(errstr, errstr_size, "Dynamic thread count update validation "
             "failed for %s=%d, value should %s%s the current value %d", key,
             (int) v, v < cur / 2 ? "be " : "", why, (int) cur);
    return SAMSA_ERR_INVALID_CONFIG;
}

/* LogCleaner.validateReconfiguration (log.cleaner.threads). */
static samsa_err_t
brokercfg_check_cleaner_threads(int32_t cur, int32_t v, char *errstr,
                                size_t errstr_size)
{
    if (v < 1) {
        snprintf(errstr, errstr_size,
                 "Log cleaner threads should be at least 1");
    } else if (v < cur / 2) {
        snprintf(errstr, errstr_size, "Log cleaner threads cannot be "
                 "reduced to less than half the current value %d",
                 (int) cur);
    } else if ((int64_t) v > (int64_t) cur * 2) {
        snprintf(errstr, errstr_size, "Log cleaner threads cannot be "
                 "increased to more than double the current value %d",
                 (int) cur);
    } else if (v > SAMSA_BROKERCFG_THREADS_MAX) {
        snprintf(errstr, errstr_size, "Log cleaner threads should be at "
                 "most %d (Samsa's limit)", SAMSA_BROKERCFG_THREADS_MAX);
    } else {
        return SAMSA_ERR_NONE;
    }
    return SAMSA_ERR_INVALID_CONFIG;
}

/* max.connections.per.ip.overrides: "host:count, ..." that parses and
 * resolves, as at start. */
static samsa_err_t
brokercfg_check_overrides(const char *text, char *errstr, size_t errstr_size)
{
    samsa_ip_override_t  *ov;
    size_t                nov;
    char                  why[512];

    if (samsa_config_ip_overrides_parse(text, &ov, &nov, why, sizeof(why))
        != SAMSA_ERR_NONE) {
        snprintf(errstr, errstr_size, "Invalid value %s for configuration "
                 "max.connections.per.ip.overrides: %s",
                 text != NULL ? text : "null", why);
        return SAMSA_ERR_INVALID_CONFIG;
    }
    samsa_free(ov);
    return SAMSA_ERR_NONE;
}

/* ListenerConnectionQuota.validateReconfiguration: an INT above 0. */
static samsa_err_t
brokercfg_check_listener_value(const char *key, const char *base,
                               const char *text, char *errstr,
                               size_t errstr_size)
{
    int32_t  v;

    if (!brokercfg_parse_int(text, &v)) {
        snprintf(errstr, errstr_size, "Invalid value %s for configuration "
                 "%s: Not a number of type INT", text != NULL ? text : "null",
                 key);
        return SAMSA_ERR_INVALID_CONFIG;
    }
    if (v <= 0) {
        snprintf(errstr, errstr_size, "Invalid %s %d", base, (int) v);
        return SAMSA_ERR_INVALID_CONFIG;
    }
    return SAMSA_ERR_NONE;
}

/* Are max.connections.per.ip.overrides in effect not empty? */
static bool
brokercfg_has_overrides(const samsa_config_t *cfg,
                        const samsa_brokercfg_levels_t *lv)
{
    int          source;
    const char  *v = samsa_brokercfg_value(cfg, lv,
                                           "max.connections.per.ip.overrides",
                                           &source);

    if (source == SAMSA_CONFIG_SOURCE_STATIC_BROKER_CONFIG
        || source == SAMSA_CONFIG_SOURCE_DEFAULT_CONFIG) {
        return cfg->nmax_connections_per_ip_overrides > 0;
    }
    for (; v != NULL && *v != '\0'; v++) {
        if (*v != ' ' && *v != ',' && *v != '\t') {
            return true;
        }
    }
    return false;
}

/* KafkaConfig.validateValues: log.cleaner.dedupe.buffer.size /
 * log.cleaner.threads > 1 MiB, checked when either changes (Samsa does not
 * refuse a static configuration below it at start). */
static samsa_err_t
brokercfg_check_dedupe(const samsa_config_t *cfg,
                       const samsa_brokercfg_levels_t *cur,
                       const samsa_brokercfg_levels_t *next, char *errstr,
                       size_t errstr_size)
{
    int64_t  now = samsa_brokercfg_long(cfg, cur,
                                        "log.cleaner.dedupe.buffer.size");
    int64_t  v = samsa_brokercfg_long(cfg, next,
                                      "log.cleaner.dedupe.buffer.size");
    int32_t  now_threads = samsa_brokercfg_int(cfg, cur,
                                               "log.cleaner.threads");
    int32_t  threads = samsa_brokercfg_int(cfg, next, "log.cleaner.threads");

    if ((v == now && threads == now_threads) || threads < 1
        || v / threads > 1024 * 1024) {
        return SAMSA_ERR_NONE;
    }
    snprintf(errstr, errstr_size, "requirement failed: "
             "log.cleaner.dedupe.buffer.size must be at least 1MB per "
             "cleaner thread.");
    return SAMSA_ERR_INVALID_CONFIG;
}

samsa_err_t
samsa_brokercfg_validate(const samsa_config_t *cfg,
                         const samsa_brokercfg_levels_t *cur, bool is_default,
                         const samsa_image_config_t *set, size_t n,
                         char *errstr, size_t errstr_size)
{
    samsa_brokercfg_levels_t  next = *cur;
    int32_t                   now, v;
    size_t                    i;
    const char               *base;

    for (i = 0; i < n; i++) {
        if (brokercfg_non_dynamic(set[i].name)) {
            brokercfg_refuse("Cannot update these configs dynamically", set,
                             n, brokercfg_non_dynamic, errstr, errstr_size);
            return SAMSA_ERR_INVALID_CONFIG;
        }
    }
    for (i = 0; i < n; i++) {
        if (brokercfg_ssl_unprefixed(set[i].name)) {
            brokercfg_refuse("These security configs can be dynamically "
                             "updated only per-listener using the listener "
                             "prefix", set, n, brokercfg_ssl_unprefixed,
                             errstr, errstr_size);
            return SAMSA_ERR_INVALID_CONFIG;
        }
        if (is_default && brokercfg_ssl_listener_key(set[i].name)) {
            brokercfg_refuse("Cannot update these configs at default cluster "
                             "level, broker id must be specified", set, n,
                             brokercfg_ssl_listener_key, errstr,
                             errstr_size);
            return SAMSA_ERR_INVALID_CONFIG;
        }
    }
    for (i = 0; i < n; i++) {
        if (brokercfg_ssl_listener_key(set[i].name)) {
            continue;               /* the server's hook checks the store */
        }
        if (strcmp(set[i].name, "max.connections.per.ip.overrides") == 0) {
            if (brokercfg_check_overrides(set[i].value, errstr, errstr_size)
                != SAMSA_ERR_NONE) {
                return SAMSA_ERR_INVALID_CONFIG;
            }
            continue;
        }
        if (brokercfg_listener_key(set[i].name, &base)) {
            if (brokercfg_check_listener_value(set[i].name, base,
                                               set[i].value, errstr,
                                               errstr_size)
                != SAMSA_ERR_NONE) {
                return SAMSA_ERR_INVALID_CONFIG;
            }
            continue;
        }
        if (samsa_brokercfg_is_dynamic(set[i].name)
            && brokercfg_check_value(set[i].name, set[i].value, errstr,
                                     errstr_size) != SAMSA_ERR_NONE) {
            return SAMSA_ERR_INVALID_CONFIG;
        }
    }
    if (is_default) {
        next.dflt = set;
        next.ndflt = n;
    } else {
        next.node = set;
        next.nnode = n;
    }
    /* KafkaConfig's check of the whole new configuration */
    if (samsa_brokercfg_int(cfg, &next, "max.connections.per.ip") == 0
        && !brokercfg_has_overrides(cfg, &next)) {
        snprintf(errstr, errstr_size, "requirement failed: "
                 "max.connections.per.ip can be set to zero only if "
                 "max.connections.per.ip.overrides property is set.");
        return SAMSA_ERR_INVALID_CONFIG;
    }
    for (i = 0; i < BROKERCFG_NDYNAMIC; i++) {
        if (brokercfg_dynamic[i].kind != BROKERCFG_THREADS
            && brokercfg_dynamic[i].kind != BROKERCFG_CLEANER_THREADS) {
            continue;
        }
        now = samsa_brokercfg_int(cfg, cur, brokercfg_dynamic[i].name);
        v = samsa_brokercfg_int(cfg, &next, brokercfg_dynamic[i].name);
        if (v == now) {
            continue;
        }
        if (brokercfg_dynamic[i].kind == BROKERCFG_CLEANER_THREADS
                ? brokercfg_check_cleaner_threads(now, v, errstr,
                                                  errstr_size)
                      != SAMSA_ERR_NONE
                : brokercfg_check_threads(brokercfg_dynamic[i].name, now, v,
                                          errstr, errstr_size)
                      != SAMSA_ERR_NONE) {
            return SAMSA_ERR_INVALID_CONFIG;
        }
    }
    return brokercfg_check_dedupe(cfg, cur, &next, errstr, errstr_size);
}
