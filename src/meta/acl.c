/*
 * meta/acl.c - see acl.h.  A set is an array of bindings in insertion
 * order, scanned whole by each authorization (Kafka keeps a sorted
 * NavigableSet to skip to the resource's section; a linear scan is enough
 * for the hundreds of ACLs a cluster holds, and is the first thing to
 * index if that changes).
 */
#include "meta/acl.h"

#include <stdatomic.h>
#include <string.h>

#include "util/alloc.h"
#include "util/diag.h"

struct samsa_acl_set {
    atomic_int     refs;                /* [atomic] */
    samsa_acl_t   *acls;                /* strings samsa_strdup'd */
    size_t         n;
    size_t         cap;
};

/* ---- codes */

static const char *const  acl_resource_names[] = {
    "UNKNOWN", "ANY", "TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID",
    "DELEGATION_TOKEN", "USER",
};
static const char *const  acl_pattern_names[] = {
    "UNKNOWN", "ANY", "MATCH", "LITERAL", "PREFIXED",
};
static const char *const  acl_op_names[] = {
    "UNKNOWN", "ANY", "ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER",
    "DESCRIBE", "CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS",
    "IDEMPOTENT_WRITE", "CREATE_TOKENS", "DESCRIBE_TOKENS",
    "TWO_PHASE_COMMIT",
};
static const char *const  acl_permission_names[] = {
    "UNKNOWN", "ANY", "DENY", "ALLOW",
};

#define ACL_NELEM(a)  ((int8_t) (sizeof(a) / sizeof((a)[0])))

int8_t
samsa_acl_resource_type_known(int8_t code)
{
    return code >= 0 && code < ACL_NELEM(acl_resource_names) ? code : 0;
}

int8_t
samsa_acl_pattern_type_known(int8_t code)
{
    return code >= 0 && code < ACL_NELEM(acl_pattern_names) ? code : 0;
}

int8_t
samsa_acl_operation_known(int8_t code)
{
    return code >= 0 && code < ACL_NELEM(acl_op_names) ? code : 0;
}

int8_t
samsa_acl_permission_known(int8_t code)
{
    return code >= 0 && code < ACL_NELEM(acl_permission_names) ? code : 0;
}

const char *
samsa_acl_resource_type_name(int8_t code)
{
    return acl_resource_names[samsa_acl_resource_type_known(code)];
}

const char *
samsa_acl_pattern_type_name(int8_t code)
{
    return acl_pattern_names[samsa_acl_pattern_type_known(code)];
}

const char *
samsa_acl_operation_name(int8_t code)
{
    return acl_op_names[samsa_acl_operation_known(code)];
}

const char *
samsa_acl_permission_name(int8_t code)
{
    return acl_permission_names[samsa_acl_permission_known(code)];
}

#define OPBIT(op)  (1u << (op))

uint32_t
samsa_acl_supported_ops(int8_t resource_type)
{
    switch (resource_type) {
    case SAMSA_ACL_RESOURCE_TOPIC:
        return OPBIT(SAMSA_ACL_OP_READ) | OPBIT(SAMSA_ACL_OP_WRITE)
               | OPBIT(SAMSA_ACL_OP_CREATE) | OPBIT(SAMSA_ACL_OP_DESCRIBE)
               | OPBIT(SAMSA_ACL_OP_DELETE) | OPBIT(SAMSA_ACL_OP_ALTER)
               | OPBIT(SAMSA_ACL_OP_DESCRIBE_CONFIGS)
               | OPBIT(SAMSA_ACL_OP_ALTER_CONFIGS);
    case SAMSA_ACL_RESOURCE_GROUP:
        return OPBIT(SAMSA_ACL_OP_READ) | OPBIT(SAMSA_ACL_OP_DESCRIBE)
               | OPBIT(SAMSA_ACL_OP_DELETE)
               | OPBIT(SAMSA_ACL_OP_DESCRIBE_CONFIGS)
               | OPBIT(SAMSA_ACL_OP_ALTER_CONFIGS);
    case SAMSA_ACL_RESOURCE_CLUSTER:
        return OPBIT(SAMSA_ACL_OP_CREATE) | OPBIT(SAMSA_ACL_OP_CLUSTER_ACTION)
               | OPBIT(SAMSA_ACL_OP_DESCRIBE_CONFIGS)
               | OPBIT(SAMSA_ACL_OP_ALTER_CONFIGS)
               | OPBIT(SAMSA_ACL_OP_IDEMPOTENT_WRITE)
               | OPBIT(SAMSA_ACL_OP_ALTER) | OPBIT(SAMSA_ACL_OP_DESCRIBE);
    case SAMSA_ACL_RESOURCE_TRANSACTIONAL_ID:
        return OPBIT(SAMSA_ACL_OP_DESCRIBE) | OPBIT(SAMSA_ACL_OP_WRITE)
               | OPBIT(SAMSA_ACL_OP_TWO_PHASE_COMMIT);
    case SAMSA_ACL_RESOURCE_DELEGATION_TOKEN:
        return OPBIT(SAMSA_ACL_OP_DESCRIBE);
    case SAMSA_ACL_RESOURCE_USER:
        return OPBIT(SAMSA_ACL_OP_CREATE_TOKENS)
               | OPBIT(SAMSA_ACL_OP_DESCRIBE_TOKENS);
    default:
        return 0;
    }
}

/* ---- filters */

bool
samsa_acl_filter_is_unknown(const samsa_acl_filter_t *f)
{
    return samsa_acl_resource_type_known(f->resource_type) == 0
           || samsa_acl_pattern_type_known(f->pattern_type) == 0
           || samsa_acl_operation_known(f->operation) == 0
           || samsa_acl_permission_known(f->permission) == 0;
}

static bool
acl_has_prefix(const char *name, size_t len, const char *prefix)
{
    size_t  n = strlen(prefix);

    return n <= len && memcmp(name, prefix, n) == 0;
}

/* ResourcePatternFilter.matches */
static bool
acl_pattern_filter_matches(const samsa_acl_filter_t *f,
                           const samsa_acl_t *acl)
{
    if (f->resource_type != SAMSA_ACL_RESOURCE_ANY
        && f->resource_type != acl->resource_type) {
        return false;
    }
    if (f->pattern_type != SAMSA_ACL_PATTERN_ANY
        && f->pattern_type != SAMSA_ACL_PATTERN_MATCH
        && f->pattern_type != acl->pattern_type) {
        return false;
    }
    if (f->resource_name == NULL) {
        return true;
    }
    if (f->pattern_type == SAMSA_ACL_PATTERN_ANY
        || f->pattern_type == acl->pattern_type) {
        return strcmp(f->resource_name, acl->resource_name) == 0;
    }
    /* MATCH */
    if (acl->pattern_type == SAMSA_ACL_PATTERN_LITERAL) {
        return strcmp(f->resource_name, acl->resource_name) == 0
               || strcmp(acl->resource_name, SAMSA_ACL_WILDCARD) == 0;
    }
    return acl->pattern_type == SAMSA_ACL_PATTERN_PREFIXED
           && acl_has_prefix(f->resource_name, strlen(f->resource_name),
                             acl->resource_name);
}

bool
samsa_acl_filter_matches(const samsa_acl_filter_t *f, const samsa_acl_t *acl)
{
    return acl_pattern_filter_matches(f, acl)
           && (f->principal == NULL
               || strcmp(f->principal, acl->principal) == 0)
           && (f->host == NULL || strcmp(f->host, acl->host) == 0)
           && (f->operation == SAMSA_ACL_OP_ANY
               || f->operation == acl->operation)
           && (f->permission == SAMSA_ACL_PERMISSION_ANY
               || f->permission == acl->permission);
}

/* ---- sets */

samsa_acl_set_t *
samsa_acl_set_new(void)
{
    samsa_acl_set_t  *set = samsa_calloc(1, sizeof(*set));

    atomic_init(&set->refs, 1);
    return set;
}

samsa_acl_set_t *
samsa_acl_set_ref(samsa_acl_set_t *set)
{
    atomic_fetch_add_explicit(&set->refs, 1, memory_order_relaxed);
    return set;
}

static void
acl_fini(samsa_acl_t *acl)
{
    samsa_free((char *) acl->resource_name);
    samsa_free((char *) acl->principal);
    samsa_free((char *) acl->host);
}

static void
acl_copy(samsa_acl_t *dst, const samsa_acl_t *src)
{
    *dst = *src;
    dst->resource_name = samsa_strdup(src->resource_name);
    dst->principal = samsa_strdup(src->principal);
    dst->host = samsa_strdup(src->host);
}

void
samsa_acl_set_put(samsa_acl_set_t *set)
{
    size_t  i;

    if (set == NULL
        || atomic_fetch_sub_explicit(&set->refs, 1, memory_order_acq_rel)
           != 1) {
        return;
    }
    for (i = 0; i < set->n; i++) {
        acl_fini(&set->acls[i]);
    }
    samsa_free(set->acls);
    samsa_free(set);
}

samsa_acl_set_t *
samsa_acl_set_mut(samsa_acl_set_t **setp)
{
    samsa_acl_set_t  *old = *setp, *set;
    size_t            i;

    if (old != NULL
        && atomic_load_explicit(&old->refs, memory_order_acquire) == 1) {
        return old;                     /* ours alone */
    }
    set = samsa_acl_set_new();
    if (old != NULL) {
        set->cap = old->n + 8;
        set->acls = samsa_calloc(set->cap, sizeof(*set->acls));
        for (i = 0; i < old->n; i++) {
            acl_copy(&set->acls[i], &old->acls[i]);
        }
        set->n = old->n;
        samsa_acl_set_put(old);
    }
    *setp = set;
    return set;
}

size_t
samsa_acl_set_count(const samsa_acl_set_t *set)
{
    return set != NULL ? set->n : 0;
}

const samsa_acl_t *
samsa_acl_set_at(const samsa_acl_set_t *set, size_t i)
{
    samsa_assert(set != NULL && i < set->n);
    return &set->acls[i];
}

const samsa_acl_t *
samsa_acl_set_find_id(const samsa_acl_set_t *set, samsa_uuid_t id)
{
    size_t  i;

    for (i = 0; i < samsa_acl_set_count(set); i++) {
        if (samsa_uuid_eq(set->acls[i].id, id)) {
            return &set->acls[i];
        }
    }
    return NULL;
}

const samsa_acl_t *
samsa_acl_set_find_same(const samsa_acl_set_t *set, const samsa_acl_t *acl)
{
    const samsa_acl_t  *a;
    size_t              i;

    for (i = 0; i < samsa_acl_set_count(set); i++) {
        a = &set->acls[i];
        if (a->resource_type == acl->resource_type
            && a->pattern_type == acl->pattern_type
            && a->operation == acl->operation
            && a->permission == acl->permission
            && strcmp(a->resource_name, acl->resource_name) == 0
            && strcmp(a->principal, acl->principal) == 0
            && strcmp(a->host, acl->host) == 0) {
            return a;
        }
    }
    return NULL;
}

void
samsa_acl_set_add(samsa_acl_set_t *set, const samsa_acl_t *acl)
{
    if (set->n == set->cap) {
        set->cap = set->cap * 2 + 8;
        set->acls = samsa_realloc(set->acls, set->cap * sizeof(*set->acls));
    }
    acl_copy(&set->acls[set->n++], acl);
}

bool
samsa_acl_set_remove(samsa_acl_set_t *set, samsa_uuid_t id)
{
    size_t  i;

    for (i = 0; i < set->n; i++) {
        if (samsa_uuid_eq(set->acls[i].id, id)) {
            acl_fini(&set->acls[i]);
            memmove(&set->acls[i], &set->acls[i + 1],
                    (set->n - i - 1) * sizeof(*set->acls));
            set->n--;
            return true;
        }
    }
    return false;
}

/* ---- authorization */

/* StandardAuthorizerData.findResult's operation rule. */
static bool
acl_op_matches(const samsa_acl_t *acl, int8_t op)
{
    if (acl->operation == SAMSA_ACL_OP_ALL || acl->operation == op) {
        return true;
    }
    if (acl->permission != SAMSA_ACL_PERMISSION_ALLOW) {
        return false;                   /* DENY READ does not deny
                                           DESCRIBE */
    }
    switch (op) {
    case SAMSA_ACL_OP_DESCRIBE:
        return acl->operation == SAMSA_ACL_OP_READ
               || acl->operation == SAMSA_ACL_OP_WRITE
               || acl->operation == SAMSA_ACL_OP_DELETE
               || acl->operation == SAMSA_ACL_OP_ALTER;
    case SAMSA_ACL_OP_DESCRIBE_CONFIGS:
        return acl->operation == SAMSA_ACL_OP_ALTER_CONFIGS;
    default:
        return false;
    }
}

/* Whether acl's pattern applies to the resource name. */
static bool
acl_resource_matches(const samsa_acl_t *acl, const char *name, size_t len)
{
    if (acl->pattern_type == SAMSA_ACL_PATTERN_LITERAL) {
        return strcmp(acl->resource_name, SAMSA_ACL_WILDCARD) == 0
               || (strlen(acl->resource_name) == len
                   && memcmp(acl->resource_name, name, len) == 0);
    }
    return acl->pattern_type == SAMSA_ACL_PATTERN_PREFIXED
           && acl_has_prefix(name, len, acl->resource_name);
}

bool
samsa_acl_authorize(const samsa_acl_set_t *set, const char *principal,
                    const char *host, int8_t operation, int8_t resource_type,
                    const char *name, size_t len, bool allow_if_none)
{
    const samsa_acl_t  *acl;
    bool                has_resource_acls = false, allowed = false;
    size_t              i;

    for (i = 0; i < samsa_acl_set_count(set); i++) {
        acl = &set->acls[i];
        if (acl->resource_type != resource_type
            || !acl_resource_matches(acl, name, len)) {
            continue;
        }
        has_resource_acls = true;
        if ((strcmp(acl->principal, principal) != 0
             && strcmp(acl->principal, SAMSA_ACL_WILDCARD_PRINCIPAL) != 0)
            || (strcmp(acl->host, SAMSA_ACL_WILDCARD) != 0
                && strcmp(acl->host, host) != 0)
            || !acl_op_matches(acl, operation)) {
            continue;
        }
        if (acl->permission == SAMSA_ACL_PERMISSION_DENY) {
            return false;               /* deny wins */
        }
        allowed = true;
    }
    return allowed || (!has_resource_acls && allow_if_none);
}

/* Whether acl (an ALLOW for the action) is dominated by a DENY of the
 * same set for the action: the same LITERAL name, or a PREFIXED one that
 * is a prefix of its name. */
static bool
acl_denied_by(const samsa_acl_set_t *set, const samsa_acl_t *allow,
              const char *principal, const char *host, int8_t operation)
{
    const samsa_acl_t  *d;
    size_t              i;

    for (i = 0; i < set->n; i++) {
        d = &set->acls[i];
        if (d->permission != SAMSA_ACL_PERMISSION_DENY
            || d->resource_type != allow->resource_type
            || (strcmp(d->principal, principal) != 0
                && strcmp(d->principal, SAMSA_ACL_WILDCARD_PRINCIPAL) != 0)
            || (strcmp(d->host, SAMSA_ACL_WILDCARD) != 0
                && strcmp(d->host, host) != 0)
            || (d->operation != operation
                && d->operation != SAMSA_ACL_OP_ALL)) {
            continue;
        }
        if (d->pattern_type == SAMSA_ACL_PATTERN_PREFIXED
            && acl_has_prefix(allow->resource_name,
                              strlen(allow->resource_name),
                              d->resource_name)) {
            return true;
        }
        if (d->pattern_type == SAMSA_ACL_PATTERN_LITERAL
            && allow->pattern_type == SAMSA_ACL_PATTERN_LITERAL
            && strcmp(d->resource_name, allow->resource_name) == 0) {
            return true;
        }
    }
    return false;
}

bool
samsa_acl_authorize_by_type(const samsa_acl_set_t *set, const char *principal,
                            const char *host, int8_t operation,
                            int8_t resource_type, bool allow_if_none)
{
    const samsa_acl_t  *acl;
    size_t              i;
    bool                wildcard_allow = false, any = false;

    if (samsa_acl_authorize(set, principal, host, operation, resource_type,
                            "hardcode", 8, allow_if_none)) {
        return true;
    }
    for (i = 0; i < samsa_acl_set_count(set); i++) {
        acl = &set->acls[i];
        if (acl->resource_type != resource_type
            || (strcmp(acl->principal, principal) != 0
                && strcmp(acl->principal, SAMSA_ACL_WILDCARD_PRINCIPAL) != 0)
            || (strcmp(acl->host, SAMSA_ACL_WILDCARD) != 0
                && strcmp(acl->host, host) != 0)
            || (acl->operation != operation
                && acl->operation != SAMSA_ACL_OP_ALL)) {
            continue;
        }
        if (acl->pattern_type == SAMSA_ACL_PATTERN_LITERAL
            && strcmp(acl->resource_name, SAMSA_ACL_WILDCARD) == 0) {
            if (acl->permission == SAMSA_ACL_PERMISSION_DENY) {
                return false;
            }
            wildcard_allow = true;
        }
    }
    if (wildcard_allow) {
        return true;
    }
    for (i = 0; i < samsa_acl_set_count(set) && !any; i++) {
        acl = &set->acls[i];
        any = acl->permission == SAMSA_ACL_PERMISSION_ALLOW
              && acl->resource_type == resource_type
              && (strcmp(acl->principal, principal) == 0
                  || strcmp(acl->principal, SAMSA_ACL_WILDCARD_PRINCIPAL)
                     == 0)
              && (strcmp(acl->host, SAMSA_ACL_WILDCARD) == 0
                  || strcmp(acl->host, host) == 0)
              && (acl->operation == operation
                  || acl->operation == SAMSA_ACL_OP_ALL)
              && !acl_denied_by(set, acl, principal, host, operation);
    }
    return any;
}
