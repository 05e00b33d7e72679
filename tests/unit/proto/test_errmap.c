/* Unit tests for proto/errmap.c: local codes never reach the wire. */
#include "unit.h"

#include "proto/errmap.h"

static void
test_errmap_kafka_codes_pass_through(void **state)
{
    (void) state;
    assert_int_equal(samsa_err_wire(SAMSA_ERR_NONE), 0);
    assert_int_equal(samsa_err_wire(SAMSA_ERR_UNKNOWN_SERVER_ERROR), -1);
    assert_int_equal(samsa_err_wire(SAMSA_ERR_NOT_COORDINATOR), 16);
    assert_int_equal(samsa_err_wire(SAMSA_ERR_UNSUPPORTED_VERSION), 35);
}

static void
test_errmap_local_codes_map(void **state)
{
    (void) state;
    assert_int_equal(samsa_err_wire(SAMSA_ERR__IO),
                     SAMSA_ERR_KAFKA_STORAGE_ERROR);
    assert_int_equal(samsa_err_wire(SAMSA_ERR__UNDERFLOW),
                     SAMSA_ERR_INVALID_REQUEST);
    assert_int_equal(samsa_err_wire(SAMSA_ERR__BAD_MSG),
                     SAMSA_ERR_INVALID_REQUEST);
    assert_int_equal(samsa_err_wire(SAMSA_ERR__TIMED_OUT),
                     SAMSA_ERR_REQUEST_TIMED_OUT);
    /* out of descriptors is transient: retriable, not a storage error */
    assert_int_equal(samsa_err_wire(SAMSA_ERR__NOFILE),
                     SAMSA_ERR_REQUEST_TIMED_OUT);
    assert_int_equal(samsa_err_wire(SAMSA_ERR__STATE),
                     SAMSA_ERR_UNKNOWN_SERVER_ERROR);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_errmap_kafka_codes_pass_through),
        cmocka_unit_test(test_errmap_local_codes_map),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
