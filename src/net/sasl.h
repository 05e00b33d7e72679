/*
 * net/sasl.h - the server side of SASL authentication on one connection
 * (Kafka's SaslServerAuthenticator with its PlainSaslServer and
 * ScramSaslServer and OAuthBearerSaslServer): the states a connection
 * goes through before its requests reach the handlers, and the mechanisms
 * PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER (its tokens checked
 * by the listener's validator, net/oauthbearer.h).
 *
 * The network thread owns a samsa_sasl_t per connection on a SASL
 * listener and asks it, for each receive, what to do (samsa_sasl_route):
 * hand the request to the handlers (ApiVersions before the handshake,
 * everything once authenticated), answer SaslHandshake or
 * SaslAuthenticate itself (samsa_sasl_handshake, samsa_sasl_token), or
 * close.  The exchange is pure computation on the bytes given (SCRAM's
 * HMACs over stored keys; no PBKDF2 at authentication time): nothing
 * here does I/O or blocks.
 *
 * Threads: a samsa_sasl_t belongs to its connection's network thread; a
 * samsa_sasl_conf_t is read-only once the listener starts and shared by
 * its network threads (its scram_lookup must be safe from any of them).
 */
#ifndef SAMSA_NET_SASL_H
#define SAMSA_NET_SASL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>

#include "net/oauthbearer.h"
#include "net/scram.h"
#include "util/slice.h"

/* Mechanisms, as bits of samsa_sasl_conf_t.mechs. */
#define SAMSA_SASL_M_PLAIN          0x1u
#define SAMSA_SASL_M_SCRAM_SHA_256  0x2u
#define SAMSA_SASL_M_SCRAM_SHA_512  0x4u
#define SAMSA_SASL_M_OAUTHBEARER    0x8u

/* Kafka's own messages, which clients show. */
#define SAMSA_SASL_PLAIN_BAD_PASSWORD \
    "Authentication failed: Invalid username or password"

typedef struct samsa_sasl_user {
    char  *name;
    char  *password;
} samsa_sasl_user_t;

/* The SCRAM credential of user for mech: true with *cred filled, false
 * if there is none.  Called on network threads: must not block. */
typedef bool (*samsa_sasl_scram_lookup_fn)(void *ctx, samsa_scram_mech_t mech,
                                           const char *user,
                                           samsa_scram_cred_t *cred);

/* Check an OAUTHBEARER token at now_ms (ms since the epoch): NONE with
 * out->principal and out->lifetime_ms, else SASL_AUTHENTICATION_FAILED
 * with out->status and out->why.  Called on network threads: must not
 * block. */
typedef samsa_err_t (*samsa_sasl_oauth_validate_fn)(void *ctx,
                                                    samsa_slice_t token,
                                                    int64_t now_ms,
                                                    samsa_oauth_token_t *out);

/* One listener's SASL settings. */
typedef struct samsa_sasl_conf {
    unsigned                    mechs;          /* SAMSA_SASL_M_* */
    char                      **mech_names;     /* enabled, in the order
                                                   configured (what a
                                                   SaslHandshake answer
                                                   lists) */
    size_t                      nmech_names;
    samsa_sasl_user_t          *plain_users;    /* PlainLoginModule's
                                                   user_NAME="pw" */
    size_t                      nplain_users;
    int64_t                     reauth_ms;      /* connections.max.reauth.ms
                                                   (0: sessions never
                                                   expire) */
    samsa_sasl_scram_lookup_fn  scram_lookup;   /* NULL: no SCRAM users */
    void                       *scram_ctx;
    samsa_sasl_oauth_validate_fn oauth_validate;    /* OAUTHBEARER's; NULL:
                                                       every token fails */
    void                       *oauth_ctx;
    void                      (*oauth_free)(void *ctx); /* of oauth_ctx, by
                                                           samsa_sasl_conf_fini */
} samsa_sasl_conf_t;

/* SaslServerAuthenticator's states, less GSSAPI's INITIAL_REQUEST. */
typedef enum samsa_sasl_state {
    SAMSA_SASL_HANDSHAKE_OR_VERSIONS = 0, /* ApiVersions or SaslHandshake */
    SAMSA_SASL_HANDSHAKE,               /* ApiVersions done: SaslHandshake */
    SAMSA_SASL_AUTHENTICATE,            /* tokens of the mechanism */
    SAMSA_SASL_COMPLETE,                /* authenticated */
    SAMSA_SASL_REAUTH_HANDSHAKE,        /* KIP-368: a SaslHandshake came
                                           on an authenticated connection */
    SAMSA_SASL_FAILED,
} samsa_sasl_state_t;

typedef struct samsa_sasl {
    const samsa_sasl_conf_t  *conf;     /* [const] */
    samsa_sasl_state_t        state;
    unsigned                  mech;     /* SAMSA_SASL_M_* chosen */
    bool                      kafka_headers; /* SaslHandshake v1+: tokens
                                               come in SaslAuthenticate;
                                               v0: raw size-prefixed */
    bool                      reauth;   /* this exchange re-authenticates */
    int                       scram_step; /* 0: client-first next, 1:
                                             client-final next */
    char                      user[SAMSA_SCRAM_MAX_USER]; /* authenticated
                                                            (or being) */
    char                      prev_user[SAMSA_SCRAM_MAX_USER];
    unsigned                  prev_mech;
    samsa_scram_cred_t        cred;
    char                     *auth_message; /* SCRAM: client-first-bare ","
                                               server-first (owned) */
    char                     *nonce;    /* client + server nonce (owned) */
    int64_t                   session_end_ns; /* 0: none */
    bool                      oauth_error_sent; /* OAUTHBEARER: the error
                                                   JSON went out, ^A next */
    char                      oauth_error[192];
    int64_t                   oauth_lifetime_ms; /* the token's "exp" */
} samsa_sasl_t;

/* What the network thread does with a receive. */
typedef enum samsa_sasl_route {
    SAMSA_SASL_ROUTE_HANDLERS = 0,      /* as on a listener without SASL */
    SAMSA_SASL_ROUTE_HANDSHAKE,         /* samsa_sasl_handshake */
    SAMSA_SASL_ROUTE_AUTHENTICATE,      /* samsa_sasl_token (in a
                                           SaslAuthenticate request) */
    SAMSA_SASL_ROUTE_RAW_TOKEN,         /* samsa_sasl_token: the receive is
                                           a bare token (no header), the
                                           answer a bare token */
    SAMSA_SASL_ROUTE_CLOSE,             /* close, no answer (why says) */
} samsa_sasl_route_t;

/* The answer to one SaslHandshake or token. */
typedef struct samsa_sasl_result {
    int16_t   error;                    /* Kafka's error code */
    char      message[192];             /* ErrorMessage; "" for null */
    uint8_t   token[1024];              /* the server's token */
    size_t    token_len;
    bool      complete;                 /* authenticated: principal set */
    bool      close;                    /* close once it is written */
    int64_t   session_lifetime_ms;      /* SessionLifetimeMs (v1+) */
} samsa_sasl_result_t;

void samsa_sasl_init(samsa_sasl_t *sasl, const samsa_sasl_conf_t *conf);
void samsa_sasl_fini(samsa_sasl_t *sasl);

/* Whether the next receive is a raw token (handshake v0 under way): the
 * caller must not parse a request header. */
bool samsa_sasl_expects_raw(const samsa_sasl_t *sasl);

/* Where a request of api_key goes now (now_ns: for the session's end).
 * For ROUTE_HANDLERS during authentication (ApiVersions) the state moves
 * on as if it was answered (the connection is muted until it is).
 * ROUTE_CLOSE fills why. */
samsa_sasl_route_t samsa_sasl_route(samsa_sasl_t *sasl, int16_t api_key,
                                    int64_t now_ns, char *why,
                                    size_t why_size);

/* SaslHandshake (version 0 or 1) naming mechanism. */
void samsa_sasl_handshake(samsa_sasl_t *sasl, int16_t version,
                          samsa_slice_t mechanism, samsa_sasl_result_t *res);

/* One token of the mechanism; auth_version: the SaslAuthenticate version
 * (-1 for a raw token).  On success the principal's name is sasl->user. */
void samsa_sasl_token(samsa_sasl_t *sasl, int16_t auth_version,
                      samsa_slice_t token, int64_t now_ns,
                      samsa_sasl_result_t *res);

/* "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER" ->
 * SAMSA_SASL_M_*; 0 else. */
unsigned samsa_sasl_mech_from_name(samsa_slice_t name);
const char *samsa_sasl_mech_name(unsigned mech);

/* A PLAIN message "authzid NUL authcid NUL passwd" split (slices into
 * msg).  SAMSA_ERR__BAD_MSG with Kafka's message in errstr unless it has
 * exactly three parts. */
typedef struct samsa_sasl_plain {
    samsa_slice_t  authzid;
    samsa_slice_t  user;
    samsa_slice_t  password;
} samsa_sasl_plain_t;

SAMSA_MUST_CHECK samsa_err_t samsa_sasl_plain_parse(samsa_slice_t msg,
                                                    samsa_sasl_plain_t *out,
                                                    char *errstr,
                                                    size_t errstr_size);

/* Free what samsa_sasl_conf_t owns (names, users). */
void samsa_sasl_conf_fini(samsa_sasl_conf_t *conf);

#endif /* SAMSA_NET_SASL_H */
