/* Unit tests for log/epochs.c: the leader epoch cache. */
#include "unit.h"

#include "log/batchgen.h"
#include "log/epochs.h"
#include "util/diag.h"

static void
test_epochs_assign_truncate_reload(void **state)
{
    char            *dir = bg_tmpdir();
    samsa_epochs_t   ep;
    int32_t          e;
    int64_t          end;

    (void) state;
    samsa_epochs_init(&ep, dir);
    assert_int_equal(samsa_epochs_latest(&ep), -1);
    assert_int_equal(samsa_epochs_for_offset(&ep, 5), -1);
    assert_int_equal(samsa_epochs_assign(&ep, 1, 0), SAMSA_ERR_NONE);
    assert_int_equal(samsa_epochs_assign(&ep, 1, 10), SAMSA_ERR_NONE);
    assert_int_equal(samsa_epochs_assign(&ep, 0, 20), SAMSA_ERR_NONE);
    assert_int_equal(samsa_epochs_assign(&ep, 4, 30), SAMSA_ERR_NONE);
    assert_int_equal(samsa_epochs_assign(&ep, 6, 50), SAMSA_ERR_NONE);
    assert_int_equal(ep.n, 3);
    assert_int_equal(samsa_epochs_for_offset(&ep, 29), 1);
    assert_int_equal(samsa_epochs_for_offset(&ep, 30), 4);
    assert_int_equal(samsa_epochs_latest(&ep), 6);
    /* Kafka's endOffsetFor: epochs 1@0, 4@30, 6@50, LEO 70 */
    samsa_epochs_end_offset(&ep, 5, 70, -1, &e, &end);
    assert_int_equal(e, 4);
    assert_int_equal(end, 50);
    samsa_epochs_end_offset(&ep, 4, 70, -1, &e, &end);
    assert_int_equal(e, 4);
    assert_int_equal(end, 50);
    samsa_epochs_end_offset(&ep, 6, 70, -1, &e, &end);   /* the latest */
    assert_int_equal(e, 6);
    assert_int_equal(end, 70);
    samsa_epochs_end_offset(&ep, 9, 70, -1, &e, &end);   /* newer: none */
    assert_int_equal(e, -1);
    assert_int_equal(end, -1);
    samsa_epochs_end_offset(&ep, 0, 70, -1, &e, &end);   /* older: itself */
    assert_int_equal(e, 0);
    assert_int_equal(end, 0);
    samsa_epochs_end_offset(&ep, -1, 70, -1, &e, &end);  /* undefined */
    assert_int_equal(e, -1);
    assert_int_equal(end, -1);
    /* the leader's epoch 8, nothing written in it yet: it starts at 70 */
    samsa_epochs_end_offset(&ep, 8, 70, 8, &e, &end);
    assert_int_equal(e, 8);
    assert_int_equal(end, 70);
    samsa_epochs_end_offset(&ep, 7, 70, 8, &e, &end);
    assert_int_equal(e, 6);
    assert_int_equal(end, 70);
    samsa_epochs_end_offset(&ep, 9, 70, 8, &e, &end);
    assert_int_equal(e, -1);
    assert_int_equal(end, -1);
    samsa_epochs_end_offset(&ep, 6, 70, 6, &e, &end);    /* not newer */
    assert_int_equal(e, 6);
    assert_int_equal(end, 70);
    assert_int_equal(samsa_epochs_truncate_start(&ep, 35), SAMSA_ERR_NONE);
    assert_int_equal(ep.n, 2);
    assert_int_equal(ep.e[0].epoch, 4);
    assert_int_equal(ep.e[0].start_offset, 35);
    assert_int_equal(samsa_epochs_truncate_end(&ep, 50), SAMSA_ERR_NONE);
    assert_int_equal(ep.n, 1);
    samsa_epochs_fini(&ep);
    samsa_epochs_init(&ep, dir);                /* from the file */
    assert_int_equal(ep.n, 1);
    assert_int_equal(ep.e[0].epoch, 4);
    assert_int_equal(ep.e[0].start_offset, 35);
    /* an epoch that wrote nothing is replaced */
    assert_int_equal(samsa_epochs_assign(&ep, 5, 35), SAMSA_ERR_NONE);
    assert_int_equal(ep.n, 1);
    assert_int_equal(ep.e[0].epoch, 5);
    samsa_epochs_fini(&ep);
    bg_rmrf(dir);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_epochs_assign_truncate_reload),
    };

    samsa_diag_set_level(SAMSA_DIAG_ERROR);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
