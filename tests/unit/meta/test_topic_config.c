/* Unit tests for meta/topic_config.c: the table of Kafka's topic configs,
 * value checks with Kafka's ConfigException messages, canonical values,
 * and resolution: effective value, source and synonyms as DescribeConfigs
 * reports them (including ConfigHelper's habit of dropping synonyms
 * listed before the first entry for the primary broker key), with broker
 * values from defaults, server.properties and dynamic broker configs. */
#include "unit.h"

#include <stdio.h>

#include "meta/topic_config.h"
#include "util/props.h"

/* A broker config from key=value pairs (NULL-terminated). */
static void
cfg_load(samsa_config_t *cfg, const char *const *kv)
{
    samsa_props_t  *props = samsa_props_new();
    char            err[512];

    for (; kv != NULL && kv[0] != NULL; kv += 2) {
        samsa_props_set(props, kv[0], kv[1], "server.properties");
    }
    err[0] = '\0';
    if (samsa_config_load(cfg, props, err, sizeof(err)) != SAMSA_ERR_NONE) {
        fail_msg("config: %s", err);
    }
    samsa_props_free(props);
}

static void
test_topic_config_table(void **state)
{
    char         err[512];
    const char  *canon;
    size_t       i, j;

    (void) state;
    for (i = 0; i < samsa_topic_config_ndefs; i++) {
        const samsa_config_def_t        *def = &samsa_topic_config_defs[i];

        if (i > 0) {        /* sorted: samsa_topic_config_find bisects */
            assert_true(strcmp(samsa_topic_config_defs[i - 1].name,
                               def->name) < 0);
        }
        assert_ptr_equal(samsa_topic_config_find(def->name), def);
        assert_int_equal(samsa_topic_config_check(def->name, def->dflt, NULL,
                                                  NULL, err, sizeof(err)),
                         SAMSA_ERR_NONE);
        assert_non_null(def->doc);
        for (j = 0; j < SAMSA_CONFIG_SYNONYMS_MAX
                    && def->synonyms[j].name != NULL; j++) {
            /* every broker fallback is a broker key, but the tiered
             * storage ones Samsa's broker table lacks */
            if (strncmp(def->synonyms[j].name, "log.local.", 10) != 0) {
                assert_int_not_equal(
                    samsa_config_defs_index(def->synonyms[j].name),
                    samsa_config_ndefs);
            }
        }
    }
    assert_null(samsa_topic_config_find("message.format.version"));
    assert_null(samsa_topic_config_find("zzz"));
    assert_int_equal(samsa_topic_config_wire_type(
                         samsa_topic_config_find("retention.ms")),
                     SAMSA_CONFIG_WIRE_LONG);
    assert_int_equal(samsa_topic_config_wire_type(
                         samsa_topic_config_find("cleanup.policy")),
                     SAMSA_CONFIG_WIRE_LIST);
    (void) canon;
}

typedef struct check_case {
    const char  *key;
    const char  *value;
    const char  *want;              /* canonical value, or the error */
    bool         ok;
} check_case_t;

static void
test_topic_config_check(void **state)
{
    static const check_case_t  cases[] = {
        { "retention.ms", " 1000 ", "1000", true },
        { "retention.ms", "+5", "5", true },
        { "retention.ms", "-1", "-1", true },
        { "preallocate", "TRUE", "true", true },
        { "cleanup.policy", "compact , delete", "compact,delete", true },
        { "cleanup.policy", "", "", true },
        { "min.cleanable.dirty.ratio", "0.50", "0.5", true },
        { "min.cleanable.dirty.ratio", "1", "1.0", true },
        { "compression.gzip.level", "-1", "-1", true },
        { "leader.replication.throttled.replicas", "0:1, 1:1", "0:1,1:1",
          true },
        { "leader.replication.throttled.replicas", "*", "*", true },
        { "retention.ms", "abc", "Invalid value abc for configuration "
          "retention.ms: Not a number of type LONG", false },
        { "retention.ms", "1 000", "Invalid value 1 000 for configuration "
          "retention.ms: Not a number of type LONG", false },
        { "retention.ms", "-2", "Invalid value -2 for configuration "
          "retention.ms: Value must be at least -1", false },
        { "segment.bytes", "100", "Invalid value 100 for configuration "
          "segment.bytes: Value must be at least 1048576", false },
        { "segment.bytes", "2147483648", "Invalid value 2147483648 for "
          "configuration segment.bytes: Not a number of type INT", false },
        { "compression.lz4.level", "18", "Invalid value 18 for "
          "configuration compression.lz4.level: Value must be no more than "
          "17", false },
        { "compression.gzip.level", "0", "Invalid value 0 for configuration "
          "compression.gzip.level: Value must be between 1 and 9, or -1",
          false },
        { "cleanup.policy", "compact,foo", "Invalid value foo for "
          "configuration cleanup.policy: String must be one of: compact, "
          "delete", false },
        { "compression.type", "brotli", "Invalid value brotli for "
          "configuration compression.type: String must be one of: "
          "uncompressed, zstd, lz4, snappy, gzip, producer", false },
        { "message.timestamp.type", "createtime", "Invalid value createtime "
          "for configuration message.timestamp.type: String must be one of: "
          "CreateTime, LogAppendTime", false },
        { "preallocate", "yes", "Invalid value yes for configuration "
          "preallocate: Expected value to be either true or false", false },
        { "min.cleanable.dirty.ratio", "1.5", "Invalid value 1.5 for "
          "configuration min.cleanable.dirty.ratio: Value must be no more "
          "than 1", false },
        { "min.cleanable.dirty.ratio", "NaN", "Invalid value NaN for "
          "configuration min.cleanable.dirty.ratio: Value must be at least "
          "0", false },
        { "min.cleanable.dirty.ratio", "x", "Invalid value x for "
          "configuration min.cleanable.dirty.ratio: Not a number of type "
          "DOUBLE", false },
        { "leader.replication.throttled.replicas", "0-1", NULL, false },
        { "message.format.version", "3.0", "Unknown topic config name: "
          "message.format.version", false },
    };
    samsa_arena_t  arena;
    char           err[512];
    const char    *canon;
    size_t         i;

    (void) state;
    samsa_arena_init(&arena);
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        samsa_err_t  e = samsa_topic_config_check(cases[i].key,
                                                  cases[i].value, &arena,
                                                  &canon, err, sizeof(err));

        if (cases[i].ok) {
            assert_int_equal(e, SAMSA_ERR_NONE);
            assert_string_equal(canon, cases[i].want);
        } else {
            assert_int_equal(e, SAMSA_ERR_INVALID_CONFIG);
            assert_null(canon);
            if (cases[i].want != NULL) {
                assert_string_equal(err, cases[i].want);
            }
        }
    }
    samsa_arena_fini(&arena);
}

static void
assert_synonym(const samsa_topic_config_entry_t *e, size_t i,
               const char *name, const char *value,
               samsa_config_source_t source)
{
    assert_true(i < e->nsynonyms);
    assert_string_equal(e->synonyms[i].name, name);
    assert_string_equal(e->synonyms[i].value, value);
    assert_int_equal(e->synonyms[i].source, source);
}

/* Nothing set: every value is the broker's default. */
static void
test_topic_config_resolve_defaults(void **state)
{
    samsa_config_t              cfg;
    samsa_topic_config_entry_t  e;
    samsa_arena_t               arena;

    (void) state;
    cfg_load(&cfg, NULL);
    samsa_arena_init(&arena);
    assert_int_equal(samsa_topic_config_resolve(&cfg, NULL, NULL, 0,
                                                "segment.bytes", &arena, &e),
                     SAMSA_ERR_NONE);
    assert_string_equal(e.value, "1073741824");
    assert_int_equal(e.source, SAMSA_CONFIG_SOURCE_DEFAULT_CONFIG);
    assert_int_equal(e.nsynonyms, 1);
    assert_synonym(&e, 0, "log.segment.bytes", "1073741824",
                   SAMSA_CONFIG_SOURCE_DEFAULT_CONFIG);
    assert_non_null(e.def->doc);

    /* retention.ms: the only value is log.retention.hours' default; as in
     * Kafka, synonyms before the first log.retention.ms entry are dropped,
     * leaving none. */
    assert_int_equal(samsa_topic_config_resolve(&cfg, NULL, NULL, 0,
                                                "retention.ms", &arena, &e),
                     SAMSA_ERR_NONE);
    assert_string_equal(e.value, "604800000");
    assert_int_equal(e.source, SAMSA_CONFIG_SOURCE_DEFAULT_CONFIG);
    assert_int_equal(e.nsynonyms, 0);

    assert_int_equal(samsa_topic_config_resolve(&cfg, NULL, NULL, 0,
                                                "remote.storage.enable",
                                                &arena, &e), SAMSA_ERR_NONE);
    assert_string_equal(e.value, "false");
    assert_int_equal(e.nsynonyms, 0);
    assert_int_equal(e.source, SAMSA_CONFIG_SOURCE_DEFAULT_CONFIG);

    assert_int_equal(samsa_topic_config_resolve(&cfg, NULL, NULL, 0,
                                                "local.retention.ms", &arena,
                                                &e), SAMSA_ERR_NONE);
    assert_string_equal(e.value, "-2");
    assert_synonym(&e, 0, "log.local.retention.ms", "-2",
                   SAMSA_CONFIG_SOURCE_DEFAULT_CONFIG);

    assert_int_equal(samsa_topic_config_resolve(&cfg, NULL, NULL, 0,
                                                "min.cleanable.dirty.ratio",
                                                &arena, &e), SAMSA_ERR_NONE);
    assert_string_equal(e.value, "0.5");
    assert_int_equal(samsa_topic_config_resolve(&cfg, NULL, NULL, 0, "nope",
                                                &arena, &e), SAMSA_ERR__NOENT);
    assert_int_equal(samsa_topic_config_long(&cfg, NULL, NULL, 0,
                                             "segment.ms"), 604800000);
    assert_int_equal(samsa_topic_config_long(&cfg, NULL, NULL, 0,
                                             "max.message.bytes"), 1048588);
    assert_false(samsa_topic_config_bool(&cfg, NULL, NULL, 0, "preallocate"));
    assert_true(samsa_topic_config_double(&cfg, NULL, NULL, 0,
                                          "min.cleanable.dirty.ratio") == 0.5);
    samsa_arena_fini(&arena);
    samsa_config_fini(&cfg);
}

/* server.properties values: STATIC_BROKER_CONFIG, scaled to the topic
 * key's unit, first synonym that is set winning. */
static void
test_topic_config_resolve_static(void **state)
{
    static const char *const    kv[] = {
        "log.segment.bytes", "2097152",
        "log.retention.minutes", "2",
        "log.roll.hours", "1",
        "log.cleanup.policy", "compact, delete",
        "message.max.bytes", "5000",
        NULL,
    };
    static const char *const    kv_ms[] = {
        "log.retention.ms", "1000",
        "log.retention.hours", "5",
        NULL,
    };
    samsa_config_t              cfg;
    samsa_topic_config_entry_t  e;
    samsa_arena_t               arena;

    (void) state;
    cfg_load(&cfg, kv);
    samsa_arena_init(&arena);
    assert_int_equal(samsa_topic_config_resolve(&cfg, NULL, NULL, 0,
                                                "segment.bytes", &arena, &e),
                     SAMSA_ERR_NONE);
    assert_string_equal(e.value, "2097152");
    assert_int_equal(e.source, SAMSA_CONFIG_SOURCE_STATIC_BROKER_CONFIG);
    assert_int_equal(e.nsynonyms, 2);
    assert_synonym(&e, 0, "log.segment.bytes", "2097152",
                   SAMSA_CONFIG_SOURCE_STATIC_BROKER_CONFIG);
    assert_synonym(&e, 1, "log.segment.bytes", "1073741824",
                   SAMSA_CONFIG_SOURCE_DEFAULT_CONFIG);

    assert_int_equal(samsa_topic_config_long(&cfg, NULL, NULL, 0,
                                             "retention.ms"), 120000);
    assert_int_equal(samsa_topic_config_resolve(&cfg, NULL, NULL, 0,
                                                "retention.ms", &arena, &e),
                     SAMSA_ERR_NONE);
    assert_int_equal(e.nsynonyms, 0);           /* Kafka's quirk again */
    assert_int_equal(e.source, SAMSA_CONFIG_SOURCE_DEFAULT_CONFIG);
    assert_int_equal(samsa_topic_config_long(&cfg, NULL, NULL, 0,
                                             "segment.ms"), 3600000);
    assert_int_equal(samsa_topic_config_resolve(&cfg, NULL, NULL, 0,
                                                "cleanup.policy", &arena, &e),
                     SAMSA_ERR_NONE);
    assert_string_equal(e.value, "compact,delete");
    assert_int_equal(samsa_topic_config_long(&cfg, NULL, NULL, 0,
                                             "max.message.bytes"), 5000);
    samsa_config_fini(&cfg);

    cfg_load(&cfg, kv_ms);
    assert_int_equal(samsa_topic_config_resolve(&cfg, NULL, NULL, 0,
                                                "retention.ms", &arena, &e),
                     SAMSA_ERR_NONE);
    assert_string_equal(e.value, "1000");       /* ms wins over hours */
    assert_int_equal(e.source, SAMSA_CONFIG_SOURCE_STATIC_BROKER_CONFIG);
    assert_int_equal(e.nsynonyms, 3);
    assert_synonym(&e, 0, "log.retention.ms", "1000",
                   SAMSA_CONFIG_SOURCE_STATIC_BROKER_CONFIG);
    assert_synonym(&e, 1, "log.retention.hours", "5",
                   SAMSA_CONFIG_SOURCE_STATIC_BROKER_CONFIG);
    assert_synonym(&e, 2, "log.retention.hours", "168",
                   SAMSA_CONFIG_SOURCE_DEFAULT_CONFIG);
    samsa_arena_fini(&arena);
    samsa_config_fini(&cfg);
}

/* A topic override wins (DYNAMIC_TOPIC_CONFIG first, canonical). */
static void
test_topic_config_resolve_override(void **state)
{
    static const char *const    kv[] = { "log.retention.ms", "5", NULL };
    samsa_image_config_t        ov[2] = {
        { "retention.ms", " 1000" }, { "cleanup.policy", "compact" },
    };
    samsa_config_t              cfg;
    samsa_topic_config_entry_t  e;
    samsa_arena_t               arena;

    (void) state;
    cfg_load(&cfg, kv);
    samsa_arena_init(&arena);
    assert_int_equal(samsa_topic_config_resolve(&cfg, NULL, ov, 2,
                                                "retention.ms", &arena, &e),
                     SAMSA_ERR_NONE);
    assert_string_equal(e.value, "1000");
    assert_int_equal(e.source, SAMSA_CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG);
    assert_int_equal(e.nsynonyms, 3);
    assert_synonym(&e, 0, "retention.ms", "1000",
                   SAMSA_CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG);
    assert_synonym(&e, 1, "log.retention.ms", "5",
                   SAMSA_CONFIG_SOURCE_STATIC_BROKER_CONFIG);
    assert_synonym(&e, 2, "log.retention.hours", "168",
                   SAMSA_CONFIG_SOURCE_DEFAULT_CONFIG);
    assert_int_equal(samsa_topic_config_long(&cfg, NULL, ov, 2,
                                             "retention.ms"), 1000);
    assert_int_equal(samsa_topic_config_long(&cfg, NULL, ov, 1,
                                             "retention.ms"), 1000);
    assert_int_equal(samsa_topic_config_long(&cfg, NULL, NULL, 0,
                                             "retention.ms"), 5);
    samsa_arena_fini(&arena);
    samsa_config_fini(&cfg);
}

/* Dynamic broker configs from the image: per node, then cluster-wide. */
static void
test_topic_config_resolve_dynamic(void **state)
{
    samsa_image_t                *empty = samsa_image_new_empty(), *img;
    samsa_image_delta_t          *d = samsa_image_delta_new(empty);
    samsa_MetadataRecords_any_t   rec;
    samsa_config_t                cfg;
    samsa_topic_config_entry_t    e;
    samsa_arena_t                 arena;
    char                          err[256];

    (void) state;
    cfg_load(&cfg, NULL);                       /* node.id 1 */
    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_ConfigRecord;
    rec.u.ConfigRecord.ResourceType = SAMSA_CONFIG_RESOURCE_BROKER;
    rec.u.ConfigRecord.ResourceName = samsa_slice_cstr("");
    rec.u.ConfigRecord.Name = samsa_slice_cstr("log.segment.bytes");
    rec.u.ConfigRecord.Value = samsa_slice_cstr("3145728");
    assert_int_equal(samsa_image_delta_replay(d, &rec, 0, err, sizeof(err)),
                     SAMSA_ERR_NONE);
    rec.u.ConfigRecord.Name = samsa_slice_cstr("log.retention.hours");
    rec.u.ConfigRecord.Value = samsa_slice_cstr("2");
    assert_int_equal(samsa_image_delta_replay(d, &rec, 1, err, sizeof(err)),
                     SAMSA_ERR_NONE);
    rec.u.ConfigRecord.ResourceName = samsa_slice_cstr("1");
    rec.u.ConfigRecord.Name = samsa_slice_cstr("log.segment.bytes");
    rec.u.ConfigRecord.Value = samsa_slice_cstr("4194304");
    assert_int_equal(samsa_image_delta_replay(d, &rec, 2, err, sizeof(err)),
                     SAMSA_ERR_NONE);
    img = samsa_image_delta_apply(d);
    samsa_image_delta_free(d);
    samsa_arena_init(&arena);

    assert_int_equal(samsa_topic_config_resolve(&cfg, img, NULL, 0,
                                                "segment.bytes", &arena, &e),
                     SAMSA_ERR_NONE);
    assert_string_equal(e.value, "4194304");
    assert_int_equal(e.source, SAMSA_CONFIG_SOURCE_DYNAMIC_BROKER_CONFIG);
    assert_int_equal(e.nsynonyms, 3);
    assert_synonym(&e, 1, "log.segment.bytes", "3145728",
                   SAMSA_CONFIG_SOURCE_DYNAMIC_DEFAULT_BROKER_CONFIG);
    assert_synonym(&e, 2, "log.segment.bytes", "1073741824",
                   SAMSA_CONFIG_SOURCE_DEFAULT_CONFIG);
    assert_int_equal(samsa_topic_config_long(&cfg, img, NULL, 0,
                                             "retention.ms"), 7200000);
    samsa_arena_fini(&arena);
    samsa_config_fini(&cfg);
    samsa_image_put(img);
    samsa_image_put(empty);
}

/* The log layer's config: broker values, then the topic's overrides. */
static void
test_topic_config_to_log(void **state)
{
    static const char *const  kv[] = {
        "log.segment.bytes", "2097152", "log.roll.hours", "2",
        "log.retention.bytes", "5000", "log.flush.interval.messages", "1",
        NULL,
    };
    samsa_image_config_t      ov[3] = {
        { "cleanup.policy", "compact,delete" },
        { "message.timestamp.type", "LogAppendTime" },
        { "retention.ms", "-1" },
    };
    samsa_config_t            cfg;
    samsa_log_config_t        lc, dflt;
    char                      err[256];

    (void) state;
    cfg_load(&cfg, kv);
    samsa_topic_config_to_log(&cfg, NULL, NULL, 0, &lc);
    assert_true(samsa_log_config_check(&lc, err, sizeof(err)));
    assert_int_equal(lc.segment_bytes, 2097152);
    assert_int_equal(lc.segment_ms, 7200000);
    assert_int_equal(lc.retention_bytes, 5000);
    assert_int_equal(lc.retention_ms, 604800000);
    assert_int_equal(lc.flush_messages, 1);
    assert_false(lc.log_append_time);
    assert_int_equal(lc.cleanup_policy, SAMSA_LOG_CLEANUP_DELETE);
    samsa_log_config_defaults(&dflt);
    assert_int_equal(lc.segment_index_bytes, dflt.segment_index_bytes);
    assert_int_equal(lc.max_message_bytes, dflt.max_message_bytes);
    assert_int_equal(lc.file_delete_delay_ms, dflt.file_delete_delay_ms);
    samsa_topic_config_to_log(&cfg, NULL, ov, 3, &lc);
    assert_true(lc.log_append_time);
    assert_int_equal(lc.retention_ms, -1);
    assert_int_equal(lc.cleanup_policy,
                     SAMSA_LOG_CLEANUP_DELETE | SAMSA_LOG_CLEANUP_COMPACT);
    samsa_config_fini(&cfg);
}

static void
test_topic_config_validate(void **state)
{
    static const char *const  kv[] = {
        "log.cleaner.max.compaction.lag.ms", "100", NULL,
    };
    samsa_image_config_t      ok[2] = {
        { "retention.ms", "1000" }, { "cleanup.policy", "compact" },
    };
    samsa_image_config_t      nulls[3] = {
        { "retention.ms", NULL }, { "segment.ms", "5" }, { "flush.ms", NULL },
    };
    samsa_image_config_t      unknown[2] = {
        { "retention.ms", "x" }, { "foo.bar", "1" },
    };
    samsa_image_config_t      lag[1] = { { "min.compaction.lag.ms", "500" } };
    samsa_image_config_t      remote[1] = { { "remote.storage.enable",
                                              "true" } };
    samsa_config_t            cfg;
    char                      err[512];

    (void) state;
    cfg_load(&cfg, kv);
    assert_int_equal(samsa_topic_config_validate(&cfg, NULL, ok, 2, err,
                                                 sizeof(err)), SAMSA_ERR_NONE);
    assert_int_equal(samsa_topic_config_validate(&cfg, NULL, NULL, 0, err,
                                                 sizeof(err)), SAMSA_ERR_NONE);
    assert_int_equal(samsa_topic_config_validate(&cfg, NULL, nulls, 3, err,
                                                 sizeof(err)),
                     SAMSA_ERR_INVALID_CONFIG);
    assert_string_equal(err, "Null value not supported for topic configs: "
                        "retention.ms,flush.ms");
    assert_int_equal(samsa_topic_config_validate(&cfg, NULL, unknown, 2, err,
                                                 sizeof(err)),
                     SAMSA_ERR_INVALID_CONFIG);
    assert_string_equal(err, "Unknown topic config name: foo.bar");
    assert_int_equal(samsa_topic_config_validate(&cfg, NULL, unknown, 1, err,
                                                 sizeof(err)),
                     SAMSA_ERR_INVALID_CONFIG);
    assert_string_equal(err, "Invalid value x for configuration retention.ms: "
                        "Not a number of type LONG");
    assert_int_equal(samsa_topic_config_validate(&cfg, NULL, lag, 1, err,
                                                 sizeof(err)),
                     SAMSA_ERR_INVALID_CONFIG);
    assert_string_equal(err, "conflict topic config setting "
                        "min.compaction.lag.ms (500) > max.compaction.lag.ms "
                        "(100)");
    assert_int_equal(samsa_topic_config_validate(&cfg, NULL, remote, 1, err,
                                                 sizeof(err)),
                     SAMSA_ERR_INVALID_CONFIG);
    assert_string_equal(err, "Tiered Storage functionality is disabled in the "
                        "broker. Topic cannot be configured with remote log "
                        "storage.");
    samsa_config_fini(&cfg);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_topic_config_table),
        cmocka_unit_test(test_topic_config_check),
        cmocka_unit_test(test_topic_config_resolve_defaults),
        cmocka_unit_test(test_topic_config_resolve_static),
        cmocka_unit_test(test_topic_config_resolve_override),
        cmocka_unit_test(test_topic_config_resolve_dynamic),
        cmocka_unit_test(test_topic_config_to_log),
        cmocka_unit_test(test_topic_config_validate),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
