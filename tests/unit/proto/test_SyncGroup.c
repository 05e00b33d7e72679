/* Unit tests for the generated SyncGroup, Heartbeat and LeaveGroup codecs
 * (proto/gen/{SyncGroup,Heartbeat,LeaveGroup}.c): round trips over every
 * version and bytes assembled by hand from Kafka's message definitions. */
#include "unit.h"

#include <stdlib.h>

#include "proto/gen/Heartbeat.h"
#include "proto/gen/LeaveGroup.h"
#include "proto/gen/SyncGroup.h"
#include "rt.h"

RT_DEFINE(SyncGroupRequest)
RT_DEFINE(SyncGroupResponse)
RT_DEFINE(HeartbeatRequest)
RT_DEFINE(HeartbeatResponse)
RT_DEFINE(LeaveGroupRequest)
RT_DEFINE(LeaveGroupResponse)

static void
test_SyncGroup_round_trip(void **state)
{
    samsa_SyncGroupRequest_t            in, out;
    samsa_SyncGroupResponse_t           rin, rout;
    samsa_SyncGroupRequestAssignment_t  a[2] = {
        { S("m-1"), S("assign-1") }, { S("m-2"), S("") },
    };
    samsa_arena_t                       arena;
    samsa_buf_t                         buf;
    int16_t                             v;

    (void) state;
    samsa_arena_init(&arena);
    samsa_SyncGroupRequest_init(&in);
    in.GroupId = S("g");
    in.GenerationId = 7;
    in.MemberId = S("m-1");
    in.GroupInstanceId = S("i-1");
    in.ProtocolType = S("consumer");
    in.ProtocolName = S("range");
    in.Assignments = a;
    in.Assignments_cnt = 2;
    samsa_SyncGroupResponse_init(&rin);
    rin.ThrottleTimeMs = 1;
    rin.ErrorCode = 27;                         /* REBALANCE_IN_PROGRESS */
    rin.ProtocolType = S("consumer");
    rin.ProtocolName = S("range");
    rin.Assignment = S("assign-1");
    for (v = 0; v <= SAMSA_SyncGroup_VERSION_MAX; v++) {
        rt_SyncGroupRequest(v, &in, &out, &arena, &buf);
        assert_int_equal(out.GenerationId, 7);
        assert_true(samsa_slice_eq_cstr(out.MemberId, "m-1"));
        assert_int_equal(out.GroupInstanceId.ptr != NULL, v >= 3);
        assert_int_equal(out.ProtocolName.ptr != NULL, v >= 5);
        assert_int_equal(out.Assignments_cnt, 2);
        assert_true(samsa_slice_eq_cstr(out.Assignments[0].Assignment,
                                        "assign-1"));
        samsa_buf_fini(&buf);
        rt_SyncGroupResponse(v, &rin, &rout, &arena, &buf);
        assert_int_equal(rout.ThrottleTimeMs, v >= 1 ? 1 : 0);
        assert_int_equal(rout.ErrorCode, 27);
        assert_int_equal(rout.ProtocolType.ptr != NULL, v >= 5);
        assert_true(samsa_slice_eq_cstr(rout.Assignment, "assign-1"));
        samsa_buf_fini(&buf);
    }
    samsa_arena_fini(&arena);
}

/* Group "g", generation 1, member "m", no assignments: v0, v3, v4, v5. */
static void
test_SyncGroupRequest_bytes(void **state)
{
    static const uint8_t      v0[] = {
        0x00, 0x01, 'g', 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 'm',
        0x00, 0x00, 0x00, 0x00,
    };
    static const uint8_t      v3[] = {
        0x00, 0x01, 'g', 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 'm',
        0xff, 0xff, 0x00, 0x00, 0x00, 0x00,
    };
    static const uint8_t      v4[] = {
        0x02, 'g', 0x00, 0x00, 0x00, 0x01, 0x02, 'm', 0x00, 0x01, 0x00,
    };
    static const uint8_t      v5[] = {
        0x02, 'g', 0x00, 0x00, 0x00, 0x01, 0x02, 'm', 0x00, 0x00, 0x00,
        0x01, 0x00,
    };
    samsa_SyncGroupRequest_t  m;

    (void) state;
    samsa_SyncGroupRequest_init(&m);
    m.GroupId = S("g");
    m.GenerationId = 1;
    m.MemberId = S("m");
    m.Assignments_cnt = 0;
    RT_ENCODES_TO(SyncGroupRequest, 0, &m, v0, sizeof(v0));
    RT_ENCODES_TO(SyncGroupRequest, 3, &m, v3, sizeof(v3));
    RT_ENCODES_TO(SyncGroupRequest, 4, &m, v4, sizeof(v4));
    RT_ENCODES_TO(SyncGroupRequest, 5, &m, v5, sizeof(v5));
}

static void
test_Heartbeat_round_trip(void **state)
{
    samsa_HeartbeatRequest_t   in, out;
    samsa_HeartbeatResponse_t  rin, rout;
    samsa_arena_t              arena;
    samsa_buf_t                buf;
    int16_t                    v;

    (void) state;
    samsa_arena_init(&arena);
    samsa_HeartbeatRequest_init(&in);
    in.GroupId = S("g");
    in.GenerationId = 4;
    in.MemberId = S("m");
    in.GroupInstanceId = S("i");
    samsa_HeartbeatResponse_init(&rin);
    rin.ThrottleTimeMs = 2;
    rin.ErrorCode = 22;                         /* ILLEGAL_GENERATION */
    for (v = 0; v <= SAMSA_Heartbeat_VERSION_MAX; v++) {
        rt_HeartbeatRequest(v, &in, &out, &arena, &buf);
        assert_int_equal(out.GenerationId, 4);
        assert_int_equal(out.GroupInstanceId.ptr != NULL, v >= 3);
        samsa_buf_fini(&buf);
        rt_HeartbeatResponse(v, &rin, &rout, &arena, &buf);
        assert_int_equal(rout.ErrorCode, 22);
        assert_int_equal(rout.ThrottleTimeMs, v >= 1 ? 2 : 0);
        samsa_buf_fini(&buf);
    }
    samsa_arena_fini(&arena);
}

/* kafka-python's Heartbeat v1 and librdkafka's v3/v4 shapes. */
static void
test_Heartbeat_bytes(void **state)
{
    static const uint8_t       v1[] = {
        0x00, 0x01, 'g', 0x00, 0x00, 0x00, 0x02, 0x00, 0x01, 'm',
    };
    static const uint8_t       v4[] = {
        0x02, 'g', 0x00, 0x00, 0x00, 0x02, 0x02, 'm', 0x02, 'i', 0x00,
    };
    static const uint8_t       r4[] = { 0x00, 0x00, 0x00, 0x00, 0x00, 0x1b,
                                        0x00 };
    samsa_HeartbeatRequest_t   m;
    samsa_HeartbeatResponse_t  r;

    (void) state;
    samsa_HeartbeatRequest_init(&m);
    m.GroupId = S("g");
    m.GenerationId = 2;
    m.MemberId = S("m");
    RT_ENCODES_TO(HeartbeatRequest, 1, &m, v1, sizeof(v1));
    m.GroupInstanceId = S("i");
    RT_ENCODES_TO(HeartbeatRequest, 4, &m, v4, sizeof(v4));
    samsa_HeartbeatResponse_init(&r);
    r.ErrorCode = 27;
    RT_ENCODES_TO(HeartbeatResponse, 4, &r, r4, sizeof(r4));
}

static void
test_LeaveGroup_round_trip(void **state)
{
    samsa_LeaveGroupRequest_t   in, out;
    samsa_LeaveGroupResponse_t  rin, rout;
    samsa_MemberIdentity_t      ids[2] = {
        { S("m-1"), SAMSA_SLICE_NULL, S("bye") },
        { S(""), S("i-2"), SAMSA_SLICE_NULL },
    };
    samsa_MemberResponse_t      rs[2] = {
        { S("m-1"), SAMSA_SLICE_NULL, 0 },
        { S(""), S("i-2"), 25 },
    };
    samsa_arena_t               arena;
    samsa_buf_t                 buf;
    int16_t                     v;

    (void) state;
    samsa_arena_init(&arena);
    samsa_LeaveGroupRequest_init(&in);
    in.GroupId = S("g");
    in.MemberId = S("m-0");
    in.Members = ids;
    in.Members_cnt = 2;
    samsa_LeaveGroupResponse_init(&rin);
    rin.ErrorCode = 0;
    rin.Members = rs;
    rin.Members_cnt = 2;
    for (v = 0; v <= SAMSA_LeaveGroup_VERSION_MAX; v++) {
        rt_LeaveGroupRequest(v, &in, &out, &arena, &buf);
        if (v <= 2) {
            assert_true(samsa_slice_eq_cstr(out.MemberId, "m-0"));
            assert_int_equal(out.Members_cnt, 0);
        } else {
            assert_int_equal(out.Members_cnt, 2);
            assert_true(samsa_slice_eq_cstr(out.Members[1].GroupInstanceId,
                                            "i-2"));
            assert_int_equal(out.Members[0].Reason.ptr != NULL, v >= 5);
        }
        samsa_buf_fini(&buf);
        rt_LeaveGroupResponse(v, &rin, &rout, &arena, &buf);
        assert_int_equal(rout.Members_cnt, v >= 3 ? 2 : 0);
        if (v >= 3) {
            assert_int_equal(rout.Members[1].ErrorCode, 25);
        }
        samsa_buf_fini(&buf);
    }
    samsa_arena_fini(&arena);
}

/* v0 (one member id), v3 (a batch of one), v4 (compact). */
static void
test_LeaveGroupRequest_bytes(void **state)
{
    static const uint8_t       v0[] = { 0x00, 0x01, 'g', 0x00, 0x01, 'm' };
    static const uint8_t       v3[] = {
        0x00, 0x01, 'g', 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 'm', 0xff, 0xff,
    };
    static const uint8_t       v4[] = {
        0x02, 'g', 0x02, 0x02, 'm', 0x00, 0x00, 0x00,
    };
    samsa_LeaveGroupRequest_t  m;
    samsa_MemberIdentity_t     id = { S("m"), SAMSA_SLICE_NULL,
                                      SAMSA_SLICE_NULL };

    (void) state;
    samsa_LeaveGroupRequest_init(&m);
    m.GroupId = S("g");
    m.MemberId = S("m");
    m.Members = &id;
    m.Members_cnt = 1;
    RT_ENCODES_TO(LeaveGroupRequest, 0, &m, v0, sizeof(v0));
    RT_ENCODES_TO(LeaveGroupRequest, 3, &m, v3, sizeof(v3));
    RT_ENCODES_TO(LeaveGroupRequest, 4, &m, v4, sizeof(v4));
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_SyncGroup_round_trip),
        cmocka_unit_test(test_SyncGroupRequest_bytes),
        cmocka_unit_test(test_Heartbeat_round_trip),
        cmocka_unit_test(test_Heartbeat_bytes),
        cmocka_unit_test(test_LeaveGroup_round_trip),
        cmocka_unit_test(test_LeaveGroupRequest_bytes),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
