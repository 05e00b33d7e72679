/*
 * client/sasl_client.c - PLAIN, SCRAM and OAUTHBEARER tokens for the
 * client side of SaslAuthenticate (see sasl_client.h), as Kafka's
 * PlainSaslClient, ScramSaslClient and OAuthBearerSaslClient make them.
 * Threads: one owner.
 */
#include "client/sasl_client.h"

#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include "net/scram.h"
#include "util/alloc.h"
#include "util/diag.h"

typedef enum sasl_state {
    SASL_START = 0,
    SASL_SENT_PLAIN,            /* "\0user\0password" out, await answer */
    SASL_SENT_FIRST,            /* client-first out, await server-first */
    SASL_SENT_FINAL,            /* client-final out, await server-final */
    SASL_SENT_BEARER,           /* OAUTHBEARER initial response out */
    SASL_SENT_KVSEP,            /* ^A out after the server's error JSON */
    SASL_DONE,
    SASL_FAILED,
} sasl_state_t;

struct samsa_sasl_client {
    samsa_sasl_mech_t   mech;
    sasl_state_t        state;
    char               *user;               /* OAUTHBEARER: the token */
    char               *password;           /* OAUTHBEARER: the extensions */
    char               *nonce_override;     /* tests */
    char                nonce[64];
    samsa_buf_t         first_bare;         /* client-first-message-bare */
    uint8_t             server_key[SAMSA_SCRAM_MAX_HASH];
    samsa_buf_t         auth_message;
};

#define SASL_FAIL(errstr, size, ...)                                      \
    (snprintf((errstr), (size), __VA_ARGS__),                             \
     SAMSA_ERR_SASL_AUTHENTICATION_FAILED)

bool
samsa_sasl_client_mech_from_name(const char *name, samsa_sasl_mech_t *mech)
{
    samsa_scram_mech_t  sm;

    if (name != NULL && strcmp(name, "PLAIN") == 0) {
        *mech = SAMSA_SASL_PLAIN;
        return true;
    }
    if (name != NULL && strcmp(name, "OAUTHBEARER") == 0) {
        *mech = SAMSA_SASL_OAUTHBEARER;
        return true;
    }
    if (samsa_scram_mech_from_name(name, &sm)) {
        *mech = sm == SAMSA_SCRAM_SHA_512 ? SAMSA_SASL_SCRAM_SHA_512
                                          : SAMSA_SASL_SCRAM_SHA_256;
        return true;
    }
    return false;
}

const char *
samsa_sasl_client_mech_name(samsa_sasl_mech_t mech)
{
    switch (mech) {
    case SAMSA_SASL_SCRAM_SHA_256:
        return "SCRAM-SHA-256";
    case SAMSA_SASL_SCRAM_SHA_512:
        return "SCRAM-SHA-512";
    case SAMSA_SASL_OAUTHBEARER:
        return "OAUTHBEARER";
    default:
        return "PLAIN";
    }
}

static samsa_scram_mech_t
sasl_scram_mech(const samsa_sasl_client_t *sc)
{
    return sc->mech == SAMSA_SASL_SCRAM_SHA_512 ? SAMSA_SCRAM_SHA_512
                                                : SAMSA_SCRAM_SHA_256;
}

samsa_sasl_client_t *
samsa_sasl_client_new(samsa_sasl_mech_t mech, const char *user,
                      const char *password)
{
    samsa_sasl_client_t  *sc = samsa_calloc(1, sizeof(*sc));

    sc->mech = mech;
    sc->user = samsa_strdup(user != NULL ? user : "");
    sc->password = samsa_strdup(password != NULL ? password : "");
    sc->first_bare = SAMSA_BUF_INIT;
    sc->auth_message = SAMSA_BUF_INIT;
    return sc;
}

samsa_sasl_client_t *
samsa_sasl_client_new_oauthbearer(const char *token, const char *extensions)
{
    return samsa_sasl_client_new(SAMSA_SASL_OAUTHBEARER, token, extensions);
}

void
samsa_sasl_client_free(samsa_sasl_client_t *sc)
{
    if (sc == NULL) {
        return;
    }
    OPENSSL_cleanse(sc->user, strlen(sc->user));
    OPENSSL_cleanse(sc->password, strlen(sc->password));
    OPENSSL_cleanse(sc->server_key, sizeof(sc->server_key));
    samsa_free(sc->user);
    samsa_free(sc->password);
    samsa_free(sc->nonce_override);
    samsa_buf_fini(&sc->first_bare);
    samsa_buf_fini(&sc->auth_message);
    samsa_free(sc);
}

void
samsa_sasl_client_set_nonce(samsa_sasl_client_t *sc, const char *nonce)
{
    samsa_free(sc->nonce_override);
    sc->nonce_override = nonce != NULL ? samsa_strdup(nonce) : NULL;
}

static void
sasl_append(samsa_buf_t *b, const char *s, size_t n)
{
    samsa_buf_append(b, s, n);
}

/* PLAIN: authzid (empty), user, password, NUL-separated. */
static samsa_err_t
sasl_plain_first(samsa_sasl_client_t *sc, samsa_buf_t *out)
{
    sasl_append(out, "", 1);
    sasl_append(out, sc->user, strlen(sc->user));
    sasl_append(out, "", 1);
    sasl_append(out, sc->password, strlen(sc->password));
    sc->state = SASL_SENT_PLAIN;
    return SAMSA_ERR_NONE;
}

/* "n,,n=<saslname>,r=<nonce>" */
static samsa_err_t
sasl_scram_first(samsa_sasl_client_t *sc, samsa_buf_t *out, char *errstr,
                 size_t errstr_size)
{
    char  esc[3 * SAMSA_SCRAM_MAX_USER];

    if (samsa_scram_escape_user(sc->user, esc, sizeof(esc))
        != SAMSA_ERR_NONE) {
        return SASL_FAIL(errstr, errstr_size, "SCRAM user name too long");
    }
    if (sc->nonce_override != NULL) {
        snprintf(sc->nonce, sizeof(sc->nonce), "%s", sc->nonce_override);
    } else if (samsa_scram_nonce(sc->nonce, sizeof(sc->nonce))
               != SAMSA_ERR_NONE) {
        return SASL_FAIL(errstr, errstr_size, "no random bytes for the "
                         "SCRAM nonce");
    }
    sc->first_bare.len = 0;
    sasl_append(&sc->first_bare, "n=", 2);
    sasl_append(&sc->first_bare, esc, strlen(esc));
    sasl_append(&sc->first_bare, ",r=", 3);
    sasl_append(&sc->first_bare, sc->nonce, strlen(sc->nonce));
    sasl_append(out, "n,,", 3);
    samsa_buf_append(out, sc->first_bare.data, sc->first_bare.len);
    sc->state = SASL_SENT_FIRST;
    return SAMSA_ERR_NONE;
}

/* server-first -> client-final "c=biws,r=<nonce>,p=<proof>"; keeps the
 * ServerKey and AuthMessage for the server's signature. */
static samsa_err_t
sasl_scram_final(samsa_sasl_client_t *sc, samsa_slice_t in, samsa_buf_t *out,
                 char *errstr, size_t errstr_size)
{
    samsa_scram_mech_t          m = sasl_scram_mech(sc);
    samsa_scram_server_first_t  sf;
    uint8_t                     sp[SAMSA_SCRAM_MAX_HASH];
    uint8_t                     proof[SAMSA_SCRAM_MAX_HASH];
    char                        b64[2 * SAMSA_SCRAM_MAX_HASH + 4];
    size_t                      hlen = samsa_scram_hash_len(m);
    size_t                      nlen = strlen(sc->nonce);
    samsa_err_t                 err;

    err = samsa_scram_parse_server_first(in, &sf, errstr, errstr_size);
    if (err != SAMSA_ERR_NONE) {
        return SAMSA_ERR_SASL_AUTHENTICATION_FAILED;
    }
    if (sf.nonce.len <= nlen || memcmp(sf.nonce.ptr, sc->nonce, nlen) != 0) {
        return SASL_FAIL(errstr, errstr_size, "Invalid SCRAM server first "
                         "message: the server nonce does not extend the "
                         "client's");
    }
    if (sf.iterations < SAMSA_SCRAM_MIN_ITERATIONS
        || sf.iterations > SAMSA_SCRAM_MAX_ITERATIONS) {
        return SASL_FAIL(errstr, errstr_size, "SCRAM iteration count %d out "
                         "of bounds (%d..%d)", (int) sf.iterations,
                         SAMSA_SCRAM_MIN_ITERATIONS,
                         SAMSA_SCRAM_MAX_ITERATIONS);
    }
    err = samsa_scram_salted_password(m, sc->password, strlen(sc->password),
                                      sf.salt, sf.salt_len, sf.iterations,
                                      sp);
    if (err != SAMSA_ERR_NONE) {
        return SASL_FAIL(errstr, errstr_size, "SCRAM salted password: %s",
                         samsa_err_text(err));
    }
    /* AuthMessage = first-bare "," server-first "," final-without-proof */
    sc->auth_message.len = 0;
    samsa_buf_append(&sc->auth_message, sc->first_bare.data,
                     sc->first_bare.len);
    sasl_append(&sc->auth_message, ",", 1);
    sasl_append(&sc->auth_message, in.ptr, in.len);
    sasl_append(&sc->auth_message, ",c=biws,r=", 10);
    sasl_append(&sc->auth_message, sf.nonce.ptr, sf.nonce.len);
    samsa_scram_client_proof(m, sp, sc->auth_message.data,
                             sc->auth_message.len, proof);
    samsa_scram_hmac(m, sp, hlen, "Server Key", 10, sc->server_key);
    OPENSSL_cleanse(sp, sizeof(sp));
    samsa_assert(samsa_scram_b64_encode(proof, hlen, b64, sizeof(b64))
                 == SAMSA_ERR_NONE);
    sasl_append(out, "c=biws,r=", 9);
    sasl_append(out, sf.nonce.ptr, sf.nonce.len);
    sasl_append(out, ",p=", 3);
    sasl_append(out, b64, strlen(b64));
    sc->state = SASL_SENT_FINAL;
    return SAMSA_ERR_NONE;
}

/* server-final: "v=<ServerSignature>" that must verify, or "e=<error>". */
static samsa_err_t
sasl_scram_verify(samsa_sasl_client_t *sc, samsa_slice_t in, char *errstr,
                  size_t errstr_size)
{
    samsa_scram_mech_t          m = sasl_scram_mech(sc);
    samsa_scram_server_final_t  sfin;
    uint8_t                     sig[SAMSA_SCRAM_MAX_HASH];
    size_t                      hlen = samsa_scram_hash_len(m);

    if (samsa_scram_parse_server_final(in, &sfin, errstr, errstr_size)
        != SAMSA_ERR_NONE) {
        return SAMSA_ERR_SASL_AUTHENTICATION_FAILED;
    }
    if (sfin.error.len > 0) {
        return SASL_FAIL(errstr, errstr_size, "SCRAM server error: %.*s",
                         (int) sfin.error.len, sfin.error.ptr);
    }
    samsa_scram_server_signature(m, sc->server_key, sc->auth_message.data,
                                 sc->auth_message.len, sig);
    if (sfin.signature_len != hlen
        || CRYPTO_memcmp(sig, sfin.signature, hlen) != 0) {
        return SASL_FAIL(errstr, errstr_size, "Invalid SCRAM server final "
                         "message: the server signature does not verify");
    }
    return SAMSA_ERR_NONE;
}

/* RFC 7628's initial client response: gs2 header without authzid, the
 * bearer token, the extensions, two ^A. */
static samsa_err_t
sasl_bearer_first(samsa_sasl_client_t *sc, samsa_buf_t *out)
{
    static const char  head[] = "n,,\x01" "auth=Bearer ";

    samsa_buf_append(out, head, sizeof(head) - 1);
    samsa_buf_append(out, sc->user, strlen(sc->user));
    samsa_buf_append(out, sc->password, strlen(sc->password));
    samsa_buf_append(out, "\x01\x01", 2);
    sc->state = SASL_SENT_BEARER;
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_sasl_client_step(samsa_sasl_client_t *sc, samsa_slice_t in,
                       samsa_buf_t *out, bool *done, char *errstr,
                       size_t errstr_size)
{
    samsa_err_t  err;

    out->len = 0;
    *done = false;
    switch (sc->state) {
    case SASL_START:
        err = sc->mech == SAMSA_SASL_PLAIN
                  ? sasl_plain_first(sc, out)
              : sc->mech == SAMSA_SASL_OAUTHBEARER
                  ? sasl_bearer_first(sc, out)
                  : sasl_scram_first(sc, out, errstr, errstr_size);
        break;
    case SASL_SENT_BEARER:
        if (in.len == 0) {
            /* success: the broker's challenge is empty */
            err = SAMSA_ERR_NONE;
            *done = true;
            break;
        }
        /* RFC 7628 3.2.2: the server's error JSON; the client answers a
         * lone ^A and the server then fails the exchange (the broker's
         * SaslAuthenticate error message says why) */
        samsa_buf_append(out, "\x01", 1);
        sc->state = SASL_SENT_KVSEP;
        return SAMSA_ERR_NONE;
    case SASL_SENT_KVSEP:
        snprintf(errstr, errstr_size, "OAUTHBEARER: the broker refused the "
                 "token: %.*s", (int) (in.len > 200 ? 200 : in.len),
                 in.ptr != NULL ? in.ptr : "");
        err = SAMSA_ERR_SASL_AUTHENTICATION_FAILED;
        break;
    case SASL_SENT_PLAIN:
        /* the broker answers PLAIN with no token: its ErrorCode said */
        err = SAMSA_ERR_NONE;
        *done = true;
        break;
    case SASL_SENT_FIRST:
        err = sasl_scram_final(sc, in, out, errstr, errstr_size);
        break;
    case SASL_SENT_FINAL:
        err = sasl_scram_verify(sc, in, errstr, errstr_size);
        *done = err == SAMSA_ERR_NONE;
        break;
    default:
        snprintf(errstr, errstr_size, "SASL exchange already over");
        return SAMSA_ERR__STATE;
    }
    if (err != SAMSA_ERR_NONE) {
        out->len = 0;
        sc->state = SASL_FAILED;
    } else if (*done) {
        sc->state = SASL_DONE;
    }
    return err;
}
