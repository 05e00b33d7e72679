/*
 * broker/isrstate.c - see isrstate.h.  Threads: any (pure functions over
 * the caller's data).
 */
#include "broker/isrstate.h"

void
samsa_isrstate_follower_init(samsa_isrstate_follower_t *f, int32_t id)
{
    f->id = id;
    f->log_end_offset = -1;
    f->last_caught_up_ms = -1;
    f->last_fetch_leader_leo = -1;
    f->last_fetch_ms = -1;
    f->log_start_offset = -1;
}

static int64_t
isrstate_max(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

void
samsa_isrstate_follower_fetch(samsa_isrstate_follower_t *f,
                              int64_t fetch_offset, int64_t leader_leo,
                              int64_t now_ms)
{
    if (fetch_offset >= leader_leo) {
        f->last_caught_up_ms = isrstate_max(f->last_caught_up_ms, now_ms);
    } else if (f->last_fetch_leader_leo >= 0
               && fetch_offset >= f->last_fetch_leader_leo) {
        f->last_caught_up_ms = isrstate_max(f->last_caught_up_ms,
                                            f->last_fetch_ms);
    }
    f->log_end_offset = fetch_offset;
    f->last_fetch_leader_leo = leader_leo;
    f->last_fetch_ms = now_ms;
}

bool
samsa_isrstate_caught_up(const samsa_isrstate_follower_t *f,
                         int64_t leader_leo, int64_t now_ms, int64_t lag_ms)
{
    if (f->log_end_offset >= 0 && f->log_end_offset >= leader_leo) {
        return true;
    }
    return f->last_caught_up_ms >= 0
           && now_ms - f->last_caught_up_ms <= lag_ms;
}

static const samsa_isrstate_follower_t *
isrstate_find(const samsa_isrstate_follower_t *fs, size_t nfs, int32_t id)
{
    size_t  i;

    for (i = 0; i < nfs; i++) {
        if (fs[i].id == id) {
            return &fs[i];
        }
    }
    return NULL;
}

int64_t
samsa_isrstate_high_watermark(int64_t old_hw, int64_t leader_leo,
                              int32_t leader_id,
                              const samsa_isrstate_follower_t *fs, size_t nfs,
                              const int32_t *isr, size_t nisr)
{
    const samsa_isrstate_follower_t  *f;
    int64_t                           hw = leader_leo;
    size_t                            i;

    for (i = 0; i < nisr; i++) {
        if (isr[i] == leader_id) {
            continue;
        }
        f = isrstate_find(fs, nfs, isr[i]);
        if (f == NULL || f->log_end_offset < 0) {
            hw = old_hw < hw ? old_hw : hw;
        } else if (f->log_end_offset < hw) {
            hw = f->log_end_offset;
        }
    }
    if (hw < old_hw) {
        hw = old_hw;
    }
    return hw > leader_leo ? leader_leo : hw;
}

size_t
samsa_isrstate_shrink(const int32_t *isr, size_t nisr, int32_t leader_id,
                      const samsa_isrstate_follower_t *fs, size_t nfs,
                      int64_t leader_leo, int64_t now_ms, int64_t lag_ms,
                      int32_t *out)
{
    const samsa_isrstate_follower_t  *f;
    size_t                            i, n = 0;

    for (i = 0; i < nisr; i++) {
        f = isrstate_find(fs, nfs, isr[i]);
        if (isr[i] != leader_id && f != NULL
            && !samsa_isrstate_caught_up(f, leader_leo, now_ms, lag_ms)) {
            continue;
        }
        out[n++] = isr[i];
    }
    return n;
}

bool
samsa_isrstate_can_join(const samsa_isrstate_follower_t *f, int64_t hw,
                        int64_t leader_epoch_start_offset)
{
    return f->log_end_offset >= 0 && f->log_end_offset >= hw
           && f->log_end_offset >= leader_epoch_start_offset;
}

size_t
samsa_isrstate_maximal(const int32_t *isr, size_t nisr,
                       const int32_t *pending, size_t npending, int32_t *out)
{
    size_t  i, j, n = 0;
    bool    seen;

    for (i = 0; i < nisr; i++) {
        out[n++] = isr[i];
    }
    for (i = 0; i < npending; i++) {
        seen = false;
        for (j = 0; j < nisr && !seen; j++) {
            seen = isr[j] == pending[i];
        }
        if (!seen) {
            out[n++] = pending[i];
        }
    }
    return n;
}

bool
samsa_isrstate_acks_done(int64_t hw, int64_t required_offset, size_t nisr,
                         int32_t min_isr, samsa_err_t *err)
{
    if (hw < required_offset) {
        *err = SAMSA_ERR_NONE;
        return false;
    }
    *err = min_isr > 0 && nisr < (size_t) min_isr
           ? SAMSA_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND : SAMSA_ERR_NONE;
    return true;
}

bool
samsa_isrstate_acks_answer(bool leads, int32_t leader_epoch,
                           int32_t append_epoch, int64_t hw,
                           int64_t required_offset, size_t nisr,
                           int32_t min_isr, samsa_err_t *err)
{
    if (!leads || leader_epoch != append_epoch) {
        *err = SAMSA_ERR_NOT_LEADER_OR_FOLLOWER;
        return true;
    }
    return samsa_isrstate_acks_done(hw, required_offset, nisr, min_isr, err);
}

samsa_err_t
samsa_isrstate_check_min_isr(size_t nisr, int32_t min_isr)
{
    return min_isr > 0 && nisr < (size_t) min_isr
           ? SAMSA_ERR_NOT_ENOUGH_REPLICAS : SAMSA_ERR_NONE;
}
