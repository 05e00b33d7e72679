/* Unit tests for the generated KIP-848 consumer group record codecs
 * (proto/gen/ConsumerGroupRecords.c): each key and value round-trips, and
 * the keys and the values Samsa writes encode to Kafka 4.0's bytes. */
#include "unit.h"

#include <stdlib.h>

#include "proto/gen/ConsumerGroupRecords.h"
#include "rt.h"

RT_DEFINE(ConsumerGroupMetadataKey)
RT_DEFINE(ConsumerGroupMetadataValue)
RT_DEFINE(ConsumerGroupPartitionMetadataKey)
RT_DEFINE(ConsumerGroupPartitionMetadataValue)
RT_DEFINE(ConsumerGroupMemberMetadataKey)
RT_DEFINE(ConsumerGroupMemberMetadataValue)
RT_DEFINE(ConsumerGroupTargetAssignmentMetadataKey)
RT_DEFINE(ConsumerGroupTargetAssignmentMetadataValue)
RT_DEFINE(ConsumerGroupTargetAssignmentMemberKey)
RT_DEFINE(ConsumerGroupTargetAssignmentMemberValue)
RT_DEFINE(ConsumerGroupCurrentMemberAssignmentKey)
RT_DEFINE(ConsumerGroupCurrentMemberAssignmentValue)

static const samsa_uuid_t  tid = { { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
                                     13, 14, 15, 16 } };

static void
test_ConsumerGroupRecords_round_trip(void **state)
{
    samsa_ConsumerGroupMemberMetadataKey_t             mk, mko;
    samsa_ConsumerGroupMemberMetadataValue_t           mv, mvo;
    samsa_ConsumerGroupPartitionMetadataValue_t        pv, pvo;
    samsa_ConsumerGroupTargetAssignmentMemberValue_t   tv, tvo;
    samsa_ConsumerGroupCurrentMemberAssignmentValue_t  cv, cvo;
    samsa_ConsumerGroupMetadataValue_t                 gv, gvo;
    samsa_ConsumerGroupTargetAssignmentMetadataValue_t av, avo;
    samsa_slice_t        topics[2] = { S("a"), S("b") };
    samsa_slice_t        racks[1] = { S("r1") };
    int32_t              parts[2] = { 0, 3 };
    samsa_CGRecPartitionRacks_t     pr = { 0, racks, 1 };
    samsa_CGRecTopicMetadata_t      tm = { tid, S("a"), 4, &pr, 1 };
    samsa_CGRecTargetPartitions_t   tp = { tid, parts, 2 };
    samsa_CGRecMemberPartitions_t   cp = { tid, parts, 2 };
    samsa_CGRecMemberPartitions_t   rp = { tid, parts + 1, 1 };
    samsa_arena_t        arena;
    samsa_buf_t          buf;

    (void) state;
    samsa_arena_init(&arena);
    samsa_ConsumerGroupMemberMetadataKey_init(&mk);
    mk.GroupId = S("g");
    mk.MemberId = S("m-1");
    rt_ConsumerGroupMemberMetadataKey(5, &mk, &mko, &arena, &buf);
    assert_true(samsa_slice_eq_cstr(mko.MemberId, "m-1"));
    samsa_buf_fini(&buf);

    samsa_ConsumerGroupMemberMetadataValue_init(&mv);
    mv.InstanceId = S("i-1");
    mv.RackId = SAMSA_SLICE_NULL;
    mv.ServerAssignor = SAMSA_SLICE_NULL;
    mv.ClientId = S("c");
    mv.ClientHost = S("/127.0.0.1");
    mv.SubscribedTopicNames = topics;
    mv.SubscribedTopicNames_cnt = 2;
    mv.SubscribedTopicRegex = S("x.*");
    mv.RebalanceTimeoutMs = 30000;
    rt_ConsumerGroupMemberMetadataValue(0, &mv, &mvo, &arena, &buf);
    assert_true(samsa_slice_eq_cstr(mvo.InstanceId, "i-1"));
    assert_null(mvo.RackId.ptr);
    assert_null(mvo.ServerAssignor.ptr);
    assert_int_equal(mvo.SubscribedTopicNames_cnt, 2);
    assert_true(samsa_slice_eq_cstr(mvo.SubscribedTopicNames[1], "b"));
    assert_true(samsa_slice_eq_cstr(mvo.SubscribedTopicRegex, "x.*"));
    assert_int_equal(mvo.RebalanceTimeoutMs, 30000);
    samsa_buf_fini(&buf);

    samsa_ConsumerGroupPartitionMetadataValue_init(&pv);
    pv.Epoch = 7;
    pv.Topics = &tm;
    pv.Topics_cnt = 1;
    rt_ConsumerGroupPartitionMetadataValue(0, &pv, &pvo, &arena, &buf);
    assert_int_equal(pvo.Epoch, 7);
    assert_int_equal(pvo.Topics[0].NumPartitions, 4);
    assert_memory_equal(pvo.Topics[0].TopicId.b, tid.b, 16);
    assert_true(samsa_slice_eq_cstr(pvo.Topics[0].PartitionRacks[0].Racks[0],
                                    "r1"));
    samsa_buf_fini(&buf);

    samsa_ConsumerGroupTargetAssignmentMemberValue_init(&tv);
    tv.TopicPartitions = &tp;
    tv.TopicPartitions_cnt = 1;
    rt_ConsumerGroupTargetAssignmentMemberValue(0, &tv, &tvo, &arena, &buf);
    assert_int_equal(tvo.TopicPartitions[0].Partitions[1], 3);
    samsa_buf_fini(&buf);

    samsa_ConsumerGroupCurrentMemberAssignmentValue_init(&cv);
    cv.MemberEpoch = 9;
    cv.PreviousMemberEpoch = 8;
    cv.State = 1;
    cv.AssignedPartitions = &cp;
    cv.AssignedPartitions_cnt = 1;
    cv.PartitionsPendingRevocation = &rp;
    cv.PartitionsPendingRevocation_cnt = 1;
    rt_ConsumerGroupCurrentMemberAssignmentValue(0, &cv, &cvo, &arena, &buf);
    assert_int_equal(cvo.MemberEpoch, 9);
    assert_int_equal(cvo.PreviousMemberEpoch, 8);
    assert_int_equal(cvo.State, 1);
    assert_int_equal(cvo.AssignedPartitions[0].Partitions_cnt, 2);
    assert_int_equal(cvo.PartitionsPendingRevocation[0].Partitions[0], 3);
    samsa_buf_fini(&buf);

    samsa_ConsumerGroupMetadataValue_init(&gv);
    gv.Epoch = 12;
    rt_ConsumerGroupMetadataValue(0, &gv, &gvo, &arena, &buf);
    assert_int_equal(gvo.Epoch, 12);
    samsa_buf_fini(&buf);
    samsa_ConsumerGroupTargetAssignmentMetadataValue_init(&av);
    av.AssignmentEpoch = 11;
    rt_ConsumerGroupTargetAssignmentMetadataValue(0, &av, &avo, &arena,
                                                  &buf);
    assert_int_equal(avo.AssignmentEpoch, 11);
    samsa_buf_fini(&buf);
    samsa_arena_fini(&arena);
}

static void
test_ConsumerGroupRecords_keys(void **state)
{
    static const uint8_t  gkey[] = { 0x00, 0x01, 'g' };
    static const uint8_t  mkey[] = { 0x00, 0x01, 'g', 0x00, 0x02, 'm', '1' };
    samsa_ConsumerGroupMetadataKey_t                  k3, k3o;
    samsa_ConsumerGroupPartitionMetadataKey_t         k4, k4o;
    samsa_ConsumerGroupTargetAssignmentMetadataKey_t  k6, k6o;
    samsa_ConsumerGroupTargetAssignmentMemberKey_t    k7, k7o;
    samsa_ConsumerGroupCurrentMemberAssignmentKey_t   k8, k8o;
    samsa_ConsumerGroupMemberMetadataKey_t            k5;
    samsa_arena_t                                     arena;
    samsa_buf_t                                       buf;

    (void) state;
    samsa_arena_init(&arena);
    samsa_ConsumerGroupMetadataKey_init(&k3);
    k3.GroupId = S("g");
    RT_ENCODES_TO(ConsumerGroupMetadataKey, 3, &k3, gkey, sizeof(gkey));
    rt_ConsumerGroupMetadataKey(3, &k3, &k3o, &arena, &buf);
    samsa_buf_fini(&buf);
    samsa_ConsumerGroupPartitionMetadataKey_init(&k4);
    k4.GroupId = S("g");
    RT_ENCODES_TO(ConsumerGroupPartitionMetadataKey, 4, &k4, gkey,
                  sizeof(gkey));
    rt_ConsumerGroupPartitionMetadataKey(4, &k4, &k4o, &arena, &buf);
    samsa_buf_fini(&buf);
    samsa_ConsumerGroupTargetAssignmentMetadataKey_init(&k6);
    k6.GroupId = S("g");
    RT_ENCODES_TO(ConsumerGroupTargetAssignmentMetadataKey, 6, &k6, gkey,
                  sizeof(gkey));
    rt_ConsumerGroupTargetAssignmentMetadataKey(6, &k6, &k6o, &arena, &buf);
    samsa_buf_fini(&buf);
    samsa_ConsumerGroupMemberMetadataKey_init(&k5);
    k5.GroupId = S("g");
    k5.MemberId = S("m1");
    RT_ENCODES_TO(ConsumerGroupMemberMetadataKey, 5, &k5, mkey, sizeof(mkey));
    samsa_ConsumerGroupTargetAssignmentMemberKey_init(&k7);
    k7.GroupId = S("g");
    k7.MemberId = S("m1");
    RT_ENCODES_TO(ConsumerGroupTargetAssignmentMemberKey, 7, &k7, mkey,
                  sizeof(mkey));
    rt_ConsumerGroupTargetAssignmentMemberKey(7, &k7, &k7o, &arena, &buf);
    samsa_buf_fini(&buf);
    samsa_ConsumerGroupCurrentMemberAssignmentKey_init(&k8);
    k8.GroupId = S("g");
    k8.MemberId = S("m1");
    RT_ENCODES_TO(ConsumerGroupCurrentMemberAssignmentKey, 8, &k8, mkey,
                  sizeof(mkey));
    rt_ConsumerGroupCurrentMemberAssignmentKey(8, &k8, &k8o, &arena, &buf);
    samsa_buf_fini(&buf);
    samsa_arena_fini(&arena);
}

/* Kafka's flexible value v0: compact arrays and an empty tagged-field
 * section after each struct. */
static void
test_ConsumerGroupRecords_value_bytes(void **state)
{
    static const uint8_t  gval[] = { 0x00, 0x00, 0x00, 0x05, 0x00 };
    static const uint8_t  cval[] = {
        0x00, 0x00, 0x00, 0x03,                 /* MemberEpoch */
        0x00, 0x00, 0x00, 0x02,                 /* PreviousMemberEpoch */
        0x01,                                   /* State: unrevoked */
        0x02,                                   /* one topic */
        1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
        0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03,
        0x00,                                   /* the topic's tags */
        0x01,                                   /* nothing pending */
        0x00,                                   /* the value's tags */
    };
    int32_t                                            parts[2] = { 0, 3 };
    samsa_CGRecMemberPartitions_t                      cp = { tid, parts, 2 };
    samsa_ConsumerGroupMetadataValue_t                 gv;
    samsa_ConsumerGroupCurrentMemberAssignmentValue_t  cv;

    (void) state;
    samsa_ConsumerGroupMetadataValue_init(&gv);
    gv.Epoch = 5;
    RT_ENCODES_TO(ConsumerGroupMetadataValue, 0, &gv, gval, sizeof(gval));
    samsa_ConsumerGroupCurrentMemberAssignmentValue_init(&cv);
    cv.MemberEpoch = 3;
    cv.PreviousMemberEpoch = 2;
    cv.State = 1;
    cv.AssignedPartitions = &cp;
    cv.AssignedPartitions_cnt = 1;
    RT_ENCODES_TO(ConsumerGroupCurrentMemberAssignmentValue, 0, &cv, cval,
                  sizeof(cval));
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_ConsumerGroupRecords_round_trip),
        cmocka_unit_test(test_ConsumerGroupRecords_keys),
        cmocka_unit_test(test_ConsumerGroupRecords_value_bytes),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
