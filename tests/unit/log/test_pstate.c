/* tests/unit/log/test_pstate.c - producer state: Kafka's sequence, epoch
 * and transaction rules (KIP-98, KIP-360), undo, expiry and the snapshot
 * codec. */
#include "unit.h"

#include "log/pstate.h"
#include "log/txngen.h"
#include "util/alloc.h"

#define PID 4242

/* Apply blob b at first_offset as origin; returns the error. */
static samsa_err_t
apply(samsa_pstate_t *ps, samsa_buf_t *b, int64_t first_offset,
      samsa_pstate_origin_t origin, bool *dup, samsa_pstate_batch_t *d,
      samsa_pstate_change_t *out)
{
    samsa_pstate_change_t  ch;
    samsa_pstate_batch_t   dd;
    bool                   is_dup = false;
    samsa_err_t            err;

    samsa_pstate_change_init(&ch);
    err = samsa_pstate_apply(ps, b->data, b->len, first_offset, origin, &ch,
                             &is_dup, d != NULL ? d : &dd, NULL);
    if (dup != NULL) {
        *dup = is_dup;
    }
    if (err == SAMSA_ERR_NONE && !is_dup) {
        if (out != NULL) {
            *out = ch;              /* caller commits */
        } else {
            samsa_pstate_commit(ps, &ch);
        }
    }
    b->len = 0;
    return err;
}

/* One idempotent batch of n records. */
static samsa_err_t
send(samsa_pstate_t *ps, int64_t off, int n, int16_t epoch, int32_t seq,
     bool txn, bool *dup, samsa_pstate_batch_t *d)
{
    samsa_buf_t  b = SAMSA_BUF_INIT;
    samsa_err_t  err;

    tg_batch(&b, n, PID, epoch, seq, txn, 1000);
    err = apply(ps, &b, off, SAMSA_PSTATE_CLIENT, dup, d, NULL);
    samsa_buf_fini(&b);
    return err;
}

static void
test_pstate_duplicate_gets_original_offsets(void **state)
{
    samsa_pstate_t        *ps = samsa_pstate_new();
    samsa_pstate_batch_t   d;
    bool                   dup;

    (void) state;
    assert_int_equal(send(ps, 10, 5, 0, 0, false, &dup, NULL), 0);
    assert_false(dup);
    assert_int_equal(send(ps, 15, 3, 0, 5, false, &dup, NULL), 0);
    assert_int_equal(send(ps, 18, 5, 0, 0, false, &dup, &d), 0);
    assert_true(dup);
    assert_int_equal(d.first_offset, 10);
    assert_int_equal(d.last_offset, 14);
    assert_int_equal(send(ps, 18, 3, 0, 5, false, &dup, &d), 0);
    assert_true(dup);
    assert_int_equal(d.first_offset, 15);
    /* the duplicate changed nothing: the next one still follows seq 7 */
    assert_int_equal(send(ps, 18, 1, 0, 8, false, &dup, NULL), 0);
    assert_false(dup);
    samsa_pstate_free(ps);
}

static void
test_pstate_gap_is_out_of_order(void **state)
{
    samsa_pstate_t  *ps = samsa_pstate_new();

    (void) state;
    assert_int_equal(send(ps, 0, 2, 0, 0, false, NULL, NULL), 0);
    assert_int_equal(send(ps, 2, 1, 0, 3, false, NULL, NULL),
                     SAMSA_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    assert_int_equal(send(ps, 2, 1, 0, 1, false, NULL, NULL),
                     SAMSA_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    assert_int_equal(send(ps, 2, 1, 0, 2, false, NULL, NULL), 0);
    samsa_pstate_free(ps);
}

static void
test_pstate_only_five_batches_are_remembered(void **state)
{
    samsa_pstate_t  *ps = samsa_pstate_new();
    bool             dup;
    int              i;

    (void) state;
    for (i = 0; i < 6; i++) {
        assert_int_equal(send(ps, i, 1, 0, i, false, NULL, NULL), 0);
    }
    assert_int_equal(samsa_pstate_find(ps, PID)->nbatches, 5);
    /* the first batch fell out of the window: no longer a duplicate */
    assert_int_equal(send(ps, 6, 1, 0, 0, false, &dup, NULL),
                     SAMSA_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    assert_int_equal(send(ps, 6, 1, 0, 1, false, &dup, NULL), 0);
    assert_true(dup);
    samsa_pstate_free(ps);
}

static void
test_pstate_stale_epoch_is_fenced(void **state)
{
    samsa_pstate_t  *ps = samsa_pstate_new();

    (void) state;
    assert_int_equal(send(ps, 0, 1, 3, 0, false, NULL, NULL), 0);
    assert_int_equal(send(ps, 1, 1, 2, 1, false, NULL, NULL),
                     SAMSA_ERR_INVALID_PRODUCER_EPOCH);
    samsa_pstate_free(ps);
}

static void
test_pstate_new_epoch_starts_at_zero(void **state)
{
    samsa_pstate_t  *ps = samsa_pstate_new();

    (void) state;
    assert_int_equal(send(ps, 0, 4, 0, 0, false, NULL, NULL), 0);
    assert_int_equal(send(ps, 4, 1, 1, 4, false, NULL, NULL),
                     SAMSA_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    assert_int_equal(send(ps, 4, 1, 1, 0, false, NULL, NULL), 0);
    assert_int_equal(samsa_pstate_find(ps, PID)->epoch, 1);
    assert_int_equal(samsa_pstate_find(ps, PID)->nbatches, 1);
    samsa_pstate_free(ps);
}

static void
test_pstate_unknown_producer_takes_any_sequence(void **state)
{
    samsa_pstate_t  *ps = samsa_pstate_new();

    (void) state;
    /* KIP-360: Kafka no longer answers UNKNOWN_PRODUCER_ID here */
    assert_int_equal(send(ps, 0, 1, 7, 1234, false, NULL, NULL), 0);
    assert_int_equal(send(ps, 1, 1, 7, 1236, false, NULL, NULL),
                     SAMSA_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    assert_int_equal(send(ps, 1, 1, 7, 1235, false, NULL, NULL), 0);
    samsa_pstate_free(ps);
}

static void
test_pstate_sequence_wraps(void **state)
{
    samsa_pstate_t  *ps = samsa_pstate_new();
    bool             dup;

    (void) state;
    assert_int_equal(samsa_pstate_seq_add(INT32_MAX, 1), 0);
    assert_int_equal(samsa_pstate_seq_add(INT32_MAX - 1, 3), 1);
    assert_int_equal(send(ps, 0, 1, 0, INT32_MAX - 2, false, NULL, NULL), 0);
    assert_int_equal(send(ps, 1, 4, 0, INT32_MAX - 1, false, NULL, NULL), 0);
    assert_int_equal(samsa_pstate_find(ps, PID)->batches[1].last_seq, 1);
    assert_int_equal(send(ps, 5, 1, 0, 2, false, NULL, NULL), 0);
    assert_int_equal(send(ps, 6, 4, 0, INT32_MAX - 1, false, &dup, NULL), 0);
    assert_true(dup);
    /* a batch ending exactly at INT32_MAX is followed by 0 */
    assert_int_equal(send(ps, 6, 1, 1, 0, false, NULL, NULL), 0);
    assert_int_equal(send(ps, 7, 1, 1, 1, false, NULL, NULL), 0);
    samsa_pstate_free(ps);
    ps = samsa_pstate_new();
    assert_int_equal(send(ps, 0, 2, 0, INT32_MAX - 1, false, NULL, NULL), 0);
    assert_int_equal(send(ps, 2, 1, 0, 0, false, NULL, NULL), 0);
    samsa_pstate_free(ps);
}

static void
test_pstate_transaction_and_markers(void **state)
{
    samsa_pstate_t            *ps = samsa_pstate_new();
    samsa_pstate_change_t      ch;
    samsa_buf_t                b = SAMSA_BUF_INIT;

    (void) state;
    assert_int_equal(samsa_pstate_first_unstable(ps), -1);
    assert_int_equal(send(ps, 100, 2, 0, 0, true, NULL, NULL), 0);
    assert_int_equal(samsa_pstate_first_unstable(ps), 100);
    assert_int_equal(send(ps, 102, 2, 0, 2, true, NULL, NULL), 0);
    assert_int_equal(samsa_pstate_first_unstable(ps), 100);
    /* a plain batch in the middle of the producer's transaction */
    assert_int_equal(send(ps, 104, 1, 0, 4, false, NULL, NULL),
                     SAMSA_ERR_INVALID_TXN_STATE);
    /* a marker with an older epoch is refused */
    tg_marker(&b, PID, -1 + 0, SAMSA_BATCH_CONTROL_ABORT, 0, 2000);
    samsa_store_be16(b.data + SAMSA_BATCH_OFF_ProducerEpoch, (uint16_t) -2);
    bg_resign(b.data, b.len);
    assert_int_equal(apply(ps, &b, 104, SAMSA_PSTATE_COORDINATOR, NULL, NULL,
                           NULL),
                     SAMSA_ERR_INVALID_PRODUCER_EPOCH);
    tg_marker(&b, PID, 0, SAMSA_BATCH_CONTROL_ABORT, 5, 2000);
    assert_int_equal(apply(ps, &b, 104, SAMSA_PSTATE_COORDINATOR, NULL, NULL,
                           &ch), 0);
    assert_int_equal(ch.ndone, 1);
    assert_true(ch.done[0].aborted);
    assert_int_equal(ch.done[0].first_offset, 100);
    assert_int_equal(ch.done[0].last_offset, 104);
    assert_int_equal(samsa_pstate_lso_after(ps, &ch.done[0]), 105);
    samsa_pstate_commit(ps, &ch);
    assert_int_equal(samsa_pstate_first_unstable(ps), -1);
    /* an older coordinator's marker is fenced */
    tg_marker(&b, PID, 0, SAMSA_BATCH_CONTROL_COMMIT, 4, 2000);
    assert_int_equal(apply(ps, &b, 105, SAMSA_PSTATE_COORDINATOR, NULL, NULL,
                           NULL),
                     SAMSA_ERR_TRANSACTION_COORDINATOR_FENCED);
    /* sequences go on after the marker */
    assert_int_equal(send(ps, 105, 1, 0, 4, false, NULL, NULL), 0);
    samsa_buf_fini(&b);
    samsa_pstate_free(ps);
}

static void
test_pstate_lso_after_skips_own_txn(void **state)
{
    samsa_pstate_t         *ps = samsa_pstate_new();
    samsa_buf_t             b = SAMSA_BUF_INIT;
    samsa_pstate_change_t   ch;

    (void) state;
    tg_batch(&b, 1, 1, 0, 0, true, 1000);
    assert_int_equal(apply(ps, &b, 10, SAMSA_PSTATE_CLIENT, NULL, NULL, NULL),
                     0);
    tg_batch(&b, 1, 2, 0, 0, true, 1000);
    assert_int_equal(apply(ps, &b, 11, SAMSA_PSTATE_CLIENT, NULL, NULL, NULL),
                     0);
    assert_int_equal(samsa_pstate_first_unstable(ps), 10);
    tg_marker(&b, 2, 0, SAMSA_BATCH_CONTROL_ABORT, 0, 1000);
    assert_int_equal(apply(ps, &b, 12, SAMSA_PSTATE_COORDINATOR, NULL, NULL,
                           &ch), 0);
    /* producer 1's transaction is still open: LSO at its start */
    assert_int_equal(samsa_pstate_lso_after(ps, &ch.done[0]), 10);
    samsa_pstate_commit(ps, &ch);
    tg_marker(&b, 1, 0, SAMSA_BATCH_CONTROL_COMMIT, 0, 1000);
    assert_int_equal(apply(ps, &b, 13, SAMSA_PSTATE_COORDINATOR, NULL, NULL,
                           &ch), 0);
    assert_false(ch.done[0].aborted);
    samsa_pstate_commit(ps, &ch);
    assert_int_equal(samsa_pstate_first_unstable(ps), -1);
    samsa_buf_fini(&b);
    samsa_pstate_free(ps);
}

static void
test_pstate_failed_blob_is_undone(void **state)
{
    samsa_pstate_t  *ps = samsa_pstate_new();
    samsa_buf_t      b = SAMSA_BUF_INIT;

    (void) state;
    assert_int_equal(send(ps, 0, 1, 0, 0, false, NULL, NULL), 0);
    tg_batch(&b, 1, PID, 0, 1, false, 1000);     /* good */
    tg_batch(&b, 1, 99, 0, 0, true, 1000);       /* good, new producer */
    tg_batch(&b, 1, PID, 0, 9, false, 1000);     /* gap */
    assert_int_equal(apply(ps, &b, 1, SAMSA_PSTATE_CLIENT, NULL, NULL, NULL),
                     SAMSA_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    assert_null(samsa_pstate_find(ps, 99));
    assert_int_equal(samsa_pstate_first_unstable(ps), -1);
    assert_int_equal(samsa_pstate_find(ps, PID)->nbatches, 1);
    assert_int_equal(send(ps, 1, 1, 0, 1, false, NULL, NULL), 0);
    samsa_buf_fini(&b);
    samsa_pstate_free(ps);
}

static void
test_pstate_plain_batches_untouched(void **state)
{
    samsa_pstate_t  *ps = samsa_pstate_new();
    samsa_buf_t      b = SAMSA_BUF_INIT;

    (void) state;
    bg_simple(&b, 3, 1000);
    assert_int_equal(apply(ps, &b, 0, SAMSA_PSTATE_CLIENT, NULL, NULL, NULL),
                     0);
    assert_int_equal(samsa_pstate_count(ps), 0);
    bg_spec_t  s = { .attrs = SAMSA_BATCH_ATTR_TRANSACTIONAL };
    bg_batch(&b, &s);
    assert_int_equal(apply(ps, &b, 0, SAMSA_PSTATE_CLIENT, NULL, NULL, NULL),
                     SAMSA_ERR_INVALID_RECORD);
    samsa_buf_fini(&b);
    samsa_pstate_free(ps);
}

static void
test_pstate_expiry(void **state)
{
    samsa_pstate_t  *ps = samsa_pstate_new();
    samsa_buf_t      b = SAMSA_BUF_INIT;

    (void) state;
    tg_batch(&b, 1, 1, 0, 0, false, 1000);
    assert_int_equal(apply(ps, &b, 0, SAMSA_PSTATE_CLIENT, NULL, NULL, NULL),
                     0);
    tg_batch(&b, 1, 2, 0, 0, true, 1000);
    assert_int_equal(apply(ps, &b, 1, SAMSA_PSTATE_CLIENT, NULL, NULL, NULL),
                     0);
    tg_batch(&b, 1, 3, 0, 0, false, 50000);
    assert_int_equal(apply(ps, &b, 2, SAMSA_PSTATE_CLIENT, NULL, NULL, NULL),
                     0);
    assert_int_equal(samsa_pstate_expire(ps, 10999, 10000), 0);
    assert_int_equal(samsa_pstate_expire(ps, 11000, 10000), 1);
    assert_null(samsa_pstate_find(ps, 1));
    assert_non_null(samsa_pstate_find(ps, 2));  /* open transaction */
    assert_non_null(samsa_pstate_find(ps, 3));
    samsa_buf_fini(&b);
    samsa_pstate_free(ps);
}

static void
test_pstate_snapshot_round_trip(void **state)
{
    samsa_pstate_t              *ps = samsa_pstate_new(), *back;
    const samsa_pstate_entry_t  *a, *c;
    samsa_buf_t                  out = SAMSA_BUF_INIT, b = SAMSA_BUF_INIT;
    int                          i;

    (void) state;
    for (i = 0; i < 7; i++) {
        assert_int_equal(send(ps, 10 * i, 3, 2, 3 * i, false, NULL, NULL), 0);
    }
    tg_batch(&b, 2, 77, 1, INT32_MAX, true, 5000);
    assert_int_equal(apply(ps, &b, 100, SAMSA_PSTATE_CLIENT, NULL, NULL,
                           NULL), 0);
    tg_marker(&b, 88, 3, SAMSA_BATCH_CONTROL_COMMIT, 9, 6000);
    assert_int_equal(apply(ps, &b, 102, SAMSA_PSTATE_COORDINATOR, NULL,
                           NULL, NULL), 0);
    samsa_pstate_encode(ps, &out);
    /* 5 batches of PID, 1 of 77, 1 empty entry of 88 */
    assert_int_equal(out.len, SAMSA_PSTATE_HEADER_SIZE
                                  + 7 * SAMSA_PSTATE_ENTRY_SIZE);
    back = samsa_pstate_new();
    assert_int_equal(samsa_pstate_decode(back, out.data, out.len), 0);
    assert_int_equal(samsa_pstate_count(back), 3);
    a = samsa_pstate_find(ps, PID);
    c = samsa_pstate_find(back, PID);
    assert_int_equal(c->nbatches, 5);
    assert_memory_equal(a->batches, c->batches, sizeof(a->batches));
    assert_int_equal(c->epoch, 2);
    c = samsa_pstate_find(back, 77);
    assert_int_equal(c->txn_first_offset, 100);
    assert_int_equal(c->batches[0].first_seq, INT32_MAX);
    assert_int_equal(c->batches[0].last_seq, 0);
    assert_int_equal(samsa_pstate_first_unstable(back), 100);
    c = samsa_pstate_find(back, 88);
    assert_int_equal(c->coordinator_epoch, 9);
    assert_int_equal(c->epoch, 3);
    assert_int_equal(c->nbatches, 0);
    /* a duplicate is still recognised from the loaded state */
    {
        bool  dup;

        assert_int_equal(send(back, 200, 3, 2, 9, false, &dup, NULL), 0);
        assert_true(dup);
    }
    /* any flipped byte is caught */
    out.data[out.len - 3] ^= 1;
    assert_int_equal(samsa_pstate_decode(back, out.data, out.len),
                     SAMSA_ERR_CORRUPT_MESSAGE);
    assert_int_equal(samsa_pstate_count(back), 0);
    assert_int_equal(samsa_pstate_decode(back, out.data, 5),
                     SAMSA_ERR_CORRUPT_MESSAGE);
    samsa_buf_fini(&out);
    samsa_buf_fini(&b);
    samsa_pstate_free(back);
    samsa_pstate_free(ps);
}

static void
test_pstate_many_producers(void **state)
{
    samsa_pstate_t        *ps = samsa_pstate_new();
    samsa_buf_t            b = SAMSA_BUF_INIT;
    samsa_pstate_entry_t  *list;
    int                    i;

    (void) state;
    for (i = 0; i < 1000; i++) {
        tg_batch(&b, 1, 5000 - i, 0, 0, false, 1000);
        assert_int_equal(apply(ps, &b, i, SAMSA_PSTATE_CLIENT, NULL, NULL,
                               NULL), 0);
    }
    assert_int_equal(samsa_pstate_list(ps, &list), 1000);
    assert_int_equal(list[0].producer_id, 4001);
    assert_int_equal(list[999].producer_id, 5000);
    samsa_free(list);
    samsa_buf_fini(&b);
    samsa_pstate_free(ps);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_pstate_duplicate_gets_original_offsets),
        cmocka_unit_test(test_pstate_gap_is_out_of_order),
        cmocka_unit_test(test_pstate_only_five_batches_are_remembered),
        cmocka_unit_test(test_pstate_stale_epoch_is_fenced),
        cmocka_unit_test(test_pstate_new_epoch_starts_at_zero),
        cmocka_unit_test(test_pstate_unknown_producer_takes_any_sequence),
        cmocka_unit_test(test_pstate_sequence_wraps),
        cmocka_unit_test(test_pstate_transaction_and_markers),
        cmocka_unit_test(test_pstate_lso_after_skips_own_txn),
        cmocka_unit_test(test_pstate_failed_blob_is_undone),
        cmocka_unit_test(test_pstate_plain_batches_untouched),
        cmocka_unit_test(test_pstate_expiry),
        cmocka_unit_test(test_pstate_snapshot_round_trip),
        cmocka_unit_test(test_pstate_many_producers),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
