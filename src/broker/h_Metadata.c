/*
 * broker/h_Metadata.c - Metadata (key 3): this node as the only broker (at
 * the endpoint advertised for the listener the request came in on), the
 * cluster id, the controller, and the topics asked for.  Topics do not
 * exist yet: all-topics requests get none, named ones
 * UNKNOWN_TOPIC_OR_PARTITION (UNKNOWN_TOPIC_ID when named by id only).
 * Threads: handler.
 */
#include "broker/api_table.h"

#include "net/reqchan.h"
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
metadata_fill_topics(const samsa_MetadataRequest_t *rq, samsa_req_t *req,
                     samsa_MetadataResponse_t *m)
{
    samsa_MetadataResponseTopic_t  *t;
    int32_t                         i;

    /* null (v1+), or empty in v0: all topics, of which there are none */
    if (rq->Topics_cnt <= 0) {
        m->Topics_cnt = 0;
        return;
    }
    m->Topics = samsa_arena_calloc(&req->arena, (size_t) rq->Topics_cnt,
                                   sizeof(*m->Topics));
    m->Topics_cnt = rq->Topics_cnt;
    for (i = 0; i < rq->Topics_cnt; i++) {
        t = &m->Topics[i];
        samsa_MetadataResponseTopic_init(t);
        t->Name = rq->Topics[i].Name;
        t->TopicId = rq->Topics[i].TopicId;
        t->ErrorCode = samsa_slice_is_null(t->Name)
                           ? SAMSA_ERR_UNKNOWN_TOPIC_ID
                           : SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION;
        t->Partitions_cnt = 0;
    }
}

void
samsa_h_Metadata(samsa_apis_t *apis, samsa_req_t *req)
{
    samsa_MetadataRequest_t    rq;
    samsa_MetadataResponse_t   m;
    samsa_resp_t              *resp;
    samsa_wr_t                 wr;
    int16_t                    version = req->hdr.ApiVersion;

    samsa_MetadataRequest_init(&rq);
    if (samsa_MetadataRequest_decode(&req->body, version, &req->arena, &rq)
        != SAMSA_ERR_NONE) {
        samsa_apis_close(req, "malformed request body");
        return;
    }
    samsa_MetadataResponse_init(&m);
    metadata_fill_brokers(apis, req, &m);
    m.ClusterId = samsa_slice_cstr(apis->node->cluster_id);
    m.ControllerId = apis->node->controller_id;
    metadata_fill_topics(&rq, req, &m);
    if (rq.IncludeClusterAuthorizedOperations) {
        m.ClusterAuthorizedOperations = CLUSTER_OPS;
    }
    resp = samsa_resp_new_send(req);
    wr = (samsa_wr_t) { .buf = &resp->frame };
    samsa_MetadataResponse_encode(&wr, version, &m);
    samsa_reqchan_respond(resp);
}
