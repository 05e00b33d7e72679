/*
 * broker/handlers/h_DescribeAcls.c - DescribeAcls (key 29): the ACL
 * bindings of this broker's image matching the filter, grouped by
 * resource pattern, as Kafka's AclApis.handleDescribeAcls: DESCRIBE on
 * the cluster (else CLUSTER_AUTHORIZATION_FAILED), SECURITY_DISABLED "No
 * Authorizer is configured on the broker" without an authorizer,
 * INVALID_REQUEST for a filter with UNKNOWN codes (and, below v1, a
 * pattern other than LITERAL, as DescribeAclsRequest.validate).
 * Threads: handler.
 */
#include "broker/api_table.h"

#include <string.h>

#include "meta/acl.h"
#include "proto/errmap.h"
#include "proto/gen/DescribeAcls.h"

static const char *
dacl_str(samsa_req_t *req, samsa_slice_t s)
{
    return s.ptr != NULL ? samsa_arena_strndup(&req->arena, s.ptr, s.len)
                         : NULL;
}

void
samsa_h_DescribeAcls(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_DescribeAclsRequest_t   *rq = body;
    samsa_DescribeAclsResponse_t   m;
    samsa_DescribeAclsResource_t  *r;
    samsa_AclDescription_t        *d;
    samsa_acl_filter_t             f;
    const samsa_acl_set_t         *set;
    const samsa_acl_t             *acl;
    samsa_image_t                 *img;
    size_t                         i, j, n, nres = 0;

    samsa_DescribeAclsResponse_init(&m);
    f = (samsa_acl_filter_t) {
        .resource_type = samsa_acl_resource_type_known(rq->ResourceTypeFilter),
        .pattern_type = samsa_acl_pattern_type_known(rq->PatternTypeFilter),
        .operation = samsa_acl_operation_known(rq->Operation),
        .permission = samsa_acl_permission_known(rq->PermissionType),
        .resource_name = dacl_str(req, rq->ResourceNameFilter),
        .principal = dacl_str(req, rq->PrincipalFilter),
        .host = dacl_str(req, rq->HostFilter),
    };
    if (!samsa_apis_allowed_cluster(apis, req, SAMSA_ACL_OP_DESCRIBE)) {
        m.ErrorCode = SAMSA_ERR_CLUSTER_AUTHORIZATION_FAILED;
    } else if (!apis->broker->authz.enabled) {
        m.ErrorCode = SAMSA_ERR_SECURITY_DISABLED;
        m.ErrorMessage = samsa_slice_cstr(
            "No Authorizer is configured on the broker");
    } else if (samsa_acl_filter_is_unknown(&f)) {
        m.ErrorCode = SAMSA_ERR_INVALID_REQUEST;
        m.ErrorMessage = samsa_slice_cstr(
            "Filter contain UNKNOWN elements");
    }
    if (m.ErrorCode != 0) {
        samsa_apis_send(apis->broker, req, &m);
        return;
    }
    img = samsa_apis_image(apis->broker, req);
    set = samsa_image_acls(img);
    n = samsa_acl_set_count(set);
    m.Resources = samsa_arena_calloc(&req->arena, n + 1, sizeof(*m.Resources));
    for (i = 0; i < n; i++) {
        acl = samsa_acl_set_at(set, i);
        if (!samsa_acl_filter_matches(&f, acl)) {
            continue;
        }
        /* the resource pattern's entry, first time seen */
        for (j = 0; j < nres; j++) {
            r = &m.Resources[j];
            if (r->ResourceType == acl->resource_type
                && r->PatternType == acl->pattern_type
                && samsa_slice_eq_cstr(r->ResourceName,
                                       acl->resource_name)) {
                break;
            }
        }
        r = &m.Resources[j];
        if (j == nres) {
            samsa_DescribeAclsResource_init(r);
            r->ResourceType = acl->resource_type;
            r->ResourceName = samsa_slice_cstr(acl->resource_name);
            r->PatternType = acl->pattern_type;
            r->Acls = samsa_arena_calloc(&req->arena, n + 1,
                                         sizeof(*r->Acls));
            nres++;
        }
        d = &r->Acls[r->Acls_cnt++];
        samsa_AclDescription_init(d);
        d->Principal = samsa_slice_cstr(acl->principal);
        d->Host = samsa_slice_cstr(acl->host);
        d->Operation = acl->operation;
        d->PermissionType = acl->permission;
    }
    m.Resources_cnt = (int32_t) nres;
    samsa_apis_send(apis->broker, req, &m);
}
