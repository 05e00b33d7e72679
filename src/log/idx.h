/*
 * log/idx.h - a segment's offset index (<base>.index), Kafka's format:
 * sparse entries of 4-byte offset relative to the segment's base offset
 * and 4-byte position of a batch in the .log, big-endian, offsets strictly
 * increasing.  An entry (o, p) says the batch whose last offset is o
 * starts at p, so a lookup gives where to start scanning batch headers.
 * Threads and ownership as samsa_ixfile_t: the segment's appender (plog
 * lock held) writes; lookups run on any thread without the plog lock.
 */
#ifndef SAMSA_LOG_IDX_H
#define SAMSA_LOG_IDX_H

#include <stdbool.h>
#include <stdint.h>

#include <samsa/errors.h>

#include "log/ixfile.h"

#define SAMSA_IDX_ENTRY_SIZE 8

typedef struct samsa_idx {
    samsa_ixfile_t  file;           /* file-level operations go to this */
    int64_t         base_offset;    /* [const] */
} samsa_idx_t;

typedef struct samsa_idx_entry {
    int64_t   offset;               /* absolute */
    uint32_t  pos;                  /* position in the .log */
} samsa_idx_entry_t;

SAMSA_MUST_CHECK samsa_err_t samsa_idx_open(samsa_idx_t *idx,
                                            const char *path,
                                            int64_t base_offset,
                                            bool *created);
void samsa_idx_close(samsa_idx_t *idx);

/* Append (offset, pos); false when full or when offset does not fit
 * (not above the last entry, or not within int32 of the base).
 * @thread writer */
bool samsa_idx_append(samsa_idx_t *idx, int64_t offset, uint32_t pos);

/* The entry with the largest offset <= offset, or (base, 0) if none. */
samsa_idx_entry_t samsa_idx_lookup(samsa_idx_t *idx, int64_t offset);

/* The last entry, or (base, 0) if none. */
samsa_idx_entry_t samsa_idx_last(samsa_idx_t *idx);

/* Drop the entries with offset >= offset.  @thread writer */
void samsa_idx_truncate_to(samsa_idx_t *idx, int64_t offset);

/* Kafka's sanity check, a little wider: the size is a multiple of 8, the
 * first and last entries lie within [base, next_offset) and within
 * log_size bytes, in order (with full: every entry, strictly increasing
 * offsets and non-decreasing positions).  False means: rebuild. */
bool samsa_idx_sane(samsa_idx_t *idx, int64_t next_offset, uint32_t log_size,
                    bool full);

#endif /* SAMSA_LOG_IDX_H */
