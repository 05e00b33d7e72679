/*
 * broker/handlers/h_BrokerHeartbeat.c - BrokerHeartbeat (key 63, KIP-631),
 * served on the CONTROLLER listeners: a registered broker's heartbeat to
 * the active controller (Kafka's QuorumController.processBrokerHeartbeat,
 * through the controller thread: samsa_controller_broker_heartbeat).  A
 * node that is not the active controller answers NOT_CONTROLLER.
 * WantShutDown is KIP-631's controlled shutdown: ShouldShutDown is true
 * once the broker leads no partition (the controller then fences it).
 * OfflineLogDirs is not acted on (docs/CLUSTER.md).
 * Threads: handler (an unfence waits for the metadata log commit).
 */
#include "broker/api_table.h"

#include "meta/controller/controller.h"
#include "proto/gen/BrokerHeartbeat.h"

void
samsa_h_BrokerHeartbeat(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_BrokerHeartbeatRequest_t        *rq = body;
    samsa_BrokerHeartbeatResponse_t        m;
    samsa_controller_heartbeat_t           hb;
    samsa_controller_heartbeat_result_t    res;
    samsa_err_t                            err;

    samsa_BrokerHeartbeatResponse_init(&m);
    if (apis->broker == NULL || apis->broker->ctrl == NULL) {
        m.ErrorCode = SAMSA_ERR_NOT_CONTROLLER;
        samsa_apis_send(apis->broker, req, &m);
        return;
    }
    hb.broker_id = rq->BrokerId;
    hb.broker_epoch = rq->BrokerEpoch;
    hb.current_offset = rq->CurrentMetadataOffset;
    hb.want_fence = rq->WantFence;
    hb.want_shutdown = rq->WantShutDown;
    err = samsa_controller_broker_heartbeat(apis->broker->ctrl, &hb, &res);
    if (err != SAMSA_ERR_NONE) {
        m.ErrorCode = samsa_apis_controller_error(err);
    } else {
        m.ErrorCode = (int16_t) res.error;
        m.IsCaughtUp = res.caught_up;
        m.IsFenced = res.fenced;
        m.ShouldShutDown = res.should_shutdown;
    }
    samsa_apis_send(apis->broker, req, &m);
}
