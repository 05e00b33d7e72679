/*
 * broker/handlers/h_DescribeGroups.c - DescribeGroups (key 15), v0-v5: state,
 * protocol and members of each group; a Stable group also shows each
 * member's metadata and assignment (Kafka's GroupSummary).  An unknown
 * group is "Dead" with no error, as Kafka answers these versions.
 * Threads: handler.
 */
#include "broker/api_table.h"

#include "broker/group/grp.h"
#include "meta/acl.h"
#include "net/server/reqchan.h"
#include "proto/errmap.h"
#include "proto/gen/DescribeGroups.h"
#include "proto/wr.h"

static void
describegroups_one(samsa_apis_t *apis, samsa_req_t *req, samsa_slice_t id,
                   bool with_ops, samsa_DescribedGroup_t *dg)
{
    samsa_grp_described_t          d;
    samsa_DescribedGroupMember_t  *mm;
    size_t                         i;

    samsa_DescribedGroup_init(dg);
    dg->GroupId = id;
    if (id.len == 0
        || !samsa_apis_allowed(apis, req, NULL, SAMSA_ACL_OP_DESCRIBE,
                               SAMSA_ACL_RESOURCE_GROUP, id)) {
        dg->ErrorCode = id.len == 0 ? SAMSA_ERR_INVALID_GROUP_ID
                                    : SAMSA_ERR_GROUP_AUTHORIZATION_FAILED;
        dg->GroupState = samsa_slice_cstr("");
        dg->ProtocolType = samsa_slice_cstr("");
        dg->ProtocolData = samsa_slice_cstr("");
        dg->Members_cnt = 0;
        return;
    }
    samsa_grp_describe(apis->broker->grp, id, &req->arena, &d);
    dg->ErrorCode = samsa_err_wire(d.error);
    if (with_ops) {
        dg->AuthorizedOperations = samsa_apis_authorized_ops(
            apis, req, NULL, SAMSA_ACL_RESOURCE_GROUP, id);
    }
    dg->GroupState = samsa_slice_cstr(samsa_grp_state_name(d.state));
    dg->ProtocolType = samsa_slice_cstr(d.protocol_type);
    dg->ProtocolData = samsa_slice_cstr(d.protocol_name);
    dg->Members_cnt = (int32_t) d.nmembers;
    dg->Members = samsa_arena_calloc(&req->arena, d.nmembers + 1,
                                     sizeof(*dg->Members));
    for (i = 0; i < d.nmembers; i++) {
        mm = &dg->Members[i];
        samsa_DescribedGroupMember_init(mm);
        mm->MemberId = samsa_slice_cstr(d.members[i].member_id);
        mm->GroupInstanceId = samsa_slice_cstr(d.members[i].instance_id);
        mm->ClientId = samsa_slice_cstr(d.members[i].client_id);
        mm->ClientHost = samsa_slice_cstr(d.members[i].client_host);
        mm->MemberMetadata = (samsa_slice_t) {
            (const char *) d.members[i].metadata, d.members[i].metadata_len };
        mm->MemberAssignment = (samsa_slice_t) {
            (const char *) d.members[i].assignment,
            d.members[i].assignment_len };
    }
}

void
samsa_h_DescribeGroups(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_DescribeGroupsRequest_t  *rq = body;
    samsa_DescribeGroupsResponse_t  m;
    int32_t                         i;

    samsa_DescribeGroupsResponse_init(&m);
    m.Groups = samsa_apis_resp_array(req, rq->Groups_cnt, sizeof(*m.Groups),
                                     &m.Groups_cnt);
    for (i = 0; i < m.Groups_cnt; i++) {
        describegroups_one(apis, req, rq->Groups[i],
                           rq->IncludeAuthorizedOperations, &m.Groups[i]);
    }
    samsa_apis_send(apis->broker, req, &m);
}
