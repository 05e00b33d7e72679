/*
 * broker/handlers/h_Heartbeat.c - Heartbeat (key 12), v0-v4: a member is alive;
 * the error tells it of a rebalance (REBALANCE_IN_PROGRESS) or that it was
 * fenced (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID).
 * Threads: handler.
 */
#include "broker/api_table.h"

#include "broker/group/grp.h"
#include "meta/acl.h"
#include "net/server/reqchan.h"
#include "proto/errmap.h"
#include "proto/gen/Heartbeat.h"
#include "proto/wr.h"

void
samsa_h_Heartbeat(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_HeartbeatRequest_t  *rq = body;
    samsa_HeartbeatResponse_t  m;

    samsa_HeartbeatResponse_init(&m);
    m.ErrorCode = !samsa_apis_allowed(apis, req, NULL, SAMSA_ACL_OP_READ,
                                      SAMSA_ACL_RESOURCE_GROUP, rq->GroupId)
                      ? SAMSA_ERR_GROUP_AUTHORIZATION_FAILED
                      : samsa_err_wire(samsa_grp_heartbeat(
                            apis->broker->grp, rq->GroupId, rq->MemberId,
                            rq->GroupInstanceId, rq->GenerationId));
    samsa_apis_send(apis->broker, req, &m);
}
