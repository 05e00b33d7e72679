/* Unit tests for the consumer group assignors (broker/group/consumer_group_assign.c):
 * uniform is balanced, sticky and deterministic (member order does not
 * matter), with heterogeneous subscriptions too; range gives contiguous
 * ranges by member id, the extra partitions to the first members. */
#include "unit.h"

#include <stdlib.h>
#include <string.h>

#include "broker/group/consumer_group_assign.h"
#include "util/alloc.h"

static bool
has(const samsa_cga_member_t *m, int32_t topic, int32_t partition)
{
    size_t  i;

    for (i = 0; i < m->nout; i++) {
        if (m->out[i].topic == topic && m->out[i].partition == partition) {
            return true;
        }
    }
    return false;
}

/* Every partition of every topic someone subscribes to is assigned to
 * exactly one subscribed member. */
static void
check_complete(const samsa_cga_topic_t *topics, size_t ntopics,
               const samsa_cga_member_t *ms, size_t n)
{
    size_t   t, i, j, owners;
    int32_t  p;
    bool     subscribed;

    for (t = 0; t < ntopics; t++) {
        for (p = 0; p < topics[t].npartitions; p++) {
            owners = 0;
            subscribed = false;
            for (i = 0; i < n; i++) {
                bool  sub = false;

                for (j = 0; j < ms[i].ntopics; j++) {
                    sub |= ms[i].topics[j] == (int32_t) t;
                }
                subscribed |= sub;
                if (has(&ms[i], (int32_t) t, p)) {
                    assert_true(sub);
                    owners++;
                }
            }
            assert_int_equal(owners, subscribed ? 1 : 0);
        }
    }
}

static void
free_out(samsa_cga_member_t *ms, size_t n)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        samsa_free(ms[i].out);
        ms[i].out = NULL;
        ms[i].nout = 0;
    }
}

static void
test_uniform_balanced_and_sticky(void **state)
{
    samsa_cga_topic_t   topics[2] = { { "a", 7 }, { "b", 5 } };
    int32_t             both[2] = { 0, 1 };
    samsa_cga_member_t  ms[3];
    samsa_cga_tp_t      prev0[12];
    size_t              i, j, total = 0;

    (void) state;
    memset(ms, 0, sizeof(ms));
    ms[0] = (samsa_cga_member_t) { "m1", both, 2, NULL, 0, NULL, 0 };
    /* one member alone gets everything */
    assert_int_equal(samsa_cga_assign("uniform", topics, 2, ms, 1),
                     SAMSA_ERR_NONE);
    assert_int_equal(ms[0].nout, 12);
    memcpy(prev0, ms[0].out, sizeof(prev0));
    free_out(ms, 1);
    /* two more join: 12 over 3 is 4 each; m1 keeps 4 of its own */
    ms[0].prev = prev0;
    ms[0].nprev = 12;
    ms[1] = (samsa_cga_member_t) { "m2", both, 2, NULL, 0, NULL, 0 };
    ms[2] = (samsa_cga_member_t) { "m3", both, 2, NULL, 0, NULL, 0 };
    assert_int_equal(samsa_cga_assign("uniform", topics, 2, ms, 3),
                     SAMSA_ERR_NONE);
    check_complete(topics, 2, ms, 3);
    for (i = 0; i < 3; i++) {
        assert_int_equal(ms[i].nout, 4);
        total += ms[i].nout;
    }
    assert_int_equal(total, 12);
    for (j = 0; j < ms[0].nout; j++) {
        bool  was = false;

        for (i = 0; i < 12; i++) {
            was |= prev0[i].topic == ms[0].out[j].topic
                   && prev0[i].partition == ms[0].out[j].partition;
        }
        assert_true(was);               /* sticky: nothing new for m1 */
    }
    free_out(ms, 3);
}

/* The same members in another order give the same assignment. */
static void
test_uniform_deterministic(void **state)
{
    samsa_cga_topic_t   topics[1] = { { "t", 10 } };
    int32_t             t0[1] = { 0 };
    samsa_cga_member_t  x[3], y[3];
    const char         *ids[3] = { "c", "a", "b" };
    size_t              i, k;

    (void) state;
    for (i = 0; i < 3; i++) {
        x[i] = (samsa_cga_member_t) { ids[i], t0, 1, NULL, 0, NULL, 0 };
        y[2 - i] = x[i];
    }
    assert_int_equal(samsa_cga_assign("uniform", topics, 1, x, 3),
                     SAMSA_ERR_NONE);
    assert_int_equal(samsa_cga_assign("uniform", topics, 1, y, 3),
                     SAMSA_ERR_NONE);
    for (i = 0; i < 3; i++) {
        samsa_cga_member_t  *a = &x[i], *b = &y[2 - i];

        assert_string_equal(a->member_id, b->member_id);
        assert_int_equal(a->nout, b->nout);
        assert_true(a->nout == 3 || a->nout == 4);
        for (k = 0; k < a->nout; k++) {
            assert_int_equal(a->out[k].partition, b->out[k].partition);
        }
    }
    free_out(x, 3);
    free_out(y, 3);
}

/* m1 subscribes to a and b, m2 only to b: m2 gets only b's partitions,
 * and the counts come as close as the subscriptions allow. */
static void
test_uniform_heterogeneous(void **state)
{
    samsa_cga_topic_t   topics[2] = { { "a", 2 }, { "b", 4 } };
    int32_t             both[2] = { 0, 1 }, onlyb[1] = { 1 };
    samsa_cga_member_t  ms[2] = {
        { "m1", both, 2, NULL, 0, NULL, 0 },
        { "m2", onlyb, 1, NULL, 0, NULL, 0 },
    };

    (void) state;
    assert_int_equal(samsa_cga_assign("uniform", topics, 2, ms, 2),
                     SAMSA_ERR_NONE);
    check_complete(topics, 2, ms, 2);
    assert_int_equal(ms[0].nout, 3);
    assert_int_equal(ms[1].nout, 3);
    assert_true(has(&ms[0], 0, 0) && has(&ms[0], 0, 1));
    free_out(ms, 2);
}

static void
test_range(void **state)
{
    samsa_cga_topic_t   topics[2] = { { "a", 5 }, { "b", 2 } };
    int32_t             both[2] = { 0, 1 }, onlya[1] = { 0 };
    samsa_cga_member_t  ms[3] = {
        { "z", both, 2, NULL, 0, NULL, 0 },
        { "x", onlya, 1, NULL, 0, NULL, 0 },
        { "y", both, 2, NULL, 0, NULL, 0 },
    };

    (void) state;
    assert_int_equal(samsa_cga_assign("range", topics, 2, ms, 3),
                     SAMSA_ERR_NONE);
    check_complete(topics, 2, ms, 3);
    /* a: x 0-1, y 2-3, z 4; b: y 0, z 1 */
    assert_true(has(&ms[1], 0, 0) && has(&ms[1], 0, 1));
    assert_int_equal(ms[1].nout, 2);
    assert_true(has(&ms[2], 0, 2) && has(&ms[2], 0, 3) && has(&ms[2], 1, 0));
    assert_int_equal(ms[2].nout, 3);
    assert_true(has(&ms[0], 0, 4) && has(&ms[0], 1, 1));
    assert_int_equal(ms[0].nout, 2);
    free_out(ms, 3);
}

static void
test_unknown_assignor(void **state)
{
    samsa_cga_topic_t   topics[1] = { { "a", 1 } };

    (void) state;
    assert_int_equal(samsa_cga_assign("sticky", topics, 1, NULL, 0),
                     SAMSA_ERR_INVALID_REQUEST);
    assert_true(samsa_cga_known("uniform", 7));
    assert_true(samsa_cga_known("range", 5));
    assert_false(samsa_cga_known("rang", 4));
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_uniform_balanced_and_sticky),
        cmocka_unit_test(test_uniform_deterministic),
        cmocka_unit_test(test_uniform_heterogeneous),
        cmocka_unit_test(test_range),
        cmocka_unit_test(test_unknown_assignor),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
