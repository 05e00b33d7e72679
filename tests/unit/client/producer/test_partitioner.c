/*
 * tests/unit/client/producer/test_partitioner.c - murmur2 against the Java client's
 * own test vectors (UtilsTest.testMurmur2), keyed partition choice, and the
 * KIP-794 sticky partitioner's switching and weighting rules.
 */
#include "unit.h"

#include "client/producer/partitioner.h"

/* org.apache.kafka.common.utils.UtilsTest#testMurmur2 */
static void
test_partitioner_murmur2_java_vectors(void **state)
{
    static const struct {
        const char  *key;
        int32_t      hash;
    } cases[] = {
        { "21", -973932308 },
        { "foobar", -790332482 },
        { "a-little-bit-long-string", -985981536 },
        { "a-little-bit-longer-string", -1486304829 },
        { "lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971 },
        { "abc", 479470107 },
    };
    size_t  i;

    (void) state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_int_equal(samsa_murmur2(cases[i].key, strlen(cases[i].key)),
                         cases[i].hash);
    }
}

/* toPositive(murmur2(key)) % n, as BuiltInPartitioner.partitionForKey. */
static void
test_partitioner_key_partition(void **state)
{
    (void) state;
    /* -973932308 & 0x7fffffff = 1173551340 */
    assert_int_equal(samsa_partition_for_key("21", 2, 12), 1173551340 % 12);
    /* -790332482 & 0x7fffffff = 1357151166 */
    assert_int_equal(samsa_partition_for_key("foobar", 6, 7),
                     1357151166 % 7);
    assert_int_equal(samsa_partition_for_key("abc", 3, 100),
                     479470107 % 100);
    assert_int_equal(samsa_partition_for_key("", 0, 1), 0);
}

static const samsa_partview_t  view12 = { 12, NULL, 0 };

/* Switch after batch.size bytes once the batch is full; after 2 x
 * batch.size regardless. */
static void
test_partitioner_sticky_switch_rules(void **state)
{
    samsa_sticky_t       *st = samsa_sticky_new(1000, 42);
    samsa_sticky_pick_t   p, q;

    (void) state;
    p = samsa_sticky_peek(st, &view12);
    samsa_sticky_update(st, p, 999, true, &view12);
    assert_false(samsa_sticky_changed(st, p));
    samsa_sticky_update(st, p, 1, false, &view12);      /* 1000, not full */
    assert_false(samsa_sticky_changed(st, p));
    samsa_sticky_update(st, p, 1, true, &view12);       /* full: switch */
    assert_true(samsa_sticky_changed(st, p));
    q = samsa_sticky_peek(st, &view12);
    assert_int_not_equal(q.partition, p.partition);
    samsa_sticky_update(st, q, 1999, false, &view12);
    assert_false(samsa_sticky_changed(st, q));
    samsa_sticky_update(st, q, 1, false, &view12);      /* 2 x batch.size */
    assert_true(samsa_sticky_changed(st, q));
    /* A stale pick's bytes do not count against the new partition. */
    p = samsa_sticky_peek(st, &view12);
    samsa_sticky_update(st, q, 5000, true, &view12);
    assert_false(samsa_sticky_changed(st, p));
    samsa_sticky_free(st);
}

/* Keyless partitions come out uniform over many sticky runs, and only
 * available partitions are used when some are known. */
static void
test_partitioner_sticky_uniform_and_available(void **state)
{
    static const int32_t  avail[] = { 1, 4, 7 };
    samsa_partview_t      v3 = { 12, avail, 3 };
    samsa_sticky_t       *st = samsa_sticky_new(100, 7);
    samsa_sticky_pick_t   p;
    int                   counts[12] = { 0 };
    int                   i;

    (void) state;
    for (i = 0; i < 12000; i++) {
        p = samsa_sticky_peek(st, &view12);
        counts[p.partition]++;
        samsa_sticky_update(st, p, 100, true, &view12);
    }
    for (i = 0; i < 12; i++) {
        assert_int_equal(counts[i], 1000);      /* one per round */
    }
    memset(counts, 0, sizeof(counts));
    p = samsa_sticky_peek(st, &v3);     /* the run in progress ends */
    samsa_sticky_update(st, p, 100, true, &v3);
    for (i = 0; i < 300; i++) {
        p = samsa_sticky_peek(st, &v3);
        counts[p.partition]++;
        samsa_sticky_update(st, p, 100, true, &v3);
    }
    assert_int_equal(counts[1] + counts[4] + counts[7], 300);
    assert_true(counts[1] >= 99 && counts[4] >= 99 && counts[7] >= 99);
    samsa_sticky_free(st);
}

/* Adaptive: weights max+1-queue; a partition with a long queue is picked
 * rarely, one left out (unavailable) never. */
static void
test_partitioner_sticky_load_stats(void **state)
{
    static const int32_t  sizes[] = { 0, 0, 9, 0 };
    static const int32_t  ids[] = { 0, 1, 2, 3 };
    samsa_partview_t      v4 = { 4, NULL, 0 };
    samsa_sticky_t       *st = samsa_sticky_new(100, 99);
    samsa_sticky_pick_t   p;
    int                   counts[4] = { 0 };
    int                   i;

    (void) state;
    samsa_sticky_load_stats(st, sizes, ids, 4, 4);
    for (i = 0; i < 31000; i++) {
        p = samsa_sticky_peek(st, &v4);
        counts[p.partition]++;
        samsa_sticky_update(st, p, 100, true, &v4);
    }
    /* weights 10, 10, 1, 10 of 31 */
    assert_true(counts[2] > 500 && counts[2] < 1500);
    assert_true(counts[0] > 9000 && counts[1] > 9000 && counts[3] > 9000);
    /* partition 3 left out (its leader is slow); equal sizes otherwise */
    memset(counts, 0, sizeof(counts));
    samsa_sticky_load_stats(st, sizes, ids, 2, 4);
    for (i = 0; i < 1000; i++) {
        p = samsa_sticky_peek(st, &v4);
        counts[p.partition]++;
        samsa_sticky_update(st, p, 100, true, &v4);
    }
    assert_int_equal(counts[2] + counts[3], 0);
    /* all equal, nothing left out: back to the uniform deck */
    samsa_sticky_load_stats(st, ids, ids, 0, 4);
    samsa_sticky_load_stats(st, NULL, NULL, 0, 0);
    memset(counts, 0, sizeof(counts));
    for (i = 0; i < 400; i++) {
        p = samsa_sticky_peek(st, &v4);
        counts[p.partition]++;
        samsa_sticky_update(st, p, 100, true, &v4);
    }
    for (i = 0; i < 4; i++) {
        assert_true(counts[i] >= 99 && counts[i] <= 101);
    }
    samsa_sticky_free(st);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_partitioner_murmur2_java_vectors),
        cmocka_unit_test(test_partitioner_key_partition),
        cmocka_unit_test(test_partitioner_sticky_switch_rules),
        cmocka_unit_test(test_partitioner_sticky_uniform_and_available),
        cmocka_unit_test(test_partitioner_sticky_load_stats),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
