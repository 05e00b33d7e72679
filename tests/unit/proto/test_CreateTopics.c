/* Unit tests for the generated CreateTopics codecs
 * (proto/gen/CreateTopics.c): every version v0-v7 round-trips with each
 * field present exactly in its versions; kafka-python, confluent-kafka and
 * kafkajs requests decode and re-encode byte for byte; responses match
 * bytes assembled by hand from Kafka's message definitions. */
#include "unit.h"

#include <stdlib.h>

#include "golden.h"
#include "proto/gen/CreateTopics.h"
#include "proto/gen/apis.h"
#include "rt.h"

RT_DEFINE(CreateTopicsRequest)
RT_DEFINE(CreateTopicsResponse)

static samsa_uuid_t
uuid_n(uint8_t n)
{
    samsa_uuid_t  u;

    memset(u.b, n, sizeof(u.b));
    return u;
}

static int32_t  brokers[] = { 1, 2 };

static void
populate_request(samsa_CreateTopicsRequest_t *m, samsa_arena_t *arena)
{
    samsa_CreatableTopic_t              *t;
    samsa_CreatableReplicaAssignment_t  *a;
    samsa_CreateableTopicConfig_t       *c;

    samsa_CreateTopicsRequest_init(m);
    m->TimeoutMs = 1000;
    m->ValidateOnly = true;
    m->Topics_cnt = 2;
    m->Topics = t = samsa_arena_calloc(arena, 2, sizeof(*t));
    t[0].Name = S("orders");
    t[0].NumPartitions = -1;
    t[0].ReplicationFactor = -1;
    t[0].Assignments_cnt = 1;
    t[0].Assignments = a = samsa_arena_calloc(arena, 1, sizeof(*a));
    a->PartitionIndex = 0;
    a->BrokerIds = brokers;
    a->BrokerIds_cnt = 2;
    t[0].Configs_cnt = 2;
    t[0].Configs = c = samsa_arena_calloc(arena, 2, sizeof(*c));
    c[0] = (samsa_CreateableTopicConfig_t) { S("retention.ms"), S("60000") };
    c[1] = (samsa_CreateableTopicConfig_t) { S("cleanup.policy"),
                                             SAMSA_SLICE_NULL };
    t[1].Name = S("logs");
    t[1].NumPartitions = 3;
    t[1].ReplicationFactor = 1;
}

static void
test_CreateTopicsRequest_round_trip(void **state)
{
    samsa_CreateTopicsRequest_t    in, out;
    const samsa_CreatableTopic_t  *t;
    samsa_arena_t                  arena;
    samsa_buf_t                    buf;
    int16_t                        v;

    (void) state;
    samsa_CreateTopicsRequest_init(&in);
    assert_int_equal(in.TimeoutMs, 60000);
    for (v = 0; v <= SAMSA_CreateTopics_VERSION_MAX; v++) {
        samsa_arena_init(&arena);
        populate_request(&in, &arena);
        rt_CreateTopicsRequest(v, &in, &out, &arena, &buf);
        assert_int_equal(out.TimeoutMs, 1000);
        assert_true(out.ValidateOnly == (v >= 1));
        assert_int_equal(out.Topics_cnt, 2);
        t = out.Topics;
        assert_true(samsa_slice_eq_cstr(t[0].Name, "orders"));
        assert_int_equal(t[0].NumPartitions, -1);
        assert_int_equal(t[0].ReplicationFactor, -1);
        assert_int_equal(t[0].Assignments_cnt, 1);
        assert_int_equal(t[0].Assignments[0].PartitionIndex, 0);
        assert_int_equal(t[0].Assignments[0].BrokerIds_cnt, 2);
        assert_int_equal(t[0].Assignments[0].BrokerIds[1], 2);
        assert_int_equal(t[0].Configs_cnt, 2);
        assert_true(samsa_slice_eq_cstr(t[0].Configs[0].Name,
                                        "retention.ms"));
        assert_true(samsa_slice_eq_cstr(t[0].Configs[0].Value, "60000"));
        assert_null(t[0].Configs[1].Value.ptr);
        assert_true(samsa_slice_eq_cstr(t[1].Name, "logs"));
        assert_int_equal(t[1].NumPartitions, 3);
        assert_int_equal(t[1].ReplicationFactor, 1);
        assert_int_equal(t[1].Assignments_cnt, 0);
        assert_int_equal(t[1].Configs_cnt, 0);
        samsa_buf_fini(&buf);
        samsa_arena_fini(&arena);
    }
}

/* Topic "t", 1 partition, replication 1, config a=null: v0, v1, v5. */
static void
test_CreateTopicsRequest_bytes(void **state)
{
    static const uint8_t  v0[] = {
        0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 't',    /* Topics [1] */
        0x00, 0x00, 0x00, 0x01, 0x00, 0x01,         /* partitions, RF */
        0x00, 0x00, 0x00, 0x00,                     /* Assignments [] */
        0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 'a', 0xff, 0xff,
        0x00, 0x00, 0xea, 0x60,                     /* TimeoutMs 60000 */
    };
    static const uint8_t  v5[] = {
        0x02, 0x02, 't', 0x00, 0x00, 0x00, 0x01, 0x00, 0x01,
        0x01,                                       /* Assignments [] */
        0x02, 0x02, 'a', 0x00, 0x00,                /* Configs, tags */
        0x00,                                       /* topic tags */
        0x00, 0x00, 0xea, 0x60, 0x01, 0x00,         /* timeout, validate */
    };
    samsa_CreateTopicsRequest_t    m;
    samsa_CreatableTopic_t         t = { 0 };
    samsa_CreateableTopicConfig_t  c = { S("a"), SAMSA_SLICE_NULL };
    uint8_t                        v1[sizeof(v0) + 1];

    (void) state;
    memcpy(v1, v0, sizeof(v0));
    v1[sizeof(v0)] = 0x01;                      /* validateOnly */
    samsa_CreateTopicsRequest_init(&m);
    m.ValidateOnly = true;
    t.Name = S("t");
    t.NumPartitions = 1;
    t.ReplicationFactor = 1;
    t.Configs = &c;
    t.Configs_cnt = 1;
    m.Topics = &t;
    m.Topics_cnt = 1;
    RT_ENCODES_TO(CreateTopicsRequest, 0, &m, v0, sizeof(v0));
    RT_ENCODES_TO(CreateTopicsRequest, 1, &m, v1, sizeof(v1));
    RT_ENCODES_TO(CreateTopicsRequest, 4, &m, v1, sizeof(v1));
    RT_ENCODES_TO(CreateTopicsRequest, 5, &m, v5, sizeof(v5));
    RT_ENCODES_TO(CreateTopicsRequest, 7, &m, v5, sizeof(v5));
}

/* Every client here was asked for topic samsa-golden-new: 3 partitions,
 * replication 1, retention.ms=60000, a 1000 ms timeout. */
static void
check_golden(const uint8_t *frame, size_t len, size_t hdr_len,
             int16_t version)
{
    samsa_CreateTopicsRequest_t  m;
    samsa_CreatableTopic_t      *t;
    samsa_arena_t                arena;

    samsa_arena_init(&arena);
    assert_int_equal(RT_DECODE(CreateTopicsRequest, version, frame + hdr_len,
                               len - hdr_len, &arena, &m), SAMSA_ERR_NONE);
    assert_int_equal(m.TimeoutMs, 1000);
    assert_false(m.ValidateOnly);
    assert_int_equal(m.Topics_cnt, 1);
    t = &m.Topics[0];
    assert_true(samsa_slice_eq_cstr(t->Name, "samsa-golden-new"));
    assert_int_equal(t->NumPartitions, 3);
    assert_int_equal(t->ReplicationFactor, 1);
    assert_int_equal(t->Assignments_cnt, 0);
    assert_int_equal(t->Configs_cnt, 1);
    assert_true(samsa_slice_eq_cstr(t->Configs[0].Name, "retention.ms"));
    assert_true(samsa_slice_eq_cstr(t->Configs[0].Value, "60000"));
    RT_ENCODES_TO(CreateTopicsRequest, version, &m, frame + hdr_len,
                  len - hdr_len);
    samsa_arena_fini(&arena);
}

#define GOLDEN(g, v)                                                      \
    check_golden(GOLDEN_##g, sizeof(GOLDEN_##g), GOLDEN_##g##_HDR_LEN, v)

static void
test_CreateTopicsRequest_golden(void **state)
{
    (void) state;
    GOLDEN(kafka_python_data_CreateTopics_v3, 3);
    GOLDEN(confluent_data_CreateTopics_v4, 4);
    GOLDEN(kafkajs_data_CreateTopics_v3, 3);
}

static void
populate_response(samsa_CreateTopicsResponse_t *m, samsa_arena_t *arena)
{
    samsa_CreatableTopicResult_t   *t;
    samsa_CreatableTopicConfigs_t  *c;

    samsa_CreateTopicsResponse_init(m);
    m->ThrottleTimeMs = 2;
    m->Topics_cnt = 2;
    m->Topics = t = samsa_arena_calloc(arena, 2, sizeof(*t));
    samsa_CreatableTopicResult_init(&t[0]);
    samsa_CreatableTopicResult_init(&t[1]);
    t[0].Name = S("orders");
    t[0].TopicId = uuid_n(3);
    t[0].ErrorMessage = SAMSA_SLICE_NULL;
    t[0].TopicConfigErrorCode = 29;             /* AUTHORIZATION_FAILED */
    t[0].NumPartitions = 3;
    t[0].ReplicationFactor = 1;
    t[0].Configs_cnt = 1;
    t[0].Configs = c = samsa_arena_calloc(arena, 1, sizeof(*c));
    *c = (samsa_CreatableTopicConfigs_t) { S("retention.ms"), S("60000"),
                                           true, 5, true };
    t[1].Name = S("bad");
    t[1].ErrorCode = 36;                        /* TOPIC_ALREADY_EXISTS */
    t[1].ErrorMessage = S("exists");
    t[1].Configs_cnt = -1;
}

static void
test_CreateTopicsResponse_round_trip(void **state)
{
    samsa_CreateTopicsResponse_t         in, out;
    const samsa_CreatableTopicResult_t  *t;
    samsa_arena_t                        arena;
    samsa_buf_t                          buf;
    int16_t                              v;

    (void) state;
    for (v = 0; v <= SAMSA_CreateTopics_VERSION_MAX; v++) {
        samsa_arena_init(&arena);
        populate_response(&in, &arena);
        rt_CreateTopicsResponse(v, &in, &out, &arena, &buf);
        assert_int_equal(out.ThrottleTimeMs, v >= 2 ? 2 : 0);
        assert_int_equal(out.Topics_cnt, 2);
        t = out.Topics;
        assert_true(samsa_slice_eq_cstr(t[0].Name, "orders"));
        assert_true(samsa_uuid_eq(t[0].TopicId, uuid_n(v >= 7 ? 3 : 0)));
        assert_int_equal(t[0].ErrorCode, 0);
        if (v >= 1) {
            assert_null(t[0].ErrorMessage.ptr);
            assert_true(samsa_slice_eq_cstr(t[1].ErrorMessage, "exists"));
        } else {
            assert_true(samsa_slice_eq_cstr(t[0].ErrorMessage, ""));
            assert_true(samsa_slice_eq_cstr(t[1].ErrorMessage, ""));
        }
        assert_int_equal(t[0].TopicConfigErrorCode, v >= 5 ? 29 : 0);
        assert_int_equal(t[0].NumPartitions, v >= 5 ? 3 : -1);
        assert_int_equal(t[0].ReplicationFactor, v >= 5 ? 1 : -1);
        if (v >= 5) {
            assert_int_equal(t[0].Configs_cnt, 1);
            assert_true(samsa_slice_eq_cstr(t[0].Configs[0].Value,
                                            "60000"));
            assert_true(t[0].Configs[0].ReadOnly);
            assert_int_equal(t[0].Configs[0].ConfigSource, 5);
            assert_true(t[0].Configs[0].IsSensitive);
            assert_int_equal(t[1].Configs_cnt, -1);
        } else {
            assert_int_equal(t[0].Configs_cnt, 0);
            assert_int_equal(t[1].Configs_cnt, 0);
        }
        assert_int_equal(t[1].ErrorCode, 36);
        samsa_buf_fini(&buf);
        samsa_arena_fini(&arena);
    }
}

/* "t" created (error 0, message null): v1; v5 with the tagged
 * TopicConfigErrorCode and null Configs; v7 with the topic id. */
static void
test_CreateTopicsResponse_bytes(void **state)
{
    static const uint8_t  v1[] = {
        0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 't',
        0x00, 0x00, 0xff, 0xff,                     /* error, message */
    };
    static const uint8_t  v5[] = {
        0x00, 0x00, 0x00, 0x00,                     /* ThrottleTimeMs */
        0x02, 0x02, 't', 0x00, 0x00, 0x00,          /* [1], error, null */
        0x00, 0x00, 0x00, 0x01, 0x00, 0x01,         /* partitions, RF */
        0x00,                                       /* Configs null */
        0x01, 0x00, 0x02, 0x00, 0x1d,               /* tag 0: error 29 */
        0x00,                                       /* tags */
    };
    static const uint8_t  v7[] = {
        0x00, 0x00, 0x00, 0x00,
        0x02, 0x02, 't',
        0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04,     /* TopicId */
        0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04,
        0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x01, 0x00, 0x01,
        0x00,
        0x01, 0x00, 0x02, 0x00, 0x1d,
        0x00,
    };
    samsa_CreateTopicsResponse_t  m, out;
    samsa_CreatableTopicResult_t  t;
    samsa_arena_t                 arena;

    (void) state;
    samsa_CreateTopicsResponse_init(&m);
    samsa_CreatableTopicResult_init(&t);
    t.Name = S("t");
    t.TopicId = uuid_n(4);
    t.ErrorMessage = SAMSA_SLICE_NULL;
    t.NumPartitions = 1;
    t.ReplicationFactor = 1;
    t.Configs_cnt = -1;
    t.TopicConfigErrorCode = 29;
    m.Topics = &t;
    m.Topics_cnt = 1;
    RT_ENCODES_TO(CreateTopicsResponse, 1, &m, v1, sizeof(v1));
    RT_ENCODES_TO(CreateTopicsResponse, 5, &m, v5, sizeof(v5));
    RT_ENCODES_TO(CreateTopicsResponse, 7, &m, v7, sizeof(v7));
    samsa_arena_init(&arena);
    assert_int_equal(RT_DECODE(CreateTopicsResponse, 5, v5, sizeof(v5),
                               &arena, &out), SAMSA_ERR_NONE);
    assert_int_equal(out.Topics[0].TopicConfigErrorCode, 29);
    assert_int_equal(out.Topics[0].Configs_cnt, -1);
    samsa_arena_fini(&arena);
}

/* error_replace reaches every ...ErrorCode field, nested ones too, and
 * only those equal to from; from == to only counts.  The API table's
 * entry is the same function. */
static void
test_CreateTopicsResponse_error_replace(void **state)
{
    samsa_CreateTopicsResponse_t  m;
    samsa_arena_t                 arena;
    const samsa_proto_api_t      *api;

    (void) state;
    samsa_arena_init(&arena);
    populate_response(&m, &arena);
    assert_int_equal(samsa_CreateTopicsResponse_error_replace(&m, 41, 41), 0);
    assert_int_equal(samsa_CreateTopicsResponse_error_replace(&m, 36, 36), 1);
    assert_int_equal(m.Topics[1].ErrorCode, 36);
    m.Topics[0].ErrorCode = 41;                 /* NOT_CONTROLLER */
    m.Topics[1].TopicConfigErrorCode = 41;
    assert_int_equal(samsa_CreateTopicsResponse_error_replace(&m, 41, 7), 2);
    assert_int_equal(m.Topics[0].ErrorCode, 7);   /* REQUEST_TIMED_OUT */
    assert_int_equal(m.Topics[1].TopicConfigErrorCode, 7);
    assert_int_equal(m.Topics[0].TopicConfigErrorCode, 29);
    assert_int_equal(m.Topics[1].ErrorCode, 36);
    api = samsa_proto_api_find(SAMSA_API_CreateTopics);
    assert_non_null(api);
    assert_int_equal(api->response_error_replace(&m, 7, 41), 2);
    assert_int_equal(m.Topics[0].ErrorCode, 41);
    m.Topics_cnt = -1;                          /* null: nothing to see */
    assert_int_equal(api->response_error_replace(&m, 41, 41), 0);
    samsa_arena_fini(&arena);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_CreateTopicsRequest_round_trip),
        cmocka_unit_test(test_CreateTopicsRequest_bytes),
        cmocka_unit_test(test_CreateTopicsRequest_golden),
        cmocka_unit_test(test_CreateTopicsResponse_round_trip),
        cmocka_unit_test(test_CreateTopicsResponse_bytes),
        cmocka_unit_test(test_CreateTopicsResponse_error_replace),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
