/* Unit tests for meta/image.c: building images by replaying metadata
 * records into deltas (Kafka's MetadataDelta), lookups by name and id,
 * name order, copy-on-write sharing between images, removal from the hash
 * indexes, records that contradict the image, topic ids. */
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>

#include "meta/image.h"

static samsa_uuid_t
id_of(int n)
{
    samsa_uuid_t  id;

    memset(&id, 0, sizeof(id));
    id.b[0] = 0x40;
    id.b[14] = (uint8_t) (n >> 8);
    id.b[15] = (uint8_t) n;
    return id;
}

static void
replay_ok(samsa_image_delta_t *d, const samsa_MetadataRecords_any_t *rec,
          int64_t offset)
{
    char  err[512];

    err[0] = '\0';
    if (samsa_image_delta_replay(d, rec, offset, err, sizeof(err))
        != SAMSA_ERR_NONE) {
        fail_msg("replay failed: %s", err);
    }
}

static void
add_topic(samsa_image_delta_t *d, const char *name, samsa_uuid_t id,
          int nparts, int64_t *offset)
{
    samsa_MetadataRecords_any_t  rec;
    int32_t                      node = 1;
    int                          p;

    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_TopicRecord;
    samsa_TopicRecord_init(&rec.u.TopicRecord);
    rec.u.TopicRecord.Name = samsa_slice_cstr(name);
    rec.u.TopicRecord.TopicId = id;
    replay_ok(d, &rec, (*offset)++);
    for (p = 0; p < nparts; p++) {
        memset(&rec, 0, sizeof(rec));
        rec.type = SAMSA_MetadataRecords_PartitionRecord;
        samsa_PartitionRecord_init(&rec.u.PartitionRecord);
        rec.u.PartitionRecord.PartitionId = p;
        rec.u.PartitionRecord.TopicId = id;
        rec.u.PartitionRecord.Replicas = &node;
        rec.u.PartitionRecord.Replicas_cnt = 1;
        rec.u.PartitionRecord.Isr = &node;
        rec.u.PartitionRecord.Isr_cnt = 1;
        rec.u.PartitionRecord.Leader = 1;
        rec.u.PartitionRecord.LeaderEpoch = 0;
        rec.u.PartitionRecord.PartitionEpoch = 0;
        replay_ok(d, &rec, (*offset)++);
    }
}

static samsa_MetadataRecords_any_t
config_rec(int8_t type, const char *res, const char *name, const char *value)
{
    samsa_MetadataRecords_any_t  rec;

    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_ConfigRecord;
    samsa_ConfigRecord_init(&rec.u.ConfigRecord);
    rec.u.ConfigRecord.ResourceType = type;
    rec.u.ConfigRecord.ResourceName = samsa_slice_cstr(res);
    rec.u.ConfigRecord.Name = samsa_slice_cstr(name);
    rec.u.ConfigRecord.Value = value != NULL ? samsa_slice_cstr(value)
                                             : SAMSA_SLICE_NULL;
    return rec;
}

static void
test_image_empty(void **state)
{
    samsa_image_t  *img = samsa_image_new_empty();

    (void) state;
    assert_int_equal(samsa_image_offset(img), -1);
    assert_int_equal(samsa_image_topic_count(img), 0);
    assert_null(samsa_image_topic_find(img, "a", 1));
    assert_null(samsa_image_topic_find_id(img, id_of(1)));
    assert_int_equal(samsa_image_feature_level(img, "metadata.version"), 0);
    assert_int_equal(samsa_image_next_producer_id(img), 0);
    samsa_image_put(img);
}

static void
test_image_topics(void **state)
{
    samsa_image_t                *empty = samsa_image_new_empty(), *img;
    samsa_image_delta_t          *d = samsa_image_delta_new(empty);
    samsa_MetadataRecords_any_t   rec;
    const samsa_image_topic_t    *t;
    int64_t                       off = 0;

    (void) state;
    add_topic(d, "orders", id_of(1), 3, &off);
    rec = config_rec(SAMSA_CONFIG_RESOURCE_TOPIC, "orders", "retention.ms",
                     "1000");
    replay_ok(d, &rec, off++);
    rec = config_rec(SAMSA_CONFIG_RESOURCE_TOPIC, "orders",
                     "cleanup.policy", "compact");
    replay_ok(d, &rec, off++);
    add_topic(d, "alpha", id_of(2), 1, &off);
    add_topic(d, "zeta", id_of(3), 2, &off);
    img = samsa_image_delta_apply(d);
    assert_int_equal(samsa_image_offset(img), off - 1);
    assert_int_equal(samsa_image_topic_count(img), 3);
    assert_string_equal(samsa_image_topic_at(img, 0)->name, "alpha");
    assert_string_equal(samsa_image_topic_at(img, 1)->name, "orders");
    assert_string_equal(samsa_image_topic_at(img, 2)->name, "zeta");
    t = samsa_image_topic_find(img, "orders", 6);
    assert_non_null(t);
    assert_ptr_equal(t, samsa_image_topic_find_id(img, id_of(1)));
    assert_int_equal(t->npartitions, 3);
    assert_int_equal(t->partitions[2].partition, 2);
    assert_int_equal(t->partitions[2].leader, 1);
    assert_int_equal(t->partitions[2].nisr, 1);
    assert_false(t->is_internal);
    assert_int_equal(t->nconfigs, 2);
    assert_string_equal(t->configs[0].name, "cleanup.policy");  /* sorted */
    assert_string_equal(samsa_image_topic_config(t, "retention.ms"), "1000");
    assert_null(samsa_image_topic_config(t, "segment.ms"));
    assert_null(samsa_image_topic_find(img, "order", 5));
    assert_null(samsa_image_topic_find(img, "orders2", 7));
    assert_null(samsa_image_topic_find_id(img, id_of(9)));
    samsa_image_delta_free(d);
    samsa_image_put(empty);
    samsa_image_put(img);               /* the topics live in img alone */
}

/* A second image shares the topics that did not change and leaves the
 * first image as it was. */
static void
test_image_copy_on_write(void **state)
{
    samsa_image_t                *empty = samsa_image_new_empty();
    samsa_image_t                *one, *two;
    samsa_image_delta_t          *d = samsa_image_delta_new(empty);
    samsa_MetadataRecords_any_t   rec;
    const samsa_image_topic_t    *a1, *b1, *a2, *b2;
    int64_t                       off = 0;
    int32_t                       isr[1] = { 1 };

    (void) state;
    add_topic(d, "a", id_of(1), 1, &off);
    add_topic(d, "b", id_of(2), 1, &off);
    one = samsa_image_delta_apply(d);
    samsa_image_delta_free(d);

    d = samsa_image_delta_new(one);
    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_PartitionChangeRecord;
    samsa_PartitionChangeRecord_init(&rec.u.PartitionChangeRecord);
    rec.u.PartitionChangeRecord.TopicId = id_of(1);
    rec.u.PartitionChangeRecord.PartitionId = 0;
    rec.u.PartitionChangeRecord.Leader = 1;
    rec.u.PartitionChangeRecord.Isr = isr;
    rec.u.PartitionChangeRecord.Isr_cnt = 1;
    replay_ok(d, &rec, off++);
    rec = config_rec(SAMSA_CONFIG_RESOURCE_TOPIC, "a", "segment.ms", "5");
    replay_ok(d, &rec, off++);
    two = samsa_image_delta_apply(d);
    samsa_image_delta_free(d);

    a1 = samsa_image_topic_find(one, "a", 1);
    b1 = samsa_image_topic_find(one, "b", 1);
    a2 = samsa_image_topic_find(two, "a", 1);
    b2 = samsa_image_topic_find(two, "b", 1);
    assert_ptr_equal(b1, b2);           /* unchanged: shared */
    assert_ptr_not_equal(a1, a2);
    assert_int_equal(a1->partitions[0].leader_epoch, 0);
    assert_int_equal(a1->partitions[0].partition_epoch, 0);
    assert_int_equal(a1->nconfigs, 0);
    assert_int_equal(a2->partitions[0].leader_epoch, 1);   /* leader set */
    assert_int_equal(a2->partitions[0].partition_epoch, 1);
    assert_int_equal(a2->nconfigs, 1);
    samsa_image_put(one);               /* two must not depend on one */
    assert_string_equal(samsa_image_topic_find(two, "b", 1)->name, "b");
    assert_int_equal(samsa_image_topic_find(two, "a", 1)->npartitions, 1);
    samsa_image_put(two);
    samsa_image_put(empty);
}

/* Many topics, half of them removed in one delta: every lookup of the
 * survivors still works (backward-shift deletion in the indexes). */
static void
test_image_remove_many(void **state)
{
    samsa_image_t                *empty = samsa_image_new_empty();
    samsa_image_t                *one, *two;
    samsa_image_delta_t          *d = samsa_image_delta_new(empty);
    samsa_MetadataRecords_any_t   rec;
    char                          name[32];
    int64_t                       off = 0;
    int                           i;

    (void) state;
    for (i = 0; i < 600; i++) {
        snprintf(name, sizeof(name), "t%04d", (i * 7919) % 600);
        add_topic(d, name, id_of(i + 1), 1, &off);
    }
    one = samsa_image_delta_apply(d);
    assert_int_equal(samsa_image_topic_count(one), 600);
    for (i = 0; i < 600; i += 2) {
        memset(&rec, 0, sizeof(rec));
        rec.type = SAMSA_MetadataRecords_RemoveTopicRecord;
        rec.u.RemoveTopicRecord.TopicId = id_of(i + 1);
        replay_ok(d, &rec, off++);
        /* the delta's own lookups follow at once */
        assert_null(samsa_image_delta_topic_find_id(d, id_of(i + 1)));
    }
    two = samsa_image_delta_apply(d);
    samsa_image_delta_free(d);
    assert_int_equal(samsa_image_topic_count(two), 300);
    for (i = 0; i < 600; i++) {
        const samsa_image_topic_t  *t;

        snprintf(name, sizeof(name), "t%04d", (i * 7919) % 600);
        t = samsa_image_topic_find(two, name, strlen(name));
        if (i % 2 == 0) {
            assert_null(t);
            assert_null(samsa_image_topic_find_id(two, id_of(i + 1)));
        } else {
            assert_non_null(t);
            assert_ptr_equal(t, samsa_image_topic_find_id(two, id_of(i + 1)));
        }
        assert_non_null(samsa_image_topic_find(one, name, strlen(name)));
    }
    for (i = 1; i < 300; i++) {
        assert_true(strcmp(samsa_image_topic_at(two, i - 1)->name,
                           samsa_image_topic_at(two, i)->name) < 0);
    }
    samsa_image_put(one);
    samsa_image_put(two);
    samsa_image_put(empty);
}

static void
test_image_features_brokers_pids(void **state)
{
    samsa_image_t                *empty = samsa_image_new_empty(), *img;
    samsa_image_delta_t          *d = samsa_image_delta_new(empty);
    samsa_MetadataRecords_any_t   rec;
    const samsa_image_config_t   *cfgs;
    const samsa_image_broker_t   *b;
    int16_t                       level;
    size_t                        n;

    (void) state;
    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_FeatureLevelRecord;
    rec.u.FeatureLevelRecord.Name = samsa_slice_cstr("metadata.version");
    rec.u.FeatureLevelRecord.FeatureLevel = 7;
    replay_ok(d, &rec, 0);
    rec.u.FeatureLevelRecord.Name = samsa_slice_cstr("kraft.version");
    rec.u.FeatureLevelRecord.FeatureLevel = 1;
    replay_ok(d, &rec, 1);
    rec.u.FeatureLevelRecord.FeatureLevel = 0;          /* removes it */
    replay_ok(d, &rec, 2);
    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_ProducerIdsRecord;
    rec.u.ProducerIdsRecord.NextProducerId = 1000;
    replay_ok(d, &rec, 3);
    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_RegisterBrokerRecord;
    samsa_RegisterBrokerRecord_init(&rec.u.RegisterBrokerRecord);
    rec.u.RegisterBrokerRecord.BrokerId = 1;
    rec.u.RegisterBrokerRecord.BrokerEpoch = 4;
    rec.u.RegisterBrokerRecord.Rack = samsa_slice_cstr("r1");
    replay_ok(d, &rec, 4);
    rec = config_rec(SAMSA_CONFIG_RESOURCE_BROKER, "", "log.retention.ms",
                     "5");
    replay_ok(d, &rec, 5);
    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_NoOpRecord;
    replay_ok(d, &rec, 6);
    img = samsa_image_delta_apply(d);
    samsa_image_delta_free(d);

    assert_int_equal(samsa_image_offset(img), 6);
    assert_int_equal(samsa_image_feature_level(img, "metadata.version"), 7);
    assert_int_equal(samsa_image_feature_level(img, "kraft.version"), 0);
    assert_int_equal(samsa_image_feature_count(img), 1);
    assert_string_equal(samsa_image_feature_at(img, 0, &level),
                        "metadata.version");
    assert_int_equal(level, 7);
    assert_int_equal(samsa_image_next_producer_id(img), 1000);
    b = samsa_image_broker_find(img, 1);
    assert_non_null(b);
    assert_int_equal(b->epoch, 4);
    assert_true(b->fenced);
    assert_string_equal(b->rack, "r1");
    assert_null(samsa_image_broker_find(img, 2));
    cfgs = samsa_image_resource_configs(img, SAMSA_CONFIG_RESOURCE_BROKER, "",
                                        &n);
    assert_int_equal(n, 1);
    assert_string_equal(cfgs[0].value, "5");
    assert_null(samsa_image_resource_configs(img, SAMSA_CONFIG_RESOURCE_BROKER,
                                             "1", &n));
    assert_int_equal(n, 0);
    samsa_image_put(img);
    samsa_image_put(empty);
}

/* Records that do not fit the image are refused with the offset named. */
static void
test_image_bad_records(void **state)
{
    samsa_image_t                *empty = samsa_image_new_empty();
    samsa_image_delta_t          *d;
    samsa_MetadataRecords_any_t   rec;
    char                          err[512];
    int64_t                       off = 0;
    int32_t                       node = 1;

    (void) state;
    d = samsa_image_delta_new(empty);
    add_topic(d, "a", id_of(1), 1, &off);
    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_TopicRecord;
    rec.u.TopicRecord.Name = samsa_slice_cstr("a");
    rec.u.TopicRecord.TopicId = id_of(2);
    assert_int_equal(samsa_image_delta_replay(d, &rec, 7, err, sizeof(err)),
                     SAMSA_ERR__BAD_MSG);
    assert_string_equal(err, "metadata record at offset 7: TopicRecord for "
                        "existing topic 'a'");
    rec.u.TopicRecord.Name = samsa_slice_cstr("b");
    rec.u.TopicRecord.TopicId = id_of(1);
    assert_int_equal(samsa_image_delta_replay(d, &rec, 8, err, sizeof(err)),
                     SAMSA_ERR__BAD_MSG);

    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_PartitionRecord;
    samsa_PartitionRecord_init(&rec.u.PartitionRecord);
    rec.u.PartitionRecord.TopicId = id_of(1);
    rec.u.PartitionRecord.PartitionId = 2;         /* gap after 0 */
    rec.u.PartitionRecord.Replicas = &node;
    rec.u.PartitionRecord.Replicas_cnt = 1;
    rec.u.PartitionRecord.Isr = &node;
    rec.u.PartitionRecord.Isr_cnt = 1;
    assert_int_equal(samsa_image_delta_replay(d, &rec, 9, err, sizeof(err)),
                     SAMSA_ERR__BAD_MSG);
    rec.u.PartitionRecord.TopicId = id_of(5);
    rec.u.PartitionRecord.PartitionId = 0;
    assert_int_equal(samsa_image_delta_replay(d, &rec, 10, err, sizeof(err)),
                     SAMSA_ERR__BAD_MSG);
    assert_non_null(strstr(err, "PartitionRecord for unknown topic id "));

    rec = config_rec(SAMSA_CONFIG_RESOURCE_TOPIC, "nope", "retention.ms", "1");
    assert_int_equal(samsa_image_delta_replay(d, &rec, 11, err, sizeof(err)),
                     SAMSA_ERR__BAD_MSG);
    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_RemoveTopicRecord;
    rec.u.RemoveTopicRecord.TopicId = id_of(5);
    assert_int_equal(samsa_image_delta_replay(d, &rec, 12, err, sizeof(err)),
                     SAMSA_ERR__BAD_MSG);
    rec.type = 99;
    assert_int_equal(samsa_image_delta_replay(d, &rec, 13, err, sizeof(err)),
                     SAMSA_ERR__BAD_MSG);
    assert_string_equal(err, "metadata record at offset 13: unsupported "
                        "record type 99");
    samsa_image_delta_free(d);
    samsa_image_put(empty);
}

static void
test_image_ids(void **state)
{
    samsa_uuid_t  id, seq;
    char          text[SAMSA_UUID_STR_SIZE];
    int           i;

    (void) state;
    for (i = 0; i < 16; i++) {
        seq.b[i] = (uint8_t) i;
    }
    samsa_image_id_str(seq, text);
    assert_string_equal(text, "AAECAwQFBgcICQoLDA0ODw");
    for (i = 0; i < 2000; i++) {
        id = samsa_image_id_random();
        assert_false(samsa_uuid_is_zero(id));
        assert_int_equal(id.b[6] >> 4, 4);            /* version 4 */
        samsa_image_id_str(id, text);
        assert_int_equal(strlen(text), 22);
        assert_true(text[0] != '-');
    }
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_image_empty),
        cmocka_unit_test(test_image_topics),
        cmocka_unit_test(test_image_copy_on_write),
        cmocka_unit_test(test_image_remove_many),
        cmocka_unit_test(test_image_features_brokers_pids),
        cmocka_unit_test(test_image_bad_records),
        cmocka_unit_test(test_image_ids),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
