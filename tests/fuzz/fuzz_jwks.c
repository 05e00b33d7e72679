/*
 * libFuzzer target: KIP-768's JWKS validator (server/oauth_jwks.c).  The
 * first byte picks what the rest is:
 *   0: a JWK Set document (an operator's file: JSON, JWK members, keys
 *      built with OpenSSL);
 *   1: a token (compact JWS) checked against a fixed key set (an EC P-256
 *      key made at start): header and claims decoding, key selection,
 *      signature checks;
 *   2: a token's claims JSON, signed here with that key (ES256, its kid),
 *      so that every claim rule (exp, iat, nbf, iss, aud, the principal
 *      and scope claims) sees the input.
 * Whatever comes back must be consistent: a key set holds keys, a success
 * names a principal and an expiry, a failure has a status and a reason.
 */
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>

#include "server/oauth_jwks.h"
#include "util/alloc.h"

#define FUZZ_NOW_MS  1800000000000LL

static EVP_PKEY           *key;
static samsa_jwks_conf_t   conf;

static void
b64url(const uint8_t *p, size_t n, char *out)
{
    size_t  len, i;

    EVP_EncodeBlock((unsigned char *) out, p, (int) n);
    len = strlen(out);
    while (len > 0 && out[len - 1] == '=') {
        len--;
    }
    out[len] = '\0';
    for (i = 0; i < len; i++) {
        out[i] = out[i] == '+' ? '-' : out[i] == '/' ? '_' : out[i];
    }
}

static void
bn_b64url(const BIGNUM *bn, char *out)
{
    uint8_t  raw[32];

    fuzz_require(BN_bn2binpad(bn, raw, sizeof(raw)) == sizeof(raw));
    b64url(raw, sizeof(raw), out);
}

static void
fuzz_init(void)
{
    BIGNUM  *x = NULL, *y = NULL;
    char     bx[64], by[64], doc[512], err[256];

    if (key != NULL) {
        return;
    }
    key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
    fuzz_require(key != NULL);
    fuzz_require(EVP_PKEY_get_bn_param(key, OSSL_PKEY_PARAM_EC_PUB_X, &x)
                 == 1);
    fuzz_require(EVP_PKEY_get_bn_param(key, OSSL_PKEY_PARAM_EC_PUB_Y, &y)
                 == 1);
    bn_b64url(x, bx);
    bn_b64url(y, by);
    BN_free(x);
    BN_free(y);
    snprintf(doc, sizeof(doc), "{\"keys\":[{\"kty\":\"EC\",\"kid\":\"k1\","
             "\"crv\":\"P-256\",\"x\":\"%s\",\"y\":\"%s\"}]}", bx, by);
    samsa_jwks_conf_init(&conf);
    conf.expected_issuer = samsa_strdup("iss1");
    conf.expected_audience = samsa_calloc(1, sizeof(char *));
    conf.expected_audience[0] = samsa_strdup("aud1");
    conf.nexpected_audience = 1;
    fuzz_require(samsa_jwks_parse(doc, strlen(doc), "fuzz", &conf.keys, err,
                                  sizeof(err)) == SAMSA_ERR_NONE);
}

static void
check(samsa_slice_t token)
{
    samsa_oauth_token_t  t;

    if (samsa_jwks_validate(&conf, token, FUZZ_NOW_MS, &t)
        == SAMSA_ERR_NONE) {
        fuzz_require(t.principal[0] != '\0' && t.lifetime_ms > 0);
        return;
    }
    fuzz_require(strcmp(t.status, "invalid_token") == 0 && t.why[0] != '\0');
}

/* header.claims.signature with claims the input, ES256 by the key. */
static void
signed_claims(const uint8_t *p, size_t n)
{
    static const char  header[] = "{\"alg\":\"ES256\",\"kid\":\"k1\"}";
    EVP_MD_CTX        *m = EVP_MD_CTX_new();
    ECDSA_SIG         *es;
    const BIGNUM      *r, *s;
    const uint8_t     *dp;
    uint8_t            der[128], raw[64];
    size_t             len = 0, dlen = sizeof(der), cap = 4 * (n + 2) / 3 + 64;
    char              *tok = samsa_malloc(cap + 256);

    b64url((const uint8_t *) header, sizeof(header) - 1, tok);
    len = strlen(tok);
    tok[len++] = '.';
    b64url(p, n, tok + len);
    len += strlen(tok + len);
    fuzz_require(m != NULL
                 && EVP_DigestSignInit(m, NULL, EVP_sha256(), NULL, key) == 1
                 && EVP_DigestSign(m, der, &dlen, (const uint8_t *) tok, len)
                        == 1);
    EVP_MD_CTX_free(m);
    dp = der;
    es = d2i_ECDSA_SIG(NULL, &dp, (long) dlen);
    fuzz_require(es != NULL);
    ECDSA_SIG_get0(es, &r, &s);
    fuzz_require(BN_bn2binpad(r, raw, 32) == 32
                 && BN_bn2binpad(s, raw + 32, 32) == 32);
    ECDSA_SIG_free(es);
    tok[len++] = '.';
    b64url(raw, sizeof(raw), tok + len);
    len += strlen(tok + len);
    check((samsa_slice_t) { tok, len });
    samsa_free(tok);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    samsa_jwks_t  *set = NULL;
    char           err[512];

    fuzz_init();
    if (size == 0) {
        return 0;
    }
    switch (data[0] % 3) {
    case 0:
        if (samsa_jwks_parse((const char *) data + 1, size - 1, "fuzz", &set,
                             err, sizeof(err)) == SAMSA_ERR_NONE) {
            fuzz_require(samsa_jwks_count(set) > 0);
            samsa_jwks_free(set);
        } else {
            fuzz_require(set == NULL && err[0] != '\0');
        }
        break;
    case 1:
        check((samsa_slice_t) { (const char *) data + 1, size - 1 });
        break;
    default:
        if (size < 4096) {
            signed_claims(data + 1, size - 1);
        }
        break;
    }
    return 0;
}
