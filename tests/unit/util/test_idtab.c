/* Unit tests for util/idtab.c: the sorted, refcounted id table of the
 * group and transaction coordinators. */
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/idtab.h"

typedef struct item {
    char  id[32];
    int   refs;
} item_t;

static int  made;

static const char *
item_id(const void *p)
{
    return ((const item_t *) p)->id;
}

static void
item_ref(void *p)
{
    ((item_t *) p)->refs++;
}

static void
item_unref(void *p)
{
    item_t  *it = p;

    if (--it->refs == 0) {
        samsa_free(it);
    }
}

static void *
item_make(void *arg, samsa_slice_t id)
{
    item_t  *it = samsa_calloc(1, sizeof(*it));

    (void) arg;
    snprintf(it->id, sizeof(it->id), "%.*s", (int) id.len, id.ptr);
    it->refs = 1;
    made++;
    return it;
}

static const samsa_idtab_ops_t  ops = { item_id, item_ref, item_unref,
                                        item_make };

static samsa_slice_t
sl(const char *s)
{
    return (samsa_slice_t) { s, strlen(s) };
}

/* get creates once, finds after; the caller's ref is its own. */
static void
test_idtab_get_creates_once_and_finds(void **state)
{
    samsa_idtab_t  t;
    item_t        *a, *b;

    (void) state;
    made = 0;
    samsa_idtab_init(&t, &ops, NULL);
    assert_null(samsa_idtab_get(&t, sl("g1"), false));
    a = samsa_idtab_get(&t, sl("g1"), true);
    assert_non_null(a);
    assert_int_equal(a->refs, 2);               /* table + caller */
    b = samsa_idtab_get(&t, sl("g1"), true);
    assert_ptr_equal(a, b);
    assert_int_equal(made, 1);
    assert_int_equal(a->refs, 3);
    item_unref(a);
    item_unref(b);
    assert_int_equal(samsa_idtab_count(&t), 1);
    samsa_idtab_fini(&t);
}

static int
cmp_str(const void *x, const void *y)
{
    return strcmp(*(const char *const *) x, *(const char *const *) y);
}

/* Items stay sorted by id whatever the insertion order, and a snapshot
 * hands out a ref on each. */
static void
test_idtab_sorted_snapshot(void **state)
{
    static const char  *ids[] = { "m", "c", "x", "a", "q", "b", "", "zz" };
    const char         *want[8];
    samsa_idtab_t       t;
    void              **snap;
    size_t              i, n;

    (void) state;
    samsa_idtab_init(&t, &ops, NULL);
    for (i = 0; i < 8; i++) {
        item_unref(samsa_idtab_get(&t, sl(ids[i]), true));
        want[i] = ids[i];
    }
    qsort(want, 8, sizeof(want[0]), cmp_str);
    snap = samsa_idtab_snapshot(&t, &n);
    assert_int_equal(n, 8);
    assert_null(snap[8]);
    for (i = 0; i < n; i++) {
        assert_string_equal(((item_t *) snap[i])->id, want[i]);
        assert_int_equal(((item_t *) snap[i])->refs, 2);
        item_unref(snap[i]);
    }
    samsa_free(snap);
    /* a NULL id reads as "" */
    snap = samsa_idtab_get(&t, (samsa_slice_t) { NULL, 0 }, false);
    assert_non_null(snap);
    assert_string_equal(((item_t *) (void *) snap)->id, "");
    item_unref(snap);
    samsa_idtab_fini(&t);
}

/* remove takes out only that very item: a newer one with the same id
 * stays. */
static void
test_idtab_remove_only_that_item(void **state)
{
    samsa_idtab_t  t;
    item_t        *old, *cur;

    (void) state;
    samsa_idtab_init(&t, &ops, NULL);
    old = samsa_idtab_get(&t, sl("t1"), true);
    assert_true(samsa_idtab_remove(&t, old));
    item_unref(old);                            /* the table's ref */
    assert_false(samsa_idtab_remove(&t, old));  /* gone already */
    cur = samsa_idtab_get(&t, sl("t1"), true);
    assert_ptr_not_equal(cur, NULL);
    assert_false(samsa_idtab_remove(&t, old));  /* not the one held */
    assert_int_equal(samsa_idtab_count(&t), 1);
    item_unref(old);                            /* the caller's */
    item_unref(cur);
    samsa_idtab_fini(&t);
}

static bool
is_odd(void *p, void *ctx)
{
    (void) ctx;
    return (((item_t *) p)->id[1] - '0') % 2 == 1;
}

/* drop_if takes out what the predicate names, keeping the order. */
static void
test_idtab_drop_if(void **state)
{
    samsa_idtab_t  t;
    void         **snap;
    size_t         i, n;
    char           id[32];

    (void) state;
    samsa_idtab_init(&t, &ops, NULL);
    for (i = 0; i < 8; i++) {
        snprintf(id, sizeof(id), "g%zu", i);
        item_unref(samsa_idtab_get(&t, sl(id), true));
    }
    assert_int_equal(samsa_idtab_drop_if(&t, is_odd, NULL), 4);
    snap = samsa_idtab_snapshot(&t, &n);
    assert_int_equal(n, 4);
    for (i = 0; i < n; i++) {
        snprintf(id, sizeof(id), "g%zu", 2 * i);
        assert_string_equal(((item_t *) snap[i])->id, id);
        item_unref(snap[i]);
    }
    samsa_free(snap);
    samsa_idtab_fini(&t);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_idtab_get_creates_once_and_finds),
        cmocka_unit_test(test_idtab_sorted_snapshot),
        cmocka_unit_test(test_idtab_remove_only_that_item),
        cmocka_unit_test(test_idtab_drop_if),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
