/*
 * meta/controller/controller.c - see controller.h.  The controller thread takes one
 * queued operation at a time: it builds a batch of records on a delta of
 * the latest image (ctlbatch.c, filled by ctltopics.c, ctlconfigs.c,
 * ctlquotas.c and ctlbrokers.c), and unless the operation
 * only validates, appends the batch to the metadata log (durable when the
 * append returns), applies the delta and publishes the new image.  Only
 * then does the caller, waiting on the operation, get its results: a
 * client never hears of a change that a crash could lose.
 *
 * Cluster mode (conf.cluster_id): the log is the quorum's.  The controller
 * thread validates against the image the quorum thread last applied,
 * appends the batch (samsa_quorum_append: u32 length and framed record,
 * per record) and waits for the done callback, which comes after this
 * node's commit callback published the image: one operation in flight.
 * The commit callback (quorum thread, every member) decodes the records,
 * replays them into a delta of the applied image at the quorum's offsets
 * and publishes the result.  A node that is not the leader, or loses
 * leadership with the batch in flight, answers NOT_CONTROLLER.
 */
#include "meta/controller/controller_int.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "meta/bootscram.h"
#include "meta/mlog.h"
#include "meta/quorum.h"
#include "meta/controller/ctlsnap.h"
#include "config/config_kraft.h"
#include "proto/rd.h"
#include "proto/wr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include "util/alloc.h"
#include "util/diag.h"
#include "util/queue.h"
#include "util/time.h"

/* KRaft cluster mode: the log is the quorum's ([const]: ctrl->quorum
 * itself is set after the controller thread starts, under q_lock). */
#define CTL_CLUSTER(ctrl)  ((ctrl)->conf.cluster_id != NULL)

#define CTL_QUEUE_SIZE   128
#define CTL_SNAPSHOT_TRAILING_MIN  64   /* entries kept behind a snapshot */
#define CTL_POLL_MS      300
#define CTL_BALANCE_MAX  1000           /* Kafka's maxElectionsPerImbalance */

typedef enum ctl_kind {
    CTL_CREATE_TOPICS,
    CTL_DELETE_TOPICS,
    CTL_CREATE_PARTITIONS,
    CTL_ALTER_CONFIGS,
    CTL_ALLOC_PRODUCER_IDS,
    CTL_ALTER_CLIENT_QUOTAS,
    CTL_ALTER_SCRAM,
    CTL_CREATE_ACLS,
    CTL_DELETE_ACLS,
    CTL_REGISTER_BROKER,
    CTL_BROKER_HEARTBEAT,
    CTL_UNREGISTER_BROKER,
    CTL_ALTER_PARTITION,
    CTL_ELECT_LEADERS,
    CTL_ALTER_REASSIGNMENTS,
    CTL_WAKE,                       /* cluster mode: look at bootstrap */
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
    int32_t           broker_id;    /* CTL_ALTER_PARTITION: the sender */
    int8_t            election;     /* CTL_ELECT_LEADERS: its type */
    int64_t           broker_epoch;
    samsa_err_t       err;          /* whole-operation result */
    pthread_mutex_t   lock;         /* guards done */
    pthread_cond_t    cond;
    bool              done;         /* [lock] */
} ctl_op_t;

/* A broker's session clock (Kafka's BrokerHeartbeatManager entry). */
typedef struct ctl_session {
    int32_t   broker_id;
    int64_t   last_ms;              /* monotonic ms of the last contact */
} ctl_session_t;

struct samsa_controller {
    samsa_controller_conf_t   conf;     /* [const] */
    samsa_bootscram_t        *boot_scram;   /* [const] bootstrap.scram's
                                               credentials, for the
                                               bootstrap batch */
    size_t                    nboot_scram;
    samsa_brokercfg_check_t   broker_check; /* set on main before the
                                               listeners start; read by
                                               the controller thread for
                                               AlterConfigs ops only (the
                                               ops' queue orders it) */
    samsa_mlog_t             *mlog;     /* [controller thread] single
                                           node only */
    pthread_mutex_t           img_lock; /* guards img and next_offset */
    samsa_image_t            *img;      /* [img_lock] the latest
                                           published image (a reference);
                                           written by the controller
                                           thread (single node) or the
                                           quorum thread (cluster) */
    int64_t                   next_offset;  /* [img_lock] cluster mode:
                                               the next record's offset */
    pthread_mutex_t           q_lock;   /* guards quorum against close */
    samsa_quorum_t           *quorum;   /* [q_lock] cluster mode, else
                                           NULL */
    atomic_int                active_id;    /* [atomic] cluster: leader */
    atomic_bool               is_leader;    /* [atomic] cluster: is_self */
    atomic_bool               need_bootstrap; /* [atomic] */
    atomic_bool               reset_sessions; /* [atomic] new leader */
    /* observers (ctl_sync_observers): a membership change is in flight
     * (cleared by its done callback on the quorum thread) */
    atomic_bool               member_change;  /* [atomic] */
    bool                      sync_now;   /* [controller thread] a broker
                                             (un)registered */
    int64_t                   sync_ms;    /* [controller thread] last sync */
    int64_t                   balance_ms; /* [controller thread] last
                                             leader balance */
    bool                      balance_more; /* [controller thread] it was
                                               cut at CTL_BALANCE_MAX */
    samsa_quorum_desc_t      *qdesc;      /* [controller thread] scratch */
    ctl_session_t            *sessions; /* [controller thread] broker
                                           session clocks */
    size_t                    nsessions;
    size_t                    capsessions;
    ctl_op_t                  wake;     /* CTL_WAKE, queued by the quorum
                                           thread (never waited on) */
    bool                      failed;   /* [controller thread] the log
                                           failed: refuse changes */
    samsa_queue_t             ops;      /* operations for the thread */
    pthread_t                 thread;
    bool                      started;  /* [main] */
    atomic_bool               stop;     /* [atomic] close asked */
};


/* The latest image (a reference for the caller) and, in cluster mode,
 * the next record's offset. */
static samsa_image_t *
ctl_img_get(samsa_controller_t *ctrl, int64_t *next_offset)
{
    samsa_image_t  *img;

    pthread_mutex_lock(&ctrl->img_lock);
    img = samsa_image_ref(ctrl->img);
    *next_offset = ctrl->next_offset;
    pthread_mutex_unlock(&ctrl->img_lock);
    return img;
}

/* Make img (@owns it) the latest image. */
static void
ctl_img_set(samsa_controller_t *ctrl, samsa_image_t *img, int64_t next_offset)
{
    samsa_image_t  *old;

    pthread_mutex_lock(&ctrl->img_lock);
    old = ctrl->img;
    ctrl->img = img;
    ctrl->next_offset = next_offset;
    pthread_mutex_unlock(&ctrl->img_lock);
    samsa_image_put(old);
}

/* An empty batch on img (borrowed until samsa_ctlbatch_fini). */
static void
ctl_batch_init(samsa_ctlbatch_t *b, samsa_controller_t *ctrl,
               samsa_image_t *img, int64_t next_offset)
{
    samsa_ctlbatch_init(b, img, CTL_CLUSTER(ctrl) ? next_offset
                                : samsa_mlog_next_offset(ctrl->mlog),
                        ctrl->conf.node_id, ctrl->conf.broker_cfg);
}

/* ---- cluster mode: the quorum */

/* One append in flight: the controller thread waits for its done. */
typedef struct ctl_wait {
    pthread_mutex_t  lock;
    pthread_cond_t   cond;
    bool             done;          /* [lock] */
    samsa_err_t      err;
    int64_t          offset;
} ctl_wait_t;

/* @thread quorum */
static void
ctl_appended(void *ctx, samsa_err_t err, int64_t offset)
{
    ctl_wait_t  *w = ctx;

    pthread_mutex_lock(&w->lock);
    w->err = err;
    w->offset = offset;
    w->done = true;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->lock);     /* after this w may be gone */
}

/* Append b's records to the quorum and wait until they are committed
 * and applied on this node (or not: NOT_CONTROLLER, __STATE, __SHUTDOWN,
 * __IO).  @thread controller */
static samsa_err_t
ctl_quorum_write(samsa_controller_t *ctrl, const samsa_ctlbatch_t *b)
{
    samsa_buf_t   payload;
    samsa_wr_t    wr;
    ctl_wait_t    w;
    samsa_err_t   err;
    size_t        i, pos = 0;

    samsa_buf_init(&payload, b->data.len + 4 * b->n);
    samsa_wr_init(&wr, &payload);
    for (i = 0; i < b->n; i++) {
        samsa_wr_u32(&wr, (uint32_t) b->lens[i]);
        samsa_buf_append(&payload, b->data.data + pos, b->lens[i]);
        pos += b->lens[i];
    }
    memset(&w, 0, sizeof(w));
    pthread_mutex_init(&w.lock, NULL);
    pthread_cond_init(&w.cond, NULL);
    pthread_mutex_lock(&ctrl->q_lock);
    err = ctrl->quorum == NULL ? SAMSA_ERR__SHUTDOWN
          : samsa_quorum_append(ctrl->quorum, payload.data, payload.len,
                                (uint32_t) b->n, ctl_appended, &w);
    pthread_mutex_unlock(&ctrl->q_lock);
    samsa_buf_fini(&payload);
    if (err == SAMSA_ERR_NONE) {
        pthread_mutex_lock(&w.lock);
        while (!w.done) {
            pthread_cond_wait(&w.cond, &w.lock);
        }
        pthread_mutex_unlock(&w.lock);
        err = w.err;
    }
    pthread_cond_destroy(&w.cond);
    pthread_mutex_destroy(&w.lock);
    if (err != SAMSA_ERR_NONE && err != SAMSA_ERR_NOT_CONTROLLER
        && err != SAMSA_ERR__SHUTDOWN) {
        samsa_warn("controller: metadata quorum append of %zu record(s) "
                   "failed: %s", b->n, samsa_err_name(err));
    }
    return err;
}

/* Kafka's NotControllerException message. */
static const char *
ctl_not_controller_msg(samsa_controller_t *ctrl, samsa_arena_t *arena)
{
    int32_t  id = atomic_load_explicit(&ctrl->active_id,
                                       memory_order_acquire);

    if (id < 0 || id == ctrl->conf.node_id || arena == NULL) {
        return "No controller appears to be active.";
    }
    return samsa_ctl_msg(arena, "The active controller appears to be node "
                         "%d.", (int) id);
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
    if (CTL_CLUSTER(ctrl)) {
        return ctl_quorum_write(ctrl, b);   /* commit publishes */
    }
    if (samsa_mlog_append(ctrl->mlog, b->data.data, b->lens, b->n, err,
                          sizeof(err)) != SAMSA_ERR_NONE) {
        samsa_error("controller: metadata log write failed, refusing "
                    "further changes: %s", err);
        ctrl->failed = true;
        return SAMSA_ERR__IO;
    }
    img = samsa_image_delta_apply(b->delta);
    ctl_img_set(ctrl, samsa_image_ref(img), 0);
    samsa_meta_publish(ctrl->conf.meta, img);
    return SAMSA_ERR_NONE;
}

/* Every item of the operation fails with err and msg. */
static void
ctl_fail_all(ctl_op_t *op, samsa_err_t err, const char *msg)
{
    size_t  i, n = op->n;

    for (i = 0; i < n; i++) {
        switch (op->kind) {
        case CTL_CREATE_TOPICS: {
            samsa_controller_topic_result_t  *r = op->results;

            r[i].error = err;
            r[i].message = msg;
            break;
        }
        case CTL_DELETE_TOPICS: {
            samsa_controller_delete_result_t  *r = op->results;

            r[i].error = err;
            r[i].message = msg;
            break;
        }
        case CTL_DELETE_ACLS: {
            samsa_controller_acl_delete_result_t  *r = op->results;

            r[i].error = err;
            r[i].message = msg;
            r[i].nmatched = 0;
            break;
        }
        case CTL_ALTER_PARTITION: {
            samsa_controller_isr_result_t  *r = op->results;

            r[i].error = err;           /* AlterPartition has no message */
            break;
        }
        case CTL_ELECT_LEADERS: {
            samsa_controller_elect_result_t  *r = op->results;

            r[i].error = err;
            r[i].message = msg;
            break;
        }
        default: {
            samsa_controller_result_t  *r = op->results;

            r[i].error = err;
            r[i].message = msg;
            break;
        }
        }
    }
}

/* Every item fails with Kafka's answer to a batch over
 * MAX_RECORDS_PER_USER_OP. */
static void
ctl_fail_too_large(ctl_op_t *op)
{
    ctl_fail_all(op, SAMSA_ERR_POLICY_VIOLATION, "Unable to perform "
                 "excessively large batch operation.");
}

/* The operation's answer when this node is not the active controller. */
static void
ctl_fail_not_controller(samsa_controller_t *ctrl, ctl_op_t *op)
{
    /* the operations without per-item results answer in op->err */
    if (op->kind == CTL_ALLOC_PRODUCER_IDS
        || op->kind == CTL_REGISTER_BROKER
        || op->kind == CTL_BROKER_HEARTBEAT
        || op->kind == CTL_UNREGISTER_BROKER
        || op->kind == CTL_ALTER_PARTITION) {
        op->err = SAMSA_ERR_NOT_CONTROLLER;
        return;
    }
    ctl_fail_all(op, SAMSA_ERR_NOT_CONTROLLER,
                 ctl_not_controller_msg(ctrl, op->arena));
}

/* Kafka's ProducerIdControlManager.generateNextProducerId: the next block,
 * for this node (req NULL: the local ProducerIdManager) or for a broker's
 * AllocateProducerIds, whose broker epoch must be the one it registered
 * with (Kafka's ClusterControlManager.checkBrokerEpoch).  @returns that
 * check's error (no record then). */
static samsa_err_t
ctl_alloc_producer_ids(samsa_ctlbatch_t *b,
                       const samsa_controller_pid_req_t *req, int64_t *first)
{
    samsa_MetadataRecords_any_t  rec;
    const samsa_image_broker_t  *self;
    int32_t                      broker_id = b->node_id;
    int64_t                      epoch;
    samsa_err_t                  err;

    if (req != NULL) {
        err = samsa_ctlbrokers_check_epoch(b, req->broker_id,
                                           req->broker_epoch);
        if (err != SAMSA_ERR_NONE) {
            return err;
        }
        broker_id = req->broker_id;
        epoch = req->broker_epoch;
    } else {
        self = samsa_image_broker_find(b->img, b->node_id);
        epoch = self != NULL ? self->epoch : -1;
    }
    *first = samsa_image_next_producer_id(b->img);
    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_ProducerIdsRecord;
    samsa_ProducerIdsRecord_init(&rec.u.ProducerIdsRecord);
    rec.u.ProducerIdsRecord.BrokerId = broker_id;
    rec.u.ProducerIdsRecord.BrokerEpoch = epoch;
    rec.u.ProducerIdsRecord.NextProducerId =
        *first + SAMSA_CONTROLLER_PRODUCER_ID_BLOCK;
    samsa_ctlbatch_add(b, &rec);
    return SAMSA_ERR_NONE;
}

/* broker_id's session clock, created at now.  @thread controller */
static ctl_session_t *
ctl_session(samsa_controller_t *ctrl, int32_t broker_id, int64_t now)
{
    size_t  i;

    for (i = 0; i < ctrl->nsessions; i++) {
        if (ctrl->sessions[i].broker_id == broker_id) {
            return &ctrl->sessions[i];
        }
    }
    if (ctrl->nsessions == ctrl->capsessions) {
        ctrl->capsessions = ctrl->capsessions ? ctrl->capsessions * 2 : 8;
        ctrl->sessions = samsa_realloc(ctrl->sessions, ctrl->capsessions
                                       * sizeof(*ctrl->sessions));
    }
    ctrl->sessions[ctrl->nsessions].broker_id = broker_id;
    ctrl->sessions[ctrl->nsessions].last_ms = now;
    return &ctrl->sessions[ctrl->nsessions++];
}

/* A new leader starts every session clock now (Kafka's activate(): the
 * heartbeat manager touches every registered broker).  @thread controller */
static void
ctl_sessions_start(samsa_controller_t *ctrl, int64_t now)
{
    size_t  i;

    if (atomic_exchange_explicit(&ctrl->reset_sessions, false,
                                 memory_order_acq_rel)) {
        for (i = 0; i < ctrl->nsessions; i++) {
            ctrl->sessions[i].last_ms = now;
        }
    }
}

/* Kafka's ClusterControlManager.registerBroker: a registration for an id
 * whose broker is registered with another incarnation and still has a
 * valid session (unfenced, heard from within broker.session.timeout.ms) is
 * refused with DUPLICATE_BROKER_REGISTRATION.  Either another process
 * runs with that node.id, or this one was killed and restarted before its
 * old session expired: it tries again (broker/lifecycle.c) and gets in
 * once the old session is fenced.  A broker that shut down cleanly was
 * fenced at the end of its controlled shutdown, so it registers at once.
 * @thread controller */
static samsa_err_t
ctl_check_duplicate(samsa_controller_t *ctrl, const samsa_image_t *img,
                    const samsa_controller_broker_reg_t *reg)
{
    const samsa_image_broker_t  *br;
    const ctl_session_t         *se;
    int64_t                      now = samsa_now_ms(), ago;
    int32_t                      timeout_ms;
    char                         old_id[SAMSA_UUID_STR_SIZE];
    char                         new_id[SAMSA_UUID_STR_SIZE];

    if (!CTL_CLUSTER(ctrl)) {
        return SAMSA_ERR_NONE;
    }
    br = samsa_image_broker_find(img, reg->broker_id);
    if (br == NULL || br->fenced
        || samsa_uuid_eq(br->incarnation_id, reg->incarnation_id)) {
        return SAMSA_ERR_NONE;
    }
    ctl_sessions_start(ctrl, now);
    se = ctl_session(ctrl, br->id, now);
    timeout_ms = samsa_config_kraft(ctrl->conf.broker_cfg)
                     ->broker_session_timeout_ms;
    ago = now - se->last_ms;
    samsa_image_id_str(br->incarnation_id, old_id);
    samsa_image_id_str(reg->incarnation_id, new_id);
    if (ago >= timeout_ms) {
        /* not fenced yet (the expiry check runs on a timer), but its
         * session is over: the new incarnation replaces it, as Kafka's */
        samsa_info("controller: broker %" PRId32 " (incarnation %s, broker "
                   "epoch %" PRId64 ") has not been heard from for %" PRId64
                   " ms (broker.session.timeout.ms %" PRId32 "): its session "
                   "expired, the registration of incarnation %s replaces it",
                   br->id, old_id, br->epoch, ago, timeout_ms, new_id);
        return SAMSA_ERR_NONE;
    }
    samsa_warn("controller: refusing the registration of broker %" PRId32
               " (incarnation %s): DUPLICATE_BROKER_REGISTRATION, broker %"
               PRId32 " is registered with incarnation %s (broker epoch %"
               PRId64 ") and its session is valid (heard from %" PRId64
               " ms ago, broker.session.timeout.ms %" PRId32 ")",
               reg->broker_id, new_id, br->id, old_id, br->epoch, ago,
               timeout_ms);
    return SAMSA_ERR_DUPLICATE_BROKER_REGISTRATION;
}

/* The active controller fences every unfenced broker whose session
 * expired (no heartbeat for broker.session.timeout.ms), one batch; a new
 * leader first starts every clock now.  @thread controller */
static void
ctl_fence_expired(samsa_controller_t *ctrl)
{
    const samsa_config_kraft_t  *k;
    const samsa_image_broker_t  *br;
    samsa_ctlbatch_t             b;
    samsa_image_t               *img;
    ctl_session_t               *se;
    int64_t                      next, now = samsa_now_ms();
    size_t                       i;

    if (!CTL_CLUSTER(ctrl) || ctrl->failed
        || !atomic_load_explicit(&ctrl->is_leader, memory_order_acquire)) {
        return;
    }
    ctl_sessions_start(ctrl, now);
    k = samsa_config_kraft(ctrl->conf.broker_cfg);
    img = ctl_img_get(ctrl, &next);
    ctl_batch_init(&b, ctrl, img, next);
    for (i = 0; i < samsa_image_broker_count(img); i++) {
        br = samsa_image_broker_at(img, i);
        se = ctl_session(ctrl, br->id, now);
        if (!br->fenced && now - se->last_ms >= k->broker_session_timeout_ms) {
            samsa_warn("controller: fencing broker %" PRId32 " (broker "
                       "epoch %" PRId64 "): no heartbeat for %" PRId64 " ms",
                       br->id, br->epoch, now - se->last_ms);
            samsa_ctlbrokers_fence(&b, br->id, br->epoch, 1);
        }
    }
    if (ctl_commit(ctrl, &b) != SAMSA_ERR_NONE) {
        samsa_warn("controller: fencing expired brokers did not commit");
    }
    samsa_ctlbatch_fini(&b);
    samsa_image_put(img);
}

/* Kafka's automatic leader balance (auto.leader.rebalance.enable, every
 * leader.imbalance.check.interval.seconds, KRaft's
 * maybeBalancePartitionLeaders): the active controller moves leadership
 * back to preferred replicas that are in their ISR and active, at most
 * CTL_BALANCE_MAX per batch, a batch per interval (the next at once
 * while the last was full).  @thread controller */
static void
ctl_balance_leaders(samsa_controller_t *ctrl)
{
    samsa_ctlbatch_t  b;
    samsa_image_t    *img;
    int64_t           next, now = samsa_now_ms(), every;
    size_t            n;

    if (ctrl->failed || ctrl->conf.broker_cfg == NULL
        || !samsa_config_bool(ctrl->conf.broker_cfg,
                              "auto.leader.rebalance.enable")
        || (CTL_CLUSTER(ctrl)
            && !atomic_load_explicit(&ctrl->is_leader,
                                     memory_order_acquire))) {
        ctrl->balance_ms = now;         /* a new leader waits an interval */
        return;
    }
    every = samsa_config_long(ctrl->conf.broker_cfg,
                             "leader.imbalance.check.interval.seconds")
            * 1000;
    if (now - ctrl->balance_ms < every && !ctrl->balance_more) {
        return;
    }
    ctrl->balance_ms = now;
    img = ctl_img_get(ctrl, &next);
    ctl_batch_init(&b, ctrl, img, next);
    n = samsa_ctlbrokers_balance_leaders(&b, CTL_BALANCE_MAX);
    ctrl->balance_more = n == CTL_BALANCE_MAX;
    if (n > 0) {
        if (ctl_commit(ctrl, &b) == SAMSA_ERR_NONE) {
            samsa_info("controller: moved the leadership of %zu partition(s) "
                       "back to their preferred replica "
                       "(auto.leader.rebalance.enable)", n);
        } else {
            samsa_warn("controller: the preferred leader elections did not "
                       "commit");
        }
    }
    samsa_ctlbatch_fini(&b);
    samsa_image_put(img);
}

/* Run one operation.  @thread controller */
static void
ctl_run(samsa_controller_t *ctrl, ctl_op_t *op)
{
    samsa_ctlbatch_t  b;
    samsa_image_t    *img;
    int64_t           next;
    samsa_err_t       err, check = SAMSA_ERR_NONE;

    if (ctrl->failed) {
        op->err = SAMSA_ERR__IO;
        return;
    }
    if (CTL_CLUSTER(ctrl)
        && !atomic_load_explicit(&ctrl->is_leader, memory_order_acquire)) {
        ctl_fail_not_controller(ctrl, op);
        return;
    }
    img = ctl_img_get(ctrl, &next);
    ctl_batch_init(&b, ctrl, img, next);
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
        /* set before the listeners started: the op's queue orders it */
        b.broker_check = ctrl->broker_check.fn != NULL ? &ctrl->broker_check
                                                       : NULL;
        samsa_ctlconfigs_alter(&b, op->req, op->n, op->incremental,
                               op->arena, op->results);
        break;
    case CTL_ALLOC_PRODUCER_IDS:
        check = ctl_alloc_producer_ids(&b, op->req, op->first);
        if (check != SAMSA_ERR_NONE) {
            op->err = check;        /* nothing to commit */
            samsa_ctlbatch_fini(&b);
            samsa_image_put(img);
            return;
        }
        break;
    case CTL_ALTER_CLIENT_QUOTAS:
        samsa_ctlquotas_alter(&b, op->req, op->n, op->arena, op->results);
        break;
    case CTL_ALTER_SCRAM:
        samsa_ctlscram_alter(&b, op->req, op->n, op->arena, op->results);
        break;
    case CTL_CREATE_ACLS:
        samsa_ctlacls_create(&b, op->req, op->n, op->arena, op->results);
        break;
    case CTL_DELETE_ACLS:
        samsa_ctlacls_delete(&b, op->req, op->n, op->arena, op->results);
        break;
    case CTL_REGISTER_BROKER:
        check = ctl_check_duplicate(ctrl, img, op->req);
        if (check != SAMSA_ERR_NONE) {
            op->err = check;        /* nothing to commit */
            samsa_ctlbatch_fini(&b);
            samsa_image_put(img);
            return;
        }
        samsa_ctlbrokers_register(&b, op->req, !CTL_CLUSTER(ctrl),
                                  op->first);
        ctl_session(ctrl, ((const samsa_controller_broker_reg_t *)
                           op->req)->broker_id, samsa_now_ms())->last_ms
            = samsa_now_ms();
        ctrl->sync_now = true;
        break;
    case CTL_BROKER_HEARTBEAT:
        samsa_ctlbrokers_heartbeat(&b, op->req, op->results);
        if (((samsa_controller_heartbeat_result_t *) op->results)->error
            == SAMSA_ERR_NONE) {
            ctl_session(ctrl, ((const samsa_controller_heartbeat_t *)
                               op->req)->broker_id, samsa_now_ms())->last_ms
                = samsa_now_ms();
        }
        break;
    case CTL_UNREGISTER_BROKER:
        samsa_ctlbrokers_unregister(&b, *(const int32_t *) op->req,
                                    op->results);
        ctrl->sync_now = true;
        break;
    case CTL_ALTER_PARTITION:
        check = samsa_ctlisr_alter(&b, op->broker_id, op->broker_epoch,
                                   op->req, op->n, op->arena, op->results);
        if (check != SAMSA_ERR_NONE) {
            op->err = check;        /* STALE_BROKER_EPOCH: no record */
            samsa_ctlbatch_fini(&b);
            samsa_image_put(img);
            return;
        }
        break;
    case CTL_ELECT_LEADERS:
        samsa_ctlbrokers_elect_leaders(&b, op->election, op->req, op->n,
                                       op->arena, op->results);
        break;
    case CTL_ALTER_REASSIGNMENTS:
        samsa_ctlreassign_alter(&b, op->req, op->n, op->arena, op->results);
        break;
    case CTL_WAKE:
        break;
    }
    if (b.overflow) {
        ctl_fail_too_large(op);
    } else if (!op->validate_only) {
        err = ctl_commit(ctrl, &b);
        if (err == SAMSA_ERR_NOT_CONTROLLER || err == SAMSA_ERR__STATE) {
            ctl_fail_not_controller(ctrl, op);  /* __STATE: it may still
                                                   commit, as Kafka's
                                                   NotController answer */
        } else {
            op->err = err;
        }
    }
    samsa_ctlbatch_fini(&b);
    samsa_image_put(img);
}

static void
ctl_done(ctl_op_t *op)
{
    pthread_mutex_lock(&op->lock);
    op->done = true;
    pthread_cond_signal(&op->cond);
    pthread_mutex_unlock(&op->lock);    /* after this op may be gone */
}

static void ctl_quorum_bootstrap(samsa_controller_t *ctrl);
static void ctl_sync_observers(samsa_controller_t *ctrl);

static void *
ctl_thread(void *arg)
{
    samsa_controller_t  *ctrl = arg;
    ctl_op_t            *op;

    samsa_thread_name_set("controller");
    while (!atomic_load_explicit(&ctrl->stop, memory_order_acquire)) {
        ctl_quorum_bootstrap(ctrl);
        op = samsa_queue_take(&ctrl->ops, CTL_POLL_MS);
        if (op != NULL && op != &ctrl->wake) {
            ctl_run(ctrl, op);
            ctl_done(op);
        }
        ctl_fence_expired(ctrl);
        ctl_balance_leaders(ctrl);
        ctl_sync_observers(ctrl);
    }
    while ((op = samsa_queue_take(&ctrl->ops, 0)) != NULL) {
        if (op != &ctrl->wake) {
            op->err = SAMSA_ERR__SHUTDOWN;
            ctl_done(op);
        }
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
samsa_controller_alter_scram(samsa_controller_t *ctrl,
                             const samsa_controller_scram_op_t *ops,
                             size_t n, samsa_arena_t *arena,
                             samsa_controller_result_t *results)
{
    ctl_op_t  op = {
        .kind = CTL_ALTER_SCRAM, .req = ops, .n = n, .arena = arena,
        .results = results,
    };

    return ctl_submit(ctrl, &op);
}

samsa_err_t
samsa_controller_create_acls(samsa_controller_t *ctrl, const samsa_acl_t *acls,
                             size_t n, samsa_arena_t *arena,
                             samsa_controller_result_t *results)
{
    ctl_op_t  op = { .kind = CTL_CREATE_ACLS, .req = acls, .n = n,
                     .arena = arena, .results = results };

    return ctl_submit(ctrl, &op);
}

samsa_err_t
samsa_controller_delete_acls(samsa_controller_t *ctrl,
                             const samsa_acl_filter_t *filters, size_t n,
                             samsa_arena_t *arena,
                             samsa_controller_acl_delete_result_t *results)
{
    ctl_op_t  op = { .kind = CTL_DELETE_ACLS, .req = filters, .n = n,
                     .arena = arena, .results = results };

    return ctl_submit(ctrl, &op);
}

samsa_err_t
samsa_controller_alloc_producer_ids(samsa_controller_t *ctrl, int64_t *first)
{
    /* no request: this node's own block, no broker epoch to check */
    return samsa_controller_allocate_producer_ids(ctrl, NULL, first);
}

samsa_err_t
samsa_controller_allocate_producer_ids(samsa_controller_t *ctrl,
                                       const samsa_controller_pid_req_t *req,
                                       int64_t *first)
{
    ctl_op_t  op = { .kind = CTL_ALLOC_PRODUCER_IDS, .req = req,
                     .first = first };

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

samsa_err_t
samsa_controller_broker_heartbeat(samsa_controller_t *ctrl,
                                  const samsa_controller_heartbeat_t *hb,
                                  samsa_controller_heartbeat_result_t *res)
{
    ctl_op_t  op = { .kind = CTL_BROKER_HEARTBEAT, .req = hb,
                     .results = res };

    res->error = SAMSA_ERR_NONE;
    res->caught_up = false;
    res->fenced = true;
    res->should_shutdown = false;
    return ctl_submit(ctrl, &op);
}

samsa_err_t
samsa_controller_alter_partition(samsa_controller_t *ctrl, int32_t broker_id,
                                 int64_t broker_epoch,
                                 const samsa_controller_isr_change_t *changes,
                                 size_t n, samsa_arena_t *arena,
                                 samsa_controller_isr_result_t *results)
{
    ctl_op_t  op = { .kind = CTL_ALTER_PARTITION, .req = changes, .n = n,
                     .arena = arena, .results = results,
                     .broker_id = broker_id, .broker_epoch = broker_epoch };
    size_t    i;

    for (i = 0; i < n; i++) {
        memset(&results[i], 0, sizeof(results[i]));
        results[i].error = SAMSA_ERR_UNKNOWN_SERVER_ERROR;
        results[i].leader_id = -1;
    }
    return ctl_submit(ctrl, &op);
}

samsa_err_t
samsa_controller_elect_leaders(samsa_controller_t *ctrl, int8_t type,
                               const samsa_controller_elect_t *parts,
                               size_t n, samsa_arena_t *arena,
                               samsa_controller_elect_result_t *results)
{
    ctl_op_t  op = { .kind = CTL_ELECT_LEADERS, .req = parts, .n = n,
                     .arena = arena, .results = results, .election = type };
    size_t    i;

    for (i = 0; i < n; i++) {
        results[i].error = SAMSA_ERR_UNKNOWN_SERVER_ERROR;
        results[i].message = NULL;
    }
    return ctl_submit(ctrl, &op);
}

void
samsa_controller_results_failed(samsa_controller_result_t *results, size_t n,
                                samsa_err_t err)
{
    size_t  i;

    for (i = 0; i < n && err != SAMSA_ERR_NONE; i++) {
        if (err != SAMSA_ERR_NOT_CONTROLLER
            || results[i].error == SAMSA_ERR_NONE) {
            results[i].error = err == SAMSA_ERR__SHUTDOWN
                                   ? SAMSA_ERR_NOT_CONTROLLER : err;
            results[i].message = NULL;
        }
        if (results[i].error < 0) {     /* a local failure: Kafka's */
            results[i].error = SAMSA_ERR_UNKNOWN_SERVER_ERROR;
        }
    }
}

samsa_err_t
samsa_controller_alter_reassignments(samsa_controller_t *ctrl,
                                     const samsa_controller_reassign_t *parts,
                                     size_t n, samsa_arena_t *arena,
                                     samsa_controller_result_t *results)
{
    ctl_op_t  op = { .kind = CTL_ALTER_REASSIGNMENTS, .req = parts, .n = n,
                     .arena = arena, .results = results };
    size_t    i;

    for (i = 0; i < n; i++) {
        results[i].error = SAMSA_ERR_UNKNOWN_SERVER_ERROR;
        results[i].message = NULL;
    }
    return ctl_submit(ctrl, &op);
}

samsa_err_t
samsa_controller_unregister_broker(samsa_controller_t *ctrl,
                                   int32_t broker_id, samsa_err_t *error)
{
    ctl_op_t  op = { .kind = CTL_UNREGISTER_BROKER, .req = &broker_id,
                     .results = error };

    *error = SAMSA_ERR_NONE;
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

/* Kafka's bootstrap records: the metadata.version feature level, then
 * the credentials `format --add-scram` left in bootstrap.scram. */
static void
ctl_bootstrap_records(samsa_controller_t *ctrl, samsa_ctlbatch_t *b)
{
    samsa_MetadataRecords_any_t       rec;
    samsa_UserScramCredentialRecord_t *u;
    const samsa_scram_cred_t          *c;
    size_t                             i, hl;

    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_FeatureLevelRecord;
    samsa_FeatureLevelRecord_init(&rec.u.FeatureLevelRecord);
    rec.u.FeatureLevelRecord.Name =
        samsa_slice_cstr(SAMSA_META_METADATA_VERSION_NAME);
    rec.u.FeatureLevelRecord.FeatureLevel = SAMSA_META_METADATA_VERSION;
    samsa_ctlbatch_add(b, &rec);
    for (i = 0; i < ctrl->nboot_scram; i++) {
        c = &ctrl->boot_scram[i].cred;
        hl = samsa_scram_hash_len(c->mech);
        memset(&rec, 0, sizeof(rec));
        rec.type = SAMSA_MetadataRecords_UserScramCredentialRecord;
        u = &rec.u.UserScramCredentialRecord;
        samsa_UserScramCredentialRecord_init(u);
        u->Name = samsa_slice_cstr(ctrl->boot_scram[i].name);
        u->Mechanism = (int8_t) c->mech;
        u->Salt = (samsa_slice_t) { (const char *) c->salt, c->salt_len };
        u->StoredKey = (samsa_slice_t) { (const char *) c->stored_key, hl };
        u->ServerKey = (samsa_slice_t) { (const char *) c->server_key, hl };
        u->Iterations = c->iterations;
        samsa_ctlbatch_add(b, &rec);
        samsa_info("metadata log bootstrap: %s credential of user %s "
                   "(format --add-scram)", samsa_scram_mech_name(c->mech),
                   ctrl->boot_scram[i].name);
    }
}

/* Cluster mode: the first leader of a cluster writes the bootstrap batch
 * (a later leader finds metadata.version in the image it applied before
 * is_self, and writes nothing).  @thread controller */
static void
ctl_quorum_bootstrap(samsa_controller_t *ctrl)
{
    samsa_ctlbatch_t  b;
    samsa_image_t    *img;
    int64_t           next;
    samsa_err_t       err;

    if (!CTL_CLUSTER(ctrl)
        || !atomic_exchange_explicit(&ctrl->need_bootstrap, false,
                                     memory_order_acq_rel)
        || !atomic_load_explicit(&ctrl->is_leader, memory_order_acquire)) {
        return;
    }
    img = ctl_img_get(ctrl, &next);
    if (samsa_image_feature_level(img, SAMSA_META_METADATA_VERSION_NAME)
        == 0) {
        ctl_batch_init(&b, ctrl, img, next);
        ctl_bootstrap_records(ctrl, &b);
        err = ctl_quorum_write(ctrl, &b);
        if (err == SAMSA_ERR_NONE) {
            samsa_info("metadata quorum: bootstrapped with %s=%d",
                       SAMSA_META_METADATA_VERSION_NAME,
                       SAMSA_META_METADATA_VERSION);
        } else if (err == SAMSA_ERR__SHUTDOWN
                   && !atomic_load_explicit(&ctrl->stop,
                                            memory_order_acquire)) {
            /* leader before open had stored the quorum: again at the
             * next turn */
            atomic_store_explicit(&ctrl->need_bootstrap, true,
                                  memory_order_release);
        }
        samsa_ctlbatch_fini(&b);
    }
    samsa_image_put(img);
}

/* The commit callback: replay one committed entry (u32 length, framed
 * record, per record) into the applied image and publish the result.  An
 * entry that does not decode is logged and skipped whole (every member
 * skips it alike).  @thread quorum */
static void
ctl_on_commit(void *ctx, const uint8_t *data, size_t len, int64_t offset,
              uint32_t count)
{
    samsa_controller_t   *ctrl = ctx;
    samsa_image_delta_t  *delta;
    samsa_image_t        *img, *next_img = NULL;
    samsa_err_t           err;
    int64_t               next;
    char                  errstr[512] = "";

    img = ctl_img_get(ctrl, &next);
    delta = samsa_image_delta_new(img);
    err = samsa_ctlsnap_replay(delta, data, len, count, offset, false,
                               errstr, sizeof(errstr));
    if (err == SAMSA_ERR_NONE) {
        next_img = samsa_image_delta_apply(delta);
    } else {
        samsa_error("metadata quorum: entry at offset %" PRId64 " (%u "
                    "record(s)) skipped: %s", offset, (unsigned) count,
                    errstr);
    }
    samsa_image_delta_free(delta);
    if (next_img != NULL) {
        ctl_img_set(ctrl, samsa_image_ref(next_img), offset + count);
        samsa_meta_publish(ctrl->conf.meta, next_img);
    } else {
        ctl_img_set(ctrl, samsa_image_ref(img), offset + count);
    }
    samsa_image_put(img);
}

/* A snapshot: the applied image as records (ctlsnap.h).  @thread quorum */
static samsa_err_t
ctl_snapshot_take(void *ctx, int64_t next_offset, uint8_t **data,
                  size_t *len)
{
    samsa_controller_t  *ctrl = ctx;
    samsa_image_t       *img;
    samsa_buf_t          buf;
    int64_t              next;
    uint32_t             count;

    img = ctl_img_get(ctrl, &next);
    if (next != next_offset) {
        samsa_image_put(img);
        return SAMSA_ERR__STATE;        /* cannot happen: commits and
                                           snapshots share the thread */
    }
    samsa_buf_init(&buf, 4096);
    samsa_ctlsnap_write(img, &buf, &count);
    samsa_image_put(img);
    *data = samsa_buf_take(&buf, len);
    samsa_info("metadata quorum: snapshot of %u record(s) at offset %" PRId64,
               (unsigned) count, next_offset);
    return SAMSA_ERR_NONE;
}

/* Replace the image with a snapshot's.  @thread quorum */
static void
ctl_snapshot_restore(void *ctx, const uint8_t *data, size_t len,
                     int64_t next_offset)
{
    samsa_controller_t   *ctrl = ctx;
    samsa_image_t        *empty = samsa_image_new_empty(), *img;
    samsa_image_delta_t  *delta = samsa_image_delta_new(empty);
    char                  errstr[512] = "";

    if (samsa_ctlsnap_replay(delta, data, len, UINT32_MAX, next_offset - 1,
                             true, errstr, sizeof(errstr))
        != SAMSA_ERR_NONE) {
        samsa_error("metadata quorum: snapshot at offset %" PRId64 " does "
                    "not load: %s", next_offset, errstr);
    }
    img = samsa_image_delta_apply(delta);
    samsa_image_delta_free(delta);
    samsa_image_put(empty);
    ctl_img_set(ctrl, samsa_image_ref(img), next_offset);
    samsa_info("metadata quorum: snapshot loaded at offset %" PRId64 ": %zu "
               "topic(s)", next_offset, samsa_image_topic_count(img));
    samsa_meta_publish(ctrl->conf.meta, img);
}

/* @thread quorum */
static void
ctl_on_leader(void *ctx, int32_t leader, int64_t epoch, bool is_self)
{
    samsa_controller_t  *ctrl = ctx;

    atomic_store_explicit(&ctrl->active_id, leader, memory_order_release);
    atomic_store_explicit(&ctrl->is_leader, is_self, memory_order_release);
    samsa_info("metadata quorum: leader %d, epoch %" PRId64 "%s",
               (int) leader, epoch, is_self ? " (this node: the active "
               "controller)" : "");
    if (is_self) {
        atomic_store_explicit(&ctrl->reset_sessions, true,
                              memory_order_release);
        atomic_store_explicit(&ctrl->need_bootstrap, true,
                              memory_order_release);
        (void) samsa_queue_offer(&ctrl->ops, &ctrl->wake);
    }
}

/* ---- cluster mode: observers */

/* @thread quorum */
static void
ctl_member_changed(void *ctx, samsa_err_t err)
{
    samsa_controller_t  *ctrl = ctx;

    if (err != SAMSA_ERR_NONE && err != SAMSA_ERR__SHUTDOWN) {
        samsa_info("metadata quorum: observer change: %s (tried again)",
                   samsa_err_name(err));
    }
    atomic_store_explicit(&ctrl->member_change, false, memory_order_release);
}

static bool
ctl_desc_has(const samsa_quorum_member_t *m, size_t n, int32_t id)
{
    for (size_t i = 0; i < n; i++) {
        if (m[i].node_id == id) {
            return true;
        }
    }
    return false;
}

/* The active controller keeps the quorum's observers equal to the
 * registered brokers that are not voters (broker-only nodes): a broker
 * whose registration committed and that is not in the raft configuration
 * is added as a standby (it replicates and applies the log, does not
 * vote; it has no CONTROLLER listener, so its raft address is a port-0
 * label and the leader reaches it through the socket it dials in,
 * meta/quorum_transport.h); an observer whose broker was unregistered is
 * removed.  One change at a time (libraft takes one), looked at after a
 * (un)registration and every CTL_POLL_MS, so a failed or refused change
 * is tried again and a new active controller finishes what the old one
 * left.  @thread controller */
static void
ctl_sync_observers(samsa_controller_t *ctrl)
{
    const samsa_image_broker_t  *br;
    samsa_quorum_desc_t         *d;
    samsa_image_t               *img;
    samsa_quorum_t              *q;
    char                         label[32];
    int64_t                      next, now = samsa_now_ms();
    samsa_err_t                  err = SAMSA_ERR_NONE;
    bool                         pushed = false;
    size_t                       i;

    if (!CTL_CLUSTER(ctrl) || ctrl->failed
        || !atomic_load_explicit(&ctrl->is_leader, memory_order_acquire)
        || atomic_load_explicit(&ctrl->member_change, memory_order_acquire)
        || (!ctrl->sync_now && now - ctrl->sync_ms < CTL_POLL_MS)) {
        return;
    }
    ctrl->sync_now = false;
    ctrl->sync_ms = now;
    if ((q = samsa_controller_quorum(ctrl)) == NULL) {
        return;
    }
    if (ctrl->qdesc == NULL) {
        ctrl->qdesc = samsa_calloc(1, sizeof(*ctrl->qdesc));
    }
    d = ctrl->qdesc;
    if (samsa_quorum_describe(q, d, 1000) != SAMSA_ERR_NONE || !d->is_leader) {
        return;
    }
    img = ctl_img_get(ctrl, &next);
    atomic_store_explicit(&ctrl->member_change, true, memory_order_release);
    for (i = 0; !pushed && i < samsa_image_broker_count(img); i++) {
        br = samsa_image_broker_at(img, i);
        if (ctl_desc_has(d->voters, d->n_voters, br->id)
            || ctl_desc_has(d->observers, d->n_observers, br->id)) {
            continue;
        }
        snprintf(label, sizeof(label), "broker-%d", (int) br->id);
        samsa_info("metadata quorum: adding broker %d as an observer",
                   (int) br->id);
        err = samsa_quorum_add_observer(q, br->id, label, 0,
                                        ctl_member_changed, ctrl);
        pushed = true;
    }
    for (i = 0; !pushed && i < d->n_observers; i++) {
        if (samsa_image_broker_find(img, d->observers[i].node_id) != NULL) {
            continue;
        }
        samsa_info("metadata quorum: removing observer %d (its broker is "
                   "not registered)", (int) d->observers[i].node_id);
        err = samsa_quorum_remove_voter(q, d->observers[i].node_id,
                                        ctl_member_changed, ctrl);
        pushed = true;
    }
    samsa_image_put(img);
    if (!pushed || err != SAMSA_ERR_NONE) {
        atomic_store_explicit(&ctrl->member_change, false,
                              memory_order_release);
    }
}

/* ---- cluster mode: voter changes (KIP-853) */

/* One AddRaftVoter / RemoveRaftVoter waiting for its change: the handler
 * thread waits, the quorum thread's done callback wakes it; the last of
 * the two to let go frees it. */
typedef struct ctl_voter_wait {
    samsa_controller_t  *ctrl;
    pthread_mutex_t      mu;
    pthread_cond_t       cond;
    bool                 done;      /* [mu] */
    samsa_err_t          err;       /* [mu] */
    int                  refs;      /* [mu] */
} ctl_voter_wait_t;

static void
ctl_voter_wait_put(ctl_voter_wait_t *w)
{
    bool  last;

    pthread_mutex_lock(&w->mu);
    last = --w->refs == 0;
    pthread_mutex_unlock(&w->mu);
    if (last) {
        pthread_mutex_destroy(&w->mu);
        pthread_cond_destroy(&w->cond);
        samsa_free(w);
    }
}

/* @thread quorum */
static void
ctl_voter_changed(void *ctx, samsa_err_t err)
{
    ctl_voter_wait_t  *w = ctx;

    atomic_store_explicit(&w->ctrl->member_change, false,
                          memory_order_release);
    pthread_mutex_lock(&w->mu);
    w->done = true;
    w->err = err;
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->mu);
    ctl_voter_wait_put(w);
}

static const samsa_quorum_member_t *
ctl_desc_find(const samsa_quorum_member_t *m, size_t n, int32_t id)
{
    for (size_t i = 0; i < n; i++) {
        if (m[i].node_id == id) {
            return &m[i];
        }
    }
    return NULL;
}

/* The checks Kafka's leader makes before a voter change; false with
 * *error and *msg set when the change cannot be made. */
static bool
ctl_voter_check(const samsa_quorum_desc_t *d, bool add, int32_t voter_id,
                const char *dir_id, int16_t *error, const char **msg)
{
    const samsa_quorum_member_t  *v;

    v = ctl_desc_find(d->voters, d->n_voters, voter_id);
    if (add) {
        if (v != NULL) {
            *error = SAMSA_ERR_DUPLICATE_VOTER;
            *msg = "The voter id is already part of the set of voters";
            return false;
        }
        if (ctl_desc_find(d->observers, d->n_observers, voter_id) != NULL) {
            *error = SAMSA_ERR_INVALID_REQUEST;
            *msg = "The node is a member of the quorum as an observer (a "
                   "broker-only node); it cannot become a voter";
            return false;
        }
        return true;
    }
    if (v == NULL) {
        *error = SAMSA_ERR_VOTER_NOT_FOUND;
        *msg = "The voter id is not part of the set of voters";
        return false;
    }
    if (dir_id != NULL && v->dir_id[0] != '\0'
        && strcmp(dir_id, v->dir_id) != 0) {
        *error = SAMSA_ERR_VOTER_NOT_FOUND;
        *msg = "The voter's directory id is not the one given: no voter "
               "with this id and directory id is part of the set of voters";
        return false;
    }
    if (d->n_voters == 1) {
        *error = SAMSA_ERR_INVALID_REQUEST;
        *msg = "Cannot remove the only voter of the quorum";
        return false;
    }
    return true;
}

void
samsa_controller_change_voter(samsa_controller_t *ctrl, bool add,
                              int32_t voter_id, const char *dir_id,
                              const char *host, uint16_t port, int timeout_ms,
                              int16_t *error, const char **msg)
{
    samsa_quorum_desc_t  *d;
    samsa_quorum_t       *q = samsa_controller_quorum(ctrl);
    ctl_voter_wait_t     *w;
    struct timespec       until;
    samsa_err_t           err;
    bool                  expect = false, done;

    *error = SAMSA_ERR_NONE;
    *msg = NULL;
    if (!CTL_CLUSTER(ctrl) || q == NULL) {
        *error = SAMSA_ERR_NOT_LEADER_OR_FOLLOWER;
        return;
    }
    d = samsa_calloc(1, sizeof(*d));
    if (samsa_quorum_describe(q, d, 2000) != SAMSA_ERR_NONE
        || !d->is_leader) {
        *error = SAMSA_ERR_NOT_LEADER_OR_FOLLOWER;
        samsa_free(d);
        return;
    }
    if (!ctl_voter_check(d, add, voter_id, dir_id, error, msg)) {
        samsa_free(d);
        return;
    }
    samsa_free(d);
    if (!atomic_compare_exchange_strong_explicit(&ctrl->member_change,
                                                 &expect, true,
                                                 memory_order_acq_rel,
                                                 memory_order_acquire)) {
        *error = SAMSA_ERR_REQUEST_TIMED_OUT;
        *msg = "Another change of the quorum's members is in progress";
        return;
    }
    w = samsa_calloc(1, sizeof(*w));
    w->ctrl = ctrl;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cond, NULL);
    w->refs = 2;
    samsa_info("metadata quorum: %s voter %d%s%s (%s)",
               add ? "adding" : "removing", (int) voter_id,
               add ? " at " : "", add ? host : "",
               dir_id != NULL ? dir_id : "no directory id");
    err = add ? samsa_quorum_add_voter_dir(q, voter_id, host, port, dir_id,
                                           ctl_voter_changed, w)
              : samsa_quorum_remove_voter(q, voter_id, ctl_voter_changed, w);
    if (err != SAMSA_ERR_NONE) {
        atomic_store_explicit(&ctrl->member_change, false,
                              memory_order_release);
        w->refs = 1;
        ctl_voter_wait_put(w);
        *error = SAMSA_ERR_NOT_LEADER_OR_FOLLOWER;
        return;
    }
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (long) (timeout_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&w->mu);
    while (!w->done
           && pthread_cond_timedwait(&w->cond, &w->mu, &until) == 0) {
    }
    done = w->done;
    err = w->err;
    pthread_mutex_unlock(&w->mu);
    ctl_voter_wait_put(w);
    if (!done) {
        *error = SAMSA_ERR_REQUEST_TIMED_OUT;
        *msg = "The change was not committed within the request's timeout "
               "(it may still be)";
        return;
    }
    switch (err) {
    case SAMSA_ERR_NONE:
        samsa_info("metadata quorum: voter %d %s", (int) voter_id,
                   add ? "added" : "removed");
        break;
    case SAMSA_ERR_NOT_CONTROLLER:
    case SAMSA_ERR__SHUTDOWN:
        *error = SAMSA_ERR_NOT_LEADER_OR_FOLLOWER;
        break;
    case SAMSA_ERR__STATE:
        *error = SAMSA_ERR_REQUEST_TIMED_OUT;
        *msg = "Another change of the quorum's members is in progress, or "
               "leadership changed";
        break;
    case SAMSA_ERR__EXISTS:
        *error = SAMSA_ERR_DUPLICATE_VOTER;
        *msg = "The voter id or its address is already in the quorum";
        break;
    case SAMSA_ERR__NOENT:
        *error = SAMSA_ERR_VOTER_NOT_FOUND;
        *msg = "The voter id is not part of the set of voters";
        break;
    case SAMSA_ERR__TIMED_OUT:
        *error = SAMSA_ERR_REQUEST_TIMED_OUT;
        *msg = "The new voter did not catch up with the leader's log (is it "
               "running, and is its CONTROLLER endpoint reachable?)";
        break;
    default:
        *error = SAMSA_ERR_UNKNOWN_SERVER_ERROR;
        *msg = samsa_err_name(err);
        break;
    }
}

/* <metadata_dir>/__raft_metadata, created if missing. */
static samsa_err_t
ctl_raft_dir(const samsa_controller_t *ctrl, char *out, size_t size,
             char *errstr, size_t errstr_size)
{
    if ((size_t) snprintf(out, size, "%s/__raft_metadata",
                          ctrl->conf.metadata_dir) >= size) {
        snprintf(errstr, errstr_size, "metadata.log.dir %s: path too long",
                 ctrl->conf.metadata_dir);
        return SAMSA_ERR__CONFIG;
    }
    if (mkdir(out, 0755) != 0 && errno != EEXIST) {
        snprintf(errstr, errstr_size, "cannot create %s: %s", out,
                 strerror(errno));
        return SAMSA_ERR__IO;
    }
    return SAMSA_ERR_NONE;
}

/* Entries between snapshots for a byte threshold. */
static uint32_t
ctl_snapshot_entries(int64_t bytes)
{
    int64_t  n = bytes / 1024;

    return n < 1 ? 1 : n > (int64_t) UINT32_MAX / 2 ? UINT32_MAX / 2
                                                     : (uint32_t) n;
}

/* host as an IP literal (a name resolved now, IPv4 first), for the
 * reverse dials of an observer. */
static samsa_err_t
ctl_numeric_host(const char *host, char out[INET6_ADDRSTRLEN], char *errstr,
                 size_t errstr_size)
{
    struct addrinfo   hints, *res = NULL, *pick;
    const void       *a;
    int               rc;

    memset(&hints, 0, sizeof(hints));
    hints.ai_socktype = SOCK_STREAM;
    if ((rc = getaddrinfo(host, NULL, &hints, &res)) != 0 || res == NULL) {
        snprintf(errstr, errstr_size, "controller.quorum.voters: cannot "
                 "resolve '%s': %s", host, gai_strerror(rc));
        return SAMSA_ERR__CONFIG;
    }
    for (pick = res; pick != NULL && pick->ai_family != AF_INET;
         pick = pick->ai_next) {
    }
    pick = pick != NULL ? pick : res;
    a = pick->ai_family == AF_INET
        ? (const void *) &((const struct sockaddr_in *) pick->ai_addr)->sin_addr
        : (const void *) &((const struct sockaddr_in6 *)
                           pick->ai_addr)->sin6_addr;
    if (inet_ntop(pick->ai_family, a, out, INET6_ADDRSTRLEN) == NULL) {
        freeaddrinfo(res);
        snprintf(errstr, errstr_size, "controller.quorum.voters: '%s' "
                 "resolves to no usable address", host);
        return SAMSA_ERR__CONFIG;
    }
    freeaddrinfo(res);
    return SAMSA_ERR_NONE;
}

/* Cluster mode: open the quorum of broker_cfg's KRaft settings. */
static samsa_err_t
ctl_quorum_open(samsa_controller_t *ctrl, char *errstr, size_t errstr_size)
{
    const samsa_config_kraft_t  *k = samsa_config_kraft(ctrl->conf.broker_cfg);
    samsa_quorum_voter_t        *voters;
    samsa_quorum_conf_t          qc;
    samsa_quorum_t              *q = NULL;
    samsa_err_t                  err;
    char                         dir[4096];
    char                       (*hosts)[INET6_ADDRSTRLEN];
    bool                         is_voter, reverse;
    size_t                       i;

    err = ctl_raft_dir(ctrl, dir, sizeof(dir), errstr, errstr_size);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    is_voter = samsa_config_kraft_is_voter(k, ctrl->conf.node_id);
    /* a broker-only node has no CONTROLLER listener: it dials the voters
     * (reverse dial, which wants IP addresses) */
    reverse = !is_voter && !ctrl->conf.broker_cfg->role_controller;
    voters = samsa_calloc(k->nvoters + 1, sizeof(*voters));
    hosts = samsa_calloc(k->nvoters + 1, sizeof(*hosts));
    for (i = 0; i < k->nvoters; i++) {
        voters[i].node_id = k->voters[i].id;
        voters[i].host = k->voters[i].addr.host;
        voters[i].port = (uint16_t) k->voters[i].addr.port;
        voters[i].dir_id = k->voters[i].dir_id;
        if (reverse) {
            err = ctl_numeric_host(k->voters[i].addr.host, hosts[i],
                                   errstr, errstr_size);
            if (err != SAMSA_ERR_NONE) {
                samsa_free(voters);
                samsa_free(hosts);
                return err;
            }
            voters[i].host = hosts[i];
        }
    }
    memset(&qc, 0, sizeof(qc));
    qc.node_id = ctrl->conf.node_id;
    qc.is_voter = is_voter;
    qc.reverse_dial = reverse;
    /* a controller that is no voter yet (a dynamic quorum's
     * --no-initial-controllers): its own CONTROLLER address, which
     * AddRaftVoter will name */
    for (i = 0; !is_voter && i < ctrl->conf.broker_cfg->nlisteners; i++) {
        const samsa_listener_t  *l = &ctrl->conf.broker_cfg->listeners[i];

        if (l->is_controller && qc.host == NULL) {
            qc.host = l->host[0] != '\0' ? l->host : "127.0.0.1";
            qc.port = (uint16_t) l->port;
        }
    }
    qc.voters = voters;
    qc.n_voters = k->nvoters;
    qc.dir = dir;
    qc.cluster_id = ctrl->conf.cluster_id;
    qc.election_timeout_ms = k->election_timeout_ms > 0
                             ? (uint32_t) k->election_timeout_ms : 0;
    /* metadata.log.max.record.bytes.between.snapshots: libraft counts
     * entries, so an entry (one controller batch) counts as 1 KiB; as
     * many entries (at least CTL_SNAPSHOT_TRAILING_MIN) stay behind a
     * snapshot for standbys catching up.  The floor matters: a standby
     * that has just installed a snapshot must find the entries after it
     * in the leader's log even if the leader took newer snapshots
     * meanwhile (with libraft 0.15 such a standby was seen to stall when
     * they were gone) */
    qc.snapshot_threshold = ctl_snapshot_entries(
        k->max_record_bytes_between_snapshots);
    qc.snapshot_trailing = qc.snapshot_threshold > CTL_SNAPSHOT_TRAILING_MIN
                           ? qc.snapshot_threshold
                           : CTL_SNAPSHOT_TRAILING_MIN;
    qc.snapshot_take = ctl_snapshot_take;
    qc.snapshot_restore = ctl_snapshot_restore;
    qc.commit = ctl_on_commit;
    qc.leader_change = ctl_on_leader;
    qc.ctx = ctrl;
    err = samsa_quorum_open(&q, &qc, errstr, errstr_size);
    samsa_free(voters);
    samsa_free(hosts);
    if (err == SAMSA_ERR_NONE) {
        pthread_mutex_lock(&ctrl->q_lock);
        ctrl->quorum = q;
        pthread_mutex_unlock(&ctrl->q_lock);
        samsa_info("metadata quorum: node %d %s %zu voter(s), raft log in "
                   "%s", (int) ctrl->conf.node_id,
                   is_voter ? "of" : "(an observer) following", k->nvoters,
                   dir);
    }
    return err;
}

int32_t
samsa_controller_active_id(samsa_controller_t *ctrl)
{
    if (ctrl->conf.cluster_id == NULL) {
        return ctrl->conf.node_id;
    }
    return atomic_load_explicit(&ctrl->active_id, memory_order_acquire);
}

struct samsa_quorum *
samsa_controller_quorum(samsa_controller_t *ctrl)
{
    samsa_quorum_t  *q;

    pthread_mutex_lock(&ctrl->q_lock);
    q = ctrl->quorum;
    pthread_mutex_unlock(&ctrl->q_lock);
    return q;
}

/* A new metadata log starts with Kafka's bootstrap records: the
 * metadata.version feature level. */
static samsa_err_t
ctl_bootstrap(samsa_controller_t *ctrl, char *errstr, size_t errstr_size)
{
    samsa_ctlbatch_t             b;
    samsa_err_t                  err = SAMSA_ERR_NONE;

    ctl_batch_init(&b, ctrl, ctrl->img, 0);
    ctl_bootstrap_records(ctrl, &b);
    if (samsa_mlog_append(ctrl->mlog, b.data.data, b.lens, b.n, errstr,
                          errstr_size) != SAMSA_ERR_NONE) {
        err = SAMSA_ERR__IO;
    } else {
        ctl_img_set(ctrl, samsa_image_delta_apply(b.delta), 0);
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
        ctl_img_set(ctrl, samsa_image_delta_apply(delta), 0);
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
    atomic_init(&ctrl->active_id, -1);
    atomic_init(&ctrl->is_leader, false);
    atomic_init(&ctrl->need_bootstrap, false);
    ctrl->wake.kind = CTL_WAKE;
    ctrl->balance_ms = samsa_now_ms();
    pthread_mutex_init(&ctrl->img_lock, NULL);
    pthread_mutex_init(&ctrl->q_lock, NULL);
    samsa_queue_init(&ctrl->ops, CTL_QUEUE_SIZE);
    err = samsa_bootscram_read(conf->metadata_dir, &ctrl->boot_scram,
                               &ctrl->nboot_scram, errstr, errstr_size);
    if (err != SAMSA_ERR_NONE && err != SAMSA_ERR__NOENT) {
        goto out_close;
    }
    if (conf->cluster_id != NULL) {
        /* every image comes from the quorum's committed entries */
        ctl_img_set(ctrl, samsa_image_new_empty(), 0);
        samsa_meta_publish(conf->meta, samsa_image_ref(ctrl->img));
        goto start;
    }
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
start:
    rc = pthread_create(&ctrl->thread, NULL, ctl_thread, ctrl);
    if (rc != 0) {
        snprintf(errstr, errstr_size, "cannot start the controller thread: "
                 "%s", strerror(rc));
        err = SAMSA_ERR__IO;
        goto out_close;
    }
    ctrl->started = true;
    if (conf->cluster_id != NULL) {
        err = ctl_quorum_open(ctrl, errstr, errstr_size);
        if (err != SAMSA_ERR_NONE) {
            goto out_close;
        }
    }
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
    /* the quorum first: an append the controller thread waits on fails
     * with __SHUTDOWN, and no commit publishes after this */
    pthread_mutex_lock(&ctrl->q_lock);
    samsa_quorum_close(ctrl->quorum);
    ctrl->quorum = NULL;
    pthread_mutex_unlock(&ctrl->q_lock);
    if (ctrl->started) {
        pthread_join(ctrl->thread, NULL);
    }
    while ((op = samsa_queue_take(&ctrl->ops, 0)) != NULL) {
        if (op != &ctrl->wake) {
            op->err = SAMSA_ERR__SHUTDOWN;  /* queued after the thread's
                                               last look */
            ctl_done(op);
        }
    }
    samsa_queue_fini(&ctrl->ops);
    samsa_mlog_close(ctrl->mlog);
    samsa_image_put(ctrl->img);
    pthread_mutex_destroy(&ctrl->q_lock);
    pthread_mutex_destroy(&ctrl->img_lock);
    samsa_free(ctrl->sessions);
    samsa_free(ctrl->qdesc);
    samsa_bootscram_free(ctrl->boot_scram, ctrl->nboot_scram);
    samsa_free(ctrl);
}

void
samsa_controller_set_broker_check(samsa_controller_t *ctrl,
                                  const samsa_brokercfg_check_t *check)
{
    ctrl->broker_check = *check;
}
