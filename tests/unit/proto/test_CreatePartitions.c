/* Unit tests for the generated CreatePartitions codecs
 * (proto/gen/CreatePartitions.c): v0-v3 round-trip (v2 flexible, null
 * Assignments); kafka-python, confluent-kafka and kafkajs requests decode
 * and re-encode byte for byte; bytes assembled by hand from Kafka's
 * message definitions. */
#include "unit.h"

#include <stdlib.h>

#include "golden.h"
#include "proto/gen/CreatePartitions.h"
#include "rt.h"

RT_DEFINE(CreatePartitionsRequest)
RT_DEFINE(CreatePartitionsResponse)

static int32_t  b1[] = { 1, 2 };
static int32_t  b2[] = { 2, 3 };

static void
test_CreatePartitionsRequest_round_trip(void **state)
{
    samsa_CreatePartitionsRequest_t     in, out;
    samsa_CreatePartitionsAssignment_t  a[2] = { { b1, 2 }, { b2, 2 } };
    samsa_CreatePartitionsTopic_t       t[2] = {
        { S("orders"), 6, a, 2 },
        { S("logs"), 3, NULL, -1 },
    };
    samsa_arena_t                       arena;
    samsa_buf_t                         buf;
    int16_t                             v;

    (void) state;
    samsa_arena_init(&arena);
    samsa_CreatePartitionsRequest_init(&in);
    in.Topics = t;
    in.Topics_cnt = 2;
    in.TimeoutMs = 1000;
    in.ValidateOnly = true;
    for (v = 0; v <= SAMSA_CreatePartitions_VERSION_MAX; v++) {
        rt_CreatePartitionsRequest(v, &in, &out, &arena, &buf);
        assert_int_equal(out.TimeoutMs, 1000);
        assert_true(out.ValidateOnly);
        assert_int_equal(out.Topics_cnt, 2);
        assert_true(samsa_slice_eq_cstr(out.Topics[0].Name, "orders"));
        assert_int_equal(out.Topics[0].Count, 6);
        assert_int_equal(out.Topics[0].Assignments_cnt, 2);
        assert_int_equal(out.Topics[0].Assignments[1].BrokerIds_cnt, 2);
        assert_int_equal(out.Topics[0].Assignments[1].BrokerIds[1], 3);
        assert_int_equal(out.Topics[1].Count, 3);
        assert_int_equal(out.Topics[1].Assignments_cnt, -1);
        samsa_buf_fini(&buf);
    }
    samsa_arena_fini(&arena);
}

/* Topic "t" to 2 partitions, the new one on broker 1: v0/v1 and v2. */
static void
test_CreatePartitionsRequest_bytes(void **state)
{
    static const uint8_t                v0[] = {
        0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 't', 0x00, 0x00, 0x00, 0x02,
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01,
        0x00, 0x00, 0x00, 0x01,                     /* BrokerIds [1] */
        0x00, 0x00, 0x03, 0xe8, 0x00,               /* timeout, validate */
    };
    static const uint8_t                v2[] = {
        0x02, 0x02, 't', 0x00, 0x00, 0x00, 0x02,
        0x02, 0x02, 0x00, 0x00, 0x00, 0x01, 0x00,   /* Assignments, tags */
        0x00,                                       /* topic tags */
        0x00, 0x00, 0x03, 0xe8, 0x00, 0x00,
    };
    samsa_CreatePartitionsRequest_t     m;
    int32_t                             one = 1;
    samsa_CreatePartitionsAssignment_t  a = { &one, 1 };
    samsa_CreatePartitionsTopic_t       t = { S("t"), 2, &a, 1 };

    (void) state;
    samsa_CreatePartitionsRequest_init(&m);
    m.Topics = &t;
    m.Topics_cnt = 1;
    m.TimeoutMs = 1000;
    RT_ENCODES_TO(CreatePartitionsRequest, 0, &m, v0, sizeof(v0));
    RT_ENCODES_TO(CreatePartitionsRequest, 1, &m, v0, sizeof(v0));
    RT_ENCODES_TO(CreatePartitionsRequest, 2, &m, v2, sizeof(v2));
    RT_ENCODES_TO(CreatePartitionsRequest, 3, &m, v2, sizeof(v2));
}

/* Every client here grew samsa-golden to 4 partitions, 1 s timeout. */
static void
check_golden(const uint8_t *frame, size_t len, size_t hdr_len,
             int16_t version)
{
    samsa_CreatePartitionsRequest_t  m;
    samsa_arena_t                    arena;

    samsa_arena_init(&arena);
    assert_int_equal(RT_DECODE(CreatePartitionsRequest, version,
                               frame + hdr_len, len - hdr_len, &arena, &m),
                     SAMSA_ERR_NONE);
    assert_int_equal(m.TimeoutMs, 1000);
    assert_false(m.ValidateOnly);
    assert_int_equal(m.Topics_cnt, 1);
    assert_true(samsa_slice_eq_cstr(m.Topics[0].Name, "samsa-golden"));
    assert_int_equal(m.Topics[0].Count, 4);
    assert_int_equal(m.Topics[0].Assignments_cnt, -1);
    RT_ENCODES_TO(CreatePartitionsRequest, version, &m, frame + hdr_len,
                  len - hdr_len);
    samsa_arena_fini(&arena);
}

#define GOLDEN(g, v)                                                      \
    check_golden(GOLDEN_##g, sizeof(GOLDEN_##g), GOLDEN_##g##_HDR_LEN, v)

static void
test_CreatePartitionsRequest_golden(void **state)
{
    (void) state;
    GOLDEN(kafka_python_data_CreatePartitions_v1, 1);
    GOLDEN(confluent_data_CreatePartitions_v0, 0);
    GOLDEN(kafkajs_data_CreatePartitions_v1, 1);
}

static void
test_CreatePartitionsResponse_round_trip(void **state)
{
    samsa_CreatePartitionsResponse_t     in, out;
    samsa_CreatePartitionsTopicResult_t  r[2];
    samsa_arena_t                        arena;
    samsa_buf_t                          buf;
    int16_t                              v;

    (void) state;
    samsa_arena_init(&arena);
    samsa_CreatePartitionsResponse_init(&in);
    samsa_CreatePartitionsTopicResult_init(&r[0]);
    samsa_CreatePartitionsTopicResult_init(&r[1]);
    assert_null(r[0].ErrorMessage.ptr);
    r[0].Name = S("orders");
    r[1].Name = S("logs");
    r[1].ErrorCode = 37;                        /* INVALID_PARTITIONS */
    r[1].ErrorMessage = S("fewer");
    in.ThrottleTimeMs = 1;
    in.Results = r;
    in.Results_cnt = 2;
    for (v = 0; v <= SAMSA_CreatePartitions_VERSION_MAX; v++) {
        rt_CreatePartitionsResponse(v, &in, &out, &arena, &buf);
        assert_int_equal(out.ThrottleTimeMs, 1);
        assert_int_equal(out.Results_cnt, 2);
        assert_true(samsa_slice_eq_cstr(out.Results[0].Name, "orders"));
        assert_null(out.Results[0].ErrorMessage.ptr);
        assert_int_equal(out.Results[1].ErrorCode, 37);
        assert_true(samsa_slice_eq_cstr(out.Results[1].ErrorMessage,
                                        "fewer"));
        samsa_buf_fini(&buf);
    }
    samsa_arena_fini(&arena);
}

/* "t" grown: v0 and v2. */
static void
test_CreatePartitionsResponse_bytes(void **state)
{
    static const uint8_t                 v0[] = {
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
        0x00, 0x01, 't', 0x00, 0x00, 0xff, 0xff,
    };
    static const uint8_t                 v2[] = {
        0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 't', 0x00, 0x00, 0x00, 0x00,
        0x00,
    };
    samsa_CreatePartitionsResponse_t     m;
    samsa_CreatePartitionsTopicResult_t  r;

    (void) state;
    samsa_CreatePartitionsResponse_init(&m);
    samsa_CreatePartitionsTopicResult_init(&r);
    r.Name = S("t");
    m.Results = &r;
    m.Results_cnt = 1;
    RT_ENCODES_TO(CreatePartitionsResponse, 0, &m, v0, sizeof(v0));
    RT_ENCODES_TO(CreatePartitionsResponse, 2, &m, v2, sizeof(v2));
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_CreatePartitionsRequest_round_trip),
        cmocka_unit_test(test_CreatePartitionsRequest_bytes),
        cmocka_unit_test(test_CreatePartitionsRequest_golden),
        cmocka_unit_test(test_CreatePartitionsResponse_round_trip),
        cmocka_unit_test(test_CreatePartitionsResponse_bytes),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
