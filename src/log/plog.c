/*
 * log/plog.c - a partition's log: creation, loading, the segment list,
 * append, roll, flush, config, close and delete (see plog.h).  Reads,
 * ListOffsets, retention, DeleteRecords and truncation are in
 * plog_ends.c.
 */
#include "log/plog.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log/ckpt.h"
#include "log/fdcache.h"
#include "log/plog_int.h"
#include "log/pmeta.h"
#include "log/recover.h"
#include "util/alloc.h"
#include "util/diag.h"
#include "util/time.h"
#include "util/fault.h"

/* ---- segment list -------------------------------------------------------- */

static samsa_plog_segs_t *
plog_segs_new(size_t n)
{
    samsa_plog_segs_t  *segs;

    segs = samsa_calloc(1, sizeof(*segs) + n * sizeof(segs->seg[0]));
    atomic_init(&segs->refcnt, 1);
    segs->n = n;
    return segs;
}

samsa_plog_segs_t *
samsa_plog_segs_get(samsa_plog_t *plog)
{
    samsa_plog_segs_t  *segs;

    pthread_mutex_lock(&plog->segs_lock);
    segs = plog->segs;
    atomic_fetch_add_explicit(&segs->refcnt, 1, memory_order_relaxed);
    pthread_mutex_unlock(&plog->segs_lock);
    return segs;
}

void
samsa_plog_segs_put(samsa_plog_segs_t *segs)
{
    size_t  i;

    if (segs == NULL
        || atomic_fetch_sub_explicit(&segs->refcnt, 1, memory_order_acq_rel)
               != 1) {
        return;
    }
    for (i = 0; i < segs->n; i++) {
        samsa_seg_unref(segs->seg[i]);
    }
    samsa_free(segs);
}

size_t
samsa_plog_segs_find(const samsa_plog_segs_t *segs, int64_t offset)
{
    size_t  lo = 0, hi = segs->n, mid;

    while (lo < hi) {               /* first segment with base > offset */
        mid = lo + (hi - lo) / 2;
        if (samsa_seg_base(segs->seg[mid]) <= offset) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo > 0 ? lo - 1 : 0;
}

/* With keep_open, pin the active segment (and unpin the one pinned
 * before).  A pin that fails (no descriptor) leaves it to the cache; the
 * next change of the list tries again.  @locks lock held */
static void
plog_keep_update(samsa_plog_t *plog)
{
    samsa_seg_t  *active = plog->segs->seg[plog->segs->n - 1];

    if (!plog->keep_open || plog->kept == active) {
        return;
    }
    if (plog->kept != NULL) {
        samsa_seg_unpin(plog->kept);
        samsa_seg_unref(plog->kept);
        plog->kept = NULL;
    }
    if (samsa_seg_pin(active) == SAMSA_ERR_NONE) {
        plog->kept = samsa_seg_ref(active);
    } else {
        samsa_warn("log: %s: cannot keep the active segment open",
                   plog->dir);
    }
}

void
samsa_plog_keep_open(samsa_plog_t *plog)
{
    pthread_mutex_lock(&plog->lock);
    plog->keep_open = true;
    plog_keep_update(plog);
    pthread_mutex_unlock(&plog->lock);
}

void
samsa_plog_segs_replace(samsa_plog_t *plog, size_t from, size_t to,
                        samsa_seg_t *extra)
{
    samsa_plog_segs_t  *old = plog->segs, *segs;
    size_t              i;

    segs = plog_segs_new(to - from + (extra != NULL));
    for (i = from; i < to; i++) {
        segs->seg[i - from] = samsa_seg_ref(old->seg[i]);
    }
    if (extra != NULL) {
        segs->seg[to - from] = samsa_seg_ref(extra);
    }
    pthread_mutex_lock(&plog->segs_lock);
    plog->segs = segs;
    pthread_mutex_unlock(&plog->segs_lock);
    samsa_plog_segs_put(old);
    plog_keep_update(plog);
}

static samsa_seg_t *
plog_active(samsa_plog_t *plog)
{
    return plog->segs->seg[plog->segs->n - 1];
}

samsa_err_t
samsa_plog_write_active(samsa_plog_t *plog, const uint8_t *records,
                        size_t len, samsa_pstate_change_t *ch)
{
    samsa_err_t  err;

    /* the active segment stays open while it is written (pinned) */
    err = samsa_seg_pin(plog_active(plog));
    if (err == SAMSA_ERR_NONE) {
        err = samsa_seg_append(plog_active(plog), records, len,
                               plog->cfg.index_interval_bytes);
        SAMSA_FAULT("log.append.after_write");
        if (err == SAMSA_ERR_NONE) {
            err = samsa_plog_pstate_index(plog, plog_active(plog), ch);
        }
        samsa_seg_unpin(plog_active(plog));
    } else if (err == SAMSA_ERR__NOFILE) {
        /* out of descriptors: nothing written; a retriable refusal */
        samsa_pstate_undo(plog->ps, ch);
        return err;
    }
    if (err == SAMSA_ERR__NOSPC) {
        /* the segment is as before: refuse this append, keep serving */
        samsa_pstate_undo(plog->ps, ch);
        return SAMSA_ERR_KAFKA_STORAGE_ERROR;
    }
    if (err != SAMSA_ERR_NONE) {
        samsa_pstate_undo(plog->ps, ch);
        samsa_plog_go_offline(plog);
        return err;
    }
    samsa_pstate_commit(plog->ps, ch);
    samsa_plog_pstate_publish(plog);
    return SAMSA_ERR_NONE;
}

/* ---- life cycle ---------------------------------------------------------- */

static samsa_plog_t *
plog_new(const char *parent, const char *topic, int32_t partition,
         samsa_uuid_t topic_id, const samsa_log_config_t *cfg)
{
    samsa_plog_t  *plog;
    char           dir[PATH_MAX];

    plog = samsa_calloc(1, sizeof(*plog));
    atomic_init(&plog->refcnt, 1);
    plog->topic = samsa_strdup(topic);
    plog->partition = partition;
    plog->topic_id = topic_id;
    plog->parent = samsa_strdup(parent);
    snprintf(dir, sizeof(dir), "%s/%s-%" PRId32, parent, topic, partition);
    plog->dir = samsa_strdup(dir);
    plog->cfg = *cfg;
    plog->state = SAMSA_PLOG_OPEN;
    pthread_mutex_init(&plog->lock, NULL);
    pthread_mutex_init(&plog->segs_lock, NULL);
    pthread_mutex_init(&plog->epochs_lock, NULL);
    pthread_mutex_init(&plog->flush_lock, NULL);
    atomic_init(&plog->last_flush_ms, samsa_now_ms());
    atomic_init(&plog->clean_offset, -1);
    atomic_init(&plog->horizon_due, INT64_MAX);
    atomic_init(&plog->cleaning, false);
    atomic_init(&plog->first_unstable, INT64_MAX);
    atomic_init(&plog->replicated, false);
    plog->hw_ckpt = -1;
    plog->ps = samsa_pstate_new();
    return plog;
}

static void
plog_free(samsa_plog_t *plog)
{
    if (plog->kept != NULL) {
        samsa_seg_unpin(plog->kept);
        samsa_seg_unref(plog->kept);
    }
    samsa_plog_segs_put(plog->segs);
    samsa_epochs_fini(&plog->epochs);
    samsa_pstate_free(plog->ps);
    pthread_mutex_destroy(&plog->lock);
    pthread_mutex_destroy(&plog->segs_lock);
    pthread_mutex_destroy(&plog->epochs_lock);
    pthread_mutex_destroy(&plog->flush_lock);
    for (size_t d = 0; d < plog->ndoomed; d++) {
        samsa_seg_unref(plog->doomed[d].seg);
    }
    samsa_free(plog->doomed);
    samsa_free(plog->topic);
    samsa_free(plog->parent);
    samsa_free(plog->dir);
    samsa_free(plog);
}

/* Install the loaded or created segments and the offsets. */
static void
plog_install(samsa_plog_t *plog, samsa_seg_t **seg, size_t n, int64_t leo,
             int64_t log_start, int64_t recovery_point)
{
    size_t  i;

    plog->segs = plog_segs_new(n);
    for (i = 0; i < n; i++) {
        plog->segs->seg[i] = seg[i];        /* takes the caller's refs */
    }
    plog->leo = leo;
    plog->flush_requested = recovery_point;
    atomic_init(&plog->leo_pub, leo);
    atomic_init(&plog->hwm, leo);
    atomic_init(&plog->log_start, log_start);
    atomic_init(&plog->durable, recovery_point);
    atomic_init(&plog->recovery_point, recovery_point);
    samsa_epochs_init(&plog->epochs, plog->dir);
}

/* Kafka's per-segment roll jitter: a random amount below
 * segment.jitter.ms.  @locks lock held */
static void
plog_new_jitter(samsa_plog_t *plog)
{
    uint64_t  r = 0;

    plog->roll_jitter_ms = 0;
    if (plog->cfg.segment_jitter_ms > 0
        && getrandom(&r, sizeof(r), 0) == (ssize_t) sizeof(r)) {
        plog->roll_jitter_ms = (int64_t) (r % (uint64_t)
                                               plog->cfg.segment_jitter_ms);
    }
}

samsa_err_t
samsa_plog_create(const char *parent_dir, const char *topic,
                  int32_t partition, samsa_uuid_t topic_id,
                  const samsa_log_config_t *cfg, samsa_plog_t **out)
{
    samsa_plog_t  *plog;
    samsa_seg_t   *seg;
    samsa_err_t    err;

    *out = NULL;
    /* the directory and partition.metadata are opened outside the
     * descriptor cache: make room first (out of descriptors: refused) */
    err = samsa_fdcache_make_spare(samsa_fdcache_global());
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    plog = plog_new(parent_dir, topic, partition, topic_id, cfg);
    if (mkdir(plog->dir, 0755) != 0) {
        err = errno == EEXIST ? SAMSA_ERR__EXISTS
                              : SAMSA_ERR_KAFKA_STORAGE_ERROR;
        if (err != SAMSA_ERR__EXISTS) {
            samsa_error("log: cannot create directory %s: %s", plog->dir,
                        strerror(errno));
        }
        plog_free(plog);
        return err;
    }
    err = samsa_uuid_is_zero(topic_id) ? SAMSA_ERR_NONE
                                        : samsa_pmeta_write(plog->dir,
                                                            topic_id);
    if (err == SAMSA_ERR_NONE) {
        err = samsa_seg_open(plog->dir, 0, SAMSA_SEG_F_CREATE
                                               | SAMSA_SEG_F_ACTIVE,
                             cfg->segment_index_bytes, samsa_wall_ms(), &seg);
    }
    if (err == SAMSA_ERR_NONE) {
        plog_install(plog, &seg, 1, 0, 0, 0);
        err = samsa_ckpt_fsync_dir(plog->dir);
    }
    if (err == SAMSA_ERR_NONE) {
        err = samsa_ckpt_fsync_dir(parent_dir);
    }
    if (err != SAMSA_ERR_NONE) {
        if (samsa_plog_remove_dir(plog->dir) != SAMSA_ERR_NONE) {
            samsa_warn("log: could not clean up %s", plog->dir);
        }
        plog_free(plog);
        return err;
    }
    plog_new_jitter(plog);
    *out = plog;
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_plog_open(const char *parent_dir, const char *topic, int32_t partition,
                const samsa_log_config_t *cfg, const samsa_plog_load_t *load,
                samsa_plog_t **out)
{
    samsa_plog_t            *plog;
    samsa_uuid_t             topic_id;
    samsa_recover_args_t     args;
    samsa_recover_result_t   res;
    samsa_err_t              err;

    *out = NULL;
    plog = plog_new(parent_dir, topic, partition, (samsa_uuid_t) { { 0 } },
                    cfg);
    if (samsa_pmeta_read(plog->dir, &topic_id) == SAMSA_ERR_NONE) {
        plog->topic_id = topic_id;
    }
    args = (samsa_recover_args_t) {
        .dir = plog->dir,
        .recovery_point = load->recovery_point,
        .log_start_offset = load->log_start_offset,
        .clean = load->clean,
        .index_max_bytes = cfg->segment_index_bytes,
        .index_interval_bytes = cfg->index_interval_bytes,
        .now_ms = load->now_ms,
    };
    err = samsa_recover_partition(&args, &res);
    if (err != SAMSA_ERR_NONE) {
        plog_free(plog);
        return err;
    }
    plog_install(plog, res.segs, res.nsegs, res.log_end_offset,
                 res.log_start_offset, res.recovery_point);
    samsa_free(res.segs);           /* the refs moved into plog->segs */
    /* After a clean stop the snapshot written at close is good; after a
     * crash only segments below the checkpointed recovery point (and
     * their transaction indexes) were synced, so replay from a snapshot
     * no later than that. */
    err = samsa_plog_pstate_load(plog, load->clean ? res.log_end_offset
                                                   : load->recovery_point,
                                 load->now_ms);
    if (err != SAMSA_ERR_NONE) {
        plog_free(plog);
        return err;
    }
    if (samsa_epochs_truncate_end(&plog->epochs, res.log_end_offset)
            != SAMSA_ERR_NONE
        || samsa_epochs_truncate_start(&plog->epochs, res.log_start_offset)
               != SAMSA_ERR_NONE) {
        samsa_warn("log: %s: could not rewrite leader-epoch-checkpoint",
                   plog->dir);
    }
    plog_new_jitter(plog);
    *out = plog;
    return SAMSA_ERR_NONE;
}

samsa_plog_t *
samsa_plog_ref(samsa_plog_t *plog)
{
    atomic_fetch_add_explicit(&plog->refcnt, 1, memory_order_relaxed);
    return plog;
}

void
samsa_plog_unref(samsa_plog_t *plog)
{
    if (plog != NULL
        && atomic_fetch_sub_explicit(&plog->refcnt, 1, memory_order_acq_rel)
               == 1) {
        plog_free(plog);
    }
}

samsa_err_t
samsa_plog_close(samsa_plog_t *plog)
{
    samsa_err_t  err = SAMSA_ERR_NONE;
    bool         was_open;

    pthread_mutex_lock(&plog->lock);
    was_open = plog->state == SAMSA_PLOG_OPEN;
    if (was_open) {
        plog->state = SAMSA_PLOG_CLOSED;
        if (!samsa_plog_is_offline(plog)) {
            err = samsa_seg_seal(plog_active(plog));
        }
        if (err == SAMSA_ERR_NONE && !samsa_plog_is_offline(plog)
            && samsa_plog_pstate_snapshot_due(plog)) {
            /* Kafka's snapshot at clean shutdown; a failure only costs a
             * replay at the next start */
            (void) samsa_plog_pstate_snapshot(plog, true);
        }
    }
    pthread_mutex_unlock(&plog->lock);
    if (was_open && err == SAMSA_ERR_NONE) {
        err = samsa_plog_is_offline(plog)
                  ? SAMSA_ERR_KAFKA_STORAGE_ERROR
                  : samsa_plog_flush(plog, SAMSA_PLOG_FLUSH_FULL, NULL);
    }
    if (was_open) {
        samsa_plog_purge(plog, 0, true);
    }
    samsa_plog_unref(plog);
    return err;
}

/* Kafka's LocalLog.logDeleteDirName: "<topic>-<partition>.<uuid>-delete"
 * with the uuid's 32 hex digits, the topic cut so the name fits 255. */
static void
plog_delete_name(const samsa_plog_t *plog, char *path, size_t size)
{
    uint8_t  r[16] = { 0 };
    char     hex[33], suffix[64];
    int      i, room;

    if (getrandom(r, sizeof(r), 0) != (ssize_t) sizeof(r)) {
        memcpy(r, &plog, sizeof(plog));         /* unique enough */
    }
    for (i = 0; i < 16; i++) {
        snprintf(hex + 2 * i, 3, "%02x", r[i]);
    }
    snprintf(suffix, sizeof(suffix), "-%" PRId32 ".%s-delete",
             plog->partition, hex);
    room = 255 - (int) strlen(suffix);
    snprintf(path, size, "%s/%.*s%s", plog->parent, room, plog->topic,
             suffix);
}

samsa_err_t
samsa_plog_delete(samsa_plog_t *plog, char *renamed, size_t renamed_size)
{
    char                  path[PATH_MAX];
    samsa_err_t           err;
    samsa_plog_doomed_t  *doomed;
    size_t                ndoomed;

    pthread_mutex_lock(&plog->lock);
    if (plog->state == SAMSA_PLOG_DELETED) {
        pthread_mutex_unlock(&plog->lock);
        return SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION;
    }
    plog->state = SAMSA_PLOG_DELETED;
    /* the doomed files go with the directory; drop the references */
    doomed = plog->doomed;
    ndoomed = plog->ndoomed;
    plog->doomed = NULL;
    plog->ndoomed = 0;
    plog->doomed_cap = 0;
    pthread_mutex_unlock(&plog->lock);
    for (size_t d = 0; d < ndoomed; d++) {
        samsa_seg_unref(doomed[d].seg);
    }
    samsa_free(doomed);
    plog_delete_name(plog, path, sizeof(path));
    if (rename(plog->dir, path) != 0) {
        samsa_error("log: cannot rename %s to %s: %s", plog->dir, path,
                    strerror(errno));
        return SAMSA_ERR_KAFKA_STORAGE_ERROR;
    }
    snprintf(renamed, renamed_size, "%s", path);
    err = samsa_ckpt_fsync_dir(plog->parent);
    samsa_info("log: deleted the log of %s-%" PRId32 " (now %s)", plog->topic,
               plog->partition, path);
    return err;
}

samsa_err_t
samsa_plog_remove_dir(const char *path)
{
    char            file[PATH_MAX];
    DIR            *d;
    struct dirent  *de;
    samsa_err_t     err = SAMSA_ERR_NONE;

    d = opendir(path);
    if (d == NULL) {
        if (errno == ENOENT) {
            return SAMSA_ERR_NONE;
        }
        samsa_error("log: cannot open %s: %s", path, strerror(errno));
        return SAMSA_ERR_KAFKA_STORAGE_ERROR;
    }
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) {
            continue;
        }
        snprintf(file, sizeof(file), "%s/%s", path, de->d_name);
        if (unlink(file) != 0 && errno != ENOENT) {
            samsa_error("log: cannot delete %s: %s", file, strerror(errno));
            err = SAMSA_ERR_KAFKA_STORAGE_ERROR;
        }
    }
    closedir(d);
    if (err == SAMSA_ERR_NONE && rmdir(path) != 0 && errno != ENOENT) {
        samsa_error("log: cannot remove %s: %s", path, strerror(errno));
        err = SAMSA_ERR_KAFKA_STORAGE_ERROR;
    }
    return err;
}

/* ---- identity and state -------------------------------------------------- */

const char *
samsa_plog_topic(const samsa_plog_t *plog)
{
    return plog->topic;
}

int32_t
samsa_plog_partition(const samsa_plog_t *plog)
{
    return plog->partition;
}

samsa_uuid_t
samsa_plog_topic_id(const samsa_plog_t *plog)
{
    return plog->topic_id;
}

const char *
samsa_plog_dir(const samsa_plog_t *plog)
{
    return plog->dir;
}

const char *
samsa_plog_parent_dir(const samsa_plog_t *plog)
{
    return plog->parent;
}

int64_t
samsa_plog_log_start_offset(samsa_plog_t *plog)
{
    return atomic_load_explicit(&plog->log_start, memory_order_acquire);
}

int64_t
samsa_plog_log_end_offset(samsa_plog_t *plog)
{
    return atomic_load_explicit(&plog->leo_pub, memory_order_acquire);
}

int64_t
samsa_plog_high_watermark(samsa_plog_t *plog)
{
    return atomic_load_explicit(&plog->hwm, memory_order_acquire);
}

int64_t
samsa_plog_recovery_point(samsa_plog_t *plog)
{
    return atomic_load_explicit(&plog->recovery_point, memory_order_acquire);
}

int64_t
samsa_plog_durable_offset(samsa_plog_t *plog)
{
    return atomic_load_explicit(&plog->durable, memory_order_acquire);
}

int64_t
samsa_plog_size_bytes(samsa_plog_t *plog)
{
    samsa_plog_segs_t  *segs = samsa_plog_segs_get(plog);
    int64_t             size = 0;
    size_t              i;

    for (i = 0; i < segs->n; i++) {
        size += samsa_seg_end(segs->seg[i]).size;
    }
    samsa_plog_segs_put(segs);
    return size;
}

size_t
samsa_plog_segment_count(samsa_plog_t *plog)
{
    samsa_plog_segs_t  *segs = samsa_plog_segs_get(plog);
    size_t              n = segs->n;

    samsa_plog_segs_put(segs);
    return n;
}

bool
samsa_plog_is_offline(samsa_plog_t *plog)
{
    return atomic_load_explicit(&plog->offline, memory_order_acquire);
}

void
samsa_plog_go_offline(samsa_plog_t *plog)
{
    if (!atomic_exchange_explicit(&plog->offline, true,
                                  memory_order_acq_rel)) {
        samsa_error("log: %s is offline after an I/O error; it refuses "
                    "appends and reads until the broker restarts",
                    plog->dir);
    }
}

samsa_err_t
samsa_plog_check_writable(samsa_plog_t *plog)
{
    if (samsa_plog_is_offline(plog)) {
        return SAMSA_ERR_KAFKA_STORAGE_ERROR;
    }
    switch (plog->state) {
    case SAMSA_PLOG_OPEN:
        return SAMSA_ERR_NONE;
    case SAMSA_PLOG_CLOSED:
        return SAMSA_ERR_NOT_LEADER_OR_FOLLOWER;
    default:
        return SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION;
    }
}

void
samsa_plog_stats(samsa_plog_t *plog, samsa_plog_stats_t *stats)
{
    stats->appends = atomic_load(&plog->n_appends);
    stats->flushes = atomic_load(&plog->n_flushes);
    stats->fdatasyncs = atomic_load(&plog->n_fdatasyncs);
    stats->rolls = atomic_load(&plog->n_rolls);
    stats->messages_in = atomic_load_explicit(&plog->n_messages_in,
                                              memory_order_relaxed);
    stats->bytes_in = atomic_load_explicit(&plog->n_bytes_in,
                                           memory_order_relaxed);
    stats->bytes_out = atomic_load_explicit(&plog->n_bytes_out,
                                            memory_order_relaxed);
}

void
samsa_plog_count_bytes_out(samsa_plog_t *plog, int64_t len)
{
    if (len > 0) {
        atomic_fetch_add_explicit(&plog->n_bytes_out, (uint64_t) len,
                                  memory_order_relaxed);
    }
}

/* ---- config -------------------------------------------------------------- */

void
samsa_plog_config_set(samsa_plog_t *plog, const samsa_log_config_t *cfg)
{
    pthread_mutex_lock(&plog->lock);
    plog->cfg = *cfg;
    plog_new_jitter(plog);
    pthread_mutex_unlock(&plog->lock);
}

void
samsa_plog_config_get(samsa_plog_t *plog, samsa_log_config_t *cfg)
{
    pthread_mutex_lock(&plog->lock);
    *cfg = plog->cfg;
    pthread_mutex_unlock(&plog->lock);
}

/* ---- append and roll ----------------------------------------------------- */

/* Out of descriptors leaves the log as it was: refuse this call only.
 * Any other error takes the log offline. */
static samsa_err_t
plog_nofile_or_offline(samsa_plog_t *plog, samsa_err_t err)
{
    if (err != SAMSA_ERR__NOFILE) {
        samsa_plog_go_offline(plog);
    }
    return err;
}

samsa_err_t
samsa_plog_roll(samsa_plog_t *plog, int64_t now_ms)
{
    samsa_seg_t  *active = plog_active(plog), *seg;
    samsa_err_t   err;

    if (samsa_seg_end(active).size == 0
        && samsa_seg_base(active) == plog->leo) {
        return SAMSA_ERR_NONE;              /* nothing to roll away from */
    }
    /* pinned throughout, so running out of descriptors can only fail the
     * new segment's open, and the old one is made active again */
    err = samsa_seg_pin(active);
    if (err != SAMSA_ERR_NONE) {
        return plog_nofile_or_offline(plog, err);
    }
    err = samsa_seg_seal(active);
    SAMSA_FAULT("log.roll.after_seal");
    if (err == SAMSA_ERR_NONE) {
        err = samsa_seg_open(plog->dir, plog->leo,
                             SAMSA_SEG_F_CREATE | SAMSA_SEG_F_ACTIVE,
                             plog->cfg.segment_index_bytes, now_ms, &seg);
        if (err == SAMSA_ERR__NOFILE
            && samsa_seg_activate(active, plog->cfg.segment_index_bytes)
                   != SAMSA_ERR_NONE) {
            err = SAMSA_ERR_KAFKA_STORAGE_ERROR;
        }
    }
    samsa_seg_unpin(active);
    if (err != SAMSA_ERR_NONE) {
        return plog_nofile_or_offline(plog, err);
    }
    SAMSA_FAULT("log.roll.after_open");
    samsa_plog_segs_replace(plog, 0, plog->segs->n, seg);
    samsa_seg_unref(seg);                   /* the list holds it now */
    plog->dir_dirty = true;
    plog->flush_full = true;                /* Kafka flushes the rolled
                                               segment in the background */
    (void) samsa_plog_pstate_snapshot(plog, false);   /* Kafka's snapshot
                                                         at roll */
    plog_new_jitter(plog);
    atomic_fetch_add_explicit(&plog->n_rolls, 1, memory_order_relaxed);
    samsa_debug("log: rolled %s to a new segment at %" PRId64, plog->dir,
                plog->leo);
    return SAMSA_ERR_NONE;
}

/* Record a new leader epoch starting at offset.  @locks lock held */
samsa_err_t
samsa_plog_note_epoch(samsa_plog_t *plog, int32_t epoch, int64_t offset)
{
    samsa_err_t  err = SAMSA_ERR_NONE;

    pthread_mutex_lock(&plog->epochs_lock);
    if (epoch > samsa_epochs_latest(&plog->epochs)) {
        err = samsa_epochs_assign(&plog->epochs, epoch, offset);
    }
    pthread_mutex_unlock(&plog->epochs_lock);
    return err;
}

/* Whether this append reaches flush.messages; if so, ask for a flush up
 * to the LEO and tell the caller to wait for it.  @locks lock held */
bool
samsa_plog_flush_policy(samsa_plog_t *plog, samsa_plog_append_result_t *res)
{
    int64_t  done = samsa_plog_durable_offset(plog);

    if (plog->flush_requested > done) {
        done = plog->flush_requested;
    }
    if (plog->leo - done < plog->cfg.flush_messages) {
        return false;
    }
    plog->flush_requested = plog->leo;
    res->durable_wanted = plog->leo;
    return true;
}

/* KIP-98: the producer-state checks of an append; a retried batch comes
 * back as a duplicate with its original offsets.  @locks lock held */
static samsa_err_t
plog_check_producers(samsa_plog_t *plog, const uint8_t *records, size_t len,
                     const samsa_plog_append_opts_t *opts,
                     samsa_pstate_change_t *ch,
                     samsa_plog_append_result_t *res)
{
    samsa_pstate_batch_t  dup;
    samsa_err_t           err;
    const char           *msg = NULL;
    bool                  is_dup = false;

    err = samsa_pstate_apply(plog->ps, records, len, plog->leo,
                             opts->from_client ? SAMSA_PSTATE_CLIENT
                                               : SAMSA_PSTATE_COORDINATOR,
                             ch, &is_dup, &dup, &msg);
    if (err != SAMSA_ERR_NONE) {
        res->summary.err_msg = msg;
        return err;
    }
    if (is_dup) {
        res->duplicate = true;
        res->base_offset = dup.first_offset;
        res->last_offset = dup.last_offset;
        /* the original may still wait for its group commit: so does this */
        if (samsa_plog_durable_offset(plog) <= dup.last_offset
            && plog->flush_requested > dup.last_offset) {
            res->durable_wanted = dup.last_offset + 1;
        }
    }
    return SAMSA_ERR_NONE;
}

/* The locked part of an append: roll, hook, offsets, write, publish.
 * *want tells whether to call the flusher.  @locks lock held */
static samsa_err_t
plog_append_locked(samsa_plog_t *plog, uint8_t *records, size_t len,
                   const samsa_plog_append_opts_t *opts, int64_t now_ms,
                   samsa_plog_append_result_t *res, bool *want)
{
    const samsa_log_config_t  *cfg = &plog->cfg;
    samsa_pstate_change_t      ch;
    int64_t                    max_ts, last, next, lat;
    samsa_err_t                err;

    last = plog->leo + res->summary.nrecords - 1;
    max_ts = cfg->log_append_time ? now_ms : res->summary.max_timestamp;
    if (samsa_seg_should_roll(plog_active(plog), len, max_ts, last,
                              cfg->segment_bytes,
                              cfg->segment_ms - plog->roll_jitter_ms,
                              now_ms)) {
        err = samsa_plog_roll(plog, now_ms);
        if (err != SAMSA_ERR_NONE) {
            return err;
        }
        *want = true;
    }
    samsa_pstate_change_init(&ch);
    err = plog_check_producers(plog, records, len, opts, &ch, res);
    if (err != SAMSA_ERR_NONE || res->duplicate) {
        return err;
    }
    if (opts->hook != NULL) {
        err = opts->hook(opts->hook_ctx, plog, records, len, plog->leo, res);
        if (err != SAMSA_ERR_NONE || res->duplicate) {
            samsa_pstate_undo(plog->ps, &ch);
            return err;
        }
    }
    lat = cfg->log_append_time ? now_ms : -1;
    next = samsa_batch_assign(records, len, plog->leo, opts->leader_epoch,
                              lat);
    SAMSA_FAULT("log.append.before_write");
    err = samsa_plog_write_active(plog, records, len, &ch);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    res->base_offset = plog->leo;
    res->last_offset = next - 1;
    res->log_append_time_ms = lat;
    if (opts->leader_epoch >= 0
        && samsa_plog_note_epoch(plog, opts->leader_epoch, plog->leo)
               != SAMSA_ERR_NONE) {
        samsa_warn("log: %s: could not record leader epoch %" PRId32,
                   plog->dir, opts->leader_epoch);
    }
    plog->leo = next;
    /* pair with the acquires of samsa_plog_log_end_offset() and
     * samsa_plog_high_watermark(); the segment's end and the first
     * unstable offset went out first */
    atomic_store_explicit(&plog->leo_pub, next, memory_order_release);
    if (!atomic_load_explicit(&plog->replicated, memory_order_acquire)) {
        atomic_store_explicit(&plog->hwm, next, memory_order_release);
    }
    *want |= samsa_plog_flush_policy(plog, res);
    return SAMSA_ERR_NONE;
}

/* The topic's rules for produced data.  @locks lock taken */
static void
plog_rules(samsa_plog_t *plog, const samsa_plog_append_opts_t *opts,
           int64_t now_ms, samsa_batch_rules_t *rules, int32_t *segment_bytes)
{
    pthread_mutex_lock(&plog->lock);
    *rules = (samsa_batch_rules_t) {
        .now_ms = now_ms,
        .max_message_bytes = plog->cfg.max_message_bytes,
        .log_append_time = plog->cfg.log_append_time,
        .timestamp_before_max_ms = plog->cfg.timestamp_before_max_ms,
        .timestamp_after_max_ms = plog->cfg.timestamp_after_max_ms,
        .require_keys = (plog->cfg.cleanup_policy
                         & SAMSA_LOG_CLEANUP_COMPACT) != 0,
        .from_client = opts->from_client,
    };
    *segment_bytes = plog->cfg.segment_bytes;
    pthread_mutex_unlock(&plog->lock);
}

samsa_err_t
samsa_plog_append(samsa_plog_t *plog, uint8_t *records, size_t len,
                  const samsa_plog_append_opts_t *opts,
                  samsa_plog_append_result_t *res)
{
    samsa_batch_rules_t  rules;
    int64_t              now_ms = samsa_wall_ms();
    int32_t              segment_bytes;
    samsa_err_t          err;
    bool                 want = false;

    memset(res, 0, sizeof(*res));
    res->base_offset = res->last_offset = -1;
    res->log_append_time_ms = res->durable_wanted = -1;
    plog_rules(plog, opts, now_ms, &rules, &segment_bytes);
    err = samsa_batch_validate(records, len, &rules, &res->summary);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    if (len > (size_t) segment_bytes) {
        res->summary.err_msg = "Records are larger than segment.bytes";
        return SAMSA_ERR_RECORD_LIST_TOO_LARGE;
    }
    pthread_mutex_lock(&plog->lock);
    err = samsa_plog_check_writable(plog);
    if (err == SAMSA_ERR_NONE) {
        err = plog_append_locked(plog, records, len, opts, now_ms, res, &want);
    }
    res->log_start_offset = samsa_plog_log_start_offset(plog);
    pthread_mutex_unlock(&plog->lock);
    if (err == SAMSA_ERR_NONE && !res->duplicate) {
        atomic_fetch_add_explicit(&plog->n_appends, 1, memory_order_relaxed);
        if (opts->from_client) {
            atomic_fetch_add_explicit(&plog->n_messages_in,
                                      (uint64_t) res->summary.nrecords,
                                      memory_order_relaxed);
            atomic_fetch_add_explicit(&plog->n_bytes_in, (uint64_t) len,
                                      memory_order_relaxed);
        }
    }
    if (want && plog->flusher != NULL) {
        plog->flusher(plog->flusher_ctx, plog);
    }
    return err;
}

/* ---- flush --------------------------------------------------------------- */

void
samsa_plog_set_flusher(samsa_plog_t *plog, samsa_plog_flush_want_t *fn,
                       void *ctx)
{
    plog->flusher = fn;
    plog->flusher_ctx = ctx;
}

void
samsa_plog_request_flush(samsa_plog_t *plog, bool full)
{
    pthread_mutex_lock(&plog->lock);
    plog->flush_full |= full;
    if (plog->flush_requested < plog->leo) {
        plog->flush_requested = plog->leo;
    }
    pthread_mutex_unlock(&plog->lock);
    if (plog->flusher != NULL) {
        plog->flusher(plog->flusher_ctx, plog);
    }
}

bool
samsa_plog_flush_claim(samsa_plog_t *plog)
{
    return !atomic_exchange_explicit(&plog->flush_queued, true,
                                     memory_order_acq_rel);
}

void
samsa_plog_flush_unclaim(samsa_plog_t *plog)
{
    atomic_store_explicit(&plog->flush_queued, false, memory_order_release);
}

bool
samsa_plog_flush_due(samsa_plog_t *plog, int64_t now_ms)
{
    int64_t  flush_ms, last;
    bool     dirty;

    pthread_mutex_lock(&plog->lock);
    flush_ms = plog->cfg.flush_ms;
    dirty = plog->leo > samsa_plog_recovery_point(plog)
            && plog->state == SAMSA_PLOG_OPEN;
    pthread_mutex_unlock(&plog->lock);
    last = atomic_load_explicit(&plog->last_flush_ms, memory_order_relaxed);
    return dirty && now_ms - last >= flush_ms;
}

/* What a flush starts from, taken under the lock. */
typedef struct plog_flush_snap {
    samsa_plog_segs_t  *segs;
    int64_t             target;         /* LEO at the start */
    uint64_t            gen;            /* trunc_gen at the start */
    bool                full;
    bool                dir;            /* fsync the directory */
} plog_flush_snap_t;

static void
plog_flush_begin(samsa_plog_t *plog, samsa_plog_flush_mode_t mode,
                 plog_flush_snap_t *snap)
{
    pthread_mutex_lock(&plog->lock);
    snap->full = mode == SAMSA_PLOG_FLUSH_FULL
                 || (mode == SAMSA_PLOG_FLUSH_REQUESTED && plog->flush_full);
    if (snap->full) {
        plog->flush_full = false;
    }
    snap->target = plog->leo;
    snap->gen = plog->trunc_gen;
    snap->dir = plog->dir_dirty && plog->state != SAMSA_PLOG_DELETED;
    plog->dir_dirty = false;
    snap->segs = samsa_plog_segs_get(plog);
    pthread_mutex_unlock(&plog->lock);
}

/* fdatasync what the snapshot holds beyond from.  @locks flush held */
static samsa_err_t
plog_flush_files(samsa_plog_t *plog, const plog_flush_snap_t *snap,
                 int64_t from)
{
    samsa_seg_t  *seg;
    size_t        i;
    samsa_err_t   err = SAMSA_ERR_NONE;
    uint64_t      files = 0;

    for (i = 0; i < snap->segs->n && err == SAMSA_ERR_NONE; i++) {
        seg = snap->segs->seg[i];
        if (samsa_seg_end(seg).next_offset <= from
            || samsa_seg_base(seg) > snap->target) {
            continue;
        }
        SAMSA_FAULT("log.flush.before_sync");
        err = snap->full ? samsa_seg_flush(seg) : samsa_seg_flush_data(seg);
        files += snap->full ? 3 : 1;
    }
    if (err == SAMSA_ERR_NONE && snap->dir) {
        err = samsa_ckpt_fsync_dir(plog->dir);
        files++;
    }
    atomic_fetch_add_explicit(&plog->n_fdatasyncs, files,
                              memory_order_relaxed);
    return err;
}

/* Move an offset up to v (never down).  @locks lock held */
static void
plog_raise(_Atomic int64_t *a, int64_t v)
{
    if (atomic_load_explicit(a, memory_order_relaxed) < v) {
        atomic_store_explicit(a, v, memory_order_release);
    }
}

samsa_err_t
samsa_plog_flush(samsa_plog_t *plog, samsa_plog_flush_mode_t mode,
                 int64_t *flushed)
{
    plog_flush_snap_t  snap;
    samsa_err_t        err;
    int64_t            from;

    pthread_mutex_lock(&plog->flush_lock);
    plog_flush_begin(plog, mode, &snap);
    from = snap.full ? samsa_plog_recovery_point(plog)
                     : samsa_plog_durable_offset(plog);
    err = samsa_plog_is_offline(plog) ? SAMSA_ERR_KAFKA_STORAGE_ERROR
                                      : plog_flush_files(plog, &snap, from);
    pthread_mutex_lock(&plog->lock);
    if (err != SAMSA_ERR_NONE) {
        plog->dir_dirty |= snap.dir;
    } else if (snap.gen == plog->trunc_gen) {
        plog_raise(&plog->durable, snap.target);
        if (snap.full) {
            plog_raise(&plog->recovery_point, snap.target);
        }
    }
    pthread_mutex_unlock(&plog->lock);
    samsa_plog_segs_put(snap.segs);
    if (err == SAMSA_ERR__NOFILE) {
        /* nothing lost: the data waits in the page cache for a later
         * flush, which reopens the files */
    } else if (err != SAMSA_ERR_NONE) {
        samsa_plog_go_offline(plog);
    } else {
        atomic_store_explicit(&plog->last_flush_ms, samsa_now_ms(),
                              memory_order_relaxed);
        atomic_fetch_add_explicit(&plog->n_flushes, 1, memory_order_relaxed);
    }
    pthread_mutex_unlock(&plog->flush_lock);
    if (flushed != NULL) {
        *flushed = samsa_plog_durable_offset(plog);
    }
    return err;
}
