/*
 * client/producer/pconf.c - typed producer configuration (see pconf.h).
 * Threads: the thread creating the producer.
 */
#include "client/producer/pconf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/conf_defs.h"
#include "util/alloc.h"
#include "util/diag.h"

static const char *
pconf_str(const samsa_conf_t *conf, const char *key)
{
    const char  *v = samsa_conf_get(conf, key);

    return v != NULL ? v : samsa_conf_default(key);
}

/* Values were checked by samsa_conf_set(); defaults are well-formed. */
static int64_t
pconf_long(const samsa_conf_t *conf, const char *key)
{
    int64_t  v = 0;

    samsa_assert(samsa_conf_parse_long(pconf_str(conf, key), &v));
    return v;
}

static bool
pconf_bool(const samsa_conf_t *conf, const char *key)
{
    bool  v = false;

    samsa_assert(samsa_conf_parse_bool(pconf_str(conf, key), &v));
    return v;
}

static void
pconf_err(char *errstr, size_t errstr_size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
pconf_err(char *errstr, size_t errstr_size, const char *fmt, ...)
{
    va_list  ap;

    if (errstr != NULL && errstr_size > 0) {
        va_start(ap, fmt);
        vsnprintf(errstr, errstr_size, fmt, ap);
        va_end(ap);
    }
}

static samsa_err_t
pconf_bootstrap(samsa_pconf_t *pc, const char *list, char *errstr,
                size_t errstr_size)
{
    const char  *p = list, *end;
    char        *item;
    size_t       n;

    while (*p != '\0') {
        end = strchr(p, ',');
        n = end != NULL ? (size_t) (end - p) : strlen(p);
        while (n > 0 && (*p == ' ' || *p == '\t')) {
            p++;
            n--;
        }
        while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t')) {
            n--;
        }
        if (n > 0) {
            item = samsa_strndup(p, n);
            if (strrchr(item, ':') == NULL) {
                pconf_err(errstr, errstr_size,
                          "invalid value '%s' for configuration "
                          "'bootstrap.servers': '%s' has no port", list,
                          item);
                samsa_free(item);
                return SAMSA_ERR__CONFIG;
            }
            pc->bootstrap = samsa_realloc(pc->bootstrap,
                                          (pc->nbootstrap + 1)
                                              * sizeof(char *));
            pc->bootstrap[pc->nbootstrap++] = item;
        }
        p = end != NULL ? end + 1 : p + n;
    }
    if (pc->nbootstrap == 0) {
        pconf_err(errstr, errstr_size, "missing required configuration "
                  "'bootstrap.servers'");
        return SAMSA_ERR__CONFIG;
    }
    return SAMSA_ERR_NONE;
}

/* Java's postProcessAndValidateIdempotenceConfigs. */
static samsa_err_t
pconf_idempotence(samsa_pconf_t *pc, const samsa_conf_t *conf, char *errstr,
                  size_t errstr_size)
{
    bool         explicit = samsa_conf_get(conf, "enable.idempotence") != NULL
                            || pc->transactional_id != NULL;
    const char  *why = NULL, *key = NULL;

    if (!pc->idempotence) {
        return SAMSA_ERR_NONE;
    }
    if (pc->max_in_flight > 5) {
        why = "must be at most 5 to use the idempotent producer";
        key = "max.in.flight.requests.per.connection";
    } else if (pc->retries == 0) {
        why = "must be non-zero to use the idempotent producer";
        key = "retries";
    } else if (pc->acks != -1) {
        why = "must be all (-1) to use the idempotent producer";
        key = "acks";
    }
    if (why == NULL) {
        return SAMSA_ERR_NONE;
    }
    if (explicit) {
        pconf_err(errstr, errstr_size, "invalid value '%s' for configuration "
                  "'%s': %s (enable.idempotence=true)", pconf_str(conf, key),
                  key, why);
        return SAMSA_ERR__CONFIG;
    }
    samsa_info("producer: idempotence disabled: %s %s", key, why);
    pc->idempotence = false;
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_pconf_load(samsa_pconf_t *pc, const samsa_conf_t *conf, char *errstr,
                 size_t errstr_size)
{
    const char   *acks = pconf_str(conf, "acks");
    char          lkey[64];
    samsa_err_t   err;

    memset(pc, 0, sizeof(*pc));
    err = pconf_bootstrap(pc, pconf_str(conf, "bootstrap.servers"), errstr,
                          errstr_size);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    pc->client_id = samsa_strdup(pconf_str(conf, "client.id"));
    pc->acks = strcmp(acks, "all") == 0 ? -1 : (int16_t) atoi(acks);
    pc->linger_ms = pconf_long(conf, "linger.ms");
    pc->batch_size = (int32_t) pconf_long(conf, "batch.size");
    pc->buffer_memory = pconf_long(conf, "buffer.memory");
    pc->max_block_ms = pconf_long(conf, "max.block.ms");
    samsa_assert(samsa_codec_parse(pconf_str(conf, "compression.type"),
                                   &pc->codec));
    pc->level = SAMSA_CODEC_LEVEL_DEFAULT;
    if (pc->codec != SAMSA_CODEC_NONE && pc->codec != SAMSA_CODEC_SNAPPY) {
        snprintf(lkey, sizeof(lkey), "compression.%s.level",
                 samsa_codec_name(pc->codec));
        pc->level = (int) pconf_long(conf, lkey);
    }
    pc->idempotence = pconf_bool(conf, "enable.idempotence");
    pc->max_in_flight =
        (int32_t) pconf_long(conf, "max.in.flight.requests.per.connection");
    pc->retries = (int32_t) pconf_long(conf, "retries");
    pc->retry_backoff_ms = pconf_long(conf, "retry.backoff.ms");
    pc->retry_backoff_max_ms = pconf_long(conf, "retry.backoff.max.ms");
    pc->delivery_timeout_ms = pconf_long(conf, "delivery.timeout.ms");
    pc->request_timeout_ms = pconf_long(conf, "request.timeout.ms");
    pc->max_request_size = (int32_t) pconf_long(conf, "max.request.size");
    pc->adaptive = pconf_bool(conf,
                              "partitioner.adaptive.partitioning.enable");
    pc->availability_timeout_ms =
        pconf_long(conf, "partitioner.availability.timeout.ms");
    pc->ignore_keys = pconf_bool(conf, "partitioner.ignore.keys");
    pc->metadata_max_age_ms = pconf_long(conf, "metadata.max.age.ms");
    pc->metadata_max_idle_ms = pconf_long(conf, "metadata.max.idle.ms");
    pc->reconnect_backoff_ms = pconf_long(conf, "reconnect.backoff.ms");
    pc->reconnect_backoff_max_ms =
        pconf_long(conf, "reconnect.backoff.max.ms");
    pc->connection_setup_timeout_ms =
        pconf_long(conf, "socket.connection.setup.timeout.ms");
    pc->send_buffer_bytes = (int32_t) pconf_long(conf, "send.buffer.bytes");
    pc->receive_buffer_bytes =
        (int32_t) pconf_long(conf, "receive.buffer.bytes");

    pc->transaction_timeout_ms =
        (int32_t) pconf_long(conf, "transaction.timeout.ms");
    if (samsa_conf_get(conf, "transactional.id") != NULL) {
        pc->transactional_id =
            samsa_strdup(samsa_conf_get(conf, "transactional.id"));
        if (pc->transactional_id[0] == '\0') {
            pconf_err(errstr, errstr_size, "invalid value '' for "
                      "configuration 'transactional.id': must not be empty");
            return SAMSA_ERR__CONFIG;
        }
        if (!pc->idempotence) {
            /* Java: "Cannot set a transactional.id without also enabling
             * idempotence." */
            pconf_err(errstr, errstr_size, "invalid value 'false' for "
                      "configuration 'enable.idempotence': a "
                      "transactional.id requires enable.idempotence=true");
            return SAMSA_ERR__CONFIG;
        }
    }
    if (pc->batch_size < 1) {
        pc->batch_size = 1;             /* Java: 0 means batching off */
    }
    if (pc->retry_backoff_max_ms < pc->retry_backoff_ms) {
        pc->retry_backoff_max_ms = pc->retry_backoff_ms;
    }
    if (pc->delivery_timeout_ms < pc->linger_ms + pc->request_timeout_ms) {
        if (samsa_conf_get(conf, "delivery.timeout.ms") != NULL) {
            pconf_err(errstr, errstr_size, "invalid value '%lld' for "
                      "configuration 'delivery.timeout.ms': should be equal "
                      "to or larger than linger.ms + request.timeout.ms",
                      (long long) pc->delivery_timeout_ms);
            return SAMSA_ERR__CONFIG;
        }
        pc->delivery_timeout_ms = pc->linger_ms + pc->request_timeout_ms;
    }
    if ((int64_t) pc->max_request_size < 100) {
        pconf_err(errstr, errstr_size, "invalid value '%d' for configuration "
                  "'max.request.size': must be at least 100",
                  pc->max_request_size);
        return SAMSA_ERR__CONFIG;
    }
    return pconf_idempotence(pc, conf, errstr, errstr_size);
}

void
samsa_pconf_fini(samsa_pconf_t *pc)
{
    size_t  i;

    for (i = 0; i < pc->nbootstrap; i++) {
        samsa_free(pc->bootstrap[i]);
    }
    samsa_free(pc->bootstrap);
    samsa_free(pc->client_id);
    samsa_free(pc->transactional_id);
    memset(pc, 0, sizeof(*pc));
}
