/*
 * server/tlsconf.c - the listeners' TLS contexts from the ssl.* keys (see
 * tlsconf.h).
 * Threads: main.
 */
#include "server/tlsconf.h"

#include <stdio.h>
#include <string.h>

#include "util/alloc.h"
#include "util/diag.h"

bool
samsa_tlsconf_is_tls(const char *security_protocol)
{
    return strcmp(security_protocol, "SSL") == 0
           || strcmp(security_protocol, "SASL_SSL") == 0;
}

/* key for listener: its listener.name.<l>. value if set, else its own. */
static samsa_tls_opt_t
tlsconf_opt(const samsa_config_t *cfg, const char *listener, const char *key)
{
    const samsa_listener_value_t  *v;

    v = samsa_config_listener_value(cfg, listener, key);
    if (v != NULL) {
        return (samsa_tls_opt_t) { v->key, v->text };
    }
    return (samsa_tls_opt_t) { key, samsa_config_text(cfg, key) };
}

void
samsa_tlsconf_resolve(const samsa_config_t *cfg, const char *listener,
                      samsa_tls_conf_t *out)
{
#define TLSCONF_OPT(field, key) out->field = tlsconf_opt(cfg, listener, key)
    TLSCONF_OPT(keystore_type, "ssl.keystore.type");
    TLSCONF_OPT(keystore_location, "ssl.keystore.location");
    TLSCONF_OPT(keystore_password, "ssl.keystore.password");
    TLSCONF_OPT(keystore_certificate_chain, "ssl.keystore.certificate.chain");
    TLSCONF_OPT(keystore_key, "ssl.keystore.key");
    TLSCONF_OPT(key_password, "ssl.key.password");
    TLSCONF_OPT(truststore_type, "ssl.truststore.type");
    TLSCONF_OPT(truststore_location, "ssl.truststore.location");
    TLSCONF_OPT(truststore_password, "ssl.truststore.password");
    TLSCONF_OPT(truststore_certificates, "ssl.truststore.certificates");
    TLSCONF_OPT(client_auth, "ssl.client.auth");
    TLSCONF_OPT(enabled_protocols, "ssl.enabled.protocols");
    TLSCONF_OPT(protocol, "ssl.protocol");
    TLSCONF_OPT(cipher_suites, "ssl.cipher.suites");
    TLSCONF_OPT(endpoint_identification_algorithm,
                "ssl.endpoint.identification.algorithm");
#undef TLSCONF_OPT
}

samsa_err_t
samsa_tlsconf_open(samsa_tlsconf_t *tc, const samsa_config_t *cfg,
                   char *errstr, size_t errstr_size)
{
    const samsa_listener_t  *l;
    samsa_tls_conf_t         conf;
    samsa_err_t              err;
    char                     what[128];
    size_t                   i;

    tc->n = cfg->nlisteners;
    tc->ctx = samsa_calloc(cfg->nlisteners + 1, sizeof(*tc->ctx));
    for (i = 0; i < cfg->nlisteners; i++) {
        l = &cfg->listeners[i];
        if (!samsa_tlsconf_is_tls(l->security_protocol)) {
            continue;
        }
        samsa_tlsconf_resolve(cfg, l->name, &conf);
        snprintf(what, sizeof(what), "listener %s (%s)", l->name,
                 l->security_protocol);
        err = samsa_tls_ctx_new(&tc->ctx[i], &conf, true, what, errstr,
                                errstr_size);
        if (err != SAMSA_ERR_NONE) {
            return err;
        }
        samsa_info("listener %s: TLS ready (%s, client auth %s)", l->name,
                   conf.enabled_protocols.val != NULL
                       ? conf.enabled_protocols.val
                       : "TLSv1.2,TLSv1.3",
                   conf.client_auth.val != NULL ? conf.client_auth.val
                                                : "none");
    }
    return SAMSA_ERR_NONE;
}

void
samsa_tlsconf_fini(samsa_tlsconf_t *tc)
{
    size_t  i;

    for (i = 0; tc->ctx != NULL && i < tc->n; i++) {
        samsa_tls_ctx_unref(tc->ctx[i]);
    }
    samsa_free(tc->ctx);
    tc->ctx = NULL;
    tc->n = 0;
}
