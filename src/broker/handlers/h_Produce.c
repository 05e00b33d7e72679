/*
 * broker/handlers/h_Produce.c - Produce (key 0): validate and append each
 * partition's record batches to its log, then answer.  v0-v2 are
 * advertised (librdkafka compresses only when Produce v0 is listed) but
 * closed, as Kafka 4 does (KIP-896).  acks=0: no answer on success (NOOP),
 * the connection closed on any error (CLOSE), as the seed's table says.
 * When a topic wants every append durable (flush.messages=1) the answer
 * waits in the produce purgatory until the log manager's group commit has
 * synced the data (not on a handler thread).  With one replica the ISR is
 * this node alone, so acks=-1 needs nothing more.  On a replicated
 * partition (broker/replica.h) acks=-1 is refused with NOT_ENOUGH_REPLICAS
 * before the append when the ISR is smaller than min.insync.replicas, and
 * waits in the produce purgatory until the high watermark passes the last
 * offset written (NOT_ENOUGH_REPLICAS_AFTER_APPEND if the ISR shrank below
 * min.insync.replicas meanwhile, REQUEST_TIMED_OUT after TimeoutMs);
 * acks=1 is answered after the leader's append.
 * Idempotent and transactional batches go through the partition's
 * producer state (log/pstate.h): a retried batch is answered with its
 * original offsets and not written again; sequence gaps, stale epochs and
 * the rest get Kafka's errors.  Transactional batches need the request's
 * transactional id (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED for the
 * whole request, as Kafka answers) and pass the transaction coordinator's
 * check (broker.h's txn_verify) when it is set.
 * A partition this node does not lead in the metadata image is answered
 * NOT_LEADER_OR_FOLLOWER, with the KIP-951 hint (v10+): its CurrentLeader
 * and the leader's endpoint in NodeEndpoints (broker/route.h).
 * Threads: handler; the delayed answer completes on the log flusher or the
 * produce reaper.
 */
#include "broker/api_table.h"

#include <stdio.h>
#include <string.h>

#include "broker/broker.h"
#include "broker/handlers/tpresp.h"
#include "broker/isrstate.h"
#include "broker/replica.h"
#include "meta/acl.h"
#include "broker/route.h"
#include "net/server/reqchan.h"
#include "proto/batch.h"
#include "proto/errmap.h"
#include "proto/gen/Produce.h"
#include "proto/wr.h"
#include "util/alloc.h"
#include "util/diag.h"
#include "util/time.h"

/* A partition whose answer waits for its data to be synced. */
typedef struct produce_wait {
    samsa_PartitionProduceResponse_t  *pr;
    samsa_plog_t                      *plog;    /* ref */
    int64_t                            durable_wanted;
    int64_t                            hw_wanted;   /* acks=all on a
                                                       replicated partition:
                                                       the HW to reach;
                                                       -1: none */
    int32_t                            leader_epoch;    /* led when
                                                           appended */
    char                               key[SAMSA_PURGATORY_TP_KEY_MAX];
} produce_wait_t;

typedef struct delayed_produce {
    samsa_delayed_op_t         op;
    samsa_broker_t            *b;           /* [const] */
    samsa_req_t               *req;         /* until answered */
    samsa_ProduceResponse_t   *resp;        /* in req->arena */
    produce_wait_t            *waits;
    size_t                     nwaits;
} delayed_produce_t;

/* Kafka records the produce byte rate once the append is done, with the
 * request's size, and throttles by what that costs (broker/quota.h). */
static int32_t
produce_quota(samsa_broker_t *b, samsa_req_t *req)
{
    req->throttle_ms = samsa_quota_record(b->quota, SAMSA_QUOTA_PRODUCE,
                                          samsa_quota_user(req->principal),
                                          req->hdr.ClientId,
                                          (double) req->size_bytes,
                                          samsa_now_ms());
    return req->throttle_ms;
}

/* Kafka throttles by the longer of the byte-rate and request-time quotas
 * (samsa_apis_send takes the longer); acks=0 requests (no response) skip
 * the request time. */
static void
produce_send(samsa_broker_t *b, samsa_req_t *req, samsa_ProduceResponse_t *m)
{
    (void) produce_quota(b, req);
    samsa_apis_send(b, req, m);
}

static void
produce_set_error(samsa_PartitionProduceResponse_t *pr, samsa_err_t err,
                  const char *msg)
{
    pr->ErrorCode = samsa_err_wire(err);
    pr->BaseOffset = -1;
    pr->ErrorMessage = msg != NULL ? samsa_slice_cstr(msg) : SAMSA_SLICE_NULL;
}

/* Kafka's RecordErrors: the failing record's index in its batch. */
static void
produce_record_error(samsa_req_t *req, samsa_PartitionProduceResponse_t *pr,
                     const samsa_batch_summary_t *sum)
{
    if (sum->err_record < 0) {
        return;
    }
    pr->RecordErrors = samsa_arena_calloc(&req->arena, 1,
                                          sizeof(*pr->RecordErrors));
    pr->RecordErrors_cnt = 1;
    samsa_BatchIndexAndErrorMessage_init(&pr->RecordErrors[0]);
    pr->RecordErrors[0].BatchIndex = sum->err_record;
    if (sum->err_msg != NULL) {
        pr->RecordErrors[0].BatchIndexErrorMessage =
            samsa_slice_cstr(sum->err_msg);
    }
}

/* The first batch header of a partition's records, if there is one. */
static bool
produce_first_batch(const samsa_PartitionProduceData_t *pd,
                    samsa_batch_hdr_t *hdr)
{
    return pd->Records.bytes.ptr != NULL
           && samsa_batch_parse((const uint8_t *) pd->Records.bytes.ptr,
                                pd->Records.bytes.len, hdr)
                  == SAMSA_ERR_NONE;
}

/* Kafka's ProduceRequest.hasTransactionalRecords. */
static bool
produce_has_txn_records(const samsa_ProduceRequest_t *rq)
{
    samsa_batch_hdr_t  hdr;
    int32_t            i, j;

    for (i = 0; i < rq->TopicData_cnt; i++) {
        for (j = 0; j < rq->TopicData[i].PartitionData_cnt; j++) {
            if (produce_first_batch(&rq->TopicData[i].PartitionData[j], &hdr)
                && samsa_batch_is_transactional(&hdr)) {
                return true;
            }
        }
    }
    return false;
}

/* The transaction coordinator's check of a transactional partition. */
static samsa_err_t
produce_txn_check(samsa_broker_t *b, samsa_slice_t txn_id,
                  const samsa_image_topic_t *topic,
                  const samsa_PartitionProduceData_t *pd)
{
    samsa_batch_hdr_t  hdr;

    if (b->txn_verify == NULL || !produce_first_batch(pd, &hdr)
        || !samsa_batch_is_transactional(&hdr)) {
        return SAMSA_ERR_NONE;
    }
    return b->txn_verify(b->txn_verify_ctx, txn_id, hdr.ProducerId,
                         hdr.ProducerEpoch, topic->name, pd->Index);
}

/* Append one partition's records; fills pr, and *wait when the answer must
 * wait for durability (then *wait->plog holds a ref). */
/* acks=all on a partition this node leads with replicas (issue 19,
 * broker/replica.h): NOT_ENOUGH_REPLICAS before the append when the ISR
 * is smaller than min.insync.replicas, with Kafka's message.  *repl tells
 * whether the partition is replicated here, *leader_epoch (then) the
 * epoch this node leads it in. */
static samsa_err_t
produce_check_isr(samsa_broker_t *b, samsa_req_t *req,
                  const samsa_image_topic_t *topic, int32_t partition,
                  int16_t acks, bool *repl, int32_t *leader_epoch,
                  samsa_PartitionProduceResponse_t *pr)
{
    size_t       nisr = 0;
    int32_t      min_isr = 1;
    samsa_err_t  err;
    char        *msg;

    *repl = samsa_replmgr_leader_isr(b->repl, topic->name, topic->name_len,
                                     partition, &nisr, &min_isr, leader_epoch);
    if (!*repl || acks != -1) {
        return SAMSA_ERR_NONE;
    }
    err = samsa_isrstate_check_min_isr(nisr, min_isr);
    if (err != SAMSA_ERR_NONE) {
        msg = samsa_arena_alloc(&req->arena, 256);
        snprintf(msg, 256, "The size of the current ISR (%zu) is "
                 "insufficient to satisfy the min.isr requirement of %d "
                 "for partition %s-%d", nisr, (int) min_isr, topic->name,
                 (int) partition);
        produce_set_error(pr, err, msg);
    }
    return err;
}

static bool
produce_append(samsa_apis_t *apis, samsa_req_t *req, samsa_slice_t txn_id,
               int16_t acks, const samsa_image_topic_t *topic,
               const samsa_PartitionProduceData_t *pd,
               samsa_PartitionProduceResponse_t *pr, produce_wait_t *wait)
{
    samsa_broker_t              *b = apis->broker;
    samsa_plog_append_opts_t     opts;
    samsa_plog_append_result_t   res;
    samsa_plog_t                *plog;
    samsa_err_t                  err;
    bool                         repl;
    int32_t                      leader_epoch = -1;

    if (produce_check_isr(b, req, topic, pd->Index, acks, &repl,
                          &leader_epoch, pr)
        != SAMSA_ERR_NONE) {
        return false;
    }
    err = produce_txn_check(b, txn_id, topic, pd);
    if (err != SAMSA_ERR_NONE) {
        produce_set_error(pr, err, NULL);
        return false;
    }
    plog = samsa_logmgr_plog_ref(b->logs, topic->name, pd->Index);
    if (plog == NULL) {
        /* in the metadata, not hosted here (as samsa_broker_plog_find_
         * leader): the client refreshes its metadata and retries */
        produce_set_error(pr, SAMSA_ERR_NOT_LEADER_OR_FOLLOWER, NULL);
        return false;
    }
    memset(&opts, 0, sizeof(opts));
    opts.leader_epoch = topic->partitions[pd->Index].leader_epoch;
    opts.from_client = true;
    memset(&res, 0, sizeof(res));
    /* The records live in the request's own receive buffer, which the
     * append rewrites in place (offsets, epochs, CRCs). */
    err = samsa_plog_append(plog, (uint8_t *) pd->Records.bytes.ptr,
                            pd->Records.bytes.len, &opts, &res);
    if (err != SAMSA_ERR_NONE) {
        produce_set_error(pr, err, res.summary.err_msg);
        produce_record_error(req, pr, &res.summary);
        samsa_plog_unref(plog);
        return false;
    }
    pr->BaseOffset = res.base_offset;
    pr->LogAppendTimeMs = res.log_append_time_ms;
    pr->LogStartOffset = res.log_start_offset;
    wait->hw_wanted = -1;
    if (repl) {
        /* an ISR of the leader alone: the HW moves now */
        samsa_replmgr_leader_appended(b->repl, topic->name, topic->name_len,
                                      pd->Index);
        if (acks == -1 && samsa_plog_high_watermark(plog)
                              <= res.last_offset) {
            wait->hw_wanted = res.last_offset + 1;
            wait->leader_epoch = leader_epoch;
        }
    }
    if (res.durable_wanted >= 0 || wait->hw_wanted >= 0) {
        wait->pr = pr;
        wait->plog = plog;
        wait->durable_wanted = res.durable_wanted;
        samsa_purgatory_tp_key(wait->key, topic->name, topic->name_len, pd->Index);
        return true;
    }
    samsa_plog_unref(plog);
    return true;
}

/* The partition's topic, or NULL with pr's error set. */
static const samsa_image_topic_t *
produce_topic(const samsa_image_t *img, samsa_slice_t name, int32_t index,
              samsa_PartitionProduceResponse_t *pr)
{
    const samsa_image_topic_t  *t;

    t = samsa_image_topic_find(img, name.ptr != NULL ? name.ptr : "",
                               name.len);
    if (t == NULL || index < 0 || index >= t->npartitions) {
        produce_set_error(pr, SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION, NULL);
        return NULL;
    }
    if (t->is_internal) {
        produce_set_error(pr, SAMSA_ERR_INVALID_TOPIC_EXCEPTION,
                          "clients may not write to internal topics");
        return NULL;
    }
    return t;
}

/* ---- the delayed answer ----------------------------------------------- */

/* samsa_isrstate_acks_answer for w now: false while its HW is to come. */
static bool
produce_acks_answer(delayed_produce_t *dp, const produce_wait_t *w,
                    samsa_err_t *err)
{
    size_t   nisr = 0;
    int32_t  min_isr = 1, epoch = -1;
    bool     leads;

    leads = samsa_replmgr_leader_isr_key(dp->b->repl, w->key, &nisr,
                                         &min_isr, &epoch);
    return samsa_isrstate_acks_answer(leads, epoch, w->leader_epoch,
                                      samsa_plog_high_watermark(w->plog),
                                      w->hw_wanted, nisr, min_isr, err);
}

static bool
produce_try_complete(samsa_delayed_op_t *op)
{
    delayed_produce_t  *dp = (delayed_produce_t *) op;
    size_t              i;
    samsa_err_t         err;

    for (i = 0; i < dp->nwaits; i++) {
        if (samsa_plog_durable_offset(dp->waits[i].plog)
                < dp->waits[i].durable_wanted
            && !samsa_plog_is_offline(dp->waits[i].plog)) {
            return false;
        }
        /* acks=all: the HW, unless the leadership moved meanwhile */
        if (dp->waits[i].hw_wanted >= 0
            && !produce_acks_answer(dp, &dp->waits[i], &err)) {
            return false;
        }
    }
    return samsa_delayed_op_force_complete(op);
}

static void
produce_on_expire(samsa_delayed_op_t *op)
{
    delayed_produce_t  *dp = (delayed_produce_t *) op;
    size_t              i;

    for (i = 0; i < dp->nwaits; i++) {
        if (samsa_plog_durable_offset(dp->waits[i].plog)
            < dp->waits[i].durable_wanted) {
            produce_set_error(dp->waits[i].pr, SAMSA_ERR_REQUEST_TIMED_OUT,
                              "timed out waiting for the data to be synced");
        } else if (dp->waits[i].hw_wanted >= 0
                   && samsa_plog_high_watermark(dp->waits[i].plog)
                          < dp->waits[i].hw_wanted) {
            produce_set_error(dp->waits[i].pr, SAMSA_ERR_REQUEST_TIMED_OUT,
                              NULL);
        }
    }
}

/* acks=all once the HW is there (Kafka's checkEnoughReplicasReachOffset):
 * NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR shrank below
 * min.insync.replicas meanwhile; NOT_LEADER_OR_FOLLOWER when this node no
 * longer leads the partition. */
static void
produce_hw_answer(delayed_produce_t *dp, produce_wait_t *w)
{
    samsa_err_t  err = SAMSA_ERR_NONE;

    if (w->hw_wanted < 0 || w->pr->ErrorCode != 0) {
        return;
    }
    if (produce_acks_answer(dp, w, &err) && err != SAMSA_ERR_NONE) {
        produce_set_error(w->pr, err, NULL);
    }
}

static void
produce_on_complete(samsa_delayed_op_t *op)
{
    delayed_produce_t  *dp = (delayed_produce_t *) op;
    size_t              i;

    for (i = 0; i < dp->nwaits; i++) {
        produce_hw_answer(dp, &dp->waits[i]);
        if (samsa_plog_is_offline(dp->waits[i].plog)
            && samsa_plog_durable_offset(dp->waits[i].plog)
                   < dp->waits[i].durable_wanted) {
            produce_set_error(dp->waits[i].pr,
                              SAMSA_ERR_KAFKA_STORAGE_ERROR, NULL);
        }
        samsa_plog_unref(dp->waits[i].plog);
        dp->waits[i].plog = NULL;
    }
    produce_send(dp->b, dp->req, dp->resp);
    dp->req = NULL;
}

static void
produce_free(samsa_delayed_op_t *op)
{
    delayed_produce_t  *dp = (delayed_produce_t *) op;

    samsa_free(dp->waits);
    samsa_free(dp);
}

static const samsa_delayed_op_ops_t  produce_ops = {
    .try_complete = produce_try_complete,
    .on_complete = produce_on_complete,
    .on_expire = produce_on_expire,
    .free = produce_free,
};

static void
produce_delay(samsa_broker_t *b, samsa_req_t *req, int32_t timeout_ms,
              samsa_ProduceResponse_t *m, produce_wait_t *waits,
              size_t nwaits)
{
    delayed_produce_t   *dp = samsa_calloc(1, sizeof(*dp));
    const char         **keys = samsa_calloc(nwaits, sizeof(*keys));
    size_t               i;

    samsa_delayed_op_init(&dp->op, &produce_ops,
                          timeout_ms > 0 ? timeout_ms : 0, NULL);
    dp->b = b;
    dp->req = req;
    dp->resp = m;
    dp->waits = waits;
    dp->nwaits = nwaits;
    for (i = 0; i < nwaits; i++) {
        keys[i] = waits[i].key;
    }
    samsa_req_mark_local_done(req);
    samsa_purgatory_try_complete_else_watch(b->produce, &dp->op, keys,
                                            nwaits);
    samsa_free(keys);
    samsa_delayed_op_unref(&dp->op);
}

/* ---- the handler ---------------------------------------------------------- */

static const samsa_tp_layout_t  rq_layout = SAMSA_TP_LAYOUT(
    samsa_TopicProduceData_t, Name, PartitionData,
    samsa_PartitionProduceData_t, NULL, NULL);
static const samsa_tp_layout_t  out_layout = SAMSA_TP_LAYOUT(
    samsa_TopicProduceResponse_t, Name, PartitionResponses,
    samsa_PartitionProduceResponse_t, samsa_TopicProduceResponse_init_any,
    samsa_PartitionProduceResponse_init_any);

typedef struct produce_error_ctx {
    samsa_err_t   err;
    const char   *msg;
} produce_error_ctx_t;

/* samsa_tp_fill_fn: the partition gets the request-level error */
static void
produce_error_fill(void *ctx, samsa_slice_t name, size_t k, const void *rq,
                   void *out)
{
    const produce_error_ctx_t           *c = ctx;
    const samsa_PartitionProduceData_t  *pd = rq;
    samsa_PartitionProduceResponse_t    *pr = out;

    (void) name;
    (void) k;
    pr->Index = pd->Index;
    produce_set_error(pr, c->err, c->msg);
}

/* Every partition gets err (a request-level problem). */
static void
produce_all_error(samsa_req_t *req, const samsa_ProduceRequest_t *rq,
                  samsa_ProduceResponse_t *m, samsa_err_t err,
                  const char *msg)
{
    produce_error_ctx_t  c = { err, msg };

    m->Responses = samsa_tp_respond(&req->arena, &rq_layout, rq->TopicData,
                                    rq->TopicData_cnt, &out_layout,
                                    &m->Responses_cnt, produce_error_fill, &c);
}

/* What produce_all's walk over the partitions shares. */
typedef struct produce_all_ctx {
    samsa_apis_t                  *apis;
    const samsa_ProduceRequest_t  *rq;
    produce_wait_t                *waits;
    size_t                         nwaits;
    bool                           any_error;
    samsa_route_leaders_t          leaders;     /* for NodeEndpoints */
} produce_all_ctx_t;

/* Is this node the partition's leader in the image (and, replicated, in
 * its replica manager: samsa_broker_route_check)?  Else pr gets
 * NOT_LEADER_OR_FOLLOWER and (v10+, KIP-951) the current leader, whose
 * endpoint goes into the response's NodeEndpoints. */
static bool
produce_is_leader(const samsa_tp_image_t *ti, produce_all_ctx_t *c,
                  const samsa_image_topic_t *t, int32_t index,
                  samsa_PartitionProduceResponse_t *pr)
{
    samsa_err_t  err;
    int32_t      leader_id, leader_epoch;

    err = samsa_broker_route_check(c->apis->broker, ti->img, t, index,
                                   ti->req->listener, &ti->req->arena,
                                   &c->leaders, &leader_id, &leader_epoch);
    if (err == SAMSA_ERR_NONE) {
        return true;
    }
    produce_set_error(pr, err, NULL);
    pr->CurrentLeader.LeaderId = leader_id;
    pr->CurrentLeader.LeaderEpoch = leader_epoch;
    pr->CurrentLeader_set = true;
    return false;
}

/* KIP-951: the endpoints of the leaders named in CurrentLeader. */
static void
produce_node_endpoints(samsa_req_t *req, const samsa_route_leaders_t *l,
                       samsa_ProduceResponse_t *m)
{
    size_t  i;

    if (l->n == 0) {
        return;
    }
    m->NodeEndpoints = samsa_arena_calloc(&req->arena, l->n,
                                          sizeof(*m->NodeEndpoints));
    m->NodeEndpoints_cnt = (int32_t) l->n;
    for (i = 0; i < l->n; i++) {
        samsa_ProduceNodeEndpoint_init(&m->NodeEndpoints[i]);
        m->NodeEndpoints[i].NodeId = l->nodes[i].id;
        m->NodeEndpoints[i].Host = samsa_slice_cstr(l->nodes[i].host);
        m->NodeEndpoints[i].Port = l->nodes[i].port;
        m->NodeEndpoints[i].Rack = l->nodes[i].rack != NULL
                                       ? samsa_slice_cstr(l->nodes[i].rack)
                                       : SAMSA_SLICE_NULL;
    }
}

/* samsa_tp_fill_fn (ctx: samsa_tp_image_t, its arg produce_all_ctx_t):
 * append one partition's records and wake the fetches watching it */
static void
produce_all_fill(void *ctx, samsa_slice_t name, size_t k, const void *rq,
                 void *out)
{
    const samsa_tp_image_t              *ti = ctx;
    produce_all_ctx_t                   *c = ti->arg;
    const samsa_PartitionProduceData_t  *pd = rq;
    samsa_PartitionProduceResponse_t    *pr = out;
    const samsa_image_topic_t           *t;
    char                                 key[SAMSA_PURGATORY_TP_KEY_MAX];

    (void) k;
    pr->Index = pd->Index;
    if (!samsa_apis_allowed(c->apis, ti->req, ti->img, SAMSA_ACL_OP_WRITE,
                            SAMSA_ACL_RESOURCE_TOPIC, name)) {
        produce_set_error(pr, SAMSA_ERR_TOPIC_AUTHORIZATION_FAILED, NULL);
        c->any_error = true;
        return;
    }
    t = produce_topic(ti->img, name, pd->Index, pr);
    if (t == NULL || !produce_is_leader(ti, c, t, pd->Index, pr)) {
        c->any_error = true;
        return;
    }
    if (pd->Records.bytes.ptr == NULL) {
        produce_set_error(pr, SAMSA_ERR_INVALID_RECORD, "null records");
        c->any_error = true;
        return;
    }
    if (!produce_append(c->apis, ti->req, c->rq->TransactionalId,
                        c->rq->Acks, t, pd, pr, &c->waits[c->nwaits])) {
        c->any_error = true;
        return;
    }
    c->nwaits += c->waits[c->nwaits].plog != NULL;
    samsa_purgatory_tp_key(key, t->name, t->name_len, pd->Index);
    samsa_purgatory_check_and_complete(c->apis->broker->fetch, key);
}

/* Append every partition; returns how many wait for durability (in waits)
 * and sets *any_error. */
static size_t
produce_all(samsa_apis_t *apis, samsa_req_t *req,
            const samsa_ProduceRequest_t *rq, samsa_ProduceResponse_t *m,
            produce_wait_t *waits, bool *any_error)
{
    produce_all_ctx_t  c;

    memset(&c, 0, sizeof(c));
    c.apis = apis;
    c.rq = rq;
    c.waits = waits;
    m->Responses = samsa_tp_respond_image(apis->broker, req, &rq_layout,
                                          rq->TopicData, rq->TopicData_cnt,
                                          &out_layout, &m->Responses_cnt,
                                          produce_all_fill, &c);
    produce_node_endpoints(req, &c.leaders, m);
    *any_error = c.any_error;
    return c.nwaits;
}

void
samsa_h_Produce(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_ProduceRequest_t   *rq = body;
    samsa_ProduceResponse_t  *m;
    produce_wait_t           *waits;
    size_t                    nwaits;
    bool                      any_error = false;

    m = samsa_arena_calloc(&req->arena, 1, sizeof(*m));
    samsa_ProduceResponse_init(m);
    if (rq->Acks != 0 && rq->Acks != 1 && rq->Acks != -1) {
        produce_all_error(req, rq, m, SAMSA_ERR_INVALID_REQUIRED_ACKS, NULL);
        produce_send(apis->broker, req, m);
        return;
    }
    if ((samsa_slice_is_null(rq->TransactionalId)
         && produce_has_txn_records(rq))
        || (!samsa_slice_is_null(rq->TransactionalId)
            && !samsa_apis_allowed(apis, req, NULL, SAMSA_ACL_OP_WRITE,
                                   SAMSA_ACL_RESOURCE_TRANSACTIONAL_ID,
                                   rq->TransactionalId))) {
        /* Kafka: transactional records need an (authorised) transactional
         * id */
        produce_all_error(req, rq, m,
                          SAMSA_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
                          NULL);
        produce_send(apis->broker, req, m);
        return;
    }
    waits = samsa_calloc(samsa_tp_count(&rq_layout, rq->TopicData,
                                        rq->TopicData_cnt) + 1,
                         sizeof(*waits));
    nwaits = produce_all(apis, req, rq, m, waits, &any_error);
    if (rq->Acks == 0) {
        /* Nothing to wait for and nobody to tell: Kafka's acks=0. */
        for (size_t i = 0; i < nwaits; i++) {
            samsa_plog_unref(waits[i].plog);
        }
        samsa_free(waits);
        if (any_error) {
            samsa_reqchan_respond(samsa_resp_new(req, SAMSA_RESP_CLOSE));
        } else {
            samsa_resp_t  *resp = samsa_resp_new(req, SAMSA_RESP_NOOP);

            resp->throttle_ms = produce_quota(apis->broker, req);
            samsa_reqchan_respond(resp);
        }
        return;
    }
    if (nwaits == 0) {
        samsa_free(waits);
        produce_send(apis->broker, req, m);
        return;
    }
    produce_delay(apis->broker, req, rq->TimeoutMs, m, waits, nwaits);
}
