/* Unit tests for the generated DescribeTransactions codecs
 * (proto/gen/DescribeTransactions.c): v0 (flexible) round-trips, and the
 * request is the bytes of Kafka's format. */
#include "unit.h"

#include <stdlib.h>

#include "proto/gen/DescribeTransactions.h"
#include "rt.h"

RT_DEFINE(DescribeTransactionsRequest)
RT_DEFINE(DescribeTransactionsResponse)

static void
test_DescribeTransactions_round_trip(void **state)
{
    samsa_DescribeTransactionsRequest_t   in, out;
    samsa_DescribeTransactionsResponse_t  rin, rout;
    samsa_DescribedTxn_t                  d;
    samsa_DescribedTxnTopic_t             t;
    samsa_slice_t                         ids[2] = { S("a"), S("b") };
    int32_t                               parts[1] = { 4 };
    samsa_arena_t                         arena;
    samsa_buf_t                           buf;
    static const uint8_t                  v0[] = {
        0x03, 0x02, 'a', 0x02, 'b', 0x00,
    };

    (void) state;
    samsa_arena_init(&arena);
    samsa_DescribeTransactionsRequest_init(&in);
    in.TransactionalIds = ids;
    in.TransactionalIds_cnt = 2;
    rt_DescribeTransactionsRequest(0, &in, &out, &arena, &buf);
    assert_int_equal(out.TransactionalIds_cnt, 2);
    samsa_buf_fini(&buf);
    RT_ENCODES_TO(DescribeTransactionsRequest, 0, &in, v0, sizeof(v0));
    samsa_DescribeTransactionsResponse_init(&rin);
    samsa_DescribedTxn_init(&d);
    d.TransactionalId = S("a");
    d.TransactionState = S("Ongoing");
    d.TransactionTimeoutMs = 60000;
    d.TransactionStartTimeMs = 9;
    d.ProducerId = 5;
    d.ProducerEpoch = 2;
    samsa_DescribedTxnTopic_init(&t);
    t.Topic = S("t");
    t.Partitions = parts;
    t.Partitions_cnt = 1;
    d.Topics = &t;
    d.Topics_cnt = 1;
    rin.TransactionStates = &d;
    rin.TransactionStates_cnt = 1;
    rt_DescribeTransactionsResponse(0, &rin, &rout, &arena, &buf);
    assert_true(samsa_slice_eq_cstr(rout.TransactionStates[0].TransactionState,
                                    "Ongoing"));
    assert_int_equal(rout.TransactionStates[0].Topics[0].Partitions[0], 4);
    samsa_buf_fini(&buf);
    samsa_arena_fini(&arena);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_DescribeTransactions_round_trip),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
