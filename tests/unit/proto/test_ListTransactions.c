/* Unit tests for the generated ListTransactions codecs
 * (proto/gen/ListTransactions.c): v0-v1 round-trip (v1 DurationFilter),
 * and the v0 request is the bytes of Kafka's format. */
#include "unit.h"

#include <stdlib.h>

#include "proto/gen/ListTransactions.h"
#include "rt.h"

RT_DEFINE(ListTransactionsRequest)
RT_DEFINE(ListTransactionsResponse)

static void
test_ListTransactions_round_trip(void **state)
{
    samsa_ListTransactionsRequest_t   in, out;
    samsa_ListTransactionsResponse_t  rin, rout;
    samsa_ListedTransaction_t         l;
    samsa_slice_t                     states[1] = { S("Ongoing") };
    int64_t                           pids[1] = { 7 };
    samsa_arena_t                     arena;
    samsa_buf_t                       buf;
    int16_t                           v;
    static const uint8_t              v0[] = {
        0x02, 0x08, 'O', 'n', 'g', 'o', 'i', 'n', 'g',
        0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, 0x00,
    };

    (void) state;
    samsa_arena_init(&arena);
    samsa_ListTransactionsRequest_init(&in);
    assert_int_equal(in.DurationFilter, -1);
    in.StateFilters = states;
    in.StateFilters_cnt = 1;
    in.ProducerIdFilters = pids;
    in.ProducerIdFilters_cnt = 1;
    in.DurationFilter = 1000;
    samsa_ListTransactionsResponse_init(&rin);
    samsa_ListedTransaction_init(&l);
    l.TransactionalId = S("a");
    l.ProducerId = 7;
    l.TransactionState = S("Ongoing");
    rin.TransactionStates = &l;
    rin.TransactionStates_cnt = 1;
    rin.UnknownStateFilters = states;
    rin.UnknownStateFilters_cnt = 1;
    for (v = 0; v <= SAMSA_ListTransactions_VERSION_MAX; v++) {
        rt_ListTransactionsRequest(v, &in, &out, &arena, &buf);
        assert_int_equal(out.ProducerIdFilters[0], 7);
        assert_int_equal(out.DurationFilter, v >= 1 ? 1000 : -1);
        samsa_buf_fini(&buf);
        rt_ListTransactionsResponse(v, &rin, &rout, &arena, &buf);
        assert_int_equal(rout.TransactionStates[0].ProducerId, 7);
        samsa_buf_fini(&buf);
    }
    in.DurationFilter = -1;
    RT_ENCODES_TO(ListTransactionsRequest, 0, &in, v0, sizeof(v0));
    samsa_arena_fini(&arena);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_ListTransactions_round_trip),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
