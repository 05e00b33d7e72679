/*
 * meta/controller/controller.c - see controller.h.  The controller thread takes one
 * queued operation at a time: it builds a batch of records on a delta of
 * the latest image (ctlbatch.c, filled by ctltopics.c, ctlconfigs.c,
 * ctlquotas.c and ctlbrokers.c), and unless the operation
 * only validates, appends the batch to the metadata log (durable when the
 * append returns), applies the delta and publishes the new image.  Only
 * then does the caller, waiting on the operation, get its results: a
 * client never hears of a change that a crash could lose.
 */
#include "meta/controller/controller_int.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "meta/mlog.h"
#include "util/alloc.h"
#include "util/diag.h"
#include "util/queue.h"

#define CTL_QUEUE_SIZE   128
#define CTL_POLL_MS      300

struct samsa_controller {
    samsa_controller_conf_t   conf;     /* [const] */
    samsa_mlog_t             *mlog;     /* [controller thread] */
    samsa_image_t            *img;      /* [controller thread] the latest
                                           published image (a reference) */
    bool                      failed;   /* [controller thread] the log
                                           failed: refuse changes */
    samsa_queue_t             ops;      /* operations for the thread */
    pthread_t                 thread;
    bool                      started;  /* [main] */
    atomic_bool               stop;     /* [atomic] close asked */
};

typedef enum ctl_kind {
    CTL_CREATE_TOPICS,
    CTL_DELETE_TOPICS,
    CTL_CREATE_PARTITIONS,
    CTL_ALTER_CONFIGS,
    CTL_ALLOC_PRODUCER_IDS,
    CTL_ALTER_CLIENT_QUOTAS,
    CTL_REGISTER_BROKER,
} ctl_kind_t;

/* One operation, on its caller's stack: the caller waits on done. */
typedef struct ctl_op {
    ctl_kind_t        kind;
    const void       *req;          /* the request array or struct */
    size_t            n;
    bool              incremental;
    bool              validate_only;
    samsa_arena_t    *arena;
    void             *results;
    const samsa_controller_quota_t *quota;  /* DeleteTopics,
                                               CreatePartitions; NULL */
    int64_t          *first;        /* CTL_ALLOC_PRODUCER_IDS; the broker
                                       epoch for CTL_REGISTER_BROKER */
    samsa_err_t       err;          /* whole-operation result */
    pthread_mutex_t   lock;         /* guards done */
    pthread_cond_t    cond;
    bool              done;         /* [lock] */
} ctl_op_t;

/* An empty batch on the latest image. */
static void
ctl_batch_init(samsa_ctlbatch_t *b, samsa_controller_t *ctrl)
{
    samsa_ctlbatch_init(b, ctrl->img, samsa_mlog_next_offset(ctrl->mlog),
                        ctrl->conf.node_id, ctrl->conf.broker_cfg);
}

/* Make the batch durable, then publish the image it leads to. */
static samsa_err_t
ctl_commit(samsa_controller_t *ctrl, samsa_ctlbatch_t *b)
{
    samsa_image_t  *img;
    char            err[512];

    if (b->n == 0) {
        return SAMSA_ERR_NONE;
    }
    if (samsa_mlog_append(ctrl->mlog, b->data.data, b->lens, b->n, err,
                          sizeof(err)) != SAMSA_ERR_NONE) {
        samsa_error("controller: metadata log write failed, refusing "
                    "further changes: %s", err);
        ctrl->failed = true;
        return SAMSA_ERR__IO;
    }
    img = samsa_image_delta_apply(b->delta);
    samsa_image_put(ctrl->img);
    ctrl->img = samsa_image_ref(img);
    samsa_meta_publish(ctrl->conf.meta, img);
    return SAMSA_ERR_NONE;
}

/* Every item of the operation fails with Kafka's answer to a batch over
 * MAX_RECORDS_PER_USER_OP. */
static void
ctl_fail_too_large(ctl_op_t *op)
{
    static const char  msg[] = "Unable to perform excessively large batch "
                               "operation.";
    size_t             i, n = op->n;

    for (i = 0; i < n; i++) {
        switch (op->kind) {
        case CTL_CREATE_TOPICS: {
            samsa_controller_topic_result_t  *r = op->results;

            r[i].error = SAMSA_ERR_POLICY_VIOLATION;
            r[i].message = msg;
            break;
        }
        case CTL_DELETE_TOPICS: {
            samsa_controller_delete_result_t  *r = op->results;

            r[i].error = SAMSA_ERR_POLICY_VIOLATION;
            r[i].message = msg;
            break;
        }
        default: {
            samsa_controller_result_t  *r = op->results;

            r[i].error = SAMSA_ERR_POLICY_VIOLATION;
            r[i].message = msg;
            break;
        }
        }
    }
}

static void
ctl_alloc_producer_ids(samsa_ctlbatch_t *b, int64_t *first)
{
    samsa_MetadataRecords_any_t  rec;
    const samsa_image_broker_t  *self;

    *first = samsa_image_next_producer_id(b->img);
    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_ProducerIdsRecord;
    samsa_ProducerIdsRecord_init(&rec.u.ProducerIdsRecord);
    rec.u.ProducerIdsRecord.BrokerId = b->node_id;
    self = samsa_image_broker_find(b->img, b->node_id);
    rec.u.ProducerIdsRecord.BrokerEpoch = self != NULL ? self->epoch : -1;
    rec.u.ProducerIdsRecord.NextProducerId =
        *first + SAMSA_CONTROLLER_PRODUCER_ID_BLOCK;
    samsa_ctlbatch_add(b, &rec);
}

/* Run one operation.  @thread controller */
static void
ctl_run(samsa_controller_t *ctrl, ctl_op_t *op)
{
    samsa_ctlbatch_t  b;

    if (ctrl->failed) {
        op->err = SAMSA_ERR__IO;
        return;
    }
    ctl_batch_init(&b, ctrl);
    switch (op->kind) {
    case CTL_CREATE_TOPICS:
        samsa_ctltopics_create(&b, op->req, op->arena, op->results);
        break;
    case CTL_DELETE_TOPICS:
        samsa_ctltopics_delete(&b, op->req, op->n, op->quota, op->arena,
                               op->results);
        break;
    case CTL_CREATE_PARTITIONS:
        samsa_ctltopics_partitions(&b, op->req, op->n, op->quota,
                                   op->arena, op->results);
        break;
    case CTL_ALTER_CONFIGS:
        samsa_ctlconfigs_alter(&b, op->req, op->n, op->incremental,
                               op->arena, op->results);
        break;
    case CTL_ALLOC_PRODUCER_IDS:
        ctl_alloc_producer_ids(&b, op->first);
        break;
    case CTL_ALTER_CLIENT_QUOTAS:
        samsa_ctlquotas_alter(&b, op->req, op->n, op->arena, op->results);
        break;
    case CTL_REGISTER_BROKER:
        samsa_ctlbrokers_register(&b, op->req, op->first);
        break;
    }
    if (b.overflow) {
        ctl_fail_too_large(op);
    } else if (!op->validate_only) {
        op->err = ctl_commit(ctrl, &b);
    }
    samsa_ctlbatch_fini(&b);
}

static void
ctl_done(ctl_op_t *op)
{
    pthread_mutex_lock(&op->lock);
    op->done = true;
    pthread_cond_signal(&op->cond);
    pthread_mutex_unlock(&op->lock);    /* after this op may be gone */
}

static void *
ctl_thread(void *arg)
{
    samsa_controller_t  *ctrl = arg;
    ctl_op_t            *op;

    samsa_thread_name_set("controller");
    while (!atomic_load_explicit(&ctrl->stop, memory_order_acquire)) {
        op = samsa_queue_take(&ctrl->ops, CTL_POLL_MS);
        if (op != NULL) {
            ctl_run(ctrl, op);
            ctl_done(op);
        }
    }
    while ((op = samsa_queue_take(&ctrl->ops, 0)) != NULL) {
        op->err = SAMSA_ERR__SHUTDOWN;
        ctl_done(op);
    }
    return NULL;
}

/* Queue op for the controller thread and wait for it. */
static samsa_err_t
ctl_submit(samsa_controller_t *ctrl, ctl_op_t *op)
{
    op->err = SAMSA_ERR_NONE;
    op->done = false;
    pthread_mutex_init(&op->lock, NULL);
    pthread_cond_init(&op->cond, NULL);
    if (atomic_load_explicit(&ctrl->stop, memory_order_acquire)) {
        op->err = SAMSA_ERR__SHUTDOWN;
        op->done = true;
    } else {
        samsa_queue_put(&ctrl->ops, op);
    }
    pthread_mutex_lock(&op->lock);
    while (!op->done) {
        pthread_cond_wait(&op->cond, &op->lock);
    }
    pthread_mutex_unlock(&op->lock);
    pthread_cond_destroy(&op->cond);
    pthread_mutex_destroy(&op->lock);
    return op->err;
}

/* ---- operations */

samsa_err_t
samsa_controller_create_topics(samsa_controller_t *ctrl,
                               const samsa_controller_create_topics_t *req,
                               samsa_arena_t *arena,
                               samsa_controller_topic_result_t *results)
{
    ctl_op_t  op = {
        .kind = CTL_CREATE_TOPICS, .req = req, .n = req->ntopics,
        .validate_only = req->validate_only, .arena = arena,
        .results = results,
    };

    return ctl_submit(ctrl, &op);
}

samsa_err_t
samsa_controller_delete_topics(samsa_controller_t *ctrl,
                               const samsa_controller_topic_ref_t *refs,
                               size_t n,
                               const samsa_controller_quota_t *quota,
                               samsa_arena_t *arena,
                               samsa_controller_delete_result_t *results)
{
    ctl_op_t  op = {
        .kind = CTL_DELETE_TOPICS, .req = refs, .n = n, .arena = arena,
        .results = results, .quota = quota,
    };

    return ctl_submit(ctrl, &op);
}

samsa_err_t
samsa_controller_create_partitions(
    samsa_controller_t *ctrl, const samsa_controller_new_partitions_t *topics,
    size_t n, bool validate_only, const samsa_controller_quota_t *quota,
    samsa_arena_t *arena, samsa_controller_result_t *results)
{
    ctl_op_t  op = {
        .kind = CTL_CREATE_PARTITIONS, .req = topics, .n = n,
        .validate_only = validate_only, .arena = arena, .results = results,
        .quota = quota,
    };

    return ctl_submit(ctrl, &op);
}

samsa_err_t
samsa_controller_alter_configs(samsa_controller_t *ctrl,
                               const samsa_controller_alter_config_t *res,
                               size_t n, bool incremental, bool validate_only,
                               samsa_arena_t *arena,
                               samsa_controller_result_t *results)
{
    ctl_op_t  op = {
        .kind = CTL_ALTER_CONFIGS, .req = res, .n = n,
        .incremental = incremental, .validate_only = validate_only,
        .arena = arena, .results = results,
    };

    return ctl_submit(ctrl, &op);
}

samsa_err_t
samsa_controller_alter_client_quotas(
    samsa_controller_t *ctrl, const samsa_controller_quota_alter_t *entries,
    size_t n, bool validate_only, samsa_arena_t *arena,
    samsa_controller_result_t *results)
{
    ctl_op_t  op = {
        .kind = CTL_ALTER_CLIENT_QUOTAS, .req = entries, .n = n,
        .validate_only = validate_only, .arena = arena, .results = results,
    };

    return ctl_submit(ctrl, &op);
}

samsa_err_t
samsa_controller_alloc_producer_ids(samsa_controller_t *ctrl, int64_t *first)
{
    ctl_op_t  op = { .kind = CTL_ALLOC_PRODUCER_IDS, .first = first };

    return ctl_submit(ctrl, &op);
}

samsa_err_t
samsa_controller_register_broker(samsa_controller_t *ctrl,
                                 const samsa_controller_broker_reg_t *reg,
                                 int64_t *epoch)
{
    ctl_op_t  op = { .kind = CTL_REGISTER_BROKER, .req = reg,
                     .first = epoch };

    return ctl_submit(ctrl, &op);
}

/* ---- open and close */

void
samsa_controller_conf_init(samsa_controller_conf_t *conf,
                           const samsa_config_t *cfg, samsa_meta_t *meta)
{
    memset(conf, 0, sizeof(*conf));
    conf->node_id = cfg->node_id;
    conf->metadata_dir = samsa_config_is_set(cfg, "metadata.log.dir")
                         ? samsa_config_str(cfg, "metadata.log.dir")
                         : cfg->log_dirs[0];
    conf->broker_cfg = cfg;
    conf->meta = meta;
}

static samsa_err_t
ctl_replay(void *ctx, const samsa_MetadataRecords_any_t *rec, int64_t offset,
           char *errstr, size_t errstr_size)
{
    return samsa_image_delta_replay(ctx, rec, offset, errstr, errstr_size);
}

/* A new metadata log starts with Kafka's bootstrap records: the
 * metadata.version feature level. */
static samsa_err_t
ctl_bootstrap(samsa_controller_t *ctrl, char *errstr, size_t errstr_size)
{
    samsa_MetadataRecords_any_t  rec;
    samsa_ctlbatch_t             b;
    samsa_err_t                  err = SAMSA_ERR_NONE;

    ctl_batch_init(&b, ctrl);
    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_FeatureLevelRecord;
    samsa_FeatureLevelRecord_init(&rec.u.FeatureLevelRecord);
    rec.u.FeatureLevelRecord.Name =
        samsa_slice_cstr(SAMSA_META_METADATA_VERSION_NAME);
    rec.u.FeatureLevelRecord.FeatureLevel = SAMSA_META_METADATA_VERSION;
    samsa_ctlbatch_add(&b, &rec);
    if (samsa_mlog_append(ctrl->mlog, b.data.data, b.lens, b.n, errstr,
                          errstr_size) != SAMSA_ERR_NONE) {
        err = SAMSA_ERR__IO;
    } else {
        samsa_image_put(ctrl->img);
        ctrl->img = samsa_image_delta_apply(b.delta);
        samsa_info("metadata log: bootstrapped with %s=%d",
                   SAMSA_META_METADATA_VERSION_NAME,
                   SAMSA_META_METADATA_VERSION);
    }
    samsa_ctlbatch_fini(&b);
    return err;
}

/* Replay the metadata log into ctrl->img, bootstrapping an empty one. */
static samsa_err_t
ctl_load(samsa_controller_t *ctrl, char *errstr, size_t errstr_size)
{
    samsa_image_t        *empty = samsa_image_new_empty();
    samsa_image_delta_t  *delta = samsa_image_delta_new(empty);
    samsa_err_t           err;

    samsa_image_put(empty);
    err = samsa_mlog_open(&ctrl->mlog, ctrl->conf.metadata_dir, ctl_replay,
                          delta, errstr, errstr_size);
    if (err == SAMSA_ERR_NONE) {
        ctrl->img = samsa_image_delta_apply(delta);
    }
    samsa_image_delta_free(delta);
    if (err == SAMSA_ERR_NONE && samsa_mlog_next_offset(ctrl->mlog) == 0) {
        err = ctl_bootstrap(ctrl, errstr, errstr_size);
    }
    return err;
}

samsa_err_t
samsa_controller_open(samsa_controller_t **out,
                      const samsa_controller_conf_t *conf, char *errstr,
                      size_t errstr_size)
{
    samsa_controller_t  *ctrl = samsa_calloc(1, sizeof(*ctrl));
    samsa_err_t          err;
    int                  rc;

    *out = NULL;
    ctrl->conf = *conf;
    atomic_init(&ctrl->stop, false);
    samsa_queue_init(&ctrl->ops, CTL_QUEUE_SIZE);
    err = ctl_load(ctrl, errstr, errstr_size);
    if (err != SAMSA_ERR_NONE) {
        goto out_close;
    }
    samsa_info("metadata log: %zu topic(s) at offset %" PRId64 ", %s=%d",
               samsa_image_topic_count(ctrl->img),
               samsa_image_offset(ctrl->img), SAMSA_META_METADATA_VERSION_NAME,
               (int) samsa_image_feature_level(
                   ctrl->img, SAMSA_META_METADATA_VERSION_NAME));
    samsa_meta_publish(conf->meta, samsa_image_ref(ctrl->img));
    rc = pthread_create(&ctrl->thread, NULL, ctl_thread, ctrl);
    if (rc != 0) {
        snprintf(errstr, errstr_size, "cannot start the controller thread: "
                 "%s", strerror(rc));
        err = SAMSA_ERR__IO;
        goto out_close;
    }
    ctrl->started = true;
    *out = ctrl;
    return SAMSA_ERR_NONE;

out_close:
    samsa_controller_close(ctrl);
    return err;
}

void
samsa_controller_close(samsa_controller_t *ctrl)
{
    ctl_op_t  *op;

    if (ctrl == NULL) {
        return;
    }
    atomic_store_explicit(&ctrl->stop, true, memory_order_release);
    if (ctrl->started) {
        pthread_join(ctrl->thread, NULL);
    }
    while ((op = samsa_queue_take(&ctrl->ops, 0)) != NULL) {
        op->err = SAMSA_ERR__SHUTDOWN;  /* queued after the thread's last
                                           look */
        ctl_done(op);
    }
    samsa_queue_fini(&ctrl->ops);
    samsa_mlog_close(ctrl->mlog);
    samsa_image_put(ctrl->img);
    samsa_free(ctrl);
}
