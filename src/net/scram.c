/*
 * net/scram.c - SCRAM-SHA-256/512 (RFC 5802, RFC 7677) over OpenSSL's
 * PBKDF2, HMAC and SHA-2, and the four SCRAM messages.  See scram.h.
 * Threads: stateless, any thread.
 */
#include "net/scram.h"

#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#define SCRAM_ERR(errstr, size, ...)                                      \
    (snprintf((errstr), (size), __VA_ARGS__), SAMSA_ERR__BAD_MSG)

bool
samsa_scram_mech_from_name(const char *name, samsa_scram_mech_t *mech)
{
    if (name != NULL && strcmp(name, "SCRAM-SHA-256") == 0) {
        *mech = SAMSA_SCRAM_SHA_256;
        return true;
    }
    if (name != NULL && strcmp(name, "SCRAM-SHA-512") == 0) {
        *mech = SAMSA_SCRAM_SHA_512;
        return true;
    }
    return false;
}

bool
samsa_scram_mech_from_type(int8_t type, samsa_scram_mech_t *mech)
{
    if (type != SAMSA_SCRAM_SHA_256 && type != SAMSA_SCRAM_SHA_512) {
        return false;
    }
    *mech = (samsa_scram_mech_t) type;
    return true;
}

const char *
samsa_scram_mech_name(samsa_scram_mech_t mech)
{
    return mech == SAMSA_SCRAM_SHA_512 ? "SCRAM-SHA-512" : "SCRAM-SHA-256";
}

size_t
samsa_scram_hash_len(samsa_scram_mech_t mech)
{
    return mech == SAMSA_SCRAM_SHA_512 ? 64 : 32;
}

static const EVP_MD *
scram_md(samsa_scram_mech_t mech)
{
    return mech == SAMSA_SCRAM_SHA_512 ? EVP_sha512() : EVP_sha256();
}

void
samsa_scram_hash(samsa_scram_mech_t mech, const void *data, size_t len,
                 uint8_t *out)
{
    unsigned int  n = 0;

    EVP_Digest(data, len, out, &n, scram_md(mech), NULL);
}

void
samsa_scram_hmac(samsa_scram_mech_t mech, const uint8_t *key, size_t key_len,
                 const void *data, size_t len, uint8_t *out)
{
    unsigned int  n = 0;

    HMAC(scram_md(mech), key, (int) key_len, data, len, out, &n);
}

samsa_err_t
samsa_scram_salted_password(samsa_scram_mech_t mech, const char *password,
                            size_t pw_len, const uint8_t *salt,
                            size_t salt_len, int32_t iterations, uint8_t *out)
{
    if (iterations < SAMSA_SCRAM_MIN_ITERATIONS
        || iterations > SAMSA_SCRAM_MAX_ITERATIONS) {
        return SAMSA_ERR__INVALID_ARG;
    }
    if (PKCS5_PBKDF2_HMAC(password, (int) pw_len, salt, (int) salt_len,
                          iterations, scram_md(mech),
                          (int) samsa_scram_hash_len(mech), out) != 1) {
        return SAMSA_ERR__IO;
    }
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_scram_cred_from_salted(samsa_scram_mech_t mech,
                             const uint8_t *salted_password,
                             const uint8_t *salt, size_t salt_len,
                             int32_t iterations, samsa_scram_cred_t *cred)
{
    size_t   hlen = samsa_scram_hash_len(mech);
    uint8_t  client_key[SAMSA_SCRAM_MAX_HASH];

    if (salt_len == 0 || salt_len > sizeof(cred->salt)) {
        return SAMSA_ERR__INVALID_ARG;
    }
    memset(cred, 0, sizeof(*cred));
    cred->mech = mech;
    memcpy(cred->salt, salt, salt_len);
    cred->salt_len = salt_len;
    cred->iterations = iterations;
    samsa_scram_hmac(mech, salted_password, hlen, "Client Key", 10,
                     client_key);
    samsa_scram_hash(mech, client_key, hlen, cred->stored_key);
    samsa_scram_hmac(mech, salted_password, hlen, "Server Key", 10,
                     cred->server_key);
    OPENSSL_cleanse(client_key, sizeof(client_key));
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_scram_cred_from_password(samsa_scram_mech_t mech, const char *password,
                               const uint8_t *salt, size_t salt_len,
                               int32_t iterations, samsa_scram_cred_t *cred)
{
    uint8_t      sp[SAMSA_SCRAM_MAX_HASH];
    samsa_err_t  err;

    err = samsa_scram_salted_password(mech, password, strlen(password), salt,
                                      salt_len, iterations, sp);
    if (err == SAMSA_ERR_NONE) {
        err = samsa_scram_cred_from_salted(mech, sp, salt, salt_len,
                                           iterations, cred);
    }
    OPENSSL_cleanse(sp, sizeof(sp));
    return err;
}

void
samsa_scram_client_proof(samsa_scram_mech_t mech,
                         const uint8_t *salted_password,
                         const void *auth_message, size_t len, uint8_t *proof)
{
    size_t   hlen = samsa_scram_hash_len(mech);
    uint8_t  client_key[SAMSA_SCRAM_MAX_HASH];
    uint8_t  stored_key[SAMSA_SCRAM_MAX_HASH];
    uint8_t  sig[SAMSA_SCRAM_MAX_HASH];
    size_t   i;

    samsa_scram_hmac(mech, salted_password, hlen, "Client Key", 10,
                     client_key);
    samsa_scram_hash(mech, client_key, hlen, stored_key);
    samsa_scram_hmac(mech, stored_key, hlen, auth_message, len, sig);
    for (i = 0; i < hlen; i++) {
        proof[i] = client_key[i] ^ sig[i];
    }
    OPENSSL_cleanse(client_key, sizeof(client_key));
}

void
samsa_scram_server_signature(samsa_scram_mech_t mech,
                             const uint8_t *server_key,
                             const void *auth_message, size_t len,
                             uint8_t *sig)
{
    samsa_scram_hmac(mech, server_key, samsa_scram_hash_len(mech),
                     auth_message, len, sig);
}

bool
samsa_scram_verify_proof(const samsa_scram_cred_t *cred,
                         const void *auth_message, size_t len,
                         const uint8_t *proof, size_t proof_len)
{
    size_t   hlen = samsa_scram_hash_len(cred->mech);
    uint8_t  sig[SAMSA_SCRAM_MAX_HASH];
    uint8_t  client_key[SAMSA_SCRAM_MAX_HASH];
    uint8_t  stored_key[SAMSA_SCRAM_MAX_HASH];
    size_t   i;
    bool     ok;

    if (proof_len != hlen) {
        return false;
    }
    samsa_scram_hmac(cred->mech, cred->stored_key, hlen, auth_message, len,
                     sig);
    for (i = 0; i < hlen; i++) {
        client_key[i] = proof[i] ^ sig[i];
    }
    samsa_scram_hash(cred->mech, client_key, hlen, stored_key);
    ok = CRYPTO_memcmp(stored_key, cred->stored_key, hlen) == 0;
    OPENSSL_cleanse(client_key, sizeof(client_key));
    return ok;
}

samsa_err_t
samsa_scram_random(uint8_t *out, size_t len)
{
    return RAND_bytes(out, (int) len) == 1 ? SAMSA_ERR_NONE : SAMSA_ERR__IO;
}

samsa_err_t
samsa_scram_nonce(char *out, size_t size)
{
    uint8_t      raw[32];
    samsa_err_t  err = samsa_scram_random(raw, sizeof(raw));

    if (err == SAMSA_ERR_NONE) {
        err = samsa_scram_b64_encode(raw, sizeof(raw), out, size);
    }
    return err;
}

samsa_err_t
samsa_scram_b64_encode(const uint8_t *in, size_t len, char *out, size_t size)
{
    if (size < 4 * ((len + 2) / 3) + 1 || len > INT32_MAX / 2) {
        return SAMSA_ERR__INVALID_ARG;
    }
    EVP_EncodeBlock((unsigned char *) out, in, (int) len);
    return SAMSA_ERR_NONE;
}

static int
b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z') {
        return c - 'A';
    }
    if (c >= 'a' && c <= 'z') {
        return c - 'a' + 26;
    }
    if (c >= '0' && c <= '9') {
        return c - '0' + 52;
    }
    if (c == '+') {
        return 62;
    }
    return c == '/' ? 63 : -1;
}

/* Strict: length a multiple of 4, '=' only as the last one or two, and
 * the bits the padding leaves unused zero (one encoding per value). */
samsa_err_t
samsa_scram_b64_decode(samsa_slice_t in, uint8_t *out, size_t size,
                       size_t *out_len)
{
    const unsigned char  *p = (const unsigned char *) in.ptr;
    size_t                i, n = 0, pad = 0;
    uint32_t              acc;
    int                   k, v;

    if (in.len % 4 != 0) {
        return SAMSA_ERR__BAD_MSG;
    }
    if (in.len > 0 && p[in.len - 1] == '=') {
        pad = (in.len > 1 && p[in.len - 2] == '=') ? 2 : 1;
    }
    if (in.len / 4 * 3 - pad > size) {
        return SAMSA_ERR__BAD_MSG;
    }
    for (i = 0; i < in.len; i += 4) {
        acc = 0;
        for (k = 0; k < 4; k++) {
            bool  is_pad = i + (size_t) k >= in.len - pad;

            v = is_pad ? 0 : b64_value(p[i + (size_t) k]);
            if (v < 0 || (is_pad && p[i + (size_t) k] != '=')) {
                return SAMSA_ERR__BAD_MSG;
            }
            acc = (acc << 6) | (uint32_t) v;
        }
        if (i + 4 >= in.len
            && (acc & (pad == 2 ? 0xffffu : pad == 1 ? 0xffu : 0u)) != 0) {
            return SAMSA_ERR__BAD_MSG;          /* not canonical */
        }
        out[n++] = (uint8_t) (acc >> 16);
        if (i + 4 < in.len || pad < 2) {
            out[n++] = (uint8_t) (acc >> 8);
        }
        if (i + 4 < in.len || pad < 1) {
            out[n++] = (uint8_t) acc;
        }
    }
    *out_len = n;
    return SAMSA_ERR_NONE;
}

/* The next comma-separated attribute "K=VALUE" of msg from *at: its
 * letter and value.  false at the end or for a malformed one. */
static bool
scram_next_attr(samsa_slice_t msg, size_t *at, char *key, samsa_slice_t *val)
{
    size_t  i = *at, end;

    if (i >= msg.len || i + 1 >= msg.len || msg.ptr[i + 1] != '=') {
        return false;
    }
    *key = msg.ptr[i];
    for (end = i + 2; end < msg.len && msg.ptr[end] != ','; end++) {
    }
    *val = (samsa_slice_t) { msg.ptr + i + 2, end - i - 2 };
    *at = end < msg.len ? end + 1 : end;
    return true;
}

static bool
scram_printable_nonce(samsa_slice_t s)
{
    size_t  i;

    for (i = 0; i < s.len; i++) {
        unsigned char  c = (unsigned char) s.ptr[i];

        if (c < 0x21 || c > 0x7e || c == ',') {
            return false;
        }
    }
    return s.len > 0;
}

/* saslname -> user name: "=2C" is ',', "=3D" is '=', any other '=' is
 * an error (RFC 5802 5.1). */
static bool
scram_unescape_user(samsa_slice_t in, char *out, size_t size)
{
    size_t  i, n = 0;

    for (i = 0; i < in.len; i++) {
        char  c = in.ptr[i];

        if (c == '=') {
            if (i + 2 >= in.len) {
                return false;
            }
            if (in.ptr[i + 1] == '2' && in.ptr[i + 2] == 'C') {
                c = ',';
            } else if (in.ptr[i + 1] == '3' && in.ptr[i + 2] == 'D') {
                c = '=';
            } else {
                return false;
            }
            i += 2;
        } else if (c == '\0') {
            return false;
        }
        if (n + 1 >= size) {
            return false;
        }
        out[n++] = c;
    }
    out[n] = '\0';
    return n > 0;
}

samsa_err_t
samsa_scram_escape_user(const char *user, char *out, size_t size)
{
    size_t  n = 0;

    for (; *user != '\0'; user++) {
        const char  *rep = *user == ',' ? "=2C" : *user == '=' ? "=3D" : NULL;
        size_t       k = rep != NULL ? 3 : 1;

        if (n + k >= size) {
            return SAMSA_ERR__INVALID_ARG;
        }
        if (rep != NULL) {
            memcpy(out + n, rep, 3);
        } else {
            out[n] = *user;
        }
        n += k;
    }
    if (size == 0) {
        return SAMSA_ERR__INVALID_ARG;
    }
    out[n] = '\0';
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_scram_parse_client_first(samsa_slice_t msg,
                               samsa_scram_client_first_t *out,
                               char *errstr, size_t errstr_size)
{
    size_t         at, comma;
    char           key;
    samsa_slice_t  val;

    memset(out, 0, sizeof(*out));
    /* gs2-header: cbind-flag "," [authzid] "," */
    if (msg.len < 3 || msg.ptr[0] != 'n') {
        if (msg.len > 0 && (msg.ptr[0] == 'y' || msg.ptr[0] == 'p')) {
            return SCRAM_ERR(errstr, errstr_size,
                             "Channel binding is not supported");
        }
        return SCRAM_ERR(errstr, errstr_size,
                         "Invalid SCRAM client first message format");
    }
    if (msg.ptr[1] != ',') {
        return SCRAM_ERR(errstr, errstr_size,
                         "Invalid SCRAM client first message format");
    }
    for (comma = 2; comma < msg.len && msg.ptr[comma] != ','; comma++) {
    }
    if (comma >= msg.len) {
        return SCRAM_ERR(errstr, errstr_size,
                         "Invalid SCRAM client first message format");
    }
    if (comma > 2) {
        if (comma < 4 || msg.ptr[2] != 'a' || msg.ptr[3] != '=') {
            return SCRAM_ERR(errstr, errstr_size,
                             "Invalid SCRAM client first message format");
        }
        out->authzid = (samsa_slice_t) { msg.ptr + 4, comma - 4 };
    }
    at = comma + 1;
    out->bare = (samsa_slice_t) { msg.ptr + at, msg.len - at };
    if (!scram_next_attr(msg, &at, &key, &val) || key != 'n'
        || !scram_unescape_user(val, out->username, sizeof(out->username))) {
        return SCRAM_ERR(errstr, errstr_size,
                         "Invalid SCRAM client first message: bad user name");
    }
    if (!scram_next_attr(msg, &at, &key, &val) || key != 'r'
        || !scram_printable_nonce(val)) {
        return SCRAM_ERR(errstr, errstr_size,
                         "Invalid SCRAM client first message: bad nonce");
    }
    out->nonce = val;
    /* extensions: "name=value"; Kafka knows tokenauth */
    while (at < msg.len) {
        size_t  end;

        for (end = at; end < msg.len && msg.ptr[end] != ','; end++) {
        }
        if (end - at == 14 && memcmp(msg.ptr + at, "tokenauth=true", 14) == 0) {
            out->tokenauth = true;
        } else if (memchr(msg.ptr + at, '=', end - at) == NULL) {
            return SCRAM_ERR(errstr, errstr_size,
                             "Invalid SCRAM client first message: bad "
                             "extension");
        }
        at = end < msg.len ? end + 1 : end;
    }
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_scram_parse_server_first(samsa_slice_t msg,
                               samsa_scram_server_first_t *out,
                               char *errstr, size_t errstr_size)
{
    size_t         at = 0, i;
    char           key;
    samsa_slice_t  val;
    int64_t        iter = 0;

    memset(out, 0, sizeof(*out));
    if (msg.len >= 2 && msg.ptr[0] == 'e' && msg.ptr[1] == '=') {
        return SCRAM_ERR(errstr, errstr_size, "SCRAM server error: %.*s",
                         (int) (msg.len - 2), msg.ptr + 2);
    }
    if (!scram_next_attr(msg, &at, &key, &val) || key != 'r'
        || !scram_printable_nonce(val)) {
        return SCRAM_ERR(errstr, errstr_size,
                         "Invalid SCRAM server first message: bad nonce");
    }
    out->nonce = val;
    if (!scram_next_attr(msg, &at, &key, &val) || key != 's'
        || samsa_scram_b64_decode(val, out->salt, sizeof(out->salt),
                                  &out->salt_len) != SAMSA_ERR_NONE
        || out->salt_len == 0) {
        return SCRAM_ERR(errstr, errstr_size,
                         "Invalid SCRAM server first message: bad salt");
    }
    if (!scram_next_attr(msg, &at, &key, &val) || key != 'i' || val.len == 0
        || val.len > 9) {
        return SCRAM_ERR(errstr, errstr_size,
                         "Invalid SCRAM server first message: bad "
                         "iteration count");
    }
    for (i = 0; i < val.len; i++) {
        if (val.ptr[i] < '0' || val.ptr[i] > '9') {
            return SCRAM_ERR(errstr, errstr_size,
                             "Invalid SCRAM server first message: bad "
                             "iteration count");
        }
        iter = iter * 10 + (val.ptr[i] - '0');
    }
    out->iterations = (int32_t) iter;
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_scram_parse_client_final(samsa_slice_t msg,
                               samsa_scram_client_final_t *out,
                               char *errstr, size_t errstr_size)
{
    size_t         at = 0, before;
    char           key;
    samsa_slice_t  val;

    memset(out, 0, sizeof(*out));
    if (!scram_next_attr(msg, &at, &key, &val) || key != 'c') {
        return SCRAM_ERR(errstr, errstr_size,
                         "Invalid SCRAM client final message: no channel "
                         "binding");
    }
    out->channel_binding = val;
    if (!scram_next_attr(msg, &at, &key, &val) || key != 'r'
        || !scram_printable_nonce(val)) {
        return SCRAM_ERR(errstr, errstr_size,
                         "Invalid SCRAM client final message: bad nonce");
    }
    out->nonce = val;
    /* extensions before the proof, which is last */
    for (;;) {
        before = at;
        if (!scram_next_attr(msg, &at, &key, &val)) {
            return SCRAM_ERR(errstr, errstr_size,
                             "Invalid SCRAM client final message: no proof");
        }
        if (key == 'p' && at == msg.len) {
            break;
        }
    }
    if (before == 0) {
        return SCRAM_ERR(errstr, errstr_size,
                         "Invalid SCRAM client final message format");
    }
    out->without_proof = (samsa_slice_t) { msg.ptr, before - 1 };
    if (samsa_scram_b64_decode(val, out->proof, sizeof(out->proof),
                               &out->proof_len) != SAMSA_ERR_NONE
        || out->proof_len == 0) {
        return SCRAM_ERR(errstr, errstr_size,
                         "Invalid SCRAM client final message: bad proof");
    }
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_scram_parse_server_final(samsa_slice_t msg,
                               samsa_scram_server_final_t *out,
                               char *errstr, size_t errstr_size)
{
    size_t         at = 0;
    char           key;
    samsa_slice_t  val;

    memset(out, 0, sizeof(*out));
    if (!scram_next_attr(msg, &at, &key, &val) || (key != 'v' && key != 'e')) {
        return SCRAM_ERR(errstr, errstr_size,
                         "Invalid SCRAM server final message format");
    }
    if (key == 'e') {
        out->error = val.len > 0 ? val : samsa_slice_cstr("other-error");
        return SAMSA_ERR_NONE;
    }
    if (samsa_scram_b64_decode(val, out->signature, sizeof(out->signature),
                               &out->signature_len) != SAMSA_ERR_NONE) {
        return SCRAM_ERR(errstr, errstr_size,
                         "Invalid SCRAM server final message: bad signature");
    }
    return SAMSA_ERR_NONE;
}
