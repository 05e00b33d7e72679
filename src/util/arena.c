/*
 * util/arena.c - see arena.h.  Threads: the arena's owner.
 */
#include "util/arena.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "util/alloc.h"
#include "util/diag.h"

#define ARENA_CHUNK_MIN 4096

struct samsa_arena_chunk {
    samsa_arena_chunk_t  *next;
    size_t                size;     /* bytes in mem[] */
    size_t                off;      /* next free byte in mem[] */
    _Alignas(8) unsigned char mem[];
};

void
samsa_arena_init(samsa_arena_t *arena)
{
    *arena = SAMSA_ARENA_INIT;
}

void
samsa_arena_fini(samsa_arena_t *arena)
{
    samsa_arena_chunk_t  *c, *next;

    for (c = arena->head; c != NULL; c = next) {
        next = c->next;
        samsa_free(c);
    }
    *arena = SAMSA_ARENA_INIT;
}

void *
samsa_arena_alloc(samsa_arena_t *arena, size_t size)
{
    samsa_arena_chunk_t  *c = arena->head;
    size_t                need = (size + 7) & ~(size_t) 7;
    size_t                csize;
    void                 *p;

    samsa_assert(need >= size);
    if (c == NULL || c->size - c->off < need) {
        csize = need > ARENA_CHUNK_MIN / 2 ? need : ARENA_CHUNK_MIN;
        c = samsa_malloc(sizeof(*c) + csize);
        c->size = csize;
        c->off = 0;
        /* A big one-off allocation goes behind the current chunk so that
         * the current chunk's free space stays usable. */
        if (arena->head != NULL && csize == need && need > ARENA_CHUNK_MIN) {
            c->next = arena->head->next;
            arena->head->next = c;
        } else {
            c->next = arena->head;
            arena->head = c;
        }
    }
    p = c->mem + c->off;
    c->off += need;
    arena->used += need;
    memset(p, 0, need);
    return p;
}

void *
samsa_arena_calloc(samsa_arena_t *arena, size_t n, size_t size)
{
    samsa_assert(size == 0 || n <= SIZE_MAX / size);
    return samsa_arena_alloc(arena, n * size);
}

char *
samsa_arena_strndup(samsa_arena_t *arena, const char *s, size_t n)
{
    char  *d = samsa_arena_alloc(arena, n + 1);

    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *
samsa_arena_printf(samsa_arena_t *arena, const char *fmt, ...)
{
    va_list  ap;
    char    *out;
    int      len;

    va_start(ap, fmt);
    len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (len < 0) {              /* a bad format: an empty message */
        len = 0;
    }
    out = samsa_arena_alloc(arena, (size_t) len + 1);
    out[0] = '\0';
    va_start(ap, fmt);
    vsnprintf(out, (size_t) len + 1, fmt, ap);
    va_end(ap);
    return out;
}
