/*
 * broker/handlers/h_OffsetFetch.c - OffsetFetch (key 9), v0-v9: a group's committed
 * offsets for the partitions asked, or (null topics, v2+) every committed
 * partition; v8+ several groups at once (KIP-709).  A partition with no
 * commit gets offset -1 and metadata "".  RequireStable (v7+) has nothing
 * to wait for until transactional offset commits exist (issue 5).
 * Threads: handler.
 */
#include "broker/api_table.h"

#include <stddef.h>
#include <string.h>

#include "broker/group/consumer_group.h"
#include "broker/group/grp.h"
#include "broker/handlers/tpresp.h"
#include "meta/acl.h"
#include "net/server/reqchan.h"
#include "proto/errmap.h"
#include "proto/gen/OffsetFetch.h"
#include "proto/wr.h"

/* The asked topics of one group: names, partition lists and counts. */
typedef struct offsetfetch_ask {
    samsa_slice_t   *names;
    const int32_t  **parts;
    int32_t         *nparts;
    int32_t          ntopics;           /* -1: all */
} offsetfetch_ask_t;

static void
offsetfetch_ask_init(samsa_req_t *req, int32_t cnt, offsetfetch_ask_t *a)
{
    size_t  n = cnt > 0 ? (size_t) cnt : 0;

    a->ntopics = cnt;
    a->names = samsa_arena_calloc(&req->arena, n + 1, sizeof(*a->names));
    a->parts = samsa_arena_calloc(&req->arena, n + 1, sizeof(*a->parts));
    a->nparts = samsa_arena_calloc(&req->arena, n + 1, sizeof(*a->nparts));
}

static void
offsetfetch_ask_old(samsa_req_t *req, const samsa_OffsetFetchRequest_t *rq,
                    offsetfetch_ask_t *a)
{
    int32_t  t;

    offsetfetch_ask_init(req, rq->Topics_cnt, a);
    for (t = 0; t < rq->Topics_cnt; t++) {
        a->names[t] = rq->Topics[t].Name;
        a->parts[t] = rq->Topics[t].PartitionIndexes;
        a->nparts[t] = rq->Topics[t].PartitionIndexes_cnt;
    }
}

static void
offsetfetch_ask_group(samsa_req_t *req,
                      const samsa_OffsetFetchRequestGroup_t *rg,
                      offsetfetch_ask_t *a)
{
    int32_t  t;

    offsetfetch_ask_init(req, rg->Topics_cnt, a);
    for (t = 0; t < rg->Topics_cnt; t++) {
        a->names[t] = rg->Topics[t].Name;
        a->parts[t] = rg->Topics[t].PartitionIndexes;
        a->nparts[t] = rg->Topics[t].PartitionIndexes_cnt;
    }
}

/* One topic of a group's answer: its entries of the flat list, in order;
 * the request side of samsa_tp_respond. */
typedef struct offsetfetch_topic {
    samsa_slice_t               name;
    const samsa_grp_offset_t  **parts;
    int32_t                     parts_cnt;
} offsetfetch_topic_t;

/* One group's answer, flat: offs[i] for each partition, and by topic. */
typedef struct offsetfetch_group {
    samsa_err_t           error;
    samsa_grp_offset_t   *offs;
    size_t                n;
    offsetfetch_topic_t  *topics;       /* distinct topics, in order of
                                           first appearance */
    size_t                ntopics;
} offsetfetch_group_t;

/* Group out's flat list by topic, in order of first appearance. */
static void
offsetfetch_by_topic(samsa_req_t *req, offsetfetch_group_t *out)
{
    offsetfetch_topic_t  *tp;
    size_t                i, j;

    out->topics = samsa_arena_calloc(&req->arena, out->n + 1,
                                     sizeof(*out->topics));
    for (i = 0; i < out->n; i++) {
        for (j = 0; j < out->ntopics; j++) {
            if (samsa_slice_eq(out->topics[j].name, out->offs[i].topic)) {
                break;
            }
        }
        tp = &out->topics[j];
        if (j == out->ntopics) {
            out->ntopics++;
            tp->name = out->offs[i].topic;
            tp->parts = samsa_arena_calloc(&req->arena, out->n - i + 1,
                                           sizeof(*tp->parts));
        }
        tp->parts[tp->parts_cnt++] = &out->offs[i];
    }
}

/* Kafka's checks: DESCRIBE on the group, else GROUP_AUTHORIZATION_FAILED;
 * DESCRIBE on each topic: an asked topic that fails answers
 * TOPIC_AUTHORIZATION_FAILED (offset -1), an unasked one (all topics) is
 * left out. */
static void
offsetfetch_authorize(samsa_apis_t *apis, samsa_req_t *req, bool all,
                      offsetfetch_group_t *out)
{
    size_t  i, n = 0;

    for (i = 0; i < out->n; i++) {
        if (!samsa_apis_allowed(apis, req, NULL, SAMSA_ACL_OP_DESCRIBE,
                                SAMSA_ACL_RESOURCE_TOPIC,
                                out->offs[i].topic)) {
            if (all) {
                continue;
            }
            out->offs[i].offset = -1;
            out->offs[i].leader_epoch = -1;
            out->offs[i].metadata = (samsa_slice_t) { "", 0 };
            out->offs[i].error = SAMSA_ERR_TOPIC_AUTHORIZATION_FAILED;
        }
        out->offs[n++] = out->offs[i];
    }
    out->n = n;
}

/* The flat list for the asked topics (topics_cnt -1: all). */
static void
offsetfetch_one(samsa_apis_t *apis, samsa_req_t *req, samsa_slice_t group,
                const offsetfetch_ask_t *a, bool require_stable,
                offsetfetch_group_t *out)
{
    const samsa_slice_t   *names = a->names;
    const int32_t *const  *parts = a->parts;
    const int32_t         *nparts = a->nparts;
    int32_t                ntopics = a->ntopics;
    size_t                 n = 0, k = 0;
    int32_t                t, p;

    memset(out, 0, sizeof(*out));
    if (!samsa_apis_allowed(apis, req, NULL, SAMSA_ACL_OP_DESCRIBE,
                            SAMSA_ACL_RESOURCE_GROUP, group)) {
        out->error = SAMSA_ERR_GROUP_AUTHORIZATION_FAILED;
        offsetfetch_by_topic(req, out);
        return;
    }
    if (ntopics >= 0) {
        for (t = 0; t < ntopics; t++) {
            n += nparts[t] > 0 ? (size_t) nparts[t] : 0;
        }
        out->offs = samsa_arena_calloc(&req->arena, n + 1,
                                       sizeof(*out->offs));
        for (t = 0; t < ntopics; t++) {
            for (p = 0; p < nparts[t]; p++) {
                out->offs[k].topic = names[t];
                out->offs[k++].partition = parts[t][p];
            }
        }
        out->n = n;
    }
    out->error = samsa_grp_fetch_offsets(apis->broker->grp, group,
                                         ntopics < 0, &req->arena,
                                         &out->offs, &out->n);
    if (require_stable && out->error == SAMSA_ERR_NONE) {
        samsa_grp_offsets_mark_unstable(apis->broker->grp, group, out->offs,
                                        out->n);
    }
    if (samsa_apis_authz_on(apis)) {
        offsetfetch_authorize(apis, req, ntopics < 0, out);
    }
    offsetfetch_by_topic(req, out);
}

/* Where a response partition keeps a committed offset: the v0-v7 and the
 * v8+ partitions are distinct generated types with the same fields. */
typedef struct offsetfetch_part_layout {
    size_t  index_off;
    size_t  offset_off;
    size_t  epoch_off;
    size_t  metadata_off;
    size_t  error_off;
} offsetfetch_part_layout_t;

#define OFFSETFETCH_PART_LAYOUT(T)                                          \
    { offsetof(T, PartitionIndex), offsetof(T, CommittedOffset),            \
      offsetof(T, CommittedLeaderEpoch), offsetof(T, Metadata),             \
      offsetof(T, ErrorCode) }

static const samsa_tp_layout_t  group_layout = SAMSA_TP_LAYOUT(
    offsetfetch_topic_t, name, parts, const samsa_grp_offset_t *, NULL, NULL);
static const samsa_tp_layout_t  old_layout = SAMSA_TP_LAYOUT(
    samsa_OffsetFetchResponseTopic_t, Name, Partitions,
    samsa_OffsetFetchResponsePartition_t,
    samsa_OffsetFetchResponseTopic_init_any,
    samsa_OffsetFetchResponsePartition_init_any);
static const offsetfetch_part_layout_t  old_part_layout =
    OFFSETFETCH_PART_LAYOUT(samsa_OffsetFetchResponsePartition_t);
static const samsa_tp_layout_t  v8_layout = SAMSA_TP_LAYOUT(
    samsa_OffsetFetchResponseTopics_t, Name, Partitions,
    samsa_OffsetFetchResponsePartitions_t,
    samsa_OffsetFetchResponseTopics_init_any,
    samsa_OffsetFetchResponsePartitions_init_any);
static const offsetfetch_part_layout_t  v8_part_layout =
    OFFSETFETCH_PART_LAYOUT(samsa_OffsetFetchResponsePartitions_t);

/* samsa_tp_fill_fn (ctx: the response's offsetfetch_part_layout_t): one
 * partition's committed offset */
static void
offsetfetch_fill_part(void *ctx, samsa_slice_t name, size_t k, const void *rq,
                      void *out)
{
    const offsetfetch_part_layout_t   *l = ctx;
    const samsa_grp_offset_t *const   *entry = rq;
    const samsa_grp_offset_t          *o = *entry;
    int16_t                            error;

    (void) name;
    (void) k;
    error = samsa_err_wire(o->error);
    memcpy((char *) out + l->index_off, &o->partition, sizeof(o->partition));
    memcpy((char *) out + l->offset_off, &o->offset, sizeof(o->offset));
    memcpy((char *) out + l->epoch_off, &o->leader_epoch,
           sizeof(o->leader_epoch));
    memcpy((char *) out + l->metadata_off, &o->metadata, sizeof(o->metadata));
    memcpy((char *) out + l->error_off, &error, sizeof(error));
}

/* v0-v7 topics of one group. */
static void
offsetfetch_fill_old(samsa_req_t *req, const offsetfetch_group_t *g,
                     samsa_OffsetFetchResponse_t *m)
{
    m->ErrorCode = samsa_err_wire(g->error);
    m->Topics = samsa_tp_respond(&req->arena, &group_layout, g->topics,
                                 (int32_t) g->ntopics, &old_layout,
                                 &m->Topics_cnt, offsetfetch_fill_part,
                                 (void *) &old_part_layout);
}

static void
offsetfetch_fill_group(samsa_req_t *req, samsa_slice_t id,
                       const offsetfetch_group_t *g,
                       samsa_OffsetFetchResponseGroup_t *gr)
{
    samsa_OffsetFetchResponseGroup_init(gr);
    gr->GroupId = id;
    gr->ErrorCode = samsa_err_wire(g->error);
    gr->Topics = samsa_tp_respond(&req->arena, &group_layout, g->topics,
                                  (int32_t) g->ntopics, &v8_layout,
                                  &gr->Topics_cnt, offsetfetch_fill_part,
                                  (void *) &v8_part_layout);
}

void
samsa_h_OffsetFetch(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_OffsetFetchRequest_t  *rq = body;
    samsa_OffsetFetchResponse_t  m;
    offsetfetch_group_t          g;
    offsetfetch_ask_t            a;
    int16_t                      v = req->hdr.ApiVersion;
    int32_t                      i;
    samsa_err_t                  err;

    samsa_OffsetFetchResponse_init(&m);
    if (v <= 7) {
        offsetfetch_ask_old(req, rq, &a);
        offsetfetch_one(apis, req, rq->GroupId, &a, v >= 7 && rq->RequireStable,
                        &g);
        offsetfetch_fill_old(req, &g, &m);
    } else {
        m.Groups = samsa_apis_resp_array(req, rq->Groups_cnt,
                                         sizeof(*m.Groups), &m.Groups_cnt);
        for (i = 0; i < m.Groups_cnt; i++) {
            /* v9: a consumer group's member asks with its epoch */
            err = v >= 9 ? samsa_consumer_group_fetch_check(apis->broker->grp,
                                                  rq->Groups[i].GroupId,
                                                  rq->Groups[i].MemberId,
                                                  rq->Groups[i].MemberEpoch)
                         : SAMSA_ERR_NONE;
            if (err != SAMSA_ERR_NONE) {
                memset(&g, 0, sizeof(g));
                g.error = err;
            } else {
                offsetfetch_ask_group(req, &rq->Groups[i], &a);
                offsetfetch_one(apis, req, rq->Groups[i].GroupId, &a,
                                rq->RequireStable, &g);
            }
            offsetfetch_fill_group(req, rq->Groups[i].GroupId, &g,
                                   &m.Groups[i]);
        }
    }
    samsa_apis_send(apis->broker, req, &m);
}
