/* Unit tests for broker/isrstate.c: Kafka's caught-up rule (at the LEO
 * now, or at the leader's LEO of the previous fetch), the high watermark
 * as the smallest LEO over the ISR (never backwards, never past the
 * leader's LEO, held by members not heard from), the ISR shrink after
 * replica.lag.time.max.ms and the expansion check, and the acks=all /
 * min.insync.replicas answers. */
#include "unit.h"

#include "broker/isrstate.h"

#define LAG_MS  30000

static void
test_isrstate_caught_up_rule(void **state)
{
    samsa_isrstate_follower_t  f;

    (void) state;
    samsa_isrstate_follower_init(&f, 2);
    assert_false(samsa_isrstate_caught_up(&f, 0, 0, LAG_MS));
    /* at the leader's LEO: caught up now */
    samsa_isrstate_follower_fetch(&f, 10, 10, 1000);
    assert_int_equal(f.last_caught_up_ms, 1000);
    assert_int_equal(f.log_end_offset, 10);
    /* leader moved to 20; the follower fetches 15 >= 10 (the leader's LEO
     * at the previous fetch): caught up as of that previous fetch */
    samsa_isrstate_follower_fetch(&f, 15, 20, 2000);
    assert_int_equal(f.last_caught_up_ms, 1000);
    samsa_isrstate_follower_fetch(&f, 20, 30, 3000);
    assert_int_equal(f.last_caught_up_ms, 2000);
    /* behind the previous fetch's leader LEO (30): no progress */
    samsa_isrstate_follower_fetch(&f, 25, 40, 4000);
    assert_int_equal(f.last_caught_up_ms, 2000);
    assert_true(samsa_isrstate_caught_up(&f, 40, 2000 + LAG_MS, LAG_MS));
    assert_false(samsa_isrstate_caught_up(&f, 40, 2001 + LAG_MS, LAG_MS));
    /* at the LEO is caught up however long ago the last time was */
    assert_true(samsa_isrstate_caught_up(&f, 25, 999999, LAG_MS));
    /* never goes back in time */
    samsa_isrstate_follower_fetch(&f, 40, 40, 500);
    assert_int_equal(f.last_caught_up_ms, 2000);
}

static void
test_isrstate_high_watermark(void **state)
{
    samsa_isrstate_follower_t  fs[2];
    const int32_t              isr3[3] = { 1, 2, 3 };
    const int32_t              isr2[2] = { 1, 3 };

    (void) state;
    samsa_isrstate_follower_init(&fs[0], 2);
    samsa_isrstate_follower_init(&fs[1], 3);
    /* followers not heard from hold it at the old HW */
    assert_int_equal(samsa_isrstate_high_watermark(5, 50, 1, fs, 2, isr3, 3),
                     5);
    samsa_isrstate_follower_fetch(&fs[0], 30, 50, 0);
    samsa_isrstate_follower_fetch(&fs[1], 40, 50, 0);
    assert_int_equal(samsa_isrstate_high_watermark(5, 50, 1, fs, 2, isr3, 3),
                     30);
    /* 2 out of the ISR: only 3 counts */
    assert_int_equal(samsa_isrstate_high_watermark(30, 50, 1, fs, 2, isr2, 2),
                     40);
    /* never backwards */
    assert_int_equal(samsa_isrstate_high_watermark(45, 50, 1, fs, 2, isr3, 3),
                     45);
    /* never past the leader's LEO (a follower ahead after truncation) */
    samsa_isrstate_follower_fetch(&fs[0], 60, 50, 0);
    samsa_isrstate_follower_fetch(&fs[1], 60, 50, 0);
    assert_int_equal(samsa_isrstate_high_watermark(0, 50, 1, fs, 2, isr3, 3),
                     50);
    /* the leader alone */
    assert_int_equal(samsa_isrstate_high_watermark(0, 7, 1, NULL, 0, isr3, 1),
                     7);
    /* an ISR member with no state holds it */
    assert_int_equal(samsa_isrstate_high_watermark(3, 50, 1, fs, 1, isr3, 3),
                     3);
}

static void
test_isrstate_shrink_and_expand(void **state)
{
    samsa_isrstate_follower_t  fs[2];
    const int32_t              isr[3] = { 1, 2, 3 };
    int32_t                    out[3];
    size_t                     n;

    (void) state;
    samsa_isrstate_follower_init(&fs[0], 2);
    samsa_isrstate_follower_init(&fs[1], 3);
    /* a new leader: both caught up as of the takeover at 1000 */
    fs[0].last_caught_up_ms = fs[1].last_caught_up_ms = 1000;
    assert_int_equal(samsa_isrstate_shrink(isr, 3, 1, fs, 2, 10,
                                           1000 + LAG_MS, LAG_MS, out), 3);
    /* 2 keeps fetching at the LEO, 3 stops */
    samsa_isrstate_follower_fetch(&fs[0], 10, 10, 20000);
    n = samsa_isrstate_shrink(isr, 3, 1, fs, 2, 10, 1001 + LAG_MS, LAG_MS,
                              out);
    assert_int_equal(n, 2);
    assert_int_equal(out[0], 1);
    assert_int_equal(out[1], 2);
    /* the leader never leaves, even with no follower in sync */
    n = samsa_isrstate_shrink(isr, 3, 1, fs, 2, 99, 20001 + LAG_MS, LAG_MS,
                              out);
    assert_int_equal(n, 1);
    assert_int_equal(out[0], 1);
    /* 3 comes back: joins once at the HW and the epoch's start offset */
    samsa_isrstate_follower_fetch(&fs[1], 8, 10, 60000);
    assert_false(samsa_isrstate_can_join(&fs[1], 10, 0));
    samsa_isrstate_follower_fetch(&fs[1], 10, 12, 60100);
    assert_true(samsa_isrstate_can_join(&fs[1], 10, 0));
    assert_false(samsa_isrstate_can_join(&fs[1], 10, 11));
    samsa_isrstate_follower_init(&fs[1], 3);
    assert_false(samsa_isrstate_can_join(&fs[1], 0, 0));
}

/* KIP-497: an expansion in flight counts its new member at once, a
 * shrink's leaving member until it commits. */
static void
test_isrstate_maximal(void **state)
{
    int32_t  isr[2] = { 1, 2 }, grow[3] = { 1, 2, 3 }, shrink[1] = { 1 };
    int32_t  out[5];

    (void) state;
    assert_int_equal(samsa_isrstate_maximal(isr, 2, grow, 3, out), 3);
    assert_int_equal(out[0], 1);
    assert_int_equal(out[1], 2);
    assert_int_equal(out[2], 3);
    assert_int_equal(samsa_isrstate_maximal(isr, 2, shrink, 1, out), 2);
    assert_int_equal(out[0], 1);
    assert_int_equal(out[1], 2);
    assert_int_equal(samsa_isrstate_maximal(isr, 2, NULL, 0, out), 2);
}

static void
test_isrstate_acks(void **state)
{
    samsa_err_t  err;

    (void) state;
    assert_int_equal(samsa_isrstate_check_min_isr(1, 2),
                     SAMSA_ERR_NOT_ENOUGH_REPLICAS);
    assert_int_equal(samsa_isrstate_check_min_isr(2, 2), SAMSA_ERR_NONE);
    assert_int_equal(samsa_isrstate_check_min_isr(3, 2), SAMSA_ERR_NONE);
    /* waiting until the HW covers the batch */
    assert_false(samsa_isrstate_acks_done(9, 10, 3, 2, &err));
    assert_true(samsa_isrstate_acks_done(10, 10, 3, 2, &err));
    assert_int_equal(err, SAMSA_ERR_NONE);
    /* the ISR shrank below min.insync.replicas while it waited */
    assert_true(samsa_isrstate_acks_done(12, 10, 1, 2, &err));
    assert_int_equal(err, SAMSA_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND);
}

/* A delayed acks=all answer after the leadership moved (the chaos suite's
 * kill scenario, docs/REPLICATION.md): a former leader, now a follower
 * whose HW (the new leader's) passed the batch's offset, must not answer
 * success: the batch may have been truncated away and the offset reused. */
static void
test_isrstate_acks_answer_after_leadership_moved(void **state)
{
    samsa_err_t  err;

    (void) state;
    /* still the leader of the epoch it appended in: the HW decides */
    assert_false(samsa_isrstate_acks_answer(true, 4, 4, 9, 10, 3, 2, &err));
    assert_true(samsa_isrstate_acks_answer(true, 4, 4, 10, 10, 3, 2, &err));
    assert_int_equal(err, SAMSA_ERR_NONE);
    assert_true(samsa_isrstate_acks_answer(true, 4, 4, 10, 10, 1, 2, &err));
    assert_int_equal(err, SAMSA_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND);
    /* a follower now, its HW past the batch: not acknowledged */
    assert_true(samsa_isrstate_acks_answer(false, -1, 4, 1000, 10, 3, 2, &err));
    assert_int_equal(err, SAMSA_ERR_NOT_LEADER_OR_FOLLOWER);
    /* a follower now, HW below: answered at once, not left to time out */
    assert_true(samsa_isrstate_acks_answer(false, -1, 4, 5, 10, 3, 2, &err));
    assert_int_equal(err, SAMSA_ERR_NOT_LEADER_OR_FOLLOWER);
    /* leader again, but of a later epoch (a follower in between, which
     * may have truncated): not acknowledged either */
    assert_true(samsa_isrstate_acks_answer(true, 6, 4, 1000, 10, 3, 2, &err));
    assert_int_equal(err, SAMSA_ERR_NOT_LEADER_OR_FOLLOWER);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_isrstate_caught_up_rule),
        cmocka_unit_test(test_isrstate_high_watermark),
        cmocka_unit_test(test_isrstate_shrink_and_expand),
        cmocka_unit_test(test_isrstate_maximal),
        cmocka_unit_test(test_isrstate_acks),
        cmocka_unit_test(test_isrstate_acks_answer_after_leadership_moved),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
