/*
 * broker/handlers/h_DescribeQuorum.c - DescribeQuorum (key 55, KIP-595,
 * KIP-836, KIP-853), served on a KRaft cluster node: the metadata
 * quorum's leader, epoch, high watermark, voters and observers, as
 * Kafka's KafkaRaftClient answers it (kafka-metadata-quorum describe).
 * Only __cluster_metadata partition 0 exists (else the top-level error
 * UNKNOWN_TOPIC_OR_PARTITION); a node that is not the leader answers the
 * partition with NOT_LEADER_OR_FOLLOWER and the leader it knows (a broker
 * listener forwards the request to the active controller first,
 * broker/forward.h).  Offsets are metadata offsets (records), as
 * samsa_quorum_describe maps them from raft indexes (-1 where it cannot).
 * Threads: handler (the describe waits for the quorum thread).
 */
#include "broker/api_table.h"

#include <string.h>

#include "config/config_kraft.h"
#include "meta/acl.h"
#include "meta/controller/controller.h"
#include "meta/metaprops.h"
#include "meta/quorum.h"
#include "proto/gen/DescribeQuorum.h"
#include "util/diag.h"
#include "util/time.h"

#define DQ_TOPIC           "__cluster_metadata"
#define DQ_DESCRIBE_MS     2000

static bool
dq_valid(const samsa_DescribeQuorumRequest_t *rq)
{
    return rq->Topics_cnt == 1
           && rq->Topics[0].TopicName.len == strlen(DQ_TOPIC)
           && memcmp(rq->Topics[0].TopicName.ptr, DQ_TOPIC,
                     strlen(DQ_TOPIC)) == 0
           && rq->Topics[0].Partitions_cnt == 1
           && rq->Topics[0].Partitions[0].PartitionIndex == 0;
}

static void
dq_voters(samsa_req_t *req, const samsa_quorum_desc_t *d,
          samsa_DescribeQuorumPartitionResult_t *p)
{
    size_t  i;

    p->CurrentVoters = samsa_arena_calloc(&req->arena, d->n_voters + 1,
                                          sizeof(*p->CurrentVoters));
    p->CurrentVoters_cnt = (int32_t) d->n_voters;
    for (i = 0; i < d->n_voters; i++) {
        samsa_DescribeQuorumVoter_t  *v = &p->CurrentVoters[i];

        samsa_DescribeQuorumVoter_init(v);
        v->ReplicaId = d->voters[i].node_id;
        v->LogEndOffset = d->voters[i].log_end_offset;
        (void) samsa_metaprops_id_decode(d->voters[i].dir_id,
                                         &v->ReplicaDirectoryId);
        v->LastFetchTimestamp = d->voters[i].last_contact_ms;
        if (d->voters[i].node_id == d->leader_node_id) {
            v->LastCaughtUpTimestamp = samsa_wall_ms();
        }
    }
    p->Observers = samsa_arena_calloc(&req->arena, d->n_observers + 1,
                                      sizeof(*p->Observers));
    p->Observers_cnt = (int32_t) d->n_observers;
    for (i = 0; i < d->n_observers; i++) {
        samsa_DescribeQuorumObserver_t  *o = &p->Observers[i];

        samsa_DescribeQuorumObserver_init(o);
        o->ReplicaId = d->observers[i].node_id;
        o->LogEndOffset = d->observers[i].log_end_offset;
        (void) samsa_metaprops_id_decode(d->observers[i].dir_id,
                                         &o->ReplicaDirectoryId);
        o->LastFetchTimestamp = d->observers[i].last_contact_ms;
    }
}

/* v2: every voter's controller endpoint: the raft configuration's
 * addresses when this node has it (d, the leader's answer), else
 * controller.quorum.voters (a static quorum's, or a dynamic quorum's
 * initial voters). */
static void
dq_nodes(samsa_apis_t *apis, samsa_req_t *req,
         samsa_DescribeQuorumResponse_t *m, const samsa_quorum_desc_t *d)
{
    const samsa_config_kraft_t  *k = samsa_config_kraft(apis->broker->cfg);
    const char                  *lname = k->controller_listener_name != NULL
                                         ? k->controller_listener_name
                                         : "CONTROLLER";
    size_t                       i, n = d != NULL ? d->n_voters : k->nvoters;

    m->Nodes = samsa_arena_calloc(&req->arena, n + 1, sizeof(*m->Nodes));
    m->Nodes_cnt = (int32_t) n;
    for (i = 0; i < n; i++) {
        samsa_DescribeQuorumNode_t  *nd = &m->Nodes[i];

        samsa_DescribeQuorumNode_init(nd);
        nd->Listeners = samsa_arena_calloc(&req->arena, 1,
                                           sizeof(*nd->Listeners));
        nd->Listeners_cnt = 1;
        samsa_DescribeQuorumListener_init(&nd->Listeners[0]);
        nd->Listeners[0].Name = samsa_slice_cstr(lname);
        if (d != NULL) {
            nd->NodeId = d->voters[i].node_id;
            nd->Listeners[0].Host = samsa_slice_cstr(d->voters[i].host);
            nd->Listeners[0].Port = d->voters[i].port;
        } else {
            nd->NodeId = k->voters[i].id;
            nd->Listeners[0].Host = samsa_slice_cstr(k->voters[i].addr.host);
            nd->Listeners[0].Port = (uint16_t) k->voters[i].addr.port;
        }
    }
}

void
samsa_h_DescribeQuorum(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_DescribeQuorumRequest_t           *rq = body;
    samsa_DescribeQuorumResponse_t           m;
    samsa_DescribeQuorumTopicResult_t       *t;
    samsa_DescribeQuorumPartitionResult_t   *p;
    samsa_quorum_desc_t                     *d;
    samsa_quorum_t                          *q = NULL;
    samsa_err_t                              err;

    samsa_DescribeQuorumResponse_init(&m);
    if (apis->broker != NULL && apis->broker->ctrl != NULL) {
        q = samsa_controller_quorum(apis->broker->ctrl);
    }
    if (!samsa_apis_allowed_cluster(apis, req, SAMSA_ACL_OP_DESCRIBE)) {
        m.ErrorCode = SAMSA_ERR_CLUSTER_AUTHORIZATION_FAILED;
        samsa_apis_send(apis->broker, req, &m);
        return;
    }
    if (q == NULL || !dq_valid(rq)) {
        m.ErrorCode = SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION;
        samsa_apis_send(apis->broker, req, &m);
        return;
    }
    d = samsa_arena_calloc(&req->arena, 1, sizeof(*d));
    err = samsa_quorum_describe(q, d, DQ_DESCRIBE_MS);
    t = samsa_arena_calloc(&req->arena, 1, sizeof(*t));
    samsa_DescribeQuorumTopicResult_init(t);
    t->TopicName = samsa_slice_cstr(DQ_TOPIC);
    p = samsa_arena_calloc(&req->arena, 1, sizeof(*p));
    samsa_DescribeQuorumPartitionResult_init(p);
    t->Partitions = p;
    t->Partitions_cnt = 1;
    m.Topics = t;
    m.Topics_cnt = 1;
    if (err != SAMSA_ERR_NONE) {
        p->ErrorCode = err == SAMSA_ERR__SHUTDOWN
                       ? SAMSA_ERR_NOT_LEADER_OR_FOLLOWER
                       : SAMSA_ERR_REQUEST_TIMED_OUT;
        p->LeaderId = -1;
        p->LeaderEpoch = -1;
        p->HighWatermark = -1;
    } else {
        p->LeaderId = d->leader_node_id;
        p->LeaderEpoch = (int32_t) d->epoch;
        p->HighWatermark = d->high_watermark_offset;
        if (!d->is_leader) {
            p->ErrorCode = SAMSA_ERR_NOT_LEADER_OR_FOLLOWER;
        } else {
            dq_voters(req, d, p);
        }
    }
    if (req->hdr.ApiVersion >= 2) {
        dq_nodes(apis, req, &m, err == SAMSA_ERR_NONE && d->is_leader ? d
                                                                      : NULL);
    }
    samsa_apis_send(apis->broker, req, &m);
}
