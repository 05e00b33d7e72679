/*
 * log/plog_clean.c - the partition log's side of the log cleaner (see
 * plog.h): snapshots of the segment list, the crash-safe swap of cleaned
 * segments, and the cleaner's per-log state.  What to clean and how is
 * decided in log/cleaner.c, which works on the snapshot without the plog
 * lock (sealed segments never change); only the swap takes the lock.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "log/ckpt.h"
#include "log/plog.h"
#include "log/plog_int.h"
#include "util/alloc.h"
#include "util/diag.h"
#include "util/fault.h"

samsa_seg_t **
samsa_plog_clean_snapshot(samsa_plog_t *plog, size_t *n)
{
    samsa_plog_segs_t  *segs = samsa_plog_segs_get(plog);
    samsa_seg_t       **out;
    size_t              i;

    out = samsa_calloc(segs->n, sizeof(*out));
    for (i = 0; i < segs->n; i++) {
        out[i] = samsa_seg_ref(segs->seg[i]);
    }
    *n = segs->n;
    samsa_plog_segs_put(segs);
    return out;
}

void
samsa_plog_clean_release(samsa_seg_t **segs, size_t n)
{
    size_t  i;

    for (i = 0; segs != NULL && i < n; i++) {
        samsa_seg_unref(segs[i]);
    }
    samsa_free(segs);
}

/* Where old[0..nold) sit in the current list (not reaching the active
 * segment), or SIZE_MAX.  @locks lock held */
static size_t
plog_clean_locate(const samsa_plog_segs_t *segs, samsa_seg_t *const *old,
                  size_t nold)
{
    size_t  i, j;

    for (i = 0; i + nold < segs->n; i++) {
        if (segs->seg[i] != old[0]) {
            continue;
        }
        for (j = 1; j < nold && segs->seg[i + j] == old[j]; j++) {
        }
        return j == nold ? i : SIZE_MAX;
    }
    return SIZE_MAX;
}

/* Publish the list with segs[at, at + nold) replaced by cleaned.
 * @locks lock held, segs_lock taken */
static void
plog_clean_publish(samsa_plog_t *plog, size_t at, size_t nold,
                   samsa_seg_t *cleaned)
{
    samsa_plog_segs_t  *old = plog->segs, *segs;
    size_t              i, k = 0;

    segs = samsa_malloc(sizeof(*segs)
                        + (old->n - nold + 1) * sizeof(segs->seg[0]));
    atomic_init(&segs->refcnt, 1);
    segs->n = old->n - nold + 1;
    for (i = 0; i < old->n; i++) {
        if (i == at) {
            segs->seg[k++] = samsa_seg_ref(cleaned);
        }
        if (i < at || i >= at + nold) {
            segs->seg[k++] = samsa_seg_ref(old->seg[i]);
        }
    }
    pthread_mutex_lock(&plog->segs_lock);
    plog->segs = segs;
    pthread_mutex_unlock(&plog->segs_lock);
    samsa_plog_segs_put(old);
}

/* The renames: old files to .deleted (remembered for unlinking), then the
 * .swap files to their final names, then the directory's fsync.
 * @locks lock held */
static samsa_err_t
plog_clean_rename(samsa_plog_t *plog, samsa_seg_t *const *old, size_t nold,
                  samsa_seg_t *cleaned, int64_t now_ms)
{
    samsa_err_t  err = SAMSA_ERR_NONE;
    int64_t      due;
    size_t       i;

    if (__builtin_add_overflow(now_ms, plog->cfg.file_delete_delay_ms, &due)) {
        due = INT64_MAX;
    }
    for (i = 0; i < nold && err == SAMSA_ERR_NONE; i++) {
        err = samsa_seg_mark_deleted(old[i]);
        if (err == SAMSA_ERR_NONE) {
            samsa_plog_doom(plog, old[i], due);
        }
    }
    SAMSA_FAULT("cleaner.swap.after_mark_deleted");
    if (err == SAMSA_ERR_NONE) {
        err = samsa_seg_rename_suffix(cleaned, ".swap", "");
    }
    SAMSA_FAULT("cleaner.swap.after_rename");
    if (err == SAMSA_ERR_NONE) {
        err = samsa_ckpt_fsync_dir(plog->dir);
    }
    return err;
}

samsa_err_t
samsa_plog_clean_swap(samsa_plog_t *plog, samsa_seg_t *const *old,
                      size_t nold, samsa_seg_t *cleaned, int64_t end_offset,
                      int64_t now_ms)
{
    samsa_err_t  err;
    size_t       at = SIZE_MAX;

    samsa_assert(nold > 0);
    pthread_mutex_lock(&plog->lock);
    err = samsa_plog_check_writable(plog);
    if (err == SAMSA_ERR_NONE) {
        at = plog_clean_locate(plog->segs, old, nold);
        err = at == SIZE_MAX ? SAMSA_ERR__STATE : SAMSA_ERR_NONE;
    }
    if (err == SAMSA_ERR_NONE) {
        err = plog_clean_rename(plog, old, nold, cleaned, now_ms);
        if (err != SAMSA_ERR_NONE) {
            samsa_plog_go_offline(plog);
        }
    }
    if (err == SAMSA_ERR_NONE) {
        samsa_seg_set_end(cleaned, end_offset, samsa_seg_end(cleaned).size);
        plog_clean_publish(plog, at, nold, cleaned);
        if (at == 0 && samsa_seg_base(cleaned)
                           > samsa_plog_log_start_offset(plog)) {
            samsa_plog_set_log_start(plog, samsa_seg_base(cleaned));
        }
    }
    pthread_mutex_unlock(&plog->lock);
    return err;
}

int64_t
samsa_plog_clean_offset(samsa_plog_t *plog)
{
    return atomic_load_explicit(&plog->clean_offset, memory_order_acquire);
}

void
samsa_plog_set_clean_offset(samsa_plog_t *plog, int64_t offset)
{
    atomic_store_explicit(&plog->clean_offset, offset, memory_order_release);
}

int64_t
samsa_plog_clean_horizon(samsa_plog_t *plog)
{
    return atomic_load_explicit(&plog->horizon_due, memory_order_acquire);
}

void
samsa_plog_set_clean_horizon(samsa_plog_t *plog, int64_t horizon_ms)
{
    atomic_store_explicit(&plog->horizon_due, horizon_ms,
                          memory_order_release);
}

bool
samsa_plog_clean_claim(samsa_plog_t *plog)
{
    return !atomic_exchange_explicit(&plog->cleaning, true,
                                     memory_order_acq_rel);
}

void
samsa_plog_clean_unclaim(samsa_plog_t *plog)
{
    atomic_store_explicit(&plog->cleaning, false, memory_order_release);
}
