/*
 * util/alloc.h - the only allocator entry points.  Each logs and aborts on
 * failure (memory limits are budgets enforced elsewhere, not NULL checks).
 * Threads: any.
 */
#ifndef SAMSA_UTIL_ALLOC_H
#define SAMSA_UTIL_ALLOC_H

#include <stddef.h>

void *samsa_malloc(size_t size);
void *samsa_calloc(size_t n, size_t size);
void *samsa_realloc(void *p, size_t size);
char *samsa_strdup(const char *s);
char *samsa_strndup(const char *s, size_t n);
/* n zeroed elements starting on an align-byte boundary (a power of two,
 * at least sizeof(void *)), e.g. per-thread counters on cache lines of
 * their own; freed with samsa_free(). */
void *samsa_aligned_calloc(size_t align, size_t n, size_t size);
void  samsa_free(void *p);

#endif /* SAMSA_UTIL_ALLOC_H */
