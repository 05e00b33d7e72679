/* Unit tests for client/admin/admin_groups.c: decoding members' assignments
 * from Kafka's ConsumerProtocolAssignment bytes (as DescribeGroups
 * returns them), including malformed and hostile input, which must fail
 * cleanly and never read past the data. */
#include "unit.h"

#include <stdlib.h>

#include "client/admin/admin_int.h"
#include "proto/wr.h"
#include "util/buf.h"

/* Encode an assignment: version, topics with partitions, user data. */
static samsa_buf_t
assignment(int16_t version, int ntopics, const char *const *topics,
           const int32_t *counts, const int32_t *parts, bool user_data)
{
    samsa_buf_t  b = SAMSA_BUF_INIT;
    samsa_wr_t   wr;
    int          i, j, k = 0;

    samsa_wr_init(&wr, &b);
    samsa_wr_i16(&wr, version);
    samsa_wr_i32(&wr, ntopics);
    for (i = 0; i < ntopics; i++) {
        samsa_wr_str(&wr, samsa_slice_cstr(topics[i]));
        samsa_wr_i32(&wr, counts[i]);
        for (j = 0; j < counts[i]; j++) {
            samsa_wr_i32(&wr, parts[k++]);
        }
    }
    if (user_data) {
        samsa_wr_nullable_bytes(&wr, samsa_slice_cstr("ud"));
    } else {
        samsa_wr_i32(&wr, -1);
    }
    return b;
}

static samsa_slice_t
slice_of(const samsa_buf_t *b, size_t len)
{
    return (samsa_slice_t) { (const char *) b->data, len };
}

static void
test_admin_assignment_decodes(void **state)
{
    static const char *const  topics[] = { "orders", "pay" };
    static const int32_t      counts[] = { 2, 1 };
    static const int32_t      parts[] = { 0, 2, 5 };
    samsa_arena_t             arena = SAMSA_ARENA_INIT;
    samsa_group_member_t      m;
    samsa_buf_t               b;
    int16_t                   v;

    (void) state;
    for (v = 0; v <= 3; v++) {
        b = assignment(v, 2, topics, counts, parts, v == 1);
        memset(&m, 0, sizeof(m));
        assert_true(samsa_admin_decode_assignment(&arena, slice_of(&b, b.len),
                                                  &m));
        assert_int_equal(m.nassignment, 3);
        assert_string_equal(m.assignment[0].topic, "orders");
        assert_int_equal(m.assignment[0].partition, 0);
        assert_string_equal(m.assignment[1].topic, "orders");
        assert_int_equal(m.assignment[1].partition, 2);
        assert_string_equal(m.assignment[2].topic, "pay");
        assert_int_equal(m.assignment[2].partition, 5);
        samsa_buf_fini(&b);
    }
    samsa_arena_fini(&arena);
}

static void
test_admin_assignment_empty(void **state)
{
    samsa_arena_t         arena = SAMSA_ARENA_INIT;
    samsa_group_member_t  m;
    samsa_buf_t           b = assignment(0, 0, NULL, NULL, NULL, false);

    (void) state;
    memset(&m, 0, sizeof(m));
    /* an empty byte string: a member without an assignment yet */
    assert_true(samsa_admin_decode_assignment(&arena,
                                              samsa_slice_cstr(""), &m));
    assert_int_equal(m.nassignment, 0);
    assert_true(samsa_admin_decode_assignment(&arena, slice_of(&b, b.len),
                                              &m));
    assert_int_equal(m.nassignment, 0);
    assert_false(samsa_admin_decode_assignment(&arena, SAMSA_SLICE_NULL,
                                               &m));
    samsa_buf_fini(&b);
    samsa_arena_fini(&arena);
}

static void
test_admin_assignment_truncated_fails_at_every_length(void **state)
{
    static const char *const  topics[] = { "t" };
    static const int32_t      counts[] = { 3 };
    static const int32_t      parts[] = { 1, 2, 3 };
    samsa_arena_t             arena = SAMSA_ARENA_INIT;
    samsa_group_member_t      m;
    samsa_buf_t               b = assignment(0, 1, topics, counts, parts,
                                             false);
    size_t                    len;
    uint8_t                  *copy;

    (void) state;
    /* every proper prefix that cuts into the topic list fails; each is
     * decoded from its own heap copy so ASan sees any overread */
    for (len = 1; len < b.len - 4; len++) {
        copy = malloc(len);
        memcpy(copy, b.data, len);
        memset(&m, 0, sizeof(m));
        assert_false(samsa_admin_decode_assignment(
            &arena, (samsa_slice_t) { (const char *) copy, len }, &m));
        free(copy);
    }
    samsa_buf_fini(&b);
    samsa_arena_fini(&arena);
}

static void
test_admin_assignment_hostile_counts(void **state)
{
    samsa_arena_t         arena = SAMSA_ARENA_INIT;
    samsa_group_member_t  m;
    samsa_buf_t           b = SAMSA_BUF_INIT;
    samsa_wr_t            wr;

    (void) state;
    /* two billion topics in 10 bytes: refused before any allocation */
    samsa_wr_init(&wr, &b);
    samsa_wr_i16(&wr, 0);
    samsa_wr_i32(&wr, INT32_MAX);
    samsa_wr_i32(&wr, 0);
    memset(&m, 0, sizeof(m));
    assert_false(samsa_admin_decode_assignment(&arena, slice_of(&b, b.len),
                                               &m));
    assert_int_equal(m.nassignment, 0);
    /* a topic claiming two billion partitions */
    b.len = 0;
    samsa_wr_init(&wr, &b);
    samsa_wr_i16(&wr, 0);
    samsa_wr_i32(&wr, 1);
    samsa_wr_str(&wr, samsa_slice_cstr("t"));
    samsa_wr_i32(&wr, INT32_MAX);
    samsa_wr_i32(&wr, 7);
    memset(&m, 0, sizeof(m));
    assert_false(samsa_admin_decode_assignment(&arena, slice_of(&b, b.len),
                                               &m));
    /* a negative version */
    b.len = 0;
    samsa_wr_init(&wr, &b);
    samsa_wr_i16(&wr, -1);
    samsa_wr_i32(&wr, 0);
    memset(&m, 0, sizeof(m));
    assert_false(samsa_admin_decode_assignment(&arena, slice_of(&b, b.len),
                                               &m));
    samsa_buf_fini(&b);
    samsa_arena_fini(&arena);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_admin_assignment_decodes),
        cmocka_unit_test(test_admin_assignment_empty),
        cmocka_unit_test(test_admin_assignment_truncated_fails_at_every_length),
        cmocka_unit_test(test_admin_assignment_hostile_counts),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
