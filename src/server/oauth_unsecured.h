/*
 * server/oauth_unsecured.h - Kafka's OAuthBearerUnsecuredValidatorCallbackHandler,
 * the default token validator of a listener's OAUTHBEARER (KIP-255): a JWS
 * with "alg":"none" and no signature whose principal, "exp", "iat" and
 * scope claims are checked against the clock and the required scope, with
 * Kafka's messages.  Signed tokens checked against a JWKS endpoint
 * (KIP-768) are not implemented.
 *
 * Pure code: no I/O, no global state (the clock is the caller's).
 * Threads: any; a samsa_oauth_conf_t is read-only once built (the
 * listener's network threads share it).
 */
#ifndef SAMSA_SERVER_OAUTH_UNSECURED_H
#define SAMSA_SERVER_OAUTH_UNSECURED_H

#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>

#include "net/oauthbearer.h"
#include "util/slice.h"

/* The validator's options (the JAAS entry's unsecuredValidator*). */
typedef struct samsa_oauth_conf {
    char     *principal_claim;          /* unsecuredValidatorPrincipalClaimName,
                                           "sub" */
    char     *scope_claim;              /* unsecuredValidatorScopeClaimName,
                                           "scope" */
    char    **required_scope;           /* unsecuredValidatorRequiredScope,
                                           split at spaces */
    size_t    nrequired_scope;
    int64_t   clock_skew_ms;            /* unsecuredValidatorAllowableClockSkewMs,
                                           >= 0 */
} samsa_oauth_conf_t;

/* Base64 (the URL alphabet or the standard one, padding optional: JWS
 * parts, JWK members) into a new NUL-terminated buffer of *outlen bytes
 * (samsa_free); NULL if it is not Base64. */
char *samsa_oauth_b64_decode(const char *p, size_t n, size_t *outlen);

/* Defaults: "sub", "scope", no scope required, no skew. */
void samsa_oauth_conf_init(samsa_oauth_conf_t *c);
void samsa_oauth_conf_fini(samsa_oauth_conf_t *c);

/* Validate an unsecured JWS (compact serialization) at now_ms: NONE with
 * out->principal and the times, else SAMSA_ERR_SASL_AUTHENTICATION_FAILED
 * with out->status, out->scope and out->why. */
SAMSA_MUST_CHECK samsa_err_t samsa_oauth_validate_unsecured(
    const samsa_oauth_conf_t *c, samsa_slice_t token, int64_t now_ms,
    samsa_oauth_token_t *out);

/* samsa_oauth_validate_unsecured as a samsa_sasl_oauth_validate_fn (ctx:
 * the samsa_oauth_conf_t). */
samsa_err_t samsa_oauth_unsecured_validate(void *ctx, samsa_slice_t token,
                                           int64_t now_ms,
                                           samsa_oauth_token_t *out);

#endif /* SAMSA_SERVER_OAUTH_UNSECURED_H */
