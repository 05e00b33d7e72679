/*
 * net/scram.h - the SCRAM-SHA-256 / SCRAM-SHA-512 SASL mechanism's
 * arithmetic and messages (RFC 5802, RFC 7677), as Kafka's
 * ScramSaslServer/ScramSaslClient use them: shared by the broker (the
 * server side of SaslAuthenticate) and libsamsa (the client side).
 *
 * The crypto is OpenSSL's (PBKDF2-HMAC, HMAC, SHA-2, RAND_bytes); this
 * module only puts it together: Hi(), the keys derived from a salted
 * password, the proofs, and parsing/formatting of the four messages.
 * Parsers point into the caller's buffer (slices) except where they must
 * decode (base64, the escaped user name) into the structs' own arrays.
 * Threads: stateless, any thread.
 */
#ifndef SAMSA_NET_SCRAM_H
#define SAMSA_NET_SCRAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>

#include "util/slice.h"

typedef enum samsa_scram_mech {
    SAMSA_SCRAM_SHA_256 = 1,            /* Kafka's ScramMechanism type 1 */
    SAMSA_SCRAM_SHA_512 = 2,            /* and 2 (DescribeUserScram...) */
} samsa_scram_mech_t;

#define SAMSA_SCRAM_MAX_HASH      64    /* SHA-512's output */
#define SAMSA_SCRAM_MAX_SALT      128
#define SAMSA_SCRAM_MAX_USER      256   /* a decoded user name, with NUL */
/* Kafka's ScramMechanism bounds on iterations (4096 .. 16384) */
#define SAMSA_SCRAM_MIN_ITERATIONS 4096
#define SAMSA_SCRAM_MAX_ITERATIONS 16384

/* "SCRAM-SHA-256" / "SCRAM-SHA-512" (exact, as SASL names are) -> mech;
 * false for another name. */
bool samsa_scram_mech_from_name(const char *name, samsa_scram_mech_t *mech);
/* The type code Kafka's ScramMechanism gives (1, 2) -> mech; false else. */
bool samsa_scram_mech_from_type(int8_t type, samsa_scram_mech_t *mech);
const char *samsa_scram_mech_name(samsa_scram_mech_t mech);
/* 32 or 64 */
size_t samsa_scram_hash_len(samsa_scram_mech_t mech);

/* H(data) */
void samsa_scram_hash(samsa_scram_mech_t mech, const void *data, size_t len,
                      uint8_t *out);
/* HMAC(key, data) */
void samsa_scram_hmac(samsa_scram_mech_t mech, const uint8_t *key,
                      size_t key_len, const void *data, size_t len,
                      uint8_t *out);
/* SaltedPassword = Hi(password, salt, iterations) (PBKDF2-HMAC-SHA-n).
 * SAMSA_ERR__INVALID_ARG for iterations outside Kafka's bounds. */
samsa_err_t samsa_scram_salted_password(samsa_scram_mech_t mech,
                                        const char *password, size_t pw_len,
                                        const uint8_t *salt, size_t salt_len,
                                        int32_t iterations, uint8_t *out);

/* What a server stores for a user and mechanism (Kafka's
 * ScramCredential): never the password. */
typedef struct samsa_scram_cred {
    samsa_scram_mech_t  mech;
    uint8_t             salt[SAMSA_SCRAM_MAX_SALT];
    size_t              salt_len;
    int32_t             iterations;
    uint8_t             stored_key[SAMSA_SCRAM_MAX_HASH];  /* H(ClientKey) */
    uint8_t             server_key[SAMSA_SCRAM_MAX_HASH];
} samsa_scram_cred_t;

/* The credential from a salted password (what AlterUserScramCredentials
 * carries): ClientKey = HMAC(SP, "Client Key"), StoredKey = H(ClientKey),
 * ServerKey = HMAC(SP, "Server Key").  SAMSA_ERR__INVALID_ARG for a salt
 * over SAMSA_SCRAM_MAX_SALT or empty. */
samsa_err_t samsa_scram_cred_from_salted(samsa_scram_mech_t mech,
                                         const uint8_t *salted_password,
                                         const uint8_t *salt, size_t salt_len,
                                         int32_t iterations,
                                         samsa_scram_cred_t *cred);
/* The same from a clear password (Hi first). */
samsa_err_t samsa_scram_cred_from_password(samsa_scram_mech_t mech,
                                           const char *password,
                                           const uint8_t *salt,
                                           size_t salt_len,
                                           int32_t iterations,
                                           samsa_scram_cred_t *cred);

/* Client side: ClientProof = ClientKey XOR HMAC(StoredKey, AuthMessage),
 * from the salted password; hash_len bytes to proof. */
void samsa_scram_client_proof(samsa_scram_mech_t mech,
                              const uint8_t *salted_password,
                              const void *auth_message, size_t len,
                              uint8_t *proof);
/* ServerSignature = HMAC(ServerKey, AuthMessage); hash_len bytes. */
void samsa_scram_server_signature(samsa_scram_mech_t mech,
                                  const uint8_t *server_key,
                                  const void *auth_message, size_t len,
                                  uint8_t *sig);
/* Server side: does proof (proof_len bytes) prove knowledge of the
 * password cred was made from?  Constant time in the key bytes. */
bool samsa_scram_verify_proof(const samsa_scram_cred_t *cred,
                              const void *auth_message, size_t len,
                              const uint8_t *proof, size_t proof_len);

/* len random bytes (RAND_bytes); SAMSA_ERR__IO when OpenSSL cannot. */
samsa_err_t samsa_scram_random(uint8_t *out, size_t len);
/* A fresh nonce: 32 random bytes, base64 (printable, no ','): 44 chars
 * and a NUL in out (at least 45 bytes). */
samsa_err_t samsa_scram_nonce(char *out, size_t size);

/* Standard base64 with padding.  encode writes a NUL-terminated string
 * (size >= 4 * ceil(len / 3) + 1; SAMSA_ERR__INVALID_ARG otherwise);
 * decode writes at most size bytes to out and their count to *out_len
 * (SAMSA_ERR__BAD_MSG for input that is not base64 or too long). */
samsa_err_t samsa_scram_b64_encode(const uint8_t *in, size_t len, char *out,
                                   size_t size);
samsa_err_t samsa_scram_b64_decode(samsa_slice_t in, uint8_t *out,
                                   size_t size, size_t *out_len);

/* client-first-message: gs2-header ("n,," or "n,a=AUTHZID,") then
 * client-first-message-bare "n=USER,r=NONCE[,EXT=VALUE...]".  Kafka
 * refuses channel binding ('y'/'p' flags) and reads the extension
 * tokenauth=true (delegation tokens). */
typedef struct samsa_scram_client_first {
    char           username[SAMSA_SCRAM_MAX_USER]; /* unescaped (=2C, =3D) */
    samsa_slice_t  authzid;             /* empty when absent */
    samsa_slice_t  nonce;
    samsa_slice_t  bare;                /* client-first-message-bare */
    bool           tokenauth;
} samsa_scram_client_first_t;

/* server-first-message: "r=NONCE,s=SALT,i=ITERATIONS" */
typedef struct samsa_scram_server_first {
    samsa_slice_t  nonce;               /* client nonce + server nonce */
    uint8_t        salt[SAMSA_SCRAM_MAX_SALT];
    size_t         salt_len;
    int32_t        iterations;
} samsa_scram_server_first_t;

/* client-final-message: "c=CHANNEL_BINDING,r=NONCE,p=PROOF" */
typedef struct samsa_scram_client_final {
    samsa_slice_t  channel_binding;     /* base64 of the gs2 header */
    samsa_slice_t  nonce;
    samsa_slice_t  without_proof;       /* everything before ",p=" (part of
                                           the AuthMessage) */
    uint8_t        proof[SAMSA_SCRAM_MAX_HASH];
    size_t         proof_len;
} samsa_scram_client_final_t;

/* server-final-message: "v=SIGNATURE" or "e=ERROR" */
typedef struct samsa_scram_server_final {
    uint8_t        signature[SAMSA_SCRAM_MAX_HASH];
    size_t         signature_len;
    samsa_slice_t  error;               /* non-empty: "e=" form */
} samsa_scram_server_final_t;

/* Parsers: SAMSA_ERR__BAD_MSG with a reason in errstr (fit for a
 * SASL_AUTHENTICATION_FAILED message) for malformed input.  msg is not
 * NUL-terminated; slices point into it. */
samsa_err_t samsa_scram_parse_client_first(samsa_slice_t msg,
                                           samsa_scram_client_first_t *out,
                                           char *errstr, size_t errstr_size);
samsa_err_t samsa_scram_parse_server_first(samsa_slice_t msg,
                                           samsa_scram_server_first_t *out,
                                           char *errstr, size_t errstr_size);
samsa_err_t samsa_scram_parse_client_final(samsa_slice_t msg,
                                           samsa_scram_client_final_t *out,
                                           char *errstr, size_t errstr_size);
samsa_err_t samsa_scram_parse_server_final(samsa_slice_t msg,
                                           samsa_scram_server_final_t *out,
                                           char *errstr, size_t errstr_size);

/* A user name as saslname: ',' -> "=2C", '=' -> "=3D".  NUL-terminated
 * into out; SAMSA_ERR__INVALID_ARG when it does not fit. */
samsa_err_t samsa_scram_escape_user(const char *user, char *out, size_t size);

#endif /* SAMSA_NET_SCRAM_H */
