/* Unit tests for the generated Produce codecs (proto/gen/Produce.c): every
 * version v0-v11 round-trips with each field present exactly in its
 * versions; kcat, kafka-python and kafkajs requests decode and re-encode
 * byte for byte; responses match bytes assembled by hand from Kafka's
 * message definitions. */
#include "unit.h"

#include <stdlib.h>

#include "golden.h"
#include "proto/gen/Produce.h"
#include "rt.h"

RT_DEFINE(ProduceRequest)
RT_DEFINE(ProduceResponse)

#define RECORDS(cstr) ((samsa_records_t) { S(cstr), NULL })

static void
populate_request(samsa_ProduceRequest_t *m, samsa_arena_t *arena)
{
    samsa_TopicProduceData_t      *t;
    samsa_PartitionProduceData_t  *p;

    samsa_ProduceRequest_init(m);
    m->TransactionalId = S("txn-1");
    m->Acks = -1;
    m->TimeoutMs = 1500;
    m->TopicData_cnt = 2;
    m->TopicData = t = samsa_arena_calloc(arena, 2, sizeof(*t));
    t[0].Name = S("orders");
    t[0].PartitionData_cnt = 2;
    t[0].PartitionData = p = samsa_arena_calloc(arena, 2, sizeof(*p));
    p[0].Index = 0;
    p[0].Records = RECORDS("batch-bytes");
    p[1].Index = 3;
    p[1].Records = SAMSA_RECORDS_NULL;
    t[1].Name = S("logs");
}

static void
test_ProduceRequest_round_trip(void **state)
{
    samsa_ProduceRequest_t         in, out;
    samsa_PartitionProduceData_t  *p;
    samsa_arena_t                  arena;
    samsa_buf_t                    buf;
    int16_t                        v;

    (void) state;
    for (v = 0; v <= SAMSA_Produce_VERSION_MAX; v++) {
        samsa_arena_init(&arena);
        populate_request(&in, &arena);
        rt_ProduceRequest(v, &in, &out, &arena, &buf);
        if (v >= 3) {
            assert_true(samsa_slice_eq_cstr(out.TransactionalId, "txn-1"));
        } else {
            assert_null(out.TransactionalId.ptr);
        }
        assert_int_equal(out.Acks, -1);
        assert_int_equal(out.TimeoutMs, 1500);
        assert_int_equal(out.TopicData_cnt, 2);
        assert_true(samsa_slice_eq_cstr(out.TopicData[0].Name, "orders"));
        assert_true(samsa_slice_eq_cstr(out.TopicData[1].Name, "logs"));
        assert_int_equal(out.TopicData[1].PartitionData_cnt, 0);
        assert_int_equal(out.TopicData[0].PartitionData_cnt, 2);
        p = out.TopicData[0].PartitionData;
        assert_int_equal(p[0].Index, 0);
        assert_true(samsa_slice_eq_cstr(p[0].Records.bytes, "batch-bytes"));
        assert_null(p[0].Records.file);
        assert_int_equal(p[1].Index, 3);
        assert_null(p[1].Records.bytes.ptr);
        samsa_buf_fini(&buf);
        samsa_arena_fini(&arena);
    }
}

/* TransactionalId is nullable: a non-transactional producer sends null. */
static void
test_ProduceRequest_defaults(void **state)
{
    samsa_ProduceRequest_t  in, out;
    samsa_arena_t           arena;
    samsa_buf_t             buf;
    int16_t                 v;

    (void) state;
    samsa_ProduceRequest_init(&in);
    assert_null(in.TransactionalId.ptr);
    assert_null(in.TopicData);
    samsa_arena_init(&arena);
    for (v = 0; v <= SAMSA_Produce_VERSION_MAX; v++) {
        rt_ProduceRequest(v, &in, &out, &arena, &buf);
        assert_null(out.TransactionalId.ptr);
        assert_int_equal(out.TopicData_cnt, 0);
        samsa_buf_fini(&buf);
    }
    samsa_arena_fini(&arena);
}

/* Acks 1, timeout 30000, one topic "t" with partition 2 and records "R". */
static void
test_ProduceRequest_bytes(void **state)
{
    static const uint8_t  v0[] = {
        0x00, 0x01, 0x00, 0x00, 0x75, 0x30,         /* Acks, TimeoutMs */
        0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 't',    /* TopicData [1] */
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02,
        0x00, 0x00, 0x00, 0x01, 'R',                /* Records */
    };
    static const uint8_t  v3[] = {
        0xff, 0xff,                                 /* TransactionalId */
        0x00, 0x01, 0x00, 0x00, 0x75, 0x30,
        0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 't',
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02,
        0x00, 0x00, 0x00, 0x01, 'R',
    };
    static const uint8_t  v9[] = {
        0x00,                                       /* TransactionalId */
        0x00, 0x01, 0x00, 0x00, 0x75, 0x30,
        0x02, 0x02, 't',                            /* TopicData [1] */
        0x02, 0x00, 0x00, 0x00, 0x02, 0x02, 'R',    /* PartitionData [1] */
        0x00, 0x00, 0x00,                           /* tags */
    };
    samsa_ProduceRequest_t        m, out;
    samsa_TopicProduceData_t      t = { 0 };
    samsa_PartitionProduceData_t  p = { .Index = 2, .Records = RECORDS("R") };
    samsa_arena_t                 arena;

    (void) state;
    samsa_ProduceRequest_init(&m);
    m.Acks = 1;
    m.TimeoutMs = 30000;
    t.Name = S("t");
    t.PartitionData = &p;
    t.PartitionData_cnt = 1;
    m.TopicData = &t;
    m.TopicData_cnt = 1;
    RT_ENCODES_TO(ProduceRequest, 0, &m, v0, sizeof(v0));
    RT_ENCODES_TO(ProduceRequest, 2, &m, v0, sizeof(v0));
    RT_ENCODES_TO(ProduceRequest, 3, &m, v3, sizeof(v3));
    RT_ENCODES_TO(ProduceRequest, 8, &m, v3, sizeof(v3));
    RT_ENCODES_TO(ProduceRequest, 9, &m, v9, sizeof(v9));
    RT_ENCODES_TO(ProduceRequest, 11, &m, v9, sizeof(v9));
    samsa_arena_init(&arena);
    assert_int_equal(RT_DECODE(ProduceRequest, 9, v9, sizeof(v9), &arena,
                               &out), SAMSA_ERR_NONE);
    assert_true(samsa_slice_eq_cstr(out.TopicData[0].PartitionData[0]
                                    .Records.bytes, "R"));
    samsa_arena_fini(&arena);
}

/* A golden request: one topic "samsa-golden", partition 0 with a record
 * batch of batch_len bytes; decodes and re-encodes to the same bytes. */
static void
check_golden(const uint8_t *frame, size_t len, size_t hdr_len,
             int16_t version, int16_t acks, int32_t timeout,
             size_t batch_len)
{
    samsa_ProduceRequest_t         m;
    samsa_PartitionProduceData_t  *p;
    samsa_arena_t                  arena;
    const uint8_t                 *batch;

    samsa_arena_init(&arena);
    assert_int_equal(RT_DECODE(ProduceRequest, version, frame + hdr_len,
                               len - hdr_len, &arena, &m), SAMSA_ERR_NONE);
    assert_null(m.TransactionalId.ptr);
    assert_int_equal(m.Acks, acks);
    assert_int_equal(m.TimeoutMs, timeout);
    assert_int_equal(m.TopicData_cnt, 1);
    assert_true(samsa_slice_eq_cstr(m.TopicData[0].Name, "samsa-golden"));
    assert_int_equal(m.TopicData[0].PartitionData_cnt, 1);
    p = &m.TopicData[0].PartitionData[0];
    assert_int_equal(p->Index, 0);
    assert_int_equal(p->Records.bytes.len, batch_len);
    batch = (const uint8_t *) p->Records.bytes.ptr;
    assert_int_equal(batch[16], 2);             /* record batch magic v2 */
    RT_ENCODES_TO(ProduceRequest, version, &m, frame + hdr_len,
                  len - hdr_len);
    samsa_arena_fini(&arena);
}

#define GOLDEN(g, v, acks, timeout, batch_len)                            \
    check_golden(GOLDEN_##g, sizeof(GOLDEN_##g), GOLDEN_##g##_HDR_LEN, v, \
                 acks, timeout, batch_len)

static void
test_ProduceRequest_golden(void **state)
{
    (void) state;
    GOLDEN(kcat_produce_Produce_v7, 7, -1, 30000, 74);
    GOLDEN(kcat_idempotent_Produce_v7, 7, -1, 30000, 73);
    GOLDEN(kafka_python_data_Produce_v7, 7, 1, 1500, 74);
    GOLDEN(kafkajs_data_Produce_v7, 7, -1, 1000, 74);
}

static void
populate_response(samsa_ProduceResponse_t *m, samsa_arena_t *arena)
{
    samsa_TopicProduceResponse_t       *t;
    samsa_PartitionProduceResponse_t   *p;
    samsa_BatchIndexAndErrorMessage_t  *e;
    samsa_ProduceNodeEndpoint_t        *n;

    samsa_ProduceResponse_init(m);
    m->ThrottleTimeMs = 7;
    m->Responses_cnt = 1;
    m->Responses = t = samsa_arena_calloc(arena, 1, sizeof(*t));
    t->Name = S("orders");
    t->PartitionResponses_cnt = 2;
    t->PartitionResponses = p = samsa_arena_calloc(arena, 2, sizeof(*p));
    samsa_PartitionProduceResponse_init(&p[0]);
    samsa_PartitionProduceResponse_init(&p[1]);
    p[0].Index = 1;
    p[0].ErrorCode = 87;                        /* INVALID_RECORD */
    p[0].BaseOffset = 42;
    p[0].LogAppendTimeMs = 1700000000000;
    p[0].LogStartOffset = 5;
    p[0].ErrorMessage = S("bad batch");
    p[0].RecordErrors_cnt = 2;
    p[0].RecordErrors = e = samsa_arena_calloc(arena, 2, sizeof(*e));
    e[0] = (samsa_BatchIndexAndErrorMessage_t) { 3, S("no key") };
    e[1] = (samsa_BatchIndexAndErrorMessage_t) { 4, SAMSA_SLICE_NULL };
    p[1].Index = 2;
    p[1].ErrorCode = 6;                         /* NOT_LEADER_OR_FOLLOWER */
    p[1].BaseOffset = -1;
    m->NodeEndpoints_cnt = 1;
    m->NodeEndpoints = n = samsa_arena_calloc(arena, 1, sizeof(*n));
    *n = (samsa_ProduceNodeEndpoint_t) { 2, S("h2"), 9093, S("r2") };
}

static void
check_response(const samsa_ProduceResponse_t *m, int16_t v)
{
    const samsa_PartitionProduceResponse_t  *p;

    assert_int_equal(m->ThrottleTimeMs, v >= 1 ? 7 : 0);
    assert_int_equal(m->Responses_cnt, 1);
    assert_true(samsa_slice_eq_cstr(m->Responses[0].Name, "orders"));
    assert_int_equal(m->Responses[0].PartitionResponses_cnt, 2);
    p = m->Responses[0].PartitionResponses;
    assert_int_equal(p[0].Index, 1);
    assert_int_equal(p[0].ErrorCode, 87);
    assert_int_equal(p[0].BaseOffset, 42);
    assert_int_equal(p[0].LogAppendTimeMs, v >= 2 ? 1700000000000 : -1);
    assert_int_equal(p[0].LogStartOffset, v >= 5 ? 5 : -1);
    if (v >= 8) {
        assert_int_equal(p[0].RecordErrors_cnt, 2);
        assert_int_equal(p[0].RecordErrors[0].BatchIndex, 3);
        assert_true(samsa_slice_eq_cstr(
            p[0].RecordErrors[0].BatchIndexErrorMessage, "no key"));
        assert_int_equal(p[0].RecordErrors[1].BatchIndex, 4);
        assert_null(p[0].RecordErrors[1].BatchIndexErrorMessage.ptr);
        assert_true(samsa_slice_eq_cstr(p[0].ErrorMessage, "bad batch"));
    } else {
        assert_int_equal(p[0].RecordErrors_cnt, 0);
        assert_null(p[0].ErrorMessage.ptr);
    }
    assert_int_equal(p[1].Index, 2);
    assert_int_equal(p[1].ErrorCode, 6);
    assert_int_equal(p[1].BaseOffset, -1);
    assert_null(p[1].ErrorMessage.ptr);
    if (v >= 10) {
        assert_int_equal(m->NodeEndpoints_cnt, 1);
        assert_int_equal(m->NodeEndpoints[0].NodeId, 2);
        assert_true(samsa_slice_eq_cstr(m->NodeEndpoints[0].Host, "h2"));
        assert_int_equal(m->NodeEndpoints[0].Port, 9093);
        assert_true(samsa_slice_eq_cstr(m->NodeEndpoints[0].Rack, "r2"));
    } else {
        assert_int_equal(m->NodeEndpoints_cnt, 0);
    }
}

static void
test_ProduceResponse_round_trip(void **state)
{
    samsa_ProduceResponse_t  in, out;
    samsa_arena_t            arena;
    samsa_buf_t              buf;
    int16_t                  v;

    (void) state;
    for (v = 0; v <= SAMSA_Produce_VERSION_MAX; v++) {
        samsa_arena_init(&arena);
        populate_response(&in, &arena);
        rt_ProduceResponse(v, &in, &out, &arena, &buf);
        check_response(&out, v);
        samsa_buf_fini(&buf);
        samsa_arena_fini(&arena);
    }
}

/* Topic "t", partition 0 at base offset 5, no error; throttle 0. */
static void
test_ProduceResponse_bytes(void **state)
{
    static const uint8_t  v0[] = {
        0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 't',    /* Responses [1] */
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05,
    };
    static const uint8_t  v8[] = {
        0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 't',
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05,
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,     /* append time */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,     /* log start */
        0x00, 0x00, 0x00, 0x00,                     /* RecordErrors [] */
        0xff, 0xff,                                 /* ErrorMessage null */
        0x00, 0x00, 0x00, 0x00,                     /* ThrottleTimeMs */
    };
    static const uint8_t  v10[] = {
        0x02, 0x02, 't', 0x02,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05,
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x01, 0x00, 0x00,                           /* [], null, tags */
        0x00,                                       /* topic tags */
        0x00, 0x00, 0x00, 0x00,                     /* ThrottleTimeMs */
        0x01, 0x00, 0x0d, 0x02,                     /* tag 0: 13 bytes */
        0x00, 0x00, 0x00, 0x01, 0x02, 'h',          /* NodeEndpoints [1] */
        0x00, 0x00, 0x23, 0x84, 0x00, 0x00,         /* port, rack, tags */
    };
    samsa_ProduceResponse_t           m, out;
    samsa_TopicProduceResponse_t      t = { 0 };
    samsa_PartitionProduceResponse_t  p;
    samsa_ProduceNodeEndpoint_t       n = { 1, S("h"), 9092,
                                            SAMSA_SLICE_NULL };
    samsa_arena_t                     arena;

    (void) state;
    samsa_ProduceResponse_init(&m);
    samsa_PartitionProduceResponse_init(&p);
    p.BaseOffset = 5;
    p.LogStartOffset = 0;
    t.Name = S("t");
    t.PartitionResponses = &p;
    t.PartitionResponses_cnt = 1;
    m.Responses = &t;
    m.Responses_cnt = 1;
    RT_ENCODES_TO(ProduceResponse, 0, &m, v0, sizeof(v0));
    RT_ENCODES_TO(ProduceResponse, 8, &m, v8, sizeof(v8));
    m.NodeEndpoints = &n;
    m.NodeEndpoints_cnt = 1;
    RT_ENCODES_TO(ProduceResponse, 10, &m, v10, sizeof(v10));
    RT_ENCODES_TO(ProduceResponse, 11, &m, v10, sizeof(v10));
    /* v9 has no NodeEndpoints: the tag section stays empty. */
    samsa_arena_init(&arena);
    assert_int_equal(RT_DECODE(ProduceResponse, 10, v10, sizeof(v10),
                               &arena, &out), SAMSA_ERR_NONE);
    assert_int_equal(out.NodeEndpoints_cnt, 1);
    assert_int_equal(out.NodeEndpoints[0].Port, 9092);
    assert_int_equal(out.Responses[0].PartitionResponses[0].LogAppendTimeMs,
                     -1);
    samsa_arena_fini(&arena);
}

/* v10+ CurrentLeader (tag 0 of a partition, KIP-951): written only when
 * set, decoded back. */
static void
test_ProduceResponse_current_leader(void **state)
{
    static const uint8_t  v10[] = {
        0x02, 0x02, 't', 0x02,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05,
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x01, 0x00,                                 /* [], null */
        0x01, 0x00, 0x09,                           /* tag 0: 9 bytes */
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x07, 0x00,
        0x00,                                       /* topic tags */
        0x00, 0x00, 0x00, 0x00,                     /* ThrottleTimeMs */
        0x00,                                       /* no tags */
    };
    samsa_ProduceResponse_t           m, out;
    samsa_TopicProduceResponse_t      t = { 0 };
    samsa_PartitionProduceResponse_t  p;
    samsa_arena_t                     arena;

    (void) state;
    samsa_ProduceResponse_init(&m);
    samsa_PartitionProduceResponse_init(&p);
    assert_false(p.CurrentLeader_set);
    assert_int_equal(p.CurrentLeader.LeaderId, -1);
    p.BaseOffset = 5;
    p.LogStartOffset = 0;
    p.CurrentLeader.LeaderId = 1;
    p.CurrentLeader.LeaderEpoch = 7;
    p.CurrentLeader_set = true;
    t.Name = S("t");
    t.PartitionResponses = &p;
    t.PartitionResponses_cnt = 1;
    m.Responses = &t;
    m.Responses_cnt = 1;
    RT_ENCODES_TO(ProduceResponse, 10, &m, v10, sizeof(v10));
    samsa_arena_init(&arena);
    assert_int_equal(RT_DECODE(ProduceResponse, 10, v10, sizeof(v10),
                               &arena, &out), SAMSA_ERR_NONE);
    p = out.Responses[0].PartitionResponses[0];
    assert_true(p.CurrentLeader_set);
    assert_int_equal(p.CurrentLeader.LeaderId, 1);
    assert_int_equal(p.CurrentLeader.LeaderEpoch, 7);
    samsa_arena_fini(&arena);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_ProduceRequest_round_trip),
        cmocka_unit_test(test_ProduceRequest_defaults),
        cmocka_unit_test(test_ProduceRequest_bytes),
        cmocka_unit_test(test_ProduceRequest_golden),
        cmocka_unit_test(test_ProduceResponse_round_trip),
        cmocka_unit_test(test_ProduceResponse_bytes),
        cmocka_unit_test(test_ProduceResponse_current_leader),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
