/*
 * log/epochs.h - a partition's leader epoch cache and its file
 * (<topic>-<partition>/leader-epoch-checkpoint, Kafka's format "0\n<n>\n
 * <epoch> <start offset>\n..."): for each leader epoch, the first offset
 * written in it.  ListOffsets and OffsetForLeaderEpoch answer from
 * it.  Every change rewrites the file atomically.
 * Threads: not thread-safe; the owning plog guards it with its lock.
 * Ownership: embedded in the plog.
 */
#ifndef SAMSA_LOG_EPOCHS_H
#define SAMSA_LOG_EPOCHS_H

#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>

#include "log/ckpt.h"

typedef struct samsa_epochs {
    char                *path;      /* the checkpoint file */
    samsa_ckpt_epoch_t  *e;         /* ascending epochs and offsets */
    size_t               n;
    size_t               cap;
} samsa_epochs_t;

/* Load the file in dir (missing or malformed: empty, with a warning). */
void samsa_epochs_init(samsa_epochs_t *ep, const char *dir);
void samsa_epochs_fini(samsa_epochs_t *ep);

/* Epoch epoch starts at start_offset (ignored unless above the latest
 * epoch; a latest entry starting at or after start_offset is replaced). */
SAMSA_MUST_CHECK samsa_err_t samsa_epochs_assign(samsa_epochs_t *ep,
                                                 int32_t epoch,
                                                 int64_t start_offset);

/* Drop what lies at or after end_offset (log truncation). */
SAMSA_MUST_CHECK samsa_err_t samsa_epochs_truncate_end(samsa_epochs_t *ep,
                                                       int64_t end_offset);

/* The log now starts at start_offset: drop epochs wholly below it and
 * move the first one's start up to it. */
SAMSA_MUST_CHECK samsa_err_t samsa_epochs_truncate_start(
    samsa_epochs_t *ep, int64_t start_offset);

/* The epoch offset belongs to, or -1. */
int32_t samsa_epochs_for_offset(const samsa_epochs_t *ep, int64_t offset);

/* The latest epoch, or -1. */
int32_t samsa_epochs_latest(const samsa_epochs_t *ep);

/* Kafka's LeaderEpochFileCache.endOffsetFor(epoch, leo): (epoch, leo) for
 * the latest epoch; else the largest epoch <= epoch (epoch itself if it is
 * older than every one known) and the offset where the next one starts;
 * (-1, -1) for epoch -1, an empty cache or one newer than every epoch.
 * current, the leader's epoch now (-1: none), counts as an epoch starting
 * at leo when it is newer than the cache's latest: Kafka assigns it on
 * becoming leader, the cache here when the first batch of it is written. */
void samsa_epochs_end_offset(const samsa_epochs_t *ep, int32_t epoch,
                             int64_t leo, int32_t current,
                             int32_t *found_epoch, int64_t *end_offset);

/* What the leader makes of a fetch's LastFetchedEpoch (KIP-320). */
typedef enum samsa_epochs_fetch {
    SAMSA_EPOCHS_FETCH_OK,              /* read on (no epoch, or agrees) */
    SAMSA_EPOCHS_FETCH_DIVERGING,       /* answer DivergingEpoch, no data */
    SAMSA_EPOCHS_FETCH_OUT_OF_RANGE,    /* OFFSET_OUT_OF_RANGE */
} samsa_epochs_fetch_t;

/* The leader's check of a fetch at fetch_offset whose records so far end
 * in last_fetched_epoch (-1: none, no check), after Kafka's
 * Partition.readRecords: the end offset of that epoch here
 * (samsa_epochs_end_offset with leo and current); none found, or
 * fetch_offset below log_start: OUT_OF_RANGE; the epoch found older than
 * last_fetched_epoch, or its end below fetch_offset: DIVERGING with
 * *div_epoch and *div_end set to that epoch and end (the follower
 * truncates from there).  Pure: no I/O, no lock. */
samsa_epochs_fetch_t samsa_epochs_check_fetch(const samsa_epochs_t *ep,
                                              int32_t last_fetched_epoch,
                                              int64_t fetch_offset,
                                              int64_t leo, int64_t log_start,
                                              int32_t current,
                                              int32_t *div_epoch,
                                              int64_t *div_end);

/* Where a follower whose log ends at leo truncates when its leader
 * answers DivergingEpoch {leader_epoch, leader_end}, after Kafka's
 * AbstractFetcherThread.getOffsetTruncationState: with this log's end
 * offset for leader_epoch (fe, fend), min(fend, leader_end, leo) when
 * fe == leader_epoch; min(fend, leo) when this log does not know that
 * epoch (the next fetch asks again from there); min(leader_end, leo)
 * when this log has no epoch at or below it or leader_epoch is -1; leo
 * (nothing) when leader_end is -1.  Pure: no I/O, no lock. */
int64_t samsa_epochs_truncation_offset(const samsa_epochs_t *ep, int64_t leo,
                                       int32_t leader_epoch,
                                       int64_t leader_end);

#endif /* SAMSA_LOG_EPOCHS_H */
