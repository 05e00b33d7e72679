/* Unit tests for the generated Fetch codecs (proto/gen/Fetch.c): every
 * version v0-v16 round-trips with each field present exactly in its
 * versions (names up to v12, topic ids from v13, tagged ClusterId and
 * NodeEndpoints); kcat and kafka-python requests decode and re-encode byte
 * for byte; requests and responses match bytes assembled by hand from
 * Kafka's message definitions. */
#include "unit.h"

#include <stdlib.h>

#include "golden.h"
#include "proto/gen/Fetch.h"
#include "rt.h"

RT_DEFINE(FetchRequest)
RT_DEFINE(FetchResponse)

#define RECORDS(cstr) ((samsa_records_t) { S(cstr), NULL })

static samsa_uuid_t
uuid_n(uint8_t n)
{
    samsa_uuid_t  u;

    memset(u.b, n, sizeof(u.b));
    return u;
}

static int32_t  forget[] = { 1, 2 };

static void
populate_request(samsa_FetchRequest_t *m, samsa_arena_t *arena)
{
    samsa_FetchTopic_t      *t;
    samsa_FetchPartition_t  *p;
    samsa_ForgottenTopic_t  *f;

    samsa_FetchRequest_init(m);
    m->ClusterId = S("cluster-1");
    m->ReplicaId = 5;
    m->ReplicaState = (samsa_ReplicaState_t) { 5, 21 };    /* v15+ */
    m->ReplicaState_set = true;
    m->MaxWaitMs = 500;
    m->MinBytes = 1;
    m->MaxBytes = 1000;
    m->IsolationLevel = 1;
    m->SessionId = 9;
    m->SessionEpoch = 2;
    m->Topics_cnt = 1;
    m->Topics = t = samsa_arena_calloc(arena, 1, sizeof(*t));
    t->Topic = S("orders");
    t->TopicId = uuid_n(7);
    t->Partitions_cnt = 2;
    t->Partitions = p = samsa_arena_calloc(arena, 2, sizeof(*p));
    samsa_FetchPartition_init(&p[0]);
    samsa_FetchPartition_init(&p[1]);
    p[0].Partition = 0;
    p[0].CurrentLeaderEpoch = 4;
    p[0].FetchOffset = 100;
    p[0].LastFetchedEpoch = 3;
    p[0].LogStartOffset = 10;
    p[0].PartitionMaxBytes = 1048576;
    p[1].Partition = 6;
    p[1].FetchOffset = 7;
    p[1].PartitionMaxBytes = 1;
    m->ForgottenTopicsData_cnt = 1;
    m->ForgottenTopicsData = f = samsa_arena_calloc(arena, 1, sizeof(*f));
    f->Topic = S("gone");
    f->TopicId = uuid_n(8);
    f->Partitions = forget;
    f->Partitions_cnt = 2;
    m->RackId = S("rack-a");
}

static void
check_request(const samsa_FetchRequest_t *m, int16_t v)
{
    const samsa_FetchTopic_t      *t = &m->Topics[0];
    const samsa_FetchPartition_t  *p = t->Partitions;
    const samsa_ForgottenTopic_t  *f = m->ForgottenTopicsData;

    if (v >= 12) {
        assert_true(samsa_slice_eq_cstr(m->ClusterId, "cluster-1"));
    } else {
        assert_null(m->ClusterId.ptr);
    }
    assert_int_equal(m->ReplicaId, v <= 14 ? 5 : -1);
    assert_int_equal(m->MaxWaitMs, 500);
    assert_int_equal(m->MinBytes, 1);
    assert_int_equal(m->MaxBytes, v >= 3 ? 1000 : 0x7fffffff);
    assert_int_equal(m->IsolationLevel, v >= 4 ? 1 : 0);
    assert_int_equal(m->SessionId, v >= 7 ? 9 : 0);
    assert_int_equal(m->SessionEpoch, v >= 7 ? 2 : -1);
    assert_int_equal(m->Topics_cnt, 1);
    assert_true(samsa_slice_eq_cstr(t->Topic, v <= 12 ? "orders" : ""));
    assert_true(samsa_uuid_eq(t->TopicId, uuid_n(v >= 13 ? 7 : 0)));
    assert_int_equal(t->Partitions_cnt, 2);
    assert_int_equal(p[0].Partition, 0);
    assert_int_equal(p[0].CurrentLeaderEpoch, v >= 9 ? 4 : -1);
    assert_int_equal(p[0].FetchOffset, 100);
    assert_int_equal(p[0].LastFetchedEpoch, v >= 12 ? 3 : -1);
    assert_int_equal(p[0].LogStartOffset, v >= 5 ? 10 : -1);
    assert_int_equal(p[0].PartitionMaxBytes, 1048576);
    assert_int_equal(p[1].Partition, 6);
    assert_int_equal(p[1].FetchOffset, 7);
    assert_int_equal(p[1].CurrentLeaderEpoch, -1);
    if (v >= 7) {
        assert_int_equal(m->ForgottenTopicsData_cnt, 1);
        assert_true(samsa_slice_eq_cstr(f->Topic, v <= 12 ? "gone" : ""));
        assert_true(samsa_uuid_eq(f->TopicId, uuid_n(v >= 13 ? 8 : 0)));
        assert_int_equal(f->Partitions_cnt, 2);
        assert_int_equal(f->Partitions[1], 2);
    } else {
        assert_int_equal(m->ForgottenTopicsData_cnt, 0);
    }
    assert_true(samsa_slice_eq_cstr(m->RackId, v >= 11 ? "rack-a" : ""));
}

static void
test_FetchRequest_round_trip(void **state)
{
    samsa_FetchRequest_t  in, out;
    samsa_arena_t         arena;
    samsa_buf_t           buf;
    int16_t               v;

    (void) state;
    for (v = 0; v <= SAMSA_Fetch_VERSION_MAX; v++) {
        samsa_arena_init(&arena);
        populate_request(&in, &arena);
        rt_FetchRequest(v, &in, &out, &arena, &buf);
        check_request(&out, v);
        assert_int_equal(out.ReplicaState_set, v >= 15);
        assert_int_equal(out.ReplicaState.ReplicaId, v >= 15 ? 5 : -1);
        assert_true(out.ReplicaState.ReplicaEpoch == (v >= 15 ? 21 : -1));
        samsa_buf_fini(&buf);
        samsa_arena_fini(&arena);
    }
}

/* A consumer's fetch of "t" partition 0 from offset 0: v4, v12 (with the
 * tagged ClusterId "c"), v13 (topic id instead of the name). */
static void
test_FetchRequest_bytes(void **state)
{
    static const uint8_t  v4[] = {
        0xff, 0xff, 0xff, 0xff,                     /* ReplicaId -1 */
        0x00, 0x00, 0x01, 0xf4, 0x00, 0x00, 0x00, 0x01,     /* wait, min */
        0x7f, 0xff, 0xff, 0xff, 0x00,               /* MaxBytes, isolation */
        0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 't',    /* Topics [1] */
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,     /* [1], p0 */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,     /* offset 0 */
        0x00, 0x10, 0x00, 0x00,                     /* PartitionMaxBytes */
    };
    static const uint8_t  v12[] = {
        0xff, 0xff, 0xff, 0xff,
        0x00, 0x00, 0x01, 0xf4, 0x00, 0x00, 0x00, 0x01,
        0x7f, 0xff, 0xff, 0xff, 0x00,
        0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff,     /* session */
        0x02, 0x02, 't', 0x02, 0x00, 0x00, 0x00, 0x00,      /* Topics */
        0xff, 0xff, 0xff, 0xff,                     /* CurrentLeaderEpoch */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0xff, 0xff, 0xff, 0xff,                     /* LastFetchedEpoch */
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,     /* log start */
        0x00, 0x10, 0x00, 0x00, 0x00, 0x00,         /* max bytes, tags */
        0x01, 0x01,                                 /* Forgotten [], rack */
        0x01, 0x00, 0x02, 0x02, 'c',                /* tag 0: ClusterId */
    };
    static const uint8_t  v13[] = {
        0xff, 0xff, 0xff, 0xff,
        0x00, 0x00, 0x01, 0xf4, 0x00, 0x00, 0x00, 0x01,
        0x7f, 0xff, 0xff, 0xff, 0x00,
        0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff,
        0x02, 0x05, 0x05, 0x05, 0x05, 0x05, 0x05, 0x05, 0x05,  /* TopicId */
        0x05, 0x05, 0x05, 0x05, 0x05, 0x05, 0x05, 0x05,
        0x02, 0x00, 0x00, 0x00, 0x00,
        0xff, 0xff, 0xff, 0xff,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0xff, 0xff, 0xff, 0xff,
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0x00, 0x10, 0x00, 0x00, 0x00, 0x00,
        0x01, 0x01, 0x00,                           /* no ClusterId */
    };
    samsa_FetchRequest_t    m, out;
    samsa_FetchTopic_t      t = { 0 };
    samsa_FetchPartition_t  p;
    samsa_arena_t           arena;

    (void) state;
    samsa_FetchRequest_init(&m);
    samsa_FetchPartition_init(&p);
    m.MaxWaitMs = 500;
    m.MinBytes = 1;
    p.PartitionMaxBytes = 1048576;
    t.Topic = S("t");
    t.TopicId = uuid_n(5);
    t.Partitions = &p;
    t.Partitions_cnt = 1;
    m.Topics = &t;
    m.Topics_cnt = 1;
    RT_ENCODES_TO(FetchRequest, 4, &m, v4, sizeof(v4));
    RT_ENCODES_TO(FetchRequest, 13, &m, v13, sizeof(v13));
    m.ClusterId = S("c");
    RT_ENCODES_TO(FetchRequest, 12, &m, v12, sizeof(v12));
    samsa_arena_init(&arena);
    assert_int_equal(RT_DECODE(FetchRequest, 12, v12, sizeof(v12), &arena,
                               &out), SAMSA_ERR_NONE);
    assert_true(samsa_slice_eq_cstr(out.ClusterId, "c"));
    assert_true(samsa_slice_eq_cstr(out.Topics[0].Topic, "t"));
    assert_int_equal(RT_DECODE(FetchRequest, 13, v13, sizeof(v13), &arena,
                               &out), SAMSA_ERR_NONE);
    assert_null(out.ClusterId.ptr);
    assert_true(samsa_uuid_eq(out.Topics[0].TopicId, uuid_n(5)));
    samsa_arena_fini(&arena);
}

/* A golden consumer fetch: "samsa-golden" partition 0 from offset 0,
 * 500 ms wait, 1 byte minimum, 50 MiB / 1 MiB limits, no session. */
static void
check_golden(const uint8_t *frame, size_t len, size_t hdr_len,
             int16_t version, int8_t isolation)
{
    samsa_FetchRequest_t    m;
    samsa_FetchPartition_t *p;
    samsa_arena_t           arena;

    samsa_arena_init(&arena);
    assert_int_equal(RT_DECODE(FetchRequest, version, frame + hdr_len,
                               len - hdr_len, &arena, &m), SAMSA_ERR_NONE);
    assert_int_equal(m.ReplicaId, -1);
    assert_int_equal(m.MaxWaitMs, 500);
    assert_int_equal(m.MinBytes, 1);
    assert_int_equal(m.MaxBytes, 52428800);
    assert_int_equal(m.IsolationLevel, isolation);
    assert_int_equal(m.SessionId, 0);
    assert_int_equal(m.SessionEpoch, -1);
    assert_int_equal(m.Topics_cnt, 1);
    assert_true(samsa_slice_eq_cstr(m.Topics[0].Topic, "samsa-golden"));
    assert_int_equal(m.Topics[0].Partitions_cnt, 1);
    p = &m.Topics[0].Partitions[0];
    assert_int_equal(p->Partition, 0);
    assert_int_equal(p->CurrentLeaderEpoch, -1);
    assert_int_equal(p->FetchOffset, 0);
    assert_int_equal(p->LogStartOffset, -1);
    assert_int_equal(p->PartitionMaxBytes, 1048576);
    assert_int_equal(m.ForgottenTopicsData_cnt, 0);
    assert_true(samsa_slice_eq_cstr(m.RackId, ""));
    RT_ENCODES_TO(FetchRequest, version, &m, frame + hdr_len, len - hdr_len);
    samsa_arena_fini(&arena);
}

#define GOLDEN(g, v, isolation)                                           \
    check_golden(GOLDEN_##g, sizeof(GOLDEN_##g), GOLDEN_##g##_HDR_LEN, v, \
                 isolation)

static void
test_FetchRequest_golden(void **state)
{
    (void) state;
    GOLDEN(kcat_consume_Fetch_v11, 11, 1);
    GOLDEN(kafka_python_data_Fetch_v4, 4, 0);
}

static void
populate_response(samsa_FetchResponse_t *m, samsa_arena_t *arena)
{
    samsa_FetchableTopicResponse_t  *t;
    samsa_FetchPartitionData_t      *p;
    samsa_AbortedTransaction_t      *a;
    samsa_FetchNodeEndpoint_t       *n;

    samsa_FetchResponse_init(m);
    m->ThrottleTimeMs = 3;
    m->ErrorCode = 1;
    m->SessionId = 9;
    m->Responses_cnt = 1;
    m->Responses = t = samsa_arena_calloc(arena, 1, sizeof(*t));
    t->Topic = S("orders");
    t->TopicId = uuid_n(7);
    t->Partitions_cnt = 2;
    t->Partitions = p = samsa_arena_calloc(arena, 2, sizeof(*p));
    samsa_FetchPartitionData_init(&p[0]);
    samsa_FetchPartitionData_init(&p[1]);
    p[0].PartitionIndex = 0;
    p[0].HighWatermark = 200;
    p[0].LastStableOffset = 150;
    p[0].LogStartOffset = 10;
    p[0].AbortedTransactions_cnt = 1;
    p[0].AbortedTransactions = a = samsa_arena_calloc(arena, 1, sizeof(*a));
    a->ProducerId = 77;
    a->FirstOffset = 120;
    p[0].PreferredReadReplica = 2;
    p[0].Records = RECORDS("record-batches");
    p[0].DivergingEpoch = (samsa_EpochEndOffset_t) { 4, 180 };
    p[0].DivergingEpoch_set = true;
    p[0].CurrentLeader = (samsa_FetchLeaderIdAndEpoch_t) { 1, 5 };
    p[0].CurrentLeader_set = true;
    p[1].SnapshotId = (samsa_SnapshotId_t) { 99, 3 };
    p[1].SnapshotId_set = true;
    p[1].PartitionIndex = 1;
    p[1].ErrorCode = 6;
    p[1].HighWatermark = -1;
    p[1].AbortedTransactions_cnt = -1;
    p[1].Records = SAMSA_RECORDS_NULL;
    m->NodeEndpoints_cnt = 1;
    m->NodeEndpoints = n = samsa_arena_calloc(arena, 1, sizeof(*n));
    *n = (samsa_FetchNodeEndpoint_t) { 2, S("h2"), 9093, SAMSA_SLICE_NULL };
}

/* The v12+ tagged structs of a partition (KIP-595, KIP-951): there when
 * set, absent (and at their defaults) before v12. */
static void
check_response_tagged(const samsa_FetchPartitionData_t *p, int16_t v)
{
    bool  has = v >= 12;

    assert_int_equal(p[0].DivergingEpoch_set, has);
    assert_int_equal(p[0].DivergingEpoch.Epoch, has ? 4 : -1);
    assert_true(p[0].DivergingEpoch.EndOffset == (has ? 180 : -1));
    assert_int_equal(p[0].CurrentLeader_set, has);
    assert_int_equal(p[0].CurrentLeader.LeaderId, has ? 1 : -1);
    assert_int_equal(p[0].CurrentLeader.LeaderEpoch, has ? 5 : -1);
    assert_false(p[0].SnapshotId_set);
    assert_int_equal(p[1].SnapshotId_set, has);
    assert_true(p[1].SnapshotId.EndOffset == (has ? 99 : -1));
    assert_int_equal(p[1].SnapshotId.Epoch, has ? 3 : -1);
    assert_false(p[1].CurrentLeader_set);
}

static void
check_response(const samsa_FetchResponse_t *m, int16_t v)
{
    const samsa_FetchableTopicResponse_t  *t = &m->Responses[0];
    const samsa_FetchPartitionData_t      *p = t->Partitions;

    assert_int_equal(m->ThrottleTimeMs, v >= 1 ? 3 : 0);
    assert_int_equal(m->ErrorCode, v >= 7 ? 1 : 0);
    assert_int_equal(m->SessionId, v >= 7 ? 9 : 0);
    assert_int_equal(m->Responses_cnt, 1);
    assert_true(samsa_slice_eq_cstr(t->Topic, v <= 12 ? "orders" : ""));
    assert_true(samsa_uuid_eq(t->TopicId, uuid_n(v >= 13 ? 7 : 0)));
    assert_int_equal(t->Partitions_cnt, 2);
    assert_int_equal(p[0].PartitionIndex, 0);
    assert_int_equal(p[0].ErrorCode, 0);
    assert_int_equal(p[0].HighWatermark, 200);
    assert_int_equal(p[0].LastStableOffset, v >= 4 ? 150 : -1);
    assert_int_equal(p[0].LogStartOffset, v >= 5 ? 10 : -1);
    if (v >= 4) {
        assert_int_equal(p[0].AbortedTransactions_cnt, 1);
        assert_int_equal(p[0].AbortedTransactions[0].ProducerId, 77);
        assert_int_equal(p[0].AbortedTransactions[0].FirstOffset, 120);
        assert_int_equal(p[1].AbortedTransactions_cnt, -1);
    } else {
        assert_int_equal(p[0].AbortedTransactions_cnt, 0);
        assert_int_equal(p[1].AbortedTransactions_cnt, 0);
    }
    assert_int_equal(p[0].PreferredReadReplica, v >= 11 ? 2 : -1);
    assert_true(samsa_slice_eq_cstr(p[0].Records.bytes, "record-batches"));
    assert_int_equal(p[1].PartitionIndex, 1);
    assert_int_equal(p[1].ErrorCode, 6);
    assert_int_equal(p[1].HighWatermark, -1);
    assert_null(p[1].Records.bytes.ptr);
    if (v >= 16) {
        assert_int_equal(m->NodeEndpoints_cnt, 1);
        assert_int_equal(m->NodeEndpoints[0].NodeId, 2);
        assert_true(samsa_slice_eq_cstr(m->NodeEndpoints[0].Host, "h2"));
        assert_int_equal(m->NodeEndpoints[0].Port, 9093);
        assert_null(m->NodeEndpoints[0].Rack.ptr);
    } else {
        assert_int_equal(m->NodeEndpoints_cnt, 0);
    }
}

static void
test_FetchResponse_round_trip(void **state)
{
    samsa_FetchResponse_t  in, out;
    samsa_arena_t          arena;
    samsa_buf_t            buf;
    int16_t                v;

    (void) state;
    for (v = 0; v <= SAMSA_Fetch_VERSION_MAX; v++) {
        samsa_arena_init(&arena);
        populate_response(&in, &arena);
        rt_FetchResponse(v, &in, &out, &arena, &buf);
        check_response(&out, v);
        check_response_tagged(out.Responses[0].Partitions, v);
        samsa_buf_fini(&buf);
        samsa_arena_fini(&arena);
    }
}

/* "t" partition 0: high watermark 5, LSO 5, log start 0, no aborted
 * transactions (null), records "R": v4, v12 and v16 (NodeEndpoints). */
static void
test_FetchResponse_bytes(void **state)
{
    static const uint8_t  v4[] = {
        0x00, 0x00, 0x00, 0x00,                     /* ThrottleTimeMs */
        0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 't',    /* Responses [1] */
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05,     /* HW */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05,     /* LSO */
        0xff, 0xff, 0xff, 0xff,                     /* Aborted null */
        0x00, 0x00, 0x00, 0x01, 'R',                /* Records */
    };
    static const uint8_t  v12[] = {
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00,         /* throttle, error */
        0x00, 0x00, 0x00, 0x00,                     /* SessionId */
        0x02, 0x02, 't', 0x02,                      /* Responses, parts */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,     /* log start */
        0x00,                                       /* Aborted null */
        0xff, 0xff, 0xff, 0xff,                     /* PreferredReadReplica */
        0x02, 'R', 0x00, 0x00, 0x00,                /* Records, tags */
    };
    static const uint8_t  v16[] = {
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00,
        0x02, 0x09, 0x09, 0x09, 0x09, 0x09, 0x09, 0x09, 0x09,  /* TopicId */
        0x09, 0x09, 0x09, 0x09, 0x09, 0x09, 0x09, 0x09, 0x02,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00,
        0xff, 0xff, 0xff, 0xff,
        0x02, 'R', 0x00, 0x00,
        0x01, 0x00, 0x0e,                           /* tag 0, 14 bytes */
        0x02, 0x00, 0x00, 0x00, 0x01, 0x02, 'h',    /* NodeEndpoints [1] */
        0x00, 0x00, 0x23, 0x84, 0x02, 'r', 0x00,
    };
    samsa_FetchResponse_t           m, out;
    samsa_FetchableTopicResponse_t  t = { 0 };
    samsa_FetchPartitionData_t      p;
    samsa_FetchNodeEndpoint_t       n = { 1, S("h"), 9092, S("r") };
    samsa_arena_t                   arena;

    (void) state;
    samsa_FetchResponse_init(&m);
    samsa_FetchPartitionData_init(&p);
    p.HighWatermark = 5;
    p.LastStableOffset = 5;
    p.LogStartOffset = 0;
    p.AbortedTransactions_cnt = -1;
    p.Records = RECORDS("R");
    t.Topic = S("t");
    t.TopicId = uuid_n(9);
    t.Partitions = &p;
    t.Partitions_cnt = 1;
    m.Responses = &t;
    m.Responses_cnt = 1;
    RT_ENCODES_TO(FetchResponse, 4, &m, v4, sizeof(v4));
    RT_ENCODES_TO(FetchResponse, 12, &m, v12, sizeof(v12));
    m.NodeEndpoints = &n;
    m.NodeEndpoints_cnt = 1;
    RT_ENCODES_TO(FetchResponse, 12, &m, v12, sizeof(v12));  /* v16+ only */
    RT_ENCODES_TO(FetchResponse, 16, &m, v16, sizeof(v16));
    samsa_arena_init(&arena);
    assert_int_equal(RT_DECODE(FetchResponse, 16, v16, sizeof(v16), &arena,
                               &out), SAMSA_ERR_NONE);
    assert_int_equal(out.NodeEndpoints_cnt, 1);
    assert_true(samsa_slice_eq_cstr(out.NodeEndpoints[0].Rack, "r"));
    assert_int_equal(out.Responses[0].Partitions[0].AbortedTransactions_cnt,
                     -1);
    assert_true(samsa_slice_eq_cstr(
        out.Responses[0].Partitions[0].Records.bytes, "R"));
    samsa_arena_fini(&arena);
}

/* Tags a v12+ response may carry that this schema does not decode yet
 * (DivergingEpoch 0, CurrentLeader 1, SnapshotId 2 per partition) are
 * skipped, not an error. */
static void
test_FetchResponse_unknown_tags(void **state)
{
    static const uint8_t     v12[] = {
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00,
        0x02, 0x02, 't', 0x02,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00,
        0xff, 0xff, 0xff, 0xff,
        0x02, 'R',
        0x01, 0x01, 0x09,                           /* tag 1: 9 bytes */
        0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x07, 0x00,
        0x00, 0x00,
    };
    samsa_FetchResponse_t  out;
    samsa_arena_t          arena;

    (void) state;
    samsa_arena_init(&arena);
    assert_int_equal(RT_DECODE(FetchResponse, 12, v12, sizeof(v12), &arena,
                               &out), SAMSA_ERR_NONE);
    assert_int_equal(out.Responses[0].Partitions[0].HighWatermark, 5);
    assert_true(samsa_slice_eq_cstr(
        out.Responses[0].Partitions[0].Records.bytes, "R"));
    samsa_arena_fini(&arena);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_FetchRequest_round_trip),
        cmocka_unit_test(test_FetchRequest_bytes),
        cmocka_unit_test(test_FetchRequest_golden),
        cmocka_unit_test(test_FetchResponse_round_trip),
        cmocka_unit_test(test_FetchResponse_bytes),
        cmocka_unit_test(test_FetchResponse_unknown_tags),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
