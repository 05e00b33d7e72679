/* Unit tests for meta/controller/placement.c: Kafka's striped placement.
 * Drawing from a copy of Kafka's test MockRandom through Java's
 * Random.nextInt, the placements are exactly those of Kafka's
 * StripedReplicaPlacerTest; with a source that always draws 0, the
 * placer's javadoc example.  With seeded sources, the properties: no
 * broker twice in a partition, one replica per rack when rf allows,
 * leaders spread evenly over racks and brokers, fenced brokers never
 * leading, Kafka's errors, and the same seed giving the same placement. */
#include "unit.h"

#include <stdio.h>
#include <string.h>

#include "meta/controller/placement.h"

#define MAXP  128               /* partitions per test at most */
#define MAXR  8                 /* replicas per partition at most */

static uint32_t
zero_next(void *ctx, uint32_t bound)
{
    (void) ctx;
    (void) bound;
    return 0;
}

static const samsa_placement_rand_t  zero_rand = { zero_next, NULL };

/* Kafka's MockRandom (server-common, tests): a java.util.Random whose
 * next(bits) steps this LCG (default state 17). */
static int32_t
mock_next_bits(uint64_t *state, int bits)
{
    *state = *state * UINT64_C(2862933555777941757) + UINT64_C(3037000493);
    return (int32_t) (*state >> (64 - bits));
}

/* java.util.Random.nextInt(bound) over MockRandom's next(). */
static uint32_t
mock_next(void *ctx, uint32_t bound)
{
    uint64_t  *state = ctx;
    int32_t    b = (int32_t) bound, m = b - 1, r, u;

    r = mock_next_bits(state, 31);
    if ((b & m) == 0) {
        return (uint32_t) (((int64_t) b * (int64_t) r) >> 31);
    }
    for (u = r; (int32_t) ((uint32_t) u - (uint32_t) (r = u % b)
                           + (uint32_t) m) < 0;
         u = mock_next_bits(state, 31)) {
    }
    return (uint32_t) r;
}

/* Place nparts partitions with a fresh MockRandom, as Kafka's tests do
 * with a fresh RackList or StripedReplicaPlacer. */
static void
place_mock(const samsa_placement_broker_t *brokers, size_t n, int32_t nparts,
           int32_t rf, int32_t *out)
{
    samsa_placement_spec_t  spec = { 0, nparts, rf };
    uint64_t                state = 17;
    samsa_placement_rand_t  rnd = { mock_next, &state };
    char                    err[256];

    if (samsa_placement_place(&spec, brokers, n, &rnd, out, err, sizeof(err))
        != SAMSA_ERR_NONE) {
        fail_msg("placement: %s", err);
    }
}

static void
assert_ids(const int32_t *got, const int32_t *want, int n)
{
    int  i;

    for (i = 0; i < n; i++) {
        if (got[i] != want[i]) {
            fail_msg("replica %d: got %d, want %d", i, (int) got[i],
                     (int) want[i]);
        }
    }
}

/* StripedReplicaPlacerTest's RackList cases, one placement per row. */
static void
test_placement_kafka_racklist(void **state)
{
    const samsa_placement_broker_t  avoid[5] = {
        { 3, NULL, false }, { 1, NULL, true }, { 0, NULL, false },
        { 4, NULL, false }, { 2, NULL, false },
    };
    const int32_t                   avoid_want[20] = {
        3, 4, 0, 2,  4, 0, 2, 3,  0, 2, 3, 4,  2, 3, 4, 0,  0, 4, 3, 2,
    };
    const samsa_placement_broker_t  onfenced[3] = {
        { 3, NULL, false }, { 1, NULL, true }, { 2, NULL, false },
    };
    const int32_t                   onfenced_want[12] = {
        3, 2, 1,  2, 3, 1,  3, 2, 1,  2, 3, 1,
    };
    const samsa_placement_broker_t  multi[6] = {
        { 11, "1", false }, { 10, "1", false }, { 30, "3", false },
        { 31, "3", false }, { 21, "2", false }, { 20, "2", true },
    };
    const int32_t                   multi_want[12] = {
        11, 21, 31, 10,  21, 30, 10, 20,  31, 11, 21, 30,
    };
    const samsa_placement_broker_t  invalid[8] = {
        { 11, "1", false }, { 10, "1", false }, { 30, "3", true },
        { 31, "3", true }, { 20, "2", true }, { 21, "2", true },
        { 41, "4", false }, { 40, "4", true },
    };
    const int32_t                   invalid_want[12] = {
        41, 11, 21, 30,  10, 20, 31, 41,  41, 21, 30, 11,
    };
    int32_t                         out[20];

    (void) state;
    place_mock(avoid, 5, 5, 4, out);
    assert_ids(out, avoid_want, 20);
    place_mock(onfenced, 3, 4, 3, out);
    assert_ids(out, onfenced_want, 12);
    place_mock(multi, 6, 3, 4, out);
    assert_ids(out, multi_want, 12);
    place_mock(invalid, 8, 3, 4, out);
    assert_ids(out, invalid_want, 12);
}

/* StripedReplicaPlacerTest's placer cases: testSuccessfulPlacement,
 * testMultiPartitionTopicPlacementOnSingleUnfencedBroker and
 * testEvenDistribution (200 partitions of 2 over 4 brokers: how often
 * each replica list occurs). */
static void
test_placement_kafka_placer(void **state)
{
    const samsa_placement_broker_t  four[4] = {
        { 0, NULL, false }, { 3, NULL, false }, { 2, NULL, false },
        { 1, NULL, false },
    };
    const int32_t                   ok_want[15] = {
        2, 3, 0,  3, 0, 1,  0, 1, 2,  1, 2, 3,  1, 0, 2,
    };
    const samsa_placement_broker_t  single[2] = {
        { 0, NULL, false }, { 1, NULL, true },
    };
    const int32_t                   single_want[3] = { 0, 0, 0 };
    const samsa_placement_broker_t  even[4] = {
        { 0, NULL, false }, { 1, NULL, false }, { 2, NULL, false },
        { 3, NULL, false },
    };
    /* counts[leader][follower], from the test's assertions */
    const int                       want[4][4] = {
        { 0, 14, 22, 14 }, { 17, 0, 17, 16 }, { 13, 17, 0, 20 },
        { 20, 19, 11, 0 },
    };
    int                             counts[4][4] = { { 0 } };
    int32_t                         out[400];
    int                             p, i, j;

    (void) state;
    place_mock(four, 4, 5, 3, out);
    assert_ids(out, ok_want, 15);
    place_mock(single, 2, 3, 1, out);
    assert_ids(out, single_want, 3);
    place_mock(even, 4, 200, 2, out);
    for (p = 0; p < 200; p++) {
        counts[out[p * 2]][out[p * 2 + 1]]++;
    }
    for (i = 0; i < 4; i++) {
        for (j = 0; j < 4; j++) {
            assert_int_equal(counts[i][j], want[i][j]);
        }
    }
}

/* Place with a seeded generator; the error (replicas filled on success). */
static samsa_err_t
place_seeded(const samsa_placement_broker_t *brokers, size_t n,
             int32_t nparts, int32_t rf, uint64_t seed, int32_t *out,
             char *err, size_t errlen)
{
    samsa_placement_spec_t  spec = { 0, nparts, rf };
    samsa_placement_rng_t   rng;
    samsa_placement_rand_t  rnd = { samsa_placement_rng_next, &rng };

    samsa_placement_rng_seed(&rng, seed);
    return samsa_placement_place(&spec, brokers, n, &rnd, out, err, errlen);
}

static void
place_ok(const samsa_placement_broker_t *brokers, size_t n, int32_t nparts,
         int32_t rf, uint64_t seed, int32_t *out)
{
    char  err[256];

    assert_true(nparts <= MAXP && rf <= MAXR);
    err[0] = '\0';
    if (place_seeded(brokers, n, nparts, rf, seed, out, err, sizeof(err))
        != SAMSA_ERR_NONE) {
        fail_msg("placement: %s", err);
    }
}

/* Every partition names known, distinct brokers. */
static void
assert_distinct(const samsa_placement_broker_t *brokers, size_t n,
                const int32_t *out, int32_t nparts, int32_t rf)
{
    int32_t  p, i, j;
    size_t   k;
    bool     known;

    for (p = 0; p < nparts; p++) {
        for (i = 0; i < rf; i++) {
            known = false;
            for (k = 0; k < n; k++) {
                known = known || brokers[k].id == out[p * rf + i];
            }
            assert_true(known);
            for (j = 0; j < i; j++) {
                assert_int_not_equal(out[p * rf + i], out[p * rf + j]);
            }
        }
    }
}

/* How often broker id appears (as leader only if leaders). */
static int
count_of(const int32_t *out, int32_t nparts, int32_t rf, int32_t id,
         bool leaders)
{
    int32_t  p, i;
    int      c = 0;

    for (p = 0; p < nparts; p++) {
        for (i = 0; i < (leaders ? 1 : rf); i++) {
            c += out[p * rf + i] == id;
        }
    }
    return c;
}

/* The javadoc's example: racks A, B, C of 3 brokers each, all offsets 0:
 * A0 B0 C0 / B1 C1 A1 / C2 A2 B2, then round again. */
static void
test_placement_javadoc_example(void **state)
{
    const samsa_placement_broker_t  b[9] = {   /* any input order */
        { 7, "C", false }, { 1, "A", false }, { 4, "B", false },
        { 2, "A", false }, { 5, "B", false }, { 8, "C", false },
        { 3, "A", false }, { 6, "B", false }, { 9, "C", false },
    };
    const int32_t                   want[4][3] = {
        { 1, 4, 7 }, { 5, 8, 2 }, { 9, 3, 6 }, { 1, 4, 7 },
    };
    samsa_placement_spec_t          spec = { 0, 4, 3 };
    int32_t                         out[12];
    char                            err[256];
    int                             p, i;

    (void) state;
    assert_int_equal(samsa_placement_place(&spec, b, 9, &zero_rand, out, err,
                                           sizeof(err)), SAMSA_ERR_NONE);
    for (p = 0; p < 4; p++) {
        for (i = 0; i < 3; i++) {
            assert_int_equal(out[p * 3 + i], want[p][i]);
        }
    }
}

/* No racks: one list, so partition k takes the next rf brokers in id
 * order from a start that moves one broker per partition. */
static void
test_placement_no_racks_striped(void **state)
{
    const samsa_placement_broker_t  b[6] = {
        { 10, NULL, false }, { 11, NULL, false }, { 12, NULL, false },
        { 13, NULL, false }, { 14, NULL, false }, { 15, NULL, false },
    };
    samsa_placement_spec_t          spec = { 0, 6, 3 };
    int32_t                         out[18];
    char                            err[256];
    int32_t                         p, i;

    (void) state;
    assert_int_equal(samsa_placement_place(&spec, b, 6, &zero_rand, out, err,
                                           sizeof(err)), SAMSA_ERR_NONE);
    for (p = 0; p < 6; p++) {
        for (i = 0; i < 3; i++) {
            assert_int_equal(out[p * 3 + i], 10 + (p + i) % 6);
        }
    }
}

/* 3 and 6 brokers without racks, many seeds: each broker leads and holds
 * replicas equally often over whole cycles of partitions. */
static void
test_placement_no_racks_even(void **state)
{
    samsa_placement_broker_t  b[6];
    int32_t                   out[MAXP * MAXR];
    int32_t                   n, rf, nparts;
    uint64_t                  seed;
    int                       i;

    (void) state;
    for (i = 0; i < 6; i++) {
        b[i] = (samsa_placement_broker_t) { i, NULL, false };
    }
    for (n = 3; n <= 6; n += 3) {
        for (rf = 1; rf <= 3; rf++) {
            for (seed = 1; seed <= 20; seed++) {
                nparts = n * 10;
                place_ok(b, (size_t) n, nparts, rf, seed, out);
                assert_distinct(b, (size_t) n, out, nparts, rf);
                for (i = 0; i < n; i++) {
                    assert_int_equal(count_of(out, nparts, rf, i, true), 10);
                    assert_int_equal(count_of(out, nparts, rf, i, false),
                                     10 * rf);
                }
            }
        }
    }
}

/* 3 racks of 2: every partition has its replicas in distinct racks; each
 * rack leads a third of the partitions, and with rf 1 or 3 each broker a
 * sixth and rf sixths of the replicas. */
static void
test_placement_racks_even(void **state)
{
    const samsa_placement_broker_t  b[6] = {
        { 1, "r1", false }, { 2, "r2", false }, { 3, "r3", false },
        { 4, "r1", false }, { 5, "r2", false }, { 6, "r3", false },
    };
    int32_t                         out[MAXP * MAXR];
    int32_t                         rf, p, i, racks;
    uint64_t                        seed;

    (void) state;
    for (rf = 1; rf <= 3; rf++) {
        for (seed = 1; seed <= 20; seed++) {
            place_ok(b, 6, 60, rf, seed, out);
            assert_distinct(b, 6, out, 60, rf);
            for (i = 1; i <= 3; i++) {      /* each rack leads 20 */
                assert_int_equal(count_of(out, 60, rf, i, true)
                                 + count_of(out, 60, rf, i + 3, true), 20);
            }
            for (i = 1; i <= 6 && rf != 2; i++) {
                /* rf 1: a rack's list moves only when it leads; rf 3:
                 * every partition moves every list once */
                assert_int_equal(count_of(out, 60, rf, i, true), 10);
                assert_int_equal(count_of(out, 60, rf, i, false), 10 * rf);
            }
            for (p = 0; p < 60; p++) {      /* one rack per replica */
                racks = 0;
                for (i = 0; i < rf; i++) {
                    racks |= 1 << ((out[p * rf + i] - 1) % 3);
                }
                assert_int_equal(__builtin_popcount((unsigned) racks), rf);
            }
        }
    }
}

/* Two racks of unequal size and brokers without a rack (a rack of their
 * own, sorted first): replicas still spread one per rack while rf allows. */
static void
test_placement_racks_mixed(void **state)
{
    const samsa_placement_broker_t  b[5] = {
        { 1, "a", false }, { 2, "a", false }, { 3, "a", false },
        { 4, "b", false }, { 5, NULL, false },
    };
    int32_t                         out[MAXP * MAXR];
    int32_t                         p;
    uint64_t                        seed;
    bool                            a, rb, none;
    int                             i;

    (void) state;
    for (seed = 1; seed <= 20; seed++) {
        place_ok(b, 5, 30, 3, seed, out);
        assert_distinct(b, 5, out, 30, 3);
        for (p = 0; p < 30; p++) {
            a = rb = none = false;
            for (i = 0; i < 3; i++) {
                a = a || out[p * 3 + i] <= 3;
                rb = rb || out[p * 3 + i] == 4;
                none = none || out[p * 3 + i] == 5;
            }
            assert_true(a && rb && none);
        }
        /* the lone brokers of "b" and of no rack lead too */
        assert_true(count_of(out, 30, 3, 4, true) > 0);
        assert_true(count_of(out, 30, 3, 5, true) > 0);
    }
}

/* A fenced broker never leads; it gets replicas only once the unfenced
 * ones of its rack are used up (rf 3 over 2 unfenced + 1 fenced). */
static void
test_placement_fenced(void **state)
{
    const samsa_placement_broker_t  b[3] = {
        { 1, NULL, false }, { 2, NULL, true }, { 3, NULL, false },
    };
    const samsa_placement_broker_t  racks[4] = {
        { 1, "x", true }, { 2, "x", false }, { 3, "y", false },
        { 4, "y", false },
    };
    int32_t                         out[MAXP * MAXR];
    int32_t                         p;
    uint64_t                        seed;

    (void) state;
    for (seed = 1; seed <= 20; seed++) {
        place_ok(b, 3, 20, 1, seed, out);
        assert_int_equal(count_of(out, 20, 1, 2, false), 0);
        assert_int_equal(count_of(out, 20, 1, 1, true), 10);
        place_ok(b, 3, 20, 2, seed, out);
        assert_int_equal(count_of(out, 20, 2, 2, false), 0);
        place_ok(b, 3, 20, 3, seed, out);
        assert_distinct(b, 3, out, 20, 3);
        for (p = 0; p < 20; p++) {
            assert_int_equal(out[p * 3 + 2], 2);    /* last, never first */
        }
        place_ok(racks, 4, 20, 2, seed, out);
        assert_distinct(racks, 4, out, 20, 2);
        assert_int_equal(count_of(out, 20, 2, 1, true), 0);
    }
}

static void
expect_error(const samsa_placement_broker_t *b, size_t n, int32_t rf,
             const char *msg)
{
    samsa_placement_spec_t  spec = { 0, 3, rf };
    int32_t                 out[MAXR * 3];
    char                    err[256];

    assert_true(rf <= MAXR);
    memset(out, 0x55, sizeof(out));
    assert_int_equal(samsa_placement_check(&spec, b, n, err, sizeof(err)),
                     SAMSA_ERR_INVALID_REPLICATION_FACTOR);
    assert_string_equal(err, msg);
    err[0] = '\0';
    assert_int_equal(place_seeded(b, n, 3, rf, 1, out, err, sizeof(err)),
                     SAMSA_ERR_INVALID_REPLICATION_FACTOR);
    assert_string_equal(err, msg);
    assert_int_equal(out[0], 0x55555555);       /* nothing written */
}

/* Kafka's messages, in the placer's order of checks. */
static void
test_placement_errors(void **state)
{
    const samsa_placement_broker_t  b[3] = {
        { 1, NULL, false }, { 2, NULL, false }, { 3, NULL, false },
    };
    const samsa_placement_broker_t  fenced[2] = {
        { 1, NULL, true }, { 2, "r", true },
    };
    samsa_placement_spec_t          spec = { 0, 1, 3 };
    char                            err[256] = "";

    (void) state;
    expect_error(b, 3, 4, "The target replication factor of 4 cannot be "
                 "reached because only 3 broker(s) are registered.");
    expect_error(b, 3, 0, "Invalid replication factor 0: the replication "
                 "factor must be positive.");
    expect_error(b, 3, -1, "Invalid replication factor -1: the replication "
                 "factor must be positive.");
    expect_error(fenced, 2, 1, "All brokers are currently fenced.");
    expect_error(fenced, 2, 3, "All brokers are currently fenced.");
    expect_error(NULL, 0, 1, "All brokers are currently fenced.");
    /* fenced brokers count as registered for the replication factor */
    expect_error((const samsa_placement_broker_t[]) {
                     { 1, NULL, false }, { 2, NULL, true } }, 2, 3,
                 "The target replication factor of 3 cannot be reached "
                 "because only 2 broker(s) are registered.");
    assert_int_equal(samsa_placement_check(&spec, b, 3, err, sizeof(err)),
                     SAMSA_ERR_NONE);
}

/* The same seed places the same way, whatever the input order; seeds
 * differ in where they start. */
static void
test_placement_seed_deterministic(void **state)
{
    const samsa_placement_broker_t  b[6] = {
        { 1, "a", false }, { 2, "a", false }, { 3, "b", false },
        { 4, "b", false }, { 5, "c", false }, { 6, "c", true },
    };
    const samsa_placement_broker_t  rev[6] = {
        b[5], b[4], b[3], b[2], b[1], b[0],
    };
    int32_t                         x[MAXP * MAXR], y[MAXP * MAXR];
    uint64_t                        seed;
    int                             differ = 0;

    (void) state;
    for (seed = 0; seed < 16; seed++) {
        place_ok(b, 6, 40, 2, seed, x);
        place_ok(rev, 6, 40, 2, seed, y);
        assert_memory_equal(x, y, 80 * sizeof(int32_t));
        place_ok(b, 6, 40, 2, seed + 1000, y);
        differ += memcmp(x, y, 80 * sizeof(int32_t)) != 0;
    }
    assert_true(differ > 8);
}

/* The generator stays within its bound and reaches every value. */
static void
test_placement_rng_bounds(void **state)
{
    samsa_placement_rng_t  rng, again;
    bool                   seen[7] = { false };
    uint32_t               v;
    int                    i;

    (void) state;
    samsa_placement_rng_seed(&rng, 42);
    samsa_placement_rng_seed(&again, 42);
    for (i = 0; i < 1000; i++) {
        v = samsa_placement_rng_next(&rng, 7);
        assert_true(v < 7);
        seen[v] = true;
        assert_int_equal(samsa_placement_rng_next(&again, 7), v);
        assert_int_equal(samsa_placement_rng_next(&rng, 1), 0);
        (void) samsa_placement_rng_next(&again, 1);
    }
    for (i = 0; i < 7; i++) {
        assert_true(seen[i]);
    }
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_placement_kafka_racklist),
        cmocka_unit_test(test_placement_kafka_placer),
        cmocka_unit_test(test_placement_javadoc_example),
        cmocka_unit_test(test_placement_no_racks_striped),
        cmocka_unit_test(test_placement_no_racks_even),
        cmocka_unit_test(test_placement_racks_even),
        cmocka_unit_test(test_placement_racks_mixed),
        cmocka_unit_test(test_placement_fenced),
        cmocka_unit_test(test_placement_errors),
        cmocka_unit_test(test_placement_seed_deterministic),
        cmocka_unit_test(test_placement_rng_bounds),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
