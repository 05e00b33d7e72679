/*
 * server/saslconf.c - the SASL listeners' settings (see saslconf.h).
 * Threads: main.
 */
#include "server/saslconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "net/jaas.h"
#include "server/oauth_jwks.h"
#include "server/oauth_unsecured.h"
#include "util/alloc.h"
#include "util/diag.h"

#define SASLCONF_PLAIN_MODULE \
    "org.apache.kafka.common.security.plain.PlainLoginModule"
#define SASLCONF_SCRAM_MODULE \
    "org.apache.kafka.common.security.scram.ScramLoginModule"
#define SASLCONF_OAUTH_MODULE \
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
#define SASLCONF_OAUTH_UNSECURED_HANDLER \
    "org.apache.kafka.common.security.oauthbearer.internals.unsecured." \
    "OAuthBearerUnsecuredValidatorCallbackHandler"
#define SASLCONF_OAUTH_JWKS_HANDLER \
    "org.apache.kafka.common.security.oauthbearer." \
    "OAuthBearerValidatorCallbackHandler"
#define SASLCONF_OAUTH_JWKS_HANDLER_OLD \
    "org.apache.kafka.common.security.oauthbearer.secured." \
    "OAuthBearerValidatorCallbackHandler"

bool
samsa_saslconf_is_sasl(const char *security_protocol)
{
    return strcmp(security_protocol, "SASL_PLAINTEXT") == 0
           || strcmp(security_protocol, "SASL_SSL") == 0;
}

/* listener.name.<listener>.<key> as set (*used: the whole key), or
 * NULL. */
static const char *
saslconf_listener_text(const samsa_config_t *cfg, const char *listener,
                       const char *key, const char **used)
{
    const samsa_listener_value_t  *lv;
    char                           want[256];
    size_t                         i;

    snprintf(want, sizeof(want), "listener.name.%s.%s", listener, key);
    for (i = 0; i < cfg->nlistener_values; i++) {
        lv = &cfg->listener_values[i];
        if (strcasecmp(lv->key, want) == 0) {
            *used = lv->key;
            return lv->text;
        }
    }
    return NULL;
}

/* A per-listener key's text for listener, *used the key it came from. */
static const char *
saslconf_text(const samsa_config_t *cfg, const char *listener,
              const char *key, const char **used)
{
    const char  *text = saslconf_listener_text(cfg, listener, key, used);

    if (text != NULL) {
        return text;
    }
    *used = key;
    return samsa_config_text(cfg, key);
}

/* The JAAS text for mech on listener: mechanism-prefixed, then the
 * listener's, then the top-level key. */
static const char *
saslconf_jaas_text(const samsa_config_t *cfg, const char *listener,
                   const char *mech, const char **used)
{
    char         key[128];
    const char  *text;
    size_t       i;

    snprintf(key, sizeof(key), "%s.sasl.jaas.config", mech);
    for (i = 0; key[i] != '\0'; i++) {
        key[i] = (char) (key[i] >= 'A' && key[i] <= 'Z' ? key[i] - 'A' + 'a'
                                                        : key[i]);
    }
    text = saslconf_listener_text(cfg, listener, key, used);
    if (text != NULL) {
        return text;
    }
    return saslconf_text(cfg, listener, "sasl.jaas.config", used);
}

static samsa_err_t
saslconf_mechs(samsa_sasl_conf_t *c, const samsa_config_t *cfg,
               const samsa_listener_t *l, char *errstr, size_t errstr_size)
{
    const char  *key, *text = saslconf_text(cfg, l->name,
                                            "sasl.enabled.mechanisms", &key);
    const char  *p = text != NULL ? text : "";
    char         item[64];
    unsigned     m;
    size_t       len;

    while (*p != '\0') {
        while (*p == ' ' || *p == ',') {
            p++;
        }
        len = strcspn(p, ",");
        while (len > 0 && p[len - 1] == ' ') {
            len--;
        }
        if (len == 0) {
            break;
        }
        snprintf(item, sizeof(item), "%.*s", (int) len, p);
        p += strcspn(p, ",");
        m = samsa_sasl_mech_from_name(samsa_slice_cstr(item));
        if (m == 0) {
            samsa_warn("listener %s: SASL mechanism %s (%s) is not "
                       "supported by Samsa and is left out (PLAIN, "
                       "SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER)", l->name, item, key);
            continue;
        }
        if ((c->mechs & m) != 0) {
            continue;
        }
        c->mechs |= m;
        c->mech_names = samsa_realloc(c->mech_names, (c->nmech_names + 1)
                                                         * sizeof(char *));
        c->mech_names[c->nmech_names++] = samsa_strdup(item);
    }
    if (c->mechs == 0) {
        snprintf(errstr, errstr_size, "listener %s (%s): %s is '%s', which "
                 "names no SASL mechanism Samsa supports (PLAIN, "
                 "SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER)", l->name,
                 l->security_protocol, key, text != NULL ? text : "");
        return SAMSA_ERR__CONFIG;
    }
    return SAMSA_ERR_NONE;
}

/* Find the module of class in the JAAS text of key. */
static samsa_err_t
saslconf_jaas(const char *text, const char *key, const char *listener,
              const char *module, samsa_jaas_t *jaas,
              const samsa_jaas_module_t **m, char *errstr,
              size_t errstr_size)
{
    char    why[192];
    size_t  i;

    if (samsa_jaas_parse(text, strlen(text), jaas, why, sizeof(why))
        != SAMSA_ERR_NONE) {
        snprintf(errstr, errstr_size, "listener %s: invalid value for "
                 "configuration '%s': %s", listener, key, why);
        return SAMSA_ERR__CONFIG;
    }
    for (i = 0; i < jaas->nmodules; i++) {
        if (strcmp(jaas->modules[i].class_name, module) == 0) {
            *m = &jaas->modules[i];
            return SAMSA_ERR_NONE;
        }
    }
    snprintf(errstr, errstr_size, "listener %s: configuration '%s' has no "
             "%s", listener, key, module);
    return SAMSA_ERR__CONFIG;
}

static samsa_err_t
saslconf_plain(samsa_sasl_conf_t *c, const samsa_config_t *cfg,
               const samsa_listener_t *l, char *errstr, size_t errstr_size)
{
    const samsa_jaas_module_t  *m = NULL;
    samsa_jaas_t                jaas;
    const char                 *key, *text;
    samsa_err_t                 err;
    size_t                      i;
    char                        lower[64];

    text = saslconf_jaas_text(cfg, l->name, "PLAIN", &key);
    if (text == NULL) {
        snprintf(lower, sizeof(lower), "%s", l->name);
        for (i = 0; lower[i] != '\0'; i++) {
            if (lower[i] >= 'A' && lower[i] <= 'Z') {
                lower[i] = (char) (lower[i] - 'A' + 'a');
            }
        }
        snprintf(errstr, errstr_size, "listener %s enables SASL mechanism "
                 "PLAIN but has no JAAS configuration: set "
                 "listener.name.%s.plain.sasl.jaas.config (or "
                 "sasl.jaas.config) to '%s required user_NAME=\"PASSWORD\" "
                 "...;'", l->name, lower, SASLCONF_PLAIN_MODULE);
        return SAMSA_ERR__CONFIG;
    }
    err = saslconf_jaas(text, key, l->name, SASLCONF_PLAIN_MODULE, &jaas, &m,
                        errstr, errstr_size);
    for (i = 0; err == SAMSA_ERR_NONE && i < m->nopts; i++) {
        if (strncmp(m->opts[i].name, "user_", 5) != 0
            || m->opts[i].name[5] == '\0') {
            continue;
        }
        c->plain_users = samsa_realloc(c->plain_users,
                                       (c->nplain_users + 1)
                                           * sizeof(*c->plain_users));
        c->plain_users[c->nplain_users].name =
            samsa_strdup(m->opts[i].name + 5);
        c->plain_users[c->nplain_users++].password =
            samsa_strdup(m->opts[i].value);
    }
    if (err == SAMSA_ERR_NONE && c->nplain_users == 0) {
        samsa_warn("listener %s: %s names no user_NAME=\"PASSWORD\": no "
                   "one can authenticate with PLAIN", l->name, key);
    }
    samsa_jaas_fini(&jaas);
    return err;
}

/* SCRAM: the JAAS entry is optional on the broker (credentials come from
 * the metadata log); if given it must parse and name ScramLoginModule. */
static samsa_err_t
saslconf_scram(const samsa_config_t *cfg, const samsa_listener_t *l,
               const char *mech, char *errstr, size_t errstr_size)
{
    const samsa_jaas_module_t  *m = NULL;
    samsa_jaas_t                jaas;
    const char                 *key, *text;
    samsa_err_t                 err;
    char                        mkey[64];
    size_t                      i;

    snprintf(mkey, sizeof(mkey), "%s.sasl.jaas.config", mech);
    for (i = 0; mkey[i] != '\0'; i++) {
        if (mkey[i] >= 'A' && mkey[i] <= 'Z') {
            mkey[i] = (char) (mkey[i] - 'A' + 'a');
        }
    }
    text = saslconf_listener_text(cfg, l->name, mkey, &key);
    if (text == NULL) {
        return SAMSA_ERR_NONE;          /* only a SCRAM-specific one */
    }
    err = saslconf_jaas(text, key, l->name, SASLCONF_SCRAM_MODULE, &jaas, &m,
                        errstr, errstr_size);
    samsa_jaas_fini(&jaas);
    return err;
}

static void
saslconf_oauth_free(void *ctx)
{
    samsa_oauth_conf_fini(ctx);
    samsa_free(ctx);
}

/* One unsecuredValidator* option of m into oc. */
static samsa_err_t
saslconf_oauth_opt(samsa_oauth_conf_t *oc, const samsa_jaas_opt_t *o,
                   const char *key, const char *listener, char *errstr,
                   size_t errstr_size)
{
    const char  *v = o->value, *e;
    char        *end;
    long long    skew;

    if (strcmp(o->name, "unsecuredValidatorPrincipalClaimName") == 0
        && strspn(v, " ") != strlen(v)) {
        samsa_free(oc->principal_claim);
        oc->principal_claim = samsa_strdup(v + strspn(v, " "));
    } else if (strcmp(o->name, "unsecuredValidatorScopeClaimName") == 0
               && strspn(v, " ") != strlen(v)) {
        samsa_free(oc->scope_claim);
        oc->scope_claim = samsa_strdup(v + strspn(v, " "));
    } else if (strcmp(o->name, "unsecuredValidatorRequiredScope") == 0) {
        for (; *v != '\0'; v = e) {
            v += strspn(v, " ");
            e = v + strcspn(v, " ");
            if (e > v) {
                oc->required_scope = samsa_realloc(
                    oc->required_scope,
                    (oc->nrequired_scope + 1) * sizeof(char *));
                oc->required_scope[oc->nrequired_scope++] =
                    samsa_strndup(v, (size_t) (e - v));
            }
        }
    } else if (strcmp(o->name, "unsecuredValidatorAllowableClockSkewMs")
               == 0) {
        skew = strtoll(v, &end, 10);
        if (end == v || *end != '\0' || skew < 0 || skew > INT32_MAX) {
            snprintf(errstr, errstr_size, "listener %s: invalid value for "
                     "configuration '%s': unsecuredValidatorAllowableClockSkewMs"
                     " must be a non-negative number of milliseconds, not "
                     "'%s'", listener, key, v);
            return SAMSA_ERR__CONFIG;
        }
        oc->clock_skew_ms = skew;
    }
    return SAMSA_ERR_NONE;
}

static void
saslconf_jwks_free(void *ctx)
{
    samsa_jwks_conf_fini(ctx);
    samsa_free(ctx);
}

/* An OAUTHBEARER key of listener l: mechanism-prefixed
 * (listener.name.<l>.oauthbearer.<key>), then the listener's, then the
 * top-level key; *used names the one it came from. */
static const char *
saslconf_oauth_text(const samsa_config_t *cfg, const char *listener,
                    const char *key, const char **used)
{
    char         mkey[160];
    const char  *text;

    snprintf(mkey, sizeof(mkey), "oauthbearer.%s", key);
    text = saslconf_listener_text(cfg, listener, mkey, used);
    return text != NULL ? text : saslconf_text(cfg, listener, key, used);
}

/* Kafka's OAuthBearerValidatorCallbackHandler (KIP-768): the key set of
 * sasl.oauthbearer.jwks.endpoint.url and the claim rules of the
 * sasl.oauthbearer.* keys. */
static samsa_err_t
saslconf_jwks(samsa_sasl_conf_t *c, const samsa_config_t *cfg,
              const samsa_listener_t *l, char *errstr, size_t errstr_size)
{
    samsa_jwks_conf_t  *jc;
    const char         *text, *key, *p, *comma;
    char               *end;
    long long           skew;
    samsa_err_t         err;

    jc = samsa_calloc(1, sizeof(*jc));
    samsa_jwks_conf_init(jc);
    text = saslconf_oauth_text(cfg, l->name,
                               "sasl.oauthbearer.jwks.endpoint.url", &key);
    if (text == NULL || text[0] == '\0') {
        snprintf(errstr, errstr_size, "listener %s validates OAUTHBEARER "
                 "tokens with OAuthBearerValidatorCallbackHandler but "
                 "sasl.oauthbearer.jwks.endpoint.url is not set", l->name);
        saslconf_jwks_free(jc);
        return SAMSA_ERR__CONFIG;
    }
    err = samsa_jwks_load(text, key, &jc->keys, errstr, errstr_size);
    if (err != SAMSA_ERR_NONE) {
        saslconf_jwks_free(jc);
        return err;
    }
    text = saslconf_oauth_text(cfg, l->name, "sasl.oauthbearer.sub.claim.name",
                               &key);
    if (text != NULL && text[0] != '\0') {
        samsa_free(jc->sub_claim);
        jc->sub_claim = samsa_strdup(text);
    }
    text = saslconf_oauth_text(cfg, l->name,
                               "sasl.oauthbearer.scope.claim.name", &key);
    if (text != NULL && text[0] != '\0') {
        samsa_free(jc->scope_claim);
        jc->scope_claim = samsa_strdup(text);
    }
    text = saslconf_oauth_text(cfg, l->name,
                               "sasl.oauthbearer.expected.issuer", &key);
    if (text != NULL && text[0] != '\0') {
        jc->expected_issuer = samsa_strdup(text);
    }
    text = saslconf_oauth_text(cfg, l->name,
                               "sasl.oauthbearer.expected.audience", &key);
    for (p = text; p != NULL && *p != '\0'; p = comma != NULL ? comma + 1
                                                              : NULL) {
        comma = strchr(p, ',');
        while (*p == ' ') {
            p++;
        }
        end = samsa_strndup(p, comma != NULL ? (size_t) (comma - p)
                                             : strlen(p));
        while (end[0] != '\0' && end[strlen(end) - 1] == ' ') {
            end[strlen(end) - 1] = '\0';
        }
        if (end[0] == '\0') {
            samsa_free(end);
            continue;
        }
        jc->expected_audience = samsa_realloc(
            jc->expected_audience,
            (jc->nexpected_audience + 1) * sizeof(*jc->expected_audience));
        jc->expected_audience[jc->nexpected_audience++] = end;
    }
    text = saslconf_oauth_text(cfg, l->name,
                               "sasl.oauthbearer.clock.skew.seconds", &key);
    if (text != NULL) {
        skew = strtoll(text, &end, 10);
        if (end == text || *end != '\0' || skew < 0 || skew > INT32_MAX) {
            snprintf(errstr, errstr_size, "listener %s: invalid value '%s' "
                     "for configuration '%s': a number of seconds >= 0",
                     l->name, text, key);
            saslconf_jwks_free(jc);
            return SAMSA_ERR__CONFIG;
        }
        jc->clock_skew_ms = skew * 1000;
    }
    samsa_info("listener %s: OAUTHBEARER tokens checked against %zu key(s) "
               "of %s", l->name, samsa_jwks_count(jc->keys),
               saslconf_oauth_text(cfg, l->name,
                                   "sasl.oauthbearer.jwks.endpoint.url",
                                   &key));
    c->oauth_validate = samsa_jwks_validate_fn;
    c->oauth_ctx = jc;
    c->oauth_free = saslconf_jwks_free;
    return SAMSA_ERR_NONE;
}

/* OAUTHBEARER (KIP-255): the JAAS entry's OAuthBearerLoginModule with
 * the unsecured validator's options, or (KIP-768) Kafka's JWKS validator
 * when the server callback handler names it. */
static samsa_err_t
saslconf_oauth(samsa_sasl_conf_t *c, const samsa_config_t *cfg,
               const samsa_listener_t *l, char *errstr, size_t errstr_size)
{
    const samsa_jaas_module_t  *m = NULL;
    samsa_oauth_conf_t         *oc;
    samsa_jaas_t                jaas;
    const char                 *key, *text;
    samsa_err_t                 err;
    size_t                      i;
    bool                        jwks;

    /* the config checked the value (one of the two validators) */
    text = saslconf_listener_text(cfg, l->name,
                                  "oauthbearer.sasl.server.callback.handler."
                                  "class", &key);
    if (text == NULL) {
        text = saslconf_text(cfg, l->name,
                             "sasl.server.callback.handler.class", &key);
    }
    jwks = text != NULL
           && (strcmp(text, SASLCONF_OAUTH_JWKS_HANDLER) == 0
               || strcmp(text, SASLCONF_OAUTH_JWKS_HANDLER_OLD) == 0);
    if (text != NULL && !jwks
        && strcmp(text, SASLCONF_OAUTH_UNSECURED_HANDLER) != 0) {
        snprintf(errstr, errstr_size, "listener %s: %s is '%s': Samsa "
                 "validates OAUTHBEARER tokens as Kafka's %s (unsecured "
                 "JWTs) or %s (JWKS, KIP-768) does", l->name, key, text,
                 SASLCONF_OAUTH_UNSECURED_HANDLER,
                 SASLCONF_OAUTH_JWKS_HANDLER);
        return SAMSA_ERR__CONFIG;
    }
    text = saslconf_jaas_text(cfg, l->name, "OAUTHBEARER", &key);
    if (text == NULL) {
        snprintf(errstr, errstr_size, "listener %s enables SASL mechanism "
                 "OAUTHBEARER but has no JAAS configuration: set "
                 "listener.name.<listener>.oauthbearer.sasl.jaas.config (or "
                 "sasl.jaas.config) to '%s required;'", l->name,
                 SASLCONF_OAUTH_MODULE);
        return SAMSA_ERR__CONFIG;
    }
    err = saslconf_jaas(text, key, l->name, SASLCONF_OAUTH_MODULE, &jaas, &m,
                        errstr, errstr_size);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    if (jwks) {
        /* the module's options are the broker's own login's, not the
         * validator's (Kafka's configures it from sasl.oauthbearer.*) */
        samsa_jaas_fini(&jaas);
        return saslconf_jwks(c, cfg, l, errstr, errstr_size);
    }
    oc = samsa_calloc(1, sizeof(*oc));
    samsa_oauth_conf_init(oc);
    for (i = 0; err == SAMSA_ERR_NONE && i < m->nopts; i++) {
        err = saslconf_oauth_opt(oc, &m->opts[i], key, l->name, errstr,
                                 errstr_size);
    }
    samsa_jaas_fini(&jaas);
    if (err != SAMSA_ERR_NONE) {
        saslconf_oauth_free(oc);
        return err;
    }
    c->oauth_validate = samsa_oauth_unsecured_validate;
    c->oauth_ctx = oc;
    c->oauth_free = saslconf_oauth_free;
    return SAMSA_ERR_NONE;
}

static samsa_err_t
saslconf_listener(samsa_sasl_conf_t *c, const samsa_config_t *cfg,
                  const samsa_listener_t *l, char *errstr, size_t errstr_size)
{
    const char  *key, *text;
    samsa_err_t  err;

    err = saslconf_mechs(c, cfg, l, errstr, errstr_size);
    if (err == SAMSA_ERR_NONE && (c->mechs & SAMSA_SASL_M_PLAIN) != 0) {
        err = saslconf_plain(c, cfg, l, errstr, errstr_size);
    }
    if (err == SAMSA_ERR_NONE && (c->mechs & SAMSA_SASL_M_SCRAM_SHA_256) != 0) {
        err = saslconf_scram(cfg, l, "SCRAM-SHA-256", errstr, errstr_size);
    }
    if (err == SAMSA_ERR_NONE && (c->mechs & SAMSA_SASL_M_SCRAM_SHA_512) != 0) {
        err = saslconf_scram(cfg, l, "SCRAM-SHA-512", errstr, errstr_size);
    }
    if (err == SAMSA_ERR_NONE && (c->mechs & SAMSA_SASL_M_OAUTHBEARER) != 0) {
        err = saslconf_oauth(c, cfg, l, errstr, errstr_size);
    }
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    text = saslconf_text(cfg, l->name, "connections.max.reauth.ms", &key);
    c->reauth_ms = 0;
    if (text != NULL) {
        c->reauth_ms = strtoll(text, NULL, 10);   /* checked by config */
    }
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_saslconf_open(samsa_saslconf_t *sc, const samsa_config_t *cfg,
                    samsa_sasl_scram_lookup_fn lookup, void *ctx,
                    char *errstr, size_t errstr_size)
{
    const samsa_listener_t  *l;
    samsa_sasl_conf_t       *c;
    samsa_err_t              err;
    size_t                   i, j;
    char                     names[96];

    sc->n = cfg->nlisteners;
    sc->conf = samsa_calloc(cfg->nlisteners + 1, sizeof(*sc->conf));
    for (i = 0; i < cfg->nlisteners; i++) {
        l = &cfg->listeners[i];
        if (!samsa_saslconf_is_sasl(l->security_protocol)) {
            continue;
        }
        c = sc->conf[i] = samsa_calloc(1, sizeof(*c));
        c->scram_lookup = lookup;
        c->scram_ctx = ctx;
        err = saslconf_listener(c, cfg, l, errstr, errstr_size);
        if (err != SAMSA_ERR_NONE) {
            return err;
        }
        names[0] = '\0';
        for (j = 0; j < c->nmech_names; j++) {
            snprintf(names + strlen(names), sizeof(names) - strlen(names),
                     "%s%s", j > 0 ? "," : "", c->mech_names[j]);
        }
        samsa_info("listener %s: SASL ready (%s; %zu PLAIN users; "
                   "connections.max.reauth.ms %lld)", l->name, names,
                   c->nplain_users, (long long) c->reauth_ms);
    }
    return SAMSA_ERR_NONE;
}

void
samsa_saslconf_fini(samsa_saslconf_t *sc)
{
    size_t  i;

    for (i = 0; sc->conf != NULL && i < sc->n; i++) {
        if (sc->conf[i] != NULL) {
            samsa_sasl_conf_fini(sc->conf[i]);
            samsa_free(sc->conf[i]);
        }
    }
    samsa_free(sc->conf);
    sc->conf = NULL;
    sc->n = 0;
}
