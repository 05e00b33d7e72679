/* Unit tests for log/ckpt.c: Kafka's checkpoint file formats. */
#include "unit.h"

#include "log/batchgen.h"
#include "log/ckpt.h"
#include "util/diag.h"

static void
pt_write(const char *path, const char *text)
{
    FILE  *fp = fopen(path, "w");

    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

static const char *
pt_read(const char *path)
{
    static char  buf[1024];
    FILE        *fp = fopen(path, "r");
    size_t       n;

    assert_non_null(fp);
    n = fread(buf, 1, sizeof(buf) - 1, fp);
    fclose(fp);
    buf[n] = '\0';
    return buf;
}

static void
test_ckpt_tp_round_trip(void **state)
{
    char              *dir = bg_tmpdir(), path[512], tmp[520];
    samsa_ckpt_tp_t    e[2] = { { "orders", 0, 42 },
                                { "a.b_c-d", 17, 9000000000LL } };
    samsa_ckpt_tp_t   *got;
    size_t             n;

    (void) state;
    snprintf(path, sizeof(path), "%s/recovery-point-offset-checkpoint", dir);
    assert_int_equal(samsa_ckpt_tp_read(path, &got, &n), SAMSA_ERR_NONE);
    assert_int_equal(n, 0);                     /* missing: empty */
    assert_int_equal(samsa_ckpt_tp_write(path, e, 2), SAMSA_ERR_NONE);
    assert_string_equal(pt_read(path),
                        "0\n2\norders 0 42\na.b_c-d 17 9000000000\n");
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    assert_int_equal(access(tmp, F_OK), -1);    /* renamed away */
    assert_int_equal(samsa_ckpt_tp_read(path, &got, &n), SAMSA_ERR_NONE);
    assert_int_equal(n, 2);
    assert_string_equal(got[1].topic, "a.b_c-d");
    assert_int_equal(got[1].partition, 17);
    assert_int_equal(got[1].offset, 9000000000LL);
    samsa_ckpt_tp_free(got, n);
    assert_int_equal(samsa_ckpt_tp_write(path, NULL, 0), SAMSA_ERR_NONE);
    assert_string_equal(pt_read(path), "0\n0\n");
    assert_int_equal(samsa_ckpt_tp_read(path, &got, &n), SAMSA_ERR_NONE);
    assert_int_equal(n, 0);
    bg_rmrf(dir);
}

static void
test_ckpt_rejects_malformed(void **state)
{
    static const char *const  bad[] = {
        "", "1\n0\n", "0\n", "0\n2\nt 0 1\n", "0\n1\nt 0 1\nextra\n",
        "0\n1\nt x 1\n", "0\n1\nt 0\n", "0\n1\n 0 1\n", "0\n-1\n",
        "0\n1\nt 0 1", "0\n99999999999\n",
    };
    char              *dir = bg_tmpdir(), path[512];
    samsa_ckpt_tp_t   *got;
    samsa_ckpt_epoch_t *ep;
    size_t             n, i;

    (void) state;
    snprintf(path, sizeof(path), "%s/ckpt", dir);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        pt_write(path, bad[i]);
        assert_int_equal(samsa_ckpt_tp_read(path, &got, &n),
                         SAMSA_ERR__BAD_MSG);
        assert_null(got);
        assert_int_equal(n, 0);
    }
    pt_write(path, "0\n1\n5\n");
    assert_int_equal(samsa_ckpt_epoch_read(path, &ep, &n),
                     SAMSA_ERR__BAD_MSG);
    bg_rmrf(dir);
}

static void
test_ckpt_epochs_round_trip(void **state)
{
    char                *dir = bg_tmpdir(), path[512];
    samsa_ckpt_epoch_t   e[3] = { { 0, 0 }, { 3, 100 }, { 7, 12345 } };
    samsa_ckpt_epoch_t  *got;
    size_t               n;

    (void) state;
    snprintf(path, sizeof(path), "%s/leader-epoch-checkpoint", dir);
    assert_int_equal(samsa_ckpt_epoch_write(path, e, 3), SAMSA_ERR_NONE);
    assert_string_equal(pt_read(path), "0\n3\n0 0\n3 100\n7 12345\n");
    assert_int_equal(samsa_ckpt_epoch_read(path, &got, &n), SAMSA_ERR_NONE);
    assert_int_equal(n, 3);
    assert_int_equal(got[2].epoch, 7);
    assert_int_equal(got[2].start_offset, 12345);
    free(got);
    bg_rmrf(dir);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ckpt_tp_round_trip),
        cmocka_unit_test(test_ckpt_rejects_malformed),
        cmocka_unit_test(test_ckpt_epochs_round_trip),
    };

    samsa_diag_set_level(SAMSA_DIAG_ERROR);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
