/*
 * client/consumer/cfetch.c - the consumer's Fetch and ListOffsets (Java's Fetcher
 * and OffsetFetcher).  One Fetch per broker at a time, for every
 * fetchable partition it leads; the next goes out as soon as the answer
 * is in, while the application drains what came (a partition with two
 * chunks buffered waits).  The records are read in place: the callback
 * takes the response buffer over and each partition's chunk keeps a
 * reference on it (crecs.h).  Full fetches (no KIP-227 fetch sessions: the
 * session id is 0 and the epoch -1), Fetch v4-v12 (v13+ name topics by
 * id).  ListOffsets resolves resets (auto.offset.reset, seek to the
 * beginning/end) and the offsets_for_times / beginning / end operations.
 * Threads: the background thread, c->lock held (callbacks take it).
 */
#include <stdio.h>
#include <string.h>

#include "client/consumer/consumer_int.h"
#include "proto/gen/Fetch.h"
#include "proto/gen/ListOffsets.h"
#include "proto/gen/apis.h"
#include "util/alloc.h"
#include "util/arena.h"
#include "util/diag.h"
#include "util/time.h"

#define CFETCH_MAX_CHUNKS       2           /* buffered per partition */
#define CFETCH_MAX_BATCH_BYTES  (256u << 20)    /* decompressed, per batch */

typedef struct cfetch_ent {
    char      *topic;
    int32_t    partition;
    uint64_t   gen;
    int64_t    offset;          /* fetch offset, or ListOffsets timestamp */
    size_t     op_index;        /* ListOffsets for an op: index in op->tps */
} cfetch_ent_t;

typedef struct cfetch_req {
    samsa_consumer_t  *c;
    int32_t            node;
    int16_t            version;
    int64_t            sent_ns;
    samsa_cop_t       *op;      /* ListOffsets for an op, else NULL */
    cfetch_ent_t      *ents;
    size_t             n;
    size_t             cap;
} cfetch_req_t;

static cfetch_req_t *
cfetch_req_new(samsa_consumer_t *c, int32_t node)
{
    cfetch_req_t  *r = samsa_calloc(1, sizeof(*r));

    r->c = c;
    r->node = node;
    return r;
}

static void
cfetch_req_add(cfetch_req_t *r, const char *topic, int32_t partition,
               uint64_t gen, int64_t offset, size_t op_index)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 16;
        r->ents = samsa_realloc(r->ents, r->cap * sizeof(*r->ents));
    }
    r->ents[r->n++] = (cfetch_ent_t) { samsa_strdup(topic), partition, gen,
                                       offset, op_index };
}

static void
cfetch_req_free(cfetch_req_t *r)
{
    size_t  i;

    for (i = 0; i < r->n; i++) {
        samsa_free(r->ents[i].topic);
    }
    samsa_free(r->ents);
    samsa_free(r);
}

static bool
cfetch_node_busy(samsa_consumer_t *c, int32_t node)
{
    int32_t  i;

    for (i = 0; i < c->nfetch_nodes; i++) {
        if (c->fetch_nodes[i] == node) {
            return true;
        }
    }
    return false;
}

static void
cfetch_node_set(samsa_consumer_t *c, int32_t node, bool busy)
{
    int32_t  i;

    for (i = 0; i < c->nfetch_nodes; i++) {
        if (c->fetch_nodes[i] == node) {
            if (!busy) {
                c->fetch_nodes[i] = c->fetch_nodes[--c->nfetch_nodes];
            }
            return;
        }
    }
    if (busy) {
        c->fetch_nodes = samsa_realloc(c->fetch_nodes,
                                       (size_t) (c->nfetch_nodes + 1)
                                           * sizeof(int32_t));
        c->fetch_nodes[c->nfetch_nodes++] = node;
    }
}

/* Errors after which metadata may be stale: look again, retry later. */
static bool
cfetch_err_retriable(samsa_err_t err)
{
    switch (err) {
    case SAMSA_ERR_NOT_LEADER_OR_FOLLOWER:
    case SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION:
    case SAMSA_ERR_LEADER_NOT_AVAILABLE:
    case SAMSA_ERR_FENCED_LEADER_EPOCH:
    case SAMSA_ERR_UNKNOWN_LEADER_EPOCH:
    case SAMSA_ERR_KAFKA_STORAGE_ERROR:
    case SAMSA_ERR_OFFSET_NOT_AVAILABLE:
    case SAMSA_ERR_REPLICA_NOT_AVAILABLE:
    case SAMSA_ERR_REQUEST_TIMED_OUT:
    case SAMSA_ERR_NOT_ENOUGH_REPLICAS:
        return true;
    default:
        return err < SAMSA_ERR_UNKNOWN_SERVER_ERROR;     /* local */
    }
}

/* Group entries by topic into generated request structs: the caller
 * fills per-partition fields through the callbacks below. */
static int32_t
cfetch_topics(const cfetch_req_t *r, const char ***names, int32_t **counts)
{
    int32_t  nt = 0, i;
    size_t   k;

    *names = samsa_calloc(r->n + 1, sizeof(char *));
    *counts = samsa_calloc(r->n + 1, sizeof(int32_t));
    for (k = 0; k < r->n; k++) {
        for (i = 0; i < nt; i++) {
            if (strcmp((*names)[i], r->ents[k].topic) == 0) {
                break;
            }
        }
        if (i == nt) {
            (*names)[nt++] = r->ents[k].topic;
        }
        (*counts)[i]++;
    }
    return nt;
}

/* ---- ListOffsets -------------------------------------------------------- */

static void
cfetch_lo_reset_done(samsa_consumer_t *c, const cfetch_ent_t *e,
                     samsa_err_t err, int64_t offset, int64_t now)
{
    samsa_cpart_t  *p = samsa_consumer_part_at_gen(c, e->topic, e->partition,
                                                   e->gen);

    if (p == NULL) {
        return;
    }
    p->lo_inflight = false;
    if (err == SAMSA_ERR_NONE && offset >= 0) {
        p->state = SAMSA_CPART_READY;
        p->position = p->fetch_offset = offset;
        pthread_cond_broadcast(&c->cond);
        return;
    }
    if (err == SAMSA_ERR_NONE) {
        err = SAMSA_ERR_OFFSET_NOT_AVAILABLE;
    }
    p->backoff_until_ms = now + c->cc.net.retry_backoff_ms;
    if (cfetch_err_retriable(err)) {
        samsa_consumer_md_request(c);
    } else {
        p->err = err;
        pthread_cond_broadcast(&c->cond);
    }
}

static void
cfetch_on_list_offsets(void *ctx, int32_t node, samsa_err_t err,
                       samsa_rd_t *body, void *opaque)
{
    cfetch_req_t                 *r = opaque;
    samsa_consumer_t             *c = ctx;
    samsa_ListOffsetsResponse_t   resp;
    samsa_arena_t                 arena = SAMSA_ARENA_INIT;
    bool                         *answered;
    int64_t                       now = samsa_now_ms();
    int32_t                       i, j;
    size_t                        k;

    (void) node;
    pthread_mutex_lock(&c->lock);
    answered = samsa_calloc(r->n + 1, sizeof(bool));
    if (err == SAMSA_ERR_NONE) {
        err = samsa_ListOffsetsResponse_decode(body, r->version, &arena,
                                               &resp);
    }
    for (i = 0; err == SAMSA_ERR_NONE && i < resp.Topics_cnt; i++) {
        const samsa_ListOffsetsTopicResponse_t  *t = &resp.Topics[i];

        for (j = 0; j < t->Partitions_cnt; j++) {
            const samsa_ListOffsetsPartitionResponse_t  *pr =
                &t->Partitions[j];

            for (k = 0; k < r->n; k++) {
                cfetch_ent_t  *e = &r->ents[k];

                if (answered[k] || e->partition != pr->PartitionIndex
                    || !samsa_slice_eq_cstr(t->Name, e->topic)) {
                    continue;
                }
                answered[k] = true;
                if (r->op != NULL) {
                    samsa_topic_partition_t  *tp = &r->op->tps[e->op_index];

                    tp->err = (samsa_err_t) pr->ErrorCode;
                    tp->offset = pr->Offset >= 0 ? pr->Offset
                                                 : SAMSA_OFFSET_INVALID;
                    tp->timestamp = pr->Timestamp;
                } else {
                    cfetch_lo_reset_done(c, e, (samsa_err_t) pr->ErrorCode,
                                         pr->Offset, now);
                }
            }
        }
    }
    for (k = 0; k < r->n; k++) {
        if (answered[k]) {
            continue;
        }
        if (r->op != NULL) {
            r->op->tps[r->ents[k].op_index].err =
                err != SAMSA_ERR_NONE ? err
                                      : SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION;
        } else {
            cfetch_lo_reset_done(c, &r->ents[k],
                                 err != SAMSA_ERR_NONE ? err
                                                       : SAMSA_ERR__BAD_MSG,
                                 -1, now);
        }
    }
    if (r->op != NULL && --r->op->pending == 0) {
        samsa_consumer_op_done(c, r->op, SAMSA_ERR_NONE);
    }
    samsa_free(answered);
    samsa_arena_fini(&arena);
    cfetch_req_free(r);
    pthread_mutex_unlock(&c->lock);
}

/* Send r as one ListOffsets to r->node; on failure r is answered with
 * the error.  @owns r */
static void
cfetch_send_list_offsets(samsa_consumer_t *c, cfetch_req_t *r, int64_t now)
{
    samsa_ListOffsetsRequest_t             req;
    samsa_ListOffsetsTopic_t              *topics;
    samsa_ListOffsetsPartition_t          *parts;
    samsa_buf_t                            frame = SAMSA_BUF_INIT;
    samsa_wr_t                             wr;
    const char                           **names;
    int32_t                               *counts, nt, i;
    size_t                                 k, off = 0;

    r->version = samsa_netclient_version(c->nc, r->node,
                                         SAMSA_API_ListOffsets, 1, 7);
    if (r->version < 0) {
        cfetch_on_list_offsets(c, r->node, SAMSA_ERR_UNSUPPORTED_VERSION,
                               NULL, r);
        return;
    }
    nt = cfetch_topics(r, &names, &counts);
    topics = samsa_calloc((size_t) nt + 1, sizeof(*topics));
    parts = samsa_calloc(r->n + 1, sizeof(*parts));
    for (i = 0; i < nt; i++) {
        samsa_ListOffsetsTopic_init(&topics[i]);
        topics[i].Name = samsa_slice_cstr(names[i]);
        topics[i].Partitions = &parts[off];
        for (k = 0; k < r->n; k++) {
            if (strcmp(r->ents[k].topic, names[i]) == 0) {
                samsa_ListOffsetsPartition_init(&parts[off]);
                parts[off].PartitionIndex = r->ents[k].partition;
                parts[off].Timestamp = r->ents[k].offset;
                off++;
                topics[i].Partitions_cnt++;
            }
        }
    }
    samsa_ListOffsetsRequest_init(&req);
    req.ReplicaId = -1;
    req.IsolationLevel = c->cc.read_committed ? 1 : 0;
    req.Topics = topics;
    req.Topics_cnt = nt;
    samsa_netclient_frame_begin(c->nc, SAMSA_API_ListOffsets, r->version,
                                &frame, &wr);
    samsa_ListOffsetsRequest_encode(&wr, r->version, &req);
    samsa_free(topics);
    samsa_free(parts);
    samsa_free(names);
    samsa_free(counts);
    if (samsa_netclient_send(c->nc, r->node, &frame, SAMSA_API_ListOffsets,
                             r->version, true, cfetch_on_list_offsets, c, r,
                             now) != SAMSA_ERR_NONE) {
        samsa_buf_fini(&frame);
        cfetch_on_list_offsets(c, r->node, SAMSA_ERR__STATE, NULL, r);
    }
}

/* Partitions waiting for a reset, grouped by leader. */
static void
cfetch_resets(samsa_consumer_t *c, int64_t now)
{
    cfetch_req_t  *r;
    int32_t        i, j, leader;

    for (i = 0; i < c->nparts; i++) {
        samsa_cpart_t  *p = c->parts[i];

        if (p->state != SAMSA_CPART_NEED_RESET || p->lo_inflight
            || p->err != SAMSA_ERR_NONE || now < p->backoff_until_ms) {
            continue;
        }
        leader = samsa_consumer_leader(c, p->topic, p->partition);
        if (leader < 0) {
            samsa_consumer_md_request(c);
            continue;
        }
        if (!samsa_netclient_ready(c->nc, leader, now)) {
            continue;
        }
        r = cfetch_req_new(c, leader);
        for (j = i; j < c->nparts; j++) {
            samsa_cpart_t  *q = c->parts[j];

            if (q->state == SAMSA_CPART_NEED_RESET && !q->lo_inflight
                && q->err == SAMSA_ERR_NONE && now >= q->backoff_until_ms
                && samsa_consumer_leader(c, q->topic, q->partition)
                       == leader) {
                q->lo_inflight = true;
                cfetch_req_add(r, q->topic, q->partition, q->gen,
                               q->reset_to, 0);
            }
        }
        cfetch_send_list_offsets(c, r, now);
    }
}

/* Send a ListOffsets operation once every partition's leader is known
 * (or its topic is known not to exist). */
static void
cfetch_op_list_offsets(samsa_consumer_t *c, samsa_cop_t *op, int64_t now)
{
    cfetch_req_t       **reqs = NULL;
    const samsa_mdtopic_t  *t;
    int32_t              nreqs = 0, i, leader;
    size_t               k;
    bool                 wait = false;

    for (k = 0; k < op->n; k++) {
        samsa_topic_partition_t  *tp = &op->tps[k];

        t = samsa_consumer_md_find(c, tp->topic, strlen(tp->topic));
        if (t == NULL) {
            samsa_consumer_md_want(c, tp->topic);
            wait = true;
        } else if (t->err != SAMSA_ERR_NONE && !cfetch_err_retriable(t->err)) {
            tp->err = t->err;
        } else if (t->err == SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION) {
            tp->err = t->err;
        } else if (tp->partition >= t->npartitions) {
            tp->err = SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION;
        } else if (t->leaders[tp->partition] < 0
                   || !samsa_netclient_ready(c->nc,
                                             t->leaders[tp->partition],
                                             now)) {
            samsa_consumer_md_want(c, tp->topic);
            wait = true;
        }
    }
    if (wait) {
        if (now >= op->deadline_ms) {
            samsa_consumer_op_unlink(c, op);
            samsa_consumer_op_done(c, op, SAMSA_ERR__TIMED_OUT);
        }
        return;
    }
    samsa_consumer_op_unlink(c, op);
    for (k = 0; k < op->n; k++) {
        samsa_topic_partition_t  *tp = &op->tps[k];

        if (tp->err != SAMSA_ERR__TIMED_OUT) {
            continue;                   /* an error found above */
        }
        leader = samsa_consumer_leader(c, tp->topic, tp->partition);
        for (i = 0; i < nreqs && reqs[i]->node != leader; i++) {
        }
        if (i == nreqs) {
            reqs = samsa_realloc(reqs, (size_t) (nreqs + 1) * sizeof(*reqs));
            reqs[nreqs++] = cfetch_req_new(c, leader);
            reqs[i]->op = op;
        }
        cfetch_req_add(reqs[i], tp->topic, tp->partition, 0, tp->timestamp,
                       k);
    }
    op->sent = true;
    op->pending = nreqs + 1;            /* +1 until all are sent */
    for (i = 0; i < nreqs; i++) {
        cfetch_send_list_offsets(c, reqs[i], now);
    }
    samsa_free(reqs);
    if (--op->pending == 0) {
        samsa_consumer_op_done(c, op, SAMSA_ERR_NONE);
    }
}

/* ---- Fetch -------------------------------------------------------------- */

/* One partition's answer: its records become a chunk in the partition's
 * queue (pointing into src, the response, where they can). */
static void
cfetch_part_data(samsa_consumer_t *c, int32_t node, const cfetch_ent_t *e,
                 const samsa_FetchPartitionData_t *pd,
                 samsa_crecs_src_t *src, int64_t now)
{
    samsa_cpart_t          *p;
    samsa_crecs_chunk_t    *ch;
    samsa_crecs_opts_t      o;
    samsa_crecs_aborted_t  *ab = NULL;
    samsa_err_t             err = (samsa_err_t) pd->ErrorCode;
    int32_t                 i;

    p = samsa_consumer_part_at_gen(c, e->topic, e->partition, e->gen);
    if (p == NULL) {
        return;                         /* unassigned or moved meanwhile */
    }
    p->fetch_inflight = false;
    if (p->state != SAMSA_CPART_READY || p->fetch_offset != e->offset) {
        return;
    }
    if (err == SAMSA_ERR_NONE && pd->PreferredReadReplica >= 0) {
        /* KIP-392: the leader names a replica to read from (no records);
         * until metadata.max.age.ms, as Java's SubscriptionState */
        p->preferred_replica = pd->PreferredReadReplica;
        p->preferred_until_ms = now + c->cc.net.metadata_max_age_ms;
        samsa_debug("consumer: %s [%d]: fetching from preferred read "
                    "replica %d", p->topic, p->partition,
                    (int) p->preferred_replica);
        return;
    }
    if (err != SAMSA_ERR_NONE && p->preferred_replica >= 0
        && node != samsa_consumer_leader(c, p->topic, p->partition)) {
        /* an error from the follower: back to the leader, and an offset
         * it does not have yet is no reason to reset (Java's Fetcher) */
        p->preferred_replica = -1;
        if (err == SAMSA_ERR_OFFSET_OUT_OF_RANGE) {
            return;
        }
    }
    if (err == SAMSA_ERR_NONE) {
        p->high_watermark = pd->HighWatermark;
        p->last_stable_offset = pd->LastStableOffset;
        p->log_start_offset = pd->LogStartOffset;
        memset(&o, 0, sizeof(o));
        o.fetch_offset = e->offset;
        o.read_committed = c->cc.read_committed;
        o.check_crcs = c->cc.check_crcs;
        o.max_batch_bytes = CFETCH_MAX_BATCH_BYTES;
        o.src = src;
        if (pd->AbortedTransactions_cnt > 0) {
            ab = samsa_calloc((size_t) pd->AbortedTransactions_cnt,
                              sizeof(*ab));
            for (i = 0; i < pd->AbortedTransactions_cnt; i++) {
                ab[i].producer_id = pd->AbortedTransactions[i].ProducerId;
                ab[i].first_offset = pd->AbortedTransactions[i].FirstOffset;
            }
            o.aborted = ab;
            o.naborted = (size_t) pd->AbortedTransactions_cnt;
        }
        ch = samsa_crecs_parse(p->topic, p->partition,
                               (const uint8_t *) pd->Records.bytes.ptr,
                               pd->Records.bytes.len, &o);
        samsa_free(ab);
        p->fetch_offset = ch->next_offset;
        if (ch->err != SAMSA_ERR_NONE) {
            p->blocked = true;
        }
        if (ch->n == 0 && ch->err == SAMSA_ERR_NONE && p->q_head == NULL) {
            if (ch->next_offset > p->position) {
                p->position = ch->next_offset;
            }
            samsa_crecs_chunk_unref(ch);
            return;
        }
        if (p->q_tail != NULL) {
            p->q_tail->next = ch;
        } else {
            p->q_head = ch;
        }
        p->q_tail = ch;
        p->nchunks++;
        pthread_cond_broadcast(&c->cond);
        return;
    }
    if (err == SAMSA_ERR_OFFSET_OUT_OF_RANGE) {
        samsa_consumer_part_drop_chunks(p);
        p->gen = samsa_consumer_next_gen(c);
        if (c->cc.auto_offset_reset == SAMSA_RESET_NONE) {
            p->err = err;
            p->blocked = true;
            pthread_cond_broadcast(&c->cond);
            return;
        }
        samsa_info("consumer: %s [%d] offset %lld out of range: resetting "
                   "to %s", p->topic, p->partition, (long long) e->offset,
                   c->cc.auto_offset_reset == SAMSA_RESET_EARLIEST
                       ? "earliest" : "latest");
        p->state = SAMSA_CPART_NEED_RESET;
        p->reset_to = c->cc.auto_offset_reset == SAMSA_RESET_EARLIEST
                          ? SAMSA_OFFSET_BEGINNING : SAMSA_OFFSET_END;
        return;
    }
    p->backoff_until_ms = now + c->cc.net.retry_backoff_ms;
    if (cfetch_err_retriable(err)) {
        samsa_consumer_md_request(c);
        return;
    }
    p->err = err;
    p->blocked = true;
    pthread_cond_broadcast(&c->cond);
}

static void
cfetch_on_fetch(void *ctx, int32_t node, samsa_err_t err, samsa_rd_t *body,
                void *opaque)
{
    samsa_consumer_t       *c = ctx;
    cfetch_req_t           *r = opaque;
    samsa_FetchResponse_t   resp;
    samsa_arena_t           arena = SAMSA_ARENA_INIT;
    samsa_crecs_src_t      *src = NULL;
    uint8_t                *bytes;
    int64_t                 now = samsa_now_ms();
    int32_t                 i, j;
    size_t                  k;

    pthread_mutex_lock(&c->lock);
    cfetch_node_set(c, node, false);
    if (err == SAMSA_ERR_NONE) {
        /* records are read in place: the chunks keep the response */
        bytes = samsa_netclient_take_response(c->nc);
        src = bytes != NULL ? samsa_crecs_src_new(bytes) : NULL;
        /* its ThrottleTimeMs the netclient has applied (KIP-219) */
        err = samsa_FetchResponse_decode(body, r->version, &arena, &resp);
        if (err == SAMSA_ERR_NONE && resp.ErrorCode != 0) {
            err = (samsa_err_t) resp.ErrorCode;
        }
    }
    if (err == SAMSA_ERR_NONE) {
        atomic_fetch_add_explicit(&c->m_fetches, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&c->m_fetch_ns, samsa_now_ns() - r->sent_ns,
                                  memory_order_relaxed);
        for (i = 0; i < resp.Responses_cnt; i++) {
            const samsa_FetchableTopicResponse_t  *t = &resp.Responses[i];

            for (j = 0; j < t->Partitions_cnt; j++) {
                for (k = 0; k < r->n; k++) {
                    if (r->ents[k].partition
                            == t->Partitions[j].PartitionIndex
                        && samsa_slice_eq_cstr(t->Topic, r->ents[k].topic)) {
                        cfetch_part_data(c, node, &r->ents[k],
                                         &t->Partitions[j], src, now);
                        break;
                    }
                }
            }
        }
    } else if (err != SAMSA_ERR__SHUTDOWN) {
        samsa_debug("consumer: Fetch to node %d failed: %s", node,
                    samsa_err_name(err));
        samsa_consumer_md_request(c);
    }
    /* partitions the answer left out (or a failed request) */
    for (k = 0; k < r->n; k++) {
        samsa_cpart_t  *p = samsa_consumer_part_at_gen(
            c, r->ents[k].topic, r->ents[k].partition, r->ents[k].gen);

        if (p != NULL && p->fetch_inflight) {
            p->fetch_inflight = false;
            if (err != SAMSA_ERR_NONE) {
                p->backoff_until_ms = now + c->cc.net.retry_backoff_ms;
                p->preferred_replica = -1;
            }
        }
    }
    samsa_crecs_src_unref(src);         /* the chunks hold their own refs */
    samsa_arena_fini(&arena);
    cfetch_req_free(r);
    pthread_mutex_unlock(&c->lock);
}

static bool
cfetch_fetchable(const samsa_cpart_t *p, int64_t now)
{
    return p->state == SAMSA_CPART_READY && !p->paused && !p->fetch_inflight
           && !p->blocked && p->err == SAMSA_ERR_NONE
           && p->nchunks < CFETCH_MAX_CHUNKS && now >= p->backoff_until_ms;
}

static void
cfetch_send_fetch(samsa_consumer_t *c, cfetch_req_t *r, int64_t now)
{
    samsa_FetchRequest_t     req;
    samsa_FetchTopic_t      *topics;
    samsa_FetchPartition_t  *parts;
    samsa_buf_t              frame = SAMSA_BUF_INIT;
    samsa_wr_t               wr;
    const char             **names;
    int32_t                 *counts, nt, i;
    size_t                   k, off = 0;

    nt = cfetch_topics(r, &names, &counts);
    topics = samsa_calloc((size_t) nt + 1, sizeof(*topics));
    parts = samsa_calloc(r->n + 1, sizeof(*parts));
    for (i = 0; i < nt; i++) {
        samsa_FetchTopic_init(&topics[i]);
        topics[i].Topic = samsa_slice_cstr(names[i]);
        topics[i].Partitions = &parts[off];
        for (k = 0; k < r->n; k++) {
            if (strcmp(r->ents[k].topic, names[i]) == 0) {
                samsa_FetchPartition_init(&parts[off]);
                parts[off].Partition = r->ents[k].partition;
                parts[off].FetchOffset = r->ents[k].offset;
                parts[off].PartitionMaxBytes =
                    c->cc.max_partition_fetch_bytes;
                off++;
                topics[i].Partitions_cnt++;
            }
        }
    }
    samsa_FetchRequest_init(&req);
    req.ReplicaId = -1;
    req.MaxWaitMs = c->cc.fetch_max_wait_ms;
    req.MinBytes = c->cc.fetch_min_bytes;
    req.MaxBytes = c->cc.fetch_max_bytes;
    req.IsolationLevel = c->cc.read_committed ? 1 : 0;
    req.SessionId = 0;
    req.SessionEpoch = -1;              /* sessionless full fetch */
    req.Topics = topics;
    req.Topics_cnt = nt;
    req.RackId = samsa_slice_cstr(c->cc.client_rack);
    samsa_netclient_frame_begin(c->nc, SAMSA_API_Fetch, r->version, &frame,
                                &wr);
    samsa_FetchRequest_encode(&wr, r->version, &req);
    samsa_free(topics);
    samsa_free(parts);
    samsa_free(names);
    samsa_free(counts);
    r->sent_ns = samsa_now_ns();
    if (samsa_netclient_send(c->nc, r->node, &frame, SAMSA_API_Fetch,
                             r->version, true, cfetch_on_fetch, c, r, now)
        != SAMSA_ERR_NONE) {
        samsa_buf_fini(&frame);
        cfetch_on_fetch(c, r->node, SAMSA_ERR__STATE, NULL, r);
        return;
    }
    cfetch_node_set(c, r->node, true);
}

/* Hold the Fetch to leader back while every partition it would carry is
 * caught up (at the high watermark, so the broker would park it for
 * fetch.max.wait.ms) and another partition of the same leader waits only
 * for the app to drain its buffered chunks: sending now would keep that
 * one from being fetched until the long poll ends.  The app's next poll()
 * that frees a chunk wakes the loop and the Fetch goes out with both. */
/* Where p's next Fetch goes: its preferred read replica while that holds
 * (KIP-392), else its leader (-1: none known). */
static int32_t
cfetch_target(samsa_consumer_t *c, samsa_cpart_t *p, int64_t now)
{
    if (p->preferred_replica >= 0 && now >= p->preferred_until_ms) {
        p->preferred_replica = -1;
    }
    return p->preferred_replica >= 0
               ? p->preferred_replica
               : samsa_consumer_leader(c, p->topic, p->partition);
}

static bool
cfetch_hold(samsa_consumer_t *c, int32_t leader, int64_t now)
{
    bool     all_caught_up = true, held = false;
    int32_t  i;

    for (i = 0; i < c->nparts; i++) {
        samsa_cpart_t  *q = c->parts[i];

        if (cfetch_target(c, q, now) != leader) {
            continue;
        }
        if (cfetch_fetchable(q, now)) {
            all_caught_up = all_caught_up && q->high_watermark >= 0
                            && q->fetch_offset >= q->high_watermark;
        } else if (q->state == SAMSA_CPART_READY && !q->paused
                   && !q->blocked && !q->fetch_inflight
                   && q->err == SAMSA_ERR_NONE
                   && q->nchunks >= CFETCH_MAX_CHUNKS) {
            held = true;
        }
    }
    return all_caught_up && held;
}

static void
cfetch_fetches(samsa_consumer_t *c, int64_t now)
{
    cfetch_req_t  *r;
    int32_t        i, j, leader;
    int16_t        v;

    for (i = 0; i < c->nparts; i++) {
        samsa_cpart_t  *p = c->parts[i];

        if (!cfetch_fetchable(p, now)) {
            continue;
        }
        leader = cfetch_target(c, p, now);
        if (leader < 0) {
            samsa_consumer_md_request(c);
            continue;
        }
        if (cfetch_node_busy(c, leader)
            || !samsa_netclient_ready(c->nc, leader, now)) {
            continue;
        }
        v = samsa_netclient_version(c->nc, leader, SAMSA_API_Fetch, 4, 12);
        if (v < 0) {
            p->err = SAMSA_ERR_UNSUPPORTED_VERSION;
            p->blocked = true;
            continue;
        }
        if (cfetch_hold(c, leader, now)) {
            continue;
        }
        r = cfetch_req_new(c, leader);
        r->version = v;
        for (j = i; j < c->nparts; j++) {
            samsa_cpart_t  *q = c->parts[j];

            if (cfetch_fetchable(q, now)
                && cfetch_target(c, q, now) == leader) {
                q->fetch_inflight = true;
                cfetch_req_add(r, q->topic, q->partition, q->gen,
                               q->fetch_offset, 0);
            }
        }
        cfetch_send_fetch(c, r, now);
    }
}

void
samsa_cfetch_work(samsa_consumer_t *c, int64_t now_ms)
{
    samsa_cop_t  *op, *next;

    for (op = c->op_head; op != NULL; op = next) {
        next = op->next;
        if (op->kind == SAMSA_COP_LIST_OFFSETS && !op->sent) {
            cfetch_op_list_offsets(c, op, now_ms);
        }
    }
    cfetch_resets(c, now_ms);
    cfetch_fetches(c, now_ms);
}
