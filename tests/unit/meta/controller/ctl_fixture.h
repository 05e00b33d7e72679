/*
 * tests/unit/meta/controller/ctl_fixture.h - the image the controller's
 * partition tests start from (test_ctlbrokers.c, test_ctlisr.c): two
 * registered, unfenced brokers (ids 1 and 2, broker epochs 1 and 2) and a
 * topic "t" of three partitions (p0 on broker 1, p1 on broker 2, p2 on
 * both, led by 1; leader and partition epochs 0), optionally with a
 * unclean.leader.election.enable override; no metadata log.  The helpers
 * are static inline: a test uses those it needs.
 */
#ifndef SAMSA_TESTS_UNIT_META_CONTROLLER_CTL_FIXTURE_H
#define SAMSA_TESTS_UNIT_META_CONTROLLER_CTL_FIXTURE_H

#include <string.h>

#include "unit.h"

#include "meta/controller/controller_int.h"

#define NODE  1

static inline samsa_uuid_t
topic_id(void)
{
    samsa_uuid_t  id;

    memset(&id, 0, sizeof(id));
    id.b[0] = 0x42;
    id.b[15] = 0x07;
    return id;
}

static inline void
replay(samsa_image_delta_t *d, const samsa_MetadataRecords_any_t *rec,
       int64_t offset)
{
    char  err[256];

    if (samsa_image_delta_replay(d, rec, offset, err, sizeof(err))
        != SAMSA_ERR_NONE) {
        fail_msg("replay: %s", err);
    }
}

static inline void
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

static inline samsa_image_t *
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

static inline samsa_image_t *
sample_image(void)
{
    return sample_image_unclean(NULL);
}

static inline const samsa_image_partition_t *
part(const samsa_ctlbatch_t *b, int32_t p)
{
    const samsa_image_topic_t  *t = samsa_image_delta_topic_find(b->delta,
                                                                 "t", 1);

    assert_non_null(t);
    return &t->partitions[p];
}

/* The batch's result as the next image (b finished). */
static inline samsa_image_t *
commit(samsa_ctlbatch_t *b)
{
    samsa_image_t  *img = samsa_image_delta_apply(b->delta);

    samsa_ctlbatch_fini(b);
    return img;
}

#endif /* SAMSA_TESTS_UNIT_META_CONTROLLER_CTL_FIXTURE_H */
