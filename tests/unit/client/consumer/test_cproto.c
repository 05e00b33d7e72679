/*
 * tests/unit/client/consumer/test_cproto.c - ConsumerProtocol Subscription and
 * Assignment codecs: round trips at versions 0-3, the exact bytes of a v0
 * subscription (checked by hand against the Java layout), a newer
 * version's trailing fields ignored, and bad input refused without
 * crashing.
 */
#include "unit.h"

#include "client/consumer/cproto.h"
#include "util/alloc.h"

static void
test_cproto_sub_v0_bytes(void **state)
{
    static const uint8_t  want[] = {
        0x00, 0x00,                     /* Version 0 */
        0x00, 0x00, 0x00, 0x02,         /* 2 topics */
        0x00, 0x01, 'a',
        0x00, 0x02, 'b', 'c',
        0xff, 0xff, 0xff, 0xff,         /* UserData null */
    };
    char                 *topics[] = { "a", "bc" };
    samsa_cproto_sub_t    sub;
    samsa_buf_t           b = SAMSA_BUF_INIT;

    (void) state;
    memset(&sub, 0, sizeof(sub));
    sub.version = 0;
    sub.topics = topics;
    sub.ntopics = 2;
    samsa_cproto_sub_encode(&sub, &b);
    assert_int_equal(b.len, sizeof(want));
    assert_memory_equal(b.data, want, sizeof(want));
    samsa_buf_fini(&b);
}

static void
test_cproto_sub_roundtrip_versions(void **state)
{
    char                 *topics[] = { "t0", "t1" };
    int32_t               parts[] = { 3, 1 };
    samsa_cproto_topic_t  owned = { "t0", parts, 2 };
    samsa_cproto_sub_t    sub, got;
    samsa_buf_t           b;
    int16_t               v;

    (void) state;
    for (v = 0; v <= 3; v++) {
        memset(&sub, 0, sizeof(sub));
        sub.version = v;
        sub.topics = topics;
        sub.ntopics = 2;
        sub.userdata = (uint8_t *) "ud";
        sub.userdata_len = 2;
        sub.owned = &owned;
        sub.nowned = 1;
        sub.generation = 7;
        sub.rack = "r1";
        b = SAMSA_BUF_INIT;
        samsa_cproto_sub_encode(&sub, &b);
        assert_int_equal(samsa_cproto_sub_decode(b.data, b.len, &got),
                         SAMSA_ERR_NONE);
        assert_int_equal(got.version, v);
        assert_int_equal(got.ntopics, 2);
        assert_string_equal(got.topics[1], "t1");
        assert_int_equal(got.userdata_len, 2);
        assert_memory_equal(got.userdata, "ud", 2);
        assert_int_equal(got.nowned, v >= 1 ? 1 : 0);
        if (v >= 1) {
            assert_string_equal(got.owned[0].topic, "t0");
            assert_int_equal(got.owned[0].nparts, 2);
            assert_int_equal(got.owned[0].parts[0], 3);
        }
        assert_int_equal(got.generation, v >= 2 ? 7 : -1);
        if (v >= 3) {
            assert_string_equal(got.rack, "r1");
        } else {
            assert_null(got.rack);
        }
        samsa_cproto_sub_fini(&got);
        samsa_buf_fini(&b);
    }
}

/* A v4 member (fields we do not know appended) still parses as v3. */
static void
test_cproto_sub_newer_version(void **state)
{
    char                 *topics[] = { "x" };
    samsa_cproto_sub_t    sub, got;
    samsa_buf_t           b = SAMSA_BUF_INIT;

    (void) state;
    memset(&sub, 0, sizeof(sub));
    sub.version = 3;
    sub.topics = topics;
    sub.ntopics = 1;
    sub.generation = -1;
    samsa_cproto_sub_encode(&sub, &b);
    b.data[1] = 4;                          /* Version 4 */
    samsa_buf_append(&b, "\x01\x02\x03", 3);
    assert_int_equal(samsa_cproto_sub_decode(b.data, b.len, &got),
                     SAMSA_ERR_NONE);
    assert_int_equal(got.version, 4);
    assert_string_equal(got.topics[0], "x");
    samsa_cproto_sub_fini(&got);
    samsa_buf_fini(&b);
}

static void
test_cproto_asg_roundtrip(void **state)
{
    int32_t               p0[] = { 0, 2 }, p1[] = { 5 };
    samsa_cproto_topic_t  t[] = { { "a", p0, 2 }, { "b", p1, 1 } };
    samsa_cproto_asg_t    asg = { 1, t, 2, NULL, 0 }, got;
    samsa_buf_t           b = SAMSA_BUF_INIT;

    (void) state;
    samsa_cproto_asg_encode(&asg, &b);
    assert_int_equal(samsa_cproto_asg_decode(b.data, b.len, &got),
                     SAMSA_ERR_NONE);
    assert_int_equal(got.ntopics, 2);
    assert_string_equal(got.topics[1].topic, "b");
    assert_int_equal(got.topics[1].parts[0], 5);
    assert_null(got.userdata);
    samsa_cproto_asg_fini(&got);
    /* empty input: an empty assignment (some leaders send nothing) */
    assert_int_equal(samsa_cproto_asg_decode(NULL, 0, &got), SAMSA_ERR_NONE);
    assert_int_equal(got.ntopics, 0);
    samsa_cproto_asg_fini(&got);
    samsa_buf_fini(&b);
}

static void
test_cproto_bad_input(void **state)
{
    static const uint8_t  huge_count[] = { 0, 1, 0x7f, 0xff, 0xff, 0xff };
    static const uint8_t  neg_version[] = { 0xff, 0xfe, 0, 0, 0, 0 };
    static const uint8_t  short_str[] = { 0, 0, 0, 0, 0, 1, 0, 9, 'a' };
    samsa_cproto_sub_t    sub;
    samsa_cproto_asg_t    asg;
    samsa_buf_t           b = SAMSA_BUF_INIT;
    char                 *topics[] = { "topic" };
    size_t                i;

    (void) state;
    assert_int_not_equal(samsa_cproto_sub_decode(huge_count,
                                                 sizeof(huge_count), &sub),
                         SAMSA_ERR_NONE);
    samsa_cproto_sub_fini(&sub);
    assert_int_not_equal(samsa_cproto_sub_decode(neg_version,
                                                 sizeof(neg_version), &sub),
                         SAMSA_ERR_NONE);
    samsa_cproto_sub_fini(&sub);
    assert_int_not_equal(samsa_cproto_asg_decode(short_str,
                                                 sizeof(short_str), &asg),
                         SAMSA_ERR_NONE);
    /* every truncation of a valid v3 subscription fails cleanly */
    memset(&sub, 0, sizeof(sub));
    sub.version = 3;
    sub.topics = topics;
    sub.ntopics = 1;
    samsa_cproto_sub_encode(&sub, &b);
    for (i = 0; i < b.len; i++) {
        samsa_cproto_sub_t  got;

        assert_int_not_equal(samsa_cproto_sub_decode(b.data, i, &got),
                             SAMSA_ERR_NONE);
        samsa_cproto_sub_fini(&got);
    }
    samsa_buf_fini(&b);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_cproto_sub_v0_bytes),
        cmocka_unit_test(test_cproto_sub_roundtrip_versions),
        cmocka_unit_test(test_cproto_sub_newer_version),
        cmocka_unit_test(test_cproto_asg_roundtrip),
        cmocka_unit_test(test_cproto_bad_input),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
