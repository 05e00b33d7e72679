/*
 * broker/handlers/h_ConsumerGroupDescribe.c - ConsumerGroupDescribe (key 69),
 * v0-v1: consumer-type groups (KIP-848) with their state, epochs,
 * assignor, and each member's subscription, assignment and target
 * assignment (broker/group/consumer_group.c); v1 adds each member's type.
 * Threads: handler.
 */
#include "broker/api_table.h"

#include "broker/group/consumer_group.h"
#include "meta/acl.h"
#include "net/server/reqchan.h"
#include "proto/errmap.h"
#include "proto/gen/ConsumerGroupDescribe.h"
#include "proto/wr.h"

void
samsa_h_ConsumerGroupDescribe(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_ConsumerGroupDescribeRequest_t  *rq = body;
    samsa_ConsumerGroupDescribeResponse_t  m;
    int32_t                                i;

    samsa_ConsumerGroupDescribeResponse_init(&m);
    m.Groups = samsa_apis_resp_array(req, rq->GroupIds_cnt, sizeof(*m.Groups),
                                     &m.Groups_cnt);
    for (i = 0; i < m.Groups_cnt; i++) {
        samsa_CGDescribedGroup_init(&m.Groups[i]);
        if (!samsa_apis_allowed(apis, req, NULL, SAMSA_ACL_OP_DESCRIBE,
                                SAMSA_ACL_RESOURCE_GROUP, rq->GroupIds[i])) {
            m.Groups[i].GroupId = rq->GroupIds[i];
            m.Groups[i].ErrorCode = SAMSA_ERR_GROUP_AUTHORIZATION_FAILED;
            continue;
        }
        samsa_consumer_group_describe(apis->broker->grp,
                            rq->GroupIds[i].ptr != NULL
                                ? rq->GroupIds[i] : samsa_slice_cstr(""),
                            &req->arena, &m.Groups[i]);
        m.Groups[i].ErrorCode =
            samsa_err_wire((samsa_err_t) m.Groups[i].ErrorCode);
        if (rq->IncludeAuthorizedOperations) {
            m.Groups[i].AuthorizedOperations = samsa_apis_authorized_ops(
                apis, req, NULL, SAMSA_ACL_RESOURCE_GROUP, rq->GroupIds[i]);
        }
    }
    samsa_apis_send(apis->broker, req, &m);
}
