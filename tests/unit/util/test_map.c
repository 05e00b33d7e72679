/* Unit tests for util/map.c: the intrusive hash map (find, insert,
 * remove, growth, iteration with removal) and its hash function. */
#include "unit.h"

#include <string.h>

#include "util/alloc.h"
#include "util/map.h"

typedef struct item {
    samsa_map_node_t  node;
    uint64_t          key;
    bool              seen;
} item_t;

static bool
item_eq(const samsa_map_node_t *node, const void *key)
{
    return SAMSA_MAP_ENTRY(node, item_t, node)->key
           == *(const uint64_t *) key;
}

static item_t *
item_find(const samsa_map_t *m, uint64_t key)
{
    samsa_map_node_t  *n = samsa_map_find(m, samsa_hash_u64(key, 0),
                                           item_eq, &key);

    return n != NULL ? SAMSA_MAP_ENTRY(n, item_t, node) : NULL;
}

/* An empty map finds nothing and allocates nothing. */
static void
test_map_empty(void **state)
{
    samsa_map_t       m;
    samsa_map_iter_t  it;

    (void) state;
    samsa_map_init(&m);
    assert_null(item_find(&m, 1));
    assert_null(m.buckets);
    samsa_map_iter_init(&it, &m);
    assert_null(samsa_map_iter_next(&it));
    samsa_map_fini(&m);
}

/* Many keys through several doublings: each found, others not. */
static void
test_map_grow_find(void **state)
{
    enum { N = 5000 };
    samsa_map_t  m;
    item_t      *items = samsa_calloc(N, sizeof(*items));
    size_t       i;

    (void) state;
    samsa_map_init(&m);
    for (i = 0; i < N; i++) {
        items[i].key = i * 7919;
        samsa_map_insert(&m, &items[i].node, samsa_hash_u64(items[i].key, 0));
        assert_int_equal(samsa_map_count(&m), i + 1);
    }
    assert_true(m.nbuckets >= N);
    for (i = 0; i < N; i++) {
        assert_ptr_equal(item_find(&m, i * 7919), &items[i]);
        assert_null(item_find(&m, i * 7919 + 1));
    }
    samsa_map_fini(&m);
    samsa_free(items);
}

/* Removing some keys leaves the rest findable. */
static void
test_map_remove(void **state)
{
    enum { N = 300 };
    samsa_map_t  m;
    item_t       items[N];
    size_t       i;

    (void) state;
    memset(items, 0, sizeof(items));
    samsa_map_init(&m);
    for (i = 0; i < N; i++) {
        items[i].key = i;
        samsa_map_insert(&m, &items[i].node, samsa_hash_u64(i, 0));
    }
    for (i = 0; i < N; i += 3) {
        samsa_map_remove(&m, &items[i].node);
    }
    assert_int_equal(samsa_map_count(&m), N - N / 3);
    for (i = 0; i < N; i++) {
        if (i % 3 == 0) {
            assert_null(item_find(&m, i));
        } else {
            assert_ptr_equal(item_find(&m, i), &items[i]);
        }
    }
    /* and they go back in */
    for (i = 0; i < N; i += 3) {
        samsa_map_insert(&m, &items[i].node, samsa_hash_u64(i, 0));
    }
    for (i = 0; i < N; i++) {
        assert_ptr_equal(item_find(&m, i), &items[i]);
    }
    samsa_map_fini(&m);
}

/* Iteration visits each node once, and may remove the node it returned. */
static void
test_map_iter_remove(void **state)
{
    enum { N = 1000 };
    samsa_map_t        m;
    samsa_map_iter_t   it;
    samsa_map_node_t  *n;
    item_t            *items = samsa_calloc(N, sizeof(*items)), *e;
    size_t             i, visits = 0;

    (void) state;
    samsa_map_init(&m);
    for (i = 0; i < N; i++) {
        items[i].key = i;
        samsa_map_insert(&m, &items[i].node, samsa_hash_u64(i, 0));
    }
    samsa_map_iter_init(&it, &m);
    while ((n = samsa_map_iter_next(&it)) != NULL) {
        e = SAMSA_MAP_ENTRY(n, item_t, node);
        assert_false(e->seen);
        e->seen = true;
        visits++;
        if (e->key % 2 == 0) {
            samsa_map_remove(&m, n);
        }
    }
    assert_int_equal(visits, N);
    assert_int_equal(samsa_map_count(&m), N / 2);
    for (i = 0; i < N; i++) {
        assert_true(items[i].seen);
        assert_true((item_find(&m, i) != NULL) == (i % 2 == 1));
    }
    samsa_map_fini(&m);
    assert_int_equal(samsa_map_count(&m), 0);
    assert_null(item_find(&m, 1));
    samsa_free(items);
}

/* Equal hashes (collisions) are told apart by eq. */
static void
test_map_collisions(void **state)
{
    samsa_map_t  m;
    item_t       a = { .key = 1 }, b = { .key = 2 };
    uint64_t     k = 3;

    (void) state;
    samsa_map_init(&m);
    samsa_map_insert(&m, &a.node, 42);
    samsa_map_insert(&m, &b.node, 42);
    k = 1;
    assert_ptr_equal(samsa_map_find(&m, 42, item_eq, &k), &a.node);
    k = 2;
    assert_ptr_equal(samsa_map_find(&m, 42, item_eq, &k), &b.node);
    k = 3;
    assert_null(samsa_map_find(&m, 42, item_eq, &k));
    samsa_map_remove(&m, &a.node);
    k = 2;
    assert_ptr_equal(samsa_map_find(&m, 42, item_eq, &k), &b.node);
    samsa_map_fini(&m);
}

/* The hash: deterministic, seed- and length-sensitive, well spread in the
 * top bits (the buckets) for consecutive small keys. */
static void
test_hash(void **state)
{
    unsigned  top[16] = { 0 };
    uint64_t  i;
    int       b;

    (void) state;
    assert_true(samsa_hash_str("topic", 0) == samsa_hash_bytes("topic", 5, 0));
    assert_true(samsa_hash_str("topic", 0) != samsa_hash_str("topic", 1));
    assert_true(samsa_hash_bytes("\0", 1, 0) != samsa_hash_bytes("", 0, 0));
    assert_true(samsa_hash_str("ab", samsa_hash_str("c", 0))
                != samsa_hash_str("a", samsa_hash_str("bc", 0)));
    assert_true(samsa_hash_u64(1, 0) != samsa_hash_u64(2, 0));
    for (i = 0; i < 16000; i++) {
        top[samsa_hash_u64(i, 0) >> 60]++;
    }
    for (b = 0; b < 16; b++) {
        assert_in_range(top[b], 800, 1200);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_map_empty),
        cmocka_unit_test(test_map_grow_find),
        cmocka_unit_test(test_map_remove),
        cmocka_unit_test(test_map_iter_remove),
        cmocka_unit_test(test_map_collisions),
        cmocka_unit_test(test_hash),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
