/* Unit tests for meta/qentity.c: keys, parsing back, Kafka's string. */
#include "unit.h"

#include "meta/qentity.h"

static void
test_qentity_round_trip(void **state)
{
    samsa_arena_t    arena = SAMSA_ARENA_INIT;
    samsa_qentity_t  e, back;
    const char      *key;

    (void) state;
    memset(&e, 0, sizeof(e));
    e.has[SAMSA_QENTITY_USER] = true;           /* default user */
    e.has[SAMSA_QENTITY_CLIENT_ID] = true;
    e.name[SAMSA_QENTITY_CLIENT_ID] = samsa_slice_cstr("a;b:c=1");
    key = samsa_qentity_key(&e, &arena);
    assert_string_equal(key, "u-;c=7:a;b:c=1;");
    assert_int_equal(samsa_qentity_parse(key, &back), SAMSA_ERR_NONE);
    assert_true(back.has[SAMSA_QENTITY_USER]);
    assert_null(back.name[SAMSA_QENTITY_USER].ptr);
    assert_true(samsa_slice_eq_cstr(back.name[SAMSA_QENTITY_CLIENT_ID],
                                    "a;b:c=1"));
    assert_false(back.has[SAMSA_QENTITY_IP]);
    assert_string_equal(samsa_qentity_str(&e, &arena),
                        "ClientQuotaEntity(entries={client-id=a;b:c=1, "
                        "user=null})");
    samsa_arena_fini(&arena);
}

static void
test_qentity_parse_rejects(void **state)
{
    samsa_qentity_t  e;

    (void) state;
    assert_int_equal(samsa_qentity_parse("", &e), SAMSA_ERR__BAD_MSG);
    assert_int_equal(samsa_qentity_parse("c-;u-;", &e), SAMSA_ERR__BAD_MSG);
    assert_int_equal(samsa_qentity_parse("c=9:ab;", &e), SAMSA_ERR__BAD_MSG);
    assert_int_equal(samsa_qentity_parse("x-;", &e), SAMSA_ERR__BAD_MSG);
    assert_int_equal(samsa_qentity_parse("i=9", &e), SAMSA_ERR__BAD_MSG);
    assert_int_equal(samsa_qentity_parse("i=3:1.2;", &e), SAMSA_ERR_NONE);
    assert_int_equal(samsa_qentity_parse("i=3:1.2", &e), SAMSA_ERR__BAD_MSG);
    assert_int_equal(samsa_qentity_parse("i=3:1.2:", &e), SAMSA_ERR__BAD_MSG);
    assert_int_equal(samsa_qentity_parse("i=3:1.22;", &e),
                     SAMSA_ERR__BAD_MSG);
    assert_int_equal(samsa_qentity_parse("i=4:1.22;", &e), SAMSA_ERR_NONE);
    assert_int_equal(samsa_qentity_type_find(samsa_slice_cstr("client-id")),
                     SAMSA_QENTITY_CLIENT_ID);
    assert_int_equal(samsa_qentity_type_find(samsa_slice_cstr("group")), -1);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_qentity_round_trip),
        cmocka_unit_test(test_qentity_parse_rejects),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
