/* Unit tests for the generated TxnOffsetCommit codecs
 * (proto/gen/TxnOffsetCommit.c): v0-v4 round-trip (v2 leader epoch, v3
 * flexible with member id, generation and instance id). */
#include "unit.h"

#include <stdlib.h>

#include "proto/gen/TxnOffsetCommit.h"
#include "rt.h"

RT_DEFINE(TxnOffsetCommitRequest)
RT_DEFINE(TxnOffsetCommitResponse)

static void
test_TxnOffsetCommit_round_trip(void **state)
{
    samsa_TxnOffsetCommitRequest_t           in, out;
    samsa_TxnOffsetCommitRequestTopic_t      t;
    samsa_TxnOffsetCommitRequestPartition_t  p;
    samsa_TxnOffsetCommitResponse_t          rin, rout;
    samsa_TxnOffsetCommitResponseTopic_t     rt;
    samsa_TxnOffsetCommitResponsePartition_t rp = { 3, 88 };
    samsa_arena_t                            arena;
    samsa_buf_t                              buf;
    int16_t                                  v;

    (void) state;
    samsa_arena_init(&arena);
    samsa_TxnOffsetCommitRequest_init(&in);
    assert_int_equal(in.GenerationId, -1);
    assert_true(samsa_slice_is_null(in.GroupInstanceId));
    in.TransactionalId = S("tx");
    in.GroupId = S("g");
    in.ProducerId = 5;
    in.ProducerEpoch = 2;
    in.GenerationId = 7;
    in.MemberId = S("m");
    in.GroupInstanceId = S("i");
    samsa_TxnOffsetCommitRequestPartition_init(&p);
    p.PartitionIndex = 3;
    p.CommittedOffset = 42;
    p.CommittedLeaderEpoch = 1;
    p.CommittedMetadata = SAMSA_SLICE_NULL;
    samsa_TxnOffsetCommitRequestTopic_init(&t);
    t.Name = S("t");
    t.Partitions = &p;
    t.Partitions_cnt = 1;
    in.Topics = &t;
    in.Topics_cnt = 1;
    samsa_TxnOffsetCommitResponse_init(&rin);
    samsa_TxnOffsetCommitResponseTopic_init(&rt);
    rt.Name = S("t");
    rt.Partitions = &rp;
    rt.Partitions_cnt = 1;
    rin.Topics = &rt;
    rin.Topics_cnt = 1;
    for (v = 0; v <= SAMSA_TxnOffsetCommit_VERSION_MAX; v++) {
        rt_TxnOffsetCommitRequest(v, &in, &out, &arena, &buf);
        assert_int_equal(out.Topics[0].Partitions[0].CommittedOffset, 42);
        assert_int_equal(out.Topics[0].Partitions[0].CommittedLeaderEpoch,
                         v >= 2 ? 1 : -1);
        assert_int_equal(out.GenerationId, v >= 3 ? 7 : -1);
        assert_true(samsa_slice_is_null(out.Topics[0].Partitions[0]
                                            .CommittedMetadata));
        samsa_buf_fini(&buf);
        rt_TxnOffsetCommitResponse(v, &rin, &rout, &arena, &buf);
        assert_int_equal(rout.Topics[0].Partitions[0].ErrorCode, 88);
        samsa_buf_fini(&buf);
    }
    samsa_arena_fini(&arena);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_TxnOffsetCommit_round_trip),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
