/* Unit tests for the generated AlterConfigs codecs
 * (proto/gen/AlterConfigs.c): v0-v2 round-trip (v2 flexible);
 * kafka-python, confluent-kafka and kafkajs requests decode and re-encode
 * byte for byte; bytes assembled by hand from Kafka's message
 * definitions. */
#include "unit.h"

#include <stdlib.h>

#include "golden.h"
#include "proto/gen/AlterConfigs.h"
#include "rt.h"

RT_DEFINE(AlterConfigsRequest)
RT_DEFINE(AlterConfigsResponse)

static void
test_AlterConfigsRequest_round_trip(void **state)
{
    samsa_AlterConfigsRequest_t   in, out;
    samsa_AlterConfigsResource_t  r[2];
    samsa_AlterableConfig_t       c[2] = {
        { S("retention.ms"), S("60000") },
        { S("cleanup.policy"), SAMSA_SLICE_NULL },
    };
    samsa_arena_t                 arena;
    samsa_buf_t                   buf;
    int16_t                       v;

    (void) state;
    samsa_arena_init(&arena);
    samsa_AlterConfigsRequest_init(&in);
    r[0] = (samsa_AlterConfigsResource_t) { 2, S("orders"), c, 2 };
    r[1] = (samsa_AlterConfigsResource_t) { 4, S("1"), NULL, 0 };
    in.Resources = r;
    in.Resources_cnt = 2;
    in.ValidateOnly = true;
    for (v = 0; v <= SAMSA_AlterConfigs_VERSION_MAX; v++) {
        rt_AlterConfigsRequest(v, &in, &out, &arena, &buf);
        assert_true(out.ValidateOnly);
        assert_int_equal(out.Resources_cnt, 2);
        assert_int_equal(out.Resources[0].ResourceType, 2);
        assert_true(samsa_slice_eq_cstr(out.Resources[0].ResourceName,
                                        "orders"));
        assert_int_equal(out.Resources[0].Configs_cnt, 2);
        assert_true(samsa_slice_eq_cstr(out.Resources[0].Configs[0].Value,
                                        "60000"));
        assert_null(out.Resources[0].Configs[1].Value.ptr);
        assert_int_equal(out.Resources[1].ResourceType, 4);
        assert_int_equal(out.Resources[1].Configs_cnt, 0);
        samsa_buf_fini(&buf);
    }
    samsa_arena_fini(&arena);
}

/* Topic "t": a=b, validate only: v0/v1 and v2. */
static void
test_AlterConfigsRequest_bytes(void **state)
{
    static const uint8_t          v0[] = {
        0x00, 0x00, 0x00, 0x01, 0x02, 0x00, 0x01, 't',
        0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 'a', 0x00, 0x01, 'b', 0x01,
    };
    static const uint8_t          v2[] = {
        0x02, 0x02, 0x02, 't', 0x02, 0x02, 'a', 0x02, 'b', 0x00, 0x00,
        0x01, 0x00,
    };
    samsa_AlterConfigsRequest_t   m;
    samsa_AlterableConfig_t       c = { S("a"), S("b") };
    samsa_AlterConfigsResource_t  r = { 2, S("t"), &c, 1 };

    (void) state;
    samsa_AlterConfigsRequest_init(&m);
    m.Resources = &r;
    m.Resources_cnt = 1;
    m.ValidateOnly = true;
    RT_ENCODES_TO(AlterConfigsRequest, 0, &m, v0, sizeof(v0));
    RT_ENCODES_TO(AlterConfigsRequest, 1, &m, v0, sizeof(v0));
    RT_ENCODES_TO(AlterConfigsRequest, 2, &m, v2, sizeof(v2));
}

/* Every client here set retention.ms=60000 on topic samsa-golden. */
static void
check_golden(const uint8_t *frame, size_t len, size_t hdr_len,
             int16_t version)
{
    samsa_AlterConfigsRequest_t  m;
    samsa_arena_t                arena;

    samsa_arena_init(&arena);
    assert_int_equal(RT_DECODE(AlterConfigsRequest, version, frame + hdr_len,
                               len - hdr_len, &arena, &m), SAMSA_ERR_NONE);
    assert_false(m.ValidateOnly);
    assert_int_equal(m.Resources_cnt, 1);
    assert_int_equal(m.Resources[0].ResourceType, 2);
    assert_true(samsa_slice_eq_cstr(m.Resources[0].ResourceName,
                                    "samsa-golden"));
    assert_int_equal(m.Resources[0].Configs_cnt, 1);
    assert_true(samsa_slice_eq_cstr(m.Resources[0].Configs[0].Name,
                                    "retention.ms"));
    assert_true(samsa_slice_eq_cstr(m.Resources[0].Configs[0].Value,
                                    "60000"));
    RT_ENCODES_TO(AlterConfigsRequest, version, &m, frame + hdr_len,
                  len - hdr_len);
    samsa_arena_fini(&arena);
}

#define GOLDEN(g, v)                                                      \
    check_golden(GOLDEN_##g, sizeof(GOLDEN_##g), GOLDEN_##g##_HDR_LEN, v)

static void
test_AlterConfigsRequest_golden(void **state)
{
    (void) state;
    GOLDEN(kafka_python_data_AlterConfigs_v1, 1);
    GOLDEN(confluent_data_AlterConfigs_v0, 0);
    GOLDEN(kafkajs_data_AlterConfigs_v1, 1);
}

static void
test_AlterConfigsResponse_round_trip(void **state)
{
    samsa_AlterConfigsResponse_t          in, out;
    samsa_AlterConfigsResourceResponse_t  r[2] = {
        { 0, SAMSA_SLICE_NULL, 2, S("orders") },
        { 40, S("bad value"), 4, S("1") },      /* INVALID_CONFIG */
    };
    samsa_arena_t                         arena;
    samsa_buf_t                           buf;
    int16_t                               v;

    (void) state;
    samsa_arena_init(&arena);
    samsa_AlterConfigsResponse_init(&in);
    in.ThrottleTimeMs = 9;
    in.Responses = r;
    in.Responses_cnt = 2;
    for (v = 0; v <= SAMSA_AlterConfigs_VERSION_MAX; v++) {
        rt_AlterConfigsResponse(v, &in, &out, &arena, &buf);
        assert_int_equal(out.ThrottleTimeMs, 9);
        assert_int_equal(out.Responses_cnt, 2);
        assert_null(out.Responses[0].ErrorMessage.ptr);
        assert_true(samsa_slice_eq_cstr(out.Responses[0].ResourceName,
                                        "orders"));
        assert_int_equal(out.Responses[1].ErrorCode, 40);
        assert_true(samsa_slice_eq_cstr(out.Responses[1].ErrorMessage,
                                        "bad value"));
        assert_int_equal(out.Responses[1].ResourceType, 4);
        samsa_buf_fini(&buf);
    }
    samsa_arena_fini(&arena);
}

/* Topic "t" altered: v0/v1 and v2. */
static void
test_AlterConfigsResponse_bytes(void **state)
{
    static const uint8_t                  v0[] = {
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
        0x00, 0x00, 0xff, 0xff, 0x02, 0x00, 0x01, 't',
    };
    static const uint8_t                  v2[] = {
        0x00, 0x00, 0x00, 0x00, 0x02,
        0x00, 0x00, 0x00, 0x02, 0x02, 't', 0x00, 0x00,
    };
    samsa_AlterConfigsResponse_t          m;
    samsa_AlterConfigsResourceResponse_t  r = { 0, SAMSA_SLICE_NULL, 2,
                                                S("t") };

    (void) state;
    samsa_AlterConfigsResponse_init(&m);
    m.Responses = &r;
    m.Responses_cnt = 1;
    RT_ENCODES_TO(AlterConfigsResponse, 0, &m, v0, sizeof(v0));
    RT_ENCODES_TO(AlterConfigsResponse, 1, &m, v0, sizeof(v0));
    RT_ENCODES_TO(AlterConfigsResponse, 2, &m, v2, sizeof(v2));
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_AlterConfigsRequest_round_trip),
        cmocka_unit_test(test_AlterConfigsRequest_bytes),
        cmocka_unit_test(test_AlterConfigsRequest_golden),
        cmocka_unit_test(test_AlterConfigsResponse_round_trip),
        cmocka_unit_test(test_AlterConfigsResponse_bytes),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
