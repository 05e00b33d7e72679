/*
 * log/recover.c - loading and recovering a partition directory (see
 * recover.h).  The checks per batch live in samsa_seg_scan(); this file
 * decides what to scan and what to cut, delete or rebuild.
 */
#include "log/recover.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log/ckpt.h"
#include "util/alloc.h"
#include "util/diag.h"

/* The files of a directory that matter here. */
typedef struct recover_files {
    int64_t  *logs;                 /* bases with a .log */
    size_t    nlogs;
    int64_t  *idxs;                 /* bases with a .index or .timeindex */
    size_t    nidxs;
    bool      dirty;                /* files were removed */
} recover_files_t;

static bool
recover_has_suffix(const char *name, const char *suffix)
{
    size_t  n = strlen(name), m = strlen(suffix);

    return n >= m && strcmp(name + n - m, suffix) == 0;
}

/* name is "<20 digits><suffix>": *base gets the number. */
static bool
recover_parse_name(const char *name, const char *suffix, int64_t *base)
{
    int64_t  v = 0;
    int      i;

    if (strlen(name) != 20 + strlen(suffix) || strcmp(name + 20, suffix) != 0) {
        return false;
    }
    for (i = 0; i < 20; i++) {
        if (name[i] < '0' || name[i] > '9'
            || v > (INT64_MAX - (name[i] - '0')) / 10) {
            return false;
        }
        v = v * 10 + (name[i] - '0');
    }
    *base = v;
    return true;
}

static void
recover_push(int64_t **a, size_t *n, int64_t v)
{
    if ((*n & (*n - 1)) == 0) {     /* 0, 1, 2, 4, ...: grow */
        *a = samsa_realloc(*a, (*n ? *n * 2 : 1) * sizeof(**a));
    }
    (*a)[(*n)++] = v;
}

static int
recover_cmp(const void *a, const void *b)
{
    int64_t  x = *(const int64_t *) a, y = *(const int64_t *) b;

    return (x > y) - (x < y);
}

static void
recover_unlink(const char *dir, const char *name, const char *why,
               recover_files_t *f)
{
    char  path[PATH_MAX];

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (unlink(path) == 0) {
        f->dirty = true;
        samsa_warn("log: deleted %s (%s)", path, why);
    } else if (errno != ENOENT) {
        samsa_warn("log: cannot delete %s (%s): %s", path, why,
                   strerror(errno));
    }
}

/* Sort one directory entry: remember segments, remove leftovers. */
static void
recover_entry(const char *dir, const char *name, recover_files_t *f)
{
    int64_t  base;

    if (recover_has_suffix(name, ".deleted")) {
        recover_unlink(dir, name, "left by an earlier deletion", f);
    } else if (recover_has_suffix(name, ".tmp")
               || recover_has_suffix(name, ".cleaned")) {
        recover_unlink(dir, name, "left by an interrupted write", f);
    } else if (recover_parse_name(name, ".log", &base)) {
        recover_push(&f->logs, &f->nlogs, base);
    } else if (recover_parse_name(name, ".index", &base)
               || recover_parse_name(name, ".timeindex", &base)
               || recover_parse_name(name, ".txnindex", &base)) {
        recover_push(&f->idxs, &f->nidxs, base);
    } else if (recover_has_suffix(name, ".swap")) {
        recover_unlink(dir, name, "stray log cleaner swap file", f);
    }
}

/* ---- log cleaner leftovers (Kafka's LogLoader: .cleaned, .swap) ----------- */

/* opendir, reporting a failure. */
static DIR *
recover_opendir(const char *dir)
{
    DIR  *d = opendir(dir);

    if (d == NULL) {
        samsa_error("log: cannot open directory %s: %s", dir,
                    strerror(errno));
    }
    return d;
}

/* Bases of "<base>.log.swap" files in dir. */
static samsa_err_t
recover_list_swaps(const char *dir, int64_t **bases, size_t *n)
{
    DIR            *d;
    struct dirent  *de;
    int64_t         base;

    *bases = NULL;
    *n = 0;
    d = recover_opendir(dir);
    if (d == NULL) {
        return SAMSA_ERR_KAFKA_STORAGE_ERROR;
    }
    while ((de = readdir(d)) != NULL) {
        if (recover_parse_name(de->d_name, ".log.swap", &base)) {
            recover_push(bases, n, base);
        }
    }
    closedir(d);
    return SAMSA_ERR_NONE;
}

/* The offset after the last good batch of the swap segment at base; -1
 * if it is empty or not whole (then it is not used). */
static int64_t
recover_swap_end(const samsa_recover_args_t *args, int64_t base)
{
    samsa_seg_t       *seg;
    samsa_seg_scan_t   scan;
    int64_t            end = -1;

    if (samsa_seg_open_suffixed(args->dir, base, ".swap", 0, 0, args->now_ms,
                                &seg) != SAMSA_ERR_NONE) {
        return -1;
    }
    if (samsa_seg_scan(seg, 0, base, false, args->index_interval_bytes,
                       &scan) == SAMSA_ERR_NONE
        && scan.stop == NULL && scan.nbatches > 0) {
        end = scan.next_offset;
    }
    samsa_seg_unref(seg);
    return end;
}

static void
recover_unlink_seg(const char *dir, int64_t base, const char *suffix)
{
    samsa_warn("log: %s: removing segment %020" PRId64 "%s (replaced by a "
               "log cleaner swap file)", dir, base, suffix);
    samsa_seg_unlink_files(dir, base, suffix);
}

/* Finish one swap as Kafka does: the segments whose base lies in
 * [base, end) are deleted, then the .swap files take their names. */
static samsa_err_t
recover_finish_swap(const samsa_recover_args_t *args, int64_t base,
                    int64_t end)
{
    static const char *const  kinds[] = { ".index", ".timeindex", ".log" };
    DIR                      *d;
    struct dirent            *de;
    int64_t                   b;
    char                      from[PATH_MAX], to[PATH_MAX];
    size_t                    i;

    d = opendir(args->dir);
    if (d == NULL) {
        return SAMSA_ERR_KAFKA_STORAGE_ERROR;
    }
    while ((de = readdir(d)) != NULL) {
        if (recover_parse_name(de->d_name, ".log", &b) && b >= base
            && b < end) {
            recover_unlink_seg(args->dir, b, "");
        }
    }
    closedir(d);
    samsa_seg_unlink_files(args->dir, base, "");   /* orphan indexes */
    for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        snprintf(from, sizeof(from), "%s/%020" PRId64 "%s.swap", args->dir,
                 base, kinds[i]);
        snprintf(to, sizeof(to), "%s/%020" PRId64 "%s", args->dir, base,
                 kinds[i]);
        if (rename(from, to) != 0 && (errno != ENOENT || i == 2)) {
            samsa_error("log: cannot rename %s: %s", from, strerror(errno));
            return SAMSA_ERR_KAFKA_STORAGE_ERROR;
        }
    }
    samsa_warn("log: %s: completed an interrupted log cleaner swap of "
               "offsets %" PRId64 "..%" PRId64, args->dir, base, end - 1);
    return samsa_ckpt_fsync_dir(args->dir);
}

/* Before loading: complete every whole ".log.swap" (the cleaned segment
 * was fdatasynced before it was named so), drop the others; ".cleaned"
 * and the swap indexes without a .log.swap go with the stray files. */
static samsa_err_t
recover_swaps(const samsa_recover_args_t *args, bool *dirty)
{
    int64_t      *bases, end;
    size_t        n, i;
    samsa_err_t   err;

    err = recover_list_swaps(args->dir, &bases, &n);
    for (i = 0; i < n && err == SAMSA_ERR_NONE; i++) {
        *dirty = true;
        end = recover_swap_end(args, bases[i]);
        if (end < 0) {
            samsa_warn("log: %s: dropping the unusable log cleaner swap "
                       "segment %020" PRId64, args->dir, bases[i]);
            samsa_seg_unlink_files(args->dir, bases[i], ".swap");
            continue;
        }
        err = recover_finish_swap(args, bases[i], end);
    }
    samsa_free(bases);
    return err;
}

/* Indexes whose .log is gone are deleted, as Kafka does. */
static void
recover_orphans(const char *dir, recover_files_t *f)
{
    char    name[64];
    size_t  i;

    for (i = 0; i < f->nidxs; i++) {
        if (f->nlogs > 0
            && bsearch(&f->idxs[i], f->logs, f->nlogs, sizeof(int64_t),
                       recover_cmp) != NULL) {
            continue;
        }
        snprintf(name, sizeof(name), "%020" PRId64 ".index", f->idxs[i]);
        recover_unlink(dir, name, "orphaned index", f);
        snprintf(name, sizeof(name), "%020" PRId64 ".timeindex", f->idxs[i]);
        recover_unlink(dir, name, "orphaned index", f);
        snprintf(name, sizeof(name), "%020" PRId64 ".txnindex", f->idxs[i]);
        recover_unlink(dir, name, "orphaned index", f);
    }
}

static samsa_err_t
recover_list(const char *dir, recover_files_t *f)
{
    DIR            *d;
    struct dirent  *de;

    memset(f, 0, sizeof(*f));
    d = recover_opendir(dir);
    if (d == NULL) {
        return SAMSA_ERR_KAFKA_STORAGE_ERROR;
    }
    while ((de = readdir(d)) != NULL) {
        recover_entry(dir, de->d_name, f);
    }
    closedir(d);
    if (f->nlogs > 1) {
        qsort(f->logs, f->nlogs, sizeof(int64_t), recover_cmp);
    }
    recover_orphans(dir, f);
    return SAMSA_ERR_NONE;
}

/* Cut seg after its valid batches (scan says where and why). */
static samsa_err_t
recover_cut(samsa_seg_t *seg, const samsa_seg_scan_t *scan,
            samsa_recover_result_t *res)
{
    samsa_warn("log: %s: %s at position %" PRIu32 "; truncating %" PRIu64
               " bytes (keeping %" PRId64 " batches, next offset %" PRId64
               ")", samsa_seg_log_path(seg), scan->stop, scan->valid_bytes,
               scan->file_bytes - scan->valid_bytes, scan->nbatches,
               scan->next_offset);
    res->truncated_bytes += (int64_t) (scan->file_bytes - scan->valid_bytes);
    return samsa_seg_truncate(seg, scan->valid_bytes, scan->next_offset);
}

/* Scan a whole segment, rebuilding its indexes (room for them first,
 * trimmed and closed with the time index's last entry after, as Kafka's
 * LogSegment.recover does); cut a bad tail.  *cut tells whether anything
 * was cut off. */
static samsa_err_t
recover_rebuild(const samsa_recover_args_t *args, samsa_seg_t *seg,
                samsa_recover_result_t *res, bool *cut)
{
    samsa_seg_scan_t  scan;
    samsa_err_t       err;

    *cut = false;
    err = samsa_seg_activate(seg, args->index_max_bytes);
    if (err == SAMSA_ERR_NONE) {
        err = samsa_seg_scan(seg, 0, samsa_seg_base(seg), true,
                             args->index_interval_bytes, &scan);
    }
    if (err == SAMSA_ERR_NONE && scan.valid_bytes != scan.file_bytes) {
        *cut = true;
        err = recover_cut(seg, &scan, res);
    }
    return err == SAMSA_ERR_NONE ? samsa_seg_seal(seg) : err;
}

/* A segment below the scan: trusted, its end is the next one's base; its
 * indexes are rebuilt if missing or insane. */
static samsa_err_t
recover_trusted_pinned(const samsa_recover_args_t *args, samsa_seg_t *seg,
                int64_t next_base, samsa_recover_result_t *res)
{
    struct stat  st;
    bool         cut;

    if (fstat(samsa_seg_fd(seg), &st) != 0) {     /* pinned */
        samsa_error("log: cannot stat %s: %s", samsa_seg_log_path(seg),
                    strerror(errno));
        return SAMSA_ERR_KAFKA_STORAGE_ERROR;
    }
    samsa_seg_set_end(seg, next_base,
                      st.st_size > INT32_MAX ? INT32_MAX
                                             : (uint32_t) st.st_size);
    if (!samsa_seg_indexes_created(seg) && st.st_size <= INT32_MAX
        && samsa_seg_indexes_sane(seg, next_base, (uint32_t) st.st_size,
                                  false)) {
        return SAMSA_ERR_NONE;
    }
    samsa_warn("log: %s: index missing or corrupt, rebuilding it",
               samsa_seg_log_path(seg));
    res->indexes_rebuilt++;
    return recover_rebuild(args, seg, res, &cut);
}

/* recover_trusted_pinned, with the segment's files kept open throughout (so an index
 * check cannot fail for want of a descriptor and look like corruption). */
static samsa_err_t
recover_trusted(const samsa_recover_args_t *args, samsa_seg_t *seg,
                int64_t next_base, samsa_recover_result_t *res)
{
    samsa_err_t  err = samsa_seg_pin(seg);

    if (err == SAMSA_ERR_NONE) {
        err = recover_trusted_pinned(args, seg, next_base, res);
        samsa_seg_unpin(seg);
    }
    return err;
}

/* The last segment after a clean stop: read on from its last index entry
 * to find the end; any doubt leads to a full rebuild scan. */
static samsa_err_t
recover_tail_pinned(const samsa_recover_args_t *args, samsa_seg_t *seg,
             samsa_recover_result_t *res)
{
    samsa_seg_scan_t   scan;
    samsa_idx_entry_t  last;
    samsa_seg_end_t    end;
    struct stat        st;
    samsa_err_t        err;
    bool               cut;

    if (fstat(samsa_seg_fd(seg), &st) != 0) {     /* pinned */
        samsa_error("log: cannot stat %s: %s", samsa_seg_log_path(seg),
                    strerror(errno));
        return SAMSA_ERR_KAFKA_STORAGE_ERROR;
    }
    if (!samsa_seg_indexes_created(seg) && st.st_size <= INT32_MAX
        && samsa_seg_indexes_sane(seg, INT64_MAX, (uint32_t) st.st_size,
                                  true)) {
        last = samsa_seg_last_index_entry(seg);
        err = samsa_seg_scan(seg, last.pos, samsa_seg_base(seg), false,
                             args->index_interval_bytes, &scan);
        if (err != SAMSA_ERR_NONE) {
            return err;
        }
        end = samsa_seg_end(seg);
        if (scan.stop == NULL
            && samsa_seg_indexes_sane(seg, end.next_offset, end.size, false)) {
            return SAMSA_ERR_NONE;
        }
    }
    samsa_warn("log: %s: index missing or inconsistent after a clean "
               "shutdown, rebuilding it", samsa_seg_log_path(seg));
    res->indexes_rebuilt++;
    return recover_rebuild(args, seg, res, &cut);
}

/* recover_tail_pinned, with the segment's files kept open throughout (so an index
 * check cannot fail for want of a descriptor and look like corruption). */
static samsa_err_t
recover_tail(const samsa_recover_args_t *args, samsa_seg_t *seg,
             samsa_recover_result_t *res)
{
    samsa_err_t  err = samsa_seg_pin(seg);

    if (err == SAMSA_ERR_NONE) {
        err = recover_tail_pinned(args, seg, res);
        samsa_seg_unpin(seg);
    }
    return err;
}

/* Index of the segment holding the recovery point (unclean stop). */
static size_t
recover_first_unflushed(const recover_files_t *f, int64_t recovery_point)
{
    size_t  i = 0;

    while (i + 1 < f->nlogs && f->logs[i + 1] <= recovery_point) {
        i++;
    }
    return i;
}

/* Open every segment and recover as recover.h says; res->segs filled. */
static samsa_err_t
recover_segments(const samsa_recover_args_t *args, recover_files_t *f,
                 samsa_recover_result_t *res)
{
    size_t       i, first;
    samsa_err_t  err = SAMSA_ERR_NONE;
    bool         cut = false;

    res->segs = samsa_calloc(f->nlogs + 1, sizeof(*res->segs));
    first = args->clean ? f->nlogs - 1
                        : recover_first_unflushed(f, args->recovery_point);
    for (i = 0; i < f->nlogs && err == SAMSA_ERR_NONE && !cut; i++) {
        err = samsa_seg_open(args->dir, f->logs[i], 0, args->index_max_bytes,
                             args->now_ms, &res->segs[res->nsegs]);
        if (err != SAMSA_ERR_NONE) {
            break;
        }
        res->nsegs++;
        if (i < first) {
            err = recover_trusted(args, res->segs[i], f->logs[i + 1], res);
        } else if (args->clean) {
            err = recover_tail(args, res->segs[i], res);
        } else {
            res->segs_scanned++;
            err = recover_rebuild(args, res->segs[i], res, &cut);
        }
    }
    for (; cut && i < f->nlogs; i++) {          /* after a cut: delete */
        samsa_warn("log: deleting segment %020" PRId64 " of %s: it follows "
                   "a truncated one", f->logs[i], args->dir);
        samsa_seg_unlink_files(args->dir, f->logs[i], "");
        res->segs_deleted++;
        f->dirty = true;
    }
    return err;
}

/* Sync what recovery scanned or changed, so that the recovery point can
 * move to the end (after a clean stop with nothing changed, all is on disk
 * already). */
static samsa_err_t
recover_sync(const samsa_recover_args_t *args, const recover_files_t *f,
             samsa_recover_result_t *res)
{
    size_t       i;
    samsa_err_t  err = SAMSA_ERR_NONE;

    if (args->clean && res->indexes_rebuilt == 0 && !f->dirty) {
        return SAMSA_ERR_NONE;
    }
    for (i = 0; i < res->nsegs && err == SAMSA_ERR_NONE; i++) {
        err = samsa_seg_flush(res->segs[i]);
    }
    if (err == SAMSA_ERR_NONE) {
        err = samsa_ckpt_fsync_dir(args->dir);
    }
    return err;
}

/* The offsets of the loaded log. */
static void
recover_offsets(const samsa_recover_args_t *args, samsa_recover_result_t *res)
{
    int64_t  first = samsa_seg_base(res->segs[0]);

    res->log_end_offset = samsa_seg_end(res->segs[res->nsegs - 1]).next_offset;
    res->log_start_offset = args->log_start_offset > first
                                ? args->log_start_offset : first;
    if (res->log_start_offset > res->log_end_offset) {
        samsa_warn("log: %s: log start offset %" PRId64 " beyond the log "
                   "end %" PRId64 ", using the end", args->dir,
                   res->log_start_offset, res->log_end_offset);
        res->log_start_offset = res->log_end_offset;
    }
    res->recovery_point = res->log_end_offset;
}

samsa_err_t
samsa_recover_partition(const samsa_recover_args_t *args,
                        samsa_recover_result_t *res)
{
    recover_files_t  f;
    samsa_err_t      err;
    int64_t          base;
    bool             swapped;

    memset(res, 0, sizeof(*res));
    swapped = false;
    err = recover_swaps(args, &swapped);
    if (err == SAMSA_ERR_NONE) {
        err = recover_list(args->dir, &f);
    }
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    f.dirty |= swapped;
    if (f.nlogs > 0) {
        err = recover_segments(args, &f, res);
    } else {
        res->segs = samsa_calloc(1, sizeof(*res->segs));
    }
    if (err == SAMSA_ERR_NONE && res->nsegs == 0) {
        base = args->log_start_offset > 0 ? args->log_start_offset : 0;
        err = samsa_seg_open(args->dir, base, SAMSA_SEG_F_CREATE, 0,
                             args->now_ms, &res->segs[0]);
        res->nsegs = err == SAMSA_ERR_NONE ? 1 : 0;
        f.dirty = true;
    }
    if (err == SAMSA_ERR_NONE) {
        err = samsa_seg_activate(res->segs[res->nsegs - 1],
                                 args->index_max_bytes);
    }
    if (err == SAMSA_ERR_NONE) {
        err = recover_sync(args, &f, res);
    }
    if (err == SAMSA_ERR_NONE) {
        recover_offsets(args, res);
    } else {
        samsa_recover_result_fini(res);
    }
    samsa_free(f.logs);
    samsa_free(f.idxs);
    return err;
}

void
samsa_recover_result_fini(samsa_recover_result_t *res)
{
    size_t  i;

    for (i = 0; i < res->nsegs; i++) {
        samsa_seg_unref(res->segs[i]);
    }
    samsa_free(res->segs);
    res->segs = NULL;
    res->nsegs = 0;
}
