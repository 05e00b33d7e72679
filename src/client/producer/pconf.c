/*
 * client/producer/pconf.c - typed producer configuration (see pconf.h).
 * Threads: the thread creating the producer.
 */
#include "client/producer/pconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/conf_defs.h"
#include "util/alloc.h"
#include "util/diag.h"

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
        samsa_diag_errstr(errstr, errstr_size,
                          "invalid value '%s' for configuration '%s': %s "
                          "(enable.idempotence=true)",
                          samsa_conf_value(conf, key), key, why);
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
    const char   *acks = samsa_conf_value(conf, "acks");
    char          lkey[64];
    samsa_err_t   err;

    memset(pc, 0, sizeof(*pc));
    err = samsa_client_config_load(&pc->net, conf, errstr, errstr_size);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    pc->acks = strcmp(acks, "all") == 0 ? -1 : (int16_t) atoi(acks);
    pc->linger_ms = samsa_conf_long(conf, "linger.ms");
    pc->batch_size = (int32_t) samsa_conf_long(conf, "batch.size");
    pc->buffer_memory = samsa_conf_long(conf, "buffer.memory");
    pc->max_block_ms = samsa_conf_long(conf, "max.block.ms");
    samsa_assert(samsa_codec_parse(samsa_conf_value(conf,
                                                     "compression.type"),
                                   &pc->codec));
    pc->level = SAMSA_CODEC_LEVEL_DEFAULT;
    if (pc->codec != SAMSA_CODEC_NONE && pc->codec != SAMSA_CODEC_SNAPPY) {
        snprintf(lkey, sizeof(lkey), "compression.%s.level",
                 samsa_codec_name(pc->codec));
        pc->level = (int) samsa_conf_long(conf, lkey);
    }
    pc->idempotence = samsa_conf_bool(conf, "enable.idempotence");
    pc->max_in_flight = (int32_t) samsa_conf_long(
        conf, "max.in.flight.requests.per.connection");
    pc->retries = (int32_t) samsa_conf_long(conf, "retries");
    pc->delivery_timeout_ms = samsa_conf_long(conf, "delivery.timeout.ms");
    pc->max_request_size = (int32_t) samsa_conf_long(conf,
                                                     "max.request.size");
    pc->adaptive = samsa_conf_bool(conf,
                                   "partitioner.adaptive.partitioning.enable");
    pc->availability_timeout_ms =
        samsa_conf_long(conf, "partitioner.availability.timeout.ms");
    pc->ignore_keys = samsa_conf_bool(conf, "partitioner.ignore.keys");

    pc->transaction_timeout_ms =
        (int32_t) samsa_conf_long(conf, "transaction.timeout.ms");
    if (samsa_conf_get(conf, "transactional.id") != NULL) {
        pc->transactional_id =
            samsa_strdup(samsa_conf_get(conf, "transactional.id"));
        if (pc->transactional_id[0] == '\0') {
            samsa_diag_errstr(errstr, errstr_size,
                              "invalid value '' for configuration "
                              "'transactional.id': must not be empty");
            return SAMSA_ERR__CONFIG;
        }
        if (!pc->idempotence) {
            /* Java: "Cannot set a transactional.id without also enabling
             * idempotence." */
            samsa_diag_errstr(errstr, errstr_size,
                              "invalid value 'false' for configuration "
                              "'enable.idempotence': a transactional.id "
                              "requires enable.idempotence=true");
            return SAMSA_ERR__CONFIG;
        }
    }
    if (pc->batch_size < 1) {
        pc->batch_size = 1;             /* Java: 0 means batching off */
    }
    if (pc->delivery_timeout_ms
        < pc->linger_ms + pc->net.request_timeout_ms) {
        if (samsa_conf_get(conf, "delivery.timeout.ms") != NULL) {
            samsa_diag_errstr(errstr, errstr_size,
                              "invalid value '%lld' for configuration "
                              "'delivery.timeout.ms': should be equal to or "
                              "larger than linger.ms + request.timeout.ms",
                              (long long) pc->delivery_timeout_ms);
            return SAMSA_ERR__CONFIG;
        }
        pc->delivery_timeout_ms = pc->linger_ms + pc->net.request_timeout_ms;
    }
    if ((int64_t) pc->max_request_size < 100) {
        samsa_diag_errstr(errstr, errstr_size,
                          "invalid value '%d' for configuration "
                          "'max.request.size': must be at least 100",
                          pc->max_request_size);
        return SAMSA_ERR__CONFIG;
    }
    return pconf_idempotence(pc, conf, errstr, errstr_size);
}

void
samsa_pconf_fini(samsa_pconf_t *pc)
{
    samsa_client_config_fini(&pc->net);
    samsa_free(pc->transactional_id);
    memset(pc, 0, sizeof(*pc));
}
