/* Unit tests for the generated JoinGroup codecs (proto/gen/JoinGroup.c):
 * v0-v9 round trips (v1 RebalanceTimeoutMs, v5 GroupInstanceId, v6
 * flexible, v7 ProtocolType, v8 Reason, v9 SkipAssignment), and requests
 * and responses against bytes assembled by hand from Kafka's message
 * definitions. */
#include "unit.h"

#include <stdlib.h>

#include "proto/gen/JoinGroup.h"
#include "rt.h"

RT_DEFINE(JoinGroupRequest)
RT_DEFINE(JoinGroupResponse)

static void
test_JoinGroupRequest_round_trip(void **state)
{
    samsa_JoinGroupRequest_t          in, out;
    samsa_JoinGroupRequestProtocol_t  p[2] = {
        { S("range"), { "\x00\x01m1", 4 } },
        { S("roundrobin"), S("") },
    };
    samsa_arena_t                     arena;
    samsa_buf_t                       buf;
    int16_t                           v;

    (void) state;
    samsa_arena_init(&arena);
    samsa_JoinGroupRequest_init(&in);
    in.GroupId = S("g1");
    in.SessionTimeoutMs = 10000;
    in.RebalanceTimeoutMs = 30000;
    in.MemberId = S("m-1");
    in.GroupInstanceId = S("inst-1");
    in.ProtocolType = S("consumer");
    in.Protocols = p;
    in.Protocols_cnt = 2;
    in.Reason = S("rejoin");
    for (v = 0; v <= SAMSA_JoinGroup_VERSION_MAX; v++) {
        rt_JoinGroupRequest(v, &in, &out, &arena, &buf);
        assert_true(samsa_slice_eq_cstr(out.GroupId, "g1"));
        assert_int_equal(out.SessionTimeoutMs, 10000);
        assert_int_equal(out.RebalanceTimeoutMs, v >= 1 ? 30000 : -1);
        assert_true(samsa_slice_eq_cstr(out.MemberId, "m-1"));
        if (v >= 5) {
            assert_true(samsa_slice_eq_cstr(out.GroupInstanceId, "inst-1"));
        } else {
            assert_null(out.GroupInstanceId.ptr);
        }
        assert_int_equal(out.Protocols_cnt, 2);
        assert_true(samsa_slice_eq_cstr(out.Protocols[1].Name, "roundrobin"));
        assert_int_equal(out.Protocols[0].Metadata.len, 4);
        if (v >= 8) {
            assert_true(samsa_slice_eq_cstr(out.Reason, "rejoin"));
        } else {
            assert_null(out.Reason.ptr);
        }
        samsa_buf_fini(&buf);
    }
    samsa_arena_fini(&arena);
}

/* Group "g", session 6000, member "", type "consumer", protocol "r"
 * with metadata {0x01}: v0, v1 (rebalance 9000), v5 (null instance), v6
 * (compact), v8 (null reason). */
static void
test_JoinGroupRequest_bytes(void **state)
{
    static const uint8_t              v0[] = {
        0x00, 0x01, 'g', 0x00, 0x00, 0x17, 0x70, 0x00, 0x00,
        0x00, 0x08, 'c', 'o', 'n', 's', 'u', 'm', 'e', 'r',
        0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 'r', 0x00, 0x00, 0x00, 0x01, 0x01,
    };
    static const uint8_t              v1[] = {
        0x00, 0x01, 'g', 0x00, 0x00, 0x17, 0x70, 0x00, 0x00, 0x23, 0x28,
        0x00, 0x00,
        0x00, 0x08, 'c', 'o', 'n', 's', 'u', 'm', 'e', 'r',
        0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 'r', 0x00, 0x00, 0x00, 0x01, 0x01,
    };
    static const uint8_t              v5[] = {
        0x00, 0x01, 'g', 0x00, 0x00, 0x17, 0x70, 0x00, 0x00, 0x23, 0x28,
        0x00, 0x00, 0xff, 0xff,
        0x00, 0x08, 'c', 'o', 'n', 's', 'u', 'm', 'e', 'r',
        0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 'r', 0x00, 0x00, 0x00, 0x01, 0x01,
    };
    static const uint8_t              v6[] = {
        0x02, 'g', 0x00, 0x00, 0x17, 0x70, 0x00, 0x00, 0x23, 0x28,
        0x01, 0x00,
        0x09, 'c', 'o', 'n', 's', 'u', 'm', 'e', 'r',
        0x02, 0x02, 'r', 0x02, 0x01, 0x00, 0x00,
    };
    static const uint8_t              v8[] = {
        0x02, 'g', 0x00, 0x00, 0x17, 0x70, 0x00, 0x00, 0x23, 0x28,
        0x01, 0x00,
        0x09, 'c', 'o', 'n', 's', 'u', 'm', 'e', 'r',
        0x02, 0x02, 'r', 0x02, 0x01, 0x00, 0x00, 0x00,
    };
    samsa_JoinGroupRequest_t          m;
    samsa_JoinGroupRequestProtocol_t  p = { S("r"), { "\x01", 1 } };

    (void) state;
    samsa_JoinGroupRequest_init(&m);
    m.GroupId = S("g");
    m.SessionTimeoutMs = 6000;
    m.RebalanceTimeoutMs = 9000;
    m.MemberId = S("");
    m.ProtocolType = S("consumer");
    m.Protocols = &p;
    m.Protocols_cnt = 1;
    RT_ENCODES_TO(JoinGroupRequest, 0, &m, v0, sizeof(v0));
    RT_ENCODES_TO(JoinGroupRequest, 1, &m, v1, sizeof(v1));
    RT_ENCODES_TO(JoinGroupRequest, 4, &m, v1, sizeof(v1));
    RT_ENCODES_TO(JoinGroupRequest, 5, &m, v5, sizeof(v5));
    RT_ENCODES_TO(JoinGroupRequest, 6, &m, v6, sizeof(v6));
    RT_ENCODES_TO(JoinGroupRequest, 7, &m, v6, sizeof(v6));
    RT_ENCODES_TO(JoinGroupRequest, 8, &m, v8, sizeof(v8));
    RT_ENCODES_TO(JoinGroupRequest, 9, &m, v8, sizeof(v8));
}

static void
test_JoinGroupResponse_round_trip(void **state)
{
    samsa_JoinGroupResponse_t        in, out;
    samsa_JoinGroupResponseMember_t  mem[2] = {
        { S("m-1"), S("inst-1"), S("meta1") },
        { S("m-2"), SAMSA_SLICE_NULL, S("") },
    };
    samsa_arena_t                    arena;
    samsa_buf_t                      buf;
    int16_t                          v;

    (void) state;
    samsa_arena_init(&arena);
    samsa_JoinGroupResponse_init(&in);
    in.ThrottleTimeMs = 5;
    in.ErrorCode = 79;                          /* MEMBER_ID_REQUIRED */
    in.GenerationId = 3;
    in.ProtocolType = S("consumer");
    in.ProtocolName = S("range");
    in.Leader = S("m-1");
    in.SkipAssignment = true;
    in.MemberId = S("m-2");
    in.Members = mem;
    in.Members_cnt = 2;
    for (v = 0; v <= SAMSA_JoinGroup_VERSION_MAX; v++) {
        rt_JoinGroupResponse(v, &in, &out, &arena, &buf);
        assert_int_equal(out.ThrottleTimeMs, v >= 2 ? 5 : 0);
        assert_int_equal(out.ErrorCode, 79);
        assert_int_equal(out.GenerationId, 3);
        if (v >= 7) {
            assert_true(samsa_slice_eq_cstr(out.ProtocolType, "consumer"));
        } else {
            assert_null(out.ProtocolType.ptr);
        }
        assert_true(samsa_slice_eq_cstr(out.ProtocolName, "range"));
        assert_true(samsa_slice_eq_cstr(out.Leader, "m-1"));
        assert_int_equal(out.SkipAssignment, v >= 9);
        assert_int_equal(out.Members_cnt, 2);
        if (v >= 5) {
            assert_true(samsa_slice_eq_cstr(out.Members[0].GroupInstanceId,
                                            "inst-1"));
        }
        assert_null(out.Members[1].GroupInstanceId.ptr);
        assert_true(samsa_slice_eq_cstr(out.Members[0].Metadata, "meta1"));
        samsa_buf_fini(&buf);
    }
    samsa_arena_fini(&arena);
}

/* MEMBER_ID_REQUIRED with member id "m" and no members: v4 and v7 (a
 * null protocol name, a null protocol type). */
static void
test_JoinGroupResponse_bytes(void **state)
{
    static const uint8_t       v4[] = {
        0x00, 0x00, 0x00, 0x00, 0x00, 0x4f, 0xff, 0xff, 0xff, 0xff,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 'm', 0x00, 0x00, 0x00, 0x00,
    };
    static const uint8_t       v7[] = {
        0x00, 0x00, 0x00, 0x00, 0x00, 0x4f, 0xff, 0xff, 0xff, 0xff,
        0x00, 0x00, 0x01, 0x02, 'm', 0x01, 0x00,
    };
    samsa_JoinGroupResponse_t  m;

    (void) state;
    samsa_JoinGroupResponse_init(&m);
    m.ErrorCode = 79;
    m.Leader = S("");
    m.MemberId = S("m");
    m.Members_cnt = 0;
    m.ProtocolName = S("");
    RT_ENCODES_TO(JoinGroupResponse, 4, &m, v4, sizeof(v4));
    m.ProtocolName = SAMSA_SLICE_NULL;
    RT_ENCODES_TO(JoinGroupResponse, 7, &m, v7, sizeof(v7));
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_JoinGroupRequest_round_trip),
        cmocka_unit_test(test_JoinGroupRequest_bytes),
        cmocka_unit_test(test_JoinGroupResponse_round_trip),
        cmocka_unit_test(test_JoinGroupResponse_bytes),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
