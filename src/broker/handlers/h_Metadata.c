/*
 * broker/handlers/h_Metadata.c - Metadata (key 3): this node as the only broker (at
 * the endpoint advertised for the listener the request came in on), the
 * cluster id, the controller, and the topics asked for (null, or empty in
 * v0: all of them) with their partitions, led by this node.  A topic that
 * does not exist is created when the request allows it (v4+, always
 * before) and auto.create.topics.enable is on, with num.partitions
 * partitions; on one node it exists at once, so it is answered in full.
 * Otherwise UNKNOWN_TOPIC_OR_PARTITION (UNKNOWN_TOPIC_ID when asked by id),
 * or INVALID_TOPIC_EXCEPTION for a name Kafka would refuse.
 * Threads: handler.
 */
#include "broker/api_table.h"

#include <string.h>

#include "broker/broker.h"
#include "meta/topic_name.h"
#include "net/server/reqchan.h"
#include "proto/gen/Metadata.h"
#include "proto/wr.h"

/* Kafka's AclOperation codes, as bits of an authorized-operations set. */
#define ACL_OP(code) (1 << (code))
/* Without an authorizer every operation on the cluster is allowed: ALTER,
 * DESCRIBE, CREATE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS,
 * IDEMPOTENT_WRITE. */
#define CLUSTER_OPS                                                    \
    (ACL_OP(5) | ACL_OP(7) | ACL_OP(8) | ACL_OP(9) | ACL_OP(10)        \
     | ACL_OP(11) | ACL_OP(12))
/* ... and on a topic: READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE,
 * DESCRIBE_CONFIGS, ALTER_CONFIGS. */
#define TOPIC_OPS                                                      \
    (ACL_OP(3) | ACL_OP(4) | ACL_OP(5) | ACL_OP(6) | ACL_OP(7)         \
     | ACL_OP(8) | ACL_OP(10) | ACL_OP(11))

static void
metadata_fill_brokers(samsa_apis_t *apis, samsa_req_t *req,
                      samsa_MetadataResponse_t *m)
{
    const samsa_endpoint_t  *ep = samsa_node_endpoint(apis->node,
                                                      req->listener);

    if (ep == NULL) {
        m->Brokers_cnt = 0;
        return;
    }
    m->Brokers = samsa_arena_calloc(&req->arena, 1, sizeof(*m->Brokers));
    m->Brokers_cnt = 1;
    samsa_MetadataResponseBroker_init(&m->Brokers[0]);
    m->Brokers[0].NodeId = apis->node->node_id;
    m->Brokers[0].Host = samsa_slice_cstr(ep->host);
    m->Brokers[0].Port = ep->port;
    m->Brokers[0].Rack = SAMSA_SLICE_NULL;
}

static void
metadata_fill_topic(samsa_req_t *req, const samsa_image_topic_t *t,
                    bool with_ops, samsa_MetadataResponseTopic_t *out)
{
    samsa_MetadataResponsePartition_t  *p;
    const samsa_image_partition_t      *ip;
    int32_t                             i;

    out->ErrorCode = 0;
    out->Name = (samsa_slice_t) { t->name, t->name_len };
    out->TopicId = t->id;
    out->IsInternal = t->is_internal;
    if (with_ops) {
        out->TopicAuthorizedOperations = TOPIC_OPS;
    }
    out->Partitions_cnt = t->npartitions;
    out->Partitions = samsa_arena_calloc(&req->arena,
                                         (size_t) t->npartitions + 1,
                                         sizeof(*out->Partitions));
    for (i = 0; i < t->npartitions; i++) {
        p = &out->Partitions[i];
        ip = &t->partitions[i];
        samsa_MetadataResponsePartition_init(p);
        p->PartitionIndex = ip->partition;
        p->LeaderId = ip->leader;
        p->LeaderEpoch = ip->leader_epoch;
        p->ReplicaNodes = (int32_t *) ip->replicas;
        p->ReplicaNodes_cnt = ip->nreplicas;
        p->IsrNodes = (int32_t *) ip->isr;
        p->IsrNodes_cnt = ip->nisr;
        p->OfflineReplicas_cnt = 0;
    }
}

/* Create name with the broker defaults (auto.create.topics.enable);
 * returns the error to answer, NONE if it now exists. */
static samsa_err_t
metadata_auto_create(samsa_apis_t *apis, samsa_req_t *req, samsa_slice_t name)
{
    samsa_controller_new_topic_t      nt;
    samsa_controller_create_topics_t  ct;
    samsa_controller_topic_result_t   res;
    samsa_err_t                       err;

    memset(&nt, 0, sizeof(nt));
    nt.name = name;
    nt.num_partitions = -1;
    nt.replication_factor = -1;
    memset(&ct, 0, sizeof(ct));
    ct.topics = &nt;
    ct.ntopics = 1;
    memset(&res, 0, sizeof(res));
    err = samsa_controller_create_topics(apis->broker->ctrl, &ct, &req->arena,
                                         &res);
    if (err != SAMSA_ERR_NONE) {
        return SAMSA_ERR_LEADER_NOT_AVAILABLE;
    }
    if (res.error == SAMSA_ERR_TOPIC_ALREADY_EXISTS) {
        return SAMSA_ERR_NONE;          /* someone else was quicker */
    }
    return res.error;
}

/* A requested topic: found, auto-created, or an error. */
static void
metadata_one(samsa_apis_t *apis, samsa_req_t *req, samsa_image_t **img,
             const samsa_MetadataRequestTopic_t *rt, bool allow_create,
             bool with_ops, samsa_MetadataResponseTopic_t *out)
{
    const samsa_image_topic_t  *t;
    samsa_err_t                 err;
    char                        errstr[256];
    char                       *name;

    samsa_MetadataResponseTopic_init(out);
    out->Name = rt->Name;
    out->TopicId = rt->TopicId;
    out->Partitions_cnt = 0;
    if (samsa_slice_is_null(rt->Name)) {
        t = samsa_image_topic_find_id(*img, rt->TopicId);
        if (t == NULL) {
            out->ErrorCode = SAMSA_ERR_UNKNOWN_TOPIC_ID;
            return;
        }
        metadata_fill_topic(req, t, with_ops, out);
        return;
    }
    t = samsa_image_topic_find(*img, rt->Name.ptr, rt->Name.len);
    if (t != NULL) {
        metadata_fill_topic(req, t, with_ops, out);
        return;
    }
    name = samsa_arena_strndup(&req->arena, rt->Name.ptr, rt->Name.len);
    if (samsa_topic_name_validate(name, rt->Name.len, errstr, sizeof(errstr))
        != SAMSA_ERR_NONE) {
        out->ErrorCode = SAMSA_ERR_INVALID_TOPIC_EXCEPTION;
        return;
    }
    if (!allow_create || samsa_topic_name_is_internal(name, rt->Name.len)) {
        out->ErrorCode = SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION;
        return;
    }
    err = metadata_auto_create(apis, req, rt->Name);
    if (err == SAMSA_ERR_NONE) {
        samsa_image_put(*img);
        *img = samsa_meta_image_get(apis->broker->meta);
        t = samsa_image_topic_find(*img, rt->Name.ptr, rt->Name.len);
    }
    if (t == NULL) {
        out->ErrorCode = err == SAMSA_ERR_NONE
                             ? SAMSA_ERR_LEADER_NOT_AVAILABLE : err;
        return;
    }
    metadata_fill_topic(req, t, with_ops, out);
}

static void
metadata_fill_topics(samsa_apis_t *apis, samsa_req_t *req,
                     const samsa_MetadataRequest_t *rq,
                     samsa_MetadataResponse_t *m)
{
    samsa_image_t  *img = samsa_meta_image_get(apis->broker->meta);
    bool            allow, ops = rq->IncludeTopicAuthorizedOperations;
    size_t          i, n;

    allow = (req->hdr.ApiVersion < 4 || rq->AllowAutoTopicCreation)
            && samsa_config_bool(apis->broker->cfg,
                                 "auto.create.topics.enable");
    /* null (v1+), or empty in v0: every topic */
    if (rq->Topics_cnt < 0 || (req->hdr.ApiVersion == 0
                               && rq->Topics_cnt == 0)) {
        n = samsa_image_topic_count(img);
        m->Topics = samsa_arena_calloc(&req->arena, n + 1,
                                       sizeof(*m->Topics));
        for (i = 0; i < n; i++) {
            samsa_MetadataResponseTopic_init(&m->Topics[i]);
            metadata_fill_topic(req, samsa_image_topic_at(img, i), ops,
                                &m->Topics[i]);
        }
        m->Topics_cnt = (int32_t) n;
        samsa_image_put(img);
        return;
    }
    m->Topics_cnt = rq->Topics_cnt;
    m->Topics = samsa_arena_calloc(&req->arena, (size_t) rq->Topics_cnt + 1,
                                   sizeof(*m->Topics));
    for (i = 0; i < (size_t) rq->Topics_cnt; i++) {
        metadata_one(apis, req, &img, &rq->Topics[i], allow, ops,
                     &m->Topics[i]);
    }
    samsa_image_put(img);
}

void
samsa_h_Metadata(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_MetadataRequest_t   *rq = body;
    samsa_MetadataResponse_t   m;

    samsa_MetadataResponse_init(&m);
    metadata_fill_brokers(apis, req, &m);
    m.ClusterId = samsa_slice_cstr(apis->node->cluster_id);
    m.ControllerId = samsa_apis_controller_id(apis);
    metadata_fill_topics(apis, req, rq, &m);
    if (rq->IncludeClusterAuthorizedOperations) {
        m.ClusterAuthorizedOperations = CLUSTER_OPS;
    }
    samsa_apis_send(apis->broker, req, &m);
}
