/*
 * broker/handlers/h_DeleteAcls.c - DeleteAcls (key 31): remove the ACL
 * bindings each filter matches, as Kafka's AclApis.handleDeleteAcls: ALTER
 * on the cluster (else CLUSTER_AUTHORIZATION_FAILED for every filter),
 * SECURITY_DISABLED without an authorizer, then the controller's
 * validation and one RemoveAccessControlEntryRecord per matched binding
 * (meta/controller/controller.h).  Forwarded to the active controller on
 * a cluster node (SAMSA_API_F_ADMIN) once this broker checked ALTER.
 * Threads: handler.
 */
#include "broker/api_table.h"

#include <string.h>

#include "meta/acl.h"
#include "proto/errmap.h"
#include "proto/gen/DeleteAcls.h"

static const char *
delacl_str(samsa_req_t *req, samsa_slice_t s)
{
    return s.ptr != NULL ? samsa_arena_strndup(&req->arena, s.ptr, s.len)
                         : NULL;
}

void
samsa_h_DeleteAcls(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_DeleteAclsRequest_t              *rq = body;
    samsa_DeleteAclsResponse_t              m;
    samsa_DeleteAclsFilterResult_t         *fr;
    samsa_DeleteAclsMatchingAcl_t          *ma;
    samsa_controller_acl_delete_result_t   *res;
    samsa_acl_filter_t                     *fs;
    samsa_err_t                             err = SAMSA_ERR_NONE;
    const char                             *msg = NULL;
    int16_t                                 code = 0;
    size_t                                  i, j, n;

    samsa_DeleteAclsResponse_init(&m);
    m.FilterResults = samsa_apis_resp_array(req, rq->Filters_cnt,
                                            sizeof(*m.FilterResults),
                                            &m.FilterResults_cnt);
    n = (size_t) m.FilterResults_cnt;
    fs = samsa_arena_calloc(&req->arena, n + 1, sizeof(*fs));
    res = samsa_arena_calloc(&req->arena, n + 1, sizeof(*res));
    for (i = 0; i < n; i++) {
        const samsa_DeleteAclsFilter_t  *f = &rq->Filters[i];

        fs[i] = (samsa_acl_filter_t) {
            .resource_type = samsa_acl_resource_type_known(
                f->ResourceTypeFilter),
            .pattern_type = samsa_acl_pattern_type_known(f->PatternTypeFilter),
            .operation = samsa_acl_operation_known(f->Operation),
            .permission = samsa_acl_permission_known(f->PermissionType),
            .resource_name = delacl_str(req, f->ResourceNameFilter),
            .principal = delacl_str(req, f->PrincipalFilter),
            .host = delacl_str(req, f->HostFilter),
        };
    }
    if (!samsa_apis_allowed_cluster(apis, req, SAMSA_ACL_OP_ALTER)) {
        err = SAMSA_ERR_CLUSTER_AUTHORIZATION_FAILED;
    } else if (!apis->broker->authz.enabled) {
        err = SAMSA_ERR_SECURITY_DISABLED;
        msg = "No Authorizer is configured.";
    } else if (n > 0) {
        err = samsa_controller_delete_acls(apis->broker->ctrl, fs, n,
                                           &req->arena, res);
        if (err != SAMSA_ERR_NONE) {
            code = samsa_apis_controller_error(err);
        }
    }
    for (i = 0; i < n; i++) {
        fr = &m.FilterResults[i];
        samsa_DeleteAclsFilterResult_init(fr);
        if (err != SAMSA_ERR_NONE) {
            fr->ErrorCode = code != 0 ? code : samsa_err_wire(err);
            fr->ErrorMessage = samsa_slice_cstr(msg);
            continue;
        }
        fr->ErrorCode = samsa_err_wire(res[i].error);
        fr->ErrorMessage = samsa_slice_cstr(res[i].message);
        fr->MatchingAcls = samsa_arena_calloc(&req->arena,
                                              res[i].nmatched + 1,
                                              sizeof(*fr->MatchingAcls));
        for (j = 0; j < res[i].nmatched; j++) {
            const samsa_acl_t  *acl = &res[i].matched[j];

            ma = &fr->MatchingAcls[j];
            samsa_DeleteAclsMatchingAcl_init(ma);
            ma->ResourceType = acl->resource_type;
            ma->ResourceName = samsa_slice_cstr(acl->resource_name);
            ma->PatternType = acl->pattern_type;
            ma->Principal = samsa_slice_cstr(acl->principal);
            ma->Host = samsa_slice_cstr(acl->host);
            ma->Operation = acl->operation;
            ma->PermissionType = acl->permission;
        }
        fr->MatchingAcls_cnt = (int32_t) res[i].nmatched;
    }
    samsa_apis_send(apis->broker, req, &m);
}
