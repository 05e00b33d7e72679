/* Unit tests for meta/brokercfg.c: which broker keys are dynamic, the
 * value in effect and its source across the three levels (per-broker
 * dynamic, cluster-wide dynamic default, static), and the checks of a
 * change: Kafka's refusal of non-dynamic keys, INT parsing, and
 * DynamicThreadPool's half-to-double rule against the value in effect. */
#include "unit.h"

#include <stdio.h>
#include <string.h>

#include "meta/brokercfg.h"
#include "meta/topic_config.h"
#include "util/props.h"

static void
cfg_load(samsa_config_t *cfg, const char *key, const char *value)
{
    samsa_props_t  *props = samsa_props_new();
    char            err[512];

    if (key != NULL) {
        samsa_props_set(props, key, value, "server.properties");
    }
    err[0] = '\0';
    if (samsa_config_load(cfg, props, err, sizeof(err)) != SAMSA_ERR_NONE) {
        fail_msg("config: %s", err);
    }
    samsa_props_free(props);
}

static void
test_brokercfg_levels(void **state)
{
    samsa_config_t            cfg;
    samsa_brokercfg_levels_t  lv = { 0 };
    samsa_image_config_t      node[] = { { "num.io.threads", "3" } };
    samsa_image_config_t      dflt[] = { { "num.io.threads", "6" } };
    int                       source;

    (void) state;
    cfg_load(&cfg, NULL, NULL);
    assert_true(samsa_brokercfg_is_dynamic("num.io.threads"));
    assert_false(samsa_brokercfg_is_dynamic("log.dirs"));
    assert_string_equal(samsa_brokercfg_value(&cfg, &lv, "num.io.threads",
                                              &source), "8");
    assert_int_equal(source, SAMSA_CONFIG_SOURCE_DEFAULT_CONFIG);
    lv.dflt = dflt;
    lv.ndflt = 1;
    assert_int_equal(samsa_brokercfg_int(&cfg, &lv, "num.io.threads"), 6);
    samsa_brokercfg_value(&cfg, &lv, "num.io.threads", &source);
    assert_int_equal(source, SAMSA_CONFIG_SOURCE_DYNAMIC_DEFAULT_BROKER_CONFIG);
    lv.node = node;
    lv.nnode = 1;
    assert_int_equal(samsa_brokercfg_int(&cfg, &lv, "num.io.threads"), 3);
    samsa_brokercfg_value(&cfg, &lv, "num.io.threads", &source);
    assert_int_equal(source, SAMSA_CONFIG_SOURCE_DYNAMIC_BROKER_CONFIG);
    samsa_config_fini(&cfg);

    cfg_load(&cfg, "num.io.threads", "5");
    lv.node = NULL;
    lv.nnode = 0;
    lv.dflt = NULL;
    lv.ndflt = 0;
    samsa_brokercfg_value(&cfg, &lv, "num.io.threads", &source);
    assert_int_equal(source, SAMSA_CONFIG_SOURCE_STATIC_BROKER_CONFIG);
    samsa_config_fini(&cfg);
}

/* Validate key=value as the broker's (or the default's) whole set. */
static samsa_err_t
check(const samsa_config_t *cfg, const samsa_brokercfg_levels_t *cur,
      bool is_default, const char *key, const char *value, char *err)
{
    samsa_image_config_t  set[] = { { key, value } };

    err[0] = '\0';
    return samsa_brokercfg_validate(cfg, cur, is_default, set, 1, err, 512);
}

static void
test_brokercfg_validate(void **state)
{
    samsa_config_t            cfg;
    samsa_brokercfg_levels_t  lv = { 0 };
    samsa_image_config_t      node[] = { { "num.io.threads", "3" } };
    samsa_image_config_t      two[] = { { "log.dirs", "/x" },
                                        { "log.cleaner.io.buffer.size",
                                          "2" } };
    char                      err[512];

    (void) state;
    cfg_load(&cfg, "num.io.threads", "8");
    assert_int_equal(check(&cfg, &lv, false, "num.io.threads", "16", err),
                     SAMSA_ERR_NONE);
    assert_int_equal(check(&cfg, &lv, false, "num.io.threads", "4", err),
                     SAMSA_ERR_NONE);
    assert_int_equal(check(&cfg, &lv, false, "num.io.threads", "17", err),
                     SAMSA_ERR_INVALID_CONFIG);
    assert_string_equal(err, "Dynamic thread count update validation failed "
                        "for num.io.threads=17, value should not be greater "
                        "than double the current value 8");
    assert_int_equal(check(&cfg, &lv, false, "num.io.threads", "3", err),
                     SAMSA_ERR_INVALID_CONFIG);
    assert_string_equal(err, "Dynamic thread count update validation failed "
                        "for num.io.threads=3, value should be at least half "
                        "the current value 8");
    assert_int_equal(check(&cfg, &lv, false, "num.io.threads", "-1", err),
                     SAMSA_ERR_INVALID_CONFIG);
    assert_string_equal(err, "Dynamic thread count update validation failed "
                        "for num.io.threads=-1, value should be at least 1");
    assert_int_equal(check(&cfg, &lv, false, "num.io.threads", "8x", err),
                     SAMSA_ERR_INVALID_CONFIG);
    assert_string_equal(err, "Invalid value 8x for configuration "
                        "num.io.threads: Not a number of type INT");
    assert_int_equal(samsa_brokercfg_validate(&cfg, &lv, false, two, 2, err,
                                              sizeof(err)),
                     SAMSA_ERR_INVALID_CONFIG);
    assert_string_equal(err, "Cannot update these configs dynamically: "
                        "Set(log.dirs, log.cleaner.io.buffer.size)");
    /* unknown keys pass, as Kafka lets them */
    assert_int_equal(check(&cfg, &lv, false, "custom.key", "1", err),
                     SAMSA_ERR_NONE);

    /* a default of 20 does not change a broker whose own value is 3: no
     * check fires; removing the broker's 3 under a default of 8 is 3 -> 8,
     * more than double */
    lv.node = node;
    lv.nnode = 1;
    assert_int_equal(check(&cfg, &lv, true, "num.io.threads", "20", err),
                     SAMSA_ERR_NONE);
    assert_int_equal(samsa_brokercfg_validate(&cfg, &lv, false, NULL, 0, err,
                                              sizeof(err)),
                     SAMSA_ERR_INVALID_CONFIG);
    assert_string_equal(err, "Dynamic thread count update validation failed "
                        "for num.io.threads=8, value should not be greater "
                        "than double the current value 3");
    samsa_config_fini(&cfg);
}

/* num.network.threads: dynamic, same rule (Kafka's DataPlaneAcceptor
 * check), checked on its own against its own value in effect. */
static void
test_brokercfg_network_threads(void **state)
{
    samsa_config_t            cfg;
    samsa_brokercfg_levels_t  lv = { 0 };
    samsa_image_config_t      node[] = { { "num.network.threads", "6" } };
    char                      err[512];
    int                       source;

    (void) state;
    cfg_load(&cfg, "num.network.threads", "3");
    assert_true(samsa_brokercfg_is_dynamic("num.network.threads"));
    assert_int_equal(check(&cfg, &lv, false, "num.network.threads", "6", err),
                     SAMSA_ERR_NONE);
    assert_int_equal(check(&cfg, &lv, false, "num.network.threads", "7", err),
                     SAMSA_ERR_INVALID_CONFIG);
    assert_string_equal(err, "Dynamic thread count update validation failed "
                        "for num.network.threads=7, value should not be "
                        "greater than double the current value 3");
    lv.node = node;
    lv.nnode = 1;
    assert_int_equal(samsa_brokercfg_int(&cfg, &lv, "num.network.threads"),
                     6);
    samsa_brokercfg_value(&cfg, &lv, "num.network.threads", &source);
    assert_int_equal(source, SAMSA_CONFIG_SOURCE_DYNAMIC_BROKER_CONFIG);
    assert_int_equal(check(&cfg, &lv, false, "num.network.threads", "2", err),
                     SAMSA_ERR_INVALID_CONFIG);
    assert_string_equal(err, "Dynamic thread count update validation failed "
                        "for num.network.threads=2, value should be at least "
                        "half the current value 6");
    assert_int_equal(check(&cfg, &lv, false, "num.network.threads", "3", err),
                     SAMSA_ERR_NONE);
    /* a whole new set without it drops the 6 back to the static 3 (6 -> 3
     * is allowed) while num.io.threads goes 8 -> 4 */
    assert_int_equal(check(&cfg, &lv, false, "num.io.threads", "4", err),
                     SAMSA_ERR_NONE);
    /* ... but not to a static value below half: with 1 static, 6 -> 1 */
    samsa_config_fini(&cfg);
    cfg_load(&cfg, "num.network.threads", "1");
    assert_int_equal(check(&cfg, &lv, false, "num.io.threads", "4", err),
                     SAMSA_ERR_INVALID_CONFIG);
    assert_string_equal(err, "Dynamic thread count update validation failed "
                        "for num.network.threads=1, value should be at least "
                        "half the current value 6");
    samsa_config_fini(&cfg);
}

/* Log defaults (DynamicLogConfig): dynamic, checked by type and range,
 * never by the thread rule. */
static void
test_brokercfg_log_defaults(void **state)
{
    samsa_config_t            cfg;
    samsa_brokercfg_levels_t  lv = { 0 };
    char                      err[512];

    (void) state;
    cfg_load(&cfg, NULL, NULL);
    assert_true(samsa_brokercfg_is_dynamic("log.retention.ms"));
    assert_true(samsa_brokercfg_is_dynamic("log.retention.hours"));
    assert_false(samsa_brokercfg_is_dynamic("log.cleaner.io.buffer.size"));
    assert_int_equal(check(&cfg, &lv, false, "log.retention.ms", "1", err),
                     SAMSA_ERR_NONE);
    assert_int_equal(check(&cfg, &lv, false, "log.retention.ms",
                           "9000000000000", err),
                     SAMSA_ERR_NONE);          /* a LONG, not an INT */
    assert_int_equal(check(&cfg, &lv, false, "log.retention.ms", "-2", err),
                     SAMSA_ERR_INVALID_CONFIG);
    assert_string_equal(err, "Invalid value -2 for configuration "
                        "log.retention.ms: Value must be at least -1");
    assert_int_equal(check(&cfg, &lv, false, "log.retention.hours",
                           "9000000000000", err),
                     SAMSA_ERR_INVALID_CONFIG);
    assert_string_equal(err, "Invalid value 9000000000000 for configuration "
                        "log.retention.hours: Not a number of type INT");
    assert_int_equal(check(&cfg, &lv, false, "log.retention.bytes", "x", err),
                     SAMSA_ERR_INVALID_CONFIG);
    assert_string_equal(err, "Invalid value x for configuration "
                        "log.retention.bytes: Not a number of type LONG");
    samsa_config_fini(&cfg);
}

/* log.cleaner.threads: LogCleaner.validateReconfiguration's rule and
 * messages against the value in effect; log.cleaner.backoff.ms by its
 * type and range. */
static void
test_brokercfg_cleaner(void **state)
{
    samsa_config_t            cfg;
    samsa_brokercfg_levels_t  lv = { 0 };
    samsa_image_config_t      node[] = { { "log.cleaner.threads", "4" } };
    char                      err[512];

    (void) state;
    cfg_load(&cfg, "log.cleaner.threads", "3");
    assert_true(samsa_brokercfg_is_dynamic("log.cleaner.threads"));
    assert_true(samsa_brokercfg_is_dynamic("log.cleaner.backoff.ms"));
    assert_int_equal(check(&cfg, &lv, false, "log.cleaner.threads", "6", err),
                     SAMSA_ERR_NONE);
    assert_int_equal(check(&cfg, &lv, false, "log.cleaner.threads", "1", err),
                     SAMSA_ERR_NONE);           /* 3 / 2 == 1, as Kafka's */
    assert_int_equal(check(&cfg, &lv, false, "log.cleaner.threads", "7", err),
                     SAMSA_ERR_INVALID_CONFIG);
    assert_string_equal(err, "Log cleaner threads cannot be increased to "
                        "more than double the current value 3");
    assert_int_equal(check(&cfg, &lv, false, "log.cleaner.threads", "0", err),
                     SAMSA_ERR_INVALID_CONFIG);
    assert_string_equal(err, "Log cleaner threads should be at least 1");
    assert_int_equal(check(&cfg, &lv, false, "log.cleaner.threads", "two",
                           err),
                     SAMSA_ERR_INVALID_CONFIG);
    assert_string_equal(err, "Invalid value two for configuration "
                        "log.cleaner.threads: Not a number of type INT");
    /* against the value in effect: the broker's 4 */
    lv.node = node;
    lv.nnode = 1;
    assert_int_equal(samsa_brokercfg_int(&cfg, &lv, "log.cleaner.threads"),
                     4);
    assert_int_equal(check(&cfg, &lv, false, "log.cleaner.threads", "1", err),
                     SAMSA_ERR_INVALID_CONFIG);
    assert_string_equal(err, "Log cleaner threads cannot be reduced to less "
                        "than half the current value 4");
    lv.node = NULL;
    lv.nnode = 0;
    assert_int_equal(check(&cfg, &lv, false, "log.cleaner.backoff.ms", "-1",
                           err),
                     SAMSA_ERR_INVALID_CONFIG);
    assert_string_equal(err, "Invalid value -1 for configuration "
                        "log.cleaner.backoff.ms: Value must be at least 0");
    assert_int_equal(check(&cfg, &lv, false, "log.cleaner.backoff.ms",
                           "9000000000000", err),
                     SAMSA_ERR_NONE);
    node[0].name = "log.cleaner.backoff.ms";
    node[0].value = "250";
    lv.node = node;
    lv.nnode = 1;
    assert_int_equal(samsa_brokercfg_long(&cfg, &lv,
                                          "log.cleaner.backoff.ms"), 250);
    samsa_config_fini(&cfg);
}

/* log.cleaner.dedupe.buffer.size: dynamic, a LONG, and KafkaConfig's
 * "more than 1 MiB per cleaner thread" against the new thread count too,
 * checked only when either key changes; log.cleaner.io.max.bytes.per.second
 * a DOUBLE. */
static void
test_brokercfg_cleaner_dedupe(void **state)
{
    samsa_config_t            cfg;
    samsa_brokercfg_levels_t  lv = { 0 };
    samsa_image_config_t      node[] = {
        { "log.cleaner.dedupe.buffer.size", "2097152" },
    };
    char                      err[512];
    const char               *msg = "requirement failed: "
                                    "log.cleaner.dedupe.buffer.size must be "
                                    "at least 1MB per cleaner thread.";

    (void) state;
    cfg_load(&cfg, "log.cleaner.dedupe.buffer.size", "4194304");
    assert_true(samsa_brokercfg_is_dynamic("log.cleaner.dedupe.buffer.size"));
    assert_int_equal(check(&cfg, &lv, false, "log.cleaner.dedupe.buffer.size",
                           "1048577", err),
                     SAMSA_ERR_NONE);
    assert_int_equal(check(&cfg, &lv, false, "log.cleaner.dedupe.buffer.size",
                           "1048576", err),
                     SAMSA_ERR_INVALID_CONFIG);
    assert_string_equal(err, msg);
    assert_int_equal(check(&cfg, &lv, false, "log.cleaner.dedupe.buffer.size",
                           "-1", err),
                     SAMSA_ERR_INVALID_CONFIG);
    assert_string_equal(err, msg);
    assert_int_equal(check(&cfg, &lv, false, "log.cleaner.dedupe.buffer.size",
                           "1.5", err),
                     SAMSA_ERR_INVALID_CONFIG);
    assert_string_equal(err, "Invalid value 1.5 for configuration "
                        "log.cleaner.dedupe.buffer.size: Not a number of "
                        "type LONG");
    /* 4 MiB over 2 threads is fine; the broker's 2 MiB over 2 is 1 MiB
     * each */
    assert_int_equal(check(&cfg, &lv, false, "log.cleaner.threads", "2", err),
                     SAMSA_ERR_NONE);
    lv.node = node;
    lv.nnode = 1;
    assert_int_equal(check(&cfg, &lv, true, "log.cleaner.threads", "2", err),
                     SAMSA_ERR_INVALID_CONFIG);
    assert_string_equal(err, msg);
    lv.node = NULL;
    lv.nnode = 0;
    /* log.cleaner.io.max.bytes.per.second: a DOUBLE, no range */
    assert_true(samsa_brokercfg_is_dynamic(
        "log.cleaner.io.max.bytes.per.second"));
    assert_int_equal(check(&cfg, &lv, false,
                           "log.cleaner.io.max.bytes.per.second", "1.5e6",
                           err),
                     SAMSA_ERR_NONE);
    assert_int_equal(check(&cfg, &lv, false,
                           "log.cleaner.io.max.bytes.per.second", "fast",
                           err),
                     SAMSA_ERR_INVALID_CONFIG);
    assert_string_equal(err, "Invalid value fast for configuration "
                        "log.cleaner.io.max.bytes.per.second: Not a number "
                        "of type DOUBLE");
    node[0].name = "log.cleaner.io.max.bytes.per.second";
    node[0].value = "2048.5";
    lv.node = node;
    lv.nnode = 1;
    assert_true(samsa_brokercfg_double(&cfg, &lv,
                                       "log.cleaner.io.max.bytes.per.second")
                == 2048.5);
    lv.node = NULL;
    lv.nnode = 0;
    samsa_config_fini(&cfg);
    /* a static value below the rule does not block other changes */
    cfg_load(&cfg, "log.cleaner.dedupe.buffer.size", "1000");
    assert_int_equal(check(&cfg, &lv, false, "log.retention.ms", "1", err),
                     SAMSA_ERR_NONE);
    samsa_config_fini(&cfg);
}

/* The connection limits (DynamicConnectionQuota) and their listener
 * forms (ListenerConnectionQuota): dynamic, checked, and a listener's
 * value falls back to the key's own. */
static void
test_brokercfg_connection_limits(void **state)
{
    samsa_config_t            cfg;
    samsa_brokercfg_levels_t  lv = { 0 };
    samsa_image_config_t      node[] = {
        { "listener.name.plaintext.max.connections", "7" },
        { "max.connections", "50" },
    };
    samsa_image_config_t      ipzero[] = {
        { "max.connections.per.ip.overrides", "127.0.0.1:5, ::1:2" },
        { "max.connections.per.ip", "0" },
    };
    char                      err[512];
    bool                      prefixed;

    (void) state;
    cfg_load(&cfg, "max.connection.creation.rate", "20");
    assert_true(samsa_brokercfg_is_dynamic("max.connections"));
    assert_true(samsa_brokercfg_is_dynamic("max.connections.per.ip"));
    assert_true(samsa_brokercfg_is_dynamic("max.connection.creation.rate"));
    assert_true(samsa_brokercfg_is_dynamic(
        "listener.name.plaintext.max.connections"));
    assert_false(samsa_brokercfg_is_dynamic(
        "listener.name.plaintext.num.io.threads"));
    assert_int_equal(check(&cfg, &lv, false, "max.connections", "-1", err),
                     SAMSA_ERR_INVALID_CONFIG);
    assert_string_equal(err, "Invalid value -1 for configuration "
                        "max.connections: Value must be at least 0");
    assert_int_equal(check(&cfg, &lv, false, "max.connections.per.ip", "0",
                           err),
                     SAMSA_ERR_INVALID_CONFIG);
    assert_string_equal(err, "requirement failed: max.connections.per.ip "
                        "can be set to zero only if "
                        "max.connections.per.ip.overrides property is set.");
    assert_int_equal(check(&cfg, &lv, false,
                           "listener.name.plaintext.max.connections", "0",
                           err),
                     SAMSA_ERR_INVALID_CONFIG);
    assert_string_equal(err, "Invalid max.connections 0");
    assert_int_equal(check(&cfg, &lv, false,
                           "listener.name.x.max.connection.creation.rate",
                           "-3", err),
                     SAMSA_ERR_INVALID_CONFIG);
    assert_string_equal(err, "Invalid max.connection.creation.rate -3");
    assert_int_equal(check(&cfg, &lv, false,
                           "listener.name.plaintext.max.connections", "9",
                           err),
                     SAMSA_ERR_NONE);

    /* the overrides: parsed as at start; with them, a per-IP 0 is fine */
    assert_true(samsa_brokercfg_is_dynamic(
        "max.connections.per.ip.overrides"));
    assert_int_equal(check(&cfg, &lv, false,
                           "max.connections.per.ip.overrides", "127.0.0.1:x",
                           err),
                     SAMSA_ERR_INVALID_CONFIG);
    assert_string_equal(err, "Invalid value 127.0.0.1:x for configuration "
                        "max.connections.per.ip.overrides: '127.0.0.1:x': "
                        "the count must be a number from 0 to 2147483647");
    assert_int_equal(samsa_brokercfg_validate(&cfg, &lv, false, ipzero, 2,
                                              err, sizeof(err)),
                     SAMSA_ERR_NONE);
    assert_int_equal(samsa_brokercfg_validate(&cfg, &lv, false, ipzero + 1,
                                              1, err, sizeof(err)),
                     SAMSA_ERR_INVALID_CONFIG);

    lv.node = node;
    lv.nnode = 2;
    assert_int_equal(samsa_brokercfg_listener_int(&cfg, &lv, "PLAINTEXT",
                                                  "max.connections",
                                                  &prefixed), 7);
    assert_true(prefixed);
    assert_int_equal(samsa_brokercfg_listener_int(&cfg, &lv, "OTHER",
                                                  "max.connections",
                                                  &prefixed), 50);
    assert_false(prefixed);
    assert_int_equal(samsa_brokercfg_listener_int(
                         &cfg, &lv, "PLAINTEXT",
                         "max.connection.creation.rate", &prefixed), 20);
    assert_false(prefixed);
    samsa_config_fini(&cfg);
}

/* The TLS store keys: dynamic only per broker and with a listener prefix
 * (DynamicBrokerConfig.validateConfigs); the stores themselves are the
 * server's hook's (server/tlsconf.c), so any text passes here. */
static void
test_brokercfg_ssl_stores(void **state)
{
    samsa_config_t            cfg;
    samsa_brokercfg_levels_t  lv = { 0 };
    char                      err[512];

    (void) state;
    cfg_load(&cfg, "max.connection.creation.rate", "20");
    assert_true(samsa_brokercfg_is_dynamic("ssl.keystore.location"));
    assert_true(samsa_brokercfg_is_dynamic(
        "listener.name.ssl.ssl.keystore.location"));
    assert_true(samsa_brokercfg_is_dynamic(
        "listener.name.ssl.ssl.truststore.certificates"));
    assert_false(samsa_brokercfg_is_dynamic(
        "listener.name.ssl.ssl.client.auth"));
    assert_false(samsa_brokercfg_is_dynamic("ssl.cipher.suites"));
    assert_int_equal(check(&cfg, &lv, false, "ssl.keystore.location",
                           "/k.pem", err), SAMSA_ERR_INVALID_CONFIG);
    assert_string_equal(err, "These security configs can be dynamically "
                        "updated only per-listener using the listener "
                        "prefix: Set(ssl.keystore.location)");
    assert_int_equal(check(&cfg, &lv, true,
                           "listener.name.ssl.ssl.keystore.location",
                           "/k.pem", err), SAMSA_ERR_INVALID_CONFIG);
    assert_string_equal(err, "Cannot update these configs at default "
                        "cluster level, broker id must be specified: "
                        "Set(listener.name.ssl.ssl.keystore.location)");
    assert_int_equal(check(&cfg, &lv, false,
                           "listener.name.ssl.ssl.keystore.location",
                           "/k.pem", err), SAMSA_ERR_NONE);
    /* a cluster-level listener key stays allowed at the default level */
    assert_int_equal(check(&cfg, &lv, true,
                           "listener.name.plaintext.max.connections", "5",
                           err), SAMSA_ERR_NONE);
    samsa_config_fini(&cfg);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_brokercfg_levels),
        cmocka_unit_test(test_brokercfg_validate),
        cmocka_unit_test(test_brokercfg_network_threads),
        cmocka_unit_test(test_brokercfg_log_defaults),
        cmocka_unit_test(test_brokercfg_cleaner),
        cmocka_unit_test(test_brokercfg_cleaner_dedupe),
        cmocka_unit_test(test_brokercfg_connection_limits),
        cmocka_unit_test(test_brokercfg_ssl_stores),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
