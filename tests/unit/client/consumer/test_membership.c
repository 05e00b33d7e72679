/*
 * tests/unit/client/consumer/test_membership.c - the KIP-848 member state machine
 * driven with constructed heartbeat answers: the member id form, a join
 * sending every field then null fields, an assignment reconciled and
 * acknowledged, a move (revoke + add), unknown topic ids waiting for
 * metadata, fencing (LOST, rejoin with epoch 0 and the same id),
 * coordinator and fatal errors, leaving (-1 dynamic, -2 static).
 */
#include "unit.h"

#include <stdlib.h>

#include "client/consumer/membership.h"
#include "util/alloc.h"

static const uint8_t  RND[16] = { 0xfb, 0xff, 0x00, 1, 2, 3, 4, 5,
                                  6, 7, 8, 9, 10, 11, 12, 13 };
static const char *const  TOPICS[] = { "t0", "t1" };

static samsa_uuid_t
id_of(uint8_t n)
{
    samsa_uuid_t  u;

    memset(&u, 0, sizeof(u));
    u.b[15] = n;
    return u;
}

/* metadata knows t0 (id 1) and t1 (id 2), t2 (id 3) when md3 */
static bool  md3;

static const char *
resolve(void *ctx, samsa_uuid_t id)
{
    (void) ctx;
    switch (id.b[15]) {
    case 1: return "t0";
    case 2: return "t1";
    case 3: return md3 ? "t2" : NULL;
    default: return NULL;
    }
}

static void
hb(samsa_membership_t *sm, int64_t now, samsa_membership_hbreq_t *req)
{
    assert_true(samsa_membership_hb_due(sm, now));
    samsa_membership_hb_build(sm, now, TOPICS, 2, NULL, NULL, "rack1", 300000,
                         NULL, req);
    assert_false(samsa_membership_hb_due(sm, now));      /* one in flight */
}

static samsa_membership_act_t
answer(samsa_membership_t *sm, int64_t now, samsa_err_t err, int32_t epoch,
       const samsa_membership_topic_t *topics, int32_t ntopics, bool has)
{
    samsa_membership_hbresp_t  r;

    memset(&r, 0, sizeof(r));
    r.err = err;
    r.epoch = epoch;
    r.interval_ms = 1000;
    r.has_assignment = has;
    r.topics = topics;
    r.ntopics = ntopics;
    return samsa_membership_hb_result(sm, now, 100, &r);
}

/* Join and get an answer with epoch 1 and no assignment yet. */
static void
joined(samsa_membership_t *sm, bool is_static)
{
    samsa_membership_hbreq_t  req;

    samsa_membership_init(sm, RND, is_static);
    samsa_membership_join(sm);
    hb(sm, 0, &req);
    assert_int_equal(answer(sm, 10, SAMSA_ERR_NONE, 1, NULL, 0, false),
                     SAMSA_MEMBERSHIP_ACT_NONE);
    assert_int_equal(sm->state, SAMSA_MEMBERSHIP_STABLE);
}

static void
reconcile_all(samsa_membership_t *sm, int32_t want_added, int32_t want_revoked)
{
    samsa_membership_tp_t  *added, *revoked;
    int32_t            na, nr;
    bool               need_md;

    assert_true(samsa_membership_reconcile(sm, resolve, NULL, &added, &na,
                                      &revoked, &nr, &need_md));
    assert_int_equal(sm->state, SAMSA_MEMBERSHIP_RECONCILING);
    assert_int_equal(na, want_added);
    assert_int_equal(nr, want_revoked);
    samsa_membership_tps_free(added, na);
    samsa_membership_tps_free(revoked, nr);
    samsa_membership_reconciled(sm);
    assert_int_equal(sm->state, SAMSA_MEMBERSHIP_ACKNOWLEDGING);
}

static void
test_membership_member_id(void **state)
{
    samsa_membership_t  sm;

    (void) state;
    samsa_membership_init(&sm, RND, false);
    /* Kafka's Uuid.toString(): URL-safe base64 of the 16 bytes, no '=' */
    assert_string_equal(sm.member_id, "-_8AAQIDBAUGBwgJCgsMDQ");
    samsa_membership_fini(&sm);
}

static void
test_membership_join_full_then_nulls(void **state)
{
    samsa_membership_t        sm;
    samsa_membership_hbreq_t  req;

    (void) state;
    samsa_membership_init(&sm, RND, false);
    assert_false(samsa_membership_hb_due(&sm, 0));       /* not subscribed */
    samsa_membership_join(&sm);
    hb(&sm, 0, &req);
    assert_int_equal(req.epoch, 0);
    assert_string_equal(req.member_id, sm.member_id);
    assert_false(req.topics_null);
    assert_int_equal(req.ntopics, 2);
    assert_string_equal(req.rack_id, "rack1");
    assert_int_equal(req.rebalance_timeout_ms, 300000);
    assert_false(req.owned_null);                   /* empty list */
    assert_int_equal(req.nowned, 0);
    assert_int_equal(answer(&sm, 10, SAMSA_ERR_NONE, 3, NULL, 0, false),
                     SAMSA_MEMBERSHIP_ACT_NONE);
    assert_int_equal(sm.epoch, 3);
    /* next one at the coordinator's interval, with nothing repeated */
    assert_false(samsa_membership_hb_due(&sm, 500));
    hb(&sm, 1010, &req);
    assert_int_equal(req.epoch, 3);
    assert_true(req.topics_null);
    assert_true(req.owned_null);
    assert_null(req.rack_id);
    assert_int_equal(req.rebalance_timeout_ms, -1);
    /* a failed heartbeat makes the next one carry everything */
    samsa_membership_hb_failed(&sm, 1020, 100);
    assert_false(samsa_membership_hb_due(&sm, 1050));
    hb(&sm, 1120, &req);
    assert_false(req.topics_null);
    assert_false(req.owned_null);
    assert_string_equal(req.rack_id, "rack1");
    samsa_membership_fini(&sm);
}

static void
test_membership_assign_and_ack(void **state)
{
    samsa_membership_t        sm;
    samsa_membership_hbreq_t  req;
    int32_t              p0[] = { 1, 0 }, p1[] = { 2 };
    samsa_membership_topic_t  asg[2];

    (void) state;
    joined(&sm, false);
    asg[0] = (samsa_membership_topic_t) { id_of(1), p0, 2 };
    asg[1] = (samsa_membership_topic_t) { id_of(2), p1, 1 };
    hb(&sm, 1010, &req);
    assert_int_equal(answer(&sm, 1020, SAMSA_ERR_NONE, 2, asg, 2, true),
                     SAMSA_MEMBERSHIP_ACT_RECONCILE);
    reconcile_all(&sm, 3, 0);
    assert_int_equal(sm.nowned, 3);
    /* the acknowledgement goes at once with the owned partitions */
    hb(&sm, 1021, &req);
    assert_int_equal(sm.state, SAMSA_MEMBERSHIP_STABLE);
    assert_false(req.owned_null);
    assert_int_equal(req.nowned, 2);
    assert_memory_equal(req.owned[0].id.b, id_of(1).b, 16);
    assert_int_equal(req.owned[0].nparts, 2);
    assert_int_equal(req.owned[0].parts[0], 0);     /* sorted */
    assert_int_equal(req.owned[0].parts[1], 1);
    assert_int_equal(req.owned[1].parts[0], 2);
    assert_int_equal(answer(&sm, 1030, SAMSA_ERR_NONE, 2, NULL, 0, false),
                     SAMSA_MEMBERSHIP_ACT_NONE);
    /* the same assignment again changes nothing */
    hb(&sm, 2030, &req);
    assert_true(req.owned_null);
    assert_int_equal(answer(&sm, 2040, SAMSA_ERR_NONE, 2, asg, 2, true),
                     SAMSA_MEMBERSHIP_ACT_RECONCILE);
    {
        samsa_membership_tp_t  *a, *r;
        int32_t            na, nr;
        bool               md;

        assert_false(samsa_membership_reconcile(&sm, resolve, NULL, &a, &na, &r,
                                           &nr, &md));
        assert_int_equal(sm.state, SAMSA_MEMBERSHIP_STABLE);
    }
    samsa_membership_fini(&sm);
}

static void
test_membership_move_revokes_first(void **state)
{
    samsa_membership_t        sm;
    samsa_membership_hbreq_t  req;
    samsa_membership_tp_t    *a, *r;
    int32_t              na, nr, p0[] = { 0, 1 }, p0b[] = { 1 }, p1[] = { 0 };
    samsa_membership_topic_t  asg[2];
    bool                 md;

    (void) state;
    joined(&sm, false);
    asg[0] = (samsa_membership_topic_t) { id_of(1), p0, 2 };
    hb(&sm, 1010, &req);
    answer(&sm, 1020, SAMSA_ERR_NONE, 2, asg, 1, true);
    reconcile_all(&sm, 2, 0);
    hb(&sm, 1021, &req);
    answer(&sm, 1030, SAMSA_ERR_NONE, 2, NULL, 0, false);
    /* t0-0 moves away, t1-0 comes */
    asg[0] = (samsa_membership_topic_t) { id_of(1), p0b, 1 };
    asg[1] = (samsa_membership_topic_t) { id_of(2), p1, 1 };
    hb(&sm, 2030, &req);
    answer(&sm, 2040, SAMSA_ERR_NONE, 3, asg, 2, true);
    assert_true(samsa_membership_reconcile(&sm, resolve, NULL, &a, &na, &r, &nr,
                                      &md));
    assert_int_equal(nr, 1);
    assert_string_equal(r[0].topic, "t0");
    assert_int_equal(r[0].partition, 0);
    assert_int_equal(na, 1);
    assert_string_equal(a[0].topic, "t1");
    samsa_membership_tps_free(a, na);
    samsa_membership_tps_free(r, nr);
    /* until the revocation ran, heartbeats still report the old set */
    hb(&sm, 3040, &req);
    assert_true(req.owned_null);
    assert_int_equal(sm.state, SAMSA_MEMBERSHIP_RECONCILING);
    answer(&sm, 3050, SAMSA_ERR_NONE, 3, NULL, 0, false);
    samsa_membership_reconciled(&sm);
    hb(&sm, 3051, &req);
    assert_false(req.owned_null);
    assert_int_equal(req.nowned, 2);
    samsa_membership_fini(&sm);
}

static void
test_membership_unknown_topic_id_waits(void **state)
{
    samsa_membership_t        sm;
    samsa_membership_hbreq_t  req;
    samsa_membership_tp_t    *a, *r;
    int32_t              na, nr, p[] = { 0 };
    samsa_membership_topic_t  asg[2];
    bool                 md;

    (void) state;
    md3 = false;
    joined(&sm, false);
    asg[0] = (samsa_membership_topic_t) { id_of(1), p, 1 };
    asg[1] = (samsa_membership_topic_t) { id_of(3), p, 1 };
    hb(&sm, 1010, &req);
    answer(&sm, 1020, SAMSA_ERR_NONE, 2, asg, 2, true);
    assert_true(samsa_membership_reconcile(&sm, resolve, NULL, &a, &na, &r, &nr,
                                      &md));
    assert_true(md);
    assert_int_equal(na, 1);                        /* t0 only */
    samsa_membership_tps_free(a, na);
    samsa_membership_tps_free(r, nr);
    samsa_membership_reconciled(&sm);
    hb(&sm, 1021, &req);
    answer(&sm, 1030, SAMSA_ERR_NONE, 2, NULL, 0, false);
    md3 = true;                                     /* metadata came */
    assert_true(samsa_membership_reconcile(&sm, resolve, NULL, &a, &na, &r, &nr,
                                      &md));
    assert_false(md);
    assert_int_equal(na, 1);
    assert_string_equal(a[0].topic, "t2");
    assert_int_equal(nr, 0);
    samsa_membership_tps_free(a, na);
    samsa_membership_tps_free(r, nr);
    samsa_membership_reconciled(&sm);
    assert_int_equal(sm.nowned, 2);
    samsa_membership_fini(&sm);
}

static void
test_membership_fenced_loses_and_rejoins(void **state)
{
    samsa_membership_t        sm;
    samsa_membership_hbreq_t  req;
    int32_t              p[] = { 0 };
    samsa_membership_topic_t  asg[1];
    char                 id[SAMSA_MEMBERSHIP_MEMBER_ID_MAX];

    (void) state;
    joined(&sm, false);
    strcpy(id, sm.member_id);
    asg[0] = (samsa_membership_topic_t) { id_of(1), p, 1 };
    hb(&sm, 1010, &req);
    answer(&sm, 1020, SAMSA_ERR_NONE, 2, asg, 1, true);
    reconcile_all(&sm, 1, 0);
    hb(&sm, 1021, &req);
    assert_int_equal(answer(&sm, 1030, SAMSA_ERR_FENCED_MEMBER_EPOCH, 0,
                            NULL, 0, false),
                     SAMSA_MEMBERSHIP_ACT_LOST);
    assert_int_equal(sm.state, SAMSA_MEMBERSHIP_FENCED);
    assert_false(samsa_membership_hb_due(&sm, 5000));    /* until LOST ran */
    assert_int_equal(sm.nowned, 1);                 /* for the callback */
    samsa_membership_lost_done(&sm);
    assert_int_equal(sm.nowned, 0);
    hb(&sm, 1040, &req);
    assert_int_equal(req.epoch, 0);
    assert_string_equal(req.member_id, id);         /* same id */
    assert_false(req.topics_null);
    assert_false(req.owned_null);
    assert_int_equal(req.nowned, 0);
    /* UNKNOWN_MEMBER_ID with nothing owned: straight back to joining */
    assert_int_equal(answer(&sm, 1050, SAMSA_ERR_UNKNOWN_MEMBER_ID, 0, NULL,
                            0, false),
                     SAMSA_MEMBERSHIP_ACT_NONE);
    assert_int_equal(sm.state, SAMSA_MEMBERSHIP_JOINING);
    assert_true(samsa_membership_hb_due(&sm, 1050));
    samsa_membership_fini(&sm);
}

static void
test_membership_errors(void **state)
{
    samsa_membership_t        sm;
    samsa_membership_hbreq_t  req;

    (void) state;
    joined(&sm, false);
    hb(&sm, 1010, &req);
    assert_int_equal(answer(&sm, 1020, SAMSA_ERR_NOT_COORDINATOR, 0, NULL,
                            0, false),
                     SAMSA_MEMBERSHIP_ACT_COORD);
    assert_int_equal(sm.epoch, 1);                  /* still a member */
    hb(&sm, 1020, &req);
    assert_false(req.topics_null);                  /* all sent again */
    assert_int_equal(answer(&sm, 1030,
                            SAMSA_ERR_COORDINATOR_LOAD_IN_PROGRESS, 0, NULL,
                            0, false),
                     SAMSA_MEMBERSHIP_ACT_RETRY);
    assert_false(samsa_membership_hb_due(&sm, 1100));
    hb(&sm, 1130, &req);
    assert_int_equal(answer(&sm, 1140, SAMSA_ERR_UNRELEASED_INSTANCE_ID, 0,
                            NULL, 0, false),
                     SAMSA_MEMBERSHIP_ACT_FATAL);
    assert_int_equal(sm.fatal, SAMSA_ERR_UNRELEASED_INSTANCE_ID);
    assert_false(samsa_membership_hb_due(&sm, 99999));
    samsa_membership_fini(&sm);
    /* an error not named (a classic group of that id) is fatal, as Java */
    joined(&sm, false);
    hb(&sm, 1010, &req);
    assert_int_equal(answer(&sm, 1020, SAMSA_ERR_GROUP_ID_NOT_FOUND, 0, NULL,
                            0, false),
                     SAMSA_MEMBERSHIP_ACT_FATAL);
    assert_int_equal(sm.state, SAMSA_MEMBERSHIP_FATAL);
    samsa_membership_fini(&sm);
}

static void
test_membership_leave(void **state)
{
    samsa_membership_t        sm;
    samsa_membership_hbreq_t  req;

    (void) state;
    joined(&sm, false);
    assert_true(samsa_membership_leave(&sm));
    hb(&sm, 20, &req);
    assert_int_equal(req.epoch, SAMSA_MEMBERSHIP_LEAVE_EPOCH);
    assert_int_equal(answer(&sm, 30, SAMSA_ERR_NONE, -1, NULL, 0, false),
                     SAMSA_MEMBERSHIP_ACT_LEFT);
    assert_int_equal(sm.state, SAMSA_MEMBERSHIP_UNSUBSCRIBED);
    assert_false(samsa_membership_leave(&sm));           /* nothing to leave */
    samsa_membership_fini(&sm);

    joined(&sm, true);
    /* a heartbeat in flight when leave() comes: its answer is not the
       leave's */
    hb(&sm, 1010, &req);
    assert_true(samsa_membership_leave(&sm));
    assert_int_equal(answer(&sm, 1020, SAMSA_ERR_NONE, 1, NULL, 0, false),
                     SAMSA_MEMBERSHIP_ACT_NONE);
    hb(&sm, 1021, &req);
    assert_int_equal(req.epoch, SAMSA_MEMBERSHIP_LEAVE_STATIC_EPOCH);
    assert_int_equal(answer(&sm, 1030, SAMSA_ERR_NONE, -2, NULL, 0, false),
                     SAMSA_MEMBERSHIP_ACT_LEFT);
    samsa_membership_fini(&sm);
}

/* SubscribedTopicRegex: sent on join and when the subscription changes,
 * names not sent with it; switching gives the other one up ("" / []). */
static void
test_membership_regex(void **state)
{
    samsa_membership_t        sm;
    samsa_membership_hbreq_t  req;

    (void) state;
    samsa_membership_init(&sm, RND, false);
    samsa_membership_join(&sm);
    samsa_membership_hb_build(&sm, 0, TOPICS, 2, "t.*", NULL, NULL, 1000, NULL,
                         &req);
    assert_string_equal(req.regex, "t.*");
    assert_true(req.topics_null);
    answer(&sm, 10, SAMSA_ERR_NONE, 1, NULL, 0, false);
    samsa_membership_hb_build(&sm, 1010, TOPICS, 2, "t.*", NULL, NULL, 1000,
                         NULL, &req);
    assert_null(req.regex);                         /* unchanged */
    assert_true(req.topics_null);
    answer(&sm, 1020, SAMSA_ERR_NONE, 1, NULL, 0, false);
    /* subscribe() to names: the regex is given up */
    samsa_membership_sub_changed(&sm);
    samsa_membership_hb_build(&sm, 1030, TOPICS, 2, NULL, NULL, NULL, 1000, NULL,
                         &req);
    assert_string_equal(req.regex, "");
    assert_false(req.topics_null);
    assert_int_equal(req.ntopics, 2);
    answer(&sm, 1040, SAMSA_ERR_NONE, 1, NULL, 0, false);
    /* and back to a pattern: the names are given up */
    samsa_membership_sub_changed(&sm);
    samsa_membership_hb_build(&sm, 1050, TOPICS, 2, "u.*", NULL, NULL, 1000,
                         NULL, &req);
    assert_string_equal(req.regex, "u.*");
    assert_false(req.topics_null);
    assert_int_equal(req.ntopics, 0);
    samsa_membership_fini(&sm);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_membership_member_id),
        cmocka_unit_test(test_membership_join_full_then_nulls),
        cmocka_unit_test(test_membership_assign_and_ack),
        cmocka_unit_test(test_membership_move_revokes_first),
        cmocka_unit_test(test_membership_unknown_topic_id_waits),
        cmocka_unit_test(test_membership_fenced_loses_and_rejoins),
        cmocka_unit_test(test_membership_errors),
        cmocka_unit_test(test_membership_leave),
        cmocka_unit_test(test_membership_regex),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
