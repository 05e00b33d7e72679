/*
 * util/alloc.c - abort-on-failure wrappers around the libc allocator.
 * Threads: any.
 */
#include "util/alloc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
alloc_die(size_t size)
{
    fprintf(stderr, "samsa: out of memory allocating %zu bytes\n", size);
    abort();
}

void *
samsa_malloc(size_t size)
{
    void  *p = malloc(size == 0 ? 1 : size);

    if (p == NULL) {
        alloc_die(size);
    }
    return p;
}

void *
samsa_calloc(size_t n, size_t size)
{
    void  *p = calloc(n == 0 ? 1 : n, size == 0 ? 1 : size);

    if (p == NULL) {
        alloc_die(n * size);
    }
    return p;
}

void *
samsa_realloc(void *p, size_t size)
{
    void  *q = realloc(p, size == 0 ? 1 : size);

    if (q == NULL) {
        alloc_die(size);
    }
    return q;
}

char *
samsa_strdup(const char *s)
{
    return samsa_strndup(s, strlen(s));
}

char *
samsa_strndup(const char *s, size_t n)
{
    char  *d = samsa_malloc(n + 1);

    if (n > 0) {                /* s may be NULL when n is 0 */
        memcpy(d, s, n);
    }
    d[n] = '\0';
    return d;
}

void *
samsa_aligned_calloc(size_t align, size_t n, size_t size)
{
    size_t  total;
    void   *p = NULL;

    if (__builtin_mul_overflow(n, size, &total)) {
        alloc_die(SIZE_MAX);
    }
    total = total == 0 ? 1 : total;
    if (posix_memalign(&p, align, total) != 0) {
        alloc_die(total);
    }
    memset(p, 0, total);
    return p;
}

void
samsa_free(void *p)
{
    free(p);
}
