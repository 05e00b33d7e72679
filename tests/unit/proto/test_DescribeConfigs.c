/* Unit tests for the generated DescribeConfigs codecs
 * (proto/gen/DescribeConfigs.c): every version v0-v4 round-trips with each
 * field present exactly in its versions (IsDefault only in v0, synonyms
 * from v1, documentation from v3, flexible v4); kafka-python,
 * confluent-kafka and kafkajs requests decode and re-encode byte for byte;
 * bytes assembled by hand from Kafka's message definitions. */
#include "unit.h"

#include <stdlib.h>

#include "golden.h"
#include "proto/gen/DescribeConfigs.h"
#include "rt.h"

RT_DEFINE(DescribeConfigsRequest)
RT_DEFINE(DescribeConfigsResponse)

static void
test_DescribeConfigsRequest_round_trip(void **state)
{
    samsa_DescribeConfigsRequest_t   in, out;
    samsa_DescribeConfigsResource_t  r[2];
    samsa_slice_t                    keys[2] = { S("retention.ms"),
                                                 S("cleanup.policy") };
    samsa_arena_t                    arena;
    samsa_buf_t                      buf;
    int16_t                          v;

    (void) state;
    samsa_arena_init(&arena);
    samsa_DescribeConfigsRequest_init(&in);
    r[0] = (samsa_DescribeConfigsResource_t) { 2, S("orders"), keys, 2 };
    r[1] = (samsa_DescribeConfigsResource_t) { 4, S("1"), NULL, -1 };
    in.Resources = r;
    in.Resources_cnt = 2;
    in.IncludeSynonyms = true;
    in.IncludeDocumentation = true;
    for (v = 0; v <= SAMSA_DescribeConfigs_VERSION_MAX; v++) {
        rt_DescribeConfigsRequest(v, &in, &out, &arena, &buf);
        assert_int_equal(out.Resources_cnt, 2);
        assert_int_equal(out.Resources[0].ResourceType, 2);
        assert_true(samsa_slice_eq_cstr(out.Resources[0].ResourceName,
                                        "orders"));
        assert_int_equal(out.Resources[0].ConfigurationKeys_cnt, 2);
        assert_true(samsa_slice_eq_cstr(out.Resources[0].ConfigurationKeys[1],
                                        "cleanup.policy"));
        assert_int_equal(out.Resources[1].ResourceType, 4);
        assert_int_equal(out.Resources[1].ConfigurationKeys_cnt, -1);
        assert_true(out.IncludeSynonyms == (v >= 1));
        assert_true(out.IncludeDocumentation == (v >= 3));
        samsa_buf_fini(&buf);
    }
    samsa_arena_fini(&arena);
}

/* Topic "t", all keys (null), synonyms and documentation: v0, v3, v4. */
static void
test_DescribeConfigsRequest_bytes(void **state)
{
    static const uint8_t             v0[] = {
        0x00, 0x00, 0x00, 0x01, 0x02, 0x00, 0x01, 't', 0xff, 0xff, 0xff, 0xff,
    };
    static const uint8_t             v3[] = {
        0x00, 0x00, 0x00, 0x01, 0x02, 0x00, 0x01, 't', 0xff, 0xff, 0xff, 0xff,
        0x01, 0x01,
    };
    static const uint8_t             v4[] = {
        0x02, 0x02, 0x02, 't', 0x00, 0x00, 0x01, 0x01, 0x00,
    };
    samsa_DescribeConfigsRequest_t   m;
    samsa_DescribeConfigsResource_t  r = { 2, S("t"), NULL, -1 };

    (void) state;
    samsa_DescribeConfigsRequest_init(&m);
    m.Resources = &r;
    m.Resources_cnt = 1;
    m.IncludeSynonyms = true;
    m.IncludeDocumentation = true;
    RT_ENCODES_TO(DescribeConfigsRequest, 0, &m, v0, sizeof(v0));
    RT_ENCODES_TO(DescribeConfigsRequest, 3, &m, v3, sizeof(v3));
    RT_ENCODES_TO(DescribeConfigsRequest, 4, &m, v4, sizeof(v4));
}

/* Topic samsa-golden (resource type 2), one key or all (null). */
static void
check_golden(const uint8_t *frame, size_t len, size_t hdr_len,
             int16_t version, const char *key, bool synonyms)
{
    samsa_DescribeConfigsRequest_t  m;
    samsa_arena_t                   arena;

    samsa_arena_init(&arena);
    assert_int_equal(RT_DECODE(DescribeConfigsRequest, version,
                               frame + hdr_len, len - hdr_len, &arena, &m),
                     SAMSA_ERR_NONE);
    assert_int_equal(m.Resources_cnt, 1);
    assert_int_equal(m.Resources[0].ResourceType, 2);
    assert_true(samsa_slice_eq_cstr(m.Resources[0].ResourceName,
                                    "samsa-golden"));
    if (key != NULL) {
        assert_int_equal(m.Resources[0].ConfigurationKeys_cnt, 1);
        assert_true(samsa_slice_eq_cstr(m.Resources[0].ConfigurationKeys[0],
                                        key));
    } else {
        assert_int_equal(m.Resources[0].ConfigurationKeys_cnt, -1);
    }
    assert_true(m.IncludeSynonyms == synonyms);
    assert_false(m.IncludeDocumentation);
    RT_ENCODES_TO(DescribeConfigsRequest, version, &m, frame + hdr_len,
                  len - hdr_len);
    samsa_arena_fini(&arena);
}

#define GOLDEN(g, v, key, synonyms)                                       \
    check_golden(GOLDEN_##g, sizeof(GOLDEN_##g), GOLDEN_##g##_HDR_LEN, v, \
                 key, synonyms)

static void
test_DescribeConfigsRequest_golden(void **state)
{
    (void) state;
    GOLDEN(kafka_python_data_DescribeConfigs_v2, 2, "retention.ms", false);
    GOLDEN(confluent_data_DescribeConfigs_v1, 1, NULL, true);
    GOLDEN(kafkajs_data_DescribeConfigs_v2, 2, NULL, false);
}

static void
populate_response(samsa_DescribeConfigsResponse_t *m, samsa_arena_t *arena)
{
    samsa_DescribeConfigsResult_t          *r;
    samsa_DescribeConfigsResourceResult_t  *c;
    samsa_DescribeConfigsSynonym_t         *s;

    samsa_DescribeConfigsResponse_init(m);
    m->ThrottleTimeMs = 5;
    m->Results_cnt = 2;
    m->Results = r = samsa_arena_calloc(arena, 2, sizeof(*r));
    r[0].ResourceType = 2;
    r[0].ResourceName = S("orders");
    r[0].ErrorMessage = SAMSA_SLICE_NULL;
    r[0].Configs_cnt = 2;
    r[0].Configs = c = samsa_arena_calloc(arena, 2, sizeof(*c));
    samsa_DescribeConfigsResourceResult_init(&c[0]);
    samsa_DescribeConfigsResourceResult_init(&c[1]);
    c[0].Name = S("retention.ms");
    c[0].Value = S("60000");
    c[0].IsDefault = true;
    c[0].ConfigSource = 1;                      /* DYNAMIC_TOPIC_CONFIG */
    c[0].Synonyms_cnt = 2;
    c[0].Synonyms = s = samsa_arena_calloc(arena, 2, sizeof(*s));
    s[0] = (samsa_DescribeConfigsSynonym_t) { S("retention.ms"), S("60000"),
                                              1 };
    s[1] = (samsa_DescribeConfigsSynonym_t) { S("log.retention.ms"),
                                              SAMSA_SLICE_NULL, 5 };
    c[0].ConfigType = 5;                        /* LONG */
    c[0].Documentation = S("How long to keep a log.");
    c[1].Name = S("sasl.jaas.config");
    c[1].Value = SAMSA_SLICE_NULL;
    c[1].ReadOnly = true;
    c[1].IsSensitive = true;
    c[1].Documentation = SAMSA_SLICE_NULL;
    r[1].ErrorCode = 3;
    r[1].ErrorMessage = S("unknown topic");
    r[1].ResourceType = 2;
    r[1].ResourceName = S("gone");
}

static void
check_response(const samsa_DescribeConfigsResponse_t *m, int16_t v)
{
    const samsa_DescribeConfigsResourceResult_t  *c;

    assert_int_equal(m->ThrottleTimeMs, 5);
    assert_int_equal(m->Results_cnt, 2);
    assert_int_equal(m->Results[0].ErrorCode, 0);
    assert_null(m->Results[0].ErrorMessage.ptr);
    assert_true(samsa_slice_eq_cstr(m->Results[0].ResourceName, "orders"));
    assert_int_equal(m->Results[0].Configs_cnt, 2);
    c = m->Results[0].Configs;
    assert_true(samsa_slice_eq_cstr(c[0].Name, "retention.ms"));
    assert_true(samsa_slice_eq_cstr(c[0].Value, "60000"));
    assert_false(c[0].ReadOnly);
    assert_true(c[0].IsDefault == (v == 0));
    assert_int_equal(c[0].ConfigSource, v >= 1 ? 1 : -1);
    if (v >= 1) {
        assert_int_equal(c[0].Synonyms_cnt, 2);
        assert_true(samsa_slice_eq_cstr(c[0].Synonyms[1].Name,
                                        "log.retention.ms"));
        assert_null(c[0].Synonyms[1].Value.ptr);
        assert_int_equal(c[0].Synonyms[1].Source, 5);
    } else {
        assert_int_equal(c[0].Synonyms_cnt, 0);
    }
    assert_int_equal(c[0].ConfigType, v >= 3 ? 5 : 0);
    assert_true(samsa_slice_eq_cstr(c[0].Documentation,
                                    v >= 3 ? "How long to keep a log." : ""));
    assert_null(c[1].Value.ptr);
    assert_true(c[1].ReadOnly);
    assert_true(c[1].IsSensitive);
    if (v >= 3) {
        assert_null(c[1].Documentation.ptr);
    }
    assert_int_equal(m->Results[1].ErrorCode, 3);
    assert_true(samsa_slice_eq_cstr(m->Results[1].ErrorMessage,
                                    "unknown topic"));
    assert_int_equal(m->Results[1].Configs_cnt, 0);
}

static void
test_DescribeConfigsResponse_round_trip(void **state)
{
    samsa_DescribeConfigsResponse_t  in, out;
    samsa_arena_t                    arena;
    samsa_buf_t                      buf;
    int16_t                          v;

    (void) state;
    for (v = 0; v <= SAMSA_DescribeConfigs_VERSION_MAX; v++) {
        samsa_arena_init(&arena);
        populate_response(&in, &arena);
        rt_DescribeConfigsResponse(v, &in, &out, &arena, &buf);
        check_response(&out, v);
        samsa_buf_fini(&buf);
        samsa_arena_fini(&arena);
    }
}

/* Topic "t": config a=b, not read-only, not sensitive, source 1 (v1+), no
 * synonyms, type 2 and no documentation (v3+): v0, v1, v4. */
static void
test_DescribeConfigsResponse_bytes(void **state)
{
    static const uint8_t                   v0[] = {
        0x00, 0x00, 0x00, 0x00,                     /* ThrottleTimeMs */
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0xff, 0xff,     /* [1], ok */
        0x02, 0x00, 0x01, 't',
        0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 'a', 0x00, 0x01, 'b',
        0x00, 0x00, 0x00,                           /* ro, default, sens */
    };
    static const uint8_t                   v1[] = {
        0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0xff, 0xff,
        0x02, 0x00, 0x01, 't',
        0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 'a', 0x00, 0x01, 'b',
        0x00, 0x01, 0x00,                           /* ro, source, sens */
        0x00, 0x00, 0x00, 0x00,                     /* Synonyms [] */
    };
    static const uint8_t                   v4[] = {
        0x00, 0x00, 0x00, 0x00,
        0x02, 0x00, 0x00, 0x00, 0x02, 0x02, 't',
        0x02, 0x02, 'a', 0x02, 'b', 0x00, 0x01, 0x00,
        0x01, 0x02, 0x00, 0x00,                     /* [], type, doc, tags */
        0x00, 0x00,
    };
    samsa_DescribeConfigsResponse_t        m;
    samsa_DescribeConfigsResult_t          r = { 0 };
    samsa_DescribeConfigsResourceResult_t  c;

    (void) state;
    samsa_DescribeConfigsResponse_init(&m);
    samsa_DescribeConfigsResourceResult_init(&c);
    c.Name = S("a");
    c.Value = S("b");
    c.ConfigSource = 1;
    c.ConfigType = 2;
    c.Documentation = SAMSA_SLICE_NULL;
    r.ErrorMessage = SAMSA_SLICE_NULL;
    r.ResourceType = 2;
    r.ResourceName = S("t");
    r.Configs = &c;
    r.Configs_cnt = 1;
    m.Results = &r;
    m.Results_cnt = 1;
    RT_ENCODES_TO(DescribeConfigsResponse, 0, &m, v0, sizeof(v0));
    RT_ENCODES_TO(DescribeConfigsResponse, 1, &m, v1, sizeof(v1));
    RT_ENCODES_TO(DescribeConfigsResponse, 2, &m, v1, sizeof(v1));
    RT_ENCODES_TO(DescribeConfigsResponse, 4, &m, v4, sizeof(v4));
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_DescribeConfigsRequest_round_trip),
        cmocka_unit_test(test_DescribeConfigsRequest_bytes),
        cmocka_unit_test(test_DescribeConfigsRequest_golden),
        cmocka_unit_test(test_DescribeConfigsResponse_round_trip),
        cmocka_unit_test(test_DescribeConfigsResponse_bytes),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
