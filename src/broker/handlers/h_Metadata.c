/*
 * broker/handlers/h_Metadata.c - Metadata (key 3): the brokers and the
 * topics' partitions from the metadata image (every unfenced registered
 * broker with an endpoint on the listener the request came in on; each
 * partition's leader, LEADER_NOT_AVAILABLE when it has none registered,
 * LISTENER_NOT_FOUND when the leader lacks the listener, as Kafka's
 * KRaftMetadataCache), the cluster id, the controller, and the topics
 * asked for (null, or empty in v0: all of them).  A topic that
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
#include "broker/forward.h"
#include "broker/route.h"
#include "meta/acl.h"
#include "meta/topic_name.h"
#include "net/server/reqchan.h"
#include "proto/gen/Metadata.h"
#include "proto/wr.h"
#include "util/diag.h"

/* What filling the topics of one answer reads. */
typedef struct metadata_ctx {
    samsa_apis_t          *apis;
    samsa_req_t           *req;
    const samsa_image_t   *img;         /* the image being answered from */
    bool                   with_ops;
} metadata_ctx_t;

/* Every unfenced registered broker with an endpoint on the listener the
 * request came in on, from the image (Kafka's getAliveBrokerNodes). */
static void
metadata_fill_brokers(samsa_req_t *req, const samsa_image_t *img,
                      samsa_MetadataResponse_t *m)
{
    samsa_route_node_t  *nodes;
    size_t               i, n;

    n = samsa_route_alive_nodes(img, req->listener, false, &req->arena,
                                &nodes);
    m->Brokers = samsa_arena_calloc(&req->arena, n + 1, sizeof(*m->Brokers));
    m->Brokers_cnt = (int32_t) n;
    for (i = 0; i < n; i++) {
        samsa_MetadataResponseBroker_init(&m->Brokers[i]);
        m->Brokers[i].NodeId = nodes[i].id;
        m->Brokers[i].Host = samsa_slice_cstr(nodes[i].host);
        m->Brokers[i].Port = nodes[i].port;
        m->Brokers[i].Rack = nodes[i].rack != NULL
                                 ? samsa_slice_cstr(nodes[i].rack)
                                 : SAMSA_SLICE_NULL;
    }
}

/* Kafka's isReplicaOffline: not registered, fenced, or without the
 * request's listener. */
static bool
metadata_replica_offline(const metadata_ctx_t *c, int32_t id)
{
    const samsa_image_broker_t  *b = samsa_image_broker_find(c->img, id);

    return b == NULL || b->fenced
           || samsa_image_broker_endpoint(b, c->req->listener) == NULL;
}

/* One partition as KRaftMetadataCache.getPartitionMetadata answers it: a
 * leader that is not registered (or none, -1) is LEADER_NOT_AVAILABLE; one
 * without the request's listener LISTENER_NOT_FOUND (v6+, else
 * LEADER_NOT_AVAILABLE); both with LeaderId -1. */
static void
metadata_fill_partition(const metadata_ctx_t *c,
                        const samsa_image_partition_t *ip,
                        samsa_MetadataResponsePartition_t *p)
{
    const samsa_image_broker_t  *leader;
    int32_t                      i, n = 0;

    samsa_MetadataResponsePartition_init(p);
    p->PartitionIndex = ip->partition;
    p->LeaderId = ip->leader;
    p->LeaderEpoch = ip->leader_epoch;
    p->ReplicaNodes = (int32_t *) ip->replicas;
    p->ReplicaNodes_cnt = ip->nreplicas;
    p->IsrNodes = (int32_t *) ip->isr;
    p->IsrNodes_cnt = ip->nisr;
    leader = ip->leader >= 0 ? samsa_image_broker_find(c->img, ip->leader)
                             : NULL;
    if (leader == NULL) {
        p->ErrorCode = SAMSA_ERR_LEADER_NOT_AVAILABLE;
        p->LeaderId = -1;
    } else if (samsa_image_broker_endpoint(leader, c->req->listener)
               == NULL) {
        p->ErrorCode = c->req->hdr.ApiVersion >= 6
                           ? SAMSA_ERR_LISTENER_NOT_FOUND
                           : SAMSA_ERR_LEADER_NOT_AVAILABLE;
        p->LeaderId = -1;
    }
    p->OfflineReplicas = samsa_arena_calloc(&c->req->arena,
                                            (size_t) ip->nreplicas + 1,
                                            sizeof(*p->OfflineReplicas));
    for (i = 0; i < ip->nreplicas; i++) {
        if (metadata_replica_offline(c, ip->replicas[i])) {
            p->OfflineReplicas[n++] = ip->replicas[i];
        }
    }
    p->OfflineReplicas_cnt = n;
}

static void
metadata_fill_topic(const metadata_ctx_t *c, const samsa_image_topic_t *t,
                    samsa_MetadataResponseTopic_t *out)
{
    int32_t  i;

    out->ErrorCode = 0;
    out->Name = (samsa_slice_t) { t->name, t->name_len };
    out->TopicId = t->id;
    out->IsInternal = t->is_internal;
    if (c->with_ops) {
        out->TopicAuthorizedOperations = samsa_apis_authorized_ops(
            c->apis, c->req, c->img, SAMSA_ACL_RESOURCE_TOPIC, out->Name);
    }
    out->Partitions_cnt = t->npartitions;
    out->Partitions = samsa_arena_calloc(&c->req->arena,
                                         (size_t) t->npartitions + 1,
                                         sizeof(*out->Partitions));
    for (i = 0; i < t->npartitions; i++) {
        metadata_fill_partition(c, &t->partitions[i], &out->Partitions[i]);
    }
}

/* Metadata's auto-creation on a cluster node that is not the active
 * controller: CreateTopics to it, each step bounded (a handler waits). */
#define METADATA_CREATE_IO_MS  2000

/* Create name with the broker defaults (auto.create.topics.enable);
 * returns the error to answer, NONE if it now exists.  On a cluster node
 * that is not the active controller (apis->forward: its broker listener)
 * the creation goes to the active controller, as Kafka's
 * AutoTopicCreationManager sends it; until it is done (no controller
 * known, not reachable, or refused: logged) the topic is answered
 * LEADER_NOT_AVAILABLE, which clients retry, as Kafka answers a topic
 * whose creation is pending. */
static samsa_err_t
metadata_auto_create(samsa_apis_t *apis, samsa_req_t *req, samsa_slice_t name)
{
    samsa_controller_new_topic_t      nt;
    samsa_controller_create_topics_t  ct;
    samsa_controller_topic_result_t   res;
    samsa_err_t                       err;
    int32_t                           active;

    active = samsa_controller_active_id(apis->broker->ctrl);
    if (apis->forward && active != apis->node->node_id) {
        err = active < 0 ? SAMSA_ERR_NOT_CONTROLLER
                         : samsa_forward_create_topic(
                               samsa_config_kraft(apis->broker->cfg),
                               apis->node->node_id, active,
                               samsa_arena_strndup(&req->arena, name.ptr,
                                                   name.len),
                               -1, -1, NULL, 0, METADATA_CREATE_IO_MS);
        if (err != SAMSA_ERR_NONE) {
            samsa_debug("cannot create %.*s through the active controller "
                       "%d yet: %s", (int) name.len, name.ptr, (int) active,
                       samsa_err_name(err));
            return SAMSA_ERR_LEADER_NOT_AVAILABLE;
        }
        return SAMSA_ERR_NONE;
    }
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
    if (err != SAMSA_ERR_NONE || res.error == SAMSA_ERR_NOT_CONTROLLER) {
        /* no longer the active controller: pending, as above */
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
    metadata_ctx_t              c = { apis, req, *img, with_ops };
    const samsa_image_topic_t  *t;
    samsa_err_t                 err;
    char                        errstr[256];
    char                       *name;

    samsa_MetadataResponseTopic_init(out);
    out->Name = rt->Name;
    out->TopicId = rt->TopicId;
    out->Partitions_cnt = 0;
    /* a non-zero id names the topic whatever the name says: the Java
     * client's describeTopics by id sends an empty name, not null, and
     * Kafka resolves every non-zero TopicId */
    if (samsa_slice_is_null(rt->Name) || !samsa_uuid_is_zero(rt->TopicId)) {
        t = samsa_image_topic_find_id(*img, rt->TopicId);
        if (t == NULL) {
            out->Name = SAMSA_SLICE_NULL;
            out->ErrorCode = SAMSA_ERR_UNKNOWN_TOPIC_ID;
            return;
        }
        if (!samsa_apis_allowed(apis, req, *img, SAMSA_ACL_OP_DESCRIBE,
                                SAMSA_ACL_RESOURCE_TOPIC,
                                (samsa_slice_t) { t->name, t->name_len })) {
            out->Name = SAMSA_SLICE_NULL;       /* ids are not secret */
            out->ErrorCode = SAMSA_ERR_TOPIC_AUTHORIZATION_FAILED;
            return;
        }
        metadata_fill_topic(&c, t, out);
        return;
    }
    /* a topic one may not describe is not said to exist or not */
    if (!samsa_apis_allowed(apis, req, *img, SAMSA_ACL_OP_DESCRIBE,
                            SAMSA_ACL_RESOURCE_TOPIC, rt->Name)) {
        out->TopicId = (samsa_uuid_t) { { 0 } };
        out->ErrorCode = SAMSA_ERR_TOPIC_AUTHORIZATION_FAILED;
        return;
    }
    t = samsa_image_topic_find(*img, rt->Name.ptr, rt->Name.len);
    if (t != NULL) {
        metadata_fill_topic(&c, t, out);
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
    if (!samsa_apis_allowed_cluster(apis, req, SAMSA_ACL_OP_CREATE)
        && !samsa_apis_allowed(apis, req, *img, SAMSA_ACL_OP_CREATE,
                               SAMSA_ACL_RESOURCE_TOPIC, rt->Name)) {
        out->ErrorCode = SAMSA_ERR_TOPIC_AUTHORIZATION_FAILED;
        return;
    }
    err = metadata_auto_create(apis, req, rt->Name);
    if (err == SAMSA_ERR_NONE) {
        /* the old image stays held too: earlier topics point into it */
        *img = samsa_apis_image(apis->broker, req);
        t = samsa_image_topic_find(*img, rt->Name.ptr, rt->Name.len);
    }
    if (t == NULL) {
        out->ErrorCode = err == SAMSA_ERR_NONE
                             ? SAMSA_ERR_LEADER_NOT_AVAILABLE : err;
        return;
    }
    c.img = *img;
    metadata_fill_topic(&c, t, out);
}

static void
metadata_fill_topics(samsa_apis_t *apis, samsa_req_t *req,
                     const samsa_MetadataRequest_t *rq,
                     samsa_MetadataResponse_t *m)
{
    samsa_image_t   *img = samsa_apis_image(apis->broker, req);
    bool             allow, ops = rq->IncludeTopicAuthorizedOperations;
    metadata_ctx_t   c = { apis, req, img, ops };
    const samsa_image_topic_t  *t;
    size_t           i, j, n;

    metadata_fill_brokers(req, img, m);

    allow = (req->hdr.ApiVersion < 4 || rq->AllowAutoTopicCreation)
            && samsa_config_bool(apis->broker->cfg,
                                 "auto.create.topics.enable");
    /* null (v1+), or empty in v0: every topic */
    if (rq->Topics_cnt < 0 || (req->hdr.ApiVersion == 0
                               && rq->Topics_cnt == 0)) {
        n = samsa_image_topic_count(img);
        m->Topics = samsa_arena_calloc(&req->arena, n + 1,
                                       sizeof(*m->Topics));
        for (i = 0, j = 0; i < n; i++) {
            t = samsa_image_topic_at(img, i);
            if (!samsa_apis_allowed(apis, req, img, SAMSA_ACL_OP_DESCRIBE,
                                    SAMSA_ACL_RESOURCE_TOPIC,
                                    (samsa_slice_t) { t->name,
                                                      t->name_len })) {
                continue;               /* left out, as Kafka does */
            }
            samsa_MetadataResponseTopic_init(&m->Topics[j]);
            metadata_fill_topic(&c, t, &m->Topics[j++]);
        }
        m->Topics_cnt = (int32_t) j;
        return;
    }
    m->Topics_cnt = rq->Topics_cnt;
    m->Topics = samsa_arena_calloc(&req->arena, (size_t) rq->Topics_cnt + 1,
                                   sizeof(*m->Topics));
    for (i = 0; i < (size_t) rq->Topics_cnt; i++) {
        metadata_one(apis, req, &img, &rq->Topics[i], allow, ops,
                     &m->Topics[i]);
    }
}

void
samsa_h_Metadata(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_MetadataRequest_t   *rq = body;
    samsa_MetadataResponse_t   m;

    samsa_MetadataResponse_init(&m);
    m.ClusterId = samsa_slice_cstr(apis->node->cluster_id);
    m.ControllerId = samsa_apis_controller_id(apis);
    metadata_fill_topics(apis, req, rq, &m);
    if (rq->IncludeClusterAuthorizedOperations) {
        m.ClusterAuthorizedOperations =
            samsa_apis_allowed_cluster(apis, req, SAMSA_ACL_OP_DESCRIBE)
                ? samsa_apis_authorized_ops(
                      apis, req, NULL, SAMSA_ACL_RESOURCE_CLUSTER,
                      samsa_slice_cstr(SAMSA_ACL_CLUSTER_NAME))
                : 0;
    }
    samsa_apis_send(apis->broker, req, &m);
}
