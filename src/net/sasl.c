/*
 * net/sasl.c - SASL authentication of one connection, server side: the
 * states of Kafka's SaslServerAuthenticator, PLAIN (PlainSaslServer with
 * the JAAS users) and SCRAM-SHA-256/512 (ScramSaslServer over
 * net/scram.c).  See sasl.h.
 * Threads: the connection's network thread.
 */
#include "net/sasl.h"

#include <stdio.h>
#include <string.h>

#include "proto/gen/apis.h"
#include "util/alloc.h"
#include "util/diag.h"
#include "util/time.h"

/* Kafka's message for a SaslException (details withheld: they may say
 * whether the user exists). */
#define SASL_MAX_LIFETIME_MS  (100LL * 365 * 24 * 3600 * 1000)

#define SASL_INVALID_CREDENTIALS                                          \
    "Authentication failed during %s due to invalid credentials with "    \
    "SASL mechanism %s"

unsigned
samsa_sasl_mech_from_name(samsa_slice_t name)
{
    if (samsa_slice_eq(name, samsa_slice_cstr("PLAIN"))) {
        return SAMSA_SASL_M_PLAIN;
    }
    if (samsa_slice_eq(name, samsa_slice_cstr("SCRAM-SHA-256"))) {
        return SAMSA_SASL_M_SCRAM_SHA_256;
    }
    if (samsa_slice_eq(name, samsa_slice_cstr("SCRAM-SHA-512"))) {
        return SAMSA_SASL_M_SCRAM_SHA_512;
    }
    if (samsa_slice_eq(name, samsa_slice_cstr("OAUTHBEARER"))) {
        return SAMSA_SASL_M_OAUTHBEARER;
    }
    return 0;
}

const char *
samsa_sasl_mech_name(unsigned mech)
{
    switch (mech) {
    case SAMSA_SASL_M_PLAIN:
        return "PLAIN";
    case SAMSA_SASL_M_SCRAM_SHA_256:
        return "SCRAM-SHA-256";
    case SAMSA_SASL_M_SCRAM_SHA_512:
        return "SCRAM-SHA-512";
    case SAMSA_SASL_M_OAUTHBEARER:
        return "OAUTHBEARER";
    default:
        return "?";
    }
}

void
samsa_sasl_init(samsa_sasl_t *sasl, const samsa_sasl_conf_t *conf)
{
    memset(sasl, 0, sizeof(*sasl));
    sasl->conf = conf;
    sasl->state = SAMSA_SASL_HANDSHAKE_OR_VERSIONS;
}

static void
sasl_scram_reset(samsa_sasl_t *sasl)
{
    samsa_free(sasl->auth_message);
    samsa_free(sasl->nonce);
    sasl->auth_message = NULL;
    sasl->nonce = NULL;
    sasl->scram_step = 0;
    memset(&sasl->cred, 0, sizeof(sasl->cred));
}

void
samsa_sasl_fini(samsa_sasl_t *sasl)
{
    sasl_scram_reset(sasl);
}

bool
samsa_sasl_expects_raw(const samsa_sasl_t *sasl)
{
    return sasl->state == SAMSA_SASL_AUTHENTICATE && !sasl->kafka_headers;
}

static const char *
sasl_api_name(int16_t api_key)
{
    const samsa_proto_api_t  *api = samsa_proto_api_find(api_key);

    return api != NULL ? api->enum_name : "UNKNOWN";
}

samsa_sasl_route_t
samsa_sasl_route(samsa_sasl_t *sasl, int16_t api_key, int64_t now_ns,
                 char *why, size_t why_size)
{
    switch (sasl->state) {
    case SAMSA_SASL_HANDSHAKE_OR_VERSIONS:
        if (api_key == SAMSA_API_ApiVersions) {
            sasl->state = SAMSA_SASL_HANDSHAKE;
            return SAMSA_SASL_ROUTE_HANDLERS;
        }
        /* fall through */
    case SAMSA_SASL_HANDSHAKE:
    case SAMSA_SASL_REAUTH_HANDSHAKE:
        if (api_key == SAMSA_API_SaslHandshake) {
            return SAMSA_SASL_ROUTE_HANDSHAKE;
        }
        if (api_key == SAMSA_API_ApiVersions) {
            snprintf(why, why_size, "Unexpected ApiVersions request "
                     "received during SASL authentication state "
                     "HANDSHAKE_REQUEST");
        } else {
            snprintf(why, why_size, "Unexpected Kafka request of type %s "
                     "during SASL handshake.", sasl_api_name(api_key));
        }
        sasl->state = SAMSA_SASL_FAILED;
        return SAMSA_SASL_ROUTE_CLOSE;
    case SAMSA_SASL_AUTHENTICATE:
        if (!sasl->kafka_headers) {
            return SAMSA_SASL_ROUTE_RAW_TOKEN;
        }
        if (api_key == SAMSA_API_SaslAuthenticate) {
            return SAMSA_SASL_ROUTE_AUTHENTICATE;
        }
        snprintf(why, why_size, "Unexpected Kafka request of type %s "
                 "during SASL authentication.", sasl_api_name(api_key));
        sasl->state = SAMSA_SASL_FAILED;
        return SAMSA_SASL_ROUTE_CLOSE;
    case SAMSA_SASL_COMPLETE:
        if (api_key == SAMSA_API_SaslHandshake && sasl->conf->reauth_ms > 0
            && sasl->kafka_headers) {
            /* KIP-368: re-authentication starts with a new handshake */
            sasl->state = SAMSA_SASL_REAUTH_HANDSHAKE;
            return SAMSA_SASL_ROUTE_HANDSHAKE;
        }
        if (sasl->session_end_ns != 0 && now_ns > sasl->session_end_ns) {
            snprintf(why, why_size, "the SASL session of %s expired "
                     "(connections.max.reauth.ms) without "
                     "re-authentication", sasl->user);
            sasl->state = SAMSA_SASL_FAILED;
            return SAMSA_SASL_ROUTE_CLOSE;
        }
        return SAMSA_SASL_ROUTE_HANDLERS;
    case SAMSA_SASL_FAILED:
    default:
        snprintf(why, why_size, "SASL authentication failed before");
        return SAMSA_SASL_ROUTE_CLOSE;
    }
}

static void
sasl_fail(samsa_sasl_t *sasl, samsa_sasl_result_t *res, int16_t error,
          const char *message)
{
    res->error = error;
    snprintf(res->message, sizeof(res->message), "%s", message);
    res->token_len = 0;
    res->close = true;
    sasl->state = SAMSA_SASL_FAILED;
    sasl_scram_reset(sasl);
}

void
samsa_sasl_handshake(samsa_sasl_t *sasl, int16_t version,
                     samsa_slice_t mechanism, samsa_sasl_result_t *res)
{
    unsigned  mech = samsa_sasl_mech_from_name(mechanism);
    bool      reauth = sasl->state == SAMSA_SASL_REAUTH_HANDSHAKE;

    memset(res, 0, sizeof(*res));
    if (mech == 0 || (sasl->conf->mechs & mech) == 0) {
        sasl_fail(sasl, res, SAMSA_ERR_UNSUPPORTED_SASL_MECHANISM, "");
        return;
    }
    if (reauth && mech != sasl->mech) {
        /* Kafka's REAUTH_BAD_MECHANISM: the answer is fine, the next
         * token fails */
        sasl_fail(sasl, res, SAMSA_ERR_NONE, "");
        res->close = false;
        sasl->state = SAMSA_SASL_AUTHENTICATE;
        sasl->mech = 0;
        sasl->kafka_headers = true;
        return;
    }
    if (reauth) {
        snprintf(sasl->prev_user, sizeof(sasl->prev_user), "%s",
                 sasl->user);
        sasl->prev_mech = sasl->mech;
    }
    sasl->reauth = reauth;
    sasl->mech = mech;
    sasl->kafka_headers = version >= 1;
    sasl->state = SAMSA_SASL_AUTHENTICATE;
    sasl_scram_reset(sasl);
    res->error = SAMSA_ERR_NONE;
}

samsa_err_t
samsa_sasl_plain_parse(samsa_slice_t msg, samsa_sasl_plain_t *out,
                       char *errstr, size_t errstr_size)
{
    const char  *p = msg.ptr, *end = msg.ptr + msg.len;
    const char  *nul1, *nul2;
    size_t       tokens = 1;

    for (const char *q = p; q < end; q++) {
        tokens += *q == '\0';
    }
    if (msg.len == 0 || tokens != 3) {
        /* Kafka splits with a limit of -1: trailing empty parts count */
        snprintf(errstr, errstr_size, "Invalid SASL/PLAIN response: "
                 "expected 3 tokens, got %zu", msg.len == 0 ? 1 : tokens);
        return SAMSA_ERR__BAD_MSG;
    }
    nul1 = memchr(p, '\0', msg.len);
    nul2 = memchr(nul1 + 1, '\0', (size_t) (end - nul1 - 1));
    out->authzid = (samsa_slice_t) { p, (size_t) (nul1 - p) };
    out->user = (samsa_slice_t) { nul1 + 1, (size_t) (nul2 - nul1 - 1) };
    out->password = (samsa_slice_t) { nul2 + 1, (size_t) (end - nul2 - 1) };
    return SAMSA_ERR_NONE;
}

/* Equal in time independent of where they differ: SHA-256 of each,
 * compared with every byte visited. */
static bool
sasl_secret_eq(samsa_slice_t a, const char *b)
{
    uint8_t   ha[32], hb[32];
    uint8_t   diff = 0;
    size_t    i;

    samsa_scram_hash(SAMSA_SCRAM_SHA_256, a.ptr, a.len, ha);
    samsa_scram_hash(SAMSA_SCRAM_SHA_256, b, strlen(b), hb);
    for (i = 0; i < sizeof(ha); i++) {
        diff |= (uint8_t) (ha[i] ^ hb[i]);
    }
    return diff == 0;
}

static void
sasl_plain(samsa_sasl_t *sasl, samsa_slice_t token, samsa_sasl_result_t *res)
{
    const samsa_sasl_conf_t  *conf = sasl->conf;
    samsa_sasl_plain_t        pm;
    char                      msg[192];
    bool                      ok = false;
    size_t                    i;

    if (samsa_sasl_plain_parse(token, &pm, msg, sizeof(msg))
        != SAMSA_ERR_NONE) {
        sasl_fail(sasl, res, SAMSA_ERR_SASL_AUTHENTICATION_FAILED, msg);
        return;
    }
    if (pm.user.len == 0) {
        sasl_fail(sasl, res, SAMSA_ERR_SASL_AUTHENTICATION_FAILED,
                  "Authentication failed: username not specified");
        return;
    }
    if (pm.password.len == 0) {
        sasl_fail(sasl, res, SAMSA_ERR_SASL_AUTHENTICATION_FAILED,
                  "Authentication failed: password not specified");
        return;
    }
    for (i = 0; i < conf->nplain_users; i++) {
        if (samsa_slice_eq(pm.user, samsa_slice_cstr(conf->plain_users[i].name))) {
            ok = sasl_secret_eq(pm.password, conf->plain_users[i].password);
            break;
        }
    }
    if (!ok || pm.user.len >= sizeof(sasl->user)
        || memchr(pm.user.ptr, '\0', pm.user.len) != NULL) {
        sasl_fail(sasl, res, SAMSA_ERR_SASL_AUTHENTICATION_FAILED,
                  SAMSA_SASL_PLAIN_BAD_PASSWORD);
        return;
    }
    if (pm.authzid.len > 0 && !samsa_slice_eq(pm.authzid, pm.user)) {
        sasl_fail(sasl, res, SAMSA_ERR_SASL_AUTHENTICATION_FAILED,
                  "Authentication failed: Client requested an "
                  "authorization id that is different from username");
        return;
    }
    memcpy(sasl->user, pm.user.ptr, pm.user.len);
    sasl->user[pm.user.len] = '\0';
    res->complete = true;
}

/* A SaslException's answer: Kafka's generic message. */
static void
sasl_scram_invalid(samsa_sasl_t *sasl, samsa_sasl_result_t *res)
{
    char  msg[192];

    snprintf(msg, sizeof(msg), SASL_INVALID_CREDENTIALS,
             sasl->reauth ? "re-authentication" : "authentication",
             samsa_sasl_mech_name(sasl->mech));
    sasl_fail(sasl, res, SAMSA_ERR_SASL_AUTHENTICATION_FAILED, msg);
}

static samsa_scram_mech_t
sasl_scram_mech(unsigned mech)
{
    return mech == SAMSA_SASL_M_SCRAM_SHA_512 ? SAMSA_SCRAM_SHA_512
                                              : SAMSA_SCRAM_SHA_256;
}

static void
sasl_scram_first(samsa_sasl_t *sasl, samsa_slice_t token,
                 samsa_sasl_result_t *res)
{
    const samsa_sasl_conf_t     *conf = sasl->conf;
    samsa_scram_client_first_t   cf;
    char                         err[192], snonce[48], salt[180];
    char                        *sfirst;
    size_t                       len;
    int                          n;

    if (samsa_scram_parse_client_first(token, &cf, err, sizeof(err))
            != SAMSA_ERR_NONE
        || cf.tokenauth) {
        sasl_scram_invalid(sasl, res);    /* delegation tokens: none */
        return;
    }
    if (conf->scram_lookup == NULL
        || !conf->scram_lookup(conf->scram_ctx, sasl_scram_mech(sasl->mech),
                               cf.username, &sasl->cred)) {
        sasl_scram_invalid(sasl, res);
        return;
    }
    if (cf.authzid.len > 0
        && !samsa_slice_eq(cf.authzid, samsa_slice_cstr(cf.username))) {
        sasl_fail(sasl, res, SAMSA_ERR_SASL_AUTHENTICATION_FAILED,
                  "Authentication failed: Client requested an "
                  "authorization id that is different from username");
        return;
    }
    if (sasl->cred.iterations < SAMSA_SCRAM_MIN_ITERATIONS
        || samsa_scram_nonce(snonce, sizeof(snonce)) != SAMSA_ERR_NONE
        || samsa_scram_b64_encode(sasl->cred.salt, sasl->cred.salt_len, salt,
                                  sizeof(salt)) != SAMSA_ERR_NONE) {
        sasl_scram_invalid(sasl, res);
        return;
    }
    snprintf(sasl->user, sizeof(sasl->user), "%s", cf.username);
    len = cf.nonce.len + strlen(snonce);
    sasl->nonce = samsa_malloc(len + 1);
    memcpy(sasl->nonce, cf.nonce.ptr, cf.nonce.len);
    memcpy(sasl->nonce + cf.nonce.len, snonce, strlen(snonce) + 1);
    n = snprintf((char *) res->token, sizeof(res->token), "r=%s,s=%s,i=%d",
                 sasl->nonce, salt, (int) sasl->cred.iterations);
    if (n < 0 || (size_t) n >= sizeof(res->token)) {
        sasl_scram_invalid(sasl, res);
        return;
    }
    res->token_len = (size_t) n;
    sfirst = (char *) res->token;
    len = cf.bare.len + 1 + (size_t) n;
    sasl->auth_message = samsa_malloc(len + 1);
    memcpy(sasl->auth_message, cf.bare.ptr, cf.bare.len);
    sasl->auth_message[cf.bare.len] = ',';
    memcpy(sasl->auth_message + cf.bare.len + 1, sfirst, (size_t) n);
    sasl->auth_message[len] = '\0';
    sasl->scram_step = 1;
}

static void
sasl_scram_final(samsa_sasl_t *sasl, samsa_slice_t token,
                 samsa_sasl_result_t *res)
{
    samsa_scram_mech_t           mech = sasl_scram_mech(sasl->mech);
    samsa_scram_client_final_t   fin;
    uint8_t                      sig[SAMSA_SCRAM_MAX_HASH];
    char                         err[192], sig64[100];
    char                        *am;
    size_t                       amlen, base, nlen;
    bool                         ok;
    int                          n;

    nlen = strlen(sasl->nonce);
    /* Kafka checks that the client's nonce ends with the server's (as
     * librdkafka sends it: its own nonce again in front) */
    if (samsa_scram_parse_client_final(token, &fin, err, sizeof(err))
            != SAMSA_ERR_NONE
        || fin.nonce.len < nlen
        || memcmp(fin.nonce.ptr + fin.nonce.len - nlen, sasl->nonce, nlen)
               != 0) {
        sasl_scram_invalid(sasl, res);
        return;
    }
    base = strlen(sasl->auth_message);
    amlen = base + 1 + fin.without_proof.len;
    am = samsa_malloc(amlen + 1);
    memcpy(am, sasl->auth_message, base);
    am[base] = ',';
    memcpy(am + base + 1, fin.without_proof.ptr, fin.without_proof.len);
    am[amlen] = '\0';
    ok = samsa_scram_verify_proof(&sasl->cred, am, amlen, fin.proof,
                                  fin.proof_len);
    if (ok) {
        samsa_scram_server_signature(mech, sasl->cred.server_key, am, amlen,
                                     sig);
    }
    samsa_free(am);
    if (!ok || samsa_scram_b64_encode(sig, samsa_scram_hash_len(mech), sig64,
                                      sizeof(sig64)) != SAMSA_ERR_NONE) {
        sasl_scram_invalid(sasl, res);
        return;
    }
    n = snprintf((char *) res->token, sizeof(res->token), "v=%s", sig64);
    res->token_len = (size_t) n;
    res->complete = true;
    sasl_scram_reset(sasl);
}

/* Kafka's OAuthBearerSaslServer.evaluateResponse: the client's initial
 * response, its token checked by the listener's validator; a failed token
 * gets the RFC 7628 error JSON as a challenge, and the client's ^A after
 * it fails the exchange with that JSON as the message. */
static void
sasl_oauth(samsa_sasl_t *sasl, samsa_slice_t token, samsa_sasl_result_t *res)
{
    const samsa_sasl_conf_t  *conf = sasl->conf;
    samsa_oauth_initial_t     ir;
    samsa_oauth_token_t       t;
    char                      why[192];
    samsa_err_t               err;
    size_t                    n;

    if (token.len == 1 && token.ptr[0] == '\x01' && sasl->oauth_error_sent) {
        sasl_fail(sasl, res, SAMSA_ERR_SASL_AUTHENTICATION_FAILED,
                  sasl->oauth_error);
        return;
    }
    sasl->oauth_error_sent = false;
    if (samsa_oauth_parse_initial(token, &ir, why, sizeof(why))
        != SAMSA_ERR_NONE) {
        samsa_debug("sasl: OAUTHBEARER: %s", why);
        sasl_scram_invalid(sasl, res);
        return;
    }
    err = conf->oauth_validate != NULL
              ? conf->oauth_validate(conf->oauth_ctx, ir.token,
                                     samsa_wall_ms(), &t)
              : SAMSA_ERR_SASL_AUTHENTICATION_FAILED;
    if (conf->oauth_validate == NULL) {
        memset(&t, 0, sizeof(t));
        snprintf(t.status, sizeof(t.status), "invalid_token");
    }
    if (err != SAMSA_ERR_NONE) {
        samsa_info("sasl: OAUTHBEARER token refused: %s", t.why);
        res->token_len = samsa_oauth_error_json(&t, (char *) res->token,
                                                sizeof(res->token));
        n = res->token_len < sizeof(sasl->oauth_error)
                ? res->token_len : sizeof(sasl->oauth_error) - 1;
        memcpy(sasl->oauth_error, res->token, n);
        sasl->oauth_error[n] = '\0';
        sasl->oauth_error_sent = true;
        return;                         /* a challenge, not complete */
    }
    if (ir.authzid.len > 0
        && !samsa_slice_eq(ir.authzid, samsa_slice_cstr(t.principal))) {
        snprintf(why, sizeof(why), "Authentication failed: Client requested "
                 "an authorization id (%.*s) that is different from the "
                 "token's principal name (%.64s)",
                 (int) (ir.authzid.len > 64 ? 64 : ir.authzid.len),
                 ir.authzid.ptr, t.principal);
        sasl_fail(sasl, res, SAMSA_ERR_SASL_AUTHENTICATION_FAILED, why);
        return;
    }
    if (strlen(t.principal) >= sizeof(sasl->user)) {
        sasl_scram_invalid(sasl, res);
        return;
    }
    snprintf(sasl->user, sizeof(sasl->user), "%s", t.principal);
    sasl->oauth_lifetime_ms = t.lifetime_ms;
    res->complete = true;
}

/* Kafka's calcCompletionTimesAndReturnSessionLifetimeMs: the shorter of
 * connections.max.reauth.ms (0: none) and what the credential has left
 * (OAUTHBEARER: the token's "exp"); at least 1 ms for a credential that
 * ends; 0: the session does not expire. */
static int64_t
sasl_session_lifetime(const samsa_sasl_t *sasl)
{
    int64_t  life = sasl->conf->reauth_ms, left;

    if (sasl->mech == SAMSA_SASL_M_OAUTHBEARER
        && sasl->oauth_lifetime_ms > 0) {
        left = sasl->oauth_lifetime_ms - samsa_wall_ms();
        left = left > 1 ? left : 1;
        /* a token for centuries: a session end the clock can hold */
        left = left < SASL_MAX_LIFETIME_MS ? left : SASL_MAX_LIFETIME_MS;
        life = life > 0 && life < left ? life : left;
    }
    return life;
}

void
samsa_sasl_token(samsa_sasl_t *sasl, int16_t auth_version,
                 samsa_slice_t token, int64_t now_ns,
                 samsa_sasl_result_t *res)
{
    int64_t  life;

    memset(res, 0, sizeof(*res));
    if (sasl->state != SAMSA_SASL_AUTHENTICATE) {
        sasl_fail(sasl, res, SAMSA_ERR_ILLEGAL_SASL_STATE,
                  "Unexpected SASL token in this SASL state");
        return;
    }
    switch (sasl->mech) {
    case SAMSA_SASL_M_PLAIN:
        sasl_plain(sasl, token, res);
        break;
    case SAMSA_SASL_M_SCRAM_SHA_256:
    case SAMSA_SASL_M_SCRAM_SHA_512:
        if (sasl->scram_step == 0) {
            sasl_scram_first(sasl, token, res);
        } else {
            sasl_scram_final(sasl, token, res);
        }
        break;
    case SAMSA_SASL_M_OAUTHBEARER:
        sasl_oauth(sasl, token, res);
        break;
    default:
        /* REAUTH_BAD_MECHANISM */
        sasl_fail(sasl, res, SAMSA_ERR_SASL_AUTHENTICATION_FAILED,
                  "SASL mechanism changed on re-authentication");
        return;
    }
    if (!res->complete) {
        return;
    }
    if (sasl->reauth && (strcmp(sasl->user, sasl->prev_user) != 0
                         || sasl->mech != sasl->prev_mech)) {
        sasl_fail(sasl, res, SAMSA_ERR_SASL_AUTHENTICATION_FAILED,
                  "Cannot change principals during re-authentication");
        res->complete = false;
        return;
    }
    sasl->state = SAMSA_SASL_COMPLETE;
    sasl->reauth = false;
    life = sasl_session_lifetime(sasl);
    if (life > 0 && auth_version >= 1) {
        /* only clients that can re-authenticate get a lifetime (Kafka:
         * connectedClientSupportsReauthentication) */
        res->session_lifetime_ms = life;
        sasl->session_end_ns = now_ns + life * 1000000;
    } else {
        sasl->session_end_ns = 0;
    }
}

void
samsa_sasl_conf_fini(samsa_sasl_conf_t *conf)
{
    size_t  i;

    for (i = 0; i < conf->nmech_names; i++) {
        samsa_free(conf->mech_names[i]);
    }
    samsa_free(conf->mech_names);
    for (i = 0; i < conf->nplain_users; i++) {
        samsa_free(conf->plain_users[i].name);
        samsa_free(conf->plain_users[i].password);
    }
    samsa_free(conf->plain_users);
    if (conf->oauth_free != NULL) {
        conf->oauth_free(conf->oauth_ctx);
    }
    memset(conf, 0, sizeof(*conf));
}
