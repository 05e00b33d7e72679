/* Unit tests for log/plog_ends.c: reads for Fetch, ListOffsets,
 * DeleteRecords, retention by time and size, truncation. */
#include "unit.h"

#include <pthread.h>
#include <stdatomic.h>

#include "log/fdcache.h"
#include "log/plogtest.h"
#include "util/diag.h"
#include "util/time.h"

typedef struct pe_fixture {
    char                *dir;
    samsa_log_config_t   cfg;
    samsa_plog_t        *plog;
} pe_fixture_t;

static int
pe_setup(void **state)
{
    pe_fixture_t  *f = calloc(1, sizeof(*f));

    f->dir = bg_tmpdir();
    f->cfg = pt_config();
    assert_int_equal(samsa_plog_create(f->dir, "t", 0,
                                       (samsa_uuid_t) { { 1 } }, &f->cfg,
                                       &f->plog),
                     SAMSA_ERR_NONE);
    *state = f;
    return 0;
}

static int
pe_teardown(void **state)
{
    pe_fixture_t  *f = *state;

    assert_int_equal(samsa_plog_close(f->plog), SAMSA_ERR_NONE);
    bg_rmrf(f->dir);
    free(f);
    return 0;
}

static void
test_plog_read_ranges(void **state)
{
    pe_fixture_t         *f = *state;
    samsa_plog_region_t   r;
    int64_t               first, next, off;
    int                   i;

    for (i = 0; i < 100; i++) {
        pt_append(f->plog, 2, 1000 + i);    /* batch i: offsets 2i, 2i+1 */
    }
    assert_true(samsa_plog_segment_count(f->plog) > 2);
    assert_int_equal(samsa_plog_read(f->plog, 201, 100, true, INT64_MAX, &r),
                     SAMSA_ERR_OFFSET_OUT_OF_RANGE);
    assert_int_equal(samsa_plog_read(f->plog, -1, 100, true, INT64_MAX, &r),
                     SAMSA_ERR_OFFSET_OUT_OF_RANGE);
    assert_int_equal(samsa_plog_read(f->plog, 200, 100, true, INT64_MAX, &r),
                     SAMSA_ERR_NONE);
    assert_int_equal(r.len, 0);             /* at the LEO: empty */
    assert_null(r.seg);
    for (off = 0; off < 200; off++) {       /* every offset, whole batch */
        assert_int_equal(samsa_plog_read(f->plog, off, 1, true, INT64_MAX,
                                         &r),
                         SAMSA_ERR_NONE);
        assert_int_equal(pt_region_batches(&r, &first, &next), 1);
        assert_int_equal(first, off & ~1LL);
        assert_int_equal(r.first_offset, first);
        samsa_plog_region_release(&r);
    }
    /* max bytes: whole segment slices, cut without min-one-batch */
    assert_int_equal(samsa_plog_read(f->plog, 10, 1 << 20, false, INT64_MAX,
                                     &r),
                     SAMSA_ERR_NONE);
    assert_true(pt_region_batches(&r, &first, &next) > 2);
    assert_int_equal(first, 10);
    samsa_plog_region_release(&r);
    assert_int_equal(samsa_plog_read(f->plog, 10, 30, false, INT64_MAX, &r),
                     SAMSA_ERR_NONE);
    assert_int_equal(r.len, 0);             /* first batch cut: nothing,
                                               as Kafka answers Fetch v3+ */
    assert_null(r.seg);
    samsa_plog_region_release(&r);
    {                                       /* one whole batch and a cut */
        samsa_plog_region_t  one;
        assert_int_equal(samsa_plog_read(f->plog, 10, 1, true, INT64_MAX,
                                         &one), SAMSA_ERR_NONE);
        assert_int_equal(samsa_plog_read(f->plog, 10, (int32_t) one.len + 30,
                                         false, INT64_MAX, &r),
                         SAMSA_ERR_NONE);
        assert_int_equal(r.len, one.len + 30); /* a later batch may be cut */
        assert_int_equal(pt_region_batches(&r, &first, &next), 1);
        samsa_plog_region_release(&one);
        samsa_plog_region_release(&r);
    }
    /* max_offset (high watermark / LSO) bounds what is returned */
    assert_int_equal(samsa_plog_read(f->plog, 10, 1 << 20, false, 16, &r),
                     SAMSA_ERR_NONE);
    assert_int_equal(pt_region_batches(&r, &first, &next), 3);
    assert_int_equal(next, 16);
    samsa_plog_region_release(&r);
    assert_int_equal(samsa_plog_read(f->plog, 16, 1 << 20, false, 16, &r),
                     SAMSA_ERR_NONE);
    assert_int_equal(r.len, 0);
}

/* A batch larger than max bytes comes whole with min-one-batch. */
static void
test_plog_read_min_one_batch(void **state)
{
    pe_fixture_t         *f = *state;
    samsa_buf_t           b = SAMSA_BUF_INIT;
    samsa_plog_append_opts_t   opts = { .from_client = true };
    samsa_plog_append_result_t res;
    samsa_plog_region_t   r;
    bg_spec_t             s = { .nrec = 3, .vsize = 900 };
    int64_t               first, next;
    size_t                size;

    size = bg_batch(&b, &s);
    assert_int_equal(samsa_plog_append(f->plog, b.data, b.len, &opts, &res),
                     SAMSA_ERR_NONE);
    pt_append(f->plog, 1, 1000);
    assert_int_equal(samsa_plog_read(f->plog, 1, 100, true, INT64_MAX, &r),
                     SAMSA_ERR_NONE);
    assert_int_equal(r.len, size);
    assert_int_equal(pt_region_batches(&r, &first, &next), 1);
    assert_int_equal(next, 3);
    samsa_plog_region_release(&r);
    assert_int_equal(samsa_plog_read(f->plog, 1, 100, false, INT64_MAX, &r),
                     SAMSA_ERR_NONE);
    assert_int_equal(r.len, 0);         /* without it: nothing, not a cut */
    samsa_plog_region_release(&r);
    samsa_buf_fini(&b);
}

static void
test_plog_list_offsets(void **state)
{
    pe_fixture_t            *f = *state;
    samsa_plog_ts_offset_t   o;
    samsa_buf_t              b = SAMSA_BUF_INIT;
    samsa_plog_append_opts_t   opts = { .from_client = true,
                                        .leader_epoch = 4 };
    samsa_plog_append_result_t res;
    bg_spec_t                s = { .nrec = 4, .base_ts = 50000,
                                   .attrs = SAMSA_BATCH_CODEC_GZIP };
    int                      i;

    assert_int_equal(samsa_plog_offset_for_time(f->plog, 5000, &o),
                     SAMSA_ERR_NONE);
    assert_int_equal(o.offset, -1);         /* empty log */
    assert_int_equal(samsa_plog_offset_for_time(f->plog,
                                                SAMSA_PLOG_TS_MAX_TIMESTAMP,
                                                &o),
                     SAMSA_ERR_NONE);
    assert_int_equal(o.offset, -1);
    for (i = 0; i < 60; i++) {              /* ts 10000+100i .. +2 */
        pt_append(f->plog, 3, 10000 + i * 100);
    }
    bg_batch(&b, &s);                       /* offsets 180..183, gzip */
    assert_int_equal(samsa_plog_append(f->plog, b.data, b.len, &opts, &res),
                     SAMSA_ERR_NONE);
    pt_append(f->plog, 2, 20000);           /* 184, 185 */
    assert_int_equal(samsa_plog_offset_for_time(f->plog,
                                                SAMSA_PLOG_TS_EARLIEST, &o),
                     SAMSA_ERR_NONE);
    assert_int_equal(o.offset, 0);
    assert_int_equal(o.leader_epoch, 0);
    assert_int_equal(samsa_plog_offset_for_time(f->plog, SAMSA_PLOG_TS_LATEST,
                                                &o),
                     SAMSA_ERR_NONE);
    assert_int_equal(o.offset, 186);
    assert_int_equal(o.leader_epoch, 4);
    /* by time: inside an uncompressed batch, record by record */
    assert_int_equal(samsa_plog_offset_for_time(f->plog, 10501, &o),
                     SAMSA_ERR_NONE);
    assert_int_equal(o.offset, 16);         /* batch 5, record 1 */
    assert_int_equal(samsa_plog_offset_for_time(f->plog, 10503, &o),
                     SAMSA_ERR_NONE);
    assert_int_equal(o.offset, 18);         /* next batch's first */
    assert_int_equal(samsa_plog_offset_for_time(f->plog, 0, &o),
                     SAMSA_ERR_NONE);
    assert_int_equal(o.offset, 0);
    /* a batch whose records cannot be read (its codec bit is set but the
     * records are not compressed) answers with its first offset */
    assert_int_equal(samsa_plog_offset_for_time(f->plog, 50002, &o),
                     SAMSA_ERR_NONE);
    assert_int_equal(o.offset, 180);
    assert_int_equal(o.leader_epoch, 4);
    assert_int_equal(samsa_plog_offset_for_time(f->plog, 60000, &o),
                     SAMSA_ERR_NONE);
    assert_int_equal(o.offset, -1);
    /* KIP-734 max timestamp: that batch (its last offset) */
    assert_int_equal(samsa_plog_offset_for_time(f->plog,
                                                SAMSA_PLOG_TS_MAX_TIMESTAMP,
                                                &o),
                     SAMSA_ERR_NONE);
    assert_int_equal(o.timestamp, 50003);
    assert_int_equal(o.offset, 183);
    samsa_buf_fini(&b);
}

static void
test_plog_delete_records(void **state)
{
    pe_fixture_t         *f = *state;
    samsa_plog_region_t   r;
    int64_t               low;
    size_t                nsegs;
    int                   i;

    for (i = 0; i < 100; i++) {
        pt_append(f->plog, 2, 1000 + i);
    }
    nsegs = samsa_plog_segment_count(f->plog);
    assert_int_equal(samsa_plog_delete_records(f->plog, 201, &low),
                     SAMSA_ERR_OFFSET_OUT_OF_RANGE);
    assert_int_equal(samsa_plog_delete_records(f->plog, 151, &low),
                     SAMSA_ERR_NONE);
    assert_int_equal(low, 151);
    assert_int_equal(samsa_plog_log_start_offset(f->plog), 151);
    assert_true(samsa_plog_segment_count(f->plog) < nsegs);
    assert_int_equal(samsa_plog_read(f->plog, 150, 100, true, INT64_MAX, &r),
                     SAMSA_ERR_OFFSET_OUT_OF_RANGE);
    assert_int_equal(samsa_plog_read(f->plog, 151, 100, true, INT64_MAX, &r),
                     SAMSA_ERR_NONE);
    assert_int_equal(r.first_offset, 150);  /* the batch holding 151 */
    samsa_plog_region_release(&r);
    assert_int_equal(samsa_plog_delete_records(f->plog, 10, &low),
                     SAMSA_ERR_NONE);       /* never backwards */
    assert_int_equal(low, 151);
    assert_int_equal(samsa_plog_delete_records(f->plog, -1, &low),
                     SAMSA_ERR_NONE);       /* up to the high watermark */
    assert_int_equal(low, 200);
    assert_int_equal(samsa_plog_segment_count(f->plog), 1);
    assert_int_equal(samsa_plog_size_bytes(f->plog), 0);
    assert_int_equal(pt_append(f->plog, 1, 5000), 200);
}

static void
test_plog_retention_by_time_and_size(void **state)
{
    pe_fixture_t        *f = *state;
    int64_t              now = samsa_wall_ms(), size;
    size_t               nsegs;
    int                  i, deleted;
    char                 path[600];

    for (i = 0; i < 120; i++) {             /* old records ... */
        pt_append(f->plog, 2, now - 100000 + i);
    }
    pt_append(f->plog, 2, now);             /* ... and a new one */
    nsegs = samsa_plog_segment_count(f->plog);
    assert_true(nsegs > 2);
    f->cfg.retention_ms = 50000;
    samsa_plog_config_set(f->plog, &f->cfg);
    assert_int_equal(samsa_plog_retain(f->plog, now, &deleted),
                     SAMSA_ERR_NONE);
    assert_int_equal((size_t) deleted, nsegs - 1);  /* not the active */
    assert_int_equal(samsa_plog_segment_count(f->plog), 1);
    assert_true(samsa_plog_log_start_offset(f->plog) > 0);
    /* the files wait file.delete.delay.ms (0 here) as .deleted */
    snprintf(path, sizeof(path), "%s/t-0/00000000000000000000.log.deleted",
             f->dir);
    assert_int_equal(bg_file_size(path), -1);   /* purged by retain */
    /* the active segment itself expires: rolled, then deleted */
    assert_int_equal(samsa_plog_retain(f->plog, now + 60000, &deleted),
                     SAMSA_ERR_NONE);
    assert_int_equal(deleted, 1);
    assert_int_equal(samsa_plog_log_start_offset(f->plog), 242);
    assert_int_equal(samsa_plog_log_end_offset(f->plog), 242);
    /* retention.bytes: keep the newest segments under the limit */
    f->cfg.retention_ms = -1;
    f->cfg.retention_bytes = 5000;
    samsa_plog_config_set(f->plog, &f->cfg);
    for (i = 0; i < 100; i++) {
        pt_append(f->plog, 2, now);
    }
    assert_int_equal(samsa_plog_retain(f->plog, now, &deleted),
                     SAMSA_ERR_NONE);
    assert_true(deleted > 0);
    size = samsa_plog_size_bytes(f->plog);     /* Kafka keeps at least */
    assert_true(size >= 5000);                 /* retention.bytes, less */
    assert_true(size < 5000 + 4096);           /* than a segment more */
    assert_int_equal(samsa_plog_log_end_offset(f->plog), 442);
}

static void
test_plog_truncate(void **state)
{
    pe_fixture_t         *f = *state;
    samsa_plog_region_t   r;
    int64_t               first, next;
    int                   i;

    for (i = 0; i < 100; i++) {
        pt_append(f->plog, 2, 1000 + i);
    }
    assert_int_equal(samsa_plog_flush(f->plog, SAMSA_PLOG_FLUSH_FULL, NULL),
                     SAMSA_ERR_NONE);
    assert_int_equal(samsa_plog_truncate_to(f->plog, 51), SAMSA_ERR_NONE);
    assert_int_equal(samsa_plog_log_end_offset(f->plog), 50);   /* batch */
    assert_int_equal(samsa_plog_high_watermark(f->plog), 50);
    assert_int_equal(samsa_plog_recovery_point(f->plog), 50);
    assert_int_equal(samsa_plog_read(f->plog, 50, 100, true, INT64_MAX, &r),
                     SAMSA_ERR_NONE);
    assert_int_equal(r.len, 0);
    assert_int_equal(pt_append(f->plog, 2, 5000), 50);
    assert_int_equal(samsa_plog_read(f->plog, 40, 1 << 20, true, INT64_MAX,
                                     &r),
                     SAMSA_ERR_NONE);
    pt_region_batches(&r, &first, &next);
    samsa_plog_region_release(&r);
    assert_int_equal(first, 40);
    assert_true(next <= 52);
    assert_int_equal(samsa_plog_truncate_to(f->plog, 0), SAMSA_ERR_NONE);
    assert_int_equal(samsa_plog_log_end_offset(f->plog), 0);
    assert_int_equal(samsa_plog_segment_count(f->plog), 1);
    assert_int_equal(pt_append(f->plog, 1, 5000), 0);
}

static void
test_plog_epoch_end_offsets(void **state)
{
    pe_fixture_t               *f = *state;
    samsa_buf_t                 b = SAMSA_BUF_INIT;
    samsa_plog_append_opts_t    opts = { .from_client = true };
    samsa_plog_append_result_t  res;
    int32_t                     epoch;
    int64_t                     end;
    int                         e;

    for (e = 1; e <= 3; e++) {
        b.len = 0;
        bg_simple(&b, 5, 1000);
        opts.leader_epoch = e * 2;          /* epochs 2, 4, 6 */
        assert_int_equal(samsa_plog_append(f->plog, b.data, b.len, &opts,
                                           &res),
                         SAMSA_ERR_NONE);
    }
    samsa_plog_end_offset_for_epoch(f->plog, 3, 6, &epoch, &end);
    assert_int_equal(epoch, 2);
    assert_int_equal(end, 5);
    samsa_plog_end_offset_for_epoch(f->plog, 6, 6, &epoch, &end);
    assert_int_equal(epoch, 6);
    assert_int_equal(end, 15);
    /* older than any: Kafka answers it with the first epoch's start */
    samsa_plog_end_offset_for_epoch(f->plog, 1, 6, &epoch, &end);
    assert_int_equal(epoch, 1);
    assert_int_equal(end, 0);
    samsa_plog_end_offset_for_epoch(f->plog, 7, 6, &epoch, &end);
    assert_int_equal(epoch, -1);
    assert_int_equal(end, -1);
    /* the leader moved to epoch 8 and wrote nothing yet */
    samsa_plog_end_offset_for_epoch(f->plog, 8, 8, &epoch, &end);
    assert_int_equal(epoch, 8);
    assert_int_equal(end, 15);
    samsa_buf_fini(&b);
}

/* DeleteRecords racing readers under a descriptor budget of 4: the log
 * start moves and segments are dropped (renamed, freed once the last
 * reader lets go) while other threads read regions from the log start and
 * list offsets, every segment touched evicting another.  A segment freed
 * while still in the cache's LRU or pinned is a sanitizer report. */
typedef struct pe_race {
    samsa_plog_t   *plog;
    _Atomic bool    stop;
    _Atomic long    reads;
    _Atomic long    errors;
} pe_race_t;

static void *
pe_race_reader(void *arg)
{
    pe_race_t              *r = arg;
    samsa_plog_region_t     reg;
    samsa_plog_ts_offset_t  to;
    static const int64_t    ts[] = { SAMSA_PLOG_TS_EARLIEST,
                                     SAMSA_PLOG_TS_LATEST,
                                     SAMSA_PLOG_TS_MAX_TIMESTAMP, 0, 1500 };
    int64_t                 off;
    size_t                  i;
    samsa_err_t             err;

    while (!atomic_load(&r->stop)) {
        off = samsa_plog_log_start_offset(r->plog);
        if (samsa_plog_read(r->plog, off, 1 << 20, true, INT64_MAX, &reg)
            == SAMSA_ERR_NONE) {
            samsa_plog_region_release(&reg);
        }
        for (i = 0; i < sizeof(ts) / sizeof(ts[0]); i++) {
            err = samsa_plog_offset_for_time(r->plog, ts[i], &to);
            if (err != SAMSA_ERR_NONE && err != SAMSA_ERR__NOFILE) {
                atomic_fetch_add(&r->errors, 1);    /* checked by main */
            }
        }
        atomic_fetch_add(&r->reads, 1);
    }
    return NULL;
}

static void
test_plog_delete_records_races_readers(void **state)
{
    pe_fixture_t  *f = *state;
    pe_race_t      r = { .plog = f->plog };
    pthread_t      th[3];
    int64_t        low, deadline = samsa_now_ms() + 3000;
    size_t         i;
    int            n = 0;

    /* deleted files stay (Kafka's file.delete.delay.ms) while a reader
     * that took the old segment list may still reopen them */
    f->cfg.file_delete_delay_ms = 60000;
    samsa_plog_config_set(f->plog, &f->cfg);
    samsa_fdcache_set_budget(samsa_fdcache_global(), 4);
    for (i = 0; i < 3; i++) {
        assert_int_equal(pthread_create(&th[i], NULL, pe_race_reader, &r), 0);
    }
    while (samsa_now_ms() < deadline) {
        pt_append(f->plog, 3, 1000 + n);
        n++;
        assert_int_equal(samsa_plog_delete_records(
                             f->plog, (n % 2) ? -1 : 3 * n - 2, &low),
                         SAMSA_ERR_NONE);
    }
    atomic_store(&r.stop, true);
    for (i = 0; i < 3; i++) {
        pthread_join(th[i], NULL);
    }
    samsa_fdcache_set_budget(samsa_fdcache_global(), 0);
    assert_true(n > 20);
    assert_true(atomic_load(&r.reads) > 20);
    assert_int_equal(atomic_load(&r.errors), 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_plog_read_ranges, pe_setup,
                                        pe_teardown),
        cmocka_unit_test_setup_teardown(test_plog_read_min_one_batch,
                                        pe_setup, pe_teardown),
        cmocka_unit_test_setup_teardown(test_plog_list_offsets, pe_setup,
                                        pe_teardown),
        cmocka_unit_test_setup_teardown(test_plog_delete_records, pe_setup,
                                        pe_teardown),
        cmocka_unit_test_setup_teardown(test_plog_retention_by_time_and_size,
                                        pe_setup, pe_teardown),
        cmocka_unit_test_setup_teardown(test_plog_truncate, pe_setup,
                                        pe_teardown),
        cmocka_unit_test_setup_teardown(test_plog_epoch_end_offsets,
                                        pe_setup, pe_teardown),
        cmocka_unit_test_setup_teardown(
            test_plog_delete_records_races_readers, pe_setup, pe_teardown),
    };

    samsa_diag_set_level(SAMSA_DIAG_ERROR);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
