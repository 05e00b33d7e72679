/*
 * server/oauth_jwks.c - KIP-768's JWKS validator (see oauth_jwks.h):
 * JWK Sets into OpenSSL keys, JWS signatures checked with EVP_DigestVerify,
 * claims checked as Kafka's BrokerJwtValidator configures jose4j.
 */
#include "server/oauth_jwks.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/rsa.h>

#include "server/oauth_unsecured.h"
#include "util/alloc.h"

#define JWKS_FILE_MAX     (1 << 20)     /* a key set file's size bound */
#define JWKS_RSA_MIN_BITS 2048          /* jose4j's minimum for RS/PS */

typedef enum jwks_kty {
    JWKS_RSA = 1,
    JWKS_EC,
} jwks_kty_t;

typedef struct jwks_key {
    char        *kid;                   /* NULL: none */
    char        *alg;                   /* NULL: fit for any of its type */
    jwks_kty_t   kty;
    int          ec_bits;               /* EC: 256, 384 or 521 */
    EVP_PKEY    *pkey;
} jwks_key_t;

struct samsa_jwks {
    jwks_key_t  *keys;                  /* [const] */
    size_t       n;
};

/* ---- key sets ------------------------------------------------------- */

static samsa_err_t jwks_fail(char *errstr, size_t errstr_size,
                             const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static samsa_err_t
jwks_fail(char *errstr, size_t errstr_size, const char *fmt, ...)
{
    va_list  ap;

    va_start(ap, fmt);
    vsnprintf(errstr, errstr_size, fmt, ap);
    va_end(ap);
    return SAMSA_ERR__CONFIG;
}

/* A base64url member of a JWK as a big-endian number's bytes. */
static uint8_t *
jwks_member(json_t *jwk, const char *name, size_t *len)
{
    json_t  *v = json_object_get(jwk, name);

    if (!json_is_string(v) || json_string_length(v) == 0) {
        return NULL;
    }
    return (uint8_t *) samsa_oauth_b64_decode(json_string_value(v),
                                              json_string_length(v), len);
}

static EVP_PKEY *
jwks_pkey_from(const char *type, OSSL_PARAM_BLD *bld)
{
    OSSL_PARAM    *params = OSSL_PARAM_BLD_to_param(bld);
    EVP_PKEY_CTX  *ctx = EVP_PKEY_CTX_new_from_name(NULL, type, NULL);
    EVP_PKEY      *pkey = NULL;

    if (params == NULL || ctx == NULL || EVP_PKEY_fromdata_init(ctx) != 1
        || EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) != 1) {
        EVP_PKEY_free(pkey);
        pkey = NULL;
    }
    OSSL_PARAM_free(params);
    EVP_PKEY_CTX_free(ctx);
    return pkey;
}

/* A public key on which OpenSSL's own check passes (an EC point on its
 * curve, an RSA modulus that is odd and big enough). */
static bool
jwks_pkey_ok(EVP_PKEY *pkey)
{
    EVP_PKEY_CTX  *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
    bool           ok = ctx != NULL && EVP_PKEY_public_check(ctx) == 1;

    EVP_PKEY_CTX_free(ctx);
    return ok;
}

static const char *
jwks_rsa(json_t *jwk, jwks_key_t *k)
{
    uint8_t         *n = NULL, *e = NULL;
    size_t           nlen = 0, elen = 0;
    BIGNUM          *bn = NULL, *be = NULL;
    OSSL_PARAM_BLD  *bld = NULL;
    const char      *why = NULL;

    n = jwks_member(jwk, "n", &nlen);
    e = jwks_member(jwk, "e", &elen);
    if (n == NULL || e == NULL) {
        why = "an RSA key needs its \"n\" and \"e\" (base64url)";
        goto out;
    }
    bn = BN_bin2bn(n, (int) nlen, NULL);
    be = BN_bin2bn(e, (int) elen, NULL);
    bld = OSSL_PARAM_BLD_new();
    if (bn == NULL || be == NULL || bld == NULL
        || OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, bn) != 1
        || OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, be) != 1) {
        why = "OpenSSL cannot hold the RSA key";
        goto out;
    }
    if (BN_num_bits(bn) < JWKS_RSA_MIN_BITS) {
        why = "the RSA key is shorter than 2048 bits";
        goto out;
    }
    k->pkey = jwks_pkey_from("RSA", bld);
    if (k->pkey == NULL || !jwks_pkey_ok(k->pkey)) {
        why = "not a valid RSA public key";
    }
    k->kty = JWKS_RSA;
out:
    OSSL_PARAM_BLD_free(bld);
    BN_free(bn);
    BN_free(be);
    samsa_free(n);
    samsa_free(e);
    return why;
}

static const char *
jwks_ec(json_t *jwk, jwks_key_t *k)
{
    json_t          *crv = json_object_get(jwk, "crv");
    const char      *group, *why = NULL;
    uint8_t         *x = NULL, *y = NULL, pub[1 + 2 * 66];
    size_t           xlen = 0, ylen = 0, flen;
    OSSL_PARAM_BLD  *bld = NULL;

    if (!json_is_string(crv)) {
        return "an EC key needs its \"crv\"";
    }
    if (strcmp(json_string_value(crv), "P-256") == 0) {
        group = "prime256v1";
        k->ec_bits = 256;
        flen = 32;
    } else if (strcmp(json_string_value(crv), "P-384") == 0) {
        group = "secp384r1";
        k->ec_bits = 384;
        flen = 48;
    } else if (strcmp(json_string_value(crv), "P-521") == 0) {
        group = "secp521r1";
        k->ec_bits = 521;
        flen = 66;
    } else {
        return "an EC key's \"crv\" must be P-256, P-384 or P-521";
    }
    x = jwks_member(jwk, "x", &xlen);
    y = jwks_member(jwk, "y", &ylen);
    if (x == NULL || y == NULL || xlen != flen || ylen != flen) {
        why = "an EC key needs its \"x\" and \"y\" (base64url, the curve's "
              "field size each)";
        goto out;
    }
    pub[0] = 0x04;                      /* uncompressed point */
    memcpy(pub + 1, x, flen);
    memcpy(pub + 1 + flen, y, flen);
    bld = OSSL_PARAM_BLD_new();
    if (bld == NULL
        || OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME,
                                           group, 0) != 1
        || OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY,
                                            pub, 1 + 2 * flen) != 1) {
        why = "OpenSSL cannot hold the EC key";
        goto out;
    }
    k->pkey = jwks_pkey_from("EC", bld);
    if (k->pkey == NULL || !jwks_pkey_ok(k->pkey)) {
        why = "not a valid EC public key (a point on its curve)";
    }
    k->kty = JWKS_EC;
out:
    OSSL_PARAM_BLD_free(bld);
    samsa_free(x);
    samsa_free(y);
    return why;
}

static void
jwks_key_fini(jwks_key_t *k)
{
    samsa_free(k->kid);
    samsa_free(k->alg);
    EVP_PKEY_free(k->pkey);
}

size_t
samsa_jwks_count(const samsa_jwks_t *k)
{
    return k != NULL ? k->n : 0;
}

void
samsa_jwks_free(samsa_jwks_t *k)
{
    size_t  i;

    if (k == NULL) {
        return;
    }
    for (i = 0; i < k->n; i++) {
        jwks_key_fini(&k->keys[i]);
    }
    samsa_free(k->keys);
    samsa_free(k);
}

samsa_err_t
samsa_jwks_parse(const char *text, size_t len, const char *what,
                 samsa_jwks_t **out, char *errstr, size_t errstr_size)
{
    json_error_t   je;
    json_t        *doc, *keys, *jwk, *kty, *use, *kid, *alg;
    samsa_jwks_t  *set;
    jwks_key_t     k;
    const char    *why;
    size_t         i;

    *out = NULL;
    doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (doc == NULL) {
        return jwks_fail(errstr, errstr_size, "%s: not JSON: %s (line %d)",
                         what, je.text, je.line);
    }
    keys = json_object_get(doc, "keys");
    if (!json_is_array(keys)) {
        json_decref(doc);
        return jwks_fail(errstr, errstr_size, "%s: not a JSON Web Key Set "
                         "(no \"keys\" array)", what);
    }
    set = samsa_calloc(1, sizeof(*set));
    set->keys = samsa_calloc(json_array_size(keys) + 1, sizeof(*set->keys));
    json_array_foreach(keys, i, jwk) {
        kty = json_object_get(jwk, "kty");
        use = json_object_get(jwk, "use");
        if (!json_is_object(jwk) || !json_is_string(kty)) {
            samsa_jwks_free(set);
            json_decref(doc);
            return jwks_fail(errstr, errstr_size, "%s: key %zu has no "
                             "\"kty\"", what, i);
        }
        if (use != NULL && !(json_is_string(use)
                             && strcmp(json_string_value(use), "sig") == 0)) {
            continue;                   /* an encryption key */
        }
        memset(&k, 0, sizeof(k));
        kid = json_object_get(jwk, "kid");
        alg = json_object_get(jwk, "alg");
        if (strcmp(json_string_value(kty), "RSA") == 0) {
            why = jwks_rsa(jwk, &k);
        } else if (strcmp(json_string_value(kty), "EC") == 0) {
            why = jwks_ec(jwk, &k);
        } else {
            continue;                   /* oct, OKP: not for JWS here */
        }
        if (why == NULL && kid != NULL && !json_is_string(kid)) {
            why = "\"kid\" must be a string";
        }
        if (why == NULL && alg != NULL && !json_is_string(alg)) {
            why = "\"alg\" must be a string";
        }
        if (why != NULL) {
            (void) jwks_fail(errstr, errstr_size, "%s: key %zu%s%s%s: %s",
                             what, i, json_is_string(kid) ? " (kid '" : "",
                             json_is_string(kid) ? json_string_value(kid)
                                                 : "",
                             json_is_string(kid) ? "')" : "", why);
            jwks_key_fini(&k);
            samsa_jwks_free(set);
            json_decref(doc);           /* kid pointed into it */
            return SAMSA_ERR__CONFIG;
        }
        k.kid = kid != NULL ? samsa_strdup(json_string_value(kid)) : NULL;
        k.alg = alg != NULL ? samsa_strdup(json_string_value(alg)) : NULL;
        set->keys[set->n++] = k;
    }
    json_decref(doc);
    if (set->n == 0) {
        samsa_jwks_free(set);
        return jwks_fail(errstr, errstr_size, "%s: the key set holds no RSA "
                         "or EC signing key", what);
    }
    *out = set;
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_jwks_load(const char *url, const char *key, samsa_jwks_t **out,
                char *errstr, size_t errstr_size)
{
    const char  *path;
    char         what[1200];
    char        *buf;
    size_t       n;
    FILE        *f;
    samsa_err_t  err;

    *out = NULL;
    if (strncasecmp(url, "file:", 5) != 0) {
        return jwks_fail(errstr, errstr_size, "invalid value '%s' for "
                         "configuration '%s': Samsa reads a file: URL (a JSON "
                         "Web Key Set on disk); %s endpoints are not "
                         "implemented", url, key,
                         strncasecmp(url, "http", 4) == 0 ? "HTTP(S) JWKS"
                                                          : "other");
    }
    path = url + 5;
    if (strncmp(path, "//", 2) == 0) {
        path += 2;                      /* file://[localhost]/path */
        if (strncasecmp(path, "localhost/", 10) == 0) {
            path += 9;
        }
    }
    if (path[0] != '/') {
        return jwks_fail(errstr, errstr_size, "invalid value '%s' for "
                         "configuration '%s': a file: URL needs an absolute "
                         "path", url, key);
    }
    snprintf(what, sizeof(what), "%s '%s'", key, path);
    f = fopen(path, "rb");
    if (f == NULL) {
        return jwks_fail(errstr, errstr_size, "%s: %s", what,
                         strerror(errno));
    }
    buf = samsa_malloc(JWKS_FILE_MAX + 1);
    n = fread(buf, 1, JWKS_FILE_MAX + 1, f);
    if (ferror(f)) {
        err = jwks_fail(errstr, errstr_size, "%s: cannot read it", what);
    } else if (n > JWKS_FILE_MAX) {
        err = jwks_fail(errstr, errstr_size, "%s: larger than %d bytes",
                        what, JWKS_FILE_MAX);
    } else {
        err = samsa_jwks_parse(buf, n, what, out, errstr, errstr_size);
    }
    fclose(f);
    samsa_free(buf);
    return err;
}

/* ---- the validator -------------------------------------------------- */

void
samsa_jwks_conf_init(samsa_jwks_conf_t *c)
{
    memset(c, 0, sizeof(*c));
    c->sub_claim = samsa_strdup("sub");
    c->scope_claim = samsa_strdup("scope");
    c->clock_skew_ms = 30000;
}

void
samsa_jwks_conf_fini(samsa_jwks_conf_t *c)
{
    size_t  i;

    samsa_free(c->sub_claim);
    samsa_free(c->scope_claim);
    samsa_free(c->expected_issuer);
    for (i = 0; i < c->nexpected_audience; i++) {
        samsa_free(c->expected_audience[i]);
    }
    samsa_free(c->expected_audience);
    samsa_jwks_free(c->keys);
    memset(c, 0, sizeof(*c));
}

static samsa_err_t jwks_bad(samsa_oauth_token_t *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static samsa_err_t
jwks_bad(samsa_oauth_token_t *t, const char *fmt, ...)
{
    va_list  ap;

    snprintf(t->status, sizeof(t->status), "invalid_token");
    va_start(ap, fmt);
    vsnprintf(t->why, sizeof(t->why), fmt, ap);
    va_end(ap);
    return SAMSA_ERR_SASL_AUTHENTICATION_FAILED;
}

/* A base64url JWS part as JSON (an object), or NULL. */
static json_t *
jwks_json_part(const char *p, size_t n)
{
    size_t   len = 0;
    char    *raw = samsa_oauth_b64_decode(p, n, &len);
    json_t  *j;

    if (raw == NULL) {
        return NULL;
    }
    j = json_loadb(raw, len, JSON_REJECT_DUPLICATES, NULL);
    samsa_free(raw);
    if (j != NULL && !json_is_object(j)) {
        json_decref(j);
        j = NULL;
    }
    return j;
}

static const EVP_MD *
jwks_md(const char *alg)
{
    const char  *bits = alg + 2;

    if (strcmp(bits, "256") == 0) {
        return EVP_sha256();
    }
    if (strcmp(bits, "384") == 0) {
        return EVP_sha384();
    }
    return strcmp(bits, "512") == 0 ? EVP_sha512() : NULL;
}

/* Is k fit for alg (its type, curve and own "alg")? */
static bool
jwks_key_fits(const jwks_key_t *k, const char *alg)
{
    if (k->alg != NULL && strcmp(k->alg, alg) != 0) {
        return false;
    }
    if (alg[0] == 'R' || alg[0] == 'P') {
        return k->kty == JWKS_RSA;
    }
    return k->kty == JWKS_EC
           && ((strcmp(alg, "ES256") == 0 && k->ec_bits == 256)
               || (strcmp(alg, "ES384") == 0 && k->ec_bits == 384)
               || (strcmp(alg, "ES512") == 0 && k->ec_bits == 521));
}

/* JWS's ECDSA signature (R || S, each the field's size) as OpenSSL's DER;
 * NULL when its length is not the curve's. */
static uint8_t *
jwks_ecdsa_der(const uint8_t *sig, size_t len, int bits, size_t *der_len)
{
    size_t      flen = (size_t) (bits + 7) / 8;
    ECDSA_SIG  *es;
    BIGNUM     *r, *s;
    uint8_t    *der = NULL, *p;
    int         n;

    if (len != 2 * flen) {
        return NULL;
    }
    es = ECDSA_SIG_new();
    r = BN_bin2bn(sig, (int) flen, NULL);
    s = BN_bin2bn(sig + flen, (int) flen, NULL);
    if (es == NULL || r == NULL || s == NULL
        || ECDSA_SIG_set0(es, r, s) != 1) {
        BN_free(r);
        BN_free(s);
        ECDSA_SIG_free(es);
        return NULL;
    }
    n = i2d_ECDSA_SIG(es, NULL);
    if (n > 0) {
        der = samsa_malloc((size_t) n);
        p = der;
        n = i2d_ECDSA_SIG(es, &p);
        *der_len = (size_t) n;
    }
    ECDSA_SIG_free(es);
    return der;
}

static bool
jwks_verify(const jwks_key_t *k, const char *alg, const char *data,
            size_t dlen, const uint8_t *sig, size_t slen)
{
    const EVP_MD  *md = jwks_md(alg);
    EVP_MD_CTX    *mctx;
    EVP_PKEY_CTX  *pctx = NULL;
    uint8_t       *der = NULL;
    size_t         der_len = 0;
    bool           ok = false;

    if (md == NULL) {
        return false;
    }
    if (alg[0] == 'E') {
        der = jwks_ecdsa_der(sig, slen, k->ec_bits, &der_len);
        if (der == NULL) {
            return false;
        }
        sig = der;
        slen = der_len;
    }
    mctx = EVP_MD_CTX_new();
    if (mctx != NULL
        && EVP_DigestVerifyInit(mctx, &pctx, md, NULL, k->pkey) == 1
        && (alg[0] != 'P'
            || (EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) == 1
                && EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx,
                                                    RSA_PSS_SALTLEN_DIGEST)
                       == 1
                && EVP_PKEY_CTX_set_rsa_mgf1_md(pctx, md) == 1))) {
        ok = EVP_DigestVerify(mctx, sig, slen, (const uint8_t *) data, dlen)
             == 1;
    }
    EVP_MD_CTX_free(mctx);
    samsa_free(der);
    return ok;
}

static bool
jwks_alg_known(const char *alg)
{
    return (alg[0] == 'R' || alg[0] == 'P' || alg[0] == 'E')
           && alg[1] == 'S' && jwks_md(alg) != NULL && strlen(alg) == 5;
}

/* The header: a known algorithm, no critical extensions, and a key of
 * the set that verifies the signature. */
static samsa_err_t
jwks_check_signature(const samsa_jwks_conf_t *c, json_t *header,
                     const char *signed_part, size_t signed_len,
                     const char *sig_b64, size_t sig_b64_len,
                     samsa_oauth_token_t *out)
{
    json_t       *jalg = json_object_get(header, "alg");
    json_t       *jkid = json_object_get(header, "kid");
    const char   *alg, *kid;
    uint8_t      *sig;
    size_t        slen = 0, i, fit = 0;
    bool          ok = false;

    if (!json_is_string(jalg)) {
        return jwks_bad(out, "JWS header must have an Algorithm value");
    }
    alg = json_string_value(jalg);
    if (strcmp(alg, "none") == 0) {
        return jwks_bad(out, "'none' is not a permitted algorithm: the "
                        "token must be signed");
    }
    if (!jwks_alg_known(alg)) {
        return jwks_bad(out, "the signature algorithm '%.32s' is not one of "
                        "RS256, RS384, RS512, PS256, PS384, PS512, ES256, "
                        "ES384, ES512", alg);
    }
    if (json_object_get(header, "crit") != NULL) {
        return jwks_bad(out, "the JWS header has critical extensions "
                        "(\"crit\") this validator does not understand");
    }
    if (jkid != NULL && !json_is_string(jkid)) {
        return jwks_bad(out, "the JWS header's \"kid\" must be a string");
    }
    kid = jkid != NULL ? json_string_value(jkid) : NULL;
    if (sig_b64_len == 0) {
        return jwks_bad(out, "the token has no signature");
    }
    sig = (uint8_t *) samsa_oauth_b64_decode(sig_b64, sig_b64_len, &slen);
    if (sig == NULL) {
        return jwks_bad(out, "the signature is not Base64URL");
    }
    for (i = 0; i < c->keys->n && !ok; i++) {
        const jwks_key_t  *k = &c->keys->keys[i];

        if (kid != NULL ? k->kid == NULL || strcmp(k->kid, kid) != 0
                        : false) {
            continue;
        }
        if (!jwks_key_fits(k, alg)) {
            continue;
        }
        fit++;
        if (kid == NULL && fit > 1) {
            break;                      /* which one: not ours to guess */
        }
        ok = jwks_verify(k, alg, signed_part, signed_len, sig, slen);
    }
    samsa_free(sig);
    if (ok) {
        return SAMSA_ERR_NONE;
    }
    if (fit == 0) {
        return kid != NULL
                   ? jwks_bad(out, "no key with kid '%.64s' fit for %s in the "
                              "JSON Web Key Set", kid, alg)
                   : jwks_bad(out, "no key fit for %s in the JSON Web Key "
                              "Set", alg);
    }
    if (kid == NULL && fit > 1) {
        return jwks_bad(out, "the token names no kid and the JSON Web Key "
                        "Set holds several keys fit for %s", alg);
    }
    return jwks_bad(out, "the JWS signature does not verify");
}

/* A NumericDate claim in ms; false when absent or not a number. */
static bool
jwks_time(json_t *claims, const char *name, int64_t *ms)
{
    json_t  *v = json_object_get(claims, name);
    double   d;

    if (!json_is_number(v)) {
        return false;
    }
    d = json_number_value(v);
    if (!(d > -1e13 && d < 1e13)) {     /* NaN, or beyond year 300,000 */
        return false;
    }
    *ms = (int64_t) (d * 1000.0);
    return true;
}

static bool
jwks_aud_has(json_t *aud, const char *want)
{
    json_t  *v;
    size_t   i;

    if (json_is_string(aud)) {
        return strcmp(json_string_value(aud), want) == 0;
    }
    json_array_foreach(aud, i, v) {
        if (json_is_string(v) && strcmp(json_string_value(v), want) == 0) {
            return true;
        }
    }
    return false;
}

static samsa_err_t
jwks_check_claims(const samsa_jwks_conf_t *c, json_t *claims, int64_t now_ms,
                  samsa_oauth_token_t *out)
{
    json_t   *sub = json_object_get(claims, c->sub_claim);
    json_t   *scope = json_object_get(claims, c->scope_claim);
    json_t   *iss, *aud, *v;
    int64_t   exp_ms, iat_ms, nbf_ms;
    size_t    i;
    bool      aud_ok = false;

    if (json_object_get(claims, "exp") == NULL) {
        return jwks_bad(out, "No Expiration Time (exp) claim present");
    }
    if (!jwks_time(claims, "exp", &exp_ms)) {
        return jwks_bad(out, "The Expiration Time (exp) claim is not a "
                        "NumericDate");
    }
    if (json_object_get(claims, "iat") == NULL) {
        return jwks_bad(out, "No Issued At (iat) claim present");
    }
    if (!jwks_time(claims, "iat", &iat_ms)) {
        return jwks_bad(out, "The Issued At (iat) claim is not a "
                        "NumericDate");
    }
    if (now_ms - c->clock_skew_ms >= exp_ms) {
        return jwks_bad(out, "The JWT is no longer valid: its Expiration "
                        "Time (exp=%" PRId64 ") is not after now (%" PRId64
                        ") less the allowed clock skew of %" PRId64 " s",
                        exp_ms / 1000, now_ms / 1000,
                        c->clock_skew_ms / 1000);
    }
    if (json_object_get(claims, "nbf") != NULL) {
        if (!jwks_time(claims, "nbf", &nbf_ms)) {
            return jwks_bad(out, "The Not Before (nbf) claim is not a "
                            "NumericDate");
        }
        if (now_ms + c->clock_skew_ms < nbf_ms) {
            return jwks_bad(out, "The JWT is not yet valid: its Not Before "
                            "(nbf=%" PRId64 ") is after now (%" PRId64
                            ") plus the allowed clock skew of %" PRId64 " s",
                            nbf_ms / 1000, now_ms / 1000,
                            c->clock_skew_ms / 1000);
        }
    }
    if (c->expected_issuer != NULL) {
        iss = json_object_get(claims, "iss");
        if (!json_is_string(iss)) {
            return jwks_bad(out, "No Issuer (iss) claim present but was "
                            "expecting %.64s", c->expected_issuer);
        }
        if (strcmp(json_string_value(iss), c->expected_issuer) != 0) {
            return jwks_bad(out, "Issuer (iss) claim value (%.64s) doesn't "
                            "match expected value of %.64s",
                            json_string_value(iss), c->expected_issuer);
        }
    }
    if (c->nexpected_audience > 0) {
        aud = json_object_get(claims, "aud");
        if (aud == NULL) {
            return jwks_bad(out, "No Audience (aud) claim present");
        }
        if (!json_is_string(aud) && !json_is_array(aud)) {
            return jwks_bad(out, "The Audience (aud) claim is neither a "
                            "string nor an array");
        }
        for (i = 0; i < c->nexpected_audience && !aud_ok; i++) {
            aud_ok = jwks_aud_has(aud, c->expected_audience[i]);
        }
        if (!aud_ok) {
            return jwks_bad(out, "Audience (aud) claim present in the JWT "
                            "but no expected audience value matched");
        }
    }
    if (!json_is_string(sub) || json_string_length(sub) == 0) {
        return jwks_bad(out, "The principal claim (%.64s) must be a "
                        "non-empty string", c->sub_claim);
    }
    if (json_string_length(sub) >= sizeof(out->principal)) {
        return jwks_bad(out, "The principal claim (%.64s) is longer than "
                        "%zu bytes", c->sub_claim, sizeof(out->principal) - 1);
    }
    if (scope != NULL && !json_is_string(scope)) {
        if (!json_is_array(scope)) {
            return jwks_bad(out, "The scope claim (%.64s) must be a string "
                            "or a list of strings", c->scope_claim);
        }
        json_array_foreach(scope, i, v) {
            if (!json_is_string(v)) {
                return jwks_bad(out, "The scope claim (%.64s) must be a "
                                "string or a list of strings",
                                c->scope_claim);
            }
        }
    }
    snprintf(out->principal, sizeof(out->principal), "%s",
             json_string_value(sub));
    out->lifetime_ms = exp_ms;
    out->start_ms = iat_ms;
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_jwks_validate(const samsa_jwks_conf_t *c, samsa_slice_t token,
                    int64_t now_ms, samsa_oauth_token_t *out)
{
    const char   *p = token.ptr, *d1, *d2;
    json_t       *header = NULL, *claims = NULL;
    samsa_err_t   err;

    memset(out, 0, sizeof(*out));
    out->start_ms = -1;
    d1 = p != NULL ? memchr(p, '.', token.len) : NULL;
    d2 = d1 != NULL ? memchr(d1 + 1, '.', token.len - (size_t) (d1 + 1 - p))
                    : NULL;
    if (d2 == NULL || memchr(d2 + 1, '.', token.len - (size_t) (d2 + 1 - p))
                          != NULL) {
        return jwks_bad(out, "A JWS compact serialization must have 3 "
                        "dot-separated Base64URL-encoded values");
    }
    if (c->keys == NULL) {
        return jwks_bad(out, "no JSON Web Key Set is loaded");
    }
    header = jwks_json_part(p, (size_t) (d1 - p));
    if (header == NULL) {
        return jwks_bad(out, "the JWS header is not Base64URL-encoded JSON");
    }
    claims = jwks_json_part(d1 + 1, (size_t) (d2 - d1 - 1));
    if (claims == NULL) {
        json_decref(header);
        return jwks_bad(out, "the JWT claims are not Base64URL-encoded "
                        "JSON");
    }
    err = jwks_check_signature(c, header, p, (size_t) (d2 - p), d2 + 1,
                               token.len - (size_t) (d2 + 1 - p), out);
    if (err == SAMSA_ERR_NONE) {
        err = jwks_check_claims(c, claims, now_ms, out);
    }
    json_decref(header);
    json_decref(claims);
    return err;
}

samsa_err_t
samsa_jwks_validate_fn(void *ctx, samsa_slice_t token, int64_t now_ms,
                       samsa_oauth_token_t *out)
{
    return samsa_jwks_validate(ctx, token, now_ms, out);
}
