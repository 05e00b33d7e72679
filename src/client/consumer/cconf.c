/*
 * client/consumer/cconf.c - typed consumer configuration (see cconf.h).
 * Threads: the thread creating the consumer.
 */
#include "client/consumer/cconf.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "client/conf_defs.h"
#include "config/config_parse.h"
#include "util/alloc.h"
#include "util/diag.h"

/* ConsumerConfig's receive.buffer.bytes default (-1: the OS's). */
#define CCONF_RECEIVE_BUFFER_BYTES  65536

static int32_t
cconf_int(const samsa_conf_t *conf, const char *key)
{
    return (int32_t) samsa_conf_long(conf, key);
}

static void
cconf_assignors(samsa_cconf_t *cc, const char *list)
{
    samsa_config_list_t  it;
    const char          *p, *name;
    size_t               n;
    int32_t              i;
    bool                 dup;

    samsa_config_list_init(&it, list);
    while (samsa_config_list_next(&it, &p, &n)) {
        samsa_config_trim_span(&p, &n, SAMSA_CONFIG_TRIM_BLANK);
        name = n > 0 ? samsa_conf_assignor_name(p, n) : NULL;
        dup = false;
        for (i = 0; name != NULL && i < cc->nassignors; i++) {
            dup = dup || strcmp(cc->assignors[i], name) == 0;
        }
        if (name != NULL && !dup) {
            cc->assignors = samsa_realloc(cc->assignors,
                                          (size_t) (cc->nassignors + 1)
                                              * sizeof(char *));
            cc->assignors[cc->nassignors++] = samsa_strdup(name);
        }
    }
}

/* Java's ConsumerConfig rules for group.protocol (Kafka 4.0): the keys of
 * the other protocol may not be set explicitly. */
static samsa_err_t
cconf_protocol_rules(const samsa_cconf_t *cc, const samsa_conf_t *conf,
                     char *errstr, size_t errstr_size)
{
    static const char *const  classic_only[] = {
        "partition.assignment.strategy",
        "session.timeout.ms",
        "heartbeat.interval.ms",
    };
    size_t                    i;

    if (!cc->group_protocol_consumer) {
        if (cc->group_remote_assignor != NULL) {
            samsa_diag_errstr(errstr, errstr_size,
                "invalid configuration "
                "'group.remote.assignor': cannot be set when "
                "group.protocol=classic");
            return SAMSA_ERR__CONFIG;
        }
        return SAMSA_ERR_NONE;
    }
    for (i = 0; i < sizeof(classic_only) / sizeof(classic_only[0]); i++) {
        if (samsa_conf_get(conf, classic_only[i]) != NULL) {
            samsa_diag_errstr(errstr, errstr_size,
                "invalid configuration '%s': "
                "cannot be set when group.protocol=consumer (the "
                "group coordinator decides it)", classic_only[i]);
            return SAMSA_ERR__CONFIG;
        }
    }
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_cconf_load(samsa_cconf_t *cc, const samsa_conf_t *conf, char *errstr,
                 size_t errstr_size)
{
    const char   *v;
    samsa_err_t   err;

    memset(cc, 0, sizeof(*cc));
    err = samsa_client_config_load(&cc->net, conf, errstr, errstr_size);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    v = samsa_conf_get(conf, "group.id");
    cc->group_id = v != NULL && v[0] != '\0' ? samsa_strdup(v) : NULL;
    v = samsa_conf_get(conf, "group.instance.id");
    cc->group_instance_id = v != NULL && v[0] != '\0' ? samsa_strdup(v)
                                                       : NULL;
    cc->session_timeout_ms = cconf_int(conf, "session.timeout.ms");
    cc->heartbeat_interval_ms = cconf_int(conf, "heartbeat.interval.ms");
    cc->max_poll_interval_ms = cconf_int(conf, "max.poll.interval.ms");
    v = samsa_conf_value(conf, "auto.offset.reset");
    cc->auto_offset_reset = strcmp(v, "earliest") == 0 ? SAMSA_RESET_EARLIEST
                            : strcmp(v, "none") == 0   ? SAMSA_RESET_NONE
                                                       : SAMSA_RESET_LATEST;
    cc->enable_auto_commit = samsa_conf_bool(conf, "enable.auto.commit");
    cc->auto_commit_interval_ms = cconf_int(conf, "auto.commit.interval.ms");
    cc->fetch_min_bytes = cconf_int(conf, "fetch.min.bytes");
    cc->fetch_max_wait_ms = cconf_int(conf, "fetch.max.wait.ms");
    cc->fetch_max_bytes = cconf_int(conf, "fetch.max.bytes");
    cc->max_partition_fetch_bytes = cconf_int(conf,
                                              "max.partition.fetch.bytes");
    cc->max_poll_records = cconf_int(conf, "max.poll.records");
    cc->read_committed = strcmp(samsa_conf_value(conf, "isolation.level"),
                                "read_committed") == 0;
    cc->check_crcs = samsa_conf_bool(conf, "check.crcs");
    cconf_assignors(cc, samsa_conf_value(conf,
                                         "partition.assignment.strategy"));
    cc->default_api_timeout_ms = cconf_int(conf, "default.api.timeout.ms");
    cc->exclude_internal_topics = samsa_conf_bool(conf,
                                                  "exclude.internal.topics");
    cc->allow_auto_create_topics = samsa_conf_bool(conf,
                                              "allow.auto.create.topics");
    cc->client_rack = samsa_strdup(samsa_conf_value(conf, "client.rack"));

    cc->group_protocol_consumer =
        strcasecmp(samsa_conf_value(conf, "group.protocol"), "consumer") == 0;
    v = samsa_conf_get(conf, "group.remote.assignor");
    cc->group_remote_assignor = v != NULL && v[0] != '\0' ? samsa_strdup(v)
                                                           : NULL;
    err = cconf_protocol_rules(cc, conf, errstr, errstr_size);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    if (cc->group_instance_id != NULL && cc->group_id == NULL) {
        samsa_diag_errstr(errstr, errstr_size,
            "invalid configuration "
            "'group.instance.id': requires group.id");
        return SAMSA_ERR__CONFIG;
    }
    if (!cc->group_protocol_consumer
        && cc->heartbeat_interval_ms >= cc->session_timeout_ms) {
        samsa_diag_errstr(errstr, errstr_size,
            "invalid value '%d' for "
            "configuration 'heartbeat.interval.ms': must be lower "
            "than session.timeout.ms (%d)", cc->heartbeat_interval_ms,
            cc->session_timeout_ms);
        return SAMSA_ERR__CONFIG;
    }
    if (cc->group_id == NULL) {
        cc->enable_auto_commit = false;     /* Java: no group, no commits */
    }
    if (samsa_conf_get(conf, "receive.buffer.bytes") == NULL) {
        /* the shared key's default is the producer's (32768) */
        cc->net.receive_buffer_bytes = CCONF_RECEIVE_BUFFER_BYTES;
    }
    if (cc->net.client_id == NULL || cc->net.client_id[0] == '\0') {
        static _Atomic int  seq;
        char                id[256];

        /* Java: "consumer-<group.id>-<n>" (or "consumer-<n>") */
        snprintf(id, sizeof(id), "consumer-%s%s%d",
                 cc->group_id != NULL ? cc->group_id : "",
                 cc->group_id != NULL ? "-" : "",
                 atomic_fetch_add(&seq, 1) + 1);
        samsa_free(cc->net.client_id);
        cc->net.client_id = samsa_strdup(id);
    }
    return SAMSA_ERR_NONE;
}

void
samsa_cconf_fini(samsa_cconf_t *cc)
{
    int32_t  i;

    samsa_client_config_fini(&cc->net);
    samsa_free(cc->group_id);
    samsa_free(cc->group_instance_id);
    for (i = 0; i < cc->nassignors; i++) {
        samsa_free(cc->assignors[i]);
    }
    samsa_free(cc->assignors);
    samsa_free(cc->client_rack);
    samsa_free(cc->group_remote_assignor);
    memset(cc, 0, sizeof(*cc));
}
