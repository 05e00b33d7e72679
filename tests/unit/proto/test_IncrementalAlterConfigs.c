/* Unit tests for the generated IncrementalAlterConfigs codecs
 * (proto/gen/IncrementalAlterConfigs.c): v0-v1 round-trip (v1 flexible).
 * No client available here sends it (librdkafka 2.0.2 predates it), so the
 * golden requests are assembled by hand (golden_capture.py handmade_data)
 * from Kafka's message definitions. */
#include "unit.h"

#include <stdlib.h>

#include "golden.h"
#include "proto/gen/IncrementalAlterConfigs.h"
#include "rt.h"

RT_DEFINE(IncrementalAlterConfigsRequest)
RT_DEFINE(IncrementalAlterConfigsResponse)

static void
test_IncrementalAlterConfigsRequest_round_trip(void **state)
{
    samsa_IncrementalAlterConfigsRequest_t   in, out;
    samsa_IncrementalAlterConfigsResource_t  r[2];
    samsa_IncrementalAlterableConfig_t       c[2] = {
        { S("retention.ms"), 0, S("60000") },          /* SET */
        { S("cleanup.policy"), 1, SAMSA_SLICE_NULL },  /* DELETE */
    };
    samsa_arena_t                            arena;
    samsa_buf_t                              buf;
    int16_t                                  v;

    (void) state;
    samsa_arena_init(&arena);
    samsa_IncrementalAlterConfigsRequest_init(&in);
    r[0] = (samsa_IncrementalAlterConfigsResource_t) { 2, S("orders"), c,
                                                       2 };
    r[1] = (samsa_IncrementalAlterConfigsResource_t) { 4, S("1"), NULL, 0 };
    in.Resources = r;
    in.Resources_cnt = 2;
    in.ValidateOnly = true;
    for (v = 0; v <= SAMSA_IncrementalAlterConfigs_VERSION_MAX; v++) {
        rt_IncrementalAlterConfigsRequest(v, &in, &out, &arena, &buf);
        assert_true(out.ValidateOnly);
        assert_int_equal(out.Resources_cnt, 2);
        assert_true(samsa_slice_eq_cstr(out.Resources[0].ResourceName,
                                        "orders"));
        assert_int_equal(out.Resources[0].Configs_cnt, 2);
        assert_int_equal(out.Resources[0].Configs[0].ConfigOperation, 0);
        assert_true(samsa_slice_eq_cstr(out.Resources[0].Configs[0].Value,
                                        "60000"));
        assert_int_equal(out.Resources[0].Configs[1].ConfigOperation, 1);
        assert_null(out.Resources[0].Configs[1].Value.ptr);
        assert_int_equal(out.Resources[1].ResourceType, 4);
        samsa_buf_fini(&buf);
    }
    samsa_arena_fini(&arena);
}

/* SET retention.ms=60000 on topic samsa-golden, not validate-only. */
static void
check_golden(const uint8_t *frame, size_t len, size_t hdr_len,
             int16_t version)
{
    samsa_IncrementalAlterConfigsRequest_t  m;
    samsa_IncrementalAlterableConfig_t     *c;
    samsa_arena_t                           arena;

    samsa_arena_init(&arena);
    assert_int_equal(RT_DECODE(IncrementalAlterConfigsRequest, version,
                               frame + hdr_len, len - hdr_len, &arena, &m),
                     SAMSA_ERR_NONE);
    assert_false(m.ValidateOnly);
    assert_int_equal(m.Resources_cnt, 1);
    assert_int_equal(m.Resources[0].ResourceType, 2);
    assert_true(samsa_slice_eq_cstr(m.Resources[0].ResourceName,
                                    "samsa-golden"));
    assert_int_equal(m.Resources[0].Configs_cnt, 1);
    c = &m.Resources[0].Configs[0];
    assert_true(samsa_slice_eq_cstr(c->Name, "retention.ms"));
    assert_int_equal(c->ConfigOperation, 0);
    assert_true(samsa_slice_eq_cstr(c->Value, "60000"));
    RT_ENCODES_TO(IncrementalAlterConfigsRequest, version, &m,
                  frame + hdr_len, len - hdr_len);
    samsa_arena_fini(&arena);
}

#define GOLDEN(g, v)                                                      \
    check_golden(GOLDEN_##g, sizeof(GOLDEN_##g), GOLDEN_##g##_HDR_LEN, v)

static void
test_IncrementalAlterConfigsRequest_golden(void **state)
{
    (void) state;
    GOLDEN(handmade_IncrementalAlterConfigs_v0, 0);
    GOLDEN(handmade_IncrementalAlterConfigs_v1, 1);
}

static void
test_IncrementalAlterConfigsResponse_round_trip(void **state)
{
    samsa_IncrementalAlterConfigsResponse_t          in, out;
    samsa_IncrementalAlterConfigsResourceResponse_t  r[2] = {
        { 0, SAMSA_SLICE_NULL, 2, S("orders") },
        { 40, S("bad value"), 4, S("1") },
    };
    samsa_arena_t                                    arena;
    samsa_buf_t                                      buf;
    int16_t                                          v;

    (void) state;
    samsa_arena_init(&arena);
    samsa_IncrementalAlterConfigsResponse_init(&in);
    in.ThrottleTimeMs = 9;
    in.Responses = r;
    in.Responses_cnt = 2;
    for (v = 0; v <= SAMSA_IncrementalAlterConfigs_VERSION_MAX; v++) {
        rt_IncrementalAlterConfigsResponse(v, &in, &out, &arena, &buf);
        assert_int_equal(out.ThrottleTimeMs, 9);
        assert_int_equal(out.Responses_cnt, 2);
        assert_null(out.Responses[0].ErrorMessage.ptr);
        assert_int_equal(out.Responses[1].ErrorCode, 40);
        assert_true(samsa_slice_eq_cstr(out.Responses[1].ErrorMessage,
                                        "bad value"));
        assert_true(samsa_slice_eq_cstr(out.Responses[1].ResourceName, "1"));
        samsa_buf_fini(&buf);
    }
    samsa_arena_fini(&arena);
}

/* Topic "t" altered: v0 and v1. */
static void
test_IncrementalAlterConfigsResponse_bytes(void **state)
{
    static const uint8_t                             v0[] = {
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
        0x00, 0x00, 0xff, 0xff, 0x02, 0x00, 0x01, 't',
    };
    static const uint8_t                             v1[] = {
        0x00, 0x00, 0x00, 0x00, 0x02,
        0x00, 0x00, 0x00, 0x02, 0x02, 't', 0x00, 0x00,
    };
    samsa_IncrementalAlterConfigsResponse_t          m;
    samsa_IncrementalAlterConfigsResourceResponse_t  r = {
        0, SAMSA_SLICE_NULL, 2, S("t") };

    (void) state;
    samsa_IncrementalAlterConfigsResponse_init(&m);
    m.Responses = &r;
    m.Responses_cnt = 1;
    RT_ENCODES_TO(IncrementalAlterConfigsResponse, 0, &m, v0, sizeof(v0));
    RT_ENCODES_TO(IncrementalAlterConfigsResponse, 1, &m, v1, sizeof(v1));
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_IncrementalAlterConfigsRequest_round_trip),
        cmocka_unit_test(test_IncrementalAlterConfigsRequest_golden),
        cmocka_unit_test(test_IncrementalAlterConfigsResponse_round_trip),
        cmocka_unit_test(test_IncrementalAlterConfigsResponse_bytes),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
