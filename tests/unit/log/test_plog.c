/* Unit tests for log/plog.c: creating, appending, rolling, flushing,
 * closing, reopening and deleting a partition log, and concurrent reads
 * during appends. */
#include "unit.h"

#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>

#include "log/plogtest.h"
#include "util/diag.h"
#include "util/time.h"

static samsa_uuid_t
pt_uuid(void)
{
    samsa_uuid_t  u;
    int           i;

    for (i = 0; i < 16; i++) {
        u.b[i] = (uint8_t) (i * 17 + 1);
    }
    return u;
}

static char *
pt_slurp(const char *path)
{
    static char  buf[4096];
    FILE        *fp = fopen(path, "r");
    size_t       n;

    assert_non_null(fp);
    n = fread(buf, 1, sizeof(buf) - 1, fp);
    fclose(fp);
    buf[n] = '\0';
    return buf;
}

static void
test_plog_create_layout(void **state)
{
    char                *dir = bg_tmpdir(), path[600];
    samsa_log_config_t   cfg = pt_config();
    samsa_plog_t        *plog, *again;

    (void) state;
    assert_int_equal(samsa_plog_create(dir, "orders", 3, pt_uuid(), &cfg,
                                       &plog),
                     SAMSA_ERR_NONE);
    snprintf(path, sizeof(path), "%s/orders-3", dir);
    assert_string_equal(samsa_plog_dir(plog), path);
    snprintf(path, sizeof(path), "%s/orders-3/partition.metadata", dir);
    assert_string_equal(pt_slurp(path),
                        "version: 0\ntopic_id: ARIjNEVWZ3iJmqu8zd7vAA\n");
    snprintf(path, sizeof(path), "%s/orders-3/00000000000000000000.log", dir);
    assert_int_equal(bg_file_size(path), 0);
    snprintf(path, sizeof(path), "%s/orders-3/00000000000000000000.index",
             dir);
    assert_int_equal(bg_file_size(path), 1024);         /* preallocated */
    snprintf(path, sizeof(path),
             "%s/orders-3/00000000000000000000.timeindex", dir);
    assert_int_equal(bg_file_size(path), 1020);         /* 85 entries */
    assert_int_equal(samsa_plog_log_end_offset(plog), 0);
    assert_int_equal(samsa_plog_high_watermark(plog), 0);
    assert_int_equal(samsa_plog_log_start_offset(plog), 0);
    assert_int_equal(samsa_plog_create(dir, "orders", 3, pt_uuid(), &cfg,
                                       &again),
                     SAMSA_ERR__EXISTS);
    assert_int_equal(samsa_plog_close(plog), SAMSA_ERR_NONE);
    bg_rmrf(dir);
}

static void
test_plog_append_offsets_and_epochs(void **state)
{
    char                        *dir = bg_tmpdir(), path[600];
    samsa_log_config_t           cfg = pt_config();
    samsa_plog_t                *plog;
    samsa_buf_t                  b = SAMSA_BUF_INIT;
    samsa_plog_append_opts_t     opts = { .leader_epoch = 3,
                                          .from_client = true };
    samsa_plog_append_result_t   res;
    samsa_plog_stats_t           st;

    (void) state;
    assert_int_equal(samsa_plog_create(dir, "t", 0, pt_uuid(), &cfg, &plog),
                     SAMSA_ERR_NONE);
    assert_int_equal(pt_append(plog, 5, 1000), 0);      /* epoch 0 */
    assert_int_equal(pt_append(plog, 1, 1000), 5);
    bg_simple(&b, 4, 1000);
    bg_simple(&b, 2, 1000);
    assert_int_equal(samsa_plog_append(plog, b.data, b.len, &opts, &res),
                     SAMSA_ERR_NONE);
    assert_int_equal(res.base_offset, 6);
    assert_int_equal(res.last_offset, 11);
    assert_int_equal(res.log_append_time_ms, -1);
    assert_int_equal(res.log_start_offset, 0);
    assert_int_equal(res.durable_wanted, -1);
    assert_int_equal(res.summary.nbatches, 2);
    assert_int_equal(samsa_plog_log_end_offset(plog), 12);
    assert_int_equal(samsa_plog_high_watermark(plog), 12);
    snprintf(path, sizeof(path), "%s/t-0/leader-epoch-checkpoint", dir);
    assert_string_equal(pt_slurp(path), "0\n2\n0 0\n3 6\n");
    /* bad data is refused and takes no offset */
    samsa_store_be64(b.data, 0);
    b.data[b.len - 1] ^= 1;
    assert_int_equal(samsa_plog_append(plog, b.data, b.len, &opts, &res),
                     SAMSA_ERR_CORRUPT_MESSAGE);
    assert_int_equal(res.summary.err_batch, 1);
    assert_int_equal(samsa_plog_log_end_offset(plog), 12);
    samsa_buf_fini(&b);
    samsa_plog_stats(plog, &st);
    assert_int_equal(st.appends, 3);
    assert_int_equal(samsa_plog_close(plog), SAMSA_ERR_NONE);
    bg_rmrf(dir);
}

static void
test_plog_rolls_and_too_large(void **state)
{
    char                        *dir = bg_tmpdir(), path[600];
    samsa_log_config_t           cfg = pt_config();
    samsa_plog_t                *plog;
    samsa_buf_t                  b = SAMSA_BUF_INIT;
    samsa_plog_append_opts_t     opts = { .from_client = true };
    samsa_plog_append_result_t   res;
    samsa_plog_stats_t           st;
    bg_spec_t                    big = { .nrec = 1, .vsize = 5000 };
    int                          i;

    (void) state;
    assert_int_equal(samsa_plog_create(dir, "t", 0, pt_uuid(), &cfg, &plog),
                     SAMSA_ERR_NONE);
    for (i = 0; i < 200; i++) {
        pt_append(plog, 3, 1000 + i);
    }
    samsa_plog_stats(plog, &st);
    assert_true(st.rolls >= 5);
    assert_int_equal(samsa_plog_segment_count(plog), st.rolls + 1);
    assert_true(samsa_plog_size_bytes(plog) > 4 * 4096);
    snprintf(path, sizeof(path), "%s/t-0/00000000000000000000.index", dir);
    assert_true(bg_file_size(path) < 1024);             /* trimmed */
    /* a blob larger than segment.bytes, a batch over max.message.bytes */
    bg_batch(&b, &big);
    assert_int_equal(samsa_plog_append(plog, b.data, b.len, &opts, &res),
                     SAMSA_ERR_RECORD_LIST_TOO_LARGE);
    cfg.max_message_bytes = 1000;
    samsa_plog_config_set(plog, &cfg);
    assert_int_equal(samsa_plog_append(plog, b.data, b.len, &opts, &res),
                     SAMSA_ERR_MESSAGE_TOO_LARGE);
    samsa_buf_fini(&b);
    assert_int_equal(samsa_plog_log_end_offset(plog), 600);
    assert_int_equal(samsa_plog_close(plog), SAMSA_ERR_NONE);
    bg_rmrf(dir);
}

static void
test_plog_log_append_time(void **state)
{
    char                 *dir = bg_tmpdir();
    samsa_log_config_t    cfg = pt_config();
    samsa_plog_t         *plog;
    samsa_plog_region_t   r;
    samsa_batch_hdr_t     hdr;
    uint8_t              *p;
    int64_t               t0 = samsa_wall_ms();

    (void) state;
    cfg.log_append_time = true;
    assert_int_equal(samsa_plog_create(dir, "t", 0, pt_uuid(), &cfg, &plog),
                     SAMSA_ERR_NONE);
    pt_append(plog, 3, 5);
    assert_int_equal(samsa_plog_read(plog, 0, 1 << 20, true, INT64_MAX, &r),
                     SAMSA_ERR_NONE);
    p = pt_region_bytes(&r);
    assert_int_equal(samsa_batch_parse(p, r.len, &hdr), SAMSA_ERR_NONE);
    assert_true(samsa_batch_is_log_append_time(&hdr));
    assert_true(hdr.MaxTimestamp >= t0);
    assert_int_equal(hdr.BaseTimestamp, 5);
    assert_int_equal(hdr.PartitionLeaderEpoch, 0);
    assert_true(samsa_batch_crc_ok(p, r.len));
    free(p);
    samsa_plog_region_release(&r);
    assert_int_equal(samsa_plog_close(plog), SAMSA_ERR_NONE);
    bg_rmrf(dir);
}

/* Clean close then open; then a "crash" (no close) then open. */
static void
test_plog_reopen_clean_and_unclean(void **state)
{
    char                 *dir = bg_tmpdir();
    samsa_log_config_t    cfg = pt_config();
    samsa_plog_t         *plog;
    samsa_plog_load_t     load = { .recovery_point = -1,
                                   .log_start_offset = -1 };
    samsa_plog_region_t   r;
    int64_t               first, next;
    int                   i;

    (void) state;
    assert_int_equal(samsa_plog_create(dir, "t", 7, pt_uuid(), &cfg, &plog),
                     SAMSA_ERR_NONE);
    for (i = 0; i < 40; i++) {
        pt_append(plog, 2, 1000 + i);
    }
    assert_int_equal(samsa_plog_close(plog), SAMSA_ERR_NONE);
    load.clean = true;
    assert_int_equal(samsa_plog_open(dir, "t", 7, &cfg, &load, &plog),
                     SAMSA_ERR_NONE);
    assert_int_equal(samsa_plog_log_end_offset(plog), 80);
    assert_true(samsa_uuid_eq(samsa_plog_topic_id(plog), pt_uuid()));
    assert_int_equal(pt_append(plog, 2, 2000), 80);
    samsa_plog_unref(plog);                 /* crash: no close */
    load.clean = false;
    assert_int_equal(samsa_plog_open(dir, "t", 7, &cfg, &load, &plog),
                     SAMSA_ERR_NONE);
    assert_int_equal(samsa_plog_log_end_offset(plog), 82);
    assert_int_equal(samsa_plog_recovery_point(plog), 82);
    assert_int_equal(samsa_plog_read(plog, 0, 1 << 20, true, INT64_MAX, &r),
                     SAMSA_ERR_NONE);
    assert_true(pt_region_batches(&r, &first, &next) > 0);
    assert_int_equal(first, 0);
    samsa_plog_region_release(&r);
    assert_int_equal(pt_append(plog, 1, 3000), 82);
    assert_int_equal(samsa_plog_close(plog), SAMSA_ERR_NONE);
    bg_rmrf(dir);
}

static samsa_err_t
pt_hook_dup(void *ctx, samsa_plog_t *plog, const uint8_t *records, size_t len,
            int64_t next_offset, samsa_plog_append_result_t *res)
{
    int  *mode = ctx;

    (void) plog;
    (void) records;
    (void) len;
    if (*mode == 1) {
        res->duplicate = true;
        res->base_offset = 0;
        res->last_offset = 1;
        return SAMSA_ERR_NONE;
    }
    return *mode == 2 ? SAMSA_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER
                      : (next_offset >= 0 ? SAMSA_ERR_NONE : SAMSA_ERR__STATE);
}

static void
test_plog_append_hook(void **state)
{
    char                        *dir = bg_tmpdir();
    samsa_log_config_t           cfg = pt_config();
    samsa_plog_t                *plog;
    samsa_buf_t                  b = SAMSA_BUF_INIT;
    int                          mode = 0;
    samsa_plog_append_opts_t     opts = { .from_client = true,
                                          .hook = pt_hook_dup,
                                          .hook_ctx = &mode };
    samsa_plog_append_result_t   res;

    (void) state;
    assert_int_equal(samsa_plog_create(dir, "t", 0, pt_uuid(), &cfg, &plog),
                     SAMSA_ERR_NONE);
    bg_simple(&b, 2, 1000);
    assert_int_equal(samsa_plog_append(plog, b.data, b.len, &opts, &res),
                     SAMSA_ERR_NONE);
    assert_int_equal(res.base_offset, 0);
    mode = 1;
    samsa_store_be64(b.data, 0);            /* producers send base 0 */
    assert_int_equal(samsa_plog_append(plog, b.data, b.len, &opts, &res),
                     SAMSA_ERR_NONE);
    assert_true(res.duplicate);
    assert_int_equal(res.base_offset, 0);
    assert_int_equal(samsa_plog_log_end_offset(plog), 2);
    mode = 2;
    assert_int_equal(samsa_plog_append(plog, b.data, b.len, &opts, &res),
                     SAMSA_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    assert_int_equal(samsa_plog_log_end_offset(plog), 2);
    samsa_buf_fini(&b);
    assert_int_equal(samsa_plog_close(plog), SAMSA_ERR_NONE);
    bg_rmrf(dir);
}

static void
test_plog_flush_policy(void **state)
{
    char                        *dir = bg_tmpdir();
    samsa_log_config_t           cfg = pt_config();
    samsa_plog_t                *plog;
    samsa_buf_t                  b = SAMSA_BUF_INIT;
    samsa_plog_append_opts_t     opts = { .from_client = true };
    samsa_plog_append_result_t   res;
    int64_t                      flushed;
    int                          i, wants = 0;

    (void) state;
    cfg.flush_messages = 1;                 /* group commit */
    assert_int_equal(samsa_plog_create(dir, "t", 0, pt_uuid(), &cfg, &plog),
                     SAMSA_ERR_NONE);
    bg_simple(&b, 2, 1000);
    assert_int_equal(samsa_plog_append(plog, b.data, b.len, &opts, &res),
                     SAMSA_ERR_NONE);
    assert_int_equal(res.durable_wanted, 2);
    assert_int_equal(samsa_plog_durable_offset(plog), 0);
    assert_int_equal(samsa_plog_flush(plog, SAMSA_PLOG_FLUSH_DATA, &flushed),
                     SAMSA_ERR_NONE);
    assert_int_equal(flushed, 2);
    assert_int_equal(samsa_plog_recovery_point(plog), 0);   /* data only */
    assert_int_equal(samsa_plog_flush(plog, SAMSA_PLOG_FLUSH_FULL, &flushed),
                     SAMSA_ERR_NONE);
    assert_int_equal(samsa_plog_recovery_point(plog), 2);
    cfg.flush_messages = 3;                 /* every third record */
    samsa_plog_config_set(plog, &cfg);
    for (i = 0; i < 9; i++) {
        b.len = 0;
        bg_simple(&b, 1, 1000);
        assert_int_equal(samsa_plog_append(plog, b.data, b.len, &opts, &res),
                         SAMSA_ERR_NONE);
        wants += res.durable_wanted >= 0;
    }
    assert_int_equal(wants, 3);
    assert_false(samsa_plog_flush_due(plog, samsa_now_ms()));   /* flush.ms */
    cfg.flush_ms = 0;
    samsa_plog_config_set(plog, &cfg);
    assert_true(samsa_plog_flush_due(plog, samsa_now_ms()));
    samsa_buf_fini(&b);
    assert_int_equal(samsa_plog_close(plog), SAMSA_ERR_NONE);
    bg_rmrf(dir);
}

static void
test_plog_delete_keeps_regions_readable(void **state)
{
    char                 *dir = bg_tmpdir(), renamed[4096];
    samsa_log_config_t    cfg = pt_config();
    samsa_plog_t         *plog;
    samsa_plog_region_t   r;
    int64_t               first, next;
    DIR                  *d;
    struct dirent        *de;
    int                   found = 0;

    (void) state;
    assert_int_equal(samsa_plog_create(dir, "gone", 1, pt_uuid(), &cfg,
                                       &plog),
                     SAMSA_ERR_NONE);
    pt_append(plog, 4, 1000);
    assert_int_equal(samsa_plog_read(plog, 0, 1 << 20, true, INT64_MAX, &r),
                     SAMSA_ERR_NONE);
    assert_int_equal(samsa_plog_delete(plog, renamed, sizeof(renamed)),
                     SAMSA_ERR_NONE);
    d = opendir(dir);
    while ((de = readdir(d)) != NULL) {
        if (strncmp(de->d_name, "gone-1.", 7) == 0) {
            assert_int_equal(strlen(de->d_name), 7 + 32 + 7);
            assert_string_equal(de->d_name + 39, "-delete");
            found++;
        }
    }
    closedir(d);
    assert_int_equal(found, 1);
    assert_int_equal(samsa_plog_remove_dir(renamed), SAMSA_ERR_NONE);
    assert_int_equal(pt_region_batches(&r, &first, &next), 1);  /* still */
    assert_int_equal(next, 4);
    samsa_plog_region_release(&r);
    assert_int_equal(pt_append_err(plog), SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION);
    samsa_plog_unref(plog);
    bg_rmrf(dir);
}

/* ---- concurrency: appends never wait for reads, reads see whole data -- */

typedef struct pt_conc {
    samsa_plog_t    *plog;
    _Atomic bool     done;
    _Atomic int64_t  reads;
} pt_conc_t;

static void *
pt_reader(void *arg)
{
    pt_conc_t            *c = arg;
    samsa_plog_region_t   r;
    int64_t               hwm, off, first, next, n = 0;
    unsigned              seed = 7;

    while (!atomic_load(&c->done)) {
        hwm = samsa_plog_high_watermark(c->plog);
        if (hwm == 0) {
            continue;
        }
        off = rand_r(&seed) % hwm;
        assert_int_equal(samsa_plog_read(c->plog, off, 2000, true, hwm, &r),
                         SAMSA_ERR_NONE);
        assert_true(r.len > 0);
        assert_true(pt_region_batches(&r, &first, &next) >= 1);
        assert_true(first <= off && next > off && next <= hwm);
        samsa_plog_region_release(&r);
        n++;
    }
    atomic_store(&c->reads, n);
    return NULL;
}

static void *
pt_flusher(void *arg)
{
    pt_conc_t  *c = arg;

    while (!atomic_load(&c->done)) {
        assert_int_equal(samsa_plog_flush(c->plog, SAMSA_PLOG_FLUSH_DATA,
                                          NULL),
                         SAMSA_ERR_NONE);
    }
    return NULL;
}

static void
test_plog_concurrent_reads_and_appends(void **state)
{
    char                *dir = bg_tmpdir();
    samsa_log_config_t   cfg = pt_config();
    pt_conc_t            c = { 0 };
    pthread_t            rd[3], fl;
    int                  i;

    (void) state;
    cfg.segment_bytes = 16384;
    assert_int_equal(samsa_plog_create(dir, "t", 0, pt_uuid(), &cfg, &c.plog),
                     SAMSA_ERR_NONE);
    for (i = 0; i < 3; i++) {
        pthread_create(&rd[i], NULL, pt_reader, &c);
    }
    pthread_create(&fl, NULL, pt_flusher, &c);
    for (i = 0; i < 1500; i++) {
        pt_append(c.plog, 1 + i % 5, 1000 + i);
    }
    atomic_store(&c.done, true);
    for (i = 0; i < 3; i++) {
        pthread_join(rd[i], NULL);
    }
    pthread_join(fl, NULL);
    assert_true(samsa_plog_segment_count(c.plog) > 5);
    assert_int_equal(samsa_plog_close(c.plog), SAMSA_ERR_NONE);
    bg_rmrf(dir);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plog_create_layout),
        cmocka_unit_test(test_plog_append_offsets_and_epochs),
        cmocka_unit_test(test_plog_rolls_and_too_large),
        cmocka_unit_test(test_plog_log_append_time),
        cmocka_unit_test(test_plog_reopen_clean_and_unclean),
        cmocka_unit_test(test_plog_append_hook),
        cmocka_unit_test(test_plog_flush_policy),
        cmocka_unit_test(test_plog_delete_keeps_regions_readable),
        cmocka_unit_test(test_plog_concurrent_reads_and_appends),
    };

    samsa_diag_set_level(SAMSA_DIAG_ERROR);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
