/*
 * util/buf.c - see buf.h.  Threads: the buffer's owner.
 */
#include "util/buf.h"

#include <string.h>

#include "util/alloc.h"

void
samsa_buf_init(samsa_buf_t *buf, size_t cap)
{
    buf->data = cap > 0 ? samsa_malloc(cap) : NULL;
    buf->len = 0;
    buf->cap = cap;
}

void
samsa_buf_fini(samsa_buf_t *buf)
{
    samsa_free(buf->data);
    *buf = SAMSA_BUF_INIT;
}

uint8_t *
samsa_buf_reserve(samsa_buf_t *buf, size_t n)
{
    size_t  cap;

    if (buf->cap - buf->len < n) {
        cap = buf->cap < 64 ? 64 : buf->cap;
        while (cap - buf->len < n) {
            cap *= 2;
        }
        buf->data = samsa_realloc(buf->data, cap);
        buf->cap = cap;
    }
    return buf->data + buf->len;
}

size_t
samsa_buf_append(samsa_buf_t *buf, const void *p, size_t n)
{
    size_t  off = buf->len;

    if (n > 0) {
        memcpy(samsa_buf_reserve(buf, n), p, n);
        buf->len += n;
    }
    return off;
}

uint8_t *
samsa_buf_take(samsa_buf_t *buf, size_t *len)
{
    uint8_t  *p = buf->data;

    if (len != NULL) {
        *len = buf->len;
    }
    *buf = SAMSA_BUF_INIT;
    return p;
}
