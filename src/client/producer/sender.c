/*
 * client/producer/sender.c - the sender thread (see sender.h).
 * Threads: fields marked [sender] belong to the sender thread; [atomic]
 * ones are read by app threads too; [const] after start.
 */
#include "client/producer/sender.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proto/gen/InitProducerId.h"
#include "proto/gen/Produce.h"
#include "proto/gen/apis.h"
#include "util/alloc.h"
#include "util/arena.h"
#include "util/diag.h"
#include "util/time.h"

#define SENDER_MAX_POLL_MS  250     /* bounds timeout detection latency */

struct samsa_sender {
    const samsa_pconf_t  *pc;           /* [const] */
    samsa_accum_t        *accum;        /* [const] */
    samsa_mdcache_t      *mdc;          /* [const] */
    samsa_bufpool_t      *pool;         /* [const] */
    samsa_pmetrics_t     *m;            /* [const] */
    samsa_txnmgr_t       *tm;           /* [const] NULL: not transactional */
    samsa_netclient_t    *nc;           /* [sender] */
    pthread_t             thread;
    _Atomic bool          running;      /* [atomic] false: finish and exit */
    _Atomic bool          force;        /* [atomic] abort what is left */
    _Atomic int           fatal;        /* [atomic] samsa_err_t */
    samsa_err_t           auth_err;     /* [sender] the netclient's SASL
                                           failure, as told the mdcache */
    samsa_ready_t         ready;        /* [sender] */
    int64_t               inflight;     /* [sender] batches in requests */
    bool                  md_inflight;  /* [sender] */
    int64_t               md_last_ms;   /* [sender] last Metadata sent */
    bool                  pid_inflight; /* [sender] */
    int64_t               pid_last_ms;  /* [sender] */
    bool                  need_bump;    /* [sender] bump the epoch */
    int64_t               pid;          /* [sender] -1: none yet */
    int16_t               epoch;        /* [sender] */
    uint64_t              rng;          /* [sender] backoff jitter */
};

/* One Produce request in flight. */
typedef struct sender_preq {
    samsa_producer_batch_t  **batches;
    int32_t          n;
    int16_t          version;
} sender_preq_t;

static void
sender_set_fatal(samsa_sender_t *s, samsa_err_t err)
{
    int  none = SAMSA_ERR_NONE;

    if (atomic_compare_exchange_strong(&s->fatal, &none, (int) err)) {
        samsa_error("producer: fatal error %s: %s", samsa_err_name(err),
                    samsa_err_text(err));
    }
}

samsa_err_t
samsa_sender_fatal(samsa_sender_t *s)
{
    return (samsa_err_t) atomic_load_explicit(&s->fatal,
                                              memory_order_acquire);
}

void
samsa_sender_wakeup(samsa_sender_t *s)
{
    samsa_netclient_wakeup(s->nc);
}

/* ---- completing batches ------------------------------------------------- */

/* Done with batch: callbacks, metrics, unmute, buffer back.
 * @thread sender */
static void
sender_complete(samsa_sender_t *s, samsa_producer_batch_t *b, int64_t base_offset,
                int64_t log_append_time, samsa_err_t err)
{
    samsa_pq_t  *pq = b->pq;
    int64_t      n = b->nthunks;
    /* a sequence of the current producer id and epoch that the broker may
     * or may not have: later batches would be out of order */
    bool         unresolved = b->has_seq && b->rb.producer_id == s->pid
                              && b->rb.producer_epoch == s->epoch;

    samsa_producer_batch_complete(b, pq->topic->name, pq->partition, base_offset,
                         log_append_time, err);
    atomic_fetch_add_explicit(err == SAMSA_ERR_NONE
                                  ? &s->m->records_delivered
                                  : &s->m->record_error_total,
                              n, memory_order_relaxed);
    atomic_fetch_sub_explicit(&s->m->records_in_flight, n,
                              memory_order_relaxed);
    if (err != SAMSA_ERR_NONE && s->tm != NULL) {
        /* the transaction must be aborted (or the producer is fenced);
         * the epoch bump waits for the abort */
        samsa_txnmgr_batch_failed(s->tm, err, unresolved);
    } else if (err != SAMSA_ERR_NONE && unresolved && s->pc->idempotence) {
        /* Its sequence is unresolved: later batches would be out of
         * order.  Bump the epoch (KIP-360) once nothing is in flight. */
        s->need_bump = true;
        samsa_info("producer: %s-%d: batch at sequence %d failed with %s: "
                   "bumping the epoch (KIP-360)", pq->topic->name,
                   pq->partition, b->rb.base_seq, samsa_err_name(err));
    }
    samsa_accum_release(s->accum, b);
}

static bool
sender_retriable(samsa_err_t err)
{
    switch ((int) err) {
    case SAMSA_ERR_CORRUPT_MESSAGE:
    case SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION:
    case SAMSA_ERR_LEADER_NOT_AVAILABLE:
    case SAMSA_ERR_NOT_LEADER_OR_FOLLOWER:
    case SAMSA_ERR_REQUEST_TIMED_OUT:
    case SAMSA_ERR_NETWORK_EXCEPTION:
    case SAMSA_ERR_COORDINATOR_LOAD_IN_PROGRESS:
    case SAMSA_ERR_NOT_ENOUGH_REPLICAS:
    case SAMSA_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND:
    case SAMSA_ERR_KAFKA_STORAGE_ERROR:
    case SAMSA_ERR_FENCED_LEADER_EPOCH:
    case SAMSA_ERR_UNKNOWN_LEADER_EPOCH:
    case SAMSA_ERR_THROTTLING_QUOTA_EXCEEDED:
    case SAMSA_ERR__CLOSED:
    case SAMSA_ERR__TIMED_OUT:
    case SAMSA_ERR__IO:
    case SAMSA_ERR__BAD_MSG:
    case SAMSA_ERR__UNDERFLOW:
    case SAMSA_ERR__RESOLVE:
        return true;
    default:
        return false;
    }
}

/* Errors after which the producer's metadata is stale. */
static bool
sender_invalidates_metadata(samsa_err_t err)
{
    return err == SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION
           || err == SAMSA_ERR_LEADER_NOT_AVAILABLE
           || err == SAMSA_ERR_NOT_LEADER_OR_FOLLOWER
           || err == SAMSA_ERR_KAFKA_STORAGE_ERROR
           || err == SAMSA_ERR_FENCED_LEADER_EPOCH
           || err == SAMSA_ERR_UNKNOWN_LEADER_EPOCH
           || err == SAMSA_ERR__CLOSED || err == SAMSA_ERR__TIMED_OUT
           || err == SAMSA_ERR__IO;
}

/* Errors that mean the broker lost or rejects our sequence state: bump
 * the epoch and send again with fresh sequences (KIP-360). */
static bool
sender_needs_bump(samsa_err_t err)
{
    return err == SAMSA_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER
           || err == SAMSA_ERR_UNKNOWN_PRODUCER_ID
           || err == SAMSA_ERR_INVALID_PRODUCER_EPOCH
           || err == SAMSA_ERR_INVALID_PRODUCER_ID_MAPPING;
}

/* retry.backoff.ms doubling per attempt up to retry.backoff.max.ms, with
 * Java's 20% jitter.  @thread sender */
static int64_t
sender_backoff(samsa_sender_t *s, int32_t attempts)
{
    double    v = (double) s->pc->net.retry_backoff_ms;
    double    jitter;
    int32_t   i;

    for (i = 0; i < attempts && v < (double) s->pc->net.retry_backoff_max_ms;
         i++) {
        v *= 2;
    }
    if (v > (double) s->pc->net.retry_backoff_max_ms) {
        v = (double) s->pc->net.retry_backoff_max_ms;
    }
    s->rng = s->rng * 6364136223846793005ULL + 1442695040888963407ULL;
    jitter = 0.8 + 0.4 * (double) (s->rng >> 11) / (double) (1ULL << 53);
    return (int64_t) (v * jitter);
}

/* A batch's send failed with err: retry it or fail it.  @thread sender */
static void
sender_fail_or_retry(samsa_sender_t *s, samsa_producer_batch_t *b, samsa_err_t err,
                     int64_t now)
{
    samsa_pq_t  *pq = b->pq;
    /* OUT_OF_ORDER_SEQUENCE_NUMBER behind an earlier batch of the
     * partition that is queued for a retry is expected (the broker never
     * got that one): retry with the same sequence, after it */
    bool         behind = err == SAMSA_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER
                          && samsa_accum_has_earlier(s->accum, b);
    bool         bump = !behind && s->pc->idempotence && s->tm == NULL
                        && sender_needs_bump(err);
    bool         can_retry;

    pq->muted = false;
    pq->inflight--;
    can_retry = (sender_retriable(err) || bump || behind)
                && b->attempts < s->pc->retries
                && now - b->created_ms < s->pc->delivery_timeout_ms
                && !atomic_load_explicit(&s->force, memory_order_acquire)
                && samsa_sender_fatal(s) == SAMSA_ERR_NONE;
    if (sender_invalidates_metadata(err)) {
        samsa_mdcache_request_update(s->mdc);
    }
    if (!can_retry) {
        if (now - b->created_ms >= s->pc->delivery_timeout_ms
            && sender_retriable(err)) {
            err = SAMSA_ERR__TIMED_OUT;
        }
        sender_complete(s, b, -1, -1, err);
        return;
    }
    if (bump) {
        /* re-sequenced under the new epoch (sender_prepare); it keeps its
         * old sequence until then, to be queued in order */
        s->need_bump = true;
        samsa_info("producer: %s-%d: batch at sequence %d (%d records) "
                   "refused with %s: bumping the epoch (KIP-360)",
                   pq->topic->name, pq->partition, b->rb.base_seq,
                   b->nthunks, samsa_err_name(err));
    }
    samsa_debug("producer: retrying %s-%d (attempt %d): %s",
                pq->topic->name, pq->partition, b->attempts + 1,
                samsa_err_name(err));
    atomic_fetch_add_explicit(&s->m->record_retry_total, b->nthunks,
                              memory_order_relaxed);
    samsa_accum_reenqueue(s->accum, b, sender_backoff(s, b->attempts), now);
}

/* ---- Produce ------------------------------------------------------------ */

static const samsa_PartitionProduceResponse_t *
sender_find_presp(const samsa_ProduceResponse_t *resp, const char *topic,
                  int32_t partition)
{
    const samsa_TopicProduceResponse_t  *t;
    int32_t                              i, j;

    for (i = 0; i < resp->Responses_cnt; i++) {
        t = &resp->Responses[i];
        if (!samsa_slice_eq_cstr(t->Name, topic)) {
            continue;
        }
        for (j = 0; j < t->PartitionResponses_cnt; j++) {
            if (t->PartitionResponses[j].Index == partition) {
                return &t->PartitionResponses[j];
            }
        }
    }
    return NULL;
}

static void
sender_preq_free(sender_preq_t *preq)
{
    samsa_free(preq->batches);
    samsa_free(preq);
}

/* The broker rejected batch b as too large: split it (Java's
 * splitAndReenqueue) unless it is a single record, which then fails with
 * MESSAGE_TOO_LARGE.  The pieces keep b's sequences, so the partition
 * needs no epoch bump.  Returns true if b was split (and freed).
 * @thread sender */
static bool
sender_split(samsa_sender_t *s, samsa_producer_batch_t *b)
{
    samsa_pq_t  *pq = b->pq;
    int32_t      nrec = b->nthunks, n;

    if (nrec < 2 || atomic_load_explicit(&s->force, memory_order_acquire)) {
        return false;
    }
    n = samsa_accum_split_reenqueue(s->accum, b);
    if (n == 0) {
        return false;
    }
    pq->muted = false;
    pq->inflight--;
    atomic_fetch_add_explicit(&s->m->batch_split_total, 1,
                              memory_order_relaxed);
    samsa_info("producer: %s-%d: batch of %d records too large for the "
               "broker; split into %d", pq->topic->name, pq->partition,
               nrec, n);
    return true;
}

/* @thread sender */
static void
sender_on_produce(void *ctx, int32_t node, samsa_err_t err, samsa_rd_t *body,
                  void *opaque)
{
    samsa_sender_t                          *s = ctx;
    sender_preq_t                           *preq = opaque;
    samsa_ProduceResponse_t                  resp;
    const samsa_PartitionProduceResponse_t  *pr;
    samsa_arena_t                            arena = SAMSA_ARENA_INIT;
    samsa_producer_batch_t                           *b;
    samsa_err_t                              e;
    int64_t                                  now = samsa_now_ms();
    int32_t                                  i;

    s->inflight -= preq->n;
    if (err == SAMSA_ERR_NONE && body == NULL) {       /* acks=0: written */
        for (i = 0; i < preq->n; i++) {
            preq->batches[i]->pq->muted = false;
            preq->batches[i]->pq->inflight--;
            sender_complete(s, preq->batches[i], -1, -1, SAMSA_ERR_NONE);
        }
        sender_preq_free(preq);
        return;
    }
    if (err == SAMSA_ERR_NONE) {
        err = samsa_ProduceResponse_decode(body, preq->version, &arena,
                                           &resp);
    }
    if (err == SAMSA_ERR_NONE) {        /* KIP-219: hold the node back */
        samsa_netclient_throttle(s->nc, node, SAMSA_API_Produce,
                                 preq->version, resp.ThrottleTimeMs, now);
    }
    for (i = 0; i < preq->n; i++) {
        b = preq->batches[i];
        pr = err == SAMSA_ERR_NONE
                 ? sender_find_presp(&resp, b->pq->topic->name,
                                     b->pq->partition)
                 : NULL;
        e = err != SAMSA_ERR_NONE ? err
            : pr == NULL ? SAMSA_ERR__BAD_MSG : (samsa_err_t) pr->ErrorCode;
        if (e == SAMSA_ERR_NONE || e == SAMSA_ERR_DUPLICATE_SEQUENCE_NUMBER) {
            b->pq->muted = false;
            b->pq->inflight--;
            sender_complete(s, b, pr->BaseOffset, pr->LogAppendTimeMs,
                            SAMSA_ERR_NONE);
        } else if (e == SAMSA_ERR_MESSAGE_TOO_LARGE
                   && sender_split(s, b)) {
            /* split and re-enqueued (the broker stored none of it) */
        } else {
            sender_fail_or_retry(s, b, e, now);
        }
    }
    samsa_arena_fini(&arena);
    sender_preq_free(preq);
}

/* Give drained batches their sequences (idempotence: drain hands a
 * partition's batches over in sequence order, so several may be in flight)
 * and, with max.in.flight=1, mute their partitions (ordering).
 * @thread sender */
static void
sender_prepare(samsa_sender_t *s, samsa_producer_batch_t *b)
{
    samsa_pq_t  *pq = b->pq;

    if (s->pc->idempotence) {
        if (!b->has_seq || b->rb.producer_id != s->pid
            || b->rb.producer_epoch != s->epoch) {
            samsa_recbuild_set_producer(&b->rb, s->pid, s->epoch,
                                        pq->next_seq, s->tm != NULL);
            pq->next_seq += b->rb.count;
            if (pq->next_seq < 0) {
                pq->next_seq -= INT32_MIN;      /* wraps as Java's does */
            }
            b->has_seq = true;
        }
    }
    if (s->pc->max_in_flight == 1) {
        pq->muted = true;
    }
    pq->inflight++;
    if (pq->inflight > atomic_load_explicit(&s->m->partition_inflight_max,
                                            memory_order_relaxed)) {
        atomic_store_explicit(&s->m->partition_inflight_max, pq->inflight,
                              memory_order_relaxed);
    }
    if (b->attempts == 0) {
        atomic_fetch_add_explicit(&s->m->batch_total, 1,
                                  memory_order_relaxed);
    }
}

/* One Produce request for node with the drained batches.  @thread sender */
static void
sender_produce(samsa_sender_t *s, int32_t node, samsa_producer_batch_t *list,
               int64_t now)
{
    samsa_ProduceRequest_t         req;
    samsa_TopicProduceData_t      *topics;
    samsa_PartitionProduceData_t  *parts;
    sender_preq_t                 *preq = samsa_calloc(1, sizeof(*preq));
    samsa_buf_t                    frame = SAMSA_BUF_INIT;
    samsa_producer_batch_t                 *b;
    samsa_wr_t                     wr;
    samsa_err_t                    err;
    int32_t                        n = 0, i, nt = 0;
    int64_t                        bytes = 0;
    int16_t                        lo = s->pc->codec == SAMSA_CODEC_ZSTD
                                            ? 7 : 3;

    for (b = list; b != NULL; b = b->next) {
        n++;
    }
    preq->batches = samsa_calloc((size_t) n, sizeof(*preq->batches));
    parts = samsa_calloc((size_t) n, sizeof(*parts));
    topics = samsa_calloc((size_t) n, sizeof(*topics));
    for (b = list; b != NULL; b = b->next) {
        sender_prepare(s, b);
        preq->batches[preq->n++] = b;
    }
    for (i = 0; i < n; i++) {
        b = preq->batches[i];
        /* group by topic: batches of a topic are adjacent unless the
         * rotation split them; a new entry per change is still valid */
        if (nt == 0 || !samsa_slice_eq_cstr(topics[nt - 1].Name,
                                            b->pq->topic->name)) {
            samsa_TopicProduceData_init(&topics[nt]);
            topics[nt].Name = samsa_slice_cstr(b->pq->topic->name);
            topics[nt].PartitionData = &parts[i];
            nt++;
        }
        samsa_PartitionProduceData_init(&parts[i]);
        parts[i].Index = b->pq->partition;
        parts[i].Records.bytes = (samsa_slice_t) {
            (const char *) b->rb.buf, samsa_recbuild_size(&b->rb) };
        topics[nt - 1].PartitionData_cnt++;
        bytes += (int64_t) samsa_recbuild_size(&b->rb);
        b->next = NULL;
    }
    samsa_ProduceRequest_init(&req);
    req.TransactionalId = s->pc->transactional_id != NULL
                              ? samsa_slice_cstr(s->pc->transactional_id)
                              : SAMSA_SLICE_NULL;
    req.Acks = s->pc->acks;
    req.TimeoutMs = (int32_t) s->pc->net.request_timeout_ms;
    req.TopicData = topics;
    req.TopicData_cnt = nt;
    preq->version = samsa_netclient_version(s->nc, node, SAMSA_API_Produce,
                                            lo, 9);
    s->inflight += n;
    if (preq->version < 0) {
        samsa_warn("producer: node %d supports no usable Produce version",
                   node);
        samsa_free(parts);
        samsa_free(topics);
        sender_on_produce(s, node, SAMSA_ERR_UNSUPPORTED_VERSION, NULL, preq);
        return;
    }
    samsa_netclient_frame_begin(s->nc, SAMSA_API_Produce, preq->version,
                                &frame, &wr);
    samsa_ProduceRequest_encode(&wr, preq->version, &req);
    samsa_free(parts);
    samsa_free(topics);
    atomic_fetch_add_explicit(&s->m->request_total, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->m->bytes_sent, bytes, memory_order_relaxed);
    err = samsa_netclient_send(s->nc, node, &frame, SAMSA_API_Produce,
                               preq->version, s->pc->acks != 0,
                               sender_on_produce, s, preq, now);
    if (err != SAMSA_ERR_NONE) {
        samsa_buf_fini(&frame);
        sender_on_produce(s, node, SAMSA_ERR__CLOSED, NULL, preq);
    }
}

/* ---- Metadata ----------------------------------------------------------- */

static void
sender_on_metadata(void *ctx, int32_t node, samsa_err_t err,
                   samsa_rd_t *body, void *opaque)
{
    samsa_sender_t  *s = ctx;

    (void) node;
    s->md_inflight = false;
    (void) samsa_mdcache_answer(s->mdc, s->nc, err, body,
                                (int16_t) (intptr_t) opaque);
}

/* @thread sender */
static void
sender_maybe_metadata(samsa_sender_t *s, int64_t now)
{
    samsa_mdcache_send_t   sent;
    char                 **topics;
    int64_t                next;
    int32_t                n;

    if (s->md_inflight || !samsa_mdcache_update_due(s->mdc, now, &next)
        || now - s->md_last_ms < s->pc->net.retry_backoff_ms) {
        return;
    }
    topics = samsa_mdcache_topics(s->mdc, &n);
    sent = samsa_mdcache_send(s->mdc, s->nc, (const char *const *) topics,
                              n, true, sender_on_metadata, s, now);
    samsa_mdcache_topics_free(topics);
    if (sent != SAMSA_MDCACHE_NO_NODE) {
        s->md_last_ms = now;
    }
    if (sent == SAMSA_MDCACHE_SENT) {
        s->md_inflight = true;
        atomic_fetch_add_explicit(&s->m->metadata_requests, 1,
                                  memory_order_relaxed);
    }
}

/* ---- idempotence: InitProducerId ---------------------------------------- */

static bool
sender_pid_retriable(samsa_err_t err)
{
    return samsa_txn_err_retriable(err) || sender_retriable(err);
}

static void
sender_on_pid(void *ctx, int32_t node, samsa_err_t err, samsa_rd_t *body,
              void *opaque)
{
    samsa_sender_t                  *s = ctx;
    samsa_InitProducerIdResponse_t   resp;
    samsa_arena_t                    arena = SAMSA_ARENA_INIT;

    (void) node;
    s->pid_inflight = false;
    if (err == SAMSA_ERR_NONE) {
        err = samsa_InitProducerIdResponse_decode(body,
                                                  (int16_t) (intptr_t) opaque,
                                                  &arena, &resp);
    }
    if (err == SAMSA_ERR_NONE) {
        err = (samsa_err_t) resp.ErrorCode;
    }
    if (err == SAMSA_ERR_NONE) {
        samsa_info("producer: producer id %lld epoch %d%s",
                   (long long) resp.ProducerId, resp.ProducerEpoch,
                   s->need_bump ? " (bumped)" : "");
        s->pid = resp.ProducerId;
        s->epoch = resp.ProducerEpoch;
        s->need_bump = false;
        atomic_store_explicit(&s->m->producer_id, s->pid,
                              memory_order_relaxed);
        atomic_store_explicit(&s->m->producer_epoch, s->epoch,
                              memory_order_relaxed);
        samsa_accum_reset_sequences(s->accum);
    } else if (!sender_pid_retriable(err)) {
        sender_set_fatal(s, err);
    }
    samsa_arena_fini(&arena);
}

/* Ask for a producer id, or bump the epoch when nothing is in flight.
 * Returns true while the producer may not send yet.  @thread sender */
static bool
sender_maybe_pid(samsa_sender_t *s, int64_t now)
{
    samsa_InitProducerIdRequest_t  req;
    samsa_buf_t                    frame = SAMSA_BUF_INIT;
    samsa_wr_t                     wr;
    int32_t                        node;
    int16_t                        v;

    if (!s->pc->idempotence || s->tm != NULL
        || (s->pid >= 0 && !s->need_bump)) {
        return false;
    }
    if (s->pid_inflight || s->inflight > 0
        || now - s->pid_last_ms < s->pc->net.retry_backoff_ms) {
        return true;
    }
    node = samsa_netclient_least_loaded(s->nc, now);
    if (node == SAMSA_NC_NO_NODE
        || !samsa_netclient_ready(s->nc, node, now)) {
        return true;
    }
    v = samsa_netclient_version(s->nc, node, SAMSA_API_InitProducerId, 0, 4);
    if (v < 0) {
        /* As Java's producer: a fatal UnsupportedVersionException ("The
         * broker does not support INIT_PRODUCER_ID"), no silent fallback
         * to a non-idempotent producer. */
        samsa_error("producer: node %d does not support InitProducerId "
                    "(v0-4), which the idempotent producer needs: failing "
                    "all records; set enable.idempotence=false to produce "
                    "to this broker", node);
        sender_set_fatal(s, SAMSA_ERR_UNSUPPORTED_VERSION);
        return true;
    }
    samsa_InitProducerIdRequest_init(&req);
    req.TransactionalId = SAMSA_SLICE_NULL;
    req.TransactionTimeoutMs = 60000;
    if (v >= 3 && s->pid >= 0) {
        req.ProducerId = s->pid;            /* bump our epoch (KIP-360) */
        req.ProducerEpoch = s->epoch;
    }
    samsa_netclient_frame_begin(s->nc, SAMSA_API_InitProducerId, v, &frame,
                                &wr);
    samsa_InitProducerIdRequest_encode(&wr, v, &req);
    s->pid_last_ms = now;
    if (samsa_netclient_send(s->nc, node, &frame, SAMSA_API_InitProducerId,
                             v, true, sender_on_pid, s, (void *) (intptr_t) v,
                             now) == SAMSA_ERR_NONE) {
        s->pid_inflight = true;
    } else {
        samsa_buf_fini(&frame);
    }
    return true;
}

/* ---- the loop ----------------------------------------------------------- */

static void
sender_fail_list(samsa_sender_t *s, samsa_producer_batch_t *b, samsa_err_t err)
{
    samsa_producer_batch_t  *next;

    for (; b != NULL; b = next) {
        next = b->next;
        b->next = NULL;
        if (err == SAMSA_ERR__TIMED_OUT) {
            samsa_warn("producer: expiring %d record(s) for %s-%d: %lld ms "
                       "has passed since batch creation", b->nthunks,
                       b->pq->topic->name, b->pq->partition,
                       (long long) s->pc->delivery_timeout_ms);
        }
        sender_complete(s, b, -1, -1, err);
    }
}

/* The transaction manager's turn: coordinator requests, the producer id
 * it got, failing queued batches on abort or an abortable error.
 * @thread sender */
static void
sender_txn(samsa_sender_t *s, int64_t now)
{
    samsa_txn_poll_t  tp;
    int64_t           pid;
    int16_t           epoch;

    samsa_txnmgr_poll(s->tm, s->nc, s->inflight, now, &tp);
    samsa_txnmgr_pid(s->tm, &pid, &epoch);
    if (pid != s->pid || epoch != s->epoch) {
        s->pid = pid;
        s->epoch = epoch;
        atomic_store_explicit(&s->m->producer_id, pid, memory_order_relaxed);
        atomic_store_explicit(&s->m->producer_epoch, epoch,
                              memory_order_relaxed);
    }
    if (tp.fatal != SAMSA_ERR_NONE) {
        sender_set_fatal(s, tp.fatal);
    }
    if (tp.fail_queued != SAMSA_ERR_NONE) {
        sender_fail_list(s, samsa_accum_take_all(s->accum), tp.fail_queued);
    }
}

/* samsa_accum_busy_fn over the network client.  @thread sender */
static bool
sender_node_busy(void *ctx, int32_t node)
{
    samsa_sender_t  *s = ctx;

    return samsa_netclient_busy(s->nc, node);
}

/* sendProducerData: returns how long the next poll may wait. */
static int64_t
sender_send_data(samsa_sender_t *s, int64_t now)
{
    samsa_ready_t  *r = &s->ready;
    samsa_producer_batch_t  *list;
    int64_t         timeout;
    int32_t         i, kept = 0, node;

    samsa_accum_ready(s->accum, samsa_mdcache_gen(s->mdc),
                      samsa_mdcache_leader, s->mdc, now, r);
    if (r->unknown_leaders) {
        samsa_mdcache_request_update(s->mdc);
    }
    for (i = 0; i < r->nnodes; i++) {
        node = r->nodes[i];
        if (samsa_netclient_ready(s->nc, node, now)) {
            samsa_accum_node_latency(s->accum, node, now, true);
            r->nodes[kept++] = node;
        } else {
            samsa_accum_node_latency(s->accum, node, now, false);
        }
    }
    r->nnodes = kept;
    for (i = 0; i < r->nnodes; i++) {
        list = samsa_accum_drain(s->accum, r->nodes[i],
                                 (size_t) s->pc->max_request_size, now);
        if (list != NULL) {
            sender_produce(s, r->nodes[i], list, now);
        }
    }
    sender_fail_list(s, samsa_accum_expired(s->accum, now),
                     SAMSA_ERR__TIMED_OUT);
    timeout = r->nnodes > 0 ? 0 : r->next_check_ms;
    if (samsa_accum_set_busy(s->accum, sender_node_busy, s)) {
        timeout = 0;
    }
    return timeout;
}

static void
sender_run_once(samsa_sender_t *s)
{
    int64_t      now = samsa_now_ms();
    int64_t      timeout = SENDER_MAX_POLL_MS, md_next;
    bool         blocked;
    samsa_err_t  auth;

    sender_maybe_metadata(s, now);
    (void) samsa_mdcache_update_due(s->mdc, now, &md_next);
    if (s->tm != NULL) {
        sender_txn(s, now);
    }
    blocked = sender_maybe_pid(s, now)
              || samsa_sender_fatal(s) != SAMSA_ERR_NONE;
    auth = samsa_netclient_auth_error(s->nc, NULL, 0);
    if (auth != s->auth_err) {
        s->auth_err = auth;
        samsa_mdcache_set_error(s->mdc, auth);
    }
    if (auth != SAMSA_ERR_NONE) {
        /* SASL refused us: the records waiting fail now with it (Java's
         * send() gets AuthenticationException from its metadata), not
         * after delivery.timeout.ms; once a connection authenticates
         * again (credentials fixed), sending goes on */
        sender_fail_list(s, samsa_accum_take_all(s->accum), auth);
    }
    if (!blocked) {
        timeout = sender_send_data(s, now);
    } else if (samsa_sender_fatal(s) != SAMSA_ERR_NONE) {
        sender_fail_list(s, samsa_accum_take_all(s->accum),
                         samsa_sender_fatal(s));
    }
    if (md_next < timeout) {
        timeout = md_next < s->pc->net.retry_backoff_ms
                      ? s->pc->net.retry_backoff_ms : md_next;
    }
    if (timeout > SENDER_MAX_POLL_MS || timeout < 0) {
        timeout = SENDER_MAX_POLL_MS;
    }
    samsa_netclient_poll(s->nc, timeout);
}

static void *
sender_main(void *arg)
{
    samsa_sender_t  *s = arg;

    samsa_thread_name_set("samsa-sender");
    while (atomic_load_explicit(&s->running, memory_order_acquire)) {
        sender_run_once(s);
    }
    /* Closing: deliver what was accepted, unless forced. */
    while (!atomic_load_explicit(&s->force, memory_order_acquire)
           && (s->inflight > 0 || samsa_accum_incomplete(s->accum) > 0)) {
        sender_run_once(s);
    }
    /* What is still in flight fails now (no retries: force or fatal);
     * the client itself is freed by samsa_sender_stop() after the join,
     * so that wakeups from app threads stay safe. */
    atomic_store_explicit(&s->force, true, memory_order_release);
    samsa_netclient_close_all(s->nc, SAMSA_ERR__SHUTDOWN);
    sender_fail_list(s, samsa_accum_take_all(s->accum), SAMSA_ERR__SHUTDOWN);
    samsa_ready_fini(&s->ready);
    return NULL;
}

samsa_sender_t *
samsa_sender_start(const samsa_pconf_t *pc, samsa_accum_t *accum,
                   samsa_mdcache_t *mdc, samsa_bufpool_t *pool,
                   samsa_pmetrics_t *metrics, samsa_txnmgr_t *tm)
{
    samsa_sender_t   *s = samsa_calloc(1, sizeof(*s));
    samsa_nc_conf_t   ncc = samsa_client_config_nc(&pc->net,
                                                   pc->max_in_flight, NULL);
    const char       *colon;
    char             *host;
    size_t            i;

    s->pc = pc;
    s->accum = accum;
    s->mdc = mdc;
    s->pool = pool;
    s->m = metrics;
    s->tm = tm;
    s->pid = -1;
    s->epoch = -1;
    s->rng = (uint64_t) samsa_now_ns() | 1;
    s->md_last_ms = INT64_MIN / 2;
    s->pid_last_ms = INT64_MIN / 2;
    atomic_init(&s->running, true);
    atomic_init(&s->force, false);
    atomic_init(&s->fatal, SAMSA_ERR_NONE);
    s->nc = samsa_netclient_new(&ncc);
    for (i = 0; i < pc->net.nbootstrap; i++) {
        colon = strrchr(pc->net.bootstrap[i], ':');
        host = samsa_strndup(pc->net.bootstrap[i],
                             (size_t) (colon - pc->net.bootstrap[i]));
        if (host[0] == '[' && host[strlen(host) - 1] == ']') {
            memmove(host, host + 1, strlen(host) - 2);
            host[strlen(host) - 2] = '\0';
        }
        samsa_netclient_node_set(s->nc, -1 - (int32_t) i, host,
                                 atoi(colon + 1));
        samsa_free(host);
    }
    samsa_assert(pthread_create(&s->thread, NULL, sender_main, s) == 0);
    return s;
}

samsa_err_t
samsa_sender_stop(samsa_sender_t *s, int64_t timeout_ms)
{
    struct timespec  deadline;
    samsa_err_t      err = SAMSA_ERR_NONE;
    int64_t          left;

    atomic_store_explicit(&s->running, false, memory_order_release);
    samsa_netclient_wakeup(s->nc);
    if (timeout_ms >= 0) {
        deadline = samsa_timespec_after(CLOCK_REALTIME, timeout_ms);
        if (pthread_timedjoin_np(s->thread, NULL, &deadline) == 0) {
            samsa_netclient_free(s->nc);
            samsa_free(s);
            return SAMSA_ERR_NONE;
        }
        left = atomic_load_explicit(&s->m->records_in_flight,
                                    memory_order_relaxed);
        samsa_warn("producer: close timed out with %lld record(s) "
                   "undelivered; failing them", (long long) left);
        err = SAMSA_ERR__TIMED_OUT;
        atomic_store_explicit(&s->force, true, memory_order_release);
        samsa_netclient_wakeup(s->nc);
    }
    pthread_join(s->thread, NULL);
    samsa_netclient_free(s->nc);
    samsa_free(s);
    return err;
}
