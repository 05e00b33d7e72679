/*
 * log/plog_pstate.c - a partition log's producer state on disk and in
 * reads: the <offset>.snapshot files (written at roll and clean close,
 * deleted with their segment), loading them and replaying the log after
 * them (which also rebuilds the transaction indexes), the last stable
 * offset, the aborted transactions of a read_committed fetch, expiry and
 * the list for DescribeProducers (see plog.h, plog_int.h, pstate.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log/ckpt.h"
#include "log/plog.h"
#include "log/plog_int.h"
#include "log/pstate.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/diag.h"
#include "util/fsutil.h"

#define PSTATE_SUFFIX ".snapshot"
#define PSTATE_MAX_FILE (64 * 1024 * 1024)  /* refuse larger snapshots */
#define PSTATE_MAX_CONTROL (1 << 20)        /* a marker batch is tiny */

static void
pstate_path(char *buf, size_t size, const samsa_plog_t *plog, int64_t offset,
            const char *suffix)
{
    snprintf(buf, size, "%s/%020" PRId64 PSTATE_SUFFIX "%s", plog->dir,
             offset, suffix);
}

/* ---- writing --------------------------------------------------------------- */

static samsa_err_t
pstate_write_file(const char *path, const uint8_t *p, size_t len, bool sync)
{
    int  fd, err;

    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        samsa_error("log: cannot create %s: %s", path, strerror(errno));
        return SAMSA_ERR_KAFKA_STORAGE_ERROR;
    }
    err = samsa_write_all(fd, p, len, -1);
    if (err != 0) {
        samsa_error("log: cannot write %s: %s", path, strerror(err));
        close(fd);
        return SAMSA_ERR_KAFKA_STORAGE_ERROR;
    }
    if (sync && fdatasync(fd) != 0) {
        samsa_error("log: cannot fdatasync %s: %s", path, strerror(errno));
        close(fd);
        return SAMSA_ERR_KAFKA_STORAGE_ERROR;
    }
    close(fd);
    return SAMSA_ERR_NONE;
}

bool
samsa_plog_pstate_snapshot_due(samsa_plog_t *plog)
{
    char         path[PATH_MAX];
    struct stat  st;

    /* As Kafka, only when something was appended since the last one: an
     * empty log has nothing to replay, and a snapshot at the LEO already
     * holds this state (a node with thousands of idle partitions would
     * otherwise spend its shutdown in fdatasync) */
    if (plog->leo <= atomic_load(&plog->log_start)) {
        return false;
    }
    pstate_path(path, sizeof(path), plog, plog->leo, "");
    return stat(path, &st) != 0;
}

samsa_err_t
samsa_plog_pstate_snapshot(samsa_plog_t *plog, bool sync)
{
    samsa_buf_t  buf = SAMSA_BUF_INIT;
    char         tmp[PATH_MAX], path[PATH_MAX];
    samsa_err_t  err;

    pstate_path(path, sizeof(path), plog, plog->leo, "");
    pstate_path(tmp, sizeof(tmp), plog, plog->leo, ".tmp");
    samsa_pstate_encode(plog->ps, &buf);
    err = pstate_write_file(tmp, buf.data, buf.len, sync);
    samsa_buf_fini(&buf);
    if (err == SAMSA_ERR_NONE && rename(tmp, path) != 0) {
        samsa_error("log: cannot rename %s: %s", tmp, strerror(errno));
        err = SAMSA_ERR_KAFKA_STORAGE_ERROR;
    }
    if (err == SAMSA_ERR_NONE && sync) {
        err = samsa_ckpt_fsync_dir(plog->dir);
    }
    if (err != SAMSA_ERR_NONE) {
        unlink(tmp);
        samsa_warn("log: %s: no producer state snapshot at %" PRId64
                   "; the next start replays the log instead", plog->dir,
                   plog->leo);
    }
    plog->dir_dirty = true;
    return err;
}

void
samsa_plog_pstate_publish(samsa_plog_t *plog)
{
    int64_t  fu = samsa_pstate_first_unstable(plog->ps);

    /* pairs with the acquire in samsa_plog_last_stable_offset(), which
     * loads the high watermark first */
    atomic_store_explicit(&plog->first_unstable, fu < 0 ? INT64_MAX : fu,
                          memory_order_release);
}

samsa_err_t
samsa_plog_pstate_index(samsa_plog_t *plog, samsa_seg_t *seg,
                        const samsa_pstate_change_t *ch)
{
    samsa_seg_aborted_t  a;
    samsa_err_t          err;
    size_t               i;

    for (i = 0; i < ch->ndone; i++) {
        if (!ch->done[i].aborted) {
            continue;
        }
        a = (samsa_seg_aborted_t) {
            .producer_id = ch->done[i].producer_id,
            .first_offset = ch->done[i].first_offset,
            .last_offset = ch->done[i].last_offset,
            .last_stable_offset = samsa_pstate_lso_after(plog->ps,
                                                         &ch->done[i]),
        };
        err = samsa_seg_txn_append(seg, &a);
        if (err != SAMSA_ERR_NONE) {
            return err;
        }
    }
    return SAMSA_ERR_NONE;
}

/* ---- loading ----------------------------------------------------------- */

static int
pstate_cmp(const void *a, const void *b)
{
    int64_t  x = *(const int64_t *) a, y = *(const int64_t *) b;

    return (x > y) - (x < y);
}

/* The snapshot offsets in the directory, ascending. */
static samsa_err_t
pstate_list(const samsa_plog_t *plog, int64_t **out, size_t *n)
{
    DIR            *d;
    struct dirent  *de;
    size_t          cap = 0, len;
    int64_t         v;
    char           *end;

    *out = NULL;
    *n = 0;
    d = opendir(plog->dir);
    if (d == NULL) {
        samsa_error("log: cannot open directory %s: %s", plog->dir,
                    strerror(errno));
        return SAMSA_ERR_KAFKA_STORAGE_ERROR;
    }
    while ((de = readdir(d)) != NULL) {
        len = strlen(de->d_name);
        if (len != 20 + strlen(PSTATE_SUFFIX)
            || strcmp(de->d_name + 20, PSTATE_SUFFIX) != 0
            || de->d_name[0] < '0' || de->d_name[0] > '9') {
            continue;
        }
        errno = 0;
        v = strtoll(de->d_name, &end, 10);
        if (errno != 0 || end != de->d_name + 20 || v < 0) {
            continue;
        }
        if (*n == cap) {
            cap = cap ? cap * 2 : 8;
            *out = samsa_realloc(*out, cap * sizeof(**out));
        }
        (*out)[(*n)++] = v;
    }
    closedir(d);
    if (*n > 1) {
        qsort(*out, *n, sizeof(**out), pstate_cmp);
    }
    return SAMSA_ERR_NONE;
}

void
samsa_plog_pstate_drop_snapshots(samsa_plog_t *plog, int64_t offset)
{
    int64_t  *offs;
    size_t    n, i;
    char      path[PATH_MAX];

    if (pstate_list(plog, &offs, &n) != SAMSA_ERR_NONE) {
        return;                     /* reported; removed at a later pass */
    }
    for (i = 0; i < n && offs[i] < offset; i++) {
        pstate_path(path, sizeof(path), plog, offs[i], "");
        if (unlink(path) != 0 && errno != ENOENT) {
            samsa_warn("log: cannot delete %s: %s", path, strerror(errno));
        }
    }
    samsa_free(offs);
}

/* Read and decode one snapshot file into plog->ps. */
static samsa_err_t
pstate_read(samsa_plog_t *plog, const char *path)
{
    struct stat  st;
    uint8_t     *buf;
    ssize_t      got;
    size_t       done = 0;
    int          fd;
    samsa_err_t  err;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) != 0) {
        samsa_warn("log: cannot read %s: %s", path, strerror(errno));
        if (fd >= 0) {
            close(fd);
        }
        return SAMSA_ERR_KAFKA_STORAGE_ERROR;
    }
    if (st.st_size > PSTATE_MAX_FILE) {
        close(fd);
        return SAMSA_ERR_CORRUPT_MESSAGE;
    }
    buf = samsa_malloc((size_t) st.st_size + 1);
    while (done < (size_t) st.st_size) {
        got = read(fd, buf + done, (size_t) st.st_size - done);
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got <= 0) {
            break;
        }
        done += (size_t) got;
    }
    close(fd);
    err = done == (size_t) st.st_size
              ? samsa_pstate_decode(plog->ps, buf, done)
              : SAMSA_ERR_KAFKA_STORAGE_ERROR;
    samsa_free(buf);
    return err;
}

/* Pick and load the latest good snapshot at or below trust; deletes those
 * past the LEO and unreadable ones.  *from gets its offset (-1: none). */
static samsa_err_t
pstate_pick(samsa_plog_t *plog, int64_t trust, int64_t *from)
{
    int64_t     *offs;
    size_t       n, i;
    char         path[PATH_MAX];
    samsa_err_t  err;

    *from = -1;
    err = pstate_list(plog, &offs, &n);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    for (i = n; i > 0; i--) {
        pstate_path(path, sizeof(path), plog, offs[i - 1], "");
        if (offs[i - 1] > plog->leo) {
            samsa_warn("log: deleting %s: past the log end %" PRId64, path,
                       plog->leo);
            unlink(path);
            continue;
        }
        if (*from >= 0 || offs[i - 1] > trust) {
            continue;               /* older ones stay for their segments */
        }
        if (pstate_read(plog, path) == SAMSA_ERR_NONE) {
            *from = offs[i - 1];
            continue;
        }
        samsa_warn("log: deleting %s: not a valid producer state snapshot",
                   path);
        unlink(path);
        samsa_pstate_clear(plog->ps);
    }
    samsa_free(offs);
    return SAMSA_ERR_NONE;
}

/* Replay one batch at pos of seg (header hdr) into the producer state. */
static samsa_err_t
pstate_replay_batch(samsa_plog_t *plog, samsa_seg_t *seg, uint32_t pos,
                    const samsa_batch_hdr_t *hdr)
{
    samsa_pstate_change_t  ch;
    int16_t                type = -1;
    int32_t                coord = -1;
    uint8_t               *buf;
    size_t                 size = (size_t) samsa_batch_size(hdr);
    samsa_err_t            err = SAMSA_ERR_NONE;

    if (hdr->ProducerId < 0) {
        return SAMSA_ERR_NONE;
    }
    if (samsa_batch_is_control(hdr) && size <= PSTATE_MAX_CONTROL) {
        buf = samsa_malloc(size);
        err = samsa_seg_read(seg, pos, buf, size);
        if (err == SAMSA_ERR_NONE
            && samsa_batch_control_parse(buf, size, &type, &coord)
                   != SAMSA_ERR_NONE) {
            samsa_warn("log: %s: control batch at offset %" PRId64
                       " holds no readable marker", plog->dir,
                       hdr->BaseOffset);
        }
        samsa_free(buf);
        if (err != SAMSA_ERR_NONE) {
            return err;
        }
    }
    samsa_pstate_change_init(&ch);
    samsa_pstate_replay(plog->ps, hdr, type, coord, &ch);
    err = samsa_plog_pstate_index(plog, seg, &ch);
    samsa_pstate_commit(plog->ps, &ch);
    return err;
}

/* Replay seg's batches from offset from on, after dropping its
 * transaction-index entries from there. */
static samsa_err_t
pstate_replay_seg(samsa_plog_t *plog, samsa_seg_t *seg, int64_t from)
{
    samsa_seg_end_t    end = samsa_seg_end(seg);
    samsa_seg_pos_t    at;
    samsa_batch_hdr_t  hdr;
    uint32_t           pos = 0;
    samsa_err_t        err;

    if (end.next_offset <= from) {
        return SAMSA_ERR_NONE;
    }
    err = samsa_seg_txn_truncate(seg, from);
    if (err == SAMSA_ERR_NONE && from > samsa_seg_base(seg)) {
        err = samsa_seg_find_offset(seg, from, end.size, &at);
        pos = at.pos;
    }
    while (err == SAMSA_ERR_NONE && pos < end.size) {
        err = samsa_seg_batch_at(seg, pos, end.size, &hdr);
        if (err == SAMSA_ERR_NONE) {
            err = pstate_replay_batch(plog, seg, pos, &hdr);
            pos += (uint32_t) samsa_batch_size(&hdr);
        }
    }
    return err == SAMSA_ERR__NOENT ? SAMSA_ERR_NONE : err;
}

samsa_err_t
samsa_plog_pstate_load(samsa_plog_t *plog, int64_t trust, int64_t now_ms)
{
    samsa_plog_segs_t  *segs = plog->segs;
    int64_t             from, first = samsa_seg_base(segs->seg[0]);
    size_t              i, nsnap;
    samsa_err_t         err;

    samsa_pstate_clear(plog->ps);
    err = pstate_pick(plog, trust < plog->leo ? trust : plog->leo, &from);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    nsnap = samsa_pstate_count(plog->ps);
    if (from < first) {
        from = first;
    }
    for (i = samsa_plog_segs_find(segs, from);
         i < segs->n && err == SAMSA_ERR_NONE; i++) {
        err = pstate_replay_seg(plog, segs->seg[i], from);
    }
    if (err != SAMSA_ERR_NONE) {
        samsa_error("log: %s: cannot rebuild the producer state", plog->dir);
        return err;
    }
    (void) samsa_pstate_expire(plog->ps, now_ms,
                               plog->cfg.producer_id_expiration_ms);
    plog->last_expiry_ms = now_ms;
    samsa_plog_pstate_publish(plog);
    if (from < plog->leo || nsnap > 0) {
        samsa_info("log: %s: producer state of %zu producers (%zu from a "
                   "snapshot, log replayed from offset %" PRId64 " to %" PRId64
                   ")", plog->dir, samsa_pstate_count(plog->ps), nsnap, from,
                   plog->leo);
    }
    return SAMSA_ERR_NONE;
}

/* ---- readers ----------------------------------------------------------- */

int64_t
samsa_plog_last_stable_offset(samsa_plog_t *plog)
{
    int64_t  hwm = samsa_plog_high_watermark(plog);   /* acquire, first */
    int64_t  fu = atomic_load_explicit(&plog->first_unstable,
                                       memory_order_acquire);

    return fu < hwm ? fu : hwm;
}

samsa_err_t
samsa_plog_aborted_txns(samsa_plog_t *plog, int64_t fetch_offset,
                        int64_t upper, samsa_seg_aborted_fn_t *fn, void *ctx)
{
    samsa_plog_segs_t  *segs = samsa_plog_segs_get(plog);
    samsa_err_t         err = SAMSA_ERR_NONE;
    bool                complete = false;
    size_t              i;

    for (i = samsa_plog_segs_find(segs, fetch_offset);
         i < segs->n && err == SAMSA_ERR_NONE && !complete; i++) {
        err = samsa_seg_txn_collect(segs->seg[i], fetch_offset, upper, fn,
                                    ctx, &complete);
    }
    samsa_plog_segs_put(segs);
    return err;
}

size_t
samsa_plog_producers(samsa_plog_t *plog, samsa_pstate_entry_t **out)
{
    size_t  n;

    pthread_mutex_lock(&plog->lock);
    n = samsa_pstate_list(plog->ps, out);
    pthread_mutex_unlock(&plog->lock);
    return n;
}

size_t
samsa_plog_expire_producers(samsa_plog_t *plog, int64_t now_ms)
{
    size_t  n = 0;

    pthread_mutex_lock(&plog->lock);
    if (now_ms - plog->last_expiry_ms
        >= plog->cfg.producer_id_expiration_check_interval_ms) {
        n = samsa_pstate_expire(plog->ps, now_ms,
                                plog->cfg.producer_id_expiration_ms);
        plog->last_expiry_ms = now_ms;
    }
    pthread_mutex_unlock(&plog->lock);
    if (n > 0) {
        samsa_info("log: %s: %zu idle producers expired "
                   "(producer.id.expiration.ms)", plog->dir, n);
    }
    return n;
}
