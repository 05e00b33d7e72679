/*
 * util/props.c - see props.h.  The parser follows java.util.Properties.load:
 * it first joins natural lines into a logical line (escapes still raw), then
 * splits key from value and unescapes each.
 * Threads: the owner of the samsa_props_t.
 */
#include "util/props.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/buf.h"

typedef struct props_entry {
    char  *key;
    char  *value;
    char  *origin;
} props_entry_t;

struct samsa_props {
    props_entry_t  *v;              /* in first-set order */
    size_t          n;
    size_t          cap;
};

/* State of one samsa_props_parse() call. */
typedef struct props_parser {
    const char  *p;                 /* next unread byte */
    const char  *end;
    unsigned     line;              /* natural line number of p, from 1 */
    samsa_buf_t  raw;               /* current logical line, escapes raw */
    samsa_buf_t  key;               /* unescaped key, NUL-terminated */
    samsa_buf_t  value;             /* unescaped value, NUL-terminated */
    const char  *origin;
    char        *errstr;
    size_t       errstr_size;
} props_parser_t;

samsa_props_t *
samsa_props_new(void)
{
    return samsa_calloc(1, sizeof(samsa_props_t));
}

void
samsa_props_free(samsa_props_t *props)
{
    size_t  i;

    if (props == NULL) {
        return;
    }
    for (i = 0; i < props->n; i++) {
        samsa_free(props->v[i].key);
        samsa_free(props->v[i].value);
        samsa_free(props->v[i].origin);
    }
    samsa_free(props->v);
    samsa_free(props);
}

/* Index of key, or props->n if it is not set. */
static size_t
props_find(const samsa_props_t *props, const char *key)
{
    size_t  i;

    for (i = 0; i < props->n; i++) {
        if (strcmp(props->v[i].key, key) == 0) {
            break;
        }
    }
    return i;
}

void
samsa_props_set(samsa_props_t *props, const char *key, const char *value,
                const char *origin)
{
    size_t          i = props_find(props, key);
    props_entry_t  *e;

    if (i == props->n) {
        if (props->n == props->cap) {
            props->cap = props->cap == 0 ? 16 : props->cap * 2;
            props->v = samsa_realloc(props->v, props->cap * sizeof(*e));
        }
        e = &props->v[props->n++];
        e->key = samsa_strdup(key);
    } else {
        e = &props->v[i];
        samsa_free(e->value);
        samsa_free(e->origin);
    }
    e->value = samsa_strdup(value);
    e->origin = samsa_strdup(origin != NULL ? origin : "");
}

const char *
samsa_props_get(const samsa_props_t *props, const char *key)
{
    size_t  i = props_find(props, key);

    return i < props->n ? props->v[i].value : NULL;
}

size_t
samsa_props_count(const samsa_props_t *props)
{
    return props->n;
}

const char *
samsa_props_key(const samsa_props_t *props, size_t i)
{
    return i < props->n ? props->v[i].key : NULL;
}

const char *
samsa_props_value(const samsa_props_t *props, size_t i)
{
    return i < props->n ? props->v[i].value : NULL;
}

const char *
samsa_props_origin(const samsa_props_t *props, size_t i)
{
    return i < props->n ? props->v[i].origin : NULL;
}

/* ---- parsing ------------------------------------------------------------ */

static bool
props_is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\f';
}

static bool
props_is_sep(char c)
{
    return c == '=' || c == ':';
}

static bool
props_is_eol(char c)
{
    return c == '\n' || c == '\r';
}

static samsa_err_t
props_fail(props_parser_t *pp, unsigned line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Fill errstr with "<origin>:<line>: <message>". */
static samsa_err_t
props_fail(props_parser_t *pp, unsigned line, const char *fmt, ...)
{
    va_list  ap;
    int      n;

    if (pp->errstr_size == 0) {
        return SAMSA_ERR__CONFIG;
    }
    n = snprintf(pp->errstr, pp->errstr_size, "%s:%u: ", pp->origin, line);
    if (n >= 0 && (size_t) n < pp->errstr_size) {
        va_start(ap, fmt);
        vsnprintf(pp->errstr + n, pp->errstr_size - (size_t) n, fmt, ap);
        va_end(ap);
    }
    return SAMSA_ERR__CONFIG;
}

/* Step over one line terminator (\n, \r or \r\n) if p is at one. */
static void
props_skip_eol(props_parser_t *pp)
{
    if (pp->p < pp->end && *pp->p == '\r') {
        pp->p++;
        if (pp->p < pp->end && *pp->p == '\n') {
            pp->p++;
        }
        pp->line++;
    } else if (pp->p < pp->end && *pp->p == '\n') {
        pp->p++;
        pp->line++;
    }
}

/* Append the rest of the natural line to raw and step past its end.
 * Returns true if it ends in an odd number of backslashes (a continuation),
 * which are then one fewer. */
static bool
props_take_segment(props_parser_t *pp)
{
    const char  *start = pp->p;
    size_t       nbs = 0;

    while (pp->p < pp->end && !props_is_eol(*pp->p)) {
        nbs = *pp->p == '\\' ? nbs + 1 : 0;
        pp->p++;
    }
    samsa_buf_append(&pp->raw, start, (size_t) (pp->p - start));
    props_skip_eol(pp);
    if (nbs % 2 == 1) {
        pp->raw.len--;
        return true;
    }
    return false;
}

/* Read the next logical line into raw, skipping blank and comment lines.
 * Returns false at the end of the text; *lineno is where the line starts. */
static bool
props_next_line(props_parser_t *pp, unsigned *lineno)
{
    pp->raw.len = 0;
    for (;;) {
        while (pp->p < pp->end && props_is_blank(*pp->p)) {
            pp->p++;
        }
        if (pp->p == pp->end) {
            return false;
        }
        if (props_is_eol(*pp->p)) {
            props_skip_eol(pp);
            continue;
        }
        if (*pp->p == '#' || *pp->p == '!') {
            while (pp->p < pp->end && !props_is_eol(*pp->p)) {
                pp->p++;
            }
            continue;
        }
        break;
    }
    *lineno = pp->line;
    while (props_take_segment(pp)) {
        while (pp->p < pp->end && props_is_blank(*pp->p)) {
            pp->p++;
        }
    }
    return true;
}

static int
props_hexval(char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

/* Parse "uXXXX" at s (n bytes left); returns the code unit or -1. */
static long
props_hex4(const char *s, size_t n)
{
    long  v = 0;
    int   d;
    int   i;

    if (n < 5 || s[0] != 'u') {
        return -1;
    }
    for (i = 1; i <= 4; i++) {
        d = props_hexval(s[i]);
        if (d < 0) {
            return -1;
        }
        v = v * 16 + d;
    }
    return v;
}

static void
props_put_utf8(samsa_buf_t *out, uint32_t cp)
{
    uint8_t  b[4];
    size_t   n;

    if (cp < 0x80) {
        b[0] = (uint8_t) cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (uint8_t) (0xC0 | (cp >> 6));
        b[1] = (uint8_t) (0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (uint8_t) (0xE0 | (cp >> 12));
        b[1] = (uint8_t) (0x80 | ((cp >> 6) & 0x3F));
        b[2] = (uint8_t) (0x80 | (cp & 0x3F));
        n = 3;
    } else {
        b[0] = (uint8_t) (0xF0 | (cp >> 18));
        b[1] = (uint8_t) (0x80 | ((cp >> 12) & 0x3F));
        b[2] = (uint8_t) (0x80 | ((cp >> 6) & 0x3F));
        b[3] = (uint8_t) (0x80 | (cp & 0x3F));
        n = 4;
    }
    samsa_buf_append(out, b, n);
}

/* Decode the \u escape at s[0] == 'u' (n bytes left), joining a surrogate
 * pair written as two escapes.  Returns the bytes consumed, 0 if bad. */
static size_t
props_unescape_u(const char *s, size_t n, samsa_buf_t *out)
{
    long  hi = props_hex4(s, n);
    long  lo;

    if (hi <= 0 || (hi >= 0xDC00 && hi <= 0xDFFF)) {
        return 0;                   /* malformed, NUL or lone low half */
    }
    if (hi < 0xD800 || hi > 0xDBFF) {
        props_put_utf8(out, (uint32_t) hi);
        return 5;
    }
    lo = n >= 6 && s[5] == '\\' ? props_hex4(s + 6, n - 6) : -1;
    if (lo < 0xDC00 || lo > 0xDFFF) {
        return 0;                   /* lone high half */
    }
    props_put_utf8(out, 0x10000 + (((uint32_t) hi - 0xD800) << 10)
                            + ((uint32_t) lo - 0xDC00));
    return 11;
}

/* Unescape n raw bytes into out as a C string.  False on a bad \u. */
static bool
props_unescape(const char *s, size_t n, samsa_buf_t *out)
{
    static const char  nul = '\0';
    size_t             i = 0, used;
    char               c;

    out->len = 0;
    while (i < n) {
        c = s[i++];
        if (c == '\\' && i < n) {
            c = s[i++];
            if (c == 'u') {
                used = props_unescape_u(s + i - 1, n - i + 1, out);
                if (used == 0) {
                    return false;
                }
                i += used - 1;
                continue;
            }
            c = c == 't' ? '\t' : c == 'n' ? '\n' : c == 'r' ? '\r'
              : c == 'f' ? '\f' : c;
        }
        samsa_buf_append(out, &c, 1);
    }
    samsa_buf_append(out, &nul, 1);
    return true;
}

/* Split the logical line in raw into key and value and set them. */
static samsa_err_t
props_apply_line(props_parser_t *pp, samsa_props_t *props, unsigned lineno)
{
    const char  *s = (const char *) pp->raw.data;
    size_t       n = pp->raw.len, klen = 0, vstart = n;
    bool         has_sep = false, bs = false;
    char         where[512];
    char         c;

    while (klen < n) {
        c = s[klen];
        if (!bs && (props_is_sep(c) || props_is_blank(c))) {
            has_sep = props_is_sep(c);
            vstart = klen + 1;
            break;
        }
        bs = c == '\\' ? !bs : false;
        klen++;
    }
    while (vstart < n) {
        c = s[vstart];
        if (props_is_sep(c) && !has_sep) {
            has_sep = true;
        } else if (!props_is_blank(c)) {
            break;
        }
        vstart++;
    }
    if (!props_unescape(s, klen, &pp->key)
        || !props_unescape(s + vstart, n - vstart, &pp->value)) {
        return props_fail(pp, lineno, "malformed \\uXXXX escape "
                          "(or \\u0000, or an unpaired surrogate)");
    }
    snprintf(where, sizeof(where), "%s:%u", pp->origin, lineno);
    samsa_props_set(props, (const char *) pp->key.data,
                    (const char *) pp->value.data, where);
    return SAMSA_ERR_NONE;
}

/* Line number of the first NUL byte in text, or 0 if there is none. */
static unsigned
props_nul_line(const char *text, size_t len)
{
    const char  *nul = memchr(text, '\0', len);
    const char  *q;
    unsigned     line = 1;

    if (nul == NULL) {
        return 0;
    }
    for (q = text; q < nul; q++) {
        if (*q == '\n' || (*q == '\r' && (q + 1 == nul || q[1] != '\n'))) {
            line++;
        }
    }
    return line;
}

samsa_err_t
samsa_props_parse(samsa_props_t *props, const char *text, size_t len,
                  const char *origin, char *errstr, size_t errstr_size)
{
    props_parser_t  pp = {
        .p = text, .end = text + len, .line = 1, .origin = origin,
        .errstr = errstr, .errstr_size = errstr_size,
    };
    samsa_err_t     err = SAMSA_ERR_NONE;
    unsigned        lineno;

    if (len > 0 && (lineno = props_nul_line(text, len)) > 0) {
        return props_fail(&pp, lineno, "NUL byte in text");
    }
    while (err == SAMSA_ERR_NONE && props_next_line(&pp, &lineno)) {
        err = props_apply_line(&pp, props, lineno);
    }
    samsa_buf_fini(&pp.raw);
    samsa_buf_fini(&pp.key);
    samsa_buf_fini(&pp.value);
    return err;
}

/* Read all of fd into buf.  Returns 0 or the errno of the failed read. */
static int
props_read_all(int fd, samsa_buf_t *buf)
{
    ssize_t  r;

    for (;;) {
        r = read(fd, samsa_buf_reserve(buf, 65536), 65536);
        if (r > 0) {
            buf->len += (size_t) r;
        } else if (r == 0) {
            return 0;
        } else if (errno != EINTR) {
            return errno;
        }
    }
}

samsa_err_t
samsa_props_load_file(samsa_props_t *props, const char *path, char *errstr,
                      size_t errstr_size)
{
    samsa_buf_t  buf = SAMSA_BUF_INIT;
    samsa_err_t  err;
    int          fd, e;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        e = errno;
        snprintf(errstr, errstr_size, "cannot open '%s': %s", path,
                 strerror(e));
        return e == ENOENT ? SAMSA_ERR__NOENT : SAMSA_ERR__IO;
    }
    e = props_read_all(fd, &buf);
    close(fd);
    if (e != 0) {
        snprintf(errstr, errstr_size, "cannot read '%s': %s", path,
                 strerror(e));
        err = SAMSA_ERR__IO;
    } else {
        err = samsa_props_parse(props, (const char *) buf.data, buf.len, path,
                                errstr, errstr_size);
    }
    samsa_buf_fini(&buf);
    return err;
}
