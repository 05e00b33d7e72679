/*
 * client/oauth_login.h - the token a client sends with SASL OAUTHBEARER
 * when no token endpoint is configured: Kafka's default login callback
 * handler, OAuthBearerUnsecuredLoginCallbackHandler, which makes an
 * unsecured JWS (header {"alg":"none"}, no signature) from the options of
 * the OAuthBearerLoginModule entry in sasl.jaas.config:
 *
 *   unsecuredLoginStringClaim_<name>="value"    a string claim
 *   unsecuredLoginNumberClaim_<name>="number"   a number claim
 *   unsecuredLoginListClaim_<name>="|a|b"       a list claim: the first
 *                                               character is the delimiter
 *   unsecuredLoginExtension_<name>="value"      a SASL extension (RFC 7628)
 *   unsecuredLoginPrincipalClaimName            default "sub"
 *   unsecuredLoginScopeClaimName                default "scope"
 *   unsecuredLoginLifetimeSeconds               default 3600
 *
 * The claims hold "exp" (now + lifetime) and "iat" (now), in seconds, which
 * no option may set; the principal claim must be a non-empty string.  Such
 * a token only passes a broker that validates unsecured tokens (Kafka's
 * default OAuthBearerUnsecuredValidatorCallbackHandler, samsa-server's
 * server/oauth_unsecured.c): it is for development and tests, as Kafka's
 * documentation says of it.
 * Threads: pure functions.
 */
#ifndef SAMSA_CLIENT_OAUTH_LOGIN_H
#define SAMSA_CLIENT_OAUTH_LOGIN_H

#include <stdint.h>

#include <samsa/errors.h>

#include "client/jaas_conf.h"
#include "util/buf.h"

#define SAMSA_JAAS_OAUTHBEARER_MODULE \
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"

/* The token ("<header>.<claims>." in base64url without padding) at now_ms
 * (wall clock) into token, and the extensions into extensions as the
 * initial response carries them ("\x01name=value" each, in the options'
 * order).  Both are NUL-terminated (len excludes it).  SAMSA_ERR__CONFIG
 * with the reason in errstr, naming the option: a reserved claim (iat,
 * exp), a number claim or lifetime that is not a number, a missing or
 * empty principal claim, an extension name other than letters (or
 * "auth") or a value with bytes RFC 7628 does not allow. */
SAMSA_MUST_CHECK samsa_err_t samsa_oauth_login_token(
    const samsa_jaas_conf_t *jc, int64_t now_ms, samsa_buf_t *token,
    samsa_buf_t *extensions, char *errstr, size_t errstr_size);

#endif /* SAMSA_CLIENT_OAUTH_LOGIN_H */
