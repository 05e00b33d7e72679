/* Unit tests for log/pmeta.c: partition.metadata and Kafka's uuid text. */
#include "unit.h"

#include "log/batchgen.h"
#include "log/pmeta.h"
#include "util/diag.h"

static void
test_pmeta_uuid_text(void **state)
{
    samsa_uuid_t  u = { { 0 } }, back;
    char          s[23];
    int           i;

    (void) state;
    samsa_pmeta_uuid_str(u, s);
    assert_string_equal(s, "AAAAAAAAAAAAAAAAAAAAAA");
    for (i = 0; i < 16; i++) {
        u.b[i] = (uint8_t) (0xf0 + i);
    }
    samsa_pmeta_uuid_str(u, s);
    assert_string_equal(s, "8PHy8_T19vf4-fr7_P3-_w");  /* URL-safe */
    assert_true(samsa_pmeta_uuid_parse(s, &back));
    assert_true(samsa_uuid_eq(u, back));
    assert_false(samsa_pmeta_uuid_parse("8PHy8_T19vf4-fr7_P3-_x", &back));
    assert_false(samsa_pmeta_uuid_parse("8PHy8_T19vf4-fr7_P3-_", &back));
    assert_false(samsa_pmeta_uuid_parse("8PHy8_T19vf4+fr7_P3-_w", &back));
}

static void
test_pmeta_write_read(void **state)
{
    char          *dir = bg_tmpdir(), path[512];
    samsa_uuid_t   u = { { 1, 2, 3 } }, got;
    FILE          *fp;

    (void) state;
    assert_int_equal(samsa_pmeta_read(dir, &got), SAMSA_ERR__NOENT);
    assert_int_equal(samsa_pmeta_write(dir, u), SAMSA_ERR_NONE);
    assert_int_equal(samsa_pmeta_read(dir, &got), SAMSA_ERR_NONE);
    assert_true(samsa_uuid_eq(u, got));
    snprintf(path, sizeof(path), "%s/partition.metadata", dir);
    fp = fopen(path, "w");
    fputs("version: 1\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA\n", fp);
    fclose(fp);
    assert_int_equal(samsa_pmeta_read(dir, &got), SAMSA_ERR__BAD_MSG);
    bg_rmrf(dir);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pmeta_uuid_text),
        cmocka_unit_test(test_pmeta_write_read),
    };

    samsa_diag_set_level(SAMSA_DIAG_ERROR);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
