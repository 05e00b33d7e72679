/* Unit tests for the generated AddPartitionsToTxn codecs
 * (proto/gen/AddPartitionsToTxn.c): v0-v3 round-trip (v3 flexible); the
 * v1 request is the bytes of Kafka's format. */
#include "unit.h"

#include <stdlib.h>

#include "proto/gen/AddPartitionsToTxn.h"
#include "rt.h"

RT_DEFINE(AddPartitionsToTxnRequest)
RT_DEFINE(AddPartitionsToTxnResponse)

static void
test_AddPartitionsToTxn_round_trip(void **state)
{
    samsa_AddPartitionsToTxnRequest_t        in, out;
    samsa_AddPartitionsToTxnResponse_t       rin, rout;
    samsa_AddPartitionsToTxnTopic_t          t;
    samsa_AddPartitionsToTxnTopicResult_t    tr;
    samsa_AddPartitionsToTxnPartitionResult_t pr = { 1, 48 };
    int32_t                                  parts[2] = { 0, 1 };
    samsa_arena_t                            arena;
    samsa_buf_t                              buf;
    int16_t                                  v;
    static const uint8_t                     v1[] = {
        0x00, 0x02, 't', 'x',
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05, 0x00, 0x02,
        0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 't',
        0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
    };

    (void) state;
    samsa_arena_init(&arena);
    samsa_AddPartitionsToTxnRequest_init(&in);
    in.V3AndBelowTransactionalId = S("tx");
    in.V3AndBelowProducerId = 5;
    in.V3AndBelowProducerEpoch = 2;
    samsa_AddPartitionsToTxnTopic_init(&t);
    t.Name = S("t");
    t.Partitions = parts;
    t.Partitions_cnt = 2;
    in.V3AndBelowTopics = &t;
    in.V3AndBelowTopics_cnt = 1;
    samsa_AddPartitionsToTxnResponse_init(&rin);
    samsa_AddPartitionsToTxnTopicResult_init(&tr);
    tr.Name = S("t");
    tr.ResultsByPartition = &pr;
    tr.ResultsByPartition_cnt = 1;
    rin.ResultsByTopicV3AndBelow = &tr;
    rin.ResultsByTopicV3AndBelow_cnt = 1;
    for (v = 0; v <= SAMSA_AddPartitionsToTxn_VERSION_MAX; v++) {
        rt_AddPartitionsToTxnRequest(v, &in, &out, &arena, &buf);
        assert_int_equal(out.V3AndBelowTopics_cnt, 1);
        assert_int_equal(out.V3AndBelowTopics[0].Partitions[1], 1);
        samsa_buf_fini(&buf);
        rt_AddPartitionsToTxnResponse(v, &rin, &rout, &arena, &buf);
        assert_int_equal(rout.ResultsByTopicV3AndBelow[0].ResultsByPartition[0]
                             .PartitionErrorCode, 48);
        samsa_buf_fini(&buf);
    }
    RT_ENCODES_TO(AddPartitionsToTxnRequest, 1, &in, v1, sizeof(v1));
    samsa_arena_fini(&arena);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_AddPartitionsToTxn_round_trip),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
