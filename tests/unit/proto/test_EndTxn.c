/* Unit tests for the generated EndTxn codecs (proto/gen/EndTxn.c): v0-v4
 * round-trip (v3 flexible); the v1 and v3 requests are the bytes of
 * Kafka's format. */
#include "unit.h"

#include <stdlib.h>

#include "proto/gen/EndTxn.h"
#include "rt.h"

RT_DEFINE(EndTxnRequest)
RT_DEFINE(EndTxnResponse)

static void
test_EndTxn_round_trip(void **state)
{
    samsa_EndTxnRequest_t   in, out;
    samsa_EndTxnResponse_t  rin, rout;
    samsa_arena_t           arena;
    samsa_buf_t             buf;
    int16_t                 v;

    (void) state;
    samsa_arena_init(&arena);
    samsa_EndTxnRequest_init(&in);
    in.TransactionalId = S("tx");
    in.ProducerId = 5;
    in.ProducerEpoch = 2;
    in.Committed = true;
    samsa_EndTxnResponse_init(&rin);
    rin.ThrottleTimeMs = 1;
    rin.ErrorCode = 51;
    for (v = 0; v <= SAMSA_EndTxn_VERSION_MAX; v++) {
        rt_EndTxnRequest(v, &in, &out, &arena, &buf);
        assert_true(samsa_slice_eq_cstr(out.TransactionalId, "tx"));
        assert_int_equal(out.ProducerId, 5);
        assert_int_equal(out.ProducerEpoch, 2);
        assert_true(out.Committed);
        samsa_buf_fini(&buf);
        rt_EndTxnResponse(v, &rin, &rout, &arena, &buf);
        assert_int_equal(rout.ErrorCode, 51);
        samsa_buf_fini(&buf);
    }
    samsa_arena_fini(&arena);
}

static void
test_EndTxn_bytes(void **state)
{
    static const uint8_t   v1[] = {
        0x00, 0x02, 't', 'x',
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05, 0x00, 0x02, 0x01,
    };
    static const uint8_t   v3[] = {
        0x03, 't', 'x',
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05, 0x00, 0x02, 0x01,
        0x00,
    };
    samsa_EndTxnRequest_t  m;

    (void) state;
    samsa_EndTxnRequest_init(&m);
    m.TransactionalId = S("tx");
    m.ProducerId = 5;
    m.ProducerEpoch = 2;
    m.Committed = true;
    RT_ENCODES_TO(EndTxnRequest, 1, &m, v1, sizeof(v1));
    RT_ENCODES_TO(EndTxnRequest, 3, &m, v3, sizeof(v3));
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_EndTxn_round_trip),
        cmocka_unit_test(test_EndTxn_bytes),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
