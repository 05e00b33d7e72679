/*
 * log/fdcache.c - the LRU of open log files (see fdcache.h).
 * The LRU is a doubly linked list of the open, unpinned entries, most
 * recently released at the head; eviction takes the tail.  Closing and
 * opening run without the lock (the entry's state keeps others off it).
 */
#include "log/fdcache.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/diag.h"

#define FDCACHE_MIN_BUDGET  64

/* samsa_fdcache_t - shared by every thread that touches a log file. */
struct samsa_fdcache {
    pthread_mutex_t       lock;         /* guards everything below and
                                           every entry's fields */
    pthread_cond_t        changed;      /* an entry left OPENING/CLOSING */
    samsa_fdcache_ent_t  *head;         /* [lock] most recently released */
    samsa_fdcache_ent_t  *tail;         /* [lock] next to evict */
    int64_t               budget;       /* [lock] */
    int64_t               open_fds;     /* [lock] */
    int64_t               open_entries; /* [lock] */
    int64_t               pinned;       /* [lock] entries with pins > 0 */
    uint64_t              opens;        /* [lock] */
    uint64_t              evictions;    /* [lock] */
    uint64_t              exhausted;    /* [lock] */
    bool                  warned;       /* [lock] the one warning went */
};

/* vm.max_map_count, or -1 when it cannot be read. */
static int64_t
fdcache_max_map_count(void)
{
    FILE       *f = fopen("/proc/sys/vm/max_map_count", "r");
    long long   v = -1;

    if (f == NULL) {
        return -1;
    }
    if (fscanf(f, "%lld", &v) != 1) {
        v = -1;
    }
    fclose(f);
    return (int64_t) v;
}

int64_t
samsa_fdcache_default_budget(void)
{
    struct rlimit  rl;
    int64_t        n = 1024, maps;
    const char    *env = getenv("SAMSA_LOG_OPEN_FILES_MAX");

    if (env != NULL && atoll(env) > 0) {
        return atoll(env);          /* tests: any budget, even tiny */
    }
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        n = (int64_t) rl.rlim_cur;
    } else if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        n = 1 << 20;
    }
    n /= 2;
    /* an open segment holds one descriptor and two mappings (its
     * indexes): keep the mappings within half of vm.max_map_count, the
     * rest being the allocator's, the libraries' and the threads' */
    maps = fdcache_max_map_count();
    if (maps > 0 && n > maps / 4) {
        n = maps / 4;
    }
    return n < FDCACHE_MIN_BUDGET ? FDCACHE_MIN_BUDGET : n;
}

static int64_t
fdcache_soft_limit(void)
{
    struct rlimit  rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) {
        return -1;
    }
    return (int64_t) rl.rlim_cur;
}

samsa_fdcache_t *
samsa_fdcache_new(int64_t budget)
{
    samsa_fdcache_t  *cache = samsa_calloc(1, sizeof(*cache));

    pthread_mutex_init(&cache->lock, NULL);
    pthread_cond_init(&cache->changed, NULL);
    cache->budget = budget > 0 ? budget : samsa_fdcache_default_budget();
    return cache;
}

void
samsa_fdcache_free(samsa_fdcache_t *cache)
{
    if (cache == NULL) {
        return;
    }
    samsa_assert(cache->open_entries == 0);
    pthread_cond_destroy(&cache->changed);
    pthread_mutex_destroy(&cache->lock);
    samsa_free(cache);
}

static samsa_fdcache_t  *fdcache_global;
static pthread_once_t    fdcache_global_once = PTHREAD_ONCE_INIT;

static void
fdcache_global_init(void)
{
    fdcache_global = samsa_fdcache_new(0);
}

samsa_fdcache_t *
samsa_fdcache_global(void)
{
    pthread_once(&fdcache_global_once, fdcache_global_init);
    return fdcache_global;
}

/* ---- LRU ------------------------------------------------------------------ */

/* @locks cache->lock held */
static void
fdcache_lru_remove(samsa_fdcache_t *cache, samsa_fdcache_ent_t *ent)
{
    if (ent->prev != NULL) {
        ent->prev->next = ent->next;
    } else {
        cache->head = ent->next;
    }
    if (ent->next != NULL) {
        ent->next->prev = ent->prev;
    } else {
        cache->tail = ent->prev;
    }
    ent->prev = NULL;
    ent->next = NULL;
}

/* @locks cache->lock held */
static void
fdcache_lru_push(samsa_fdcache_t *cache, samsa_fdcache_ent_t *ent)
{
    ent->prev = NULL;
    ent->next = cache->head;
    if (cache->head != NULL) {
        cache->head->prev = ent;
    } else {
        cache->tail = ent;
    }
    cache->head = ent;
}

/* Close an open, unpinned entry (taken off the LRU here).  The lock is
 * dropped while its close callback runs.  @locks cache->lock held */
static void
fdcache_close_locked(samsa_fdcache_t *cache, samsa_fdcache_ent_t *ent)
{
    fdcache_lru_remove(cache, ent);
    ent->state = SAMSA_FDCACHE_S_CLOSING;
    pthread_mutex_unlock(&cache->lock);
    ent->close(ent);
    pthread_mutex_lock(&cache->lock);
    cache->open_fds -= ent->nfds;
    cache->open_entries--;
    ent->state = SAMSA_FDCACHE_S_CLOSED;
    pthread_cond_broadcast(&cache->changed);
}

/* Close the least recently used entry; false if none is unpinned.
 * @locks cache->lock held */
static bool
fdcache_evict_one(samsa_fdcache_t *cache)
{
    if (cache->tail == NULL) {
        return false;
    }
    fdcache_close_locked(cache, cache->tail);
    cache->evictions++;
    return true;
}

/* After EMFILE/ENFILE: close the least recently used entry whose lowest
 * descriptor is below the soft limit (closing it lets the next open
 * succeed); false if there is none.  @locks cache->lock held */
static bool
fdcache_evict_usable(samsa_fdcache_t *cache)
{
    int64_t               limit = fdcache_soft_limit();
    samsa_fdcache_ent_t  *ent;

    for (ent = cache->tail; ent != NULL; ent = ent->prev) {
        if (limit < 0 || ent->lowfd < limit) {
            fdcache_close_locked(cache, ent);
            cache->evictions++;
            return true;
        }
    }
    return false;
}

/* Evict until want more descriptors fit the budget (or nothing is left
 * to evict).  @locks cache->lock held */
static void
fdcache_make_room(samsa_fdcache_t *cache, int64_t want)
{
    while (cache->open_fds + want > cache->budget
           && fdcache_evict_one(cache)) {
    }
}

/* ---- entries ------------------------------------------------------------ */

void
samsa_fdcache_ent_init(samsa_fdcache_t *cache, samsa_fdcache_ent_t *ent,
                       samsa_fdcache_open_fn_t *open,
                       samsa_fdcache_close_fn_t *close, int nfds_hint)
{
    ent->prev = NULL;
    ent->next = NULL;
    ent->cache = cache;
    ent->open = open;
    ent->close = close;
    ent->state = SAMSA_FDCACHE_S_CLOSED;
    ent->pins = 0;
    ent->nfds = nfds_hint;
}

void
samsa_fdcache_ent_fini(samsa_fdcache_ent_t *ent)
{
    samsa_fdcache_t  *cache = ent->cache;

    if (cache == NULL) {
        return;
    }
    pthread_mutex_lock(&cache->lock);
    samsa_assert(ent->pins == 0);
    while (ent->state == SAMSA_FDCACHE_S_OPENING
           || ent->state == SAMSA_FDCACHE_S_CLOSING) {
        pthread_cond_wait(&cache->changed, &cache->lock);
    }
    if (ent->state == SAMSA_FDCACHE_S_OPEN) {
        fdcache_close_locked(cache, ent);
    }
    pthread_mutex_unlock(&cache->lock);
    ent->cache = NULL;
}

/* Wait until ent is OPEN (then pinned: true) or CLOSED (false).
 * @locks cache->lock held */
static bool
fdcache_pin_open(samsa_fdcache_t *cache, samsa_fdcache_ent_t *ent)
{
    for (;;) {
        switch (ent->state) {
        case SAMSA_FDCACHE_S_OPEN:
            if (ent->pins++ == 0) {
                fdcache_lru_remove(cache, ent);
                cache->pinned++;
            }
            return true;
        case SAMSA_FDCACHE_S_CLOSED:
            return false;
        default:
            pthread_cond_wait(&cache->changed, &cache->lock);
            break;
        }
    }
}

/* Open ent (marked OPENING, pinned), evicting to make room and again on
 * each EMFILE/ENFILE while anything is left to evict.
 * @locks cache->lock held (dropped around the open callback) */
static samsa_err_t
fdcache_open_locked(samsa_fdcache_t *cache, samsa_fdcache_ent_t *ent)
{
    samsa_err_t  err;
    int          n = 0, low = 0;

    fdcache_make_room(cache, ent->nfds > 0 ? ent->nfds : 1);
    for (;;) {
        pthread_mutex_unlock(&cache->lock);
        err = ent->open(ent, &n, &low);
        pthread_mutex_lock(&cache->lock);
        if (err != SAMSA_ERR__NOFILE || !fdcache_evict_usable(cache)) {
            break;
        }
    }
    if (err == SAMSA_ERR_NONE) {
        ent->state = SAMSA_FDCACHE_S_OPEN;
        ent->nfds = n;
        ent->lowfd = low;
        cache->open_fds += n;
        cache->open_entries++;
        cache->opens++;
    } else {
        ent->state = SAMSA_FDCACHE_S_CLOSED;
        ent->pins = 0;
        cache->pinned--;
    }
    pthread_cond_broadcast(&cache->changed);
    return err;
}

/* The one warning, outside the lock. */
static void
fdcache_warn(samsa_fdcache_t *cache, int64_t budget, int64_t open_fds,
             const char *what)
{
    samsa_warn("log: out of file descriptors opening %s (RLIMIT_NOFILE %"
               PRId64 ", log.open.files.max %" PRId64 ", %" PRId64
               " held by the log file cache, none of them closable to help): "
               "requests that "
               "need more log files are refused with a retriable error, "
               "open partitions keep serving; raise the descriptor limit "
               "(ulimit -n) or lower log.open.files.max "
               "(reported once; see samsa_log_fd_exhausted_total)",
               what, fdcache_soft_limit(), budget, open_fds);
    (void) cache;
}

/* Count one refusal; true if it is the first (the caller warns).
 * @locks cache->lock held */
static bool
fdcache_count_exhausted(samsa_fdcache_t *cache)
{
    bool  first = !cache->warned;

    cache->exhausted++;
    cache->warned = true;
    return first;
}

samsa_err_t
samsa_fdcache_acquire(samsa_fdcache_ent_t *ent)
{
    samsa_fdcache_t  *cache = ent->cache;
    samsa_err_t       err = SAMSA_ERR_NONE;
    bool              warn = false;
    int64_t           budget = 0, open_fds = 0;

    pthread_mutex_lock(&cache->lock);
    if (!fdcache_pin_open(cache, ent)) {
        ent->state = SAMSA_FDCACHE_S_OPENING;
        ent->pins = 1;
        cache->pinned++;
        err = fdcache_open_locked(cache, ent);
        if (err == SAMSA_ERR__NOFILE) {
            warn = fdcache_count_exhausted(cache);
            budget = cache->budget;
            open_fds = cache->open_fds;
        }
    }
    pthread_mutex_unlock(&cache->lock);
    if (warn) {
        fdcache_warn(cache, budget, open_fds, "a log segment");
    }
    return err;
}

void
samsa_fdcache_release(samsa_fdcache_ent_t *ent)
{
    samsa_fdcache_t  *cache = ent->cache;

    pthread_mutex_lock(&cache->lock);
    samsa_assert(ent->pins > 0 && ent->state == SAMSA_FDCACHE_S_OPEN);
    if (--ent->pins == 0) {
        cache->pinned--;
        fdcache_lru_push(cache, ent);
        fdcache_make_room(cache, 0);
    }
    pthread_mutex_unlock(&cache->lock);
}

void
samsa_fdcache_add_fds(samsa_fdcache_ent_t *ent, int delta)
{
    samsa_fdcache_t  *cache = ent->cache;

    pthread_mutex_lock(&cache->lock);
    samsa_assert(ent->pins > 0 && ent->state == SAMSA_FDCACHE_S_OPEN);
    ent->nfds += delta;
    cache->open_fds += delta;
    pthread_mutex_unlock(&cache->lock);
}

bool
samsa_fdcache_ent_is_open(samsa_fdcache_ent_t *ent)
{
    samsa_fdcache_t  *cache = ent->cache;
    bool              open;

    pthread_mutex_lock(&cache->lock);
    open = ent->state == SAMSA_FDCACHE_S_OPEN;
    pthread_mutex_unlock(&cache->lock);
    return open;
}

/* ---- the cache ---------------------------------------------------------- */

void
samsa_fdcache_set_budget(samsa_fdcache_t *cache, int64_t budget)
{
    pthread_mutex_lock(&cache->lock);
    cache->budget = budget > 0 ? budget : samsa_fdcache_default_budget();
    fdcache_make_room(cache, 0);
    pthread_mutex_unlock(&cache->lock);
}

void
samsa_fdcache_stats(samsa_fdcache_t *cache, samsa_fdcache_stats_t *st)
{
    pthread_mutex_lock(&cache->lock);
    st->open_fds = cache->open_fds;
    st->budget = cache->budget;
    st->open_entries = cache->open_entries;
    st->pinned_entries = cache->pinned;
    st->opens = cache->opens;
    st->evictions = cache->evictions;
    st->exhausted = cache->exhausted;
    pthread_mutex_unlock(&cache->lock);
}

void
samsa_fdcache_note_exhausted(samsa_fdcache_t *cache, const char *what)
{
    bool     warn;
    int64_t  budget, open_fds;

    pthread_mutex_lock(&cache->lock);
    warn = fdcache_count_exhausted(cache);
    budget = cache->budget;
    open_fds = cache->open_fds;
    pthread_mutex_unlock(&cache->lock);
    if (warn) {
        fdcache_warn(cache, budget, open_fds, what);
    }
}

bool
samsa_fdcache_errno_is_nofile(int err)
{
    return err == EMFILE || err == ENFILE;
}

/* Open /dev/null, evicting on EMFILE/ENFILE. */
static int
fdcache_new_fd(samsa_fdcache_t *cache, const char *what)
{
    int   nfd, err;
    bool  evicted;

    for (;;) {
        nfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (nfd >= 0 || !samsa_fdcache_errno_is_nofile(errno)) {
            return nfd;
        }
        err = errno;
        pthread_mutex_lock(&cache->lock);
        evicted = fdcache_evict_usable(cache);
        pthread_mutex_unlock(&cache->lock);
        if (!evicted) {
            samsa_fdcache_note_exhausted(cache, what);
            errno = err;
            return -1;
        }
    }
}

samsa_err_t
samsa_fdcache_make_spare(samsa_fdcache_t *cache)
{
    int  fd = fdcache_new_fd(cache, "a new partition's files");

    if (fd < 0) {
        return samsa_fdcache_errno_is_nofile(errno) ? SAMSA_ERR__NOFILE
                                                    : SAMSA_ERR__IO;
    }
    close(fd);
    return SAMSA_ERR_NONE;
}
