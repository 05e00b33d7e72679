/*
 * broker/handlers/h_SyncGroup.c - SyncGroup (key 14), v0-v5: the leader's
 * assignment goes to every member; followers wait for it (the answer may
 * come from the leader's handler thread).
 * Threads: handler; the answer on whichever thread completes the sync.
 */
#include "broker/api_table.h"

#include <string.h>

#include "broker/group/grp.h"
#include "meta/acl.h"
#include "net/server/reqchan.h"
#include "proto/errmap.h"
#include "proto/gen/SyncGroup.h"
#include "proto/wr.h"

static void
syncgroup_answer(void *ctx, const samsa_grp_sync_result_t *res)
{
    samsa_apis_call_t          *call = ctx;
    samsa_req_t                *req = call->req;
    samsa_SyncGroupResponse_t   m;

    samsa_SyncGroupResponse_init(&m);
    m.ErrorCode = samsa_err_wire(res->error);
    m.ProtocolType = samsa_slice_cstr(res->protocol_type);
    m.ProtocolName = samsa_slice_cstr(res->protocol_name);
    m.Assignment = (samsa_slice_t) {
        res->assignment != NULL ? (const char *) res->assignment : "",
        res->assignment_len };
    samsa_apis_send(call->broker, req, &m);
}

void
samsa_h_SyncGroup(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_SyncGroupRequest_t  *rq = body;
    samsa_grp_sync_req_t       sr;
    samsa_grp_assignment_t    *as;
    int32_t                    i, n;

    if (!samsa_apis_allowed(apis, req, NULL, SAMSA_ACL_OP_READ,
                            SAMSA_ACL_RESOURCE_GROUP, rq->GroupId)) {
        samsa_grp_sync_result_t  denied = {
            .error = SAMSA_ERR_GROUP_AUTHORIZATION_FAILED,
        };

        syncgroup_answer(samsa_apis_call(apis, req), &denied);
        return;
    }
    n = rq->Assignments_cnt > 0 ? rq->Assignments_cnt : 0;
    as = samsa_arena_calloc(&req->arena, (size_t) n + 1, sizeof(*as));
    for (i = 0; i < n; i++) {
        as[i].member_id = rq->Assignments[i].MemberId;
        as[i].assignment = rq->Assignments[i].Assignment;
    }
    memset(&sr, 0, sizeof(sr));
    sr.group_id = rq->GroupId;
    sr.generation = rq->GenerationId;
    sr.member_id = rq->MemberId;
    sr.instance_id = rq->GroupInstanceId;
    sr.protocol_type = rq->ProtocolType;
    sr.protocol_name = rq->ProtocolName;
    sr.assignments = as;
    sr.nassignments = (size_t) n;
    /* The answer may wait for the leader's assignment: remote time, not
     * the handler's (the request quota, the request log), as in Kafka. */
    samsa_req_mark_local_done(req);
    samsa_grp_sync(apis->broker->grp, &sr, syncgroup_answer,
                   samsa_apis_call(apis, req));
}
