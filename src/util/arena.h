/*
 * util/arena.h - a bump allocator for one request's decode output and
 * scratch, freed in one go (nginx pools).  Allocations are 8-byte aligned
 * and zeroed.  Growth aborts on OOM; callers bound sizes by input length.
 * Threads: owned by whoever owns the request.
 */
#ifndef SAMSA_UTIL_ARENA_H
#define SAMSA_UTIL_ARENA_H

#include <stddef.h>

typedef struct samsa_arena_chunk samsa_arena_chunk_t;

typedef struct samsa_arena {
    samsa_arena_chunk_t  *head;     /* newest chunk first */
    size_t                used;     /* bytes handed out, for budgets */
} samsa_arena_t;

#define SAMSA_ARENA_INIT ((samsa_arena_t) { NULL, 0 })

void  samsa_arena_init(samsa_arena_t *arena);
void  samsa_arena_fini(samsa_arena_t *arena);     /* frees every chunk */
void *samsa_arena_alloc(samsa_arena_t *arena, size_t size);
void *samsa_arena_calloc(samsa_arena_t *arena, size_t n, size_t size);
char *samsa_arena_strndup(samsa_arena_t *arena, const char *s, size_t n);
/* A formatted string in the arena (error messages for responses). */
char *samsa_arena_printf(samsa_arena_t *arena, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif /* SAMSA_UTIL_ARENA_H */
