/*
 * util/map.h - one hash map for the whole tree, and its hash function.
 *
 * The map is chained and intrusive: the caller embeds a samsa_map_node_t
 * in its own entry (a producer's state, a quota sensor, a watch list ...)
 * and the map links those nodes into its buckets, so inserting allocates
 * nothing but, now and then, a bigger bucket array.  A node carries its
 * key's 64-bit hash, computed once by the caller with samsa_hash_*(); the
 * eq function the caller passes to samsa_map_find compares the key
 * itself, called only for nodes whose hash matches (find is inline, so
 * the compiler can inline eq too: a lookup is a few loads, no call).  Keys are whatever the entry holds (bytes, strings,
 * ids): the map never sees them.
 *
 * Buckets are indexed by the hash's top bits, so a caller that shards by
 * the low bits (broker/purgatory.c) still spreads its keys in each shard.
 * The bucket array is allocated on the first insert (an unused map costs
 * its struct only) and doubles once there are more nodes than buckets.
 *
 * Iteration visits every node once, in no particular order; the node it
 * just returned may be removed (and freed) before asking for the next, no
 * other change is allowed meanwhile.
 *
 * Threads: none of its own and no lock; the caller serialises every call
 * on one map (finds may run concurrently with each other).
 */
#ifndef SAMSA_UTIL_MAP_H
#define SAMSA_UTIL_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct samsa_map_node {
    struct samsa_map_node  *next;       /* chain in the bucket */
    uint64_t                hash;       /* the key's, set by insert */
} samsa_map_node_t;

/* Does node's entry hold key (as passed to samsa_map_find)? */
typedef bool samsa_map_eq_fn_t(const samsa_map_node_t *node, const void *key);

typedef struct samsa_map {
    samsa_map_node_t  **buckets;        /* NULL until the first insert */
    size_t              nbuckets;       /* 0 or a power of two */
    unsigned            shift;          /* 64 - log2(nbuckets) */
    size_t              count;
} samsa_map_t;

typedef struct samsa_map_iter {
    const samsa_map_t  *map;
    size_t              bucket;         /* the next bucket to start */
    samsa_map_node_t   *next;           /* the next node to return */
} samsa_map_iter_t;

/* The entry of type holding node as member. */
#define SAMSA_MAP_ENTRY(node, type, member) \
    ((type *) (void *) ((char *) (node) - offsetof(type, member)))

void samsa_map_init(samsa_map_t *map);

/* Free the bucket array; the nodes are the caller's (free them first,
 * iterating).  The map is empty and usable again afterwards. */
void samsa_map_fini(samsa_map_t *map);

/* The node with this hash whose entry eq says holds key, or NULL. */
static inline samsa_map_node_t *
samsa_map_find(const samsa_map_t *map, uint64_t hash, samsa_map_eq_fn_t *eq,
               const void *key)
{
    samsa_map_node_t  *node;

    if (map->nbuckets == 0) {
        return NULL;
    }
    for (node = map->buckets[hash >> map->shift]; node != NULL;
         node = node->next) {
        if (node->hash == hash && eq(node, key)) {
            return node;
        }
    }
    return NULL;
}

/* Link node under hash.  The key must not be in the map already. */
void samsa_map_insert(samsa_map_t *map, samsa_map_node_t *node,
                      uint64_t hash);

/* Unlink node, which must be in the map. */
void samsa_map_remove(samsa_map_t *map, samsa_map_node_t *node);

size_t samsa_map_count(const samsa_map_t *map);

void samsa_map_iter_init(samsa_map_iter_t *it, const samsa_map_t *map);

/* The next node, or NULL once every node was returned. */
samsa_map_node_t *samsa_map_iter_next(samsa_map_iter_t *it);

/* ---- hashing: 64-bit FNV-1a over the bytes, then a full avalanche mix
 * (murmur3's finaliser) so that every bit of the result depends on every
 * byte.  seed chains hashes of several parts: hash(b, hash(a, 0)). */

static inline uint64_t
samsa_hash_mix(uint64_t h)
{
    h ^= h >> 33;
    h *= UINT64_C(0xff51afd7ed558ccd);
    h ^= h >> 33;
    h *= UINT64_C(0xc4ceb9fe1a85ec53);
    h ^= h >> 33;
    return h;
}

uint64_t samsa_hash_bytes(const void *p, size_t n, uint64_t seed);
uint64_t samsa_hash_str(const char *s, uint64_t seed);

static inline uint64_t
samsa_hash_u64(uint64_t x, uint64_t seed)
{
    return samsa_hash_mix(x ^ samsa_hash_mix(seed
                                             ^ UINT64_C(0x9e3779b97f4a7c15)));
}

#endif /* SAMSA_UTIL_MAP_H */
