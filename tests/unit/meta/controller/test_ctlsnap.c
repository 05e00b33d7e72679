/* Unit tests for meta/controller/ctlsnap.c: an image written as records
 * (the quorum's snapshot) replays into an equal image (features, brokers,
 * topics with ids, partitions and configs, broker configs, client
 * quotas, ACLs, the next producer id); entries replay at their offsets; a
 * corrupt record or a short entry is refused. */
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>

#include "meta/controller/ctlsnap.h"
#include "meta/image.h"

static void
replay_ok(samsa_image_delta_t *d, const samsa_MetadataRecords_any_t *rec,
          int64_t offset)
{
    char  err[512] = "";

    if (samsa_image_delta_replay(d, rec, offset, err, sizeof(err))
        != SAMSA_ERR_NONE) {
        fail_msg("replay failed: %s", err);
    }
}

static samsa_uuid_t
id_of(int n)
{
    samsa_uuid_t  id;

    memset(&id, 0, sizeof(id));
    id.b[0] = 0x40;
    id.b[15] = (uint8_t) n;
    return id;
}

/* An image with one of everything ctlsnap writes. */
static samsa_image_t *
sample_image(void)
{
    samsa_MetadataRecords_any_t  rec;
    samsa_image_t               *empty = samsa_image_new_empty(), *img;
    samsa_image_delta_t         *d = samsa_image_delta_new(empty);
    int32_t                      reps[1] = { 1 };
    int64_t                      off = 0;
    int                          p;

    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_FeatureLevelRecord;
    samsa_FeatureLevelRecord_init(&rec.u.FeatureLevelRecord);
    rec.u.FeatureLevelRecord.Name =
        samsa_slice_cstr(SAMSA_META_METADATA_VERSION_NAME);
    rec.u.FeatureLevelRecord.FeatureLevel = SAMSA_META_METADATA_VERSION;
    replay_ok(d, &rec, off++);
    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_RegisterBrokerRecord;
    samsa_RegisterBrokerRecord_init(&rec.u.RegisterBrokerRecord);
    rec.u.RegisterBrokerRecord.BrokerId = 1;
    rec.u.RegisterBrokerRecord.BrokerEpoch = 4;
    rec.u.RegisterBrokerRecord.Fenced = false;
    rec.u.RegisterBrokerRecord.Rack = samsa_slice_cstr("r1");
    {
        samsa_RegisterBrokerEndpoint_t  ep;
        samsa_RegisterBrokerFeature_t   feat;

        samsa_RegisterBrokerEndpoint_init(&ep);
        ep.Name = samsa_slice_cstr("PLAINTEXT");
        ep.Host = samsa_slice_cstr("h1");
        ep.Port = 9092;
        samsa_RegisterBrokerFeature_init(&feat);
        feat.Name = samsa_slice_cstr(SAMSA_META_METADATA_VERSION_NAME);
        feat.MinSupportedVersion = 7;
        feat.MaxSupportedVersion = 7;
        rec.version = 1;            /* InControlledShutdown */
        rec.u.RegisterBrokerRecord.InControlledShutdown = true;
        rec.u.RegisterBrokerRecord.EndPoints = &ep;
        rec.u.RegisterBrokerRecord.EndPoints_cnt = 1;
        rec.u.RegisterBrokerRecord.Features = &feat;
        rec.u.RegisterBrokerRecord.Features_cnt = 1;
        replay_ok(d, &rec, off++);
    }
    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_TopicRecord;
    samsa_TopicRecord_init(&rec.u.TopicRecord);
    rec.u.TopicRecord.Name = samsa_slice_cstr("orders");
    rec.u.TopicRecord.TopicId = id_of(7);
    replay_ok(d, &rec, off++);
    for (p = 0; p < 3; p++) {
        memset(&rec, 0, sizeof(rec));
        rec.type = SAMSA_MetadataRecords_PartitionRecord;
        samsa_PartitionRecord_init(&rec.u.PartitionRecord);
        rec.u.PartitionRecord.PartitionId = p;
        rec.u.PartitionRecord.TopicId = id_of(7);
        rec.u.PartitionRecord.Replicas = reps;
        rec.u.PartitionRecord.Replicas_cnt = 1;
        rec.u.PartitionRecord.Isr = reps;
        rec.u.PartitionRecord.Isr_cnt = 1;
        rec.u.PartitionRecord.Leader = p == 2 ? -1 : 1;    /* fenced */
        rec.u.PartitionRecord.LeaderEpoch = p;
        rec.u.PartitionRecord.PartitionEpoch = 2 * p;
        replay_ok(d, &rec, off++);
    }
    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_ConfigRecord;
    samsa_ConfigRecord_init(&rec.u.ConfigRecord);
    rec.u.ConfigRecord.ResourceType = SAMSA_CONFIG_RESOURCE_TOPIC;
    rec.u.ConfigRecord.ResourceName = samsa_slice_cstr("orders");
    rec.u.ConfigRecord.Name = samsa_slice_cstr("retention.ms");
    rec.u.ConfigRecord.Value = samsa_slice_cstr("1000");
    replay_ok(d, &rec, off++);
    rec.u.ConfigRecord.ResourceType = SAMSA_CONFIG_RESOURCE_BROKER;
    rec.u.ConfigRecord.ResourceName = samsa_slice_cstr("");
    rec.u.ConfigRecord.Name = samsa_slice_cstr("log.retention.ms");
    rec.u.ConfigRecord.Value = samsa_slice_cstr("5000");
    replay_ok(d, &rec, off++);
    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_ClientQuotaRecord;
    samsa_ClientQuotaRecord_init(&rec.u.ClientQuotaRecord);
    {
        samsa_ClientQuotaRecordEntity_t  e;

        memset(&e, 0, sizeof(e));
        e.EntityType = samsa_slice_cstr("user");
        e.EntityName = samsa_slice_cstr("alice");
        rec.u.ClientQuotaRecord.Entity = &e;
        rec.u.ClientQuotaRecord.Entity_cnt = 1;
        rec.u.ClientQuotaRecord.Key = samsa_slice_cstr("producer_byte_rate");
        rec.u.ClientQuotaRecord.Value = 1024.5;
        replay_ok(d, &rec, off++);
    }
    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_AccessControlEntryRecord;
    samsa_AccessControlEntryRecord_init(&rec.u.AccessControlEntryRecord);
    rec.u.AccessControlEntryRecord.Id = id_of(9);
    rec.u.AccessControlEntryRecord.ResourceType = SAMSA_ACL_RESOURCE_TOPIC;
    rec.u.AccessControlEntryRecord.ResourceName = samsa_slice_cstr("ord");
    rec.u.AccessControlEntryRecord.PatternType = SAMSA_ACL_PATTERN_PREFIXED;
    rec.u.AccessControlEntryRecord.Principal = samsa_slice_cstr("User:alice");
    rec.u.AccessControlEntryRecord.Host = samsa_slice_cstr("10.0.0.1");
    rec.u.AccessControlEntryRecord.Operation = SAMSA_ACL_OP_READ;
    rec.u.AccessControlEntryRecord.PermissionType =
        SAMSA_ACL_PERMISSION_DENY;
    replay_ok(d, &rec, off++);
    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_ProducerIdsRecord;
    samsa_ProducerIdsRecord_init(&rec.u.ProducerIdsRecord);
    rec.u.ProducerIdsRecord.NextProducerId = 3000;
    replay_ok(d, &rec, off++);
    img = samsa_image_delta_apply(d);
    samsa_image_delta_free(d);
    samsa_image_put(empty);
    return img;
}

static samsa_image_t *
restore(const samsa_buf_t *buf, int64_t offset)
{
    samsa_image_t        *empty = samsa_image_new_empty(), *img;
    samsa_image_delta_t  *d = samsa_image_delta_new(empty);
    char                  err[512] = "";

    if (samsa_ctlsnap_replay(d, buf->data, buf->len, UINT32_MAX, offset,
                             true, err, sizeof(err)) != SAMSA_ERR_NONE) {
        fail_msg("snapshot replay failed: %s", err);
    }
    img = samsa_image_delta_apply(d);
    samsa_image_delta_free(d);
    samsa_image_put(empty);
    return img;
}

static void
test_ctlsnap_round_trip(void **state)
{
    samsa_image_t               *img = sample_image(), *back;
    const samsa_image_topic_t   *t, *t2;
    const samsa_image_broker_t  *b;
    const samsa_image_config_t  *c;
    samsa_buf_t                  buf, again;
    uint32_t                     count, count2;
    double                       v = 0;
    const char                  *name, *quota_key = NULL;
    int8_t                       type;
    size_t                       n, i;
    int                          p;

    (void) state;
    samsa_buf_init(&buf, 256);
    samsa_ctlsnap_write(img, &buf, &count);
    /* feature, broker, topic, 3 partitions, 1 topic config, broker
     * config, quota config, an ACL, producer ids */
    assert_int_equal(count, 11);
    back = restore(&buf, 41);
    assert_int_equal(samsa_image_offset(back), 41);
    assert_int_equal(samsa_image_feature_level(
                         back, SAMSA_META_METADATA_VERSION_NAME),
                     SAMSA_META_METADATA_VERSION);
    t = samsa_image_topic_find(img, "orders", 6);
    t2 = samsa_image_topic_find(back, "orders", 6);
    assert_non_null(t2);
    assert_true(samsa_uuid_eq(t->id, t2->id));
    assert_int_equal(t2->npartitions, 3);
    for (p = 0; p < 3; p++) {
        assert_int_equal(t2->partitions[p].leader_epoch, p);
        assert_int_equal(t2->partitions[p].partition_epoch, 2 * p);
        assert_int_equal(t2->partitions[p].nreplicas, 1);
        assert_int_equal(t2->partitions[p].replicas[0], 1);
        assert_int_equal(t2->partitions[p].leader, p == 2 ? -1 : 1);
        assert_int_equal(t2->partitions[p].nisr, 1);
    }
    assert_string_equal(samsa_image_topic_config(t2, "retention.ms"), "1000");
    c = samsa_image_resource_configs(back, SAMSA_CONFIG_RESOURCE_BROKER, "",
                                     &n);
    assert_int_equal(n, 1);
    assert_string_equal(c[0].value, "5000");
    assert_int_equal(samsa_image_resource_count(back),
                     samsa_image_resource_count(img));
    for (i = 0; i < samsa_image_resource_count(back); i++) {
        (void) samsa_image_resource_at(back, i, &type, &name, &n);
        if (type == SAMSA_IMAGE_RESOURCE_CLIENT_QUOTA) {
            quota_key = name;
        }
    }
    assert_non_null(quota_key);
    assert_true(samsa_image_client_quota(back, quota_key,
                                         "producer_byte_rate", &v));
    assert_true(v == 1024.5);
    b = samsa_image_broker_find(back, 1);
    assert_non_null(b);
    assert_int_equal(b->epoch, 4);
    assert_false(b->fenced);
    assert_string_equal(b->rack, "r1");
    assert_true(b->in_controlled_shutdown);
    assert_int_equal(b->nendpoints, 1);
    assert_string_equal(b->endpoints[0].listener, "PLAINTEXT");
    assert_string_equal(b->endpoints[0].host, "h1");
    assert_int_equal(b->endpoints[0].port, 9092);
    assert_int_equal(b->nfeatures, 1);
    assert_int_equal(b->features[0].max_version, 7);
    assert_int_equal(samsa_image_next_producer_id(back), 3000);
    assert_int_equal(samsa_acl_set_count(samsa_image_acls(back)), 1);
    {
        const samsa_acl_t  *a = samsa_acl_set_at(samsa_image_acls(back), 0);

        assert_true(samsa_uuid_eq(a->id, id_of(9)));
        assert_string_equal(a->resource_name, "ord");
        assert_int_equal(a->pattern_type, SAMSA_ACL_PATTERN_PREFIXED);
        assert_string_equal(a->principal, "User:alice");
        assert_string_equal(a->host, "10.0.0.1");
        assert_int_equal(a->operation, SAMSA_ACL_OP_READ);
        assert_int_equal(a->permission, SAMSA_ACL_PERMISSION_DENY);
    }
    /* writing the restored image gives the same bytes */
    samsa_buf_init(&again, 256);
    samsa_ctlsnap_write(back, &again, &count2);
    assert_int_equal(count2, count);
    assert_int_equal(again.len, buf.len);
    assert_memory_equal(again.data, buf.data, buf.len);
    samsa_buf_fini(&again);
    samsa_buf_fini(&buf);
    samsa_image_put(back);
    samsa_image_put(img);
}

static void
test_ctlsnap_entries_and_corruption(void **state)
{
    samsa_MetadataRecords_any_t  rec;
    samsa_image_t               *empty = samsa_image_new_empty(), *img;
    samsa_image_delta_t         *d;
    samsa_buf_t                  buf;
    char                         err[512] = "";

    (void) state;
    samsa_buf_init(&buf, 64);
    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_TopicRecord;
    samsa_TopicRecord_init(&rec.u.TopicRecord);
    rec.u.TopicRecord.Name = samsa_slice_cstr("a");
    rec.u.TopicRecord.TopicId = id_of(1);
    samsa_ctlsnap_add(&buf, &rec);
    rec.u.TopicRecord.Name = samsa_slice_cstr("b");
    rec.u.TopicRecord.TopicId = id_of(2);
    samsa_ctlsnap_add(&buf, &rec);
    /* an entry of 2 records at offsets 10, 11 */
    d = samsa_image_delta_new(empty);
    assert_int_equal(samsa_ctlsnap_replay(d, buf.data, buf.len, 2, 10, false,
                                          err, sizeof(err)), SAMSA_ERR_NONE);
    img = samsa_image_delta_apply(d);
    samsa_image_delta_free(d);
    assert_int_equal(samsa_image_offset(img), 11);
    assert_int_equal(samsa_image_topic_count(img), 2);
    samsa_image_put(img);
    /* an entry that says 3 records but holds 2 */
    d = samsa_image_delta_new(empty);
    assert_int_equal(samsa_ctlsnap_replay(d, buf.data, buf.len, 3, 0, false,
                                          err, sizeof(err)),
                     SAMSA_ERR__BAD_MSG);
    samsa_image_delta_free(d);
    /* a length past the end */
    buf.data[3] = 0xff;
    d = samsa_image_delta_new(empty);
    assert_int_equal(samsa_ctlsnap_replay(d, buf.data, buf.len, UINT32_MAX, 0,
                                          false, err, sizeof(err)),
                     SAMSA_ERR__BAD_MSG);
    assert_non_null(strstr(err, "bad length"));
    samsa_image_delta_free(d);
    samsa_buf_fini(&buf);
    samsa_image_put(empty);
}

/* SCRAM credentials: replayed, looked up, written into a snapshot as
 * UserScramCredentialRecords and read back the same; a removal takes one
 * mechanism away; a record with keys of the wrong size is refused. */
static void
test_ctlsnap_scram(void **state)
{
    samsa_MetadataRecords_any_t  rec;
    samsa_image_t               *empty = samsa_image_new_empty(), *img, *back;
    samsa_image_delta_t         *d = samsa_image_delta_new(empty);
    samsa_scram_cred_t           want, got;
    samsa_buf_t                  buf;
    uint32_t                     count;
    const uint8_t                salt[8] = "saltsalt";
    char                         err[512];

    (void) state;
    assert_int_equal(samsa_scram_cred_from_password(SAMSA_SCRAM_SHA_512, "pw",
                                                    salt, sizeof(salt), 4096,
                                                    &want), SAMSA_ERR_NONE);
    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_UserScramCredentialRecord;
    samsa_UserScramCredentialRecord_init(&rec.u.UserScramCredentialRecord);
    rec.u.UserScramCredentialRecord.Name = samsa_slice_cstr("alice");
    rec.u.UserScramCredentialRecord.Mechanism = 2;
    rec.u.UserScramCredentialRecord.Salt =
        (samsa_slice_t) { (const char *) salt, sizeof(salt) };
    rec.u.UserScramCredentialRecord.StoredKey =
        (samsa_slice_t) { (const char *) want.stored_key, 64 };
    rec.u.UserScramCredentialRecord.ServerKey =
        (samsa_slice_t) { (const char *) want.server_key, 64 };
    rec.u.UserScramCredentialRecord.Iterations = 4096;
    replay_ok(d, &rec, 0);
    rec.u.UserScramCredentialRecord.Mechanism = 1;
    assert_int_equal(samsa_image_delta_replay(d, &rec, 1, err, sizeof(err)),
                     SAMSA_ERR__BAD_MSG);     /* 64-byte keys for SHA-256 */
    rec.u.UserScramCredentialRecord.StoredKey.len = 32;
    rec.u.UserScramCredentialRecord.ServerKey.len = 32;
    replay_ok(d, &rec, 1);
    img = samsa_image_delta_apply(d);
    samsa_image_delta_free(d);
    assert_true(samsa_image_scram_credential(img, "alice",
                                             SAMSA_SCRAM_SHA_512, &got));
    assert_int_equal(got.iterations, 4096);
    assert_memory_equal(got.stored_key, want.stored_key, 64);
    assert_memory_equal(got.server_key, want.server_key, 64);
    assert_memory_equal(got.salt, salt, sizeof(salt));
    assert_false(samsa_image_scram_credential(img, "bob",
                                              SAMSA_SCRAM_SHA_512, &got));

    samsa_buf_init(&buf, 256);
    samsa_ctlsnap_write(img, &buf, &count);
    assert_int_equal(count, 2);
    back = restore(&buf, 5);
    assert_true(samsa_image_scram_credential(back, "alice",
                                             SAMSA_SCRAM_SHA_512, &got));
    assert_memory_equal(got.stored_key, want.stored_key, 64);
    assert_true(samsa_image_scram_credential(back, "alice",
                                             SAMSA_SCRAM_SHA_256, &got));

    d = samsa_image_delta_new(back);
    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_RemoveUserScramCredentialRecord;
    samsa_RemoveUserScramCredentialRecord_init(
        &rec.u.RemoveUserScramCredentialRecord);
    rec.u.RemoveUserScramCredentialRecord.Name = samsa_slice_cstr("alice");
    rec.u.RemoveUserScramCredentialRecord.Mechanism = 2;
    replay_ok(d, &rec, 6);
    samsa_image_put(img);
    img = samsa_image_delta_apply(d);
    samsa_image_delta_free(d);
    assert_false(samsa_image_scram_credential(img, "alice",
                                              SAMSA_SCRAM_SHA_512, &got));
    assert_true(samsa_image_scram_credential(img, "alice",
                                             SAMSA_SCRAM_SHA_256, &got));
    samsa_buf_fini(&buf);
    samsa_image_put(img);
    samsa_image_put(back);
    samsa_image_put(empty);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ctlsnap_round_trip),
        cmocka_unit_test(test_ctlsnap_entries_and_corruption),
        cmocka_unit_test(test_ctlsnap_scram),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
