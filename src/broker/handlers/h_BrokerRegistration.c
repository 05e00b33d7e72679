/*
 * broker/handlers/h_BrokerRegistration.c - BrokerRegistration (key 62,
 * KIP-631), served on the CONTROLLER listeners: a broker registers with
 * the active controller (Kafka's QuorumController.registerBroker) and gets
 * its broker epoch.  A ClusterId other than this node's answers
 * INCONSISTENT_CLUSTER_ID; a node that is not the active controller (or a
 * controller listener without one) answers NOT_CONTROLLER, and the broker
 * tries again where the quorum's leader is then (broker/lifecycle.h).
 * In cluster mode the broker stays fenced until its first caught-up
 * BrokerHeartbeat (h_BrokerHeartbeat.c).  The registration replaces the
 * broker's earlier one, unless that one is of another incarnation and its
 * session is still valid: DUPLICATE_BROKER_REGISTRATION (the controller's
 * ctl_check_duplicate, docs/CLUSTER.md).  Features,
 * log dirs, the ZK flag and PreviousBrokerEpoch are decoded and not kept.
 * Threads: handler (the registration waits for the metadata log commit).
 */
#include "broker/api_table.h"

#include <inttypes.h>
#include <string.h>

#include "meta/controller/controller.h"
#include "proto/gen/BrokerRegistration.h"
#include "util/diag.h"

void
samsa_h_BrokerRegistration(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_BrokerRegistrationRequest_t    *rq = body;
    samsa_BrokerRegistrationResponse_t    m;
    samsa_controller_broker_reg_t         reg;
    samsa_controller_endpoint_t          *eps;
    const char                           *cid = apis->node->cluster_id;
    int64_t                               epoch = -1;
    int32_t                               i;
    samsa_err_t                           err;

    samsa_BrokerRegistrationResponse_init(&m);
    if (apis->broker == NULL || apis->broker->ctrl == NULL) {
        m.ErrorCode = SAMSA_ERR_NOT_CONTROLLER;
        samsa_apis_send(apis->broker, req, &m);
        return;
    }
    if (rq->ClusterId.len != strlen(cid)
        || memcmp(rq->ClusterId.ptr, cid, rq->ClusterId.len) != 0) {
        samsa_warn("%s: broker %" PRId32 " registers with cluster id %.*s, "
                   "not %s", req->connection, rq->BrokerId,
                   (int) rq->ClusterId.len, (const char *) rq->ClusterId.ptr,
                   cid);
        m.ErrorCode = SAMSA_ERR_INCONSISTENT_CLUSTER_ID;
        samsa_apis_send(apis->broker, req, &m);
        return;
    }
    if (rq->BrokerId < 0 || rq->Listeners_cnt < 0) {
        m.ErrorCode = SAMSA_ERR_INVALID_REGISTRATION;
        samsa_apis_send(apis->broker, req, &m);
        return;
    }
    /* strings as C strings, in the request's arena */
    eps = samsa_arena_calloc(&req->arena, (size_t) rq->Listeners_cnt + 1,
                             sizeof(*eps));
    for (i = 0; i < rq->Listeners_cnt; i++) {
        eps[i].listener = samsa_arena_strndup(&req->arena,
                                              rq->Listeners[i].Name.ptr,
                                              rq->Listeners[i].Name.len);
        eps[i].host = samsa_arena_strndup(&req->arena,
                                          rq->Listeners[i].Host.ptr,
                                          rq->Listeners[i].Host.len);
        eps[i].port = rq->Listeners[i].Port;
        eps[i].security_protocol = rq->Listeners[i].SecurityProtocol;
    }
    memset(&reg, 0, sizeof(reg));
    reg.broker_id = rq->BrokerId;
    reg.incarnation_id = rq->IncarnationId;
    reg.endpoints = eps;
    reg.nendpoints = (size_t) rq->Listeners_cnt;
    reg.rack = rq->Rack.ptr == NULL
               ? NULL
               : samsa_arena_strndup(&req->arena, rq->Rack.ptr,
                                     rq->Rack.len);
    err = samsa_controller_register_broker(apis->broker->ctrl, &reg, &epoch);
    if (err == SAMSA_ERR_NONE) {
        m.BrokerEpoch = epoch;
        samsa_info("broker %" PRId32 " registered from %s with %" PRId32
                   " listener(s), broker epoch %" PRId64, rq->BrokerId,
                   req->connection, rq->Listeners_cnt, epoch);
    } else {
        m.ErrorCode = samsa_apis_controller_error(err);
    }
    samsa_apis_send(apis->broker, req, &m);
}
