/*
 * util/buf.h - a growable byte buffer whose handle stays put: data may move
 * on growth, the samsa_buf_t does not.  Growth aborts on OOM (alloc.h).
 * Threads: owned by one thread at a time; moves with whatever carries it.
 */
#ifndef SAMSA_UTIL_BUF_H
#define SAMSA_UTIL_BUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct samsa_buf {
    uint8_t  *data;
    size_t    len;              /* bytes written */
    size_t    cap;              /* bytes allocated */
} samsa_buf_t;

#define SAMSA_BUF_INIT ((samsa_buf_t) { NULL, 0, 0 })

void samsa_buf_init(samsa_buf_t *buf, size_t cap);
void samsa_buf_fini(samsa_buf_t *buf);

/* Make room for n more bytes; returns where they go (len unchanged). */
uint8_t *samsa_buf_reserve(samsa_buf_t *buf, size_t n);

/* Append n bytes; returns the offset they were written at. */
size_t samsa_buf_append(samsa_buf_t *buf, const void *p, size_t n);

/* Hand the storage to the caller (free with samsa_free) and reset buf. */
uint8_t *samsa_buf_take(samsa_buf_t *buf, size_t *len);

#endif /* SAMSA_UTIL_BUF_H */
