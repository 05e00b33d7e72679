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

/* security.protocol=SSL: the TLS context from the ssl.* keys
 * (ssl.ca.location, librdkafka's name, stands for a PEM
 * ssl.truststore.location). */
static samsa_err_t
client_config_tls(samsa_client_config_t *cc, const samsa_conf_t *conf,
                  char *errstr, size_t errstr_size)
{
    samsa_tls_conf_t  t;

    if (strcmp(samsa_conf_value(conf, "security.protocol"), "SSL") != 0) {
        return SAMSA_ERR_NONE;
    }
#define CC_OPT(field, key) \
    t.field = (samsa_tls_opt_t) { key, samsa_conf_value(conf, key) }
    CC_OPT(keystore_type, "ssl.keystore.type");
    CC_OPT(keystore_location, "ssl.keystore.location");
    CC_OPT(keystore_certificate_chain, "ssl.keystore.certificate.chain");
    CC_OPT(keystore_key, "ssl.keystore.key");
    CC_OPT(key_password, "ssl.key.password");
    CC_OPT(truststore_type, "ssl.truststore.type");
    CC_OPT(truststore_location, "ssl.truststore.location");
    CC_OPT(truststore_certificates, "ssl.truststore.certificates");
    CC_OPT(enabled_protocols, "ssl.enabled.protocols");
    CC_OPT(protocol, "ssl.protocol");
    CC_OPT(cipher_suites, "ssl.cipher.suites");
    CC_OPT(endpoint_identification_algorithm,
           "ssl.endpoint.identification.algorithm");
#undef CC_OPT
    t.keystore_password = (samsa_tls_opt_t) { "ssl.keystore.password", NULL };
    t.truststore_password = (samsa_tls_opt_t) { "ssl.truststore.password",
                                                NULL };
    t.client_auth = (samsa_tls_opt_t) { "ssl.client.auth", NULL };
    if (t.truststore_location.val == NULL
        && samsa_conf_value(conf, "ssl.ca.location") != NULL) {
        t.truststore_location = (samsa_tls_opt_t) {
            "ssl.ca.location", samsa_conf_value(conf, "ssl.ca.location")
        };
        t.truststore_type = (samsa_tls_opt_t) { "ssl.truststore.type",
                                                "PEM" };
    }
    return samsa_tls_ctx_new(&cc->tls, &t, false, "client TLS", errstr,
                             errstr_size);
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
    return client_config_tls(cc, conf, errstr, errstr_size);
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
    samsa_tls_ctx_unref(cc->tls);
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
        .tls = cc->tls,
    };
}
