/*
 * broker/handlers/h_AllocateProducerIds.c - AllocateProducerIds (key 67,
 * v0, KIP-730), served on the CONTROLLER listeners: a broker that is not
 * the active controller gets its next block of producer ids
 * (broker/pidmgr.h) from it.  The controller thread checks the broker
 * epoch (STALE_BROKER_EPOCH, also for a broker that is not registered, as
 * Kafka's ClusterControlManager.checkBrokerEpoch) and records the block
 * (a ProducerIdsRecord) before the answer; a node that is not the active
 * controller answers NOT_CONTROLLER (samsa_controller_allocate_producer_ids).
 * Threads: handler (the answer waits for the metadata log commit).
 */
#include "broker/api_table.h"

#include <inttypes.h>

#include "meta/controller/controller.h"
#include "proto/gen/AllocateProducerIds.h"
#include "util/diag.h"

void
samsa_h_AllocateProducerIds(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_AllocateProducerIdsRequest_t    *rq = body;
    samsa_AllocateProducerIdsResponse_t    m;
    samsa_controller_pid_req_t             preq;
    int64_t                                first = -1;
    samsa_err_t                            err;

    samsa_AllocateProducerIdsResponse_init(&m);
    m.ProducerIdStart = -1;
    m.ProducerIdLen = 0;
    if (apis->broker == NULL || apis->broker->ctrl == NULL) {
        m.ErrorCode = SAMSA_ERR_NOT_CONTROLLER;
        samsa_apis_send(apis->broker, req, &m);
        return;
    }
    preq.broker_id = rq->BrokerId;
    preq.broker_epoch = rq->BrokerEpoch;
    err = samsa_controller_allocate_producer_ids(apis->broker->ctrl, &preq,
                                                 &first);
    if (err == SAMSA_ERR_NONE) {
        m.ProducerIdStart = first;
        m.ProducerIdLen = SAMSA_CONTROLLER_PRODUCER_ID_BLOCK;
        samsa_debug("producer ids %" PRId64 "..%" PRId64 " for broker %"
                    PRId32 " (%s)", first,
                    first + SAMSA_CONTROLLER_PRODUCER_ID_BLOCK - 1,
                    rq->BrokerId, req->connection);
    } else {
        m.ErrorCode = samsa_apis_controller_error(err);
    }
    samsa_apis_send(apis->broker, req, &m);
}
