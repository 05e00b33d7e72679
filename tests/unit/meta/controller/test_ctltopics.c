/* Unit tests for meta/controller/ctltopics.c over several brokers: a batch
 * (ctlbatch.h) on an image with RegisterBrokerRecords, no metadata log.
 * CreateTopics and CreatePartitions place replicas over the usable
 * brokers (striped: spread, unfenced leaders, brokers in controlled
 * shutdown left out), honour manual assignments naming registered
 * brokers with Kafka's errors (unregistered, duplicate in sorted order,
 * inconsistent replication factor, all fenced), and refuse replication
 * factors above 1 once Kafka's own checks pass, unless
 * unstable.replication.enable is true (then ISR = the replicas, leader =
 * the first replica).  The controller over a
 * real log, with this node alone, is test_controller.c's. */
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "meta/controller/controller_int.h"
#include "util/props.h"

#include "ctl_fixture.h"                /* NODE, replay */

typedef struct broker_def {
    int32_t      id;
    const char  *rack;
    bool         fenced;
    bool         shutdown;
} broker_def_t;

typedef struct fixture {
    samsa_config_t    cfg;
    samsa_arena_t     arena;
    samsa_image_t    *img;
    samsa_ctlbatch_t  b;
    bool              open;
} fixture_t;

/* A batch on an image with metadata.version and these brokers
 * registered (none: this node alone, unregistered, as today). */
static void
fx_open(fixture_t *fx, const broker_def_t *defs, size_t n)
{
    samsa_image_t                *empty = samsa_image_new_empty();
    samsa_image_delta_t          *d = samsa_image_delta_new(empty);
    samsa_MetadataRecords_any_t   rec;
    samsa_RegisterBrokerRecord_t *r = &rec.u.RegisterBrokerRecord;
    size_t                        i;

    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_FeatureLevelRecord;
    rec.u.FeatureLevelRecord.Name = samsa_slice_cstr("metadata.version");
    rec.u.FeatureLevelRecord.FeatureLevel = 7;
    replay(d, &rec, 0);
    for (i = 0; i < n; i++) {
        memset(&rec, 0, sizeof(rec));
        rec.type = SAMSA_MetadataRecords_RegisterBrokerRecord;
        samsa_RegisterBrokerRecord_init(r);
        r->BrokerId = defs[i].id;
        r->BrokerEpoch = 10 + (int64_t) i;
        r->Rack = defs[i].rack != NULL ? samsa_slice_cstr(defs[i].rack)
                                       : (samsa_slice_t) { NULL, 0 };
        r->Fenced = defs[i].fenced;
        r->InControlledShutdown = defs[i].shutdown;
        replay(d, &rec, 1 + (int64_t) i);
    }
    fx->img = samsa_image_delta_apply(d);
    samsa_image_delta_free(d);
    samsa_image_put(empty);
    samsa_ctlbatch_init(&fx->b, fx->img, 1 + (int64_t) n, NODE, &fx->cfg);
    fx->open = true;
}

static void
fx_close(fixture_t *fx)
{
    if (fx->open) {
        samsa_ctlbatch_fini(&fx->b);
        samsa_image_put(fx->img);
        fx->open = false;
    }
}

static int
fx_setup(void **state)
{
    fixture_t      *fx = calloc(1, sizeof(*fx));
    samsa_props_t  *props = samsa_props_new();
    char            err[512] = "";

    samsa_props_set(props, "log.dirs", "/tmp/samsa-ctltopics-unused",
                    "test");
    if (samsa_config_load(&fx->cfg, props, err, sizeof(err))
        != SAMSA_ERR_NONE) {
        fail_msg("config: %s", err);
    }
    samsa_props_free(props);
    samsa_arena_init(&fx->arena);
    *state = fx;
    return 0;
}

static int
fx_teardown(void **state)
{
    fixture_t  *fx = *state;

    fx_close(fx);
    samsa_arena_fini(&fx->arena);
    samsa_config_fini(&fx->cfg);
    free(fx);
    return 0;
}

static samsa_controller_topic_result_t
create(fixture_t *fx, const char *name, int32_t parts, int16_t rf,
       const samsa_controller_assignment_t *a, size_t na)
{
    samsa_controller_new_topic_t      t = {
        .name = samsa_slice_cstr(name), .num_partitions = parts,
        .replication_factor = rf, .assignments = a, .nassignments = na,
    };
    samsa_controller_create_topics_t  req = { .topics = &t, .ntopics = 1 };
    samsa_controller_topic_result_t   r;

    samsa_ctltopics_create(&fx->b, &req, &fx->arena, &r);
    return r;
}

static void
expect_create(fixture_t *fx, const char *name, int32_t parts, int16_t rf,
              const samsa_controller_assignment_t *a, size_t na,
              samsa_err_t err, const char *msg)
{
    samsa_controller_topic_result_t  r = create(fx, name, parts, rf, a, na);

    assert_int_equal(r.error, err);
    if (msg != NULL) {
        assert_non_null(r.message);
        assert_string_equal(r.message, msg);
    }
    if (err != SAMSA_ERR_NONE) {
        assert_null(samsa_image_delta_topic_find(fx->b.delta, name,
                                                 strlen(name)));
    }
}

static samsa_controller_result_t
add_partitions(fixture_t *fx, const char *name, int32_t count,
               const samsa_controller_assignment_t *a, size_t na)
{
    samsa_controller_new_partitions_t  t = {
        samsa_slice_cstr(name), count, a, na,
    };
    samsa_controller_result_t          r;

    samsa_ctltopics_partitions(&fx->b, &t, 1, NULL, &fx->arena, &r);
    return r;
}

static const samsa_image_topic_t *
topic(fixture_t *fx, const char *name)
{
    const samsa_image_topic_t  *t;

    t = samsa_image_delta_topic_find(fx->b.delta, name, strlen(name));
    assert_non_null(t);
    return t;
}

/* How many partitions of t broker id leads; each partition checked to be
 * replicas = isr = [leader]. */
static int
leads(const samsa_image_topic_t *t, int32_t id)
{
    int32_t  p;
    int      n = 0;

    for (p = 0; p < t->npartitions; p++) {
        const samsa_image_partition_t  *part = &t->partitions[p];

        assert_int_equal(part->nreplicas, 1);
        assert_int_equal(part->nisr, 1);
        assert_int_equal(part->replicas[0], part->leader);
        assert_int_equal(part->isr[0], part->leader);
        n += part->leader == id;
    }
    return n;
}

/* ---- placement */

/* Without any registration this node takes everything, as before. */
static void
test_ctltopics_single_node(void **state)
{
    fixture_t                   *fx = *state;
    const samsa_image_topic_t   *t;
    int32_t                      me[1] = { NODE }, two[1] = { 2 };
    samsa_controller_assignment_t  a[1] = { { 0, me, 1 } };
    samsa_controller_assignment_t  b[1] = { { 0, two, 1 } };

    fx_open(fx, NULL, 0);
    assert_int_equal(samsa_image_broker_count(fx->img), 0);
    assert_int_equal(create(fx, "t", 5, 1, NULL, 0).error, SAMSA_ERR_NONE);
    t = topic(fx, "t");
    assert_int_equal(leads(t, NODE), 5);
    assert_int_equal(create(fx, "m", -1, -1, a, 1).error, SAMSA_ERR_NONE);
    assert_int_equal(leads(topic(fx, "m"), NODE), 1);
    expect_create(fx, "x", -1, -1, b, 1, SAMSA_ERR_INVALID_REPLICA_ASSIGNMENT,
                  "The manual partition assignment includes broker 2, but "
                  "no such broker is registered.");
    expect_create(fx, "rf2", 1, 2, NULL, 0,
                  SAMSA_ERR_INVALID_REPLICATION_FACTOR,
                  "Unable to replicate the partition 2 time(s): The target "
                  "replication factor of 2 cannot be reached because only 1 "
                  "broker(s) are registered.");
    assert_int_equal(add_partitions(fx, "t", 8, NULL, 0).error,
                     SAMSA_ERR_NONE);
    assert_int_equal(leads(topic(fx, "t"), NODE), 8);
}

/* Three registered brokers: six partitions of rf 1 are led twice by each;
 * CreatePartitions spreads the new ones too. */
static void
test_ctltopics_spread(void **state)
{
    fixture_t                  *fx = *state;
    const broker_def_t          defs[3] = {
        { 1, NULL, false, false }, { 2, NULL, false, false },
        { 3, NULL, false, false },
    };
    const samsa_image_topic_t  *t;
    int32_t                     id;

    fx_open(fx, defs, 3);
    assert_int_equal(samsa_image_broker_count(fx->img), 3);
    assert_int_equal(samsa_image_broker_at(fx->img, 2)->id, 3);
    assert_int_equal(create(fx, "t", 6, 1, NULL, 0).error, SAMSA_ERR_NONE);
    t = topic(fx, "t");
    for (id = 1; id <= 3; id++) {
        assert_int_equal(leads(t, id), 2);
    }
    assert_int_equal(add_partitions(fx, "t", 12, NULL, 0).error,
                     SAMSA_ERR_NONE);
    t = topic(fx, "t");
    assert_int_equal(t->npartitions, 12);
    for (id = 1; id <= 3; id++) {
        assert_int_equal(leads(t, id), 4);
    }
}

/* Racks: two racks of two brokers, four partitions: each rack leads two. */
static void
test_ctltopics_racks(void **state)
{
    fixture_t                  *fx = *state;
    const broker_def_t          defs[4] = {
        { 1, "a", false, false }, { 2, "b", false, false },
        { 3, "a", false, false }, { 4, "b", false, false },
    };
    const samsa_image_topic_t  *t;

    fx_open(fx, defs, 4);
    assert_int_equal(create(fx, "t", 4, 1, NULL, 0).error, SAMSA_ERR_NONE);
    t = topic(fx, "t");
    assert_int_equal(leads(t, 1) + leads(t, 3), 2);
    assert_int_equal(leads(t, 2) + leads(t, 4), 2);
}

/* A fenced broker never leads a new partition; one in controlled
 * shutdown is not usable, not even counted as registered by the placer;
 * all fenced: Kafka's messages. */
static void
test_ctltopics_fenced(void **state)
{
    fixture_t           *fx = *state;
    const broker_def_t   defs[3] = {
        { 1, NULL, false, false }, { 2, NULL, true, false },
        { 3, NULL, false, true },
    };
    const broker_def_t   all_fenced[2] = {
        { 1, NULL, true, false }, { 2, NULL, true, false },
    };

    fx_open(fx, defs, 3);
    assert_int_equal(create(fx, "t", 10, 1, NULL, 0).error, SAMSA_ERR_NONE);
    assert_int_equal(leads(topic(fx, "t"), 1), 10);
    expect_create(fx, "rf3", 1, 3, NULL, 0,
                  SAMSA_ERR_INVALID_REPLICATION_FACTOR,
                  "Unable to replicate the partition 3 time(s): The target "
                  "replication factor of 3 cannot be reached because only 2 "
                  "broker(s) are registered.");
    fx_close(fx);
    fx_open(fx, all_fenced, 2);
    expect_create(fx, "f", 2, 1, NULL, 0,
                  SAMSA_ERR_INVALID_REPLICATION_FACTOR,
                  "Unable to replicate the partition 1 time(s): All brokers "
                  "are currently fenced.");
}

/* RF above 1 within the broker count passes Kafka's checks and is then
 * refused; above the broker count Kafka's message comes first. */
static void
test_ctltopics_rf_refused(void **state)
{
    fixture_t           *fx = *state;
    const broker_def_t   defs[3] = {
        { 1, NULL, false, false }, { 2, NULL, false, false },
        { 3, NULL, false, false },
    };
    int32_t              r12[2] = { 1, 2 };
    samsa_controller_assignment_t  two[1] = { { 0, r12, 2 } };

    fx_open(fx, defs, 3);
    expect_create(fx, "rf3", 1, 3, NULL, 0,
                  SAMSA_ERR_INVALID_REPLICATION_FACTOR,
                  "Unable to replicate the partition 3 time(s): replication "
                  "across brokers is not available yet, so the replication "
                  "factor must be 1.");
    expect_create(fx, "rf4", 1, 4, NULL, 0,
                  SAMSA_ERR_INVALID_REPLICATION_FACTOR,
                  "Unable to replicate the partition 4 time(s): The target "
                  "replication factor of 4 cannot be reached because only 3 "
                  "broker(s) are registered.");
    expect_create(fx, "m2", -1, -1, two, 1,
                  SAMSA_ERR_INVALID_REPLICATION_FACTOR,
                  "Unable to replicate the partition 2 time(s): replication "
                  "across brokers is not available yet, so the replication "
                  "factor must be 1.");
}

/* Reload the fixture's config with unstable.replication.enable=true
 * (before fx_open: the batch borrows the config). */
static void
fx_enable_replication(fixture_t *fx)
{
    samsa_props_t  *props = samsa_props_new();
    char            err[512] = "";

    samsa_config_fini(&fx->cfg);
    samsa_props_set(props, "log.dirs", "/tmp/samsa-ctltopics-unused",
                    "test");
    samsa_props_set(props, "unstable.replication.enable", "true", "test");
    if (samsa_config_load(&fx->cfg, props, err, sizeof(err))
        != SAMSA_ERR_NONE) {
        fail_msg("config: %s", err);
    }
    samsa_props_free(props);
}

/* Every partition of t has rf distinct replicas, ISR = the replicas in
 * order and leader = the first replica; the count each broker (1..3)
 * leads goes to lead[id]. */
static void
check_replicated(const samsa_image_topic_t *t, int32_t rf, int lead[4])
{
    int32_t  p, i, j;

    for (p = 0; p < t->npartitions; p++) {
        const samsa_image_partition_t  *part = &t->partitions[p];

        assert_int_equal(part->nreplicas, rf);
        assert_int_equal(part->nisr, rf);
        for (i = 0; i < rf; i++) {
            assert_int_equal(part->isr[i], part->replicas[i]);
            for (j = 0; j < i; j++) {
                assert_int_not_equal(part->replicas[i], part->replicas[j]);
            }
        }
        assert_int_equal(part->leader, part->replicas[0]);
        assert_in_range(part->leader, 1, 3);
        lead[part->leader]++;
    }
}

/* With unstable.replication.enable, RF up to the broker count is placed
 * (striped: leaders spread), by CreateTopics, manual assignments and
 * CreatePartitions; above the broker count Kafka's message stays. */
static void
test_ctltopics_rf_unstable(void **state)
{
    fixture_t           *fx = *state;
    const broker_def_t   defs[3] = {
        { 1, NULL, false, false }, { 2, NULL, false, false },
        { 3, NULL, false, false },
    };
    int32_t              r21[2] = { 2, 1 };
    samsa_controller_assignment_t  two[1] = { { 0, r21, 2 } };
    samsa_controller_result_t      r;
    int                            lead[4] = { 0 };

    fx_enable_replication(fx);
    fx_open(fx, defs, 3);
    expect_create(fx, "rf3", 6, 3, NULL, 0, SAMSA_ERR_NONE, NULL);
    check_replicated(topic(fx, "rf3"), 3, lead);
    assert_int_equal(lead[1], 2);
    assert_int_equal(lead[2], 2);
    assert_int_equal(lead[3], 2);
    expect_create(fx, "rf4", 1, 4, NULL, 0,
                  SAMSA_ERR_INVALID_REPLICATION_FACTOR,
                  "Unable to replicate the partition 4 time(s): The target "
                  "replication factor of 4 cannot be reached because only 3 "
                  "broker(s) are registered.");
    expect_create(fx, "m2", -1, -1, two, 1, SAMSA_ERR_NONE, NULL);
    assert_int_equal(topic(fx, "m2")->partitions[0].leader, 2);
    memset(lead, 0, sizeof(lead));
    check_replicated(topic(fx, "m2"), 2, lead);
    r = add_partitions(fx, "rf3", 9, NULL, 0);
    assert_int_equal(r.error, SAMSA_ERR_NONE);
    assert_int_equal(topic(fx, "rf3")->npartitions, 9);
    memset(lead, 0, sizeof(lead));
    check_replicated(topic(fx, "rf3"), 3, lead);
}

/* ---- manual assignments */

static void
test_ctltopics_manual(void **state)
{
    fixture_t           *fx = *state;
    const broker_def_t   defs[3] = {
        { 1, NULL, false, false }, { 2, NULL, false, false },
        { 3, NULL, true, false },
    };
    int32_t              r2[1] = { 2 }, r1[1] = { 1 }, r3[1] = { 3 };
    int32_t              r9[1] = { 9 }, r12[2] = { 1, 2 };
    int32_t              r313[3] = { 3, 1, 3 }, r922[3] = { 9, 2, 2 };
    const samsa_controller_assignment_t  ok[2] = {
        { 1, r1, 1 }, { 0, r2, 1 },
    };
    const samsa_controller_assignment_t  unknown[1] = { { 0, r9, 1 } };
    const samsa_controller_assignment_t  dup[1] = { { 0, r313, 3 } };
    const samsa_controller_assignment_t  dup_first[1] = { { 0, r922, 3 } };
    const samsa_controller_assignment_t  uneven[2] = {
        { 0, r1, 1 }, { 1, r12, 2 },
    };
    const samsa_controller_assignment_t  fenced[1] = { { 0, r3, 1 } };
    const samsa_image_topic_t           *t;

    fx_open(fx, defs, 3);
    assert_int_equal(create(fx, "ok", -1, -1, ok, 2).error, SAMSA_ERR_NONE);
    t = topic(fx, "ok");
    assert_int_equal(t->partitions[0].leader, 2);
    assert_int_equal(t->partitions[1].leader, 1);
    assert_int_equal(leads(t, 2), 1);
    expect_create(fx, "u", -1, -1, unknown, 1,
                  SAMSA_ERR_INVALID_REPLICA_ASSIGNMENT,
                  "The manual partition assignment includes broker 9, but "
                  "no such broker is registered.");
    expect_create(fx, "d", -1, -1, dup, 1,
                  SAMSA_ERR_INVALID_REPLICA_ASSIGNMENT,
                  "The manual partition assignment includes the broker 3 "
                  "more than once.");
    /* sorted 2, 2, 9: the duplicate is met before the unknown broker */
    expect_create(fx, "d9", -1, -1, dup_first, 1,
                  SAMSA_ERR_INVALID_REPLICA_ASSIGNMENT,
                  "The manual partition assignment includes the broker 2 "
                  "more than once.");
    expect_create(fx, "rf", -1, -1, uneven, 2,
                  SAMSA_ERR_INVALID_REPLICA_ASSIGNMENT,
                  "The manual partition assignment includes a partition "
                  "with 2 replica(s), but this is not consistent with "
                  "previous partitions, which have 1 replica(s).");
    expect_create(fx, "f", -1, -1, fenced, 1,
                  SAMSA_ERR_INVALID_REPLICA_ASSIGNMENT,
                  "All brokers specified in the manual partition assignment "
                  "for partition 0 are fenced or in controlled shutdown.");
}

/* CreatePartitions' manual assignments: honoured, and Kafka's errors with
 * the new partition's index. */
static void
test_ctltopics_partitions_manual(void **state)
{
    fixture_t                  *fx = *state;
    const broker_def_t          defs[3] = {
        { 1, NULL, false, false }, { 2, NULL, false, false },
        { 3, NULL, true, false },
    };
    int32_t                     r2[1] = { 2 }, r1[1] = { 1 }, r3[1] = { 3 };
    int32_t                     r9[1] = { 9 }, r12[2] = { 1, 2 };
    const samsa_controller_assignment_t  ok[2] = {
        { -1, r2, 1 }, { -1, r1, 1 },
    };
    const samsa_controller_assignment_t  unknown[2] = {
        { -1, r2, 1 }, { -1, r9, 1 },
    };
    const samsa_controller_assignment_t  wide[1] = { { -1, r12, 2 } };
    const samsa_controller_assignment_t  fenced[2] = {
        { -1, r1, 1 }, { -1, r3, 1 },
    };
    const samsa_image_topic_t  *t;
    samsa_controller_result_t   r;

    fx_open(fx, defs, 3);
    assert_int_equal(create(fx, "t", 1, 1, NULL, 0).error, SAMSA_ERR_NONE);
    r = add_partitions(fx, "t", 3, ok, 2);
    assert_int_equal(r.error, SAMSA_ERR_NONE);
    t = topic(fx, "t");
    assert_int_equal(t->npartitions, 3);
    assert_int_equal(t->partitions[1].leader, 2);
    assert_int_equal(t->partitions[2].leader, 1);
    r = add_partitions(fx, "t", 5, unknown, 2);
    assert_int_equal(r.error, SAMSA_ERR_INVALID_REPLICA_ASSIGNMENT);
    assert_string_equal(r.message, "The manual partition assignment "
                        "includes broker 9, but no such broker is "
                        "registered.");
    r = add_partitions(fx, "t", 4, wide, 1);
    assert_int_equal(r.error, SAMSA_ERR_INVALID_REPLICA_ASSIGNMENT);
    assert_string_equal(r.message, "The manual partition assignment "
                        "includes a partition with 2 replica(s), but this "
                        "is not consistent with previous partitions, which "
                        "have 1 replica(s).");
    r = add_partitions(fx, "t", 5, fenced, 2);
    assert_int_equal(r.error, SAMSA_ERR_INVALID_REPLICA_ASSIGNMENT);
    assert_string_equal(r.message, "All brokers specified in the manual "
                        "partition assignment for partition 4 are fenced "
                        "or in controlled shutdown.");
    assert_int_equal(topic(fx, "t")->npartitions, 3);
}

/* CreatePartitions with every broker fenced: the placer's message as is
 * (Kafka's createPartitions does not prefix it). */
static void
test_ctltopics_partitions_fenced(void **state)
{
    fixture_t                  *fx = *state;
    const broker_def_t          defs[2] = {
        { 1, NULL, false, false }, { 2, NULL, false, false },
    };
    const broker_def_t          fenced[2] = {
        { 1, NULL, true, false }, { 2, NULL, true, false },
    };
    samsa_MetadataRecords_any_t  rec;
    samsa_image_t               *img;
    samsa_image_delta_t         *d;
    samsa_controller_result_t    r;
    size_t                       i;

    fx_open(fx, defs, 2);
    assert_int_equal(create(fx, "t", 2, 1, NULL, 0).error, SAMSA_ERR_NONE);
    /* the same image, then both brokers re-registered fenced */
    img = samsa_image_delta_apply(fx->b.delta);
    samsa_ctlbatch_fini(&fx->b);
    samsa_image_put(fx->img);
    d = samsa_image_delta_new(img);
    for (i = 0; i < 2; i++) {
        memset(&rec, 0, sizeof(rec));
        rec.type = SAMSA_MetadataRecords_RegisterBrokerRecord;
        samsa_RegisterBrokerRecord_init(&rec.u.RegisterBrokerRecord);
        rec.u.RegisterBrokerRecord.BrokerId = fenced[i].id;
        rec.u.RegisterBrokerRecord.Fenced = true;
        replay(d, &rec, 100 + (int64_t) i);
    }
    fx->img = samsa_image_delta_apply(d);
    samsa_image_delta_free(d);
    samsa_image_put(img);
    samsa_ctlbatch_init(&fx->b, fx->img, 200, NODE, &fx->cfg);
    r = add_partitions(fx, "t", 4, NULL, 0);
    assert_int_equal(r.error, SAMSA_ERR_INVALID_REPLICATION_FACTOR);
    assert_string_equal(r.message, "All brokers are currently fenced.");
    assert_int_equal(topic(fx, "t")->npartitions, 2);
}

int
main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)
    const struct CMUnitTest  tests[] = {
        T(test_ctltopics_single_node),
        T(test_ctltopics_spread),
        T(test_ctltopics_racks),
        T(test_ctltopics_fenced),
        T(test_ctltopics_rf_refused),
        T(test_ctltopics_rf_unstable),
        T(test_ctltopics_manual),
        T(test_ctltopics_partitions_manual),
        T(test_ctltopics_partitions_fenced),
    };
#undef T

    return cmocka_run_group_tests(tests, NULL, NULL);
}
