/*
 * broker/handlers/h_CreateAcls.c - CreateAcls (key 30): add ACL bindings,
 * as Kafka's AclApis.handleCreateAcls: ALTER on the cluster
 * (CLUSTER_AUTHORIZATION_FAILED for every creation), SECURITY_DISABLED
 * without an authorizer, INVALID_REQUEST for a CLUSTER binding not named
 * kafka-cluster or an empty name, then the controller's validation and
 * one AccessControlEntryRecord each (meta/controller/controller.h).  On a
 * cluster node that is not the active controller the request is forwarded
 * (SAMSA_API_F_ADMIN) once this broker has checked ALTER on the cluster.
 * Threads: handler.
 */
#include "broker/api_table.h"

#include <string.h>

#include "meta/acl.h"
#include "proto/errmap.h"
#include "proto/gen/CreateAcls.h"

static const char *
cacl_str(samsa_req_t *req, samsa_slice_t s)
{
    return samsa_arena_strndup(&req->arena, s.ptr != NULL ? s.ptr : "",
                               s.len);
}

void
samsa_h_CreateAcls(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_CreateAclsRequest_t   *rq = body;
    samsa_CreateAclsResponse_t   m;
    samsa_controller_result_t   *res;
    samsa_acl_t                 *acls;
    samsa_err_t                  err = SAMSA_ERR_NONE;
    int16_t                      code = 0;
    const char                  *msg = NULL;
    size_t                      *at;
    size_t                       i, n, nvalid = 0;

    samsa_CreateAclsResponse_init(&m);
    m.Results = samsa_apis_resp_array(req, rq->Creations_cnt,
                                      sizeof(*m.Results), &m.Results_cnt);
    n = (size_t) m.Results_cnt;
    if (!samsa_apis_allowed_cluster(apis, req, SAMSA_ACL_OP_ALTER)) {
        err = SAMSA_ERR_CLUSTER_AUTHORIZATION_FAILED;
    } else if (!apis->broker->authz.enabled) {
        err = SAMSA_ERR_SECURITY_DISABLED;
        msg = "No Authorizer is configured.";
    }
    acls = samsa_arena_calloc(&req->arena, n + 1, sizeof(*acls));
    at = samsa_arena_calloc(&req->arena, n + 1, sizeof(*at));
    res = samsa_arena_calloc(&req->arena, n + 1, sizeof(*res));
    for (i = 0; i < n && err == SAMSA_ERR_NONE; i++) {
        const samsa_AclCreation_t  *c = &rq->Creations[i];

        samsa_AclCreationResult_init(&m.Results[i]);
        if (c->ResourceType == SAMSA_ACL_RESOURCE_CLUSTER
            && !samsa_slice_eq_cstr(c->ResourceName,
                                    SAMSA_ACL_CLUSTER_NAME)) {
            m.Results[i].ErrorCode = SAMSA_ERR_INVALID_REQUEST;
            m.Results[i].ErrorMessage = samsa_slice_cstr(
                "The only valid name for the CLUSTER resource is "
                SAMSA_ACL_CLUSTER_NAME);
            continue;
        }
        if (c->ResourceName.len == 0) {
            m.Results[i].ErrorCode = SAMSA_ERR_INVALID_REQUEST;
            m.Results[i].ErrorMessage = samsa_slice_cstr(
                "Invalid empty resource name");
            continue;
        }
        acls[nvalid] = (samsa_acl_t) {
            .resource_type = c->ResourceType,
            .pattern_type = c->ResourcePatternType,
            .operation = c->Operation,
            .permission = c->PermissionType,
            .resource_name = cacl_str(req, c->ResourceName),
            .principal = cacl_str(req, c->Principal),
            .host = cacl_str(req, c->Host),
        };
        at[nvalid++] = i;
    }
    if (err == SAMSA_ERR_NONE && nvalid > 0) {
        err = samsa_controller_create_acls(apis->broker->ctrl, acls, nvalid,
                                           &req->arena, res);
        if (err != SAMSA_ERR_NONE) {
            code = samsa_apis_controller_error(err);
        }
        for (i = 0; i < nvalid && err == SAMSA_ERR_NONE; i++) {
            m.Results[at[i]].ErrorCode = samsa_err_wire(res[i].error);
            m.Results[at[i]].ErrorMessage = samsa_slice_cstr(res[i].message);
        }
    }
    if (err != SAMSA_ERR_NONE) {
        code = code != 0 ? code : samsa_err_wire(err);
        for (i = 0; i < n; i++) {
            samsa_AclCreationResult_init(&m.Results[i]);
            m.Results[i].ErrorCode = code;
            m.Results[i].ErrorMessage = samsa_slice_cstr(msg);
        }
    }
    samsa_apis_send(apis->broker, req, &m);
}
