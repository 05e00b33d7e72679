/*
 * broker/handlers/h_ConsumerGroupHeartbeat.c - ConsumerGroupHeartbeat (key 68),
 * v0-v1: a member of a consumer-type group (KIP-848) joins, heartbeats,
 * reconciles its assignment and leaves; the coordinator (broker/group/consumer_group.c)
 * answers its member epoch and the partitions it may use now.  READ on
 * the group, DESCRIBE on every subscribed topic name, as Kafka's.
 * Threads: handler.
 */
#include "broker/api_table.h"

#include "broker/group/consumer_group.h"
#include "meta/acl.h"
#include "net/server/reqchan.h"
#include "proto/errmap.h"
#include "proto/gen/ConsumerGroupHeartbeat.h"
#include "proto/wr.h"

void
samsa_h_ConsumerGroupHeartbeat(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_ConsumerGroupHeartbeatRequest_t  *rq = body;
    samsa_ConsumerGroupHeartbeatResponse_t  m;
    int32_t                                 i;

    samsa_ConsumerGroupHeartbeatResponse_init(&m);
    if (!samsa_apis_allowed(apis, req, NULL, SAMSA_ACL_OP_READ,
                            SAMSA_ACL_RESOURCE_GROUP, rq->GroupId)) {
        m.ErrorCode = SAMSA_ERR_GROUP_AUTHORIZATION_FAILED;
        samsa_apis_send(apis->broker, req, &m);
        return;
    }
    /* Kafka's KafkaApis: a member may subscribe only to topics it may
     * DESCRIBE; any other in the list answers TOPIC_AUTHORIZATION_FAILED
     * (no message), before the coordinator sees the request */
    for (i = 0; i < rq->SubscribedTopicNames_cnt; i++) {
        if (!samsa_apis_allowed(apis, req, NULL, SAMSA_ACL_OP_DESCRIBE,
                                SAMSA_ACL_RESOURCE_TOPIC,
                                rq->SubscribedTopicNames[i])) {
            m.ErrorCode = SAMSA_ERR_TOPIC_AUTHORIZATION_FAILED;
            samsa_apis_send(apis->broker, req, &m);
            return;
        }
    }
    samsa_consumer_group_heartbeat(apis->broker->grp, req->hdr.ApiVersion, rq,
                         samsa_slice_cstr(req->client_id != NULL
                                              ? req->client_id : ""),
                         samsa_apis_client_host(req), &req->arena, &m);
    m.ErrorCode = samsa_err_wire((samsa_err_t) m.ErrorCode);
    samsa_apis_send(apis->broker, req, &m);
}
