/* Unit tests for log/tidx.c: the time index. */
#include "unit.h"

#include "log/batchgen.h"
#include "log/tidx.h"
#include "util/endian.h"

static void
test_tidx_append_lookup_roll_slot(void **state)
{
    char                *dir = bg_tmpdir(), path[512];
    samsa_tidx_t         t;
    samsa_tidx_entry_t   e;
    uint8_t              raw[12];
    FILE                *fp;
    bool                 created;

    (void) state;
    snprintf(path, sizeof(path), "%s/00000000000000000100.timeindex", dir);
    assert_int_equal(samsa_tidx_open(&t, path, 100, &created),
                     SAMSA_ERR_NONE);
    assert_int_equal(samsa_ixfile_resize(&t.file, 4 * 12 + 5),
                     SAMSA_ERR_NONE);
    e = samsa_tidx_lookup(&t, 5000);
    assert_int_equal(e.timestamp, -1);
    assert_int_equal(e.offset, 100);
    assert_true(samsa_tidx_maybe_append(&t, 1000, 104, false));
    assert_false(samsa_tidx_maybe_append(&t, 1000, 110, false));  /* same */
    assert_false(samsa_tidx_maybe_append(&t, 900, 110, false));   /* lower */
    assert_false(samsa_tidx_maybe_append(&t, 2000, 103, false));  /* back */
    assert_true(samsa_tidx_maybe_append(&t, 2000, 110, false));
    assert_true(samsa_tidx_maybe_append(&t, 3000, 120, false));
    assert_true(samsa_tidx_full(&t));           /* last slot: the roll's */
    assert_false(samsa_tidx_maybe_append(&t, 4000, 130, false));
    assert_true(samsa_tidx_maybe_append(&t, 4000, 130, true));
    e = samsa_tidx_lookup(&t, 999);
    assert_int_equal(e.timestamp, -1);
    e = samsa_tidx_lookup(&t, 2500);
    assert_int_equal(e.timestamp, 2000);
    assert_int_equal(e.offset, 110);
    e = samsa_tidx_lookup(&t, 9999);
    assert_int_equal(e.offset, 130);
    assert_true(samsa_tidx_sane(&t, 131, true));
    assert_false(samsa_tidx_sane(&t, 130, true));
    samsa_tidx_truncate_to(&t, 120);
    e = samsa_tidx_last(&t);
    assert_int_equal(e.timestamp, 2000);
    assert_int_equal(samsa_ixfile_trim(&t.file), SAMSA_ERR_NONE);
    assert_int_equal(bg_file_size(path), 24);
    fp = fopen(path, "rb");
    assert_int_equal(fread(raw, 1, 12, fp), 12);
    fclose(fp);
    assert_int_equal(samsa_load_be64(raw), 1000);   /* 8-byte timestamp */
    assert_int_equal(samsa_load_be32(raw + 8), 4);  /* relative offset */
    samsa_tidx_close(&t);
    bg_rmrf(dir);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tidx_append_lookup_roll_slot),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
