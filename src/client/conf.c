/*
 * client/conf.c - samsa_conf_t (samsa/conf.h): the Java producer's,
 * consumer's and admin client's property names, their defaults and
 * per-value checks, in one table of config/config_defs.h rows.  The typed,
 * cross-checked forms the clients run on are built by client_config.c,
 * producer/pconf.c and consumer/cconf.c.
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
#include "client/jaas_conf.h"
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

/* The enum keys' names (Kafka's ConfigDef.ValidString lists). */
static const char *const  conf_acks[] = { "all", "-1", "0", "1", NULL };
static const char *const  conf_offset_reset[] = { "latest", "earliest",
                                                   "none", NULL };
static const char *const  conf_isolation[] = { "read_uncommitted",
                                                "read_committed", NULL };
static const char *const  conf_security[] = { "PLAINTEXT", "SSL",
                                               "SASL_PLAINTEXT",
                                               "SASL_SSL", NULL };

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

/* The checks of the keys that are no plain enum (Kafka's validators;
 * the messages are the client's). */
static const char *const  conf_group_protocol[] = { "classic", "consumer",
                                                     NULL };

static bool
conf_check_codec(const char *text, int64_t num, char *why, size_t why_size)
{
    samsa_codec_t  c;

    (void) num;
    if (samsa_codec_parse(text, &c)) {
        return true;
    }
    snprintf(why, why_size, "expected none, gzip, snappy, lz4 or zstd");
    return false;
}

/* compression.<codec>.level: a level the codec takes. */
static bool
conf_check_level(samsa_codec_t codec, int64_t num, char *why,
                 size_t why_size)
{
    if (samsa_codec_level_valid(codec, (int) num)) {
        return true;
    }
    snprintf(why, why_size, "not a valid level for this codec");
    return false;
}

static bool
conf_check_gzip_level(const char *text, int64_t num, char *why,
                      size_t why_size)
{
    (void) text;
    return conf_check_level(SAMSA_CODEC_GZIP, num, why, why_size);
}

static bool
conf_check_lz4_level(const char *text, int64_t num, char *why,
                     size_t why_size)
{
    (void) text;
    return conf_check_level(SAMSA_CODEC_LZ4, num, why, why_size);
}

static bool
conf_check_zstd_level(const char *text, int64_t num, char *why,
                      size_t why_size)
{
    (void) text;
    return conf_check_level(SAMSA_CODEC_ZSTD, num, why, why_size);
}

/* security.protocol: Kafka's four (SecurityProtocol). */
static bool
conf_check_security(const char *text, int64_t num, char *why,
                    size_t why_size)
{
    (void) num;
    if (samsa_config_in(conf_security, text)) {
        return true;
    }
    snprintf(why, why_size, "expected PLAINTEXT, SSL, SASL_PLAINTEXT or "
             "SASL_SSL");
    return false;
}

/* sasl.mechanism: any SASL name here (Java's takes any string; the
 * mechanisms libsamsa speaks are checked once SASL is on, by
 * client_config.c, which names the key). */
static bool
conf_check_sasl_mechanism(const char *text, int64_t num, char *why,
                          size_t why_size)
{
    const char  *p;

    (void) num;
    for (p = text; *p != '\0'; p++) {
        if (!((*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')
              || *p == '-' || *p == '_')) {
            break;
        }
    }
    if (text[0] != '\0' && *p == '\0' && p - text <= 20) {
        return true;
    }
    snprintf(why, why_size, "not a SASL mechanism name (PLAIN, "
             "SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER)");
    return false;
}

/* sasl.jaas.config: Java's JAAS syntax (client/jaas_conf.c), one login
 * module. */
static bool
conf_check_jaas(const char *text, int64_t num, char *why, size_t why_size)
{
    samsa_jaas_conf_t  jc;
    bool               ok;

    (void) num;
    ok = samsa_jaas_conf_parse(text, &jc, why, why_size) == SAMSA_ERR_NONE;
    samsa_jaas_conf_fini(&jc);
    return ok;
}

/* group.protocol: either name, any case (Kafka's
 * CaseInsensitiveValidString). */
static bool
conf_check_group_protocol(const char *text, int64_t num, char *why,
                          size_t why_size)
{
    (void) num;
    if (samsa_config_in_case(conf_group_protocol, text)) {
        return true;
    }
    snprintf(why, why_size, "expected classic or consumer");
    return false;
}

static bool
conf_check_assignors(const char *text, int64_t num, char *why,
                     size_t why_size)
{
    (void) num;
    if (samsa_conf_assignors_valid(text)) {
        return true;
    }
    snprintf(why, why_size, "expected a list of range, roundrobin, "
             "cooperative-sticky (or their Java class names)");
    return false;
}

/* Kafka's producer defaults (ProducerConfig, Kafka 4.0: linger.ms 5). */
const samsa_config_def_t  samsa_conf_defs[] = {
    { .name = "bootstrap.servers", .type = SAMSA_CONFIG_LIST, .dflt = "",
      .implemented = true },
    { .name = "client.id", .type = SAMSA_CONFIG_STRING, .dflt = "",
      .implemented = true },
    { .name = "acks", .type = SAMSA_CONFIG_STRING, .dflt = "all",
      .check = SAMSA_CONFIG_CHECK_ENUM, .names = conf_acks,
      .implemented = true },
    { .name = "linger.ms", .type = SAMSA_CONFIG_LONG, .dflt = "5",
      .check = SAMSA_CONFIG_CHECK_RANGE, .min = 0, .max = INT32_MAX,
      .implemented = true },
    { .name = "batch.size", .type = SAMSA_CONFIG_INT, .dflt = "16384",
      .check = SAMSA_CONFIG_CHECK_RANGE, .min = 0, .max = INT32_MAX,
      .implemented = true },
    { .name = "buffer.memory", .type = SAMSA_CONFIG_LONG, .dflt = "33554432",
      .check = SAMSA_CONFIG_CHECK_RANGE, .min = 0, .max = INT64_MAX,
      .implemented = true },
    { .name = "max.block.ms", .type = SAMSA_CONFIG_LONG, .dflt = "60000",
      .check = SAMSA_CONFIG_CHECK_RANGE, .min = 0, .max = INT64_MAX,
      .implemented = true },
    { .name = "compression.type", .type = SAMSA_CONFIG_STRING, .dflt = "none",
      .check = SAMSA_CONFIG_CHECK_FN, .fn = conf_check_codec,
      .implemented = true },
    { .name = "compression.gzip.level", .type = SAMSA_CONFIG_INT,
      .dflt = "-1", .check = SAMSA_CONFIG_CHECK_FN,
      .fn = conf_check_gzip_level, .implemented = true },
    { .name = "compression.lz4.level", .type = SAMSA_CONFIG_INT, .dflt = "9",
      .check = SAMSA_CONFIG_CHECK_FN, .fn = conf_check_lz4_level,
      .implemented = true },
    { .name = "compression.zstd.level", .type = SAMSA_CONFIG_INT, .dflt = "3",
      .check = SAMSA_CONFIG_CHECK_FN, .fn = conf_check_zstd_level,
      .implemented = true },
    { .name = "enable.idempotence", .type = SAMSA_CONFIG_BOOL, .dflt = "true",
      .implemented = true },
    { .name = "max.in.flight.requests.per.connection",
      .type = SAMSA_CONFIG_INT, .dflt = "5",
      .check = SAMSA_CONFIG_CHECK_RANGE, .min = 1, .max = INT32_MAX,
      .implemented = true },
    { .name = "retries", .type = SAMSA_CONFIG_INT, .dflt = "2147483647",
      .check = SAMSA_CONFIG_CHECK_RANGE, .min = 0, .max = INT32_MAX,
      .implemented = true },
    { .name = "retry.backoff.ms", .type = SAMSA_CONFIG_LONG, .dflt = "100",
      .check = SAMSA_CONFIG_CHECK_RANGE, .min = 0, .max = INT64_MAX,
      .implemented = true },
    { .name = "retry.backoff.max.ms", .type = SAMSA_CONFIG_LONG,
      .dflt = "1000", .check = SAMSA_CONFIG_CHECK_RANGE, .min = 0,
      .max = INT64_MAX, .implemented = true },
    { .name = "delivery.timeout.ms", .type = SAMSA_CONFIG_INT,
      .dflt = "120000", .check = SAMSA_CONFIG_CHECK_RANGE, .min = 0,
      .max = INT32_MAX, .implemented = true },
    { .name = "request.timeout.ms", .type = SAMSA_CONFIG_INT, .dflt = "30000",
      .check = SAMSA_CONFIG_CHECK_RANGE, .min = 0, .max = INT32_MAX,
      .implemented = true },
    /* AdminClient (and consumer): a call's overall time limit */
    { .name = "default.api.timeout.ms", .type = SAMSA_CONFIG_INT,
      .dflt = "60000", .check = SAMSA_CONFIG_CHECK_RANGE, .min = 0,
      .max = INT32_MAX, .implemented = true },
    { .name = "max.request.size", .type = SAMSA_CONFIG_INT, .dflt = "1048576",
      .check = SAMSA_CONFIG_CHECK_RANGE, .min = 0, .max = INT32_MAX,
      .implemented = true },
    { .name = "partitioner.adaptive.partitioning.enable",
      .type = SAMSA_CONFIG_BOOL, .dflt = "true", .implemented = true },
    { .name = "partitioner.availability.timeout.ms",
      .type = SAMSA_CONFIG_LONG, .dflt = "0",
      .check = SAMSA_CONFIG_CHECK_RANGE, .min = 0, .max = INT64_MAX,
      .implemented = true },
    { .name = "partitioner.ignore.keys", .type = SAMSA_CONFIG_BOOL,
      .dflt = "false", .implemented = true },
    { .name = "metadata.max.age.ms", .type = SAMSA_CONFIG_LONG,
      .dflt = "300000", .check = SAMSA_CONFIG_CHECK_RANGE, .min = 0,
      .max = INT64_MAX, .implemented = true },
    { .name = "metadata.max.idle.ms", .type = SAMSA_CONFIG_LONG,
      .dflt = "300000", .check = SAMSA_CONFIG_CHECK_RANGE, .min = 5000,
      .max = INT64_MAX, .implemented = true },
    { .name = "transactional.id", .type = SAMSA_CONFIG_STRING, .dflt = NULL,
      .implemented = true },
    { .name = "transaction.timeout.ms", .type = SAMSA_CONFIG_INT,
      .dflt = "60000", .check = SAMSA_CONFIG_CHECK_RANGE, .min = 0,
      .max = INT32_MAX, .implemented = true },
    { .name = "reconnect.backoff.ms", .type = SAMSA_CONFIG_LONG, .dflt = "50",
      .check = SAMSA_CONFIG_CHECK_RANGE, .min = 0, .max = INT64_MAX,
      .implemented = true },
    { .name = "reconnect.backoff.max.ms", .type = SAMSA_CONFIG_LONG,
      .dflt = "1000", .check = SAMSA_CONFIG_CHECK_RANGE, .min = 0,
      .max = INT64_MAX, .implemented = true },
    { .name = "socket.connection.setup.timeout.ms", .type = SAMSA_CONFIG_LONG,
      .dflt = "10000", .check = SAMSA_CONFIG_CHECK_RANGE, .min = 0,
      .max = INT64_MAX, .implemented = true },
    { .name = "connections.max.idle.ms", .type = SAMSA_CONFIG_LONG,
      .dflt = "540000", .check = SAMSA_CONFIG_CHECK_RANGE, .min = -1,
      .max = INT64_MAX, .implemented = true },
    { .name = "send.buffer.bytes", .type = SAMSA_CONFIG_INT, .dflt = "131072",
      .check = SAMSA_CONFIG_CHECK_RANGE, .min = -1, .max = INT32_MAX,
      .implemented = true },
    { .name = "receive.buffer.bytes", .type = SAMSA_CONFIG_INT,
      .dflt = "32768", .check = SAMSA_CONFIG_CHECK_RANGE, .min = -1,
      .max = INT32_MAX, .implemented = true },
    { .name = "security.protocol", .type = SAMSA_CONFIG_STRING,
      .dflt = "PLAINTEXT", .check = SAMSA_CONFIG_CHECK_FN,
      .fn = conf_check_security, .implemented = true },
    /* TLS (security.protocol=SSL; net/tls.c, client_config.c): Java's
     * names, PEM only, and librdkafka's ssl.ca.location for the CAs. */
    { .name = "ssl.truststore.type", .type = SAMSA_CONFIG_STRING,
      .dflt = "JKS", .implemented = true },
    { .name = "ssl.truststore.location", .type = SAMSA_CONFIG_STRING,
      .dflt = NULL, .implemented = true },
    { .name = "ssl.truststore.certificates", .type = SAMSA_CONFIG_PASSWORD,
      .dflt = NULL, .implemented = true },
    { .name = "ssl.ca.location", .type = SAMSA_CONFIG_STRING, .dflt = NULL,
      .implemented = true },
    { .name = "ssl.keystore.type", .type = SAMSA_CONFIG_STRING,
      .dflt = "JKS", .implemented = true },
    { .name = "ssl.keystore.location", .type = SAMSA_CONFIG_STRING,
      .dflt = NULL, .implemented = true },
    { .name = "ssl.keystore.certificate.chain",
      .type = SAMSA_CONFIG_PASSWORD, .dflt = NULL, .implemented = true },
    { .name = "ssl.keystore.key", .type = SAMSA_CONFIG_PASSWORD,
      .dflt = NULL, .implemented = true },
    { .name = "ssl.key.password", .type = SAMSA_CONFIG_PASSWORD,
      .dflt = NULL, .implemented = true },
    { .name = "ssl.enabled.protocols", .type = SAMSA_CONFIG_STRING,
      .dflt = "TLSv1.2,TLSv1.3", .implemented = true },
    { .name = "ssl.protocol", .type = SAMSA_CONFIG_STRING,
      .dflt = "TLSv1.3", .implemented = true },
    { .name = "ssl.cipher.suites", .type = SAMSA_CONFIG_STRING,
      .dflt = NULL, .implemented = true },
    { .name = "ssl.endpoint.identification.algorithm",
      .type = SAMSA_CONFIG_STRING, .dflt = "https", .implemented = true },
    /* SASL (security.protocol SASL_PLAINTEXT / SASL_SSL; client/
     * netclient.c, sasl_client.c): Java's sasl.mechanism (default GSSAPI,
     * which libsamsa refuses) and sasl.jaas.config (PlainLoginModule or
     * ScramLoginModule with username/password, OAuthBearerLoginModule with
     * the unsecured token's options: oauth_login.h), and librdkafka's
     * sasl.username / sasl.password, which stand in for the JAAS value. */
    { .name = "sasl.mechanism", .type = SAMSA_CONFIG_STRING,
      .dflt = "GSSAPI", .check = SAMSA_CONFIG_CHECK_FN,
      .fn = conf_check_sasl_mechanism, .implemented = true },
    { .name = "sasl.jaas.config", .type = SAMSA_CONFIG_PASSWORD,
      .dflt = NULL, .check = SAMSA_CONFIG_CHECK_FN, .fn = conf_check_jaas,
      .implemented = true },
    { .name = "sasl.username", .type = SAMSA_CONFIG_STRING, .dflt = NULL,
      .implemented = true },
    { .name = "sasl.password", .type = SAMSA_CONFIG_PASSWORD, .dflt = NULL,
      .implemented = true },
    /* Consumer keys (ConsumerConfig, Kafka 4.0 defaults). */
    { .name = "group.id", .type = SAMSA_CONFIG_STRING, .dflt = NULL,
      .implemented = true },
    { .name = "group.instance.id", .type = SAMSA_CONFIG_STRING, .dflt = NULL,
      .implemented = true },
    { .name = "group.protocol", .type = SAMSA_CONFIG_STRING,
      .dflt = "classic", .check = SAMSA_CONFIG_CHECK_FN,
      .fn = conf_check_group_protocol, .implemented = true },
    { .name = "group.remote.assignor", .type = SAMSA_CONFIG_STRING,
      .dflt = NULL, .implemented = true },
    { .name = "session.timeout.ms", .type = SAMSA_CONFIG_INT, .dflt = "45000",
      .check = SAMSA_CONFIG_CHECK_RANGE, .min = 1, .max = INT32_MAX,
      .implemented = true },
    { .name = "heartbeat.interval.ms", .type = SAMSA_CONFIG_INT,
      .dflt = "3000", .check = SAMSA_CONFIG_CHECK_RANGE, .min = 1,
      .max = INT32_MAX, .implemented = true },
    { .name = "max.poll.interval.ms", .type = SAMSA_CONFIG_INT,
      .dflt = "300000", .check = SAMSA_CONFIG_CHECK_RANGE, .min = 1,
      .max = INT32_MAX, .implemented = true },
    { .name = "auto.offset.reset", .type = SAMSA_CONFIG_STRING,
      .dflt = "latest", .check = SAMSA_CONFIG_CHECK_ENUM,
      .names = conf_offset_reset, .implemented = true },
    { .name = "enable.auto.commit", .type = SAMSA_CONFIG_BOOL, .dflt = "true",
      .implemented = true },
    { .name = "auto.commit.interval.ms", .type = SAMSA_CONFIG_INT,
      .dflt = "5000", .check = SAMSA_CONFIG_CHECK_RANGE, .min = 0,
      .max = INT32_MAX, .implemented = true },
    { .name = "fetch.min.bytes", .type = SAMSA_CONFIG_INT, .dflt = "1",
      .check = SAMSA_CONFIG_CHECK_RANGE, .min = 0, .max = INT32_MAX,
      .implemented = true },
    { .name = "fetch.max.wait.ms", .type = SAMSA_CONFIG_INT, .dflt = "500",
      .check = SAMSA_CONFIG_CHECK_RANGE, .min = 0, .max = INT32_MAX,
      .implemented = true },
    { .name = "fetch.max.bytes", .type = SAMSA_CONFIG_INT, .dflt = "52428800",
      .check = SAMSA_CONFIG_CHECK_RANGE, .min = 0, .max = INT32_MAX,
      .implemented = true },
    { .name = "max.partition.fetch.bytes", .type = SAMSA_CONFIG_INT,
      .dflt = "1048576", .check = SAMSA_CONFIG_CHECK_RANGE, .min = 0,
      .max = INT32_MAX, .implemented = true },
    { .name = "max.poll.records", .type = SAMSA_CONFIG_INT, .dflt = "500",
      .check = SAMSA_CONFIG_CHECK_RANGE, .min = 1, .max = INT32_MAX,
      .implemented = true },
    { .name = "isolation.level", .type = SAMSA_CONFIG_STRING,
      .dflt = "read_uncommitted", .check = SAMSA_CONFIG_CHECK_ENUM,
      .names = conf_isolation, .implemented = true },
    { .name = "check.crcs", .type = SAMSA_CONFIG_BOOL, .dflt = "true",
      .implemented = true },
    { .name = "partition.assignment.strategy", .type = SAMSA_CONFIG_LIST,
      .dflt = "range,cooperative-sticky", .check = SAMSA_CONFIG_CHECK_FN,
      .fn = conf_check_assignors, .implemented = true },
    { .name = "exclude.internal.topics", .type = SAMSA_CONFIG_BOOL,
      .dflt = "true", .implemented = true },
    { .name = "allow.auto.create.topics", .type = SAMSA_CONFIG_BOOL,
      .dflt = "true", .implemented = true },
    { .name = "client.rack", .type = SAMSA_CONFIG_STRING, .dflt = "",
      .implemented = true },
    { .name = "key.deserializer", .type = SAMSA_CONFIG_STRING, .dflt = NULL,
      .implemented = false },
    { .name = "value.deserializer", .type = SAMSA_CONFIG_STRING, .dflt = NULL,
      .implemented = false },
    /* Java-only keys: accepted and ignored (bytes in, bytes out). */
    { .name = "key.serializer", .type = SAMSA_CONFIG_STRING, .dflt = NULL,
      .implemented = false },
    { .name = "value.serializer", .type = SAMSA_CONFIG_STRING, .dflt = NULL,
      .implemented = false },
    { .name = "partitioner.class", .type = SAMSA_CONFIG_STRING, .dflt = NULL,
      .implemented = false },
    { .name = "interceptor.classes", .type = SAMSA_CONFIG_STRING,
      .dflt = NULL, .implemented = false },
    { .name = "metric.reporters", .type = SAMSA_CONFIG_STRING, .dflt = NULL,
      .implemented = false },
    { .name = NULL },
};

const samsa_config_def_t *
samsa_conf_def_find(const char *key)
{
    const samsa_config_def_t  *d;

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

/* "a, b or c": an enum's names as the client's messages list them. */
static void
conf_names_or(const char *const *names, char *buf, size_t size)
{
    size_t  i, off = 0;

    buf[0] = '\0';
    for (i = 0; names[i] != NULL && off < size; i++) {
        off += (size_t) snprintf(buf + off, size - off, "%s%s",
                                 i == 0 ? "" : names[i + 1] == NULL ? " or "
                                                                    : ", ",
                                 names[i]);
    }
}

/* Why the INT or LONG value of d is wrong (in why), or NULL: a whole
 * number (blanks around it allowed), within [min, max] for a RANGE row,
 * within an int for an INT one, and what a FN row's check takes. */
static const char *
conf_check_number(const samsa_config_def_t *d, const char *value,
                  char *why, size_t why_size)
{
    int64_t  v;

    if (!samsa_conf_parse_long(value, &v)) {
        return "not a number";
    }
    if (d->check == SAMSA_CONFIG_CHECK_RANGE && (v < d->min || v > d->max)) {
        snprintf(why, why_size, "must be between %lld and %lld",
                 (long long) d->min, (long long) d->max);
        return why;
    }
    if (d->type == SAMSA_CONFIG_INT && (v < INT32_MIN || v > INT32_MAX)) {
        return "not a number";
    }
    if (d->check == SAMSA_CONFIG_CHECK_FN
        && !d->fn(value, v, why, why_size)) {
        return why;
    }
    return NULL;
}

/* Check value against d; errstr names the key. */
static samsa_err_t
conf_check(const samsa_config_def_t *d, const char *value, char *errstr,
           size_t errstr_size)
{
    const char  *why = NULL;
    char         buf[256], names[128];
    bool         b;

    switch (d->type) {
    case SAMSA_CONFIG_INT:
    case SAMSA_CONFIG_LONG:
        why = conf_check_number(d, value, buf, sizeof(buf));
        break;
    case SAMSA_CONFIG_BOOL:
        if (!samsa_config_parse_bool(value, &b)) {
            why = "expected true or false";
        }
        break;
    default:
        if (d->check == SAMSA_CONFIG_CHECK_ENUM
            && !samsa_config_in(d->names, value)) {
            conf_names_or(d->names, names, sizeof(names));
            snprintf(buf, sizeof(buf), "expected %s", names);
            why = buf;
        } else if (d->check == SAMSA_CONFIG_CHECK_FN
                   && !d->fn(value, 0, buf, sizeof(buf))) {
            why = buf;
        }
        break;
    }
    if (why != NULL) {
        /* a password's value stays out of messages, as Java's
         * ConfigException prints [hidden] */
        samsa_diag_errstr(errstr, errstr_size,
            "invalid value '%s' for configuration '%s': %s",
            d->type == SAMSA_CONFIG_PASSWORD ? "[hidden]" : value, d->name,
            why);
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
    const samsa_config_def_t  *d;
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
    const samsa_config_def_t  *d = samsa_conf_def_find(key);

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

    samsa_assert(samsa_config_parse_bool(samsa_conf_value(conf, key), &v));
    return v;
}
