/* Unit tests for log/idx.c: the offset index. */
#include "unit.h"

#include "log/batchgen.h"
#include "log/idx.h"
#include "util/endian.h"

typedef struct idx_fixture {
    char         *dir;
    char          path[512];
    samsa_idx_t   idx;
} idx_fixture_t;

static int
idx_setup(void **state)
{
    idx_fixture_t  *f = calloc(1, sizeof(*f));
    bool            created;

    f->dir = bg_tmpdir();
    snprintf(f->path, sizeof(f->path), "%s/00000000000000001000.index",
             f->dir);
    assert_int_equal(samsa_idx_open(&f->idx, f->path, 1000, &created),
                     SAMSA_ERR_NONE);
    assert_int_equal(samsa_ixfile_resize(&f->idx.file, 10 * 8),
                     SAMSA_ERR_NONE);
    *state = f;
    return 0;
}

static int
idx_teardown(void **state)
{
    idx_fixture_t  *f = *state;

    samsa_idx_close(&f->idx);
    bg_rmrf(f->dir);
    free(f);
    return 0;
}

static void
test_idx_lookup(void **state)
{
    idx_fixture_t      *f = *state;
    samsa_idx_entry_t   e;

    e = samsa_idx_lookup(&f->idx, 1500);
    assert_int_equal(e.offset, 1000);           /* empty: (base, 0) */
    assert_int_equal(e.pos, 0);
    assert_true(samsa_idx_append(&f->idx, 1010, 4096));
    assert_true(samsa_idx_append(&f->idx, 1020, 8192));
    assert_true(samsa_idx_append(&f->idx, 1035, 12288));
    assert_false(samsa_idx_append(&f->idx, 1035, 16384));  /* not above */
    assert_false(samsa_idx_append(&f->idx, 999, 16384));   /* below base */
    assert_false(samsa_idx_append(&f->idx, 1000 + (1LL << 31), 1));
    e = samsa_idx_lookup(&f->idx, 1009);
    assert_int_equal(e.offset, 1000);
    e = samsa_idx_lookup(&f->idx, 1010);
    assert_int_equal(e.offset, 1010);
    assert_int_equal(e.pos, 4096);
    e = samsa_idx_lookup(&f->idx, 1034);
    assert_int_equal(e.offset, 1020);
    assert_int_equal(e.pos, 8192);
    e = samsa_idx_lookup(&f->idx, INT64_MAX);
    assert_int_equal(e.offset, 1035);
    e = samsa_idx_lookup(&f->idx, 5);
    assert_int_equal(e.offset, 1000);
    e = samsa_idx_last(&f->idx);
    assert_int_equal(e.offset, 1035);
    assert_true(samsa_idx_sane(&f->idx, 1040, 20000, true));
    assert_false(samsa_idx_sane(&f->idx, 1035, 20000, true));   /* beyond */
    assert_false(samsa_idx_sane(&f->idx, 1040, 12288, true));
}

static void
test_idx_truncate_full_and_format(void **state)
{
    idx_fixture_t      *f = *state;
    samsa_idx_entry_t   e;
    uint8_t             raw[8];
    FILE               *fp;
    int                 i;

    for (i = 1; i <= 10; i++) {
        assert_true(samsa_idx_append(&f->idx, 1000 + i * 10,
                                     (uint32_t) i * 100));
    }
    assert_true(samsa_ixfile_full(&f->idx.file));
    assert_false(samsa_idx_append(&f->idx, 2000, 5000));
    samsa_idx_truncate_to(&f->idx, 1050);        /* drops 1050 and up */
    e = samsa_idx_last(&f->idx);
    assert_int_equal(e.offset, 1040);
    samsa_idx_truncate_to(&f->idx, 1041);
    assert_int_equal(samsa_idx_last(&f->idx).offset, 1040);
    assert_int_equal(samsa_ixfile_trim(&f->idx.file), SAMSA_ERR_NONE);
    assert_int_equal(bg_file_size(f->path), 4 * 8);
    /* Kafka's layout: 4-byte relative offset, 4-byte position, BE */
    fp = fopen(f->path, "rb");
    assert_non_null(fp);
    assert_int_equal(fread(raw, 1, 8, fp), 8);
    fclose(fp);
    assert_int_equal(samsa_load_be32(raw), 10);
    assert_int_equal(samsa_load_be32(raw + 4), 100);
    samsa_idx_truncate_to(&f->idx, 0);
    assert_int_equal(samsa_ixfile_count(&f->idx.file), 0);
}

static void
test_idx_sanity_catches_disorder(void **state)
{
    idx_fixture_t  *f = *state;
    uint8_t        *m;

    assert_true(samsa_idx_append(&f->idx, 1010, 100));
    assert_true(samsa_idx_append(&f->idx, 1020, 200));
    assert_true(samsa_idx_append(&f->idx, 1030, 300));
    m = f->idx.file.map;
    samsa_store_be32(m + 8, 50);                /* middle out of order */
    assert_true(samsa_idx_sane(&f->idx, 2000, 1000, false)); /* ends ok */
    assert_false(samsa_idx_sane(&f->idx, 2000, 1000, true));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_idx_lookup, idx_setup,
                                        idx_teardown),
        cmocka_unit_test_setup_teardown(test_idx_truncate_full_and_format,
                                        idx_setup, idx_teardown),
        cmocka_unit_test_setup_teardown(test_idx_sanity_catches_disorder,
                                        idx_setup, idx_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
