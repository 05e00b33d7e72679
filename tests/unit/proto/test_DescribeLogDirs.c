/* Unit tests for the generated DescribeLogDirs codecs
 * (proto/gen/DescribeLogDirs.c): v0-v4 round-trip (v2 flexible, v3
 * top-level ErrorCode, v4 TotalBytes/UsableBytes).  No client available
 * here sends it, so the golden requests are assembled by hand
 * (golden_capture.py handmade_data) from Kafka's message definitions. */
#include "unit.h"

#include <stdlib.h>

#include "golden.h"
#include "proto/gen/DescribeLogDirs.h"
#include "rt.h"

RT_DEFINE(DescribeLogDirsRequest)
RT_DEFINE(DescribeLogDirsResponse)

static int32_t  parts[] = { 0, 5 };

static void
test_DescribeLogDirsRequest_round_trip(void **state)
{
    samsa_DescribeLogDirsRequest_t  in, out;
    samsa_DescribableLogDirTopic_t  t[2] = {
        { S("orders"), parts, 2 },
        { S("logs"), NULL, 0 },
    };
    samsa_arena_t                   arena;
    samsa_buf_t                     buf;
    int16_t                         v;

    (void) state;
    samsa_arena_init(&arena);
    samsa_DescribeLogDirsRequest_init(&in);
    for (v = 0; v <= SAMSA_DescribeLogDirs_VERSION_MAX; v++) {
        in.Topics = t;
        in.Topics_cnt = 2;
        rt_DescribeLogDirsRequest(v, &in, &out, &arena, &buf);
        assert_int_equal(out.Topics_cnt, 2);
        assert_true(samsa_slice_eq_cstr(out.Topics[0].Topic, "orders"));
        assert_int_equal(out.Topics[0].Partitions_cnt, 2);
        assert_int_equal(out.Topics[0].Partitions[1], 5);
        assert_int_equal(out.Topics[1].Partitions_cnt, 0);
        samsa_buf_fini(&buf);
        in.Topics = NULL;                       /* null: all topics */
        in.Topics_cnt = -1;
        rt_DescribeLogDirsRequest(v, &in, &out, &arena, &buf);
        assert_int_equal(out.Topics_cnt, -1);
        samsa_buf_fini(&buf);
    }
    samsa_arena_fini(&arena);
}

/* All topics (v1) and samsa-golden partition 0 (v2). */
static void
test_DescribeLogDirsRequest_golden(void **state)
{
    samsa_DescribeLogDirsRequest_t  m;
    samsa_arena_t                   arena;
    const uint8_t                  *f;
    size_t                          hl;

    (void) state;
    samsa_arena_init(&arena);
    f = GOLDEN_handmade_DescribeLogDirs_v1;
    hl = GOLDEN_handmade_DescribeLogDirs_v1_HDR_LEN;
    assert_int_equal(RT_DECODE(DescribeLogDirsRequest, 1, f + hl,
                               sizeof(GOLDEN_handmade_DescribeLogDirs_v1)
                               - hl, &arena, &m), SAMSA_ERR_NONE);
    assert_int_equal(m.Topics_cnt, -1);
    RT_ENCODES_TO(DescribeLogDirsRequest, 1, &m, f + hl,
                  sizeof(GOLDEN_handmade_DescribeLogDirs_v1) - hl);
    f = GOLDEN_handmade_DescribeLogDirs_v2;
    hl = GOLDEN_handmade_DescribeLogDirs_v2_HDR_LEN;
    assert_int_equal(RT_DECODE(DescribeLogDirsRequest, 2, f + hl,
                               sizeof(GOLDEN_handmade_DescribeLogDirs_v2)
                               - hl, &arena, &m), SAMSA_ERR_NONE);
    assert_int_equal(m.Topics_cnt, 1);
    assert_true(samsa_slice_eq_cstr(m.Topics[0].Topic, "samsa-golden"));
    assert_int_equal(m.Topics[0].Partitions_cnt, 1);
    assert_int_equal(m.Topics[0].Partitions[0], 0);
    RT_ENCODES_TO(DescribeLogDirsRequest, 2, &m, f + hl,
                  sizeof(GOLDEN_handmade_DescribeLogDirs_v2) - hl);
    samsa_arena_fini(&arena);
}

static void
populate_response(samsa_DescribeLogDirsResponse_t *m, samsa_arena_t *arena)
{
    samsa_DescribeLogDirsResult_t     *r;
    samsa_DescribeLogDirsTopic_t      *t;
    samsa_DescribeLogDirsPartition_t  *p;

    samsa_DescribeLogDirsResponse_init(m);
    m->ThrottleTimeMs = 3;
    m->ErrorCode = 31;                          /* CLUSTER_AUTH_FAILED */
    m->Results_cnt = 2;
    m->Results = r = samsa_arena_calloc(arena, 2, sizeof(*r));
    samsa_DescribeLogDirsResult_init(&r[0]);
    samsa_DescribeLogDirsResult_init(&r[1]);
    r[0].LogDir = S("/var/lib/samsa");
    r[0].TotalBytes = 1 << 30;
    r[0].UsableBytes = 1 << 20;
    r[0].Topics_cnt = 1;
    r[0].Topics = t = samsa_arena_calloc(arena, 1, sizeof(*t));
    t->Name = S("orders");
    t->Partitions_cnt = 2;
    t->Partitions = p = samsa_arena_calloc(arena, 2, sizeof(*p));
    p[0] = (samsa_DescribeLogDirsPartition_t) { 0, 4096, 0, false };
    p[1] = (samsa_DescribeLogDirsPartition_t) { 1, 1, 7, true };
    r[1].ErrorCode = 57;                        /* KAFKA_STORAGE_ERROR */
    r[1].LogDir = S("/bad");
}

static void
test_DescribeLogDirsResponse_round_trip(void **state)
{
    samsa_DescribeLogDirsResponse_t          in, out;
    const samsa_DescribeLogDirsResult_t     *r;
    const samsa_DescribeLogDirsPartition_t  *p;
    samsa_arena_t                            arena;
    samsa_buf_t                              buf;
    int16_t                                  v;

    (void) state;
    for (v = 0; v <= SAMSA_DescribeLogDirs_VERSION_MAX; v++) {
        samsa_arena_init(&arena);
        populate_response(&in, &arena);
        rt_DescribeLogDirsResponse(v, &in, &out, &arena, &buf);
        assert_int_equal(out.ThrottleTimeMs, 3);
        assert_int_equal(out.ErrorCode, v >= 3 ? 31 : 0);
        assert_int_equal(out.Results_cnt, 2);
        r = out.Results;
        assert_true(samsa_slice_eq_cstr(r[0].LogDir, "/var/lib/samsa"));
        assert_int_equal(r[0].TotalBytes, v >= 4 ? 1 << 30 : -1);
        assert_int_equal(r[0].UsableBytes, v >= 4 ? 1 << 20 : -1);
        assert_int_equal(r[0].Topics_cnt, 1);
        assert_true(samsa_slice_eq_cstr(r[0].Topics[0].Name, "orders"));
        assert_int_equal(r[0].Topics[0].Partitions_cnt, 2);
        p = r[0].Topics[0].Partitions;
        assert_int_equal(p[0].PartitionSize, 4096);
        assert_int_equal(p[1].PartitionIndex, 1);
        assert_int_equal(p[1].OffsetLag, 7);
        assert_true(p[1].IsFutureKey);
        assert_int_equal(r[1].ErrorCode, 57);
        assert_int_equal(r[1].Topics_cnt, 0);
        samsa_buf_fini(&buf);
        samsa_arena_fini(&arena);
    }
}

/* One directory "/d", topic "t" partition 0 of 16 bytes, lag 0; v4 adds
 * 100 total and 50 usable bytes: v0 and v4. */
static void
test_DescribeLogDirsResponse_bytes(void **state)
{
    static const uint8_t              v0[] = {
        0x00, 0x00, 0x00, 0x00,                     /* ThrottleTimeMs */
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02, '/', 'd',
        0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 't',
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    };
    static const uint8_t              v4[] = {
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00,         /* throttle, error */
        0x02, 0x00, 0x00, 0x03, '/', 'd',
        0x02, 0x02, 't', 0x02, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00,                                 /* partition, topic */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x64,     /* total */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x32,     /* usable */
        0x00, 0x00,                                 /* result, top tags */
    };
    samsa_DescribeLogDirsResponse_t   m;
    samsa_DescribeLogDirsResult_t     r;
    samsa_DescribeLogDirsPartition_t  p = { 0, 16, 0, false };
    samsa_DescribeLogDirsTopic_t      t = { S("t"), &p, 1 };

    (void) state;
    samsa_DescribeLogDirsResponse_init(&m);
    samsa_DescribeLogDirsResult_init(&r);
    r.LogDir = S("/d");
    r.Topics = &t;
    r.Topics_cnt = 1;
    r.TotalBytes = 100;
    r.UsableBytes = 50;
    m.Results = &r;
    m.Results_cnt = 1;
    RT_ENCODES_TO(DescribeLogDirsResponse, 0, &m, v0, sizeof(v0));
    RT_ENCODES_TO(DescribeLogDirsResponse, 4, &m, v4, sizeof(v4));
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_DescribeLogDirsRequest_round_trip),
        cmocka_unit_test(test_DescribeLogDirsRequest_golden),
        cmocka_unit_test(test_DescribeLogDirsResponse_round_trip),
        cmocka_unit_test(test_DescribeLogDirsResponse_bytes),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
