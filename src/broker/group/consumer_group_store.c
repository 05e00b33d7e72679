/*
 * broker/group/consumer_group_store.c - a consumer group's (KIP-848) records in
 * __consumer_offsets, in Kafka 4.0's formats (proto/gen/
 * ConsumerGroupRecords.h): the group's epoch (key type 3), its subscribed
 * topics (4), each member's metadata (5), the target assignment's epoch
 * (6), each member's target (7) and current assignment (8).  Written
 * through grpstore's append, only the records whose value changed since
 * the last write (the value last written of each is kept); a member gone
 * gets tombstones (8, 7, 5).  At load, records rebuild the group: a
 * tombstone of the group's metadata forgets it, of a member's metadata
 * forgets the member.
 * Threads: everything with the group's lock held (the load: on main,
 * before any handler starts).
 */
#include "broker/group/consumer_group_int.h"

#include <string.h>

#include "proto/gen/ConsumerGroupRecords.h"
#include "proto/wr.h"
#include "util/alloc.h"
#include "util/diag.h"

/* The key versions, which are Kafka's record types. */
#define CG_KEY_GROUP          3
#define CG_KEY_TOPICS         4
#define CG_KEY_MEMBER         5
#define CG_KEY_TARGET_META    6
#define CG_KEY_TARGET_MEMBER  7
#define CG_KEY_CURRENT        8
#define CG_VALUE_VERSION      0

/* Kafka's MemberState ids. */
#define CG_KSTATE_STABLE      0
#define CG_KSTATE_UNREVOKED   1
#define CG_KSTATE_UNRELEASED  2

/* A growing list of records to append. */
typedef struct cg_recs {
    samsa_grpstore_rec_t  *v;
    size_t                 n;
} cg_recs_t;

static samsa_grpstore_rec_t *
cg_recs_push(cg_recs_t *r)
{
    r->v = samsa_realloc(r->v, (r->n + 1) * sizeof(*r->v));
    memset(&r->v[r->n], 0, sizeof(*r->v));
    return &r->v[r->n++];
}

/* ---- keys ------------------------------------------------------------------ */

/* Every key is its type (as the version), the group id and, for a
 * member's records, the member id: the six key schemas of proto/gen/
 * ConsumerGroupRecords.h share this one layout (non-flexible strings),
 * so one writer and one reader serve them all. */
static bool
cg_key_has_member(int16_t type)
{
    return type == CG_KEY_MEMBER || type == CG_KEY_TARGET_MEMBER
           || type == CG_KEY_CURRENT;
}

static void
cg_key(samsa_buf_t *buf, int16_t type, const char *group, const char *member)
{
    samsa_wr_t  wr;

    samsa_wr_init(&wr, buf);
    samsa_wr_i16(&wr, type);
    samsa_wr_str(&wr, samsa_slice_cstr(group));
    if (cg_key_has_member(type)) {
        samsa_wr_str(&wr, samsa_slice_cstr(member));
    }
}

/* The group id and (for a member's record) member id of a key of that
 * type, as cg_key writes it; krd->err if it does not decode. */
static samsa_err_t
cg_key_decode(samsa_rd_t *krd, int16_t type, samsa_slice_t *group_id,
              samsa_slice_t *member_id)
{
    *group_id = samsa_rd_str(krd);
    if (cg_key_has_member(type)) {
        *member_id = samsa_rd_str(krd);
    }
    return krd->err;
}

/* ---- values ------------------------------------------------------------------ */

/* A partition set by topic (CGRecTargetPartitions and
 * CGRecMemberPartitions have the same shape); arrays in arena. */
#define CG_SET_TO_TOPICS(T, s, arena, out, out_cnt)                          \
    do {                                                                     \
        size_t  i_, j_, nt_ = 0;                                             \
                                                                             \
        (out) = samsa_arena_calloc((arena), (s)->n + 1, sizeof(T));          \
        for (i_ = 0; i_ < (s)->n; i_ = j_) {                                 \
            T  *t_ = &(out)[nt_++];                                          \
                                                                             \
            for (j_ = i_; j_ < (s)->n                                        \
                          && samsa_uuid_eq((s)->v[j_].tid, (s)->v[i_].tid);  \
                 j_++) {                                                     \
            }                                                                \
            t_->TopicId = (s)->v[i_].tid;                                    \
            t_->Partitions = samsa_arena_calloc((arena), j_ - i_ + 1,        \
                                                sizeof(int32_t));            \
            t_->Partitions_cnt = (int32_t) (j_ - i_);                        \
            for (size_t k_ = i_; k_ < j_; k_++) {                            \
                t_->Partitions[k_ - i_] = (s)->v[k_].p;                      \
            }                                                                \
        }                                                                    \
        (out_cnt) = (int32_t) nt_;                                           \
    } while (0)

static samsa_slice_t
cg_str(const char *s)
{
    return s != NULL ? samsa_slice_cstr(s) : SAMSA_SLICE_NULL;
}

static void
cg_value_start(samsa_wr_t *wr, samsa_buf_t *buf)
{
    samsa_wr_init(wr, buf);
    samsa_wr_i16(wr, CG_VALUE_VERSION);
}

static void
cg_value_group(const samsa_consumer_group_t *cg, samsa_buf_t *buf)
{
    samsa_ConsumerGroupMetadataValue_t  v;
    samsa_wr_t                          wr;

    samsa_ConsumerGroupMetadataValue_init(&v);
    v.Epoch = cg->group_epoch;
    cg_value_start(&wr, buf);
    samsa_ConsumerGroupMetadataValue_encode(&wr, CG_VALUE_VERSION, &v);
}

static void
cg_value_topics(const samsa_consumer_group_t *cg, samsa_arena_t *arena,
                samsa_buf_t *buf)
{
    samsa_ConsumerGroupPartitionMetadataValue_t  v;
    samsa_wr_t                                   wr;
    size_t                                       i;

    samsa_ConsumerGroupPartitionMetadataValue_init(&v);
    v.Epoch = cg->group_epoch;
    v.Topics = samsa_arena_calloc(arena, cg->ntopics + 1, sizeof(*v.Topics));
    v.Topics_cnt = (int32_t) cg->ntopics;
    for (i = 0; i < cg->ntopics; i++) {
        samsa_CGRecTopicMetadata_init(&v.Topics[i]);
        v.Topics[i].TopicId = cg->topics[i].id;
        v.Topics[i].TopicName = samsa_slice_cstr(cg->topics[i].name);
        v.Topics[i].NumPartitions = cg->topics[i].npartitions;
        v.Topics[i].PartitionRacks_cnt = 0;     /* no rack-aware assignor */
    }
    cg_value_start(&wr, buf);
    samsa_ConsumerGroupPartitionMetadataValue_encode(&wr, CG_VALUE_VERSION,
                                                     &v);
}

static void
cg_value_target_meta(const samsa_consumer_group_t *cg, samsa_buf_t *buf)
{
    samsa_ConsumerGroupTargetAssignmentMetadataValue_t  v;
    samsa_wr_t                                          wr;

    samsa_ConsumerGroupTargetAssignmentMetadataValue_init(&v);
    v.AssignmentEpoch = cg->assignment_epoch;
    cg_value_start(&wr, buf);
    samsa_ConsumerGroupTargetAssignmentMetadataValue_encode(
        &wr, CG_VALUE_VERSION, &v);
}

static void
cg_value_member(const cg_member_t *m, samsa_arena_t *arena, samsa_buf_t *buf)
{
    samsa_ConsumerGroupMemberMetadataValue_t  v;
    samsa_wr_t                                wr;
    size_t                                    i;

    samsa_ConsumerGroupMemberMetadataValue_init(&v);
    v.InstanceId = cg_str(m->instance_id);
    v.RackId = cg_str(m->rack_id);
    v.ClientId = samsa_slice_cstr(m->client_id != NULL ? m->client_id : "");
    v.ClientHost = samsa_slice_cstr(m->client_host != NULL ? m->client_host
                                                           : "");
    v.SubscribedTopicNames = samsa_arena_calloc(arena, m->ntopics + 1,
                                                sizeof(samsa_slice_t));
    v.SubscribedTopicNames_cnt = (int32_t) m->ntopics;
    for (i = 0; i < m->ntopics; i++) {
        v.SubscribedTopicNames[i] = samsa_slice_cstr(m->topics[i]);
    }
    v.SubscribedTopicRegex = cg_str(m->regex);
    v.RebalanceTimeoutMs = m->rebalance_timeout_ms;
    v.ServerAssignor = cg_str(m->assignor);
    cg_value_start(&wr, buf);
    samsa_ConsumerGroupMemberMetadataValue_encode(&wr, CG_VALUE_VERSION, &v);
}

static void
cg_value_member_target(const cg_member_t *m, samsa_arena_t *arena,
                       samsa_buf_t *buf)
{
    samsa_ConsumerGroupTargetAssignmentMemberValue_t  v;
    samsa_wr_t                                        wr;

    samsa_ConsumerGroupTargetAssignmentMemberValue_init(&v);
    CG_SET_TO_TOPICS(samsa_CGRecTargetPartitions_t, &m->target, arena,
                     v.TopicPartitions, v.TopicPartitions_cnt);
    cg_value_start(&wr, buf);
    samsa_ConsumerGroupTargetAssignmentMemberValue_encode(
        &wr, CG_VALUE_VERSION, &v);
}

static void
cg_value_member_current(const cg_member_t *m, samsa_arena_t *arena,
                        samsa_buf_t *buf)
{
    samsa_ConsumerGroupCurrentMemberAssignmentValue_t  v;
    samsa_wr_t                                         wr;

    samsa_ConsumerGroupCurrentMemberAssignmentValue_init(&v);
    v.MemberEpoch = m->epoch;
    v.PreviousMemberEpoch = m->prev_epoch;
    v.State = m->state == CG_UNREVOKED ? CG_KSTATE_UNREVOKED
              : m->state == CG_UNRELEASED ? CG_KSTATE_UNRELEASED
                                          : CG_KSTATE_STABLE;
    CG_SET_TO_TOPICS(samsa_CGRecMemberPartitions_t, &m->assigned, arena,
                     v.AssignedPartitions, v.AssignedPartitions_cnt);
    CG_SET_TO_TOPICS(samsa_CGRecMemberPartitions_t, &m->revoking, arena,
                     v.PartitionsPendingRevocation,
                     v.PartitionsPendingRevocation_cnt);
    cg_value_start(&wr, buf);
    samsa_ConsumerGroupCurrentMemberAssignmentValue_encode(
        &wr, CG_VALUE_VERSION, &v);
}

/* ---- writing ------------------------------------------------------------------ */

static bool
cg_buf_eq(const samsa_buf_t *a, const samsa_buf_t *b)
{
    return a->len == b->len
           && (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
}

/* A record for (type, member) if value differs from *last; *pending
 * points at where the new value goes once written. */
typedef struct cg_change {
    samsa_buf_t  *last;
    size_t        rec;          /* index in the records */
} cg_change_t;

static void
cg_maybe_add(samsa_grp_t *g, cg_recs_t *recs, cg_change_t **chg,
             size_t *nchg, samsa_buf_t *last, int16_t type,
             const char *member, samsa_buf_t *value)
{
    samsa_grpstore_rec_t  *r;

    if (cg_buf_eq(last, value)) {
        samsa_buf_fini(value);
        return;
    }
    r = cg_recs_push(recs);
    cg_key(&r->key, type, g->id, member);
    r->value = *value;
    *value = SAMSA_BUF_INIT;
    *chg = samsa_realloc(*chg, (*nchg + 1) * sizeof(**chg));
    (*chg)[*nchg].last = last;
    (*chg)[*nchg].rec = recs->n - 1;
    (*nchg)++;
}

static void
cg_tombstone(samsa_grp_t *g, cg_recs_t *recs, int16_t type,
             const char *member)
{
    samsa_grpstore_rec_t  *r = cg_recs_push(recs);

    cg_key(&r->key, type, g->id, member);
    r->tombstone = true;
}

static void
cg_gone_clear(samsa_consumer_group_t *cg)
{
    size_t  i;

    for (i = 0; i < cg->ngone; i++) {
        samsa_free(cg->gone[i]);
    }
    samsa_free(cg->gone);
    cg->gone = NULL;
    cg->ngone = 0;
}

samsa_err_t
samsa_consumer_group_store_write(samsa_grp_t *g)
{
    samsa_consumer_group_t   *cg = g->cg;
    cg_recs_t       recs = { NULL, 0 };
    cg_change_t    *chg = NULL;
    size_t          nchg = 0, i;
    samsa_arena_t   arena;
    samsa_buf_t     v;
    samsa_err_t     err;

    samsa_arena_init(&arena);
    /* Kafka's order: members gone, member metadata, the subscription's
     * topics, the group's epoch, targets, the target's epoch, current
     * assignments */
    for (i = 0; i < cg->ngone; i++) {
        cg_tombstone(g, &recs, CG_KEY_CURRENT, cg->gone[i]);
        cg_tombstone(g, &recs, CG_KEY_TARGET_MEMBER, cg->gone[i]);
        cg_tombstone(g, &recs, CG_KEY_MEMBER, cg->gone[i]);
    }
    for (i = 0; i < cg->nmembers; i++) {
        v = SAMSA_BUF_INIT;
        cg_value_member(cg->members[i], &arena, &v);
        cg_maybe_add(g, &recs, &chg, &nchg,
                     &cg->members[i]->rec[CG_REC_MEMBER], CG_KEY_MEMBER,
                     cg->members[i]->id, &v);
    }
    v = SAMSA_BUF_INIT;
    cg_value_topics(cg, &arena, &v);
    cg_maybe_add(g, &recs, &chg, &nchg, &cg->rec[CG_REC_TOPICS],
                 CG_KEY_TOPICS, NULL, &v);
    v = SAMSA_BUF_INIT;
    cg_value_group(cg, &v);
    cg_maybe_add(g, &recs, &chg, &nchg, &cg->rec[CG_REC_GROUP], CG_KEY_GROUP,
                 NULL, &v);
    for (i = 0; i < cg->nmembers; i++) {
        v = SAMSA_BUF_INIT;
        cg_value_member_target(cg->members[i], &arena, &v);
        cg_maybe_add(g, &recs, &chg, &nchg,
                     &cg->members[i]->rec[CG_REC_MEMBER_TARGET],
                     CG_KEY_TARGET_MEMBER, cg->members[i]->id, &v);
    }
    v = SAMSA_BUF_INIT;
    cg_value_target_meta(cg, &v);
    cg_maybe_add(g, &recs, &chg, &nchg, &cg->rec[CG_REC_TARGET_META],
                 CG_KEY_TARGET_META, NULL, &v);
    for (i = 0; i < cg->nmembers; i++) {
        v = SAMSA_BUF_INIT;
        cg_value_member_current(cg->members[i], &arena, &v);
        cg_maybe_add(g, &recs, &chg, &nchg,
                     &cg->members[i]->rec[CG_REC_MEMBER_CURRENT],
                     CG_KEY_CURRENT, cg->members[i]->id, &v);
    }
    samsa_arena_fini(&arena);
    err = samsa_grpstore_append(g, recs.v, recs.n);
    if (err == SAMSA_ERR_NONE) {
        /* written: these are the values to compare with next time */
        for (i = 0; i < nchg; i++) {
            samsa_buf_fini(chg[i].last);
            *chg[i].last = recs.v[chg[i].rec].value;
            recs.v[chg[i].rec].value = SAMSA_BUF_INIT;
        }
        cg_gone_clear(cg);
    }
    samsa_free(chg);
    samsa_grpstore_recs_free(recs.v, recs.n);
    return err;
}

size_t
samsa_consumer_group_store_tombstones(samsa_grp_t *g, samsa_grpstore_rec_t **v,
                            size_t n)
{
    samsa_consumer_group_t  *cg = g->cg;
    cg_recs_t      recs = { *v, n };
    size_t         i;

    /* Kafka's deletion order: current assignments, targets, the target's
     * epoch, member metadata, topics, the group (here, before the classic
     * GroupMetadataKey tombstone the caller adds) */
    for (i = 0; i < cg->ngone; i++) {
        cg_tombstone(g, &recs, CG_KEY_CURRENT, cg->gone[i]);
        cg_tombstone(g, &recs, CG_KEY_TARGET_MEMBER, cg->gone[i]);
    }
    for (i = 0; i < cg->nmembers; i++) {
        cg_tombstone(g, &recs, CG_KEY_CURRENT, cg->members[i]->id);
        cg_tombstone(g, &recs, CG_KEY_TARGET_MEMBER, cg->members[i]->id);
    }
    cg_tombstone(g, &recs, CG_KEY_TARGET_META, NULL);
    for (i = 0; i < cg->ngone; i++) {
        cg_tombstone(g, &recs, CG_KEY_MEMBER, cg->gone[i]);
    }
    for (i = 0; i < cg->nmembers; i++) {
        cg_tombstone(g, &recs, CG_KEY_MEMBER, cg->members[i]->id);
    }
    cg_tombstone(g, &recs, CG_KEY_TOPICS, NULL);
    cg_tombstone(g, &recs, CG_KEY_GROUP, NULL);
    *v = recs.v;
    return recs.n;
}

void
samsa_consumer_group_store_fini(samsa_consumer_group_t *cg)
{
    size_t  i;

    for (i = 0; i < CG_REC_GROUP_N; i++) {
        samsa_buf_fini(&cg->rec[i]);
    }
    cg_gone_clear(cg);
}

/* ---- loading ------------------------------------------------------------------ */

static void
cg_set_from_topics(cg_set_t *s, const samsa_uuid_t *tids,
                   int32_t *const *parts, const int32_t *nparts, int32_t n)
{
    int32_t  i, j;
    cg_tp_t  tp;

    samsa_consumer_group_set_clear(s);
    for (i = 0; i < n; i++) {
        for (j = 0; j < nparts[i]; j++) {
            tp.tid = tids[i];
            tp.p = parts[i][j];
            samsa_consumer_group_set_add(s, &tp);
        }
    }
    samsa_consumer_group_set_sort(s);
}

/* The (topic ids, partitions) of a decoded array as three parallel arrays
 * in arena, for cg_set_from_topics. */
#define CG_SET_FROM(T, arr, cnt, arena, set)                                 \
    do {                                                                     \
        samsa_uuid_t  *tids_ = samsa_arena_calloc((arena), (size_t) (cnt) + 1, \
                                                  sizeof(samsa_uuid_t));     \
        int32_t      **ps_ = samsa_arena_calloc((arena), (size_t) (cnt) + 1, \
                                                sizeof(int32_t *));          \
        int32_t       *ns_ = samsa_arena_calloc((arena), (size_t) (cnt) + 1, \
                                                sizeof(int32_t));            \
        const T       *a_ = (arr);                                           \
                                                                             \
        for (int32_t i_ = 0; i_ < (cnt); i_++) {                             \
            tids_[i_] = a_[i_].TopicId;                                      \
            ps_[i_] = a_[i_].Partitions;                                     \
            ns_[i_] = a_[i_].Partitions_cnt;                                 \
        }                                                                    \
        cg_set_from_topics((set), tids_, ps_, ns_, (cnt));                   \
    } while (0)

static void
cg_strset(char **dst, samsa_slice_t s)
{
    samsa_free(*dst);
    *dst = s.ptr != NULL ? samsa_strndup(s.ptr, s.len) : NULL;
}

static void
cg_load_member_meta(cg_member_t *m,
                    const samsa_ConsumerGroupMemberMetadataValue_t *v)
{
    char    why[128];
    size_t  i;

    cg_strset(&m->instance_id, v->InstanceId);
    cg_strset(&m->rack_id, v->RackId);
    cg_strset(&m->client_id, v->ClientId);
    cg_strset(&m->client_host, v->ClientHost);
    cg_strset(&m->assignor, v->ServerAssignor);
    for (i = 0; i < m->ntopics; i++) {
        samsa_free(m->topics[i]);
    }
    samsa_free(m->topics);
    m->topics = samsa_calloc((size_t) v->SubscribedTopicNames_cnt + 1,
                             sizeof(*m->topics));
    m->ntopics = 0;
    for (i = 0; i < (size_t) v->SubscribedTopicNames_cnt; i++) {
        samsa_slice_t  t = v->SubscribedTopicNames[i];

        m->topics[m->ntopics++] = samsa_strndup(t.ptr != NULL ? t.ptr
                                                                  : "",
                                                    t.len);
    }
    if (m->regex != NULL) {
        samsa_re_free(m->re);
        m->re = NULL;
        samsa_free(m->regex);
        m->regex = NULL;
    }
    if (v->SubscribedTopicRegex.ptr != NULL
        && v->SubscribedTopicRegex.len > 0) {
        if (samsa_consumer_group_regex_compile(v->SubscribedTopicRegex.ptr,
                                     v->SubscribedTopicRegex.len, &m->re,
                                     why, sizeof(why))) {
            m->regex = samsa_strndup(v->SubscribedTopicRegex.ptr,
                                         v->SubscribedTopicRegex.len);
        } else {
            samsa_warn("member %s: its stored regex does not compile: %s",
                       m->id, why);
        }
    }
    m->rebalance_timeout_ms = v->RebalanceTimeoutMs;
    m->has_meta = true;
}

static void
cg_load_topics(samsa_consumer_group_t *cg,
               const samsa_ConsumerGroupPartitionMetadataValue_t *v)
{
    size_t  i, k;

    for (i = 0; i < cg->ntopics; i++) {
        samsa_free(cg->topics[i].name);
    }
    samsa_free(cg->topics);
    cg->topics = samsa_calloc((size_t) v->Topics_cnt + 1,
                              sizeof(*cg->topics));
    cg->ntopics = 0;
    for (i = 0; i < (size_t) v->Topics_cnt; i++) {
        cg_topic_t  x;

        x.name = samsa_strndup(v->Topics[i].TopicName.ptr != NULL
                                       ? v->Topics[i].TopicName.ptr : "",
                                   v->Topics[i].TopicName.len);
        x.id = v->Topics[i].TopicId;
        x.npartitions = v->Topics[i].NumPartitions;
        for (k = cg->ntopics; k > 0 && strcmp(cg->topics[k - 1].name,
                                              x.name) > 0; k--) {
            cg->topics[k] = cg->topics[k - 1];       /* sorted by name */
        }
        cg->topics[k] = x;
        cg->ntopics++;
    }
}

/* Decode one value of a group record; false (logged) if it does not. */
#define CG_DECODE(T, rec, arena, v, what, gid)                               \
    ({                                                                       \
        samsa_rd_t  rd_;                                                     \
        int16_t     ver_;                                                    \
        bool        ok_;                                                     \
                                                                             \
        samsa_rd_init(&rd_, (rec)->Value, (size_t) (rec)->ValueLen);         \
        ver_ = samsa_rd_i16(&rd_);                                           \
        T##_init(v);                                                         \
        ok_ = rd_.err == SAMSA_ERR_NONE                                      \
              && T##_decode(&rd_, ver_, (arena), (v)) == SAMSA_ERR_NONE;     \
        if (!ok_) {                                                          \
            samsa_warn("group %s: skipping %s that does not decode", (gid),  \
                       (what));                                              \
        }                                                                    \
        ok_;                                                                 \
    })

/* Keep the value as the one last written. */
static void
cg_keep(samsa_buf_t *last, const samsa_record_t *rec)
{
    samsa_buf_fini(last);
    *last = SAMSA_BUF_INIT;
    if (rec->Value != NULL) {
        samsa_buf_append(last, rec->Value, (size_t) rec->ValueLen);
    }
}

static void
cg_load_group_rec(samsa_grp_t *g, int16_t type, const samsa_record_t *rec,
                  samsa_arena_t *arena)
{
    samsa_consumer_group_t  *cg = g->cg;

    switch (type) {
    case CG_KEY_GROUP: {
        samsa_ConsumerGroupMetadataValue_t  v;

        if (CG_DECODE(samsa_ConsumerGroupMetadataValue, rec, arena, &v,
                      "a consumer group's metadata", g->id)) {
            cg->group_epoch = v.Epoch;
            cg_keep(&cg->rec[CG_REC_GROUP], rec);
        }
        break;
    }
    case CG_KEY_TOPICS: {
        samsa_ConsumerGroupPartitionMetadataValue_t  v;

        if (CG_DECODE(samsa_ConsumerGroupPartitionMetadataValue, rec, arena,
                      &v, "a consumer group's topics", g->id)) {
            cg_load_topics(cg, &v);
            cg_keep(&cg->rec[CG_REC_TOPICS], rec);
        }
        break;
    }
    default: {
        samsa_ConsumerGroupTargetAssignmentMetadataValue_t  v;

        if (CG_DECODE(samsa_ConsumerGroupTargetAssignmentMetadataValue, rec,
                      arena, &v, "a target assignment's metadata", g->id)) {
            cg->assignment_epoch = v.AssignmentEpoch;
            cg_keep(&cg->rec[CG_REC_TARGET_META], rec);
        }
        break;
    }
    }
}

static void
cg_load_member_rec(samsa_grp_t *g, int16_t type, samsa_slice_t member_id,
                   const samsa_record_t *rec, samsa_arena_t *arena)
{
    cg_member_t  *m = samsa_consumer_group_member_get(g->cg, member_id);

    switch (type) {
    case CG_KEY_MEMBER: {
        samsa_ConsumerGroupMemberMetadataValue_t  v;

        if (CG_DECODE(samsa_ConsumerGroupMemberMetadataValue, rec, arena, &v,
                      "a member's metadata", g->id)) {
            cg_load_member_meta(m, &v);
            cg_keep(&m->rec[CG_REC_MEMBER], rec);
        }
        break;
    }
    case CG_KEY_TARGET_MEMBER: {
        samsa_ConsumerGroupTargetAssignmentMemberValue_t  v;

        if (CG_DECODE(samsa_ConsumerGroupTargetAssignmentMemberValue, rec,
                      arena, &v, "a member's target assignment", g->id)) {
            CG_SET_FROM(samsa_CGRecTargetPartitions_t, v.TopicPartitions,
                        v.TopicPartitions_cnt, arena, &m->target);
            cg_keep(&m->rec[CG_REC_MEMBER_TARGET], rec);
        }
        break;
    }
    default: {
        samsa_ConsumerGroupCurrentMemberAssignmentValue_t  v;

        if (CG_DECODE(samsa_ConsumerGroupCurrentMemberAssignmentValue, rec,
                      arena, &v, "a member's assignment", g->id)) {
            m->epoch = v.MemberEpoch;
            m->prev_epoch = v.PreviousMemberEpoch;
            m->state = v.State == CG_KSTATE_UNREVOKED ? CG_UNREVOKED
                       : v.State == CG_KSTATE_UNRELEASED ? CG_UNRELEASED
                                                         : CG_STABLE;
            CG_SET_FROM(samsa_CGRecMemberPartitions_t, v.AssignedPartitions,
                        v.AssignedPartitions_cnt, arena, &m->assigned);
            CG_SET_FROM(samsa_CGRecMemberPartitions_t,
                        v.PartitionsPendingRevocation,
                        v.PartitionsPendingRevocation_cnt, arena,
                        &m->revoking);
            cg_keep(&m->rec[CG_REC_MEMBER_CURRENT], rec);
        }
        break;
    }
    }
}

/* A tombstone: the group's metadata forgets the group, a member's metadata
 * the member; the others clear what they describe. */
static void
cg_load_tombstone(samsa_grp_t *g, int16_t type, samsa_slice_t member_id)
{
    samsa_consumer_group_t  *cg = g->cg;
    cg_member_t   *m;

    switch (type) {
    case CG_KEY_GROUP:
        samsa_consumer_group_free(cg);
        g->cg = NULL;
        samsa_free(g->protocol_type);
        g->protocol_type = NULL;
        return;
    case CG_KEY_TOPICS:
        samsa_buf_fini(&cg->rec[CG_REC_TOPICS]);
        return;
    case CG_KEY_TARGET_META:
        samsa_buf_fini(&cg->rec[CG_REC_TARGET_META]);
        return;
    default:
        break;
    }
    m = samsa_consumer_group_member_get(cg, member_id);
    if (type == CG_KEY_MEMBER) {
        samsa_consumer_group_member_drop(cg, m);
    } else if (type == CG_KEY_TARGET_MEMBER) {
        samsa_consumer_group_set_clear(&m->target);
        samsa_buf_fini(&m->rec[CG_REC_MEMBER_TARGET]);
    } else {
        samsa_consumer_group_set_clear(&m->assigned);
        samsa_consumer_group_set_clear(&m->revoking);
        samsa_buf_fini(&m->rec[CG_REC_MEMBER_CURRENT]);
    }
}

void
samsa_consumer_group_store_load(samsa_grpcoord_t *gc, int16_t type, samsa_rd_t *krd,
                      const samsa_record_t *rec, samsa_arena_t *arena)
{
    samsa_slice_t  group_id = SAMSA_SLICE_NULL, member_id = SAMSA_SLICE_NULL;
    samsa_err_t    err;
    samsa_grp_t   *g;

    if (type < CG_KEY_GROUP || type > CG_KEY_CURRENT) {
        return;
    }
    err = cg_key_decode(krd, type, &group_id, &member_id);
    if (err != SAMSA_ERR_NONE || group_id.ptr == NULL
        || (cg_key_has_member(type) && member_id.ptr == NULL)) {
        samsa_warn("%s: skipping a consumer group key (type %d) that does "
                   "not decode", SAMSA_GRP_OFFSETS_TOPIC, (int) type);
        return;
    }
    g = samsa_grp_get(gc, group_id, rec->Value != NULL);
    if (g == NULL) {
        return;
    }
    pthread_mutex_lock(&g->lock);
    if (g->cg == NULL && rec->Value != NULL) {
        g->cg = samsa_calloc(1, sizeof(*g->cg));
        samsa_free(g->protocol_type);
        g->protocol_type = samsa_strdup("consumer");
    }
    if (g->cg == NULL) {
        /* a tombstone of a group already gone */
    } else if (rec->Value == NULL) {
        cg_load_tombstone(g, type, member_id);
    } else if (type == CG_KEY_GROUP || type == CG_KEY_TOPICS
               || type == CG_KEY_TARGET_META) {
        cg_load_group_rec(g, type, rec, arena);
    } else {
        cg_load_member_rec(g, type, member_id, rec, arena);
    }
    pthread_mutex_unlock(&g->lock);
    samsa_grp_unref(g);
}

samsa_err_t
samsa_consumer_group_store_forget(samsa_grp_t *g)
{
    samsa_grpstore_rec_t  *recs = NULL;
    size_t                 n;
    samsa_err_t            err;

    n = samsa_consumer_group_store_tombstones(g, &recs, 0);
    err = samsa_grpstore_append(g, recs, n);
    samsa_grpstore_recs_free(recs, n);
    return err;
}
