/*
 * broker/handlers/h_DescribeCluster.c - DescribeCluster (key 60, KIP-700): the
 * cluster id, the controller and the brokers, for admin clients.  v1 asks
 * for an endpoint type (KIP-919): a broker answers only for brokers (1);
 * asking it for controllers (2) gets MISMATCHED_ENDPOINT_TYPE.
 * Threads: handler.
 */
#include "broker/api_table.h"

#include "net/server/reqchan.h"
#include "proto/gen/DescribeCluster.h"
#include "proto/wr.h"

#define ENDPOINT_TYPE_BROKER 1

/* Cluster operations allowed without an authorizer (see h_Metadata.c). */
#define CLUSTER_OPS                                                    \
    ((1 << 5) | (1 << 7) | (1 << 8) | (1 << 9) | (1 << 10) | (1 << 11) \
     | (1 << 12))

static void
describecluster_fill(samsa_apis_t *apis, samsa_req_t *req,
                     samsa_DescribeClusterResponse_t *m)
{
    const samsa_endpoint_t  *ep = samsa_node_endpoint(apis->node,
                                                      req->listener);

    m->ClusterId = samsa_slice_cstr(apis->node->cluster_id);
    m->ControllerId = samsa_apis_controller_id(apis);
    m->Brokers_cnt = 0;
    if (ep != NULL) {
        m->Brokers = samsa_arena_calloc(&req->arena, 1, sizeof(*m->Brokers));
        m->Brokers_cnt = 1;
        samsa_DescribeClusterBroker_init(&m->Brokers[0]);
        m->Brokers[0].BrokerId = apis->node->node_id;
        m->Brokers[0].Host = samsa_slice_cstr(ep->host);
        m->Brokers[0].Port = ep->port;
    }
}

void
samsa_h_DescribeCluster(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_DescribeClusterRequest_t   *rq = body;
    samsa_DescribeClusterResponse_t   m;

    samsa_DescribeClusterResponse_init(&m);
    m.EndpointType = rq->EndpointType;
    if (rq->EndpointType != ENDPOINT_TYPE_BROKER) {
        m.ErrorCode = SAMSA_ERR_MISMATCHED_ENDPOINT_TYPE;
        m.ErrorMessage = samsa_slice_cstr(
            "the broker listener describes brokers only (EndpointType 1)");
    } else {
        describecluster_fill(apis, req, &m);
        if (rq->IncludeClusterAuthorizedOperations) {
            m.ClusterAuthorizedOperations = CLUSTER_OPS;
        }
    }
    samsa_apis_send(apis->broker, req, &m);
}
