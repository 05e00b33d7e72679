/*
 * client/producer/accum.c - the record accumulator (see accum.h).
 * Threads: [tlock] fields under accum->tlock (rwlock), [inc] under
 * accum->inc_lock, [sender] touched by the sender thread only, [atomic].
 */
#include "client/producer/accum.h"

#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "util/alloc.h"
#include "util/diag.h"
#include "util/time.h"
#include "util/locked.h"

typedef struct accum_node {
    int32_t  node;
    int64_t  ready_ms;          /* last time it had something ready */
    int64_t  drain_ms;          /* last time it could take it */
    int32_t  drain_index;       /* rotating start in the snapshot */
} accum_node_t;

struct samsa_accum {
    samsa_accum_conf_t  conf;           /* [const] */
    pthread_rwlock_t    tlock;
    samsa_tinfo_t     **topics;         /* [tlock] */
    int32_t             ntopics;        /* [tlock] */
    int32_t             topics_cap;     /* [tlock] */
    int32_t             npqs_total;     /* [tlock] queues in all topics */
    /* sender-only scratch */
    samsa_pq_t        **snap;           /* [sender] queues, topic by topic */
    int32_t             nsnap;          /* [sender] */
    int32_t             snap_cap;       /* [sender] */
    int32_t            *snap_topic_end; /* [sender] end index per topic */
    samsa_tinfo_t     **snap_tinfos;    /* [sender] the topics */
    int32_t             snap_ntopics;   /* [sender] */
    int32_t             snap_topics_cap; /* [sender] */
    int32_t            *qsizes;         /* [sender] adaptive scratch */
    int32_t            *qids;           /* [sender] */
    accum_node_t       *nodes;          /* [sender] */
    int32_t             nnodes;         /* [sender] */
    int32_t             nodes_cap;      /* [sender] */
    samsa_buf_t         scratch;        /* [sender] compression output */
    /* shared */
    _Atomic bool        closed;         /* [atomic] */
    _Atomic int         flushes;        /* [atomic] flushes in progress */
    pthread_mutex_t     inc_lock;
    pthread_cond_t      inc_cond;       /* a batch was released */
    samsa_producer_batch_t      *inc_head;       /* [inc] incomplete, oldest first */
    samsa_producer_batch_t      *inc_tail;       /* [inc] */
    int64_t             nincomplete;    /* [inc] */
    uint64_t            next_id;        /* [inc] */
    samsa_producer_batch_t      *spare;          /* [inc] released batches to reuse
                                           (by ->next): app threads make
                                           batches that the sender frees,
                                           which malloc pays for dearly */
    int32_t             nspare;         /* [inc] */
};

#define ACCUM_MAX_SPARE  64

samsa_accum_t *
samsa_accum_new(const samsa_accum_conf_t *conf)
{
    samsa_accum_t       *accum = samsa_calloc(1, sizeof(*accum));
    pthread_condattr_t   attr;

    accum->conf = *conf;
    pthread_rwlock_init(&accum->tlock, NULL);
    pthread_mutex_init(&accum->inc_lock, NULL);
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&accum->inc_cond, &attr);
    pthread_condattr_destroy(&attr);
    atomic_init(&accum->closed, false);
    atomic_init(&accum->flushes, 0);
    accum->next_id = 1;
    samsa_buf_init(&accum->scratch, 0);
    return accum;
}

static void
accum_pq_free(samsa_pq_t *pq)
{
    samsa_assert(pq->head == NULL);
    pthread_mutex_destroy(&pq->lock);
    samsa_free(pq);
}

void
samsa_accum_free(samsa_accum_t *accum)
{
    samsa_tinfo_t  *t;
    int32_t         i, j;

    if (accum == NULL) {
        return;
    }
    for (i = 0; i < accum->ntopics; i++) {
        t = accum->topics[i];
        for (j = 0; j < t->npqs; j++) {
            if (t->pqs[j] != NULL) {
                accum_pq_free(t->pqs[j]);
            }
        }
        samsa_free(t->pqs);
        samsa_sticky_free(t->sticky);
        samsa_free(t->name);
        samsa_free(t);
    }
    while (accum->spare != NULL) {
        samsa_producer_batch_t  *b = accum->spare;

        accum->spare = b->next;
        samsa_producer_batch_free(b);
    }
    samsa_free(accum->topics);
    samsa_free(accum->snap);
    samsa_free(accum->snap_topic_end);
    samsa_free(accum->snap_tinfos);
    samsa_free(accum->qsizes);
    samsa_free(accum->qids);
    samsa_free(accum->nodes);
    samsa_buf_fini(&accum->scratch);
    pthread_cond_destroy(&accum->inc_cond);
    pthread_mutex_destroy(&accum->inc_lock);
    pthread_rwlock_destroy(&accum->tlock);
    samsa_free(accum);
}

/* ---- topic table -------------------------------------------------------- */

/* @locks accum->tlock held (read or write) */
static samsa_tinfo_t *
accum_topic_find(samsa_accum_t *accum, const char *name)
{
    int32_t  i;

    for (i = 0; i < accum->ntopics; i++) {
        if (strcmp(accum->topics[i]->name, name) == 0) {
            return accum->topics[i];
        }
    }
    return NULL;
}

/* The topic's info, created on first use.  @locks accum->tlock taken */
static samsa_tinfo_t *
accum_topic_get(samsa_accum_t *accum, const char *name)
{
    samsa_tinfo_t  *t;

    pthread_rwlock_rdlock(&accum->tlock);
    t = accum_topic_find(accum, name);
    pthread_rwlock_unlock(&accum->tlock);
    if (t != NULL) {
        return t;
    }
    pthread_rwlock_wrlock(&accum->tlock);
    t = accum_topic_find(accum, name);
    if (t == NULL) {
        t = samsa_calloc(1, sizeof(*t));
        t->name = samsa_strdup(name);
        t->sticky = samsa_sticky_new(accum->conf.batch_size,
                                     accum->conf.seed
                                         + (uint64_t) accum->ntopics * 7919);
        if (accum->ntopics == accum->topics_cap) {
            accum->topics_cap = accum->topics_cap ? accum->topics_cap * 2 : 8;
            accum->topics = samsa_realloc(accum->topics,
                                          (size_t) accum->topics_cap
                                              * sizeof(*accum->topics));
        }
        accum->topics[accum->ntopics++] = t;
    }
    pthread_rwlock_unlock(&accum->tlock);
    return t;
}

/* The queue of (t, partition), created on first use.
 * @locks accum->tlock taken */
static samsa_pq_t *
accum_pq_get(samsa_accum_t *accum, samsa_tinfo_t *t, int32_t partition)
{
    samsa_pq_t  *pq = NULL;
    int32_t      n;

    pthread_rwlock_rdlock(&accum->tlock);
    if (partition < t->npqs) {
        pq = t->pqs[partition];
    }
    pthread_rwlock_unlock(&accum->tlock);
    if (pq != NULL) {
        return pq;
    }
    pthread_rwlock_wrlock(&accum->tlock);
    if (partition >= t->npqs) {
        n = partition + 1;
        t->pqs = samsa_realloc(t->pqs, (size_t) n * sizeof(*t->pqs));
        memset(t->pqs + t->npqs, 0,
               (size_t) (n - t->npqs) * sizeof(*t->pqs));
        t->npqs = n;
    }
    pq = t->pqs[partition];
    if (pq == NULL) {
        pq = samsa_calloc(1, sizeof(*pq));
        pthread_mutex_init(&pq->lock, NULL);
        pq->topic = t;
        pq->partition = partition;
        pq->leader = -1;
        pq->txn_wait = accum->conf.transactional;
        t->pqs[partition] = pq;
        accum->npqs_total++;
    }
    pthread_rwlock_unlock(&accum->tlock);
    return pq;
}

samsa_pq_t *
samsa_accum_pq_find(samsa_accum_t *accum, const char *topic,
                    int32_t partition)
{
    samsa_tinfo_t  *t;
    samsa_pq_t     *pq = NULL;

    pthread_rwlock_rdlock(&accum->tlock);
    t = accum_topic_find(accum, topic);
    if (t != NULL && partition >= 0 && partition < t->npqs) {
        pq = t->pqs[partition];
    }
    pthread_rwlock_unlock(&accum->tlock);
    return pq;
}

/* Refresh the sender's snapshot of all queues, grouped by topic.
 * @thread sender  @locks accum->tlock taken */
static void
accum_snapshot(samsa_accum_t *accum)
{
    samsa_tinfo_t  *t;
    int32_t         i, j;

    pthread_rwlock_rdlock(&accum->tlock);
    if (accum->npqs_total > accum->snap_cap) {
        accum->snap_cap = accum->npqs_total * 2;
        accum->snap = samsa_realloc(accum->snap, (size_t) accum->snap_cap
                                                     * sizeof(*accum->snap));
        accum->qsizes = samsa_realloc(accum->qsizes,
                                      (size_t) accum->snap_cap
                                          * sizeof(int32_t));
        accum->qids = samsa_realloc(accum->qids, (size_t) accum->snap_cap
                                                     * sizeof(int32_t));
    }
    if (accum->ntopics > accum->snap_topics_cap) {
        accum->snap_topics_cap = accum->ntopics * 2;
        accum->snap_topic_end = samsa_realloc(
            accum->snap_topic_end,
            (size_t) accum->snap_topics_cap * sizeof(int32_t));
        accum->snap_tinfos = samsa_realloc(
            accum->snap_tinfos,
            (size_t) accum->snap_topics_cap * sizeof(samsa_tinfo_t *));
    }
    accum->nsnap = 0;
    for (i = 0; i < accum->ntopics; i++) {
        t = accum->topics[i];
        for (j = 0; j < t->npqs; j++) {
            if (t->pqs[j] != NULL) {
                accum->snap[accum->nsnap++] = t->pqs[j];
            }
        }
        accum->snap_topic_end[i] = accum->nsnap;
        accum->snap_tinfos[i] = t;
    }
    accum->snap_ntopics = accum->ntopics;
    pthread_rwlock_unlock(&accum->tlock);
}

samsa_pq_t **
samsa_accum_pqs(samsa_accum_t *accum, int32_t *n)
{
    accum_snapshot(accum);
    *n = accum->nsnap;
    return accum->snap;
}

void
samsa_accum_reset_sequences(samsa_accum_t *accum)
{
    samsa_pq_t  **pqs;
    int32_t       n, i;

    pqs = samsa_accum_pqs(accum, &n);
    for (i = 0; i < n; i++) {
        pqs[i]->next_seq = 0;
    }
}

/* ---- append ------------------------------------------------------------- */

/* Add a new batch to the incomplete set.  @locks accum->inc_lock taken */
static void
accum_incomplete_add(samsa_accum_t *accum, samsa_producer_batch_t *batch)
{
    pthread_mutex_lock(&accum->inc_lock);
    batch->id = accum->next_id++;
    batch->inc_prev = accum->inc_tail;
    batch->inc_next = NULL;
    if (accum->inc_tail != NULL) {
        accum->inc_tail->inc_next = batch;
    } else {
        accum->inc_head = batch;
    }
    accum->inc_tail = batch;
    accum->nincomplete++;
    pthread_mutex_unlock(&accum->inc_lock);
}

typedef struct accum_rec {
    int64_t                 ts;
    const void             *key;
    size_t                  key_len;
    const void             *value;
    size_t                  value_len;
    const samsa_rechdr_t   *hdrs;
    size_t                  nhdrs;
    samsa_delivery_cb      *cb;
    void                   *opaque;
    samsa_future_t         *fut;
} accum_rec_t;

/* The record into batch, if it fits.  @locks pq->lock held */
static bool
accum_batch_append(samsa_producer_batch_t *batch, const accum_rec_t *r,
                   size_t *appended)
{
    return samsa_producer_batch_try_append(batch, r->ts, r->key, r->key_len,
                                           r->value, r->value_len, r->hdrs,
                                           r->nhdrs, r->cb, r->opaque, r->fut,
                                           appended);
}

/* What the append into batch, now pq's last, tells the producer.
 * @locks pq->lock held */
static void
accum_res_fill(const samsa_pq_t *pq, const samsa_producer_batch_t *batch,
               bool new_batch, samsa_append_res_t *res)
{
    res->batch_full = pq->nbatches > 1 || batch->full;
    res->new_batch = new_batch;
    res->sender_busy = atomic_load_explicit(&pq->sender_busy,
                                            memory_order_relaxed);
}

/* tryAppend: to the queue's last batch.  @locks pq->lock held */
static bool
accum_try_append(samsa_pq_t *pq, const accum_rec_t *r, size_t *appended,
                 samsa_append_res_t *res)
{
    samsa_producer_batch_t  *last = pq->tail;

    if (last == NULL || !accum_batch_append(last, r, appended)) {
        return false;
    }
    accum_res_fill(pq, last, false, res);
    return true;
}

/* appendNewBatch: retry the last batch, else make one over *bufp (taken
 * on success).  @locks pq->lock held */
static void
accum_append_new(samsa_accum_t *accum, samsa_pq_t *pq, const accum_rec_t *r,
                 uint8_t **bufp, size_t buf_size, size_t *appended,
                 samsa_append_res_t *res)
{
    samsa_producer_batch_t  *batch;
    bool            ok;

    if (accum_try_append(pq, r, appended, res)) {
        return;                     /* someone else made a batch: reuse */
    }
    pthread_mutex_lock(&accum->inc_lock);
    batch = accum->spare;
    if (batch != NULL) {
        accum->spare = batch->next;
        accum->nspare--;
    }
    pthread_mutex_unlock(&accum->inc_lock);
    if (batch != NULL) {
        samsa_producer_batch_init(batch, pq, *bufp, buf_size,
                                  accum->conf.codec, accum->conf.level,
                                  samsa_now_ms());
    } else {
        batch = samsa_producer_batch_new(pq, *bufp, buf_size,
                                         accum->conf.codec, accum->conf.level,
                                         samsa_now_ms());
    }
    *bufp = NULL;
    ok = accum_batch_append(batch, r, appended);
    samsa_assert(ok);
    if (pq->tail != NULL) {
        pq->tail->next = batch;
    } else {
        pq->head = batch;
    }
    pq->tail = batch;
    pq->nbatches++;
    accum_incomplete_add(accum, batch);
    accum_res_fill(pq, batch, true, res);
}

/* allBatchesFull: may the sticky partitioner switch away now? */
static bool
accum_all_full(const samsa_pq_t *pq)
{
    return pq->tail == NULL || pq->tail->full;
}

samsa_err_t
samsa_accum_append(samsa_accum_t *accum, const char *topic,
                   int32_t partition, const samsa_partview_t *view,
                   int64_t ts, const void *key, size_t key_len,
                   const void *value, size_t value_len,
                   const samsa_rechdr_t *hdrs, size_t nhdrs,
                   samsa_delivery_cb *cb, void *opaque, samsa_future_t *fut,
                   int64_t max_block_ms, samsa_append_res_t *res)
{
    accum_rec_t          r = { ts, key, key_len, value, value_len, hdrs,
                               nhdrs, cb, opaque, fut };
    samsa_tinfo_t       *t;
    samsa_pq_t          *pq;
    samsa_sticky_pick_t  pick = { 0, 0 };
    uint8_t             *buf = NULL;
    size_t               buf_size = 0, appended = 0;
    samsa_err_t          err = SAMSA_ERR_NONE;
    bool                 sticky = partition < 0;
    bool                 done = false;

    if (atomic_load_explicit(&accum->closed, memory_order_acquire)) {
        return SAMSA_ERR__SHUTDOWN;
    }
    t = accum_topic_get(accum, topic);
    while (!done && err == SAMSA_ERR_NONE) {
        if (sticky) {
            pick = samsa_sticky_peek(t->sticky, view);
            partition = pick.partition;
        }
        pq = accum_pq_get(accum, t, partition);
        pthread_mutex_lock(&pq->lock);
        if (sticky && samsa_sticky_changed(t->sticky, pick)) {
            pthread_mutex_unlock(&pq->lock);
            continue;
        }
        if (accum_try_append(pq, &r, &appended, res)) {
            done = true;
        } else if (buf != NULL) {
            if (atomic_load_explicit(&accum->closed, memory_order_acquire)) {
                err = SAMSA_ERR__SHUTDOWN;
            } else {
                accum_append_new(accum, pq, &r, &buf, buf_size, &appended,
                                 res);
                done = true;
            }
        }
        if (done && sticky) {
            samsa_sticky_update(t->sticky, pick, appended,
                                accum_all_full(pq), view);
        }
        pthread_mutex_unlock(&pq->lock);
        if (!done && err == SAMSA_ERR_NONE && buf == NULL) {
            /* The buffer is taken outside the queue lock: this may block
             * for max.block.ms while others keep appending. */
            buf_size = samsa_recbuild_size_upper(key_len, value_len, hdrs,
                                                 nhdrs);
            if (buf_size < accum->conf.batch_size) {
                buf_size = accum->conf.batch_size;
            }
            err = samsa_bufpool_alloc(accum->conf.pool, buf_size,
                                      max_block_ms, &buf);
        }
    }
    samsa_bufpool_dealloc(accum->conf.pool, buf, buf_size);
    res->partition = partition;
    return err;
}

/* ---- sender side -------------------------------------------------------- */

void
samsa_ready_fini(samsa_ready_t *ready)
{
    samsa_free(ready->nodes);
    memset(ready, 0, sizeof(*ready));
}

static accum_node_t *
accum_node(samsa_accum_t *accum, int32_t node, int64_t now_ms)
{
    int32_t  i;

    for (i = 0; i < accum->nnodes; i++) {
        if (accum->nodes[i].node == node) {
            return &accum->nodes[i];
        }
    }
    if (accum->nnodes == accum->nodes_cap) {
        accum->nodes_cap = accum->nodes_cap ? accum->nodes_cap * 2 : 8;
        accum->nodes = samsa_realloc(accum->nodes, (size_t) accum->nodes_cap
                                                       * sizeof(accum_node_t));
    }
    accum->nodes[accum->nnodes] = (accum_node_t) { node, now_ms, now_ms, 0 };
    return &accum->nodes[accum->nnodes++];
}

void
samsa_accum_node_latency(samsa_accum_t *accum, int32_t node, int64_t now_ms,
                         bool can_drain)
{
    accum_node_t  *n = accum_node(accum, node, now_ms);

    n->ready_ms = now_ms;
    if (can_drain) {
        n->drain_ms = now_ms;
    }
}

static bool
ready_has(const samsa_ready_t *out, int32_t node)
{
    int32_t  i;

    for (i = 0; i < out->nnodes; i++) {
        if (out->nodes[i] == node) {
            return true;
        }
    }
    return false;
}

static void
ready_add(samsa_ready_t *out, int32_t node)
{
    if (out->nnodes == out->cap) {
        out->cap = out->cap ? out->cap * 2 : 8;
        out->nodes = samsa_realloc(out->nodes,
                                   (size_t) out->cap * sizeof(int32_t));
    }
    out->nodes[out->nnodes++] = node;
}

/* What ready() needs of a queue's head, read under its lock. */
typedef struct accum_head {
    bool     present;
    bool     full;
    int32_t  nbatches;
    int32_t  attempts;
    int64_t  last_attempt_ms;
    int64_t  backoff_ms;
    bool     has_seq;
} accum_head_t;

static accum_head_t
accum_peek(samsa_pq_t *pq)
{
    accum_head_t  h = { false, false, 0, 0, 0, 0, false };

    pthread_mutex_lock(&pq->lock);
    if (pq->head != NULL) {
        h.present = true;
        h.full = pq->head->full;
        h.nbatches = pq->nbatches;
        h.attempts = pq->head->attempts;
        h.last_attempt_ms = pq->head->last_attempt_ms;
        h.backoff_ms = pq->head->backoff_ms;
        h.has_seq = pq->head->has_seq;
    }
    pthread_mutex_unlock(&pq->lock);
    return h;
}

/* The five conditions for one queue (partitionReady).  @thread sender */
static void
accum_pq_ready(samsa_accum_t *accum, samsa_pq_t *pq, const accum_head_t *h,
               bool exhausted, int64_t now_ms, samsa_ready_t *out)
{
    int64_t  waited, time_to_wait, left;
    bool     backing_off, full, expired, sendable;

    if (!h->present || pq->muted || pq->txn_wait
        || (h->has_seq && pq->inflight > 0)
        || ready_has(out, pq->leader)) {
        return;
    }
    waited = now_ms - h->last_attempt_ms;
    if (waited < 0) {
        waited = 0;
    }
    backing_off = h->attempts > 0 && waited < h->backoff_ms;
    time_to_wait = backing_off ? h->backoff_ms : accum->conf.linger_ms;
    full = h->nbatches > 1 || h->full;
    expired = waited >= time_to_wait;
    sendable = full || expired || exhausted
               || atomic_load_explicit(&accum->closed, memory_order_acquire)
               || atomic_load_explicit(&accum->flushes,
                                       memory_order_acquire) > 0;
    if (sendable && !backing_off) {
        ready_add(out, pq->leader);
    } else {
        left = time_to_wait - waited;
        if (left < out->next_check_ms) {
            out->next_check_ms = left < 0 ? 0 : left;
        }
    }
}

/* Is node's leader unavailable for adaptive partitioning? */
static bool
accum_node_unavailable(samsa_accum_t *accum, int32_t node)
{
    int32_t  i;

    if (accum->conf.availability_timeout_ms <= 0) {
        return false;
    }
    for (i = 0; i < accum->nnodes; i++) {
        if (accum->nodes[i].node == node) {
            return accum->nodes[i].ready_ms - accum->nodes[i].drain_ms
                   > accum->conf.availability_timeout_ms;
        }
    }
    return false;
}

void
samsa_accum_ready(samsa_accum_t *accum, uint64_t md_gen,
                  samsa_accum_leader_fn *leader_fn, void *ctx,
                  int64_t now_ms, samsa_ready_t *out)
{
    bool           exhausted = samsa_bufpool_waiters(accum->conf.pool) > 0;
    samsa_pq_t    *pq;
    accum_head_t   h;
    int32_t        ti, i = 0, nq, total;

    out->nnodes = 0;
    out->next_check_ms = INT64_MAX;
    out->unknown_leaders = false;
    accum_snapshot(accum);
    for (ti = 0; ti < accum->snap_ntopics; ti++) {
        nq = 0;
        total = 0;
        for (; i < accum->snap_topic_end[ti]; i++) {
            pq = accum->snap[i];
            if (pq->leader_gen != md_gen) {
                pq->leader = leader_fn(ctx, pq->topic->name, pq->partition);
                pq->leader_gen = md_gen;
            }
            h = accum_peek(pq);
            if (pq->leader < 0) {
                out->unknown_leaders |= h.present;
                continue;
            }
            total++;
            if (!accum_node_unavailable(accum, pq->leader)) {
                accum->qsizes[nq] = h.nbatches;
                accum->qids[nq++] = pq->partition;
            }
            accum_pq_ready(accum, pq, &h, exhausted, now_ms, out);
        }
        if (accum->conf.adaptive) {
            samsa_sticky_load_stats(accum->snap_tinfos[ti]->sticky,
                                    accum->qsizes, accum->qids, nq, total);
        }
    }
}

/* Pop pq's head if it may go now within the size left.
 * @locks pq->lock taken */
static samsa_producer_batch_t *
accum_pop_ready(samsa_pq_t *pq, size_t size, size_t max_size, bool first,
                int64_t now_ms, bool *stop)
{
    samsa_producer_batch_t  *b;

    pthread_mutex_lock(&pq->lock);
    b = pq->head;
    if (b != NULL && b->has_seq && pq->inflight > 0) {
        b = NULL;               /* sequenced (a retry): waits its turn */
    } else if (b != NULL && b->attempts > 0
        && now_ms - b->last_attempt_ms < b->backoff_ms) {
        b = NULL;
    } else if (b != NULL && !first
               && size + samsa_recbuild_size(&b->rb) > max_size) {
        *stop = true;
        b = NULL;
    } else if (b != NULL) {
        pq->head = b->next;
        if (pq->head == NULL) {
            pq->tail = NULL;
        }
        pq->nbatches--;
        b->next = NULL;
        b->full = true;
    }
    pthread_mutex_unlock(&pq->lock);
    return b;
}

/* Close a drained batch (compression); fall back to no compression if the
 * codec library fails.  @thread sender */
static void
accum_close_batch(samsa_accum_t *accum, samsa_producer_batch_t *b)
{
    if (samsa_recbuild_close(&b->rb, &accum->scratch) != SAMSA_ERR_NONE) {
        samsa_warn("producer: %s compression failed; sending uncompressed",
                   samsa_codec_name(b->rb.codec));
        b->rb.codec = SAMSA_CODEC_NONE;
        if (samsa_recbuild_close(&b->rb, &accum->scratch)
            != SAMSA_ERR_NONE) {
            samsa_assert(!"uncompressed close cannot fail");
        }
    }
}

samsa_producer_batch_t *
samsa_accum_drain(samsa_accum_t *accum, int32_t node, size_t max_size,
                  int64_t now_ms)
{
    accum_node_t   *n;
    samsa_producer_batch_t  *head = NULL, *tail = NULL, *b;
    samsa_pq_t     *pq;
    size_t          size = 0;
    int32_t         i, idx, start;
    bool            stop = false;

    if (accum->nsnap == 0) {
        accum_snapshot(accum);
    }
    if (accum->nsnap == 0) {
        return NULL;
    }
    n = accum_node(accum, node, now_ms);
    start = n->drain_index % accum->nsnap;
    for (i = 0; i < accum->nsnap && !stop; i++) {
        idx = (start + i) % accum->nsnap;
        pq = accum->snap[idx];
        if (pq->leader != node || pq->muted || pq->txn_wait) {
            continue;
        }
        b = accum_pop_ready(pq, size, max_size, head == NULL, now_ms, &stop);
        if (b == NULL) {
            continue;
        }
        accum_close_batch(accum, b);
        b->drained_ms = now_ms;
        size += samsa_recbuild_size(&b->rb);
        if (tail != NULL) {
            tail->next = b;
        } else {
            head = b;
        }
        tail = b;
        n->drain_index = idx + 1;
    }
    return head;
}

bool
samsa_accum_set_busy(samsa_accum_t *accum, samsa_accum_busy_fn *busy_fn,
                     void *ctx)
{
    samsa_pq_t  *pq;
    bool         was, busy, again = false;
    int32_t      i;

    for (i = 0; i < accum->nsnap; i++) {
        pq = accum->snap[i];
        busy = pq->muted || (pq->leader >= 0 && busy_fn(ctx, pq->leader));
        /* under the queue lock: an append either came before (and is
         * caught by "again") or reads the new value */
        pthread_mutex_lock(&pq->lock);
        was = atomic_load_explicit(&pq->sender_busy, memory_order_relaxed);
        if (was != busy) {
            atomic_store_explicit(&pq->sender_busy, busy,
                                  memory_order_relaxed);
            again |= was && pq->head != NULL;
        }
        pthread_mutex_unlock(&pq->lock);
    }
    return again;
}

/* Is sequence a before b (31-bit sequences that wrap to 0)? */
static bool
accum_seq_before(int32_t a, int32_t b)
{
    uint32_t  d = ((uint32_t) b - (uint32_t) a) & 0x7fffffffu;

    return d != 0 && d < 0x40000000u;
}

/* Does queued batch q carry a sequence of the same producer id and epoch
 * as b, before b's? */
static bool
accum_seq_earlier(const samsa_producer_batch_t *q, const samsa_producer_batch_t *b)
{
    return q->has_seq && b->has_seq
           && q->rb.producer_id == b->rb.producer_id
           && q->rb.producer_epoch == b->rb.producer_epoch
           && accum_seq_before(q->rb.base_seq, b->rb.base_seq);
}

/* Put the list first..last (in sequence order) back into pq in sequence
 * order (Java's insertInSequenceOrder): after the queued batches of the
 * same producer id and epoch whose sequences come before first's, so that
 * retries go out in the order the broker expects; at the front if first
 * has no sequence.  @locks pq->lock held */
static void
accum_insert_ordered(samsa_pq_t *pq, samsa_producer_batch_t *first,
                     samsa_producer_batch_t *last, int32_t n)
{
    samsa_producer_batch_t  *prev = NULL, *cur = pq->head;

    while (cur != NULL && accum_seq_earlier(cur, first)) {
        prev = cur;
        cur = cur->next;
    }
    last->next = cur;
    if (prev != NULL) {
        prev->next = first;
    } else {
        pq->head = first;
    }
    if (cur == NULL) {
        pq->tail = last;
    }
    pq->nbatches += n;
}

bool
samsa_accum_has_earlier(samsa_accum_t *accum, const samsa_producer_batch_t *batch)
{
    samsa_pq_t  *pq = batch->pq;
    bool         found;

    (void) accum;
    pthread_mutex_lock(&pq->lock);
    found = pq->head != NULL && accum_seq_earlier(pq->head, batch);
    pthread_mutex_unlock(&pq->lock);
    return found;
}

void
samsa_accum_reenqueue(samsa_accum_t *accum, samsa_producer_batch_t *batch,
                      int64_t backoff_ms, int64_t now_ms)
{
    samsa_pq_t  *pq = batch->pq;

    (void) accum;
    batch->attempts++;
    batch->last_attempt_ms = now_ms;
    batch->backoff_ms = backoff_ms;
    batch->in_retry = true;
    batch->full = true;
    pthread_mutex_lock(&pq->lock);
    accum_insert_ordered(pq, batch, batch, 1);
    pthread_mutex_unlock(&pq->lock);
}

/* Give back a batch's buffer: to the pool, or to the heap for a split
 * batch's.  @thread sender */
static void
accum_buf_release(samsa_accum_t *accum, samsa_producer_batch_t *batch)
{
    if (batch->off_pool) {
        samsa_free(batch->buf);
    } else {
        samsa_bufpool_dealloc(accum->conf.pool, batch->buf, batch->buf_size);
    }
    batch->buf = NULL;
}

int32_t
samsa_accum_split_reenqueue(samsa_accum_t *accum, samsa_producer_batch_t *big)
{
    samsa_pq_t     *pq = big->pq;
    samsa_producer_batch_t  *list, *b, *last = NULL, *prev, *next;
    int32_t         n = 0;

    list = samsa_producer_batch_split(big, accum->conf.batch_size, &accum->scratch);
    if (list == NULL) {
        return 0;
    }
    for (b = list; b != NULL; b = b->next) {
        n++;
        last = b;
    }
    pthread_mutex_lock(&accum->inc_lock);
    prev = big->inc_prev;
    next = big->inc_next;
    for (b = list; b != NULL; b = b->next) {
        b->inc_prev = prev;
        if (prev != NULL) {
            prev->inc_next = b;
        } else {
            accum->inc_head = b;
        }
        prev = b;
    }
    last->inc_next = next;
    if (next != NULL) {
        next->inc_prev = last;
    } else {
        accum->inc_tail = last;
    }
    accum->nincomplete += n - 1;
    pthread_mutex_unlock(&accum->inc_lock);
    pthread_mutex_lock(&pq->lock);
    accum_insert_ordered(pq, list, last, n);
    pthread_mutex_unlock(&pq->lock);
    accum_buf_release(accum, big);
    samsa_producer_batch_free(big);
    return n;
}

/* Remove from every queue the batches pred selects (from the head while
 * it holds, or all).  @thread sender */
static samsa_producer_batch_t *
accum_take(samsa_accum_t *accum, int64_t now_ms, bool all)
{
    samsa_producer_batch_t  *head = NULL, *tail = NULL, *b;
    samsa_pq_t     *pq;
    int32_t         i;

    accum_snapshot(accum);
    for (i = 0; i < accum->nsnap; i++) {
        pq = accum->snap[i];
        pthread_mutex_lock(&pq->lock);
        while ((b = pq->head) != NULL
               && (all || now_ms - b->created_ms
                              >= accum->conf.delivery_timeout_ms)) {
            pq->head = b->next;
            if (pq->head == NULL) {
                pq->tail = NULL;
            }
            pq->nbatches--;
            b->next = NULL;
            b->full = true;
            if (tail != NULL) {
                tail->next = b;
            } else {
                head = b;
            }
            tail = b;
        }
        pthread_mutex_unlock(&pq->lock);
    }
    return head;
}

samsa_producer_batch_t *
samsa_accum_expired(samsa_accum_t *accum, int64_t now_ms)
{
    return accum_take(accum, now_ms, false);
}

samsa_producer_batch_t *
samsa_accum_take_all(samsa_accum_t *accum)
{
    return accum_take(accum, 0, true);
}

void
samsa_accum_release(samsa_accum_t *accum, samsa_producer_batch_t *batch)
{
    accum_buf_release(accum, batch);
    pthread_mutex_lock(&accum->inc_lock);
    if (batch->inc_prev != NULL) {
        batch->inc_prev->inc_next = batch->inc_next;
    } else {
        accum->inc_head = batch->inc_next;
    }
    if (batch->inc_next != NULL) {
        batch->inc_next->inc_prev = batch->inc_prev;
    } else {
        accum->inc_tail = batch->inc_prev;
    }
    accum->nincomplete--;
    pthread_cond_broadcast(&accum->inc_cond);
    if (accum->nspare < ACCUM_MAX_SPARE) {
        batch->next = accum->spare;
        accum->spare = batch;
        accum->nspare++;
        batch = NULL;
    }
    pthread_mutex_unlock(&accum->inc_lock);
    samsa_producer_batch_free(batch);
}

bool
samsa_accum_has_queued(samsa_accum_t *accum)
{
    samsa_tinfo_t  *t;
    bool            any = false;
    int32_t         i, j;

    pthread_rwlock_rdlock(&accum->tlock);
    for (i = 0; i < accum->ntopics && !any; i++) {
        t = accum->topics[i];
        for (j = 0; j < t->npqs && !any; j++) {
            if (t->pqs[j] != NULL) {
                pthread_mutex_lock(&t->pqs[j]->lock);
                any = t->pqs[j]->head != NULL;
                pthread_mutex_unlock(&t->pqs[j]->lock);
            }
        }
    }
    pthread_rwlock_unlock(&accum->tlock);
    return any;
}

int64_t
samsa_accum_incomplete(samsa_accum_t *accum)
{
    return SAMSA_LOCKED_READ(&accum->inc_lock, accum->nincomplete);
}

void
samsa_accum_flush_begin(samsa_accum_t *accum)
{
    atomic_fetch_add_explicit(&accum->flushes, 1, memory_order_acq_rel);
}

void
samsa_accum_flush_end(samsa_accum_t *accum)
{
    atomic_fetch_sub_explicit(&accum->flushes, 1, memory_order_acq_rel);
}

samsa_err_t
samsa_accum_flush_wait(samsa_accum_t *accum, int64_t timeout_ms)
{
    struct timespec  deadline = { 0, 0 };
    samsa_err_t      err = SAMSA_ERR_NONE;
    uint64_t         target;

    if (timeout_ms >= 0) {
        deadline = samsa_timespec_after(CLOCK_MONOTONIC, timeout_ms);
    }
    pthread_mutex_lock(&accum->inc_lock);
    target = accum->next_id;
    while (accum->inc_head != NULL && accum->inc_head->id < target) {
        if (timeout_ms < 0) {
            pthread_cond_wait(&accum->inc_cond, &accum->inc_lock);
        } else if (pthread_cond_timedwait(&accum->inc_cond, &accum->inc_lock,
                                          &deadline) != 0) {
            err = SAMSA_ERR__TIMED_OUT;
            break;
        }
    }
    pthread_mutex_unlock(&accum->inc_lock);
    return err;
}

void
samsa_accum_close(samsa_accum_t *accum)
{
    atomic_store_explicit(&accum->closed, true, memory_order_release);
}
