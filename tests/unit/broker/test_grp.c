/* Unit tests for broker/grp.c: Kafka's partition of a group id (Java's
 * String.hashCode over UTF-16, Utils.abs), state names, and a coordinator
 * without __consumer_offsets (no controller to create it): joins and
 * commits get COORDINATOR_NOT_AVAILABLE, lookups of unknown groups answer
 * as Kafka does, and open/close leave nothing behind. */
#include "unit.h"

#include <string.h>

#include "broker/grp.h"
#include "util/config.h"

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

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_grp_partition_for_matches_java),
        cmocka_unit_test(test_grp_state_names),
        cmocka_unit_test(test_grp_without_offsets_topic),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
