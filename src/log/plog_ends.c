/*
 * log/plog_ends.c - the parts of a partition's log that look up or move
 * its ends: reads for Fetch, ListOffsets, DeleteRecords, retention,
 * truncation and the delayed removal of deleted segments (see plog.h).
 * Reads and ListOffsets work on a referenced snapshot of the segment list
 * and never take the plog lock.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>

#include "log/plog.h"
#include "log/fdcache.h"
#include "log/plog_int.h"
#include "proto/batch.h"
#include "proto/compress.h"
#include "util/buf.h"
#include "util/alloc.h"
#include "util/diag.h"
#include "util/time.h"
#include "util/fault.h"

/* ---- read ---------------------------------------------------------------- */

void
samsa_plog_region_release(samsa_plog_region_t *region)
{
    if (region->seg != NULL) {
        samsa_seg_unpin(region->seg);   /* the fd may close from now on */
    }
    samsa_seg_unref(region->seg);
    memset(region, 0, sizeof(*region));
    region->fd = -1;
}

/* The first batch at or after offset, from the segment holding it on.
 * @returns _NOENT if none. */
static samsa_err_t
plog_locate(const samsa_plog_segs_t *segs, int64_t offset, size_t *at,
            samsa_seg_end_t *end, samsa_seg_pos_t *pos)
{
    size_t       i;
    samsa_err_t  err;

    for (i = samsa_plog_segs_find(segs, offset); i < segs->n; i++) {
        *end = samsa_seg_end(segs->seg[i]);
        if (offset >= end->next_offset) {
            continue;
        }
        err = samsa_seg_find_offset(segs->seg[i], offset, end->size, pos);
        if (err != SAMSA_ERR__NOENT) {
            *at = i;
            return err;
        }
    }
    return SAMSA_ERR__NOENT;
}

/* Where the batches below max_offset end in seg (up to end.size). */
static samsa_err_t
plog_read_limit(samsa_seg_t *seg, samsa_seg_end_t end, int64_t max_offset,
                uint32_t *limit)
{
    samsa_seg_pos_t  hw;
    samsa_err_t      err;

    *limit = end.size;
    if (max_offset >= end.next_offset) {
        return SAMSA_ERR_NONE;
    }
    err = samsa_seg_find_offset(seg, max_offset, end.size, &hw);
    if (err == SAMSA_ERR_NONE) {
        *limit = hw.pos;            /* that batch reaches max_offset */
    }
    return err == SAMSA_ERR__NOENT ? SAMSA_ERR_NONE : err;
}

samsa_err_t
samsa_plog_read(samsa_plog_t *plog, int64_t offset, int32_t max_bytes,
                bool min_one_batch, int64_t max_offset,
                samsa_plog_region_t *out)
{
    samsa_plog_segs_t  *segs;
    samsa_seg_end_t     end;
    samsa_seg_pos_t     pos;
    int64_t             leo, want;
    uint32_t            limit = 0;
    size_t              at = 0;
    samsa_err_t         err;

    memset(out, 0, sizeof(*out));
    out->fd = -1;
    leo = samsa_plog_log_end_offset(plog);
    if (samsa_plog_is_offline(plog)) {
        return SAMSA_ERR_KAFKA_STORAGE_ERROR;
    }
    if (offset < samsa_plog_log_start_offset(plog) || offset > leo) {
        return SAMSA_ERR_OFFSET_OUT_OF_RANGE;
    }
    if (offset == leo || offset >= max_offset) {
        return SAMSA_ERR_NONE;
    }
    segs = samsa_plog_segs_get(plog);       /* after leo: it covers leo */
    if (offset < samsa_seg_base(segs->seg[0])) {
        samsa_plog_segs_put(segs);          /* retention got there first */
        return SAMSA_ERR_OFFSET_OUT_OF_RANGE;
    }
    err = plog_locate(segs, offset, &at, &end, &pos);
    if (err == SAMSA_ERR_NONE) {
        err = plog_read_limit(segs->seg[at], end, max_offset, &limit);
    }
    if (err == SAMSA_ERR_NONE && limit > pos.pos) {
        want = max_bytes > 0 ? max_bytes : 0;
        if (want < samsa_batch_size(&pos.hdr)) {
            /* The first batch does not fit: whole with min_one_batch
             * (KIP-74), else nothing.  Kafka sends Fetch v3+ an empty
             * partition rather than a cut first batch (ReplicaManager
             * drops a read whose first entry is incomplete), so the
             * consumer simply makes no progress there this round. */
            want = min_one_batch ? samsa_batch_size(&pos.hdr) : 0;
        }
        out->len = (size_t) (want < limit - pos.pos ? want : limit - pos.pos);
    }
    if (out->len > 0) {
        err = samsa_seg_pin(segs->seg[at]);     /* until the release */
        if (err != SAMSA_ERR_NONE) {
            out->len = 0;
            samsa_plog_segs_put(segs);
            return err;
        }
        out->seg = samsa_seg_ref(segs->seg[at]);
        out->fd = samsa_seg_fd(out->seg);
        out->pos = pos.pos;
        out->first_offset = pos.hdr.BaseOffset;
    }
    samsa_plog_segs_put(segs);
    return err == SAMSA_ERR__NOENT ? SAMSA_ERR_NONE : err;
}

/* ---- ListOffsets --------------------------------------------------------- */

/* Read the batch at bp; a compressed batch comes back with its records
 * decompressed behind its header, so the record iterator can walk it.
 * NULL (logged) if it cannot be read. */
static uint8_t *
plog_batch_records(samsa_seg_t *seg, const samsa_seg_pos_t *bp, size_t *size)
{
    const samsa_batch_hdr_t  *hdr = &bp->hdr;
    samsa_buf_t               out = SAMSA_BUF_INIT;
    uint8_t                  *buf;
    size_t                    n = (size_t) samsa_batch_size(hdr);
    samsa_err_t               err;

    buf = samsa_malloc(n);
    if (samsa_seg_read(seg, bp->pos, buf, n) != SAMSA_ERR_NONE) {
        samsa_free(buf);
        return NULL;
    }
    if (samsa_batch_codec(hdr) == SAMSA_BATCH_CODEC_NONE) {
        *size = n;
        return buf;
    }
    samsa_buf_append(&out, buf, SAMSA_BATCH_HDR_SIZE);
    err = samsa_decompress((samsa_codec_t) samsa_batch_codec(hdr),
                           buf + SAMSA_BATCH_HDR_SIZE,
                           n - SAMSA_BATCH_HDR_SIZE,
                           (size_t) hdr->BatchLength * 255 + (1u << 20),
                           &out);
    samsa_free(buf);
    if (err != SAMSA_ERR_NONE) {
        samsa_warn("log: cannot decompress the batch at offset %lld for a "
                   "timestamp lookup: %s", (long long) hdr->BaseOffset,
                   samsa_err_name(err));
        samsa_buf_fini(&out);
        return NULL;
    }
    return samsa_buf_take(&out, size);
}

/* The record inside the batch at bp answering a query: the first with a
 * timestamp >= ts (by_max: == ts, the batch's MaxTimestamp) at or after
 * min_offset, as Kafka's FileRecords.searchForTimestamp finds it
 * (decompressing a compressed batch).  Its offset goes to *off and its
 * timestamp to *rts; a LogAppendTime batch's records all carry
 * MaxTimestamp. */
static void
plog_refine(samsa_seg_t *seg, const samsa_seg_pos_t *bp, int64_t ts,
            int64_t min_offset, bool by_max, int64_t *off, int64_t *rts)
{
    const samsa_batch_hdr_t  *hdr = &bp->hdr;
    samsa_record_it_t         it;
    samsa_record_t            rec;
    uint8_t                  *buf;
    size_t                    size;
    int64_t                   o, t;

    /* Without a record to point at (LogAppendTime, or a batch that cannot
     * be read): the batch's first offset, or its last for the max. */
    *off = by_max ? samsa_batch_last_offset(hdr) : hdr->BaseOffset;
    *off = *off > min_offset ? *off : min_offset;
    *rts = hdr->MaxTimestamp;
    if (samsa_batch_is_log_append_time(hdr)) {
        return;
    }
    buf = plog_batch_records(seg, bp, &size);
    if (buf == NULL) {
        return;
    }
    samsa_record_it_init(&it, buf, size);
    while (samsa_record_it_next(&it, &rec)) {
        t = hdr->BaseTimestamp + rec.TimestampDelta;
        o = hdr->BaseOffset + rec.OffsetDelta;
        if (o >= min_offset && (by_max ? t == ts : t >= ts)) {
            *off = o;
            *rts = t;
            break;
        }
    }
    samsa_free(buf);
}

/* KIP-734: the record with the largest timestamp in the log. */
static samsa_err_t
plog_max_timestamp(samsa_plog_segs_t *segs, int64_t log_start,
                   samsa_plog_ts_offset_t *out)
{
    samsa_seg_t      *best = NULL;
    samsa_seg_pos_t   bp;
    int64_t           ts, best_ts = -1, best_off = -1, off;
    size_t            i;
    samsa_err_t       err;

    for (i = 0; i < segs->n; i++) {
        ts = samsa_seg_max_timestamp(segs->seg[i], &off);
        if (ts > best_ts) {
            best = segs->seg[i];
            best_ts = ts;
            best_off = off;
        }
    }
    if (best == NULL) {
        return SAMSA_ERR_NONE;      /* no timestamps: -1, -1 */
    }
    err = samsa_seg_find_offset(best, best_off, samsa_seg_end(best).size,
                                &bp);
    if (err != SAMSA_ERR_NONE) {
        return err == SAMSA_ERR__NOENT ? SAMSA_ERR_NONE : err;
    }
    plog_refine(best, &bp, best_ts, log_start, true, &out->offset,
                &out->timestamp);
    out->leader_epoch = bp.hdr.PartitionLeaderEpoch;
    return SAMSA_ERR_NONE;
}

/* The first record with a timestamp >= ts below hwm. */
static samsa_err_t
plog_by_time(samsa_plog_segs_t *segs, int64_t ts, int64_t log_start,
             int64_t hwm, samsa_plog_ts_offset_t *out)
{
    samsa_seg_pos_t  bp;
    samsa_seg_t     *seg = NULL;
    size_t           i;
    int64_t          off, rts;
    samsa_err_t      err = SAMSA_ERR__NOENT;

    for (i = 0; i < segs->n && err == SAMSA_ERR__NOENT; i++) {
        seg = segs->seg[i];
        if (samsa_seg_max_timestamp(seg, NULL) < ts
            || samsa_seg_end(seg).next_offset <= log_start) {
            continue;
        }
        err = samsa_seg_find_timestamp(seg, ts, log_start,
                                       samsa_seg_end(seg).size, &bp);
    }
    if (err != SAMSA_ERR_NONE) {
        return err == SAMSA_ERR__NOENT ? SAMSA_ERR_NONE : err;
    }
    plog_refine(seg, &bp, ts, log_start, false, &off, &rts);
    if (off < hwm) {
        out->timestamp = rts;
        out->offset = off;
        out->leader_epoch = bp.hdr.PartitionLeaderEpoch;
    }
    return SAMSA_ERR_NONE;
}

/* The leader epoch of offset, or the latest one. */
static int32_t
plog_epoch_for(samsa_plog_t *plog, int64_t offset, bool latest)
{
    int32_t  epoch;

    pthread_mutex_lock(&plog->epochs_lock);
    epoch = latest ? samsa_epochs_latest(&plog->epochs)
                   : samsa_epochs_for_offset(&plog->epochs, offset);
    pthread_mutex_unlock(&plog->epochs_lock);
    return epoch;
}

samsa_err_t
samsa_plog_offset_for_time(samsa_plog_t *plog, int64_t timestamp,
                           samsa_plog_ts_offset_t *out)
{
    samsa_plog_segs_t  *segs;
    int64_t             hwm = samsa_plog_high_watermark(plog);
    int64_t             ls = samsa_plog_log_start_offset(plog);
    samsa_err_t         err;

    *out = (samsa_plog_ts_offset_t) { -1, -1, -1 };
    if (samsa_plog_is_offline(plog)) {
        return SAMSA_ERR_KAFKA_STORAGE_ERROR;
    }
    switch (timestamp) {
    case SAMSA_PLOG_TS_EARLIEST:
    case SAMSA_PLOG_TS_EARLIEST_LOCAL:
        out->offset = ls;
        out->leader_epoch = plog_epoch_for(plog, ls, false);
        return SAMSA_ERR_NONE;
    case SAMSA_PLOG_TS_LATEST:
        out->offset = hwm;
        out->leader_epoch = plog_epoch_for(plog, hwm, true);
        return SAMSA_ERR_NONE;
    default:
        break;
    }
    if (timestamp < SAMSA_PLOG_TS_MAX_TIMESTAMP) {
        return SAMSA_ERR_NONE;      /* unknown special value: nothing */
    }
    segs = samsa_plog_segs_get(plog);
    if (timestamp == SAMSA_PLOG_TS_MAX_TIMESTAMP) {
        err = plog_max_timestamp(segs, ls, out);
    } else {
        err = plog_by_time(segs, timestamp, ls, hwm, out);
    }
    samsa_plog_segs_put(segs);
    return err;
}

void
samsa_plog_end_offset_for_epoch(samsa_plog_t *plog, int32_t epoch,
                                int32_t current, int32_t *found_epoch,
                                int64_t *end_offset)
{
    int64_t  leo = samsa_plog_log_end_offset(plog);

    pthread_mutex_lock(&plog->epochs_lock);
    samsa_epochs_end_offset(&plog->epochs, epoch, leo, current, found_epoch,
                            end_offset);
    pthread_mutex_unlock(&plog->epochs_lock);
}

/* ---- moving the log start ------------------------------------------------ */

void
samsa_plog_set_log_start(samsa_plog_t *plog, int64_t offset)
{
    samsa_err_t  err;

    if (offset <= samsa_plog_log_start_offset(plog)) {
        return;
    }
    /* pairs with the acquire in samsa_plog_log_start_offset() */
    atomic_store_explicit(&plog->log_start, offset, memory_order_release);
    pthread_mutex_lock(&plog->epochs_lock);
    err = samsa_epochs_truncate_start(&plog->epochs, offset);
    pthread_mutex_unlock(&plog->epochs_lock);
    if (err != SAMSA_ERR_NONE) {
        samsa_warn("log: %s: could not rewrite leader-epoch-checkpoint",
                   plog->dir);
    }
}

void
samsa_plog_doom(samsa_plog_t *plog, samsa_seg_t *seg, int64_t due_ms)
{
    if (plog->ndoomed == plog->doomed_cap) {
        plog->doomed_cap = plog->doomed_cap ? plog->doomed_cap * 2 : 8;
        plog->doomed = samsa_realloc(plog->doomed, plog->doomed_cap
                                                       * sizeof(*plog->doomed));
    }
    plog->doomed[plog->ndoomed++] = (samsa_plog_doomed_t) {
        samsa_seg_ref(seg), due_ms
    };
}

/* Delete the k oldest segments (rename to .deleted, unlink later) and
 * move the log start to the first one left.  @locks lock held */
static SAMSA_MUST_CHECK samsa_err_t
plog_drop_oldest(samsa_plog_t *plog, size_t k, int64_t now_ms)
{
    samsa_plog_segs_t  *segs = plog->segs;
    samsa_err_t         err = SAMSA_ERR_NONE;
    size_t              i;
    int64_t             due;

    samsa_assert(k < segs->n);
    if (__builtin_add_overflow(now_ms, plog->cfg.file_delete_delay_ms, &due)) {
        due = INT64_MAX;
    }
    for (i = 0; i < k && err == SAMSA_ERR_NONE; i++) {
        err = samsa_seg_mark_deleted(segs->seg[i]);
        SAMSA_FAULT("log.retention.after_rename");
        if (err == SAMSA_ERR_NONE) {
            samsa_plog_doom(plog, segs->seg[i], due);
            samsa_info("log: %s: deleting segment %020" PRId64, plog->dir,
                       samsa_seg_base(segs->seg[i]));
        }
    }
    if (i > 0) {
        k = err == SAMSA_ERR_NONE ? k : i - 1;
        samsa_plog_segs_replace(plog, k, segs->n, NULL);
        samsa_plog_set_log_start(plog, samsa_seg_base(plog->segs->seg[0]));
        /* the snapshots of the deleted segments, and any taken inside
         * them (clean shutdowns), go with them */
        samsa_plog_pstate_drop_snapshots(plog,
                                         samsa_seg_base(plog->segs->seg[0]));
    }
    if (err != SAMSA_ERR_NONE) {
        samsa_plog_go_offline(plog);
    }
    return err;
}

void *
samsa_log_take_due(pthread_mutex_t *lock, void **arr, size_t *n, size_t size,
                   size_t due_off, int64_t now_ms, bool all, size_t *ndue)
{
    char     *a, *due;
    size_t    i, j = 0, k = 0;
    int64_t   due_ms;

    pthread_mutex_lock(lock);
    /* read under the lock: the writer may grow (realloc) the array */
    a = *arr;
    due = samsa_calloc(*n + 1, size);
    for (i = 0; i < *n; i++) {
        memcpy(&due_ms, a + i * size + due_off, sizeof(due_ms));
        if (all || due_ms <= now_ms) {
            memcpy(due + k++ * size, a + i * size, size);
        } else {
            memmove(a + j++ * size, a + i * size, size);
        }
    }
    *n = j;
    pthread_mutex_unlock(lock);
    *ndue = k;
    return due;
}

void
samsa_plog_purge(samsa_plog_t *plog, int64_t now_ms, bool all)
{
    samsa_plog_doomed_t  *due;
    size_t                i, n;

    due = samsa_log_take_due(&plog->lock, (void **) &plog->doomed,
                             &plog->ndoomed,
                             sizeof(*due),
                             offsetof(samsa_plog_doomed_t, due_ms), now_ms,
                             all, &n);
    for (i = 0; i < n; i++) {
        /* a reader still holding the segment (a Fetch, a response
         * waiting to be sent) keeps reading from open descriptors once
         * the names are gone, as it would in Kafka, where a segment's
         * files stay open until it is closed */
        samsa_seg_hold_open_if_shared(due[i].seg);
        SAMSA_FAULT("log.retention.before_unlink");
        samsa_seg_unlink_files(plog->dir, samsa_seg_base(due[i].seg),
                               ".deleted");
        samsa_seg_unref(due[i].seg);
    }
    samsa_free(due);
}

/* ---- retention ----------------------------------------------------------- */

/* A segment's largest timestamp, or its file's mtime when it has none
 * (Kafka's LogSegment.largestTimestamp). */
static int64_t
plog_seg_largest_ts(samsa_seg_t *seg)
{
    struct stat  st;
    int64_t      ts = samsa_seg_max_timestamp(seg, NULL);

    if (ts >= 0 || samsa_seg_stat(seg, &st) != SAMSA_ERR_NONE) {
        return ts;
    }
    return (int64_t) st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
}

/* How many of the oldest segments lie wholly below the log start offset
 * (the active one only if it holds data and the log start passed it). */
static size_t
plog_below_start(samsa_plog_t *plog)
{
    const samsa_plog_segs_t  *segs = plog->segs;
    int64_t                   ls = samsa_plog_log_start_offset(plog);
    size_t                    k = 0;

    while (k + 1 < segs->n && samsa_seg_base(segs->seg[k + 1]) <= ls) {
        k++;
    }
    if (k + 1 == segs->n && plog->leo <= ls
        && samsa_seg_base(segs->seg[k]) < plog->leo) {
        k++;
    }
    return k;
}

/* How many of the oldest segments retention.ms and retention.bytes
 * condemn (Kafka's deleteRetentionMsBreachedSegments and
 * deleteRetentionSizeBreachedSegments: each a prefix). */
static size_t
plog_breached(samsa_plog_t *plog, int64_t now_ms)
{
    const samsa_plog_segs_t   *segs = plog->segs;
    const samsa_log_config_t  *cfg = &plog->cfg;
    size_t                     by_time = 0, by_size = 0, i;
    int64_t                    total = 0, diff, size;

    if ((cfg->cleanup_policy & SAMSA_LOG_CLEANUP_DELETE) == 0) {
        return 0;
    }
    while (cfg->retention_ms >= 0 && by_time < segs->n
           && now_ms - plog_seg_largest_ts(segs->seg[by_time])
                  > cfg->retention_ms) {
        by_time++;
    }
    if (cfg->retention_bytes >= 0) {
        for (i = 0; i < segs->n; i++) {
            total += samsa_seg_end(segs->seg[i]).size;
        }
        diff = total - cfg->retention_bytes;
        while (by_size < segs->n
               && diff - (size = samsa_seg_end(segs->seg[by_size]).size)
                      >= 0) {
            diff -= size;
            by_size++;
        }
    }
    return by_time > by_size ? by_time : by_size;
}

/* Delete the k oldest segments; when that is all of them, a non-empty
 * active segment is rolled first (an empty one stays).
 * @locks lock held */
static samsa_err_t
plog_delete_prefix(samsa_plog_t *plog, size_t k, int64_t now_ms, int *deleted)
{
    samsa_err_t  err;

    if (k >= plog->segs->n) {
        k = plog->segs->n;
        if (samsa_seg_end(plog->segs->seg[k - 1]).size > 0) {
            err = samsa_plog_roll(plog, now_ms);
            if (err != SAMSA_ERR_NONE) {
                return err;
            }
        } else {
            k--;
        }
    }
    if (k == 0) {
        return SAMSA_ERR_NONE;
    }
    if (deleted != NULL) {
        *deleted += (int) k;
    }
    return plog_drop_oldest(plog, k, now_ms);
}

samsa_err_t
samsa_plog_retain(samsa_plog_t *plog, int64_t now_ms, int *deleted)
{
    samsa_err_t  err;
    size_t       k, k2;
    bool         want = false;

    if (deleted != NULL) {
        *deleted = 0;
    }
    pthread_mutex_lock(&plog->lock);
    err = samsa_plog_check_writable(plog);
    if (err == SAMSA_ERR_NONE) {
        k = plog_breached(plog, now_ms);
        k2 = plog_below_start(plog);
        err = plog_delete_prefix(plog, k > k2 ? k : k2, now_ms, deleted);
        want = plog->flush_full;
    }
    pthread_mutex_unlock(&plog->lock);
    if (want && plog->flusher != NULL) {
        plog->flusher(plog->flusher_ctx, plog);     /* a roll happened */
    }
    samsa_plog_purge(plog, now_ms, false);
    (void) samsa_plog_expire_producers(plog, now_ms);
    return err == SAMSA_ERR_NOT_LEADER_OR_FOLLOWER
                   || err == SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION
               ? SAMSA_ERR_NONE : err;
}

samsa_err_t
samsa_plog_delete_records(samsa_plog_t *plog, int64_t offset,
                          int64_t *low_watermark)
{
    samsa_err_t  err;
    int64_t      hwm;

    pthread_mutex_lock(&plog->lock);
    err = samsa_plog_check_writable(plog);
    hwm = samsa_plog_high_watermark(plog);
    if (offset == -1) {
        offset = hwm;
    }
    if (err == SAMSA_ERR_NONE && (offset < 0 || offset > hwm)) {
        err = SAMSA_ERR_OFFSET_OUT_OF_RANGE;
    }
    if (err == SAMSA_ERR_NONE) {
        samsa_plog_set_log_start(plog, offset);
        err = plog_delete_prefix(plog, plog_below_start(plog), samsa_wall_ms(),
                                 NULL);
    }
    *low_watermark = samsa_plog_log_start_offset(plog);
    pthread_mutex_unlock(&plog->lock);
    return err;
}

/* ---- truncation ---------------------------------------------------------- */

/* Cut seg at the batch holding offset; *leo gets the segment's new end.
 * @locks lock held */
static samsa_err_t
plog_cut_segment(samsa_seg_t *seg, int64_t offset, int64_t *leo)
{
    samsa_seg_end_t  end = samsa_seg_end(seg);
    samsa_seg_pos_t  pos;
    samsa_err_t      err;

    *leo = end.next_offset;
    if (offset >= end.next_offset) {
        return SAMSA_ERR_NONE;
    }
    err = samsa_seg_find_offset(seg, offset, end.size, &pos);
    if (err == SAMSA_ERR__NOENT) {
        return SAMSA_ERR_NONE;
    }
    if (err == SAMSA_ERR_NONE) {
        err = samsa_seg_truncate(seg, pos.pos, pos.hdr.BaseOffset);
        *leo = pos.hdr.BaseOffset;
    }
    return err;
}

/* Drop the leader epochs at or after end (a failure to rewrite the file
 * is warned about: the cache is right, the file catches up with the next
 * change).  @locks epochs_lock taken */
static void
plog_epochs_truncate_end(samsa_plog_t *plog, int64_t end)
{
    samsa_err_t  err;

    pthread_mutex_lock(&plog->epochs_lock);
    err = samsa_epochs_truncate_end(&plog->epochs, end);
    pthread_mutex_unlock(&plog->epochs_lock);
    if (err != SAMSA_ERR_NONE) {
        samsa_warn("log: %s: could not rewrite leader-epoch-checkpoint",
                   plog->dir);
    }
}

/* The new end after truncation: offsets, epochs, flush state.
 * @locks lock held */
static void
plog_truncated(samsa_plog_t *plog, int64_t leo)
{
    plog->leo = leo;
    plog->trunc_gen++;
    if (plog->flush_requested > leo) {
        plog->flush_requested = leo;
    }
    atomic_store_explicit(&plog->leo_pub, leo, memory_order_release);
    if (!atomic_load_explicit(&plog->replicated, memory_order_acquire)
        || samsa_plog_high_watermark(plog) > leo) {
        atomic_store_explicit(&plog->hwm, leo, memory_order_release);
    }
    if (samsa_plog_durable_offset(plog) > leo) {
        atomic_store_explicit(&plog->durable, leo, memory_order_release);
    }
    if (samsa_plog_recovery_point(plog) > leo) {
        atomic_store_explicit(&plog->recovery_point, leo,
                              memory_order_release);
    }
    if (samsa_plog_log_start_offset(plog) > leo) {
        atomic_store_explicit(&plog->log_start, leo, memory_order_release);
    }
    plog_epochs_truncate_end(plog, leo);
}

/* Kafka reloads the producer state after a truncation: from the
 * snapshots and batches below leo.  @locks lock held */
static samsa_err_t
plog_reload_pstate(samsa_plog_t *plog, int64_t leo, int64_t now_ms)
{
    samsa_err_t  err;

    samsa_pstate_clear(plog->ps);
    err = samsa_plog_pstate_load(plog, leo, now_ms);
    if (err != SAMSA_ERR_NONE) {
        samsa_plog_go_offline(plog);
    }
    return err;
}

/* Truncate with lock held: drop later segments, cut the one holding
 * offset, make it active. */
static samsa_err_t
plog_truncate_locked(samsa_plog_t *plog, int64_t offset, int64_t now_ms)
{
    samsa_plog_segs_t  *segs = plog->segs;
    size_t              keep, i;
    int64_t             leo, due = now_ms + plog->cfg.file_delete_delay_ms;
    samsa_err_t         err = SAMSA_ERR_NONE;

    keep = samsa_plog_segs_find(segs, offset > 0 ? offset - 1 : 0) + 1;
    for (i = keep; i < segs->n && err == SAMSA_ERR_NONE; i++) {
        err = samsa_seg_mark_deleted(segs->seg[i]);
        samsa_plog_doom(plog, segs->seg[i], due);
    }
    if (err == SAMSA_ERR_NONE) {
        err = plog_cut_segment(segs->seg[keep - 1], offset, &leo);
    }
    if (err == SAMSA_ERR_NONE && keep < segs->n) {
        err = samsa_seg_activate(segs->seg[keep - 1],
                                 plog->cfg.segment_index_bytes);
        samsa_plog_segs_replace(plog, 0, keep, NULL);
    }
    if (err != SAMSA_ERR_NONE) {
        samsa_plog_go_offline(plog);
        return err;
    }
    samsa_warn("log: %s: truncated from %" PRId64 " to %" PRId64, plog->dir,
               plog->leo, leo);
    plog_truncated(plog, leo);
    return plog_reload_pstate(plog, leo, now_ms);
}

/* truncateFullyAndStartAt with lock held: a new empty segment at offset
 * first (nothing changed if it cannot be made), then the old ones go. */
static samsa_err_t
plog_truncate_fully_locked(samsa_plog_t *plog, int64_t offset, int64_t now_ms)
{
    samsa_plog_segs_t  *segs = plog->segs;
    samsa_seg_t        *seg;
    size_t              i, n = segs->n;
    int64_t             due;
    samsa_err_t         err;

    if (__builtin_add_overflow(now_ms, plog->cfg.file_delete_delay_ms, &due)) {
        due = INT64_MAX;
    }
    err = samsa_seg_open(plog->dir, offset,
                         SAMSA_SEG_F_CREATE | SAMSA_SEG_F_ACTIVE,
                         plog->cfg.segment_index_bytes, now_ms, &seg);
    if (err != SAMSA_ERR_NONE) {
        if (err != SAMSA_ERR__NOFILE) {
            samsa_plog_go_offline(plog);
        }
        return err;
    }
    for (i = 0; i < n && err == SAMSA_ERR_NONE; i++) {
        err = samsa_seg_mark_deleted(segs->seg[i]);
        samsa_plog_doom(plog, segs->seg[i], due);
    }
    samsa_plog_segs_replace(plog, n, n, seg);
    samsa_seg_unref(seg);                   /* the list holds it now */
    plog->dir_dirty = true;
    if (err != SAMSA_ERR_NONE) {
        samsa_plog_go_offline(plog);
        return err;
    }
    samsa_warn("log: %s: truncated fully from %" PRId64 " and restarted at %"
               PRId64, plog->dir, plog->leo, offset);
    plog->leo = offset;
    plog->trunc_gen++;
    plog->flush_requested = offset;
    atomic_store_explicit(&plog->leo_pub, offset, memory_order_release);
    atomic_store_explicit(&plog->hwm, offset, memory_order_release);
    atomic_store_explicit(&plog->durable, offset, memory_order_release);
    atomic_store_explicit(&plog->recovery_point, offset, memory_order_release);
    samsa_plog_set_log_start(plog, offset);
    plog_epochs_truncate_end(plog, INT64_MIN);      /* every epoch */
    samsa_plog_pstate_drop_snapshots(plog, offset);
    return plog_reload_pstate(plog, offset, now_ms);
}

samsa_err_t
samsa_plog_truncate_fully(samsa_plog_t *plog, int64_t offset)
{
    samsa_err_t  err;

    pthread_mutex_lock(&plog->lock);
    err = samsa_plog_check_writable(plog);
    if (err == SAMSA_ERR_NONE && offset <= plog->leo) {
        err = SAMSA_ERR_OFFSET_OUT_OF_RANGE;
    }
    if (err == SAMSA_ERR_NONE) {
        err = plog_truncate_fully_locked(plog, offset, samsa_wall_ms());
    }
    pthread_mutex_unlock(&plog->lock);
    return err;
}

samsa_err_t
samsa_plog_truncate_to(samsa_plog_t *plog, int64_t offset)
{
    samsa_err_t  err;

    pthread_mutex_lock(&plog->lock);
    err = samsa_plog_check_writable(plog);
    if (err == SAMSA_ERR_NONE && offset < plog->leo) {
        err = plog_truncate_locked(plog, offset, samsa_wall_ms());
    }
    pthread_mutex_unlock(&plog->lock);
    return err;
}
