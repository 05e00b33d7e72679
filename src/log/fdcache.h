/*
 * log/fdcache.h - the log layer's cache of open file descriptors: an LRU
 * of "entries" (a segment: its .log, .index, .timeindex and .txnindex),
 * each opened on first use and closed when the descriptors held by all
 * entries would pass a budget (log.open.files.max).  An idle partition
 * holds no descriptor once its segments were evicted; an entry in use is
 * never closed.
 *
 * An entry is embedded in its owner and knows how to open and close the
 * owner's files (two callbacks).  samsa_fdcache_acquire() pins it: the
 * files are open (opened now if they were not, evicting the least
 * recently used unpinned entries to stay within the budget) and stay open
 * until the matching samsa_fdcache_release().  Pins nest and count; an
 * unpinned open entry sits in the LRU and may be closed by any thread
 * that needs room.  When an open fails with EMFILE/ENFILE even after every
 * unpinned entry was closed, acquire returns SAMSA_ERR__NOFILE, counts it
 * and, the first time only, logs a warning naming the limit and the key.
 * On EMFILE only entries whose lowest descriptor lies below the soft
 * RLIMIT_NOFILE are closed (closing one frees a number the next open can
 * use); when the limit was lowered below every entry's descriptors
 * (prlimit), nothing is closed in vain and the open is refused at once,
 * so the open partitions keep serving.
 *
 * Threads: any (handlers, network threads releasing a fetch region, the
 * log threads).  One mutex per cache (lock) guards every entry's state,
 * pin count, descriptor count and LRU links, and the cache's counters;
 * it is a leaf lock except that callbacks run without it: an entry being
 * opened or closed is marked OPENING/CLOSING, and other threads wanting it
 * wait on the cache's condition variable.  The owner's open callback may
 * take the owner's own locks (the segment's files_lock is taken before
 * acquire, never under the cache lock).
 * Ownership: the cache does not own entries; an entry is finished
 * (samsa_fdcache_ent_fini, which closes it) by its owner before the owner
 * is freed, and every entry is finished before its cache is freed.  The
 * process-wide cache (samsa_fdcache_global) is never freed.
 */
#ifndef SAMSA_LOG_FDCACHE_H
#define SAMSA_LOG_FDCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>

typedef struct samsa_fdcache samsa_fdcache_t;
typedef struct samsa_fdcache_ent samsa_fdcache_ent_t;

/* Open the owner's files; on success *nfds says how many descriptors they
 * hold now and *lowfd the lowest of them.  Must return SAMSA_ERR__NOFILE
 * (and close what it opened) when an open failed with EMFILE or ENFILE,
 * so the cache can evict and retry.  Called without the cache lock, with
 * the entry marked OPENING. */
typedef samsa_err_t samsa_fdcache_open_fn_t(samsa_fdcache_ent_t *ent,
                                            int *nfds, int *lowfd);
/* Close every descriptor the owner's files hold (mappings too).  Called
 * without the cache lock, with the entry marked CLOSING and unpinned. */
typedef void samsa_fdcache_close_fn_t(samsa_fdcache_ent_t *ent);

/* An entry: embedded in its owner; every field is the cache's [lock]. */
struct samsa_fdcache_ent {
    samsa_fdcache_ent_t       *prev;    /* LRU links (unpinned open only) */
    samsa_fdcache_ent_t       *next;
    samsa_fdcache_t           *cache;   /* [const] */
    samsa_fdcache_open_fn_t   *open;    /* [const] */
    samsa_fdcache_close_fn_t  *close;   /* [const] */
    int                        state;   /* SAMSA_FDCACHE_S_* */
    int                        pins;
    int                        nfds;    /* held while open; the last count
                                           (or the hint) while closed */
    int                        lowfd;   /* lowest descriptor while open */
};

#define SAMSA_FDCACHE_S_CLOSED   0
#define SAMSA_FDCACHE_S_OPENING  1
#define SAMSA_FDCACHE_S_OPEN     2
#define SAMSA_FDCACHE_S_CLOSING  3

/* Counters for /metrics and tests (a consistent snapshot). */
typedef struct samsa_fdcache_stats {
    int64_t   open_fds;         /* descriptors held by open entries */
    int64_t   budget;           /* log.open.files.max in force */
    int64_t   open_entries;
    int64_t   pinned_entries;
    uint64_t  opens;            /* entries opened (first open included) */
    uint64_t  evictions;        /* entries closed to make room */
    uint64_t  exhausted;        /* acquires refused: SAMSA_ERR__NOFILE */
} samsa_fdcache_stats_t;

/* The budget log.open.files.max = 0 stands for: half the soft
 * RLIMIT_NOFILE (the other half is for connections, checkpoints and
 * snapshots), but at most a quarter of vm.max_map_count (an open segment
 * also holds two mappings, its indexes), at least 64.  The environment
 * variable SAMSA_LOG_OPEN_FILES_MAX (> 0) overrides it, so tests can run
 * any code with a tiny budget. */
int64_t samsa_fdcache_default_budget(void);

samsa_fdcache_t *samsa_fdcache_new(int64_t budget);
void samsa_fdcache_free(samsa_fdcache_t *cache);   /* no entry left */

/* The cache every segment uses (created on first use with the default
 * budget; samsa_logmgr_open sets log.open.files.max). */
samsa_fdcache_t *samsa_fdcache_global(void);

/* Change the budget (<= 0: the default).  Entries over it are closed as
 * they become unpinned or as room is needed. */
void samsa_fdcache_set_budget(samsa_fdcache_t *cache, int64_t budget);

void samsa_fdcache_stats(samsa_fdcache_t *cache, samsa_fdcache_stats_t *st);

/* Prepare an entry (closed; nfds_hint descriptors expected at the first
 * open, for the room made before it). */
void samsa_fdcache_ent_init(samsa_fdcache_t *cache, samsa_fdcache_ent_t *ent,
                            samsa_fdcache_open_fn_t *open,
                            samsa_fdcache_close_fn_t *close, int nfds_hint);

/* Close the entry if open and forget it.  It must be unpinned and no
 * other thread may acquire it any more (its owner's last reference). */
void samsa_fdcache_ent_fini(samsa_fdcache_ent_t *ent);

/* Pin the entry, opening its files first if they are closed.  @returns
 * SAMSA_ERR__NOFILE when descriptors ran out (counted, warned once), or
 * the open callback's error; the entry is then unpinned and closed. */
SAMSA_MUST_CHECK samsa_err_t samsa_fdcache_acquire(samsa_fdcache_ent_t *ent);

/* Drop a pin taken by samsa_fdcache_acquire(); the last one puts the
 * entry at the head of the LRU (and closes the LRU's tail while the
 * cache is over its budget). */
void samsa_fdcache_release(samsa_fdcache_ent_t *ent);

/* The pinned entry now holds delta more descriptors (a file created while
 * it was in use: the first .txnindex entry). */
void samsa_fdcache_add_fds(samsa_fdcache_ent_t *ent, int delta);

/* Whether the entry is open (tests). */
bool samsa_fdcache_ent_is_open(samsa_fdcache_ent_t *ent);

/* Count and report descriptors running out outside an entry's open (the
 * caller's own open failed with EMFILE/ENFILE, e.g. a new partition's
 * directory); what names the file.  Logs once per cache. */
void samsa_fdcache_note_exhausted(samsa_fdcache_t *cache, const char *what);

/* Make sure one more descriptor can be opened now, closing least recently
 * used entries if needed, before work whose files are opened outside an
 * entry (a new partition: its directory, partition.metadata).  @returns
 * SAMSA_ERR__NOFILE (counted, warned once) when none can be had. */
SAMSA_MUST_CHECK samsa_err_t samsa_fdcache_make_spare(samsa_fdcache_t *cache);

/* Whether an errno means "no descriptor left" (EMFILE, ENFILE). */
bool samsa_fdcache_errno_is_nofile(int err);

#endif /* SAMSA_LOG_FDCACHE_H */
