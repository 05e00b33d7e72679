/* Unit tests for the generated ApiVersions codecs (proto/gen/ApiVersions.c):
 * every version round-trips, real clients' requests decode and re-encode
 * byte for byte, and responses match Kafka's bytes. */
#include "unit.h"

#include <stdlib.h>

#include "golden.h"
#include "proto/gen/ApiVersions.h"
#include "rt.h"

RT_DEFINE(ApiVersionsRequest)
RT_DEFINE(ApiVersionsResponse)

static void
test_ApiVersionsRequest_round_trip(void **state)
{
    samsa_ApiVersionsRequest_t  in, out;
    samsa_arena_t               arena;
    samsa_buf_t                 buf;
    int16_t                     v;

    (void) state;
    samsa_arena_init(&arena);
    for (v = 0; v <= SAMSA_ApiVersions_VERSION_MAX; v++) {
        samsa_ApiVersionsRequest_init(&in);
        in.ClientSoftwareName = S("samsa");
        in.ClientSoftwareVersion = S("0.1");
        rt_ApiVersionsRequest(v, &in, &out, &arena, &buf);
        assert_true(samsa_slice_eq_cstr(out.ClientSoftwareName,
                                        v >= 3 ? "samsa" : ""));
        assert_true(samsa_slice_eq_cstr(out.ClientSoftwareVersion,
                                        v >= 3 ? "0.1" : ""));
        assert_int_equal(buf.len, v >= 3 ? 1 + 5 + 1 + 3 + 1 : 0);
        samsa_buf_fini(&buf);
    }
    samsa_arena_fini(&arena);
}

/* The body of a golden request decodes to name/version and re-encodes
 * to the same bytes. */
static void
check_golden(const uint8_t *frame, size_t len, size_t hdr_len,
             int16_t version, const char *name, const char *sw_version)
{
    samsa_ApiVersionsRequest_t  m;
    samsa_arena_t               arena;

    samsa_arena_init(&arena);
    assert_int_equal(RT_DECODE(ApiVersionsRequest, version, frame + hdr_len,
                               len - hdr_len, &arena, &m), SAMSA_ERR_NONE);
    assert_true(samsa_slice_eq_cstr(m.ClientSoftwareName, name));
    assert_true(samsa_slice_eq_cstr(m.ClientSoftwareVersion, sw_version));
    RT_ENCODES_TO(ApiVersionsRequest, version, &m, frame + hdr_len,
                  len - hdr_len);
    samsa_arena_fini(&arena);
}

#define GOLDEN(g, v, name, ver)                                           \
    check_golden(GOLDEN_##g, sizeof(GOLDEN_##g), GOLDEN_##g##_HDR_LEN, v, \
                 name, ver)

static void
test_ApiVersionsRequest_golden(void **state)
{
    (void) state;
    GOLDEN(kcat_ApiVersions_v3, 3, "librdkafka", "2.0.2");
    GOLDEN(confluent_ApiVersions_v3, 3, "confluent-kafka-python",
           "1.7.0-rdkafka-2.0.2");
    GOLDEN(kafka_python_ApiVersions_v0, 0, "", "");
    GOLDEN(kafkajs_ApiVersions_v2, 2, "", "");
}

static samsa_ApiVersion_t  keys[2] = {
    { .ApiKey = 18, .MinVersion = 0, .MaxVersion = 4 },
    { .ApiKey = 3, .MinVersion = 0, .MaxVersion = 12 },
};

static void
populate(samsa_ApiVersionsResponse_t *m, samsa_arena_t *arena)
{
    samsa_ApiVersionsResponse_init(m);
    m->ErrorCode = 35;
    m->ApiKeys = keys;
    m->ApiKeys_cnt = 2;
    m->ThrottleTimeMs = 100;
    m->SupportedFeatures_cnt = 1;
    m->SupportedFeatures = samsa_arena_calloc(arena, 1,
                                              sizeof(*m->SupportedFeatures));
    m->SupportedFeatures[0].Name = S("metadata.version");
    m->SupportedFeatures[0].MinVersion = 1;
    m->SupportedFeatures[0].MaxVersion = 20;
    m->FinalizedFeaturesEpoch = 7;
    m->FinalizedFeatures_cnt = 1;
    m->FinalizedFeatures = samsa_arena_calloc(arena, 1,
                                              sizeof(*m->FinalizedFeatures));
    m->FinalizedFeatures[0].Name = S("metadata.version");
    m->FinalizedFeatures[0].MaxVersionLevel = 20;
    m->FinalizedFeatures[0].MinVersionLevel = 20;
    m->ZkMigrationReady = true;
}

static void
test_ApiVersionsResponse_round_trip(void **state)
{
    samsa_ApiVersionsResponse_t  in, out;
    samsa_arena_t                arena;
    samsa_buf_t                  buf;
    int16_t                      v;

    (void) state;
    samsa_arena_init(&arena);
    for (v = 0; v <= SAMSA_ApiVersions_VERSION_MAX; v++) {
        populate(&in, &arena);
        rt_ApiVersionsResponse(v, &in, &out, &arena, &buf);
        assert_int_equal(out.ErrorCode, 35);
        assert_int_equal(out.ApiKeys_cnt, 2);
        assert_int_equal(out.ApiKeys[1].ApiKey, 3);
        assert_int_equal(out.ApiKeys[1].MaxVersion, 12);
        assert_int_equal(out.ThrottleTimeMs, v >= 1 ? 100 : 0);
        assert_int_equal(out.SupportedFeatures_cnt, v >= 3 ? 1 : 0);
        assert_int_equal(out.FinalizedFeatures_cnt, v >= 3 ? 1 : 0);
        assert_true(out.FinalizedFeaturesEpoch == (v >= 3 ? 7 : -1));
        assert_true(out.ZkMigrationReady == (v >= 3));
        if (v >= 3) {
            assert_true(samsa_slice_eq_cstr(out.SupportedFeatures[0].Name,
                                            "metadata.version"));
            assert_int_equal(out.SupportedFeatures[0].MaxVersion, 20);
            assert_int_equal(out.FinalizedFeatures[0].MinVersionLevel, 20);
        }
        samsa_buf_fini(&buf);
    }
    samsa_arena_fini(&arena);
}

/* v0 with UNSUPPORTED_VERSION and key 18 (what a broker answers to a
 * version it does not know), and v3: compact array, per-entry and
 * top-level tagged fields. */
static void
test_ApiVersionsResponse_bytes(void **state)
{
    static const uint8_t         v0[] = {
        0x00, 0x23, 0x00, 0x00, 0x00, 0x01, 0x00, 0x12, 0x00, 0x00, 0x00, 0x04,
    };
    static const uint8_t         v3[] = {
        0x00, 0x00, 0x02, 0x00, 0x12, 0x00, 0x00, 0x00, 0x04, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00,
    };
    static const uint8_t         v3_epoch[] = {
        0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
        0x02, 0x01, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05,
        0x03, 0x01, 0x01,
    };
    samsa_ApiVersionsResponse_t  m, out;
    samsa_arena_t                arena;

    (void) state;
    samsa_arena_init(&arena);
    samsa_ApiVersionsResponse_init(&m);
    m.ErrorCode = 35;
    m.ApiKeys = keys;
    m.ApiKeys_cnt = 1;
    RT_ENCODES_TO(ApiVersionsResponse, 0, &m, v0, sizeof(v0));
    m.ErrorCode = 0;
    RT_ENCODES_TO(ApiVersionsResponse, 3, &m, v3, sizeof(v3));
    m.ApiKeys_cnt = 0;
    m.FinalizedFeaturesEpoch = 5;
    m.ZkMigrationReady = true;
    RT_ENCODES_TO(ApiVersionsResponse, 3, &m, v3_epoch, sizeof(v3_epoch));
    assert_int_equal(RT_DECODE(ApiVersionsResponse, 4, v3_epoch,
                               sizeof(v3_epoch), &arena, &out),
                     SAMSA_ERR_NONE);
    assert_true(out.FinalizedFeaturesEpoch == 5);
    assert_true(out.ZkMigrationReady);
    assert_int_equal(out.SupportedFeatures_cnt, 0);
    samsa_arena_fini(&arena);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_ApiVersionsRequest_round_trip),
        cmocka_unit_test(test_ApiVersionsRequest_golden),
        cmocka_unit_test(test_ApiVersionsResponse_round_trip),
        cmocka_unit_test(test_ApiVersionsResponse_bytes),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
