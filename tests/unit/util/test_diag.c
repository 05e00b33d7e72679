/* Unit tests for util/diag.c's named loggers: log4j's inheritance (a
 * logger without its own level follows root), the enable hook asked
 * before a change leaves a logger at DEBUG or above, and a refusal that
 * changes nothing. */
#include "unit.h"

#include <stdio.h>
#include <string.h>

#include "util/diag.h"

static int   hook_calls;
static bool  hook_ok = true;

static bool
test_hook(void *ctx, char *errstr, size_t errstr_size)
{
    (void) ctx;
    hook_calls++;
    if (!hook_ok) {
        snprintf(errstr, errstr_size, "no file");
    }
    return hook_ok;
}

static void
test_diag_loggers(void **state)
{
    samsa_diag_logger_t  lg;
    char                 err[64] = "";

    (void) state;
    assert_true(samsa_diag_logger_find("root", &lg));
    assert_int_equal(lg, SAMSA_DIAG_LOGGER_ROOT);
    assert_true(samsa_diag_logger_find("kafka.request.logger", &lg));
    assert_int_equal(lg, SAMSA_DIAG_LOGGER_REQUEST);
    assert_false(samsa_diag_logger_find("Root", &lg));
    assert_false(samsa_diag_logger_find("kafka.server.KafkaApis", &lg));

    samsa_diag_logger_hook(SAMSA_DIAG_LOGGER_REQUEST, test_hook, NULL);
    assert_true(samsa_diag_logger_update(SAMSA_DIAG_LOGGER_ROOT, false,
                                         SAMSA_DIAG_INFO, err, sizeof(err)));
    /* the request logger starts at WARN of its own: root does not move it */
    assert_int_equal(samsa_diag_logger_level(SAMSA_DIAG_LOGGER_REQUEST),
                     SAMSA_DIAG_WARN);
    assert_true(samsa_diag_logger_update(SAMSA_DIAG_LOGGER_ROOT, false,
                                         SAMSA_DIAG_DEBUG, err, sizeof(err)));
    assert_int_equal(hook_calls, 0);
    assert_false(samsa_diag_logger_enabled(SAMSA_DIAG_LOGGER_REQUEST,
                                           SAMSA_DIAG_DEBUG));

    /* unset: it follows root's DEBUG, so its hook is asked first */
    assert_true(samsa_diag_logger_update(SAMSA_DIAG_LOGGER_REQUEST, true,
                                         SAMSA_DIAG_INFO, err, sizeof(err)));
    assert_int_equal(hook_calls, 1);
    assert_true(samsa_diag_logger_enabled(SAMSA_DIAG_LOGGER_REQUEST,
                                          SAMSA_DIAG_DEBUG));
    /* root to INFO: it follows, no hook asked for a lower level */
    assert_true(samsa_diag_logger_update(SAMSA_DIAG_LOGGER_ROOT, false,
                                         SAMSA_DIAG_INFO, err, sizeof(err)));
    assert_int_equal(hook_calls, 1);
    assert_int_equal(samsa_diag_logger_level(SAMSA_DIAG_LOGGER_REQUEST),
                     SAMSA_DIAG_INFO);

    /* a refusing hook: neither root nor the logger changes */
    hook_ok = false;
    assert_false(samsa_diag_logger_update(SAMSA_DIAG_LOGGER_ROOT, false,
                                          SAMSA_DIAG_TRACE, err,
                                          sizeof(err)));
    assert_string_equal(err, "no file");
    assert_int_equal(samsa_diag_get_level(), SAMSA_DIAG_INFO);
    assert_false(samsa_diag_logger_update(SAMSA_DIAG_LOGGER_REQUEST, false,
                                          SAMSA_DIAG_DEBUG, err,
                                          sizeof(err)));
    assert_int_equal(samsa_diag_logger_level(SAMSA_DIAG_LOGGER_REQUEST),
                     SAMSA_DIAG_INFO);
    /* a level below DEBUG needs no hook */
    assert_true(samsa_diag_logger_update(SAMSA_DIAG_LOGGER_REQUEST, false,
                                         SAMSA_DIAG_ERROR, err, sizeof(err)));
    assert_int_equal(samsa_diag_logger_level(SAMSA_DIAG_LOGGER_REQUEST),
                     SAMSA_DIAG_ERROR);
    /* root cannot be unset */
    assert_false(samsa_diag_logger_update(SAMSA_DIAG_LOGGER_ROOT, true,
                                          SAMSA_DIAG_INFO, err, sizeof(err)));
    hook_ok = true;
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_diag_loggers),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
