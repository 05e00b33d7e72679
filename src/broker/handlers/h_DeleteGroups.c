/*
 * broker/handlers/h_DeleteGroups.c - DeleteGroups (key 42), v0-v2: delete Empty
 * groups with their committed offsets (tombstones in __consumer_offsets);
 * GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP, INVALID_GROUP_ID per group.
 * Threads: handler.
 */
#include "broker/api_table.h"

#include "broker/group/grp.h"
#include "meta/acl.h"
#include "net/server/reqchan.h"
#include "proto/errmap.h"
#include "proto/gen/DeleteGroups.h"
#include "proto/wr.h"

void
samsa_h_DeleteGroups(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_DeleteGroupsRequest_t  *rq = body;
    samsa_DeleteGroupsResponse_t  m;
    int32_t                       i;

    samsa_DeleteGroupsResponse_init(&m);
    m.Results = samsa_apis_resp_array(req, rq->GroupsNames_cnt,
                                      sizeof(*m.Results), &m.Results_cnt);
    for (i = 0; i < m.Results_cnt; i++) {
        m.Results[i].GroupId = rq->GroupsNames[i];
        m.Results[i].ErrorCode =
            !samsa_apis_allowed(apis, req, NULL, SAMSA_ACL_OP_DELETE,
                                SAMSA_ACL_RESOURCE_GROUP, rq->GroupsNames[i])
                ? SAMSA_ERR_GROUP_AUTHORIZATION_FAILED
                : samsa_err_wire(samsa_grp_delete(apis->broker->grp,
                                                  rq->GroupsNames[i]));
    }
    samsa_apis_send(apis->broker, req, &m);
}
