/* Unit tests for meta/topic_name.c: Kafka's Topic.validate table (legal
 * characters, length, "." and ".."), its messages, '.'/'_' collisions and
 * the internal topics. */
#include "unit.h"

#include <stdio.h>

#include "meta/topic_name.h"

typedef struct name_case {
    const char  *name;
    bool         ok;
    const char  *msg;               /* Kafka's message when not ok */
} name_case_t;

static void
test_topic_name_validate_table(void **state)
{
    static const name_case_t  cases[] = {
        { "a", true, NULL },
        { "orders", true, NULL },
        { "Orders.v2_final-3", true, NULL },
        { "...", true, NULL },
        { "-", true, NULL },
        { "__consumer_offsets", true, NULL },
        { "", false, "Topic name is illegal, it can't be empty" },
        { ".", false, "Topic name cannot be \".\" or \"..\"" },
        { "..", false, "Topic name cannot be \".\" or \"..\"" },
        { "a b", false, "Topic name \"a b\" is illegal, it contains a "
          "character other than ASCII alphanumerics, '.', '_' and '-'" },
        { "a/b", false, "Topic name \"a/b\" is illegal, it contains a "
          "character other than ASCII alphanumerics, '.', '_' and '-'" },
        { "caf\xc3\xa9", false, "Topic name \"caf\xc3\xa9\" is illegal, it "
          "contains a character other than ASCII alphanumerics, '.', '_' "
          "and '-'" },
        { "a:b", false, NULL },
        { "a*", false, NULL },
    };
    char    err[512];
    size_t  i;

    (void) state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        samsa_err_t  e = samsa_topic_name_validate(cases[i].name,
                                                   strlen(cases[i].name),
                                                   err, sizeof(err));

        if (cases[i].ok) {
            assert_int_equal(e, SAMSA_ERR_NONE);
            continue;
        }
        assert_int_equal(e, SAMSA_ERR_INVALID_TOPIC_EXCEPTION);
        if (cases[i].msg != NULL) {
            assert_string_equal(err, cases[i].msg);
        }
    }
}

static void
test_topic_name_validate_length(void **state)
{
    char  name[300], want[600], err[600];

    (void) state;
    memset(name, 'x', sizeof(name));
    assert_int_equal(samsa_topic_name_validate(name, 249, err, sizeof(err)),
                     SAMSA_ERR_NONE);
    assert_int_equal(samsa_topic_name_validate(name, 250, err, sizeof(err)),
                     SAMSA_ERR_INVALID_TOPIC_EXCEPTION);
    snprintf(want, sizeof(want), "Topic name is illegal, it can't be longer "
             "than 249 characters, Topic name: %.250s", name);
    assert_string_equal(err, want);
    /* The name need not be NUL-terminated: only len bytes are read. */
    memcpy(name, "ok", 2);
    name[2] = '!';
    assert_int_equal(samsa_topic_name_validate(name, 2, err, sizeof(err)),
                     SAMSA_ERR_NONE);
}

static void
test_topic_name_collisions(void **state)
{
    (void) state;
    assert_true(samsa_topic_name_collides("a.b", 3, "a_b", 3));
    assert_true(samsa_topic_name_collides("a_b", 3, "a.b", 3));
    assert_true(samsa_topic_name_collides("x.y_z", 5, "x_y.z", 5));
    assert_false(samsa_topic_name_collides("a.b", 3, "a.b", 3));
    assert_false(samsa_topic_name_collides("a.b", 3, "a.c", 3));
    assert_false(samsa_topic_name_collides("a.b", 3, "a.bb", 4));
    assert_true(samsa_topic_name_has_collision_chars("a.b", 3));
    assert_true(samsa_topic_name_has_collision_chars("a_b", 3));
    assert_false(samsa_topic_name_has_collision_chars("a-b", 3));
}

static void
test_topic_name_internal(void **state)
{
    (void) state;
    assert_true(samsa_topic_name_is_internal("__consumer_offsets", 18));
    assert_true(samsa_topic_name_is_internal("__transaction_state", 19));
    assert_false(samsa_topic_name_is_internal("__cluster_metadata", 18));
    assert_false(samsa_topic_name_is_internal("__consumer_offset", 17));
    assert_false(samsa_topic_name_is_internal("orders", 6));
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_topic_name_validate_table),
        cmocka_unit_test(test_topic_name_validate_length),
        cmocka_unit_test(test_topic_name_collisions),
        cmocka_unit_test(test_topic_name_internal),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
