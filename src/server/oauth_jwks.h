/*
 * server/oauth_jwks.h - Kafka's OAuthBearerValidatorCallbackHandler
 * (KIP-768): an OAUTHBEARER token is a JWS signed by the identity
 * provider, checked against the keys of its JSON Web Key Set (RFC 7517)
 * and then its claims, as Kafka's BrokerJwtValidator has jose4j check them:
 *
 * - the header's "alg" one of RS256/384/512 (RSASSA-PKCS1-v1_5), PS256/384/
 *   512 (RSASSA-PSS) or ES256/384/512 (ECDSA on P-256/P-384/P-521); never
 *   "none";
 * - the key: the JWK with the header's "kid" (without one, the set's only
 *   key fit for the algorithm); a JWK's "use", when present, must be
 *   "sig" and its "alg", when present, the token's;
 * - the claims: "exp" and "iat" required, "exp" and "nbf" checked against
 *   the clock with sasl.oauthbearer.clock.skew.seconds; the principal claim
 *   (sasl.oauthbearer.sub.claim.name) a non-empty string;
 *   sasl.oauthbearer.expected.issuer and .expected.audience when set; the
 *   scope claim (sasl.oauthbearer.scope.claim.name), when present, a
 *   string or a list of strings.
 *
 * The key set comes from sasl.oauthbearer.jwks.endpoint.url as a file:
 * URL, read once at start (Kafka's file-based JWKS).  http(s) endpoints
 * (fetched and refreshed) are not implemented.
 *
 * Keys are OpenSSL EVP_PKEYs built from the JWK members; JSON through
 * jansson.  Threads: built on the main thread, then read-only (the
 * listener's network threads validate concurrently: EVP_PKEYs may be shared
 * for verification).
 */
#ifndef SAMSA_SERVER_OAUTH_JWKS_H
#define SAMSA_SERVER_OAUTH_JWKS_H

#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>

#include "net/oauthbearer.h"
#include "util/slice.h"

typedef struct samsa_jwks samsa_jwks_t;

/* The validator's settings (Kafka's sasl.oauthbearer.* broker keys). */
typedef struct samsa_jwks_conf {
    char         *sub_claim;            /* sasl.oauthbearer.sub.claim.name */
    char         *scope_claim;          /* sasl.oauthbearer.scope.claim.name */
    char         *expected_issuer;      /* NULL: any */
    char        **expected_audience;    /* none: not checked */
    size_t        nexpected_audience;
    int64_t       clock_skew_ms;
    samsa_jwks_t *keys;
} samsa_jwks_conf_t;

/* Parse a JWK Set document (text of len bytes).  Keys of other types
 * (oct, OKP) or uses (enc) are left out; an RSA or EC key whose members
 * are missing or malformed is an error.  SAMSA_ERR__CONFIG with errstr
 * (prefixed by what, e.g. the key and the file) when the document is not
 * a JWK Set or holds no usable key. */
SAMSA_MUST_CHECK samsa_err_t samsa_jwks_parse(const char *text, size_t len,
                                              const char *what,
                                              samsa_jwks_t **out,
                                              char *errstr,
                                              size_t errstr_size);

/* Read the JWK Set at url (file:/path or file:///path); key names the
 * setting in errors.  SAMSA_ERR__CONFIG for another scheme (http and
 * https: not implemented), an unreadable file or samsa_jwks_parse's
 * errors. */
SAMSA_MUST_CHECK samsa_err_t samsa_jwks_load(const char *url, const char *key,
                                             samsa_jwks_t **out, char *errstr,
                                             size_t errstr_size);

/* How many keys the set holds. */
size_t samsa_jwks_count(const samsa_jwks_t *k);

void samsa_jwks_free(samsa_jwks_t *k);

/* Defaults: "sub", "scope", no issuer or audience, 30 s of skew, no keys. */
void samsa_jwks_conf_init(samsa_jwks_conf_t *c);
void samsa_jwks_conf_fini(samsa_jwks_conf_t *c);

/* Validate token (compact JWS) at now_ms: NONE with out->principal,
 * lifetime_ms ("exp") and start_ms ("iat"), else
 * SAMSA_ERR_SASL_AUTHENTICATION_FAILED with out->status "invalid_token"
 * and out->why. */
SAMSA_MUST_CHECK samsa_err_t samsa_jwks_validate(const samsa_jwks_conf_t *c,
                                                 samsa_slice_t token,
                                                 int64_t now_ms,
                                                 samsa_oauth_token_t *out);

/* samsa_jwks_validate as a samsa_sasl_oauth_validate_fn (ctx: the
 * samsa_jwks_conf_t). */
samsa_err_t samsa_jwks_validate_fn(void *ctx, samsa_slice_t token,
                                   int64_t now_ms, samsa_oauth_token_t *out);

#endif /* SAMSA_SERVER_OAUTH_JWKS_H */
