/*
 * client/oauth_login.c - unsecured OAUTHBEARER tokens from the JAAS
 * options (see oauth_login.h), as Kafka's
 * OAuthBearerUnsecuredLoginCallbackHandler makes them.  JSON is written
 * here (libsamsa links no JSON library): strings escaped per RFC 8259,
 * numbers checked with strtod and written as given.
 * Threads: pure functions.
 */
#include "client/oauth_login.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "util/alloc.h"

#define OL_PREFIX           "unsecuredLogin"
#define OL_STRING_CLAIM     OL_PREFIX "StringClaim_"
#define OL_NUMBER_CLAIM     OL_PREFIX "NumberClaim_"
#define OL_LIST_CLAIM       OL_PREFIX "ListClaim_"
#define OL_EXTENSION        OL_PREFIX "Extension_"
#define OL_PRINCIPAL_NAME   OL_PREFIX "PrincipalClaimName"
#define OL_SCOPE_NAME       OL_PREFIX "ScopeClaimName"
#define OL_LIFETIME         OL_PREFIX "LifetimeSeconds"
#define OL_LIFETIME_DEFAULT 3600

static bool
ol_prefixed(const char *key, const char *prefix, const char **rest)
{
    size_t  n = strlen(prefix);

    if (strncmp(key, prefix, n) != 0 || key[n] == '\0') {
        return false;
    }
    *rest = key + n;
    return true;
}

static void
ol_puts(samsa_buf_t *b, const char *s)
{
    samsa_buf_append(b, s, strlen(s));
}

/* s as a JSON string, quotes included. */
static void
ol_json_str(samsa_buf_t *b, const char *s, size_t n)
{
    char    esc[8];
    size_t  i;

    ol_puts(b, "\"");
    for (i = 0; i < n; i++) {
        unsigned char  c = (unsigned char) s[i];

        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char) c;
            samsa_buf_append(b, esc, 2);
        } else if (c < 0x20) {
            snprintf(esc, sizeof(esc), "\\u%04x", c);
            ol_puts(b, esc);
        } else {
            samsa_buf_append(b, &s[i], 1);
        }
    }
    ol_puts(b, "\"");
}

/* A finite decimal number (what Java's Double.valueOf takes, bar its
 * hexadecimal and "NaN"/"Infinity" forms, which JSON cannot carry). */
static bool
ol_number(const char *s, double *out)
{
    char   *end;
    double  v;

    if (s == NULL || *s == '\0') {
        return false;
    }
    errno = 0;
    v = strtod(s, &end);
    if (*end != '\0' || errno == ERANGE || !isfinite(v)
        || strpbrk(s, "xXnN") != NULL) {
        return false;
    }
    *out = v;
    return true;
}

/* RFC 7628's key: ALPHA+; "auth" is the token's own. */
static bool
ol_extension_name_ok(const char *s)
{
    const char  *p;

    if (*s == '\0' || strcmp(s, "auth") == 0) {
        return false;
    }
    for (p = s; *p != '\0'; p++) {
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))) {
            return false;
        }
    }
    return true;
}

/* RFC 7628's value: 1*(VCHAR / SP / HTAB / CR / LF). */
static bool
ol_extension_value_ok(const char *s)
{
    const unsigned char  *p;

    if (*s == '\0') {
        return false;
    }
    for (p = (const unsigned char *) s; *p != '\0'; p++) {
        if (!((*p >= 0x21 && *p <= 0x7e) || *p == ' ' || *p == '\t'
              || *p == '\r' || *p == '\n')) {
            return false;
        }
    }
    return true;
}

/* base64url without padding (RFC 7515's encoding of JWS parts). */
static void
ol_b64url(samsa_buf_t *b, const uint8_t *p, size_t n)
{
    size_t   cap = 4 * ((n + 2) / 3) + 1, i, len;
    char    *tmp = samsa_malloc(cap);

    EVP_EncodeBlock((unsigned char *) tmp, p, (int) n);
    len = strlen(tmp);
    while (len > 0 && tmp[len - 1] == '=') {
        len--;
    }
    for (i = 0; i < len; i++) {
        tmp[i] = tmp[i] == '+' ? '-' : tmp[i] == '/' ? '_' : tmp[i];
    }
    samsa_buf_append(b, tmp, len);
    samsa_free(tmp);
}

/* A list claim's value: the first character is the delimiter, every
 * element (empty ones too) a JSON string. */
static void
ol_json_list(samsa_buf_t *b, const char *v)
{
    const char  *p, *q;
    char         delim;

    if (strlen(v) <= 1) {
        ol_puts(b, "[]");
        return;
    }
    delim = v[0];
    ol_puts(b, "[");
    for (p = v + 1;; p = q + 1) {
        q = strchr(p, delim);
        if (p != v + 1) {
            ol_puts(b, ",");
        }
        ol_json_str(b, p, q != NULL ? (size_t) (q - p) : strlen(p));
        if (q == NULL) {
            break;
        }
    }
    ol_puts(b, "]");
}

static samsa_err_t ol_fail(char *errstr, size_t errstr_size,
                           const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static samsa_err_t
ol_fail(char *errstr, size_t errstr_size, const char *fmt, ...)
{
    char     why[256];
    va_list  ap;

    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    snprintf(errstr, errstr_size, "OAUTHBEARER unsecured login ("
             SAMSA_JAAS_OAUTHBEARER_MODULE " options): %s", why);
    return SAMSA_ERR__CONFIG;
}

samsa_err_t
samsa_oauth_login_token(const samsa_jaas_conf_t *jc, int64_t now_ms,
                        samsa_buf_t *token, samsa_buf_t *extensions,
                        char *errstr, size_t errstr_size)
{
    static const char  header[] = "{\"alg\":\"none\"}";
    const char        *principal = samsa_jaas_conf_get(jc, OL_PRINCIPAL_NAME);
    const char        *lifetime = samsa_jaas_conf_get(jc, OL_LIFETIME);
    const char        *name, *val, *sub = NULL;
    samsa_buf_t        claims = SAMSA_BUF_INIT;
    double             life = OL_LIFETIME_DEFAULT, num;
    char               nbuf[64];
    size_t             i;
    samsa_err_t        err = SAMSA_ERR_NONE;

    token->len = 0;
    extensions->len = 0;
    if (principal == NULL || principal[0] == '\0') {
        principal = "sub";
    }
    if (lifetime != NULL && !ol_number(lifetime, &life)) {
        return ol_fail(errstr, errstr_size, "%s=\"%s\" is not a number",
                       OL_LIFETIME, lifetime);
    }
    snprintf(nbuf, sizeof(nbuf), "{\"exp\":%.3f,\"iat\":%.3f",
             (double) now_ms / 1000.0 + life, (double) now_ms / 1000.0);
    ol_puts(&claims, nbuf);
    for (i = 0; i < jc->nopts && err == SAMSA_ERR_NONE; i++) {
        const char  *key = jc->keys[i];

        val = jc->values[i];
        if (samsa_jaas_conf_get(jc, key) != val) {
            continue;                   /* repeated: the last one counts */
        }
        if (ol_prefixed(key, OL_EXTENSION, &name)) {
            if (!ol_extension_name_ok(name)) {
                err = ol_fail(errstr, errstr_size,
                              "Extension name %s is invalid", name);
            } else if (!ol_extension_value_ok(val)) {
                err = ol_fail(errstr, errstr_size, "Extension value for "
                              "extension %s is invalid", name);
            } else {
                ol_puts(extensions, "\x01");
                ol_puts(extensions, name);
                ol_puts(extensions, "=");
                ol_puts(extensions, val);
            }
            continue;
        }
        if (!ol_prefixed(key, OL_STRING_CLAIM, &name)
            && !ol_prefixed(key, OL_NUMBER_CLAIM, &name)
            && !ol_prefixed(key, OL_LIST_CLAIM, &name)) {
            continue;
        }
        if (strcmp(name, "iat") == 0 || strcmp(name, "exp") == 0) {
            err = ol_fail(errstr, errstr_size, "Cannot explicitly set the "
                          "'%s' claim (%s)", name, key);
            continue;
        }
        ol_puts(&claims, ",");
        ol_json_str(&claims, name, strlen(name));
        ol_puts(&claims, ":");
        if (key[strlen(OL_PREFIX)] == 'S') {
            ol_json_str(&claims, val, strlen(val));
            if (strcmp(name, principal) == 0) {
                sub = val;
            }
        } else if (key[strlen(OL_PREFIX)] == 'N') {
            if (!ol_number(val, &num)) {
                err = ol_fail(errstr, errstr_size, "%s=\"%s\" is not a "
                              "number", key, val);
                continue;
            }
            ol_puts(&claims, val);
        } else {
            ol_json_list(&claims, val);
        }
    }
    if (err == SAMSA_ERR_NONE && (sub == NULL || sub[0] == '\0')) {
        err = ol_fail(errstr, errstr_size, "no principal: the string claim "
                      "'%s' (" OL_STRING_CLAIM "%s) is missing or empty",
                      principal, principal);
    }
    if (err == SAMSA_ERR_NONE) {
        ol_puts(&claims, "}");
        ol_b64url(token, (const uint8_t *) header, sizeof(header) - 1);
        ol_puts(token, ".");
        ol_b64url(token, claims.data, claims.len);
        ol_puts(token, ".");
    } else {
        token->len = 0;
        extensions->len = 0;
    }
    samsa_buf_fini(&claims);
    samsa_buf_reserve(token, 1)[0] = '\0';
    samsa_buf_reserve(extensions, 1)[0] = '\0';
    return err;
}
