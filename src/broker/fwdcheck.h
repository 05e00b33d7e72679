/*
 * broker/fwdcheck.h - the authorization of admin requests
 * (SAMSA_API_F_ADMIN) before a cluster node forwards them to the active
 * controller, whose controller listener does not check them
 * (broker/authz.h): a request is forwarded only when every item in it is
 * authorized; otherwise this node's handler answers it, its checks giving
 * the denied items their error (the allowed items of such a mixed request
 * then answer NOT_CONTROLLER from this node's controller, and the client
 * retries them alone).  Also the ConfigResource check the config APIs
 * share.
 * Threads: handler.
 */
#ifndef SAMSA_BROKER_FWDCHECK_H
#define SAMSA_BROKER_FWDCHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "broker/api_table.h"

/* Whether the decoded admin request body may be forwarded as it is. */
bool samsa_fwdcheck_forwardable(samsa_apis_t *apis, const samsa_req_t *req,
                                const void *body);

/* Kafka's config resource authorization (KafkaApis / ConfigHelper):
 * TOPIC resources on the topic (*err TOPIC_AUTHORIZATION_FAILED), GROUP
 * on the group (GROUP_AUTHORIZATION_FAILED), the others (BROKER,
 * BROKER_LOGGER, CLIENT_METRICS) on the cluster
 * (CLUSTER_AUTHORIZATION_FAILED); operation DESCRIBE_CONFIGS or
 * ALTER_CONFIGS.  *err is set either way; use it when false. */
bool samsa_fwdcheck_config_allowed(samsa_apis_t *apis, const samsa_req_t *req,
                                   const samsa_image_t *img, int8_t operation,
                                   int8_t config_type, samsa_slice_t name,
                                   samsa_err_t *err);

#endif /* SAMSA_BROKER_FWDCHECK_H */
