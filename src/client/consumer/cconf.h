/*
 * client/consumer/cconf.h - the consumer's configuration in typed form, from a
 * samsa_conf_t with Java's rules (ConsumerConfig): group.instance.id and
 * subscribe() need group.id; enable.auto.commit without group.id is off
 * (Java turns it off when group.id is null); heartbeat.interval.ms must be
 * below session.timeout.ms; with group.protocol=consumer (KIP-848)
 * partition.assignment.strategy, session.timeout.ms and
 * heartbeat.interval.ms may not be set, with classic
 * group.remote.assignor may not (Kafka 4.0's ConsumerConfig).  Connection settings (bootstrap.servers,
 * client.id, request.timeout.ms, reconnect.backoff.*, ...) are the
 * clients' shared ones (client/client_config.h).
 * Threads: built once by samsa_consumer_new(), then read-only.
 */
#ifndef SAMSA_CLIENT_CONSUMER_CCONF_H
#define SAMSA_CLIENT_CONSUMER_CCONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/conf.h>

#include "client/client_config.h"

typedef enum samsa_reset {
    SAMSA_RESET_LATEST = 0,
    SAMSA_RESET_EARLIEST,
    SAMSA_RESET_NONE,
} samsa_reset_t;

typedef struct samsa_cconf {
    samsa_client_config_t  net;         /* bootstrap, client.id, timeouts */
    char           *group_id;           /* NULL: none */
    char           *group_instance_id;  /* NULL: dynamic member */
    int32_t         session_timeout_ms;
    int32_t         heartbeat_interval_ms;
    int32_t         max_poll_interval_ms;
    samsa_reset_t   auto_offset_reset;
    bool            enable_auto_commit;
    int32_t         auto_commit_interval_ms;
    int32_t         fetch_min_bytes;
    int32_t         fetch_max_wait_ms;
    int32_t         fetch_max_bytes;
    int32_t         max_partition_fetch_bytes;
    int32_t         max_poll_records;
    bool            read_committed;
    bool            check_crcs;
    char          **assignors;          /* short names, preferred first */
    int32_t         nassignors;
    int64_t         default_api_timeout_ms;
    bool            exclude_internal_topics;
    bool            allow_auto_create_topics;
    char           *client_rack;        /* "" none */
    bool            group_protocol_consumer;    /* KIP-848 */
    char           *group_remote_assignor;      /* NULL: broker's default */
} samsa_cconf_t;

SAMSA_MUST_CHECK samsa_err_t samsa_cconf_load(samsa_cconf_t *cc,
                                              const samsa_conf_t *conf,
                                              char *errstr,
                                              size_t errstr_size);

void samsa_cconf_fini(samsa_cconf_t *cc);

#endif /* SAMSA_CLIENT_CONSUMER_CCONF_H */
