/* Unit tests for log/epochs.c: the leader epoch cache. */
#include "unit.h"

#include <string.h>

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

/* epochs given as (epoch, start) pairs, in memory only */
static void
epochs_set(samsa_epochs_t *ep, samsa_ckpt_epoch_t *e, size_t n)
{
    memset(ep, 0, sizeof(*ep));
    ep->e = e;
    ep->n = ep->cap = n;
}

/* The leader's KIP-320 check of a fetch's LastFetchedEpoch (Kafka's
 * Partition.readRecords). */
static void
test_epochs_check_fetch(void **state)
{
    samsa_ckpt_epoch_t  e[] = { { 1, 0 }, { 4, 30 }, { 6, 50 } };
    samsa_epochs_t      ep;
    int32_t             de;
    int64_t             dend;

    (void) state;
    epochs_set(&ep, e, 3);              /* LEO 70, log start 0, epoch 6 */
#define CHECK(lfe, fo, start, cur, want, we, wend) do {                     \
        assert_int_equal(samsa_epochs_check_fetch(&ep, lfe, fo, 70, start,  \
                                                  cur, &de, &dend), want);  \
        assert_int_equal(de, we);                                          \
        assert_int_equal(dend, wend);                                      \
    } while (0)
    CHECK(-1, 90, 0, 6, SAMSA_EPOCHS_FETCH_OK, -1, -1);  /* no epoch sent */
    CHECK(6, 70, 0, 6, SAMSA_EPOCHS_FETCH_OK, -1, -1);
    CHECK(6, 60, 0, 6, SAMSA_EPOCHS_FETCH_OK, -1, -1);
    CHECK(4, 50, 0, 6, SAMSA_EPOCHS_FETCH_OK, -1, -1);   /* at its end */
    CHECK(4, 55, 0, 6, SAMSA_EPOCHS_FETCH_DIVERGING, 4, 50);
    CHECK(5, 45, 0, 6, SAMSA_EPOCHS_FETCH_DIVERGING, 4, 50); /* unknown */
    CHECK(0, 0, 0, 6, SAMSA_EPOCHS_FETCH_OK, -1, -1);    /* below all */
    CHECK(0, 5, 0, 6, SAMSA_EPOCHS_FETCH_DIVERGING, 0, 0);
    CHECK(9, 70, 0, 6, SAMSA_EPOCHS_FETCH_OUT_OF_RANGE, -1, -1); /* newer */
    CHECK(4, 10, 20, 6, SAMSA_EPOCHS_FETCH_OUT_OF_RANGE, -1, -1);
    /* the leader's epoch 8, nothing written in it yet */
    CHECK(6, 70, 0, 8, SAMSA_EPOCHS_FETCH_OK, -1, -1);
    CHECK(8, 70, 0, 8, SAMSA_EPOCHS_FETCH_OK, -1, -1);
    CHECK(6, 75, 0, 8, SAMSA_EPOCHS_FETCH_DIVERGING, 6, 70);
#undef CHECK
    epochs_set(&ep, NULL, 0);           /* no epochs at all */
    assert_int_equal(samsa_epochs_check_fetch(&ep, 3, 0, 0, 0, -1, &de,
                                              &dend),
                     SAMSA_EPOCHS_FETCH_OUT_OF_RANGE);
}

/* The follower's truncation on DivergingEpoch (Kafka's
 * getOffsetTruncationState). */
static void
test_epochs_truncation_offset(void **state)
{
    samsa_ckpt_epoch_t  e[] = { { 1, 0 }, { 4, 30 }, { 5, 55 } };
    samsa_epochs_t      ep;

    (void) state;
    epochs_set(&ep, e, 3);              /* LEO 80: epoch 5 diverged */
    /* the leader's epoch 4 ends at 50, here at 55: back to 50 */
    assert_int_equal(samsa_epochs_truncation_offset(&ep, 80, 4, 50), 50);
    /* the leader's 4 ends later than here (55): this log's end of it */
    assert_int_equal(samsa_epochs_truncation_offset(&ep, 80, 4, 60), 55);
    /* epoch 3 unknown here: to the end of the largest below it (1: 30) */
    assert_int_equal(samsa_epochs_truncation_offset(&ep, 80, 3, 20), 30);
    /* the latest epoch here, the leader's ends further: nothing */
    assert_int_equal(samsa_epochs_truncation_offset(&ep, 80, 5, 100), 80);
    assert_int_equal(samsa_epochs_truncation_offset(&ep, 80, 5, 70), 70);
    /* an epoch older than all here: its end is where the first starts */
    assert_int_equal(samsa_epochs_truncation_offset(&ep, 80, 0, 10), 0);
    /* no leader epoch, or no end */
    assert_int_equal(samsa_epochs_truncation_offset(&ep, 80, -1, 40), 40);
    assert_int_equal(samsa_epochs_truncation_offset(&ep, 80, 4, -1), 80);
    /* no epochs here: the leader's end */
    epochs_set(&ep, NULL, 0);
    assert_int_equal(samsa_epochs_truncation_offset(&ep, 80, 4, 50), 50);
    assert_int_equal(samsa_epochs_truncation_offset(&ep, 30, 4, 50), 30);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_epochs_assign_truncate_reload),
        cmocka_unit_test(test_epochs_check_fetch),
        cmocka_unit_test(test_epochs_truncation_offset),
    };

    samsa_diag_set_level(SAMSA_DIAG_ERROR);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
