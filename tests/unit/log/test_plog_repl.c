/* tests/unit/log/test_plog_repl.c - a follower's side of a partition log
 * (issue 19): samsa_plog_append_replica keeps the leader's batches (bytes,
 * offsets, epochs; producer state, markers and the aborted index follow),
 * refuses a first batch not at the LEO, a bad CRC, leaves a cut tail; the
 * high watermark of a replicated log moves only by
 * samsa_plog_advance_high_watermark. */
#include "unit.h"

#include "log/plogtest.h"
#include "log/txngen.h"
#include "util/alloc.h"

#define PID 4242

static samsa_uuid_t
tid(void)
{
    samsa_uuid_t  u = { { 9, 8, 7 } };

    return u;
}

/* Append blob b (emptied after) to the leader with leader epoch epoch. */
static void
lput(samsa_plog_t *plog, samsa_buf_t *b, bool client, int32_t epoch)
{
    samsa_plog_append_opts_t    o = { .leader_epoch = epoch,
                                      .from_client = client };
    samsa_plog_append_result_t  r;

    assert_int_equal(samsa_plog_append(plog, b->data, b->len, &o, &r), 0);
    b->len = 0;
}

/* Every byte of the log from offset 0 (one segment), malloc'd. */
static uint8_t *
all_bytes(samsa_plog_t *plog, size_t *len)
{
    samsa_plog_region_t  r;
    uint8_t             *p;

    assert_int_equal(samsa_plog_read(plog, 0, INT32_MAX, true,
                                     samsa_plog_log_end_offset(plog), &r),
                     0);
    p = pt_region_bytes(&r);
    *len = r.len;
    samsa_plog_region_release(&r);
    return p;
}

static bool
count_aborted(void *ctx, const samsa_seg_aborted_t *a)
{
    (void) a;
    ++*(int *) ctx;
    return true;
}

static void
test_plog_repl_keeps_the_leaders_batches(void **state)
{
    char                        *ldir = bg_tmpdir(), *fdir = bg_tmpdir();
    samsa_log_config_t           cfg = pt_config();
    samsa_plog_t                *lead, *fol;
    samsa_plog_append_result_t   res;
    samsa_pstate_entry_t        *ps = NULL;
    samsa_buf_t                  b = SAMSA_BUF_INIT;
    uint8_t                     *lb, *fb;
    size_t                       llen, flen;
    int                          aborted = 0;

    (void) state;
    cfg.segment_bytes = 1 << 20;
    assert_int_equal(samsa_plog_create(ldir, "t", 0, tid(), &cfg, &lead), 0);
    assert_int_equal(samsa_plog_create(fdir, "t", 0, tid(), &cfg, &fol), 0);
    samsa_plog_set_replicated(fol, true);
    /* plain, idempotent (epochs 3 then 5), then an aborted transaction */
    bg_simple(&b, 4, 1000);
    lput(lead, &b, true, 3);
    tg_batch(&b, 2, PID, 0, 0, false, 1000);
    lput(lead, &b, true, 3);
    tg_batch(&b, 3, PID, 0, 2, false, 1000);
    lput(lead, &b, true, 5);
    tg_batch(&b, 2, PID + 1, 0, 0, true, 1000);
    lput(lead, &b, true, 5);
    tg_marker(&b, PID + 1, 0, 0, 7, 1000);
    lput(lead, &b, false, 5);
    assert_int_equal(samsa_plog_log_end_offset(lead), 12);

    lb = all_bytes(lead, &llen);
    assert_int_equal(samsa_plog_append_replica(fol, lb, llen, &res), 0);
    assert_int_equal(res.bytes, llen);
    assert_int_equal(res.base_offset, 0);
    assert_int_equal(res.last_offset, 11);
    assert_int_equal(samsa_plog_log_end_offset(fol), 12);
    assert_int_equal(samsa_plog_high_watermark(fol), 0);    /* not moved */
    fb = all_bytes(fol, &flen);
    assert_int_equal(flen, llen);
    assert_memory_equal(fb, lb, llen);
    assert_int_equal(samsa_plog_latest_epoch(fol), 5);
    /* the producer state and the aborted index followed */
    assert_int_equal(samsa_plog_producers(fol, &ps), 2);
    samsa_free(ps);
    assert_true(samsa_plog_advance_high_watermark(fol, 100));
    assert_int_equal(samsa_plog_high_watermark(fol), 12);   /* at most LEO */
    assert_false(samsa_plog_advance_high_watermark(fol, 5)); /* never back */
    assert_int_equal(samsa_plog_last_stable_offset(fol), 12);
    assert_int_equal(samsa_plog_aborted_txns(fol, 0, 12, count_aborted,
                                             &aborted), 0);
    assert_int_equal(aborted, 1);
    /* a retried idempotent batch on the new leader is a duplicate */
    tg_batch(&b, 3, PID, 0, 2, false, 1000);
    {
        samsa_plog_append_opts_t  o = { .leader_epoch = 6,
                                        .from_client = true };

        assert_int_equal(samsa_plog_append(fol, b.data, b.len, &o, &res), 0);
        assert_true(res.duplicate);
        assert_int_equal(res.base_offset, 6);
    }
    free(lb);
    free(fb);
    samsa_buf_fini(&b);
    assert_int_equal(samsa_plog_close(lead), 0);
    assert_int_equal(samsa_plog_close(fol), 0);
    bg_rmrf(ldir);
    bg_rmrf(fdir);
}

static void
test_plog_repl_refusals_and_cut_tail(void **state)
{
    char                        *dir = bg_tmpdir();
    samsa_log_config_t           cfg = pt_config();
    samsa_plog_t                *fol;
    samsa_plog_append_result_t   res;
    samsa_buf_t                  b = SAMSA_BUF_INIT;
    size_t                       first;

    (void) state;
    assert_int_equal(samsa_plog_create(dir, "t", 0, tid(), &cfg, &fol), 0);
    samsa_plog_set_replicated(fol, true);
    first = bg_simple(&b, 2, 1000);             /* offsets 0-1 */
    bg_simple(&b, 3, 1000);
    samsa_store_be64(b.data + first, 2);        /* the second at 2-4 */
    bg_resign(b.data + first, b.len - first);
    /* cut in the middle of the second batch: the first is taken */
    assert_int_equal(samsa_plog_append_replica(fol, b.data, b.len - 5, &res),
                     0);
    assert_int_equal(res.bytes, first);
    assert_int_equal(samsa_plog_log_end_offset(fol), 2);
    /* the first batch again: not at the LEO */
    assert_int_equal(samsa_plog_append_replica(fol, b.data, b.len, &res),
                     SAMSA_ERR_OFFSET_OUT_OF_RANGE);
    assert_non_null(res.summary.err_msg);
    assert_int_equal(samsa_plog_log_end_offset(fol), 2);
    /* a bad CRC */
    b.data[b.len - 1] ^= 1;
    assert_int_equal(samsa_plog_append_replica(fol, b.data + first,
                                               b.len - first, &res),
                     SAMSA_ERR_CORRUPT_MESSAGE);
    b.data[b.len - 1] ^= 1;
    assert_int_equal(samsa_plog_append_replica(fol, b.data + first,
                                               b.len - first, &res), 0);
    assert_int_equal(samsa_plog_log_end_offset(fol), 5);
    /* nothing, and a header fragment: nothing taken */
    assert_int_equal(samsa_plog_append_replica(fol, b.data, 0, &res), 0);
    assert_int_equal(res.bytes, 0);
    assert_int_equal(samsa_plog_append_replica(fol, b.data, 20, &res), 0);
    assert_int_equal(res.bytes, 0);
    samsa_buf_fini(&b);
    assert_int_equal(samsa_plog_close(fol), 0);
    bg_rmrf(dir);
}

static void
test_plog_repl_leader_high_watermark(void **state)
{
    char                *dir = bg_tmpdir();
    samsa_log_config_t   cfg = pt_config();
    samsa_plog_t        *plog;

    (void) state;
    assert_int_equal(samsa_plog_create(dir, "t", 0, tid(), &cfg, &plog), 0);
    pt_append(plog, 2, 1000);
    assert_int_equal(samsa_plog_high_watermark(plog), 2);   /* RF 1 */
    samsa_plog_set_replicated(plog, true);
    assert_true(samsa_plog_is_replicated(plog));
    pt_append(plog, 3, 1000);
    assert_int_equal(samsa_plog_log_end_offset(plog), 5);
    assert_int_equal(samsa_plog_high_watermark(plog), 2);   /* held */
    assert_true(samsa_plog_advance_high_watermark(plog, 4));
    assert_int_equal(samsa_plog_high_watermark(plog), 4);
    /* truncation never lifts a held HW to the new end */
    assert_int_equal(samsa_plog_truncate_to(plog, 5), 0);
    assert_int_equal(samsa_plog_high_watermark(plog), 4);
    samsa_plog_set_replicated(plog, false);
    assert_int_equal(samsa_plog_high_watermark(plog), 5);   /* LEO again */
    assert_int_equal(samsa_plog_close(plog), 0);
    bg_rmrf(dir);
}

/* truncateFullyAndStartAt: a follower below its leader's log start drops
 * everything and restarts at that offset; the leader's batches from there
 * are taken, and the log reopens as it was left. */
static void
test_plog_repl_truncate_fully(void **state)
{
    char                        *dir = bg_tmpdir();
    samsa_log_config_t           cfg = pt_config();
    samsa_plog_load_t            load = { 0 };
    samsa_plog_t                *fol;
    samsa_plog_append_result_t   res;
    samsa_buf_t                  b = SAMSA_BUF_INIT;
    int32_t                      e;
    int64_t                      end;

    (void) state;
    assert_int_equal(samsa_plog_create(dir, "t", 0, tid(), &cfg, &fol), 0);
    samsa_plog_set_replicated(fol, true);
    pt_append(fol, 4, 1000);                    /* epoch 0, offsets 0-3 */
    assert_int_equal(samsa_plog_latest_epoch(fol), 0);
    assert_int_equal(samsa_plog_truncate_fully(fol, 4),
                     SAMSA_ERR_OFFSET_OUT_OF_RANGE);    /* not above */
    assert_int_equal(samsa_plog_truncate_fully(fol, 50), 0);
    assert_int_equal(samsa_plog_log_end_offset(fol), 50);
    assert_int_equal(samsa_plog_log_start_offset(fol), 50);
    assert_int_equal(samsa_plog_high_watermark(fol), 50);
    assert_int_equal(samsa_plog_latest_epoch(fol), -1);
    /* the leader's batch at 50 (epoch 7) */
    bg_simple(&b, 3, 1000);
    samsa_store_be64(b.data, 50);
    samsa_store_be32(b.data + 12, 7);           /* PartitionLeaderEpoch */
    bg_resign(b.data, b.len);
    assert_int_equal(samsa_plog_append_replica(fol, b.data, b.len, &res), 0);
    assert_int_equal(samsa_plog_log_end_offset(fol), 53);
    samsa_plog_end_offset_for_epoch(fol, 7, -1, &e, &end);
    assert_int_equal(e, 7);
    assert_int_equal(end, 53);
    assert_int_equal(samsa_plog_close(fol), 0);
    load.recovery_point = 0;
    load.log_start_offset = 50;
    load.now_ms = 1000;
    assert_int_equal(samsa_plog_open(dir, "t", 0, &cfg, &load, &fol), 0);
    assert_int_equal(samsa_plog_log_start_offset(fol), 50);
    assert_int_equal(samsa_plog_log_end_offset(fol), 53);
    assert_int_equal(samsa_plog_latest_epoch(fol), 7);
    assert_int_equal(samsa_plog_close(fol), 0);
    samsa_buf_fini(&b);
    bg_rmrf(dir);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_plog_repl_keeps_the_leaders_batches),
        cmocka_unit_test(test_plog_repl_refusals_and_cut_tail),
        cmocka_unit_test(test_plog_repl_leader_high_watermark),
        cmocka_unit_test(test_plog_repl_truncate_fully),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
