/*
 * client/admin/admin_acls.c - the ACL calls of the admin client
 * (include/samsa/admin.h): CreateAcls, DescribeAcls and DeleteAcls v1-v3
 * to any broker (a cluster node forwards the changes to the active
 * controller).
 * Threads: the caller's, holding the handle's call lock.
 */
#include <samsa/admin.h>

#include <string.h>

#include "client/admin/admin_int.h"
#include "proto/gen/CreateAcls.h"
#include "proto/gen/DeleteAcls.h"
#include "proto/gen/DescribeAcls.h"
#include "proto/gen/apis.h"

static samsa_slice_t
acls_slice(const char *s)
{
    return s != NULL ? samsa_slice_cstr(s) : SAMSA_SLICE_NULL;
}

samsa_err_t
samsa_admin_create_acls(samsa_admin_t *a, const samsa_acl_binding_t *acls,
                        size_t n, int64_t timeout_ms,
                        samsa_admin_items_t **resultp)
{
    samsa_arena_t                scratch = SAMSA_ARENA_INIT, *arena;
    samsa_CreateAclsRequest_t    req;
    samsa_CreateAclsResponse_t   resp;
    samsa_AclCreation_t         *cs;
    samsa_admin_items_t         *res;
    samsa_admin_rpc_t            rpc;
    samsa_err_t                  err, e;
    int64_t                      deadline;
    size_t                       i;

    *resultp = NULL;
    if (acls == NULL || n == 0) {
        return SAMSA_ERR__INVALID_ARG;
    }
    deadline = samsa_admin_deadline(a, timeout_ms);
    cs = samsa_arena_calloc(&scratch, n, sizeof(*cs));
    for (i = 0; i < n; i++) {
        samsa_AclCreation_init(&cs[i]);
        cs[i].ResourceType = acls[i].resource_type;
        cs[i].ResourceName = acls_slice(acls[i].resource_name);
        cs[i].ResourcePatternType = acls[i].pattern_type;
        cs[i].Principal = acls_slice(acls[i].principal);
        cs[i].Host = acls_slice(acls[i].host);
        cs[i].Operation = acls[i].operation;
        cs[i].PermissionType = acls[i].permission;
    }
    samsa_CreateAclsRequest_init(&req);
    req.Creations = cs;
    req.Creations_cnt = (int32_t) n;
    pthread_mutex_lock(&a->lock);
    err = samsa_admin_rpc_begin(a, &rpc, SAMSA_ADMIN_ANY,
                                SAMSA_API_CreateAcls, 1, 3, deadline);
    if (err == SAMSA_ERR_NONE) {
        err = samsa_admin_rpc_run(a, &rpc, samsa_CreateAclsRequest_encode_any,
                                  &req, samsa_CreateAclsResponse_decode_any,
                                  &resp, deadline, &scratch);
    }
    pthread_mutex_unlock(&a->lock);
    if (err == SAMSA_ERR_NONE && resp.Results_cnt != (int32_t) n) {
        err = SAMSA_ERR__BAD_MSG;
    }
    if (err != SAMSA_ERR_NONE) {
        samsa_arena_fini(&scratch);
        return err;
    }
    res = samsa_admin_result_new(sizeof(*res), &arena);
    res->items = samsa_arena_calloc(arena, n + 1, sizeof(*res->items));
    res->n = n;
    for (i = 0; i < n; i++) {
        e = (samsa_err_t) resp.Results[i].ErrorCode;
        res->items[i].name = samsa_admin_name(arena, cs[i].ResourceName);
        res->items[i].err = e;
        res->items[i].errmsg = samsa_admin_errmsg(
            arena, e, resp.Results[i].ErrorMessage);
    }
    samsa_arena_fini(&scratch);
    *resultp = res;
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_admin_describe_acls(samsa_admin_t *a, const samsa_acl_binding_t *f,
                          int64_t timeout_ms, samsa_acl_bindings_t **resultp)
{
    samsa_arena_t                  scratch = SAMSA_ARENA_INIT, *arena;
    samsa_DescribeAclsRequest_t    req;
    samsa_DescribeAclsResponse_t   resp;
    samsa_acl_bindings_t          *res;
    samsa_admin_rpc_t              rpc;
    samsa_err_t                    err;
    int64_t                        deadline;
    size_t                         n = 0;
    int32_t                        i, j;

    *resultp = NULL;
    if (f == NULL) {
        return SAMSA_ERR__INVALID_ARG;
    }
    deadline = samsa_admin_deadline(a, timeout_ms);
    samsa_DescribeAclsRequest_init(&req);
    req.ResourceTypeFilter = f->resource_type;
    req.ResourceNameFilter = acls_slice(f->resource_name);
    req.PatternTypeFilter = f->pattern_type;
    req.PrincipalFilter = acls_slice(f->principal);
    req.HostFilter = acls_slice(f->host);
    req.Operation = f->operation;
    req.PermissionType = f->permission;
    pthread_mutex_lock(&a->lock);
    err = samsa_admin_rpc_begin(a, &rpc, SAMSA_ADMIN_ANY,
                                SAMSA_API_DescribeAcls, 1, 3, deadline);
    if (err == SAMSA_ERR_NONE) {
        err = samsa_admin_rpc_run(a, &rpc,
                                  samsa_DescribeAclsRequest_encode_any, &req,
                                  samsa_DescribeAclsResponse_decode_any,
                                  &resp, deadline, &scratch);
    }
    pthread_mutex_unlock(&a->lock);
    if (err == SAMSA_ERR_NONE) {
        err = (samsa_err_t) resp.ErrorCode;
    }
    if (err != SAMSA_ERR_NONE) {
        samsa_arena_fini(&scratch);
        return err;
    }
    for (i = 0; i < resp.Resources_cnt; i++) {
        n += resp.Resources[i].Acls_cnt > 0
                 ? (size_t) resp.Resources[i].Acls_cnt : 0;
    }
    res = samsa_admin_result_new(sizeof(*res), &arena);
    res->acls = samsa_arena_calloc(arena, n + 1, sizeof(*res->acls));
    for (i = 0; i < resp.Resources_cnt; i++) {
        const samsa_DescribeAclsResource_t  *r = &resp.Resources[i];

        for (j = 0; j < r->Acls_cnt; j++) {
            samsa_acl_binding_t  *b = &res->acls[res->n++];

            b->resource_type = r->ResourceType;
            b->resource_name = samsa_admin_name(arena, r->ResourceName);
            b->pattern_type = r->PatternType;
            b->principal = samsa_admin_name(arena, r->Acls[j].Principal);
            b->host = samsa_admin_name(arena, r->Acls[j].Host);
            b->operation = r->Acls[j].Operation;
            b->permission = r->Acls[j].PermissionType;
        }
    }
    samsa_arena_fini(&scratch);
    *resultp = res;
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_admin_delete_acls(samsa_admin_t *a, const samsa_acl_binding_t *f,
                        int64_t timeout_ms, samsa_acl_bindings_t **resultp)
{
    samsa_arena_t                          scratch = SAMSA_ARENA_INIT;
    samsa_arena_t                         *arena;
    samsa_DeleteAclsRequest_t              req;
    samsa_DeleteAclsResponse_t             resp;
    samsa_DeleteAclsFilter_t               df;
    const samsa_DeleteAclsFilterResult_t  *fr;
    samsa_acl_bindings_t                  *res;
    samsa_admin_rpc_t                      rpc;
    samsa_err_t                            err;
    int64_t                                deadline;
    int32_t                                j;

    *resultp = NULL;
    if (f == NULL) {
        return SAMSA_ERR__INVALID_ARG;
    }
    deadline = samsa_admin_deadline(a, timeout_ms);
    samsa_DeleteAclsFilter_init(&df);
    df.ResourceTypeFilter = f->resource_type;
    df.ResourceNameFilter = acls_slice(f->resource_name);
    df.PatternTypeFilter = f->pattern_type;
    df.PrincipalFilter = acls_slice(f->principal);
    df.HostFilter = acls_slice(f->host);
    df.Operation = f->operation;
    df.PermissionType = f->permission;
    samsa_DeleteAclsRequest_init(&req);
    req.Filters = &df;
    req.Filters_cnt = 1;
    pthread_mutex_lock(&a->lock);
    err = samsa_admin_rpc_begin(a, &rpc, SAMSA_ADMIN_ANY,
                                SAMSA_API_DeleteAcls, 1, 3, deadline);
    if (err == SAMSA_ERR_NONE) {
        err = samsa_admin_rpc_run(a, &rpc, samsa_DeleteAclsRequest_encode_any,
                                  &req, samsa_DeleteAclsResponse_decode_any,
                                  &resp, deadline, &scratch);
    }
    pthread_mutex_unlock(&a->lock);
    if (err == SAMSA_ERR_NONE && resp.FilterResults_cnt != 1) {
        err = SAMSA_ERR__BAD_MSG;
    }
    if (err == SAMSA_ERR_NONE) {
        err = (samsa_err_t) resp.FilterResults[0].ErrorCode;
    }
    if (err != SAMSA_ERR_NONE) {
        samsa_arena_fini(&scratch);
        return err;
    }
    fr = &resp.FilterResults[0];
    res = samsa_admin_result_new(sizeof(*res), &arena);
    res->acls = samsa_arena_calloc(arena, (size_t) (fr->MatchingAcls_cnt > 0
                                                    ? fr->MatchingAcls_cnt
                                                    : 0) + 1,
                                   sizeof(*res->acls));
    for (j = 0; j < fr->MatchingAcls_cnt; j++) {
        const samsa_DeleteAclsMatchingAcl_t  *m = &fr->MatchingAcls[j];
        samsa_acl_binding_t                  *b = &res->acls[res->n++];

        b->resource_type = m->ResourceType;
        b->resource_name = samsa_admin_name(arena, m->ResourceName);
        b->pattern_type = m->PatternType;
        b->principal = samsa_admin_name(arena, m->Principal);
        b->host = samsa_admin_name(arena, m->Host);
        b->operation = m->Operation;
        b->permission = m->PermissionType;
    }
    samsa_arena_fini(&scratch);
    *resultp = res;
    return SAMSA_ERR_NONE;
}
