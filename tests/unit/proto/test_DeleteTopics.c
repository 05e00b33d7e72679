/* Unit tests for the generated DeleteTopics codecs
 * (proto/gen/DeleteTopics.c): every version v0-v6 round-trips with each
 * field present exactly in its versions (TopicNames up to v5, Topics by
 * name or id from v6); kafka-python, confluent-kafka and kafkajs requests
 * decode and re-encode byte for byte; bytes assembled by hand from Kafka's
 * message definitions. */
#include "unit.h"

#include <stdlib.h>

#include "golden.h"
#include "proto/gen/DeleteTopics.h"
#include "rt.h"

RT_DEFINE(DeleteTopicsRequest)
RT_DEFINE(DeleteTopicsResponse)

static samsa_uuid_t
uuid_n(uint8_t n)
{
    samsa_uuid_t  u;

    memset(u.b, n, sizeof(u.b));
    return u;
}

static void
populate_request(samsa_DeleteTopicsRequest_t *m, samsa_arena_t *arena)
{
    samsa_DeleteTopicState_t  *t;
    samsa_slice_t             *n;

    samsa_DeleteTopicsRequest_init(m);
    m->TimeoutMs = 1000;
    m->TopicNames_cnt = 2;
    m->TopicNames = n = samsa_arena_calloc(arena, 2, sizeof(*n));
    n[0] = S("orders");
    n[1] = S("logs");
    m->Topics_cnt = 2;
    m->Topics = t = samsa_arena_calloc(arena, 2, sizeof(*t));
    t[0].Name = S("orders");
    t[1].Name = SAMSA_SLICE_NULL;
    t[1].TopicId = uuid_n(6);
}

static void
test_DeleteTopicsRequest_round_trip(void **state)
{
    samsa_DeleteTopicsRequest_t  in, out;
    samsa_arena_t                arena;
    samsa_buf_t                  buf;
    int16_t                      v;

    (void) state;
    for (v = 0; v <= SAMSA_DeleteTopics_VERSION_MAX; v++) {
        samsa_arena_init(&arena);
        populate_request(&in, &arena);
        rt_DeleteTopicsRequest(v, &in, &out, &arena, &buf);
        assert_int_equal(out.TimeoutMs, 1000);
        if (v <= 5) {
            assert_int_equal(out.TopicNames_cnt, 2);
            assert_true(samsa_slice_eq_cstr(out.TopicNames[1], "logs"));
            assert_int_equal(out.Topics_cnt, 0);
        } else {
            assert_int_equal(out.TopicNames_cnt, 0);
            assert_int_equal(out.Topics_cnt, 2);
            assert_true(samsa_slice_eq_cstr(out.Topics[0].Name, "orders"));
            assert_true(samsa_uuid_is_zero(out.Topics[0].TopicId));
            assert_null(out.Topics[1].Name.ptr);
            assert_true(samsa_uuid_eq(out.Topics[1].TopicId, uuid_n(6)));
        }
        samsa_buf_fini(&buf);
        samsa_arena_fini(&arena);
    }
}

/* Delete "t" (v0, v4) or the topic with id 0x0a.. (v6), 30 s timeout. */
static void
test_DeleteTopicsRequest_bytes(void **state)
{
    static const uint8_t  v0[] = {
        0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 't', 0x00, 0x00, 0x75, 0x30,
    };
    static const uint8_t  v4[] = {
        0x02, 0x02, 't', 0x00, 0x00, 0x75, 0x30, 0x00,
    };
    static const uint8_t  v6[] = {
        0x02, 0x00,                                 /* [1], Name null */
        0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a,
        0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a,
        0x00, 0x00, 0x00, 0x75, 0x30, 0x00,
    };
    samsa_DeleteTopicsRequest_t  m;
    samsa_DeleteTopicState_t     t = { SAMSA_SLICE_NULL, uuid_n(10) };
    samsa_slice_t                name = S("t");

    (void) state;
    samsa_DeleteTopicsRequest_init(&m);
    m.TimeoutMs = 30000;
    m.TopicNames = &name;
    m.TopicNames_cnt = 1;
    m.Topics = &t;
    m.Topics_cnt = 1;
    RT_ENCODES_TO(DeleteTopicsRequest, 0, &m, v0, sizeof(v0));
    RT_ENCODES_TO(DeleteTopicsRequest, 3, &m, v0, sizeof(v0));
    RT_ENCODES_TO(DeleteTopicsRequest, 4, &m, v4, sizeof(v4));
    RT_ENCODES_TO(DeleteTopicsRequest, 5, &m, v4, sizeof(v4));
    RT_ENCODES_TO(DeleteTopicsRequest, 6, &m, v6, sizeof(v6));
}

/* Every client here was asked to delete samsa-golden-old, timeout 1 s. */
static void
check_golden(const uint8_t *frame, size_t len, size_t hdr_len,
             int16_t version)
{
    samsa_DeleteTopicsRequest_t  m;
    samsa_arena_t                arena;

    samsa_arena_init(&arena);
    assert_int_equal(RT_DECODE(DeleteTopicsRequest, version, frame + hdr_len,
                               len - hdr_len, &arena, &m), SAMSA_ERR_NONE);
    assert_int_equal(m.TimeoutMs, 1000);
    assert_int_equal(m.TopicNames_cnt, 1);
    assert_true(samsa_slice_eq_cstr(m.TopicNames[0], "samsa-golden-old"));
    RT_ENCODES_TO(DeleteTopicsRequest, version, &m, frame + hdr_len,
                  len - hdr_len);
    samsa_arena_fini(&arena);
}

#define GOLDEN(g, v)                                                      \
    check_golden(GOLDEN_##g, sizeof(GOLDEN_##g), GOLDEN_##g##_HDR_LEN, v)

static void
test_DeleteTopicsRequest_golden(void **state)
{
    (void) state;
    GOLDEN(kafka_python_data_DeleteTopics_v3, 3);
    GOLDEN(confluent_data_DeleteTopics_v1, 1);
    GOLDEN(kafkajs_data_DeleteTopics_v1, 1);
}

static void
test_DeleteTopicsResponse_round_trip(void **state)
{
    samsa_DeleteTopicsResponse_t  in, out;
    samsa_DeletableTopicResult_t  r[2];
    samsa_arena_t                 arena;
    samsa_buf_t                   buf;
    int16_t                       v;

    (void) state;
    samsa_arena_init(&arena);
    samsa_DeleteTopicsResponse_init(&in);
    samsa_DeletableTopicResult_init(&r[0]);
    samsa_DeletableTopicResult_init(&r[1]);
    assert_null(r[0].ErrorMessage.ptr);
    r[0].Name = S("orders");
    r[0].TopicId = uuid_n(1);
    r[1].Name = SAMSA_SLICE_NULL;
    r[1].TopicId = uuid_n(2);
    r[1].ErrorCode = 100;                       /* UNKNOWN_TOPIC_ID */
    r[1].ErrorMessage = S("no such id");
    in.ThrottleTimeMs = 8;
    in.Responses = r;
    in.Responses_cnt = 2;
    for (v = 0; v <= SAMSA_DeleteTopics_VERSION_MAX; v++) {
        rt_DeleteTopicsResponse(v, &in, &out, &arena, &buf);
        assert_int_equal(out.ThrottleTimeMs, v >= 1 ? 8 : 0);
        assert_int_equal(out.Responses_cnt, 2);
        assert_true(samsa_slice_eq_cstr(out.Responses[0].Name, "orders"));
        assert_int_equal(out.Responses[0].ErrorCode, 0);
        assert_null(out.Responses[0].ErrorMessage.ptr);
        assert_true(samsa_uuid_eq(out.Responses[0].TopicId,
                                  uuid_n(v >= 6 ? 1 : 0)));
        if (v >= 6) {
            assert_null(out.Responses[1].Name.ptr);     /* null from v6 */
        } else {
            assert_true(samsa_slice_eq_cstr(out.Responses[1].Name, ""));
        }
        assert_int_equal(out.Responses[1].ErrorCode, 100);
        if (v >= 5) {
            assert_true(samsa_slice_eq_cstr(out.Responses[1].ErrorMessage,
                                            "no such id"));
        } else {
            assert_null(out.Responses[1].ErrorMessage.ptr);
        }
        samsa_buf_fini(&buf);
    }
    samsa_arena_fini(&arena);
}

/* "t" deleted: v0, v4, v5 (ErrorMessage null), v6 (TopicId). */
static void
test_DeleteTopicsResponse_bytes(void **state)
{
    static const uint8_t  v0[] = {
        0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 't', 0x00, 0x00,
    };
    static const uint8_t  v4[] = {
        0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 't', 0x00, 0x00, 0x00, 0x00,
    };
    static const uint8_t  v5[] = {
        0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 't', 0x00, 0x00, 0x00, 0x00,
        0x00,
    };
    static const uint8_t  v6[] = {
        0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 't',
        0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b,
        0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b,
        0x00, 0x00, 0x00, 0x00, 0x00,
    };
    samsa_DeleteTopicsResponse_t  m;
    samsa_DeletableTopicResult_t  r;

    (void) state;
    samsa_DeleteTopicsResponse_init(&m);
    samsa_DeletableTopicResult_init(&r);
    r.Name = S("t");
    r.TopicId = uuid_n(11);
    m.Responses = &r;
    m.Responses_cnt = 1;
    RT_ENCODES_TO(DeleteTopicsResponse, 0, &m, v0, sizeof(v0));
    RT_ENCODES_TO(DeleteTopicsResponse, 4, &m, v4, sizeof(v4));
    RT_ENCODES_TO(DeleteTopicsResponse, 5, &m, v5, sizeof(v5));
    RT_ENCODES_TO(DeleteTopicsResponse, 6, &m, v6, sizeof(v6));
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_DeleteTopicsRequest_round_trip),
        cmocka_unit_test(test_DeleteTopicsRequest_bytes),
        cmocka_unit_test(test_DeleteTopicsRequest_golden),
        cmocka_unit_test(test_DeleteTopicsResponse_round_trip),
        cmocka_unit_test(test_DeleteTopicsResponse_bytes),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
