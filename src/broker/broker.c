/*
 * broker/broker.c - the broker's shared state: opening the metadata
 * (controller), the partition logs and the purgatories in the right order,
 * keeping the logs in step with the metadata image (create the logs of new
 * topics and partitions, delete those of deleted topics and strays, apply
 * topic config changes), and waking delayed Produce answers when the log
 * manager's group commit has synced their data.
 * Threads: open/close on main; the image listener runs on the controller
 * thread (in KRaft cluster mode on the quorum thread, which applies the
 * committed metadata); the flushed callback on the log flusher.
 */
#include "broker/broker.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "broker/group/consumer_group.h"
#include "broker/route.h"
#include "meta/brokercfg.h"
#include "meta/controller/controller.h"
#include "meta/topic_config.h"
#include "util/alloc.h"
#include "util/diag.h"
#include "util/fault.h"

#define METADATA_TOPIC "__cluster_metadata"

/* What every coordinator's configuration (samsa_grpcoord_conf_t,
 * samsa_txncoord_conf_t: two types, hence a macro) takes from the broker:
 * conf zeroed, then the config, node id, metadata, controller and logs of
 * broker b on node node. */
#define BROKER_COORD_CONF(conf, b, config, node)                            \
    do {                                                                    \
        memset((conf), 0, sizeof(*(conf)));                                 \
        (conf)->cfg = (config);                                             \
        (conf)->node_id = (node)->node_id;                                  \
        (conf)->meta = (b)->meta;                                           \
        (conf)->ctrl = (b)->ctrl;                                           \
        (conf)->logs = (b)->logs;                                           \
    } while (0)

samsa_plog_t *
samsa_broker_plog_find(samsa_broker_t *b, const samsa_image_t *img,
                       samsa_slice_t name, int32_t partition,
                       const samsa_image_topic_t **topic)
{
    const samsa_image_topic_t  *t;

    t = samsa_image_topic_find(img, name.ptr != NULL ? name.ptr : "",
                               name.len);
    *topic = t;
    if (t == NULL || partition < 0 || partition >= t->npartitions) {
        return NULL;
    }
    return samsa_logmgr_plog_ref(b->logs, t->name, partition);
}

samsa_err_t
samsa_broker_route_check(samsa_broker_t *b, const samsa_image_t *img,
                         const samsa_image_topic_t *t, int32_t partition,
                         const char *listener, samsa_arena_t *arena,
                         samsa_route_leaders_t *leaders, int32_t *leader_id,
                         int32_t *leader_epoch)
{
    const samsa_image_partition_t  *p = &t->partitions[partition];
    samsa_err_t                     err;

    err = samsa_route_check(img, p, b->node->node_id, listener, arena,
                            leaders, leader_id, leader_epoch);
    if (err != SAMSA_ERR_NONE || p->nreplicas <= 1
        || samsa_replmgr_leads(b->repl, t->name, t->name_len, partition,
                               p->leader_epoch)) {
        return err;
    }
    *leader_id = -1;
    *leader_epoch = p->leader_epoch;
    return SAMSA_ERR_NOT_LEADER_OR_FOLLOWER;
}

samsa_err_t
samsa_broker_plog_find_leader(samsa_broker_t *b, const samsa_image_t *img,
                              samsa_slice_t name, int32_t partition,
                              const samsa_image_topic_t **topic,
                              samsa_plog_t **plog)
{
    const samsa_image_topic_t  *t;
    int32_t                     leader_id, leader_epoch;

    *plog = NULL;
    t = samsa_image_topic_find(img, name.ptr != NULL ? name.ptr : "",
                               name.len);
    *topic = t;
    if (t == NULL || partition < 0 || partition >= t->npartitions) {
        return SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION;
    }
    if (samsa_broker_route_check(b, img, t, partition, NULL, NULL, NULL,
                                 &leader_id, &leader_epoch)
        != SAMSA_ERR_NONE) {
        return SAMSA_ERR_NOT_LEADER_OR_FOLLOWER;
    }
    *plog = samsa_logmgr_plog_ref(b->logs, t->name, partition);
    /* in the metadata but not hosted here: Kafka's getPartitionOrError */
    return *plog != NULL ? SAMSA_ERR_NONE : SAMSA_ERR_NOT_LEADER_OR_FOLLOWER;
}

/* ---- log configs from topic configs ------------------------------------ */

void
samsa_broker_log_config(const samsa_broker_t *b, const samsa_image_t *img,
                        const samsa_image_topic_t *t, samsa_log_config_t *lc)
{
    samsa_topic_config_to_log(b->cfg, img, t != NULL ? t->configs : NULL,
                              t != NULL ? t->nconfigs : 0, lc);
}

/* The log manager asks for a topic's config when it loads its logs. */
static void
broker_topic_config_cb(void *ctx, const char *topic, samsa_log_config_t *cfg)
{
    samsa_broker_t  *b = ctx;
    samsa_image_t   *img = samsa_meta_image_get(b->meta);

    samsa_broker_log_config(b, img,
                            samsa_image_topic_find(img, topic, strlen(topic)),
                            cfg);
    samsa_image_put(img);
}

/* ---- keeping logs in step with the image ------------------------------- */

/* Does this node keep a log of p?  With unstable.replication.enable its
 * replicas only (a reassignment's adding replicas among them); without
 * it every broker keeps every partition's log, as before replication. */
static bool
broker_hosts(const samsa_broker_t *b, const samsa_image_partition_t *p)
{
    int32_t  i;

    if (!samsa_config_bool(b->cfg, "unstable.replication.enable")) {
        return true;
    }
    for (i = 0; i < p->nreplicas; i++) {
        if (p->replicas[i] == b->node->node_id) {
            return true;
        }
    }
    return false;
}

static void
broker_ensure_logs(samsa_broker_t *b, const samsa_image_t *img,
                   const samsa_image_topic_t *t)
{
    samsa_log_config_t  lc;
    samsa_plog_t       *plog;
    samsa_err_t         err;
    int32_t             p, nofile = 0;
    long                skip = SAMSA_TEST_HOOK("SAMSA_TEST_SKIP_LOG_PARTITION",
                                               -1);

    samsa_broker_log_config(b, img, t, &lc);
    samsa_logmgr_topic_config_set(b->logs, t->name, &lc);
    for (p = 0; p < t->npartitions; p++) {
        if (!t->is_internal && p == skip) {
            continue;   /* tests: a partition the image has, no log here */
        }
        if (t->is_internal && samsa_config_kraft(b->cfg)->is_cluster
            && t->partitions[p].leader != b->node->node_id) {
            /* a coordinator partition another broker leads: its
             * coordinator keeps it there (moving it: issue 20) */
            continue;
        }
        if (!broker_hosts(b, &t->partitions[p])) {
            continue;                   /* another broker's replica */
        }
        plog = samsa_logmgr_plog_ref(b->logs, t->name, p);
        if (plog != NULL
            && !samsa_uuid_eq(samsa_plog_topic_id(plog), t->id)) {
            /* a log left by an older topic of the same name */
            samsa_plog_unref(plog);
            plog = NULL;
            if (samsa_logmgr_plog_delete(b->logs, t->name, p)
                != SAMSA_ERR_NONE) {
                samsa_error("cannot delete the stale log of %s-%d", t->name,
                            (int) p);
            }
        }
        if (plog != NULL) {
            samsa_plog_unref(plog);
            continue;
        }
        err = samsa_logmgr_plog_create(b->logs, t->name, p, t->id, &lc,
                                       &plog);
        if (err == SAMSA_ERR__NOFILE) {
            nofile++;               /* the log layer said so once */
            continue;
        }
        if (err != SAMSA_ERR_NONE) {
            samsa_error("cannot create the log of %s-%d: %s", t->name, (int) p,
                        samsa_err_name(err));
            continue;
        }
        samsa_plog_unref(plog);
    }
    if (nofile > 0) {
        samsa_error("cannot create %d logs of %s: out of file descriptors "
                    "(RLIMIT_NOFILE, log.open.files.max)", (int) nofile,
                    t->name);
    }
}

typedef struct broker_stray {
    samsa_broker_t       *b;
    const samsa_image_t  *img;
    char                **names;
    int32_t              *parts;
    size_t                n;
    size_t                cap;
} broker_stray_t;

/* A log whose topic, partition or topic id the image does not know, or
 * (unstable.replication.enable) of a partition this node is not a replica
 * of: a removed replica's log left while this node was down. */
static void
broker_stray_cb(void *ctx, samsa_plog_t *plog)
{
    broker_stray_t             *s = ctx;
    const char                 *name = samsa_plog_topic(plog);
    int32_t                     p = samsa_plog_partition(plog);
    const samsa_image_topic_t  *t;

    if (strcmp(name, METADATA_TOPIC) == 0) {
        return;
    }
    t = samsa_image_topic_find(s->img, name, strlen(name));
    if (t != NULL && p < t->npartitions
        && samsa_uuid_eq(t->id, samsa_plog_topic_id(plog))
        && (t->is_internal || broker_hosts(s->b, &t->partitions[p])
            || t->partitions[p].leader == s->b->node->node_id)) {
        return;
    }
    if (s->n == s->cap) {
        s->cap = s->cap == 0 ? 16 : s->cap * 2;
        s->names = samsa_realloc(s->names, s->cap * sizeof(*s->names));
        s->parts = samsa_realloc(s->parts, s->cap * sizeof(*s->parts));
    }
    s->names[s->n] = samsa_strdup(name);
    s->parts[s->n++] = p;
}

static void
broker_delete_strays(samsa_broker_t *b, const samsa_image_t *img)
{
    broker_stray_t  s = { .b = b, .img = img };
    size_t          i;

    samsa_logmgr_foreach(b->logs, broker_stray_cb, &s);
    for (i = 0; i < s.n; i++) {
        samsa_info("deleting the log of %s-%d: its topic or partition no "
                   "longer exists, or this node is not one of its replicas",
                   s.names[i], (int) s.parts[i]);
        if (samsa_logmgr_plog_delete(b->logs, s.names[i], s.parts[i])
            != SAMSA_ERR_NONE) {
            samsa_error("cannot delete the log of %s-%d", s.names[i],
                        (int) s.parts[i]);
        }
        samsa_free(s.names[i]);
    }
    samsa_free(s.names);
    samsa_free(s.parts);
}

/* Kafka's ReplicaManager.applyDelta for a replica removed by a
 * reassignment: the logs of was's partitions this node kept and no longer
 * keeps in t (same topic id) are deleted.  A partition it still leads or
 * replicates is never touched (broker_hosts says so from t itself). */
static void
broker_drop_removed(samsa_broker_t *b, const samsa_image_topic_t *was,
                    const samsa_image_topic_t *t)
{
    int32_t  p;

    if (was == NULL || !samsa_uuid_eq(was->id, t->id) || t->is_internal) {
        return;                         /* coordinators' logs: issue 20 */
    }
    for (p = 0; p < t->npartitions && p < was->npartitions; p++) {
        if (!broker_hosts(b, &was->partitions[p])
            || broker_hosts(b, &t->partitions[p])
            || t->partitions[p].leader == b->node->node_id) {
            continue;
        }
        samsa_info("deleting the log of %s-%d: this node is no longer one "
                   "of its replicas", t->name, (int) p);
        if (samsa_logmgr_plog_delete(b->logs, t->name, p) != SAMSA_ERR_NONE) {
            samsa_warn("no log of %s-%d to delete", t->name, (int) p);
        }
    }
}

/* Did this node become or stop being a replica of a partition of t? */
static bool
broker_hosting_changed(const samsa_broker_t *b, const samsa_image_topic_t *a,
                       const samsa_image_topic_t *t)
{
    int32_t  p;

    for (p = 0; a != NULL && p < t->npartitions && p < a->npartitions; p++) {
        if (broker_hosts(b, &a->partitions[p])
            != broker_hosts(b, &t->partitions[p])) {
            return true;
        }
    }
    return false;
}

static bool
broker_topic_changed(const samsa_image_topic_t *a, const samsa_image_topic_t *b)
{
    size_t  i;

    if (a == NULL || !samsa_uuid_eq(a->id, b->id)
        || a->npartitions != b->npartitions || a->nconfigs != b->nconfigs) {
        return true;
    }
    for (i = 0; i < a->nconfigs; i++) {
        if (strcmp(a->configs[i].name, b->configs[i].name) != 0
            || strcmp(a->configs[i].value, b->configs[i].value) != 0) {
            return true;
        }
    }
    return false;
}

/* Do the dynamic configs of this broker (its own or the cluster
 * default) differ between the two images? */
static bool
broker_reconf_changed(const samsa_broker_t *b, const samsa_image_t *a,
                      const samsa_image_t *c)
{
    samsa_brokercfg_levels_t  x, y;
    size_t                    i;

    samsa_brokercfg_levels(a, b->node->node_id, &x);
    samsa_brokercfg_levels(c, b->node->node_id, &y);
    if (x.nnode != y.nnode || x.ndflt != y.ndflt) {
        return true;
    }
    for (i = 0; i < x.nnode; i++) {
        if (strcmp(x.node[i].name, y.node[i].name) != 0
            || strcmp(x.node[i].value, y.node[i].value) != 0) {
            return true;
        }
    }
    for (i = 0; i < x.ndflt; i++) {
        if (strcmp(x.dflt[i].name, y.dflt[i].name) != 0
            || strcmp(x.dflt[i].value, y.dflt[i].value) != 0) {
            return true;
        }
    }
    return false;
}

void
samsa_broker_set_reconf(samsa_broker_t *b, samsa_broker_reconf_fn *fn,
                        void *ctx)
{
    samsa_image_t  *img;

    pthread_mutex_lock(&b->reconf_lock);
    b->reconf = fn;
    b->reconf_ctx = ctx;
    if (fn != NULL) {
        img = samsa_meta_image_get(b->meta);
        fn(ctx, img);
        samsa_image_put(img);
    }
    pthread_mutex_unlock(&b->reconf_lock);
}

/* Image listener: runs on the controller thread (cluster mode: the
 * quorum thread) after each change. */
static void
broker_on_image(void *ctx, const samsa_image_t *old_img,
                const samsa_image_t *new_img)
{
    samsa_broker_t             *b = ctx;
    const samsa_image_topic_t  *t, *was;
    size_t                      i, n = samsa_image_topic_count(new_img);
    bool                        gone = false, dflt = false;

    if (broker_reconf_changed(b, old_img, new_img)) {
        pthread_mutex_lock(&b->reconf_lock);
        if (b->reconf != NULL) {
            b->reconf(b->reconf_ctx, new_img);
        }
        pthread_mutex_unlock(&b->reconf_lock);
        /* a dynamic log default (log.retention.*) may have changed: every
         * topic without its own override follows it (DynamicLogConfig) */
        dflt = true;
    }
    /* the logs made here and a catch-up's stray sweep
     * (samsa_broker_caught_up) see the images in order */
    pthread_mutex_lock(&b->strays_lock);
    for (i = 0; i < n; i++) {
        t = samsa_image_topic_at(new_img, i);
        was = samsa_image_topic_find(old_img, t->name, t->name_len);
        if (dflt || broker_topic_changed(was, t)
            || broker_hosting_changed(b, was, t)) {
            broker_ensure_logs(b, new_img, t);
            broker_drop_removed(b, was, t);
        }
    }
    n = samsa_image_topic_count(old_img);
    for (i = 0; i < n && !gone; i++) {
        t = samsa_image_topic_at(old_img, i);
        was = samsa_image_topic_find(new_img, t->name, t->name_len);
        gone = was == NULL || !samsa_uuid_eq(was->id, t->id);
    }
    if ((gone || samsa_image_topic_count(old_img) == 0) && b->caught_up) {
        broker_delete_strays(b, new_img);
    }
    pthread_mutex_unlock(&b->strays_lock);
}

void
samsa_broker_caught_up(samsa_broker_t *b)
{
    samsa_image_t  *img;

    pthread_mutex_lock(&b->strays_lock);
    if (!b->caught_up) {
        b->caught_up = true;
        img = samsa_meta_image_get(b->meta);
        broker_delete_strays(b, img);
        samsa_image_put(img);
    }
    pthread_mutex_unlock(&b->strays_lock);
    /* from now on the partitions follow the image (idempotent) */
    samsa_replmgr_caught_up(b->repl);
}

/* ---- group commit ------------------------------------------------------ */

static void
broker_on_flushed(void *ctx, const char *topic, int32_t partition,
                  int64_t flushed_offset)
{
    samsa_broker_t  *b = ctx;
    char             key[SAMSA_PURGATORY_TP_KEY_MAX];

    (void) flushed_offset;
    samsa_purgatory_tp_key(key, topic, strlen(topic), partition);
    samsa_purgatory_check_and_complete(b->produce, key);
}

/* ---- life --------------------------------------------------------------- */

static samsa_err_t
broker_open_logs(samsa_broker_t *b, char *errstr, size_t errstr_size)
{
    const samsa_config_t            *cfg = b->cfg;
    const samsa_brokercfg_levels_t   none = { 0 };
    samsa_logmgr_config_t            lcfg;

    samsa_logmgr_config_defaults(&lcfg);
    lcfg.dirs = (const char *const *) cfg->log_dirs;
    lcfg.ndirs = cfg->nlog_dirs;
    lcfg.retention_check_interval_ms =
        samsa_config_long(cfg, "log.retention.check.interval.ms");
    lcfg.flush_scheduler_interval_ms =
        samsa_config_long(cfg, "log.flush.scheduler.interval.ms");
    lcfg.flush_offset_checkpoint_interval_ms =
        samsa_config_int(cfg, "log.flush.offset.checkpoint.interval.ms");
    lcfg.flush_start_offset_checkpoint_interval_ms =
        samsa_config_int(cfg, "log.flush.start.offset.checkpoint.interval.ms");
    lcfg.high_watermark_checkpoint_interval_ms =
        samsa_config_long(cfg, "replica.high.watermark.checkpoint.interval.ms");
    lcfg.recovery_threads_per_dir =
        samsa_config_int(cfg, "num.recovery.threads.per.data.dir");
    lcfg.open_files_max = samsa_config_long(cfg, "log.open.files.max");
    samsa_brokercfg_cleaner(cfg, &none, &lcfg.cleaner);  /* static */
    samsa_broker_log_config(b, NULL, NULL, &lcfg.defaults);
    lcfg.topic_config = broker_topic_config_cb;
    lcfg.topic_config_ctx = b;
    lcfg.on_flushed = broker_on_flushed;
    lcfg.on_flushed_ctx = b;
    return samsa_logmgr_open(&lcfg, &b->logs, errstr, errstr_size);
}

samsa_err_t
samsa_broker_open(samsa_broker_t *b, const samsa_config_t *cfg,
                  const samsa_node_t *node, char *errstr, size_t errstr_size)
{
    samsa_controller_conf_t  ccfg;
    samsa_grpcoord_conf_t    gcfg;
    samsa_txncoord_conf_t    tcfg;
    samsa_pidmgr_conf_t      pcfg;
    samsa_err_t              err;

    memset(b, 0, sizeof(*b));
    pthread_mutex_init(&b->reconf_lock, NULL);
    pthread_mutex_init(&b->strays_lock, NULL);
    /* one node: its own metadata log is whole from the start */
    b->caught_up = !samsa_config_kraft(cfg)->is_cluster;
    b->cfg = cfg;
    b->node = node;
    b->fetch_max_bytes = samsa_config_int(cfg, "fetch.max.bytes");
    err = samsa_authz_init(&b->authz, cfg, errstr, errstr_size);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    b->meta = samsa_meta_new();
    b->quota = samsa_quota_mgr_new(
        b->meta, samsa_config_int(cfg, "quota.window.num"),
        samsa_config_int(cfg, "quota.window.size.seconds"),
        samsa_config_int(cfg, "controller.quota.window.num"),
        samsa_config_int(cfg, "controller.quota.window.size.seconds"));
    b->produce = samsa_purgatory_new("produce",
                                     SAMSA_PURGATORY_PURGE_INTERVAL_DEFAULT);
    b->fetch = samsa_purgatory_new("fetch",
                                   SAMSA_PURGATORY_PURGE_INTERVAL_DEFAULT);
    err = broker_open_logs(b, errstr, errstr_size);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    samsa_meta_listen(b->meta, broker_on_image, b);
    {
        samsa_replmgr_conf_t  rcfg = {
            .cfg = cfg, .node_id = node->node_id, .meta = b->meta,
            .logs = b->logs, .produce = b->produce, .fetch = b->fetch,
        };

        samsa_replmgr_new(&rcfg, &b->repl);
    }
    /* after broker_on_image: the logs exist when it runs */
    samsa_meta_listen(b->meta, samsa_replmgr_on_image, b->repl);
    samsa_controller_conf_init(&ccfg, cfg, b->meta);
    ccfg.node_id = node->node_id;
    if (samsa_config_kraft(cfg)->is_cluster) {
        ccfg.cluster_id = node->cluster_id;     /* the quorum's log */
    }
    err = samsa_controller_open(&b->ctrl, &ccfg, errstr, errstr_size);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    err = samsa_replmgr_isr_start(b->repl, b->ctrl);
    if (err != SAMSA_ERR_NONE) {
        snprintf(errstr, errstr_size, "cannot start the isr-manager thread");
        return err;
    }
    memset(&pcfg, 0, sizeof(pcfg));
    pcfg.ctrl = b->ctrl;
    pcfg.kraft = samsa_config_kraft(cfg);
    pcfg.node_id = node->node_id;
    err = samsa_pidmgr_new(&pcfg, &b->pids);
    if (err != SAMSA_ERR_NONE) {
        snprintf(errstr, errstr_size, "cannot start the pid-fetch thread");
        return err;
    }
    BROKER_COORD_CONF(&gcfg, b, cfg, node);
    gcfg.consumer_ops = &samsa_consumer_group_ops;
    err = samsa_grpcoord_open(&gcfg, &b->grp, errstr, errstr_size);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    BROKER_COORD_CONF(&tcfg, b, cfg, node);
    tcfg.grp = b->grp;
    tcfg.pids = b->pids;
    tcfg.fetch = b->fetch;
    err = samsa_txncoord_open(&tcfg, &b->txn, errstr, errstr_size);
    if (err == SAMSA_ERR_NONE) {
        b->txn_verify = samsa_txn_verify_hook;     /* KIP-890 part 1 */
        b->txn_verify_ctx = b->txn;
    }
    return err;
}

int16_t
samsa_broker_security_protocol_id(const char *name)
{
    static const char *const  names[] = { "PLAINTEXT", "SSL",
                                          "SASL_PLAINTEXT", "SASL_SSL" };
    size_t                    i;

    for (i = 0; name != NULL && i < sizeof(names) / sizeof(names[0]); i++) {
        if (strcasecmp(name, names[i]) == 0) {
            return (int16_t) i;
        }
    }
    return 0;
}

samsa_err_t
samsa_broker_register(samsa_broker_t *b, char *errstr, size_t errstr_size)
{
    const samsa_node_t             *node = b->node;
    samsa_controller_broker_reg_t   reg;
    samsa_controller_endpoint_t    *eps;
    samsa_err_t                     err;
    int64_t                         epoch = -1;
    size_t                          i;

    eps = samsa_calloc(node->nendpoints + 1, sizeof(*eps));
    for (i = 0; i < node->nendpoints; i++) {
        eps[i].listener = node->endpoints[i].listener;
        eps[i].host = node->endpoints[i].host;
        eps[i].port = (uint16_t) node->endpoints[i].port;
        eps[i].security_protocol = samsa_broker_security_protocol_id(
            node->endpoints[i].security_protocol);
    }
    memset(&reg, 0, sizeof(reg));
    reg.broker_id = node->node_id;
    reg.incarnation_id = samsa_image_id_random();
    reg.endpoints = eps;
    reg.nendpoints = node->nendpoints;
    reg.rack = samsa_config_str(b->cfg, "broker.rack");     /* NULL: none */
    err = samsa_controller_register_broker(b->ctrl, &reg, &epoch);
    samsa_free(eps);
    if (err != SAMSA_ERR_NONE) {
        snprintf(errstr, errstr_size, "cannot register broker %" PRId32
                 " in the metadata log: %s", node->node_id,
                 samsa_err_name(err));
        return err;
    }
    samsa_info("broker %" PRId32 " registered with %zu endpoint(s), broker "
               "epoch %" PRId64, node->node_id, node->nendpoints, epoch);
    return SAMSA_ERR_NONE;
}

void
samsa_broker_answer_waiting(samsa_broker_t *b)
{
    samsa_txncoord_stop(b->txn);
    samsa_grpcoord_answer_waiting(b->grp);
    samsa_replmgr_stop(b->repl);        /* before the purgatories go */
    /* The flusher must not look for the produce purgatory once it is gone;
     * this waits for a callback in progress. */
    if (b->logs != NULL) {
        samsa_logmgr_set_flushed_cb(b->logs, NULL, NULL);
    }
    if (b->produce != NULL) {
        samsa_purgatory_free(b->produce);
        b->produce = NULL;
    }
    if (b->fetch != NULL) {
        samsa_purgatory_free(b->fetch);
        b->fetch = NULL;
    }
}

void
samsa_broker_close(samsa_broker_t *b)
{
    samsa_broker_answer_waiting(b);
    samsa_txncoord_close(b->txn);
    b->txn = NULL;
    samsa_grpcoord_close(b->grp);
    b->grp = NULL;
    samsa_pidmgr_free(b->pids);
    b->pids = NULL;
    samsa_controller_close(b->ctrl);
    b->ctrl = NULL;
    samsa_replmgr_free(b->repl);        /* no image is published now */
    b->repl = NULL;
    if (b->logs != NULL) {
        samsa_logmgr_close(b->logs);
        b->logs = NULL;
    }
    samsa_quota_mgr_free(b->quota);
    b->quota = NULL;
    samsa_meta_free(b->meta);
    b->meta = NULL;
    samsa_authz_fini(&b->authz);
    pthread_mutex_destroy(&b->reconf_lock);
    pthread_mutex_destroy(&b->strays_lock);
}
