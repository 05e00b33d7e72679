/*
 * server/oauth_unsecured.c - Kafka's OAuthBearerUnsecuredValidatorCallbackHandler
 * (server/oauth_unsecured.h); the token's JSON through jansson.
 */
#include "server/oauth_unsecured.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "util/alloc.h"

void
samsa_oauth_conf_init(samsa_oauth_conf_t *c)
{
    memset(c, 0, sizeof(*c));
    c->principal_claim = samsa_strdup("sub");
    c->scope_claim = samsa_strdup("scope");
}

void
samsa_oauth_conf_fini(samsa_oauth_conf_t *c)
{
    size_t  i;

    samsa_free(c->principal_claim);
    samsa_free(c->scope_claim);
    for (i = 0; i < c->nrequired_scope; i++) {
        samsa_free(c->required_scope[i]);
    }
    samsa_free(c->required_scope);
    memset(c, 0, sizeof(*c));
}

static samsa_err_t
oauth_fail(samsa_oauth_token_t *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static samsa_err_t
oauth_fail(samsa_oauth_token_t *t, const char *fmt, ...)
{
    va_list  ap;

    snprintf(t->status, sizeof(t->status), "invalid_token");
    va_start(ap, fmt);
    vsnprintf(t->why, sizeof(t->why), fmt, ap);
    va_end(ap);
    return SAMSA_ERR_SASL_AUTHENTICATION_FAILED;
}

char *
samsa_oauth_b64_decode(const char *p, size_t n, size_t *outlen)
{
    char      *out = samsa_malloc(n * 3 / 4 + 4);
    uint32_t   acc = 0;
    size_t     i, o = 0;
    int        bits = 0, v;

    while (n > 0 && p[n - 1] == '=') {
        n--;
    }
    for (i = 0; i < n; i++) {
        unsigned char  ch = (unsigned char) p[i];

        if (ch >= 'A' && ch <= 'Z') {
            v = ch - 'A';
        } else if (ch >= 'a' && ch <= 'z') {
            v = ch - 'a' + 26;
        } else if (ch >= '0' && ch <= '9') {
            v = ch - '0' + 52;
        } else if (ch == '-' || ch == '+') {
            v = 62;
        } else if (ch == '_' || ch == '/') {
            v = 63;
        } else {
            samsa_free(out);
            return NULL;
        }
        acc = (acc << 6) | (uint32_t) v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (char) ((acc >> bits) & 0xFF);
        }
    }
    if (n % 4 == 1) {
        samsa_free(out);
        return NULL;
    }
    out[o] = '\0';
    *outlen = o;
    return out;
}

/* One part of the token as a JSON object (a new reference), or NULL with
 * the failure in t. */
static json_t *
oauth_part(const char *p, size_t n, samsa_oauth_token_t *t)
{
    json_error_t   e;
    json_t        *j;
    size_t         len = 0;
    char          *raw = samsa_oauth_b64_decode(p, n, &len);

    if (raw == NULL) {
        (void) oauth_fail(t, "malformed Base64 URL encoded value");
        return NULL;
    }
    j = json_loadb(raw, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &e);
    samsa_free(raw);
    if (j == NULL || !json_is_object(j)) {
        json_decref(j);
        (void) oauth_fail(t, "malformed JSON");
        return NULL;
    }
    return j;
}

/* Java's getSimpleName of what Jackson turns a JSON value into. */
static const char *
oauth_type(const json_t *v)
{
    if (json_is_number(v)) {
        return json_is_integer(v) ? "Integer" : "Double";
    }
    return json_is_array(v) ? "ArrayList" : "String";
}

/* The numeric claim name of claims: true with *out, false when absent;
 * -1 (the failure in t) when it is not a number. */
static int
oauth_number(json_t *claims, const char *name, double *out,
             samsa_oauth_token_t *t)
{
    json_t  *v = json_object_get(claims, name);

    if (v == NULL || json_is_null(v)) {
        return 0;
    }
    if (!json_is_number(v)) {
        (void) oauth_fail(t, "The '%s' claim was not of type Number: %s",
                          name, oauth_type(v));
        return -1;
    }
    *out = json_number_value(v);
    return 1;
}

/* Does the token's scope claim (a space-delimited string or a list)
 * hold want? */
static bool
oauth_scope_has(json_t *scope, const char *want)
{
    const char  *s, *e;
    size_t       i, n = strlen(want);

    if (json_is_array(scope)) {
        for (i = 0; i < json_array_size(scope); i++) {
            json_t  *x = json_array_get(scope, i);

            if (json_is_string(x) && strcmp(json_string_value(x), want) == 0) {
                return true;
            }
        }
        return false;
    }
    if (!json_is_string(scope)) {
        return false;
    }
    for (s = json_string_value(scope); *s != '\0'; s = e) {
        while (*s == ' ') {
            s++;
        }
        for (e = s; *e != '\0' && *e != ' '; e++) {
        }
        if ((size_t) (e - s) == n && n > 0 && memcmp(s, want, n) == 0) {
            return true;
        }
    }
    return false;
}

/* The required scope as Java prints a List: "[a, b]". */
static void
oauth_scope_list(const samsa_oauth_conf_t *c, char *buf, size_t size)
{
    size_t  i, o;

    o = (size_t) snprintf(buf, size, "[");
    for (i = 0; i < c->nrequired_scope && o < size; i++) {
        o += (size_t) snprintf(buf + o, size - o, "%s%s", i > 0 ? ", " : "",
                               c->required_scope[i]);
    }
    if (o < size) {
        snprintf(buf + o, size - o, "]");
    }
}

/* Seconds (a JSON number) to ms, rounded as Java's Math.round, clamped
 * to what an int64 of ms holds. */
static int64_t
oauth_ms(double seconds)
{
    double  ms = seconds * 1000;

    if (ms >= 9.2e18) {
        return INT64_MAX;
    }
    if (ms <= -9.2e18) {
        return INT64_MIN;
    }
    return ms >= 0 ? (int64_t) (ms + 0.5) : -(int64_t) (-ms + 0.5);
}

/* The checks of Kafka's handleCallback after the token parsed. */
static samsa_err_t
oauth_check(const samsa_oauth_conf_t *c, json_t *claims, int64_t now_ms,
            samsa_oauth_token_t *t)
{
    json_t   *sub, *scope;
    double    exp = 0, iat = 0;
    int       has_exp, has_iat;
    size_t    i;

    has_exp = oauth_number(claims, "exp", &exp, t);
    if (has_exp < 0) {
        return SAMSA_ERR_SASL_AUTHENTICATION_FAILED;
    }
    if (has_exp == 0) {
        return oauth_fail(t, "No expiration time in JWT");
    }
    sub = json_object_get(claims, c->principal_claim);
    if (sub != NULL && !json_is_null(sub) && !json_is_string(sub)) {
        return oauth_fail(t, "The '%s' claim was not of type String: %s",
                          c->principal_claim, oauth_type(sub));
    }
    if (sub == NULL || !json_is_string(sub)
        || strspn(json_string_value(sub), " \t\r\n")
               == strlen(json_string_value(sub))) {
        return oauth_fail(t, "No principal name in JWT claim: %s",
                          c->principal_claim);
    }
    if (strlen(json_string_value(sub)) >= sizeof(t->principal)) {
        return oauth_fail(t, "The principal name in JWT claim %s is longer "
                          "than %zu bytes", c->principal_claim,
                          sizeof(t->principal) - 1);
    }
    has_iat = oauth_number(claims, "iat", &iat, t);
    if (has_iat < 0) {
        return SAMSA_ERR_SASL_AUTHENTICATION_FAILED;
    }
    if (has_iat > 0 && 1000 * iat > (double) (now_ms + c->clock_skew_ms)) {
        return oauth_fail(t, "The Issued At value (%f seconds) was after the "
                          "indicated time (%lld ms) plus allowable clock "
                          "skew (%lld ms)", iat, (long long) now_ms,
                          (long long) c->clock_skew_ms);
    }
    if ((double) (now_ms - c->clock_skew_ms) >= 1000 * exp) {
        return oauth_fail(t, "The indicated time (%lld ms) minus allowable "
                          "clock skew (%lld ms) was on or after the "
                          "Expiration Time value (%f seconds)",
                          (long long) now_ms, (long long) c->clock_skew_ms,
                          exp);
    }
    if (has_iat > 0 && exp <= iat) {
        return oauth_fail(t, "The Expiration Time time (%f seconds) was not "
                          "after the Issued At time (%f seconds)", exp, iat);
    }
    scope = json_object_get(claims, c->scope_claim);
    for (i = 0; i < c->nrequired_scope; i++) {
        if (!oauth_scope_has(scope, c->required_scope[i])) {
            (void) oauth_fail(t, "The provided scope was missing a required "
                              "scope (%s)", c->required_scope[i]);
            snprintf(t->status, sizeof(t->status), "insufficient_scope");
            oauth_scope_list(c, t->scope, sizeof(t->scope));
            return SAMSA_ERR_SASL_AUTHENTICATION_FAILED;
        }
    }
    snprintf(t->principal, sizeof(t->principal), "%s",
             json_string_value(sub));
    t->lifetime_ms = oauth_ms(exp);
    t->start_ms = has_iat > 0 ? oauth_ms(iat) : -1;
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_oauth_validate_unsecured(const samsa_oauth_conf_t *c,
                               samsa_slice_t token, int64_t now_ms,
                               samsa_oauth_token_t *out)
{
    const char   *p = token.ptr, *d1, *d2;
    json_t       *header = NULL, *claims = NULL, *alg;
    samsa_err_t   err;

    memset(out, 0, sizeof(*out));
    out->start_ms = -1;
    if (p == NULL || token.len == 0) {
        return oauth_fail(out, "Unsecured JWS compact serializations must "
                          "have 3 dot-separated Base64URL-encoded values");
    }
    if (memmem(p, token.len, "..", 2) != NULL) {
        return oauth_fail(out, "Malformed compact serialization contains "
                          "'..'");
    }
    d1 = memchr(p, '.', token.len);
    d2 = d1 != NULL ? memchr(d1 + 1, '.', token.len - (size_t) (d1 + 1 - p))
                    : NULL;
    if (d2 == NULL || memchr(d2 + 1, '.', token.len - (size_t) (d2 + 1 - p))
                          != NULL) {
        return oauth_fail(out, "Unsecured JWS compact serializations must "
                          "have 3 dot-separated Base64URL-encoded values");
    }
    header = oauth_part(p, (size_t) (d1 - p), out);
    if (header == NULL) {
        return SAMSA_ERR_SASL_AUTHENTICATION_FAILED;
    }
    claims = oauth_part(d1 + 1, (size_t) (d2 - d1 - 1), out);
    if (claims == NULL) {
        json_decref(header);
        return SAMSA_ERR_SASL_AUTHENTICATION_FAILED;
    }
    alg = json_object_get(header, "alg");
    if (alg == NULL || json_is_null(alg)) {
        err = oauth_fail(out, "JWS header must have an Algorithm value");
    } else if (!json_is_string(alg)
               || strcmp(json_string_value(alg), "none") != 0) {
        err = oauth_fail(out, "Unsecured JWS must have 'none' for an "
                         "algorithm");
    } else if ((size_t) (d2 + 1 - p) != token.len) {
        err = oauth_fail(out, "Unsecured JWS must not contain a digital "
                         "signature");
    } else {
        err = oauth_check(c, claims, now_ms, out);
    }
    json_decref(header);
    json_decref(claims);
    return err;
}


samsa_err_t
samsa_oauth_unsecured_validate(void *ctx, samsa_slice_t token, int64_t now_ms,
                               samsa_oauth_token_t *out)
{
    return samsa_oauth_validate_unsecured(ctx, token, now_ms, out);
}
