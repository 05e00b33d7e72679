/* Unit tests for the generated InitProducerId codecs
 * (proto/gen/InitProducerId.c): v0-v5 round-trip (v2 flexible, v3
 * ProducerId/ProducerEpoch); kcat (idempotent) and kafkajs requests decode
 * and re-encode byte for byte; responses match the bytes those clients
 * accepted from tests/unit/proto/golden_capture.py. */
#include "unit.h"

#include <stdlib.h>

#include "golden.h"
#include "proto/gen/InitProducerId.h"
#include "rt.h"

RT_DEFINE(InitProducerIdRequest)
RT_DEFINE(InitProducerIdResponse)

static void
test_InitProducerIdRequest_round_trip(void **state)
{
    samsa_InitProducerIdRequest_t  in, out;
    samsa_arena_t                  arena;
    samsa_buf_t                    buf;
    int16_t                        v;

    (void) state;
    samsa_arena_init(&arena);
    samsa_InitProducerIdRequest_init(&in);
    assert_int_equal(in.ProducerId, -1);
    assert_int_equal(in.ProducerEpoch, -1);
    in.TransactionalId = S("txn-1");
    in.TransactionTimeoutMs = 60000;
    in.ProducerId = 1000;
    in.ProducerEpoch = 3;
    for (v = 0; v <= SAMSA_InitProducerId_VERSION_MAX; v++) {
        rt_InitProducerIdRequest(v, &in, &out, &arena, &buf);
        assert_true(samsa_slice_eq_cstr(out.TransactionalId, "txn-1"));
        assert_int_equal(out.TransactionTimeoutMs, 60000);
        assert_int_equal(out.ProducerId, v >= 3 ? 1000 : -1);
        assert_int_equal(out.ProducerEpoch, v >= 3 ? 3 : -1);
        samsa_buf_fini(&buf);
    }
    samsa_arena_fini(&arena);
}

/* Idempotent (no transactional id), timeout 5000: v1 and v4. */
static void
test_InitProducerIdRequest_bytes(void **state)
{
    static const uint8_t           v1[] = {
        0xff, 0xff, 0x00, 0x00, 0x13, 0x88,
    };
    static const uint8_t           v4[] = {
        0x00, 0x00, 0x00, 0x13, 0x88,
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00,
    };
    samsa_InitProducerIdRequest_t  m;

    (void) state;
    samsa_InitProducerIdRequest_init(&m);
    m.TransactionalId = SAMSA_SLICE_NULL;
    m.TransactionTimeoutMs = 5000;
    RT_ENCODES_TO(InitProducerIdRequest, 0, &m, v1, sizeof(v1));
    RT_ENCODES_TO(InitProducerIdRequest, 1, &m, v1, sizeof(v1));
    RT_ENCODES_TO(InitProducerIdRequest, 4, &m, v4, sizeof(v4));
    RT_ENCODES_TO(InitProducerIdRequest, 5, &m, v4, sizeof(v4));
}

/* An idempotent producer: no transactional id, no producer id yet. */
static void
check_golden(const uint8_t *frame, size_t len, size_t hdr_len,
             int16_t version, int32_t timeout)
{
    samsa_InitProducerIdRequest_t  m;
    samsa_arena_t                  arena;

    samsa_arena_init(&arena);
    assert_int_equal(RT_DECODE(InitProducerIdRequest, version,
                               frame + hdr_len, len - hdr_len, &arena, &m),
                     SAMSA_ERR_NONE);
    assert_null(m.TransactionalId.ptr);
    assert_int_equal(m.TransactionTimeoutMs, timeout);
    assert_int_equal(m.ProducerId, -1);
    assert_int_equal(m.ProducerEpoch, -1);
    RT_ENCODES_TO(InitProducerIdRequest, version, &m, frame + hdr_len,
                  len - hdr_len);
    samsa_arena_fini(&arena);
}

#define GOLDEN(g, v, timeout)                                             \
    check_golden(GOLDEN_##g, sizeof(GOLDEN_##g), GOLDEN_##g##_HDR_LEN, v, \
                 timeout)

static void
test_InitProducerIdRequest_golden(void **state)
{
    (void) state;
    GOLDEN(kcat_idempotent_InitProducerId_v4, 4, -1);
    GOLDEN(kafkajs_data_InitProducerId_v1, 1, 60000);
}

static void
test_InitProducerIdResponse_round_trip(void **state)
{
    samsa_InitProducerIdResponse_t  in, out;
    samsa_arena_t                   arena;
    samsa_buf_t                     buf;
    int16_t                         v;

    (void) state;
    samsa_arena_init(&arena);
    samsa_InitProducerIdResponse_init(&in);
    assert_int_equal(in.ProducerId, -1);
    in.ThrottleTimeMs = 2;
    in.ErrorCode = 47;                          /* INVALID_PRODUCER_EPOCH */
    in.ProducerId = 0x123456789;
    in.ProducerEpoch = 7;
    for (v = 0; v <= SAMSA_InitProducerId_VERSION_MAX; v++) {
        rt_InitProducerIdResponse(v, &in, &out, &arena, &buf);
        assert_int_equal(out.ThrottleTimeMs, 2);
        assert_int_equal(out.ErrorCode, 47);
        assert_int_equal(out.ProducerId, 0x123456789);
        assert_int_equal(out.ProducerEpoch, 7);
        samsa_buf_fini(&buf);
    }
    samsa_arena_fini(&arena);
}

/* Producer id 1000, epoch 0: kafkajs took v1 and kcat v4 from the impostor
 * and went on to produce. */
static void
test_InitProducerIdResponse_bytes(void **state)
{
    static const uint8_t            v1[] = {
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xe8, 0x00, 0x00,
    };
    static const uint8_t            v4[] = {
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xe8, 0x00, 0x00, 0x00,
    };
    samsa_InitProducerIdResponse_t  m;

    (void) state;
    samsa_InitProducerIdResponse_init(&m);
    m.ProducerId = 1000;
    RT_ENCODES_TO(InitProducerIdResponse, 1, &m, v1, sizeof(v1));
    RT_ENCODES_TO(InitProducerIdResponse, 4, &m, v4, sizeof(v4));
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_InitProducerIdRequest_round_trip),
        cmocka_unit_test(test_InitProducerIdRequest_bytes),
        cmocka_unit_test(test_InitProducerIdRequest_golden),
        cmocka_unit_test(test_InitProducerIdResponse_round_trip),
        cmocka_unit_test(test_InitProducerIdResponse_bytes),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
