/* Unit tests for log/log_config.c: Kafka's defaults and checks. */
#include "unit.h"

#include "log/log_config.h"

static void
test_log_config_defaults_and_checks(void **state)
{
    samsa_log_config_t  cfg;
    char                err[128];

    (void) state;
    samsa_log_config_defaults(&cfg);
    assert_int_equal(cfg.segment_bytes, 1073741824);
    assert_int_equal(cfg.segment_ms, 604800000);
    assert_int_equal(cfg.segment_index_bytes, 10485760);
    assert_int_equal(cfg.index_interval_bytes, 4096);
    assert_int_equal(cfg.retention_ms, 604800000);
    assert_int_equal(cfg.retention_bytes, -1);
    assert_int_equal(cfg.flush_messages, INT64_MAX);
    assert_int_equal(cfg.max_message_bytes, 1048588);
    assert_int_equal(cfg.file_delete_delay_ms, 60000);
    assert_int_equal(cfg.cleanup_policy, SAMSA_LOG_CLEANUP_DELETE);
    assert_false(cfg.log_append_time);
    assert_true(samsa_log_config_check(&cfg, err, sizeof(err)));
    cfg.flush_messages = 0;
    assert_false(samsa_log_config_check(&cfg, err, sizeof(err)));
    assert_non_null(strstr(err, "flush.messages"));
    samsa_log_config_defaults(&cfg);
    cfg.segment_index_bytes = 4;
    assert_false(samsa_log_config_check(&cfg, err, sizeof(err)));
    assert_non_null(strstr(err, "segment.index.bytes"));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_log_config_defaults_and_checks),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
