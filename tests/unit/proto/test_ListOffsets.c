/* Unit tests for the generated ListOffsets codecs (proto/gen/ListOffsets.c):
 * every version v0-v9 round-trips with each field present exactly in its
 * versions (v0's MaxNumOffsets / OldStyleOffsets, v2 isolation, v4 epochs,
 * v6 flexible); kcat, kafka-python and kafkajs requests decode and
 * re-encode byte for byte; responses match the bytes those clients
 * accepted from tests/unit/proto/golden_capture.py. */
#include "unit.h"

#include <stdlib.h>

#include "golden.h"
#include "proto/gen/ListOffsets.h"
#include "rt.h"

RT_DEFINE(ListOffsetsRequest)
RT_DEFINE(ListOffsetsResponse)

static void
populate_request(samsa_ListOffsetsRequest_t *m, samsa_arena_t *arena)
{
    samsa_ListOffsetsTopic_t      *t;
    samsa_ListOffsetsPartition_t  *p;

    samsa_ListOffsetsRequest_init(m);
    m->ReplicaId = -1;
    m->IsolationLevel = 1;
    m->Topics_cnt = 2;
    m->Topics = t = samsa_arena_calloc(arena, 2, sizeof(*t));
    t[0].Name = S("orders");
    t[0].Partitions_cnt = 2;
    t[0].Partitions = p = samsa_arena_calloc(arena, 2, sizeof(*p));
    samsa_ListOffsetsPartition_init(&p[0]);
    samsa_ListOffsetsPartition_init(&p[1]);
    p[0].PartitionIndex = 0;
    p[0].CurrentLeaderEpoch = 4;
    p[0].Timestamp = -2;                        /* earliest */
    p[0].MaxNumOffsets = 3;
    p[1].PartitionIndex = 1;
    p[1].Timestamp = 1700000000000;
    t[1].Name = S("logs");
}

static void
test_ListOffsetsRequest_round_trip(void **state)
{
    samsa_ListOffsetsRequest_t           in, out;
    const samsa_ListOffsetsPartition_t  *p;
    samsa_arena_t                        arena;
    samsa_buf_t                          buf;
    int16_t                              v;

    (void) state;
    for (v = 0; v <= SAMSA_ListOffsets_VERSION_MAX; v++) {
        samsa_arena_init(&arena);
        populate_request(&in, &arena);
        rt_ListOffsetsRequest(v, &in, &out, &arena, &buf);
        assert_int_equal(out.ReplicaId, -1);
        assert_int_equal(out.IsolationLevel, v >= 2 ? 1 : 0);
        assert_int_equal(out.Topics_cnt, 2);
        assert_true(samsa_slice_eq_cstr(out.Topics[0].Name, "orders"));
        assert_true(samsa_slice_eq_cstr(out.Topics[1].Name, "logs"));
        assert_int_equal(out.Topics[1].Partitions_cnt, 0);
        assert_int_equal(out.Topics[0].Partitions_cnt, 2);
        p = out.Topics[0].Partitions;
        assert_int_equal(p[0].PartitionIndex, 0);
        assert_int_equal(p[0].CurrentLeaderEpoch, v >= 4 ? 4 : -1);
        assert_int_equal(p[0].Timestamp, -2);
        assert_int_equal(p[0].MaxNumOffsets, v == 0 ? 3 : 1);
        assert_int_equal(p[1].PartitionIndex, 1);
        assert_int_equal(p[1].Timestamp, 1700000000000);
        assert_int_equal(p[1].CurrentLeaderEpoch, -1);
        samsa_buf_fini(&buf);
        samsa_arena_fini(&arena);
    }
}

/* "t" partition 0, latest (-1): v0 (MaxNumOffsets 1), v4, v6. */
static void
test_ListOffsetsRequest_bytes(void **state)
{
    static const uint8_t  v0[] = {
        0xff, 0xff, 0xff, 0xff,                     /* ReplicaId */
        0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 't',    /* Topics [1] */
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,     /* Timestamp */
        0x00, 0x00, 0x00, 0x01,                     /* MaxNumOffsets */
    };
    static const uint8_t  v4[] = {
        0xff, 0xff, 0xff, 0xff, 0x01,               /* replica, isolation */
        0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 't',
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x02,                     /* CurrentLeaderEpoch */
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    };
    static const uint8_t  v6[] = {
        0xff, 0xff, 0xff, 0xff, 0x01,
        0x02, 0x02, 't', 0x02, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x02,
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0x00, 0x00, 0x00,                           /* tags */
    };
    samsa_ListOffsetsRequest_t    m;
    samsa_ListOffsetsTopic_t      t = { 0 };
    samsa_ListOffsetsPartition_t  p;

    (void) state;
    samsa_ListOffsetsRequest_init(&m);
    samsa_ListOffsetsPartition_init(&p);
    assert_int_equal(p.MaxNumOffsets, 1);
    m.ReplicaId = -1;
    m.IsolationLevel = 1;
    p.CurrentLeaderEpoch = 2;
    p.Timestamp = -1;
    t.Name = S("t");
    t.Partitions = &p;
    t.Partitions_cnt = 1;
    m.Topics = &t;
    m.Topics_cnt = 1;
    RT_ENCODES_TO(ListOffsetsRequest, 0, &m, v0, sizeof(v0));
    RT_ENCODES_TO(ListOffsetsRequest, 4, &m, v4, sizeof(v4));
    RT_ENCODES_TO(ListOffsetsRequest, 6, &m, v6, sizeof(v6));
    RT_ENCODES_TO(ListOffsetsRequest, 9, &m, v6, sizeof(v6));
}

/* A golden request: "samsa-golden" partition 0 at timestamp ts. */
static void
check_golden(const uint8_t *frame, size_t len, size_t hdr_len,
             int16_t version, int8_t isolation, int64_t ts)
{
    samsa_ListOffsetsRequest_t     m;
    samsa_ListOffsetsPartition_t  *p;
    samsa_arena_t                  arena;

    samsa_arena_init(&arena);
    assert_int_equal(RT_DECODE(ListOffsetsRequest, version, frame + hdr_len,
                               len - hdr_len, &arena, &m), SAMSA_ERR_NONE);
    assert_int_equal(m.ReplicaId, -1);
    assert_int_equal(m.IsolationLevel, isolation);
    assert_int_equal(m.Topics_cnt, 1);
    assert_true(samsa_slice_eq_cstr(m.Topics[0].Name, "samsa-golden"));
    assert_int_equal(m.Topics[0].Partitions_cnt, 1);
    p = &m.Topics[0].Partitions[0];
    assert_int_equal(p->PartitionIndex, 0);
    assert_int_equal(p->CurrentLeaderEpoch, -1);
    assert_int_equal(p->Timestamp, ts);
    RT_ENCODES_TO(ListOffsetsRequest, version, &m, frame + hdr_len,
                  len - hdr_len);
    samsa_arena_fini(&arena);
}

#define GOLDEN(g, v, isolation, ts)                                       \
    check_golden(GOLDEN_##g, sizeof(GOLDEN_##g), GOLDEN_##g##_HDR_LEN, v, \
                 isolation, ts)

static void
test_ListOffsetsRequest_golden(void **state)
{
    (void) state;
    GOLDEN(kcat_consume_ListOffsets_v2, 2, 1, -2);
    GOLDEN(kafka_python_data_ListOffsets_v1, 1, 0, -2);
    GOLDEN(kafkajs_data_ListOffsets_v3, 3, 1, -1);
    GOLDEN(kafkajs_data_ListOffsets_v3_2, 3, 1, -2);
}

static int64_t  old_offsets[] = { 40, 0 };

static void
populate_response(samsa_ListOffsetsResponse_t *m, samsa_arena_t *arena)
{
    samsa_ListOffsetsTopicResponse_t      *t;
    samsa_ListOffsetsPartitionResponse_t  *p;

    samsa_ListOffsetsResponse_init(m);
    m->ThrottleTimeMs = 4;
    m->Topics_cnt = 1;
    m->Topics = t = samsa_arena_calloc(arena, 1, sizeof(*t));
    t->Name = S("orders");
    t->Partitions_cnt = 2;
    t->Partitions = p = samsa_arena_calloc(arena, 2, sizeof(*p));
    samsa_ListOffsetsPartitionResponse_init(&p[0]);
    samsa_ListOffsetsPartitionResponse_init(&p[1]);
    p[0].PartitionIndex = 0;
    p[0].OldStyleOffsets = old_offsets;
    p[0].OldStyleOffsets_cnt = 2;
    p[0].Timestamp = 1700000000000;
    p[0].Offset = 40;
    p[0].LeaderEpoch = 3;
    p[1].PartitionIndex = 1;
    p[1].ErrorCode = 3;                         /* UNKNOWN_TOPIC_OR_PART */
}

static void
test_ListOffsetsResponse_round_trip(void **state)
{
    samsa_ListOffsetsResponse_t                  in, out;
    const samsa_ListOffsetsPartitionResponse_t  *p;
    samsa_arena_t                                arena;
    samsa_buf_t                                  buf;
    int16_t                                      v;

    (void) state;
    for (v = 0; v <= SAMSA_ListOffsets_VERSION_MAX; v++) {
        samsa_arena_init(&arena);
        populate_response(&in, &arena);
        rt_ListOffsetsResponse(v, &in, &out, &arena, &buf);
        assert_int_equal(out.ThrottleTimeMs, v >= 2 ? 4 : 0);
        assert_int_equal(out.Topics_cnt, 1);
        assert_true(samsa_slice_eq_cstr(out.Topics[0].Name, "orders"));
        assert_int_equal(out.Topics[0].Partitions_cnt, 2);
        p = out.Topics[0].Partitions;
        assert_int_equal(p[0].PartitionIndex, 0);
        assert_int_equal(p[0].ErrorCode, 0);
        if (v == 0) {
            assert_int_equal(p[0].OldStyleOffsets_cnt, 2);
            assert_int_equal(p[0].OldStyleOffsets[0], 40);
        } else {
            assert_int_equal(p[0].OldStyleOffsets_cnt, 0);
        }
        assert_int_equal(p[0].Timestamp, v >= 1 ? 1700000000000 : -1);
        assert_int_equal(p[0].Offset, v >= 1 ? 40 : -1);
        assert_int_equal(p[0].LeaderEpoch, v >= 4 ? 3 : -1);
        assert_int_equal(p[1].PartitionIndex, 1);
        assert_int_equal(p[1].ErrorCode, 3);
        assert_int_equal(p[1].Offset, -1);
        samsa_buf_fini(&buf);
        samsa_arena_fini(&arena);
    }
}

/* "samsa-golden" partition 0 at offset 0 (timestamp -1): kafka-python took
 * v1 and kcat v2 from golden_capture.py's impostor, then fetched. */
static void
test_ListOffsetsResponse_bytes(void **state)
{
    static const uint8_t  v1[] = {
        0x00, 0x00, 0x00, 0x01, 0x00, 0x0c, 's', 'a', 'm', 's', 'a', '-',
        'g', 'o', 'l', 'd', 'e', 'n',
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    };
    static const uint8_t  v6[] = {
        0x00, 0x00, 0x00, 0x00,                     /* ThrottleTimeMs */
        0x02, 0x0d, 's', 'a', 'm', 's', 'a', '-', 'g', 'o', 'l', 'd', 'e',
        'n', 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00,                     /* LeaderEpoch 0 */
        0x00, 0x00, 0x00,                           /* tags */
    };
    samsa_ListOffsetsResponse_t           m, out;
    samsa_ListOffsetsTopicResponse_t      t = { 0 };
    samsa_ListOffsetsPartitionResponse_t  p;
    samsa_arena_t                         arena;
    uint8_t                               v2[sizeof(v1) + 4] = { 0 };

    (void) state;
    memcpy(v2 + 4, v1, sizeof(v1));             /* v2: throttle first */
    samsa_ListOffsetsResponse_init(&m);
    samsa_ListOffsetsPartitionResponse_init(&p);
    p.Offset = 0;
    p.LeaderEpoch = 0;
    t.Name = S("samsa-golden");
    t.Partitions = &p;
    t.Partitions_cnt = 1;
    m.Topics = &t;
    m.Topics_cnt = 1;
    RT_ENCODES_TO(ListOffsetsResponse, 1, &m, v1, sizeof(v1));
    RT_ENCODES_TO(ListOffsetsResponse, 2, &m, v2, sizeof(v2));
    RT_ENCODES_TO(ListOffsetsResponse, 6, &m, v6, sizeof(v6));
    samsa_arena_init(&arena);
    assert_int_equal(RT_DECODE(ListOffsetsResponse, 6, v6, sizeof(v6),
                               &arena, &out), SAMSA_ERR_NONE);
    assert_int_equal(out.Topics[0].Partitions[0].Timestamp, -1);
    assert_int_equal(out.Topics[0].Partitions[0].LeaderEpoch, 0);
    samsa_arena_fini(&arena);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_ListOffsetsRequest_round_trip),
        cmocka_unit_test(test_ListOffsetsRequest_bytes),
        cmocka_unit_test(test_ListOffsetsRequest_golden),
        cmocka_unit_test(test_ListOffsetsResponse_round_trip),
        cmocka_unit_test(test_ListOffsetsResponse_bytes),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
