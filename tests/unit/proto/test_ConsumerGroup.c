/* Unit tests for the generated KIP-848 codecs: ConsumerGroupHeartbeat and
 * ConsumerGroupDescribe (proto/gen/ConsumerGroup{Heartbeat,Describe}.c):
 * round trips over every version (null and present assignment: Kafka's
 * nullable struct) and bytes assembled by hand from Kafka's message
 * definitions. */
#include "unit.h"

#include <stdlib.h>

#include "proto/gen/ConsumerGroupDescribe.h"
#include "proto/gen/ConsumerGroupHeartbeat.h"
#include "rt.h"

RT_DEFINE(ConsumerGroupHeartbeatRequest)
RT_DEFINE(ConsumerGroupHeartbeatResponse)
RT_DEFINE(ConsumerGroupDescribeRequest)
RT_DEFINE(ConsumerGroupDescribeResponse)

static const samsa_uuid_t  TID = { { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
                                     13, 14, 15, 16 } };

/* Request v0 and v1 of a join: group "g", no member id, epoch 0, topic
 * "t", nothing owned; v1 has the (null) regex after the topic names. */
static void
test_ConsumerGroupHeartbeatRequest_bytes(void **state)
{
    static const uint8_t                 v0[] = {
        0x02, 'g', 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0xff, 0xff, 0xff, 0xff, 0x02, 0x02, 't', 0x00, 0x01, 0x00,
    };
    static const uint8_t                 v1[] = {
        0x02, 'g', 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0xff, 0xff, 0xff, 0xff, 0x02, 0x02, 't', 0x00, 0x00, 0x01, 0x00,
    };
    samsa_ConsumerGroupHeartbeatRequest_t m;
    samsa_slice_t                        topic = S("t");
    samsa_CGHeartbeatOwned_t             none[1];

    (void) state;
    samsa_ConsumerGroupHeartbeatRequest_init(&m);
    assert_int_equal(m.RebalanceTimeoutMs, -1);
    assert_null(m.InstanceId.ptr);
    assert_int_equal(m.TopicPartitions_cnt, -1);
    m.GroupId = S("g");
    m.MemberId = S("");
    m.SubscribedTopicNames = &topic;
    m.SubscribedTopicNames_cnt = 1;
    m.TopicPartitions = none;
    m.TopicPartitions_cnt = 0;
    RT_ENCODES_TO(ConsumerGroupHeartbeatRequest, 0, &m, v0, sizeof(v0));
    RT_ENCODES_TO(ConsumerGroupHeartbeatRequest, 1, &m, v1, sizeof(v1));
}

/* Response v0: member "m", epoch 1, interval 5000, assignment TID:[0];
 * then the same with a null assignment (marker -1). */
static void
test_ConsumerGroupHeartbeatResponse_bytes(void **state)
{
    static const uint8_t                  with[] = {
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 'm',
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x13, 0x88,
        0x01, 0x02, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
        0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    };
    static const uint8_t                  without[] = {
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 'm',
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x13, 0x88, 0xff, 0x00,
    };
    samsa_ConsumerGroupHeartbeatResponse_t m, out;
    int32_t                               p0 = 0;
    samsa_CGHeartbeatAssigned_t           tp = { TID, &p0, 1 };
    samsa_rd_t                            rd;
    samsa_arena_t                         arena;

    (void) state;
    samsa_ConsumerGroupHeartbeatResponse_init(&m);
    assert_true(m.Assignment_null);
    m.MemberId = S("m");
    m.MemberEpoch = 1;
    m.HeartbeatIntervalMs = 5000;
    RT_ENCODES_TO(ConsumerGroupHeartbeatResponse, 0, &m, without,
                  sizeof(without));
    m.Assignment_null = false;
    m.Assignment.TopicPartitions = &tp;
    m.Assignment.TopicPartitions_cnt = 1;
    RT_ENCODES_TO(ConsumerGroupHeartbeatResponse, 0, &m, with, sizeof(with));
    /* Kafka reads any negative marker as null, any other as a struct. */
    samsa_arena_init(&arena);
    samsa_rd_init(&rd, without, sizeof(without));
    assert_int_equal(samsa_ConsumerGroupHeartbeatResponse_decode(&rd, 1,
                                                                 &arena, &out),
                     SAMSA_ERR_NONE);
    assert_true(out.Assignment_null);
    samsa_rd_init(&rd, with, sizeof(with));
    assert_int_equal(samsa_ConsumerGroupHeartbeatResponse_decode(&rd, 1,
                                                                 &arena, &out),
                     SAMSA_ERR_NONE);
    assert_false(out.Assignment_null);
    assert_memory_equal(out.Assignment.TopicPartitions[0].TopicId.b, TID.b,
                        16);
    samsa_arena_fini(&arena);
}

static void
test_ConsumerGroupHeartbeat_round_trip(void **state)
{
    samsa_ConsumerGroupHeartbeatRequest_t   in, out;
    samsa_ConsumerGroupHeartbeatResponse_t  rin, rout;
    samsa_slice_t                           topics[2] = { S("a"), S("b") };
    int32_t                                 parts[2] = { 0, 3 };
    samsa_CGHeartbeatOwned_t                own = { TID, parts, 2 };
    samsa_CGHeartbeatAssigned_t             asg = { TID, parts, 2 };
    samsa_arena_t                           arena;
    samsa_buf_t                             buf;
    int16_t                                 v;
    int                                     nul;

    (void) state;
    samsa_arena_init(&arena);
    samsa_ConsumerGroupHeartbeatRequest_init(&in);
    in.GroupId = S("g");
    in.MemberId = S("m-1");
    in.MemberEpoch = 7;
    in.InstanceId = S("i");
    in.RackId = S("r");
    in.RebalanceTimeoutMs = 300000;
    in.SubscribedTopicNames = topics;
    in.SubscribedTopicNames_cnt = 2;
    in.SubscribedTopicRegex = S("a.*");
    in.ServerAssignor = S("range");
    in.TopicPartitions = &own;
    in.TopicPartitions_cnt = 1;
    for (v = 0; v <= SAMSA_ConsumerGroupHeartbeat_VERSION_MAX; v++) {
        rt_ConsumerGroupHeartbeatRequest(v, &in, &out, &arena, &buf);
        assert_int_equal(out.MemberEpoch, 7);
        assert_true(samsa_slice_eq_cstr(out.ServerAssignor, "range"));
        assert_int_equal(out.SubscribedTopicRegex.ptr != NULL, v >= 1);
        assert_int_equal(out.TopicPartitions[0].Partitions[1], 3);
        samsa_buf_fini(&buf);
        for (nul = 0; nul < 2; nul++) {
            samsa_ConsumerGroupHeartbeatResponse_init(&rin);
            rin.ErrorCode = 110;
            rin.ErrorMessage = S("fenced");
            rin.MemberEpoch = 3;
            rin.Assignment_null = nul;
            rin.Assignment.TopicPartitions = &asg;
            rin.Assignment.TopicPartitions_cnt = 1;
            rt_ConsumerGroupHeartbeatResponse(v, &rin, &rout, &arena, &buf);
            assert_int_equal(rout.ErrorCode, 110);
            assert_int_equal(rout.Assignment_null, nul);
            if (!nul) {
                assert_int_equal(rout.Assignment.TopicPartitions[0]
                                     .Partitions_cnt, 2);
            }
            samsa_buf_fini(&buf);
        }
    }
    samsa_arena_fini(&arena);
}

static void
test_ConsumerGroupDescribe_round_trip(void **state)
{
    samsa_ConsumerGroupDescribeRequest_t   in, out;
    samsa_ConsumerGroupDescribeResponse_t  rin, rout;
    samsa_slice_t                          ids[1] = { S("g") };
    samsa_slice_t                          topics[1] = { S("t") };
    int32_t                                parts[1] = { 2 };
    samsa_CGDescribedTopicPartitions_t     tp = { TID, S("t"), parts, 1 };
    samsa_CGDescribedMember_t              mem;
    samsa_CGDescribedGroup_t               g;
    samsa_arena_t                          arena;
    samsa_buf_t                            buf;
    int16_t                                v;

    (void) state;
    samsa_arena_init(&arena);
    samsa_ConsumerGroupDescribeRequest_init(&in);
    in.GroupIds = ids;
    in.GroupIds_cnt = 1;
    in.IncludeAuthorizedOperations = true;
    samsa_CGDescribedMember_init(&mem);
    assert_int_equal(mem.MemberType, -1);
    mem.MemberId = S("m");
    mem.MemberEpoch = 4;
    mem.ClientId = S("c");
    mem.ClientHost = S("/127.0.0.1");
    mem.SubscribedTopicNames = topics;
    mem.SubscribedTopicNames_cnt = 1;
    mem.Assignment.TopicPartitions = &tp;
    mem.Assignment.TopicPartitions_cnt = 1;
    mem.TargetAssignment.TopicPartitions = &tp;
    mem.TargetAssignment.TopicPartitions_cnt = 1;
    mem.MemberType = 1;
    samsa_CGDescribedGroup_init(&g);
    assert_int_equal(g.AuthorizedOperations, INT32_MIN);
    g.GroupId = S("g");
    g.GroupState = S("Stable");
    g.GroupEpoch = 4;
    g.AssignmentEpoch = 4;
    g.AssignorName = S("uniform");
    g.Members = &mem;
    g.Members_cnt = 1;
    samsa_ConsumerGroupDescribeResponse_init(&rin);
    rin.Groups = &g;
    rin.Groups_cnt = 1;
    for (v = 0; v <= SAMSA_ConsumerGroupDescribe_VERSION_MAX; v++) {
        rt_ConsumerGroupDescribeRequest(v, &in, &out, &arena, &buf);
        assert_true(out.IncludeAuthorizedOperations);
        samsa_buf_fini(&buf);
        rt_ConsumerGroupDescribeResponse(v, &rin, &rout, &arena, &buf);
        assert_true(samsa_slice_eq_cstr(rout.Groups[0].AssignorName,
                                        "uniform"));
        assert_true(samsa_slice_eq_cstr(rout.Groups[0].Members[0]
                                            .TargetAssignment
                                            .TopicPartitions[0].TopicName,
                                        "t"));
        assert_int_equal(rout.Groups[0].Members[0].MemberType,
                         v >= 1 ? 1 : -1);
        samsa_buf_fini(&buf);
    }
    samsa_arena_fini(&arena);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_ConsumerGroupHeartbeatRequest_bytes),
        cmocka_unit_test(test_ConsumerGroupHeartbeatResponse_bytes),
        cmocka_unit_test(test_ConsumerGroupHeartbeat_round_trip),
        cmocka_unit_test(test_ConsumerGroupDescribe_round_trip),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
