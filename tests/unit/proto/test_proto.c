/* Unit tests for proto/proto.c and the generated API table. */
#include "unit.h"

#include "proto/proto.h"

static void
test_proto_api_find(void **state)
{
    const samsa_proto_api_t  *api;

    (void) state;
    api = samsa_proto_api_find(SAMSA_API_ApiVersions);
    assert_non_null(api);
    assert_int_equal(api->key, 18);
    assert_string_equal(api->name, "ApiVersions");
    assert_string_equal(api->enum_name, "API_VERSIONS");
    assert_int_equal(api->min_version, 0);
    assert_int_equal(api->max_version, 4);
    assert_int_equal(api->flexible_min, 3);
    api = samsa_proto_api_find(SAMSA_API_Metadata);
    assert_non_null(api);
    assert_string_equal(api->enum_name, "METADATA");
    assert_int_equal(api->max_version, 12);
    assert_int_equal(api->flexible_min, 9);
    api = samsa_proto_api_find(SAMSA_API_DescribeCluster);
    assert_non_null(api);
    assert_int_equal(api->flexible_min, 0);
    assert_int_equal(api->max_version, 2);          /* KIP-1073 */
    assert_null(samsa_proto_api_find(-1));
    assert_null(samsa_proto_api_find(7));
    assert_null(samsa_proto_api_find(32000));
}

/* The table is sorted by key and find() returns every row. */
static void
test_proto_api_table_sorted(void **state)
{
    size_t  i;

    (void) state;
    assert_true(samsa_proto_apis_cnt >= 3);
    for (i = 0; i < samsa_proto_apis_cnt; i++) {
        if (i > 0) {
            assert_true(samsa_proto_apis[i - 1].key < samsa_proto_apis[i].key);
        }
        assert_ptr_equal(samsa_proto_api_find(samsa_proto_apis[i].key),
                         &samsa_proto_apis[i]);
    }
}

static void
test_proto_req_is_flexible(void **state)
{
    (void) state;
    assert_false(samsa_proto_req_is_flexible(SAMSA_API_ApiVersions, 2));
    assert_true(samsa_proto_req_is_flexible(SAMSA_API_ApiVersions, 3));
    assert_true(samsa_proto_req_is_flexible(SAMSA_API_ApiVersions, 99));
    assert_false(samsa_proto_req_is_flexible(SAMSA_API_Metadata, 8));
    assert_true(samsa_proto_req_is_flexible(SAMSA_API_Metadata, 9));
    assert_true(samsa_proto_req_is_flexible(SAMSA_API_DescribeCluster, 0));
    assert_false(samsa_proto_req_is_flexible(SAMSA_API_Metadata, -1));
    assert_false(samsa_proto_req_is_flexible(7, 5));
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_proto_api_find),
        cmocka_unit_test(test_proto_api_table_sorted),
        cmocka_unit_test(test_proto_req_is_flexible),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
