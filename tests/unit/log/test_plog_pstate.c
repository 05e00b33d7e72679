/* tests/unit/log/test_plog_pstate.c - a partition log's producer state:
 * duplicates across clean and unclean reopen, snapshots at roll and close
 * and their deletion with segments, the last stable offset, the aborted
 * transaction index (.txnindex) and its rebuild on recovery. */
#include "unit.h"

#include <dirent.h>
#include <limits.h>

#include "log/plogtest.h"
#include "log/txngen.h"
#include "util/alloc.h"

#define PID 777

static samsa_plog_append_opts_t  client_opts = { .leader_epoch = 0,
                                                 .from_client = true };
static samsa_plog_append_opts_t  coord_opts = { .leader_epoch = 0,
                                                .from_client = false };

static samsa_uuid_t
tid(void)
{
    samsa_uuid_t  u = { { 1, 2, 3 } };

    return u;
}

/* Append blob b (emptied after); res gets the result. */
static samsa_err_t
put(samsa_plog_t *plog, samsa_buf_t *b, const samsa_plog_append_opts_t *o,
    samsa_plog_append_result_t *res)
{
    samsa_plog_append_result_t  r;
    samsa_err_t                 err;

    err = samsa_plog_append(plog, b->data, b->len, o, res != NULL ? res : &r);
    b->len = 0;
    return err;
}

static samsa_plog_t *
reopen(const char *dir, const samsa_log_config_t *cfg, bool clean,
       int64_t recovery_point)
{
    samsa_plog_load_t  load = { .recovery_point = recovery_point,
                                .log_start_offset = -1, .clean = clean,
                                .now_ms = 0 };
    samsa_plog_t      *plog;

    assert_int_equal(samsa_plog_open(dir, "t", 0, cfg, &load, &plog), 0);
    return plog;
}

static int
count_files(const char *dir, const char *suffix)
{
    char            path[PATH_MAX];
    DIR            *d;
    struct dirent  *de;
    int             n = 0;
    size_t          l, m = strlen(suffix);

    snprintf(path, sizeof(path), "%s/t-0", dir);
    d = opendir(path);
    assert_non_null(d);
    while ((de = readdir(d)) != NULL) {
        l = strlen(de->d_name);
        n += l > m && strcmp(de->d_name + l - m, suffix) == 0;
    }
    closedir(d);
    return n;
}

/* The lowest offset with a .snapshot file, or -1. */
static int64_t
min_snapshot(const char *dir)
{
    char            path[PATH_MAX];
    DIR            *d;
    struct dirent  *de;
    int64_t         lo = -1, v;
    size_t          l;

    snprintf(path, sizeof(path), "%s/t-0", dir);
    d = opendir(path);
    assert_non_null(d);
    while ((de = readdir(d)) != NULL) {
        l = strlen(de->d_name);
        if (l == 29 && strcmp(de->d_name + 20, ".snapshot") == 0) {
            v = strtoll(de->d_name, NULL, 10);
            lo = lo < 0 || v < lo ? v : lo;
        }
    }
    closedir(d);
    return lo;
}

/* Send batch seq..seq+n-1 of PID; the result's base offset and whether it
 * was a duplicate. */
static int64_t
send(samsa_plog_t *plog, int n, int32_t seq, bool *dup)
{
    samsa_buf_t                 b = SAMSA_BUF_INIT;
    samsa_plog_append_result_t  res;

    tg_batch(&b, n, PID, 0, seq, false, 1000);
    assert_int_equal(put(plog, &b, &client_opts, &res), 0);
    samsa_buf_fini(&b);
    *dup = res.duplicate;
    return res.base_offset;
}

static void
test_plog_pstate_duplicates_survive_reopen(void **state)
{
    char                *dir = bg_tmpdir();
    samsa_log_config_t   cfg = pt_config();
    samsa_plog_t        *plog;
    samsa_buf_t          b = SAMSA_BUF_INIT;
    bool                 dup;
    int                  i;

    (void) state;
    cfg.segment_bytes = 1024;               /* a few rolls */
    assert_int_equal(samsa_plog_create(dir, "t", 0, tid(), &cfg, &plog), 0);
    for (i = 0; i < 30; i++) {
        assert_int_equal(send(plog, 2, 2 * i, &dup), 2 * i);
        assert_false(dup);
    }
    assert_int_equal(send(plog, 2, 56, &dup), 56);
    assert_true(dup);
    assert_int_equal(samsa_plog_log_end_offset(plog), 60);
    assert_true(count_files(dir, ".snapshot") > 0);     /* at each roll */
    assert_int_equal(samsa_plog_close(plog), 0);

    plog = reopen(dir, &cfg, true, 60);
    for (i = 25; i < 30; i++) {
        assert_int_equal(send(plog, 2, 2 * i, &dup), 2 * i);
        assert_true(dup);
    }
    tg_batch(&b, 1, PID, 0, 61, false, 1000);
    assert_int_equal(put(plog, &b, &client_opts, NULL),
                     SAMSA_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    assert_int_equal(send(plog, 1, 60, &dup), 60);
    samsa_plog_unref(plog);                 /* crash: no close */

    /* everything after the recovery point is replayed */
    plog = reopen(dir, &cfg, false, 10);
    assert_int_equal(samsa_plog_log_end_offset(plog), 61);
    assert_int_equal(send(plog, 1, 60, &dup), 60);
    assert_true(dup);
    assert_int_equal(send(plog, 2, 58, &dup), 58);
    assert_true(dup);
    samsa_plog_unref(plog);

    /* no recovery point and no usable snapshot: the whole log */
    plog = reopen(dir, &cfg, false, -1);
    assert_int_equal(send(plog, 1, 60, &dup), 60);
    assert_true(dup);
    assert_int_equal(send(plog, 1, 61, &dup), 61);
    assert_false(dup);
    assert_int_equal(samsa_plog_close(plog), 0);
    samsa_buf_fini(&b);
    bg_rmrf(dir);
}

static void
test_plog_pstate_corrupt_snapshot_falls_back(void **state)
{
    char                *dir = bg_tmpdir();
    char                 path[PATH_MAX];
    samsa_log_config_t   cfg = pt_config();
    samsa_plog_t        *plog;
    FILE                *f;
    bool                 dup;
    int                  i;

    (void) state;
    assert_int_equal(samsa_plog_create(dir, "t", 0, tid(), &cfg, &plog), 0);
    for (i = 0; i < 5; i++) {
        send(plog, 1, i, &dup);
    }
    assert_int_equal(samsa_plog_close(plog), 0);
    snprintf(path, sizeof(path), "%s/t-0/%020d.snapshot", dir, 5);
    f = fopen(path, "r+");
    assert_non_null(f);
    fseek(f, 12, SEEK_SET);
    fputc('X', f);
    fclose(f);
    plog = reopen(dir, &cfg, true, 5);
    assert_int_equal(count_files(dir, ".snapshot"), 0);  /* deleted */
    assert_int_equal(send(plog, 1, 4, &dup), 4);         /* replayed */
    assert_true(dup);
    assert_int_equal(samsa_plog_close(plog), 0);
    bg_rmrf(dir);
}

static void
test_plog_pstate_snapshots_go_with_segments(void **state)
{
    char                *dir = bg_tmpdir();
    samsa_log_config_t   cfg = pt_config();
    samsa_plog_t        *plog;
    char                 path[PATH_MAX];
    int64_t              low;
    bool                 dup;
    int                  i, before;

    (void) state;
    cfg.segment_bytes = 512;
    assert_int_equal(samsa_plog_create(dir, "t", 0, tid(), &cfg, &plog), 0);
    for (i = 0; i < 40; i++) {
        send(plog, 1, i, &dup);
    }
    before = count_files(dir, ".snapshot");
    assert_true(before >= 3);
    assert_int_equal(samsa_plog_delete_records(plog, 35, &low), 0);
    assert_true(count_files(dir, ".snapshot") < before);
    /* the state is kept (KIP-360) */
    assert_int_equal(send(plog, 1, 39, &dup), 39);
    assert_true(dup);
    assert_int_equal(samsa_plog_close(plog), 0);
    plog = reopen(dir, &cfg, true, 40);
    assert_int_equal(send(plog, 1, 39, &dup), 39);
    assert_true(dup);
    assert_int_equal(send(plog, 1, 40, &dup), 40);
    assert_false(dup);
    samsa_plog_unref(plog);
    plog = reopen(dir, &cfg, false, -1);
    assert_int_equal(send(plog, 1, 40, &dup), 40);
    assert_true(dup);
    assert_int_equal(samsa_plog_close(plog), 0);
    /* the snapshot of that clean close (offset 41, inside a segment) goes
     * too once its segment is deleted */
    plog = reopen(dir, &cfg, true, 41);
    snprintf(path, sizeof(path), "%s/t-0/%020d.snapshot", dir, 41);
    assert_int_equal(access(path, F_OK), 0);
    assert_true(min_snapshot(dir) < 41);
    for (i = 41; i < 60; i++) {
        send(plog, 1, i, &dup);
    }
    assert_int_equal(samsa_plog_delete_records(plog, 58, &low), 0);
    assert_true(min_snapshot(dir) > 41);
    assert_true(samsa_plog_log_start_offset(plog) > 41);
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(samsa_plog_close(plog), 0);
    bg_rmrf(dir);
}

typedef struct collected {
    samsa_seg_aborted_t  a[16];
    int                  n;
} collected_t;

static bool
collect_cb(void *ctx, const samsa_seg_aborted_t *a)
{
    collected_t  *c = ctx;

    if (c->n < 16) {
        c->a[c->n++] = *a;
    }
    return true;
}

static collected_t
aborted(samsa_plog_t *plog, int64_t from, int64_t upper)
{
    collected_t  c = { .n = 0 };

    assert_int_equal(samsa_plog_aborted_txns(plog, from, upper, collect_cb,
                                             &c), 0);
    return c;
}

/* Two producers: 1 commits, 2 aborts, 3 stays open. */
static void
txn_workload(samsa_plog_t *plog)
{
    samsa_buf_t  b = SAMSA_BUF_INIT;

    pt_append(plog, 2, 1000);                           /* 0-1 plain */
    tg_batch(&b, 2, 1, 0, 0, true, 1000);               /* 2-3 */
    assert_int_equal(put(plog, &b, &client_opts, NULL), 0);
    assert_int_equal(samsa_plog_last_stable_offset(plog), 2);
    tg_batch(&b, 3, 2, 0, 0, true, 1000);               /* 4-6 */
    assert_int_equal(put(plog, &b, &client_opts, NULL), 0);
    tg_marker(&b, 1, 0, SAMSA_BATCH_CONTROL_COMMIT, 0, 1000);   /* 7 */
    assert_int_equal(put(plog, &b, &coord_opts, NULL), 0);
    assert_int_equal(samsa_plog_last_stable_offset(plog), 4);
    tg_batch(&b, 1, 2, 0, 3, true, 1000);               /* 8 */
    assert_int_equal(put(plog, &b, &client_opts, NULL), 0);
    tg_marker(&b, 2, 0, SAMSA_BATCH_CONTROL_ABORT, 0, 1000);    /* 9 */
    assert_int_equal(put(plog, &b, &coord_opts, NULL), 0);
    assert_int_equal(samsa_plog_last_stable_offset(plog), 10);
    tg_batch(&b, 1, 3, 0, 0, true, 1000);               /* 10 open */
    assert_int_equal(put(plog, &b, &client_opts, NULL), 0);
    pt_append(plog, 1, 1000);                           /* 11 plain */
    samsa_buf_fini(&b);
}

static void
check_txn_state(samsa_plog_t *plog)
{
    samsa_plog_region_t  r;
    collected_t          c;
    int64_t              first, next;

    assert_int_equal(samsa_plog_log_end_offset(plog), 12);
    assert_int_equal(samsa_plog_high_watermark(plog), 12);
    assert_int_equal(samsa_plog_last_stable_offset(plog), 10);
    c = aborted(plog, 0, 10);
    assert_int_equal(c.n, 1);
    assert_int_equal(c.a[0].producer_id, 2);
    assert_int_equal(c.a[0].first_offset, 4);
    assert_int_equal(c.a[0].last_offset, 9);
    assert_int_equal(c.a[0].last_stable_offset, 10);
    assert_int_equal(aborted(plog, 10, 12).n, 0);       /* after it */
    assert_int_equal(aborted(plog, 0, 4).n, 0);         /* before it */
    /* a read_committed read stops at the LSO */
    assert_int_equal(samsa_plog_read(plog, 0, 1 << 20, true,
                                     samsa_plog_last_stable_offset(plog),
                                     &r), 0);
    assert_true(pt_region_batches(&r, &first, &next) > 0);
    assert_int_equal(next, 10);
    samsa_plog_region_release(&r);
    assert_int_equal(samsa_plog_read(plog, 10, 1 << 20, true, 10, &r), 0);
    assert_int_equal(r.len, 0);
    samsa_plog_region_release(&r);
}

static void
test_plog_pstate_transactions(void **state)
{
    char                *dir = bg_tmpdir();
    samsa_log_config_t   cfg = pt_config();
    samsa_plog_t        *plog;
    samsa_buf_t          b = SAMSA_BUF_INIT;
    samsa_pstate_entry_t *list;

    (void) state;
    assert_int_equal(samsa_plog_create(dir, "t", 0, tid(), &cfg, &plog), 0);
    txn_workload(plog);
    check_txn_state(plog);
    assert_int_equal(count_files(dir, ".txnindex"), 1);
    assert_int_equal(samsa_plog_producers(plog, &list), 3);
    assert_int_equal(list[2].txn_first_offset, 10);
    samsa_free(list);
    /* clients cannot write markers */
    tg_marker(&b, 3, 0, SAMSA_BATCH_CONTROL_COMMIT, 0, 1000);
    assert_int_equal(put(plog, &b, &client_opts, NULL),
                     SAMSA_ERR_INVALID_RECORD);
    assert_int_equal(samsa_plog_close(plog), 0);

    plog = reopen(dir, &cfg, true, 12);
    check_txn_state(plog);
    samsa_plog_unref(plog);
    /* crash with nothing trusted: the txnindex is rebuilt by the replay */
    plog = reopen(dir, &cfg, false, -1);
    check_txn_state(plog);
    samsa_plog_unref(plog);
    plog = reopen(dir, &cfg, false, 5);
    check_txn_state(plog);
    /* the open transaction ends */
    tg_marker(&b, 3, 0, SAMSA_BATCH_CONTROL_ABORT, 0, 1000);   /* 12 */
    assert_int_equal(put(plog, &b, &coord_opts, NULL), 0);
    assert_int_equal(samsa_plog_last_stable_offset(plog), 13);
    assert_int_equal(aborted(plog, 0, 13).n, 2);
    assert_int_equal(samsa_plog_close(plog), 0);
    samsa_buf_fini(&b);
    bg_rmrf(dir);
}

static void
test_plog_pstate_txnindex_across_segments(void **state)
{
    char                *dir = bg_tmpdir();
    samsa_log_config_t   cfg = pt_config();
    samsa_plog_t        *plog;
    samsa_buf_t          b = SAMSA_BUF_INIT;
    collected_t          c;
    int                  i;

    (void) state;
    cfg.segment_bytes = 600;
    assert_int_equal(samsa_plog_create(dir, "t", 0, tid(), &cfg, &plog), 0);
    tg_batch(&b, 1, 5, 0, 0, true, 1000);               /* 0 */
    assert_int_equal(put(plog, &b, &client_opts, NULL), 0);
    for (i = 0; i < 20; i++) {
        pt_append(plog, 1, 1000);                        /* 1-20 */
    }
    assert_true(samsa_plog_segment_count(plog) > 2);
    assert_int_equal(samsa_plog_last_stable_offset(plog), 0);
    tg_marker(&b, 5, 0, SAMSA_BATCH_CONTROL_ABORT, 0, 1000);    /* 21 */
    assert_int_equal(put(plog, &b, &coord_opts, NULL), 0);
    c = aborted(plog, 3, 22);
    assert_int_equal(c.n, 1);
    assert_int_equal(c.a[0].first_offset, 0);
    assert_int_equal(c.a[0].last_offset, 21);
    assert_int_equal(samsa_plog_close(plog), 0);
    plog = reopen(dir, &cfg, false, -1);
    assert_int_equal(aborted(plog, 3, 22).n, 1);
    assert_int_equal(samsa_plog_last_stable_offset(plog), 22);
    assert_int_equal(samsa_plog_close(plog), 0);
    samsa_buf_fini(&b);
    bg_rmrf(dir);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_plog_pstate_duplicates_survive_reopen),
        cmocka_unit_test(test_plog_pstate_corrupt_snapshot_falls_back),
        cmocka_unit_test(test_plog_pstate_snapshots_go_with_segments),
        cmocka_unit_test(test_plog_pstate_transactions),
        cmocka_unit_test(test_plog_pstate_txnindex_across_segments),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
