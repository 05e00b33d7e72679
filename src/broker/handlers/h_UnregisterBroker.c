/*
 * broker/handlers/h_UnregisterBroker.c - UnregisterBroker (key 64,
 * KIP-500), Kafka's ControllerApis.handleUnregisterBroker: the active
 * controller moves the broker's partition leadership away and writes an
 * UnregisterBrokerRecord (samsa_controller_unregister_broker).  A broker
 * listener that is not the active controller's forwards it there
 * (SAMSA_API_F_ADMIN); a node that cannot reach one answers
 * NOT_CONTROLLER.  No authorizer: Kafka checks ALTER on the cluster.
 * Threads: handler (waits for the metadata log commit).
 */
#include "broker/api_table.h"

#include "meta/acl.h"
#include "meta/controller/controller.h"
#include "proto/gen/UnregisterBroker.h"

void
samsa_h_UnregisterBroker(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_UnregisterBrokerRequest_t   *rq = body;
    samsa_UnregisterBrokerResponse_t   m;
    samsa_err_t                        err, error = SAMSA_ERR_NONE;

    samsa_UnregisterBrokerResponse_init(&m);
    if (apis->broker == NULL || apis->broker->ctrl == NULL) {
        m.ErrorCode = SAMSA_ERR_NOT_CONTROLLER;
        samsa_apis_send(apis->broker, req, &m);
        return;
    }
    if (!samsa_apis_allowed_cluster(apis, req, SAMSA_ACL_OP_ALTER)) {
        m.ErrorCode = SAMSA_ERR_CLUSTER_AUTHORIZATION_FAILED;
        samsa_apis_send(apis->broker, req, &m);
        return;
    }
    err = samsa_controller_unregister_broker(apis->broker->ctrl,
                                             rq->BrokerId, &error);
    if (err != SAMSA_ERR_NONE) {
        m.ErrorCode = samsa_apis_controller_error(err);
    } else {
        m.ErrorCode = (int16_t) error;      /* NONE, BROKER_ID_NOT_REGISTERED */
    }
    /* ErrorMessage stays the schema default "", as Kafka's answer sets
     * only the error code */
    samsa_apis_send(apis->broker, req, &m);
}
