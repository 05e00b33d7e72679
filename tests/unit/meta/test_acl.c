/* Unit tests for meta/acl.c: StandardAuthorizer matching (literal,
 * wildcard and prefixed patterns, principals and User:*, hosts, implied
 * operations, deny wins, allow.everyone.if.no.acl.found), binding filters,
 * authorizeByResourceType, copy on write of a shared set, and the image
 * replaying AccessControlEntryRecord / RemoveAccessControlEntryRecord. */
#include "unit.h"

#include "meta/acl.h"
#include "meta/image.h"

#define ANON  "User:ANONYMOUS"
#define HOST  "127.0.0.1"

static samsa_uuid_t
acl_id(uint8_t n)
{
    samsa_uuid_t  id;

    memset(&id, 0, sizeof(id));
    id.b[15] = n;
    id.b[0] = 1;
    return id;
}

static void
acl_add(samsa_acl_set_t **set, uint8_t n, int8_t type, const char *name,
        int8_t pattern, const char *principal, const char *host, int8_t op,
        int8_t perm)
{
    samsa_acl_t  a = {
        .id = acl_id(n), .resource_type = type, .pattern_type = pattern,
        .operation = op, .permission = perm, .resource_name = name,
        .principal = principal, .host = host,
    };

    samsa_acl_set_add(samsa_acl_set_mut(set), &a);
}

static bool
can(const samsa_acl_set_t *set, const char *principal, const char *host,
    int8_t op, int8_t type, const char *name, bool allow_if_none)
{
    return samsa_acl_authorize(set, principal, host, op, type, name,
                               strlen(name), allow_if_none);
}

#define T   SAMSA_ACL_RESOURCE_TOPIC
#define G   SAMSA_ACL_RESOURCE_GROUP
#define LIT SAMSA_ACL_PATTERN_LITERAL
#define PRE SAMSA_ACL_PATTERN_PREFIXED
#define ALLOW SAMSA_ACL_PERMISSION_ALLOW
#define DENY  SAMSA_ACL_PERMISSION_DENY

static void
test_acl_no_acls(void **state)
{
    samsa_acl_set_t  *set = NULL;

    (void) state;
    /* no ACL for the resource: allow.everyone.if.no.acl.found decides */
    assert_false(can(set, ANON, HOST, SAMSA_ACL_OP_READ, T, "t", false));
    assert_true(can(set, ANON, HOST, SAMSA_ACL_OP_READ, T, "t", true));
    acl_add(&set, 1, T, "other", LIT, "User:bob", "*", SAMSA_ACL_OP_READ,
            ALLOW);
    /* an ACL of another resource is not one of this resource */
    assert_true(can(set, ANON, HOST, SAMSA_ACL_OP_READ, T, "t", true));
    /* one of this resource for someone else: denied even so */
    acl_add(&set, 2, T, "t", LIT, "User:bob", "*", SAMSA_ACL_OP_READ, ALLOW);
    assert_false(can(set, ANON, HOST, SAMSA_ACL_OP_READ, T, "t", true));
    assert_true(can(set, "User:bob", HOST, SAMSA_ACL_OP_READ, T, "t", false));
    samsa_acl_set_put(set);
}

static void
test_acl_patterns(void **state)
{
    samsa_acl_set_t  *set = NULL;

    (void) state;
    acl_add(&set, 1, T, "lit", LIT, ANON, "*", SAMSA_ACL_OP_WRITE, ALLOW);
    acl_add(&set, 2, T, "pre-", PRE, ANON, "*", SAMSA_ACL_OP_WRITE, ALLOW);
    acl_add(&set, 3, G, "*", LIT, ANON, "*", SAMSA_ACL_OP_READ, ALLOW);
    assert_true(can(set, ANON, HOST, SAMSA_ACL_OP_WRITE, T, "lit", false));
    assert_false(can(set, ANON, HOST, SAMSA_ACL_OP_WRITE, T, "lit2", false));
    assert_false(can(set, ANON, HOST, SAMSA_ACL_OP_WRITE, T, "li", false));
    assert_true(can(set, ANON, HOST, SAMSA_ACL_OP_WRITE, T, "pre-", false));
    assert_true(can(set, ANON, HOST, SAMSA_ACL_OP_WRITE, T, "pre-x", false));
    assert_false(can(set, ANON, HOST, SAMSA_ACL_OP_WRITE, T, "pre", false));
    /* the wildcard name matches every group, and only groups */
    assert_true(can(set, ANON, HOST, SAMSA_ACL_OP_READ, G, "any", false));
    assert_false(can(set, ANON, HOST, SAMSA_ACL_OP_READ, T, "any", false));
    /* a literal "*"-named topic is not matched by prefix rules */
    assert_false(can(set, ANON, HOST, SAMSA_ACL_OP_WRITE, T, "*", false));
    samsa_acl_set_put(set);
}

static void
test_acl_principal_and_host(void **state)
{
    samsa_acl_set_t  *set = NULL;

    (void) state;
    acl_add(&set, 1, T, "a", LIT, "User:*", "*", SAMSA_ACL_OP_READ, ALLOW);
    acl_add(&set, 2, T, "b", LIT, ANON, "10.0.0.1", SAMSA_ACL_OP_READ, ALLOW);
    assert_true(can(set, "User:alice", HOST, SAMSA_ACL_OP_READ, T, "a",
                    false));
    assert_true(can(set, ANON, HOST, SAMSA_ACL_OP_READ, T, "a", false));
    assert_false(can(set, ANON, HOST, SAMSA_ACL_OP_READ, T, "b", false));
    assert_true(can(set, ANON, "10.0.0.1", SAMSA_ACL_OP_READ, T, "b", false));
    assert_false(can(set, "User:alice", "10.0.0.1", SAMSA_ACL_OP_READ, T, "b",
                     false));
    samsa_acl_set_put(set);
}

static void
test_acl_implied_operations(void **state)
{
    samsa_acl_set_t  *set = NULL;
    int8_t            op;

    (void) state;
    acl_add(&set, 1, T, "r", LIT, ANON, "*", SAMSA_ACL_OP_READ, ALLOW);
    acl_add(&set, 2, T, "w", LIT, ANON, "*", SAMSA_ACL_OP_WRITE, ALLOW);
    acl_add(&set, 3, T, "d", LIT, ANON, "*", SAMSA_ACL_OP_DELETE, ALLOW);
    acl_add(&set, 4, T, "al", LIT, ANON, "*", SAMSA_ACL_OP_ALTER, ALLOW);
    acl_add(&set, 5, T, "ac", LIT, ANON, "*", SAMSA_ACL_OP_ALTER_CONFIGS,
            ALLOW);
    acl_add(&set, 6, T, "all", LIT, ANON, "*", SAMSA_ACL_OP_ALL, ALLOW);
    acl_add(&set, 7, T, "c", LIT, ANON, "*", SAMSA_ACL_OP_CREATE, ALLOW);
    assert_true(can(set, ANON, HOST, SAMSA_ACL_OP_DESCRIBE, T, "r", false));
    assert_true(can(set, ANON, HOST, SAMSA_ACL_OP_DESCRIBE, T, "w", false));
    assert_true(can(set, ANON, HOST, SAMSA_ACL_OP_DESCRIBE, T, "d", false));
    assert_true(can(set, ANON, HOST, SAMSA_ACL_OP_DESCRIBE, T, "al", false));
    assert_false(can(set, ANON, HOST, SAMSA_ACL_OP_DESCRIBE, T, "c", false));
    assert_false(can(set, ANON, HOST, SAMSA_ACL_OP_WRITE, T, "r", false));
    assert_true(can(set, ANON, HOST, SAMSA_ACL_OP_DESCRIBE_CONFIGS, T, "ac",
                    false));
    assert_false(can(set, ANON, HOST, SAMSA_ACL_OP_DESCRIBE, T, "ac", false));
    for (op = SAMSA_ACL_OP_READ; op <= SAMSA_ACL_OP_TWO_PHASE_COMMIT; op++) {
        assert_true(can(set, ANON, HOST, op, T, "all", false));
    }
    samsa_acl_set_put(set);
}

static void
test_acl_deny_wins(void **state)
{
    samsa_acl_set_t  *set = NULL;

    (void) state;
    acl_add(&set, 1, T, "x", PRE, ANON, "*", SAMSA_ACL_OP_ALL, ALLOW);
    acl_add(&set, 2, T, "x1", LIT, "User:*", "*", SAMSA_ACL_OP_WRITE, DENY);
    acl_add(&set, 3, T, "x2", LIT, ANON, "*", SAMSA_ACL_OP_READ, DENY);
    acl_add(&set, 4, T, "x3", LIT, ANON, "*", SAMSA_ACL_OP_ALL, DENY);
    assert_false(can(set, ANON, HOST, SAMSA_ACL_OP_WRITE, T, "x1", true));
    assert_true(can(set, ANON, HOST, SAMSA_ACL_OP_READ, T, "x1", false));
    /* a DENY of READ does not deny DESCRIBE (implication is ALLOW-only) */
    assert_false(can(set, ANON, HOST, SAMSA_ACL_OP_READ, T, "x2", false));
    assert_true(can(set, ANON, HOST, SAMSA_ACL_OP_DESCRIBE, T, "x2", false));
    /* DENY ALL denies everything */
    assert_false(can(set, ANON, HOST, SAMSA_ACL_OP_DESCRIBE, T, "x3", false));
    samsa_acl_set_put(set);
}

static void
test_acl_by_resource_type(void **state)
{
    samsa_acl_set_t  *set = NULL;

    (void) state;
    assert_false(samsa_acl_authorize_by_type(set, ANON, HOST,
                                             SAMSA_ACL_OP_WRITE, T, false));
    assert_true(samsa_acl_authorize_by_type(set, ANON, HOST,
                                            SAMSA_ACL_OP_WRITE, T, true));
    acl_add(&set, 1, T, "a", LIT, ANON, "*", SAMSA_ACL_OP_WRITE, ALLOW);
    assert_true(samsa_acl_authorize_by_type(set, ANON, HOST,
                                            SAMSA_ACL_OP_WRITE, T, false));
    assert_false(samsa_acl_authorize_by_type(set, ANON, HOST,
                                             SAMSA_ACL_OP_READ, T, false));
    /* dominated by a prefixed DENY */
    acl_add(&set, 2, T, "", PRE, ANON, "*", SAMSA_ACL_OP_WRITE, DENY);
    assert_false(samsa_acl_authorize_by_type(set, ANON, HOST,
                                             SAMSA_ACL_OP_WRITE, T, false));
    samsa_acl_set_put(set);
}

static void
test_acl_filters(void **state)
{
    samsa_acl_t         lit = {
        .resource_type = T, .pattern_type = LIT, .operation =
        SAMSA_ACL_OP_READ, .permission = ALLOW, .resource_name = "foo",
        .principal = ANON, .host = "*",
    };
    samsa_acl_t         pre = lit, wild = lit;
    samsa_acl_filter_t  f = {
        .resource_type = SAMSA_ACL_RESOURCE_ANY,
        .pattern_type = SAMSA_ACL_PATTERN_ANY,
        .operation = SAMSA_ACL_OP_ANY,
        .permission = SAMSA_ACL_PERMISSION_ANY,
    };

    (void) state;
    pre.pattern_type = PRE;
    pre.resource_name = "fo";
    wild.resource_name = "*";
    assert_true(samsa_acl_filter_matches(&f, &lit));
    f.resource_name = "foo";
    assert_true(samsa_acl_filter_matches(&f, &lit));
    assert_false(samsa_acl_filter_matches(&f, &pre));   /* ANY: exact name */
    f.pattern_type = SAMSA_ACL_PATTERN_MATCH;
    assert_true(samsa_acl_filter_matches(&f, &lit));
    assert_true(samsa_acl_filter_matches(&f, &pre));
    assert_true(samsa_acl_filter_matches(&f, &wild));
    f.pattern_type = PRE;
    assert_false(samsa_acl_filter_matches(&f, &lit));
    f.resource_name = "fo";
    assert_true(samsa_acl_filter_matches(&f, &pre));
    f.pattern_type = SAMSA_ACL_PATTERN_ANY;
    f.resource_name = NULL;
    f.principal = "User:bob";
    assert_false(samsa_acl_filter_matches(&f, &lit));
    f.principal = NULL;
    f.operation = SAMSA_ACL_OP_WRITE;
    assert_false(samsa_acl_filter_matches(&f, &lit));
    f.operation = SAMSA_ACL_OP_UNKNOWN;
    assert_true(samsa_acl_filter_is_unknown(&f));
    f.operation = 99;                           /* unknown to Kafka too */
    assert_true(samsa_acl_filter_is_unknown(&f));
    assert_int_equal(samsa_acl_operation_known(99), 0);
    assert_string_equal(samsa_acl_operation_name(SAMSA_ACL_OP_IDEMPOTENT_WRITE),
                        "IDEMPOTENT_WRITE");
}

static void
test_acl_set_copy_on_write(void **state)
{
    samsa_acl_set_t  *a = NULL, *b;

    (void) state;
    acl_add(&a, 1, T, "t", LIT, ANON, "*", SAMSA_ACL_OP_READ, ALLOW);
    b = samsa_acl_set_ref(a);                   /* shared now */
    acl_add(&b, 2, T, "u", LIT, ANON, "*", SAMSA_ACL_OP_READ, ALLOW);
    assert_ptr_not_equal(a, b);
    assert_int_equal(samsa_acl_set_count(a), 1);
    assert_int_equal(samsa_acl_set_count(b), 2);
    assert_true(samsa_acl_set_remove(samsa_acl_set_mut(&b), acl_id(1)));
    assert_false(samsa_acl_set_remove(samsa_acl_set_mut(&b), acl_id(1)));
    assert_non_null(samsa_acl_set_find_id(a, acl_id(1)));
    assert_null(samsa_acl_set_find_id(b, acl_id(1)));
    samsa_acl_set_put(a);
    samsa_acl_set_put(b);
}

static samsa_err_t
replay(samsa_image_delta_t *d, const samsa_MetadataRecords_any_t *rec,
       int64_t offset)
{
    char  err[256];

    return samsa_image_delta_replay(d, rec, offset, err, sizeof(err));
}

static void
test_acl_image_replay(void **state)
{
    samsa_MetadataRecords_any_t  rec;
    samsa_image_t               *empty = samsa_image_new_empty(), *i1, *i2;
    samsa_image_delta_t         *d = samsa_image_delta_new(empty);

    (void) state;
    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_AccessControlEntryRecord;
    samsa_AccessControlEntryRecord_init(&rec.u.AccessControlEntryRecord);
    rec.u.AccessControlEntryRecord.Id = acl_id(7);
    rec.u.AccessControlEntryRecord.ResourceType = T;
    rec.u.AccessControlEntryRecord.ResourceName = samsa_slice_cstr("t");
    rec.u.AccessControlEntryRecord.PatternType = LIT;
    rec.u.AccessControlEntryRecord.Principal = samsa_slice_cstr(ANON);
    rec.u.AccessControlEntryRecord.Host = samsa_slice_cstr("*");
    rec.u.AccessControlEntryRecord.Operation = SAMSA_ACL_OP_READ;
    rec.u.AccessControlEntryRecord.PermissionType = ALLOW;
    assert_int_equal(replay(d, &rec, 0), SAMSA_ERR_NONE);
    /* the same id twice, and unknown codes, are refused */
    assert_int_equal(replay(d, &rec, 1), SAMSA_ERR__BAD_MSG);
    samsa_image_delta_free(d);
    d = samsa_image_delta_new(empty);
    assert_int_equal(replay(d, &rec, 0), SAMSA_ERR_NONE);
    i1 = samsa_image_delta_apply(d);
    assert_true(can(samsa_image_acls(i1), ANON, HOST, SAMSA_ACL_OP_DESCRIBE,
                    T, "t", false));
    /* removing it in the delta leaves the applied image's set alone */
    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_RemoveAccessControlEntryRecord;
    samsa_RemoveAccessControlEntryRecord_init(
        &rec.u.RemoveAccessControlEntryRecord);
    rec.u.RemoveAccessControlEntryRecord.Id = acl_id(7);
    assert_int_equal(replay(d, &rec, 1), SAMSA_ERR_NONE);
    i2 = samsa_image_delta_apply(d);
    assert_int_equal(samsa_acl_set_count(samsa_image_acls(i1)), 1);
    assert_int_equal(samsa_acl_set_count(samsa_image_acls(i2)), 0);
    samsa_image_delta_free(d);
    d = samsa_image_delta_new(i2);              /* no such id any more */
    assert_int_equal(replay(d, &rec, 2), SAMSA_ERR__BAD_MSG);
    samsa_image_delta_free(d);
    samsa_image_put(i1);
    samsa_image_put(i2);
    samsa_image_put(empty);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_acl_no_acls),
        cmocka_unit_test(test_acl_patterns),
        cmocka_unit_test(test_acl_principal_and_host),
        cmocka_unit_test(test_acl_implied_operations),
        cmocka_unit_test(test_acl_deny_wins),
        cmocka_unit_test(test_acl_by_resource_type),
        cmocka_unit_test(test_acl_filters),
        cmocka_unit_test(test_acl_set_copy_on_write),
        cmocka_unit_test(test_acl_image_replay),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
