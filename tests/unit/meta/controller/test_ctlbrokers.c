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

#define NODE  1

static samsa_uuid_t
topic_id(void)
{
    samsa_uuid_t  id;

    memset(&id, 0, sizeof(id));
    id.b[0] = 0x42;
    id.b[15] = 0x07;
    return id;
}

static void
replay(samsa_image_delta_t *d, const samsa_MetadataRecords_any_t *rec,
       int64_t offset)
{
    char  err[256];

    if (samsa_image_delta_replay(d, rec, offset, err, sizeof(err))
        != SAMSA_ERR_NONE) {
        fail_msg("replay: %s", err);
    }
}

static void
add_partition(samsa_image_delta_t *d, int32_t id, int32_t *reps, int32_t n,
              int32_t leader, int64_t offset)
{
    samsa_MetadataRecords_any_t  rec;

    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_PartitionRecord;
    samsa_PartitionRecord_init(&rec.u.PartitionRecord);
    rec.u.PartitionRecord.PartitionId = id;
    rec.u.PartitionRecord.TopicId = topic_id();
    rec.u.PartitionRecord.Replicas = reps;
    rec.u.PartitionRecord.Replicas_cnt = n;
    rec.u.PartitionRecord.Isr = reps;
    rec.u.PartitionRecord.Isr_cnt = n;
    rec.u.PartitionRecord.Leader = leader;
    rec.u.PartitionRecord.LeaderEpoch = 0;
    rec.u.PartitionRecord.PartitionEpoch = 0;
    replay(d, &rec, offset);
}

static samsa_image_t *
sample_image_unclean(const char *unclean)
{
    samsa_image_t                *empty = samsa_image_new_empty(), *img;
    samsa_image_delta_t          *d = samsa_image_delta_new(empty);
    samsa_MetadataRecords_any_t   rec;
    int32_t                       one[1] = { 1 }, two[1] = { 2 };
    int32_t                       both[2] = { 1, 2 };
    int32_t                       i;

    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_FeatureLevelRecord;
    rec.u.FeatureLevelRecord.Name = samsa_slice_cstr("metadata.version");
    rec.u.FeatureLevelRecord.FeatureLevel = 7;
    replay(d, &rec, 0);
    for (i = 1; i <= 2; i++) {
        memset(&rec, 0, sizeof(rec));
        rec.type = SAMSA_MetadataRecords_RegisterBrokerRecord;
        rec.version = 1;
        samsa_RegisterBrokerRecord_init(&rec.u.RegisterBrokerRecord);
        rec.u.RegisterBrokerRecord.BrokerId = i;
        rec.u.RegisterBrokerRecord.BrokerEpoch = i;     /* its offset */
        rec.u.RegisterBrokerRecord.Fenced = false;
        replay(d, &rec, i);
    }
    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_TopicRecord;
    samsa_TopicRecord_init(&rec.u.TopicRecord);
    rec.u.TopicRecord.Name = samsa_slice_cstr("t");
    rec.u.TopicRecord.TopicId = topic_id();
    replay(d, &rec, 3);
    add_partition(d, 0, one, 1, 1, 4);
    add_partition(d, 1, two, 1, 2, 5);
    add_partition(d, 2, both, 2, 1, 6);
    if (unclean != NULL) {
        memset(&rec, 0, sizeof(rec));
        rec.type = SAMSA_MetadataRecords_ConfigRecord;
        samsa_ConfigRecord_init(&rec.u.ConfigRecord);
        rec.u.ConfigRecord.ResourceType = 2;            /* TOPIC */
        rec.u.ConfigRecord.ResourceName = samsa_slice_cstr("t");
        rec.u.ConfigRecord.Name =
            samsa_slice_cstr("unclean.leader.election.enable");
        rec.u.ConfigRecord.Value = samsa_slice_cstr(unclean);
        replay(d, &rec, 7);
    }
    img = samsa_image_delta_apply(d);
    samsa_image_delta_free(d);
    samsa_image_put(empty);
    return img;
}

static samsa_image_t *
sample_image(void)
{
    return sample_image_unclean(NULL);
}

static const samsa_image_partition_t *
part(const samsa_ctlbatch_t *b, int32_t p)
{
    const samsa_image_topic_t  *t = samsa_image_delta_topic_find(b->delta,
                                                                 "t", 1);

    assert_non_null(t);
    return &t->partitions[p];
}

/* The batch's result as the next image (b finished). */
static samsa_image_t *
commit(samsa_ctlbatch_t *b)
{
    samsa_image_t  *img = samsa_image_delta_apply(b->delta);

    samsa_ctlbatch_fini(b);
    return img;
}

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
