/*
 * client/client_config.c - the clients' shared settings (see
 * client_config.h).
 * Threads: the thread creating the client.
 */
#include "client/client_config.h"

#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include "client/conf_defs.h"
#include "client/jaas_conf.h"
#include "client/oauth_login.h"
#include "client/sasl_client.h"
#include "config/config_parse.h"
#include "util/alloc.h"
#include "util/time.h"

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

/* security.protocol SSL or SASL_SSL: the TLS context from the ssl.* keys
 * (ssl.ca.location, librdkafka's name, stands for a PEM
 * ssl.truststore.location). */
static samsa_err_t
client_config_tls(samsa_client_config_t *cc, const samsa_conf_t *conf,
                  char *errstr, size_t errstr_size)
{
    samsa_tls_conf_t  t;

    const char       *proto = samsa_conf_value(conf, "security.protocol");

    if (strcmp(proto, "SSL") != 0 && strcmp(proto, "SASL_SSL") != 0) {
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

/* The SASL user and password from sasl.jaas.config (Java's), else
 * sasl.username / sasl.password (librdkafka's). */
static samsa_err_t
client_config_sasl_creds(samsa_client_config_t *cc, const samsa_conf_t *conf,
                         char *errstr, size_t errstr_size)
{
    const char         *jaas = samsa_conf_value(conf, "sasl.jaas.config");
    const char         *user, *pw;
    samsa_jaas_conf_t   jc;
    char                why[256];
    samsa_err_t         err = SAMSA_ERR__CONFIG;

    if (jaas == NULL) {
        user = samsa_conf_value(conf, "sasl.username");
        pw = samsa_conf_value(conf, "sasl.password");
        if (user == NULL || pw == NULL) {
            snprintf(errstr, errstr_size, "missing configuration "
                     "'sasl.jaas.config' (or 'sasl.username' and "
                     "'sasl.password'): security.protocol %s needs a user "
                     "name and password",
                     samsa_conf_value(conf, "security.protocol"));
            return SAMSA_ERR__CONFIG;
        }
        cc->sasl_username = samsa_strdup(user);
        cc->sasl_password = samsa_strdup(pw);
        return SAMSA_ERR_NONE;
    }
    if (samsa_jaas_conf_parse(jaas, &jc, why, sizeof(why))
        != SAMSA_ERR_NONE) {
        snprintf(errstr, errstr_size, "invalid value for configuration "
                 "'sasl.jaas.config': %s", why);
    } else if (strcmp(jc.module, SAMSA_JAAS_PLAIN_MODULE) != 0
               && strcmp(jc.module, SAMSA_JAAS_SCRAM_MODULE) != 0) {
        snprintf(errstr, errstr_size, "invalid value for configuration "
                 "'sasl.jaas.config': login module %s is not supported "
                 "(libsamsa takes " SAMSA_JAAS_PLAIN_MODULE " and "
                 SAMSA_JAAS_SCRAM_MODULE ")", jc.module);
    } else if (samsa_jaas_conf_get(&jc, "username") == NULL
               || samsa_jaas_conf_get(&jc, "password") == NULL) {
        snprintf(errstr, errstr_size, "invalid value for configuration "
                 "'sasl.jaas.config': the login module has no %s option",
                 samsa_jaas_conf_get(&jc, "username") == NULL ? "username"
                                                               : "password");
    } else {
        cc->sasl_username = samsa_strdup(samsa_jaas_conf_get(&jc,
                                                             "username"));
        cc->sasl_password = samsa_strdup(samsa_jaas_conf_get(&jc,
                                                             "password"));
        err = SAMSA_ERR_NONE;
    }
    samsa_jaas_conf_fini(&jc);
    return err;
}

/* OAUTHBEARER: sasl.jaas.config names OAuthBearerLoginModule and its
 * options make a token now (so a bad option fails the client's
 * construction, not each connection). */
static samsa_err_t
client_config_sasl_oauth(samsa_client_config_t *cc, const samsa_conf_t *conf,
                         char *errstr, size_t errstr_size)
{
    const char         *jaas = samsa_conf_value(conf, "sasl.jaas.config");
    samsa_jaas_conf_t   jc;
    samsa_buf_t         token = SAMSA_BUF_INIT, ext = SAMSA_BUF_INIT;
    char                why[512];
    samsa_err_t         err = SAMSA_ERR__CONFIG;

    if (jaas == NULL) {
        snprintf(errstr, errstr_size, "missing configuration "
                 "'sasl.jaas.config': sasl.mechanism OAUTHBEARER needs "
                 SAMSA_JAAS_OAUTHBEARER_MODULE " with its unsecuredLogin* "
                 "options (libsamsa has no token endpoint client)");
        return SAMSA_ERR__CONFIG;
    }
    if (samsa_jaas_conf_parse(jaas, &jc, why, sizeof(why))
        != SAMSA_ERR_NONE) {
        snprintf(errstr, errstr_size, "invalid value for configuration "
                 "'sasl.jaas.config': %s", why);
    } else if (strcmp(jc.module, SAMSA_JAAS_OAUTHBEARER_MODULE) != 0) {
        snprintf(errstr, errstr_size, "invalid value for configuration "
                 "'sasl.jaas.config': sasl.mechanism OAUTHBEARER takes "
                 SAMSA_JAAS_OAUTHBEARER_MODULE ", not %s", jc.module);
    } else if (samsa_oauth_login_token(&jc, samsa_wall_ms(), &token, &ext,
                                       why, sizeof(why))
               != SAMSA_ERR_NONE) {
        snprintf(errstr, errstr_size, "invalid value for configuration "
                 "'sasl.jaas.config': %s", why);
    } else {
        cc->sasl_oauth_jaas = samsa_strdup(jaas);
        err = SAMSA_ERR_NONE;
    }
    if (token.data != NULL) {
        OPENSSL_cleanse(token.data, token.len);
    }
    samsa_buf_fini(&token);
    samsa_buf_fini(&ext);
    samsa_jaas_conf_fini(&jc);
    return err;
}

/* security.protocol SASL_PLAINTEXT or SASL_SSL: the mechanism and the
 * credentials. */
static samsa_err_t
client_config_sasl(samsa_client_config_t *cc, const samsa_conf_t *conf,
                   char *errstr, size_t errstr_size)
{
    const char         *proto = samsa_conf_value(conf, "security.protocol");
    const char         *mech = samsa_conf_value(conf, "sasl.mechanism");
    samsa_sasl_mech_t   m;

    if (strncmp(proto, "SASL_", 5) != 0) {
        return SAMSA_ERR_NONE;
    }
    if (!samsa_sasl_client_mech_from_name(mech, &m)) {
        snprintf(errstr, errstr_size, "invalid value '%s' for configuration "
                 "'sasl.mechanism': libsamsa speaks PLAIN, SCRAM-SHA-256, "
                 "SCRAM-SHA-512 and OAUTHBEARER%s", mech,
                 strcmp(mech, "GSSAPI") == 0
                     ? " (GSSAPI is Java's default: set sasl.mechanism)"
                     : "");
        return SAMSA_ERR__CONFIG;
    }
    cc->sasl_mech = (int) m;
    if (m == SAMSA_SASL_OAUTHBEARER) {
        return client_config_sasl_oauth(cc, conf, errstr, errstr_size);
    }
    return client_config_sasl_creds(cc, conf, errstr, errstr_size);
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
    err = client_config_sasl(cc, conf, errstr, errstr_size);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
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
    if (cc->sasl_password != NULL) {
        memset(cc->sasl_password, 0, strlen(cc->sasl_password));
    }
    samsa_free(cc->sasl_username);
    samsa_free(cc->sasl_password);
    if (cc->sasl_oauth_jaas != NULL) {
        OPENSSL_cleanse(cc->sasl_oauth_jaas, strlen(cc->sasl_oauth_jaas));
    }
    samsa_free(cc->sasl_oauth_jaas);
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
        .sasl_mech = cc->sasl_mech,
        .sasl_username = cc->sasl_username,
        .sasl_password = cc->sasl_password,
        .sasl_oauth_jaas = cc->sasl_oauth_jaas,
    };
}
