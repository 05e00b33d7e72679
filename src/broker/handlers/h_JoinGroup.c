/*
 * broker/handlers/h_JoinGroup.c - JoinGroup (key 11), v0-v9: decode, hand to the
 * group coordinator (broker/group/grp.h), and answer from its callback, which
 * may run later (when the rebalance completes) on another handler or the
 * rebalance reaper.  v0 has no rebalance timeout (the session timeout
 * serves); v4+ get MEMBER_ID_REQUIRED on a first join (KIP-394).
 * Threads: handler; the answer on whichever thread completes the join.
 */
#include "broker/api_table.h"

#include <string.h>

#include "broker/group/grp.h"
#include "meta/acl.h"
#include "net/server/reqchan.h"
#include "proto/errmap.h"
#include "proto/gen/JoinGroup.h"
#include "proto/wr.h"

/* "/127.0.0.1" from the connection id "local:port-remote:port-proc-seq",
 * as Kafka shows a client's address. */
samsa_slice_t
samsa_apis_client_host(samsa_req_t *req)
{
    const char  *s = strchr(req->connection, '-');
    const char  *end, *colon;
    char        *out;
    size_t       len;

    if (s == NULL) {
        return samsa_slice_cstr("");
    }
    s++;
    end = strchr(s, '-');
    if (end == NULL) {
        end = s + strlen(s);
    }
    colon = memrchr(s, ':', (size_t) (end - s));
    len = colon != NULL ? (size_t) (colon - s) : (size_t) (end - s);
    out = samsa_arena_alloc(&req->arena, len + 2);
    out[0] = '/';
    memcpy(out + 1, s, len);
    out[len + 1] = '\0';
    return (samsa_slice_t) { out, len + 1 };
}

static void
joingroup_answer(void *ctx, const samsa_grp_join_result_t *res)
{
    samsa_apis_call_t          *call = ctx;
    samsa_req_t                *req = call->req;
    samsa_JoinGroupResponse_t   m;
    size_t                      i;

    samsa_JoinGroupResponse_init(&m);
    m.ErrorCode = samsa_err_wire(res->error);
    m.GenerationId = res->generation;
    m.ProtocolType = samsa_slice_cstr(res->protocol_type);
    m.ProtocolName = res->protocol_name != NULL
                         ? samsa_slice_cstr(res->protocol_name)
                         : (req->hdr.ApiVersion >= 7
                                ? SAMSA_SLICE_NULL
                                : (samsa_slice_t) { "", 0 });
    m.Leader = samsa_slice_cstr(res->leader_id);
    m.MemberId = samsa_slice_cstr(res->member_id);
    m.SkipAssignment = res->skip_assignment && req->hdr.ApiVersion >= 9;
    m.Members_cnt = (int32_t) res->nmembers;
    m.Members = samsa_arena_calloc(&req->arena, res->nmembers + 1,
                                   sizeof(*m.Members));
    for (i = 0; i < res->nmembers; i++) {
        samsa_JoinGroupResponseMember_init(&m.Members[i]);
        m.Members[i].MemberId = samsa_slice_cstr(res->members[i].member_id);
        m.Members[i].GroupInstanceId =
            samsa_slice_cstr(res->members[i].instance_id);
        m.Members[i].Metadata = (samsa_slice_t) {
            (const char *) res->members[i].metadata,
            res->members[i].metadata_len };
    }
    samsa_apis_send(call->broker, req, &m);
}

void
samsa_h_JoinGroup(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_JoinGroupRequest_t  *rq = body;
    samsa_grp_join_req_t       jr;
    samsa_grp_protocol_t      *protos;
    int32_t                    i;

    if (!samsa_apis_allowed(apis, req, NULL, SAMSA_ACL_OP_READ,
                            SAMSA_ACL_RESOURCE_GROUP, rq->GroupId)) {
        samsa_grp_join_result_t  denied = {
            .error = SAMSA_ERR_GROUP_AUTHORIZATION_FAILED, .generation = -1,
            .leader_id = "", .member_id = "",
        };

        joingroup_answer(samsa_apis_call(apis, req), &denied);
        return;
    }
    protos = samsa_arena_calloc(&req->arena,
                                (size_t) (rq->Protocols_cnt > 0
                                              ? rq->Protocols_cnt : 0) + 1,
                                sizeof(*protos));
    for (i = 0; i < rq->Protocols_cnt; i++) {
        protos[i].name = rq->Protocols[i].Name;
        protos[i].metadata = rq->Protocols[i].Metadata;
    }
    memset(&jr, 0, sizeof(jr));
    jr.group_id = rq->GroupId;
    jr.member_id = rq->MemberId;
    jr.instance_id = rq->GroupInstanceId;
    jr.client_id = samsa_slice_cstr(req->client_id != NULL ? req->client_id
                                                           : "");
    jr.client_host = samsa_apis_client_host(req);
    jr.protocol_type = rq->ProtocolType;
    jr.protocols = protos;
    jr.nprotocols = rq->Protocols_cnt > 0 ? (size_t) rq->Protocols_cnt : 0;
    jr.session_timeout_ms = rq->SessionTimeoutMs;
    jr.rebalance_timeout_ms = req->hdr.ApiVersion >= 1 ? rq->RebalanceTimeoutMs
                                                       : -1;
    jr.require_known_member_id = req->hdr.ApiVersion >= 4;
    jr.supports_skip_assignment = req->hdr.ApiVersion >= 9;
    /* The answer may wait for the rebalance: that is remote time, not the
     * handler's (the request quota, the request log), as in Kafka. */
    samsa_req_mark_local_done(req);
    samsa_grp_join(apis->broker->grp, &jr, joingroup_answer,
                   samsa_apis_call(apis, req));
}
