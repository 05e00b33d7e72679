/*
 * broker/handlers/h_DescribeCluster.c - DescribeCluster (key 60, KIP-700): the
 * cluster id, the controller and the brokers (from the metadata image,
 * as Metadata lists them), for admin clients.  v1 asks
 * for an endpoint type (KIP-919): a broker answers only for brokers (1);
 * asking it for controllers (2) gets MISMATCHED_ENDPOINT_TYPE.
 * Threads: handler.
 */
#include "broker/api_table.h"

#include "broker/broker.h"
#include "broker/route.h"
#include "meta/acl.h"
#include "net/server/reqchan.h"
#include "proto/gen/DescribeCluster.h"
#include "proto/wr.h"

#define ENDPOINT_TYPE_BROKER 1

/* The brokers from the image: every unfenced registered one with an
 * endpoint on the request's listener (Kafka's getAliveBrokerNodes; our
 * DescribeCluster versions have no IncludeFencedBrokers). */
static void
describecluster_fill(samsa_apis_t *apis, samsa_req_t *req,
                     samsa_DescribeClusterResponse_t *m)
{
    samsa_image_t       *img = samsa_apis_image(apis->broker, req);
    samsa_route_node_t  *nodes;
    size_t               i, n;

    m->ClusterId = samsa_slice_cstr(apis->node->cluster_id);
    m->ControllerId = samsa_apis_controller_id(apis);
    n = samsa_route_alive_nodes(img, req->listener, false, &req->arena,
                                &nodes);
    m->Brokers = samsa_arena_calloc(&req->arena, n + 1, sizeof(*m->Brokers));
    m->Brokers_cnt = (int32_t) n;
    for (i = 0; i < n; i++) {
        samsa_DescribeClusterBroker_init(&m->Brokers[i]);
        m->Brokers[i].BrokerId = nodes[i].id;
        m->Brokers[i].Host = samsa_slice_cstr(nodes[i].host);
        m->Brokers[i].Port = nodes[i].port;
        m->Brokers[i].Rack = nodes[i].rack != NULL
                                 ? samsa_slice_cstr(nodes[i].rack)
                                 : SAMSA_SLICE_NULL;
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
            m.ClusterAuthorizedOperations =
                samsa_apis_allowed_cluster(apis, req, SAMSA_ACL_OP_DESCRIBE)
                    ? samsa_apis_authorized_ops(
                          apis, req, NULL, SAMSA_ACL_RESOURCE_CLUSTER,
                          samsa_slice_cstr(SAMSA_ACL_CLUSTER_NAME))
                    : 0;
        }
    }
    samsa_apis_send(apis->broker, req, &m);
}
