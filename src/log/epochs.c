/*
 * log/epochs.c - the leader epoch cache (see epochs.h), after Kafka's
 * LeaderEpochFileCache.
 */
#include "log/epochs.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "util/alloc.h"

void
samsa_epochs_init(samsa_epochs_t *ep, const char *dir)
{
    char  path[PATH_MAX];

    memset(ep, 0, sizeof(*ep));
    snprintf(path, sizeof(path), "%s/leader-epoch-checkpoint", dir);
    ep->path = samsa_strdup(path);
    if (samsa_ckpt_epoch_read(path, &ep->e, &ep->n) != SAMSA_ERR_NONE) {
        ep->e = NULL;               /* reported by the reader */
        ep->n = 0;
    }
    ep->cap = ep->n;
}

void
samsa_epochs_fini(samsa_epochs_t *ep)
{
    samsa_free(ep->e);
    samsa_free(ep->path);
    memset(ep, 0, sizeof(*ep));
}

static samsa_err_t
epochs_save(samsa_epochs_t *ep)
{
    return samsa_ckpt_epoch_write(ep->path, ep->e, ep->n);
}

samsa_err_t
samsa_epochs_assign(samsa_epochs_t *ep, int32_t epoch, int64_t start_offset)
{
    if (epoch < 0 || (ep->n > 0 && epoch <= ep->e[ep->n - 1].epoch)) {
        return SAMSA_ERR_NONE;
    }
    while (ep->n > 0 && ep->e[ep->n - 1].start_offset >= start_offset) {
        ep->n--;                    /* an epoch that wrote nothing */
    }
    if (ep->n == ep->cap) {
        ep->cap = ep->cap > 0 ? ep->cap * 2 : 4;
        ep->e = samsa_realloc(ep->e, ep->cap * sizeof(*ep->e));
    }
    ep->e[ep->n++] = (samsa_ckpt_epoch_t) { epoch, start_offset };
    return epochs_save(ep);
}

samsa_err_t
samsa_epochs_truncate_end(samsa_epochs_t *ep, int64_t end_offset)
{
    size_t  n = ep->n;

    while (ep->n > 0 && ep->e[ep->n - 1].start_offset >= end_offset) {
        ep->n--;
    }
    return n == ep->n ? SAMSA_ERR_NONE : epochs_save(ep);
}

samsa_err_t
samsa_epochs_truncate_start(samsa_epochs_t *ep, int64_t start_offset)
{
    size_t  drop = 0;

    while (drop + 1 < ep->n && ep->e[drop + 1].start_offset <= start_offset) {
        drop++;
    }
    if (ep->n == 0 || (drop == 0 && ep->e[0].start_offset >= start_offset)) {
        return SAMSA_ERR_NONE;
    }
    memmove(ep->e, ep->e + drop, (ep->n - drop) * sizeof(*ep->e));
    ep->n -= drop;
    if (ep->e[0].start_offset < start_offset) {
        ep->e[0].start_offset = start_offset;
    }
    return epochs_save(ep);
}

int32_t
samsa_epochs_for_offset(const samsa_epochs_t *ep, int64_t offset)
{
    size_t  i;

    for (i = ep->n; i > 0; i--) {
        if (ep->e[i - 1].start_offset <= offset) {
            return ep->e[i - 1].epoch;
        }
    }
    return -1;
}

int32_t
samsa_epochs_latest(const samsa_epochs_t *ep)
{
    return ep->n > 0 ? ep->e[ep->n - 1].epoch : -1;
}

void
samsa_epochs_end_offset(const samsa_epochs_t *ep, int32_t epoch, int64_t leo,
                        int32_t current, int32_t *found_epoch,
                        int64_t *end_offset)
{
    size_t   i, n = ep->n;
    bool     extra = current > samsa_epochs_latest(ep);
    int32_t  latest = extra ? current : samsa_epochs_latest(ep);
    int32_t  floor = -1;
    int64_t  higher = -1;

    *found_epoch = -1;                  /* UNDEFINED_EPOCH */
    *end_offset = -1;                   /* UNDEFINED_EPOCH_OFFSET */
    if (epoch < 0 || latest < 0) {
        return;
    }
    if (epoch == latest) {
        *found_epoch = epoch;
        *end_offset = leo;
        return;
    }
    /* Kafka's floorEntry and higherEntry over the epochs (and current at
     * the LEO, if it is newer than them all) */
    for (i = 0; i < n; i++) {
        if (ep->e[i].epoch <= epoch) {
            floor = ep->e[i].epoch;
        } else {
            higher = ep->e[i].start_offset;
            break;
        }
    }
    if (higher < 0 && extra && current > epoch) {
        higher = leo;
    }
    if (higher < 0) {
        return;                         /* newer than any epoch known */
    }
    /* older than any known: the start of the first one after it */
    *found_epoch = floor >= 0 ? floor : epoch;
    *end_offset = higher;
}

samsa_epochs_fetch_t
samsa_epochs_check_fetch(const samsa_epochs_t *ep, int32_t last_fetched_epoch,
                         int64_t fetch_offset, int64_t leo, int64_t log_start,
                         int32_t current, int32_t *div_epoch,
                         int64_t *div_end)
{
    int32_t  found;
    int64_t  end;

    *div_epoch = -1;
    *div_end = -1;
    if (last_fetched_epoch < 0) {
        return SAMSA_EPOCHS_FETCH_OK;
    }
    samsa_epochs_end_offset(ep, last_fetched_epoch, leo, current, &found,
                            &end);
    if (found < 0 || end < 0 || fetch_offset < log_start) {
        return SAMSA_EPOCHS_FETCH_OUT_OF_RANGE;
    }
    if (found < last_fetched_epoch || end < fetch_offset) {
        *div_epoch = found;
        *div_end = end;
        return SAMSA_EPOCHS_FETCH_DIVERGING;
    }
    return SAMSA_EPOCHS_FETCH_OK;
}

static int64_t
epochs_min(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

int64_t
samsa_epochs_truncation_offset(const samsa_epochs_t *ep, int64_t leo,
                               int32_t leader_epoch, int64_t leader_end)
{
    int32_t  fe;
    int64_t  fend;

    if (leader_end < 0) {
        return leo;
    }
    if (leader_epoch < 0) {
        return epochs_min(leader_end, leo);
    }
    samsa_epochs_end_offset(ep, leader_epoch, leo, -1, &fe, &fend);
    if (fend < 0) {
        return epochs_min(leader_end, leo);     /* no epoch this old here */
    }
    if (fe != leader_epoch) {
        return epochs_min(fend, leo);           /* an epoch unknown here */
    }
    return epochs_min(epochs_min(fend, leader_end), leo);
}
