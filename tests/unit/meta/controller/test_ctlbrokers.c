/* Unit tests for meta/controller/ctlbrokers.c's partition leadership: a
 * batch (ctlbatch.h) on an image with two registered, unfenced brokers
 * and a topic of three partitions (p0 on broker 1, p1 on broker 2, p2 on
 * both, led by 1), no metadata log.  Fencing broker 1 leaves p0
 * leader-less with its ISR kept (the last member) and moves p2 to broker
 * 2 with broker 1 dropped from its ISR, epochs bumped by the replay;
 * unfencing it elects it again for p0 only; a WantShutDown heartbeat of
 * an unfenced leader enters controlled shutdown (leadership moved, no
 * ShouldShutDown yet), the next one, leading nothing, answers
 * ShouldShutDown and fences it; a fenced broker may shut down at once.
 * unclean.leader.election.enable (topic override): p2 with no active ISR
 * member elects its active replica outside the ISR, on the fence of its
 * leader and on the unfence of that replica, ISR = [it]; off, it stays
 * leader-less.  A re-registration (a new incarnation) ends the broker's
 * leaderships and ISR memberships in its own batch, as a fence. */
#include "unit.h"

#include <stdlib.h>
#include <string.h>

#include "meta/controller/controller_int.h"

#include "ctl_fixture.h"

static void
test_ctlbrokers_fence_unfence(void **state)
{
    samsa_image_t                  *img = sample_image(), *next;
    samsa_ctlbatch_t                b;
    const samsa_image_partition_t  *p;

    (void) state;
    samsa_ctlbatch_init(&b, img, 7, NODE, NULL);
    samsa_ctlbrokers_fence(&b, 1, 1, 1);
    assert_int_equal(b.n, 3);           /* the fence, p0, p2 */
    p = part(&b, 0);
    assert_int_equal(p->leader, -1);
    assert_int_equal(p->leader_epoch, 1);
    assert_int_equal(p->partition_epoch, 1);
    assert_int_equal(p->nisr, 1);       /* the last member stays */
    assert_int_equal(p->isr[0], 1);
    p = part(&b, 1);
    assert_int_equal(p->leader, 2);
    assert_int_equal(p->leader_epoch, 0);
    assert_int_equal(p->partition_epoch, 0);
    p = part(&b, 2);
    assert_int_equal(p->leader, 2);
    assert_int_equal(p->leader_epoch, 1);
    assert_int_equal(p->nisr, 1);
    assert_int_equal(p->isr[0], 2);
    next = commit(&b);
    samsa_image_put(img);
    img = next;

    samsa_ctlbatch_init(&b, img, 10, NODE, NULL);
    samsa_ctlbrokers_fence(&b, 1, 1, -1);
    assert_int_equal(b.n, 2);           /* the unfence, p0 */
    p = part(&b, 0);
    assert_int_equal(p->leader, 1);
    assert_int_equal(p->leader_epoch, 2);
    assert_int_equal(p->partition_epoch, 2);
    p = part(&b, 2);                    /* not in p2's ISR any more */
    assert_int_equal(p->leader, 2);
    assert_int_equal(p->leader_epoch, 1);
    samsa_ctlbatch_fini(&b);
    samsa_image_put(img);
}

static void
test_ctlbrokers_controlled_shutdown(void **state)
{
    samsa_image_t                        *img = sample_image(), *next;
    samsa_ctlbatch_t                      b;
    samsa_controller_heartbeat_t          hb = { .broker_id = 1,
                                                 .broker_epoch = 1,
                                                 .current_offset = 6,
                                                 .want_shutdown = true };
    samsa_controller_heartbeat_result_t   res;
    const samsa_image_broker_t           *br;

    (void) state;
    samsa_ctlbatch_init(&b, img, 7, NODE, NULL);
    samsa_ctlbrokers_heartbeat(&b, &hb, &res);
    assert_int_equal(res.error, SAMSA_ERR_NONE);
    assert_false(res.should_shutdown);
    assert_false(res.fenced);
    assert_int_equal(b.n, 3);           /* the change, p0, p2 */
    br = samsa_image_delta_broker_find(b.delta, 1);
    assert_true(br->in_controlled_shutdown);
    assert_false(br->fenced);
    assert_int_equal(part(&b, 0)->leader, -1);
    assert_int_equal(part(&b, 2)->leader, 2);
    next = commit(&b);
    samsa_image_put(img);
    img = next;

    /* leads nothing now: may shut down, and is fenced */
    samsa_ctlbatch_init(&b, img, 10, NODE, NULL);
    samsa_ctlbrokers_heartbeat(&b, &hb, &res);
    assert_int_equal(res.error, SAMSA_ERR_NONE);
    assert_true(res.should_shutdown);
    assert_true(res.fenced);
    assert_int_equal(b.n, 1);
    assert_true(samsa_image_delta_broker_find(b.delta, 1)->fenced);
    next = commit(&b);
    samsa_image_put(img);
    img = next;

    /* fenced: at once, no records; no unfence while shutting down */
    samsa_ctlbatch_init(&b, img, 11, NODE, NULL);
    samsa_ctlbrokers_heartbeat(&b, &hb, &res);
    assert_true(res.should_shutdown);
    assert_int_equal(b.n, 0);
    hb.want_shutdown = false;
    samsa_ctlbrokers_heartbeat(&b, &hb, &res);
    assert_false(res.should_shutdown);
    assert_true(res.fenced);
    assert_int_equal(b.n, 0);
    samsa_ctlbatch_fini(&b);
    samsa_image_put(img);
}

/* One batch at offset that fences (1) or unfences (-1) broker id, as
 * the next image (img put). */
static samsa_image_t *
fence_step(samsa_image_t *img, int64_t offset, int32_t id, int8_t fenced,
           int32_t want_p2_leader, int32_t want_p2_isr0)
{
    samsa_ctlbatch_t                b;
    samsa_image_t                  *next;
    const samsa_image_partition_t  *p;

    samsa_ctlbatch_init(&b, img, offset, NODE, NULL);
    samsa_ctlbrokers_fence(&b, id, id, fenced);
    p = part(&b, 2);
    assert_int_equal(p->leader, want_p2_leader);
    assert_int_equal(p->nisr, 1);
    assert_int_equal(p->isr[0], want_p2_isr0);
    next = commit(&b);
    samsa_image_put(img);
    return next;
}

static void
test_ctlbrokers_unclean_election(void **state)
{
    samsa_image_t  *img;

    (void) state;
    /* off: 2 fenced leaves p2's ISR; 1 fenced then: leader-less, and 2
     * unfenced (not in the ISR) does not lead it */
    img = sample_image_unclean("false");
    img = fence_step(img, 8, 2, 1, 1, 1);
    img = fence_step(img, 20, 1, 1, -1, 1);
    img = fence_step(img, 30, 2, -1, -1, 1);
    samsa_image_put(img);
    /* on: the same, and 2's unfence elects it, ISR = [2] */
    img = sample_image_unclean("true");
    img = fence_step(img, 8, 2, 1, 1, 1);
    img = fence_step(img, 20, 1, 1, -1, 1);
    img = fence_step(img, 30, 2, -1, 2, 2);
    samsa_image_put(img);
    /* on: 2 back (still out of the ISR), then the leader 1 fenced: the
     * fence elects 2 at once */
    img = sample_image_unclean("true");
    img = fence_step(img, 8, 2, 1, 1, 1);
    img = fence_step(img, 20, 2, -1, 1, 1);
    img = fence_step(img, 30, 1, 1, 2, 2);
    samsa_image_put(img);
}

/* p's ISR set to isr[0..n) by a PartitionChangeRecord (the leader's
 * AlterPartition, as committed). */
static samsa_image_t *
set_isr(samsa_image_t *img, int64_t offset, int32_t p, int32_t *isr,
        int32_t n)
{
    samsa_ctlbatch_t              b;
    samsa_MetadataRecords_any_t   rec;

    samsa_ctlbatch_init(&b, img, offset, NODE, NULL);
    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_PartitionChangeRecord;
    samsa_PartitionChangeRecord_init(&rec.u.PartitionChangeRecord);
    rec.u.PartitionChangeRecord.TopicId = topic_id();
    rec.u.PartitionChangeRecord.PartitionId = p;
    rec.u.PartitionChangeRecord.Isr = isr;
    rec.u.PartitionChangeRecord.Isr_cnt = n;
    samsa_ctlbatch_add(&b, &rec);
    samsa_image_put(img);
    return commit(&b);
}

static samsa_image_t *
fenced(samsa_image_t *img, int64_t offset, int32_t broker, int64_t epoch)
{
    samsa_ctlbatch_t  b;

    samsa_ctlbatch_init(&b, img, offset, NODE, NULL);
    samsa_ctlbrokers_fence(&b, broker, epoch, 1);
    samsa_image_put(img);
    return commit(&b);
}

/* ElectLeaders (Kafka's electLeader) and the automatic balance: p2
 * (replicas 1, 2) led by 2 after 1's fence and unfence: PREFERRED is
 * PREFERRED_LEADER_NOT_AVAILABLE while 1 is outside the ISR, elects 1
 * (a new leader epoch) once it is back in; leaders already preferred are
 * ELECTION_NOT_NEEDED; unknown topics and partitions are named; UNCLEAN
 * elects an active replica outside the ISR of a leader-less partition,
 * ISR = [it], and is ELIGIBLE_LEADERS_NOT_AVAILABLE when none is active;
 * the balance moves only partitions whose preferred replica can lead. */
static void
test_ctlbrokers_elect_leaders(void **state)
{
    samsa_image_t                    *img = sample_image();
    samsa_ctlbatch_t                  b;
    samsa_arena_t                     arena;
    const samsa_image_partition_t    *p;
    samsa_controller_elect_result_t   res[6];
    samsa_controller_elect_t          ask[6] = {
        { { "t", 1 }, 2 }, { { "t", 1 }, 0 },
        { { "t", 1 }, 1 }, { { "t", 1 }, 7 },
        { { "x", 1 }, 0 }, { { "t", 1 }, 2 },
    };
    int32_t                           isr21[2] = { 2, 1 };
    int32_t                           two[1] = { 2 };

    (void) state;
    samsa_arena_init(&arena);
    img = fenced(img, 8, 1, 1);
    samsa_ctlbatch_init(&b, img, 20, NODE, NULL);
    samsa_ctlbrokers_fence(&b, 1, 1, -1);          /* back, out of p2's ISR */
    samsa_image_put(img);
    img = commit(&b);
    samsa_ctlbatch_init(&b, img, 30, NODE, NULL);
    samsa_ctlbrokers_elect_leaders(&b, SAMSA_CONTROLLER_ELECTION_PREFERRED,
                                   ask, 6, &arena, res);
    assert_int_equal(res[0].error, SAMSA_ERR_PREFERRED_LEADER_NOT_AVAILABLE);
    assert_int_equal(res[1].error, SAMSA_ERR_ELECTION_NOT_NEEDED);
    assert_int_equal(res[2].error, SAMSA_ERR_ELECTION_NOT_NEEDED);
    assert_int_equal(res[3].error, SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION);
    assert_string_equal(res[3].message, "No such partition as t-7");
    assert_int_equal(res[4].error, SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION);
    assert_string_equal(res[4].message, "No such topic as x");
    assert_int_equal(res[5].error, SAMSA_ERR_PREFERRED_LEADER_NOT_AVAILABLE);
    assert_int_equal(b.n, 0);
    assert_int_equal(samsa_ctlbrokers_balance_leaders(&b, 1000), 0);
    samsa_ctlbatch_fini(&b);

    img = set_isr(img, 40, 2, isr21, 2);           /* 1 caught up */
    samsa_ctlbatch_init(&b, img, 50, NODE, NULL);
    samsa_ctlbrokers_elect_leaders(&b, SAMSA_CONTROLLER_ELECTION_PREFERRED,
                                   ask, 1, &arena, res);
    assert_int_equal(res[0].error, SAMSA_ERR_NONE);
    assert_int_equal(b.n, 1);
    p = part(&b, 2);
    assert_int_equal(p->leader, 1);
    assert_int_equal(p->leader_epoch, 2);
    assert_int_equal(p->nisr, 2);
    samsa_ctlbatch_fini(&b);

    /* the automatic balance makes the same election, once */
    samsa_ctlbatch_init(&b, img, 50, NODE, NULL);
    assert_int_equal(samsa_ctlbrokers_balance_leaders(&b, 1000), 1);
    assert_int_equal(part(&b, 2)->leader, 1);
    assert_int_equal(samsa_ctlbrokers_balance_leaders(&b, 1000), 0);
    samsa_ctlbatch_fini(&b);

    /* unclean: p2 with ISR [2] loses its leader 2; 1 is active */
    img = set_isr(img, 60, 2, two, 1);
    img = fenced(img, 70, 2, 2);
    samsa_ctlbatch_init(&b, img, 80, NODE, NULL);
    assert_int_equal(part(&b, 2)->leader, -1);
    samsa_ctlbrokers_elect_leaders(&b, SAMSA_CONTROLLER_ELECTION_UNCLEAN,
                                   ask, 3, &arena, res);
    assert_int_equal(res[0].error, SAMSA_ERR_NONE);
    assert_int_equal(res[1].error, SAMSA_ERR_ELECTION_NOT_NEEDED);
    assert_int_equal(res[2].error, SAMSA_ERR_ELIGIBLE_LEADERS_NOT_AVAILABLE);
    p = part(&b, 2);
    assert_int_equal(p->leader, 1);
    assert_int_equal(p->nisr, 1);
    assert_int_equal(p->isr[0], 1);
    samsa_ctlbatch_fini(&b);
    samsa_image_put(img);
    samsa_arena_fini(&arena);
}

/* Kafka's registerBroker with a new incarnation id (a restart, kill -9
 * before the session timeout: the controller had not fenced it): the
 * fenced RegisterBrokerRecord and, in the same batch, the partition
 * changes of a fence (handleBrokerUncleanShutdown without ELR), so the
 * restarted broker leads nothing its replayed image named it leader of
 * (docs/REPLICATION.md bug 3).  A first registration writes no change. */
static void
test_ctlbrokers_reregister_ends_leaderships(void **state)
{
    samsa_image_t                  *img = sample_image();
    samsa_controller_broker_reg_t   reg;
    samsa_ctlbatch_t                b;
    const samsa_image_partition_t  *p;
    const samsa_image_broker_t     *br;
    int64_t                         epoch = -1;

    (void) state;
    memset(&reg, 0, sizeof(reg));
    reg.broker_id = 1;
    reg.incarnation_id = samsa_image_id_random();
    samsa_ctlbatch_init(&b, img, 7, NODE, NULL);
    samsa_ctlbrokers_register(&b, &reg, false, &epoch);
    assert_int_equal(epoch, 7);         /* the record's offset */
    assert_int_equal(b.n, 3);           /* the registration, p0, p2 */
    br = samsa_image_delta_broker_find(b.delta, 1);
    assert_non_null(br);
    assert_true(br->fenced);
    assert_int_equal(br->epoch, 7);
    p = part(&b, 0);                    /* its sole replica: leader-less */
    assert_int_equal(p->leader, -1);
    assert_int_equal(p->leader_epoch, 1);
    assert_int_equal(p->nisr, 1);       /* the last member stays */
    assert_int_equal(p->isr[0], 1);
    p = part(&b, 2);                    /* moved to 2, 1 out of the ISR */
    assert_int_equal(p->leader, 2);
    assert_int_equal(p->leader_epoch, 1);
    assert_int_equal(p->nisr, 1);
    assert_int_equal(p->isr[0], 2);
    p = part(&b, 1);                    /* not its partition */
    assert_int_equal(p->leader, 2);
    assert_int_equal(p->leader_epoch, 0);
    samsa_ctlbatch_fini(&b);

    reg.broker_id = 3;                  /* never registered: no change */
    samsa_ctlbatch_init(&b, img, 7, NODE, NULL);
    samsa_ctlbrokers_register(&b, &reg, false, &epoch);
    assert_int_equal(b.n, 1);
    assert_true(samsa_image_delta_broker_find(b.delta, 3)->fenced);
    assert_int_equal(part(&b, 2)->leader, 1);
    samsa_ctlbatch_fini(&b);
    samsa_image_put(img);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_ctlbrokers_fence_unfence),
        cmocka_unit_test(test_ctlbrokers_controlled_shutdown),
        cmocka_unit_test(test_ctlbrokers_unclean_election),
        cmocka_unit_test(test_ctlbrokers_elect_leaders),
        cmocka_unit_test(test_ctlbrokers_reregister_ends_leaderships),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
