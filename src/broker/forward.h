/*
 * broker/forward.h - admin requests (the SAMSA_API_F_ADMIN APIs:
 * CreateTopics, DeleteTopics, CreatePartitions, AlterConfigs,
 * IncrementalAlterConfigs, AlterClientQuotas) that reach a KRaft cluster
 * node which is not the active controller go to the active controller and
 * its answer goes back to the client, as Kafka's forwarding does (Kafka
 * wraps them in an Envelope; samsa sends the client's request bytes as
 * they came, header and all, to the active controller's CONTROLLER
 * listener, which serves these APIs on a cluster node, and relays the
 * response frame unchanged).  Where no controller is known, or it cannot
 * be reached, the request is handled here (the controller then answers
 * NOT_CONTROLLER).
 * Threads: a handler thread; the call blocks it for the round trip (a new
 * connection each time; admin requests are rare).
 */
#ifndef SAMSA_BROKER_FORWARD_H
#define SAMSA_BROKER_FORWARD_H

#include <stdbool.h>

#include "broker/api_table.h"
#include "net/server/req.h"

/* Forward req (an admin API on apis->forward) to the active controller:
 * true when req was answered (it belongs to the response then), false to
 * handle it here. */
bool samsa_forward_to_controller(samsa_apis_t *apis, samsa_req_t *req);

#endif /* SAMSA_BROKER_FORWARD_H */
