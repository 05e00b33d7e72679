/* Unit tests for log/recover.c: torn tails cut at every byte, corrupt
 * batches, rebuilt indexes, the clean-shutdown fast path, stray files. */
#include "unit.h"

#include <fcntl.h>

#include "log/batchgen.h"
#include "log/recover.h"
#include "util/diag.h"

#define REC_INDEX_BYTES 4096

/* Write a segment at base in dir with n batches of 2 records each;
 * *ends (may be NULL) gets each batch's end position. */
static int64_t
rec_make_segment(const char *dir, int64_t base, int n, uint32_t *ends)
{
    samsa_buf_t   b = SAMSA_BUF_INIT;
    samsa_seg_t  *seg;
    int64_t       next = base;
    int           i;

    assert_int_equal(samsa_seg_open(dir, base, SAMSA_SEG_F_CREATE
                                                   | SAMSA_SEG_F_ACTIVE,
                                    REC_INDEX_BYTES, 0, &seg),
                     SAMSA_ERR_NONE);
    for (i = 0; i < n; i++) {
        b.len = 0;
        bg_simple(&b, 2, 1000 + i);
        next = samsa_batch_assign(b.data, b.len, next, 0, -1);
        assert_int_equal(samsa_seg_append(seg, b.data, b.len, 64),
                         SAMSA_ERR_NONE);
        if (ends != NULL) {
            ends[i] = samsa_seg_end(seg).size;
        }
    }
    assert_int_equal(samsa_seg_seal(seg), SAMSA_ERR_NONE);
    samsa_seg_unref(seg);
    samsa_buf_fini(&b);
    return next;
}

static samsa_recover_args_t
rec_args(const char *dir, bool clean, int64_t rp)
{
    return (samsa_recover_args_t) {
        .dir = dir,
        .recovery_point = rp,
        .log_start_offset = -1,
        .clean = clean,
        .index_max_bytes = REC_INDEX_BYTES,
        .index_interval_bytes = 64,
    };
}

/* The recovered log holds exactly the whole batches and sane indexes. */
static void
rec_check(const samsa_recover_result_t *res, int64_t leo, uint32_t size)
{
    samsa_seg_t      *last = res->segs[res->nsegs - 1];
    samsa_seg_end_t   end = samsa_seg_end(last);

    assert_int_equal(res->log_end_offset, leo);
    assert_int_equal(end.next_offset, leo);
    assert_int_equal(end.size, size);
    assert_int_equal(bg_file_size(samsa_seg_log_path(last)), size);
    assert_true(samsa_seg_indexes_sane(last, end.next_offset, end.size,
                                       true));
}

/* Cut the last batch at every byte: recovery keeps exactly the whole
 * batches before it, with or without the old (stale) index files. */
static void
test_recover_torn_tail_every_byte(void **state)
{
    char                    *dir = bg_tmpdir(), log[512], idx[512];
    samsa_recover_args_t     args = rec_args(dir, false, -1);
    samsa_recover_result_t   res;
    uint32_t                 ends[6], cut;
    int                      pass;

    (void) state;
    rec_make_segment(dir, 0, 6, ends);
    samsa_seg_path(log, sizeof(log), dir, 0, ".log");
    samsa_seg_path(idx, sizeof(idx), dir, 0, ".index");
    for (pass = 0; pass < 2; pass++) {
        for (cut = ends[4]; cut < ends[5]; cut++) {
            if (pass == 1) {
                unlink(idx);
            }
            assert_int_equal(truncate(log, cut), 0);
            assert_int_equal(samsa_recover_partition(&args, &res),
                             SAMSA_ERR_NONE);
            rec_check(&res, 10, ends[4]);
            assert_int_equal(res.truncated_bytes, cut - ends[4]);
            samsa_recover_result_fini(&res);
            /* put the whole batch back for the next cut */
            samsa_seg_unlink_files(dir, 0, "");
            rec_make_segment(dir, 0, 6, NULL);
        }
    }
    bg_rmrf(dir);
}

/* A corrupt batch in an earlier segment cuts there and deletes every
 * later segment (Kafka's unflushed segments after a truncation). */
static void
test_recover_corrupt_middle_deletes_later(void **state)
{
    char                    *dir = bg_tmpdir(), log[512];
    samsa_recover_args_t     args = rec_args(dir, false, -1);
    samsa_recover_result_t   res;
    uint32_t                 ends[5];
    int64_t                  next;
    int                      fd;
    uint8_t                  junk = 0x5a;

    (void) state;
    next = rec_make_segment(dir, 0, 5, ends);
    next = rec_make_segment(dir, next, 5, NULL);
    rec_make_segment(dir, next, 5, NULL);
    samsa_seg_path(log, sizeof(log), dir, 0, ".log");
    fd = open(log, O_WRONLY);
    assert_int_equal(pwrite(fd, &junk, 1, ends[2] + 70), 1);    /* batch 3 */
    close(fd);
    assert_int_equal(samsa_recover_partition(&args, &res), SAMSA_ERR_NONE);
    assert_int_equal(res.nsegs, 1);
    assert_int_equal(res.segs_deleted, 2);
    rec_check(&res, 6, ends[2]);
    samsa_recover_result_fini(&res);
    samsa_seg_path(log, sizeof(log), dir, 10, ".log");
    assert_int_equal(bg_file_size(log), -1);
    bg_rmrf(dir);
}

/* With a recovery point in the last segment, earlier segments are not
 * scanned (a corrupt byte there goes unnoticed, as in Kafka). */
static void
test_recover_from_recovery_point(void **state)
{
    char                    *dir = bg_tmpdir(), log[512];
    samsa_recover_args_t     args;
    samsa_recover_result_t   res;
    int64_t                  next;
    int                      fd;
    uint8_t                  junk = 0x5a;

    (void) state;
    next = rec_make_segment(dir, 0, 5, NULL);
    next = rec_make_segment(dir, next, 5, NULL);
    rec_make_segment(dir, next, 5, NULL);
    samsa_seg_path(log, sizeof(log), dir, 0, ".log");
    fd = open(log, O_WRONLY);
    assert_int_equal(pwrite(fd, &junk, 1, 70), 1);     /* batch 0 */
    close(fd);
    args = rec_args(dir, false, 22);
    assert_int_equal(samsa_recover_partition(&args, &res), SAMSA_ERR_NONE);
    assert_int_equal(res.nsegs, 3);
    assert_int_equal(res.segs_scanned, 1);
    assert_int_equal(res.log_end_offset, 30);
    assert_int_equal(res.recovery_point, 30);
    assert_int_equal(res.log_start_offset, 0);
    samsa_recover_result_fini(&res);
    args = rec_args(dir, false, -1);            /* now scan all: cut */
    assert_int_equal(samsa_recover_partition(&args, &res), SAMSA_ERR_NONE);
    assert_int_equal(res.nsegs, 1);
    assert_int_equal(res.log_end_offset, 0);
    samsa_recover_result_fini(&res);
    bg_rmrf(dir);
}

/* Corrupt or misaligned indexes are rebuilt from the .log. */
static void
test_recover_rebuilds_corrupt_index(void **state)
{
    char                    *dir = bg_tmpdir(), idx[512], tidx[512];
    samsa_recover_args_t     args = rec_args(dir, true, -1);
    samsa_recover_result_t   res;
    uint32_t                 ends[30];
    int64_t                  next;
    FILE                    *fp;

    (void) state;
    next = rec_make_segment(dir, 0, 30, ends);
    rec_make_segment(dir, next, 3, NULL);
    samsa_seg_path(idx, sizeof(idx), dir, 0, ".index");
    samsa_seg_path(tidx, sizeof(tidx), dir, 0, ".timeindex");
    assert_true(bg_file_size(idx) >= 16);
    fp = fopen(idx, "r+b");                     /* last entry beyond */
    fseek(fp, -8, SEEK_END);
    fwrite("\x7f\xff\xff\xff\x7f\xff\xff\xff", 1, 8, fp);
    fclose(fp);
    assert_int_equal(truncate(tidx, bg_file_size(tidx) - 5), 0);
    assert_int_equal(samsa_recover_partition(&args, &res), SAMSA_ERR_NONE);
    assert_int_equal(res.indexes_rebuilt, 1);
    assert_true(samsa_seg_indexes_sane(res.segs[0], 60, ends[29], true));
    assert_int_equal(bg_file_size(idx) % 8, 0);
    assert_int_equal(bg_file_size(tidx) % 12, 0);
    assert_int_equal(res.log_end_offset, 66);
    samsa_recover_result_fini(&res);
    bg_rmrf(dir);
}

/* After a clean stop the segments are not scanned: a corrupt byte inside
 * a sealed segment stays (Kafka's behaviour), the end is found. */
static void
test_recover_clean_shutdown_skips_scan(void **state)
{
    char                    *dir = bg_tmpdir(), log[512];
    samsa_recover_args_t     args = rec_args(dir, true, 5);
    samsa_recover_result_t   res;
    uint32_t                 ends[5];
    int64_t                  next;
    int                      fd;
    uint8_t                  junk = 0x5a;

    (void) state;
    next = rec_make_segment(dir, 0, 5, NULL);
    rec_make_segment(dir, next, 5, ends);
    samsa_seg_path(log, sizeof(log), dir, 0, ".log");
    fd = open(log, O_WRONLY);
    assert_int_equal(pwrite(fd, &junk, 1, 100), 1);
    close(fd);
    assert_int_equal(samsa_recover_partition(&args, &res), SAMSA_ERR_NONE);
    assert_int_equal(res.segs_scanned, 0);
    assert_int_equal(res.truncated_bytes, 0);
    assert_int_equal(res.nsegs, 2);
    rec_check(&res, 20, ends[4]);
    samsa_recover_result_fini(&res);
    bg_rmrf(dir);
}

/* Leftovers: .deleted and .tmp files go, an orphan index goes, an empty
 * directory gets a first segment at the log start offset. */
static void
test_recover_stray_files_and_empty_dir(void **state)
{
    char                    *dir = bg_tmpdir(), path[512];
    samsa_recover_args_t     args = rec_args(dir, false, -1);
    samsa_recover_result_t   res;
    FILE                    *fp;

    (void) state;
    snprintf(path, sizeof(path), "%s/00000000000000000000.log.deleted", dir);
    fp = fopen(path, "w");
    fclose(fp);
    snprintf(path, sizeof(path), "%s/leader-epoch-checkpoint.tmp", dir);
    fp = fopen(path, "w");
    fclose(fp);
    snprintf(path, sizeof(path), "%s/00000000000000000042.index", dir);
    fp = fopen(path, "w");
    fclose(fp);
    args.log_start_offset = 77;
    assert_int_equal(samsa_recover_partition(&args, &res), SAMSA_ERR_NONE);
    assert_int_equal(res.nsegs, 1);
    assert_int_equal(samsa_seg_base(res.segs[0]), 77);
    assert_int_equal(res.log_end_offset, 77);
    assert_int_equal(res.log_start_offset, 77);
    assert_int_equal(bg_file_size(path), -1);
    snprintf(path, sizeof(path), "%s/leader-epoch-checkpoint.tmp", dir);
    assert_int_equal(bg_file_size(path), -1);
    samsa_recover_result_fini(&res);
    bg_rmrf(dir);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recover_torn_tail_every_byte),
        cmocka_unit_test(test_recover_corrupt_middle_deletes_later),
        cmocka_unit_test(test_recover_from_recovery_point),
        cmocka_unit_test(test_recover_rebuilds_corrupt_index),
        cmocka_unit_test(test_recover_clean_shutdown_skips_scan),
        cmocka_unit_test(test_recover_stray_files_and_empty_dir),
    };

    samsa_diag_set_level(SAMSA_DIAG_ERROR);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
