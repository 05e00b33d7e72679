/* Unit tests for meta/image.c: building images by replaying metadata
 * records into deltas (Kafka's MetadataDelta), lookups by name and id,
 * name order, copy-on-write sharing between images, removal from the hash
 * indexes, records that contradict the image, topic ids, and the broker
 * lifecycle records (register with endpoints and features, fence, unfence,
 * registration change, unregister) with their refusals. */
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

/* ---- brokers */

/* A RegisterBrokerRecord of broker id at epoch, with one endpoint per
 * "NAME" of names (host h<id>, port 9000 + id*10 + index), one feature
 * and the fenced state given; strings point into the static buffers. */
static samsa_MetadataRecords_any_t
register_rec(int32_t id, int64_t epoch, bool fenced, const char *rack,
             const char *const *names, int nnames)
{
    static samsa_RegisterBrokerEndpoint_t  eps[4];
    static samsa_RegisterBrokerFeature_t   feat;
    static char                            host[16];
    samsa_MetadataRecords_any_t            rec;
    int                                    i;

    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_RegisterBrokerRecord;
    rec.version = 1;
    samsa_RegisterBrokerRecord_init(&rec.u.RegisterBrokerRecord);
    snprintf(host, sizeof(host), "h%d", (int) id);
    for (i = 0; i < nnames; i++) {
        samsa_RegisterBrokerEndpoint_init(&eps[i]);
        eps[i].Name = samsa_slice_cstr(names[i]);
        eps[i].Host = samsa_slice_cstr(host);
        eps[i].Port = (uint16_t) (9000 + id * 10 + i);
        eps[i].SecurityProtocol = (int16_t) i;
    }
    samsa_RegisterBrokerFeature_init(&feat);
    feat.Name = samsa_slice_cstr("metadata.version");
    feat.MinSupportedVersion = 7;
    feat.MaxSupportedVersion = 21;
    rec.u.RegisterBrokerRecord.BrokerId = id;
    rec.u.RegisterBrokerRecord.BrokerEpoch = epoch;
    rec.u.RegisterBrokerRecord.IncarnationId = id_of((int) id);
    rec.u.RegisterBrokerRecord.EndPoints = eps;
    rec.u.RegisterBrokerRecord.EndPoints_cnt = nnames;
    rec.u.RegisterBrokerRecord.Features = &feat;
    rec.u.RegisterBrokerRecord.Features_cnt = 1;
    rec.u.RegisterBrokerRecord.Rack = rack != NULL ? samsa_slice_cstr(rack)
                                                   : SAMSA_SLICE_NULL;
    rec.u.RegisterBrokerRecord.Fenced = fenced;
    return rec;
}

static samsa_MetadataRecords_any_t
fence_rec(bool fence, int32_t id, int64_t epoch)
{
    samsa_MetadataRecords_any_t  rec;

    memset(&rec, 0, sizeof(rec));
    if (fence) {
        rec.type = SAMSA_MetadataRecords_FenceBrokerRecord;
        samsa_FenceBrokerRecord_init(&rec.u.FenceBrokerRecord);
        rec.u.FenceBrokerRecord.Id = id;
        rec.u.FenceBrokerRecord.Epoch = epoch;
    } else {
        rec.type = SAMSA_MetadataRecords_UnfenceBrokerRecord;
        samsa_UnfenceBrokerRecord_init(&rec.u.UnfenceBrokerRecord);
        rec.u.UnfenceBrokerRecord.Id = id;
        rec.u.UnfenceBrokerRecord.Epoch = epoch;
    }
    return rec;
}

static samsa_MetadataRecords_any_t
change_rec(int32_t id, int64_t epoch, int8_t fenced, int8_t shutdown)
{
    samsa_MetadataRecords_any_t  rec;

    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_BrokerRegistrationChangeRecord;
    rec.version = 1;
    samsa_BrokerRegistrationChangeRecord_init(
        &rec.u.BrokerRegistrationChangeRecord);
    rec.u.BrokerRegistrationChangeRecord.BrokerId = id;
    rec.u.BrokerRegistrationChangeRecord.BrokerEpoch = epoch;
    rec.u.BrokerRegistrationChangeRecord.Fenced = fenced;
    rec.u.BrokerRegistrationChangeRecord.InControlledShutdown = shutdown;
    return rec;
}

static samsa_MetadataRecords_any_t
unregister_rec(int32_t id, int64_t epoch)
{
    samsa_MetadataRecords_any_t  rec;

    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_UnregisterBrokerRecord;
    samsa_UnregisterBrokerRecord_init(&rec.u.UnregisterBrokerRecord);
    rec.u.UnregisterBrokerRecord.BrokerId = id;
    rec.u.UnregisterBrokerRecord.BrokerEpoch = epoch;
    return rec;
}

/* Registrations keep their endpoints and features (copied), brokers come
 * in id order, a second registration replaces the first whole, and an
 * older image keeps what it had. */
static void
test_image_broker_register(void **state)
{
    static const char *const      two[] = { "PLAINTEXT", "INTERNAL" };
    static const char *const      one[] = { "EXTERNAL" };
    samsa_image_t                *empty = samsa_image_new_empty();
    samsa_image_t                *img1, *img2;
    samsa_image_delta_t          *d = samsa_image_delta_new(empty);
    samsa_MetadataRecords_any_t   rec;
    const samsa_image_broker_t   *b;
    const samsa_image_endpoint_t *ep;

    (void) state;
    rec = register_rec(3, 10, false, "r3", two, 2);
    replay_ok(d, &rec, 10);
    rec = register_rec(1, 11, true, NULL, one, 1);
    replay_ok(d, &rec, 11);
    rec = register_rec(2, 12, false, NULL, two, 2);
    replay_ok(d, &rec, 12);
    img1 = samsa_image_delta_apply(d);

    assert_int_equal(samsa_image_broker_count(img1), 3);
    assert_int_equal(samsa_image_broker_at(img1, 0)->id, 1);
    assert_int_equal(samsa_image_broker_at(img1, 1)->id, 2);
    assert_int_equal(samsa_image_broker_at(img1, 2)->id, 3);
    b = samsa_image_broker_find(img1, 3);
    assert_non_null(b);
    assert_int_equal(b->epoch, 10);
    assert_false(b->fenced);
    assert_string_equal(b->rack, "r3");
    assert_int_equal(b->nendpoints, 2);
    ep = samsa_image_broker_endpoint(b, "internal");   /* any case */
    assert_non_null(ep);
    assert_string_equal(ep->listener, "INTERNAL");
    assert_string_equal(ep->host, "h3");
    assert_int_equal(ep->port, 9031);
    assert_int_equal(ep->security_protocol, 1);
    assert_null(samsa_image_broker_endpoint(b, "EXTERNAL"));
    assert_int_equal(b->nfeatures, 1);
    assert_string_equal(b->features[0].name, "metadata.version");
    assert_int_equal(b->features[0].min_version, 7);
    assert_int_equal(b->features[0].max_version, 21);
    assert_true(samsa_image_broker_find(img1, 1)->fenced);
    assert_null(samsa_image_broker_find(img1, 1)->rack);

    /* broker 3 comes back with another epoch and other endpoints */
    rec = register_rec(3, 20, true, NULL, one, 1);
    replay_ok(d, &rec, 20);
    img2 = samsa_image_delta_apply(d);
    samsa_image_delta_free(d);
    assert_int_equal(samsa_image_broker_count(img2), 3);
    b = samsa_image_broker_find(img2, 3);
    assert_int_equal(b->epoch, 20);
    assert_true(b->fenced);
    assert_null(b->rack);
    assert_int_equal(b->nendpoints, 1);
    assert_null(samsa_image_broker_endpoint(b, "PLAINTEXT"));
    assert_int_equal(samsa_image_broker_endpoint(b, "EXTERNAL")->port, 9030);
    /* the older image is untouched */
    b = samsa_image_broker_find(img1, 3);
    assert_int_equal(b->epoch, 10);
    assert_int_equal(samsa_image_broker_endpoint(b, "PLAINTEXT")->port, 9030);
    samsa_image_put(img1);
    samsa_image_put(img2);
    samsa_image_put(empty);
}

/* FenceBrokerRecord / UnfenceBrokerRecord and BrokerRegistrationChange-
 * Record (Fenced 1 / -1 / 0, InControlledShutdown) change the state. */
static void
test_image_broker_fence(void **state)
{
    static const char *const      pl[] = { "PLAINTEXT" };
    samsa_image_t                *empty = samsa_image_new_empty(), *img;
    samsa_image_delta_t          *d = samsa_image_delta_new(empty);
    samsa_MetadataRecords_any_t   rec;
    const samsa_image_broker_t   *b;

    (void) state;
    rec = register_rec(1, 5, true, NULL, pl, 1);
    replay_ok(d, &rec, 5);
    rec = fence_rec(false, 1, 5);
    replay_ok(d, &rec, 6);
    img = samsa_image_delta_apply(d);
    assert_false(samsa_image_broker_find(img, 1)->fenced);
    samsa_image_put(img);

    rec = fence_rec(true, 1, 5);
    replay_ok(d, &rec, 7);
    img = samsa_image_delta_apply(d);
    assert_true(samsa_image_broker_find(img, 1)->fenced);
    samsa_image_put(img);

    rec = change_rec(1, 5, -1, 0);                      /* unfence */
    replay_ok(d, &rec, 8);
    img = samsa_image_delta_apply(d);
    b = samsa_image_broker_find(img, 1);
    assert_false(b->fenced);
    assert_false(b->in_controlled_shutdown);
    samsa_image_put(img);

    rec = change_rec(1, 5, 0, 1);               /* controlled shutdown */
    replay_ok(d, &rec, 9);
    img = samsa_image_delta_apply(d);
    b = samsa_image_broker_find(img, 1);
    assert_false(b->fenced);                    /* 0: no change */
    assert_true(b->in_controlled_shutdown);
    samsa_image_put(img);

    rec = change_rec(1, 5, 1, 0);                       /* fence */
    replay_ok(d, &rec, 10);
    img = samsa_image_delta_apply(d);
    b = samsa_image_broker_find(img, 1);
    assert_true(b->fenced);
    assert_true(b->in_controlled_shutdown);     /* 0: no change */
    assert_int_equal(samsa_image_offset(img), 10);
    samsa_image_put(img);
    samsa_image_delta_free(d);
    samsa_image_put(empty);
}

/* UnregisterBrokerRecord removes the broker; the order of the rest stays. */
static void
test_image_broker_unregister(void **state)
{
    static const char *const      pl[] = { "PLAINTEXT" };
    samsa_image_t                *empty = samsa_image_new_empty();
    samsa_image_t                *img1, *img2;
    samsa_image_delta_t          *d = samsa_image_delta_new(empty);
    samsa_MetadataRecords_any_t   rec;
    int32_t                       id;

    (void) state;
    for (id = 1; id <= 3; id++) {
        rec = register_rec(id, id, false, NULL, pl, 1);
        replay_ok(d, &rec, id);
    }
    img1 = samsa_image_delta_apply(d);
    rec = unregister_rec(2, 2);
    replay_ok(d, &rec, 4);
    img2 = samsa_image_delta_apply(d);
    samsa_image_delta_free(d);
    assert_int_equal(samsa_image_broker_count(img2), 2);
    assert_int_equal(samsa_image_broker_at(img2, 0)->id, 1);
    assert_int_equal(samsa_image_broker_at(img2, 1)->id, 3);
    assert_null(samsa_image_broker_find(img2, 2));
    assert_string_equal(samsa_image_broker_find(img2, 3)->endpoints[0].host,
                        "h3");
    assert_int_equal(samsa_image_broker_count(img1), 3);
    assert_non_null(samsa_image_broker_find(img1, 2));
    samsa_image_put(img1);
    samsa_image_put(img2);
    samsa_image_put(empty);
}

/* One refused record on a fresh delta holding broker 1 at epoch 5: it
 * fails with SAMSA_ERR__BAD_MSG and errstr naming the offset and want. */
static void
broker_refused(const samsa_MetadataRecords_any_t *bad, const char *want)
{
    static const char *const      pl[] = { "PLAINTEXT" };
    samsa_image_t                *empty = samsa_image_new_empty();
    samsa_image_delta_t          *d = samsa_image_delta_new(empty);
    samsa_MetadataRecords_any_t   rec = register_rec(1, 5, false, NULL, pl, 1);
    char                          err[512];

    replay_ok(d, &rec, 5);
    err[0] = '\0';
    assert_int_equal(samsa_image_delta_replay(d, bad, 6, err, sizeof(err)),
                     SAMSA_ERR__BAD_MSG);
    if (strstr(err, "offset 6") == NULL || strstr(err, want) == NULL) {
        fail_msg("errstr \"%s\" lacks \"%s\"", err, want);
    }
    samsa_image_delta_free(d);
    samsa_image_put(empty);
}

/* Kafka's ClusterDelta refuses a fence, unfence, change or unregister of a
 * broker not registered, or registered with another epoch, and unknown
 * Fenced / InControlledShutdown values. */
static void
test_image_broker_bad_records(void **state)
{
    samsa_MetadataRecords_any_t  rec;

    (void) state;
    rec = fence_rec(true, 2, 5);
    broker_refused(&rec, "FenceBrokerRecord for broker 2, which is not "
                         "registered");
    rec = fence_rec(true, 1, 4);
    broker_refused(&rec, "FenceBrokerRecord for broker 1 with epoch 4, but "
                         "its registration has epoch 5");
    rec = fence_rec(false, 7, 5);
    broker_refused(&rec, "UnfenceBrokerRecord for broker 7, which");
    rec = fence_rec(false, 1, 6);
    broker_refused(&rec, "UnfenceBrokerRecord for broker 1 with epoch 6");
    rec = change_rec(2, 5, -1, 0);
    broker_refused(&rec, "BrokerRegistrationChangeRecord for broker 2, "
                         "which is not registered");
    rec = change_rec(1, 3, -1, 0);
    broker_refused(&rec, "BrokerRegistrationChangeRecord for broker 1 with "
                         "epoch 3");
    rec = change_rec(1, 5, 2, 0);
    broker_refused(&rec, "unknown value for Fenced: 2");
    rec = change_rec(1, 5, 0, -1);
    broker_refused(&rec, "unknown value for InControlledShutdown: -1");
    rec = unregister_rec(9, 5);
    broker_refused(&rec, "UnregisterBrokerRecord for broker 9, which is not "
                         "registered");
    rec = unregister_rec(1, 6);
    broker_refused(&rec, "UnregisterBrokerRecord for broker 1 with epoch 6");
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
        cmocka_unit_test(test_image_broker_register),
        cmocka_unit_test(test_image_broker_fence),
        cmocka_unit_test(test_image_broker_unregister),
        cmocka_unit_test(test_image_broker_bad_records),
        cmocka_unit_test(test_image_ids),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
