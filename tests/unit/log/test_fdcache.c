/* Unit tests for log/fdcache.c: the LRU of open log files (budget, LRU
 * order, pinned entries never closed, EMFILE), and segments through it
 * (evicted segments reopen and read the same bytes, also renamed ones). */
#include "unit.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>

#include "log/batchgen.h"
#include "log/fdcache.h"
#include "log/seg.h"

/* A fake owner: its "files" are nfds descriptors of /dev/null. */
typedef struct fake {
    samsa_fdcache_ent_t  ent;           /* first: the cast below */
    int                  fds[4];
    int                  nfds;
    int                  opens;
    int                  closes;
} fake_t;

static samsa_err_t
fake_open(samsa_fdcache_ent_t *ent, int *nfds, int *lowfd)
{
    fake_t  *f = (fake_t *) ent;
    int      i, j;

    for (i = 0; i < f->nfds; i++) {
        f->fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (f->fds[i] < 0) {
            for (j = 0; j < i; j++) {
                close(f->fds[j]);
                f->fds[j] = -1;
            }
            return samsa_fdcache_errno_is_nofile(errno) ? SAMSA_ERR__NOFILE
                                                        : SAMSA_ERR__IO;
        }
    }
    f->opens++;
    *nfds = f->nfds;
    *lowfd = f->fds[0];
    return SAMSA_ERR_NONE;
}

static void
fake_close(samsa_fdcache_ent_t *ent)
{
    fake_t  *f = (fake_t *) ent;
    int      i;

    for (i = 0; i < f->nfds; i++) {
        close(f->fds[i]);
        f->fds[i] = -1;
    }
    f->closes++;
}

static void
fake_init(samsa_fdcache_t *cache, fake_t *f, int nfds)
{
    memset(f, 0, sizeof(*f));
    f->nfds = nfds;
    samsa_fdcache_ent_init(cache, &f->ent, fake_open, fake_close, nfds);
}

static bool
fd_valid(int fd)
{
    return fd >= 0 && fcntl(fd, F_GETFD) >= 0;
}

/* Descriptors this process holds (/proc/self/fd, less the listing's). */
static int
fds_in_use(void)
{
    DIR            *d = opendir("/proc/self/fd");
    struct dirent  *e;
    int             n = 0;

    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        n += e->d_name[0] != '.';
    }
    closedir(d);
    return n - 1;
}

/* 20 entries of 2 fds under a budget of 7: at most 3 open at a time, and
 * the process really holds no more. */
static void
test_fdcache_budget_respected(void **state)
{
    samsa_fdcache_t        *cache = samsa_fdcache_new(7);
    samsa_fdcache_stats_t   st;
    fake_t                  f[20];
    int                     base = fds_in_use(), i;

    (void) state;
    for (i = 0; i < 20; i++) {
        fake_init(cache, &f[i], 2);
        assert_int_equal(samsa_fdcache_acquire(&f[i].ent), SAMSA_ERR_NONE);
        assert_true(fd_valid(f[i].fds[0]) && fd_valid(f[i].fds[1]));
        samsa_fdcache_release(&f[i].ent);
        samsa_fdcache_stats(cache, &st);
        assert_true(st.open_fds <= 7);
        assert_true(fds_in_use() - base <= 7);
    }
    samsa_fdcache_stats(cache, &st);
    assert_int_equal(st.open_fds, 6);
    assert_int_equal(st.open_entries, 3);
    assert_int_equal(st.evictions, 17);
    assert_int_equal(st.opens, 20);
    assert_int_equal(st.exhausted, 0);
    for (i = 0; i < 20; i++) {
        samsa_fdcache_ent_fini(&f[i].ent);
        assert_int_equal(f[i].opens, f[i].closes);
    }
    assert_int_equal(fds_in_use(), base);
    samsa_fdcache_free(cache);
}

/* The least recently released goes first; a use moves an entry up. */
static void
test_fdcache_lru_order(void **state)
{
    samsa_fdcache_t  *cache = samsa_fdcache_new(3);
    fake_t            f[4];
    int               i;

    (void) state;
    for (i = 0; i < 4; i++) {
        fake_init(cache, &f[i], 1);
    }
    for (i = 0; i < 3; i++) {
        assert_int_equal(samsa_fdcache_acquire(&f[i].ent), SAMSA_ERR_NONE);
        samsa_fdcache_release(&f[i].ent);
    }
    /* touch 0: now 1 is the least recent */
    assert_int_equal(samsa_fdcache_acquire(&f[0].ent), SAMSA_ERR_NONE);
    samsa_fdcache_release(&f[0].ent);
    assert_int_equal(f[0].opens, 1);            /* it was still open */
    assert_int_equal(samsa_fdcache_acquire(&f[3].ent), SAMSA_ERR_NONE);
    samsa_fdcache_release(&f[3].ent);
    assert_true(samsa_fdcache_ent_is_open(&f[0].ent));
    assert_false(samsa_fdcache_ent_is_open(&f[1].ent));
    assert_true(samsa_fdcache_ent_is_open(&f[2].ent));
    assert_true(samsa_fdcache_ent_is_open(&f[3].ent));
    /* 1 again: 2 goes */
    assert_int_equal(samsa_fdcache_acquire(&f[1].ent), SAMSA_ERR_NONE);
    samsa_fdcache_release(&f[1].ent);
    assert_int_equal(f[1].opens, 2);
    assert_false(samsa_fdcache_ent_is_open(&f[2].ent));
    for (i = 0; i < 4; i++) {
        samsa_fdcache_ent_fini(&f[i].ent);
    }
    samsa_fdcache_free(cache);
}

/* A pinned entry is never closed, even over the budget; nested pins
 * count; once released it goes if the cache is still over budget. */
static void
test_fdcache_pinned_not_closed(void **state)
{
    samsa_fdcache_t        *cache = samsa_fdcache_new(2);
    samsa_fdcache_stats_t   st;
    fake_t                  f[3];
    int                     i;

    (void) state;
    for (i = 0; i < 3; i++) {
        fake_init(cache, &f[i], 1);
    }
    /* 0 was used before (it sits in the LRU), then pinned twice */
    assert_int_equal(samsa_fdcache_acquire(&f[0].ent), SAMSA_ERR_NONE);
    samsa_fdcache_release(&f[0].ent);
    assert_int_equal(samsa_fdcache_acquire(&f[0].ent), SAMSA_ERR_NONE);
    assert_int_equal(samsa_fdcache_acquire(&f[0].ent), SAMSA_ERR_NONE);
    assert_int_equal(samsa_fdcache_acquire(&f[1].ent), SAMSA_ERR_NONE);
    assert_int_equal(samsa_fdcache_acquire(&f[2].ent), SAMSA_ERR_NONE);
    samsa_fdcache_stats(cache, &st);
    assert_int_equal(st.open_fds, 3);           /* over: all pinned */
    assert_int_equal(st.pinned_entries, 3);
    assert_true(fd_valid(f[0].fds[0]) && fd_valid(f[1].fds[0])
                && fd_valid(f[2].fds[0]));
    samsa_fdcache_release(&f[0].ent);           /* one pin left */
    assert_true(fd_valid(f[0].fds[0]));
    samsa_fdcache_release(&f[1].ent);           /* over budget: closed */
    assert_false(samsa_fdcache_ent_is_open(&f[1].ent));
    assert_true(fd_valid(f[0].fds[0]) && fd_valid(f[2].fds[0]));
    samsa_fdcache_release(&f[0].ent);
    samsa_fdcache_release(&f[2].ent);
    samsa_fdcache_stats(cache, &st);
    assert_int_equal(st.open_fds, 2);
    assert_int_equal(st.pinned_entries, 0);
    for (i = 0; i < 3; i++) {
        samsa_fdcache_ent_fini(&f[i].ent);
    }
    samsa_fdcache_free(cache);
}

/* Under a low RLIMIT_NOFILE: EMFILE evicts an unpinned entry and retries;
 * with nothing left to evict the acquire is refused with _NOFILE, counted,
 * and the pinned entries keep their descriptors. */
static void
test_fdcache_emfile_refused(void **state)
{
    samsa_fdcache_t        *cache = samsa_fdcache_new(1000000);
    samsa_fdcache_stats_t   st;
    struct rlimit           old, rl;
    fake_t                  f[64];
    int                     i, n, top, low;
    uint64_t                evictions;

    (void) state;
    top = open("/dev/null", O_RDONLY);
    close(top);
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
    rl = old;
    rl.rlim_cur = (rlim_t) top + 8;             /* room for 8 more */
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
    for (i = 0; i < 64; i++) {
        fake_init(cache, &f[i], 1);
    }
    /* one unpinned open entry, then pin until descriptors run out */
    assert_int_equal(samsa_fdcache_acquire(&f[0].ent), SAMSA_ERR_NONE);
    samsa_fdcache_release(&f[0].ent);
    for (n = 1; n < 64; n++) {
        if (samsa_fdcache_acquire(&f[n].ent) != SAMSA_ERR_NONE) {
            break;
        }
    }
    assert_true(n > 1 && n < 64);
    assert_false(samsa_fdcache_ent_is_open(&f[0].ent));    /* evicted */
    assert_false(samsa_fdcache_ent_is_open(&f[n].ent));
    samsa_fdcache_stats(cache, &st);
    assert_int_equal(st.exhausted, 1);
    assert_int_equal(st.evictions, 1);
    assert_int_equal(samsa_fdcache_acquire(&f[n].ent), SAMSA_ERR__NOFILE);
    samsa_fdcache_stats(cache, &st);
    assert_int_equal(st.exhausted, 2);
    for (i = 1; i < n; i++) {
        assert_true(fd_valid(f[i].fds[0]));     /* still serving */
    }
    /* one released: room again */
    samsa_fdcache_release(&f[1].ent);
    assert_int_equal(samsa_fdcache_acquire(&f[n].ent), SAMSA_ERR_NONE);
    samsa_fdcache_release(&f[n].ent);
    for (i = 2; i < n; i++) {
        samsa_fdcache_release(&f[i].ent);
    }
    /* the limit lowered below every entry's descriptor: closing them
     * would not help, so none is closed and the open is refused */
    low = INT32_MAX;
    for (i = 2; i <= n; i++) {
        low = f[i].fds[0] < low ? f[i].fds[0] : low;
    }
    rl.rlim_cur = (rlim_t) low;
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
    samsa_fdcache_stats(cache, &st);
    evictions = st.evictions;
    assert_int_equal(samsa_fdcache_acquire(&f[63].ent), SAMSA_ERR__NOFILE);
    samsa_fdcache_stats(cache, &st);
    assert_int_equal(st.evictions, evictions);
    for (i = 2; i <= n; i++) {
        assert_true(samsa_fdcache_ent_is_open(&f[i].ent));
        assert_true(fd_valid(f[i].fds[0]));
    }
    for (i = 0; i < 64; i++) {
        samsa_fdcache_ent_fini(&f[i].ent);
    }
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
    samsa_fdcache_free(cache);
}

/* Fill seg with n one-record batches from offset *next. */
static void
fdc_fill(samsa_seg_t *seg, int64_t *next, int n)
{
    samsa_buf_t  b = SAMSA_BUF_INIT;
    int          i;

    for (i = 0; i < n; i++) {
        b.len = 0;
        bg_simple(&b, 1, 1000 + *next);
        *next = samsa_batch_assign(b.data, b.len, *next, 0, -1);
        assert_int_equal(samsa_seg_append(seg, b.data, b.len, 0),
                         SAMSA_ERR_NONE);
    }
    samsa_buf_fini(&b);
}

/* Segments under a budget of one segment (1 fd: the indexes are mapped
 * and hold none): opening the second
 * closes the first; reading the first again reopens it (index included:
 * lookups by offset and time find the same batches), the bytes are the
 * same, and a fetch-style pin keeps its fd open while others open. */
static void
test_fdcache_segment_reopen(void **state)
{
    samsa_fdcache_t        *cache = samsa_fdcache_global();
    samsa_fdcache_stats_t   st;
    char                   *dir = bg_tmpdir(), path[512];
    samsa_seg_t            *a, *b;
    samsa_seg_pos_t         pos, pos2;
    uint8_t                 before[64], after[64];
    int64_t                 next = 0, next_b = 100;
    int                     fd;

    (void) state;
    samsa_fdcache_set_budget(cache, 1);
    assert_int_equal(samsa_seg_open(dir, 0, SAMSA_SEG_F_CREATE
                                                | SAMSA_SEG_F_ACTIVE,
                                    1024, 0, &a),
                     SAMSA_ERR_NONE);
    fdc_fill(a, &next, 20);
    assert_int_equal(samsa_seg_find_offset(a, 13, samsa_seg_end(a).size,
                                           &pos),
                     SAMSA_ERR_NONE);
    assert_int_equal(samsa_seg_read(a, pos.pos, before, sizeof(before)),
                     SAMSA_ERR_NONE);
    samsa_fdcache_stats(cache, &st);
    assert_int_equal(st.open_fds, 1);           /* the .log alone */
    assert_int_equal(samsa_seg_open(dir, 100, SAMSA_SEG_F_CREATE
                                                  | SAMSA_SEG_F_ACTIVE,
                                    1024, 0, &b),
                     SAMSA_ERR_NONE);
    assert_false(samsa_seg_is_open(a));
    assert_true(samsa_seg_is_open(b));
    fdc_fill(b, &next_b, 5);
    samsa_fdcache_stats(cache, &st);
    assert_true(st.open_fds <= 1);
    /* a again: reopened, same answers, b closed */
    assert_int_equal(samsa_seg_find_offset(a, 13, samsa_seg_end(a).size,
                                           &pos2),
                     SAMSA_ERR_NONE);
    assert_int_equal(pos2.pos, pos.pos);
    assert_int_equal(samsa_seg_read(a, pos.pos, after, sizeof(after)),
                     SAMSA_ERR_NONE);
    assert_memory_equal(before, after, sizeof(before));
    assert_int_equal(samsa_seg_find_timestamp(a, 1013, 0,
                                              samsa_seg_end(a).size, &pos2),
                     SAMSA_ERR_NONE);
    assert_int_equal(pos2.hdr.BaseOffset, 13);
    assert_true(samsa_seg_is_open(a));
    assert_false(samsa_seg_is_open(b));
    /* appends to the evicted active segment reopen it too */
    fdc_fill(b, &next_b, 5);
    assert_int_equal(samsa_seg_end(b).next_offset, 110);
    assert_true(samsa_seg_indexes_sane(b, 110, samsa_seg_end(b).size, true));
    /* a pin (a fetch region) keeps a's fd open while b is used */
    assert_int_equal(samsa_seg_pin(a), SAMSA_ERR_NONE);
    fd = samsa_seg_fd(a);
    fdc_fill(b, &next_b, 1);        /* over budget: b closes after */
    assert_true(samsa_seg_is_open(a));
    assert_false(samsa_seg_is_open(b));
    assert_true(fd_valid(fd));
    assert_int_equal(pread(fd, after, sizeof(after), pos.pos),
                     (ssize_t) sizeof(after));
    assert_memory_equal(before, after, sizeof(before));
    samsa_seg_unpin(a);
    /* renamed while closed (retention): reopened under the new name */
    fdc_fill(b, &next_b, 1);
    assert_false(samsa_seg_is_open(a));
    assert_int_equal(samsa_seg_mark_deleted(a), SAMSA_ERR_NONE);
    assert_int_equal(samsa_seg_read(a, pos.pos, after, sizeof(after)),
                     SAMSA_ERR_NONE);
    assert_memory_equal(before, after, sizeof(before));
    samsa_seg_path(path, sizeof(path), dir, 0, ".log.deleted");
    assert_string_equal(samsa_seg_log_path(a), path);
    samsa_seg_unref(a);
    samsa_seg_unref(b);
    samsa_fdcache_stats(cache, &st);
    assert_int_equal(st.open_fds, 0);
    samsa_fdcache_set_budget(cache, 0);
    bg_rmrf(dir);
}

/* A deleted segment still held by a reader when its files are unlinked
 * (file.delete.delay.ms passed) stays open for that reader: eviction
 * skips it and reads keep working from its descriptors, where a reopen
 * by name would find nothing (ENOENT).  A segment nobody else holds is
 * not pinned. */
static void
test_fdcache_deleted_segment_held_for_reader(void **state)
{
    samsa_fdcache_t        *cache = samsa_fdcache_global();
    samsa_fdcache_stats_t   st;
    char                   *dir = bg_tmpdir();
    samsa_seg_t            *a, *b, *reader;
    samsa_seg_pos_t         pos;
    uint8_t                 before[64], after[64];
    int64_t                 next = 0, next_b = 100;

    (void) state;
    samsa_fdcache_set_budget(cache, 1);
    assert_int_equal(samsa_seg_open(dir, 0, SAMSA_SEG_F_CREATE
                                                | SAMSA_SEG_F_ACTIVE,
                                    1024, 0, &a),
                     SAMSA_ERR_NONE);
    fdc_fill(a, &next, 20);
    assert_int_equal(samsa_seg_find_offset(a, 13, samsa_seg_end(a).size,
                                           &pos),
                     SAMSA_ERR_NONE);
    assert_int_equal(samsa_seg_read(a, pos.pos, before, sizeof(before)),
                     SAMSA_ERR_NONE);
    reader = samsa_seg_ref(a);            /* a fetch still on it */
    assert_int_equal(samsa_seg_mark_deleted(a), SAMSA_ERR_NONE);
    samsa_seg_hold_open_if_shared(a);     /* what purge does */
    samsa_seg_unlink_files(dir, 0, ".deleted");
    samsa_seg_unref(a);                   /* the doomed list's ref */
    /* another segment takes the whole budget: the held one stays */
    assert_int_equal(samsa_seg_open(dir, 100, SAMSA_SEG_F_CREATE
                                                  | SAMSA_SEG_F_ACTIVE,
                                    1024, 0, &b),
                     SAMSA_ERR_NONE);
    fdc_fill(b, &next_b, 5);
    assert_true(samsa_seg_is_open(reader));
    assert_int_equal(samsa_seg_read(reader, pos.pos, after, sizeof(after)),
                     SAMSA_ERR_NONE);
    assert_memory_equal(before, after, sizeof(before));
    assert_int_equal(samsa_seg_find_offset(reader, 13,
                                           samsa_seg_end(reader).size,
                                           &pos),
                     SAMSA_ERR_NONE);
    samsa_seg_unref(reader);              /* the last one: closed */
    /* nobody else holds b: no pin, its descriptors can go */
    samsa_seg_hold_open_if_shared(b);
    samsa_seg_unref(b);
    samsa_fdcache_stats(cache, &st);
    assert_int_equal(st.open_fds, 0);
    samsa_fdcache_set_budget(cache, 0);
    bg_rmrf(dir);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fdcache_budget_respected),
        cmocka_unit_test(test_fdcache_lru_order),
        cmocka_unit_test(test_fdcache_pinned_not_closed),
        cmocka_unit_test(test_fdcache_emfile_refused),
        cmocka_unit_test(test_fdcache_segment_reopen),
        cmocka_unit_test(test_fdcache_deleted_segment_held_for_reader),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
