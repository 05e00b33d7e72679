/*
 * broker/handlers/h_ElectLeaders.c - ElectLeaders (key 43, KIP-183,
 * KIP-460), answered from the metadata image as Kafka's controller
 * (ReplicationControlManager.electLeaders, to which a broker forwards it)
 * answers: a preferred election (ElectionType 0) of a partition whose
 * preferred replica (its first) leads, or an unclean one (1) of a
 * partition that has a leader, is ELECTION_NOT_NEEDED; an unknown topic
 * or partition UNKNOWN_TOPIC_OR_PARTITION.  Null TopicPartitions asks for
 * every partition: every topic is listed, with only the partitions whose
 * answer is not ELECTION_NOT_NEEDED.  samsa's controller runs no
 * elections (every partition has one replica, which leads it), so a
 * partition that would need one gets PREFERRED_LEADER_NOT_AVAILABLE
 * (preferred) or ELIGIBLE_LEADERS_NOT_AVAILABLE (unclean), Kafka's
 * answers when no election can be made.
 * Threads: handler.
 */
#include "broker/api_table.h"

#include <inttypes.h>

#include "broker/broker.h"
#include "meta/acl.h"
#include "net/server/reqchan.h"
#include "proto/gen/ElectLeaders.h"
#include "util/arena.h"

#define ELECTION_PREFERRED 0
#define ELECTION_UNCLEAN   1

/* Kafka's electLeader for one partition: the error and its message
 * (ApiError: the error's own text; NULL for none). */
static samsa_err_t
electleaders_one(samsa_req_t *req, const samsa_image_t *img,
                 samsa_slice_t topic, int32_t partition, int8_t type,
                 samsa_slice_t *msg)
{
    const samsa_image_topic_t      *t;
    const samsa_image_partition_t  *p;
    samsa_err_t                     err;

    t = samsa_image_topic_find(img, (const char *) topic.ptr, topic.len);
    if (t == NULL) {
        *msg = samsa_slice_cstr(samsa_arena_printf(
            &req->arena, "No such topic as %.*s", (int) topic.len,
            (const char *) topic.ptr));
        return SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION;
    }
    if (partition < 0 || partition >= t->npartitions) {
        *msg = samsa_slice_cstr(samsa_arena_printf(
            &req->arena, "No such partition as %.*s-%" PRId32,
            (int) topic.len, (const char *) topic.ptr, partition));
        return SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION;
    }
    p = &t->partitions[partition];
    if (type == ELECTION_UNCLEAN) {
        err = p->leader >= 0 ? SAMSA_ERR_ELECTION_NOT_NEEDED
                             : SAMSA_ERR_ELIGIBLE_LEADERS_NOT_AVAILABLE;
    } else {
        err = p->nreplicas > 0 && p->leader >= 0
                      && p->leader == p->replicas[0]
                  ? SAMSA_ERR_ELECTION_NOT_NEEDED
                  : SAMSA_ERR_PREFERRED_LEADER_NOT_AVAILABLE;
    }
    *msg = samsa_slice_cstr(samsa_err_text(err));
    return err;
}

/* Null TopicPartitions: every topic, with the partitions that needed an
 * election (none on a cluster of single-replica partitions). */
static void
electleaders_all(samsa_req_t *req, const samsa_image_t *img, int8_t type,
                 samsa_ElectLeadersResponse_t *m)
{
    const samsa_image_topic_t      *t;
    samsa_ReplicaElectionResult_t  *r;
    samsa_slice_t                   name, msg;
    samsa_err_t                     err;
    size_t                          i, n = samsa_image_topic_count(img);
    int32_t                         k;

    m->ReplicaElectionResults = samsa_arena_calloc(
        &req->arena, n + 1, sizeof(*m->ReplicaElectionResults));
    m->ReplicaElectionResults_cnt = (int32_t) n;
    for (i = 0; i < n; i++) {
        t = samsa_image_topic_at(img, i);
        r = &m->ReplicaElectionResults[i];
        samsa_ReplicaElectionResult_init(r);
        name = samsa_slice_cstr(
            samsa_arena_printf(&req->arena, "%s", t->name));
        r->Topic = name;
        r->PartitionResult = samsa_arena_calloc(
            &req->arena, (size_t) t->npartitions + 1,
            sizeof(*r->PartitionResult));
        for (k = 0; k < t->npartitions; k++) {
            err = electleaders_one(req, img, name, k, type, &msg);
            if (err == SAMSA_ERR_ELECTION_NOT_NEEDED) {
                continue;
            }
            samsa_ElectLeadersPartitionResult_init(
                &r->PartitionResult[r->PartitionResult_cnt]);
            r->PartitionResult[r->PartitionResult_cnt].PartitionId = k;
            r->PartitionResult[r->PartitionResult_cnt].ErrorCode = err;
            r->PartitionResult[r->PartitionResult_cnt].ErrorMessage = msg;
            r->PartitionResult_cnt++;
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
    samsa_ElectLeadersPartitionResult_t        *pr;
    int32_t                                     i, j;
    bool                                        allowed;

    samsa_ElectLeadersResponse_init(&m);
    img = samsa_apis_image(apis->broker, req);
    /* Kafka: ALTER on the cluster, else every partition (and v1+ the
     * whole answer) fails with CLUSTER_AUTHORIZATION_FAILED */
    allowed = samsa_apis_allowed_cluster(apis, req, SAMSA_ACL_OP_ALTER);
    if (!allowed) {
        m.ErrorCode = SAMSA_ERR_CLUSTER_AUTHORIZATION_FAILED;
    }
    if (rq->TopicPartitions_cnt < 0 && !allowed) {
        m.ReplicaElectionResults_cnt = 0;
    } else if (rq->TopicPartitions_cnt < 0) {
        electleaders_all(req, img, rq->ElectionType, &m);
    } else {
        m.ReplicaElectionResults = samsa_arena_calloc(
            &req->arena, (size_t) rq->TopicPartitions_cnt + 1,
            sizeof(*m.ReplicaElectionResults));
        m.ReplicaElectionResults_cnt = rq->TopicPartitions_cnt;
        for (i = 0; i < rq->TopicPartitions_cnt; i++) {
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
            for (j = 0; j < r->PartitionResult_cnt; j++) {
                pr = &r->PartitionResult[j];
                samsa_ElectLeadersPartitionResult_init(pr);
                pr->PartitionId = tp->Partitions[j];
                if (!allowed) {
                    pr->ErrorCode = SAMSA_ERR_CLUSTER_AUTHORIZATION_FAILED;
                    continue;
                }
                pr->ErrorCode = electleaders_one(req, img, tp->Topic,
                                                 tp->Partitions[j],
                                                 rq->ElectionType,
                                                 &pr->ErrorMessage);
            }
        }
    }
    samsa_apis_send(apis->broker, req, &m);
}
