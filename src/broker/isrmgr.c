/*
 * broker/isrmgr.c - see isrmgr.h.
 */
#include "broker/isrmgr.h"

#include <inttypes.h>
#include <pthread.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "broker/forward.h"
#include "meta/image.h"
#include "proto/gen/AlterPartition.h"
#include "proto/proto.h"
#include "proto/rd.h"
#include "proto/wr.h"
#include "util/alloc.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/diag.h"
#include "util/time.h"

#define ISRMGR_VERSION  3               /* NewIsrWithEpochs (KIP-903) */
#define ISRMGR_BATCH    256             /* changes per request at most */

struct samsa_isrmgr {
    samsa_isrmgr_conf_t   conf;         /* [const] */
    pthread_t             thread;
    pthread_mutex_t       lock;
    pthread_cond_t        cond;         /* CLOCK_MONOTONIC */
    samsa_isrmgr_item_t  *q;            /* [lock] queued, in order */
    size_t                nq;
    size_t                capq;
    int64_t               retry_ms;     /* [lock] no try before */
    bool                  stop;         /* [lock] */
    int32_t               corr;         /* [isr-manager] */
};

/* Errors after which a change is tried again (Kafka's "should retry"). */
static bool
isrmgr_retriable(samsa_err_t err)
{
    switch (err) {
    case SAMSA_ERR_NONE:
    case SAMSA_ERR_OPERATION_NOT_ATTEMPTED:
    case SAMSA_ERR_INELIGIBLE_REPLICA:
    case SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION:
    case SAMSA_ERR_UNKNOWN_TOPIC_ID:
    case SAMSA_ERR_FENCED_LEADER_EPOCH:
    case SAMSA_ERR_INVALID_UPDATE_VERSION:
    case SAMSA_ERR_NEW_LEADER_ELECTED:
    case SAMSA_ERR_INVALID_REQUEST:
        return false;
    default:
        return true;
    }
}

/* @locks lock held */
static void
isrmgr_push(samsa_isrmgr_t *im, const samsa_isrmgr_item_t *item)
{
    if (im->nq == im->capq) {
        im->capq = im->capq ? im->capq * 2 : 16;
        im->q = samsa_realloc(im->q, im->capq * sizeof(*im->q));
    }
    im->q[im->nq++] = *item;
}

void
samsa_isrmgr_submit(samsa_isrmgr_t *im, const samsa_isrmgr_item_t *item)
{
    pthread_mutex_lock(&im->lock);
    if (im->stop) {
        pthread_mutex_unlock(&im->lock);
        samsa_free(item->isr);
        return;
    }
    isrmgr_push(im, item);
    pthread_cond_signal(&im->cond);
    pthread_mutex_unlock(&im->lock);
}

/* ---- one exchange --------------------------------------------------- */

/* The changes of one try, and their answers. */
typedef struct isrmgr_try {
    samsa_isrmgr_item_t            *items;
    size_t                          n;
    samsa_controller_isr_change_t  *changes;
    samsa_controller_isr_result_t  *results;
    samsa_arena_t                   arena;
    int64_t                         broker_epoch;   /* this node's */
} isrmgr_try_t;

/* The controller's view of the items: each member's broker epoch from
 * this node's image (-1 for one it does not know). */
static void
isrmgr_changes(samsa_isrmgr_t *im, isrmgr_try_t *t)
{
    const samsa_image_broker_t      *br;
    samsa_controller_isr_member_t   *m;
    samsa_image_t                   *img = samsa_meta_image_get(im->conf.meta);
    size_t                           i, j;

    br = samsa_image_broker_find(img, im->conf.node_id);
    t->broker_epoch = br != NULL ? br->epoch : -1;
    t->changes = samsa_arena_calloc(&t->arena, t->n + 1, sizeof(*t->changes));
    t->results = samsa_arena_calloc(&t->arena, t->n + 1, sizeof(*t->results));
    for (i = 0; i < t->n; i++) {
        m = samsa_arena_calloc(&t->arena, t->items[i].nisr + 1, sizeof(*m));
        for (j = 0; j < t->items[i].nisr; j++) {
            br = samsa_image_broker_find(img, t->items[i].isr[j]);
            m[j].broker_id = t->items[i].isr[j];
            m[j].broker_epoch = br != NULL ? br->epoch : -1;
        }
        t->changes[i].topic_id = t->items[i].topic_id;
        t->changes[i].partition = t->items[i].partition;
        t->changes[i].leader_epoch = t->items[i].leader_epoch;
        t->changes[i].partition_epoch = t->items[i].partition_epoch;
        t->changes[i].leader_recovery_state = 0;    /* RECOVERED */
        t->changes[i].isr = m;
        t->changes[i].nisr = t->items[i].nisr;
        t->results[i].error = SAMSA_ERR_UNKNOWN_SERVER_ERROR;
    }
    samsa_image_put(img);
}

/* The request frame of t. */
static void
isrmgr_frame(samsa_isrmgr_t *im, const isrmgr_try_t *t, samsa_buf_t *frame)
{
    samsa_AlterPartitionRequest_t        rq;
    samsa_AlterPartitionTopic_t         *ts;
    samsa_AlterPartitionPartition_t     *ps;
    samsa_AlterPartitionBrokerState_t   *bs;
    samsa_wr_t                           wr;
    samsa_arena_t                        arena = SAMSA_ARENA_INIT;
    size_t                               i, j;

    /* one topic entry per change: the controller answers them in order */
    ts = samsa_arena_calloc(&arena, t->n + 1, sizeof(*ts));
    ps = samsa_arena_calloc(&arena, t->n + 1, sizeof(*ps));
    for (i = 0; i < t->n; i++) {
        bs = samsa_arena_calloc(&arena, t->changes[i].nisr + 1, sizeof(*bs));
        for (j = 0; j < t->changes[i].nisr; j++) {
            samsa_AlterPartitionBrokerState_init(&bs[j]);
            bs[j].BrokerId = t->changes[i].isr[j].broker_id;
            bs[j].BrokerEpoch = t->changes[i].isr[j].broker_epoch;
        }
        samsa_AlterPartitionPartition_init(&ps[i]);
        ps[i].PartitionIndex = t->changes[i].partition;
        ps[i].LeaderEpoch = t->changes[i].leader_epoch;
        ps[i].PartitionEpoch = t->changes[i].partition_epoch;
        ps[i].NewIsrWithEpochs = bs;
        ps[i].NewIsrWithEpochs_cnt = (int32_t) t->changes[i].nisr;
        samsa_AlterPartitionTopic_init(&ts[i]);
        ts[i].TopicId = t->changes[i].topic_id;
        ts[i].Partitions = &ps[i];
        ts[i].Partitions_cnt = 1;
    }
    samsa_AlterPartitionRequest_init(&rq);
    rq.BrokerId = im->conf.node_id;
    rq.BrokerEpoch = t->broker_epoch;
    rq.Topics = ts;
    rq.Topics_cnt = (int32_t) t->n;
    im->corr = im->corr == INT32_MAX ? 0 : im->corr + 1;
    samsa_forward_header(&wr, frame, SAMSA_API_AlterPartition,
                         ISRMGR_VERSION, im->corr, im->conf.node_id);
    samsa_AlterPartitionRequest_encode(&wr, ISRMGR_VERSION, &rq);
    samsa_arena_fini(&arena);
}

/* Take resp's answers into t->results (a missing one stays
 * UNKNOWN_SERVER_ERROR: retried). */
static void
isrmgr_take(isrmgr_try_t *t, const samsa_AlterPartitionResponse_t *resp)
{
    const samsa_AlterPartitionPartitionResult_t  *p;
    samsa_controller_isr_result_t                *r;
    int32_t                                       i, j;
    size_t                                        k;

    for (i = 0; i < resp->Topics_cnt; i++) {
        for (j = 0; j < resp->Topics[i].Partitions_cnt; j++) {
            p = &resp->Topics[i].Partitions[j];
            for (k = 0; k < t->n; k++) {
                r = &t->results[k];
                if (r->error != SAMSA_ERR_UNKNOWN_SERVER_ERROR
                    || t->changes[k].partition != p->PartitionIndex
                    || memcmp(&t->changes[k].topic_id,
                              &resp->Topics[i].TopicId,
                              sizeof(samsa_uuid_t)) != 0) {
                    continue;
                }
                r->error = (samsa_err_t) p->ErrorCode;
                r->leader_id = p->LeaderId;
                r->leader_epoch = p->LeaderEpoch;
                r->partition_epoch = p->PartitionEpoch;
                r->isr = p->Isr;
                r->nisr = p->Isr_cnt > 0 ? (size_t) p->Isr_cnt : 0;
                break;
            }
        }
    }
}

/* AlterPartition v3 to the active controller active.  @returns the
 * top-level error (the exchange's, or the answer's ErrorCode). */
static samsa_err_t
isrmgr_send_remote(samsa_isrmgr_t *im, int32_t active, isrmgr_try_t *t,
                   uint8_t **answer)
{
    samsa_AlterPartitionResponse_t   resp;
    samsa_buf_t                      frame = SAMSA_BUF_INIT;
    samsa_rd_t                       rd;
    size_t                           alen = 0;
    samsa_err_t                      err;

    isrmgr_frame(im, t, &frame);
    err = samsa_forward_roundtrip(im->conf.kraft, active, frame.data,
                                  frame.len, im->corr, SAMSA_ISRMGR_IO_MS,
                                  answer, &alen);
    samsa_buf_fini(&frame);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    /* the correlation id was checked (alen >= 5), then the v1 header's
     * tags */
    samsa_rd_init(&rd, *answer + 4, alen - 4);
    samsa_rd_tags_skip(&rd);
    err = samsa_AlterPartitionResponse_decode(&rd, ISRMGR_VERSION, &t->arena,
                                              &resp);
    if (err != SAMSA_ERR_NONE) {
        samsa_warn("AlterPartition at controller %" PRId32 ": bad answer: "
                   "%s", active, samsa_err_name(err));
        return err;
    }
    if (resp.ErrorCode != SAMSA_ERR_NONE) {
        return (samsa_err_t) resp.ErrorCode;
    }
    isrmgr_take(t, &resp);
    return SAMSA_ERR_NONE;
}

/* One try of t: AlterPartition to the active controller, this node's
 * own CONTROLLER listener too (each step bounded, so a quorum that
 * cannot commit never holds the thread past SAMSA_ISRMGR_IO_MS, and
 * stop stays prompt); one node (no quorum): the local controller.
 * @returns the top-level error. */
static samsa_err_t
isrmgr_send(samsa_isrmgr_t *im, isrmgr_try_t *t, uint8_t **answer)
{
    int32_t      active = samsa_controller_active_id(im->conf.ctrl);
    samsa_err_t  err;

    isrmgr_changes(im, t);
    if (t->broker_epoch < 0) {
        return SAMSA_ERR_BROKER_ID_NOT_REGISTERED;   /* not yet, or again */
    }
    if (im->conf.kraft == NULL || !im->conf.kraft->is_cluster) {
        return samsa_controller_alter_partition(
            im->conf.ctrl, im->conf.node_id, t->broker_epoch, t->changes,
            t->n, &t->arena, t->results);
    }
    if (active < 0) {
        return SAMSA_ERR_NOT_CONTROLLER;        /* no leader yet */
    }
    err = isrmgr_send_remote(im, active, t, answer);
    if (err != SAMSA_ERR_NONE) {
        samsa_debug("AlterPartition at controller %" PRId32 ": %s", active,
                    samsa_err_name(err));
    }
    return err;
}

/* Answer the items of t that are done and queue the others again, ahead
 * of what came meanwhile.  @thread isr-manager */
static void
isrmgr_finish(samsa_isrmgr_t *im, isrmgr_try_t *t, samsa_err_t top)
{
    samsa_isrmgr_answer_t   ans;
    samsa_isrmgr_item_t    *again = samsa_calloc(t->n + 1, sizeof(*again));
    size_t                  i, nagain = 0;
    samsa_err_t             err;

    for (i = 0; i < t->n; i++) {
        err = top != SAMSA_ERR_NONE ? top : t->results[i].error;
        if (top != SAMSA_ERR_NONE || isrmgr_retriable(err)) {
            again[nagain++] = t->items[i];
            continue;
        }
        memset(&ans, 0, sizeof(ans));
        ans.err = err;
        ans.leader_epoch = t->results[i].leader_epoch;
        ans.partition_epoch = t->results[i].partition_epoch;
        ans.isr = t->results[i].isr;
        ans.nisr = t->results[i].nisr;
        im->conf.answer(im->conf.ctx, &t->items[i], &ans);
        samsa_free(t->items[i].isr);
    }
    pthread_mutex_lock(&im->lock);
    if (nagain > 0) {
        while (im->nq + nagain > im->capq) {
            im->capq = im->capq ? im->capq * 2 : 16;
        }
        im->q = samsa_realloc(im->q, im->capq * sizeof(*im->q));
        memmove(im->q + nagain, im->q, im->nq * sizeof(*im->q));
        memcpy(im->q, again, nagain * sizeof(*again));
        im->nq += nagain;
        im->retry_ms = samsa_now_ms() + SAMSA_ISRMGR_RETRY_MS;
    }
    pthread_mutex_unlock(&im->lock);
    samsa_free(again);
}

/* Move up to ISRMGR_BATCH queued items into t, one per partition key
 * (a later change of the same partition waits for the next try).
 * @locks lock held */
static void
isrmgr_take_queue(samsa_isrmgr_t *im, isrmgr_try_t *t)
{
    size_t  i, j, keep = 0;
    bool    dup;

    t->items = samsa_calloc(im->nq + 1, sizeof(*t->items));
    t->n = 0;
    for (i = 0; i < im->nq; i++) {
        dup = t->n >= ISRMGR_BATCH;
        for (j = 0; j < t->n && !dup; j++) {
            dup = strcmp(t->items[j].key, im->q[i].key) == 0;
        }
        if (dup) {
            im->q[keep++] = im->q[i];
        } else {
            t->items[t->n++] = im->q[i];
        }
    }
    im->nq = keep;
}

/* ---- the thread ------------------------------------------------------ */

/* Wait until something is due (a try, the expiration) or stop; *expire
 * says whether the expiration is.  @returns false on stop.
 * @locks lock held (released while waiting) */
static bool
isrmgr_wait(samsa_isrmgr_t *im, int64_t next_expire, bool *expire)
{
    struct timespec  ts;
    int64_t          now, until;

    for (;;) {
        if (im->stop) {
            return false;
        }
        now = samsa_now_ms();
        *expire = now >= next_expire;
        if (*expire || (im->nq > 0 && now >= im->retry_ms)) {
            return true;
        }
        until = next_expire;
        if (im->nq > 0 && im->retry_ms < until) {
            until = im->retry_ms;
        }
        ts.tv_sec = until / 1000;
        ts.tv_nsec = until % 1000 * 1000000;
        pthread_cond_timedwait(&im->cond, &im->lock, &ts);
    }
}

static void *
isrmgr_main(void *arg)
{
    samsa_isrmgr_t  *im = arg;
    isrmgr_try_t     t;
    uint8_t         *answer;
    int64_t          next_expire = samsa_now_ms() + im->conf.expire_ms;
    bool             expire;
    samsa_err_t      err;

    prctl(PR_SET_NAME, "isr-manager", 0, 0, 0);
    pthread_mutex_lock(&im->lock);
    while (isrmgr_wait(im, next_expire, &expire)) {
        if (expire) {
            next_expire = samsa_now_ms() + im->conf.expire_ms;
            pthread_mutex_unlock(&im->lock);
            im->conf.expire(im->conf.ctx, samsa_now_ms());
            pthread_mutex_lock(&im->lock);
            continue;
        }
        memset(&t, 0, sizeof(t));
        t.arena = SAMSA_ARENA_INIT;
        isrmgr_take_queue(im, &t);
        pthread_mutex_unlock(&im->lock);
        answer = NULL;
        err = isrmgr_send(im, &t, &answer);
        isrmgr_finish(im, &t, err);
        samsa_free(answer);
        samsa_free(t.items);
        samsa_arena_fini(&t.arena);
        pthread_mutex_lock(&im->lock);
    }
    pthread_mutex_unlock(&im->lock);
    return NULL;
}

samsa_err_t
samsa_isrmgr_new(const samsa_isrmgr_conf_t *conf, samsa_isrmgr_t **out)
{
    samsa_isrmgr_t      *im = samsa_calloc(1, sizeof(*im));
    pthread_condattr_t   ca;

    im->conf = *conf;
    if (im->conf.expire_ms < 1) {
        im->conf.expire_ms = 1;
    }
    pthread_mutex_init(&im->lock, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&im->cond, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&im->thread, NULL, isrmgr_main, im) != 0) {
        pthread_cond_destroy(&im->cond);
        pthread_mutex_destroy(&im->lock);
        samsa_free(im);
        *out = NULL;
        return SAMSA_ERR__IO;
    }
    *out = im;
    return SAMSA_ERR_NONE;
}

void
samsa_isrmgr_free(samsa_isrmgr_t *im)
{
    size_t  i;

    if (im == NULL) {
        return;
    }
    pthread_mutex_lock(&im->lock);
    im->stop = true;
    pthread_cond_broadcast(&im->cond);
    pthread_mutex_unlock(&im->lock);
    pthread_join(im->thread, NULL);
    for (i = 0; i < im->nq; i++) {
        samsa_free(im->q[i].isr);
    }
    samsa_free(im->q);
    pthread_cond_destroy(&im->cond);
    pthread_mutex_destroy(&im->lock);
    samsa_free(im);
}
