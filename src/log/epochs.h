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

#endif /* SAMSA_LOG_EPOCHS_H */
