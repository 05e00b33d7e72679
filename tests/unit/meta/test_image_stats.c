/* Unit tests for meta/image_stats.c over an image built from metadata
 * records: Kafka's ReplicaManager gauges for one node (PartitionCount,
 * LeaderCount, UnderReplicatedPartitions, UnderMinIsr/AtMinIsr counts,
 * a reassignment's adding replicas not counted as missing) and the
 * controller's for the cluster (offline partitions, preferred-replica
 * imbalance, fenced and active brokers). */
#include "unit.h"

#include <stdio.h>
#include <string.h>

#include "meta/image_stats.h"

static void
replay_ok(samsa_image_delta_t *d, samsa_MetadataRecords_any_t *rec,
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
add_broker(samsa_image_delta_t *d, int32_t id, bool fenced, int64_t offset)
{
    samsa_MetadataRecords_any_t  rec;

    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_RegisterBrokerRecord;
    rec.version = 1;
    samsa_RegisterBrokerRecord_init(&rec.u.RegisterBrokerRecord);
    rec.u.RegisterBrokerRecord.BrokerId = id;
    rec.u.RegisterBrokerRecord.BrokerEpoch = offset;
    rec.u.RegisterBrokerRecord.Fenced = fenced;
    replay_ok(d, &rec, offset);
}

static samsa_uuid_t
topic_id(int n)
{
    samsa_uuid_t  id;

    memset(&id, 0, sizeof(id));
    id.b[0] = 0x40;
    id.b[15] = (uint8_t) n;
    return id;
}

static int64_t
add_topic(samsa_image_delta_t *d, const char *name, int n, int64_t offset)
{
    samsa_MetadataRecords_any_t  rec;

    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_TopicRecord;
    samsa_TopicRecord_init(&rec.u.TopicRecord);
    rec.u.TopicRecord.Name = samsa_slice_cstr(name);
    rec.u.TopicRecord.TopicId = topic_id(n);
    replay_ok(d, &rec, offset);
    return offset + 1;
}

/* Partition p of topic n: replicas, ISR, leader, adding replicas. */
static int64_t
add_partition(samsa_image_delta_t *d, int n, int32_t p, const int32_t *reps,
              int nreps, const int32_t *isr, int nisr, int32_t leader,
              const int32_t *adding, int nadding, int64_t offset)
{
    samsa_MetadataRecords_any_t  rec;

    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_PartitionRecord;
    samsa_PartitionRecord_init(&rec.u.PartitionRecord);
    rec.u.PartitionRecord.PartitionId = p;
    rec.u.PartitionRecord.TopicId = topic_id(n);
    rec.u.PartitionRecord.Replicas = (int32_t *) reps;
    rec.u.PartitionRecord.Replicas_cnt = nreps;
    rec.u.PartitionRecord.Isr = (int32_t *) isr;
    rec.u.PartitionRecord.Isr_cnt = nisr;
    rec.u.PartitionRecord.AddingReplicas = (int32_t *) adding;
    rec.u.PartitionRecord.AddingReplicas_cnt = nadding;
    rec.u.PartitionRecord.Leader = leader;
    rec.u.PartitionRecord.LeaderEpoch = 1;
    replay_ok(d, &rec, offset);
    return offset + 1;
}

static int64_t
add_topic_config(samsa_image_delta_t *d, const char *topic, const char *key,
                 const char *value, int64_t offset)
{
    samsa_MetadataRecords_any_t  rec;

    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_ConfigRecord;
    samsa_ConfigRecord_init(&rec.u.ConfigRecord);
    rec.u.ConfigRecord.ResourceType = 2;        /* TOPIC */
    rec.u.ConfigRecord.ResourceName = samsa_slice_cstr(topic);
    rec.u.ConfigRecord.Name = samsa_slice_cstr(key);
    rec.u.ConfigRecord.Value = samsa_slice_cstr(value);
    replay_ok(d, &rec, offset);
    return offset + 1;
}

/* Brokers 1, 2 (unfenced) and 3 (fenced).  Topic "a" (min.insync.
 * replicas 2): a-0 [1,2,3] ISR [1,2,3] led by 1; a-1 [1,2,3] ISR [1,2]
 * led by 1 (under-replicated, at min ISR); a-2 [2,1,3] ISR [1] led by 1
 * (under-replicated, under min ISR, not its preferred leader); a-3
 * [2,3,1] ISR [2] led by 2; a-4 [3,2] ISR [3] no leader (offline).
 * Topic "b" (min ISR the broker's, 1): b-0 [1,2] + adding 2 ISR [1] led
 * by 1 (a move from [1] to [1,2]: RF 1, not under-replicated); b-1 [2]
 * ISR [2] led by 2. */
static samsa_image_t *
stats_image(void)
{
    static const int32_t  r123[] = { 1, 2, 3 }, r213[] = { 2, 1, 3 },
                          r231[] = { 2, 3, 1 }, r32[] = { 3, 2 },
                          r12[] = { 1, 2 }, r1[] = { 1 }, r2[] = { 2 },
                          r3[] = { 3 };
    samsa_image_t        *empty = samsa_image_new_empty(), *img;
    samsa_image_delta_t  *d = samsa_image_delta_new(empty);
    int64_t               o = 10;

    add_broker(d, 1, false, o++);
    add_broker(d, 2, false, o++);
    add_broker(d, 3, true, o++);
    o = add_topic(d, "a", 1, o);
    o = add_partition(d, 1, 0, r123, 3, r123, 3, 1, NULL, 0, o);
    o = add_partition(d, 1, 1, r123, 3, r12, 2, 1, NULL, 0, o);
    o = add_partition(d, 1, 2, r213, 3, r1, 1, 1, NULL, 0, o);
    o = add_partition(d, 1, 3, r231, 3, r2, 1, 2, NULL, 0, o);
    o = add_partition(d, 1, 4, r32, 2, r3, 1, -1, NULL, 0, o);
    o = add_topic_config(d, "a", "min.insync.replicas", "2", o);
    o = add_topic(d, "b", 2, o);
    o = add_partition(d, 2, 0, r12, 2, r1, 1, 1, r2, 1, o);
    (void) add_partition(d, 2, 1, r2, 1, r2, 1, 2, NULL, 0, o);
    img = samsa_image_delta_apply(d);
    samsa_image_delta_free(d);
    samsa_image_put(empty);
    return img;
}

static void
test_image_stats_node(void **state)
{
    samsa_image_t        *img = stats_image();
    samsa_image_stats_t   s;

    (void) state;
    samsa_image_stats(img, 1, 1, &s);
    assert_int_equal(s.partitions, 5);          /* a-0..a-3, b-0 */
    assert_int_equal(s.leaders, 4);             /* a-0, a-1, a-2, b-0 */
    assert_int_equal(s.under_replicated, 2);    /* a-1, a-2; not b-0 */
    assert_int_equal(s.under_min_isr, 1);       /* a-2 */
    assert_int_equal(s.at_min_isr, 2);          /* a-1; b-0 (min 1) */
    samsa_image_stats(img, 2, 1, &s);
    assert_int_equal(s.partitions, 7);
    assert_int_equal(s.leaders, 2);             /* a-3, b-1 */
    assert_int_equal(s.under_replicated, 1);    /* a-3 */
    assert_int_equal(s.under_min_isr, 1);       /* a-3 (min 2) */
    assert_int_equal(s.at_min_isr, 1);          /* b-1 */
    /* the broker's default applies to "b" only */
    samsa_image_stats(img, 2, 2, &s);
    assert_int_equal(s.under_min_isr, 2);
    assert_int_equal(s.at_min_isr, 0);
    samsa_image_stats(img, 3, 1, &s);
    assert_int_equal(s.partitions, 5);
    assert_int_equal(s.leaders, 0);
    assert_int_equal(s.under_replicated, 0);
    samsa_image_put(img);
}

static void
test_image_stats_cluster(void **state)
{
    samsa_image_t        *img = stats_image();
    samsa_image_stats_t   s;

    (void) state;
    samsa_image_stats(img, 1, 1, &s);
    assert_int_equal(s.topics, 2);
    assert_int_equal(s.global_partitions, 7);
    assert_int_equal(s.offline, 1);             /* a-4 */
    assert_int_equal(s.preferred_imbalance, 1); /* a-2 */
    assert_int_equal(s.fenced_brokers, 1);
    assert_int_equal(s.active_brokers, 2);
    samsa_image_put(img);
}

static void
test_image_stats_min_isr_and_rf(void **state)
{
    samsa_image_t               *img = stats_image();
    const samsa_image_topic_t   *a = samsa_image_topic_find(img, "a", 1),
                                *b = samsa_image_topic_find(img, "b", 1);

    (void) state;
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(samsa_image_topic_min_isr(a, 1), 2);
    assert_int_equal(samsa_image_topic_min_isr(b, 3), 3);
    assert_int_equal(samsa_image_partition_rf(&b->partitions[0]), 1);
    assert_int_equal(samsa_image_partition_rf(&a->partitions[4]), 2);
    assert_true(samsa_image_partition_under_replicated(&a->partitions[1], 1));
    assert_false(samsa_image_partition_under_replicated(&a->partitions[1], 2));
    assert_false(samsa_image_partition_under_replicated(&b->partitions[0], 1));
    samsa_image_put(img);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_image_stats_node),
        cmocka_unit_test(test_image_stats_cluster),
        cmocka_unit_test(test_image_stats_min_isr_and_rf),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
