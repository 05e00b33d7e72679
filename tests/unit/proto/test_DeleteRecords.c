/* Unit tests for the generated DeleteRecords codecs
 * (proto/gen/DeleteRecords.c): v0-v2 round-trip (v2 flexible); the kafkajs
 * request decodes and re-encodes byte for byte; bytes assembled by hand
 * from Kafka's message definitions. */
#include "unit.h"

#include <stdlib.h>

#include "golden.h"
#include "proto/gen/DeleteRecords.h"
#include "rt.h"

RT_DEFINE(DeleteRecordsRequest)
RT_DEFINE(DeleteRecordsResponse)

static void
test_DeleteRecordsRequest_round_trip(void **state)
{
    samsa_DeleteRecordsRequest_t    in, out;
    samsa_DeleteRecordsTopic_t      t[2];
    samsa_DeleteRecordsPartition_t  p[2] = { { 0, 100 }, { 4, -1 } };
    samsa_arena_t                   arena;
    samsa_buf_t                     buf;
    int16_t                         v;

    (void) state;
    samsa_arena_init(&arena);
    samsa_DeleteRecordsRequest_init(&in);
    memset(t, 0, sizeof(t));
    in.TimeoutMs = 5000;
    t[0].Name = S("orders");
    t[0].Partitions = p;
    t[0].Partitions_cnt = 2;
    t[1].Name = S("logs");
    in.Topics = t;
    in.Topics_cnt = 2;
    for (v = 0; v <= SAMSA_DeleteRecords_VERSION_MAX; v++) {
        rt_DeleteRecordsRequest(v, &in, &out, &arena, &buf);
        assert_int_equal(out.TimeoutMs, 5000);
        assert_int_equal(out.Topics_cnt, 2);
        assert_true(samsa_slice_eq_cstr(out.Topics[0].Name, "orders"));
        assert_int_equal(out.Topics[0].Partitions_cnt, 2);
        assert_int_equal(out.Topics[0].Partitions[0].Offset, 100);
        assert_int_equal(out.Topics[0].Partitions[1].PartitionIndex, 4);
        assert_int_equal(out.Topics[0].Partitions[1].Offset, -1);
        assert_true(samsa_slice_eq_cstr(out.Topics[1].Name, "logs"));
        assert_int_equal(out.Topics[1].Partitions_cnt, 0);
        samsa_buf_fini(&buf);
    }
    samsa_arena_fini(&arena);
}

/* "t" partition 1 up to offset 9, timeout 1000: v0/v1 and v2. */
static void
test_DeleteRecordsRequest_bytes(void **state)
{
    static const uint8_t            v0[] = {
        0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 't',
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x09,
        0x00, 0x00, 0x03, 0xe8,
    };
    static const uint8_t            v2[] = {
        0x02, 0x02, 't', 0x02, 0x00, 0x00, 0x00, 0x01,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x09, 0x00, 0x00,
        0x00, 0x00, 0x03, 0xe8, 0x00,
    };
    samsa_DeleteRecordsRequest_t    m;
    samsa_DeleteRecordsPartition_t  p = { 1, 9 };
    samsa_DeleteRecordsTopic_t      t = { S("t"), &p, 1 };

    (void) state;
    samsa_DeleteRecordsRequest_init(&m);
    m.Topics = &t;
    m.Topics_cnt = 1;
    m.TimeoutMs = 1000;
    RT_ENCODES_TO(DeleteRecordsRequest, 0, &m, v0, sizeof(v0));
    RT_ENCODES_TO(DeleteRecordsRequest, 1, &m, v0, sizeof(v0));
    RT_ENCODES_TO(DeleteRecordsRequest, 2, &m, v2, sizeof(v2));
}

/* kafkajs deleteTopicRecords(samsa-golden, partition 0, offset -1: the
 * high watermark), with its default 5 s timeout. */
static void
check_golden(const uint8_t *frame, size_t len, size_t hdr_len,
             int16_t version)
{
    samsa_DeleteRecordsRequest_t  m;
    samsa_arena_t                 arena;

    samsa_arena_init(&arena);
    assert_int_equal(RT_DECODE(DeleteRecordsRequest, version,
                               frame + hdr_len, len - hdr_len, &arena, &m),
                     SAMSA_ERR_NONE);
    assert_int_equal(m.TimeoutMs, 5000);
    assert_int_equal(m.Topics_cnt, 1);
    assert_true(samsa_slice_eq_cstr(m.Topics[0].Name, "samsa-golden"));
    assert_int_equal(m.Topics[0].Partitions_cnt, 1);
    assert_int_equal(m.Topics[0].Partitions[0].PartitionIndex, 0);
    assert_int_equal(m.Topics[0].Partitions[0].Offset, -1);
    RT_ENCODES_TO(DeleteRecordsRequest, version, &m, frame + hdr_len,
                  len - hdr_len);
    samsa_arena_fini(&arena);
}

#define GOLDEN(g, v)                                                      \
    check_golden(GOLDEN_##g, sizeof(GOLDEN_##g), GOLDEN_##g##_HDR_LEN, v)

static void
test_DeleteRecordsRequest_golden(void **state)
{
    (void) state;
    GOLDEN(kafkajs_data_DeleteRecords_v1, 1);
}

static void
test_DeleteRecordsResponse_round_trip(void **state)
{
    samsa_DeleteRecordsResponse_t         in, out;
    samsa_DeleteRecordsPartitionResult_t  p[2] = { { 0, 100, 0 },
                                                   { 4, -1, 3 } };
    samsa_DeleteRecordsTopicResult_t      t = { S("orders"), p, 2 };
    samsa_arena_t                         arena;
    samsa_buf_t                           buf;
    int16_t                               v;

    (void) state;
    samsa_arena_init(&arena);
    samsa_DeleteRecordsResponse_init(&in);
    in.ThrottleTimeMs = 6;
    in.Topics = &t;
    in.Topics_cnt = 1;
    for (v = 0; v <= SAMSA_DeleteRecords_VERSION_MAX; v++) {
        rt_DeleteRecordsResponse(v, &in, &out, &arena, &buf);
        assert_int_equal(out.ThrottleTimeMs, 6);
        assert_int_equal(out.Topics_cnt, 1);
        assert_true(samsa_slice_eq_cstr(out.Topics[0].Name, "orders"));
        assert_int_equal(out.Topics[0].Partitions_cnt, 2);
        assert_int_equal(out.Topics[0].Partitions[0].LowWatermark, 100);
        assert_int_equal(out.Topics[0].Partitions[1].PartitionIndex, 4);
        assert_int_equal(out.Topics[0].Partitions[1].LowWatermark, -1);
        assert_int_equal(out.Topics[0].Partitions[1].ErrorCode, 3);
        samsa_buf_fini(&buf);
    }
    samsa_arena_fini(&arena);
}

/* "t" partition 1: low watermark 9, no error: v1 and v2. */
static void
test_DeleteRecordsResponse_bytes(void **state)
{
    static const uint8_t                  v1[] = {
        0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 't',
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x09, 0x00, 0x00,
    };
    static const uint8_t                  v2[] = {
        0x00, 0x00, 0x00, 0x00,
        0x02, 0x02, 't', 0x02, 0x00, 0x00, 0x00, 0x01,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x09, 0x00, 0x00,
        0x00, 0x00, 0x00,
    };
    samsa_DeleteRecordsResponse_t         m;
    samsa_DeleteRecordsPartitionResult_t  p = { 1, 9, 0 };
    samsa_DeleteRecordsTopicResult_t      t = { S("t"), &p, 1 };

    (void) state;
    samsa_DeleteRecordsResponse_init(&m);
    m.Topics = &t;
    m.Topics_cnt = 1;
    RT_ENCODES_TO(DeleteRecordsResponse, 1, &m, v1, sizeof(v1));
    RT_ENCODES_TO(DeleteRecordsResponse, 2, &m, v2, sizeof(v2));
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_DeleteRecordsRequest_round_trip),
        cmocka_unit_test(test_DeleteRecordsRequest_bytes),
        cmocka_unit_test(test_DeleteRecordsRequest_golden),
        cmocka_unit_test(test_DeleteRecordsResponse_round_trip),
        cmocka_unit_test(test_DeleteRecordsResponse_bytes),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
