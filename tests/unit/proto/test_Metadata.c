/* Unit tests for the generated Metadata codecs (proto/gen/Metadata.c):
 * every version v0-v12 round-trips with each field present exactly in its
 * versions; real clients' requests decode and re-encode byte for byte;
 * responses match hand-assembled Kafka bytes. */
#include "unit.h"

#include <stdlib.h>

#include "golden.h"
#include "proto/gen/Metadata.h"
#include "rt.h"

RT_DEFINE(MetadataRequest)
RT_DEFINE(MetadataResponse)

static samsa_uuid_t
uuid_n(uint8_t n)
{
    samsa_uuid_t  u;

    memset(u.b, n, sizeof(u.b));
    return u;
}

static void
populate_request(samsa_MetadataRequest_t *m, samsa_arena_t *arena)
{
    samsa_MetadataRequest_init(m);
    m->Topics_cnt = 2;
    m->Topics = samsa_arena_calloc(arena, 2, sizeof(*m->Topics));
    m->Topics[0].TopicId = uuid_n(9);
    m->Topics[0].Name = S("orders");
    m->Topics[1].Name = SAMSA_SLICE_NULL;           /* by id, v10+ */
    m->Topics[1].TopicId = uuid_n(8);
    m->AllowAutoTopicCreation = false;
    m->IncludeClusterAuthorizedOperations = true;
    m->IncludeTopicAuthorizedOperations = true;
}

static void
test_MetadataRequest_round_trip(void **state)
{
    samsa_MetadataRequest_t  in, out;
    samsa_arena_t            arena;
    samsa_buf_t              buf;
    int16_t                  v;

    (void) state;
    for (v = 0; v <= SAMSA_Metadata_VERSION_MAX; v++) {
        samsa_arena_init(&arena);
        populate_request(&in, &arena);
        rt_MetadataRequest(v, &in, &out, &arena, &buf);
        assert_int_equal(out.Topics_cnt, 2);
        assert_true(samsa_slice_eq_cstr(out.Topics[0].Name, "orders"));
        assert_true(samsa_uuid_eq(out.Topics[0].TopicId,
                                  uuid_n(v >= 10 ? 9 : 0)));
        if (v >= 10) {
            assert_null(out.Topics[1].Name.ptr);
        } else {
            assert_true(samsa_slice_eq_cstr(out.Topics[1].Name, ""));
        }
        assert_true(out.AllowAutoTopicCreation == (v < 4));
        assert_true(out.IncludeClusterAuthorizedOperations
                    == (v >= 8 && v <= 10));
        assert_true(out.IncludeTopicAuthorizedOperations == (v >= 8));
        samsa_buf_fini(&buf);
        samsa_arena_fini(&arena);
    }
}

/* Null Topics ("all topics") exists from v1; v0 sends an empty array. */
static void
test_MetadataRequest_null_topics(void **state)
{
    samsa_MetadataRequest_t  in, out;
    samsa_arena_t            arena;
    samsa_buf_t              buf;
    int16_t                  v;

    (void) state;
    samsa_arena_init(&arena);
    for (v = 0; v <= SAMSA_Metadata_VERSION_MAX; v++) {
        samsa_MetadataRequest_init(&in);
        in.Topics_cnt = -1;
        rt_MetadataRequest(v, &in, &out, &arena, &buf);
        assert_int_equal(out.Topics_cnt, v >= 1 ? -1 : 0);
        assert_true(out.AllowAutoTopicCreation);
        samsa_buf_fini(&buf);
    }
    samsa_arena_fini(&arena);
}

/* A golden request's body: topics (NULL = null array) and auto-create,
 * decoded and re-encoded to the same bytes. */
static void
check_golden(const uint8_t *frame, size_t len, size_t hdr_len,
             int16_t version, const char *topic, int32_t cnt, bool allow)
{
    samsa_MetadataRequest_t  m;
    samsa_arena_t            arena;

    samsa_arena_init(&arena);
    assert_int_equal(RT_DECODE(MetadataRequest, version, frame + hdr_len,
                               len - hdr_len, &arena, &m), SAMSA_ERR_NONE);
    assert_int_equal(m.Topics_cnt, cnt);
    if (cnt > 0) {
        assert_true(samsa_slice_eq_cstr(m.Topics[0].Name, topic));
    }
    assert_true(m.AllowAutoTopicCreation == allow);
    RT_ENCODES_TO(MetadataRequest, version, &m, frame + hdr_len,
                  len - hdr_len);
    samsa_arena_fini(&arena);
}

#define GOLDEN(g, v, topic, cnt, allow)                                   \
    check_golden(GOLDEN_##g, sizeof(GOLDEN_##g), GOLDEN_##g##_HDR_LEN, v, \
                 topic, cnt, allow)

static void
test_MetadataRequest_golden(void **state)
{
    (void) state;
    GOLDEN(kcat_Metadata_v4, 4, "samsa-golden", 1, true);
    GOLDEN(confluent_Metadata_v4, 4, "samsa-golden", 1, true);
    GOLDEN(kafka_python_Metadata_v0, 0, NULL, 0, true);
    GOLDEN(kafka_python_Metadata_v1, 1, NULL, -1, true);
    GOLDEN(kafka_python_Metadata_v5, 5, NULL, -1, false);
    GOLDEN(kafka_python_Metadata_v5_2, 5, "samsa-golden", 1, false);
    GOLDEN(kafkajs_Metadata_v6, 6, "samsa-golden", 1, false);
}

static int32_t  replicas[] = { 1, 2, 3 };
static int32_t  isr[] = { 1, 2 };
static int32_t  offline[] = { 3 };

static void
populate_response(samsa_MetadataResponse_t *m, samsa_arena_t *arena)
{
    samsa_MetadataResponseBroker_t     *b;
    samsa_MetadataResponseTopic_t      *t;
    samsa_MetadataResponsePartition_t  *p;

    samsa_MetadataResponse_init(m);
    m->ThrottleTimeMs = 10;
    m->Brokers_cnt = 2;
    m->Brokers = b = samsa_arena_calloc(arena, 2, sizeof(*b));
    b[0] = (samsa_MetadataResponseBroker_t) { 1, S("h1"), 9092, S("r1") };
    b[1] = (samsa_MetadataResponseBroker_t) { 2, S("h2"), 9093,
                                              SAMSA_SLICE_NULL };
    m->ClusterId = S("cluster");
    m->ControllerId = 2;
    m->ClusterAuthorizedOperations = 0x0f;
    m->Topics_cnt = 1;
    m->Topics = t = samsa_arena_calloc(arena, 1, sizeof(*t));
    samsa_MetadataResponseTopic_init(t);
    t->ErrorCode = 3;
    t->Name = S("orders");
    t->TopicId = uuid_n(7);
    t->IsInternal = true;
    t->TopicAuthorizedOperations = 0x1f;
    t->Partitions_cnt = 1;
    t->Partitions = p = samsa_arena_calloc(arena, 1, sizeof(*p));
    samsa_MetadataResponsePartition_init(p);
    p->ErrorCode = 9;
    p->PartitionIndex = 4;
    p->LeaderId = 1;
    p->LeaderEpoch = 6;
    p->ReplicaNodes = replicas;
    p->ReplicaNodes_cnt = 3;
    p->IsrNodes = isr;
    p->IsrNodes_cnt = 2;
    p->OfflineReplicas = offline;
    p->OfflineReplicas_cnt = 1;
}

static void
check_response(const samsa_MetadataResponse_t *m, int16_t v)
{
    const samsa_MetadataResponseTopic_t      *t = &m->Topics[0];
    const samsa_MetadataResponsePartition_t  *p = &t->Partitions[0];

    assert_int_equal(m->ThrottleTimeMs, v >= 3 ? 10 : 0);
    assert_int_equal(m->Brokers_cnt, 2);
    assert_true(samsa_slice_eq_cstr(m->Brokers[1].Host, "h2"));
    assert_int_equal(m->Brokers[1].Port, 9093);
    assert_true(v >= 1 ? samsa_slice_eq_cstr(m->Brokers[0].Rack, "r1")
                       : m->Brokers[0].Rack.ptr == NULL);
    assert_null(m->Brokers[1].Rack.ptr);
    assert_true(v >= 2 ? samsa_slice_eq_cstr(m->ClusterId, "cluster")
                       : m->ClusterId.ptr == NULL);
    assert_int_equal(m->ControllerId, v >= 1 ? 2 : -1);
    assert_int_equal(m->ClusterAuthorizedOperations,
                     v >= 8 && v <= 10 ? 0x0f : INT32_MIN);
    assert_int_equal(t->ErrorCode, 3);
    assert_true(samsa_slice_eq_cstr(t->Name, "orders"));
    assert_true(samsa_uuid_eq(t->TopicId, uuid_n(v >= 10 ? 7 : 0)));
    assert_true(t->IsInternal == (v >= 1));
    assert_int_equal(t->TopicAuthorizedOperations, v >= 8 ? 0x1f : INT32_MIN);
    assert_int_equal(p->ErrorCode, 9);
    assert_int_equal(p->PartitionIndex, 4);
    assert_int_equal(p->LeaderEpoch, v >= 7 ? 6 : -1);
    assert_int_equal(p->ReplicaNodes_cnt, 3);
    assert_int_equal(p->ReplicaNodes[2], 3);
    assert_int_equal(p->IsrNodes_cnt, 2);
    assert_int_equal(p->OfflineReplicas_cnt, v >= 5 ? 1 : 0);
}

static void
test_MetadataResponse_round_trip(void **state)
{
    samsa_MetadataResponse_t  in, out;
    samsa_arena_t             arena;
    samsa_buf_t               buf;
    int16_t                   v;

    (void) state;
    for (v = 0; v <= SAMSA_Metadata_VERSION_MAX; v++) {
        samsa_arena_init(&arena);
        populate_response(&in, &arena);
        rt_MetadataResponse(v, &in, &out, &arena, &buf);
        check_response(&out, v);
        samsa_buf_fini(&buf);
        samsa_arena_fini(&arena);
    }
}

/* A topic name may be null only from v12 (topics looked up by id). */
static void
test_MetadataResponse_null_name(void **state)
{
    samsa_MetadataResponse_t       in, out;
    samsa_MetadataResponseTopic_t  t;
    samsa_arena_t                  arena;
    samsa_buf_t                    buf;

    (void) state;
    samsa_arena_init(&arena);
    samsa_MetadataResponse_init(&in);
    samsa_MetadataResponseTopic_init(&t);
    t.Name = SAMSA_SLICE_NULL;
    in.Topics = &t;
    in.Topics_cnt = 1;
    rt_MetadataResponse(12, &in, &out, &arena, &buf);
    assert_null(out.Topics[0].Name.ptr);
    samsa_buf_fini(&buf);
    rt_MetadataResponse(11, &in, &out, &arena, &buf);
    assert_non_null(out.Topics[0].Name.ptr);
    samsa_buf_fini(&buf);
    samsa_arena_fini(&arena);
}

/* One broker (1, "h", 9092, no rack), cluster "c", controller 1, topic
 * "t" with partition 0 led by 1 (epoch 5), replicas and ISR {1}. */
static void
small_response(samsa_MetadataResponse_t *m, samsa_MetadataResponseBroker_t *b,
               samsa_MetadataResponseTopic_t *t,
               samsa_MetadataResponsePartition_t *p)
{
    samsa_MetadataResponse_init(m);
    *b = (samsa_MetadataResponseBroker_t) { 1, S("h"), 9092,
                                            SAMSA_SLICE_NULL };
    samsa_MetadataResponseTopic_init(t);
    t->Name = S("t");
    samsa_MetadataResponsePartition_init(p);
    p->LeaderId = 1;
    p->LeaderEpoch = 5;
    p->ReplicaNodes = replicas;
    p->ReplicaNodes_cnt = 1;
    p->IsrNodes = replicas;
    p->IsrNodes_cnt = 1;
    t->Partitions = p;
    t->Partitions_cnt = 1;
    m->Brokers = b;
    m->Brokers_cnt = 1;
    m->ClusterId = S("c");
    m->ControllerId = 1;
    m->Topics = t;
    m->Topics_cnt = 1;
}

/* Byte layouts assembled by hand from Kafka's protocol guide. */
static void
test_MetadataResponse_bytes(void **state)
{
    static const uint8_t  v0[] = {
        0x00, 0x00, 0x00, 0x01,                     /* Brokers [1] */
        0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 'h', 0x00, 0x00, 0x23, 0x84,
        0x00, 0x00, 0x00, 0x01,                     /* Topics [1] */
        0x00, 0x00, 0x00, 0x01, 't',
        0x00, 0x00, 0x00, 0x01,                     /* Partitions [1] */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01,
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01,
    };
    static const uint8_t  v9[] = {
        0x00, 0x00, 0x00, 0x00,                     /* ThrottleTimeMs */
        0x02, 0x00, 0x00, 0x00, 0x01, 0x02, 'h', 0x00, 0x00, 0x23, 0x84,
        0x00, 0x00,                                 /* Rack null, tags */
        0x02, 'c', 0x00, 0x00, 0x00, 0x01,          /* ClusterId, ctrl */
        0x02, 0x00, 0x00, 0x02, 't', 0x00,          /* Topics [1] */
        0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
        0x00, 0x00, 0x00, 0x05,                     /* LeaderEpoch */
        0x02, 0x00, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x01,
        0x01, 0x00,                                 /* Offline [], tags */
        0x80, 0x00, 0x00, 0x00, 0x00,               /* topic ops, tags */
        0x80, 0x00, 0x00, 0x00, 0x00,               /* cluster ops, tags */
    };
    samsa_MetadataResponse_t           m, out;
    samsa_MetadataResponseBroker_t     b;
    samsa_MetadataResponseTopic_t      t;
    samsa_MetadataResponsePartition_t  p;
    samsa_arena_t                      arena;

    (void) state;
    samsa_arena_init(&arena);
    small_response(&m, &b, &t, &p);
    RT_ENCODES_TO(MetadataResponse, 0, &m, v0, sizeof(v0));
    RT_ENCODES_TO(MetadataResponse, 9, &m, v9, sizeof(v9));
    assert_int_equal(RT_DECODE(MetadataResponse, 9, v9, sizeof(v9), &arena,
                               &out), SAMSA_ERR_NONE);
    assert_int_equal(out.Topics[0].Partitions[0].LeaderEpoch, 5);
    assert_int_equal(out.ClusterAuthorizedOperations, INT32_MIN);
    samsa_arena_fini(&arena);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_MetadataRequest_round_trip),
        cmocka_unit_test(test_MetadataRequest_null_topics),
        cmocka_unit_test(test_MetadataRequest_golden),
        cmocka_unit_test(test_MetadataResponse_round_trip),
        cmocka_unit_test(test_MetadataResponse_null_name),
        cmocka_unit_test(test_MetadataResponse_bytes),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
