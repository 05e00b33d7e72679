/*
 * broker/handlers/h_DescribeCluster.c - DescribeCluster (key 60, KIP-700): the
 * cluster id, the controller and the brokers (from the metadata image,
 * as Metadata lists them), for admin clients.  v1 asks
 * for an endpoint type (KIP-919): a broker answers only for brokers (1);
 * asking it for controllers (2) gets MISMATCHED_ENDPOINT_TYPE.  On a KRaft
 * cluster node's CONTROLLER listener (Kafka's ControllerApis, KIP-919:
 * what an admin client with bootstrap.controllers asks) it answers the
 * controllers instead: the quorum's voters with their CONTROLLER
 * endpoints and the active controller as ControllerId; EndpointType 1
 * there is MISMATCHED_ENDPOINT_TYPE.
 * Threads: handler (the controller side waits for the quorum thread).
 */
#include "broker/api_table.h"

#include "broker/broker.h"
#include "broker/route.h"
#include "meta/acl.h"
#include "net/server/reqchan.h"
#include "proto/gen/DescribeCluster.h"
#include "proto/wr.h"

#include <string.h>

#include "config/config_kraft.h"
#include "meta/controller/controller.h"
#include "meta/quorum.h"

#define ENDPOINT_TYPE_BROKER      1
#define ENDPOINT_TYPE_CONTROLLER  2

/* The brokers from the image: every unfenced registered one with an
 * endpoint on the request's listener (Kafka's getAliveBrokerNodes), the
 * fenced ones too when a v2 request asks (KIP-1073: IsFenced says which;
 * Kafka's getBrokerNodes). */
static void
describecluster_fill(samsa_apis_t *apis, samsa_req_t *req,
                     samsa_DescribeClusterResponse_t *m, bool with_fenced)
{
    samsa_image_t               *img = samsa_apis_image(apis->broker, req);
    const samsa_image_broker_t  *br;
    samsa_route_node_t          *nodes;
    size_t                       i, n;

    m->ClusterId = samsa_slice_cstr(apis->node->cluster_id);
    m->ControllerId = samsa_apis_controller_id(apis);
    n = samsa_route_alive_nodes(img, req->listener, with_fenced, &req->arena,
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
        br = samsa_image_broker_find(img, nodes[i].id);
        m->Brokers[i].IsFenced = br != NULL && br->fenced;
    }
}

/* The controllers: the raft configuration's voters (any member knows
 * it), else controller.quorum.voters (or a dynamic quorum's initial
 * voters) on a node that is no member yet. */
static void
describecluster_controllers(samsa_apis_t *apis, samsa_req_t *req,
                            samsa_DescribeClusterResponse_t *m)
{
    const samsa_config_kraft_t  *k = samsa_config_kraft(apis->broker->cfg);
    samsa_quorum_t              *q = samsa_controller_quorum(apis->broker->ctrl);
    samsa_quorum_desc_t         *d;
    size_t                       i, n;

    m->ClusterId = samsa_slice_cstr(apis->node->cluster_id);
    m->ControllerId = samsa_controller_active_id(apis->broker->ctrl);
    d = samsa_arena_calloc(&req->arena, 1, sizeof(*d));
    if (q == NULL || samsa_quorum_describe(q, d, 2000) != SAMSA_ERR_NONE) {
        d->n_voters = 0;
    }
    n = d->n_voters > 0 ? d->n_voters : k->nvoters;
    m->Brokers = samsa_arena_calloc(&req->arena, n + 1, sizeof(*m->Brokers));
    m->Brokers_cnt = (int32_t) n;
    for (i = 0; i < n; i++) {
        samsa_DescribeClusterBroker_t  *b = &m->Brokers[i];

        samsa_DescribeClusterBroker_init(b);
        if (d->n_voters > 0) {
            b->BrokerId = d->voters[i].node_id;
            b->Host = samsa_slice_cstr(d->voters[i].host);
            b->Port = d->voters[i].port;
        } else {
            b->BrokerId = k->voters[i].id;
            b->Host = samsa_slice_cstr(k->voters[i].addr.host);
            b->Port = k->voters[i].addr.port;
        }
    }
}

void
samsa_h_DescribeCluster(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_DescribeClusterRequest_t   *rq = body;
    samsa_DescribeClusterResponse_t   m;
    bool                              ctl_side;

    samsa_DescribeClusterResponse_init(&m);
    m.EndpointType = rq->EndpointType;
    ctl_side = strcmp(apis->kind, "controller") == 0;
    if (ctl_side && (apis->broker == NULL || apis->broker->ctrl == NULL
                     || samsa_controller_quorum(apis->broker->ctrl) == NULL)) {
        m.ErrorCode = SAMSA_ERR_UNSUPPORTED_ENDPOINT_TYPE;
        m.ErrorMessage = samsa_slice_cstr(
            "a single node describes its brokers on a broker listener");
    } else if (ctl_side && rq->EndpointType != ENDPOINT_TYPE_CONTROLLER) {
        m.ErrorCode = SAMSA_ERR_MISMATCHED_ENDPOINT_TYPE;
        m.ErrorMessage = samsa_slice_cstr(
            "the CONTROLLER listener describes controllers only "
            "(EndpointType 2)");
    } else if (ctl_side) {
        describecluster_controllers(apis, req, &m);
    } else if (rq->EndpointType != ENDPOINT_TYPE_BROKER) {
        m.ErrorCode = SAMSA_ERR_MISMATCHED_ENDPOINT_TYPE;
        m.ErrorMessage = samsa_slice_cstr(
            "the broker listener describes brokers only (EndpointType 1)");
    } else {
        describecluster_fill(apis, req, &m,
                             req->hdr.ApiVersion >= 2
                                 && rq->IncludeFencedBrokers);
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
