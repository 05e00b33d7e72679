/* Unit tests for the generated AddOffsetsToTxn codecs
 * (proto/gen/AddOffsetsToTxn.c): v0-v4 round-trip (v3 flexible); the v1
 * request is the bytes of Kafka's format. */
#include "unit.h"

#include <stdlib.h>

#include "proto/gen/AddOffsetsToTxn.h"
#include "rt.h"

RT_DEFINE(AddOffsetsToTxnRequest)
RT_DEFINE(AddOffsetsToTxnResponse)

static void
test_AddOffsetsToTxn_round_trip(void **state)
{
    samsa_AddOffsetsToTxnRequest_t   in, out;
    samsa_AddOffsetsToTxnResponse_t  rin, rout;
    samsa_arena_t                    arena;
    samsa_buf_t                      buf;
    int16_t                          v;
    static const uint8_t             v1[] = {
        0x00, 0x02, 't', 'x',
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05, 0x00, 0x02,
        0x00, 0x01, 'g',
    };

    (void) state;
    samsa_arena_init(&arena);
    samsa_AddOffsetsToTxnRequest_init(&in);
    in.TransactionalId = S("tx");
    in.ProducerId = 5;
    in.ProducerEpoch = 2;
    in.GroupId = S("g");
    samsa_AddOffsetsToTxnResponse_init(&rin);
    rin.ErrorCode = 90;
    for (v = 0; v <= SAMSA_AddOffsetsToTxn_VERSION_MAX; v++) {
        rt_AddOffsetsToTxnRequest(v, &in, &out, &arena, &buf);
        assert_true(samsa_slice_eq_cstr(out.GroupId, "g"));
        assert_int_equal(out.ProducerId, 5);
        samsa_buf_fini(&buf);
        rt_AddOffsetsToTxnResponse(v, &rin, &rout, &arena, &buf);
        assert_int_equal(rout.ErrorCode, 90);
        samsa_buf_fini(&buf);
    }
    RT_ENCODES_TO(AddOffsetsToTxnRequest, 1, &in, v1, sizeof(v1));
    samsa_arena_fini(&arena);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_AddOffsetsToTxn_round_trip),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
