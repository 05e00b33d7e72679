/*
 * config/config_parse.c - see config_parse.h.
 * Threads: pure functions; any thread.
 */
#include "config/config_parse.h"

#include <ctype.h>
#include <errno.h>
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
