/*
 * log/ixfile.h - a file of fixed-size entries, mapped into memory, that
 * the offset index (idx) and the time index (tidx) are built on.  As in
 * Kafka's AbstractIndex, the file of the active segment is preallocated
 * (sparse) to segment.index.bytes rounded down to whole entries and
 * trimmed to the entries in use when the segment rolls or closes.
 *
 * Threads: one writer at a time (the partition's appender, which holds the
 * plog lock) appends, trims, resizes and truncates; any number of readers
 * look entries up concurrently.  An append writes its entry past the
 * published count and then publishes count + 1 (release), so readers,
 * which load the count (acquire) and read only below it, never see a
 * half-written entry and take no lock for it.  The rwlock is taken for
 * writing only by operations that move the mapping or shrink the count
 * (resize, truncate), and for reading by lookups.
 * No descriptor is held between calls: the mapping outlives the descriptor
 * it was made from, and resize, trim, flush and the block reservation of
 * an append open the file for the call (an open refused for want of
 * descriptors fails that call: see each).
 * Descriptor cache (log/fdcache.h): the owning segment may detach the file
 * while nobody uses it (no mapping; path, counts and lock kept) and
 * attach it again before the next use; every function but open, close,
 * detach, count and full needs it attached, which the segment's pin
 * guarantees (a detached file is never read).
 * Ownership: embedded in its index; the index's owner (the segment) opens
 * and closes it.
 */
#ifndef SAMSA_LOG_IXFILE_H
#define SAMSA_LOG_IXFILE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>

typedef struct samsa_ixfile {
    pthread_rwlock_t   lock;            /* read: lookups; write: remap or
                                           shrink (guards map, map_bytes) */
    char              *path;            /* [pin] the segment's files_lock
                                           (renames) */
    bool               attached;        /* [pin] mapped (when the file
                                           is not empty) and usable; no
                                           descriptor is kept either way */
    size_t             entry_size;      /* [const] */
    uint8_t           *map;             /* [lock] map_bytes mapped */
    size_t             map_bytes;       /* [lock] */
    size_t             max_entries;     /* [writer] entries the file holds */
    _Atomic size_t     n;               /* [atomic] entries in use: the
                                           writer's release after writing
                                           an entry pairs with the readers'
                                           acquire */
    size_t             alloc_bytes;     /* [writer] the file's first bytes
                                           known to have disk blocks
                                           (fallocate): an append below
                                           them stores into the mapping,
                                           no syscall; 0 after open and
                                           shrinking */
    bool               misaligned;      /* [writer] file size was not a
                                           multiple of entry_size at open
                                           (cleared by a resize) */
} samsa_ixfile_t;

/* Open (creating if missing: *created tells) the index file at path.  Its
 * entry count is its size / entry_size (a preallocated file left by a
 * crash shows up as zero entries at the end: the owner's sanity check
 * catches that).  @returns KAFKA_STORAGE_ERROR after a samsa_error naming
 * the file. */
SAMSA_MUST_CHECK samsa_err_t samsa_ixfile_open(samsa_ixfile_t *ix,
                                               const char *path,
                                               size_t entry_size,
                                               bool *created);
void samsa_ixfile_close(samsa_ixfile_t *ix);

/* Drop the mapping, keeping the rest (entry count, file size): the file
 * is idle.  No-op when detached. */
void samsa_ixfile_detach(samsa_ixfile_t *ix);

/* Open the file again at its path and map it (no-op when attached).
 * @returns SAMSA_ERR__NOFILE on EMFILE/ENFILE (nothing held),
 * KAFKA_STORAGE_ERROR after a samsa_error naming the file. */
SAMSA_MUST_CHECK samsa_err_t samsa_ixfile_attach(samsa_ixfile_t *ix);

/* The file was renamed to path (later opens use it).  @returns
 * the old name, for the caller to free once no thread can be reading it
 * (the name is swapped atomically; an error message may be using it). */
char *samsa_ixfile_set_path(samsa_ixfile_t *ix, const char *path);

/* Preallocate the file to max_bytes rounded down to whole entries (at
 * least the entries in use), as the active segment's index.  @returns
 * SAMSA_ERR__NOFILE when no descriptor could be opened, else as open.
 * @thread writer */
SAMSA_MUST_CHECK samsa_err_t samsa_ixfile_resize(samsa_ixfile_t *ix,
                                                 size_t max_bytes);

/* Shrink the file to the entries in use (roll, close); errors as resize.
 * @thread writer */
SAMSA_MUST_CHECK samsa_err_t samsa_ixfile_trim(samsa_ixfile_t *ix);

/* Append one entry (entry_size bytes): a store into the mapping where the
 * file has its blocks, else a pwrite (see ixfile.c); false if the file is
 * full or the write failed (a full device, no descriptor to be had): the
 * entry is skipped.  @thread writer */
bool samsa_ixfile_append(samsa_ixfile_t *ix, const void *entry);

/* Drop entries from n on (n <= count).  @thread writer */
void samsa_ixfile_truncate(samsa_ixfile_t *ix, size_t n);

bool samsa_ixfile_full(const samsa_ixfile_t *ix);

/* Entries in use (acquire). */
size_t samsa_ixfile_count(samsa_ixfile_t *ix);

/* Borrow the entries for reading: returns the first entry and sets *n;
 * the rwlock is held for reading until samsa_ixfile_read_end(). */
const uint8_t *samsa_ixfile_read_begin(samsa_ixfile_t *ix, size_t *n);
void samsa_ixfile_read_end(samsa_ixfile_t *ix);

/* fdatasync the file (covers the mapped writes on Linux); errors as
 * resize. */
SAMSA_MUST_CHECK samsa_err_t samsa_ixfile_flush(samsa_ixfile_t *ix);

#endif /* SAMSA_LOG_IXFILE_H */
