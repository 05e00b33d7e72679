/*
 * broker/group/grp.c - the group coordinator's table of groups, its life
 * (purgatories, loading __consumer_offsets, creating it on first use),
 * committed offsets (OffsetCommit, OffsetFetch, OffsetDelete) and the
 * admin side (ListGroups, DescribeGroups, DeleteGroups).  The rebalance
 * protocol is in grpjoin.c, the records in grpstore.c.
 * Threads: any handler; main for open/close.  Lock order: group lock ->
 * table lock (the table lock is never held while taking a group's).
 */
#include "broker/group/grp_int.h"

#include <stdio.h>
#include <time.h>
#include <string.h>

#include "meta/image.h"
#include "broker/coordload.h"
#include "broker/coordthread.h"
#include "broker/coordtopic.h"
#include "util/alloc.h"
#include "util/diag.h"
#include "util/time.h"

static const char *const  grp_state_names[] = {
    [SAMSA_GRP_EMPTY] = "Empty",
    [SAMSA_GRP_PREPARING_REBALANCE] = "PreparingRebalance",
    [SAMSA_GRP_COMPLETING_REBALANCE] = "CompletingRebalance",
    [SAMSA_GRP_STABLE] = "Stable",
    [SAMSA_GRP_DEAD] = "Dead",
};

const char *
samsa_grp_state_name(samsa_grp_state_t state)
{
    return state <= SAMSA_GRP_DEAD ? grp_state_names[state] : "Unknown";
}

/* ---- Kafka's partition of a group ------------------------------------------ */

/* The next code point of UTF-8 text (invalid bytes count as U+FFFD). */
static uint32_t
grp_utf8_next(const uint8_t *p, size_t len, size_t *i)
{
    uint32_t  c = p[*i], need, v;

    if (c < 0x80) {
        (*i)++;
        return c;
    }
    need = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : 0;
    if (need == 0 || *i + need >= len) {
        (*i)++;
        return 0xfffd;
    }
    v = c & (0x3f >> need);
    for (uint32_t k = 1; k <= need; k++) {
        if ((p[*i + k] & 0xc0) != 0x80) {
            (*i)++;
            return 0xfffd;
        }
        v = (v << 6) | (p[*i + k] & 0x3f);
    }
    *i += need + 1;
    return v;
}

int32_t
samsa_grp_partition_for(const char *group_id, size_t len, int32_t n)
{
    const uint8_t  *p = (const uint8_t *) group_id;
    uint32_t        h = 0, c;
    size_t          i = 0;
    int32_t         s;

    while (i < len) {
        c = grp_utf8_next(p, len, &i);
        if (c >= 0x10000) {
            c -= 0x10000;
            h = h * 31 + (0xd800 + (c >> 10));
            h = h * 31 + (0xdc00 + (c & 0x3ff));
        } else {
            h = h * 31 + c;
        }
    }
    s = (int32_t) h;
    s = s == INT32_MIN ? 0 : (s < 0 ? -s : s);       /* Utils.abs */
    return n > 0 ? s % n : 0;
}

/* ---- the table ------------------------------------------------------------ */

static void *
grp_new(void *arg, samsa_slice_t id)
{
    samsa_grpcoord_t     *gc = arg;
    samsa_grp_t          *g = samsa_calloc(1, sizeof(*g));
    pthread_mutexattr_t   attr;

    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&g->lock, &attr);
    pthread_mutexattr_destroy(&attr);
    atomic_init(&g->refs, 1);
    g->gc = gc;
    g->id = samsa_strndup(id.ptr, id.len);
    g->partition = samsa_grp_partition_for(id.ptr, id.len, gc->num_partitions);
    g->state = SAMSA_GRP_EMPTY;
    g->state_ts_ms = samsa_wall_ms();
    return g;
}

samsa_grp_t *
samsa_grp_get(samsa_grpcoord_t *gc, samsa_slice_t id, bool create)
{
    return samsa_idtab_get(&gc->table, id, create);
}

void
samsa_grp_ref(samsa_grp_t *g)
{
    atomic_fetch_add_explicit(&g->refs, 1, memory_order_relaxed);
}

static void
grp_free(samsa_grp_t *g)
{
    size_t  i;

    for (i = 0; i < g->nmembers; i++) {
        samsa_grp_member_free(g->members[i]);
    }
    for (i = 0; i < g->npending; i++) {
        samsa_grp_member_free(g->pending[i]);
    }
    for (i = 0; i < g->noffsets; i++) {
        samsa_free(g->offsets[i].topic);
        samsa_free(g->offsets[i].metadata);
    }
    samsa_grp_txn_offsets_free(g);
    if (g->cg != NULL) {
        samsa_grp_cg_ops(g)->free(g->cg);
    }
    samsa_free(g->members);
    samsa_free(g->pending);
    samsa_free(g->offsets);
    samsa_free(g->protocol_type);
    samsa_free(g->protocol_name);
    samsa_free(g->leader_id);
    samsa_free(g->id);
    pthread_mutex_destroy(&g->lock);
    samsa_free(g);
}

void
samsa_grp_unref(samsa_grp_t *g)
{
    /* acq_rel: the last unref sees every other holder's writes (a
     * separate acquire fence would do, but TSan does not model fences) */
    if (g != NULL
        && atomic_fetch_sub_explicit(&g->refs, 1, memory_order_acq_rel)
               == 1) {
        grp_free(g);
    }
}

void
samsa_grp_remove(samsa_grp_t *g)
{
    if (samsa_idtab_remove(&g->gc->table, g)) {
        samsa_grp_unref(g);                     /* the caller holds another */
    }
}

void
samsa_grp_set_state(samsa_grp_t *g, samsa_grp_state_t state)
{
    g->state = state;
    g->state_ts_ms = samsa_wall_ms();
}

size_t
samsa_grpcoord_group_count(samsa_grpcoord_t *gc)
{
    return samsa_idtab_count(&gc->table);
}

samsa_grp_t **
samsa_grp_snapshot(samsa_grpcoord_t *gc, size_t *n)
{
    return (samsa_grp_t **) samsa_idtab_snapshot(&gc->table, n);
}

static const char *
grp_id_of(const void *g)
{
    return ((const samsa_grp_t *) g)->id;
}

static void
grp_ref_item(void *g)
{
    samsa_grp_ref(g);
}

static void
grp_unref_item(void *g)
{
    samsa_grp_unref(g);
}

static const samsa_idtab_ops_t  grp_table_ops = {
    grp_id_of, grp_ref_item, grp_unref_item, grp_new,
};

/* ---- offsets in memory ----------------------------------------------------- */

grp_offset_t *
samsa_grp_offset_find(samsa_grp_t *g, const char *topic, size_t topic_len,
                      int32_t partition)
{
    size_t  i;

    for (i = 0; i < g->noffsets; i++) {
        if (g->offsets[i].partition == partition
            && strlen(g->offsets[i].topic) == topic_len
            && memcmp(g->offsets[i].topic, topic, topic_len) == 0) {
            return &g->offsets[i];
        }
    }
    return NULL;
}

void
samsa_grp_offset_put(samsa_grp_t *g, const char *topic, size_t topic_len,
                     int32_t partition, int64_t offset, int32_t leader_epoch,
                     const char *metadata, size_t metadata_len,
                     int64_t commit_ts_ms, int64_t expire_ts_ms)
{
    grp_offset_t  *o = samsa_grp_offset_find(g, topic, topic_len, partition);

    if (o == NULL) {
        g->offsets = samsa_realloc(g->offsets,
                                   (g->noffsets + 1) * sizeof(*g->offsets));
        o = &g->offsets[g->noffsets++];
        o->topic = samsa_strndup(topic, topic_len);
        o->partition = partition;
    } else {
        samsa_free(o->metadata);
    }
    o->offset = offset;
    o->leader_epoch = leader_epoch;
    o->metadata = samsa_strndup(metadata != NULL ? metadata : "",
                                    metadata != NULL ? metadata_len : 0);
    o->commit_ts_ms = commit_ts_ms;
    o->expire_ts_ms = expire_ts_ms;
}

void
samsa_grp_offset_drop(samsa_grp_t *g, size_t i)
{
    samsa_free(g->offsets[i].topic);
    samsa_free(g->offsets[i].metadata);
    g->offsets[i] = g->offsets[--g->noffsets];
}

/* ---- life ----------------------------------------------------------------- */

static void *grp_expire_main(void *arg);
static void grp_expire_stop(samsa_grpcoord_t *gc);

static void
grp_cond_init_monotonic(pthread_cond_t *cond)
{
    pthread_condattr_t  ca;

    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(cond, &ca);
    pthread_condattr_destroy(&ca);
}

samsa_err_t
samsa_grpcoord_open(const samsa_grpcoord_conf_t *conf, samsa_grpcoord_t **out,
                    char *errstr, size_t errstr_size)
{
    samsa_grpcoord_t  *gc = samsa_calloc(1, sizeof(*gc));
    samsa_err_t        err;

    gc->conf = *conf;
    gc->initial_rebalance_delay_ms =
        samsa_config_int(conf->cfg, "group.initial.rebalance.delay.ms");
    gc->min_session_timeout_ms =
        samsa_config_int(conf->cfg, "group.min.session.timeout.ms");
    gc->max_session_timeout_ms =
        samsa_config_int(conf->cfg, "group.max.session.timeout.ms");
    gc->max_size = samsa_config_int(conf->cfg, "group.max.size");
    gc->cg_session_timeout_ms =
        samsa_config_int(conf->cfg, "group.consumer.session.timeout.ms");
    gc->cg_heartbeat_interval_ms =
        samsa_config_int(conf->cfg, "group.consumer.heartbeat.interval.ms");
    gc->cg_max_size = samsa_config_int(conf->cfg, "group.consumer.max.size");
    gc->cg_assignors = samsa_config_list(conf->cfg, "group.consumer.assignors",
                                         &gc->cg_nassignors);
    gc->metadata_max_bytes =
        samsa_config_int(conf->cfg, "offset.metadata.max.bytes");
    gc->num_partitions =
        samsa_config_int(conf->cfg, "offsets.topic.num.partitions");
    gc->retention_ms = (int64_t) samsa_config_int(
                           conf->cfg, "offsets.retention.minutes") * 60000;
    gc->check_interval_ms = samsa_config_long(
        conf->cfg, "offsets.retention.check.interval.ms");
    samsa_idtab_init(&gc->table, &grp_table_ops, gc);
    pthread_mutex_init(&gc->topic_lock, NULL);
    pthread_mutex_init(&gc->load_lock, NULL);
    atomic_init(&gc->loaded, false);
    pthread_mutex_init(&gc->expire_lock, NULL);
    grp_cond_init_monotonic(&gc->expire_cond);
    atomic_init(&gc->stopping, false);
    *out = gc;
    gc->rebalance = samsa_purgatory_new("rebalance",
                                        SAMSA_PURGATORY_PURGE_INTERVAL_DEFAULT);
    gc->heartbeat = samsa_purgatory_new("heartbeat",
                                        SAMSA_PURGATORY_PURGE_INTERVAL_DEFAULT);
    if (gc->rebalance == NULL || gc->heartbeat == NULL) {
        snprintf(errstr, errstr_size, "cannot start the group coordinator's "
                                      "purgatories");
        return SAMSA_ERR__IO;
    }
    err = samsa_grpstore_load(gc, errstr, errstr_size);
    if (err == SAMSA_ERR_NONE) {
        gc->expire_started = pthread_create(&gc->expire_thread, NULL,
                                            grp_expire_main, gc) == 0;
        if (!gc->expire_started) {
            snprintf(errstr, errstr_size, "cannot start the offsets "
                                          "expiry thread");
            err = SAMSA_ERR__IO;
        }
    }
    return err;
}

void
samsa_grpcoord_answer_waiting(samsa_grpcoord_t *gc)
{
    samsa_grp_t  **all;
    size_t         i, n;

    if (gc == NULL) {
        return;
    }
    atomic_store(&gc->stopping, true);
    grp_expire_stop(gc);
    all = samsa_grp_snapshot(gc, &n);
    for (i = 0; i < n; i++) {
        pthread_mutex_lock(&all[i]->lock);
        samsa_grp_fail_waiting(all[i], SAMSA_ERR_COORDINATOR_NOT_AVAILABLE);
        pthread_mutex_unlock(&all[i]->lock);
    }
    if (gc->heartbeat != NULL) {
        samsa_purgatory_free(gc->heartbeat);
        gc->heartbeat = NULL;
    }
    if (gc->rebalance != NULL) {
        samsa_purgatory_free(gc->rebalance);
        gc->rebalance = NULL;
    }
    for (i = 0; i < n; i++) {
        samsa_grp_unref(all[i]);
    }
    samsa_free(all);
}

void
samsa_grpcoord_close(samsa_grpcoord_t *gc)
{
    if (gc == NULL) {
        return;
    }
    samsa_grpcoord_answer_waiting(gc);
    samsa_idtab_fini(&gc->table);
    pthread_mutex_destroy(&gc->topic_lock);
    pthread_mutex_destroy(&gc->load_lock);
    pthread_mutex_destroy(&gc->expire_lock);
    pthread_cond_destroy(&gc->expire_cond);
    samsa_free(gc);
}

samsa_err_t
samsa_grpcoord_ensure_topic(samsa_grpcoord_t *gc)
{
    samsa_image_config_t  configs[3];
    char                  segment[24];

    if (atomic_load_explicit(&gc->topic_ready, memory_order_acquire)) {
        return SAMSA_ERR_NONE;
    }
    snprintf(segment, sizeof(segment), "%d",
             (int) samsa_config_int(gc->conf.cfg,
                                    "offsets.topic.segment.bytes"));
    configs[0] = (samsa_image_config_t) { "cleanup.policy", "compact" };
    configs[1] = (samsa_image_config_t) { "compression.type", "producer" };
    configs[2] = (samsa_image_config_t) { "segment.bytes", segment };
    return samsa_coordtopic_ensure(gc->conf.meta, gc->conf.ctrl,
                                   samsa_config_kraft(gc->conf.cfg),
                                   gc->conf.node_id,
                                   SAMSA_GRP_OFFSETS_TOPIC,
                                   gc->num_partitions, configs, 3,
                                   &gc->topic_lock, &gc->topic_ready);
}

/* A cluster node's image may not have __consumer_offsets yet when the
 * coordinator opens (the metadata comes from the quorum after the start):
 * then the first call that finds it in the image loads it, before any
 * group is answered.  @locks takes load_lock */
static void
grp_load_late(samsa_grpcoord_t *gc)
{
    char  errstr[256];

    if (atomic_load(&gc->loaded)
        || !samsa_config_kraft(gc->conf.cfg)->is_cluster) {
        return;
    }
    pthread_mutex_lock(&gc->load_lock);
    if (!atomic_load(&gc->loaded)
        && samsa_coordload_npartitions(gc->conf.meta,
                                       SAMSA_GRP_OFFSETS_TOPIC) > 0
        && samsa_grpstore_load(gc, errstr, sizeof(errstr))
               != SAMSA_ERR_NONE) {
        samsa_error("%s", errstr);
    }
    pthread_mutex_unlock(&gc->load_lock);
}

samsa_err_t
samsa_grpcoord_check(samsa_grpcoord_t *gc, samsa_slice_t group_id)
{
    grp_load_late(gc);
    return samsa_coordtopic_owner_check(gc->conf.meta, NULL,
                                        samsa_config_kraft(gc->conf.cfg),
                                        gc->conf.node_id,
                                        SAMSA_GRP_OFFSETS_TOPIC,
                                        samsa_grpcoord_partition_for(
                                            gc, group_id));
}

/* ---- OffsetCommit --------------------------------------------------------- */

/* The checks of Kafka 4's group coordinator (ClassicGroup's
 * validateOffsetCommit), in its order. */
static samsa_err_t
grp_commit_check(samsa_grp_t *g, const samsa_grp_commit_req_t *rq)
{
    grp_member_t  *m;

    if (g->state == SAMSA_GRP_DEAD) {
        return SAMSA_ERR_COORDINATOR_NOT_AVAILABLE;
    }
    if (g->cg != NULL) {
        /* KIP-848: the generation is the member epoch */
        return samsa_grp_cg_ops(g)->commit_check(g, rq->member_id,
                                                 rq->generation);
    }
    if (rq->generation < 0 && g->state == SAMSA_GRP_EMPTY) {
        return SAMSA_ERR_NONE;          /* the group only stores offsets */
    }
    /* Kafka 4's ClassicGroup.validateOffsetCommit: the member (static
     * first), then the generation, then the rebalance state */
    m = NULL;
    if (rq->generation >= 0 || rq->member_id.len > 0
        || rq->instance_id.ptr != NULL) {
        if (rq->instance_id.ptr != NULL) {
            grp_member_t  *st = samsa_grp_static_find(g, rq->instance_id);

            if (st == NULL) {
                return SAMSA_ERR_UNKNOWN_MEMBER_ID;
            }
            if (!samsa_slice_eq_cstr(rq->member_id, st->member_id)) {
                return SAMSA_ERR_FENCED_INSTANCE_ID;
            }
        }
        m = samsa_grp_member_find(g, rq->member_id.ptr, rq->member_id.len);
        if (m == NULL) {
            return SAMSA_ERR_UNKNOWN_MEMBER_ID;
        }
        if (rq->generation != g->generation) {
            return SAMSA_ERR_ILLEGAL_GENERATION;
        }
    } else if (g->state != SAMSA_GRP_EMPTY) {
        /* v0 (no member, no generation): only into an empty group */
        return SAMSA_ERR_UNKNOWN_MEMBER_ID;
    }
    if (g->state == SAMSA_GRP_COMPLETING_REBALANCE) {
        return SAMSA_ERR_REBALANCE_IN_PROGRESS;
    }
    if (m == NULL) {
        return SAMSA_ERR_NONE;
    }
    samsa_grp_member_touch(g, m);
    return SAMSA_ERR_NONE;
}

/* Per-partition checks before the group is looked at. */
static void
grp_commit_validate(samsa_grpcoord_t *gc, samsa_grp_offset_t *offs, size_t n)
{
    samsa_image_t              *img = samsa_meta_image_get(gc->conf.meta);
    const samsa_image_topic_t  *t;
    size_t                      i;

    for (i = 0; i < n; i++) {
        t = samsa_image_topic_find(img, offs[i].topic.ptr != NULL
                                            ? offs[i].topic.ptr : "",
                                   offs[i].topic.len);
        if (t == NULL || offs[i].partition < 0
            || offs[i].partition >= t->npartitions) {
            offs[i].error = SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION;
        } else if (offs[i].metadata.len > (size_t) gc->metadata_max_bytes) {
            offs[i].error = SAMSA_ERR_OFFSET_METADATA_TOO_LARGE;
        } else {
            offs[i].error = SAMSA_ERR_NONE;
        }
    }
    samsa_image_put(img);
}

static void
grp_commit_all(samsa_grp_offset_t *offs, size_t n, samsa_err_t err)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        if (offs[i].error == SAMSA_ERR_NONE) {
            offs[i].error = err;
        }
    }
}

/* What every commit checks before the group is looked at: the group id,
 * each partition, the offsets topic.  false when every offset has its
 * answer already. */
static bool
grp_commit_start(samsa_grpcoord_t *gc, samsa_slice_t group_id,
                 samsa_grp_offset_t *offs, size_t n)
{
    samsa_err_t  err;
    size_t       i;

    if (group_id.len == 0) {
        for (i = 0; i < n; i++) {
            offs[i].error = SAMSA_ERR_INVALID_GROUP_ID;
        }
        return false;
    }
    err = samsa_grpcoord_check(gc, group_id);
    if (err != SAMSA_ERR_NONE) {
        for (i = 0; i < n; i++) {
            offs[i].error = err;
        }
        return false;
    }
    grp_commit_validate(gc, offs, n);
    if (samsa_grpcoord_ensure_topic(gc) != SAMSA_ERR_NONE) {
        grp_commit_all(offs, n, SAMSA_ERR_COORDINATOR_NOT_AVAILABLE);
        return false;
    }
    return true;
}

/* The end of a commit: a group that holds nothing after it (as one the
 * commit created when every offset was refused) goes; then unlock and
 * unref it.
 * @locks releases g->lock */
static void
grp_commit_done(samsa_grp_t *g)
{
    if (g->state == SAMSA_GRP_EMPTY && g->nmembers == 0 && g->noffsets == 0
        && g->generation == 0 && g->npending == 0 && g->ntxn_offsets == 0
        && g->cg == NULL) {
        samsa_grp_remove(g);
    }
    pthread_mutex_unlock(&g->lock);
    samsa_grp_unref(g);
}

void
samsa_grp_commit(samsa_grpcoord_t *gc, const samsa_grp_commit_req_t *rq,
                 samsa_grp_offset_t *offs, size_t n)
{
    samsa_grp_t  *g;
    samsa_err_t   err;
    int64_t       now = samsa_wall_ms();
    int64_t       expire = -1;
    size_t        i;

    if (!grp_commit_start(gc, rq->group_id, offs, n)) {
        return;
    }
    g = samsa_grp_get(gc, rq->group_id, rq->generation < 0);
    if (g == NULL) {
        grp_commit_all(offs, n, SAMSA_ERR_ILLEGAL_GENERATION);
        return;
    }
    pthread_mutex_lock(&g->lock);
    err = grp_commit_check(g, rq);
    if (err == SAMSA_ERR_NONE) {
        for (i = 0; i < n; i++) {
            if (offs[i].commit_timestamp_ms < 0) {
                offs[i].commit_timestamp_ms = now;
            }
        }
        if (rq->retention_ms >= 0) {
            expire = now + rq->retention_ms;
        }
        err = samsa_grpstore_write_offsets(g, offs, n, now, expire);
    }
    if (err != SAMSA_ERR_NONE) {
        grp_commit_all(offs, n, err);
    } else {
        for (i = 0; i < n; i++) {
            if (offs[i].error == SAMSA_ERR_NONE) {
                samsa_grp_offset_put(g, offs[i].topic.ptr, offs[i].topic.len,
                                     offs[i].partition, offs[i].offset,
                                     offs[i].leader_epoch,
                                     offs[i].metadata.ptr,
                                     offs[i].metadata.len,
                                     offs[i].commit_timestamp_ms, expire);
            }
        }
    }
    grp_commit_done(g);
}

/* ---- TxnOffsetCommit ------------------------------------------------------ */

/* Kafka's doTxnCommitOffsets checks (KIP-447), in its order. */
static samsa_err_t
grp_txn_commit_check(samsa_grp_t *g, const samsa_grp_txn_commit_req_t *rq)
{
    grp_member_t  *m;
    size_t         i;

    if (g->state == SAMSA_GRP_DEAD) {
        return SAMSA_ERR_COORDINATOR_NOT_AVAILABLE;
    }
    if (g->cg != NULL) {
        /* KIP-848: the generation is the member epoch; a transactional
         * commit gets ILLEGAL_GENERATION for a wrong one (older
         * TxnOffsetCommit versions know no STALE_MEMBER_EPOCH) */
        return samsa_grp_cg_ops(g)->txn_commit_check(g, rq->member_id,
                                                     rq->generation);
    }
    for (i = 0; rq->instance_id.ptr != NULL && i < g->nmembers; i++) {
        m = g->members[i];
        if (m->instance_id != NULL
            && samsa_slice_eq_cstr(rq->instance_id, m->instance_id)
            && !samsa_slice_eq_cstr(rq->member_id, m->member_id)) {
            return SAMSA_ERR_FENCED_INSTANCE_ID;
        }
    }
    if (rq->member_id.len > 0
        && samsa_grp_member_find(g, rq->member_id.ptr, rq->member_id.len)
               == NULL) {
        return SAMSA_ERR_UNKNOWN_MEMBER_ID;
    }
    if (rq->generation >= 0 && rq->generation != g->generation) {
        return SAMSA_ERR_ILLEGAL_GENERATION;
    }
    return SAMSA_ERR_NONE;
}

void
samsa_grp_txn_commit(samsa_grpcoord_t *gc,
                     const samsa_grp_txn_commit_req_t *rq,
                     samsa_grp_offset_t *offs, size_t n)
{
    samsa_grp_t  *g;
    samsa_err_t   err;
    int64_t       now = samsa_wall_ms();
    size_t        i;

    if (!grp_commit_start(gc, rq->group_id, offs, n)) {
        return;
    }
    g = samsa_grp_get(gc, rq->group_id, true);
    pthread_mutex_lock(&g->lock);
    err = grp_txn_commit_check(g, rq);
    for (i = 0; i < n && err == SAMSA_ERR_NONE; i++) {
        offs[i].commit_timestamp_ms = now;
    }
    if (err == SAMSA_ERR_NONE) {
        err = samsa_grpstore_write_txn_offsets(g, offs, n, now,
                                               rq->producer_id,
                                               rq->producer_epoch);
    }
    if (err != SAMSA_ERR_NONE) {
        grp_commit_all(offs, n, err);
    } else {
        for (i = 0; i < n; i++) {
            if (offs[i].error == SAMSA_ERR_NONE) {
                samsa_grp_txn_offset_put(g, rq->producer_id,
                                         offs[i].topic.ptr, offs[i].topic.len,
                                         offs[i].partition, offs[i].offset,
                                         offs[i].leader_epoch,
                                         offs[i].metadata.ptr,
                                         offs[i].metadata.len, now);
            }
        }
    }
    grp_commit_done(g);
}

/* ---- OffsetFetch ---------------------------------------------------------- */

samsa_err_t
samsa_grp_fetch_offsets(samsa_grpcoord_t *gc, samsa_slice_t group_id,
                        bool all, samsa_arena_t *arena,
                        samsa_grp_offset_t **offs, size_t *n)
{
    samsa_grp_t         *g;
    samsa_grp_offset_t  *o;
    grp_offset_t        *c;
    size_t               i;
    samsa_err_t          err = samsa_grpcoord_check(gc, group_id);

    if (err != SAMSA_ERR_NONE) {
        if (all) {
            *offs = NULL;
            *n = 0;
        }
        for (i = 0; !all && i < *n; i++) {
            /* OffsetFetch v0-v1 have per-partition errors only */
            (*offs)[i].offset = -1;
            (*offs)[i].leader_epoch = -1;
            (*offs)[i].metadata = (samsa_slice_t) { "", 0 };
            (*offs)[i].error = err;
        }
        return err;
    }
    g = samsa_grp_get(gc, group_id, false);
    if (g == NULL) {
        if (all) {
            *offs = NULL;
            *n = 0;
        }
        for (i = 0; !all && i < *n; i++) {
            (*offs)[i].offset = -1;
            (*offs)[i].leader_epoch = -1;
            (*offs)[i].metadata = (samsa_slice_t) { "", 0 };
            (*offs)[i].error = SAMSA_ERR_NONE;
        }
        return SAMSA_ERR_NONE;
    }
    pthread_mutex_lock(&g->lock);
    if (all) {
        *n = g->noffsets;
        *offs = samsa_arena_calloc(arena, g->noffsets + 1, sizeof(**offs));
        for (i = 0; i < g->noffsets; i++) {
            o = &(*offs)[i];
            c = &g->offsets[i];
            o->topic.len = strlen(c->topic);
            o->topic.ptr = samsa_arena_strndup(arena, c->topic, o->topic.len);
            o->partition = c->partition;
        }
    }
    for (i = 0; i < *n; i++) {
        o = &(*offs)[i];
        c = samsa_grp_offset_find(g, o->topic.ptr != NULL ? o->topic.ptr : "",
                                  o->topic.len, o->partition);
        o->error = SAMSA_ERR_NONE;
        o->offset = c != NULL ? c->offset : -1;
        o->leader_epoch = c != NULL ? c->leader_epoch : -1;
        o->metadata.len = c != NULL ? strlen(c->metadata) : 0;
        o->metadata.ptr = c != NULL ? samsa_arena_strndup(arena, c->metadata,
                                                          o->metadata.len)
                                    : "";
    }
    pthread_mutex_unlock(&g->lock);
    samsa_grp_unref(g);
    return SAMSA_ERR_NONE;
}

/* ---- OffsetDelete --------------------------------------------------------- */

/* Whether a member's ConsumerProtocolSubscription (version i16, topics
 * [] of i16-length strings, ...) lists topic. */
static bool
grp_subscribes(const uint8_t *p, size_t len, samsa_slice_t topic)
{
    size_t   at = 2;
    int32_t  n, i;
    int16_t  slen;

    if (len < 6) {
        return false;
    }
    n = (int32_t) ((uint32_t) p[2] << 24 | (uint32_t) p[3] << 16
                   | (uint32_t) p[4] << 8 | p[5]);
    at = 6;
    for (i = 0; i < n && at + 2 <= len; i++) {
        slen = (int16_t) ((uint16_t) p[at] << 8 | p[at + 1]);
        at += 2;
        if (slen < 0 || at + (size_t) slen > len) {
            return false;
        }
        if ((size_t) slen == topic.len
            && memcmp(p + at, topic.ptr, topic.len) == 0) {
            return true;
        }
        at += (size_t) slen;
    }
    return false;
}

static bool
grp_topic_subscribed(samsa_grp_t *g, samsa_slice_t topic)
{
    size_t  i, j;

    for (i = 0; i < g->nmembers; i++) {
        for (j = 0; j < g->members[i]->nprotos; j++) {
            if (grp_subscribes(g->members[i]->protos[j].metadata,
                               g->members[i]->protos[j].metadata_len,
                               topic)) {
                return true;
            }
        }
    }
    return false;
}

samsa_err_t
samsa_grp_delete_offsets(samsa_grpcoord_t *gc, samsa_slice_t group_id,
                         samsa_grp_offset_t *offs, size_t n)
{
    samsa_grp_t   *g;
    grp_offset_t  *gone;
    samsa_err_t    err = samsa_grpcoord_check(gc, group_id);
    size_t         i, ngone = 0;
    bool           consumer;

    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    g = samsa_grp_get(gc, group_id, false);
    if (g == NULL) {
        return SAMSA_ERR_GROUP_ID_NOT_FOUND;
    }
    pthread_mutex_lock(&g->lock);
    consumer = g->protocol_type != NULL
               && strcmp(g->protocol_type, "consumer") == 0;
    if (g->state == SAMSA_GRP_DEAD) {
        err = SAMSA_ERR_GROUP_ID_NOT_FOUND;
    } else if (g->state != SAMSA_GRP_EMPTY && !consumer) {
        err = SAMSA_ERR_NON_EMPTY_GROUP;
    }
    gone = samsa_calloc(n + 1, sizeof(*gone));
    for (i = 0; err == SAMSA_ERR_NONE && i < n; i++) {
        grp_offset_t  *o;

        if (offs[i].error != SAMSA_ERR_NONE) {
            continue;
        }
        if (g->state != SAMSA_GRP_EMPTY
            && grp_topic_subscribed(g, offs[i].topic)) {
            offs[i].error = SAMSA_ERR_GROUP_SUBSCRIBED_TO_TOPIC;
            continue;
        }
        o = samsa_grp_offset_find(g, offs[i].topic.ptr, offs[i].topic.len,
                                  offs[i].partition);
        if (o != NULL) {
            gone[ngone++] = *o;
        }
    }
    if (err == SAMSA_ERR_NONE && ngone > 0) {
        err = samsa_grpstore_write_tombstones(g, false, gone, ngone);
        for (i = 0; err == SAMSA_ERR_NONE && i < ngone; i++) {
            for (size_t j = 0; j < g->noffsets; j++) {
                if (g->offsets[j].topic == gone[i].topic) {
                    samsa_grp_offset_drop(g, j);
                    break;
                }
            }
        }
    }
    samsa_free(gone);
    pthread_mutex_unlock(&g->lock);
    samsa_grp_unref(g);
    return err;
}

/* ---- ListGroups, DescribeGroups, DeleteGroups ------------------------------ */

size_t
samsa_grp_list(samsa_grpcoord_t *gc, const samsa_slice_t *states,
               size_t nstates, samsa_arena_t *arena, samsa_grp_listed_t **out)
{
    samsa_grp_t  **all;
    samsa_image_t *img;
    size_t         i, j, n, k = 0;
    bool           want;

    grp_load_late(gc);
    all = samsa_grp_snapshot(gc, &n);
    *out = samsa_arena_calloc(arena, n + 1, sizeof(**out));
    img = samsa_meta_image_get(gc->conf.meta);
    for (i = 0; i < n; i++) {
        pthread_mutex_lock(&all[i]->lock);
        /* each broker lists the groups it coordinates (Kafka's) */
        want = all[i]->state != SAMSA_GRP_DEAD
               && samsa_coordtopic_owner_check(
                      gc->conf.meta, img, samsa_config_kraft(gc->conf.cfg),
                      gc->conf.node_id, SAMSA_GRP_OFFSETS_TOPIC,
                      all[i]->partition) == SAMSA_ERR_NONE;
        for (j = 0; want && nstates > 0 && j < nstates; j++) {
            if (samsa_slice_eq_cstr(states[j],
                                    all[i]->cg != NULL
                                        ? samsa_grp_cg_ops(all[i])->state_name(all[i]->cg)
                                        : samsa_grp_state_name(
                                              all[i]->state))) {
                break;
            }
        }
        if (want && (nstates == 0 || j < nstates)) {
            (*out)[k].group_id = samsa_arena_strndup(arena, all[i]->id,
                                                     strlen(all[i]->id));
            (*out)[k].protocol_type = all[i]->protocol_type != NULL
                ? samsa_arena_strndup(arena, all[i]->protocol_type,
                                      strlen(all[i]->protocol_type))
                : "";
            (*out)[k].state = all[i]->state;
            (*out)[k].consumer = all[i]->cg != NULL;
            (*out)[k].state_name = all[i]->cg != NULL
                ? samsa_grp_cg_ops(all[i])->state_name(all[i]->cg)
                : samsa_grp_state_name(all[i]->state);
            k++;
        }
        pthread_mutex_unlock(&all[i]->lock);
        samsa_grp_unref(all[i]);
    }
    samsa_image_put(img);
    samsa_free(all);
    return k;
}

static const char *
grp_adup(samsa_arena_t *arena, const char *s)
{
    return s != NULL ? samsa_arena_strndup(arena, s, strlen(s)) : NULL;
}

static const uint8_t *
grp_adup_bytes(samsa_arena_t *arena, const uint8_t *p, size_t len)
{
    uint8_t  *out = samsa_arena_alloc(arena, len + 1);

    if (len > 0) {
        memcpy(out, p, len);
    }
    return out;
}

void
samsa_grp_describe(samsa_grpcoord_t *gc, samsa_slice_t group_id,
                   samsa_arena_t *arena, samsa_grp_described_t *out)
{
    samsa_grp_t                    *g;
    samsa_grp_described_member_t   *dm;
    const grp_member_t             *m;
    const grp_proto_t              *p;
    size_t                          i;
    bool                            stable;

    memset(out, 0, sizeof(*out));
    out->state = SAMSA_GRP_DEAD;
    out->protocol_type = "";
    out->protocol_name = "";
    out->error = samsa_grpcoord_check(gc, group_id);
    if (out->error != SAMSA_ERR_NONE) {
        return;
    }
    g = samsa_grp_get(gc, group_id, false);
    if (g == NULL) {
        return;
    }
    pthread_mutex_lock(&g->lock);
    if (g->cg != NULL) {
        /* Kafka 4 answers DescribeGroups v0-v5 of a consumer group as of
         * an unknown one (Dead, no members) */
        pthread_mutex_unlock(&g->lock);
        samsa_grp_unref(g);
        return;
    }
    stable = g->state == SAMSA_GRP_STABLE;
    out->state = g->state;
    out->protocol_type = g->protocol_type != NULL
                             ? grp_adup(arena, g->protocol_type) : "";
    out->protocol_name = stable && g->protocol_name != NULL
                             ? grp_adup(arena, g->protocol_name) : "";
    out->nmembers = g->nmembers;
    out->members = samsa_arena_calloc(arena, g->nmembers + 1,
                                      sizeof(*out->members));
    for (i = 0; i < g->nmembers; i++) {
        m = g->members[i];
        dm = &out->members[i];
        dm->member_id = grp_adup(arena, m->member_id);
        dm->instance_id = grp_adup(arena, m->instance_id);
        dm->client_id = grp_adup(arena, m->client_id);
        dm->client_host = grp_adup(arena, m->client_host);
        dm->metadata = (const uint8_t *) "";
        dm->assignment = (const uint8_t *) "";
        if (!stable) {
            continue;
        }
        p = NULL;
        for (size_t j = 0; j < m->nprotos && g->protocol_name != NULL; j++) {
            if (strcmp(m->protos[j].name, g->protocol_name) == 0) {
                p = &m->protos[j];
            }
        }
        if (p != NULL) {
            dm->metadata = grp_adup_bytes(arena, p->metadata,
                                          p->metadata_len);
            dm->metadata_len = p->metadata_len;
        }
        dm->assignment = grp_adup_bytes(arena, m->assignment,
                                        m->assignment_len);
        dm->assignment_len = m->assignment_len;
    }
    pthread_mutex_unlock(&g->lock);
    samsa_grp_unref(g);
}

samsa_err_t
samsa_grp_delete(samsa_grpcoord_t *gc, samsa_slice_t group_id)
{
    samsa_grp_t  *g;
    samsa_err_t   err = SAMSA_ERR_NONE;

    if (group_id.len == 0) {
        return SAMSA_ERR_INVALID_GROUP_ID;
    }
    err = samsa_grpcoord_check(gc, group_id);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    g = samsa_grp_get(gc, group_id, false);
    if (g == NULL) {
        return SAMSA_ERR_GROUP_ID_NOT_FOUND;
    }
    pthread_mutex_lock(&g->lock);
    if (g->state == SAMSA_GRP_DEAD) {
        err = SAMSA_ERR_GROUP_ID_NOT_FOUND;
    } else if (g->state != SAMSA_GRP_EMPTY || g->npending > 0
               || samsa_grp_cg_nmembers(g) > 0) {
        err = SAMSA_ERR_NON_EMPTY_GROUP;
    } else {
        err = samsa_grpstore_write_tombstones(g, true, g->offsets,
                                              g->noffsets);
        if (err == SAMSA_ERR_NONE) {
            while (g->noffsets > 0) {
                samsa_grp_offset_drop(g, g->noffsets - 1);
            }
            samsa_grp_set_state(g, SAMSA_GRP_DEAD);
            samsa_grp_remove(g);
            samsa_info("group %s deleted", g->id);
        }
    }
    pthread_mutex_unlock(&g->lock);
    samsa_grp_unref(g);
    return err;
}

/* ---- offsets retention ------------------------------------------------------ */

bool
samsa_grp_offset_expired(samsa_grp_t *g, const grp_offset_t *o,
                         int64_t now_ms, int64_t retention_ms)
{
    int64_t  base;

    if (o->expire_ts_ms >= 0) {
        return now_ms >= o->expire_ts_ms;       /* v2-v4 retention */
    }
    if (samsa_grp_cg_nmembers(g) > 0) {
        /* a consumer group with members: only topics nobody subscribes to
         * (Kafka's ConsumerGroup offset expiration condition) */
        if (samsa_grp_cg_ops(g)->subscribes(g->cg, o->topic)) {
            return false;
        }
        base = o->commit_ts_ms;
    } else if (g->protocol_type == NULL) {
        base = o->commit_ts_ms;                 /* simple consumer */
    } else if (g->state == SAMSA_GRP_EMPTY) {
        base = g->state_ts_ms >= 0 ? g->state_ts_ms : o->commit_ts_ms;
    } else if (g->state == SAMSA_GRP_STABLE
               && strcmp(g->protocol_type, "consumer") == 0
               && !grp_topic_subscribed(g, samsa_slice_cstr(o->topic))) {
        base = o->commit_ts_ms;
    } else {
        return false;
    }
    return now_ms - base >= retention_ms;
}

/* One group's round; true if the group went away.  @locks g taken */
static bool
grp_expire_one(samsa_grp_t *g, int64_t now_ms, int64_t retention_ms,
               size_t *nexpired)
{
    grp_offset_t  *gone;
    size_t         i, n = 0;
    bool           removed = false;

    pthread_mutex_lock(&g->lock);
    if (g->state == SAMSA_GRP_DEAD) {
        pthread_mutex_unlock(&g->lock);
        return false;
    }
    gone = samsa_calloc(g->noffsets + 1, sizeof(*gone));
    for (i = 0; i < g->noffsets; i++) {
        if (samsa_grp_offset_expired(g, &g->offsets[i], now_ms,
                                     retention_ms)) {
            gone[n++] = g->offsets[i];
        }
    }
    if (n > 0 && samsa_grpstore_write_tombstones(g, false, gone, n)
                     == SAMSA_ERR_NONE) {
        for (i = g->noffsets; i-- > 0;) {
            if (samsa_grp_offset_expired(g, &g->offsets[i], now_ms,
                                         retention_ms)) {
                samsa_grp_offset_drop(g, i);
            }
        }
        *nexpired += n;
        samsa_info("group %s: %zu committed offset(s) expired", g->id, n);
    }
    if (g->state == SAMSA_GRP_EMPTY && g->noffsets == 0 && g->npending == 0
        && samsa_grp_cg_nmembers(g) == 0
        && samsa_grpstore_write_tombstones(g, true, NULL, 0)
               == SAMSA_ERR_NONE) {
        samsa_grp_set_state(g, SAMSA_GRP_DEAD);
        samsa_grp_remove(g);
        samsa_info("group %s removed: empty, no offsets left", g->id);
        removed = true;
    }
    samsa_free(gone);
    pthread_mutex_unlock(&g->lock);
    return removed;
}

size_t
samsa_grpcoord_expire(samsa_grpcoord_t *gc, int64_t now_ms,
                      int64_t retention_ms, size_t *groups_removed)
{
    samsa_grp_t  **all;
    size_t         i, n, expired = 0, removed = 0;

    all = samsa_grp_snapshot(gc, &n);
    for (i = 0; i < n; i++) {
        removed += grp_expire_one(all[i], now_ms, retention_ms, &expired);
        samsa_grp_unref(all[i]);
    }
    samsa_free(all);
    if (groups_removed != NULL) {
        *groups_removed = removed;
    }
    return expired;
}

/* The grpexpire thread: Kafka's delete-expired-group-metadata task, every
 * offsets.retention.check.interval.ms. */
static void *
grp_expire_main(void *arg)
{
    samsa_grpcoord_t  *gc = arg;
    struct timespec    ts;
    int64_t            until;
    bool               stop = false;

    samsa_thread_name_set("grpexpire");
    while (!stop) {
        until = samsa_now_ms() + gc->check_interval_ms;
        if (until < 0) {
            until = INT64_MAX / 2;
        }
        ts.tv_sec = until / 1000;
        ts.tv_nsec = until % 1000 * 1000000;
        pthread_mutex_lock(&gc->expire_lock);
        while (!gc->expire_stop && samsa_now_ms() < until) {
            pthread_cond_timedwait(&gc->expire_cond, &gc->expire_lock, &ts);
        }
        stop = gc->expire_stop;
        pthread_mutex_unlock(&gc->expire_lock);
        if (!stop && atomic_load(&gc->topic_ready)) {
            (void) samsa_grpcoord_expire(gc, samsa_wall_ms(),
                                         gc->retention_ms, NULL);
        }
    }
    return NULL;
}

static void
grp_expire_stop(samsa_grpcoord_t *gc)
{
    samsa_coordthread_stop(gc->expire_thread, &gc->expire_started,
                           &gc->expire_lock, &gc->expire_cond,
                           &gc->expire_stop);
}
