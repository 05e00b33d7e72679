/*
 * broker/handlers/h_LeaveGroup.c - LeaveGroup (key 13), v0-v5: one member (v0-v2)
 * or a batch of them, by member id or by group instance id (KIP-345).
 * v0-v2 carry the member's error at the top level.
 * Threads: handler.
 */
#include "broker/api_table.h"

#include "broker/group/grp.h"
#include "meta/acl.h"
#include "net/server/reqchan.h"
#include "proto/errmap.h"
#include "proto/gen/LeaveGroup.h"
#include "proto/wr.h"

void
samsa_h_LeaveGroup(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_LeaveGroupRequest_t  *rq = body;
    samsa_LeaveGroupResponse_t  m;
    samsa_grp_leaver_t         *ls;
    samsa_err_t                 err;
    size_t                      i, n;

    if (!samsa_apis_allowed(apis, req, NULL, SAMSA_ACL_OP_READ,
                            SAMSA_ACL_RESOURCE_GROUP, rq->GroupId)) {
        samsa_LeaveGroupResponse_init(&m);
        m.ErrorCode = SAMSA_ERR_GROUP_AUTHORIZATION_FAILED;
        samsa_apis_send(apis->broker, req, &m);
        return;
    }
    n = req->hdr.ApiVersion <= 2 ? 1
        : (rq->Members_cnt > 0 ? (size_t) rq->Members_cnt : 0);
    ls = samsa_arena_calloc(&req->arena, n + 1, sizeof(*ls));
    for (i = 0; i < n; i++) {
        if (req->hdr.ApiVersion <= 2) {
            ls[i].member_id = rq->MemberId;
        } else {
            ls[i].member_id = rq->Members[i].MemberId;
            ls[i].instance_id = rq->Members[i].GroupInstanceId;
        }
    }
    err = samsa_grp_leave(apis->broker->grp, rq->GroupId, ls, n);
    samsa_LeaveGroupResponse_init(&m);
    m.ErrorCode = samsa_err_wire(err);
    if (req->hdr.ApiVersion <= 2 && err == SAMSA_ERR_NONE) {
        m.ErrorCode = samsa_err_wire(ls[0].error);
    }
    m.Members_cnt = err == SAMSA_ERR_NONE ? (int32_t) n : 0;
    m.Members = samsa_arena_calloc(&req->arena, n + 1, sizeof(*m.Members));
    for (i = 0; i < (size_t) m.Members_cnt; i++) {
        samsa_MemberResponse_init(&m.Members[i]);
        m.Members[i].MemberId = ls[i].member_id;
        m.Members[i].GroupInstanceId = ls[i].instance_id;
        m.Members[i].ErrorCode = samsa_err_wire(ls[i].error);
    }
    samsa_apis_send(apis->broker, req, &m);
}
