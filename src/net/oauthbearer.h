/*
 * net/oauthbearer.h - SASL OAUTHBEARER (RFC 7628, KIP-255) on the server:
 * the client's initial response (GS2 header, key=value pairs, the
 * "auth=Bearer <token>" pair), what a token validator answers (net/sasl.h
 * calls the listener's: server/oauth_unsecured.h is Kafka's unsecured
 * one) and the JSON error a failed token gets.
 *
 * Pure code: no I/O, no global state.
 * Threads: any.
 * Ownership: results point into the caller's input or hold copies.
 */
#ifndef SAMSA_NET_OAUTHBEARER_H
#define SAMSA_NET_OAUTHBEARER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>

#include "util/slice.h"

/* The client's initial response, as slices into it. */
typedef struct samsa_oauth_initial {
    samsa_slice_t  authzid;             /* empty: none */
    samsa_slice_t  token;               /* the Bearer token */
} samsa_oauth_initial_t;

/* Kafka's OAuthBearerClientInitialResponse: "n," ["a=" authzid] "," ^A
 * (key=value ^A)* ^A with an "auth" pair "Bearer <token>" (any case);
 * other pairs are extensions, which the unsecured validator accepts.
 * SAMSA_ERR__BAD_MSG with Kafka's SaslException text in why else. */
SAMSA_MUST_CHECK samsa_err_t samsa_oauth_parse_initial(
    samsa_slice_t msg, samsa_oauth_initial_t *out, char *why,
    size_t why_size);

/* A validated token, or why it is not one. */
typedef struct samsa_oauth_token {
    char     principal[256];            /* the principal claim */
    int64_t  lifetime_ms;               /* "exp", ms since the epoch */
    int64_t  start_ms;                  /* "iat"; -1: none */
    char     status[24];                /* failed: "invalid_token" or
                                           "insufficient_scope" */
    char     scope[256];                /* insufficient_scope: the required
                                           scope, as Java lists print */
    char     why[256];                  /* failed: Kafka's explanation */
} samsa_oauth_token_t;

/* The RFC 7628 error the server sends for a failed token (Kafka's
 * jsonErrorResponse): {"status":"..."} with ", \"scope\":\"...\"" when
 * set; NUL-terminated in buf.  @returns its length. */
size_t samsa_oauth_error_json(const samsa_oauth_token_t *t, char *buf,
                              size_t size);

#endif /* SAMSA_NET_OAUTHBEARER_H */
