/*
 * log/logmgr.c - the log manager (see logmgr.h): the registry of partition
 * logs, loading at start with recovery threads, checkpoints, the
 * clean-shutdown marker, and the logmaint and logflush threads.
 */
#include "log/logmgr.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "log/ckpt.h"
#include "log/fdcache.h"
#include "util/alloc.h"
#include "util/diag.h"
#include "util/map.h"
#include "util/time.h"
#include "util/locked.h"

#define LOGMGR_TICK_MS          1000    /* logmaint's longest sleep */
#define LOGMGR_INITIAL_DELAY_MS 30000   /* Kafka's InitialTaskDelayMs */

typedef struct logmgr_entry {
    samsa_map_node_t      node;         /* in samsa_logmgr_t.map */
    samsa_plog_t         *plog;         /* the registry's reference */
} logmgr_entry_t;

typedef struct logmgr_key {
    const char  *topic;
    int32_t      partition;
} logmgr_key_t;

typedef struct logmgr_dir {
    char    *path;                      /* [const] */
    bool     online;                    /* [const] after open */
    size_t   nplogs;                    /* [map_lock] for placement */
} logmgr_dir_t;

typedef struct logmgr_doomed_dir {
    char     *path;
    int64_t   due_ms;                   /* monotonic */
} logmgr_doomed_dir_t;

/*
 * samsa_logmgr_t - see logmgr.h.  Shared by every thread; each field names
 * its guard.  Lock order: create_lock -> map_lock; the others are leaves
 * (fq_lock, maint_lock) and no plog lock is held with any of them.
 */
struct samsa_logmgr {
    samsa_logmgr_config_t   cfg;            /* [const] dirs cleared */
    logmgr_dir_t           *dirs;           /* [const] (nplogs: map_lock) */
    size_t                  ndirs;          /* [const] */

    pthread_mutex_t         create_lock;    /* serialises create/delete */
    pthread_mutex_t         map_lock;       /* guards the registry */
    samsa_map_t             map;            /* [map_lock] logmgr_entry_t
                                               by topic-partition */

    pthread_mutex_t         fq_lock;        /* guards the flush queue */
    pthread_mutex_t         cb_lock;        /* held while on_flushed runs,
                                               so that replacing it waits
                                               for calls in progress; lock
                                               order: cb_lock, fq_lock */
    pthread_cond_t          fq_cond;        /* queue not empty, or stop */
    samsa_plog_t          **fq;             /* [fq_lock] one ref each */
    size_t                  nfq;            /* [fq_lock] */
    size_t                  fq_cap;         /* [fq_lock] */
    bool                    fq_stop;        /* [fq_lock] */
    samsa_logmgr_flushed_cb_t  *on_flushed; /* [fq_lock] */
    void                   *on_flushed_ctx; /* [fq_lock] */

    pthread_mutex_t         maint_lock;     /* guards the maint fields */
    pthread_cond_t          maint_cond;     /* stop */
    bool                    maint_stop;     /* [maint_lock] */
    logmgr_doomed_dir_t    *doomed;         /* [maint_lock] */
    size_t                  ndoomed;        /* [maint_lock] */

    pthread_mutex_t         cleaner_lock;   /* guards the four below */
    pthread_cond_t          cleaner_cond;   /* cleaner_busy went false */
    samsa_cleaner_t        *cleaner;        /* [cleaner_lock] */
    samsa_cleaner_config_t  cleaner_cfg;    /* [cleaner_lock] in effect */
    bool                    cleaner_busy;   /* [cleaner_lock] a reconfigure
                                               is stopping and starting
                                               the threads (cleaner NULL
                                               meanwhile), lock not held */
    pthread_mutex_t         cleaner_ckpt_lock;  /* serialises writes of
                                               cleaner-offset-checkpoint */
    pthread_t               flush_thread;   /* [const] */
    pthread_t               maint_thread;   /* [const] */
    bool                    flush_started;  /* [main] open/close only */
    bool                    maint_started;  /* [main] */

    _Atomic uint64_t        n_rounds;       /* [atomic] stats */
    _Atomic uint64_t        n_flushes;
    uint64_t                n_loaded;       /* [const] after open */
    uint64_t                n_load_failed;  /* [const] after open */
};

static int64_t
logmgr_add_sat(int64_t a, int64_t b)
{
    int64_t  r;

    return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

void
samsa_logmgr_config_defaults(samsa_logmgr_config_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->retention_check_interval_ms = 300000;
    cfg->flush_scheduler_interval_ms = INT64_MAX;
    cfg->flush_offset_checkpoint_interval_ms = 60000;
    cfg->flush_start_offset_checkpoint_interval_ms = 60000;
    cfg->high_watermark_checkpoint_interval_ms = 5000;
    cfg->recovery_threads_per_dir = 1;
    samsa_cleaner_config_defaults(&cfg->cleaner);
    samsa_log_config_defaults(&cfg->defaults);
}

/* ---- registry ------------------------------------------------------------ */

static uint64_t
logmgr_hash(const char *topic, int32_t partition)
{
    return samsa_hash_u64((uint32_t) partition, samsa_hash_str(topic, 0));
}

static bool
logmgr_entry_eq(const samsa_map_node_t *node, const void *key)
{
    const samsa_plog_t  *plog = SAMSA_MAP_ENTRY(node, logmgr_entry_t,
                                                node)->plog;
    const logmgr_key_t  *k = key;

    return samsa_plog_partition(plog) == k->partition
           && strcmp(samsa_plog_topic(plog), k->topic) == 0;
}

/* topic-partition's entry, or NULL.  @locks map_lock held */
static logmgr_entry_t *
logmgr_find(samsa_logmgr_t *mgr, const char *topic, int32_t partition)
{
    logmgr_key_t       k = { topic, partition };
    samsa_map_node_t  *node;

    node = samsa_map_find(&mgr->map, logmgr_hash(topic, partition),
                          logmgr_entry_eq, &k);
    return node != NULL ? SAMSA_MAP_ENTRY(node, logmgr_entry_t, node) : NULL;
}

/* The next entry of the iteration, or NULL. */
static logmgr_entry_t *
logmgr_next(samsa_map_iter_t *it)
{
    samsa_map_node_t  *node = samsa_map_iter_next(it);

    return node != NULL ? SAMSA_MAP_ENTRY(node, logmgr_entry_t, node) : NULL;
}

static logmgr_dir_t *
logmgr_dir_of(samsa_logmgr_t *mgr, samsa_plog_t *plog)
{
    size_t  i;

    for (i = 0; i < mgr->ndirs; i++) {
        if (strcmp(mgr->dirs[i].path, samsa_plog_parent_dir(plog)) == 0) {
            return &mgr->dirs[i];
        }
    }
    return NULL;
}

/* Add plog (taking the caller's reference) unless its partition is there.
 * @returns false if it was.  @locks map_lock taken */
static bool
logmgr_insert(samsa_logmgr_t *mgr, samsa_plog_t *plog)
{
    const char      *topic = samsa_plog_topic(plog);
    int32_t          partition = samsa_plog_partition(plog);
    logmgr_entry_t  *e;
    logmgr_dir_t    *dir;

    pthread_mutex_lock(&mgr->map_lock);
    if (logmgr_find(mgr, topic, partition) != NULL) {
        pthread_mutex_unlock(&mgr->map_lock);
        return false;
    }
    e = samsa_calloc(1, sizeof(*e));
    e->plog = plog;
    samsa_map_insert(&mgr->map, &e->node, logmgr_hash(topic, partition));
    if ((dir = logmgr_dir_of(mgr, plog)) != NULL) {
        dir->nplogs++;
    }
    pthread_mutex_unlock(&mgr->map_lock);
    return true;
}

/* Take topic-partition out of the registry; its reference goes to the
 * caller (NULL if absent).  @locks map_lock taken */
static samsa_plog_t *
logmgr_remove(samsa_logmgr_t *mgr, const char *topic, int32_t partition)
{
    logmgr_entry_t  *e;
    samsa_plog_t    *plog = NULL;
    logmgr_dir_t    *dir;

    pthread_mutex_lock(&mgr->map_lock);
    if ((e = logmgr_find(mgr, topic, partition)) != NULL) {
        samsa_map_remove(&mgr->map, &e->node);
        plog = e->plog;
        samsa_free(e);
        if ((dir = logmgr_dir_of(mgr, plog)) != NULL) {
            dir->nplogs--;
        }
    }
    pthread_mutex_unlock(&mgr->map_lock);
    return plog;
}

samsa_plog_t *
samsa_logmgr_plog_ref(samsa_logmgr_t *mgr, const char *topic,
                      int32_t partition)
{
    logmgr_entry_t  *e;
    samsa_plog_t    *plog = NULL;

    pthread_mutex_lock(&mgr->map_lock);
    e = logmgr_find(mgr, topic, partition);
    if (e != NULL) {
        plog = samsa_plog_ref(e->plog);
    }
    pthread_mutex_unlock(&mgr->map_lock);
    return plog;
}

/* Every log, one new reference each (*n of them).  @locks map_lock taken */
static samsa_plog_t **
logmgr_snapshot(samsa_logmgr_t *mgr, size_t *n)
{
    samsa_plog_t    **all;
    logmgr_entry_t   *e;
    samsa_map_iter_t  it;

    pthread_mutex_lock(&mgr->map_lock);
    all = samsa_calloc(samsa_map_count(&mgr->map) + 1, sizeof(*all));
    *n = 0;
    samsa_map_iter_init(&it, &mgr->map);
    while ((e = logmgr_next(&it)) != NULL) {
        all[(*n)++] = samsa_plog_ref(e->plog);
    }
    pthread_mutex_unlock(&mgr->map_lock);
    return all;
}

static void
logmgr_snapshot_free(samsa_plog_t **all, size_t n)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        samsa_plog_unref(all[i]);
    }
    samsa_free(all);
}

void
samsa_logmgr_foreach(samsa_logmgr_t *mgr, samsa_logmgr_plog_fn_t *fn,
                     void *ctx)
{
    samsa_plog_t  **all;
    size_t          n, i;

    all = logmgr_snapshot(mgr, &n);
    for (i = 0; i < n; i++) {
        fn(ctx, all[i]);
    }
    logmgr_snapshot_free(all, n);
}

size_t
samsa_logmgr_plog_count(samsa_logmgr_t *mgr)
{
    return SAMSA_LOCKED_READ(&mgr->map_lock, samsa_map_count(&mgr->map));
}

/* ---- group commit: logflush ---------------------------------------------- */

/* A plog asks for a flush: queue it once.  @thread any (an appender) */
static void
logmgr_flush_want(void *ctx, samsa_plog_t *plog)
{
    samsa_logmgr_t  *mgr = ctx;

    if (!samsa_plog_flush_claim(plog)) {
        return;                             /* queued already */
    }
    samsa_plog_ref(plog);
    pthread_mutex_lock(&mgr->fq_lock);
    if (mgr->nfq == mgr->fq_cap) {
        mgr->fq_cap = mgr->fq_cap ? mgr->fq_cap * 2 : 64;
        mgr->fq = samsa_realloc(mgr->fq, mgr->fq_cap * sizeof(*mgr->fq));
    }
    mgr->fq[mgr->nfq++] = plog;
    pthread_cond_signal(&mgr->fq_cond);
    pthread_mutex_unlock(&mgr->fq_lock);
}

/* Flush each queued plog once and report; drops the queue's refs.  A
 * failed flush is reported with flushed_offset -1 (the log is offline). */
static void
logmgr_flush_all(samsa_logmgr_t *mgr, samsa_plog_t **q, size_t n,
                 samsa_logmgr_flushed_cb_t *cb, void *cb_ctx)
{
    size_t       i;
    int64_t      flushed;
    samsa_err_t  err;

    (void) cb;
    (void) cb_ctx;
    for (i = 0; i < n; i++) {
        samsa_plog_flush_unclaim(q[i]);
        err = samsa_plog_flush(q[i], SAMSA_PLOG_FLUSH_REQUESTED, &flushed);
        /* The callback as it is now (it may have been removed since the
         * queue was taken); cb_lock keeps it valid while it runs. */
        pthread_mutex_lock(&mgr->cb_lock);
        if (mgr->on_flushed != NULL) {
            mgr->on_flushed(mgr->on_flushed_ctx, samsa_plog_topic(q[i]),
                            samsa_plog_partition(q[i]),
                            err == SAMSA_ERR_NONE ? flushed : -1);
        }
        pthread_mutex_unlock(&mgr->cb_lock);
        samsa_plog_unref(q[i]);
    }
    atomic_fetch_add_explicit(&mgr->n_flushes, n, memory_order_relaxed);
    atomic_fetch_add_explicit(&mgr->n_rounds, 1, memory_order_relaxed);
}

/* Take the whole queue; false when it is empty.  @locks fq_lock held */
static bool
logmgr_flush_take(samsa_logmgr_t *mgr, samsa_plog_t ***q, size_t *n,
                  samsa_logmgr_flushed_cb_t **cb, void **cb_ctx)
{
    *q = mgr->fq;
    *n = mgr->nfq;
    *cb = mgr->on_flushed;
    *cb_ctx = mgr->on_flushed_ctx;
    mgr->fq = NULL;
    mgr->nfq = mgr->fq_cap = 0;
    return *n > 0;
}

static void *
logmgr_flush_main(void *arg)
{
    samsa_logmgr_t             *mgr = arg;
    samsa_plog_t              **q;
    size_t                      n;
    samsa_logmgr_flushed_cb_t  *cb;
    void                       *cb_ctx;
    bool                        stop;

    samsa_thread_name_set("logflush");
    for (;;) {
        pthread_mutex_lock(&mgr->fq_lock);
        while (mgr->nfq == 0 && !mgr->fq_stop) {
            pthread_cond_wait(&mgr->fq_cond, &mgr->fq_lock);
        }
        stop = !logmgr_flush_take(mgr, &q, &n, &cb, &cb_ctx)
               && mgr->fq_stop;
        pthread_mutex_unlock(&mgr->fq_lock);
        if (stop) {
            break;
        }
        logmgr_flush_all(mgr, q, n, cb, cb_ctx);
        samsa_free(q);
    }
    return NULL;
}

void
samsa_logmgr_set_flushed_cb(samsa_logmgr_t *mgr,
                            samsa_logmgr_flushed_cb_t *cb, void *ctx)
{
    pthread_mutex_lock(&mgr->cb_lock);      /* waits for a running call */
    pthread_mutex_lock(&mgr->fq_lock);
    mgr->on_flushed = cb;
    mgr->on_flushed_ctx = ctx;
    pthread_mutex_unlock(&mgr->fq_lock);
    pthread_mutex_unlock(&mgr->cb_lock);
}

/* ---- checkpoints --------------------------------------------------------- */

/* The four checkpoint files of a log dir. */
typedef enum {
    LOGMGR_CKPT_RECOVERY_POINT,
    LOGMGR_CKPT_LOG_START,
    LOGMGR_CKPT_CLEANER,            /* only logs with a first dirty offset */
    LOGMGR_CKPT_HIGH_WATERMARK,     /* every log, as Kafka's
                                       checkpointHighWatermarks */
} logmgr_ckpt_kind_t;

/* Write dir's checkpoint file of that kind from the logs in all[] that
 * live there. */
static samsa_err_t
logmgr_write_ckpt(const logmgr_dir_t *dir, samsa_plog_t **all, size_t n,
                  logmgr_ckpt_kind_t kind)
{
    static const char *const  files[] = {
        [LOGMGR_CKPT_RECOVERY_POINT] = SAMSA_LOGMGR_RECOVERY_POINT_FILE,
        [LOGMGR_CKPT_LOG_START] = SAMSA_LOGMGR_LOG_START_FILE,
        [LOGMGR_CKPT_CLEANER] = SAMSA_CLEANER_CHECKPOINT_FILE,
        [LOGMGR_CKPT_HIGH_WATERMARK] = SAMSA_LOGMGR_HIGH_WATERMARK_FILE,
    };
    samsa_ckpt_tp_t  *e;
    char              path[PATH_MAX];
    size_t            i, m = 0;
    int64_t           off;
    samsa_err_t       err;

    e = samsa_calloc(n + 1, sizeof(*e));
    for (i = 0; i < n; i++) {
        if (strcmp(samsa_plog_parent_dir(all[i]), dir->path) != 0) {
            continue;
        }
        off = kind == LOGMGR_CKPT_RECOVERY_POINT
                  ? samsa_plog_recovery_point(all[i])
              : kind == LOGMGR_CKPT_LOG_START
                  ? samsa_plog_log_start_offset(all[i])
              : kind == LOGMGR_CKPT_HIGH_WATERMARK
                  ? samsa_plog_high_watermark(all[i])
                  : samsa_plog_clean_offset(all[i]);
        if (kind == LOGMGR_CKPT_CLEANER && off < 0) {
            continue;
        }
        e[m].topic = (char *) samsa_plog_topic(all[i]);
        e[m].partition = samsa_plog_partition(all[i]);
        e[m++].offset = off;
    }
    snprintf(path, sizeof(path), "%s/%s", dir->path, files[kind]);
    err = samsa_ckpt_tp_write(path, e, m);
    samsa_free(e);                  /* the topics are borrowed */
    return err;
}

samsa_err_t
samsa_logmgr_cleaner_checkpoint(samsa_logmgr_t *mgr)
{
    samsa_plog_t  **all;
    size_t          n, i;
    samsa_err_t     err = SAMSA_ERR_NONE, e2;

    all = logmgr_snapshot(mgr, &n);
    pthread_mutex_lock(&mgr->cleaner_ckpt_lock);
    for (i = 0; i < mgr->ndirs; i++) {
        if (mgr->dirs[i].online
            && (e2 = logmgr_write_ckpt(&mgr->dirs[i], all, n,
                                       LOGMGR_CKPT_CLEANER))
                   != SAMSA_ERR_NONE) {
            err = e2;
        }
    }
    pthread_mutex_unlock(&mgr->cleaner_ckpt_lock);
    logmgr_snapshot_free(all, n);
    return err;
}

/* The cleaner's view of the logs: a snapshot, fn on each. */
static void
logmgr_cleaner_each(void *ctx, void *fn_ctx, void (*fn)(void *,
                                                        samsa_plog_t *))
{
    samsa_logmgr_foreach(ctx, fn, fn_ctx);
}

static void
logmgr_cleaner_done(void *ctx)
{
    if (samsa_logmgr_cleaner_checkpoint(ctx) != SAMSA_ERR_NONE) {
        samsa_warn("log: writing %s failed", SAMSA_CLEANER_CHECKPOINT_FILE);
    }
}

samsa_err_t
samsa_logmgr_cleaner_reconfigure(samsa_logmgr_t *mgr,
                                 const samsa_cleaner_config_t *want)
{
    samsa_cleaner_config_t  cfg, was;
    samsa_cleaner_t        *old, *c;

    pthread_mutex_lock(&mgr->cleaner_lock);
    while (mgr->cleaner_busy) {
        pthread_cond_wait(&mgr->cleaner_cond, &mgr->cleaner_lock);
    }
    was = cfg = mgr->cleaner_cfg;
    old = mgr->cleaner;
    if (old == NULL
        || (cfg.threads == want->threads
            && cfg.backoff_ms == want->backoff_ms
            && cfg.dedupe_buffer_size == want->dedupe_buffer_size
            && cfg.io_max_bytes_per_second
                   == want->io_max_bytes_per_second)) {
        pthread_mutex_unlock(&mgr->cleaner_lock);
        return SAMSA_ERR_NONE;          /* closing, or nothing to do */
    }
    mgr->cleaner = NULL;
    mgr->cleaner_busy = true;           /* the close waits for us */
    pthread_mutex_unlock(&mgr->cleaner_lock);

    /* Kafka's LogCleaner.reconfigure: stop the cleaners (each finishes
     * the group it is rewriting), start new ones */
    cfg = *want;
    cfg.enable = was.enable;
    samsa_cleaner_stop(old);
    c = samsa_cleaner_start(&cfg, logmgr_cleaner_each, logmgr_cleaner_done,
                            mgr);
    if (c == NULL) {                    /* keep the old settings */
        c = samsa_cleaner_start(&was, logmgr_cleaner_each,
                                logmgr_cleaner_done, mgr);
    }

    pthread_mutex_lock(&mgr->cleaner_lock);
    mgr->cleaner = c;
    mgr->cleaner_cfg = c != NULL ? cfg : was;
    mgr->cleaner_busy = false;
    pthread_cond_broadcast(&mgr->cleaner_cond);
    pthread_mutex_unlock(&mgr->cleaner_lock);
    if (c == NULL) {
        samsa_error("log cleaner: cannot start its threads: no compaction "
                    "until samsa-server restarts");
        return SAMSA_ERR__IO;
    }
    samsa_info("log cleaner: %" PRId32 " thread(s), backoff %" PRId64
               " ms, dedupe buffer %" PRId64 " bytes, io max %g bytes/s%s",
               cfg.enable ? cfg.threads : 0, cfg.backoff_ms,
               cfg.dedupe_buffer_size, cfg.io_max_bytes_per_second,
               cfg.enable ? "" : " (log.cleaner.enable=false)");
    return SAMSA_ERR_NONE;
}

/* The kinds (rp, ls, hw) for every online dir from the logs in all[]. */
static samsa_err_t
logmgr_write_ckpts(samsa_logmgr_t *mgr, samsa_plog_t **all, size_t n,
                   bool rp, bool ls, bool hw)
{
    const bool   want[] = {
        [LOGMGR_CKPT_RECOVERY_POINT] = rp,
        [LOGMGR_CKPT_LOG_START] = ls,
        [LOGMGR_CKPT_CLEANER] = false,
        [LOGMGR_CKPT_HIGH_WATERMARK] = hw,
    };
    samsa_err_t  err = SAMSA_ERR_NONE, e2;
    size_t       i, k;

    for (i = 0; i < mgr->ndirs; i++) {
        for (k = 0; mgr->dirs[i].online && k < sizeof(want) / sizeof(*want);
             k++) {
            if (want[k]
                && (e2 = logmgr_write_ckpt(&mgr->dirs[i], all, n,
                                           (logmgr_ckpt_kind_t) k))
                       != SAMSA_ERR_NONE) {
                err = e2;
            }
        }
    }
    return err;
}

static samsa_err_t
logmgr_checkpoint_some(samsa_logmgr_t *mgr, bool rp, bool ls, bool hw)
{
    samsa_plog_t  **all;
    size_t          n;
    samsa_err_t     err;

    all = logmgr_snapshot(mgr, &n);
    err = logmgr_write_ckpts(mgr, all, n, rp, ls, hw);
    logmgr_snapshot_free(all, n);
    return err;
}

samsa_err_t
samsa_logmgr_checkpoint(samsa_logmgr_t *mgr)
{
    return logmgr_checkpoint_some(mgr, true, true, true);
}

/* ---- logmaint ------------------------------------------------------------ */

static void
logmgr_retain_one(void *ctx, samsa_plog_t *plog)
{
    int64_t  now_ms = *(const int64_t *) ctx;
    int      deleted;

    if (samsa_plog_retain(plog, now_ms, &deleted) != SAMSA_ERR_NONE) {
        samsa_warn("log: retention of %s failed", samsa_plog_dir(plog));
    }
}

void
samsa_logmgr_retain(samsa_logmgr_t *mgr, int64_t now_ms)
{
    samsa_logmgr_foreach(mgr, logmgr_retain_one, &now_ms);
}

/* Time-based flush (flush.ms): ask logflush for the due ones. */
static void
logmgr_flush_due_one(void *ctx, samsa_plog_t *plog)
{
    int64_t  now_ms = *(const int64_t *) ctx;

    if (samsa_plog_flush_due(plog, now_ms)) {
        samsa_plog_request_flush(plog, true);
    }
}

/* Before a recovery-point checkpoint: logs whose data is synced but whose
 * indexes are not (group commit) get a full flush for the next one. */
static void
logmgr_catch_up_one(void *ctx, samsa_plog_t *plog)
{
    (void) ctx;
    if (samsa_plog_durable_offset(plog) > samsa_plog_recovery_point(plog)) {
        samsa_plog_request_flush(plog, true);
    }
}

static void
logmgr_purge_one(void *ctx, samsa_plog_t *plog)
{
    samsa_plog_purge(plog, *(const int64_t *) ctx, false);
}

/* Remove the deleted partition directories that are due (all: every
 * one).  @locks maint_lock taken */
static void
logmgr_purge_dirs(samsa_logmgr_t *mgr, int64_t now_ms, bool all)
{
    logmgr_doomed_dir_t  *due;
    size_t                i, n;

    due = samsa_log_take_due(&mgr->maint_lock, (void **) &mgr->doomed,
                             &mgr->ndoomed,
                             sizeof(*due),
                             offsetof(logmgr_doomed_dir_t, due_ms), now_ms,
                             all, &n);
    for (i = 0; i < n; i++) {
        if (samsa_plog_remove_dir(due[i].path) == SAMSA_ERR_NONE) {
            samsa_info("log: removed %s", due[i].path);
        }
        samsa_free(due[i].path);
    }
    samsa_free(due);
}

/* logmaint's schedule (monotonic ms). */
typedef struct logmgr_sched {
    int64_t  retention;
    int64_t  flush;
    int64_t  rp_ckpt;
    int64_t  ls_ckpt;
    int64_t  hw_ckpt;
} logmgr_sched_t;

/* Run what is due at now (monotonic) and set the next times. */
static void
logmgr_maint_run(samsa_logmgr_t *mgr, logmgr_sched_t *s, int64_t now)
{
    const samsa_logmgr_config_t  *cfg = &mgr->cfg;
    int64_t                       wall = samsa_wall_ms();
    bool                          rp, ls, hw;

    if (now >= s->retention) {
        samsa_logmgr_retain(mgr, wall);
        s->retention = logmgr_add_sat(now, cfg->retention_check_interval_ms);
    }
    if (now >= s->flush) {
        samsa_logmgr_foreach(mgr, logmgr_flush_due_one, &now);
        s->flush = logmgr_add_sat(now, cfg->flush_scheduler_interval_ms);
    }
    rp = now >= s->rp_ckpt;
    ls = now >= s->ls_ckpt;
    hw = now >= s->hw_ckpt;
    if (rp || ls || hw) {
        if (rp) {
            samsa_logmgr_foreach(mgr, logmgr_catch_up_one, NULL);
            s->rp_ckpt = logmgr_add_sat(
                now, cfg->flush_offset_checkpoint_interval_ms);
        }
        if (ls) {
            s->ls_ckpt = logmgr_add_sat(
                now, cfg->flush_start_offset_checkpoint_interval_ms);
        }
        if (hw) {
            s->hw_ckpt = logmgr_add_sat(
                now, cfg->high_watermark_checkpoint_interval_ms);
        }
        if (logmgr_checkpoint_some(mgr, rp, ls, hw) != SAMSA_ERR_NONE) {
            samsa_warn("log: writing checkpoints failed");
        }
    }
    samsa_logmgr_foreach(mgr, logmgr_purge_one, &wall);
    logmgr_purge_dirs(mgr, now, false);
}

/* Sleep until the next due time (at most a tick); false on stop. */
static bool
logmgr_maint_wait(samsa_logmgr_t *mgr, const logmgr_sched_t *s)
{
    int64_t  next = samsa_now_ms() + LOGMGR_TICK_MS;

    next = s->retention < next ? s->retention : next;
    next = s->flush < next ? s->flush : next;
    next = s->rp_ckpt < next ? s->rp_ckpt : next;
    next = s->ls_ckpt < next ? s->ls_ckpt : next;
    next = s->hw_ckpt < next ? s->hw_ckpt : next;
    return samsa_locked_wait_stop(&mgr->maint_lock, &mgr->maint_cond,
                                  &mgr->maint_stop, next);
}

static void *
logmgr_maint_main(void *arg)
{
    samsa_logmgr_t  *mgr = arg;
    logmgr_sched_t   s;
    int64_t          now = samsa_now_ms();
    int64_t          delay = mgr->cfg.retention_check_interval_ms;

    samsa_thread_name_set("logmaint");
    s.retention = logmgr_add_sat(now, delay < LOGMGR_INITIAL_DELAY_MS
                                          ? delay : LOGMGR_INITIAL_DELAY_MS);
    s.flush = logmgr_add_sat(now, mgr->cfg.flush_scheduler_interval_ms);
    s.rp_ckpt = logmgr_add_sat(now,
                               mgr->cfg.flush_offset_checkpoint_interval_ms);
    s.ls_ckpt = logmgr_add_sat(
        now, mgr->cfg.flush_start_offset_checkpoint_interval_ms);
    s.hw_ckpt = logmgr_add_sat(
        now, mgr->cfg.high_watermark_checkpoint_interval_ms);
    while (logmgr_maint_wait(mgr, &s)) {
        logmgr_maint_run(mgr, &s, samsa_now_ms());
    }
    return NULL;
}

/* ---- loading ------------------------------------------------------------- */

/* One partition directory to load. */
typedef struct logmgr_job {
    char          *topic;
    int32_t        partition;
    int64_t        recovery_point;
    int64_t        log_start;
    samsa_plog_t  *plog;            /* the result, or NULL */
} logmgr_job_t;

/* One log dir's loading, shared by its recovery threads. */
typedef struct logmgr_loader {
    samsa_logmgr_t     *mgr;
    const char         *dir;
    bool                clean;
    logmgr_job_t       *jobs;
    size_t              njobs;
    _Atomic size_t      next;       /* [atomic] next job to take */
    samsa_ckpt_tp_t    *rp;         /* recovery points, sorted */
    size_t              nrp;
    samsa_ckpt_tp_t    *ls;         /* log start offsets, sorted */
    size_t              nls;
    samsa_ckpt_tp_t    *co;         /* cleaner offsets, sorted */
    size_t              nco;
    samsa_ckpt_tp_t    *hw;         /* high watermarks, sorted */
    size_t              nhw;
} logmgr_loader_t;

static int
logmgr_tp_cmp(const void *a, const void *b)
{
    const samsa_ckpt_tp_t  *x = a, *y = b;
    int                     c = strcmp(x->topic, y->topic);

    return c != 0 ? c : (x->partition > y->partition)
                            - (x->partition < y->partition);
}

/* The checkpointed offset of topic-partition, or -1. */
static int64_t
logmgr_tp_find(const samsa_ckpt_tp_t *e, size_t n, const char *topic,
               int32_t partition)
{
    samsa_ckpt_tp_t         key = { (char *) topic, partition, 0 };
    const samsa_ckpt_tp_t  *hit;

    hit = n > 0 ? bsearch(&key, e, n, sizeof(*e), logmgr_tp_cmp) : NULL;
    return hit != NULL ? hit->offset : -1;
}

/* "<topic>-<partition>": split it; false for anything else. */
static bool
logmgr_parse_dir(const char *name, char **topic, int32_t *partition)
{
    const char  *dash = strrchr(name, '-');
    char        *end;
    long         p;

    if (dash == NULL || dash == name || dash[1] < '0' || dash[1] > '9') {
        return false;
    }
    errno = 0;
    p = strtol(dash + 1, &end, 10);
    if (errno != 0 || *end != '\0' || p > INT32_MAX) {
        return false;
    }
    *topic = samsa_strndup(name, (size_t) (dash - name));
    *partition = (int32_t) p;
    return true;
}

/* Sort one entry of a log dir: a partition to load (added to ld), a
 * deleted partition to remove, or something to leave alone. */
static void
logmgr_dir_entry(logmgr_loader_t *ld, const char *name, size_t *cap)
{
    char          path[PATH_MAX];
    struct stat   st;
    logmgr_job_t  job = { 0 };

    snprintf(path, sizeof(path), "%s/%s", ld->dir, name);
    if (name[0] == '.' || stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
        return;
    }
    if (strlen(name) > 7 && strcmp(name + strlen(name) - 7, "-delete") == 0) {
        samsa_info("log: removing deleted partition directory %s", path);
        if (samsa_plog_remove_dir(path) != SAMSA_ERR_NONE) {
            samsa_warn("log: could not remove %s", path);
        }
        return;
    }
    if (strcmp(name, "__cluster_metadata-0") == 0
        || !logmgr_parse_dir(name, &job.topic, &job.partition)) {
        return;                     /* the metadata log, -future, -stray */
    }
    job.recovery_point = logmgr_tp_find(ld->rp, ld->nrp, job.topic,
                                        job.partition);
    job.log_start = logmgr_tp_find(ld->ls, ld->nls, job.topic,
                                   job.partition);
    if (ld->njobs == *cap) {
        *cap = *cap ? *cap * 2 : 16;
        ld->jobs = samsa_realloc(ld->jobs, *cap * sizeof(*ld->jobs));
    }
    ld->jobs[ld->njobs++] = job;
}

/* Read dir's checkpoint file name into *e, *n, sorted; a malformed one
 * (warned about by the reader) gives no entries and its error. */
static samsa_err_t
logmgr_read_sorted(const char *dir, const char *name, samsa_ckpt_tp_t **e,
                   size_t *n)
{
    char         path[PATH_MAX];
    samsa_err_t  err;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    err = samsa_ckpt_tp_read(path, e, n);
    if (err != SAMSA_ERR_NONE) {
        *e = NULL;
        *n = 0;
    } else if (*n > 1) {
        qsort(*e, *n, sizeof(**e), logmgr_tp_cmp);
    }
    return err;
}

/* Read a dir's checkpoints and marker and list its partitions. */
static samsa_err_t
logmgr_scan_dir(logmgr_loader_t *ld)
{
    char            path[PATH_MAX];
    DIR            *d;
    struct dirent  *de;
    size_t          cap = 0;

    snprintf(path, sizeof(path), "%s/%s", ld->dir,
             SAMSA_LOGMGR_CLEAN_SHUTDOWN_FILE);
    ld->clean = access(path, F_OK) == 0;
    if (logmgr_read_sorted(ld->dir, SAMSA_LOGMGR_RECOVERY_POINT_FILE,
                           &ld->rp, &ld->nrp) != SAMSA_ERR_NONE) {
        ld->clean = false;          /* trust nothing: scan everything */
    }
    (void) logmgr_read_sorted(ld->dir, SAMSA_LOGMGR_LOG_START_FILE, &ld->ls,
                              &ld->nls);
    /* malformed: the cleaner starts over */
    (void) logmgr_read_sorted(ld->dir, SAMSA_CLEANER_CHECKPOINT_FILE,
                              &ld->co, &ld->nco);
    /* malformed or missing: replicated logs start with high watermark =
     * LEO, as before the file existed */
    snprintf(path, sizeof(path), "%s/%s", ld->dir,
             SAMSA_LOGMGR_HIGH_WATERMARK_FILE);
    if (access(path, F_OK) != 0 && ld->nrp > 0) {
        samsa_warn("log: %s is missing: the high watermarks of replicated "
                   "partitions start at their log end offsets", path);
    }
    (void) logmgr_read_sorted(ld->dir, SAMSA_LOGMGR_HIGH_WATERMARK_FILE,
                              &ld->hw, &ld->nhw);
    d = opendir(ld->dir);
    if (d == NULL) {
        samsa_error("log: cannot open log dir %s: %s", ld->dir,
                    strerror(errno));
        return SAMSA_ERR_KAFKA_STORAGE_ERROR;
    }
    while ((de = readdir(d)) != NULL) {
        logmgr_dir_entry(ld, de->d_name, &cap);
    }
    closedir(d);
    return SAMSA_ERR_NONE;
}

/* Load jobs until none is left (on a recovery thread, or the caller's). */
static void
logmgr_load_work(logmgr_loader_t *ld)
{
    logmgr_job_t        *job;
    samsa_log_config_t   cfg;
    samsa_plog_load_t    load;
    size_t               i;

    while ((i = atomic_fetch_add(&ld->next, 1)) < ld->njobs) {
        job = &ld->jobs[i];
        cfg = ld->mgr->cfg.defaults;
        if (ld->mgr->cfg.topic_config != NULL) {
            ld->mgr->cfg.topic_config(ld->mgr->cfg.topic_config_ctx,
                                      job->topic, &cfg);
        }
        load = (samsa_plog_load_t) {
            .recovery_point = job->recovery_point,
            .log_start_offset = job->log_start,
            .clean = ld->clean,
            .now_ms = samsa_wall_ms(),
        };
        if (samsa_plog_open(ld->dir, job->topic, job->partition, &cfg, &load,
                            &job->plog) != SAMSA_ERR_NONE) {
            samsa_error("log: could not load %s/%s-%" PRId32 "; skipping it",
                        ld->dir, job->topic, job->partition);
            job->plog = NULL;
        }
    }
}

/* A recovery thread. */
static void *
logmgr_load_main(void *arg)
{
    samsa_thread_name_set("logrecovery");
    logmgr_load_work(arg);
    return NULL;
}

/* Load every partition of one dir with its recovery threads. */
static void
logmgr_load_jobs(logmgr_loader_t *ld, int32_t nthreads)
{
    pthread_t  *tids;
    int32_t     i, started = 0;

    if (nthreads < 1) {
        nthreads = 1;
    }
    if ((size_t) nthreads > ld->njobs) {
        nthreads = (int32_t) ld->njobs;
    }
    tids = samsa_calloc((size_t) nthreads + 1, sizeof(*tids));
    for (i = 0; i < nthreads; i++) {
        if (pthread_create(&tids[i], NULL, logmgr_load_main, ld) == 0) {
            started++;
        }
    }
    if (started == 0) {
        logmgr_load_work(ld);       /* no threads: do it here */
    }
    for (i = 0; i < started; i++) {
        pthread_join(tids[i], NULL);
    }
    samsa_free(tids);
}

/* Register what a dir's loading produced, then free the loader. */
static void
logmgr_load_finish(samsa_logmgr_t *mgr, logmgr_loader_t *ld)
{
    size_t  i;

    for (i = 0; i < ld->njobs; i++) {
        if (ld->jobs[i].plog == NULL) {
            mgr->n_load_failed++;
        } else if (!logmgr_insert(mgr, ld->jobs[i].plog)) {
            samsa_error("log: %s-%" PRId32 " is in two log dirs; ignoring "
                        "the copy in %s", ld->jobs[i].topic,
                        ld->jobs[i].partition, ld->dir);
            samsa_plog_unref(ld->jobs[i].plog);
            mgr->n_load_failed++;
        } else {
            samsa_plog_set_flusher(ld->jobs[i].plog, logmgr_flush_want, mgr);
            samsa_plog_set_clean_offset(
                ld->jobs[i].plog,
                logmgr_tp_find(ld->co, ld->nco, ld->jobs[i].topic,
                               ld->jobs[i].partition));
            /* delete horizons written before the restart are unknown:
             * let the cleaner look once */
            samsa_plog_set_clean_horizon(ld->jobs[i].plog, 0);
            samsa_plog_set_checkpointed_hw(
                ld->jobs[i].plog,
                logmgr_tp_find(ld->hw, ld->nhw, ld->jobs[i].topic,
                               ld->jobs[i].partition));
            mgr->n_loaded++;
        }
        samsa_free(ld->jobs[i].topic);
    }
    samsa_free(ld->jobs);
    samsa_ckpt_tp_free(ld->rp, ld->nrp);
    samsa_ckpt_tp_free(ld->ls, ld->nls);
    samsa_ckpt_tp_free(ld->co, ld->nco);
    samsa_ckpt_tp_free(ld->hw, ld->nhw);
}

/* Remove a dir's clean-shutdown marker: from now on a crash is unclean. */
static samsa_err_t
logmgr_unmark(const char *dir)
{
    char  path[PATH_MAX];

    snprintf(path, sizeof(path), "%s/%s", dir,
             SAMSA_LOGMGR_CLEAN_SHUTDOWN_FILE);
    if (unlink(path) != 0) {
        if (errno == ENOENT) {
            return SAMSA_ERR_NONE;
        }
        samsa_error("log: cannot delete %s: %s", path, strerror(errno));
        return SAMSA_ERR_KAFKA_STORAGE_ERROR;
    }
    return samsa_ckpt_fsync_dir(dir);
}

/* Create (if needed), scan and load one log dir. */
static void
logmgr_load_dir(samsa_logmgr_t *mgr, logmgr_dir_t *dir)
{
    logmgr_loader_t  ld;

    memset(&ld, 0, sizeof(ld));
    ld.mgr = mgr;
    ld.dir = dir->path;
    if (mkdir(dir->path, 0755) != 0 && errno != EEXIST) {
        samsa_error("log: cannot create log dir %s: %s", dir->path,
                    strerror(errno));
        return;
    }
    if (logmgr_scan_dir(&ld) != SAMSA_ERR_NONE) {
        logmgr_load_finish(mgr, &ld);
        return;
    }
    samsa_info("log: loading %zu partition(s) from %s (%s shutdown)",
               ld.njobs, dir->path, ld.clean ? "clean" : "unclean");
    logmgr_load_jobs(&ld, mgr->cfg.recovery_threads_per_dir);
    logmgr_load_finish(mgr, &ld);
    dir->online = logmgr_unmark(dir->path) == SAMSA_ERR_NONE;
}

/* ---- open and close ------------------------------------------------------ */

static samsa_logmgr_t *
logmgr_new(const samsa_logmgr_config_t *cfg)
{
    samsa_logmgr_t      *mgr;
    pthread_condattr_t   ca;
    size_t               i;

    mgr = samsa_calloc(1, sizeof(*mgr));
    mgr->cfg = *cfg;
    mgr->cfg.dirs = NULL;
    mgr->ndirs = cfg->ndirs;
    mgr->dirs = samsa_calloc(cfg->ndirs + 1, sizeof(*mgr->dirs));
    for (i = 0; i < cfg->ndirs; i++) {
        mgr->dirs[i].path = samsa_strdup(cfg->dirs[i]);
    }
    samsa_map_init(&mgr->map);
    mgr->on_flushed = cfg->on_flushed;
    mgr->on_flushed_ctx = cfg->on_flushed_ctx;
    pthread_mutex_init(&mgr->create_lock, NULL);
    pthread_mutex_init(&mgr->map_lock, NULL);
    pthread_mutex_init(&mgr->fq_lock, NULL);
    pthread_mutex_init(&mgr->cb_lock, NULL);
    pthread_cond_init(&mgr->fq_cond, NULL);
    pthread_mutex_init(&mgr->maint_lock, NULL);
    pthread_mutex_init(&mgr->cleaner_ckpt_lock, NULL);
    pthread_mutex_init(&mgr->cleaner_lock, NULL);
    pthread_cond_init(&mgr->cleaner_cond, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&mgr->maint_cond, &ca);
    pthread_condattr_destroy(&ca);
    return mgr;
}

static void
logmgr_free(samsa_logmgr_t *mgr)
{
    size_t  i;

    for (i = 0; i < mgr->ndirs; i++) {
        samsa_free(mgr->dirs[i].path);
    }
    for (i = 0; i < mgr->ndoomed; i++) {
        samsa_free(mgr->doomed[i].path);
    }
    samsa_free(mgr->doomed);
    samsa_free(mgr->dirs);
    samsa_map_fini(&mgr->map);
    samsa_free(mgr->fq);
    pthread_mutex_destroy(&mgr->create_lock);
    pthread_mutex_destroy(&mgr->map_lock);
    pthread_mutex_destroy(&mgr->fq_lock);
    pthread_mutex_destroy(&mgr->cb_lock);
    pthread_cond_destroy(&mgr->fq_cond);
    pthread_mutex_destroy(&mgr->maint_lock);
    pthread_cond_destroy(&mgr->maint_cond);
    pthread_mutex_destroy(&mgr->cleaner_ckpt_lock);
    pthread_mutex_destroy(&mgr->cleaner_lock);
    pthread_cond_destroy(&mgr->cleaner_cond);
    samsa_free(mgr);
}

/* Empty the registry; its references go to the caller (*n of them). */
static samsa_plog_t **
logmgr_take_all(samsa_logmgr_t *mgr, size_t *n)
{
    samsa_plog_t    **all;
    logmgr_entry_t   *e;
    samsa_map_iter_t  it;
    size_t            i;

    pthread_mutex_lock(&mgr->map_lock);
    all = samsa_calloc(samsa_map_count(&mgr->map) + 1, sizeof(*all));
    *n = 0;
    samsa_map_iter_init(&it, &mgr->map);
    while ((e = logmgr_next(&it)) != NULL) {
        all[(*n)++] = e->plog;
        samsa_free(e);
    }
    samsa_map_fini(&mgr->map);
    for (i = 0; i < mgr->ndirs; i++) {
        mgr->dirs[i].nplogs = 0;
    }
    pthread_mutex_unlock(&mgr->map_lock);
    return all;
}

/* Stop logflush, then answer whatever was still queued. */
static void
logmgr_stop_flusher(samsa_logmgr_t *mgr)
{
    samsa_plog_t              **q;
    size_t                      n;
    samsa_logmgr_flushed_cb_t  *cb;
    void                       *cb_ctx;

    pthread_mutex_lock(&mgr->fq_lock);
    mgr->fq_stop = true;
    pthread_cond_signal(&mgr->fq_cond);
    pthread_mutex_unlock(&mgr->fq_lock);
    if (mgr->flush_started) {
        pthread_join(mgr->flush_thread, NULL);
        mgr->flush_started = false;
    }
    pthread_mutex_lock(&mgr->fq_lock);
    logmgr_flush_take(mgr, &q, &n, &cb, &cb_ctx);
    pthread_mutex_unlock(&mgr->fq_lock);
    logmgr_flush_all(mgr, q, n, cb, cb_ctx);
    samsa_free(q);
}

static void
logmgr_stop_maint(samsa_logmgr_t *mgr)
{
    pthread_mutex_lock(&mgr->maint_lock);
    mgr->maint_stop = true;
    pthread_cond_signal(&mgr->maint_cond);
    pthread_mutex_unlock(&mgr->maint_lock);
    if (mgr->maint_started) {
        pthread_join(mgr->maint_thread, NULL);
        mgr->maint_started = false;
    }
}

/* Write an empty clean-shutdown marker in dir (Kafka <= 3.6 writes it
 * empty; newer ones accept that). */
static samsa_err_t
logmgr_mark(const char *dir)
{
    char  path[PATH_MAX];

    snprintf(path, sizeof(path), "%s/%s", dir,
             SAMSA_LOGMGR_CLEAN_SHUTDOWN_FILE);
    return samsa_ckpt_write_atomic(path, "", 0);
}

/* Close every log; when clean, checkpoint and mark each dir where every
 * log closed well.  Frees mgr. */
static void
logmgr_shutdown(samsa_logmgr_t *mgr, bool clean)
{
    samsa_cleaner_t *cleaner;
    samsa_plog_t   **all;
    logmgr_dir_t    *dir;
    bool            *ok;
    size_t           n, i;

    pthread_mutex_lock(&mgr->cleaner_lock);
    while (mgr->cleaner_busy) {
        pthread_cond_wait(&mgr->cleaner_cond, &mgr->cleaner_lock);
    }
    cleaner = mgr->cleaner;
    mgr->cleaner = NULL;
    pthread_mutex_unlock(&mgr->cleaner_lock);
    samsa_cleaner_stop(cleaner);        /* before the logs close */
    logmgr_stop_maint(mgr);
    logmgr_stop_flusher(mgr);           /* no flush may race the closes */
    all = logmgr_take_all(mgr, &n);
    ok = samsa_calloc(mgr->ndirs + 1, sizeof(*ok));
    for (i = 0; i < mgr->ndirs; i++) {
        ok[i] = mgr->dirs[i].online;
    }
    for (i = 0; i < n; i++) {
        dir = logmgr_dir_of(mgr, all[i]);
        if (samsa_plog_close(samsa_plog_ref(all[i])) != SAMSA_ERR_NONE
            && dir != NULL) {
            ok[dir - mgr->dirs] = false;
        }
    }
    for (i = 0; clean && i < mgr->ndirs; i++) {
        dir = &mgr->dirs[i];
        if (ok[i]
            && (logmgr_write_ckpt(dir, all, n, LOGMGR_CKPT_RECOVERY_POINT)
                    != SAMSA_ERR_NONE
                || logmgr_write_ckpt(dir, all, n, LOGMGR_CKPT_CLEANER)
                       != SAMSA_ERR_NONE
                || logmgr_write_ckpt(dir, all, n, LOGMGR_CKPT_LOG_START)
                       != SAMSA_ERR_NONE
                || logmgr_write_ckpt(dir, all, n, LOGMGR_CKPT_HIGH_WATERMARK)
                       != SAMSA_ERR_NONE
                || logmgr_mark(dir->path) != SAMSA_ERR_NONE)) {
            samsa_error("log: %s not marked as cleanly shut down",
                        mgr->dirs[i].path);
        }
    }
    logmgr_snapshot_free(all, n);
    samsa_free(ok);
    logmgr_free(mgr);
}

/* ---- create, delete, config ---------------------------------------------- */

/* The online log dir holding the fewest logs.  @locks map_lock taken */
static const char *
logmgr_pick_dir(samsa_logmgr_t *mgr)
{
    logmgr_dir_t  *best = NULL;
    size_t         i;

    pthread_mutex_lock(&mgr->map_lock);
    for (i = 0; i < mgr->ndirs; i++) {
        if (mgr->dirs[i].online
            && (best == NULL || mgr->dirs[i].nplogs < best->nplogs)) {
            best = &mgr->dirs[i];
        }
    }
    pthread_mutex_unlock(&mgr->map_lock);
    return best != NULL ? best->path : NULL;
}

/* An existing log for a create: same topic id (or either is zero). */
static samsa_err_t
logmgr_existing(samsa_plog_t *plog, samsa_uuid_t topic_id, samsa_plog_t **out)
{
    samsa_uuid_t  id = samsa_plog_topic_id(plog);

    if (!samsa_uuid_is_zero(id) && !samsa_uuid_is_zero(topic_id)
        && !samsa_uuid_eq(id, topic_id)) {
        samsa_plog_unref(plog);
        return SAMSA_ERR_INCONSISTENT_TOPIC_ID;
    }
    if (out != NULL) {
        *out = plog;
    } else {
        samsa_plog_unref(plog);
    }
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_logmgr_plog_create(samsa_logmgr_t *mgr, const char *topic,
                         int32_t partition, samsa_uuid_t topic_id,
                         const samsa_log_config_t *cfg, samsa_plog_t **out)
{
    samsa_plog_t  *plog;
    const char    *dir;
    char           errstr[128];
    samsa_err_t    err;

    if (out != NULL) {
        *out = NULL;
    }
    if (!samsa_log_config_check(cfg, errstr, sizeof(errstr))) {
        samsa_warn("log: %s-%" PRId32 ": %s", topic, partition, errstr);
        return SAMSA_ERR_INVALID_CONFIG;
    }
    pthread_mutex_lock(&mgr->create_lock);
    plog = samsa_logmgr_plog_ref(mgr, topic, partition);
    if (plog != NULL) {
        pthread_mutex_unlock(&mgr->create_lock);
        return logmgr_existing(plog, topic_id, out);
    }
    dir = logmgr_pick_dir(mgr);
    err = dir == NULL ? SAMSA_ERR_KAFKA_STORAGE_ERROR
                      : samsa_plog_create(dir, topic, partition, topic_id,
                                          cfg, &plog);
    if (err == SAMSA_ERR_NONE) {
        samsa_plog_set_flusher(plog, logmgr_flush_want, mgr);
        if (out != NULL) {
            *out = samsa_plog_ref(plog);
        }
        samsa_assert(logmgr_insert(mgr, plog));     /* create_lock held */
    }
    pthread_mutex_unlock(&mgr->create_lock);
    return err;
}

samsa_err_t
samsa_logmgr_plog_delete(samsa_logmgr_t *mgr, const char *topic,
                         int32_t partition)
{
    samsa_plog_t        *plog;
    samsa_log_config_t   cfg;
    char                 renamed[PATH_MAX];
    samsa_err_t          err;

    renamed[0] = '\0';
    pthread_mutex_lock(&mgr->create_lock);
    plog = logmgr_remove(mgr, topic, partition);
    if (plog == NULL) {
        pthread_mutex_unlock(&mgr->create_lock);
        return SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION;
    }
    samsa_plog_config_get(plog, &cfg);
    err = samsa_plog_delete(plog, renamed, sizeof(renamed));
    pthread_mutex_unlock(&mgr->create_lock);
    if (renamed[0] != '\0') {
        pthread_mutex_lock(&mgr->maint_lock);
        mgr->doomed = samsa_realloc(mgr->doomed, (mgr->ndoomed + 1)
                                                     * sizeof(*mgr->doomed));
        mgr->doomed[mgr->ndoomed++] = (logmgr_doomed_dir_t) {
            samsa_strdup(renamed),
            logmgr_add_sat(samsa_now_ms(), cfg.file_delete_delay_ms),
        };
        pthread_mutex_unlock(&mgr->maint_lock);
    }
    samsa_plog_unref(plog);
    return err;
}

void
samsa_logmgr_topic_config_set(samsa_logmgr_t *mgr, const char *topic,
                              const samsa_log_config_t *cfg)
{
    samsa_plog_t  **all;
    size_t          n, i;

    all = logmgr_snapshot(mgr, &n);
    for (i = 0; i < n; i++) {
        if (strcmp(samsa_plog_topic(all[i]), topic) == 0) {
            samsa_plog_config_set(all[i], cfg);
        }
    }
    logmgr_snapshot_free(all, n);
}

/* ---- dirs and stats ------------------------------------------------------ */

size_t
samsa_logmgr_dir_count(const samsa_logmgr_t *mgr)
{
    return mgr->ndirs;
}

const char *
samsa_logmgr_dir(const samsa_logmgr_t *mgr, size_t i)
{
    return i < mgr->ndirs ? mgr->dirs[i].path : NULL;
}

bool
samsa_logmgr_dir_online(const samsa_logmgr_t *mgr, size_t i)
{
    return i < mgr->ndirs && mgr->dirs[i].online;
}

samsa_err_t
samsa_logmgr_dir_usage(const samsa_logmgr_t *mgr, size_t i,
                       int64_t *total_bytes, int64_t *usable_bytes)
{
    struct statvfs  sv;

    *total_bytes = *usable_bytes = -1;
    if (i >= mgr->ndirs) {
        return SAMSA_ERR__INVALID_ARG;
    }
    if (statvfs(mgr->dirs[i].path, &sv) != 0) {
        samsa_error("log: cannot statvfs %s: %s", mgr->dirs[i].path,
                    strerror(errno));
        return SAMSA_ERR_KAFKA_STORAGE_ERROR;
    }
    *total_bytes = (int64_t) sv.f_blocks * (int64_t) sv.f_frsize;
    *usable_bytes = (int64_t) sv.f_bavail * (int64_t) sv.f_frsize;
    return SAMSA_ERR_NONE;
}

void
samsa_logmgr_stats(samsa_logmgr_t *mgr, samsa_logmgr_stats_t *stats)
{
    samsa_fdcache_stats_t  fc;

    stats->flush_rounds = atomic_load(&mgr->n_rounds);
    stats->plog_flushes = atomic_load(&mgr->n_flushes);
    stats->loaded = mgr->n_loaded;
    stats->load_failed = mgr->n_load_failed;
    samsa_fdcache_stats(samsa_fdcache_global(), &fc);
    stats->open_files = fc.open_fds;
    stats->open_files_max = fc.budget;
    stats->fd_evictions = fc.evictions;
    stats->fd_exhausted = fc.exhausted;
}

bool
samsa_logmgr_files_available(samsa_logmgr_t *mgr, char *errstr,
                             size_t errstr_size)
{
    samsa_fdcache_stats_t  fc;
    struct rlimit          rl;

    (void) mgr;
    if (samsa_fdcache_make_spare(samsa_fdcache_global()) == SAMSA_ERR_NONE) {
        return true;
    }
    samsa_fdcache_stats(samsa_fdcache_global(), &fc);
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
        rl.rlim_cur = RLIM_INFINITY;
    }
    snprintf(errstr, errstr_size,
             "out of file descriptors: the broker's RLIMIT_NOFILE (%lld) is "
             "reached, %lld held by log files (log.open.files.max %lld); "
             "no new partition's files can be opened now (retry later, "
             "raise the limit or lower log.open.files.max)",
             rl.rlim_cur == RLIM_INFINITY ? -1LL : (long long) rl.rlim_cur,
             (long long) fc.open_fds, (long long) fc.budget);
    return false;
}

samsa_err_t
samsa_logmgr_open(const samsa_logmgr_config_t *cfg, samsa_logmgr_t **out,
                  char *errstr, size_t errstr_size)
{
    samsa_logmgr_t   *mgr;
    samsa_cleaner_t  *cleaner;
    size_t            i, online = 0;

    *out = NULL;
    if (cfg->ndirs == 0) {
        snprintf(errstr, errstr_size, "log.dirs is empty");
        return SAMSA_ERR__CONFIG;
    }
    if (!samsa_log_config_check(&cfg->defaults, errstr, errstr_size)) {
        return SAMSA_ERR__CONFIG;
    }
    /* before loading: recovery opens segments through the cache */
    samsa_fdcache_set_budget(samsa_fdcache_global(), cfg->open_files_max);
    mgr = logmgr_new(cfg);
    for (i = 0; i < mgr->ndirs; i++) {
        logmgr_load_dir(mgr, &mgr->dirs[i]);
        online += mgr->dirs[i].online;
    }
    if (online == 0) {
        snprintf(errstr, errstr_size, "no usable log dir (first: %s)",
                 mgr->dirs[0].path);
        logmgr_shutdown(mgr, false);
        return SAMSA_ERR_KAFKA_STORAGE_ERROR;
    }
    mgr->flush_started = pthread_create(&mgr->flush_thread, NULL,
                                        logmgr_flush_main, mgr) == 0;
    mgr->maint_started = mgr->flush_started
                         && pthread_create(&mgr->maint_thread, NULL,
                                           logmgr_maint_main, mgr) == 0;
    cleaner = NULL;
    if (mgr->maint_started) {
        cleaner = samsa_cleaner_start(&mgr->cfg.cleaner, logmgr_cleaner_each,
                                      logmgr_cleaner_done, mgr);
        pthread_mutex_lock(&mgr->cleaner_lock);
        mgr->cleaner_cfg = mgr->cfg.cleaner;
        mgr->cleaner = cleaner;
        pthread_mutex_unlock(&mgr->cleaner_lock);
    }
    if (!mgr->maint_started || cleaner == NULL) {
        snprintf(errstr, errstr_size, "cannot start the log threads");
        logmgr_shutdown(mgr, false);
        return SAMSA_ERR__IO;
    }
    samsa_info("log: %" PRIu64 " log(s) loaded from %zu dir(s), %" PRIu64
               " failed", mgr->n_loaded, mgr->ndirs, mgr->n_load_failed);
    *out = mgr;
    return SAMSA_ERR_NONE;
}

void
samsa_logmgr_close(samsa_logmgr_t *mgr)
{
    if (mgr != NULL) {
        logmgr_shutdown(mgr, true);
    }
}
