/*
 * broker/handlers/h_ListPartitionReassignments.c - ListPartitionReassignments
 * (key 46, KIP-455), v0: the reassignments in progress (a partition with
 * AddingReplicas or RemovingReplicas), from the metadata image, as Kafka's
 * controller lists them (ReplicationControlManager.
 * listPartitionReassignments): null Topics lists every one; a named
 * topic lists only those of its named partitions being reassigned, so
 * unknown topics and partitions are left out, and a topic with none is
 * not listed.
 * Threads: handler.
 */
#include "broker/api_table.h"

#include "broker/broker.h"
#include "meta/acl.h"
#include "net/server/reqchan.h"
#include "proto/gen/ListPartitionReassignments.h"
#include "util/arena.h"

static bool
listreassign_ongoing(const samsa_image_partition_t *p)
{
    return p->nadding > 0 || p->nremoving > 0;
}

/* Partition k of t into the topic answer o (if being reassigned). */
static void
listreassign_add(const samsa_image_topic_t *t, int32_t k,
                 samsa_OngoingTopicReassignment_t *o)
{
    const samsa_image_partition_t       *p;
    samsa_OngoingPartitionReassignment_t *op;

    if (k < 0 || k >= t->npartitions
        || !listreassign_ongoing(&t->partitions[k])) {
        return;
    }
    p = &t->partitions[k];              /* the image outlives the answer */
    op = &o->Partitions[o->Partitions_cnt++];
    samsa_OngoingPartitionReassignment_init(op);
    op->PartitionIndex = k;
    op->Replicas = (int32_t *) p->replicas;
    op->Replicas_cnt = p->nreplicas;
    op->AddingReplicas = (int32_t *) p->adding;
    op->AddingReplicas_cnt = p->nadding;
    op->RemovingReplicas = (int32_t *) p->removing;
    op->RemovingReplicas_cnt = p->nremoving;
}

/* The answer for topic t: the named partitions (names NULL: all). */
static void
listreassign_topic(samsa_req_t *req, const samsa_image_topic_t *t,
                   const int32_t *names, int32_t nnames,
                   samsa_ListPartitionReassignmentsResponse_t *m)
{
    samsa_OngoingTopicReassignment_t  *o = &m->Topics[m->Topics_cnt];
    int32_t                            k, n;

    samsa_OngoingTopicReassignment_init(o);
    o->Name = (samsa_slice_t) { t->name, t->name_len };
    n = names != NULL ? (nnames > 0 ? nnames : 0) : t->npartitions;
    o->Partitions = samsa_arena_calloc(&req->arena, (size_t) n + 1,
                                       sizeof(*o->Partitions));
    for (k = 0; k < n; k++) {
        listreassign_add(t, names != NULL ? names[k] : k, o);
    }
    if (o->Partitions_cnt > 0) {
        m->Topics_cnt++;
    }
}

void
samsa_h_ListPartitionReassignments(samsa_apis_t *apis, samsa_req_t *req,
                                   void *body)
{
    samsa_ListPartitionReassignmentsRequest_t   *rq = body;
    samsa_ListPartitionReassignmentsResponse_t   m;
    const samsa_ListPartitionReassignmentsTopics_t *tp;
    const samsa_image_topic_t                   *t;
    samsa_image_t                               *img;
    size_t                                       i, nt;

    samsa_ListPartitionReassignmentsResponse_init(&m);
    if (!samsa_apis_allowed_cluster(apis, req, SAMSA_ACL_OP_DESCRIBE)) {
        m.ErrorCode = SAMSA_ERR_CLUSTER_AUTHORIZATION_FAILED;
        samsa_apis_send(apis->broker, req, &m);
        return;
    }
    img = samsa_apis_image(apis->broker, req);
    nt = rq->Topics_cnt >= 0 ? (size_t) rq->Topics_cnt
                             : samsa_image_topic_count(img);
    m.Topics = samsa_arena_calloc(&req->arena, nt + 1, sizeof(*m.Topics));
    for (i = 0; i < nt; i++) {
        if (rq->Topics_cnt < 0) {
            listreassign_topic(req, samsa_image_topic_at(img, i), NULL, 0,
                               &m);
            continue;
        }
        tp = &rq->Topics[i];
        t = samsa_image_topic_find(img, (const char *) tp->Name.ptr,
                                   tp->Name.len);
        if (t != NULL) {
            listreassign_topic(req, t, tp->PartitionIndexes,
                               tp->PartitionIndexes_cnt, &m);
        }
    }
    samsa_apis_send(apis->broker, req, &m);
}
