/*
 * log/tidx.h - a segment's time index (<base>.timeindex), Kafka's format:
 * entries of 8-byte timestamp and 4-byte offset relative to the segment's
 * base offset, big-endian.  An entry (t, o) says the largest timestamp up
 * to offset o (inclusive: o is the last offset of the batch that carried
 * it) is t; entries are added only when the largest timestamp grows, and
 * the last slot of the file is kept for the entry written when the
 * segment rolls (Kafka's TimeIndex.isFull is entries >= max - 1).
 * Threads and ownership as samsa_ixfile_t.
 */
#ifndef SAMSA_LOG_TIDX_H
#define SAMSA_LOG_TIDX_H

#include <stdbool.h>
#include <stdint.h>

#include <samsa/errors.h>

#include "log/ixfile.h"

#define SAMSA_TIDX_ENTRY_SIZE 12

typedef struct samsa_tidx {
    samsa_ixfile_t  file;
    int64_t         base_offset;    /* [const] */
} samsa_tidx_t;

typedef struct samsa_tidx_entry {
    int64_t  timestamp;             /* -1 for "none" */
    int64_t  offset;                /* absolute */
} samsa_tidx_entry_t;

SAMSA_MUST_CHECK samsa_err_t samsa_tidx_open(samsa_tidx_t *tidx,
                                             const char *path,
                                             int64_t base_offset,
                                             bool *created);
void samsa_tidx_close(samsa_tidx_t *tidx);

/* Append (timestamp, offset) if timestamp is above the last entry's (or
 * the index is empty) and offset is not below it.  roll uses the slot
 * kept for the last entry.  @returns false if the entry was not added.
 * @thread writer */
bool samsa_tidx_maybe_append(samsa_tidx_t *tidx, int64_t timestamp,
                             int64_t offset, bool roll);

/* Full for appends (the roll slot excepted). */
bool samsa_tidx_full(samsa_tidx_t *tidx);

/* The entry with the largest timestamp <= timestamp, or (-1, base). */
samsa_tidx_entry_t samsa_tidx_lookup(samsa_tidx_t *tidx, int64_t timestamp);

/* The last entry, or (-1, base). */
samsa_tidx_entry_t samsa_tidx_last(samsa_tidx_t *tidx);

/* Drop the entries with offset >= offset.  @thread writer */
void samsa_tidx_truncate_to(samsa_tidx_t *tidx, int64_t offset);

/* Size a multiple of 12, entries within [base, next_offset), timestamps
 * and offsets not decreasing (first and last checked; every entry with
 * full). */
bool samsa_tidx_sane(samsa_tidx_t *tidx, int64_t next_offset, bool full);

#endif /* SAMSA_LOG_TIDX_H */
