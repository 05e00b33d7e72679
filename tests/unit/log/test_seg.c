/* Unit tests for log/seg.c: segments, their index cadence, lookups by
 * offset and time, seal/trim, reopen and scan, truncation, deletion. */
#include "unit.h"

#include "log/batchgen.h"
#include "log/seg.h"

#define SEG_INDEX_BYTES (64 * 12)

/* Append n batches of recs records each (ts from ts0, +10 per batch) to
 * seg at next offset *next. */
static void
seg_fill(samsa_seg_t *seg, int64_t *next, int n, int recs, int64_t ts0,
         int32_t interval)
{
    samsa_buf_t  b = SAMSA_BUF_INIT;
    int          i;

    for (i = 0; i < n; i++) {
        b.len = 0;
        bg_simple(&b, recs, ts0 + i * 10);
        *next = samsa_batch_assign(b.data, b.len, *next, 0, -1);
        assert_int_equal(samsa_seg_append(seg, b.data, b.len, interval),
                         SAMSA_ERR_NONE);
    }
    samsa_buf_fini(&b);
}

static void
test_seg_append_and_find(void **state)
{
    char             *dir = bg_tmpdir(), path[512];
    samsa_seg_t      *seg;
    samsa_seg_end_t   end;
    samsa_seg_pos_t   pos;
    int64_t           next = 100, mo;
    int64_t           off;

    (void) state;
    assert_int_equal(samsa_seg_open(dir, 100, SAMSA_SEG_F_CREATE
                                                  | SAMSA_SEG_F_ACTIVE,
                                    SEG_INDEX_BYTES, 0, &seg),
                     SAMSA_ERR_NONE);
    samsa_seg_path(path, sizeof(path), dir, 100, ".log");
    assert_string_equal(samsa_seg_log_path(seg), path);
    assert_int_equal(strlen(strrchr(path, '/') + 1), 24);   /* 20 digits */
    end = samsa_seg_end(seg);
    assert_int_equal(end.next_offset, 100);
    assert_int_equal(end.size, 0);
    seg_fill(seg, &next, 50, 3, 10000, 200);
    end = samsa_seg_end(seg);
    assert_int_equal(end.next_offset, 250);
    assert_int_equal((int64_t) end.size, bg_file_size(path));
    for (off = 100; off < 250; off += 7) {
        assert_int_equal(samsa_seg_find_offset(seg, off, end.size, &pos),
                         SAMSA_ERR_NONE);
        assert_true(pos.hdr.BaseOffset <= off);
        assert_true(samsa_batch_last_offset(&pos.hdr) >= off);
    }
    assert_int_equal(samsa_seg_find_offset(seg, 250, end.size, &pos),
                     SAMSA_ERR__NOENT);
    /* by time: batch i has timestamps 10000 + 10 i .. + 2 */
    assert_int_equal(samsa_seg_find_timestamp(seg, 10125, 0, end.size, &pos),
                     SAMSA_ERR_NONE);
    assert_int_equal(pos.hdr.BaseTimestamp, 10130);
    assert_int_equal(samsa_seg_find_timestamp(seg, 10121, 0, end.size, &pos),
                     SAMSA_ERR_NONE);
    assert_int_equal(pos.hdr.BaseTimestamp, 10120);
    assert_int_equal(samsa_seg_find_timestamp(seg, 0, 200, end.size, &pos),
                     SAMSA_ERR_NONE);
    assert_true(samsa_batch_last_offset(&pos.hdr) >= 200);
    assert_int_equal(samsa_seg_find_timestamp(seg, 99999, 0, end.size, &pos),
                     SAMSA_ERR__NOENT);
    assert_int_equal(samsa_seg_max_timestamp(seg, &mo), 10492);
    assert_int_equal(mo, 249);
    assert_true(samsa_seg_indexes_sane(seg, end.next_offset, end.size, true));
    samsa_seg_unref(seg);
    bg_rmrf(dir);
}

static void
test_seg_roll_conditions(void **state)
{
    char             *dir = bg_tmpdir();
    samsa_seg_t      *seg;
    int64_t           next = 0;

    (void) state;
    assert_int_equal(samsa_seg_open(dir, 0, SAMSA_SEG_F_CREATE
                                                | SAMSA_SEG_F_ACTIVE,
                                    3 * 12, 1000, &seg),
                     SAMSA_ERR_NONE);
    /* an empty segment never rolls on time */
    assert_false(samsa_seg_should_roll(seg, 100, 5000, 0, 1 << 20, 10,
                                       999999));
    seg_fill(seg, &next, 1, 1, 5000, 0);
    assert_false(samsa_seg_should_roll(seg, 100, 5005, 1, 1 << 20, 10, 0));
    /* segment.ms against the first batch's timestamp */
    assert_true(samsa_seg_should_roll(seg, 100, 5011, 1, 1 << 20, 10, 0));
    /* segment.bytes */
    assert_true(samsa_seg_should_roll(seg, (1 << 20), 5000, 1, 1 << 20,
                                      1000, 0));
    /* relative offset overflow */
    assert_true(samsa_seg_should_roll(seg, 10, 5000, (1LL << 31), 1 << 20,
                                      1000, 0));
    /* index full: 3 slots of 8 bytes, every batch indexed */
    seg_fill(seg, &next, 4, 1, 5000, 0);
    assert_true(samsa_seg_should_roll(seg, 10, 5000, next, 1 << 20, 1000, 0));
    samsa_seg_unref(seg);
    bg_rmrf(dir);
}

static void
test_seg_seal_reopen_scan(void **state)
{
    char              *dir = bg_tmpdir(), path[512];
    samsa_seg_t       *seg;
    samsa_seg_end_t    end;
    samsa_seg_scan_t   scan;
    samsa_seg_pos_t    pos;
    int64_t            next = 0;
    uint32_t           size;

    (void) state;
    assert_int_equal(samsa_seg_open(dir, 0, SAMSA_SEG_F_CREATE
                                                | SAMSA_SEG_F_ACTIVE,
                                    SEG_INDEX_BYTES, 0, &seg),
                     SAMSA_ERR_NONE);
    samsa_seg_path(path, sizeof(path), dir, 0, ".index");
    assert_int_equal(bg_file_size(path), SEG_INDEX_BYTES);  /* prealloc */
    seg_fill(seg, &next, 20, 2, 100, 100);
    size = samsa_seg_end(seg).size;
    assert_int_equal(samsa_seg_seal(seg), SAMSA_ERR_NONE);
    assert_true(bg_file_size(path) < SEG_INDEX_BYTES);      /* trimmed */
    assert_int_equal(bg_file_size(path) % 8, 0);
    samsa_seg_path(path, sizeof(path), dir, 0, ".timeindex");
    assert_int_equal(bg_file_size(path) % 12, 0);
    assert_int_equal(samsa_seg_flush(seg), SAMSA_ERR_NONE);
    samsa_seg_unref(seg);

    assert_int_equal(samsa_seg_open(dir, 0, 0, SEG_INDEX_BYTES, 0, &seg),
                     SAMSA_ERR_NONE);
    assert_false(samsa_seg_indexes_created(seg));
    samsa_seg_set_end(seg, 40, size);
    assert_true(samsa_seg_indexes_sane(seg, 40, size, true));
    assert_int_equal(samsa_seg_max_timestamp(seg, NULL), 291);  /* roll */
    assert_int_equal(samsa_seg_find_offset(seg, 33, size, &pos),
                     SAMSA_ERR_NONE);
    assert_int_equal(pos.hdr.BaseOffset, 32);
    /* a rebuild scan gives the same indexes back */
    assert_int_equal(samsa_seg_scan(seg, 0, 0, true, 100, &scan),
                     SAMSA_ERR_NONE);
    assert_null(scan.stop);
    assert_int_equal(scan.nbatches, 20);
    assert_int_equal(scan.valid_bytes, size);
    assert_int_equal(scan.next_offset, 40);
    end = samsa_seg_end(seg);
    assert_int_equal(end.next_offset, 40);
    assert_true(samsa_seg_indexes_sane(seg, 40, size, true));
    samsa_seg_unref(seg);
    bg_rmrf(dir);
}

static void
test_seg_missing_index_and_truncate(void **state)
{
    char             *dir = bg_tmpdir(), path[512];
    samsa_seg_t      *seg;
    samsa_seg_pos_t   pos;
    samsa_seg_end_t   end;
    samsa_seg_scan_t  scan;
    int64_t           next = 0;

    (void) state;
    assert_int_equal(samsa_seg_open(dir, 0, SAMSA_SEG_F_CREATE
                                                | SAMSA_SEG_F_ACTIVE,
                                    SEG_INDEX_BYTES, 0, &seg),
                     SAMSA_ERR_NONE);
    seg_fill(seg, &next, 10, 1, 100, 0);
    samsa_seg_unref(seg);
    samsa_seg_path(path, sizeof(path), dir, 0, ".index");
    assert_int_equal(unlink(path), 0);
    assert_int_equal(samsa_seg_open(dir, 7, 0, SEG_INDEX_BYTES, 0, &seg),
                     SAMSA_ERR__NOENT);
    assert_int_equal(samsa_seg_open(dir, 0, SAMSA_SEG_F_ACTIVE,
                                    SEG_INDEX_BYTES, 0, &seg),
                     SAMSA_ERR_NONE);
    assert_true(samsa_seg_indexes_created(seg));
    assert_int_equal(samsa_seg_scan(seg, 0, 0, true, 0, &scan),
                     SAMSA_ERR_NONE);
    end = samsa_seg_end(seg);
    assert_int_equal(end.next_offset, 10);
    assert_int_equal(samsa_seg_find_offset(seg, 6, end.size, &pos),
                     SAMSA_ERR_NONE);
    assert_int_equal(samsa_seg_truncate(seg, pos.pos, 6), SAMSA_ERR_NONE);
    end = samsa_seg_end(seg);
    assert_int_equal(end.next_offset, 6);
    assert_int_equal(end.size, pos.pos);
    assert_true(samsa_seg_indexes_sane(seg, 6, end.size, true));
    next = 6;
    seg_fill(seg, &next, 2, 1, 100, 0);         /* appends go on */
    assert_int_equal(samsa_seg_end(seg).next_offset, 8);
    assert_int_equal(samsa_seg_mark_deleted(seg), SAMSA_ERR_NONE);
    samsa_seg_path(path, sizeof(path), dir, 0, ".log.deleted");
    assert_true(bg_file_size(path) > 0);
    assert_int_equal(samsa_seg_find_offset(seg, 7, samsa_seg_end(seg).size,
                                           &pos),
                     SAMSA_ERR_NONE);           /* still readable */
    samsa_seg_unlink_files(dir, 0, ".deleted");
    assert_int_equal(bg_file_size(path), -1);
    samsa_seg_unref(seg);
    bg_rmrf(dir);
}

/* Lookups from position hints (the batches appended last, the batch after
 * the one found last) agree with the index walk, also after a truncation
 * that re-appends the same offsets in batches of other sizes, where an old
 * hint's position would fall inside another batch. */
static void
test_seg_position_hints(void **state)
{
    char             *dir = bg_tmpdir();
    samsa_seg_t      *seg;
    samsa_seg_pos_t   pos, first;
    samsa_seg_end_t   end;
    int64_t           next = 0, off;
    int               round;

    (void) state;
    assert_int_equal(samsa_seg_open(dir, 0, SAMSA_SEG_F_CREATE
                                                | SAMSA_SEG_F_ACTIVE,
                                    SEG_INDEX_BYTES, 0, &seg),
                     SAMSA_ERR_NONE);
    seg_fill(seg, &next, 40, 3, 100, 0);        /* offsets 0..119 */
    for (round = 0; round < 2; round++) {
        end = samsa_seg_end(seg);
        /* batch after batch, as a consumer reads, then every offset */
        for (off = 0; off < end.next_offset;
             off = samsa_batch_last_offset(&pos.hdr) + 1) {
            assert_int_equal(samsa_seg_find_offset(seg, off, end.size, &pos),
                             SAMSA_ERR_NONE);
            assert_int_equal(pos.hdr.BaseOffset, off);
        }
        for (off = end.next_offset - 1; off >= 0; off--) {
            assert_int_equal(samsa_seg_find_offset(seg, off, end.size, &pos),
                             SAMSA_ERR_NONE);
            assert_true(pos.hdr.BaseOffset <= off);
            assert_true(samsa_batch_last_offset(&pos.hdr) >= off);
            assert_true(pos.pos + samsa_batch_size(&pos.hdr) <= end.size);
        }
        /* a limit below the hinted batch's end: not found there */
        assert_int_equal(samsa_seg_find_offset(seg, 30, end.size, &first),
                         SAMSA_ERR_NONE);
        assert_int_equal(samsa_seg_find_offset(seg, 30, first.pos + 10,
                                               &pos),
                         SAMSA_ERR__NOENT);
        /* cut at offset 30 and append 6-record batches in its place */
        assert_int_equal(samsa_seg_truncate(seg, first.pos, 30),
                         SAMSA_ERR_NONE);
        next = 30;
        seg_fill(seg, &next, 15, 6, 100, 0);    /* 30..119 again */
        assert_int_equal(samsa_seg_end(seg).next_offset, 120);
    }
    samsa_seg_unref(seg);
    bg_rmrf(dir);

    /* one-record batches 0..49, cut at 30, then 40..44 (a gap, as
     * compaction leaves): offset 33 is in batch 40, not in the batch that
     * now starts where 33's did */
    dir = bg_tmpdir();
    assert_int_equal(samsa_seg_open(dir, 0, SAMSA_SEG_F_CREATE
                                                | SAMSA_SEG_F_ACTIVE,
                                    SEG_INDEX_BYTES, 0, &seg),
                     SAMSA_ERR_NONE);
    next = 0;
    seg_fill(seg, &next, 50, 1, 100, 0);
    end = samsa_seg_end(seg);
    assert_int_equal(samsa_seg_find_offset(seg, 30, end.size, &first),
                     SAMSA_ERR_NONE);
    assert_int_equal(samsa_seg_find_offset(seg, 33, end.size, &pos),
                     SAMSA_ERR_NONE);
    assert_int_equal(samsa_seg_truncate(seg, first.pos, 30), SAMSA_ERR_NONE);
    next = 40;
    seg_fill(seg, &next, 5, 1, 100, 0);
    end = samsa_seg_end(seg);
    assert_int_equal(end.next_offset, 45);
    for (off = 30; off < 45; off++) {
        assert_int_equal(samsa_seg_find_offset(seg, off, end.size, &pos),
                         SAMSA_ERR_NONE);
        assert_int_equal(pos.hdr.BaseOffset, off < 40 ? 40 : off);
    }
    samsa_seg_unref(seg);
    bg_rmrf(dir);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seg_append_and_find),
        cmocka_unit_test(test_seg_roll_conditions),
        cmocka_unit_test(test_seg_seal_reopen_scan),
        cmocka_unit_test(test_seg_missing_index_and_truncate),
        cmocka_unit_test(test_seg_position_hints),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
