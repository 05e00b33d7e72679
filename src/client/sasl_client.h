/*
 * client/sasl_client.h - the client side of a SASL exchange as Kafka's
 * SaslClientAuthenticator drives it over SaslAuthenticate: PLAIN
 * (RFC 4616: one token "\0user\0password"), SCRAM-SHA-256/512
 * (RFC 5802/7677 over net/scram.h: client-first with a fresh nonce,
 * client-final with the proof, the server's signature checked) and
 * OAUTHBEARER (RFC 7628, Kafka's OAuthBearerSaslClient: one initial
 * response "n,,^Aauth=Bearer <token>[^Aname=value...]^A^A"; a server
 * error JSON is answered with the lone ^A the RFC asks for, after which
 * the broker's SaslAuthenticate error says why).  It only
 * makes and reads tokens; client/netclient.c carries them.
 * Threads: one owner (the connection's thread).
 */
#ifndef SAMSA_CLIENT_SASL_CLIENT_H
#define SAMSA_CLIENT_SASL_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

#include <samsa/errors.h>

#include "util/buf.h"
#include "util/slice.h"

typedef enum samsa_sasl_mech {
    SAMSA_SASL_PLAIN = 1,
    SAMSA_SASL_SCRAM_SHA_256,
    SAMSA_SASL_SCRAM_SHA_512,
    SAMSA_SASL_OAUTHBEARER,
} samsa_sasl_mech_t;

/* "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER" (exact) ->
 * mech; false for another name (GSSAPI, ...: not spoken). */
bool samsa_sasl_client_mech_from_name(const char *name, samsa_sasl_mech_t *mech);
const char *samsa_sasl_client_mech_name(samsa_sasl_mech_t mech);

typedef struct samsa_sasl_client samsa_sasl_client_t;

/* A fresh exchange for user with password (both copied). */
samsa_sasl_client_t *samsa_sasl_client_new(samsa_sasl_mech_t mech,
                                           const char *user,
                                           const char *password);
/* A fresh OAUTHBEARER exchange sending token with extensions ("" or
 * "\x01name=value..." as client/oauth_login.h makes them); both copied. */
samsa_sasl_client_t *samsa_sasl_client_new_oauthbearer(const char *token,
                                                       const char *extensions);
void samsa_sasl_client_free(samsa_sasl_client_t *sc);

/* Tests only: the client nonce of the next client-first message (RFC
 * 7677's exchange); NULL: a fresh random one. */
void samsa_sasl_client_set_nonce(samsa_sasl_client_t *sc, const char *nonce);

/* One step.  The first call takes an empty in and writes the first token
 * to out; each later call takes the server's last token (SaslAuthenticate's
 * AuthBytes): then either *done (the exchange succeeded: nothing more to
 * send) or the next token in out.  SAMSA_ERR_SASL_AUTHENTICATION_FAILED
 * with the reason in errstr for a server token that is malformed, a nonce
 * that does not extend ours, an iteration count out of Kafka's bounds, a
 * server error ("e=...") or a server signature that does not verify;
 * _STATE when called after done or a failure.  out is reset first. */
SAMSA_MUST_CHECK samsa_err_t samsa_sasl_client_step(samsa_sasl_client_t *sc,
                                                    samsa_slice_t in,
                                                    samsa_buf_t *out,
                                                    bool *done,
                                                    char *errstr,
                                                    size_t errstr_size);

#endif /* SAMSA_CLIENT_SASL_CLIENT_H */
