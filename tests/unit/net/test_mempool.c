/* Unit tests for net/mempool.c (queued.max.request.bytes). */
#include "unit.h"

#include "net/mempool.h"

static void
test_mempool_unlimited_never_exhausts(void **state)
{
    samsa_mempool_t  pool;

    (void) state;
    samsa_mempool_init(&pool, -1);
    assert_true(samsa_mempool_try_take(&pool, 1LL << 40));
    assert_false(samsa_mempool_is_exhausted(&pool));
    assert_false(samsa_mempool_give(&pool, 1LL << 40));
}

/* Non-strict, as Kafka's SimpleMemoryPool in the socket server: a take
 * succeeds while any budget is left, even if larger than what is left;
 * then the pool is exhausted until enough comes back. */
static void
test_mempool_non_strict_then_exhausted(void **state)
{
    samsa_mempool_t  pool;

    (void) state;
    samsa_mempool_init(&pool, 100);
    assert_true(samsa_mempool_try_take(&pool, 60));
    assert_true(samsa_mempool_try_take(&pool, 60));     /* 40 left: ok */
    assert_true(samsa_mempool_is_exhausted(&pool));     /* -20 */
    assert_false(samsa_mempool_try_take(&pool, 1));
    assert_false(samsa_mempool_give(&pool, 10));        /* still -10 */
    assert_true(samsa_mempool_is_exhausted(&pool));
    assert_true(samsa_mempool_give(&pool, 50));         /* 40: ends it */
    assert_false(samsa_mempool_is_exhausted(&pool));
    assert_true(samsa_mempool_try_take(&pool, 1000));   /* bigger than all */
    assert_true(samsa_mempool_give(&pool, 1000));
    assert_true(samsa_mempool_give(&pool, 60) == false);
}

/* Used bytes and their high-water mark, for the metrics. */
static void
test_mempool_used_and_max(void **state)
{
    samsa_mempool_t  pool;

    (void) state;
    samsa_mempool_init(&pool, 100);
    assert_int_equal(samsa_mempool_used(&pool), 0);
    assert_int_equal(samsa_mempool_max_used(&pool), 0);
    assert_true(samsa_mempool_try_take(&pool, 30));
    assert_true(samsa_mempool_try_take(&pool, 50));
    assert_int_equal(samsa_mempool_used(&pool), 80);
    assert_false(samsa_mempool_give(&pool, 50));
    assert_int_equal(samsa_mempool_used(&pool), 30);
    assert_int_equal(samsa_mempool_max_used(&pool), 80);
    assert_true(samsa_mempool_try_take(&pool, 90));     /* non-strict */
    assert_int_equal(samsa_mempool_used(&pool), 120);
    assert_int_equal(samsa_mempool_max_used(&pool), 120);
    assert_false(samsa_mempool_try_take(&pool, 1));     /* refused: */
    assert_int_equal(samsa_mempool_max_used(&pool), 120);   /* unchanged */
    assert_true(samsa_mempool_give(&pool, 120));
    assert_int_equal(samsa_mempool_used(&pool), 0);
    assert_int_equal(samsa_mempool_max_used(&pool), 120);

    samsa_mempool_init(&pool, -1);                      /* unlimited */
    assert_true(samsa_mempool_try_take(&pool, 1000));
    assert_int_equal(samsa_mempool_used(&pool), 0);
    assert_int_equal(samsa_mempool_max_used(&pool), 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mempool_unlimited_never_exhausts),
        cmocka_unit_test(test_mempool_non_strict_then_exhausted),
        cmocka_unit_test(test_mempool_used_and_max),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
