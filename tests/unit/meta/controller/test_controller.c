/* Unit tests for meta/controller/controller.c, ctltopics.c and ctlconfigs.c: the
 * single-node controller over a real metadata log in a temporary
 * directory.  CreateTopics, DeleteTopics, CreatePartitions, AlterConfigs
 * and IncrementalAlterConfigs with Kafka's errors and messages,
 * validate-only requests, the bootstrap record, restarts (the replayed
 * image equals the one before, topic ids included), a crash that tore the
 * last batch, producer-id blocks, concurrent callers, and broker
 * registration. */
#include "unit.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "meta/controller/controller.h"
#include "meta/mlog.h"
#include "util/props.h"

typedef struct fixture {
    char                 dir[64];
    samsa_config_t       cfg;
    samsa_meta_t        *meta;
    samsa_controller_t  *ctrl;
    samsa_arena_t        arena;
    int                  changes;       /* listener calls */
    int64_t              last_offset;
} fixture_t;

static void
on_change(void *ctx, const samsa_image_t *old_img,
          const samsa_image_t *new_img)
{
    fixture_t  *fx = ctx;

    assert_true(samsa_image_offset(new_img) > samsa_image_offset(old_img));
    fx->last_offset = samsa_image_offset(new_img);
    fx->changes++;
}

/* Start (or restart) the controller over fx->dir; kv: extra
 * server.properties pairs, NULL-terminated. */
static void
fx_start(fixture_t *fx, const char *const *kv)
{
    samsa_controller_conf_t  conf;
    samsa_props_t           *props = samsa_props_new();
    char                     err[512];

    samsa_props_set(props, "log.dirs", fx->dir, "test");
    for (; kv != NULL && kv[0] != NULL; kv += 2) {
        samsa_props_set(props, kv[0], kv[1], "test");
    }
    err[0] = '\0';
    if (samsa_config_load(&fx->cfg, props, err, sizeof(err))
        != SAMSA_ERR_NONE) {
        fail_msg("config: %s", err);
    }
    samsa_props_free(props);
    fx->meta = samsa_meta_new();
    fx->changes = 0;
    samsa_meta_listen(fx->meta, on_change, fx);
    samsa_controller_conf_init(&conf, &fx->cfg, fx->meta);
    if (samsa_controller_open(&fx->ctrl, &conf, err, sizeof(err))
        != SAMSA_ERR_NONE) {
        fail_msg("controller: %s", err);
    }
}

static void
fx_stop(fixture_t *fx)
{
    samsa_controller_close(fx->ctrl);
    fx->ctrl = NULL;
    samsa_meta_free(fx->meta);
    fx->meta = NULL;
    samsa_config_fini(&fx->cfg);
}

static int
fx_setup(void **state)
{
    fixture_t  *fx = calloc(1, sizeof(*fx));

    snprintf(fx->dir, sizeof(fx->dir), "/tmp/samsa-ctl-XXXXXX");
    assert_non_null(mkdtemp(fx->dir));
    samsa_arena_init(&fx->arena);
    fx_start(fx, NULL);
    *state = fx;
    return 0;
}

static int
fx_teardown(void **state)
{
    fixture_t  *fx = *state;
    char        cmd[128];

    if (fx->ctrl != NULL) {
        fx_stop(fx);
    }
    samsa_arena_fini(&fx->arena);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->dir);
    assert_int_equal(system(cmd), 0);
    free(fx);
    return 0;
}

static samsa_image_t *
fx_image(fixture_t *fx)
{
    return samsa_meta_image_get(fx->meta);
}

/* Create one topic; the result. */
static samsa_controller_topic_result_t
create1(fixture_t *fx, const char *name, int32_t parts, int16_t rf,
        const samsa_image_config_t *cfgs, size_t ncfgs)
{
    samsa_controller_new_topic_t      t = {
        .name = samsa_slice_cstr(name), .num_partitions = parts,
        .replication_factor = rf, .configs = cfgs, .nconfigs = ncfgs,
    };
    samsa_controller_create_topics_t  req = { .topics = &t, .ntopics = 1 };
    samsa_controller_topic_result_t   r;

    assert_int_equal(samsa_controller_create_topics(fx->ctrl, &req,
                                                    &fx->arena, &r),
                     SAMSA_ERR_NONE);
    return r;
}

static void
expect_create(fixture_t *fx, const char *name, int32_t parts, int16_t rf,
              samsa_err_t err, const char *msg)
{
    samsa_controller_topic_result_t  r = create1(fx, name, parts, rf, NULL,
                                                 0);

    assert_int_equal(r.error, err);
    if (msg != NULL) {
        assert_non_null(r.message);
        assert_string_equal(r.message, msg);
    }
}

/* ---- start-up */

static void
test_controller_bootstrap(void **state)
{
    fixture_t      *fx = *state;
    samsa_image_t  *img = fx_image(fx);
    struct stat     st;
    char            path[256];

    assert_int_equal(samsa_image_feature_level(img, "metadata.version"), 7);
    assert_int_equal(samsa_image_offset(img), 0);
    assert_int_equal(samsa_image_topic_count(img), 0);
    assert_int_equal(fx->changes, 1);           /* (empty, loaded) */
    samsa_image_put(img);
    snprintf(path, sizeof(path), "%s/__cluster_metadata-0", fx->dir);
    assert_int_equal(stat(path, &st), 0);
    fx_stop(fx);                                /* no second bootstrap */
    fx_start(fx, NULL);
    img = fx_image(fx);
    assert_int_equal(samsa_image_offset(img), 0);
    assert_int_equal(samsa_image_feature_level(img, "metadata.version"), 7);
    samsa_image_put(img);
}

/* ---- CreateTopics */

static void
test_controller_create_topics(void **state)
{
    fixture_t                        *fx = *state;
    samsa_image_config_t              cfgs[3] = {
        { "retention.ms", "1000" }, { "cleanup.policy", "compact" },
        { "retention.ms", "2000" },         /* the last one wins */
    };
    samsa_controller_topic_result_t   r;
    const samsa_image_topic_t        *t;
    samsa_image_t                    *img;
    int                               p;

    r = create1(fx, "orders", 3, 1, cfgs, 3);
    assert_int_equal(r.error, SAMSA_ERR_NONE);
    assert_null(r.message);
    assert_false(samsa_uuid_is_zero(r.topic_id));
    assert_int_equal(r.num_partitions, 3);
    assert_int_equal(r.replication_factor, 1);
    r = create1(fx, "defaults", -1, -1, NULL, 0);
    assert_int_equal(r.error, SAMSA_ERR_NONE);
    assert_int_equal(r.num_partitions, 1);      /* num.partitions */

    img = fx_image(fx);
    assert_int_equal(fx->changes, 3);
    t = samsa_image_topic_find(img, "orders", 6);
    assert_non_null(t);
    assert_int_equal(t->npartitions, 3);
    for (p = 0; p < 3; p++) {
        assert_int_equal(t->partitions[p].partition, p);
        assert_int_equal(t->partitions[p].leader, 1);
        assert_int_equal(t->partitions[p].leader_epoch, 0);
        assert_int_equal(t->partitions[p].nreplicas, 1);
        assert_int_equal(t->partitions[p].replicas[0], 1);
        assert_int_equal(t->partitions[p].nisr, 1);
    }
    assert_int_equal(t->nconfigs, 2);
    assert_string_equal(samsa_image_topic_config(t, "retention.ms"), "2000");
    assert_string_equal(samsa_image_topic_config(t, "cleanup.policy"),
                        "compact");
    /* offsets: bootstrap 0; Topic 1, Config 2-3, Partition 4-6; then 7-8 */
    assert_int_equal(samsa_image_offset(img), 8);
    assert_string_equal(samsa_image_topic_at(img, 0)->name, "defaults");
    samsa_image_put(img);
}

static void
test_controller_create_errors(void **state)
{
    fixture_t                        *fx = *state;
    samsa_image_config_t              bad[1] = { { "segment.bytes", "1" } };
    samsa_image_config_t              nul[1] = { { "retention.ms", NULL } };
    samsa_controller_topic_result_t   r;
    char                              long_name[300];

    assert_int_equal(create1(fx, "a_b", 1, 1, NULL, 0).error,
                     SAMSA_ERR_NONE);
    expect_create(fx, "a_b", 1, 1, SAMSA_ERR_TOPIC_ALREADY_EXISTS,
                  "Topic 'a_b' already exists.");
    expect_create(fx, "a.b", 1, 1, SAMSA_ERR_INVALID_TOPIC_EXCEPTION,
                  "Topic 'a.b' collides with existing topic: a_b");
    expect_create(fx, "", 1, 1, SAMSA_ERR_INVALID_TOPIC_EXCEPTION,
                  "Topic name is illegal, it can't be empty");
    expect_create(fx, "..", 1, 1, SAMSA_ERR_INVALID_TOPIC_EXCEPTION,
                  "Topic name cannot be \".\" or \"..\"");
    expect_create(fx, "a b", 1, 1, SAMSA_ERR_INVALID_TOPIC_EXCEPTION, NULL);
    memset(long_name, 'x', 250);
    long_name[250] = '\0';
    expect_create(fx, long_name, 1, 1, SAMSA_ERR_INVALID_TOPIC_EXCEPTION,
                  NULL);
    expect_create(fx, "__cluster_metadata", 1, 1, SAMSA_ERR_INVALID_REQUEST,
                  "Creation of internal topic __cluster_metadata is "
                  "prohibited.");
    expect_create(fx, "__consumer_offsets", 1, 1, SAMSA_ERR_INVALID_REQUEST,
                  "Creation of internal topic __consumer_offsets is "
                  "prohibited.");
    expect_create(fx, "rf3", 1, 3, SAMSA_ERR_INVALID_REPLICATION_FACTOR,
                  "Unable to replicate the partition 3 time(s): The target "
                  "replication factor of 3 cannot be reached because only 1 "
                  "broker(s) are registered.");
    expect_create(fx, "rf0", 1, 0, SAMSA_ERR_INVALID_REPLICATION_FACTOR,
                  "Replication factor must be larger than 0, or -1 to use "
                  "the default value.");
    expect_create(fx, "p0", 0, 1, SAMSA_ERR_INVALID_PARTITIONS,
                  "Number of partitions was set to an invalid non-positive "
                  "value.");
    expect_create(fx, "pm2", -2, 1, SAMSA_ERR_INVALID_PARTITIONS, NULL);
    r = create1(fx, "cfg", 1, 1, bad, 1);
    assert_int_equal(r.error, SAMSA_ERR_INVALID_CONFIG);
    assert_string_equal(r.message, "Invalid value 1 for configuration "
                        "segment.bytes: Value must be at least 1048576");
    r = create1(fx, "cfg", 1, 3, nul, 1);       /* configs before counts */
    assert_int_equal(r.error, SAMSA_ERR_INVALID_CONFIG);
    assert_string_equal(r.message, "Null value not supported for topic "
                        "configs: retention.ms");
    expect_create(fx, "huge", 20000, 1, SAMSA_ERR_POLICY_VIOLATION,
                  "Unable to perform excessively large batch operation.");
}

/* Several topics in one request: duplicates, a collision between two new
 * names, the internal flag, and one batch for all. */
static void
test_controller_create_batch(void **state)
{
    fixture_t                         *fx = *state;
    samsa_controller_new_topic_t       t[5] = {
        { .name = { "x", 1 }, .num_partitions = 1, .replication_factor = 1 },
        { .name = { "x", 1 }, .num_partitions = 2, .replication_factor = 1 },
        { .name = { "p.q", 3 }, .num_partitions = 1,
          .replication_factor = -1 },
        { .name = { "p_q", 3 }, .num_partitions = 1,
          .replication_factor = -1 },
        { .name = { "__consumer_offsets", 18 }, .num_partitions = 50,
          .replication_factor = 1 },
    };
    samsa_controller_create_topics_t   req = { t, 5, false, true, NULL };
    samsa_controller_topic_result_t    r[5];
    samsa_image_t                     *img;

    assert_int_equal(samsa_controller_create_topics(fx->ctrl, &req,
                                                    &fx->arena, r),
                     SAMSA_ERR_NONE);
    assert_int_equal(r[0].error, SAMSA_ERR_INVALID_REQUEST);
    assert_string_equal(r[0].message, "Duplicate topic name.");
    assert_int_equal(r[1].error, SAMSA_ERR_INVALID_REQUEST);
    assert_int_equal(r[2].error, SAMSA_ERR_NONE);
    assert_int_equal(r[3].error, SAMSA_ERR_INVALID_TOPIC_EXCEPTION);
    assert_string_equal(r[3].message, "Topic 'p_q' collides with existing "
                        "topic: p.q");
    assert_int_equal(r[4].error, SAMSA_ERR_NONE);
    img = fx_image(fx);
    assert_int_equal(fx->changes, 2);           /* one batch, one image */
    assert_true(samsa_image_topic_find(img, "__consumer_offsets", 18)
                ->is_internal);
    assert_int_equal(samsa_image_topic_find(img, "__consumer_offsets", 18)
                     ->npartitions, 50);
    assert_null(samsa_image_topic_find(img, "x", 1));
    samsa_image_put(img);
}

static void
test_controller_create_manual(void **state)
{
    fixture_t                         *fx = *state;
    int32_t                            me[1] = { 1 }, two[1] = { 2 };
    int32_t                            twice[2] = { 1, 1 };
    samsa_controller_assignment_t      ok[2] = { { 1, me, 1 }, { 0, me, 1 } };
    samsa_controller_assignment_t      other[1] = { { 0, two, 1 } };
    samsa_controller_assignment_t      dup[2] = { { 0, me, 1 }, { 0, me, 1 } };
    samsa_controller_assignment_t      gap[2] = { { 0, me, 1 }, { 2, me, 1 } };
    samsa_controller_assignment_t      rep[1] = { { 0, twice, 2 } };
    samsa_controller_assignment_t      none[1] = { { 0, me, 0 } };
    samsa_controller_new_topic_t       t = {
        .name = { "m", 1 }, .num_partitions = -1, .replication_factor = -1,
    };
    samsa_controller_create_topics_t   req = { &t, 1, false, false, NULL };
    samsa_controller_topic_result_t    r;

#define MANUAL(a, n)                                                    \
    do {                                                                \
        t.assignments = (a);                                            \
        t.nassignments = (n);                                           \
        assert_int_equal(samsa_controller_create_topics(fx->ctrl, &req, \
                                                        &fx->arena, &r),\
                         SAMSA_ERR_NONE);                               \
    } while (0)

    MANUAL(other, 1);
    assert_int_equal(r.error, SAMSA_ERR_INVALID_REPLICA_ASSIGNMENT);
    assert_string_equal(r.message, "The manual partition assignment includes "
                        "broker 2, but no such broker is registered.");
    MANUAL(dup, 2);
    assert_string_equal(r.message, "Found multiple manual partition "
                        "assignments for partition 0");
    MANUAL(gap, 2);
    assert_string_equal(r.message, "partitions should be a consecutive "
                        "0-based integer sequence");
    MANUAL(rep, 1);
    assert_string_equal(r.message, "The manual partition assignment includes "
                        "the broker 1 more than once.");
    MANUAL(none, 1);
    assert_string_equal(r.message, "The manual partition assignment includes "
                        "an empty replica list.");
    t.num_partitions = 2;
    MANUAL(ok, 2);
    assert_int_equal(r.error, SAMSA_ERR_INVALID_REQUEST);
    assert_string_equal(r.message, "A manual partition assignment was "
                        "specified, but numPartitions was not set to -1.");
    t.num_partitions = -1;
    MANUAL(ok, 2);
    assert_int_equal(r.error, SAMSA_ERR_NONE);
    assert_int_equal(r.num_partitions, 2);
#undef MANUAL
}

static void
test_controller_validate_only(void **state)
{
    fixture_t                         *fx = *state;
    samsa_controller_new_topic_t       t = {
        .name = { "v", 1 }, .num_partitions = 4, .replication_factor = 1,
    };
    samsa_controller_create_topics_t   req = { &t, 1, true, false, NULL };
    samsa_controller_topic_result_t    r;
    samsa_image_t                     *img;

    assert_int_equal(samsa_controller_create_topics(fx->ctrl, &req,
                                                    &fx->arena, &r),
                     SAMSA_ERR_NONE);
    assert_int_equal(r.error, SAMSA_ERR_NONE);
    assert_false(samsa_uuid_is_zero(r.topic_id));
    assert_int_equal(r.num_partitions, 4);
    img = fx_image(fx);
    assert_null(samsa_image_topic_find(img, "v", 1));
    assert_int_equal(samsa_image_offset(img), 0);
    assert_int_equal(fx->changes, 1);
    samsa_image_put(img);
}

/* ---- DeleteTopics */

static void
test_controller_delete_topics(void **state)
{
    fixture_t                          *fx = *state;
    samsa_controller_topic_result_t     a = create1(fx, "a", 2, 1, NULL, 0);
    samsa_controller_topic_result_t     b = create1(fx, "b", 1, 1, NULL, 0);
    samsa_controller_topic_ref_t        refs[7];
    samsa_controller_delete_result_t    r[7];
    samsa_uuid_t                        unknown = samsa_image_id_random();
    samsa_image_t                      *img;

    memset(refs, 0, sizeof(refs));
    refs[0].name = samsa_slice_cstr("a");
    refs[1].id = b.topic_id;
    refs[2].name = samsa_slice_cstr("nope");
    refs[3].id = unknown;
    refs[4].name = samsa_slice_cstr("a");       /* with both: refused */
    refs[4].id = a.topic_id;
    /* refs[5]: neither */
    refs[6].id = a.topic_id;                    /* "a" again, by id */
    assert_int_equal(samsa_controller_delete_topics(fx->ctrl, refs, 7,
                                                    NULL, &fx->arena, r),
                     SAMSA_ERR_NONE);
    assert_int_equal(r[0].error, SAMSA_ERR_NONE);
    assert_true(samsa_uuid_eq(r[0].id, a.topic_id));
    assert_int_equal(r[1].error, SAMSA_ERR_NONE);
    assert_string_equal(r[1].name, "b");
    assert_int_equal(r[2].error, SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION);
    assert_string_equal(r[2].message, "This server does not host this "
                        "topic-partition.");
    assert_int_equal(r[3].error, SAMSA_ERR_UNKNOWN_TOPIC_ID);
    assert_int_equal(r[4].error, SAMSA_ERR_INVALID_REQUEST);
    assert_string_equal(r[4].message, "You may not specify both topic name "
                        "and topic id.");
    assert_int_equal(r[5].error, SAMSA_ERR_INVALID_REQUEST);
    assert_string_equal(r[5].message, "Neither topic name nor id were "
                        "specified.");
    assert_int_equal(r[6].error, SAMSA_ERR_NONE);
    assert_string_equal(r[6].name, "a");
    img = fx_image(fx);
    assert_int_equal(samsa_image_topic_count(img), 0);
    samsa_image_put(img);

    /* duplicates in one request */
    memset(refs, 0, sizeof(refs));
    refs[0].name = samsa_slice_cstr("z");
    refs[1].name = samsa_slice_cstr("z");
    assert_int_equal(samsa_controller_delete_topics(fx->ctrl, refs, 2,
                                                    NULL, &fx->arena, r),
                     SAMSA_ERR_NONE);
    assert_int_equal(r[0].error, SAMSA_ERR_INVALID_REQUEST);
    assert_string_equal(r[1].message, "Duplicate topic name.");
    /* the name is free again, with a new id */
    assert_int_equal(create1(fx, "a", 1, 1, NULL, 0).error, SAMSA_ERR_NONE);
}

/* ---- CreatePartitions */

static void
test_controller_create_partitions(void **state)
{
    fixture_t                           *fx = *state;
    samsa_controller_new_partitions_t    t[4] = {
        { .name = { "t", 1 }, .count = 5 },
        { .name = { "u", 1 }, .count = 2 },
        { .name = { "u", 1 }, .count = 3 },
        { .name = { "w", 1 }, .count = 3 },
    };
    samsa_controller_result_t            r[4];
    int32_t                              me[1] = { 1 };
    samsa_controller_assignment_t        one[1] = { { 0, me, 1 } };
    samsa_image_t                       *img;

    assert_int_equal(create1(fx, "t", 2, 1, NULL, 0).error, SAMSA_ERR_NONE);
    assert_int_equal(create1(fx, "v", 3, 1, NULL, 0).error, SAMSA_ERR_NONE);
    assert_int_equal(samsa_controller_create_partitions(fx->ctrl, t, 4, false,
                                                        NULL, &fx->arena, r),
                     SAMSA_ERR_NONE);
    assert_int_equal(r[0].error, SAMSA_ERR_NONE);
    assert_null(r[0].message);
    assert_int_equal(r[1].error, SAMSA_ERR_INVALID_REQUEST);
    assert_string_equal(r[2].message, "Duplicate topic name.");
    assert_int_equal(r[3].error, SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION);
    assert_null(r[3].message);
    img = fx_image(fx);
    assert_int_equal(samsa_image_topic_find(img, "t", 1)->npartitions, 5);
    assert_int_equal(samsa_image_topic_find(img, "t", 1)->partitions[4].leader,
                     1);
    samsa_image_put(img);

    t[0].name = samsa_slice_cstr("v");
    t[0].count = 2;
    assert_int_equal(samsa_controller_create_partitions(fx->ctrl, t, 1, false,
                                                        NULL, &fx->arena, r),
                     SAMSA_ERR_NONE);
    assert_int_equal(r[0].error, SAMSA_ERR_INVALID_PARTITIONS);
    assert_string_equal(r[0].message, "The topic v currently has 3 "
                        "partition(s); 2 would not be an increase.");
    t[0].count = 3;
    assert_int_equal(samsa_controller_create_partitions(fx->ctrl, t, 1, false,
                                                        NULL, &fx->arena, r),
                     SAMSA_ERR_NONE);
    assert_string_equal(r[0].message, "Topic already has 3 partition(s).");
    t[0].count = 5;
    t[0].assignments = one;
    t[0].nassignments = 1;
    assert_int_equal(samsa_controller_create_partitions(fx->ctrl, t, 1, false,
                                                        NULL, &fx->arena, r),
                     SAMSA_ERR_NONE);
    assert_int_equal(r[0].error, SAMSA_ERR_INVALID_REPLICA_ASSIGNMENT);
    assert_string_equal(r[0].message, "Attempted to add 2 additional "
                        "partition(s), but only 1 assignment(s) were "
                        "specified.");
    t[0].count = 4;                             /* validate only */
    assert_int_equal(samsa_controller_create_partitions(fx->ctrl, t, 1, true,
                                                        NULL, &fx->arena, r),
                     SAMSA_ERR_NONE);
    assert_int_equal(r[0].error, SAMSA_ERR_NONE);
    img = fx_image(fx);
    assert_int_equal(samsa_image_topic_find(img, "v", 1)->npartitions, 3);
    samsa_image_put(img);
}

/* ---- AlterConfigs / IncrementalAlterConfigs */

static samsa_controller_result_t
alter1(fixture_t *fx, const char *topic, int8_t type,
       const samsa_controller_config_op_t *ops, size_t nops,
       bool incremental)
{
    samsa_controller_alter_config_t  res = {
        .resource_type = type, .resource_name = samsa_slice_cstr(topic),
        .ops = ops, .nops = nops,
    };
    samsa_controller_result_t        r;

    assert_int_equal(samsa_controller_alter_configs(fx->ctrl, &res, 1,
                                                    incremental, false,
                                                    &fx->arena, &r),
                     SAMSA_ERR_NONE);
    return r;
}

static const char *
topic_config(fixture_t *fx, const char *topic, const char *key,
             size_t *nconfigs)
{
    samsa_image_t               *img = fx_image(fx);
    const samsa_image_topic_t   *t = samsa_image_topic_find(img, topic,
                                                            strlen(topic));
    const char                  *v = samsa_image_topic_config(t, key);
    static char                  copy[256];

    *nconfigs = t->nconfigs;
    snprintf(copy, sizeof(copy), "%s", v != NULL ? v : "(none)");
    samsa_image_put(img);
    return copy;
}

/* ---- the controller mutation quota hook */

/* A quota that records its charges and refuses every one after `allow`. */
typedef struct fake_quota {
    int32_t  charges[8];
    int      n;
    int      allow;
} fake_quota_t;

static bool
fake_quota_apply(void *ctx, int32_t partitions)
{
    fake_quota_t  *fq = ctx;

    assert_true(fq->n < 8);
    fq->charges[fq->n++] = partitions;
    return fq->n <= fq->allow;
}

/* Each topic that passed every other check is charged its partitions
 * (created, deleted or added) before its records are made; a refused one
 * fails with THROTTLING_QUOTA_EXCEEDED, no message, and changes nothing. */
static void
test_controller_quota(void **state)
{
    fixture_t                          *fx = *state;
    fake_quota_t                        fq = { .allow = 2 };
    samsa_controller_quota_t            quota = { fake_quota_apply, &fq };
    samsa_controller_new_topic_t        t[4] = {
        { .name = samsa_slice_cstr("a"), .num_partitions = 2,
          .replication_factor = 1 },
        { .name = samsa_slice_cstr("bad"), .num_partitions = 0,
          .replication_factor = 1 },
        { .name = samsa_slice_cstr("b"), .num_partitions = 3,
          .replication_factor = 1 },
        { .name = samsa_slice_cstr("c"), .num_partitions = 4,
          .replication_factor = 1 },
    };
    samsa_controller_create_topics_t    req = { t, 4, false, false, &quota };
    samsa_controller_topic_result_t     r[4];
    samsa_controller_topic_ref_t        refs[2];
    samsa_controller_delete_result_t    dr[2];
    samsa_controller_new_partitions_t   np = {
        .name = samsa_slice_cstr("a"), .count = 5,
    };
    samsa_controller_result_t           pr;
    samsa_image_t                      *img;

    assert_int_equal(samsa_controller_create_topics(fx->ctrl, &req,
                                                    &fx->arena, r),
                     SAMSA_ERR_NONE);
    assert_int_equal(r[0].error, SAMSA_ERR_NONE);
    assert_int_equal(r[1].error, SAMSA_ERR_INVALID_PARTITIONS);
    assert_int_equal(r[2].error, SAMSA_ERR_NONE);
    assert_int_equal(r[3].error, SAMSA_ERR_THROTTLING_QUOTA_EXCEEDED);
    assert_null(r[3].message);
    assert_int_equal(fq.n, 3);                  /* "bad" was not charged */
    assert_int_equal(fq.charges[0], 2);
    assert_int_equal(fq.charges[1], 3);
    assert_int_equal(fq.charges[2], 4);
    img = fx_image(fx);
    assert_non_null(samsa_image_topic_find(img, "b", 1));
    assert_null(samsa_image_topic_find(img, "c", 1));
    samsa_image_put(img);

    /* CreatePartitions: the partitions added */
    fq = (fake_quota_t) { .allow = 1 };
    assert_int_equal(samsa_controller_create_partitions(fx->ctrl, &np, 1,
                                                        false, &quota,
                                                        &fx->arena, &pr),
                     SAMSA_ERR_NONE);
    assert_int_equal(pr.error, SAMSA_ERR_NONE);
    assert_int_equal(fq.n, 1);
    assert_int_equal(fq.charges[0], 3);
    np.count = 6;
    assert_int_equal(samsa_controller_create_partitions(fx->ctrl, &np, 1,
                                                        false, &quota,
                                                        &fx->arena, &pr),
                     SAMSA_ERR_NONE);
    assert_int_equal(pr.error, SAMSA_ERR_THROTTLING_QUOTA_EXCEEDED);
    assert_null(pr.message);

    /* DeleteTopics: each topic's partitions; unknown ones are not
     * charged */
    fq = (fake_quota_t) { .allow = 0 };
    memset(refs, 0, sizeof(refs));
    refs[0].name = samsa_slice_cstr("nope");
    refs[1].name = samsa_slice_cstr("a");
    assert_int_equal(samsa_controller_delete_topics(fx->ctrl, refs, 2,
                                                    &quota, &fx->arena, dr),
                     SAMSA_ERR_NONE);
    assert_int_equal(dr[0].error, SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION);
    assert_int_equal(dr[1].error, SAMSA_ERR_THROTTLING_QUOTA_EXCEEDED);
    assert_null(dr[1].message);
    assert_int_equal(fq.n, 1);
    assert_int_equal(fq.charges[0], 5);
    img = fx_image(fx);
    assert_int_equal(samsa_image_topic_find(img, "a", 1)->npartitions, 5);
    samsa_image_put(img);
    fq = (fake_quota_t) { .allow = 1 };
    assert_int_equal(samsa_controller_delete_topics(fx->ctrl, &refs[1], 1,
                                                    &quota, &fx->arena, dr),
                     SAMSA_ERR_NONE);
    assert_int_equal(dr[0].error, SAMSA_ERR_NONE);
    img = fx_image(fx);
    assert_null(samsa_image_topic_find(img, "a", 1));
    samsa_image_put(img);
}

static void
test_controller_alter_configs(void **state)
{
    fixture_t                     *fx = *state;
    samsa_controller_config_op_t   broker_static[1] = {
        { "log.dirs", SAMSA_CONFIG_OP_SET, "/x" },
    };
    samsa_controller_config_op_t   broker_io[1] = {
        { "num.io.threads", SAMSA_CONFIG_OP_SET, "4" },
    };
    samsa_image_config_t           init[2] = {
        { "retention.ms", "1000" }, { "segment.ms", "5000" },
    };
    samsa_controller_config_op_t   set[2] = {
        { "retention.ms", SAMSA_CONFIG_OP_SET, "2000" },
        { "segment.ms", SAMSA_CONFIG_OP_DELETE, NULL },
    };
    samsa_controller_config_op_t   app[1] = {
        { "cleanup.policy", SAMSA_CONFIG_OP_APPEND, "compact" },
    };
    samsa_controller_config_op_t   sub[1] = {
        { "cleanup.policy", SAMSA_CONFIG_OP_SUBTRACT, "delete" },
    };
    samsa_controller_config_op_t   notlist[1] = {
        { "retention.ms", SAMSA_CONFIG_OP_APPEND, "5" },
    };
    samsa_controller_config_op_t   bad[1] = {
        { "retention.ms", SAMSA_CONFIG_OP_SET, "soon" },
    };
    samsa_controller_config_op_t   full[1] = {
        { "max.message.bytes", 0, "2000" },
    };
    samsa_controller_result_t      r;
    size_t                         n;
    int                            changes;

    assert_int_equal(create1(fx, "c", 1, 1, init, 2).error, SAMSA_ERR_NONE);
    r = alter1(fx, "c", SAMSA_CONFIG_RESOURCE_TOPIC, set, 2, true);
    assert_int_equal(r.error, SAMSA_ERR_NONE);
    assert_string_equal(topic_config(fx, "c", "retention.ms", &n), "2000");
    assert_int_equal(n, 1);
    r = alter1(fx, "c", SAMSA_CONFIG_RESOURCE_TOPIC, app, 1, true);
    assert_int_equal(r.error, SAMSA_ERR_NONE);
    assert_string_equal(topic_config(fx, "c", "cleanup.policy", &n),
                        "delete,compact");      /* from the default */
    r = alter1(fx, "c", SAMSA_CONFIG_RESOURCE_TOPIC, sub, 1, true);
    assert_string_equal(topic_config(fx, "c", "cleanup.policy", &n),
                        "compact");
    r = alter1(fx, "c", SAMSA_CONFIG_RESOURCE_TOPIC, notlist, 1, true);
    assert_int_equal(r.error, SAMSA_ERR_INVALID_CONFIG);
    assert_string_equal(r.message, "Can't APPEND to key retention.ms because "
                        "its type is not LIST.");
    r = alter1(fx, "c", SAMSA_CONFIG_RESOURCE_TOPIC, bad, 1, true);
    assert_int_equal(r.error, SAMSA_ERR_INVALID_CONFIG);
    assert_string_equal(r.message, "Invalid value soon for configuration "
                        "retention.ms: Not a number of type LONG");
    changes = fx->changes;                      /* an unchanged value */
    r = alter1(fx, "c", SAMSA_CONFIG_RESOURCE_TOPIC, set, 1, true);
    assert_int_equal(r.error, SAMSA_ERR_NONE);  /* writes nothing */
    assert_int_equal(fx->changes, changes);

    /* AlterConfigs replaces the whole set */
    r = alter1(fx, "c", SAMSA_CONFIG_RESOURCE_TOPIC, full, 1, false);
    assert_int_equal(r.error, SAMSA_ERR_NONE);
    assert_string_equal(topic_config(fx, "c", "max.message.bytes", &n),
                        "2000");
    assert_int_equal(n, 1);

    r = alter1(fx, "nope", SAMSA_CONFIG_RESOURCE_TOPIC, set, 1, true);
    assert_int_equal(r.error, SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION);
    assert_string_equal(r.message, "The topic 'nope' does not exist.");
    /* BROKER resources: dynamic broker configs (meta/brokercfg.h); a key
     * the broker does not know is stored, as Kafka does; a known static
     * one is refused (INVALID_CONFIG); a name that is no broker id is a
     * malformed request (INVALID_REQUEST) */
    r = alter1(fx, "1", SAMSA_CONFIG_RESOURCE_BROKER, set, 1, true);
    assert_int_equal(r.error, SAMSA_ERR_NONE);
    r = alter1(fx, "1", SAMSA_CONFIG_RESOURCE_BROKER, broker_static, 1, true);
    assert_int_equal(r.error, SAMSA_ERR_INVALID_CONFIG);
    assert_string_equal(r.message, "Cannot update these configs "
                        "dynamically: Set(log.dirs)");
    r = alter1(fx, "b1", SAMSA_CONFIG_RESOURCE_BROKER, broker_io, 1, true);
    assert_int_equal(r.error, SAMSA_ERR_INVALID_REQUEST);
    assert_string_equal(r.message, "Invalid broker name b1");
    r = alter1(fx, "", SAMSA_CONFIG_RESOURCE_BROKER, broker_io, 1, true);
    assert_int_equal(r.error, SAMSA_ERR_NONE);
    r = alter1(fx, "g", 32, set, 1, true);
    assert_int_equal(r.error, SAMSA_ERR_INVALID_REQUEST);
    assert_string_equal(r.message, "Unsupported configuration resource type "
                        "GROUP.");
    r = alter1(fx, "c", 7, set, 1, true);
    assert_int_equal(r.error, SAMSA_ERR_UNSUPPORTED_VERSION);
    assert_string_equal(r.message, "Unknown resource type 7.");
}

/* ---- restarts and crashes */

static void
assert_same_image(const samsa_image_t *a, const samsa_image_t *b)
{
    size_t  i, j;
    int32_t p;

    assert_int_equal(samsa_image_offset(a), samsa_image_offset(b));
    assert_int_equal(samsa_image_topic_count(a), samsa_image_topic_count(b));
    assert_int_equal(samsa_image_next_producer_id(a),
                     samsa_image_next_producer_id(b));
    assert_int_equal(samsa_image_feature_level(a, "metadata.version"),
                     samsa_image_feature_level(b, "metadata.version"));
    for (i = 0; i < samsa_image_topic_count(a); i++) {
        const samsa_image_topic_t  *x = samsa_image_topic_at(a, i);
        const samsa_image_topic_t  *y = samsa_image_topic_at(b, i);

        assert_string_equal(x->name, y->name);
        assert_true(samsa_uuid_eq(x->id, y->id));
        assert_int_equal(x->npartitions, y->npartitions);
        for (p = 0; p < x->npartitions; p++) {
            assert_int_equal(x->partitions[p].leader,
                             y->partitions[p].leader);
            assert_int_equal(x->partitions[p].leader_epoch,
                             y->partitions[p].leader_epoch);
            assert_int_equal(x->partitions[p].nisr, y->partitions[p].nisr);
        }
        assert_int_equal(x->nconfigs, y->nconfigs);
        for (j = 0; j < x->nconfigs; j++) {
            assert_string_equal(x->configs[j].name, y->configs[j].name);
            assert_string_equal(x->configs[j].value, y->configs[j].value);
        }
    }
}

static void
test_controller_restart(void **state)
{
    fixture_t                     *fx = *state;
    samsa_image_config_t           cfg[1] = { { "retention.ms", "1234" } };
    samsa_controller_topic_ref_t   del = { { "gone", 4 }, { { 0 } } };
    samsa_controller_delete_result_t  dr;
    samsa_controller_new_partitions_t np = { { "b", 1 }, 4, NULL, 0 };
    samsa_controller_result_t      r;
    samsa_image_t                 *before, *after;
    int64_t                        pid;

    assert_int_equal(create1(fx, "b", 2, 1, cfg, 1).error, SAMSA_ERR_NONE);
    assert_int_equal(create1(fx, "a", 1, -1, NULL, 0).error, SAMSA_ERR_NONE);
    assert_int_equal(create1(fx, "gone", 1, 1, NULL, 0).error,
                     SAMSA_ERR_NONE);
    assert_int_equal(samsa_controller_delete_topics(fx->ctrl, &del, 1,
                                                    NULL, &fx->arena, &dr),
                     SAMSA_ERR_NONE);
    assert_int_equal(samsa_controller_create_partitions(fx->ctrl, &np, 1,
                                                        false, NULL,
                                                        &fx->arena, &r),
                     SAMSA_ERR_NONE);
    assert_int_equal(samsa_controller_alloc_producer_ids(fx->ctrl, &pid),
                     SAMSA_ERR_NONE);
    assert_int_equal(pid, 0);
    assert_int_equal(samsa_controller_alloc_producer_ids(fx->ctrl, &pid),
                     SAMSA_ERR_NONE);
    assert_int_equal(pid, 1000);
    before = fx_image(fx);
    fx_stop(fx);
    fx_start(fx, NULL);
    after = fx_image(fx);
    assert_same_image(before, after);
    assert_int_equal(samsa_image_next_producer_id(after), 2000);
    assert_int_equal(fx->changes, 1);
    assert_int_equal(samsa_controller_alloc_producer_ids(fx->ctrl, &pid),
                     SAMSA_ERR_NONE);
    assert_int_equal(pid, 2000);
    samsa_image_put(before);
    samsa_image_put(after);
}

/* A crash while the last batch was being written (its tail never reached
 * the disk): the restart drops that batch whole, and the topic it created
 * is simply absent; later creations go on from there. */
static void
test_controller_torn_tail(void **state)
{
    fixture_t       *fx = *state;
    samsa_image_t   *before, *after;
    struct stat      st;
    char             path[256];
    off_t            whole;

    assert_int_equal(create1(fx, "kept", 2, 1, NULL, 0).error,
                     SAMSA_ERR_NONE);
    before = fx_image(fx);
    snprintf(path, sizeof(path), "%s/%s/00000000000000000000.log", fx->dir,
             SAMSA_MLOG_PARTITION_DIR);
    assert_int_equal(stat(path, &st), 0);
    whole = st.st_size;
    assert_int_equal(create1(fx, "torn", 3, 1, NULL, 0).error,
                     SAMSA_ERR_NONE);
    fx_stop(fx);
    assert_int_equal(truncate(path, whole + 40), 0);
    fx_start(fx, NULL);
    after = fx_image(fx);
    assert_same_image(before, after);
    assert_null(samsa_image_topic_find(after, "torn", 4));
    samsa_image_put(after);
    assert_int_equal(create1(fx, "torn", 1, 1, NULL, 0).error,
                     SAMSA_ERR_NONE);
    fx_stop(fx);
    fx_start(fx, NULL);
    after = fx_image(fx);
    assert_int_equal(samsa_image_topic_find(after, "torn", 4)->npartitions,
                     1);
    assert_int_equal(samsa_image_offset(after),
                     samsa_image_offset(before) + 2);
    samsa_image_put(after);
    samsa_image_put(before);
}

/* ---- concurrent callers */

typedef struct caller {
    fixture_t  *fx;
    int         id;
    int         created;
} caller_t;

static void *
caller_main(void *arg)
{
    caller_t         *c = arg;
    samsa_arena_t     arena;
    char              name[32];
    int               i;

    samsa_arena_init(&arena);
    for (i = 0; i < 20; i++) {
        samsa_controller_new_topic_t      t = {
            .num_partitions = 1, .replication_factor = 1,
        };
        samsa_controller_create_topics_t  req = { &t, 1, false, false, NULL };
        samsa_controller_topic_result_t   r;
        samsa_image_t                    *img;

        snprintf(name, sizeof(name), "c%d-%d", c->id, i);
        t.name = samsa_slice_cstr(name);
        if (samsa_controller_create_topics(c->fx->ctrl, &req, &arena, &r)
            == SAMSA_ERR_NONE && r.error == SAMSA_ERR_NONE) {
            img = samsa_meta_image_get(c->fx->meta);
            /* answered only once published: the topic is visible */
            if (samsa_image_topic_find(img, name, strlen(name)) != NULL) {
                c->created++;
            }
            samsa_image_put(img);
        }
    }
    samsa_arena_fini(&arena);
    return NULL;
}

static void
test_controller_concurrent(void **state)
{
    fixture_t      *fx = *state;
    caller_t        c[4];
    pthread_t       th[4];
    samsa_image_t  *img;
    int             i;

    for (i = 0; i < 4; i++) {
        c[i] = (caller_t) { fx, i, 0 };
        assert_int_equal(pthread_create(&th[i], NULL, caller_main, &c[i]), 0);
    }
    for (i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(c[i].created, 20);
    }
    img = fx_image(fx);
    assert_int_equal(samsa_image_topic_count(img), 80);
    samsa_image_put(img);
}

/* Broker registration: one batch of a fenced RegisterBrokerRecord (epoch =
 * its offset) and an unfencing BrokerRegistrationChangeRecord; the image
 * has the broker unfenced with its endpoints; a restart replays it, and a
 * second registration replaces it with a new epoch. */
static void
test_controller_register_broker(void **state)
{
    static const samsa_controller_endpoint_t  eps[] = {
        { "PLAINTEXT", "h1", 9092, 0 },
        { "SSL", "h1", 9093, 1 },
    };
    fixture_t                     *fx = *state;
    samsa_controller_broker_reg_t  reg;
    const samsa_image_broker_t    *b;
    samsa_image_t                 *img;
    int64_t                        epoch = -1, epoch2 = -1, before;

    memset(&reg, 0, sizeof(reg));
    reg.broker_id = 1;
    reg.incarnation_id = samsa_image_id_random();
    reg.endpoints = eps;
    reg.nendpoints = 2;
    img = fx_image(fx);
    before = samsa_image_offset(img);
    samsa_image_put(img);
    assert_int_equal(samsa_controller_register_broker(fx->ctrl, &reg,
                                                      &epoch),
                     SAMSA_ERR_NONE);
    assert_int_equal(epoch, before + 1);
    img = fx_image(fx);
    assert_int_equal(samsa_image_offset(img), epoch + 1);   /* two records */
    b = samsa_image_broker_find(img, 1);
    assert_non_null(b);
    assert_int_equal(b->epoch, epoch);
    assert_false(b->fenced);
    assert_true(samsa_uuid_eq(b->incarnation_id, reg.incarnation_id));
    assert_int_equal(b->nendpoints, 2);
    assert_int_equal(samsa_image_broker_endpoint(b, "SSL")->port, 9093);
    assert_int_equal(samsa_image_broker_endpoint(b, "SSL")
                         ->security_protocol, 1);
    assert_int_equal(b->nfeatures, 1);
    assert_string_equal(b->features[0].name, "metadata.version");
    assert_int_equal(b->features[0].max_version, SAMSA_META_METADATA_VERSION);
    samsa_image_put(img);

    fx_stop(fx);
    fx_start(fx, NULL);
    img = fx_image(fx);
    b = samsa_image_broker_find(img, 1);
    assert_non_null(b);
    assert_int_equal(b->epoch, epoch);
    assert_false(b->fenced);
    assert_string_equal(samsa_image_broker_endpoint(b, "PLAINTEXT")->host,
                        "h1");
    samsa_image_put(img);

    reg.nendpoints = 1;
    reg.incarnation_id = samsa_image_id_random();
    assert_int_equal(samsa_controller_register_broker(fx->ctrl, &reg,
                                                      &epoch2),
                     SAMSA_ERR_NONE);
    assert_true(epoch2 > epoch);
    img = fx_image(fx);
    assert_int_equal(samsa_image_broker_count(img), 1);
    b = samsa_image_broker_at(img, 0);
    assert_int_equal(b->epoch, epoch2);
    assert_int_equal(b->nendpoints, 1);
    assert_null(samsa_image_broker_endpoint(b, "SSL"));
    samsa_image_put(img);
}

/* AllocateProducerIds (KIP-730): STALE_BROKER_EPOCH for a broker that is
 * not registered or another epoch than its registration's, no record
 * then; the registered epoch gets the next block, which the local
 * allocation follows. */
static void
test_controller_allocate_producer_ids(void **state)
{
    static const samsa_controller_endpoint_t  eps[] = {
        { "PLAINTEXT", "h2", 9092, 0 },
    };
    fixture_t                     *fx = *state;
    samsa_controller_broker_reg_t  reg;
    samsa_controller_pid_req_t     preq = { 2, 5 };
    samsa_image_t                 *img;
    int64_t                        epoch = -1, first = -1, before;

    assert_int_equal(samsa_controller_allocate_producer_ids(fx->ctrl, &preq,
                                                            &first),
                     SAMSA_ERR_STALE_BROKER_EPOCH);     /* not registered */
    memset(&reg, 0, sizeof(reg));
    reg.broker_id = 2;
    reg.incarnation_id = samsa_image_id_random();
    reg.endpoints = eps;
    reg.nendpoints = 1;
    assert_int_equal(samsa_controller_register_broker(fx->ctrl, &reg,
                                                      &epoch),
                     SAMSA_ERR_NONE);
    img = fx_image(fx);
    before = samsa_image_offset(img);
    samsa_image_put(img);
    preq.broker_epoch = epoch + 1;
    assert_int_equal(samsa_controller_allocate_producer_ids(fx->ctrl, &preq,
                                                            &first),
                     SAMSA_ERR_STALE_BROKER_EPOCH);
    img = fx_image(fx);
    assert_int_equal(samsa_image_offset(img), before);  /* nothing written */
    assert_int_equal(samsa_image_next_producer_id(img), 0);
    samsa_image_put(img);
    preq.broker_epoch = epoch;
    assert_int_equal(samsa_controller_allocate_producer_ids(fx->ctrl, &preq,
                                                            &first),
                     SAMSA_ERR_NONE);
    assert_int_equal(first, 0);
    img = fx_image(fx);
    assert_int_equal(samsa_image_next_producer_id(img),
                     SAMSA_CONTROLLER_PRODUCER_ID_BLOCK);
    samsa_image_put(img);
    assert_int_equal(samsa_controller_alloc_producer_ids(fx->ctrl, &first),
                     SAMSA_ERR_NONE);
    assert_int_equal(first, SAMSA_CONTROLLER_PRODUCER_ID_BLOCK);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)
        T(test_controller_bootstrap),
        T(test_controller_create_topics),
        T(test_controller_create_errors),
        T(test_controller_create_batch),
        T(test_controller_create_manual),
        T(test_controller_validate_only),
        T(test_controller_delete_topics),
        T(test_controller_create_partitions),
        T(test_controller_quota),
        T(test_controller_alter_configs),
        T(test_controller_restart),
        T(test_controller_torn_tail),
        T(test_controller_concurrent),
        T(test_controller_register_broker),
        T(test_controller_allocate_producer_ids),
#undef T
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
