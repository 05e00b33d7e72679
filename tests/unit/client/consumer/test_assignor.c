/*
 * tests/unit/client/consumer/test_assignor.c - the group leader's assignors on
 * fixed inputs: range (Java's RangeAssignorTest shapes), roundrobin,
 * member order (static members first, by group.instance.id), and
 * cooperative-sticky: balance, stickiness (owned partitions stay), the
 * KIP-429 rule that a partition moving to another member is left out of
 * this round, and conflicting claims resolved by generation.
 */
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>

#include "client/consumer/assignor.h"
#include "util/alloc.h"

typedef struct fx_member {
    const char  *id;
    const char  *instance;
    const char  *topics[4];
    const char  *owned_topic;
    int32_t      owned[8];
    int32_t      nowned;
    int32_t      generation;
} fx_member_t;

/* Run name over members/topics; render each member's assignment as
 * "t0:0,1;t1:2" into out[i]. */
static void
fx_assign(const char *name, const fx_member_t *fm, int32_t nm,
          const samsa_asg_topic_t *topics, int32_t nt, char out[][128])
{
    samsa_cproto_sub_t    subs[8];
    samsa_cproto_topic_t  owned[8];
    samsa_asg_member_t    m[8];
    samsa_cproto_asg_t    res[8];
    int32_t               i, j, k;

    memset(subs, 0, sizeof(subs));
    memset(owned, 0, sizeof(owned));
    for (i = 0; i < nm; i++) {
        subs[i].topics = (char **) fm[i].topics;
        while (fm[i].topics[subs[i].ntopics] != NULL) {
            subs[i].ntopics++;
        }
        subs[i].generation = fm[i].generation;
        if (fm[i].owned_topic != NULL) {
            owned[i].topic = (char *) fm[i].owned_topic;
            owned[i].parts = (int32_t *) fm[i].owned;
            owned[i].nparts = fm[i].nowned;
            subs[i].owned = &owned[i];
            subs[i].nowned = 1;
        }
        m[i].member_id = fm[i].id;
        m[i].instance_id = fm[i].instance;
        m[i].sub = &subs[i];
    }
    assert_int_equal(samsa_assignor_assign(name, m, nm, topics, nt, res),
                     SAMSA_ERR_NONE);
    for (i = 0; i < nm; i++) {
        size_t  len = 0;

        out[i][0] = '\0';
        for (j = 0; j < res[i].ntopics; j++) {
            len += (size_t) snprintf(out[i] + len, 128 - len, "%s%s:",
                                     j ? ";" : "", res[i].topics[j].topic);
            for (k = 0; k < res[i].topics[j].nparts; k++) {
                len += (size_t) snprintf(out[i] + len, 128 - len, "%s%d",
                                         k ? "," : "",
                                         res[i].topics[j].parts[k]);
            }
        }
        samsa_cproto_asg_fini(&res[i]);
    }
}

static void
test_assignor_range(void **state)
{
    const samsa_asg_topic_t  topics[] = { { "t1", 3 }, { "t0", 3 } };
    const fx_member_t        fm[] = {
        { "c1", NULL, { "t0", "t1", NULL }, NULL, { 0 }, 0, -1 },
        { "c0", NULL, { "t0", "t1", NULL }, NULL, { 0 }, 0, -1 },
    };
    char                     out[2][128];

    (void) state;
    fx_assign("range", fm, 2, topics, 2, out);
    /* RangeAssignorTest.testTwoConsumersTwoTopicsSixPartitions */
    assert_string_equal(out[1], "t0:0,1;t1:0,1");
    assert_string_equal(out[0], "t0:2;t1:2");
}

static void
test_assignor_range_uneven_subscriptions(void **state)
{
    const samsa_asg_topic_t  topics[] = { { "t0", 3 }, { "t1", 2 } };
    const fx_member_t        fm[] = {
        { "a", NULL, { "t0", NULL }, NULL, { 0 }, 0, -1 },
        { "b", NULL, { "t0", "t1", NULL }, NULL, { 0 }, 0, -1 },
        { "c", NULL, { "nosuch", NULL }, NULL, { 0 }, 0, -1 },
    };
    char                     out[3][128];

    (void) state;
    fx_assign("range", fm, 3, topics, 2, out);
    assert_string_equal(out[0], "t0:0,1");
    assert_string_equal(out[1], "t0:2;t1:0,1");
    assert_string_equal(out[2], "");
}

static void
test_assignor_static_members_first(void **state)
{
    const samsa_asg_topic_t  topics[] = { { "t", 2 } };
    const fx_member_t        fm[] = {
        { "a-dynamic", NULL, { "t", NULL }, NULL, { 0 }, 0, -1 },
        { "z-member", "inst-1", { "t", NULL }, NULL, { 0 }, 0, -1 },
    };
    char                     out[2][128];

    (void) state;
    fx_assign("range", fm, 2, topics, 1, out);
    assert_string_equal(out[1], "t:0");      /* static sorts first */
    assert_string_equal(out[0], "t:1");
}

static void
test_assignor_roundrobin(void **state)
{
    const samsa_asg_topic_t  topics[] = { { "t0", 3 }, { "t1", 3 } };
    const fx_member_t        fm[] = {
        { "c0", NULL, { "t0", "t1", NULL }, NULL, { 0 }, 0, -1 },
        { "c1", NULL, { "t0", "t1", NULL }, NULL, { 0 }, 0, -1 },
    };
    const fx_member_t        fm2[] = {
        { "c0", NULL, { "t0", NULL }, NULL, { 0 }, 0, -1 },
        { "c1", NULL, { "t0", "t1", NULL }, NULL, { 0 }, 0, -1 },
    };
    char                     out[2][128];

    (void) state;
    fx_assign("roundrobin", fm, 2, topics, 2, out);
    /* RoundRobinAssignorTest.testTwoConsumersTwoTopicsSixPartitions */
    assert_string_equal(out[0], "t0:0,2;t1:1");
    assert_string_equal(out[1], "t0:1;t1:0,2");
    fx_assign("roundrobin", fm2, 2, topics, 2, out);
    assert_string_equal(out[0], "t0:0,2");
    assert_string_equal(out[1], "t0:1;t1:0,1,2");
}

static void
test_assignor_sticky_fresh_balanced(void **state)
{
    const samsa_asg_topic_t  topics[] = { { "t", 7 } };
    const fx_member_t        fm[] = {
        { "a", NULL, { "t", NULL }, NULL, { 0 }, 0, -1 },
        { "b", NULL, { "t", NULL }, NULL, { 0 }, 0, -1 },
        { "c", NULL, { "t", NULL }, NULL, { 0 }, 0, -1 },
    };
    char                     out[3][128];

    (void) state;
    fx_assign("cooperative-sticky", fm, 3, topics, 1, out);
    assert_string_equal(out[0], "t:0,3,6");
    assert_string_equal(out[1], "t:1,4");
    assert_string_equal(out[2], "t:2,5");
}

/* A third member joins a and b (3 each of 6): a and b keep two each, the
 * partitions that move to c are left out of this round (KIP-429), and
 * nothing a member keeps is moved. */
static void
test_assignor_sticky_join_cooperative(void **state)
{
    const samsa_asg_topic_t  topics[] = { { "t", 6 } };
    const fx_member_t        fm[] = {
        { "a", NULL, { "t", NULL }, "t", { 0, 2, 4 }, 3, 1 },
        { "b", NULL, { "t", NULL }, "t", { 1, 3, 5 }, 3, 1 },
        { "c", NULL, { "t", NULL }, NULL, { 0 }, 0, -1 },
    };
    char                     out[3][128];

    (void) state;
    fx_assign("cooperative-sticky", fm, 3, topics, 1, out);
    assert_string_equal(out[0], "t:0,2");
    assert_string_equal(out[1], "t:1,3");
    assert_string_equal(out[2], "");         /* 4 and 5 next round */
}

/* The follow-up round: a and b no longer own 4 and 5: c gets them. */
static void
test_assignor_sticky_second_round(void **state)
{
    const samsa_asg_topic_t  topics[] = { { "t", 6 } };
    const fx_member_t        fm[] = {
        { "a", NULL, { "t", NULL }, "t", { 0, 2 }, 2, 2 },
        { "b", NULL, { "t", NULL }, "t", { 1, 3 }, 2, 2 },
        { "c", NULL, { "t", NULL }, NULL, { 0 }, 0, -1 },
    };
    char                     out[3][128];

    (void) state;
    fx_assign("cooperative-sticky", fm, 3, topics, 1, out);
    assert_string_equal(out[0], "t:0,2");
    assert_string_equal(out[1], "t:1,3");
    assert_string_equal(out[2], "t:4,5");
}

/* Two claims on partition 1: the higher generation keeps it; a member
 * that left frees its partitions for the others (sticky for the rest). */
static void
test_assignor_sticky_conflict_and_leave(void **state)
{
    const samsa_asg_topic_t  topics[] = { { "t", 4 } };
    const fx_member_t        fm[] = {
        { "a", NULL, { "t", NULL }, "t", { 0, 1 }, 2, 3 },
        { "b", NULL, { "t", NULL }, "t", { 1, 2 }, 2, 2 },
    };
    char                     out[2][128];

    (void) state;
    fx_assign("cooperative-sticky", fm, 2, topics, 1, out);
    assert_string_equal(out[0], "t:0,1");
    assert_string_equal(out[1], "t:2,3");
}

static void
test_assignor_unknown(void **state)
{
    samsa_cproto_asg_t  out[1];

    (void) state;
    assert_int_equal(samsa_assignor_assign("sticky", NULL, 0, NULL, 0, out),
                     SAMSA_ERR__INVALID_ARG);
    assert_true(samsa_assignor_cooperative("cooperative-sticky"));
    assert_false(samsa_assignor_cooperative("range"));
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_assignor_range),
        cmocka_unit_test(test_assignor_range_uneven_subscriptions),
        cmocka_unit_test(test_assignor_static_members_first),
        cmocka_unit_test(test_assignor_roundrobin),
        cmocka_unit_test(test_assignor_sticky_fresh_balanced),
        cmocka_unit_test(test_assignor_sticky_join_cooperative),
        cmocka_unit_test(test_assignor_sticky_second_round),
        cmocka_unit_test(test_assignor_sticky_conflict_and_leave),
        cmocka_unit_test(test_assignor_unknown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
