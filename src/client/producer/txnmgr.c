/*
 * client/producer/txnmgr.c - the transaction manager (see txnmgr.h).
 * Threads: fields marked [lock] under tm->lock (app threads and sender);
 * [sender] the sender thread's; [const] after new.
 */
#include "client/producer/txnmgr.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "proto/gen/AddOffsetsToTxn.h"
#include "proto/gen/AddPartitionsToTxn.h"
#include "proto/gen/EndTxn.h"
#include "proto/gen/FindCoordinator.h"
#include "proto/gen/InitProducerId.h"
#include "proto/gen/TxnOffsetCommit.h"
#include "proto/gen/apis.h"
#include "util/alloc.h"
#include "util/arena.h"
#include "util/diag.h"
#include "util/time.h"
#include "util/locked.h"

typedef enum txn_op {
    TXN_OP_NONE = 0,
    TXN_OP_INIT,
    TXN_OP_OFFSETS,
    TXN_OP_COMMIT,
    TXN_OP_ABORT,
} txn_op_t;

/* What a coordinator request in flight is. */
typedef enum txn_req {
    TXN_REQ_FIND_TXN = 1,
    TXN_REQ_FIND_GROUP,
    TXN_REQ_INIT_PID,
    TXN_REQ_ADD_PARTS,
    TXN_REQ_ADD_OFFSETS,
    TXN_REQ_OFFSET_COMMIT,
    TXN_REQ_END,
} txn_req_t;

struct samsa_txnmgr {
    const samsa_pconf_t  *pc;           /* [const] */
    samsa_accum_t        *accum;        /* [const] */
    void                (*wake)(void *);
    void                 *wake_ctx;     /* [const] */
    pthread_mutex_t       lock;
    pthread_cond_t        cond;         /* state, op_done, sends changed */
    samsa_txn_state_t     state;        /* [lock] */
    samsa_err_t           last_err;     /* [lock] abortable or fatal error */
    int32_t               sends;        /* [lock] send()s appending now */
    txn_op_t              op;           /* [lock] posted operation */
    bool                  op_done;      /* [lock] */
    samsa_err_t           op_err;       /* [lock] */
    /* the OFFSETS operation's arguments [lock; read by the sender while
     * the operation is pending, which the app does not change] */
    char                 *group_id;
    char                 *member_id;
    char                 *instance_id;
    int32_t               generation;
    samsa_txn_offset_t   *offsets;      /* topic, metadata strdup'ed */
    size_t                noffsets;
    /* sender thread only */
    int64_t               pid;          /* [sender] */
    int16_t               epoch;        /* [sender] */
    int32_t               coord;        /* [sender] txn coordinator node */
    int32_t               gcoord;       /* [sender] group coordinator */
    bool                  req_inflight; /* [sender] */
    int64_t               retry_at;     /* [sender] */
    int32_t               attempts;     /* [sender] of the current step */
    int32_t               step;         /* [sender] of the current op */
    bool                  started;      /* [sender] coordinator has a txn */
    bool                  need_bump;    /* [sender] epoch after abort */
    samsa_netclient_t    *nc_last;      /* [sender] the sender's client */
    samsa_pq_t          **adding;       /* [sender] in AddPartitionsToTxn */
    int32_t               nadding;      /* [sender] */
};

/* ---- states ------------------------------------------------------------- */

bool
samsa_txn_transition_valid(samsa_txn_state_t from, samsa_txn_state_t to)
{
    switch (to) {
    case SAMSA_TXN_UNINITIALIZED:
        return false;
    case SAMSA_TXN_INITIALIZING:
        return from == SAMSA_TXN_UNINITIALIZED;
    case SAMSA_TXN_READY:
        return from == SAMSA_TXN_INITIALIZING
               || from == SAMSA_TXN_COMMITTING
               || from == SAMSA_TXN_ABORTING;
    case SAMSA_TXN_IN_TRANSACTION:
        return from == SAMSA_TXN_READY;
    case SAMSA_TXN_COMMITTING:
        return from == SAMSA_TXN_IN_TRANSACTION;
    case SAMSA_TXN_ABORTING:
        return from == SAMSA_TXN_IN_TRANSACTION
               || from == SAMSA_TXN_ABORTABLE_ERROR;
    case SAMSA_TXN_ABORTABLE_ERROR:
        return from == SAMSA_TXN_IN_TRANSACTION
               || from == SAMSA_TXN_COMMITTING
               || from == SAMSA_TXN_ABORTABLE_ERROR;
    case SAMSA_TXN_FATAL_ERROR:
        return true;
    }
    return false;
}

const char *
samsa_txn_state_name(samsa_txn_state_t s)
{
    static const char *const names[] = {
        "UNINITIALIZED", "INITIALIZING", "READY", "IN_TRANSACTION",
        "COMMITTING_TRANSACTION", "ABORTING_TRANSACTION", "ABORTABLE_ERROR",
        "FATAL_ERROR",
    };

    return (unsigned) s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

bool
samsa_txn_err_fatal(samsa_err_t err)
{
    return err == SAMSA_ERR_PRODUCER_FENCED
           || err == SAMSA_ERR_INVALID_PRODUCER_EPOCH
           || err == SAMSA_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED
           || err == SAMSA_ERR_INVALID_TRANSACTION_TIMEOUT
           || err == SAMSA_ERR_UNSUPPORTED_VERSION
           || err == SAMSA_ERR_UNSUPPORTED_FOR_MESSAGE_FORMAT
           || err == SAMSA_ERR_CLUSTER_AUTHORIZATION_FAILED
           || err == SAMSA_ERR_INVALID_TXN_STATE;
}

/* Errors after which the coordinator must be looked up again. */
static bool
txn_err_coord_lost(samsa_err_t err)
{
    return err == SAMSA_ERR_NOT_COORDINATOR
           || err == SAMSA_ERR_COORDINATOR_NOT_AVAILABLE
           || err == SAMSA_ERR__CLOSED || err == SAMSA_ERR__TIMED_OUT
           || err == SAMSA_ERR__IO || err == SAMSA_ERR__RESOLVE
           || err == SAMSA_ERR__BAD_MSG || err == SAMSA_ERR__UNDERFLOW;
}

bool
samsa_txn_err_retriable(samsa_err_t err)
{
    return err == SAMSA_ERR_COORDINATOR_LOAD_IN_PROGRESS
           || err == SAMSA_ERR_CONCURRENT_TRANSACTIONS
           || err == SAMSA_ERR_REQUEST_TIMED_OUT
           || err == SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION
           || err == SAMSA_ERR_NETWORK_EXCEPTION
           || txn_err_coord_lost(err);
}

/* ---- life --------------------------------------------------------------- */

samsa_txnmgr_t *
samsa_txnmgr_new(const samsa_pconf_t *pc, samsa_accum_t *accum,
                 void (*wake)(void *ctx), void *ctx)
{
    samsa_txnmgr_t  *tm = samsa_calloc(1, sizeof(*tm));

    tm->pc = pc;
    tm->accum = accum;
    tm->wake = wake;
    tm->wake_ctx = ctx;
    pthread_mutex_init(&tm->lock, NULL);
    pthread_cond_init(&tm->cond, NULL);
    tm->state = SAMSA_TXN_UNINITIALIZED;
    tm->pid = -1;
    tm->epoch = -1;
    tm->coord = SAMSA_NC_NO_NODE;
    tm->gcoord = SAMSA_NC_NO_NODE;
    return tm;
}

static void
txn_offsets_clear(samsa_txnmgr_t *tm)
{
    size_t  i;

    for (i = 0; i < tm->noffsets; i++) {
        samsa_free((char *) tm->offsets[i].topic);
        samsa_free((char *) tm->offsets[i].metadata);
    }
    samsa_free(tm->offsets);
    samsa_free(tm->group_id);
    samsa_free(tm->member_id);
    samsa_free(tm->instance_id);
    tm->offsets = NULL;
    tm->noffsets = 0;
    tm->group_id = tm->member_id = tm->instance_id = NULL;
}

void
samsa_txnmgr_free(samsa_txnmgr_t *tm)
{
    if (tm == NULL) {
        return;
    }
    txn_offsets_clear(tm);
    samsa_free(tm->adding);
    pthread_cond_destroy(&tm->cond);
    pthread_mutex_destroy(&tm->lock);
    samsa_free(tm);
}

/* ---- app threads -------------------------------------------------------- */

/* @locks tm->lock */
static void
txn_set_state(samsa_txnmgr_t *tm, samsa_txn_state_t to, samsa_err_t err)
{
    if (tm->state == SAMSA_TXN_FATAL_ERROR || tm->state == to) {
        if (to == SAMSA_TXN_ABORTABLE_ERROR && tm->last_err == 0) {
            tm->last_err = err;
        }
        return;
    }
    if (!samsa_txn_transition_valid(tm->state, to)) {
        samsa_warn("producer: transaction state %s -> %s is not valid",
                   samsa_txn_state_name(tm->state),
                   samsa_txn_state_name(to));
        return;
    }
    samsa_debug("producer: transaction state %s -> %s",
                samsa_txn_state_name(tm->state), samsa_txn_state_name(to));
    tm->state = to;
    if (to == SAMSA_TXN_ABORTABLE_ERROR || to == SAMSA_TXN_FATAL_ERROR) {
        tm->last_err = err;
    } else if (to == SAMSA_TXN_READY) {
        tm->last_err = SAMSA_ERR_NONE;
    }
    pthread_cond_broadcast(&tm->cond);
}

samsa_txn_state_t
samsa_txnmgr_state(samsa_txnmgr_t *tm)
{
    return SAMSA_LOCKED_READ(&tm->lock, tm->state);
}

/* The error of a call made in the wrong state.  @locks tm->lock */
static samsa_err_t
txn_state_err(samsa_txnmgr_t *tm)
{
    if (tm->state == SAMSA_TXN_FATAL_ERROR
        || tm->state == SAMSA_TXN_ABORTABLE_ERROR) {
        return tm->last_err;
    }
    return SAMSA_ERR__STATE;
}

/* Wait on tm->cond for up to ms (> 0).  @locks tm->lock */
static void
txn_cond_wait_ms(samsa_txnmgr_t *tm, int64_t ms)
{
    struct timespec  ts = samsa_timespec_after(CLOCK_REALTIME,
                                               ms > 0 ? ms : 1);

    (void) pthread_cond_timedwait(&tm->cond, &tm->lock, &ts);
}

/* Wait for tm's operation until deadline (-1: none).  @locks tm->lock */
static samsa_err_t
txn_wait_op(samsa_txnmgr_t *tm, int64_t timeout_ms)
{
    int64_t      deadline = timeout_ms < 0 ? -1
                                            : samsa_now_ms() + timeout_ms;
    samsa_err_t  err;

    while (!tm->op_done) {
        if (deadline >= 0 && samsa_now_ms() >= deadline) {
            return SAMSA_ERR__TIMED_OUT;
        }
        txn_cond_wait_ms(tm, deadline < 0 ? 250
                                          : deadline - samsa_now_ms());
    }
    err = tm->op_err;
    tm->op = TXN_OP_NONE;
    tm->op_done = false;
    return err;
}

/* Post op (tm->lock held, state already moved) and wait for it.
 * @locks tm->lock */
static samsa_err_t
txn_post_op(samsa_txnmgr_t *tm, txn_op_t op, int64_t timeout_ms)
{
    tm->op = op;
    tm->op_done = false;
    tm->op_err = SAMSA_ERR_NONE;
    pthread_mutex_unlock(&tm->lock);
    tm->wake(tm->wake_ctx);
    pthread_mutex_lock(&tm->lock);
    return txn_wait_op(tm, timeout_ms);
}

/* A timed-out call of op being made again: wait for it.  True if so.
 * @locks tm->lock */
static bool
txn_resume(samsa_txnmgr_t *tm, txn_op_t op, int64_t timeout_ms,
           samsa_err_t *errp)
{
    if (tm->op != op) {
        return false;
    }
    *errp = txn_wait_op(tm, timeout_ms);
    return true;
}

/* An operation another call left pending or unclaimed.  @locks tm->lock */
static bool
txn_op_busy(samsa_txnmgr_t *tm)
{
    if (tm->op != TXN_OP_NONE && tm->op_done) {
        tm->op = TXN_OP_NONE;           /* a timed out call's late result */
        tm->op_done = false;
    }
    return tm->op != TXN_OP_NONE;
}

samsa_err_t
samsa_txnmgr_init(samsa_txnmgr_t *tm, int64_t timeout_ms)
{
    samsa_err_t  err;

    pthread_mutex_lock(&tm->lock);
    if (!txn_resume(tm, TXN_OP_INIT, timeout_ms, &err)) {
        if (tm->state != SAMSA_TXN_UNINITIALIZED || txn_op_busy(tm)) {
            err = txn_state_err(tm);
        } else {
            txn_set_state(tm, SAMSA_TXN_INITIALIZING, SAMSA_ERR_NONE);
            err = txn_post_op(tm, TXN_OP_INIT, timeout_ms);
        }
    }
    pthread_mutex_unlock(&tm->lock);
    return err;
}

samsa_err_t
samsa_txnmgr_begin(samsa_txnmgr_t *tm)
{
    samsa_err_t  err = SAMSA_ERR_NONE;

    pthread_mutex_lock(&tm->lock);
    if (tm->state != SAMSA_TXN_READY) {
        err = txn_state_err(tm);
    } else {
        txn_set_state(tm, SAMSA_TXN_IN_TRANSACTION, SAMSA_ERR_NONE);
    }
    pthread_mutex_unlock(&tm->lock);
    return err;
}

samsa_err_t
samsa_txnmgr_send_enter(samsa_txnmgr_t *tm)
{
    samsa_err_t  err = SAMSA_ERR_NONE;

    pthread_mutex_lock(&tm->lock);
    if (tm->state != SAMSA_TXN_IN_TRANSACTION) {
        err = txn_state_err(tm);
    } else {
        tm->sends++;
    }
    pthread_mutex_unlock(&tm->lock);
    return err;
}

void
samsa_txnmgr_send_exit(samsa_txnmgr_t *tm)
{
    pthread_mutex_lock(&tm->lock);
    if (--tm->sends == 0) {
        pthread_cond_broadcast(&tm->cond);
    }
    pthread_mutex_unlock(&tm->lock);
}

/* Wait for the send()s appending now (they saw IN_TRANSACTION).
 * @locks tm->lock */
static void
txn_wait_sends(samsa_txnmgr_t *tm)
{
    while (tm->sends > 0) {
        pthread_cond_wait(&tm->cond, &tm->lock);
    }
}

samsa_err_t
samsa_txnmgr_send_offsets(samsa_txnmgr_t *tm,
                          const samsa_txn_offset_t *offsets, size_t n,
                          const samsa_txn_group_t *group,
                          int64_t timeout_ms)
{
    samsa_err_t  err;
    size_t       i;

    if (group == NULL || group->group_id == NULL
        || group->group_id[0] == '\0' || (n > 0 && offsets == NULL)) {
        return SAMSA_ERR__INVALID_ARG;
    }
    for (i = 0; i < n; i++) {
        if (offsets[i].topic == NULL || offsets[i].partition < 0
            || offsets[i].offset < 0) {
            return SAMSA_ERR__INVALID_ARG;
        }
    }
    pthread_mutex_lock(&tm->lock);
    if (txn_resume(tm, TXN_OP_OFFSETS, timeout_ms, &err)) {
        goto out;
    }
    if (tm->state != SAMSA_TXN_IN_TRANSACTION || txn_op_busy(tm)) {
        err = txn_state_err(tm);
        goto out;
    }
    txn_offsets_clear(tm);
    tm->group_id = samsa_strdup(group->group_id);
    tm->member_id = samsa_strdup(group->member_id != NULL ? group->member_id
                                                          : "");
    tm->instance_id = group->group_instance_id != NULL
                          ? samsa_strdup(group->group_instance_id) : NULL;
    tm->generation = group->member_id != NULL ? group->generation_id : -1;
    tm->offsets = samsa_calloc(n > 0 ? n : 1, sizeof(*tm->offsets));
    for (i = 0; i < n; i++) {
        tm->offsets[i] = offsets[i];
        tm->offsets[i].topic = samsa_strdup(offsets[i].topic);
        tm->offsets[i].metadata = offsets[i].metadata != NULL
                                      ? samsa_strdup(offsets[i].metadata)
                                      : NULL;
    }
    tm->noffsets = n;
    err = txn_post_op(tm, TXN_OP_OFFSETS, timeout_ms);
out:
    pthread_mutex_unlock(&tm->lock);
    return err;
}

samsa_err_t
samsa_txnmgr_commit_begin(samsa_txnmgr_t *tm)
{
    samsa_err_t  err = SAMSA_ERR_NONE;

    pthread_mutex_lock(&tm->lock);
    if (tm->state == SAMSA_TXN_COMMITTING
        && (tm->op == TXN_OP_NONE || tm->op == TXN_OP_COMMIT)) {
        /* a timed out commit, called again */
    } else if (tm->state != SAMSA_TXN_IN_TRANSACTION || txn_op_busy(tm)) {
        err = txn_state_err(tm);
    } else {
        txn_set_state(tm, SAMSA_TXN_COMMITTING, SAMSA_ERR_NONE);
        txn_wait_sends(tm);
    }
    pthread_mutex_unlock(&tm->lock);
    return err;
}

samsa_err_t
samsa_txnmgr_commit_end(samsa_txnmgr_t *tm, int64_t timeout_ms)
{
    samsa_err_t  err;

    pthread_mutex_lock(&tm->lock);
    if (!txn_resume(tm, TXN_OP_COMMIT, timeout_ms, &err)) {
        if (tm->state != SAMSA_TXN_COMMITTING) {
            err = txn_state_err(tm);    /* a batch failed in the flush */
        } else {
            err = txn_post_op(tm, TXN_OP_COMMIT, timeout_ms);
        }
    }
    pthread_mutex_unlock(&tm->lock);
    return err;
}

samsa_err_t
samsa_txnmgr_abort(samsa_txnmgr_t *tm, int64_t timeout_ms)
{
    samsa_err_t  err;

    pthread_mutex_lock(&tm->lock);
    if (txn_resume(tm, TXN_OP_ABORT, timeout_ms, &err)) {
        goto out;
    }
    if (tm->state == SAMSA_TXN_FATAL_ERROR
        || (tm->state != SAMSA_TXN_IN_TRANSACTION
            && tm->state != SAMSA_TXN_ABORTABLE_ERROR
            && tm->state != SAMSA_TXN_ABORTING)
        || txn_op_busy(tm)) {
        err = txn_state_err(tm);
        goto out;
    }
    txn_set_state(tm, SAMSA_TXN_ABORTING, SAMSA_ERR_NONE);
    txn_wait_sends(tm);
    err = txn_post_op(tm, TXN_OP_ABORT, timeout_ms);
out:
    pthread_mutex_unlock(&tm->lock);
    return err;
}

/* ---- sender thread ------------------------------------------------------ */

void
samsa_txnmgr_pid(const samsa_txnmgr_t *tm, int64_t *pid, int16_t *epoch)
{
    *pid = tm->pid;
    *epoch = tm->epoch;
}

/* The operation is over: err NONE moves to ok_state; a fatal error (or
 * any error when fatal_on_err) to FATAL_ERROR, another to
 * ABORTABLE_ERROR.  @thread sender */
static void
txn_op_finish(samsa_txnmgr_t *tm, samsa_err_t err,
              samsa_txn_state_t ok_state, bool fatal_on_err)
{
    pthread_mutex_lock(&tm->lock);
    if (err == SAMSA_ERR_NONE) {
        txn_set_state(tm, ok_state, err);
    } else if (fatal_on_err || samsa_txn_err_fatal(err)) {
        txn_set_state(tm, SAMSA_TXN_FATAL_ERROR, err);
    } else {
        txn_set_state(tm, SAMSA_TXN_ABORTABLE_ERROR, err);
    }
    if (err != SAMSA_ERR_NONE) {
        samsa_warn("producer: transactional operation failed: %s",
                   samsa_err_name(err));
    }
    if (tm->op != TXN_OP_NONE && !tm->op_done) {
        tm->op_done = true;
        tm->op_err = err;
        pthread_cond_broadcast(&tm->cond);
    }
    pthread_mutex_unlock(&tm->lock);
    tm->step = 0;
    tm->attempts = 0;
}

/* An error that is neither fatal nor the end of the operation. */
static void
txn_fail_state(samsa_txnmgr_t *tm, samsa_err_t err)
{
    pthread_mutex_lock(&tm->lock);
    txn_set_state(tm, samsa_txn_err_fatal(err) ? SAMSA_TXN_FATAL_ERROR
                                                : SAMSA_TXN_ABORTABLE_ERROR,
                  err);
    pthread_mutex_unlock(&tm->lock);
}

void
samsa_txnmgr_batch_failed(samsa_txnmgr_t *tm, samsa_err_t err, bool had_seq)
{
    if (had_seq) {
        tm->need_bump = true;   /* sequences unresolved: new epoch at abort */
    }
    pthread_mutex_lock(&tm->lock);
    if (samsa_txn_err_fatal(err)) {
        txn_set_state(tm, SAMSA_TXN_FATAL_ERROR, err);
    } else if (tm->state == SAMSA_TXN_IN_TRANSACTION
               || tm->state == SAMSA_TXN_COMMITTING) {
        txn_set_state(tm, SAMSA_TXN_ABORTABLE_ERROR, err);
    }
    pthread_mutex_unlock(&tm->lock);
}

/* Every queue back to "not in the transaction" (a new one starts). */
static void
txn_reset_partitions(samsa_txnmgr_t *tm)
{
    samsa_pq_t  **pqs;
    int32_t       n, i;

    pqs = samsa_accum_pqs(tm->accum, &n);
    for (i = 0; i < n; i++) {
        pqs[i]->txn_wait = true;
    }
    tm->started = false;
}

static void
txn_backoff(samsa_txnmgr_t *tm, samsa_err_t err, bool group, int64_t now)
{
    int64_t  b = tm->pc->net.retry_backoff_ms;
    int32_t  i;

    if (txn_err_coord_lost(err)) {
        if (group) {
            tm->gcoord = SAMSA_NC_NO_NODE;
        } else {
            tm->coord = SAMSA_NC_NO_NODE;
        }
    }
    for (i = 0; i < tm->attempts && b < tm->pc->net.retry_backoff_max_ms;
         i++) {
        b *= 2;
    }
    if (b > tm->pc->net.retry_backoff_max_ms) {
        b = tm->pc->net.retry_backoff_max_ms;
    }
    tm->attempts++;
    tm->retry_at = now + b;
    samsa_debug("producer: transactional request: %s, retrying in %lld ms",
                samsa_err_name(err), (long long) b);
}

/* Response context: the request kind and version. */
#define TXN_OPAQUE(kind, v)  ((void *) (intptr_t) (((kind) << 16) | (v)))

static void txn_on_resp(void *ctx, int32_t node, samsa_err_t err,
                        samsa_rd_t *body, void *opaque);

static void
txn_send(samsa_txnmgr_t *tm, samsa_netclient_t *nc, int32_t node,
         samsa_buf_t *frame, int16_t api, int16_t v, txn_req_t kind,
         int64_t now)
{
    if (samsa_netclient_send(nc, node, frame, api, v, true, txn_on_resp, tm,
                             TXN_OPAQUE(kind, v), now) == SAMSA_ERR_NONE) {
        tm->req_inflight = true;
    } else {
        samsa_buf_fini(frame);
        tm->retry_at = now + tm->pc->net.retry_backoff_ms;
    }
}

/* FindCoordinator for the transactional id (or the OFFSETS group). */
static void
txn_find(samsa_txnmgr_t *tm, samsa_netclient_t *nc, bool group, int64_t now)
{
    samsa_FindCoordinatorRequest_t  req;
    samsa_buf_t                     frame = SAMSA_BUF_INIT;
    samsa_wr_t                      wr;
    int32_t                         node;
    int16_t                         v;

    node = samsa_netclient_least_loaded(nc, now);
    if (node == SAMSA_NC_NO_NODE || !samsa_netclient_ready(nc, node, now)) {
        return;
    }
    v = samsa_netclient_version(nc, node, SAMSA_API_FindCoordinator, 1, 3);
    if (v < 0) {
        txn_op_finish(tm, SAMSA_ERR_UNSUPPORTED_VERSION, SAMSA_TXN_READY,
                      true);
        return;
    }
    samsa_FindCoordinatorRequest_init(&req);
    req.Key = samsa_slice_cstr(group ? tm->group_id
                                     : tm->pc->transactional_id);
    req.KeyType = group ? 0 : 1;
    samsa_netclient_frame_begin(nc, SAMSA_API_FindCoordinator, v, &frame,
                                &wr);
    samsa_FindCoordinatorRequest_encode(&wr, v, &req);
    txn_send(tm, nc, node, &frame, SAMSA_API_FindCoordinator, v,
             group ? TXN_REQ_FIND_GROUP : TXN_REQ_FIND_TXN, now);
}

/* The coordinator's node if a request can go to it now, else
 * SAMSA_NC_NO_NODE (looking it up or connecting).  */
static int32_t
txn_coord(samsa_txnmgr_t *tm, samsa_netclient_t *nc, bool group,
          int64_t now)
{
    int32_t  *c = group ? &tm->gcoord : &tm->coord;

    if (*c == SAMSA_NC_NO_NODE) {
        txn_find(tm, nc, group, now);
        return SAMSA_NC_NO_NODE;
    }
    if (samsa_netclient_ready(nc, *c, now)) {
        return *c;
    }
    if (!samsa_netclient_connected(nc, *c)
        && samsa_netclient_last_error(nc, *c) != SAMSA_ERR_NONE) {
        txn_backoff(tm, SAMSA_ERR__CLOSED, group, now);   /* look again */
    }
    return SAMSA_NC_NO_NODE;
}

/* The coordinator's node and the version *v of api to send it, or
 * SAMSA_NC_NO_NODE: not ready yet, or it speaks no version up to vmax
 * (which fails the operation).  */
static int32_t
txn_target(samsa_txnmgr_t *tm, samsa_netclient_t *nc, bool group,
           int16_t api, int16_t vmax, int16_t *v, int64_t now)
{
    int32_t  node = txn_coord(tm, nc, group, now);

    if (node == SAMSA_NC_NO_NODE) {
        return SAMSA_NC_NO_NODE;
    }
    *v = samsa_netclient_version(nc, node, api, 0, vmax);
    if (*v < 0) {
        txn_op_finish(tm, SAMSA_ERR_UNSUPPORTED_VERSION, SAMSA_TXN_READY,
                      true);
        return SAMSA_NC_NO_NODE;
    }
    return node;
}

/* Items of a request grouped by topic, as AddPartitionsToTxn and
 * TxnOffsetCommit nest them: topic t (first-seen order) is name[t] and
 * its items sit at start[t] .. start[t] + cnt[t] - 1 of one flat array,
 * item i (in the order added) at slot[i].  */
typedef struct {
    int32_t       n, nt;
    const char  **name;
    int32_t      *start, *cnt, *slot;
} txn_bytopic_t;

static void
txn_bytopic_init(txn_bytopic_t *bt, size_t n)
{
    bt->n = 0;
    bt->nt = 0;
    bt->name = samsa_calloc(n + 1, sizeof(*bt->name));
    bt->start = samsa_calloc(n + 1, sizeof(*bt->start));
    bt->cnt = samsa_calloc(n + 1, sizeof(*bt->cnt));
    bt->slot = samsa_calloc(n + 1, sizeof(*bt->slot));
}

static void
txn_bytopic_add(txn_bytopic_t *bt, const char *topic)
{
    int32_t  t;

    for (t = 0; t < bt->nt && strcmp(bt->name[t], topic) != 0; t++) {
    }
    if (t == bt->nt) {
        bt->name[bt->nt++] = topic;
    }
    bt->slot[bt->n++] = t;          /* the topic, until txn_bytopic_seal */
    bt->cnt[t]++;
}

/* Lays the topics out one after another: fills start and slot.  */
static void
txn_bytopic_seal(txn_bytopic_t *bt)
{
    int32_t  i, t;

    for (t = 1; t < bt->nt; t++) {
        bt->start[t] = bt->start[t - 1] + bt->cnt[t - 1];
    }
    memset(bt->cnt, 0, (size_t) bt->nt * sizeof(*bt->cnt));
    for (i = 0; i < bt->n; i++) {
        t = bt->slot[i];
        bt->slot[i] = bt->start[t] + bt->cnt[t]++;
    }
}

static void
txn_bytopic_fini(txn_bytopic_t *bt)
{
    samsa_free(bt->name);
    samsa_free(bt->start);
    samsa_free(bt->cnt);
    samsa_free(bt->slot);
}

static void
txn_init_pid(samsa_txnmgr_t *tm, samsa_netclient_t *nc, int64_t now)
{
    samsa_InitProducerIdRequest_t  req;
    samsa_buf_t                    frame = SAMSA_BUF_INIT;
    samsa_wr_t                     wr;
    int32_t                        node;
    int16_t                        v;

    node = txn_target(tm, nc, false, SAMSA_API_InitProducerId, 4, &v, now);
    if (node == SAMSA_NC_NO_NODE) {
        return;
    }
    if (tm->pid >= 0 && v < 3) {
        /* no epoch bump before v3 (KIP-360): keep going without one */
        tm->need_bump = false;
        return;
    }
    samsa_InitProducerIdRequest_init(&req);
    req.TransactionalId = samsa_slice_cstr(tm->pc->transactional_id);
    req.TransactionTimeoutMs = tm->pc->transaction_timeout_ms;
    if (v >= 3) {
        req.ProducerId = tm->pid;
        req.ProducerEpoch = tm->epoch;
    }
    samsa_netclient_frame_begin(nc, SAMSA_API_InitProducerId, v, &frame,
                                &wr);
    samsa_InitProducerIdRequest_encode(&wr, v, &req);
    txn_send(tm, nc, node, &frame, SAMSA_API_InitProducerId, v,
             TXN_REQ_INIT_PID, now);
}

/* AddPartitionsToTxn for the queues that hold a batch and are not in the
 * transaction yet.  True if it sent one (or must wait for the
 * coordinator).  */
static bool
txn_add_partitions(samsa_txnmgr_t *tm, samsa_netclient_t *nc, int64_t now)
{
    samsa_AddPartitionsToTxnRequest_t   req;
    samsa_AddPartitionsToTxnTopic_t    *topics;
    int32_t                            *parts;
    txn_bytopic_t                       bt;
    samsa_buf_t                         frame = SAMSA_BUF_INIT;
    samsa_wr_t                          wr;
    samsa_pq_t                        **pqs;
    int32_t                             n, i, t, node;
    int16_t                             v;
    bool                                has;

    pqs = samsa_accum_pqs(tm->accum, &n);
    samsa_free(tm->adding);
    tm->adding = samsa_calloc((size_t) n + 1, sizeof(*tm->adding));
    tm->nadding = 0;
    for (i = 0; i < n; i++) {
        if (!pqs[i]->txn_wait) {
            continue;
        }
        pthread_mutex_lock(&pqs[i]->lock);
        has = pqs[i]->nbatches > 0;
        pthread_mutex_unlock(&pqs[i]->lock);
        if (has) {
            tm->adding[tm->nadding++] = pqs[i];
        }
    }
    if (tm->nadding == 0) {
        return false;
    }
    node = txn_coord(tm, nc, false, now);
    if (node == SAMSA_NC_NO_NODE) {
        return true;
    }
    v = samsa_netclient_version(nc, node, SAMSA_API_AddPartitionsToTxn, 0,
                                3);
    if (v < 0) {
        txn_fail_state(tm, SAMSA_ERR_UNSUPPORTED_VERSION);
        return true;
    }
    txn_bytopic_init(&bt, (size_t) tm->nadding);
    for (i = 0; i < tm->nadding; i++) {
        txn_bytopic_add(&bt, tm->adding[i]->topic->name);
    }
    txn_bytopic_seal(&bt);
    topics = samsa_calloc((size_t) bt.nt, sizeof(*topics));
    parts = samsa_calloc((size_t) tm->nadding, sizeof(*parts));
    for (t = 0; t < bt.nt; t++) {
        samsa_AddPartitionsToTxnTopic_init(&topics[t]);
        topics[t].Name = samsa_slice_cstr(bt.name[t]);
        topics[t].Partitions = &parts[bt.start[t]];
        topics[t].Partitions_cnt = bt.cnt[t];
    }
    for (i = 0; i < tm->nadding; i++) {
        parts[bt.slot[i]] = tm->adding[i]->partition;
    }
    samsa_AddPartitionsToTxnRequest_init(&req);
    req.V3AndBelowTransactionalId =
        samsa_slice_cstr(tm->pc->transactional_id);
    req.V3AndBelowProducerId = tm->pid;
    req.V3AndBelowProducerEpoch = tm->epoch;
    req.V3AndBelowTopics = topics;
    req.V3AndBelowTopics_cnt = bt.nt;
    samsa_netclient_frame_begin(nc, SAMSA_API_AddPartitionsToTxn, v, &frame,
                                &wr);
    samsa_AddPartitionsToTxnRequest_encode(&wr, v, &req);
    samsa_free(topics);
    samsa_free(parts);
    txn_bytopic_fini(&bt);
    txn_send(tm, nc, node, &frame, SAMSA_API_AddPartitionsToTxn, v,
             TXN_REQ_ADD_PARTS, now);
    return true;
}

static void
txn_add_offsets(samsa_txnmgr_t *tm, samsa_netclient_t *nc, int64_t now)
{
    samsa_AddOffsetsToTxnRequest_t  req;
    samsa_buf_t                     frame = SAMSA_BUF_INIT;
    samsa_wr_t                      wr;
    int32_t                         node;
    int16_t                         v;

    node = txn_target(tm, nc, false, SAMSA_API_AddOffsetsToTxn, 4, &v, now);
    if (node == SAMSA_NC_NO_NODE) {
        return;
    }
    samsa_AddOffsetsToTxnRequest_init(&req);
    req.TransactionalId = samsa_slice_cstr(tm->pc->transactional_id);
    req.ProducerId = tm->pid;
    req.ProducerEpoch = tm->epoch;
    req.GroupId = samsa_slice_cstr(tm->group_id);
    samsa_netclient_frame_begin(nc, SAMSA_API_AddOffsetsToTxn, v, &frame,
                                &wr);
    samsa_AddOffsetsToTxnRequest_encode(&wr, v, &req);
    txn_send(tm, nc, node, &frame, SAMSA_API_AddOffsetsToTxn, v,
             TXN_REQ_ADD_OFFSETS, now);
}

static void
txn_offset_commit(samsa_txnmgr_t *tm, samsa_netclient_t *nc, int64_t now)
{
    samsa_TxnOffsetCommitRequest_t            req;
    samsa_TxnOffsetCommitRequestTopic_t      *topics;
    samsa_TxnOffsetCommitRequestPartition_t  *parts;
    txn_bytopic_t                             bt;
    samsa_buf_t                               frame = SAMSA_BUF_INIT;
    samsa_wr_t                                wr;
    int32_t                                   node, t;
    int16_t                                   v;
    size_t                                    i;

    node = txn_target(tm, nc, true, SAMSA_API_TxnOffsetCommit, 4, &v, now);
    if (node == SAMSA_NC_NO_NODE) {
        return;
    }
    txn_bytopic_init(&bt, tm->noffsets);
    for (i = 0; i < tm->noffsets; i++) {
        txn_bytopic_add(&bt, tm->offsets[i].topic);
    }
    txn_bytopic_seal(&bt);
    topics = samsa_calloc((size_t) bt.nt + 1, sizeof(*topics));
    parts = samsa_calloc(tm->noffsets + 1, sizeof(*parts));
    for (t = 0; t < bt.nt; t++) {
        samsa_TxnOffsetCommitRequestTopic_init(&topics[t]);
        topics[t].Name = samsa_slice_cstr(bt.name[t]);
        topics[t].Partitions = &parts[bt.start[t]];
        topics[t].Partitions_cnt = bt.cnt[t];
    }
    for (i = 0; i < tm->noffsets; i++) {
        samsa_TxnOffsetCommitRequestPartition_t  *pp = &parts[bt.slot[i]];

        samsa_TxnOffsetCommitRequestPartition_init(pp);
        pp->PartitionIndex = tm->offsets[i].partition;
        pp->CommittedOffset = tm->offsets[i].offset;
        pp->CommittedMetadata = tm->offsets[i].metadata != NULL
                                    ? samsa_slice_cstr(tm->offsets[i].metadata)
                                    : samsa_slice_cstr("");
    }
    samsa_TxnOffsetCommitRequest_init(&req);
    req.TransactionalId = samsa_slice_cstr(tm->pc->transactional_id);
    req.GroupId = samsa_slice_cstr(tm->group_id);
    req.ProducerId = tm->pid;
    req.ProducerEpoch = tm->epoch;
    req.GenerationId = tm->generation;
    req.MemberId = samsa_slice_cstr(tm->member_id);
    req.GroupInstanceId = tm->instance_id != NULL
                              ? samsa_slice_cstr(tm->instance_id)
                              : SAMSA_SLICE_NULL;
    req.Topics = topics;
    req.Topics_cnt = bt.nt;
    samsa_netclient_frame_begin(nc, SAMSA_API_TxnOffsetCommit, v, &frame,
                                &wr);
    samsa_TxnOffsetCommitRequest_encode(&wr, v, &req);
    samsa_free(topics);
    samsa_free(parts);
    txn_bytopic_fini(&bt);
    txn_send(tm, nc, node, &frame, SAMSA_API_TxnOffsetCommit, v,
             TXN_REQ_OFFSET_COMMIT, now);
}

static void
txn_end(samsa_txnmgr_t *tm, samsa_netclient_t *nc, bool commit, int64_t now)
{
    samsa_EndTxnRequest_t  req;
    samsa_buf_t            frame = SAMSA_BUF_INIT;
    samsa_wr_t             wr;
    int32_t                node;
    int16_t                v;

    node = txn_target(tm, nc, false, SAMSA_API_EndTxn, 4, &v, now);
    if (node == SAMSA_NC_NO_NODE) {
        return;
    }
    samsa_EndTxnRequest_init(&req);
    req.TransactionalId = samsa_slice_cstr(tm->pc->transactional_id);
    req.ProducerId = tm->pid;
    req.ProducerEpoch = tm->epoch;
    req.Committed = commit;
    samsa_netclient_frame_begin(nc, SAMSA_API_EndTxn, v, &frame, &wr);
    samsa_EndTxnRequest_encode(&wr, v, &req);
    txn_send(tm, nc, node, &frame, SAMSA_API_EndTxn, v, TXN_REQ_END, now);
}

/* The operation the sender works on (NONE when done or none).  */
static txn_op_t
txn_cur_op(samsa_txnmgr_t *tm, samsa_txn_state_t *state,
           samsa_err_t *last_err)
{
    txn_op_t  op;

    pthread_mutex_lock(&tm->lock);
    op = tm->op_done ? TXN_OP_NONE : tm->op;
    if (state != NULL) {
        *state = tm->state;
    }
    if (last_err != NULL) {
        *last_err = tm->last_err;
    }
    pthread_mutex_unlock(&tm->lock);
    return op;
}

/* The first real error of a per-partition result list (one that is not
 * OPERATION_NOT_ATTEMPTED, which only says another partition failed). */
static samsa_err_t
txn_worst(samsa_err_t worst, samsa_err_t e)
{
    if (worst == SAMSA_ERR_NONE
        || (worst == SAMSA_ERR_OPERATION_NOT_ATTEMPTED
            && e != SAMSA_ERR_NONE)) {
        return e;
    }
    return worst;
}

/* A response that failed with err (not NONE): the same request again
 * after a backoff if err is worth it, else the operation fails with it
 * (see txn_op_finish for fatal_on_err).  */
static void
txn_retry_or_fail(samsa_txnmgr_t *tm, samsa_err_t err, bool group,
                  bool fatal_on_err, int64_t now)
{
    if (samsa_txn_err_retriable(err)) {
        txn_backoff(tm, err, group, now);
    } else {
        txn_op_finish(tm, err, SAMSA_TXN_READY, fatal_on_err);
    }
}

static void
txn_on_find(samsa_txnmgr_t *tm, samsa_netclient_t *nc, bool group,
            samsa_err_t err, const samsa_FindCoordinatorResponse_t *resp,
            int64_t now)
{
    char  host[256];

    if (err == SAMSA_ERR_NONE && resp->NodeId >= 0) {
        snprintf(host, sizeof(host), "%.*s", (int) resp->Host.len,
                 resp->Host.ptr);
        if (group) {
            tm->gcoord = INT32_MAX - resp->NodeId;
        } else {
            tm->coord = INT32_MAX - resp->NodeId;
        }
        samsa_netclient_node_set(nc, INT32_MAX - resp->NodeId, host,
                                 resp->Port);
        tm->attempts = 0;
        return;
    }
    if (err == SAMSA_ERR_NONE) {
        err = SAMSA_ERR_COORDINATOR_NOT_AVAILABLE;
    }
    if (err == SAMSA_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED) {
        txn_op_finish(tm, err, SAMSA_TXN_READY, true);
    } else if (err == SAMSA_ERR_GROUP_AUTHORIZATION_FAILED
               || err == SAMSA_ERR_INVALID_GROUP_ID) {
        txn_op_finish(tm, err, SAMSA_TXN_IN_TRANSACTION, false);
    } else {
        txn_backoff(tm, err, group, now);
    }
}

static void
txn_on_pid(samsa_txnmgr_t *tm, samsa_err_t err,
           const samsa_InitProducerIdResponse_t *resp, int64_t now)
{
    txn_op_t  op = txn_cur_op(tm, NULL, NULL);

    if (err == SAMSA_ERR_NONE) {
        samsa_info("producer: transactional id %s: producer id %lld "
                   "epoch %d", tm->pc->transactional_id,
                   (long long) resp->ProducerId, resp->ProducerEpoch);
        tm->pid = resp->ProducerId;
        tm->epoch = resp->ProducerEpoch;
        tm->need_bump = false;
        tm->attempts = 0;
        samsa_accum_reset_sequences(tm->accum);
        if (op == TXN_OP_INIT) {
            txn_op_finish(tm, SAMSA_ERR_NONE, SAMSA_TXN_READY, true);
        }
        return;
    }
    txn_retry_or_fail(tm, err, false, true, now);
}

static void
txn_on_add_parts(samsa_txnmgr_t *tm, samsa_err_t err,
                 const samsa_AddPartitionsToTxnResponse_t *resp, int64_t now)
{
    const samsa_AddPartitionsToTxnTopicResult_t  *t;
    samsa_err_t                                   worst = err, e;
    int32_t                                       i, j, k;

    for (i = 0; err == SAMSA_ERR_NONE && i < resp->ResultsByTopicV3AndBelow_cnt;
         i++) {
        t = &resp->ResultsByTopicV3AndBelow[i];
        for (j = 0; j < t->ResultsByPartition_cnt; j++) {
            e = (samsa_err_t) t->ResultsByPartition[j].PartitionErrorCode;
            worst = txn_worst(worst, e);
            if (e != SAMSA_ERR_NONE) {
                continue;
            }
            for (k = 0; k < tm->nadding; k++) {
                if (tm->adding[k]->partition
                        == t->ResultsByPartition[j].PartitionIndex
                    && samsa_slice_eq_cstr(t->Name,
                                           tm->adding[k]->topic->name)) {
                    tm->adding[k]->txn_wait = false;
                    tm->started = true;
                }
            }
        }
    }
    tm->nadding = 0;
    if (worst == SAMSA_ERR_NONE) {
        tm->attempts = 0;
    } else if (worst == SAMSA_ERR_OPERATION_NOT_ATTEMPTED
               || samsa_txn_err_retriable(worst)) {
        txn_backoff(tm, worst, false, now);
    } else {
        txn_fail_state(tm, worst);
    }
}

static void
txn_on_add_offsets(samsa_txnmgr_t *tm, samsa_err_t err, int64_t now)
{
    if (err == SAMSA_ERR_NONE) {
        tm->started = true;
        tm->step = 1;
        tm->attempts = 0;
    } else {
        txn_retry_or_fail(tm, err, false, false, now);
    }
}

static void
txn_on_offset_commit(samsa_txnmgr_t *tm, samsa_err_t err,
                     const samsa_TxnOffsetCommitResponse_t *resp,
                     int64_t now)
{
    samsa_err_t  worst = err;
    int32_t      i, j;

    for (i = 0; err == SAMSA_ERR_NONE && i < resp->Topics_cnt; i++) {
        for (j = 0; j < resp->Topics[i].Partitions_cnt; j++) {
            worst = txn_worst(
                worst, (samsa_err_t) resp->Topics[i].Partitions[j].ErrorCode);
        }
    }
    if (worst == SAMSA_ERR_NONE) {
        txn_op_finish(tm, SAMSA_ERR_NONE, SAMSA_TXN_IN_TRANSACTION, false);
    } else {
        txn_retry_or_fail(tm, worst, true, false, now);
    }
}

static void
txn_on_end(samsa_txnmgr_t *tm, samsa_err_t err, int64_t now)
{
    txn_op_t  op = txn_cur_op(tm, NULL, NULL);

    if (err == SAMSA_ERR_NONE) {
        txn_reset_partitions(tm);
        tm->attempts = 0;
        if (op == TXN_OP_COMMIT || !tm->need_bump) {
            txn_op_finish(tm, SAMSA_ERR_NONE, SAMSA_TXN_READY, false);
        }
        return;                 /* an abort goes on with the epoch bump */
    }
    /* a commit the coordinator refuses as abortable can still be aborted */
    txn_retry_or_fail(tm, err, false,
                      op != TXN_OP_COMMIT
                          || err != SAMSA_ERR_TRANSACTION_ABORTABLE,
                      now);
}

/* The response's error: the transport's or decoder's, else its
 * top-level ErrorCode.  */
static samsa_err_t
txn_resp_err(samsa_err_t err, int16_t code)
{
    return err != SAMSA_ERR_NONE ? err : (samsa_err_t) code;
}

/* @thread sender */
static void
txn_on_resp(void *ctx, int32_t node, samsa_err_t err, samsa_rd_t *body,
            void *opaque)
{
    samsa_txnmgr_t  *tm = ctx;
    samsa_arena_t    arena = SAMSA_ARENA_INIT;
    txn_req_t        kind = (txn_req_t) ((intptr_t) opaque >> 16);
    int16_t          v = (int16_t) ((intptr_t) opaque & 0xffff);
    int64_t          now = samsa_now_ms();
    union {
        samsa_FindCoordinatorResponse_t     find;
        samsa_InitProducerIdResponse_t      pid;
        samsa_AddPartitionsToTxnResponse_t  parts;
        samsa_AddOffsetsToTxnResponse_t     offs;
        samsa_TxnOffsetCommitResponse_t     commit;
        samsa_EndTxnResponse_t              end;
    } r;

    (void) node;
    tm->req_inflight = false;
    memset(&r, 0, sizeof(r));
    switch (kind) {
    case TXN_REQ_FIND_TXN:
    case TXN_REQ_FIND_GROUP:
        if (err == SAMSA_ERR_NONE) {
            err = samsa_FindCoordinatorResponse_decode(body, v, &arena,
                                                       &r.find);
        }
        err = txn_resp_err(err, r.find.ErrorCode);
        txn_on_find(tm, tm->nc_last, kind == TXN_REQ_FIND_GROUP, err,
                    &r.find, now);
        break;
    case TXN_REQ_INIT_PID:
        if (err == SAMSA_ERR_NONE) {
            err = samsa_InitProducerIdResponse_decode(body, v, &arena,
                                                      &r.pid);
        }
        err = txn_resp_err(err, r.pid.ErrorCode);
        txn_on_pid(tm, err, &r.pid, now);
        break;
    case TXN_REQ_ADD_PARTS:
        if (err == SAMSA_ERR_NONE) {
            err = samsa_AddPartitionsToTxnResponse_decode(body, v, &arena,
                                                          &r.parts);
        }
        txn_on_add_parts(tm, err, &r.parts, now);
        break;
    case TXN_REQ_ADD_OFFSETS:
        if (err == SAMSA_ERR_NONE) {
            err = samsa_AddOffsetsToTxnResponse_decode(body, v, &arena,
                                                       &r.offs);
        }
        err = txn_resp_err(err, r.offs.ErrorCode);
        txn_on_add_offsets(tm, err, now);
        break;
    case TXN_REQ_OFFSET_COMMIT:
        if (err == SAMSA_ERR_NONE) {
            err = samsa_TxnOffsetCommitResponse_decode(body, v, &arena,
                                                       &r.commit);
        }
        txn_on_offset_commit(tm, err, &r.commit, now);
        break;
    case TXN_REQ_END:
        if (err == SAMSA_ERR_NONE) {
            err = samsa_EndTxnResponse_decode(body, v, &arena, &r.end);
        }
        err = txn_resp_err(err, r.end.ErrorCode);
        txn_on_end(tm, err, now);
        break;
    }
    samsa_arena_fini(&arena);
}

static void
txn_poll(samsa_txnmgr_t *tm, samsa_netclient_t *nc, int64_t inflight,
         int64_t now, samsa_txn_poll_t *out)
{
    samsa_txn_state_t  state;
    samsa_err_t        last;
    txn_op_t           op = txn_cur_op(tm, &state, &last);

    tm->nc_last = nc;
    out->fatal = SAMSA_ERR_NONE;
    out->fail_queued = SAMSA_ERR_NONE;
    if (state == SAMSA_TXN_FATAL_ERROR) {
        out->fatal = last;
        out->fail_queued = last;
        if (op != TXN_OP_NONE) {
            txn_op_finish(tm, last, SAMSA_TXN_READY, true);
        }
        return;
    }
    if (state == SAMSA_TXN_ABORTABLE_ERROR) {
        out->fail_queued = last;
    } else if (state == SAMSA_TXN_ABORTING) {
        out->fail_queued = SAMSA_ERR__TXN_ABORTED;
    }
    if (tm->req_inflight || now < tm->retry_at) {
        return;
    }
    if (state == SAMSA_TXN_ABORTABLE_ERROR
        && (op == TXN_OP_COMMIT || op == TXN_OP_OFFSETS)) {
        txn_op_finish(tm, last, SAMSA_TXN_READY, false);
        return;
    }
    if ((state == SAMSA_TXN_IN_TRANSACTION
         || state == SAMSA_TXN_COMMITTING)
        && txn_add_partitions(tm, nc, now)) {
        return;
    }
    switch (op) {
    case TXN_OP_NONE:
        break;
    case TXN_OP_INIT:
        txn_init_pid(tm, nc, now);
        break;
    case TXN_OP_OFFSETS:
        if (tm->step == 0) {
            txn_add_offsets(tm, nc, now);
        } else {
            txn_offset_commit(tm, nc, now);
        }
        break;
    case TXN_OP_COMMIT:
        if (inflight > 0 || samsa_accum_has_queued(tm->accum)) {
            break;                      /* the flush is still going */
        }
        if (tm->started) {
            txn_end(tm, nc, true, now);
        } else {
            txn_reset_partitions(tm);
            txn_op_finish(tm, SAMSA_ERR_NONE, SAMSA_TXN_READY, false);
        }
        break;
    case TXN_OP_ABORT:
        if (inflight > 0 || samsa_accum_has_queued(tm->accum)) {
            break;                      /* in flight ones complete first */
        }
        if (tm->started) {
            txn_end(tm, nc, false, now);
        } else if (tm->need_bump) {
            txn_init_pid(tm, nc, now);  /* KIP-360: a fresh epoch */
        } else {
            txn_reset_partitions(tm);
            txn_op_finish(tm, SAMSA_ERR_NONE, SAMSA_TXN_READY, false);
        }
        break;
    }
}

void
samsa_txnmgr_poll(samsa_txnmgr_t *tm, samsa_netclient_t *nc,
                  int64_t inflight, int64_t now, samsa_txn_poll_t *out)
{
    samsa_txn_state_t  state;

    txn_poll(tm, nc, inflight, now, out);
    /* An abort that finished in this turn lets the app begin the next
     * transaction at once: its records must not be failed. */
    (void) txn_cur_op(tm, &state, NULL);
    if (state != SAMSA_TXN_ABORTING && state != SAMSA_TXN_ABORTABLE_ERROR
        && state != SAMSA_TXN_FATAL_ERROR) {
        out->fail_queued = SAMSA_ERR_NONE;
    }
}
