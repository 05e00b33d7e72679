/*
 * client/client_config.c - the clients' shared settings (see
 * client_config.h).
 * Threads: the thread creating the client.
 */
#include "client/client_config.h"

#include <stdio.h>
#include <string.h>

#include "client/conf_defs.h"
#include "config/config_parse.h"
#include "util/alloc.h"

static samsa_err_t
client_config_bootstrap(samsa_client_config_t *cc, const char *list,
                        char *errstr, size_t errstr_size)
{
    samsa_config_list_t  it;
    const char          *p;
    char                *item;
    size_t               n;

    samsa_config_list_init(&it, list);
    while (samsa_config_list_next(&it, &p, &n)) {
        samsa_config_trim_span(&p, &n, SAMSA_CONFIG_TRIM_BLANK);
        if (n == 0) {
            continue;
        }
        item = samsa_strndup(p, n);
        if (strrchr(item, ':') == NULL) {
            snprintf(errstr, errstr_size, "invalid value '%s' for "
                     "configuration 'bootstrap.servers': '%s' has no port",
                     list, item);
            samsa_free(item);
            return SAMSA_ERR__CONFIG;
        }
        cc->bootstrap = samsa_realloc(cc->bootstrap, (cc->nbootstrap + 1)
                                                         * sizeof(char *));
        cc->bootstrap[cc->nbootstrap++] = item;
    }
    if (cc->nbootstrap == 0) {
        snprintf(errstr, errstr_size, "missing required configuration "
                 "'bootstrap.servers'");
        return SAMSA_ERR__CONFIG;
    }
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_client_config_load(samsa_client_config_t *cc, const samsa_conf_t *conf,
                         char *errstr, size_t errstr_size)
{
    samsa_err_t  err;

    memset(cc, 0, sizeof(*cc));
    err = client_config_bootstrap(cc, samsa_conf_value(conf,
                                                       "bootstrap.servers"),
                                  errstr, errstr_size);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    cc->client_id = samsa_strdup(samsa_conf_value(conf, "client.id"));
    cc->request_timeout_ms = samsa_conf_long(conf, "request.timeout.ms");
    cc->retry_backoff_ms = samsa_conf_long(conf, "retry.backoff.ms");
    cc->retry_backoff_max_ms = samsa_conf_long(conf, "retry.backoff.max.ms");
    if (cc->retry_backoff_max_ms < cc->retry_backoff_ms) {
        cc->retry_backoff_max_ms = cc->retry_backoff_ms;
    }
    cc->metadata_max_age_ms = samsa_conf_long(conf, "metadata.max.age.ms");
    cc->reconnect_backoff_ms = samsa_conf_long(conf, "reconnect.backoff.ms");
    cc->reconnect_backoff_max_ms =
        samsa_conf_long(conf, "reconnect.backoff.max.ms");
    cc->connection_setup_timeout_ms =
        samsa_conf_long(conf, "socket.connection.setup.timeout.ms");
    cc->send_buffer_bytes = (int32_t) samsa_conf_long(conf,
                                                      "send.buffer.bytes");
    cc->receive_buffer_bytes =
        (int32_t) samsa_conf_long(conf, "receive.buffer.bytes");
    return SAMSA_ERR_NONE;
}

void
samsa_client_config_fini(samsa_client_config_t *cc)
{
    size_t  i;

    for (i = 0; i < cc->nbootstrap; i++) {
        samsa_free(cc->bootstrap[i]);
    }
    samsa_free(cc->bootstrap);
    samsa_free(cc->client_id);
    memset(cc, 0, sizeof(*cc));
}

samsa_nc_conf_t
samsa_client_config_nc(const samsa_client_config_t *cc, int32_t max_in_flight,
                       const char *log_name)
{
    return (samsa_nc_conf_t) {
        .client_id = cc->client_id,
        .max_in_flight = max_in_flight,
        .request_timeout_ms = cc->request_timeout_ms,
        .reconnect_backoff_ms = cc->reconnect_backoff_ms,
        .reconnect_backoff_max_ms = cc->reconnect_backoff_max_ms,
        .connection_setup_timeout_ms = cc->connection_setup_timeout_ms,
        .send_buffer_bytes = cc->send_buffer_bytes,
        .receive_buffer_bytes = cc->receive_buffer_bytes,
        .log_name = log_name,
    };
}
