/* Unit tests for the generated OffsetCommit and OffsetFetch codecs
 * (proto/gen/{OffsetCommit,OffsetFetch}.c): v0-v9 round trips (v1
 * CommitTimestamp, v2-v4 RetentionTimeMs, v6 leader epochs, v7 instance
 * id and RequireStable, v8 flexible and multi-group fetch, v9 member
 * epoch), bytes assembled by hand from Kafka's message definitions. */
#include "unit.h"

#include <stdlib.h>

#include "proto/gen/OffsetCommit.h"
#include "proto/gen/OffsetFetch.h"
#include "rt.h"

RT_DEFINE(OffsetCommitRequest)
RT_DEFINE(OffsetCommitResponse)
RT_DEFINE(OffsetFetchRequest)
RT_DEFINE(OffsetFetchResponse)

static void
test_OffsetCommitRequest_round_trip(void **state)
{
    samsa_OffsetCommitRequest_t           in, out;
    samsa_OffsetCommitRequestPartition_t  p[2] = {
        { 0, 100, 3, 1700000000000LL, S("meta") },
        { 2, 5, -1, -1, SAMSA_SLICE_NULL },
    };
    samsa_OffsetCommitRequestTopic_t      t = { S("t1"), p, 2 };
    samsa_arena_t                         arena;
    samsa_buf_t                           buf;
    int16_t                               v;

    (void) state;
    samsa_arena_init(&arena);
    samsa_OffsetCommitRequest_init(&in);
    in.GroupId = S("g");
    in.GenerationIdOrMemberEpoch = 9;
    in.MemberId = S("m");
    in.GroupInstanceId = S("i");
    in.RetentionTimeMs = 60000;
    in.Topics = &t;
    in.Topics_cnt = 1;
    for (v = 0; v <= SAMSA_OffsetCommit_VERSION_MAX; v++) {
        rt_OffsetCommitRequest(v, &in, &out, &arena, &buf);
        assert_int_equal(out.GenerationIdOrMemberEpoch, v >= 1 ? 9 : -1);
        assert_int_equal(out.RetentionTimeMs, v >= 2 && v <= 4 ? 60000 : -1);
        assert_int_equal(out.GroupInstanceId.ptr != NULL, v >= 7);
        assert_int_equal(out.Topics[0].Partitions_cnt, 2);
        assert_int_equal(out.Topics[0].Partitions[0].CommittedOffset, 100);
        assert_int_equal(out.Topics[0].Partitions[0].CommittedLeaderEpoch,
                         v >= 6 ? 3 : -1);
        assert_int_equal(out.Topics[0].Partitions[0].CommitTimestamp,
                         v == 1 ? 1700000000000LL : -1);
        assert_true(samsa_slice_eq_cstr(
            out.Topics[0].Partitions[0].CommittedMetadata, "meta"));
        assert_null(out.Topics[0].Partitions[1].CommittedMetadata.ptr);
        samsa_buf_fini(&buf);
    }
    samsa_arena_fini(&arena);
}

/* Sarama's v1 (generation -1, commit timestamp -1) and kafka-python's v2:
 * group "g", member "", topic "t", partition 0 offset 5, metadata "". */
static void
test_OffsetCommitRequest_bytes(void **state)
{
    static const uint8_t                  v1[] = {
        0x00, 0x01, 'g', 0xff, 0xff, 0xff, 0xff, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 't',
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05,
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00,
    };
    static const uint8_t                  v2[] = {
        0x00, 0x01, 'g', 0xff, 0xff, 0xff, 0xff, 0x00, 0x00,
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 't',
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00,
    };
    static const uint8_t                  v8[] = {
        0x02, 'g', 0xff, 0xff, 0xff, 0xff, 0x01, 0x00,
        0x02, 0x02, 't', 0x02, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05,
        0xff, 0xff, 0xff, 0xff, 0x01, 0x00, 0x00, 0x00,
    };
    samsa_OffsetCommitRequest_t           m;
    samsa_OffsetCommitRequestPartition_t  p = { 0, 5, -1, -1, S("") };
    samsa_OffsetCommitRequestTopic_t      t = { S("t"), &p, 1 };

    (void) state;
    samsa_OffsetCommitRequest_init(&m);
    m.GroupId = S("g");
    m.MemberId = S("");
    m.Topics = &t;
    m.Topics_cnt = 1;
    RT_ENCODES_TO(OffsetCommitRequest, 1, &m, v1, sizeof(v1));
    RT_ENCODES_TO(OffsetCommitRequest, 2, &m, v2, sizeof(v2));
    RT_ENCODES_TO(OffsetCommitRequest, 8, &m, v8, sizeof(v8));
}

static void
test_OffsetCommitResponse_round_trip(void **state)
{
    samsa_OffsetCommitResponse_t           in, out;
    samsa_OffsetCommitResponsePartition_t  p[2] = { { 0, 0 }, { 1, 22 } };
    samsa_OffsetCommitResponseTopic_t      t = { S("t1"), p, 2 };
    samsa_arena_t                          arena;
    samsa_buf_t                            buf;
    int16_t                                v;

    (void) state;
    samsa_arena_init(&arena);
    samsa_OffsetCommitResponse_init(&in);
    in.ThrottleTimeMs = 3;
    in.Topics = &t;
    in.Topics_cnt = 1;
    for (v = 0; v <= SAMSA_OffsetCommit_VERSION_MAX; v++) {
        rt_OffsetCommitResponse(v, &in, &out, &arena, &buf);
        assert_int_equal(out.ThrottleTimeMs, v >= 3 ? 3 : 0);
        assert_int_equal(out.Topics[0].Partitions[1].ErrorCode, 22);
        samsa_buf_fini(&buf);
    }
    samsa_arena_fini(&arena);
}

static void
test_OffsetFetchRequest_round_trip(void **state)
{
    samsa_OffsetFetchRequest_t          in, out;
    int32_t                             parts[3] = { 0, 1, 2 };
    samsa_OffsetFetchRequestTopic_t     t = { S("t1"), parts, 3 };
    samsa_OffsetFetchRequestTopics_t    ts = { S("t2"), parts, 2 };
    samsa_OffsetFetchRequestGroup_t     g[2] = {
        { S("g1"), S("m"), 4, &ts, 1 },
        { S("g2"), SAMSA_SLICE_NULL, -1, NULL, -1 },
    };
    samsa_arena_t                       arena;
    samsa_buf_t                         buf;
    int16_t                             v;

    (void) state;
    samsa_arena_init(&arena);
    samsa_OffsetFetchRequest_init(&in);
    in.GroupId = S("g0");
    in.Topics = &t;
    in.Topics_cnt = 1;
    in.Groups = g;
    in.Groups_cnt = 2;
    in.RequireStable = true;
    for (v = 0; v <= SAMSA_OffsetFetch_VERSION_MAX; v++) {
        rt_OffsetFetchRequest(v, &in, &out, &arena, &buf);
        if (v <= 7) {
            assert_true(samsa_slice_eq_cstr(out.GroupId, "g0"));
            assert_int_equal(out.Topics_cnt, 1);
            assert_int_equal(out.Topics[0].PartitionIndexes_cnt, 3);
            assert_int_equal(out.Groups_cnt, 0);
        } else {
            assert_int_equal(out.Groups_cnt, 2);
            assert_int_equal(out.Groups[0].Topics[0].PartitionIndexes_cnt, 2);
            assert_int_equal(out.Groups[1].Topics_cnt, -1);
            assert_int_equal(out.Groups[0].MemberEpoch, v >= 9 ? 4 : -1);
        }
        assert_int_equal(out.RequireStable, v >= 7);
        samsa_buf_fini(&buf);
    }
    samsa_arena_fini(&arena);
}

/* All topics (null) at v2; one group, all topics at v8. */
static void
test_OffsetFetchRequest_bytes(void **state)
{
    static const uint8_t             v2[] = {
        0x00, 0x01, 'g', 0xff, 0xff, 0xff, 0xff,
    };
    static const uint8_t             v8[] = {
        0x02, 0x02, 'g', 0x00, 0x00, 0x00, 0x00,
    };
    samsa_OffsetFetchRequest_t       m;
    samsa_OffsetFetchRequestGroup_t  g = { S("g"), SAMSA_SLICE_NULL, -1,
                                           NULL, -1 };

    (void) state;
    samsa_OffsetFetchRequest_init(&m);
    m.GroupId = S("g");
    m.Topics_cnt = -1;
    m.Groups = &g;
    m.Groups_cnt = 1;
    RT_ENCODES_TO(OffsetFetchRequest, 2, &m, v2, sizeof(v2));
    RT_ENCODES_TO(OffsetFetchRequest, 8, &m, v8, sizeof(v8));
}

static void
test_OffsetFetchResponse_round_trip(void **state)
{
    samsa_OffsetFetchResponse_t             in, out;
    samsa_OffsetFetchResponsePartition_t    p = { 1, 42, 2, S("md"), 0 };
    samsa_OffsetFetchResponseTopic_t        t = { S("t"), &p, 1 };
    samsa_OffsetFetchResponsePartitions_t   ps = { 0, -1, -1,
                                                   SAMSA_SLICE_NULL, 0 };
    samsa_OffsetFetchResponseTopics_t       ts = { S("t"), &ps, 1 };
    samsa_OffsetFetchResponseGroup_t        g = { S("g"), &ts, 1, 16 };
    samsa_arena_t                           arena;
    samsa_buf_t                             buf;
    int16_t                                 v;

    (void) state;
    samsa_arena_init(&arena);
    samsa_OffsetFetchResponse_init(&in);
    in.Topics = &t;
    in.Topics_cnt = 1;
    in.ErrorCode = 14;
    in.Groups = &g;
    in.Groups_cnt = 1;
    for (v = 0; v <= SAMSA_OffsetFetch_VERSION_MAX; v++) {
        rt_OffsetFetchResponse(v, &in, &out, &arena, &buf);
        if (v <= 7) {
            assert_int_equal(out.Topics[0].Partitions[0].CommittedOffset, 42);
            assert_int_equal(out.Topics[0].Partitions[0].CommittedLeaderEpoch,
                             v >= 5 ? 2 : -1);
            assert_int_equal(out.ErrorCode, v >= 2 ? 14 : 0);
        } else {
            assert_int_equal(out.Groups_cnt, 1);
            assert_int_equal(out.Groups[0].ErrorCode, 16);
            assert_int_equal(out.Groups[0].Topics[0].Partitions[0]
                                 .CommittedOffset, -1);
        }
        samsa_buf_fini(&buf);
    }
    samsa_arena_fini(&arena);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_OffsetCommitRequest_round_trip),
        cmocka_unit_test(test_OffsetCommitRequest_bytes),
        cmocka_unit_test(test_OffsetCommitResponse_round_trip),
        cmocka_unit_test(test_OffsetFetchRequest_round_trip),
        cmocka_unit_test(test_OffsetFetchRequest_bytes),
        cmocka_unit_test(test_OffsetFetchResponse_round_trip),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
