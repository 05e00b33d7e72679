/*
 * log/seg.h - one log segment: <dir>/<20-digit base offset>.log (record
 * batches back to back, offsets assigned), its offset index (.index) and
 * time index (.timeindex) and, once a transaction was aborted in it, its
 * transaction index (.txnindex), as in Kafka's LogSegment.
 *
 * Threads: a segment is shared.  Its writer (the partition's appender,
 * holding the plog lock) appends, rolls, truncates and recovers it; readers
 * (fetches, ListOffsets, flushes) use it concurrently without that lock.
 * The writer publishes the segment's end (next offset and size, one 64-bit
 * atomic) with release after the bytes are written, and readers load it
 * with acquire, so everything below the end they see is complete.
 * Functions marked @thread writer must be called with the plog lock held
 * (or before the segment is shared); the rest are safe anywhere.
 * Ownership: refcounted.  samsa_seg_open() returns one reference; every
 * holder (the partition's segment list, a fetch's file region, a flush)
 * holds its own and drops it with samsa_seg_unref(); the last one closes
 * the files.
 * Descriptors (log/fdcache.h): a reference does not keep files open.  The
 * files are opened at samsa_seg_open() and then whenever a user pins the
 * segment (samsa_seg_pin; every operation below pins for its own
 * duration), and the process-wide descriptor cache closes the least
 * recently used unpinned segments beyond log.open.files.max.  A fetch
 * region pins its segment until it is released, so the fd it hands out
 * stays open (and an unlinked segment's fd keeps serving) until then.  A
 * closed segment keeps in memory what it knew (end, entry counts,
 * timestamps) and reopens its files under their current names.  Any
 * operation may return SAMSA_ERR__NOFILE: descriptors ran out even after
 * evicting (transient: the segment is unchanged; not a storage error).
 */
#ifndef SAMSA_LOG_SEG_H
#define SAMSA_LOG_SEG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include <samsa/errors.h>

#include "log/idx.h"
#include "proto/batch.h"

typedef struct samsa_seg samsa_seg_t;

/* Where a segment ends: the offset after its last batch and its size in
 * bytes.  Both come from one atomic load, so they always agree. */
typedef struct samsa_seg_end {
    int64_t   next_offset;
    uint32_t  size;
} samsa_seg_end_t;

/* A batch found in a segment. */
typedef struct samsa_seg_pos {
    uint32_t           pos;         /* where it starts in the .log */
    samsa_batch_hdr_t  hdr;         /* its header */
} samsa_seg_pos_t;

/* What samsa_seg_scan() found. */
typedef struct samsa_seg_scan {
    uint32_t      valid_bytes;      /* end of the last good batch */
    int64_t       next_offset;      /* offset after the last good batch */
    int64_t       nbatches;         /* good batches scanned */
    uint64_t      file_bytes;       /* size of the .log */
    const char   *stop;             /* why the scan stopped before the end
                                       of the file (static text), or NULL */
} samsa_seg_scan_t;

#define SAMSA_SEG_F_CREATE  0x1     /* new segment: create empty files */
#define SAMSA_SEG_F_ACTIVE  0x2     /* preallocate the indexes (appends) */

/* "<dir>/<20-digit base><suffix>" into buf. */
void samsa_seg_path(char *buf, size_t size, const char *dir,
                    int64_t base_offset, const char *suffix);

/* Open the segment at base_offset in dir.  With SAMSA_SEG_F_CREATE the
 * files are created empty (leftovers of that name are replaced, with a
 * warning); else the .log must exist and a missing index is created empty
 * and reported by samsa_seg_indexes_created().  The end of an existing
 * segment is unknown until samsa_seg_scan() or samsa_seg_set_end().
 * index_max_bytes sizes the indexes of an active segment.
 * @returns KAFKA_STORAGE_ERROR (samsa_error names the file), or _NOENT
 * when the .log of an existing segment is missing. */
SAMSA_MUST_CHECK samsa_err_t samsa_seg_open(const char *dir,
                                            int64_t base_offset, int flags,
                                            int32_t index_max_bytes,
                                            int64_t now_ms,
                                            samsa_seg_t **out);

/* As samsa_seg_open() for files named "<base>.log<suffix>" (and the
 * indexes likewise): the log cleaner writes its output as ".cleaned". */
SAMSA_MUST_CHECK samsa_err_t samsa_seg_open_suffixed(
    const char *dir, int64_t base_offset, const char *suffix, int flags,
    int32_t index_max_bytes, int64_t now_ms, samsa_seg_t **out);

/* Rename the three files from "<name><from>" to "<name><to>" (the two
 * indexes first, the .log last: the .log's rename is what counts at
 * recovery).  The open fds keep working.  @thread writer (or before the
 * segment is shared) */
SAMSA_MUST_CHECK samsa_err_t samsa_seg_rename_suffix(samsa_seg_t *seg,
                                                     const char *from,
                                                     const char *to);

samsa_seg_t *samsa_seg_ref(samsa_seg_t *seg);
void samsa_seg_unref(samsa_seg_t *seg);     /* NULL: no-op */

/* Keep the segment's files open until samsa_seg_unpin() (opening them if
 * the descriptor cache closed them).  Pins nest.  @returns
 * SAMSA_ERR__NOFILE when descriptors ran out, KAFKA_STORAGE_ERROR when a
 * file cannot be opened (samsa_error names it). */
SAMSA_MUST_CHECK samsa_err_t samsa_seg_pin(samsa_seg_t *seg);
void samsa_seg_unpin(samsa_seg_t *seg);
bool samsa_seg_is_open(samsa_seg_t *seg);           /* tests */

int64_t samsa_seg_base(const samsa_seg_t *seg);
samsa_seg_end_t samsa_seg_end(samsa_seg_t *seg);    /* acquire */
/* The .log's fd, for O_RDONLY use only, valid only while the caller holds
 * a pin (samsa_seg_pin). */
int samsa_seg_fd(const samsa_seg_t *seg);
/* fstat of the .log (pins for the call). */
SAMSA_MUST_CHECK samsa_err_t samsa_seg_stat(samsa_seg_t *seg,
                                            struct stat *st);
const char *samsa_seg_log_path(const samsa_seg_t *seg);
bool samsa_seg_indexes_created(const samsa_seg_t *seg);

/* The largest batch MaxTimestamp seen and the last offset of its batch
 * (-1, base when none). */
int64_t samsa_seg_max_timestamp(samsa_seg_t *seg, int64_t *offset);

/* Append len bytes of whole batches with offsets already assigned
 * (samsa_batch_assign), adding index entries every index_interval_bytes
 * as Kafka does, then publish the new end.  On a write error the file is
 * cut back to its old size.  @returns _NOSPC when the device is full
 * (ENOSPC, EDQUOT) and the cut back worked, so the segment is as before
 * and a later append may succeed; KAFKA_STORAGE_ERROR for other errors.
 * @thread writer */
SAMSA_MUST_CHECK samsa_err_t samsa_seg_append(samsa_seg_t *seg,
                                              const uint8_t *p, size_t len,
                                              int32_t index_interval_bytes);

/* Kafka's LogSegment.shouldRoll for an append of len bytes whose largest
 * timestamp is max_ts and last offset last_offset.  @thread writer */
bool samsa_seg_should_roll(samsa_seg_t *seg, size_t len, int64_t max_ts,
                           int64_t last_offset, int32_t segment_bytes,
                           int64_t roll_ms, int64_t now_ms);

/* The segment stops being active: write the time index's closing entry
 * and trim both indexes to their entries.  @thread writer */
SAMSA_MUST_CHECK samsa_err_t samsa_seg_seal(samsa_seg_t *seg);

/* The segment becomes active again (load, truncation): preallocate its
 * indexes to index_max_bytes.  @thread writer */
SAMSA_MUST_CHECK samsa_err_t samsa_seg_activate(samsa_seg_t *seg,
                                                int32_t index_max_bytes);

/* The first batch whose last offset is >= offset and that starts below
 * limit bytes (an index lookup, then batch headers).  @returns _NOENT if
 * there is none, KAFKA_STORAGE_ERROR on a read error. */
SAMSA_MUST_CHECK samsa_err_t samsa_seg_find_offset(samsa_seg_t *seg,
                                                   int64_t offset,
                                                   uint32_t limit,
                                                   samsa_seg_pos_t *out);

/* The first batch whose MaxTimestamp is >= timestamp and whose last
 * offset is >= min_offset, below limit bytes (time index, offset index,
 * then batch headers).  @returns _NOENT if none. */
SAMSA_MUST_CHECK samsa_err_t samsa_seg_find_timestamp(samsa_seg_t *seg,
                                                      int64_t timestamp,
                                                      int64_t min_offset,
                                                      uint32_t limit,
                                                      samsa_seg_pos_t *out);

/* Read size bytes at pos into buf.  @returns KAFKA_STORAGE_ERROR on error
 * or short read. */
SAMSA_MUST_CHECK samsa_err_t samsa_seg_read(samsa_seg_t *seg, uint32_t pos,
                                            void *buf, size_t size);

/* Scan the batches from pos (the start of a batch whose offsets begin at
 * or after from_offset) to the end of the file, checking each: header,
 * size within the file, CRC, offsets increasing and within the segment.
 * The scan stops at the first bad batch.  With rebuild the indexes are
 * emptied first and rebuilt from the batches scanned (pos must be 0).
 * The segment's end and largest timestamp are set from what was found;
 * bytes past valid_bytes are left for the caller to cut (or not).
 * @thread writer */
SAMSA_MUST_CHECK samsa_err_t samsa_seg_scan(samsa_seg_t *seg, uint32_t pos,
                                            int64_t from_offset,
                                            bool rebuild,
                                            int32_t index_interval_bytes,
                                            samsa_seg_scan_t *res);

/* Set the end of a segment that was not scanned (a sealed segment whose
 * next offset is the following segment's base) and take its largest
 * timestamp from the time index.  @thread writer */
void samsa_seg_set_end(samsa_seg_t *seg, int64_t next_offset, uint32_t size);

/* Whether both indexes pass their sanity checks against a segment ending
 * at next_offset and size bytes (full: every entry, else the first and
 * last); false if the files cannot be opened. */
bool samsa_seg_indexes_sane(samsa_seg_t *seg, int64_t next_offset,
                            uint32_t size, bool full);

/* The offset index's last entry, or (base, 0). */
samsa_idx_entry_t samsa_seg_last_index_entry(samsa_seg_t *seg);

/* Cut the .log at pos bytes (a batch boundary whose first offset is
 * next_offset) and drop index entries at or past next_offset.
 * @thread writer */
SAMSA_MUST_CHECK samsa_err_t samsa_seg_truncate(samsa_seg_t *seg,
                                                uint32_t pos,
                                                int64_t next_offset);

/* fdatasync the .log, both indexes and the transaction index. */
SAMSA_MUST_CHECK samsa_err_t samsa_seg_flush(samsa_seg_t *seg);

/* fdatasync the .log only (group commit: the indexes can be rebuilt). */
SAMSA_MUST_CHECK samsa_err_t samsa_seg_flush_data(samsa_seg_t *seg);

/* ---- transaction index (.txnindex) --------------------------------------- */

/* One aborted transaction, Kafka's AbortedTxn: 34 bytes on disk, big-endian
 * version int16 (0) | producer id int64 | first offset int64 | last offset
 * int64 (its abort marker) | last stable offset int64 (when it ended). */
typedef struct samsa_seg_aborted {
    int64_t  producer_id;
    int64_t  first_offset;
    int64_t  last_offset;
    int64_t  last_stable_offset;
} samsa_seg_aborted_t;

#define SAMSA_SEG_TXN_ENTRY_SIZE 34

/* Append an aborted transaction whose marker went into this segment (the
 * file is created on the first one).  @thread writer */
SAMSA_MUST_CHECK samsa_err_t samsa_seg_txn_append(
    samsa_seg_t *seg, const samsa_seg_aborted_t *a);

/* Drop the entries whose marker is at or after offset (recovery rebuilds
 * them).  @thread writer */
SAMSA_MUST_CHECK samsa_err_t samsa_seg_txn_truncate(samsa_seg_t *seg,
                                                    int64_t offset);

/* Kafka's TransactionIndex.collectAbortedTxns: call fn for each entry
 * with last_offset >= fetch_offset and first_offset < upper; *complete
 * becomes true once an entry's last stable offset reaches upper (later
 * segments cannot hold more).  fn returns false to stop.
 * @returns KAFKA_STORAGE_ERROR on a read error. */
typedef bool samsa_seg_aborted_fn_t(void *ctx, const samsa_seg_aborted_t *a);
SAMSA_MUST_CHECK samsa_err_t samsa_seg_txn_collect(
    samsa_seg_t *seg, int64_t fetch_offset, int64_t upper,
    samsa_seg_aborted_fn_t *fn, void *ctx, bool *complete);

/* The header of the batch at pos, which must end by limit.  @returns
 * _NOENT at or past limit, KAFKA_STORAGE_ERROR for a header that does not
 * parse or a read error. */
SAMSA_MUST_CHECK samsa_err_t samsa_seg_batch_at(samsa_seg_t *seg,
                                                uint32_t pos, uint32_t limit,
                                                samsa_batch_hdr_t *hdr);

/* Rename the four files to "<name>.deleted" (Kafka's async delete); the
 * segment keeps working through its open fds.  @thread writer */
SAMSA_MUST_CHECK samsa_err_t samsa_seg_mark_deleted(samsa_seg_t *seg);

/* Before a deleted segment's files are unlinked: if anyone besides the
 * caller still holds seg (a reader), pin it open until its last reference
 * goes, so that the reader keeps its descriptors and mappings rather than
 * reopening names that are gone (ENOENT).  A pin that cannot open (the
 * files are already gone, EMFILE) is logged and the reader gets the
 * reopen's error as before.  @thread any (the unlinker) */
void samsa_seg_hold_open_if_shared(samsa_seg_t *seg);

/* Unlink the files of segment base_offset in dir named with suffix ("" or
 * ".deleted"); missing files are fine. */
void samsa_seg_unlink_files(const char *dir, int64_t base_offset,
                            const char *suffix);

#endif /* SAMSA_LOG_SEG_H */
