/*
 * broker/handlers/h_ElectLeaders.c - ElectLeaders (key 43, KIP-183,
 * KIP-460), answered from the metadata image as Kafka's controller
 * (ReplicationControlManager.electLeaders, to which a broker forwards it)
 * answers, run by the controller (samsa_controller_elect_leaders; a
 * cluster node that is not the active controller forwards the request):
 * a preferred election (ElectionType 0, the only one of v0) moves
 * leadership to a partition's first replica when it is in the ISR and
 * active, an unclean one (1) gives a leader-less partition a leader;
 * ELECTION_NOT_NEEDED, PREFERRED_LEADER_NOT_AVAILABLE,
 * ELIGIBLE_LEADERS_NOT_AVAILABLE, UNKNOWN_TOPIC_OR_PARTITION otherwise.
 * Null TopicPartitions asks for every partition: every topic is listed,
 * with only the partitions that needed an election.
 * Threads: handler.
 */
#include "broker/api_table.h"

#include <inttypes.h>

#include "broker/broker.h"
#include "meta/acl.h"
#include "meta/controller/controller.h"
#include "net/server/reqchan.h"
#include "proto/gen/ElectLeaders.h"
#include "util/arena.h"

/* The partitions a null TopicPartitions names: every partition that needs
 * an election of type (Kafka lists only those not ELECTION_NOT_NEEDED):
 * preferred, one whose first replica does not lead; unclean, one without
 * a leader.  *n of them, in arena; *tname[i] the topic of each. */
static samsa_controller_elect_t *
electleaders_needed(samsa_req_t *req, const samsa_image_t *img, int8_t type,
                    size_t *n)
{
    const samsa_image_topic_t      *t;
    const samsa_image_partition_t  *p;
    samsa_controller_elect_t       *v;
    size_t                          i, cap = 0, nt = samsa_image_topic_count(img);
    int32_t                         k;

    for (i = 0; i < nt; i++) {
        cap += (size_t) samsa_image_topic_at(img, i)->npartitions;
    }
    v = samsa_arena_calloc(&req->arena, cap + 1, sizeof(*v));
    *n = 0;
    for (i = 0; i < nt; i++) {
        t = samsa_image_topic_at(img, i);
        for (k = 0; k < t->npartitions; k++) {
            p = &t->partitions[k];
            if (type == SAMSA_CONTROLLER_ELECTION_UNCLEAN
                    ? p->leader >= 0
                    : p->nreplicas > 0 && p->leader == p->replicas[0]) {
                continue;
            }
            v[*n].topic = (samsa_slice_t) { t->name, t->name_len };
            v[(*n)++].partition = k;
        }
    }
    return v;
}

/* The elections, by the controller (this node's: a cluster node that is
 * not the active controller forwarded the request already). */
static samsa_controller_elect_result_t *
electleaders_run(samsa_apis_t *apis, samsa_req_t *req, int8_t type,
                 const samsa_controller_elect_t *parts, size_t n)
{
    samsa_controller_elect_result_t  *res;
    samsa_err_t                       err = SAMSA_ERR_NOT_CONTROLLER;

    res = samsa_arena_calloc(&req->arena, n + 1, sizeof(*res));
    if (apis->broker->ctrl != NULL && n > 0) {
        err = samsa_controller_elect_leaders(apis->broker->ctrl, type, parts,
                                             n, &req->arena, res);
    }
    samsa_controller_results_failed(res, n, err);
    return res;
}

static void
electleaders_set(samsa_ElectLeadersPartitionResult_t *pr, int32_t partition,
                 const samsa_controller_elect_result_t *r)
{
    samsa_ElectLeadersPartitionResult_init(pr);
    pr->PartitionId = partition;
    pr->ErrorCode = r->error;
    pr->ErrorMessage = r->error == SAMSA_ERR_NONE
                           ? SAMSA_SLICE_NULL
                           : samsa_slice_cstr(r->message != NULL
                                                  ? r->message
                                                  : samsa_err_text(r->error));
}

/* Null TopicPartitions: every topic, each with the partitions that needed
 * an election and what it gave. */
static void
electleaders_all(samsa_apis_t *apis, samsa_req_t *req,
                 const samsa_image_t *img, int8_t type,
                 samsa_ElectLeadersResponse_t *m)
{
    const samsa_image_topic_t        *t;
    samsa_ReplicaElectionResult_t    *r;
    samsa_controller_elect_t         *parts;
    samsa_controller_elect_result_t  *res;
    size_t                            i, j = 0, n, nt = samsa_image_topic_count(img);

    parts = electleaders_needed(req, img, type, &n);
    res = electleaders_run(apis, req, type, parts, n);
    m->ReplicaElectionResults = samsa_arena_calloc(
        &req->arena, nt + 1, sizeof(*m->ReplicaElectionResults));
    m->ReplicaElectionResults_cnt = (int32_t) nt;
    for (i = 0; i < nt; i++) {
        t = samsa_image_topic_at(img, i);
        r = &m->ReplicaElectionResults[i];
        samsa_ReplicaElectionResult_init(r);
        r->Topic = (samsa_slice_t) { t->name, t->name_len };
        r->PartitionResult = samsa_arena_calloc(
            &req->arena, (size_t) t->npartitions + 1,
            sizeof(*r->PartitionResult));
        for (; j < n && parts[j].topic.ptr == t->name; j++) {
            electleaders_set(&r->PartitionResult[r->PartitionResult_cnt++],
                             parts[j].partition, &res[j]);
        }
    }
}

void
samsa_h_ElectLeaders(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_ElectLeadersRequest_t                *rq = body;
    samsa_ElectLeadersResponse_t                m;
    samsa_image_t                              *img;
    const samsa_ElectLeadersTopicPartitions_t  *tp;
    samsa_ReplicaElectionResult_t              *r;
    samsa_controller_elect_t                   *parts;
    samsa_controller_elect_result_t            *res = NULL;
    samsa_controller_elect_result_t             denied = {
        SAMSA_ERR_CLUSTER_AUTHORIZATION_FAILED, NULL };
    int8_t                                      type;
    int32_t                                     i, j;
    size_t                                      n = 0, k = 0;
    bool                                        allowed;

    samsa_ElectLeadersResponse_init(&m);
    img = samsa_apis_image(apis->broker, req);
    /* v0 has no ElectionType: a preferred election */
    type = req->hdr.ApiVersion >= 1 ? rq->ElectionType
                                     : SAMSA_CONTROLLER_ELECTION_PREFERRED;
    /* Kafka: ALTER on the cluster, else every partition (and v1+ the
     * whole answer) fails with CLUSTER_AUTHORIZATION_FAILED */
    allowed = samsa_apis_allowed_cluster(apis, req, SAMSA_ACL_OP_ALTER);
    if (!allowed) {
        m.ErrorCode = SAMSA_ERR_CLUSTER_AUTHORIZATION_FAILED;
    }
    if (type != SAMSA_CONTROLLER_ELECTION_PREFERRED
        && type != SAMSA_CONTROLLER_ELECTION_UNCLEAN) {
        m.ErrorCode = SAMSA_ERR_INVALID_REQUEST;
        m.ReplicaElectionResults_cnt = 0;
    } else if (rq->TopicPartitions_cnt < 0 && !allowed) {
        m.ReplicaElectionResults_cnt = 0;
    } else if (rq->TopicPartitions_cnt < 0) {
        electleaders_all(apis, req, img, type, &m);
    } else {
        for (i = 0; i < rq->TopicPartitions_cnt; i++) {
            n += (size_t) (rq->TopicPartitions[i].Partitions_cnt > 0
                               ? rq->TopicPartitions[i].Partitions_cnt : 0);
        }
        parts = samsa_arena_calloc(&req->arena, n + 1, sizeof(*parts));
        for (i = 0; i < rq->TopicPartitions_cnt; i++) {
            tp = &rq->TopicPartitions[i];
            for (j = 0; j < tp->Partitions_cnt; j++) {
                parts[k].topic = tp->Topic;
                parts[k++].partition = tp->Partitions[j];
            }
        }
        if (allowed) {
            res = electleaders_run(apis, req, type, parts, n);
        }
        m.ReplicaElectionResults = samsa_arena_calloc(
            &req->arena, (size_t) rq->TopicPartitions_cnt + 1,
            sizeof(*m.ReplicaElectionResults));
        m.ReplicaElectionResults_cnt = rq->TopicPartitions_cnt;
        for (i = 0, k = 0; i < rq->TopicPartitions_cnt; i++) {
            tp = &rq->TopicPartitions[i];
            r = &m.ReplicaElectionResults[i];
            samsa_ReplicaElectionResult_init(r);
            r->Topic = tp->Topic;
            r->PartitionResult = samsa_arena_calloc(
                &req->arena, (size_t) (tp->Partitions_cnt > 0
                                       ? tp->Partitions_cnt : 0) + 1,
                sizeof(*r->PartitionResult));
            r->PartitionResult_cnt = tp->Partitions_cnt > 0
                                         ? tp->Partitions_cnt : 0;
            for (j = 0; j < r->PartitionResult_cnt; j++, k++) {
                electleaders_set(&r->PartitionResult[j], tp->Partitions[j],
                                 allowed ? &res[k] : &denied);
            }
        }
    }
    samsa_apis_send(apis->broker, req, &m);
}
