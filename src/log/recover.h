/*
 * log/recover.h - loading one partition directory's segments at start,
 * after Kafka's LogLoader.  After an unclean stop (no clean-shutdown
 * marker in the log dir) every segment from the one holding the recovery
 * point to the end is scanned: every batch's size, CRC and offsets are
 * checked, a torn or corrupt tail is cut off (and the segments after a
 * cut are deleted), and the indexes are rebuilt from the batches.  After
 * a clean stop only the last segment's tail (from its last index entry)
 * is read, to find the end.  Either way a segment whose index is missing
 * or fails its sanity check gets its indexes rebuilt, stray files
 * (".deleted", ".tmp", orphan indexes) are removed, and every change is
 * reported with samsa_warn naming the file.
 * Threads: any (a recovery thread of the log manager); one call per
 * directory at a time, before the partition is shared.
 */
#ifndef SAMSA_LOG_RECOVER_H
#define SAMSA_LOG_RECOVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>

#include "log/seg.h"

typedef struct samsa_recover_args {
    const char  *dir;                   /* <log dir>/<topic>-<partition> */
    int64_t      recovery_point;        /* from the checkpoint; -1 unknown:
                                           scan everything */
    int64_t      log_start_offset;      /* from the checkpoint; -1 unknown */
    bool         clean;                 /* clean-shutdown marker found */
    int32_t      index_max_bytes;       /* segment.index.bytes */
    int32_t      index_interval_bytes;  /* index.interval.bytes */
    int64_t      now_ms;
} samsa_recover_args_t;

typedef struct samsa_recover_result {
    samsa_seg_t  **segs;                /* oldest first, one ref each; the
                                           last is active (indexes
                                           preallocated); never empty */
    size_t         nsegs;
    int64_t        log_end_offset;
    int64_t        log_start_offset;
    int64_t        recovery_point;      /* everything below is on disk */
    int64_t        truncated_bytes;     /* cut off torn/corrupt tails */
    int32_t        segs_scanned;        /* fully checked */
    int32_t        segs_deleted;        /* after a corrupt one */
    int32_t        indexes_rebuilt;     /* segments whose indexes were
                                           rebuilt outside a recovery scan */
} samsa_recover_result_t;

/* Load dir's segments as above, creating an empty first segment (at the
 * log start offset) if there is none.  On success res holds the segments;
 * release them with samsa_recover_result_fini() unless taken.
 * @returns KAFKA_STORAGE_ERROR on an I/O failure (samsa_error names the
 * file); corrupt data is never an error, it is cut off. */
SAMSA_MUST_CHECK samsa_err_t samsa_recover_partition(
    const samsa_recover_args_t *args, samsa_recover_result_t *res);

void samsa_recover_result_fini(samsa_recover_result_t *res);

#endif /* SAMSA_LOG_RECOVER_H */
