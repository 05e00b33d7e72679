/*
 * meta/controller/ctlacls.c - CreateAcls and DeleteAcls on the controller
 * thread, as Kafka's AclControlManager: a new binding is validated
 * (validateNewAcl) and gets one AccessControlEntryRecord with a fresh id,
 * unless the same binding exists (then it succeeds and adds nothing); a
 * delete filter is validated (validateFilter) and every binding of the
 * image it matches gets one RemoveAccessControlEntryRecord.
 * Threads: the controller thread.
 */
#include "meta/controller/controller_int.h"

#include <string.h>

#include "meta/acl.h"

/* AclControlManager.validateNewAcl */
static bool
acl_valid(const samsa_acl_t *acl, samsa_arena_t *arena,
          samsa_controller_result_t *res)
{
    int8_t  t = samsa_acl_resource_type_known(acl->resource_type);
    int8_t  p = samsa_acl_pattern_type_known(acl->pattern_type);
    int8_t  o = samsa_acl_operation_known(acl->operation);
    int8_t  m = samsa_acl_permission_known(acl->permission);

    res->error = SAMSA_ERR_INVALID_REQUEST;
    if (t == SAMSA_ACL_RESOURCE_UNKNOWN || t == SAMSA_ACL_RESOURCE_ANY) {
        res->message = samsa_ctl_msg(arena, "Invalid resourceType %s",
                                     samsa_acl_resource_type_name(t));
    } else if (p != SAMSA_ACL_PATTERN_LITERAL
               && p != SAMSA_ACL_PATTERN_PREFIXED) {
        res->message = samsa_ctl_msg(arena, "Invalid patternType %s",
                                     samsa_acl_pattern_type_name(p));
    } else if (o == SAMSA_ACL_OP_UNKNOWN || o == SAMSA_ACL_OP_ANY) {
        res->message = samsa_ctl_msg(arena, "Invalid operation %s",
                                     samsa_acl_operation_name(o));
    } else if (m != SAMSA_ACL_PERMISSION_ALLOW
               && m != SAMSA_ACL_PERMISSION_DENY) {
        res->message = samsa_ctl_msg(arena, "Invalid permissionType %s",
                                     samsa_acl_permission_name(m));
    } else if (acl->resource_name == NULL || acl->resource_name[0] == '\0') {
        res->message = "Resource name should not be empty";
    } else {
        res->error = SAMSA_ERR_NONE;
        return true;
    }
    return false;
}

void
samsa_ctlacls_create(samsa_ctlbatch_t *b, const samsa_acl_t *acls, size_t n,
                     samsa_arena_t *arena, samsa_controller_result_t *results)
{
    samsa_MetadataRecords_any_t        rec;
    samsa_AccessControlEntryRecord_t  *r = &rec.u.AccessControlEntryRecord;
    const samsa_acl_set_t             *set;
    samsa_uuid_t                       id;
    size_t                             i;

    for (i = 0; i < n; i++) {
        results[i] = (samsa_controller_result_t) { SAMSA_ERR_NONE, NULL };
        if (!acl_valid(&acls[i], arena, &results[i])) {
            continue;
        }
        set = samsa_image_delta_acls(b->delta);
        if (samsa_acl_set_find_same(set, &acls[i]) != NULL
            || !samsa_ctlbatch_room(b, 1)) {
            continue;                   /* exists: success, no record */
        }
        do {
            id = samsa_image_id_random();
        } while (samsa_acl_set_find_id(set, id) != NULL);
        memset(&rec, 0, sizeof(rec));
        rec.type = SAMSA_MetadataRecords_AccessControlEntryRecord;
        samsa_AccessControlEntryRecord_init(r);
        r->Id = id;
        r->ResourceType = acls[i].resource_type;
        r->ResourceName = samsa_slice_cstr(acls[i].resource_name);
        r->PatternType = acls[i].pattern_type;
        r->Principal = samsa_slice_cstr(acls[i].principal);
        r->Host = samsa_slice_cstr(acls[i].host);
        r->Operation = acls[i].operation;
        r->PermissionType = acls[i].permission;
        samsa_ctlbatch_add(b, &rec);
    }
}

void
samsa_ctlacls_delete(samsa_ctlbatch_t *b, const samsa_acl_filter_t *filters,
                     size_t n, samsa_arena_t *arena,
                     samsa_controller_acl_delete_result_t *results)
{
    samsa_MetadataRecords_any_t  rec;
    const samsa_acl_set_t       *set = samsa_image_acls(b->img);
    const samsa_acl_t           *acl;
    size_t                       i, j, k, count = samsa_acl_set_count(set);

    for (i = 0; i < n; i++) {
        memset(&results[i], 0, sizeof(results[i]));
        if (samsa_acl_filter_is_unknown(&filters[i])) {
            results[i].error = SAMSA_ERR_INVALID_REQUEST;
            results[i].message =
                samsa_acl_resource_type_known(filters[i].resource_type) == 0
                    || samsa_acl_pattern_type_known(filters[i].pattern_type)
                       == 0
                    ? "Unknown patternFilter."
                    : "Unknown entryFilter.";
            continue;
        }
        results[i].matched = samsa_arena_calloc(arena, count + 1,
                                                sizeof(*results[i].matched));
        for (j = 0, k = 0; j < count; j++) {
            acl = samsa_acl_set_at(set, j);
            if (!samsa_acl_filter_matches(&filters[i], acl)) {
                continue;
            }
            results[i].matched[k++] = *acl;     /* strings copied: the
                                                   image goes first */
            results[i].matched[k - 1].resource_name =
                samsa_arena_strndup(arena, acl->resource_name,
                                    strlen(acl->resource_name));
            results[i].matched[k - 1].principal =
                samsa_arena_strndup(arena, acl->principal,
                                    strlen(acl->principal));
            results[i].matched[k - 1].host =
                samsa_arena_strndup(arena, acl->host, strlen(acl->host));
            /* a binding two filters match is removed once */
            if (samsa_acl_set_find_id(samsa_image_delta_acls(b->delta),
                                      acl->id) == NULL
                || !samsa_ctlbatch_room(b, 1)) {
                continue;
            }
            memset(&rec, 0, sizeof(rec));
            rec.type = SAMSA_MetadataRecords_RemoveAccessControlEntryRecord;
            samsa_RemoveAccessControlEntryRecord_init(
                &rec.u.RemoveAccessControlEntryRecord);
            rec.u.RemoveAccessControlEntryRecord.Id = acl->id;
            samsa_ctlbatch_add(b, &rec);
        }
        results[i].nmatched = k;
    }
}
