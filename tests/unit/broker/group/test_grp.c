/* Unit tests for broker/group/grp.c: Kafka's partition of a group id (Java's
 * String.hashCode over UTF-16, Utils.abs), state names, and a coordinator
 * without __consumer_offsets (no controller to create it): joins and
 * commits get COORDINATOR_NOT_AVAILABLE, lookups of unknown groups answer
 * as Kafka does, and open/close leave nothing behind. */
#include "unit.h"

#include <string.h>

#include "broker/group/consumer_group.h"
#include "broker/group/grp.h"
#include "broker/group/grp_int.h"
#include "util/alloc.h"
#include "config/config.h"

static void
test_grp_partition_for_matches_java(void **state)
{
    static const struct {
        const char  *id;
        int32_t      want;
    } cases[] = {
        { "g1", 42 },
        { "my-group", 12 },                 /* negative hash */
        { "", 0 },
        { "h\xc3\xa9llo", 34 },             /* two-byte UTF-8 */
        { "\xf0\x9f\x98\x80grp", 36 },      /* a surrogate pair */
        { "console-consumer-12345", 6 },
        { "polygenelubricants", 0 },        /* hashCode is INT32_MIN */
    };
    size_t  i;

    (void) state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_int_equal(samsa_grp_partition_for(cases[i].id,
                                                 strlen(cases[i].id), 50),
                         cases[i].want);
    }
    assert_int_equal(samsa_grp_partition_for("g1", 2, 1), 0);
}

static void
test_grp_state_names(void **state)
{
    (void) state;
    assert_string_equal(samsa_grp_state_name(SAMSA_GRP_EMPTY), "Empty");
    assert_string_equal(samsa_grp_state_name(SAMSA_GRP_PREPARING_REBALANCE),
                        "PreparingRebalance");
    assert_string_equal(samsa_grp_state_name(SAMSA_GRP_COMPLETING_REBALANCE),
                        "CompletingRebalance");
    assert_string_equal(samsa_grp_state_name(SAMSA_GRP_STABLE), "Stable");
    assert_string_equal(samsa_grp_state_name(SAMSA_GRP_DEAD), "Dead");
}

static void
join_cb(void *ctx, const samsa_grp_join_result_t *res)
{
    *(samsa_err_t *) ctx = res->error;
}

static void
test_grp_without_offsets_topic(void **state)
{
    samsa_config_t         cfg;
    samsa_grpcoord_conf_t  conf;
    samsa_grpcoord_t      *gc = NULL;
    samsa_grp_protocol_t   p = { samsa_slice_cstr("range"),
                                 samsa_slice_cstr("") };
    samsa_grp_join_req_t   jr;
    samsa_grp_offset_t     off;
    samsa_grp_described_t  d;
    samsa_grp_leaver_t     l;
    samsa_arena_t          arena;
    samsa_err_t            got = SAMSA_ERR__IO;
    char                   errstr[256];
    char                  *argv[] = { "samsa-server", NULL };

    (void) state;
    assert_int_equal(samsa_config_from_args(&cfg, 1, argv, errstr,
                                            sizeof(errstr)),
                     SAMSA_ERR_NONE);
    memset(&conf, 0, sizeof(conf));
    conf.cfg = &cfg;
    conf.meta = samsa_meta_new();
    conf.consumer_ops = &samsa_consumer_group_ops;
    assert_int_equal(samsa_grpcoord_open(&conf, &gc, errstr, sizeof(errstr)),
                     SAMSA_ERR_NONE);
    memset(&jr, 0, sizeof(jr));
    jr.group_id = samsa_slice_cstr("g");
    jr.member_id = samsa_slice_cstr("");
    jr.protocol_type = samsa_slice_cstr("consumer");
    jr.protocols = &p;
    jr.nprotocols = 1;
    jr.session_timeout_ms = 10000;
    jr.rebalance_timeout_ms = 10000;
    samsa_grp_join(gc, &jr, join_cb, &got);
    assert_int_equal(got, SAMSA_ERR_COORDINATOR_NOT_AVAILABLE);
    jr.session_timeout_ms = 1;
    samsa_grp_join(gc, &jr, join_cb, &got);
    assert_int_equal(got, SAMSA_ERR_INVALID_SESSION_TIMEOUT);
    jr.group_id = samsa_slice_cstr("");
    samsa_grp_join(gc, &jr, join_cb, &got);
    assert_int_equal(got, SAMSA_ERR_INVALID_GROUP_ID);
    assert_int_equal(samsa_grp_heartbeat(gc, samsa_slice_cstr("g"),
                                         samsa_slice_cstr("m"),
                                         SAMSA_SLICE_NULL, 1),
                     SAMSA_ERR_UNKNOWN_MEMBER_ID);
    l = (samsa_grp_leaver_t) { samsa_slice_cstr("m"), SAMSA_SLICE_NULL,
                               SAMSA_ERR_NONE };
    assert_int_equal(samsa_grp_leave(gc, samsa_slice_cstr("g"), &l, 1),
                     SAMSA_ERR_NONE);
    assert_int_equal(l.error, SAMSA_ERR_UNKNOWN_MEMBER_ID);
    memset(&off, 0, sizeof(off));
    off.topic = samsa_slice_cstr("t");
    off.commit_timestamp_ms = -1;
    samsa_grp_commit(gc, &(samsa_grp_commit_req_t) {
                         samsa_slice_cstr("g"), -1, samsa_slice_cstr(""),
                         SAMSA_SLICE_NULL, -1 }, &off, 1);
    assert_int_equal(off.error, SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION);
    samsa_arena_init(&arena);
    samsa_grp_describe(gc, samsa_slice_cstr("g"), &arena, &d);
    assert_int_equal(d.state, SAMSA_GRP_DEAD);
    assert_int_equal(d.nmembers, 0);
    assert_int_equal(samsa_grp_delete(gc, samsa_slice_cstr("g")),
                     SAMSA_ERR_GROUP_ID_NOT_FOUND);
    samsa_arena_fini(&arena);
    assert_int_equal(samsa_grpcoord_group_count(gc), 0);
    samsa_grpcoord_close(gc);
    samsa_meta_free(conf.meta);
    samsa_config_fini(&cfg);
}

/* A consumer member subscribed to the one topic "t". */
static grp_member_t *
expire_member(void)
{
    static const uint8_t  sub[] = { 0, 0, 0, 0, 0, 1, 0, 1, 't',
                                    0xff, 0xff, 0xff, 0xff };
    grp_member_t         *m = samsa_calloc(1, sizeof(*m));

    m->member_id = samsa_strdup("m1");
    m->protos = samsa_calloc(1, sizeof(*m->protos));
    m->nprotos = 1;
    m->protos[0].name = samsa_strdup("range");
    m->protos[0].metadata = samsa_malloc(sizeof(sub));
    memcpy(m->protos[0].metadata, sub, sizeof(sub));
    m->protos[0].metadata_len = sizeof(sub);
    return m;
}

/* KIP-211 expiry rules with an injected clock (offsets.retention.minutes
 * is in minutes: a test cannot wait for it). */
static void
test_grp_offsets_expiry_rules(void **state)
{
    const int64_t          t0 = 1700000000000LL, ret = 60000;
    samsa_config_t         cfg;
    samsa_grpcoord_conf_t  conf;
    samsa_grpcoord_t      *gc = NULL;
    samsa_grp_t           *g;
    grp_offset_t          *o, *ou;
    char                   errstr[256];
    char                  *argv[] = { "samsa-server", NULL };
    size_t                 removed = 99;

    (void) state;
    assert_int_equal(samsa_config_from_args(&cfg, 1, argv, errstr,
                                            sizeof(errstr)),
                     SAMSA_ERR_NONE);
    memset(&conf, 0, sizeof(conf));
    conf.cfg = &cfg;
    conf.meta = samsa_meta_new();
    conf.consumer_ops = &samsa_consumer_group_ops;
    assert_int_equal(samsa_grpcoord_open(&conf, &gc, errstr, sizeof(errstr)),
                     SAMSA_ERR_NONE);

    /* a simple consumer's commit (no protocol type): from the commit */
    g = samsa_grp_get(gc, samsa_slice_cstr("simple"), true);
    pthread_mutex_lock(&g->lock);
    samsa_grp_offset_put(g, "t", 1, 0, 5, -1, "", 0, t0, -1);
    o = samsa_grp_offset_find(g, "t", 1, 0);
    assert_false(samsa_grp_offset_expired(g, o, t0 + ret - 1, ret));
    assert_true(samsa_grp_offset_expired(g, o, t0 + ret, ret));
    o->expire_ts_ms = t0 + 10;              /* v2-v4 retention wins */
    assert_true(samsa_grp_offset_expired(g, o, t0 + 10, ret));
    assert_false(samsa_grp_offset_expired(g, o, t0 + 9, ret));
    pthread_mutex_unlock(&g->lock);
    samsa_grp_unref(g);

    /* an Empty consumer group: from when it became Empty */
    g = samsa_grp_get(gc, samsa_slice_cstr("cg"), true);
    pthread_mutex_lock(&g->lock);
    g->protocol_type = samsa_strdup("consumer");
    samsa_grp_offset_put(g, "t", 1, 0, 5, -1, "", 0, t0, -1);
    samsa_grp_offset_put(g, "u", 1, 0, 7, -1, "", 0, t0, -1);
    g->state = SAMSA_GRP_EMPTY;
    g->state_ts_ms = t0 + 5000;
    o = samsa_grp_offset_find(g, "t", 1, 0);
    assert_false(samsa_grp_offset_expired(g, o, t0 + ret, ret));
    assert_true(samsa_grp_offset_expired(g, o, t0 + 5000 + ret, ret));

    /* Stable with a member subscribed to t: t stays, u goes by commit */
    g->members = samsa_calloc(1, sizeof(*g->members));
    g->members[0] = expire_member();
    g->nmembers = 1;
    g->state = SAMSA_GRP_STABLE;
    o = samsa_grp_offset_find(g, "t", 1, 0);
    ou = samsa_grp_offset_find(g, "u", 1, 0);
    assert_false(samsa_grp_offset_expired(g, o, t0 + 100 * ret, ret));
    assert_false(samsa_grp_offset_expired(g, ou, t0 + ret - 1, ret));
    assert_true(samsa_grp_offset_expired(g, ou, t0 + ret, ret));
    g->state = SAMSA_GRP_PREPARING_REBALANCE;   /* rebalancing: nothing */
    assert_false(samsa_grp_offset_expired(g, ou, t0 + 100 * ret, ret));
    g->state = SAMSA_GRP_EMPTY;
    pthread_mutex_unlock(&g->lock);
    samsa_grp_unref(g);

    /* without __consumer_offsets the tombstones cannot be written: the
     * offsets and groups stay for a later round */
    assert_int_equal(samsa_grpcoord_expire(gc, t0 + 100 * ret, ret,
                                           &removed), 0);
    assert_int_equal(removed, 0);
    assert_int_equal(samsa_grpcoord_group_count(gc), 2);
    samsa_grpcoord_close(gc);
    samsa_meta_free(conf.meta);
    samsa_config_fini(&cfg);
}

static void
join_noop(void *ctx, const samsa_grp_join_result_t *res)
{
    (void) ctx;
    (void) res;
}

static void
sync_noop(void *ctx, const samsa_grp_sync_result_t *res)
{
    (void) ctx;
    (void) res;
}

/* Kafka's ClassicGroupMember.hasSatisfiedHeartbeat: waiting in a join or a
 * sync keeps a member that has completed a join; a new member (in its
 * first join) is not kept: its join timeout expires it. */
static void
test_grp_member_keep_alive_rule(void **state)
{
    grp_member_t  m;

    (void) state;
    memset(&m, 0, sizeof(m));
    assert_false(samsa_grp_member_keep_alive(&m));      /* idle */
    m.join_cb = join_noop;
    assert_true(samsa_grp_member_keep_alive(&m));       /* rejoining */
    m.is_new = true;
    assert_false(samsa_grp_member_keep_alive(&m));      /* first join */
    m.is_new = false;
    m.join_cb = NULL;
    m.sync_cb = sync_noop;
    assert_true(samsa_grp_member_keep_alive(&m));       /* syncing */
    assert_int_equal(SAMSA_GRP_NEW_MEMBER_JOIN_TIMEOUT_MS, 300000);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_grp_partition_for_matches_java),
        cmocka_unit_test(test_grp_state_names),
        cmocka_unit_test(test_grp_without_offsets_topic),
        cmocka_unit_test(test_grp_offsets_expiry_rules),
        cmocka_unit_test(test_grp_member_keep_alive_rule),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
