/*
 * util/map.c - see map.h.
 */
#include "util/map.h"

#include <string.h>

#include "util/alloc.h"
#include "util/diag.h"

#define MAP_MIN_BUCKETS  8
#define FNV_OFFSET       UINT64_C(14695981039346656037)
#define FNV_PRIME        UINT64_C(1099511628211)

/* ---- hashing ------------------------------------------------------------- */

uint64_t
samsa_hash_bytes(const void *p, size_t n, uint64_t seed)
{
    const uint8_t  *b = p;
    uint64_t        h = FNV_OFFSET ^ seed;
    size_t          i;

    for (i = 0; i < n; i++) {
        h = (h ^ b[i]) * FNV_PRIME;
    }
    return samsa_hash_mix(h ^ n);
}

uint64_t
samsa_hash_str(const char *s, uint64_t seed)
{
    return samsa_hash_bytes(s, strlen(s), seed);
}

/* ---- map ------------------------------------------------------------------- */

void
samsa_map_init(samsa_map_t *map)
{
    memset(map, 0, sizeof(*map));
}

void
samsa_map_fini(samsa_map_t *map)
{
    samsa_free(map->buckets);
    samsa_map_init(map);
}

static size_t
map_index(const samsa_map_t *map, uint64_t hash)
{
    return (size_t) (hash >> map->shift);
}

/* Rehash into twice the buckets (or the first MAP_MIN_BUCKETS). */
static void
map_grow(samsa_map_t *map)
{
    samsa_map_node_t  **old = map->buckets, *node, *next;
    size_t              nold = map->nbuckets, i, b;

    map->nbuckets = nold == 0 ? MAP_MIN_BUCKETS : nold * 2;
    map->shift = 64 - (unsigned) __builtin_ctzll(map->nbuckets);
    map->buckets = samsa_calloc(map->nbuckets, sizeof(*map->buckets));
    for (i = 0; i < nold; i++) {
        for (node = old[i]; node != NULL; node = next) {
            next = node->next;
            b = map_index(map, node->hash);
            node->next = map->buckets[b];
            map->buckets[b] = node;
        }
    }
    samsa_free(old);
}

void
samsa_map_insert(samsa_map_t *map, samsa_map_node_t *node, uint64_t hash)
{
    size_t  b;

    if (map->count >= map->nbuckets) {
        map_grow(map);
    }
    node->hash = hash;
    b = map_index(map, hash);
    node->next = map->buckets[b];
    map->buckets[b] = node;
    map->count++;
}

void
samsa_map_remove(samsa_map_t *map, samsa_map_node_t *node)
{
    samsa_map_node_t  **pp;

    samsa_assert(map->nbuckets > 0);
    pp = &map->buckets[map_index(map, node->hash)];
    while (*pp != node) {
        samsa_assert(*pp != NULL);
        pp = &(*pp)->next;
    }
    *pp = node->next;
    node->next = NULL;
    map->count--;
}

size_t
samsa_map_count(const samsa_map_t *map)
{
    return map->count;
}

void
samsa_map_iter_init(samsa_map_iter_t *it, const samsa_map_t *map)
{
    it->map = map;
    it->bucket = 0;
    it->next = NULL;
}

samsa_map_node_t *
samsa_map_iter_next(samsa_map_iter_t *it)
{
    samsa_map_node_t  *node = it->next;

    while (node == NULL && it->bucket < it->map->nbuckets) {
        node = it->map->buckets[it->bucket++];
    }
    it->next = node != NULL ? node->next : NULL;
    return node;
}
