/* Unit tests for proto/resphdr.c: response header v0/v1 and the
 * ApiVersions exception. */
#include "unit.h"

#include "proto/resphdr.h"
#include "proto/proto.h"

static void
check(int16_t key, int16_t version, const uint8_t *want, size_t n)
{
    samsa_buf_t  buf = SAMSA_BUF_INIT;
    samsa_wr_t   wr;

    samsa_wr_init(&wr, &buf);
    samsa_wr_i8(&wr, 0x55);                         /* something before */
    assert_int_equal(samsa_resphdr_encode(&wr, key, version, 0x01020304), 1);
    assert_int_equal(buf.len, n + 1);
    assert_memory_equal(buf.data + 1, want, n);
    samsa_buf_fini(&buf);
}

static void
test_resphdr_v0_non_flexible(void **state)
{
    static const uint8_t  v0[] = { 0x01, 0x02, 0x03, 0x04 };

    (void) state;
    check(SAMSA_API_Metadata, 8, v0, sizeof(v0));
    check(SAMSA_API_Metadata, 0, v0, sizeof(v0));
}

static void
test_resphdr_v1_flexible(void **state)
{
    static const uint8_t  v1[] = { 0x01, 0x02, 0x03, 0x04, 0x00 };

    (void) state;
    check(SAMSA_API_Metadata, 9, v1, sizeof(v1));
    check(SAMSA_API_Metadata, 12, v1, sizeof(v1));
    check(SAMSA_API_DescribeCluster, 0, v1, sizeof(v1));
}

/* ApiVersions answers with header v0 in every version, flexible or not. */
static void
test_resphdr_api_versions_always_v0(void **state)
{
    static const uint8_t  v0[] = { 0x01, 0x02, 0x03, 0x04 };

    (void) state;
    check(SAMSA_API_ApiVersions, 0, v0, sizeof(v0));
    check(SAMSA_API_ApiVersions, 3, v0, sizeof(v0));
    check(SAMSA_API_ApiVersions, 4, v0, sizeof(v0));
    check(SAMSA_API_ApiVersions, 99, v0, sizeof(v0));
}

/* Keys we have no schema for are treated as non-flexible. */
static void
test_resphdr_unknown_key(void **state)
{
    static const uint8_t  v0[] = { 0x01, 0x02, 0x03, 0x04 };

    (void) state;
    check(9999, 50, v0, sizeof(v0));
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_resphdr_v0_non_flexible),
        cmocka_unit_test(test_resphdr_v1_flexible),
        cmocka_unit_test(test_resphdr_api_versions_always_v0),
        cmocka_unit_test(test_resphdr_unknown_key),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
