/*
 * config/config_parse.c - see config_parse.h.
 * Threads: pure functions; any thread.
 */
#include "config/config_parse.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static bool
config_is_blank(char c, samsa_config_trim_t how)
{
    switch (how) {
    case SAMSA_CONFIG_TRIM_JAVA:
        return (unsigned char) c <= ' ' && c != '\0';
    case SAMSA_CONFIG_TRIM_BLANK:
        return c == ' ' || c == '\t';
    default:
        return isspace((unsigned char) c) != 0;
    }
}

void
samsa_config_trim_span(const char **s, size_t *n, samsa_config_trim_t how)
{
    while (*n > 0 && config_is_blank(**s, how)) {
        (*s)++;
        (*n)--;
    }
    while (*n > 0 && config_is_blank((*s)[*n - 1], how)) {
        (*n)--;
    }
}

const char *
samsa_config_parse_i64(const char *text, int64_t min, int64_t max,
                       int64_t *out)
{
    const char  *p = text;
    char        *end;
    long long    v;

    if (*p == '+' || *p == '-') {
        p++;
    }
    if (*p == '\0' || strspn(p, "0123456789") != strlen(p)) {
        return "not a number";
    }
    errno = 0;
    v = strtoll(text, &end, 10);
    if (errno == ERANGE || v < min || v > max) {
        return min == INT32_MIN ? "out of range for an int (32 bits)"
                                : "out of range for a long (64 bits)";
    }
    *out = v;
    return NULL;
}

/* Length of the run of digits (hex: hexadecimal ones) at s. */
static size_t
config_digits(const char *s, bool hex)
{
    size_t  n = 0;

    while (hex ? isxdigit((unsigned char) s[n])
               : isdigit((unsigned char) s[n])) {
        n++;
    }
    return n;
}

/* Length of the number Java's grammar takes at s (after the sign, before
 * any suffix), or 0 if it is not one: [0x] mantissa, exponent. */
static size_t
config_double_len(const char *s)
{
    bool         hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    const char  *p = hex ? s + 2 : s;
    size_t       nd;

    nd = config_digits(p, hex);
    p += nd;
    if (*p == '.') {
        p++;
        nd += config_digits(p, hex);
        p += config_digits(p, hex);
    }
    if (nd == 0) {
        return 0;
    }
    if (*p == (hex ? 'p' : 'e') || *p == (hex ? 'P' : 'E')) {
        p++;
        if (*p == '+' || *p == '-') {
            p++;
        }
        if (config_digits(p, false) == 0) {
            return 0;
        }
        p += config_digits(p, false);
    } else if (hex) {
        return 0;
    }
    return (size_t) (p - s);
}

const char *
samsa_config_parse_double(const char *text, double *out)
{
    const char  *s = text;
    size_t       n = strlen(text), len;
    bool         neg = false;
    char         buf[512];

    samsa_config_trim_span(&s, &n, SAMSA_CONFIG_TRIM_JAVA);
    if (n > 0 && (*s == '+' || *s == '-')) {
        neg = *s == '-';
        s++;
        n--;
    }
    if ((n == 3 && strncmp(s, "NaN", 3) == 0)
        || (n == 8 && strncmp(s, "Infinity", 8) == 0)) {
        *out = *s == 'N' ? NAN : neg ? -INFINITY : INFINITY;
        return NULL;
    }
    if (n >= sizeof(buf) - 1) {
        return "not a number";
    }
    memcpy(buf + 1, s, n);
    buf[0] = neg ? '-' : '+';
    buf[n + 1] = '\0';
    len = config_double_len(buf + 1);
    if (len == 0 || (len != n && (len + 1 != n
                                  || strchr("fFdD", buf[n]) == NULL))) {
        return "not a number";
    }
    buf[len + 1] = '\0';
    errno = 0;
    *out = strtod(buf, NULL);
    if (errno == ERANGE && isinf(*out)) {
        return "out of range for a double";
    }
    return NULL;
}

bool
samsa_config_parse_bool(const char *text, bool *out)
{
    if (strcasecmp(text, "true") == 0) {
        *out = true;
    } else if (strcasecmp(text, "false") == 0) {
        *out = false;
    } else {
        return false;
    }
    return true;
}

int
samsa_config_enum_index(const char *const *names, const char *s)
{
    int  i;

    for (i = 0; names[i] != NULL; i++) {
        if (strcmp(names[i], s) == 0) {
            return i;
        }
    }
    return -1;
}

bool
samsa_config_in(const char *const *names, const char *s)
{
    return samsa_config_enum_index(names, s) >= 0;
}

bool
samsa_config_in_case(const char *const *names, const char *s)
{
    for (; *names != NULL; names++) {
        if (strcasecmp(*names, s) == 0) {
            return true;
        }
    }
    return false;
}

const char *
samsa_config_join(const char *const *names, char *buf, size_t size)
{
    size_t  i, off = 0;

    buf[0] = '\0';
    for (i = 0; names[i] != NULL && off < size; i++) {
        off += (size_t) snprintf(buf + off, size - off, "%s%s",
                                 i > 0 ? ", " : "", names[i]);
    }
    return buf;
}

void
samsa_config_list_init(samsa_config_list_t *it, const char *text)
{
    it->next = text != NULL && *text != '\0' ? text : NULL;
}

bool
samsa_config_list_next(samsa_config_list_t *it, const char **item,
                       size_t *len)
{
    const char  *comma;

    if (it->next == NULL) {
        return false;
    }
    comma = strchr(it->next, ',');
    *item = it->next;
    *len = comma != NULL ? (size_t) (comma - it->next) : strlen(it->next);
    it->next = comma != NULL ? comma + 1 : NULL;
    return true;
}
