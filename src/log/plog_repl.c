/*
 * log/plog_repl.c - a follower's side of a partition log (issue 19,
 * docs/REPLICATION.md): the append of batches exactly as the leader wrote
 * them, and the high watermark the replica manager moves (see plog.h).
 */
#include "log/plog.h"

#include <inttypes.h>
#include <string.h>

#include "log/plog_int.h"
#include "util/diag.h"
#include "util/time.h"

/* The whole batches at the front of records (a fetch response may end
 * with a cut one), checked: magic 2, CRC, base offsets increasing from
 * leo (the first one exactly leo), each ending at most INT32_MAX past
 * leo (a segment's relative offsets: a later one ends the batches
 * taken).  *whole gets their bytes, *last the
 * last offset, *max_ts the largest MaxTimestamp.
 * @returns CORRUPT_MESSAGE for a bad CRC or a batch shorter than its
 * header; UNSUPPORTED_FOR_MESSAGE_FORMAT for another magic;
 * OFFSET_OUT_OF_RANGE (sum->err_msg says why) for a first batch not at
 * leo or offsets that go back. */
static samsa_err_t
plog_repl_scan(const uint8_t *records, size_t len, int64_t leo,
               size_t *whole, int64_t *last, int64_t *max_ts,
               int32_t *nrecords, samsa_batch_summary_t *sum)
{
    samsa_batch_hdr_t  hdr;
    size_t             off = 0;
    int64_t            next = leo, size;
    samsa_err_t        err;

    *whole = 0;
    *last = leo - 1;
    *max_ts = -1;
    *nrecords = 0;
    while (off + SAMSA_BATCH_HDR_SIZE <= len) {
        err = samsa_batch_parse(records + off, len - off, &hdr);
        if (err != SAMSA_ERR_NONE) {
            return err == SAMSA_ERR__UNDERFLOW ? SAMSA_ERR_NONE : err;
        }
        size = samsa_batch_size(&hdr);
        if ((size_t) size > len - off) {
            break;                          /* cut at the end: later */
        }
        if (!samsa_batch_crc_ok(records + off, (size_t) size)) {
            sum->err_msg = "Record batch CRC does not match";
            return SAMSA_ERR_CORRUPT_MESSAGE;
        }
        if (hdr.LastOffsetDelta < 0
            || (off == 0 && hdr.BaseOffset != leo)
            || (off > 0 && hdr.BaseOffset < next)
            || hdr.BaseOffset > INT64_MAX - hdr.LastOffsetDelta - 1) {
            sum->err_msg = off == 0
                ? "The first batch's base offset is not the follower's "
                  "log end offset"
                : "Batch offsets go back";
            return SAMSA_ERR_OFFSET_OUT_OF_RANGE;
        }
        if (samsa_batch_last_offset(&hdr) - leo > INT32_MAX) {
            /* past what one segment's relative offsets (int32 from its
             * base, at most leo after a roll) can hold: left for an
             * append of its own (whose first batch must then be at the
             * log end, as for every append) */
            break;
        }
        next = samsa_batch_last_offset(&hdr) + 1;
        *last = next - 1;
        if (hdr.MaxTimestamp > *max_ts) {
            *max_ts = hdr.MaxTimestamp;
        }
        /* the header's count, as sent (an int32 sum that cannot wrap) */
        if (hdr.RecordsCount > 0) {
            *nrecords = hdr.RecordsCount > INT32_MAX - *nrecords
                        ? INT32_MAX : *nrecords + hdr.RecordsCount;
        }
        off += (size_t) size;
        *whole = off;
    }
    return SAMSA_ERR_NONE;
}

/* The producer state and leader epochs of every batch, as they are (the
 * leader checked them): origin REPLAY, one batch at a time since offsets
 * may have gaps (compaction).  @locks lock held */
static samsa_err_t
plog_repl_pstate(samsa_plog_t *plog, const uint8_t *records, size_t len,
                 samsa_pstate_change_t *ch, const char **msg)
{
    samsa_batch_hdr_t     hdr;
    samsa_pstate_batch_t  dup;
    bool                  is_dup;
    size_t                off;
    samsa_err_t           err = SAMSA_ERR_NONE;

    for (off = 0; off < len && err == SAMSA_ERR_NONE;
         off += (size_t) samsa_batch_size(&hdr)) {
        if (samsa_batch_parse(records + off, len - off, &hdr)
            != SAMSA_ERR_NONE) {
            break;                              /* scanned before */
        }
        err = samsa_pstate_apply(plog->ps, records + off,
                                 (size_t) samsa_batch_size(&hdr),
                                 hdr.BaseOffset, SAMSA_PSTATE_REPLAY, ch,
                                 &is_dup, &dup, msg);
    }
    return err;
}

/* Note each batch's leader epoch (the epochs only go up).
 * @locks lock held */
static void
plog_repl_epochs(samsa_plog_t *plog, const uint8_t *records, size_t len)
{
    samsa_batch_hdr_t  hdr;
    size_t             off;

    for (off = 0; off < len; off += (size_t) samsa_batch_size(&hdr)) {
        if (samsa_batch_parse(records + off, len - off, &hdr)
            != SAMSA_ERR_NONE) {
            break;
        }
        if (hdr.PartitionLeaderEpoch >= 0
            && samsa_plog_note_epoch(plog, hdr.PartitionLeaderEpoch,
                                     hdr.BaseOffset) != SAMSA_ERR_NONE) {
            samsa_warn("log: %s: could not record leader epoch %" PRId32,
                       plog->dir, hdr.PartitionLeaderEpoch);
        }
    }
}

static samsa_seg_t *
plog_repl_active(samsa_plog_t *plog)
{
    return plog->segs->seg[plog->segs->n - 1];      /* [lock] */
}

/* The locked part: roll, producer state, write, publish (not the high
 * watermark).  @locks lock held */
static samsa_err_t
plog_repl_locked(samsa_plog_t *plog, const uint8_t *records, size_t len,
                 int64_t now_ms, samsa_plog_append_result_t *res, bool *want)
{
    const samsa_log_config_t  *cfg = &plog->cfg;
    samsa_pstate_change_t      ch;
    size_t                     whole;
    int64_t                    last, max_ts;
    int32_t                    nrecords;
    samsa_err_t                err;

    err = plog_repl_scan(records, len, plog->leo, &whole, &last, &max_ts,
                         &nrecords, &res->summary);
    if (err != SAMSA_ERR_NONE || whole == 0) {
        return err;
    }
    res->summary.nrecords = nrecords;
    if (samsa_seg_should_roll(plog_repl_active(plog), whole, max_ts,
                              last, cfg->segment_bytes,
                              cfg->segment_ms - plog->roll_jitter_ms,
                              now_ms)) {
        err = samsa_plog_roll(plog, now_ms);
        if (err != SAMSA_ERR_NONE) {
            return err;
        }
        *want = true;
    }
    samsa_pstate_change_init(&ch);
    err = plog_repl_pstate(plog, records, whole, &ch, &res->summary.err_msg);
    if (err != SAMSA_ERR_NONE) {
        return err;                     /* undone by samsa_pstate_apply */
    }
    err = samsa_plog_write_active(plog, records, whole, &ch);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    plog_repl_epochs(plog, records, whole);
    res->base_offset = plog->leo;
    res->last_offset = last;
    plog->leo = last + 1;
    atomic_store_explicit(&plog->leo_pub, plog->leo, memory_order_release);
    *want |= samsa_plog_flush_policy(plog, res);
    res->bytes = whole;
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_plog_append_replica(samsa_plog_t *plog, const uint8_t *records,
                          size_t len, samsa_plog_append_result_t *res)
{
    int64_t      now_ms = samsa_wall_ms();
    samsa_err_t  err;
    bool         want = false;

    memset(res, 0, sizeof(*res));
    res->base_offset = res->last_offset = -1;
    res->log_append_time_ms = res->durable_wanted = -1;
    pthread_mutex_lock(&plog->lock);
    err = samsa_plog_check_writable(plog);
    if (err == SAMSA_ERR_NONE) {
        err = plog_repl_locked(plog, records, len, now_ms, res, &want);
    }
    res->log_start_offset = samsa_plog_log_start_offset(plog);
    pthread_mutex_unlock(&plog->lock);
    if (err == SAMSA_ERR_NONE && res->bytes > 0) {
        atomic_fetch_add_explicit(&plog->n_appends, 1, memory_order_relaxed);
    }
    if (want && plog->flusher != NULL) {
        plog->flusher(plog->flusher_ctx, plog);
    }
    return err;
}

void
samsa_plog_set_replicated(samsa_plog_t *plog, bool replicated)
{
    pthread_mutex_lock(&plog->lock);
    atomic_store_explicit(&plog->replicated, replicated,
                          memory_order_release);
    if (!replicated) {
        atomic_store_explicit(&plog->hwm, plog->leo, memory_order_release);
    } else if (plog->hw_ckpt >= 0) {
        /* Kafka's Partition.createLog: the checkpointed high watermark,
         * at most the LEO (what was not committed before the restart is
         * not served as committed) */
        atomic_store_explicit(&plog->hwm, plog->hw_ckpt < plog->leo
                                              ? plog->hw_ckpt : plog->leo,
                              memory_order_release);
        plog->hw_ckpt = -1;
    }
    pthread_mutex_unlock(&plog->lock);
}

void
samsa_plog_set_checkpointed_hw(samsa_plog_t *plog, int64_t hw)
{
    pthread_mutex_lock(&plog->lock);
    plog->hw_ckpt = hw;
    pthread_mutex_unlock(&plog->lock);
}

bool
samsa_plog_is_replicated(samsa_plog_t *plog)
{
    return atomic_load_explicit(&plog->replicated, memory_order_acquire);
}

bool
samsa_plog_advance_high_watermark(samsa_plog_t *plog, int64_t hw)
{
    bool  moved = false;

    pthread_mutex_lock(&plog->lock);
    if (hw > plog->leo) {
        hw = plog->leo;
    }
    if (hw > samsa_plog_high_watermark(plog)) {
        atomic_store_explicit(&plog->hwm, hw, memory_order_release);
        moved = true;
    }
    pthread_mutex_unlock(&plog->lock);
    return moved;
}

int32_t
samsa_plog_latest_epoch(samsa_plog_t *plog)
{
    int32_t  epoch;

    pthread_mutex_lock(&plog->epochs_lock);
    epoch = samsa_epochs_latest(&plog->epochs);
    pthread_mutex_unlock(&plog->epochs_lock);
    return epoch;
}

samsa_epochs_fetch_t
samsa_plog_check_fetch_epoch(samsa_plog_t *plog, int32_t last_fetched_epoch,
                             int64_t fetch_offset, int32_t current,
                             int32_t *div_epoch, int64_t *div_end)
{
    int64_t               start = samsa_plog_log_start_offset(plog);
    int64_t               leo = samsa_plog_log_end_offset(plog);
    samsa_epochs_fetch_t  r;

    pthread_mutex_lock(&plog->epochs_lock);
    r = samsa_epochs_check_fetch(&plog->epochs, last_fetched_epoch,
                                 fetch_offset, leo, start, current,
                                 div_epoch, div_end);
    pthread_mutex_unlock(&plog->epochs_lock);
    return r;
}

int64_t
samsa_plog_truncation_offset(samsa_plog_t *plog, int32_t leader_epoch,
                             int64_t leader_end)
{
    int64_t  leo = samsa_plog_log_end_offset(plog);
    int64_t  off;

    pthread_mutex_lock(&plog->epochs_lock);
    off = samsa_epochs_truncation_offset(&plog->epochs, leo, leader_epoch,
                                         leader_end);
    pthread_mutex_unlock(&plog->epochs_lock);
    return off;
}
