/*
 * meta/qentity.c - see qentity.h.
 */
#include "meta/qentity.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

static const char *const  qentity_names[SAMSA_QENTITY__NTYPES] = {
    "user", "client-id", "ip",
};
static const char  qentity_letters[SAMSA_QENTITY__NTYPES] = { 'u', 'c', 'i' };

const char *
samsa_qentity_type_name(samsa_qentity_type_t t)
{
    return (unsigned) t < SAMSA_QENTITY__NTYPES ? qentity_names[t] : "?";
}

int
samsa_qentity_type_find(samsa_slice_t s)
{
    int  t;

    for (t = 0; t < SAMSA_QENTITY__NTYPES; t++) {
        if (samsa_slice_eq_cstr(s, qentity_names[t])) {
            return t;
        }
    }
    return -1;
}

const char *
samsa_qentity_key(const samsa_qentity_t *e, samsa_arena_t *arena)
{
    size_t  len = 1, off = 0;
    char   *out;
    int     t;

    for (t = 0; t < SAMSA_QENTITY__NTYPES; t++) {
        if (e->has[t]) {
            len += 3 + (e->name[t].ptr == NULL ? 0 : 24 + e->name[t].len);
        }
    }
    out = samsa_arena_alloc(arena, len);
    for (t = 0; t < SAMSA_QENTITY__NTYPES; t++) {
        if (!e->has[t]) {
            continue;
        }
        if (e->name[t].ptr == NULL) {
            off += (size_t) snprintf(out + off, len - off, "%c-;",
                                     qentity_letters[t]);
            continue;
        }
        off += (size_t) snprintf(out + off, len - off, "%c=%zu:",
                                 qentity_letters[t], e->name[t].len);
        memcpy(out + off, e->name[t].ptr, e->name[t].len);
        off += e->name[t].len;
        out[off++] = ';';
    }
    out[off] = '\0';
    return out;
}

samsa_err_t
samsa_qentity_parse(const char *key, samsa_qentity_t *e)
{
    const char  *p = key;
    char        *end;
    unsigned long len;
    int          t, last = -1;

    memset(e, 0, sizeof(*e));
    while (*p != '\0') {
        for (t = 0; t < SAMSA_QENTITY__NTYPES; t++) {
            if (*p == qentity_letters[t]) {
                break;
            }
        }
        if (t == SAMSA_QENTITY__NTYPES || t <= last) {
            return SAMSA_ERR__BAD_MSG;
        }
        last = t;
        e->has[t] = true;
        if (p[1] == '-' && p[2] == ';') {
            p += 3;
            continue;
        }
        if (p[1] != '=' || p[2] < '0' || p[2] > '9') {
            return SAMSA_ERR__BAD_MSG;
        }
        len = strtoul(p + 2, &end, 10);
        if (*end != ':' || strnlen(end + 1, len + 1) < len
            || end[1 + len] != ';') {
            return SAMSA_ERR__BAD_MSG;
        }
        e->name[t] = (samsa_slice_t) { .ptr = end + 1, .len = len };
        p = end + 2 + len;
    }
    return last < 0 ? SAMSA_ERR__BAD_MSG : SAMSA_ERR_NONE;
}

const char *
samsa_qentity_str(const samsa_qentity_t *e, samsa_arena_t *arena)
{
    samsa_buf_t  b;
    const char  *out;
    bool         first = true;
    int          t;

    /* Kafka prints its HashMap: client-id, ip, user is its usual order. */
    static const int  order[] = { SAMSA_QENTITY_CLIENT_ID, SAMSA_QENTITY_IP,
                                  SAMSA_QENTITY_USER };
    size_t       i;

    samsa_buf_init(&b, 128);
    samsa_buf_append(&b, "ClientQuotaEntity(entries={", 27);
    for (i = 0; i < 3; i++) {
        t = order[i];
        if (!e->has[t]) {
            continue;
        }
        if (!first) {
            samsa_buf_append(&b, ", ", 2);
        }
        first = false;
        samsa_buf_append(&b, qentity_names[t], strlen(qentity_names[t]));
        samsa_buf_append(&b, "=", 1);
        if (e->name[t].ptr == NULL) {
            samsa_buf_append(&b, "null", 4);
        } else {
            samsa_buf_append(&b, e->name[t].ptr, e->name[t].len);
        }
    }
    samsa_buf_append(&b, "})", 2);
    out = samsa_arena_strndup(arena, (const char *) b.data, b.len);
    samsa_buf_fini(&b);
    return out;
}
