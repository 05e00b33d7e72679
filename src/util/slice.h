/*
 * util/slice.h - a borrowed byte range: pointer and length, no NUL.
 * A slice whose ptr is NULL is Kafka's null (string or bytes); an empty
 * non-null slice has a non-NULL ptr and len 0.  Print with "%.*s".
 * Threads: a slice is as safe as the buffer it borrows from.
 */
#ifndef SAMSA_UTIL_SLICE_H
#define SAMSA_UTIL_SLICE_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

typedef struct samsa_slice {
    const char  *ptr;
    size_t       len;
} samsa_slice_t;

#define SAMSA_SLICE_NULL ((samsa_slice_t) { NULL, 0 })

static inline samsa_slice_t
samsa_slice_cstr(const char *s)
{
    return (samsa_slice_t) { s, s != NULL ? strlen(s) : 0 };
}

static inline bool
samsa_slice_is_null(samsa_slice_t s)
{
    return s.ptr == NULL;
}

static inline bool
samsa_slice_eq(samsa_slice_t a, samsa_slice_t b)
{
    if (a.ptr == NULL || b.ptr == NULL) {
        return a.ptr == b.ptr;
    }
    return a.len == b.len && memcmp(a.ptr, b.ptr, a.len) == 0;
}

static inline bool
samsa_slice_eq_cstr(samsa_slice_t a, const char *s)
{
    return s != NULL && a.ptr != NULL && a.len == strlen(s)
           && memcmp(a.ptr, s, a.len) == 0;
}

/* Byte order of a C string against a slice (memcmp, shorter first): the
 * order of the coordinators' sorted id tables. */
static inline int
samsa_slice_cmp_cstr(const char *s, samsa_slice_t key)
{
    size_t  len = strlen(s);
    int     c = memcmp(s, key.ptr, len < key.len ? len : key.len);

    if (c != 0) {
        return c;
    }
    return len < key.len ? -1 : len > key.len ? 1 : 0;
}

/* A NUL-terminated heap copy ("" for null); free with samsa_free(). */
char *samsa_slice_dup(samsa_slice_t s);

#endif /* SAMSA_UTIL_SLICE_H */
