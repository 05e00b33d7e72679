/*
 * log/seg.c - log segments (see seg.h): the .log file and its two
 * indexes, appends with Kafka's index cadence, lookups by offset and
 * timestamp, the batch scan that recovery uses, truncation and deletion.
 */
#include "log/seg.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log/fdcache.h"
#include "log/idx.h"
#include "log/tidx.h"
#include "util/alloc.h"
#include "util/diag.h"
#include "util/endian.h"
#include "util/fsutil.h"
#include "util/time.h"

/* Position hints per segment: a direct-mapped table of (offset, position)
 * for the batches appended last and the batch after the last one found.
 * A consumer at the tail, or one reading batch after batch, asks for
 * exactly such an offset: one header read finds its batch, where the
 * index leads to the batch before it (Kafka's index entries name a batch's
 * last offset) and the walk reads two. */
#define SEG_HINTS  16

/*
 * samsa_seg_t - one segment; see seg.h for who touches it.  Fields marked
 * [writer] are used only by the segment's writer (plog lock held).  Fields
 * marked [pin] are valid only while the segment is pinned (fdcache.h): the
 * descriptor cache closes them (fd -1, indexes detached) when the segment
 * is unpinned and room is needed, and the next pin opens them again.
 */
struct samsa_seg {
    _Atomic int          refcnt;        /* [atomic] last unref frees */
    int64_t              base_offset;   /* [const] */
    char                *dir;           /* [const] */
    pthread_mutex_t      files_lock;    /* guards the file names (suffix,
                                           log_path, the indexes' paths)
                                           against a concurrent reopen;
                                           taken before the cache lock,
                                           never under it */
    char                *suffix;        /* [files_lock] "", ".cleaned",
                                           ".swap", ".deleted" */
    char                *log_path;      /* [files_lock] (renamed only by
                                           the cleaner before sharing and
                                           by samsa_seg_mark_deleted) */
    char               **old_names;     /* [files_lock] names replaced
                                           by renames, freed with seg */
    size_t               nold_names;    /* [files_lock] */
    samsa_fdcache_ent_t  fdc;           /* the descriptor cache's entry */
    bool                 opened;        /* [files_lock] opened once: later
                                           opens reopen what exists */
    _Atomic bool         held_open;     /* [atomic] pinned by
                                           samsa_seg_hold_open_if_shared
                                           until seg_free */
    int                  open_flags;    /* [const] SAMSA_SEG_F_* */
    int32_t              open_index_max_bytes;  /* [const] */
    bool                 has_txn;       /* [pin] a .txnindex exists */
    int                  fd;            /* [pin] the .log, O_RDWR */
    samsa_idx_t          idx;           /* see idx.h; [pin] attached */
    samsa_tidx_t         tidx;          /* see tidx.h; [pin] attached */
    bool                 idx_created;   /* [const] an index was missing */
    _Atomic uint64_t     end;           /* [atomic] (next_offset - base)
                                           << 32 | size; written with
                                           release by the writer, loaded
                                           with acquire by readers */
    pthread_mutex_t      ts_lock;       /* guards max_ts, max_ts_offset */
    int64_t              max_ts;        /* [ts_lock] largest MaxTimestamp */
    int64_t              max_ts_offset; /* [ts_lock] last offset of its
                                           batch */
    int64_t              roll_ts;       /* [writer] first batch's
                                           MaxTimestamp (Kafka's
                                           rollingBasedTimestamp), -2 not
                                           looked up yet */
    int64_t              created_ms;    /* [writer] when opened */
    uint32_t             since_index;   /* [writer] bytes since the last
                                           offset-index entry */
    _Atomic int          txn_fd;        /* [atomic][pin] the .txnindex, -1
                                           until it exists (or while
                                           closed); set by the writer
                                           before txn_n is raised */
    _Atomic uint32_t     txn_n;         /* [atomic] entries; release after
                                           each write, readers acquire */
    _Atomic uint64_t     hints[SEG_HINTS]; /* [atomic] where recent batches
                                           start, by offset (seg_hint_put):
                                           a guess, checked against the
                                           header read there */
};

/* The .log's current name.  A rename (samsa_seg_mark_deleted) swaps the
 * pointer while readers may be formatting an error with the old one, so
 * it is loaded and stored atomically and old names live until seg_free. */
static const char *
seg_log_path(const samsa_seg_t *seg)
{
    return __atomic_load_n(&seg->log_path, __ATOMIC_ACQUIRE);
}

/* Keep a replaced name until the segment is freed.
 * @locks seg->files_lock held (or seg not shared) */
static void
seg_retire_name(samsa_seg_t *seg, char *name)
{
    if (name == NULL) {
        return;
    }
    seg->old_names = samsa_realloc(seg->old_names,
                                   (seg->nold_names + 1)
                                       * sizeof(*seg->old_names));
    seg->old_names[seg->nold_names++] = name;
}

static samsa_err_t seg_activate_pinned(samsa_seg_t *seg,
                                       int32_t index_max_bytes);
static samsa_err_t seg_read_pinned(samsa_seg_t *seg, uint32_t pos,
                                   void *buf, size_t size);
static samsa_err_t seg_txn_truncate_pinned(samsa_seg_t *seg,
                                           int64_t offset);

static samsa_err_t
seg_io_error(const char *what, const char *path, int err)
{
    samsa_error("log: %s %s: %s", what, path, strerror(err));
    return SAMSA_ERR_KAFKA_STORAGE_ERROR;
}

/* An open() failed with err: out of descriptors is _NOFILE (the cache
 * evicts and retries, or refuses the request without an error line),
 * anything else a storage error. */
static samsa_err_t
seg_open_error(const char *path, int err)
{
    if (samsa_fdcache_errno_is_nofile(err)) {
        return SAMSA_ERR__NOFILE;
    }
    return seg_io_error("cannot open", path, err);
}

void
samsa_seg_path(char *buf, size_t size, const char *dir, int64_t base_offset,
               const char *suffix)
{
    snprintf(buf, size, "%s/%020" PRId64 "%s", dir, base_offset, suffix);
}

static void
seg_publish_end(samsa_seg_t *seg, int64_t next_offset, uint32_t size)
{
    uint64_t  v = (uint64_t) (next_offset - seg->base_offset) << 32 | size;

    /* pairs with the acquire in samsa_seg_end() */
    atomic_store_explicit(&seg->end, v, memory_order_release);
}

samsa_seg_end_t
samsa_seg_end(samsa_seg_t *seg)
{
    uint64_t  v = atomic_load_explicit(&seg->end, memory_order_acquire);

    return (samsa_seg_end_t) {
        .next_offset = seg->base_offset + (int64_t) (v >> 32),
        .size = (uint32_t) v,
    };
}

/* Open (or with create, create empty) the .log. */
static samsa_err_t
seg_open_log(samsa_seg_t *seg, bool create)
{
    int  flags = O_RDWR | O_CLOEXEC;

    if (create) {
        seg->fd = open(seg_log_path(seg), flags | O_CREAT | O_EXCL, 0644);
        if (seg->fd < 0 && errno == EEXIST) {
            samsa_warn("log: replacing leftover segment file %s",
                       seg_log_path(seg));
            seg->fd = open(seg_log_path(seg), flags | O_TRUNC);
        }
    } else {
        seg->fd = open(seg_log_path(seg), flags);
        if (seg->fd < 0 && errno == ENOENT) {
            return SAMSA_ERR__NOENT;
        }
    }
    if (seg->fd < 0) {
        return seg_open_error(seg_log_path(seg), errno);
    }
    return SAMSA_ERR_NONE;
}

/* "<dir>/<base><kind><suffix>", e.g. kind ".index", suffix ".cleaned". */
static void
seg_path2(char *buf, size_t size, const char *dir, int64_t base,
          const char *kind, const char *suffix)
{
    snprintf(buf, size, "%s/%020" PRId64 "%s%s", dir, base, kind, suffix);
}

/* seg's file of kind (and suffix) into path; with create a leftover one
 * is removed first. */
static void
seg_index_path(const samsa_seg_t *seg, char *path, size_t size,
               const char *kind, const char *suffix, bool create)
{
    seg_path2(path, size, seg->dir, seg->base_offset, kind, suffix);
    if (create) {
        unlink(path);
    }
}

/* Open both indexes; with create they start empty. */
static samsa_err_t
seg_open_indexes(samsa_seg_t *seg, bool create, const char *suffix)
{
    char         path[PATH_MAX];
    bool         c1, c2;
    samsa_err_t  err;

    seg_index_path(seg, path, sizeof(path), ".index", suffix, create);
    err = samsa_idx_open(&seg->idx, path, seg->base_offset, &c1);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    seg_index_path(seg, path, sizeof(path), ".timeindex", suffix, create);
    err = samsa_tidx_open(&seg->tidx, path, seg->base_offset, &c2);
    if (err != SAMSA_ERR_NONE) {
        samsa_idx_close(&seg->idx);
        return err;
    }
    seg->idx_created = !create && (c1 || c2);
    return SAMSA_ERR_NONE;
}

/* Open an existing .txnindex (a torn last entry is cut off); with create
 * a leftover one is removed.  A missing file is created on the first
 * abort.  A segment opened with a suffix (the cleaner's .cleaned output)
 * has none: the .txnindex named after its base belongs to the segment it
 * replaces (see STORAGE.md, "the cleaner and transactions"). */
static samsa_err_t
seg_open_txn(samsa_seg_t *seg, bool create, const char *suffix)
{
    char         path[PATH_MAX];
    struct stat  st;
    int          fd;
    uint32_t     n;

    if (suffix[0] != '\0') {
        return SAMSA_ERR_NONE;
    }
    samsa_seg_path(path, sizeof(path), seg->dir, seg->base_offset,
                   ".txnindex");
    if (create) {
        unlink(path);
        return SAMSA_ERR_NONE;
    }
    fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        return errno == ENOENT ? SAMSA_ERR_NONE : seg_open_error(path, errno);
    }
    if (fstat(fd, &st) != 0) {
        close(fd);
        return seg_io_error("cannot stat", path, errno);
    }
    n = (uint32_t) (st.st_size / SAMSA_SEG_TXN_ENTRY_SIZE);
    if ((off_t) n * SAMSA_SEG_TXN_ENTRY_SIZE != st.st_size) {
        samsa_warn("log: %s: cutting a torn last entry", path);
        if (ftruncate(fd, (off_t) n * SAMSA_SEG_TXN_ENTRY_SIZE) != 0) {
            close(fd);
            return seg_io_error("cannot truncate", path, errno);
        }
    }
    seg->has_txn = true;
    atomic_store(&seg->txn_fd, fd);
    atomic_store(&seg->txn_n, n);
    return SAMSA_ERR_NONE;
}

/* The first open (seg_open's flags): create or open the files, preallocate
 * an active segment's indexes.  On failure nothing is held, and a .log
 * created here is removed (so a retry after EMFILE starts clean).
 * @locks seg->files_lock held */
static samsa_err_t
seg_files_first_open(samsa_seg_t *seg)
{
    bool         create = (seg->open_flags & SAMSA_SEG_F_CREATE) != 0;
    samsa_err_t  err;

    err = seg_open_log(seg, create);
    if (err != SAMSA_ERR_NONE) {
        seg->fd = -1;
        return err;
    }
    err = seg_open_indexes(seg, create, seg->suffix);
    if (err == SAMSA_ERR_NONE) {
        err = seg_open_txn(seg, create, seg->suffix);
        if (err == SAMSA_ERR_NONE && (seg->open_flags & SAMSA_SEG_F_ACTIVE)) {
            err = seg_activate_pinned(seg, seg->open_index_max_bytes);
        }
        if (err != SAMSA_ERR_NONE) {
            samsa_idx_close(&seg->idx);
            samsa_tidx_close(&seg->tidx);
        }
    }
    if (err != SAMSA_ERR_NONE) {
        close(seg->fd);
        seg->fd = -1;
        if (create) {
            unlink(seg_log_path(seg));
        }
    }
    return err;
}

/* A later open: the files exist (under their current names); the entry
 * counts, sizes and timestamps kept in memory still hold.
 * @locks seg->files_lock held */
static samsa_err_t
seg_files_reopen(samsa_seg_t *seg)
{
    char         path[PATH_MAX];
    int          fd;
    samsa_err_t  err;

    seg->fd = open(seg_log_path(seg), O_RDWR | O_CLOEXEC);
    if (seg->fd < 0) {
        return seg_open_error(seg_log_path(seg), errno);
    }
    err = samsa_ixfile_attach(&seg->idx.file);
    if (err == SAMSA_ERR_NONE) {
        err = samsa_ixfile_attach(&seg->tidx.file);
    }
    if (err == SAMSA_ERR_NONE && seg->has_txn) {
        seg_path2(path, sizeof(path), seg->dir, seg->base_offset,
                  ".txnindex", seg->suffix);
        fd = open(path, O_RDWR | O_CLOEXEC);
        if (fd < 0) {
            err = seg_open_error(path, errno);
        } else {
            atomic_store_explicit(&seg->txn_fd, fd, memory_order_release);
        }
    }
    if (err != SAMSA_ERR_NONE) {
        samsa_ixfile_detach(&seg->idx.file);
        samsa_ixfile_detach(&seg->tidx.file);
        close(seg->fd);
        seg->fd = -1;
    }
    return err;
}

static samsa_seg_t *
seg_of_ent(samsa_fdcache_ent_t *ent)
{
    return (samsa_seg_t *) (void *) ((char *) ent
                                     - offsetof(samsa_seg_t, fdc));
}

/* fdcache open callback. */
static samsa_err_t
seg_files_open(samsa_fdcache_ent_t *ent, int *nfds, int *lowfd)
{
    samsa_seg_t  *seg = seg_of_ent(ent);
    samsa_err_t   err;

    pthread_mutex_lock(&seg->files_lock);
    if (!seg->opened) {
        err = seg_files_first_open(seg);
        seg->opened = err == SAMSA_ERR_NONE;
    } else {
        err = seg_files_reopen(seg);
    }
    pthread_mutex_unlock(&seg->files_lock);
    /* the indexes are mapped and hold no descriptor (ixfile.h) */
    *nfds = 1 + (atomic_load(&seg->txn_fd) >= 0);
    *lowfd = seg->fd;
    return err;
}

/* fdcache close callback: nobody holds a pin. */
static void
seg_files_close(samsa_fdcache_ent_t *ent)
{
    samsa_seg_t  *seg = seg_of_ent(ent);
    int           fd = atomic_exchange(&seg->txn_fd, -1);

    samsa_ixfile_detach(&seg->idx.file);
    samsa_ixfile_detach(&seg->tidx.file);
    if (fd >= 0) {
        close(fd);
    }
    if (seg->fd >= 0) {
        close(seg->fd);
        seg->fd = -1;
    }
}

static void
seg_free(samsa_seg_t *seg)
{
    if (atomic_load_explicit(&seg->held_open, memory_order_acquire)) {
        samsa_fdcache_release(&seg->fdc);
    }
    samsa_fdcache_ent_fini(&seg->fdc);
    samsa_idx_close(&seg->idx);
    samsa_tidx_close(&seg->tidx);
    pthread_mutex_destroy(&seg->files_lock);
    pthread_mutex_destroy(&seg->ts_lock);
    samsa_free(seg->suffix);
    samsa_free(seg->log_path);
    while (seg->nold_names > 0) {
        samsa_free(seg->old_names[--seg->nold_names]);
    }
    samsa_free(seg->old_names);
    samsa_free(seg->dir);
    samsa_free(seg);
}

samsa_err_t
samsa_seg_open(const char *dir, int64_t base_offset, int flags,
               int32_t index_max_bytes, int64_t now_ms, samsa_seg_t **out)
{
    return samsa_seg_open_suffixed(dir, base_offset, "", flags,
                                   index_max_bytes, now_ms, out);
}

samsa_err_t
samsa_seg_open_suffixed(const char *dir, int64_t base_offset,
                        const char *suffix, int flags,
                        int32_t index_max_bytes, int64_t now_ms,
                        samsa_seg_t **out)
{
    samsa_seg_t  *seg;
    char          path[PATH_MAX];
    samsa_err_t   err;
    bool          create = (flags & SAMSA_SEG_F_CREATE) != 0;

    *out = NULL;
    seg = samsa_calloc(1, sizeof(*seg));
    atomic_init(&seg->refcnt, 1);
    atomic_init(&seg->held_open, false);
    seg->base_offset = base_offset;
    seg->dir = samsa_strdup(dir);
    seg_path2(path, sizeof(path), dir, base_offset, ".log", suffix);
    seg->log_path = samsa_strdup(path);
    seg->suffix = samsa_strdup(suffix);
    seg->open_flags = flags;
    seg->open_index_max_bytes = index_max_bytes;
    seg->fd = -1;
    seg->max_ts = SAMSA_BATCH_NO_TIMESTAMP;
    seg->max_ts_offset = base_offset;
    seg->roll_ts = create ? SAMSA_BATCH_NO_TIMESTAMP : -2;
    seg->created_ms = now_ms;
    pthread_mutex_init(&seg->files_lock, NULL);
    pthread_mutex_init(&seg->ts_lock, NULL);
    atomic_init(&seg->end, 0);
    atomic_init(&seg->txn_fd, -1);
    atomic_init(&seg->txn_n, 0);
    samsa_fdcache_ent_init(samsa_fdcache_global(), &seg->fdc,
                           seg_files_open, seg_files_close, 1);
    err = samsa_fdcache_acquire(&seg->fdc);
    if (err != SAMSA_ERR_NONE) {
        seg_free(seg);
        return err;
    }
    samsa_fdcache_release(&seg->fdc);
    *out = seg;
    return SAMSA_ERR_NONE;
}

samsa_seg_t *
samsa_seg_ref(samsa_seg_t *seg)
{
    atomic_fetch_add_explicit(&seg->refcnt, 1, memory_order_relaxed);
    return seg;
}

void
samsa_seg_unref(samsa_seg_t *seg)
{
    if (seg == NULL
        || atomic_fetch_sub_explicit(&seg->refcnt, 1, memory_order_acq_rel)
               != 1) {
        return;
    }
    seg_free(seg);
}

void
samsa_seg_hold_open_if_shared(samsa_seg_t *seg)
{
    samsa_err_t  err;

    if (atomic_load_explicit(&seg->refcnt, memory_order_acquire) <= 1
        || atomic_load_explicit(&seg->held_open, memory_order_acquire)) {
        return;
    }
    err = samsa_seg_pin(seg);
    if (err != SAMSA_ERR_NONE) {
        samsa_warn("log: %s: cannot keep deleted segment %020" PRId64
                   " open for its readers: %s", seg->dir, seg->base_offset,
                   samsa_err_name(err));
        return;
    }
    atomic_store_explicit(&seg->held_open, true, memory_order_release);
}

samsa_err_t
samsa_seg_pin(samsa_seg_t *seg)
{
    return samsa_fdcache_acquire(&seg->fdc);
}

void
samsa_seg_unpin(samsa_seg_t *seg)
{
    samsa_fdcache_release(&seg->fdc);
}

bool
samsa_seg_is_open(samsa_seg_t *seg)
{
    return samsa_fdcache_ent_is_open(&seg->fdc);
}

int64_t
samsa_seg_base(const samsa_seg_t *seg)
{
    return seg->base_offset;
}

int
samsa_seg_fd(const samsa_seg_t *seg)
{
    return seg->fd;
}

samsa_err_t
samsa_seg_stat(samsa_seg_t *seg, struct stat *st)
{
    samsa_err_t  err = samsa_seg_pin(seg);

    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    if (fstat(seg->fd, st) != 0) {
        err = seg_io_error("cannot stat", seg_log_path(seg), errno);
    }
    samsa_seg_unpin(seg);
    return err;
}

const char *
samsa_seg_log_path(const samsa_seg_t *seg)
{
    return seg_log_path(seg);
}

bool
samsa_seg_indexes_created(const samsa_seg_t *seg)
{
    return seg->idx_created;
}

int64_t
samsa_seg_max_timestamp(samsa_seg_t *seg, int64_t *offset)
{
    int64_t  ts;

    pthread_mutex_lock(&seg->ts_lock);
    ts = seg->max_ts;
    if (offset != NULL) {
        *offset = seg->max_ts_offset;
    }
    pthread_mutex_unlock(&seg->ts_lock);
    return ts;
}

/* A batch's largest timestamp may raise the segment's.  @thread writer */
static void
seg_note_max_ts(samsa_seg_t *seg, int64_t ts, int64_t last_offset)
{
    if (ts <= seg->max_ts) {        /* the writer's own field: no lock */
        return;
    }
    pthread_mutex_lock(&seg->ts_lock);
    seg->max_ts = ts;
    seg->max_ts_offset = last_offset;
    pthread_mutex_unlock(&seg->ts_lock);
}

/* Kafka's per-batch index cadence (LogSegment.append): an offset-index
 * entry (and a time-index one) once more than interval bytes went by
 * since the last entry.  @thread writer */
static void
seg_index_batch(samsa_seg_t *seg, const samsa_batch_hdr_t *hdr, uint32_t pos,
                int32_t interval)
{
    int64_t  last = samsa_batch_last_offset(hdr);

    if (seg->roll_ts == SAMSA_BATCH_NO_TIMESTAMP && pos == 0) {
        seg->roll_ts = hdr->MaxTimestamp;
    }
    seg_note_max_ts(seg, hdr->MaxTimestamp, last);
    if (seg->since_index > (uint32_t) interval) {
        samsa_idx_append(&seg->idx, last, pos);
        samsa_tidx_maybe_append(&seg->tidx, seg->max_ts, seg->max_ts_offset,
                                false);
        seg->since_index = 0;
    }
    seg->since_index += (uint32_t) samsa_batch_size(hdr);
}

/* Warn of a full device at most every 10 s (a full disk refuses every
 * append; the log would fill with the same line). */
static void
seg_warn_nospc(const samsa_seg_t *seg, int err)
{
    static _Atomic int64_t  last_ms = INT64_MIN / 2;
    int64_t                 now = samsa_now_ms();
    int64_t                 last = atomic_load_explicit(&last_ms,
                                                        memory_order_relaxed);

    if (now - last >= 10000
        && atomic_compare_exchange_strong(&last_ms, &last, now)) {
        samsa_warn("log: cannot write %s: %s; appends are refused with "
                   "KAFKA_STORAGE_ERROR until space returns",
                   seg_log_path(seg), strerror(err));
    }
}

/* Remember that the batch of offset starts at pos (not checked: readers
 * check).  @thread any */
static void
seg_hint_put(samsa_seg_t *seg, int64_t offset, uint32_t pos)
{
    int64_t  rel = offset - seg->base_offset;

    if (rel < 0 || rel >= (int64_t) UINT32_MAX) {
        return;
    }
    atomic_store_explicit(&seg->hints[(uint64_t) rel % SEG_HINTS],
                          ((uint64_t) (rel + 1) << 32) | pos,
                          memory_order_relaxed);
}

/* Forget every hint (a truncation: positions may mean other batches). */
static void
seg_hints_clear(samsa_seg_t *seg)
{
    size_t  i;

    for (i = 0; i < SEG_HINTS; i++) {
        atomic_store_explicit(&seg->hints[i], 0, memory_order_relaxed);
    }
}

static samsa_err_t
seg_append_pinned(samsa_seg_t *seg, const uint8_t *p, size_t len,
                 int32_t index_interval_bytes)
{
    samsa_seg_end_t    end = samsa_seg_end(seg);
    samsa_batch_hdr_t  hdr;
    size_t             off;
    int64_t            next = end.next_offset;
    int                err;

    if ((uint64_t) end.size + len > UINT32_MAX) {
        return seg_io_error("segment would exceed 4 GiB:", seg_log_path(seg),
                            EFBIG);
    }
    err = samsa_write_all(seg->fd, p, len, (off_t) end.size);
    if (err != 0) {
        if (ftruncate(seg->fd, (off_t) end.size) != 0) {
            samsa_error("log: cannot cut %s back to %" PRIu32 " bytes: %s",
                        seg_log_path(seg), end.size, strerror(errno));
            return seg_io_error("cannot write", seg_log_path(seg), err);
        }
        if (err == ENOSPC || err == EDQUOT) {
            seg_warn_nospc(seg, err);
            return SAMSA_ERR__NOSPC;
        }
        return seg_io_error("cannot write", seg_log_path(seg), err);
    }
    for (off = 0; off + SAMSA_BATCH_HDR_SIZE <= len;
         off += (size_t) samsa_batch_size(&hdr)) {
        if (samsa_batch_parse(p + off, len - off, &hdr) != SAMSA_ERR_NONE) {
            break;                  /* validated by the caller: not here */
        }
        seg_index_batch(seg, &hdr, end.size + (uint32_t) off,
                        index_interval_bytes);
        seg_hint_put(seg, hdr.BaseOffset, end.size + (uint32_t) off);
        next = samsa_batch_last_offset(&hdr) + 1;
    }
    seg_publish_end(seg, next, end.size + (uint32_t) len);
    return SAMSA_ERR_NONE;
}

/* Kafka's rollingBasedTimestamp: the first batch's MaxTimestamp, read once
 * from the file for a segment opened from disk.  @thread writer */
static int64_t
seg_roll_ts(samsa_seg_t *seg)
{
    uint8_t            b[SAMSA_BATCH_HDR_SIZE];
    samsa_batch_hdr_t  hdr;

    if (seg->roll_ts == -2) {
        seg->roll_ts = SAMSA_BATCH_NO_TIMESTAMP;
        /* an evicted segment's files are closed: pin to read (a failed
         * pin reads as no timestamp, as a short file does) */
        if (samsa_seg_end(seg).size >= SAMSA_BATCH_HDR_SIZE
            && samsa_seg_pin(seg) == SAMSA_ERR_NONE) {
            if (seg_read_pinned(seg, 0, b, sizeof(b)) == SAMSA_ERR_NONE
                && samsa_batch_parse(b, sizeof(b), &hdr) == SAMSA_ERR_NONE) {
                seg->roll_ts = hdr.MaxTimestamp;
            }
            samsa_seg_unpin(seg);
        }
    }
    return seg->roll_ts;
}

bool
samsa_seg_should_roll(samsa_seg_t *seg, size_t len, int64_t max_ts,
                      int64_t last_offset, int32_t segment_bytes,
                      int64_t roll_ms, int64_t now_ms)
{
    samsa_seg_end_t  end = samsa_seg_end(seg);
    int64_t          first_ts, waited;
    int64_t          rel = last_offset - seg->base_offset;

    if ((int64_t) end.size > (int64_t) segment_bytes - (int64_t) len
        || samsa_ixfile_full(&seg->idx.file) || samsa_tidx_full(&seg->tidx)
        || rel < 0 || rel > INT32_MAX) {
        return true;
    }
    if (end.size == 0) {
        return false;
    }
    first_ts = seg_roll_ts(seg);
    waited = first_ts >= 0 ? max_ts - first_ts : now_ms - seg->created_ms;
    return waited > roll_ms;
}

static samsa_err_t
seg_seal_pinned(samsa_seg_t *seg)
{
    samsa_err_t  err;

    samsa_tidx_maybe_append(&seg->tidx, seg->max_ts, seg->max_ts_offset,
                            true);
    err = samsa_ixfile_trim(&seg->idx.file);
    if (err == SAMSA_ERR_NONE) {
        err = samsa_ixfile_trim(&seg->tidx.file);
    }
    return err;
}

static samsa_err_t
seg_activate_pinned(samsa_seg_t *seg, int32_t index_max_bytes)
{
    samsa_err_t  err;

    err = samsa_ixfile_resize(&seg->idx.file, (size_t) index_max_bytes);
    if (err == SAMSA_ERR_NONE) {
        err = samsa_ixfile_resize(&seg->tidx.file, (size_t) index_max_bytes);
    }
    return err;
}

static samsa_err_t
seg_read_pinned(samsa_seg_t *seg, uint32_t pos, void *buf, size_t size)
{
    uint8_t  *p = buf;
    ssize_t   n;

    while (size > 0) {
        n = pread(seg->fd, p, size, (off_t) pos);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return seg_io_error("cannot read", seg_log_path(seg),
                                n < 0 ? errno : EIO);
        }
        p += n;
        size -= (size_t) n;
        pos += (uint32_t) n;
    }
    return SAMSA_ERR_NONE;
}

/* The header of the batch at pos, which must end by limit.  A header that
 * does not parse is reported as corrupt (the caller stops). */
static samsa_err_t
seg_read_hdr(samsa_seg_t *seg, uint32_t pos, uint32_t limit,
             samsa_batch_hdr_t *hdr)
{
    uint8_t      b[SAMSA_BATCH_HDR_SIZE];
    samsa_err_t  err;

    if ((uint64_t) pos + SAMSA_BATCH_HDR_SIZE > limit) {
        return SAMSA_ERR__NOENT;
    }
    err = seg_read_pinned(seg, pos, b, sizeof(b));
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    if (samsa_batch_parse(b, sizeof(b), hdr) != SAMSA_ERR_NONE
        || (uint64_t) pos + (uint64_t) samsa_batch_size(hdr) > limit) {
        samsa_error("log: bad batch header at position %" PRIu32 " of %s",
                    pos, seg_log_path(seg));
        return SAMSA_ERR_KAFKA_STORAGE_ERROR;
    }
    return SAMSA_ERR_NONE;
}

static samsa_err_t
seg_batch_at_pinned(samsa_seg_t *seg, uint32_t pos, uint32_t limit,
                   samsa_batch_hdr_t *hdr)
{
    return seg_read_hdr(seg, pos, limit, hdr);
}

/* The batch of offset found from its hint: the header at the hinted
 * position read, parsed, starting exactly at offset and ending by limit.
 * false (nothing logged) when there is no hint or it does not hold; the
 * caller then walks from the index. */
static bool
seg_hint_find(samsa_seg_t *seg, int64_t offset, uint32_t limit,
              samsa_seg_pos_t *out)
{
    int64_t   rel = offset - seg->base_offset;
    uint64_t  h;
    uint32_t  pos;
    uint8_t   b[SAMSA_BATCH_HDR_SIZE];

    if (rel < 0 || rel >= (int64_t) UINT32_MAX) {
        return false;
    }
    h = atomic_load_explicit(&seg->hints[(uint64_t) rel % SEG_HINTS],
                             memory_order_relaxed);
    pos = (uint32_t) h;
    if ((h >> 32) != (uint64_t) (rel + 1)
        || (uint64_t) pos + SAMSA_BATCH_HDR_SIZE > limit
        || seg_read_pinned(seg, pos, b, sizeof(b)) != SAMSA_ERR_NONE
        || samsa_batch_parse(b, sizeof(b), &out->hdr) != SAMSA_ERR_NONE
        || out->hdr.BaseOffset != offset
        || (uint64_t) pos + (uint64_t) samsa_batch_size(&out->hdr) > limit) {
        return false;
    }
    out->pos = pos;
    return true;
}

/* Walk batch headers from pos until match() accepts one. */
static samsa_err_t
seg_walk(samsa_seg_t *seg, uint32_t pos, uint32_t limit,
         bool (*match)(const samsa_batch_hdr_t *hdr, const int64_t *key),
         const int64_t *key, samsa_seg_pos_t *out)
{
    samsa_err_t  err;

    for (;;) {
        err = seg_read_hdr(seg, pos, limit, &out->hdr);
        if (err != SAMSA_ERR_NONE) {
            return err;
        }
        if (match(&out->hdr, key)) {
            out->pos = pos;
            return SAMSA_ERR_NONE;
        }
        pos += (uint32_t) samsa_batch_size(&out->hdr);
    }
}

static bool
seg_match_offset(const samsa_batch_hdr_t *hdr, const int64_t *key)
{
    return samsa_batch_last_offset(hdr) >= key[0];
}

static samsa_err_t
seg_find_offset_pinned(samsa_seg_t *seg, int64_t offset, uint32_t limit,
                      samsa_seg_pos_t *out)
{
    samsa_idx_entry_t  e;
    int64_t            key[1] = { offset };
    samsa_err_t        err = SAMSA_ERR_NONE;

    if (!seg_hint_find(seg, offset, limit, out)) {
        e = samsa_idx_lookup(&seg->idx, offset);
        if (e.pos >= limit) {
            e.pos = 0;              /* past a truncation: start over */
        }
        err = seg_walk(seg, e.pos, limit, seg_match_offset, key, out);
    }
    if (err == SAMSA_ERR_NONE) {
        /* where a reader of this batch asks next */
        seg_hint_put(seg, samsa_batch_last_offset(&out->hdr) + 1,
                     out->pos + (uint32_t) samsa_batch_size(&out->hdr));
    }
    return err;
}

static bool
seg_match_ts(const samsa_batch_hdr_t *hdr, const int64_t *key)
{
    return hdr->MaxTimestamp >= key[0]
           && samsa_batch_last_offset(hdr) >= key[1];
}

static samsa_err_t
seg_find_timestamp_pinned(samsa_seg_t *seg, int64_t timestamp,
                         int64_t min_offset, uint32_t limit,
                         samsa_seg_pos_t *out)
{
    samsa_tidx_entry_t  te = samsa_tidx_lookup(&seg->tidx, timestamp);
    samsa_idx_entry_t   e;
    int64_t             key[2] = { timestamp, min_offset };

    /* Batches before te.offset's all have smaller timestamps (entries are
     * added when the largest timestamp grows): start at the index entry
     * at or below the larger of te.offset and min_offset, as Kafka does. */
    e = samsa_idx_lookup(&seg->idx, te.offset > min_offset ? te.offset
                                                           : min_offset);
    if (e.pos >= limit) {
        e.pos = 0;
    }
    return seg_walk(seg, e.pos, limit, seg_match_ts, key, out);
}

/* ---- scan (recovery) ----------------------------------------------------- */

/* One batch of the scan at pos: read it whole into *buf and check it.
 * @returns NULL if good, else why not. */
static const char *
seg_scan_batch(samsa_seg_t *seg, uint32_t pos, uint64_t file_bytes,
               int64_t prev_next, samsa_batch_hdr_t *hdr, uint8_t **buf,
               size_t *cap)
{
    int64_t  size;

    if (file_bytes - pos < SAMSA_BATCH_LOG_OVERHEAD) {
        return "torn batch (partial size field)";
    }
    if (seg_read_pinned(seg, pos, *buf,
                       file_bytes - pos < SAMSA_BATCH_HDR_SIZE
                           ? file_bytes - pos : SAMSA_BATCH_HDR_SIZE)
            != SAMSA_ERR_NONE) {
        return "read error";
    }
    size = (int64_t) (int32_t) samsa_load_be32(*buf + 8) + 12;
    if (size < SAMSA_BATCH_HDR_SIZE) {
        return "batch size below the header size";
    }
    if ((uint64_t) size > file_bytes - pos) {
        return "torn batch (extends past the end of the file)";
    }
    if (samsa_batch_parse(*buf, SAMSA_BATCH_HDR_SIZE, hdr) != SAMSA_ERR_NONE) {
        return "bad batch header (magic)";
    }
    if ((size_t) size > *cap) {
        *cap = (size_t) size;
        *buf = samsa_realloc(*buf, *cap);
    }
    if (seg_read_pinned(seg, pos, *buf, (size_t) size) != SAMSA_ERR_NONE) {
        return "read error";
    }
    if (!samsa_batch_crc_ok(*buf, (size_t) size)) {
        return "CRC mismatch";
    }
    if (hdr->LastOffsetDelta < 0 || hdr->BaseOffset < prev_next
        || samsa_batch_last_offset(hdr) - seg->base_offset > INT32_MAX) {
        return "offsets out of order or outside the segment";
    }
    return NULL;
}

/* Empty both indexes and the segment's timestamps, for a rebuild. */
static void
seg_index_reset(samsa_seg_t *seg)
{
    samsa_ixfile_truncate(&seg->idx.file, 0);
    samsa_ixfile_truncate(&seg->tidx.file, 0);
    pthread_mutex_lock(&seg->ts_lock);
    seg->max_ts = SAMSA_BATCH_NO_TIMESTAMP;
    seg->max_ts_offset = seg->base_offset;
    pthread_mutex_unlock(&seg->ts_lock);
    seg->since_index = 0;
    seg->roll_ts = SAMSA_BATCH_NO_TIMESTAMP;
}

/* Take the largest timestamp from the time index's last entry. */
static void
seg_max_ts_from_index(samsa_seg_t *seg)
{
    samsa_tidx_entry_t  te = samsa_tidx_last(&seg->tidx);

    pthread_mutex_lock(&seg->ts_lock);
    seg->max_ts = te.timestamp;
    seg->max_ts_offset = te.offset;
    pthread_mutex_unlock(&seg->ts_lock);
}

static samsa_err_t
seg_scan_pinned(samsa_seg_t *seg, uint32_t pos, int64_t from_offset,
               bool rebuild, int32_t index_interval_bytes,
               samsa_seg_scan_t *res)
{
    struct stat        st;
    samsa_batch_hdr_t  hdr;
    size_t             cap = 64 * 1024;
    uint8_t           *buf;
    uint64_t           limit;

    memset(res, 0, sizeof(*res));
    if (fstat(seg->fd, &st) != 0) {
        return seg_io_error("cannot stat", seg_log_path(seg), errno);
    }
    res->file_bytes = (uint64_t) st.st_size;
    if (rebuild) {
        seg_index_reset(seg);
        pos = 0;
        from_offset = seg->base_offset;
    } else {
        seg_max_ts_from_index(seg);
    }
    res->next_offset = from_offset;
    limit = res->file_bytes > INT32_MAX ? INT32_MAX : res->file_bytes;
    buf = samsa_malloc(cap);
    while (pos < limit) {
        res->stop = seg_scan_batch(seg, pos, limit, res->next_offset, &hdr,
                                   &buf, &cap);
        if (res->stop != NULL) {
            break;
        }
        if (rebuild) {
            seg_index_batch(seg, &hdr, pos, index_interval_bytes);
        } else {
            seg_note_max_ts(seg, hdr.MaxTimestamp,
                            samsa_batch_last_offset(&hdr));
        }
        res->next_offset = samsa_batch_last_offset(&hdr) + 1;
        res->nbatches++;
        pos += (uint32_t) samsa_batch_size(&hdr);
    }
    samsa_free(buf);
    if (res->stop == NULL && pos < res->file_bytes) {
        res->stop = "segment larger than 2 GiB";
    }
    res->valid_bytes = pos;
    seg_publish_end(seg, res->next_offset, res->valid_bytes);
    return SAMSA_ERR_NONE;
}

static void
seg_set_end_pinned(samsa_seg_t *seg, int64_t next_offset, uint32_t size)
{
    seg_max_ts_from_index(seg);
    seg_publish_end(seg, next_offset, size);
}

static bool
seg_indexes_sane_pinned(samsa_seg_t *seg, int64_t next_offset, uint32_t size,
                       bool full)
{
    return samsa_idx_sane(&seg->idx, next_offset, size, full)
           && samsa_tidx_sane(&seg->tidx, next_offset, full);
}

static samsa_idx_entry_t
seg_last_index_entry_pinned(samsa_seg_t *seg)
{
    return samsa_idx_last(&seg->idx);
}

static samsa_err_t
seg_truncate_pinned(samsa_seg_t *seg, uint32_t pos, int64_t next_offset)
{
    samsa_idx_entry_t  last;
    samsa_err_t        err;

    seg_hints_clear(seg);
    if (ftruncate(seg->fd, (off_t) pos) != 0) {
        return seg_io_error("cannot truncate", seg_log_path(seg), errno);
    }
    err = seg_txn_truncate_pinned(seg, next_offset);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    samsa_idx_truncate_to(&seg->idx, next_offset);
    samsa_tidx_truncate_to(&seg->tidx, next_offset);
    seg_max_ts_from_index(seg);
    last = samsa_idx_last(&seg->idx);
    seg->since_index = pos - last.pos;
    if (pos == 0) {
        seg->roll_ts = SAMSA_BATCH_NO_TIMESTAMP;
    }
    seg_publish_end(seg, next_offset, pos);
    return SAMSA_ERR_NONE;
}

static samsa_err_t
seg_flush_data_pinned(samsa_seg_t *seg)
{
    if (fdatasync(seg->fd) != 0) {
        return seg_io_error("cannot fdatasync", seg_log_path(seg), errno);
    }
    return SAMSA_ERR_NONE;
}

static samsa_err_t
seg_flush_pinned(samsa_seg_t *seg)
{
    samsa_err_t  err;
    int          fd;

    err = seg_flush_data_pinned(seg);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    err = samsa_ixfile_flush(&seg->idx.file);
    if (err == SAMSA_ERR_NONE) {
        err = samsa_ixfile_flush(&seg->tidx.file);
    }
    fd = atomic_load_explicit(&seg->txn_fd, memory_order_acquire);
    if (err == SAMSA_ERR_NONE && fd >= 0 && fdatasync(fd) != 0) {
        err = seg_io_error("cannot fdatasync the .txnindex of",
                           seg_log_path(seg), errno);
    }
    return err;
}

static const char *const seg_suffixes[] = { ".log", ".index", ".timeindex",
                                            ".txnindex" };

/* The indexes' paths after a rename to suffix.  @locks seg->files_lock */
static void
seg_set_suffix(samsa_seg_t *seg, const char *suffix)
{
    char  path[PATH_MAX];

    seg_path2(path, sizeof(path), seg->dir, seg->base_offset, ".log",
              suffix);
    seg_retire_name(seg, seg->log_path);
    __atomic_store_n(&seg->log_path, samsa_strdup(path), __ATOMIC_RELEASE);
    seg_path2(path, sizeof(path), seg->dir, seg->base_offset, ".index",
              suffix);
    seg_retire_name(seg, samsa_ixfile_set_path(&seg->idx.file, path));
    seg_path2(path, sizeof(path), seg->dir, seg->base_offset, ".timeindex",
              suffix);
    seg_retire_name(seg, samsa_ixfile_set_path(&seg->tidx.file, path));
    samsa_free(seg->suffix);
    seg->suffix = samsa_strdup(suffix);
}

samsa_err_t
samsa_seg_mark_deleted(samsa_seg_t *seg)
{
    char         from[PATH_MAX], to[PATH_MAX + 8];
    size_t       i;
    samsa_err_t  err = SAMSA_ERR_NONE;

    /* under files_lock: a reopen meanwhile (a fetch of this segment)
     * sees either all the old names or all the new ones */
    pthread_mutex_lock(&seg->files_lock);
    for (i = 0; i < sizeof(seg_suffixes) / sizeof(seg_suffixes[0]); i++) {
        samsa_seg_path(from, sizeof(from), seg->dir, seg->base_offset,
                       seg_suffixes[i]);
        snprintf(to, sizeof(to), "%s.deleted", from);
        if (rename(from, to) != 0 && errno != ENOENT) {
            err = seg_io_error("cannot rename", from, errno);
            break;
        }
    }
    if (i > 0) {
        /* some went: a reopen must look for the .deleted names (a
         * failed rename left the rest, which recovery sorts out) */
        seg_set_suffix(seg, ".deleted");
    }
    pthread_mutex_unlock(&seg->files_lock);
    return err;
}

samsa_err_t
samsa_seg_rename_suffix(samsa_seg_t *seg, const char *from, const char *to)
{
    static const char *const  kinds[] = { ".index", ".timeindex", ".log" };
    char                      a[PATH_MAX], b[PATH_MAX];
    size_t                    i;
    samsa_err_t               err = SAMSA_ERR_NONE;

    pthread_mutex_lock(&seg->files_lock);
    for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        seg_path2(a, sizeof(a), seg->dir, seg->base_offset, kinds[i], from);
        seg_path2(b, sizeof(b), seg->dir, seg->base_offset, kinds[i], to);
        if (rename(a, b) != 0) {
            err = seg_io_error("cannot rename", a, errno);
            break;
        }
    }
    if (err == SAMSA_ERR_NONE) {
        seg_set_suffix(seg, to);
    }
    pthread_mutex_unlock(&seg->files_lock);
    return err;
}

void
samsa_seg_unlink_files(const char *dir, int64_t base_offset,
                       const char *suffix)
{
    char    name[32], path[PATH_MAX];
    size_t  i;

    for (i = 0; i < sizeof(seg_suffixes) / sizeof(seg_suffixes[0]); i++) {
        snprintf(name, sizeof(name), "%s%s", seg_suffixes[i], suffix);
        samsa_seg_path(path, sizeof(path), dir, base_offset, name);
        if (unlink(path) != 0 && errno != ENOENT) {
            samsa_warn("log: cannot delete %s: %s", path, strerror(errno));
        }
    }
}

/* ---- transaction index ---------------------------------------------------- */

/* Entries in the transaction index. */
static uint32_t
seg_txn_count(samsa_seg_t *seg)
{
    return atomic_load_explicit(&seg->txn_n, memory_order_acquire);
}

static samsa_err_t
seg_txn_append_pinned(samsa_seg_t *seg, const samsa_seg_aborted_t *a)
{
    uint8_t   b[SAMSA_SEG_TXN_ENTRY_SIZE];
    char      path[PATH_MAX];
    int       fd = atomic_load_explicit(&seg->txn_fd, memory_order_relaxed);
    uint32_t  n = atomic_load_explicit(&seg->txn_n, memory_order_relaxed);
    int       err;

    samsa_seg_path(path, sizeof(path), seg->dir, seg->base_offset,
                   ".txnindex");
    if (fd < 0) {
        fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 && samsa_fdcache_errno_is_nofile(errno)) {
            samsa_fdcache_note_exhausted(seg->fdc.cache, path);
            return SAMSA_ERR__NOFILE;
        }
        if (fd < 0) {
            return seg_io_error("cannot create", path, errno);
        }
        seg->has_txn = true;
        atomic_store_explicit(&seg->txn_fd, fd, memory_order_release);
        samsa_fdcache_add_fds(&seg->fdc, 1);
    }
    samsa_store_be16(b, 0);
    samsa_store_be64(b + 2, (uint64_t) a->producer_id);
    samsa_store_be64(b + 10, (uint64_t) a->first_offset);
    samsa_store_be64(b + 18, (uint64_t) a->last_offset);
    samsa_store_be64(b + 26, (uint64_t) a->last_stable_offset);
    err = samsa_write_all(fd, b, sizeof(b),
                          (off_t) n * SAMSA_SEG_TXN_ENTRY_SIZE);
    if (err != 0) {
        return seg_io_error("cannot write", path, err);
    }
    /* pairs with the acquire in samsa_seg_txn_collect() */
    atomic_store_explicit(&seg->txn_n, n + 1, memory_order_release);
    return SAMSA_ERR_NONE;
}

static samsa_err_t
seg_txn_read(samsa_seg_t *seg, int fd, uint32_t i, samsa_seg_aborted_t *a)
{
    uint8_t  b[SAMSA_SEG_TXN_ENTRY_SIZE];
    ssize_t  got;

    got = pread(fd, b, sizeof(b), (off_t) i * SAMSA_SEG_TXN_ENTRY_SIZE);
    if (got != (ssize_t) sizeof(b)) {
        return seg_io_error("cannot read the .txnindex of", seg_log_path(seg),
                            got < 0 ? errno : EIO);
    }
    a->producer_id = (int64_t) samsa_load_be64(b + 2);
    a->first_offset = (int64_t) samsa_load_be64(b + 10);
    a->last_offset = (int64_t) samsa_load_be64(b + 18);
    a->last_stable_offset = (int64_t) samsa_load_be64(b + 26);
    return SAMSA_ERR_NONE;
}

static samsa_err_t
seg_txn_truncate_pinned(samsa_seg_t *seg, int64_t offset)
{
    samsa_seg_aborted_t  a;
    uint32_t             n = seg_txn_count(seg), keep = 0;
    int                  fd = atomic_load(&seg->txn_fd);
    samsa_err_t          err;

    if (fd < 0) {
        return SAMSA_ERR_NONE;
    }
    for (keep = 0; keep < n; keep++) {
        err = seg_txn_read(seg, fd, keep, &a);
        if (err != SAMSA_ERR_NONE) {
            return err;
        }
        if (a.last_offset >= offset) {
            break;
        }
    }
    if (keep == n) {
        return SAMSA_ERR_NONE;
    }
    atomic_store_explicit(&seg->txn_n, keep, memory_order_release);
    if (ftruncate(fd, (off_t) keep * SAMSA_SEG_TXN_ENTRY_SIZE) != 0) {
        return seg_io_error("cannot truncate the .txnindex of",
                            seg_log_path(seg), errno);
    }
    return SAMSA_ERR_NONE;
}

static samsa_err_t
seg_txn_collect_pinned(samsa_seg_t *seg, int64_t fetch_offset, int64_t upper,
                      samsa_seg_aborted_fn_t *fn, void *ctx, bool *complete)
{
    samsa_seg_aborted_t  a;
    uint32_t             n = seg_txn_count(seg), i;
    int                  fd = atomic_load_explicit(&seg->txn_fd,
                                                   memory_order_acquire);
    samsa_err_t          err;

    *complete = false;
    for (i = 0; i < n && fd >= 0; i++) {
        err = seg_txn_read(seg, fd, i, &a);
        if (err != SAMSA_ERR_NONE) {
            return err;
        }
        if (a.last_offset >= fetch_offset && a.first_offset < upper
            && !fn(ctx, &a)) {
            return SAMSA_ERR_NONE;
        }
        if (a.last_stable_offset >= upper) {
            *complete = true;
            return SAMSA_ERR_NONE;
        }
    }
    return SAMSA_ERR_NONE;
}

/* ---- pinned entry points -------------------------------------------------
 * Each public operation on the files pins the segment around its work
 * (nested pins just count), so the descriptor cache never closes a file
 * in use.  Out of descriptors is SAMSA_ERR__NOFILE. */

samsa_err_t
samsa_seg_append(samsa_seg_t *seg, const uint8_t *p, size_t len,
                 int32_t index_interval_bytes)
{
    samsa_err_t  err = samsa_seg_pin(seg);

    if (err == SAMSA_ERR_NONE) {
        err = seg_append_pinned(seg, p, len, index_interval_bytes);
        samsa_seg_unpin(seg);
    }
    return err;
}

samsa_err_t
samsa_seg_seal(samsa_seg_t *seg)
{
    samsa_err_t  err = samsa_seg_pin(seg);

    if (err == SAMSA_ERR_NONE) {
        err = seg_seal_pinned(seg);
        samsa_seg_unpin(seg);
    }
    return err;
}

samsa_err_t
samsa_seg_activate(samsa_seg_t *seg, int32_t index_max_bytes)
{
    samsa_err_t  err = samsa_seg_pin(seg);

    if (err == SAMSA_ERR_NONE) {
        err = seg_activate_pinned(seg, index_max_bytes);
        samsa_seg_unpin(seg);
    }
    return err;
}

samsa_err_t
samsa_seg_read(samsa_seg_t *seg, uint32_t pos, void *buf, size_t size)
{
    samsa_err_t  err = samsa_seg_pin(seg);

    if (err == SAMSA_ERR_NONE) {
        err = seg_read_pinned(seg, pos, buf, size);
        samsa_seg_unpin(seg);
    }
    return err;
}

samsa_err_t
samsa_seg_batch_at(samsa_seg_t *seg, uint32_t pos, uint32_t limit,
                   samsa_batch_hdr_t *hdr)
{
    samsa_err_t  err = samsa_seg_pin(seg);

    if (err == SAMSA_ERR_NONE) {
        err = seg_batch_at_pinned(seg, pos, limit, hdr);
        samsa_seg_unpin(seg);
    }
    return err;
}

samsa_err_t
samsa_seg_find_offset(samsa_seg_t *seg, int64_t offset, uint32_t limit,
                      samsa_seg_pos_t *out)
{
    samsa_err_t  err = samsa_seg_pin(seg);

    if (err == SAMSA_ERR_NONE) {
        err = seg_find_offset_pinned(seg, offset, limit, out);
        samsa_seg_unpin(seg);
    }
    return err;
}

samsa_err_t
samsa_seg_find_timestamp(samsa_seg_t *seg, int64_t timestamp,
                         int64_t min_offset, uint32_t limit,
                         samsa_seg_pos_t *out)
{
    samsa_err_t  err = samsa_seg_pin(seg);

    if (err == SAMSA_ERR_NONE) {
        err = seg_find_timestamp_pinned(seg, timestamp, min_offset, limit,
                                        out);
        samsa_seg_unpin(seg);
    }
    return err;
}

samsa_err_t
samsa_seg_scan(samsa_seg_t *seg, uint32_t pos, int64_t from_offset,
               bool rebuild, int32_t index_interval_bytes,
               samsa_seg_scan_t *res)
{
    samsa_err_t  err = samsa_seg_pin(seg);

    if (err == SAMSA_ERR_NONE) {
        err = seg_scan_pinned(seg, pos, from_offset, rebuild,
                              index_interval_bytes, res);
        samsa_seg_unpin(seg);
    }
    return err;
}

void
samsa_seg_set_end(samsa_seg_t *seg, int64_t next_offset, uint32_t size)
{
    if (samsa_seg_pin(seg) == SAMSA_ERR_NONE) {
        seg_set_end_pinned(seg, next_offset, size);
        samsa_seg_unpin(seg);
    } else {
        seg_publish_end(seg, next_offset, size);   /* no timestamp */
    }
}

bool
samsa_seg_indexes_sane(samsa_seg_t *seg, int64_t next_offset, uint32_t size,
                       bool full)
{
    bool  sane = false;

    if (samsa_seg_pin(seg) == SAMSA_ERR_NONE) {
        sane = seg_indexes_sane_pinned(seg, next_offset, size, full);
        samsa_seg_unpin(seg);
    }
    return sane;
}

samsa_idx_entry_t
samsa_seg_last_index_entry(samsa_seg_t *seg)
{
    samsa_idx_entry_t  e = { .offset = seg->base_offset, .pos = 0 };

    if (samsa_seg_pin(seg) == SAMSA_ERR_NONE) {
        e = seg_last_index_entry_pinned(seg);
        samsa_seg_unpin(seg);
    }
    return e;
}

samsa_err_t
samsa_seg_truncate(samsa_seg_t *seg, uint32_t pos, int64_t next_offset)
{
    samsa_err_t  err = samsa_seg_pin(seg);

    if (err == SAMSA_ERR_NONE) {
        err = seg_truncate_pinned(seg, pos, next_offset);
        samsa_seg_unpin(seg);
    }
    return err;
}

samsa_err_t
samsa_seg_flush_data(samsa_seg_t *seg)
{
    samsa_err_t  err = samsa_seg_pin(seg);

    if (err == SAMSA_ERR_NONE) {
        err = seg_flush_data_pinned(seg);
        samsa_seg_unpin(seg);
    }
    return err;
}

samsa_err_t
samsa_seg_flush(samsa_seg_t *seg)
{
    samsa_err_t  err = samsa_seg_pin(seg);

    if (err == SAMSA_ERR_NONE) {
        err = seg_flush_pinned(seg);
        samsa_seg_unpin(seg);
    }
    return err;
}

samsa_err_t
samsa_seg_txn_append(samsa_seg_t *seg, const samsa_seg_aborted_t *a)
{
    samsa_err_t  err = samsa_seg_pin(seg);

    if (err == SAMSA_ERR_NONE) {
        err = seg_txn_append_pinned(seg, a);
        samsa_seg_unpin(seg);
    }
    return err;
}

samsa_err_t
samsa_seg_txn_truncate(samsa_seg_t *seg, int64_t offset)
{
    samsa_err_t  err = samsa_seg_pin(seg);

    if (err == SAMSA_ERR_NONE) {
        err = seg_txn_truncate_pinned(seg, offset);
        samsa_seg_unpin(seg);
    }
    return err;
}

samsa_err_t
samsa_seg_txn_collect(samsa_seg_t *seg, int64_t fetch_offset, int64_t upper,
                      samsa_seg_aborted_fn_t *fn, void *ctx, bool *complete)
{
    samsa_err_t  err;

    *complete = false;
    if (atomic_load_explicit(&seg->txn_n, memory_order_acquire) == 0) {
        return SAMSA_ERR_NONE;      /* nothing to read: no file needed */
    }
    err = samsa_seg_pin(seg);
    if (err == SAMSA_ERR_NONE) {
        err = seg_txn_collect_pinned(seg, fetch_offset, upper, fn, ctx,
                                     complete);
        samsa_seg_unpin(seg);
    }
    return err;
}
