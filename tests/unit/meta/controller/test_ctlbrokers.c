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
 * leader-less. */
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

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_ctlbrokers_fence_unfence),
        cmocka_unit_test(test_ctlbrokers_controlled_shutdown),
        cmocka_unit_test(test_ctlbrokers_unclean_election),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
