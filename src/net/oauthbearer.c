/*
 * net/oauthbearer.c - SASL OAUTHBEARER's initial response and the error
 * a failed token gets (net/oauthbearer.h).
 */
#include "net/oauthbearer.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>


#define OAUTH_SEP  '\x01'

/* ---- the initial response ---------------------------------------------- */

static samsa_err_t
oauth_bad(char *why, size_t why_size, const char *msg)
{
    snprintf(why, why_size, "%s", msg);
    return SAMSA_ERR__BAD_MSG;
}

/* RFC 5801's saslname: 0x01-0x7F but '=' and ',', or "=2C" / "=3D". */
static size_t
oauth_saslname(const char *p, size_t n)
{
    size_t  i = 0;

    while (i < n) {
        unsigned char  ch = (unsigned char) p[i];

        if (ch == '=' && i + 3 <= n && (memcmp(p + i, "=2C", 3) == 0
                                           || memcmp(p + i, "=3D", 3) == 0)) {
            i += 3;
        } else if (ch >= 0x01 && ch <= 0x7F && ch != '=' && ch != ',') {
            i++;
        } else {
            break;
        }
    }
    return i;
}

static bool
oauth_value_char(unsigned char ch)
{
    return (ch >= 0x21 && ch <= 0x7E) || ch == ' ' || ch == '\t'
           || ch == '\r' || ch == '\n';
}

/* "auth"'s value: scheme [\w]+, spaces, token [-_~+/.a-zA-Z0-9]+ '='*. */
static samsa_err_t
oauth_auth(samsa_slice_t v, samsa_slice_t *token, char *why, size_t why_size)
{
    const char  *p = v.ptr;
    size_t       n = v.len, i = 0, s, t;

    while (i < n && (isalnum((unsigned char) p[i]) || p[i] == '_')) {
        i++;
    }
    s = i;
    while (i < n && p[i] == ' ') {
        i++;
    }
    t = i;
    while (i < n && (isalnum((unsigned char) p[i]) || strchr("-_~+/.", p[i])
                     != NULL)) {
        i++;
    }
    if (s == 0 || t == s || i == t) {
        return oauth_bad(why, why_size, "Invalid OAUTHBEARER client first "
                         "message: invalid 'auth' format");
    }
    while (i < n && p[i] == '=') {
        i++;
    }
    if (i != n) {
        return oauth_bad(why, why_size, "Invalid OAUTHBEARER client first "
                         "message: invalid 'auth' format");
    }
    if (s != 6 || strncasecmp(p, "bearer", 6) != 0) {
        snprintf(why, why_size, "Invalid scheme in OAUTHBEARER client first "
                 "message: %.*s", (int) (s > 32 ? 32 : s), p);
        return SAMSA_ERR__BAD_MSG;
    }
    token->ptr = p + t;
    token->len = n - t;
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_oauth_parse_initial(samsa_slice_t msg, samsa_oauth_initial_t *out,
                          char *why, size_t why_size)
{
    const char     *p = msg.ptr;
    size_t          n = msg.len, i, k, v;
    samsa_slice_t   auth = SAMSA_SLICE_NULL;
    bool            have_auth = false;
    static const char  bad[] = "Invalid OAUTHBEARER client first message";

    memset(out, 0, sizeof(*out));
    out->authzid = (samsa_slice_t) { "", 0 };
    if (p == NULL || n < 4 || p[0] != 'n' || p[1] != ',') {
        return oauth_bad(why, why_size, bad);
    }
    i = 2;
    if (n - i >= 2 && p[i] == 'a' && p[i + 1] == '=') {
        k = oauth_saslname(p + i + 2, n - i - 2);
        if (k == 0) {
            return oauth_bad(why, why_size, bad);
        }
        out->authzid = (samsa_slice_t) { p + i + 2, k };
        i += 2 + k;
    }
    if (i + 1 >= n || p[i] != ',' || p[i + 1] != OAUTH_SEP) {
        return oauth_bad(why, why_size, bad);
    }
    i += 2;
    /* (KEY=VALUE ^A)* then the closing ^A, and nothing after it */
    while (i < n && p[i] != OAUTH_SEP) {
        for (k = i; k < n && isalpha((unsigned char) p[k]); k++) {
        }
        if (k == i || k >= n || p[k] != '=') {
            return oauth_bad(why, why_size, bad);
        }
        for (v = k + 1; v < n && oauth_value_char((unsigned char) p[v]);
             v++) {
        }
        if (v == k + 1 || v >= n || p[v] != OAUTH_SEP) {
            return oauth_bad(why, why_size, bad);
        }
        if (k - i == 4 && memcmp(p + i, "auth", 4) == 0) {
            auth = (samsa_slice_t) { p + k + 1, v - k - 1 };
            have_auth = true;
        }
        i = v + 1;
    }
    if (i + 1 != n) {
        return oauth_bad(why, why_size, bad);
    }
    if (!have_auth) {
        return oauth_bad(why, why_size, "Invalid OAUTHBEARER client first "
                         "message: 'auth' not specified");
    }
    return oauth_auth(auth, &out->token, why, why_size);
}

size_t
samsa_oauth_error_json(const samsa_oauth_token_t *t, char *buf, size_t size)
{
    int  n;

    if (t->scope[0] != '\0') {
        n = snprintf(buf, size, "{\"status\":\"%s\", \"scope\":\"%s\"}",
                     t->status, t->scope);
    } else {
        n = snprintf(buf, size, "{\"status\":\"%s\"}", t->status);
    }
    if (n < 0) {
        buf[0] = '\0';
        return 0;
    }
    return (size_t) n < size ? (size_t) n : size - 1;
}
