/*
 * server/tlsconf.c - the listeners' TLS contexts from the ssl.* keys (see
 * tlsconf.h).
 * Threads: main.
 */
#include "server/tlsconf.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

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

/* The store keys a per-broker dynamic config may change per listener
 * (Kafka's SslConfigs.RECONFIGURABLE_CONFIGS) and their fields. */
static const struct {
    const char  *key;
    size_t       off;
} tlsconf_dynamic[] = {
    { "ssl.keystore.type", offsetof(samsa_tls_conf_t, keystore_type) },
    { "ssl.keystore.location",
      offsetof(samsa_tls_conf_t, keystore_location) },
    { "ssl.keystore.password",
      offsetof(samsa_tls_conf_t, keystore_password) },
    { "ssl.key.password", offsetof(samsa_tls_conf_t, key_password) },
    { "ssl.keystore.certificate.chain",
      offsetof(samsa_tls_conf_t, keystore_certificate_chain) },
    { "ssl.keystore.key", offsetof(samsa_tls_conf_t, keystore_key) },
    { "ssl.truststore.type", offsetof(samsa_tls_conf_t, truststore_type) },
    { "ssl.truststore.location",
      offsetof(samsa_tls_conf_t, truststore_location) },
    { "ssl.truststore.password",
      offsetof(samsa_tls_conf_t, truststore_password) },
    { "ssl.truststore.certificates",
      offsetof(samsa_tls_conf_t, truststore_certificates) },
};

#define TLSCONF_NDYNAMIC \
    (sizeof(tlsconf_dynamic) / sizeof(tlsconf_dynamic[0]))
#define TLSCONF_KEY_MAX  160

/* The dynamic key names of one listener (the options point into them). */
typedef struct tlsconf_names {
    char  key[TLSCONF_NDYNAMIC][TLSCONF_KEY_MAX];
} tlsconf_names_t;

/* listener's configuration with the per-broker dynamic store values of lv
 * over the static ones; *fp (samsa_free it) their values as one string,
 * to see whether they changed. */
static void
tlsconf_resolve_dynamic(const samsa_config_t *cfg, const char *listener,
                        const samsa_brokercfg_levels_t *lv,
                        samsa_tls_conf_t *out, tlsconf_names_t *names,
                        char **fp)
{
    char         lower[64];
    size_t       i, len = 1, o = 0;
    const char  *v[TLSCONF_NDYNAMIC];

    for (i = 0; listener[i] != '\0' && i + 1 < sizeof(lower); i++) {
        lower[i] = (char) tolower((unsigned char) listener[i]);
    }
    lower[i] = '\0';
    samsa_tlsconf_resolve(cfg, listener, out);
    for (i = 0; i < TLSCONF_NDYNAMIC; i++) {
        snprintf(names->key[i], sizeof(names->key[i]), "listener.name.%s.%s",
                 lower, tlsconf_dynamic[i].key);
        v[i] = lv != NULL ? samsa_brokercfg_find(lv->node, lv->nnode,
                                                 names->key[i])
                          : NULL;
        if (v[i] != NULL) {
            *(samsa_tls_opt_t *) ((char *) out + tlsconf_dynamic[i].off) =
                (samsa_tls_opt_t) { names->key[i], v[i] };
        }
        len += (v[i] != NULL ? strlen(v[i]) : 0) + 2;
    }
    *fp = samsa_malloc(len);
    for (i = 0; i < TLSCONF_NDYNAMIC; i++) {
        /* \x1f between values, \x1e for an unset one */
        o += (size_t) snprintf(*fp + o, len - o, "%s\x1f",
                               v[i] != NULL ? v[i] : "\x1e");
    }
}

/* listener's boolean key (its listener.name.<l>. value, else its own). */
static bool
tlsconf_bool(const samsa_config_t *cfg, const char *listener, const char *key)
{
    samsa_tls_opt_t  o = tlsconf_opt(cfg, listener, key);

    return o.val != NULL && strcasecmp(o.val, "true") == 0;
}

/* The context listener i would use under lv: *out NULL when its store
 * values are those of its context now; else a new checked context (a
 * reference) and *fp its values.  @locks tc->lock held */
static samsa_err_t
tlsconf_next(samsa_tlsconf_t *tc, const samsa_config_t *cfg, size_t i,
             const samsa_brokercfg_levels_t *lv, samsa_tls_ctx_t **out,
             char **fp, char *errstr, size_t errstr_size)
{
    const samsa_listener_t  *l = &cfg->listeners[i];
    samsa_tls_conf_t         conf;
    tlsconf_names_t          names;
    samsa_tls_ctx_t         *ctx = NULL;
    char                     what[128], why[768];
    samsa_err_t              err;

    *out = NULL;
    tlsconf_resolve_dynamic(cfg, l->name, lv, &conf, &names, fp);
    if (strcmp(*fp, tc->applied[i]) == 0) {
        samsa_free(*fp);
        *fp = NULL;
        return SAMSA_ERR_NONE;
    }
    snprintf(what, sizeof(what), "listener %s (%s)", l->name,
             l->security_protocol);
    err = samsa_tls_ctx_new(&ctx, &conf, true, what, why, sizeof(why));
    if (err == SAMSA_ERR_NONE) {
        err = samsa_tls_ctx_same_identity(
            tc->cur[i], ctx, tlsconf_bool(cfg, l->name, "ssl.allow.dn.changes"),
            tlsconf_bool(cfg, l->name, "ssl.allow.san.changes"), why,
            sizeof(why));
    }
    if (err != SAMSA_ERR_NONE) {
        snprintf(errstr, errstr_size, "Validation of dynamic config update "
                 "of SSLFactory failed: %s", why);
        samsa_tls_ctx_unref(ctx);
        samsa_free(*fp);
        *fp = NULL;
        return SAMSA_ERR_INVALID_CONFIG;
    }
    *out = ctx;
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_tlsconf_check(samsa_tlsconf_t *tc, const samsa_config_t *cfg,
                    const samsa_brokercfg_levels_t *lv, char *errstr,
                    size_t errstr_size)
{
    samsa_tls_ctx_t  *ctx;
    samsa_err_t       err = SAMSA_ERR_NONE;
    char             *fp;
    size_t            i;

    pthread_mutex_lock(&tc->lock);
    for (i = 0; err == SAMSA_ERR_NONE && i < tc->n; i++) {
        if (tc->cur[i] == NULL) {
            continue;
        }
        err = tlsconf_next(tc, cfg, i, lv, &ctx, &fp, errstr, errstr_size);
        samsa_tls_ctx_unref(ctx);
        samsa_free(fp);
    }
    pthread_mutex_unlock(&tc->lock);
    return err;
}

void
samsa_tlsconf_update(samsa_tlsconf_t *tc, const samsa_config_t *cfg,
                     const samsa_brokercfg_levels_t *lv,
                     samsa_tls_ctx_t **out)
{
    samsa_tls_ctx_t  *ctx;
    char              errstr[1024];
    char             *fp;
    size_t            i;

    pthread_mutex_lock(&tc->lock);
    for (i = 0; i < tc->n; i++) {
        if (tc->cur[i] == NULL) {
            continue;
        }
        if (tlsconf_next(tc, cfg, i, lv, &ctx, &fp, errstr, sizeof(errstr))
            != SAMSA_ERR_NONE) {
            samsa_error("listener %s: the dynamic key store update is not "
                        "applied, the listener keeps its certificate: %s",
                        cfg->listeners[i].name, errstr);
            continue;
        }
        if (ctx == NULL) {
            continue;
        }
        samsa_tls_ctx_unref(tc->cur[i]);
        tc->cur[i] = ctx;
        samsa_free(tc->applied[i]);
        tc->applied[i] = fp;
        out[i] = samsa_tls_ctx_ref(ctx);
        samsa_info("listener %s: new TLS key store in use for new "
                   "connections (dynamic config)", cfg->listeners[i].name);
    }
    pthread_mutex_unlock(&tc->lock);
}

samsa_err_t
samsa_tlsconf_open(samsa_tlsconf_t *tc, const samsa_config_t *cfg,
                   char *errstr, size_t errstr_size)
{
    const samsa_listener_t  *l;
    samsa_tls_conf_t         conf;
    tlsconf_names_t          names;
    samsa_err_t              err;
    char                     what[128];
    size_t                   i;

    tc->n = cfg->nlisteners;
    tc->ctx = samsa_calloc(cfg->nlisteners + 1, sizeof(*tc->ctx));
    tc->cur = samsa_calloc(cfg->nlisteners + 1, sizeof(*tc->cur));
    tc->applied = samsa_calloc(cfg->nlisteners + 1, sizeof(*tc->applied));
    pthread_mutex_init(&tc->lock, NULL);
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
        tc->cur[i] = samsa_tls_ctx_ref(tc->ctx[i]);
        tlsconf_resolve_dynamic(cfg, l->name, NULL, &conf, &names,
                                &tc->applied[i]);
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

    if (tc->ctx == NULL) {
        return;
    }
    for (i = 0; i < tc->n; i++) {
        samsa_tls_ctx_unref(tc->ctx[i]);
        samsa_tls_ctx_unref(tc->cur[i]);
        samsa_free(tc->applied[i]);
    }
    samsa_free(tc->ctx);
    samsa_free(tc->cur);
    samsa_free(tc->applied);
    pthread_mutex_destroy(&tc->lock);
    tc->ctx = NULL;
    tc->cur = NULL;
    tc->applied = NULL;
    tc->n = 0;
}
