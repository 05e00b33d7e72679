/*
 * client/producer/pconf.h - the producer's configuration in typed form, built from
 * a samsa_conf_t with Java's cross-key rules (ProducerConfig): idempotence
 * (default on) needs acks=all, retries > 0 and at most 5 requests in
 * flight per connection - an error when enable.idempotence was set
 * explicitly, else idempotence is turned off with a note, as Java does;
 * delivery.timeout.ms >= linger.ms + request.timeout.ms - an error when
 * set explicitly, else raised to that sum.  The settings all clients share
 * are read by client_config.c into .net.
 * Threads: built once by samsa_producer_new(), then read-only.
 */
#ifndef SAMSA_CLIENT_PRODUCER_PCONF_H
#define SAMSA_CLIENT_PRODUCER_PCONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/conf.h>

#include "client/client_config.h"
#include "proto/compress.h"

typedef struct samsa_pconf {
    samsa_client_config_t  net;         /* bootstrap, client.id, timeouts */
    int16_t          acks;              /* -1 (all), 0, 1 */
    int64_t          linger_ms;
    int32_t          batch_size;
    int64_t          buffer_memory;
    int64_t          max_block_ms;
    samsa_codec_t    codec;
    int              level;
    bool             idempotence;
    int32_t          max_in_flight;
    int32_t          retries;
    int64_t          delivery_timeout_ms;
    int32_t          max_request_size;
    bool             adaptive;
    int64_t          availability_timeout_ms;
    bool             ignore_keys;
    char            *transactional_id;  /* NULL: not transactional */
    int32_t          transaction_timeout_ms;
} samsa_pconf_t;

/* Fill pc from conf.  SAMSA_ERR__CONFIG with errstr naming the key on a
 * conflict or a missing bootstrap.servers.  Call samsa_pconf_fini() after
 * any result. */
SAMSA_MUST_CHECK samsa_err_t samsa_pconf_load(samsa_pconf_t *pc,
                                              const samsa_conf_t *conf,
                                              char *errstr,
                                              size_t errstr_size);

void samsa_pconf_fini(samsa_pconf_t *pc);

#endif /* SAMSA_CLIENT_PRODUCER_PCONF_H */
