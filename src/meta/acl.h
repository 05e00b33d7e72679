/*
 * meta/acl.h - ACL bindings and Kafka's StandardAuthorizer matching
 * (org.apache.kafka.metadata.authorizer.StandardAuthorizerData): the
 * resource, pattern, operation and permission codes as Kafka's
 * ResourceType, PatternType, AclOperation and AclPermissionType; the ACL
 * set the metadata image holds (AccessControlEntryRecord adds one,
 * RemoveAccessControlEntryRecord removes one, by id); binding filters as
 * AclBindingFilter.matches (DescribeAcls, DeleteAcls); and the
 * authorization of one action.
 *
 * Matching, as StandardAuthorizerData.findAclRule / findResult: an ACL
 * applies to a resource of its type when it is LITERAL with the same name
 * or the wildcard name "*", or PREFIXED with a prefix of the name; it
 * applies to the request when its principal is the request's or "User:*"
 * and its host is "*" or the client's address; its operation matches when
 * it is ALL or the action's, and for ALLOW ACLs also when it implies the
 * action (DESCRIBE by READ, WRITE, DELETE, ALTER; DESCRIBE_CONFIGS by
 * ALTER_CONFIGS).  A matching DENY wins; else a matching ALLOW allows;
 * else, when no ACL at all applies to the resource, allow_if_none decides
 * (allow.everyone.if.no.acl.found); else denied.  Super users are the
 * caller's (broker/authz.h).
 *
 * Threads: a set is immutable once an image holds it and is read by any
 * thread holding that image; only the image writer (the one thread
 * building a delta) changes a set, and only one no image shares
 * (samsa_acl_set_mut).  The functions over bindings and filters are pure.
 * Ownership: a set is counted (samsa_acl_set_ref/put); it owns copies of
 * its bindings' strings.
 */
#ifndef SAMSA_META_ACL_H
#define SAMSA_META_ACL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/types.h"

/* Kafka's ResourceType codes. */
#define SAMSA_ACL_RESOURCE_UNKNOWN           0
#define SAMSA_ACL_RESOURCE_ANY               1
#define SAMSA_ACL_RESOURCE_TOPIC             2
#define SAMSA_ACL_RESOURCE_GROUP             3
#define SAMSA_ACL_RESOURCE_CLUSTER           4
#define SAMSA_ACL_RESOURCE_TRANSACTIONAL_ID  5
#define SAMSA_ACL_RESOURCE_DELEGATION_TOKEN  6
#define SAMSA_ACL_RESOURCE_USER              7

/* Kafka's PatternType codes. */
#define SAMSA_ACL_PATTERN_UNKNOWN            0
#define SAMSA_ACL_PATTERN_ANY                1
#define SAMSA_ACL_PATTERN_MATCH              2
#define SAMSA_ACL_PATTERN_LITERAL            3
#define SAMSA_ACL_PATTERN_PREFIXED           4

/* Kafka's AclOperation codes. */
#define SAMSA_ACL_OP_UNKNOWN                 0
#define SAMSA_ACL_OP_ANY                     1
#define SAMSA_ACL_OP_ALL                     2
#define SAMSA_ACL_OP_READ                    3
#define SAMSA_ACL_OP_WRITE                   4
#define SAMSA_ACL_OP_CREATE                  5
#define SAMSA_ACL_OP_DELETE                  6
#define SAMSA_ACL_OP_ALTER                   7
#define SAMSA_ACL_OP_DESCRIBE                8
#define SAMSA_ACL_OP_CLUSTER_ACTION          9
#define SAMSA_ACL_OP_DESCRIBE_CONFIGS        10
#define SAMSA_ACL_OP_ALTER_CONFIGS           11
#define SAMSA_ACL_OP_IDEMPOTENT_WRITE        12
#define SAMSA_ACL_OP_CREATE_TOKENS           13
#define SAMSA_ACL_OP_DESCRIBE_TOKENS         14
#define SAMSA_ACL_OP_TWO_PHASE_COMMIT        15
#define SAMSA_ACL_OP__LIMIT                  16

/* Kafka's AclPermissionType codes. */
#define SAMSA_ACL_PERMISSION_UNKNOWN         0
#define SAMSA_ACL_PERMISSION_ANY             1
#define SAMSA_ACL_PERMISSION_DENY            2
#define SAMSA_ACL_PERMISSION_ALLOW           3

#define SAMSA_ACL_WILDCARD            "*"
#define SAMSA_ACL_WILDCARD_PRINCIPAL  "User:*"
#define SAMSA_ACL_CLUSTER_NAME        "kafka-cluster"   /* the one CLUSTER */

/* One binding: a resource pattern and an access control entry.  Strings
 * are NUL-terminated. */
typedef struct samsa_acl {
    samsa_uuid_t   id;                  /* the record's Id */
    int8_t         resource_type;       /* SAMSA_ACL_RESOURCE_* */
    int8_t         pattern_type;        /* LITERAL or PREFIXED */
    int8_t         operation;           /* SAMSA_ACL_OP_* */
    int8_t         permission;          /* ALLOW or DENY */
    const char    *resource_name;
    const char    *principal;           /* "User:alice" */
    const char    *host;                /* "*" or an address */
} samsa_acl_t;

/* A binding filter (AclBindingFilter): NULL strings match anything; ANY
 * codes match any value; pattern MATCH matches the LITERAL, wildcard and
 * PREFIXED patterns that apply to resource_name. */
typedef struct samsa_acl_filter {
    int8_t         resource_type;
    int8_t         pattern_type;
    int8_t         operation;
    int8_t         permission;
    const char    *resource_name;       /* NULL: any */
    const char    *principal;           /* NULL: any */
    const char    *host;                /* NULL: any */
} samsa_acl_filter_t;

typedef struct samsa_acl_set samsa_acl_set_t;

/* ---- codes */

/* Kafka's fromCode: a code Kafka does not know reads as UNKNOWN (0). */
int8_t samsa_acl_resource_type_known(int8_t code);
int8_t samsa_acl_pattern_type_known(int8_t code);
int8_t samsa_acl_operation_known(int8_t code);
int8_t samsa_acl_permission_known(int8_t code);

/* Kafka's names ("TOPIC", "LITERAL", "DESCRIBE_CONFIGS", "ALLOW"). */
const char *samsa_acl_resource_type_name(int8_t code);
const char *samsa_acl_pattern_type_name(int8_t code);
const char *samsa_acl_operation_name(int8_t code);
const char *samsa_acl_permission_name(int8_t code);

/* The operations Kafka's AclEntry.supportedOperations lists for a
 * resource type, as a bit set (bit op), for KIP-430's authorized
 * operations. */
uint32_t samsa_acl_supported_ops(int8_t resource_type);

/* ---- filters */

/* AclBindingFilter.isUnknown: a filter with an UNKNOWN code. */
bool samsa_acl_filter_is_unknown(const samsa_acl_filter_t *f);

/* AclBindingFilter.matches(binding). */
bool samsa_acl_filter_matches(const samsa_acl_filter_t *f,
                              const samsa_acl_t *acl);

/* ---- sets */

/* A new, empty set with one reference. */
samsa_acl_set_t *samsa_acl_set_new(void);
samsa_acl_set_t *samsa_acl_set_ref(samsa_acl_set_t *set);
/* Release one reference; the last frees the set.  NULL is a no-op. */
void samsa_acl_set_put(samsa_acl_set_t *set);

/* *setp made private to the caller (new when NULL, cloned when shared,
 * the shared one released): the set a writer may change.  @returns it */
samsa_acl_set_t *samsa_acl_set_mut(samsa_acl_set_t **setp);

/* Bindings i from 0 to samsa_acl_set_count()-1, in insertion order.  A
 * NULL set is empty. */
size_t samsa_acl_set_count(const samsa_acl_set_t *set);
const samsa_acl_t *samsa_acl_set_at(const samsa_acl_set_t *set, size_t i);

/* The binding with that id, or NULL. */
const samsa_acl_t *samsa_acl_set_find_id(const samsa_acl_set_t *set,
                                         samsa_uuid_t id);

/* A binding equal to acl in everything but the id (Kafka's existingAcls
 * check: creating it again adds nothing), or NULL. */
const samsa_acl_t *samsa_acl_set_find_same(const samsa_acl_set_t *set,
                                           const samsa_acl_t *acl);

/* Add a copy of acl (a private set: samsa_acl_set_mut). */
void samsa_acl_set_add(samsa_acl_set_t *set, const samsa_acl_t *acl);

/* Remove the binding with that id: false when there is none. */
bool samsa_acl_set_remove(samsa_acl_set_t *set, samsa_uuid_t id);

/* ---- authorization */

/* Whether principal from host may do operation on the resource (type,
 * name of len bytes), as described above.  A NULL set has no ACLs. */
bool samsa_acl_authorize(const samsa_acl_set_t *set, const char *principal,
                         const char *host, int8_t operation,
                         int8_t resource_type, const char *name,
                         size_t len, bool allow_if_none);

/* Kafka's Authorizer.authorizeByResourceType: may principal do operation
 * on some resource of the type?  Allowed when samsa_acl_authorize allows
 * it on a resource named "hardcode", or when an ALLOW ACL for it (LITERAL
 * or PREFIXED) is not dominated by a DENY (the same LITERAL name, or a
 * PREFIXED deny that is a prefix of it); a DENY on the wildcard denies.
 * InitProducerId of an idempotent producer asks it for WRITE on topics. */
bool samsa_acl_authorize_by_type(const samsa_acl_set_t *set,
                                 const char *principal, const char *host,
                                 int8_t operation, int8_t resource_type,
                                 bool allow_if_none);

#endif /* SAMSA_META_ACL_H */
