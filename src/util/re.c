/*
 * util/re.c - see re.h.
 */
#include "util/re.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "util/alloc.h"

struct samsa_re {
    pcre2_code  *code;
};

static void
re_why(char *errstr, size_t errstr_size, const char *what, size_t off)
{
    if (errstr_size > 0) {
        snprintf(errstr, errstr_size, "%s at offset %zu", what, off);
    }
}

/* Escapes PCRE2 knows and RE2 refuses (digits: backreferences). */
static bool
re_escape_refused(char c)
{
    return c != '\0' && strchr("123456789KRXGZhHNocegk", c) != NULL;
}

/* Whether a `{` at p[i] starts a counted repetition {n}, {n,} or {n,m};
 * its closing brace's index in *end. */
static bool
re_counted(const char *p, size_t len, size_t i, size_t *end)
{
    size_t  j = i + 1;
    size_t  digits = 0;

    while (j < len && p[j] >= '0' && p[j] <= '9') {
        j++;
        digits++;
    }
    if (digits == 0) {
        return false;
    }
    if (j < len && p[j] == ',') {
        j++;
        while (j < len && p[j] >= '0' && p[j] <= '9') {
            j++;
        }
    }
    if (j < len && p[j] == '}') {
        *end = j;
        return true;
    }
    return false;
}

/* The PCRE2-only constructs of pattern refused, as RE2 refuses them; NULL
 * when there is none, else what (with its offset in *off).  PCRE2 judges
 * everything else. */
static const char *
re_scan(const char *p, size_t len, size_t *off)
{
    size_t  i = 0;
    size_t  end;

    while (i < len) {
        char  c = p[i];

        *off = i;
        if (c == '\\') {
            if (i + 1 < len && p[i + 1] == 'Q') {       /* \Q...\E: literal */
                const char *e = NULL;
                size_t      j;

                for (j = i + 2; j + 1 < len; j++) {
                    if (p[j] == '\\' && p[j + 1] == 'E') {
                        e = p + j;
                        break;
                    }
                }
                i = e != NULL ? (size_t) (e - p) + 2 : len;
                continue;
            }
            if (i + 1 < len && re_escape_refused(p[i + 1])) {
                return (p[i + 1] >= '1' && p[i + 1] <= '9')
                           || p[i + 1] == 'g' || p[i + 1] == 'k'
                           ? "backreferences are not supported"
                           : "escape sequence not supported by RE2";
            }
            i += 2;
            continue;
        }
        if (c == '[') {                                 /* a class */
            i++;
            if (i < len && p[i] == '^') {
                i++;
            }
            if (i < len && p[i] == ']') {
                i++;
            }
            while (i < len && p[i] != ']') {
                if (p[i] == '\\') {
                    if (i + 1 < len && re_escape_refused(p[i + 1])) {
                        *off = i;
                        return "escape sequence not supported by RE2";
                    }
                    i += 2;
                } else if (p[i] == '[' && i + 1 < len && p[i + 1] == ':') {
                    const char *e = memmem(p + i, len - i, ":]", 2);

                    i = e != NULL ? (size_t) (e - p) + 2 : i + 1;
                } else {
                    i++;
                }
            }
            i++;
            continue;
        }
        if (c == '(' && i + 1 < len && p[i + 1] == '*') {
            return "(* verbs are not supported";
        }
        if (c == '(' && i + 2 < len && p[i + 1] == '?') {
            char  d = p[i + 2];
            char  e = i + 3 < len ? p[i + 3] : '\0';

            if (d == '=' || d == '!' || (d == '<' && (e == '=' || e == '!'))) {
                return "lookarounds are not supported";
            }
            if (d == 'P' && (e == '=' || e == '>')) {
                return e == '=' ? "backreferences are not supported"
                                : "recursion is not supported";
            }
            if (d == '>' || d == '(' || d == 'R' || d == '&' || d == '|'
                || d == '#' || d == 'C' || d == '\'' || d == '+'
                || (d >= '0' && d <= '9')
                || (d == '-' && e >= '0' && e <= '9')) {
                return "group construct not supported by RE2";
            }
            i += 2;
            continue;
        }
        if (c == '*' || c == '+' || c == '?'
            || (c == '{' && re_counted(p, len, i, &end))) {
            if (c == '{') {
                i = end;
            }
            if (i + 1 < len && p[i + 1] == '+') {
                *off = i + 1;
                return "possessive quantifiers are not supported";
            }
            if (i + 1 < len && p[i + 1] == '?') {
                i++;                                    /* lazy: fine */
            }
            i++;
            continue;
        }
        i++;
    }
    return NULL;
}

samsa_re_t *
samsa_re_compile(const char *pattern, size_t len, char *errstr,
                 size_t errstr_size)
{
    pcre2_code  *code;
    samsa_re_t  *re;
    const char  *what;
    size_t       off = 0;
    int          err;
    uint32_t     backrefs = 0;
    PCRE2_UCHAR  msg[128];

    if (errstr_size > 0) {
        errstr[0] = '\0';
    }
    what = re_scan(pattern, len, &off);
    if (what != NULL) {
        re_why(errstr, errstr_size, what, off);
        return NULL;
    }
    /* ANCHORED + ENDANCHORED: the whole subject, as RE2J's matches() */
    code = pcre2_compile((PCRE2_SPTR) pattern, len,
                         PCRE2_UTF | PCRE2_DOLLAR_ENDONLY | PCRE2_ANCHORED
                             | PCRE2_ENDANCHORED,
                         &err, &off, NULL);
    if (code == NULL) {
        if (pcre2_get_error_message(err, msg, sizeof(msg)) < 0) {
            snprintf((char *) msg, sizeof(msg), "error %d", err);
        }
        re_why(errstr, errstr_size, (const char *) msg, off);
        return NULL;
    }
    if (pcre2_pattern_info(code, PCRE2_INFO_BACKREFMAX, &backrefs) == 0
        && backrefs > 0) {
        pcre2_code_free(code);
        re_why(errstr, errstr_size, "backreferences are not supported", 0);
        return NULL;
    }
    re = samsa_calloc(1, sizeof(*re));
    re->code = code;
    return re;
}

bool
samsa_re_match(const samsa_re_t *re, const char *s)
{
    pcre2_match_data  *md;
    int                rc;

    md = pcre2_match_data_create_from_pattern(re->code, NULL);
    if (md == NULL) {
        return false;
    }
    rc = pcre2_match(re->code, (PCRE2_SPTR) s, strlen(s), 0, 0, md, NULL);
    pcre2_match_data_free(md);
    return rc >= 0;
}

void
samsa_re_free(samsa_re_t *re)
{
    if (re == NULL) {
        return;
    }
    pcre2_code_free(re->code);
    samsa_free(re);
}
