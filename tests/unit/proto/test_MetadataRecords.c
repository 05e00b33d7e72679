/* Unit tests for the generated metadata record codecs
 * (proto/gen/MetadataRecords.c, from src/proto/schema/MetadataRecords.schema):
 * round trips of every record at every version, golden bytes assembled by
 * hand from Kafka's TopicRecord.json, PartitionRecord.json,
 * ConfigRecord.json, PartitionChangeRecord.json, FeatureLevelRecord.json,
 * BrokerRegistrationChangeRecord.json, FenceBrokerRecord.json,
 * UnfenceBrokerRecord.json and UnregisterBrokerRecord.json
 * (all flexible from v0: compact strings and arrays, a tagged-field
 * section), and Kafka's metadata log framing (frame version, type, version
 * as unsigned varints, then the body). */
#include "unit.h"

#include <stdlib.h>

#include "proto/gen/MetadataRecords.h"
#include "rt.h"

RT_DEFINE(RegisterBrokerRecord)
RT_DEFINE(TopicRecord)
RT_DEFINE(PartitionRecord)
RT_DEFINE(ConfigRecord)
RT_DEFINE(PartitionChangeRecord)
RT_DEFINE(RemoveTopicRecord)
RT_DEFINE(FeatureLevelRecord)
RT_DEFINE(ProducerIdsRecord)
RT_DEFINE(NoOpRecord)
RT_DEFINE(UnregisterBrokerRecord)
RT_DEFINE(FenceBrokerRecord)
RT_DEFINE(UnfenceBrokerRecord)
RT_DEFINE(BrokerRegistrationChangeRecord)

static const samsa_uuid_t  uuid_seq = { {
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
    0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
} };

#define UUID_SEQ_BYTES                                              \
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,                 \
    0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f

static int32_t  one[] = { 1 };
static int32_t  three[] = { 3, 1, 2 };

/* ---- golden bytes */

static void
test_MetadataRecords_TopicRecord_bytes(void **state)
{
    static const uint8_t  want[] = {
        0x04, 'f', 'o', 'o',                    /* Name: compact, len+1 */
        UUID_SEQ_BYTES,                         /* TopicId */
        0x00,                                   /* no tagged fields */
    };
    samsa_TopicRecord_t   m;

    (void) state;
    samsa_TopicRecord_init(&m);
    m.Name = S("foo");
    m.TopicId = uuid_seq;
    RT_ENCODES_TO(TopicRecord, 0, &m, want, sizeof(want));
}

static void
test_MetadataRecords_PartitionRecord_bytes(void **state)
{
    static const uint8_t  v0[] = {
        0x00, 0x00, 0x00, 0x02,                 /* PartitionId 2 */
        UUID_SEQ_BYTES,                         /* TopicId */
        0x02, 0x00, 0x00, 0x00, 0x01,           /* Replicas [1] */
        0x02, 0x00, 0x00, 0x00, 0x01,           /* Isr [1] */
        0x01,                                   /* RemovingReplicas [] */
        0x01,                                   /* AddingReplicas [] */
        0x00, 0x00, 0x00, 0x01,                 /* Leader 1 */
        0x00, 0x00, 0x00, 0x05,                 /* LeaderEpoch 5 */
        0x00, 0x00, 0x00, 0x07,                 /* PartitionEpoch 7 */
        0x00,                                   /* LeaderRecoveryState 0:
                                                   default, not written */
    };
    static const uint8_t  v2[] = {
        0x00, 0x00, 0x00, 0x02,
        UUID_SEQ_BYTES,
        0x02, 0x00, 0x00, 0x00, 0x01,
        0x02, 0x00, 0x00, 0x00, 0x01,
        0x01,
        0x01,
        0x00, 0x00, 0x00, 0x01,
        0x00, 0x00, 0x00, 0x05,
        0x00, 0x00, 0x00, 0x07,
        0x02, UUID_SEQ_BYTES,                   /* Directories (v1+) */
        0x02,                                   /* two tagged fields: */
        0x00, 0x01, 0x01,                       /* tag 0, size 1: state 1 */
        0x01, 0x05, 0x02, 0x00, 0x00, 0x00, 0x01,   /* tag 1: ELR [1] */
    };
    samsa_PartitionRecord_t  m;
    samsa_uuid_t             dirs[1] = { uuid_seq };

    (void) state;
    samsa_PartitionRecord_init(&m);
    assert_int_equal(m.PartitionId, -1);
    assert_int_equal(m.Leader, -1);
    assert_int_equal(m.LeaderEpoch, -1);
    assert_int_equal(m.PartitionEpoch, -1);
    assert_int_equal(m.EligibleLeaderReplicas_cnt, -1);
    m.PartitionId = 2;
    m.TopicId = uuid_seq;
    m.Replicas = one;
    m.Replicas_cnt = 1;
    m.Isr = one;
    m.Isr_cnt = 1;
    m.Leader = 1;
    m.LeaderEpoch = 5;
    m.PartitionEpoch = 7;
    RT_ENCODES_TO(PartitionRecord, 0, &m, v0, sizeof(v0));
    m.Directories = dirs;
    m.Directories_cnt = 1;
    m.LeaderRecoveryState = 1;
    m.EligibleLeaderReplicas = one;
    m.EligibleLeaderReplicas_cnt = 1;
    RT_ENCODES_TO(PartitionRecord, 2, &m, v2, sizeof(v2));
}

static void
test_MetadataRecords_ConfigRecord_bytes(void **state)
{
    static const uint8_t  set[] = {
        0x02,                                   /* ResourceType TOPIC */
        0x04, 'f', 'o', 'o',                    /* ResourceName */
        0x0d, 'r', 'e', 't', 'e', 'n', 't', 'i', 'o', 'n', '.', 'm', 's',
        0x05, '1', '0', '0', '0',               /* Value */
        0x00,
    };
    static const uint8_t  del[] = {
        0x02, 0x04, 'f', 'o', 'o',
        0x0d, 'r', 'e', 't', 'e', 'n', 't', 'i', 'o', 'n', '.', 'm', 's',
        0x00,                                   /* Value null: delete */
        0x00,
    };
    samsa_ConfigRecord_t  m, out;
    samsa_arena_t         arena;

    (void) state;
    samsa_ConfigRecord_init(&m);
    m.ResourceType = 2;
    m.ResourceName = S("foo");
    m.Name = S("retention.ms");
    m.Value = S("1000");
    RT_ENCODES_TO(ConfigRecord, 0, &m, set, sizeof(set));
    m.Value = SAMSA_SLICE_NULL;
    RT_ENCODES_TO(ConfigRecord, 0, &m, del, sizeof(del));
    samsa_arena_init(&arena);
    assert_int_equal(RT_DECODE(ConfigRecord, 0, del, sizeof(del), &arena,
                               &out), SAMSA_ERR_NONE);
    assert_null(out.Value.ptr);
    assert_true(samsa_slice_eq_cstr(out.Name, "retention.ms"));
    samsa_arena_fini(&arena);
}

static void
test_MetadataRecords_PartitionChangeRecord_bytes(void **state)
{
    static const uint8_t  want[] = {
        0x00, 0x00, 0x00, 0x00,                 /* PartitionId 0 */
        UUID_SEQ_BYTES,
        0x02,                                   /* two tagged fields */
        0x00, 0x05, 0x02, 0x00, 0x00, 0x00, 0x01,   /* tag 0: Isr [1] */
        0x01, 0x04, 0x00, 0x00, 0x00, 0x01,     /* tag 1: Leader 1 */
    };
    static const uint8_t  none[] = {
        0x00, 0x00, 0x00, 0x00, UUID_SEQ_BYTES, 0x00,
    };
    samsa_PartitionChangeRecord_t  m, out;
    samsa_arena_t                  arena;

    (void) state;
    samsa_PartitionChangeRecord_init(&m);
    assert_int_equal(m.Leader, -2);             /* "no change" defaults */
    assert_int_equal(m.Isr_cnt, -1);
    assert_int_equal(m.LeaderRecoveryState, -1);
    m.PartitionId = 0;
    m.TopicId = uuid_seq;
    RT_ENCODES_TO(PartitionChangeRecord, 0, &m, none, sizeof(none));
    m.Isr = one;
    m.Isr_cnt = 1;
    m.Leader = 1;
    RT_ENCODES_TO(PartitionChangeRecord, 0, &m, want, sizeof(want));
    samsa_arena_init(&arena);
    assert_int_equal(RT_DECODE(PartitionChangeRecord, 0, none, sizeof(none),
                               &arena, &out), SAMSA_ERR_NONE);
    assert_int_equal(out.Leader, -2);
    assert_int_equal(out.Replicas_cnt, -1);
    samsa_arena_fini(&arena);
}

static void
test_MetadataRecords_FeatureLevelRecord_bytes(void **state)
{
    static const uint8_t  want[] = {
        0x11, 'm', 'e', 't', 'a', 'd', 'a', 't', 'a', '.',
        'v', 'e', 'r', 's', 'i', 'o', 'n',      /* Name */
        0x00, 0x07,                             /* FeatureLevel 7 */
        0x00,
    };
    samsa_FeatureLevelRecord_t  m;

    (void) state;
    samsa_FeatureLevelRecord_init(&m);
    m.Name = S("metadata.version");
    m.FeatureLevel = 7;
    RT_ENCODES_TO(FeatureLevelRecord, 0, &m, want, sizeof(want));
}

/* Kafka's BrokerRegistrationChangeRecord.json: Fenced (tag 0) and
 * InControlledShutdown (tag 1, v1+) are tagged, left out at 0 ("no
 * change"). */
static void
test_MetadataRecords_BrokerRegistrationChangeRecord_bytes(void **state)
{
    static const uint8_t  unfence[] = {
        0x00, 0x00, 0x00, 0x02,                 /* BrokerId 2 */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x09, /* BrokerEpoch 9 */
        0x02,                                   /* two tagged fields */
        0x00, 0x01, 0xff,                       /* tag 0: Fenced -1 */
        0x01, 0x01, 0x01,                       /* tag 1: shutdown 1 */
    };
    static const uint8_t  none[] = {
        0x00, 0x00, 0x00, 0x02,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x09, 0x00,
    };
    samsa_BrokerRegistrationChangeRecord_t  m, out;
    samsa_arena_t                           arena;

    (void) state;
    samsa_BrokerRegistrationChangeRecord_init(&m);
    assert_int_equal(m.Fenced, 0);
    m.BrokerId = 2;
    m.BrokerEpoch = 9;
    RT_ENCODES_TO(BrokerRegistrationChangeRecord, 1, &m, none, sizeof(none));
    m.Fenced = -1;
    m.InControlledShutdown = 1;
    RT_ENCODES_TO(BrokerRegistrationChangeRecord, 1, &m, unfence,
                  sizeof(unfence));
    samsa_arena_init(&arena);
    assert_int_equal(RT_DECODE(BrokerRegistrationChangeRecord, 1, unfence,
                               sizeof(unfence), &arena, &out),
                     SAMSA_ERR_NONE);
    assert_int_equal(out.Fenced, -1);
    assert_int_equal(out.InControlledShutdown, 1);
    assert_int_equal(out.BrokerEpoch, 9);
    samsa_arena_fini(&arena);
}

/* FenceBrokerRecord.json (Id, Epoch) and UnregisterBrokerRecord.json
 * (BrokerId, BrokerEpoch): two fixed fields and no tags. */
static void
test_MetadataRecords_FenceBrokerRecord_bytes(void **state)
{
    static const uint8_t  want[] = {
        0x00, 0x00, 0x00, 0x03,                 /* 3 */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, /* 256 */
        0x00,
    };
    samsa_FenceBrokerRecord_t       f;
    samsa_UnfenceBrokerRecord_t     u;
    samsa_UnregisterBrokerRecord_t  r;

    (void) state;
    samsa_FenceBrokerRecord_init(&f);
    f.Id = 3;
    f.Epoch = 256;
    RT_ENCODES_TO(FenceBrokerRecord, 0, &f, want, sizeof(want));
    samsa_UnfenceBrokerRecord_init(&u);
    u.Id = 3;
    u.Epoch = 256;
    RT_ENCODES_TO(UnfenceBrokerRecord, 0, &u, want, sizeof(want));
    samsa_UnregisterBrokerRecord_init(&r);
    r.BrokerId = 3;
    r.BrokerEpoch = 256;
    RT_ENCODES_TO(UnregisterBrokerRecord, 0, &r, want, sizeof(want));
}

/* ---- round trips */

static void
test_MetadataRecords_round_trips(void **state)
{
    samsa_RegisterBrokerEndpoint_t  eps[1] = {
        { .Name = { "PLAINTEXT", 9 }, .Host = { "h", 1 }, .Port = 9092 },
    };
    samsa_RegisterBrokerFeature_t   fts[1] = {
        { .Name = { "metadata.version", 16 }, .MinSupportedVersion = 7,
          .MaxSupportedVersion = 25 },
    };
    samsa_uuid_t                    dirs[3] = { uuid_seq, uuid_seq };
    samsa_RegisterBrokerRecord_t    rb, rb2;
    samsa_PartitionRecord_t         pr, pr2;
    samsa_PartitionChangeRecord_t   pc, pc2;
    samsa_TopicRecord_t             tr, tr2;
    samsa_ConfigRecord_t            cr, cr2;
    samsa_RemoveTopicRecord_t       rt, rt2;
    samsa_FeatureLevelRecord_t      fl, fl2;
    samsa_ProducerIdsRecord_t       pi, pi2;
    samsa_NoOpRecord_t              no, no2;
    samsa_UnregisterBrokerRecord_t  ur, ur2;
    samsa_FenceBrokerRecord_t       fb, fb2;
    samsa_UnfenceBrokerRecord_t     ub, ub2;
    samsa_BrokerRegistrationChangeRecord_t  bc, bc2;
    samsa_arena_t                   arena;
    samsa_buf_t                     buf;
    int16_t                         v;

    (void) state;
    samsa_arena_init(&arena);
    for (v = 0; v <= SAMSA_RegisterBrokerRecord_VERSION_MAX; v++) {
        samsa_RegisterBrokerRecord_init(&rb);
        assert_true(rb.Fenced);
        rb.BrokerId = 1;
        rb.IncarnationId = uuid_seq;
        rb.BrokerEpoch = 42;
        rb.EndPoints = eps;
        rb.EndPoints_cnt = 1;
        rb.Features = fts;
        rb.Features_cnt = 1;
        rb.Rack = SAMSA_SLICE_NULL;
        rb.Fenced = false;
        rb.InControlledShutdown = true;
        rb.LogDirs = dirs;
        rb.LogDirs_cnt = 2;
        rt_RegisterBrokerRecord(v, &rb, &rb2, &arena, &buf);
        assert_int_equal(rb2.BrokerEpoch, 42);
        assert_int_equal(rb2.EndPoints[0].Port, 9092);
        assert_null(rb2.Rack.ptr);
        assert_false(rb2.Fenced);
        assert_int_equal(rb2.InControlledShutdown, v >= 1);
        assert_int_equal(rb2.LogDirs_cnt, v >= 3 ? 2 : 0);
        samsa_buf_fini(&buf);
    }
    for (v = 0; v <= SAMSA_PartitionRecord_VERSION_MAX; v++) {
        samsa_PartitionRecord_init(&pr);
        pr.PartitionId = 7;
        pr.TopicId = uuid_seq;
        pr.Replicas = three;
        pr.Replicas_cnt = 3;
        pr.Isr = three;
        pr.Isr_cnt = 2;
        pr.Leader = 3;
        pr.LeaderEpoch = 1;
        pr.PartitionEpoch = 2;
        pr.Directories = dirs;
        pr.Directories_cnt = 3;
        pr.LastKnownElr = one;
        pr.LastKnownElr_cnt = 1;
        rt_PartitionRecord(v, &pr, &pr2, &arena, &buf);
        assert_int_equal(pr2.Isr_cnt, 2);
        assert_int_equal(pr2.Replicas[2], 2);
        assert_int_equal(pr2.Directories_cnt, v >= 1 ? 3 : 0);
        assert_int_equal(pr2.LastKnownElr_cnt, v >= 2 ? 1 : -1);
        samsa_buf_fini(&buf);
    }
    for (v = 0; v <= SAMSA_PartitionChangeRecord_VERSION_MAX; v++) {
        samsa_PartitionChangeRecord_init(&pc);
        pc.PartitionId = 1;
        pc.Replicas = three;
        pc.Replicas_cnt = 3;
        pc.AddingReplicas = one;
        pc.AddingReplicas_cnt = 1;
        pc.LeaderRecoveryState = 0;
        pc.Directories = dirs;
        pc.Directories_cnt = 3;
        rt_PartitionChangeRecord(v, &pc, &pc2, &arena, &buf);
        assert_int_equal(pc2.Replicas_cnt, 3);
        assert_int_equal(pc2.RemovingReplicas_cnt, -1);
        assert_int_equal(pc2.LeaderRecoveryState, 0);
        assert_int_equal(pc2.Directories_cnt, v >= 1 ? 3 : -1);
        samsa_buf_fini(&buf);
    }
    samsa_TopicRecord_init(&tr);
    tr.Name = S("t");
    rt_TopicRecord(0, &tr, &tr2, &arena, &buf);
    samsa_buf_fini(&buf);
    samsa_ConfigRecord_init(&cr);
    cr.ResourceType = 4;
    cr.ResourceName = S("");
    cr.Name = S("log.retention.ms");
    cr.Value = S("1");
    rt_ConfigRecord(0, &cr, &cr2, &arena, &buf);
    assert_int_equal(cr2.ResourceType, 4);
    samsa_buf_fini(&buf);
    samsa_RemoveTopicRecord_init(&rt);
    rt.TopicId = uuid_seq;
    rt_RemoveTopicRecord(0, &rt, &rt2, &arena, &buf);
    assert_true(samsa_uuid_eq(rt2.TopicId, uuid_seq));
    samsa_buf_fini(&buf);
    samsa_FeatureLevelRecord_init(&fl);
    fl.Name = S("metadata.version");
    fl.FeatureLevel = 7;
    rt_FeatureLevelRecord(0, &fl, &fl2, &arena, &buf);
    samsa_buf_fini(&buf);
    samsa_ProducerIdsRecord_init(&pi);
    assert_int_equal(pi.BrokerEpoch, -1);
    pi.BrokerId = 1;
    pi.NextProducerId = 1000;
    rt_ProducerIdsRecord(0, &pi, &pi2, &arena, &buf);
    assert_int_equal(pi2.NextProducerId, 1000);
    samsa_buf_fini(&buf);
    samsa_NoOpRecord_init(&no);
    rt_NoOpRecord(0, &no, &no2, &arena, &buf);
    assert_int_equal(buf.len, 1);
    samsa_buf_fini(&buf);
    samsa_UnregisterBrokerRecord_init(&ur);
    ur.BrokerId = 4;
    ur.BrokerEpoch = 40;
    rt_UnregisterBrokerRecord(0, &ur, &ur2, &arena, &buf);
    assert_int_equal(ur2.BrokerEpoch, 40);
    samsa_buf_fini(&buf);
    samsa_FenceBrokerRecord_init(&fb);
    fb.Id = 4;
    fb.Epoch = 41;
    rt_FenceBrokerRecord(0, &fb, &fb2, &arena, &buf);
    assert_int_equal(fb2.Epoch, 41);
    samsa_buf_fini(&buf);
    samsa_UnfenceBrokerRecord_init(&ub);
    ub.Id = 4;
    ub.Epoch = 42;
    rt_UnfenceBrokerRecord(0, &ub, &ub2, &arena, &buf);
    assert_int_equal(ub2.Id, 4);
    samsa_buf_fini(&buf);
    for (v = 0; v <= SAMSA_BrokerRegistrationChangeRecord_VERSION_MAX; v++) {
        samsa_BrokerRegistrationChangeRecord_init(&bc);
        bc.BrokerId = 4;
        bc.BrokerEpoch = 43;
        bc.Fenced = 1;
        bc.InControlledShutdown = 1;
        bc.LogDirs = dirs;
        bc.LogDirs_cnt = 2;
        rt_BrokerRegistrationChangeRecord(v, &bc, &bc2, &arena, &buf);
        assert_int_equal(bc2.Fenced, 1);
        assert_int_equal(bc2.InControlledShutdown, v >= 1);
        assert_int_equal(bc2.LogDirs_cnt, v >= 2 ? 2 : 0);
        samsa_buf_fini(&buf);
    }
    samsa_arena_fini(&arena);
}

/* ---- the group: table, any-decoder, framing */

static void
test_MetadataRecords_table(void **state)
{
    const samsa_MetadataRecords_info_t  *info;

    (void) state;
    info = samsa_MetadataRecords_find(3);
    assert_non_null(info);
    assert_string_equal(info->name, "PartitionRecord");
    assert_int_equal(info->max_version, 2);
    assert_int_equal(info->flexible_min, 0);
    assert_null(samsa_MetadataRecords_find(6));
    assert_null(samsa_MetadataRecords_find(-1));
    /* 14, the SCRAM credential records and the ACL records (issue 21) */
    assert_int_equal(samsa_MetadataRecords_infos_cnt, 18);
    assert_string_equal(samsa_MetadataRecords_find(11)->name,
                        "UserScramCredentialRecord");
    assert_string_equal(samsa_MetadataRecords_find(22)->name,
                        "RemoveUserScramCredentialRecord");
    assert_string_equal(samsa_MetadataRecords_find(18)->name,
                        "AccessControlEntryRecord");
    assert_string_equal(samsa_MetadataRecords_find(19)->name,
                        "RemoveAccessControlEntryRecord");
    assert_string_equal(samsa_MetadataRecords_find(14)->name,
                        "ClientQuotaRecord");
    assert_int_equal(samsa_MetadataRecords_infos[0].type, 0);
    assert_string_equal(samsa_MetadataRecords_find(20)->name, "NoOpRecord");
}

static void
test_MetadataRecords_framed_bytes(void **state)
{
    static const uint8_t           want[] = {
        0x01, 0x02, 0x00,                       /* frame 1, type 2, v0 */
        0x04, 'f', 'o', 'o', UUID_SEQ_BYTES, 0x00,
    };
    samsa_MetadataRecords_any_t    any, out;
    samsa_buf_t                    buf = SAMSA_BUF_INIT;
    samsa_arena_t                  arena;
    samsa_wr_t                     wr;
    samsa_rd_t                     rd;

    (void) state;
    memset(&any, 0, sizeof(any));
    any.type = SAMSA_MetadataRecords_TopicRecord;
    any.version = 0;
    samsa_TopicRecord_init(&any.u.TopicRecord);
    any.u.TopicRecord.Name = S("foo");
    any.u.TopicRecord.TopicId = uuid_seq;
    samsa_wr_init(&wr, &buf);
    samsa_MetadataRecords_encode_framed(&wr, &any);
    assert_int_equal(buf.len, sizeof(want));
    assert_memory_equal(buf.data, want, sizeof(want));

    samsa_arena_init(&arena);
    samsa_rd_init(&rd, buf.data, buf.len);
    assert_int_equal(samsa_MetadataRecords_decode_framed(&rd, &arena, &out),
                     SAMSA_ERR_NONE);
    assert_int_equal(samsa_rd_remain(&rd), 0);
    assert_int_equal(out.type, 2);
    assert_int_equal(out.version, 0);
    assert_true(samsa_slice_eq_cstr(out.u.TopicRecord.Name, "foo"));
    assert_true(samsa_uuid_eq(out.u.TopicRecord.TopicId, uuid_seq));
    samsa_arena_fini(&arena);
    samsa_buf_fini(&buf);
}

/* AccessControlEntryRecord's bytes, written out by hand from Kafka's
 * AccessControlEntryRecord.json (flexible v0). */
static void
test_MetadataRecords_acl_bytes(void **state)
{
    static const uint8_t           want[] = {
        0x01, 0x12, 0x00,                       /* frame 1, type 18, v0 */
        UUID_SEQ_BYTES,                         /* Id */
        0x02,                                   /* TOPIC */
        0x02, 't',                              /* ResourceName */
        0x04,                                   /* PREFIXED */
        0x07, 'U', 's', 'e', 'r', ':', 'a',     /* Principal */
        0x02, '*',                              /* Host */
        0x03, 0x03,                             /* READ, ALLOW */
        0x00,
    };
    samsa_MetadataRecords_any_t    any, out;
    samsa_buf_t                    buf = SAMSA_BUF_INIT;
    samsa_arena_t                  arena;
    samsa_wr_t                     wr;
    samsa_rd_t                     rd;

    (void) state;
    memset(&any, 0, sizeof(any));
    any.type = SAMSA_MetadataRecords_AccessControlEntryRecord;
    samsa_AccessControlEntryRecord_init(&any.u.AccessControlEntryRecord);
    any.u.AccessControlEntryRecord.Id = uuid_seq;
    any.u.AccessControlEntryRecord.ResourceType = 2;
    any.u.AccessControlEntryRecord.ResourceName = S("t");
    any.u.AccessControlEntryRecord.PatternType = 4;
    any.u.AccessControlEntryRecord.Principal = S("User:a");
    any.u.AccessControlEntryRecord.Host = S("*");
    any.u.AccessControlEntryRecord.Operation = 3;
    any.u.AccessControlEntryRecord.PermissionType = 3;
    samsa_wr_init(&wr, &buf);
    samsa_MetadataRecords_encode_framed(&wr, &any);
    assert_int_equal(buf.len, sizeof(want));
    assert_memory_equal(buf.data, want, sizeof(want));
    samsa_arena_init(&arena);
    samsa_rd_init(&rd, buf.data, buf.len);
    assert_int_equal(samsa_MetadataRecords_decode_framed(&rd, &arena, &out),
                     SAMSA_ERR_NONE);
    assert_int_equal(out.type, 18);
    assert_true(samsa_slice_eq_cstr(out.u.AccessControlEntryRecord.Principal,
                                    "User:a"));
    samsa_arena_fini(&arena);
    samsa_buf_fini(&buf);
}

/* ClientQuotaRecord's bytes, written out by hand from Kafka's
 * ClientQuotaRecord.json (flexible v0: compact strings and arrays). */
static void
test_MetadataRecords_client_quota_bytes(void **state)
{
    static const uint8_t              want[] = {
        0x01, 0x0e, 0x00,                       /* frame 1, type 14, v0 */
        0x03,                                   /* Entity: 2 */
        0x05, 'u', 's', 'e', 'r', 0x00, 0x00,   /* user, null name */
        0x0a, 'c', 'l', 'i', 'e', 'n', 't', '-', 'i', 'd', 0x02, 'A', 0x00,
        0x13, 'p', 'r', 'o', 'd', 'u', 'c', 'e', 'r', '_', 'b', 'y', 't',
        'e', '_', 'r', 'a', 't', 'e',
        0x41, 0x30, 0, 0, 0, 0, 0, 0,           /* 1048576.0 */
        0x00,                                   /* Remove false */
        0x00,
    };
    samsa_MetadataRecords_any_t       any;
    samsa_ClientQuotaRecordEntity_t   ent[2];
    samsa_buf_t                       buf = SAMSA_BUF_INIT;
    samsa_wr_t                        wr;

    (void) state;
    memset(&any, 0, sizeof(any));
    any.type = SAMSA_MetadataRecords_ClientQuotaRecord;
    samsa_ClientQuotaRecord_init(&any.u.ClientQuotaRecord);
    samsa_ClientQuotaRecordEntity_init(&ent[0]);
    ent[0].EntityType = S("user");
    ent[0].EntityName = SAMSA_SLICE_NULL;
    samsa_ClientQuotaRecordEntity_init(&ent[1]);
    ent[1].EntityType = S("client-id");
    ent[1].EntityName = S("A");
    any.u.ClientQuotaRecord.Entity = ent;
    any.u.ClientQuotaRecord.Entity_cnt = 2;
    any.u.ClientQuotaRecord.Key = S("producer_byte_rate");
    any.u.ClientQuotaRecord.Value = 1048576.0;
    samsa_wr_init(&wr, &buf);
    samsa_MetadataRecords_encode_framed(&wr, &any);
    assert_int_equal(buf.len, sizeof(want));
    assert_memory_equal(buf.data, want, sizeof(want));
    samsa_buf_fini(&buf);
}

static void
test_MetadataRecords_framed_errors(void **state)
{
    static const uint8_t          frame2[] = { 0x02, 0x14, 0x00, 0x00 };
    static const uint8_t          type6[] = { 0x01, 0x06, 0x00, 0x00 };
    static const uint8_t          v9[] = { 0x01, 0x14, 0x09, 0x00 };
    static const uint8_t          bigtype[] = { 0x01, 0x80, 0x80, 0x02, 0x00 };
    static const uint8_t          noop[] = { 0x01, 0x14, 0x00, 0x00 };
    samsa_MetadataRecords_any_t   any;
    samsa_arena_t                 arena;
    samsa_rd_t                    rd;

    (void) state;
    samsa_arena_init(&arena);
    samsa_rd_init(&rd, frame2, sizeof(frame2));
    assert_int_equal(samsa_MetadataRecords_decode_framed(&rd, &arena, &any),
                     SAMSA_ERR__BAD_MSG);
    samsa_rd_init(&rd, type6, sizeof(type6));
    assert_int_equal(samsa_MetadataRecords_decode_framed(&rd, &arena, &any),
                     SAMSA_ERR__BAD_MSG);
    samsa_rd_init(&rd, v9, sizeof(v9));
    assert_int_equal(samsa_MetadataRecords_decode_framed(&rd, &arena, &any),
                     SAMSA_ERR_UNSUPPORTED_VERSION);
    samsa_rd_init(&rd, bigtype, sizeof(bigtype));
    assert_int_equal(samsa_MetadataRecords_decode_framed(&rd, &arena, &any),
                     SAMSA_ERR__BAD_MSG);
    samsa_rd_init(&rd, noop, 2);
    assert_int_equal(samsa_MetadataRecords_decode_framed(&rd, &arena, &any),
                     SAMSA_ERR__UNDERFLOW);
    samsa_rd_init(&rd, noop, sizeof(noop));
    assert_int_equal(samsa_MetadataRecords_decode_framed(&rd, &arena, &any),
                     SAMSA_ERR_NONE);
    assert_int_equal(any.type, SAMSA_MetadataRecords_NoOpRecord);
    samsa_arena_fini(&arena);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_MetadataRecords_TopicRecord_bytes),
        cmocka_unit_test(test_MetadataRecords_PartitionRecord_bytes),
        cmocka_unit_test(test_MetadataRecords_ConfigRecord_bytes),
        cmocka_unit_test(test_MetadataRecords_PartitionChangeRecord_bytes),
        cmocka_unit_test(test_MetadataRecords_FeatureLevelRecord_bytes),
        cmocka_unit_test(
            test_MetadataRecords_BrokerRegistrationChangeRecord_bytes),
        cmocka_unit_test(test_MetadataRecords_FenceBrokerRecord_bytes),
        cmocka_unit_test(test_MetadataRecords_round_trips),
        cmocka_unit_test(test_MetadataRecords_table),
        cmocka_unit_test(test_MetadataRecords_framed_bytes),
        cmocka_unit_test(test_MetadataRecords_client_quota_bytes),
        cmocka_unit_test(test_MetadataRecords_acl_bytes),
        cmocka_unit_test(test_MetadataRecords_framed_errors),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
