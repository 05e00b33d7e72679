/*
 * broker/handlers/h_Fetch.c - Fetch (key 1), v4 on (record batch v2).  Each
 * partition's records up to the high watermark (the last stable offset for
 * read_committed, with the aborted transactions that may touch the range
 * from the partition's transaction indexes) go out straight from the
 * segment files with sendfile: the response only names file regions.  The
 * response is bounded by MaxBytes (at most fetch.max.bytes and the
 * client's consumer_byte_rate quota window) and each partition by
 * PartitionMaxBytes, except that the first batch of the first partition
 * with data is always sent whole (KIP-74).  When fewer than MinBytes are
 * there and MaxWaitMs allows, the request waits in the fetch purgatory,
 * watching its partitions; a Produce to one of them checks it again (long
 * poll).  A fetch the fetch byte rate or the request time throttles is
 * answered empty, as Kafka answers it (broker/quota.h).  Every partition
 * answered carries a record set, empty for an errored one, never null.
 * Fetch sessions (KIP-227) are not kept: a full fetch gets session id 0,
 * so clients keep sending full fetches; an incremental one gets
 * FETCH_SESSION_ID_NOT_FOUND.  v13+ name topics by id.
 * A Fetch from a follower (ReplicaState v15+, else ReplicaId >= 0) of a
 * replicated partition this node leads (broker/replica.h) records the
 * follower's fetch offset as its LEO (which may move the high watermark)
 * and reads up to the LEO instead of the high watermark.  KIP-320 (v12+):
 * a partition whose LastFetchedEpoch does not end at or past FetchOffset
 * here is answered at once with DivergingEpoch and no records
 * (samsa_epochs_check_fetch).
 * Threads: handler; a delayed fetch completes on whichever thread checks
 * it (a handler after a Produce, or the fetch reaper on expiry).
 */
#include "broker/api_table.h"

#include <string.h>
#include <unistd.h>

#include "broker/broker.h"
#include "broker/quota.h"
#include "broker/route.h"
#include "meta/acl.h"
#include "net/server/req.h"
#include "net/server/reqchan.h"
#include "proto/errmap.h"
#include "proto/gen/Fetch.h"
#include "proto/wr.h"
#include "util/alloc.h"
#include "config/config.h"
#include "util/diag.h"
#include "util/time.h"

#define ISOLATION_READ_COMMITTED 1

typedef struct fetch_part {
    const samsa_FetchPartition_t  *rq;
    samsa_FetchPartitionData_t    *pd;
    samsa_plog_t                  *plog;        /* ref; NULL on error */
    int32_t                        leader_epoch;
    bool                           to_leo;      /* a follower's: up to the
                                                   LEO, not the HW */
    bool                           diverging;   /* DivergingEpoch set:
                                                   no data (KIP-320) */
    bool                           preferred;   /* PreferredReadReplica
                                                   set: no data (KIP-392) */
    samsa_plog_region_t            region;      /* while building */
    samsa_file_region_t            file;
    char                           key[SAMSA_PURGATORY_TP_KEY_MAX];
} fetch_part_t;

typedef struct fetch_op {
    samsa_delayed_op_t       op;
    samsa_broker_t          *b;             /* [const] */
    samsa_req_t             *req;
    samsa_FetchResponse_t   *m;             /* in req->arena */
    fetch_part_t            *parts;
    size_t                   nparts;
    int32_t                  min_bytes;
    int32_t                  max_bytes;
    bool                     committed;     /* read_committed */
    bool                     has_error;     /* answer at once (an error
                                               or a DivergingEpoch) */
    int32_t                  replica_id;    /* ReplicaState's or the
                                               ReplicaId; -1: a consumer */
    samsa_slice_t            rack_id;       /* v11+ RackId (client.rack),
                                               in req->arena */
    const samsa_image_t     *img;           /* while resolving only */
    samsa_route_leaders_t    leaders;       /* for NodeEndpoints */
} fetch_op_t;

/* ---- resolving the request's partitions -------------------------------- */

/* The records of a partition with nothing to send, errored or not: an
 * empty record set, as Kafka's MemoryRecords.EMPTY, never null (librdkafka
 * rejects a whole response holding a null one: "invalid MessageSetSize
 * -1"). */
static samsa_records_t
fetch_records_empty(void)
{
    return (samsa_records_t) { (samsa_slice_t) { "", 0 }, NULL };
}

static void
fetch_part_error(fetch_op_t *f, fetch_part_t *p, samsa_err_t err)
{
    /* out of descriptors (transient): a code consumers retry after a
     * metadata refresh (Java's FetchCollector would throw on
     * REQUEST_TIMED_OUT) */
    p->pd->ErrorCode = err == SAMSA_ERR__NOFILE
                           ? SAMSA_ERR_REPLICA_NOT_AVAILABLE
                           : samsa_err_wire(err);
    p->pd->HighWatermark = -1;
    p->pd->LastStableOffset = -1;
    p->pd->LogStartOffset = -1;
    f->has_error = true;
}

/* KIP-951 (v16+): the current leader of a partition answered
 * NOT_LEADER_OR_FOLLOWER or FENCED_LEADER_EPOCH, its endpoint for the
 * response's NodeEndpoints. */
static void
fetch_part_leader(fetch_op_t *f, fetch_part_t *p, int32_t leader_id,
                  int32_t leader_epoch)
{
    if (f->req->hdr.ApiVersion < 16) {
        return;
    }
    p->pd->CurrentLeader.LeaderId = leader_id;
    p->pd->CurrentLeader.LeaderEpoch = leader_epoch;
    p->pd->CurrentLeader_set = true;
    if (leader_id >= 0) {
        samsa_route_leaders_add(&f->leaders, f->img, leader_id,
                                f->req->listener, &f->req->arena);
    }
}

/* The offsets every answer of a partition carries. */
static void
fetch_part_offsets(fetch_part_t *p)
{
    p->pd->HighWatermark = samsa_plog_high_watermark(p->plog);
    p->pd->LastStableOffset = samsa_plog_last_stable_offset(p->plog);
    p->pd->LogStartOffset = samsa_plog_log_start_offset(p->plog);
}

/* KIP-320 (v12+, Kafka's Partition.readRecords): a LastFetchedEpoch the
 * log here does not end the same way gets DivergingEpoch and no data (the
 * fetcher truncates and fetches again), one it cannot place
 * OFFSET_OUT_OF_RANGE.  false when the fetch was answered so. */
static bool
fetch_part_epoch(fetch_op_t *f, fetch_part_t *p)
{
    samsa_epochs_fetch_t  r;
    int32_t               epoch;
    int64_t               end;

    if (f->req->hdr.ApiVersion < 12 || p->rq->LastFetchedEpoch < 0) {
        return true;
    }
    r = samsa_plog_check_fetch_epoch(p->plog, p->rq->LastFetchedEpoch,
                                     p->rq->FetchOffset, p->leader_epoch,
                                     &epoch, &end);
    if (r == SAMSA_EPOCHS_FETCH_OUT_OF_RANGE) {
        fetch_part_error(f, p, SAMSA_ERR_OFFSET_OUT_OF_RANGE);
        fetch_part_offsets(p);
        return false;
    }
    if (r == SAMSA_EPOCHS_FETCH_DIVERGING) {
        p->diverging = true;
        p->pd->DivergingEpoch_set = true;
        p->pd->DivergingEpoch.Epoch = epoch;
        p->pd->DivergingEpoch.EndOffset = end;
        fetch_part_offsets(p);
        f->has_error = true;            /* answered at once, as Kafka */
        return false;
    }
    return true;
}

/* Check the partition's leader epoch and offset against its log. */
static void
fetch_part_check(fetch_op_t *f, fetch_part_t *p)
{
    int64_t  start, end;

    samsa_err_t  err = samsa_route_check_leader_epoch(
        p->rq->CurrentLeaderEpoch, p->leader_epoch);

    if (err != SAMSA_ERR_NONE) {
        fetch_part_error(f, p, err);
        if (err == SAMSA_ERR_FENCED_LEADER_EPOCH) {
            fetch_part_leader(f, p, f->b->node->node_id, p->leader_epoch);
        }
        return;
    }
    if (!fetch_part_epoch(f, p)) {
        return;
    }
    start = samsa_plog_log_start_offset(p->plog);
    end = samsa_plog_log_end_offset(p->plog);
    if (p->rq->FetchOffset < start || p->rq->FetchOffset > end) {
        fetch_part_error(f, p, SAMSA_ERR_OFFSET_OUT_OF_RANGE);
        fetch_part_offsets(p);
    }
}

/* KIP-392: may a consumer's Fetch v11+ (one that can be told a preferred
 * read replica) read p of t at this node, a follower?  As Kafka's
 * fetchOnlyFromLeader = false: when the replica manager follows the
 * partition in the image's epoch; it reads up to the HW the leader sent. */
static bool
fetch_part_follower_read(samsa_apis_t *apis, const fetch_op_t *f,
                         const samsa_image_topic_t *t, const fetch_part_t *p)
{
    return f->replica_id < 0 && f->req->hdr.ApiVersion >= 11
           && samsa_replmgr_follows(apis->broker->repl, t->name, t->name_len,
                                    p->rq->Partition, p->leader_epoch);
}

/* The rack of broker id in img (NULL: none), if it has an endpoint on
 * listener; *reachable false else. */
static const char *
fetch_broker_rack(const samsa_image_t *img, int32_t id, const char *listener,
                  bool *reachable)
{
    const samsa_image_broker_t  *br = samsa_image_broker_find(img, id);

    *reachable = br != NULL && !br->fenced
                 && (listener == NULL
                     || samsa_image_broker_endpoint(br, listener) != NULL);
    return br != NULL ? br->rack : NULL;
}

/* KIP-392 at the leader (Kafka's findPreferredReadReplica with the
 * RackAwareReplicaSelector): for a consumer's Fetch v11+ naming a rack,
 * the in-sync follower in that rack whose log holds the fetch offset, the
 * most caught up (log end, then the latest caught-up time), unless this
 * leader is in that rack or none is: then the leader reads as ever.  A
 * chosen follower goes out as PreferredReadReplica with the offsets and
 * no records, answered at once. */
static void
fetch_part_prefer(samsa_apis_t *apis, fetch_op_t *f, fetch_part_t *p,
                  const samsa_image_topic_t *t)
{
    const samsa_image_partition_t  *ip = &t->partitions[p->rq->Partition];
    samsa_replmgr_follower_view_t   v[16];
    const char                     *sel, *rack;
    int64_t                         off = p->rq->FetchOffset;
    size_t                          n, i, best = SIZE_MAX;
    bool                            reachable;

    if (f->replica_id >= 0 || f->rack_id.ptr == NULL || f->rack_id.len == 0) {
        return;                         /* the common case: no rack */
    }
    sel = samsa_config_str(apis->broker->cfg, "replica.selector.class");
    if (sel == NULL || strcmp(sel, "org.apache.kafka.common.replica."
                                   "RackAwareReplicaSelector") != 0) {
        return;
    }
    rack = fetch_broker_rack(f->img, apis->broker->node->node_id, NULL,
                             &reachable);
    if (rack != NULL && samsa_slice_eq_cstr(f->rack_id, rack)) {
        return;                         /* the leader is in that rack */
    }
    n = samsa_replmgr_followers(apis->broker->repl, t->name, t->name_len,
                                p->rq->Partition, p->leader_epoch, v,
                                sizeof(v) / sizeof(v[0]));
    for (i = 0; i < n; i++) {
        if (!samsa_image_ids_has(ip->isr, ip->nisr, v[i].id)
            || v[i].log_end_offset < off || v[i].log_start_offset < 0
            || v[i].log_start_offset > off) {
            continue;
        }
        rack = fetch_broker_rack(f->img, v[i].id, f->req->listener,
                                 &reachable);
        if (!reachable || rack == NULL
            || !samsa_slice_eq_cstr(f->rack_id, rack)) {
            continue;
        }
        if (best == SIZE_MAX || v[i].log_end_offset > v[best].log_end_offset
            || (v[i].log_end_offset == v[best].log_end_offset
                && v[i].last_caught_up_ms > v[best].last_caught_up_ms)) {
            best = i;
        }
    }
    if (best == SIZE_MAX) {
        return;
    }
    p->preferred = true;
    p->pd->PreferredReadReplica = v[best].id;
    fetch_part_offsets(p);
    f->has_error = true;                /* answered at once, as Kafka */
}

static void
fetch_part_resolve(samsa_apis_t *apis, fetch_op_t *f, fetch_part_t *p,
                   const samsa_image_topic_t *t)
{
    int32_t  leader_id, leader_epoch;
    bool     follower = false;

    if (t == NULL || p->rq->Partition < 0
        || p->rq->Partition >= t->npartitions) {
        fetch_part_error(f, p, t == NULL && f->req->hdr.ApiVersion >= 13
                                   ? SAMSA_ERR_UNKNOWN_TOPIC_ID
                                   : SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION);
        return;
    }
    p->leader_epoch = t->partitions[p->rq->Partition].leader_epoch;
    if (samsa_broker_route_check(apis->broker, f->img, t, p->rq->Partition,
                                 f->req->listener, &f->req->arena, NULL,
                                 &leader_id, &leader_epoch)
        != SAMSA_ERR_NONE) {
        follower = fetch_part_follower_read(apis, f, t, p);
        if (!follower) {
            fetch_part_error(f, p, SAMSA_ERR_NOT_LEADER_OR_FOLLOWER);
            fetch_part_leader(f, p, leader_id, leader_epoch);
            return;
        }
    }
    samsa_purgatory_tp_key(p->key, t->name, t->name_len, p->rq->Partition);
    p->plog = samsa_logmgr_plog_ref(apis->broker->logs, t->name,
                                    p->rq->Partition);
    if (p->plog == NULL) {
        /* in the metadata, not hosted here: as Kafka's
         * getPartitionOrError (see samsa_broker_plog_find_leader) */
        fetch_part_error(f, p, SAMSA_ERR_NOT_LEADER_OR_FOLLOWER);
        return;
    }
    fetch_part_check(f, p);
    if (follower || p->pd->ErrorCode != 0 || p->diverging) {
        return;
    }
    /* issue 19: a follower's fetch offset is its LEO (broker/replica.h),
     * unless its log diverged from this one (Kafka does not record it) */
    if (f->replica_id >= 0
        && samsa_replmgr_is_follower(apis->broker->repl, t->name,
                                     t->name_len, p->rq->Partition,
                                     f->replica_id)) {
        p->to_leo = true;
        samsa_replmgr_follower_fetch(apis->broker->repl, t->name,
                                     t->name_len, p->rq->Partition,
                                     f->replica_id, p->rq->FetchOffset,
                                     f->req->hdr.ApiVersion >= 5
                                         ? p->rq->LogStartOffset : -1);
        return;
    }
    fetch_part_prefer(apis, f, p, t);
}

/* KIP-951: the endpoints of the leaders named in CurrentLeader. */
static void
fetch_node_endpoints(fetch_op_t *f)
{
    const samsa_route_leaders_t  *l = &f->leaders;
    samsa_FetchNodeEndpoint_t    *ne;
    size_t                        i;

    if (l->n == 0) {
        return;
    }
    ne = samsa_arena_calloc(&f->req->arena, l->n, sizeof(*ne));
    for (i = 0; i < l->n; i++) {
        samsa_FetchNodeEndpoint_init(&ne[i]);
        ne[i].NodeId = l->nodes[i].id;
        ne[i].Host = samsa_slice_cstr(l->nodes[i].host);
        ne[i].Port = l->nodes[i].port;
        ne[i].Rack = l->nodes[i].rack != NULL
                         ? samsa_slice_cstr(l->nodes[i].rack)
                         : SAMSA_SLICE_NULL;
    }
    f->m->NodeEndpoints = ne;
    f->m->NodeEndpoints_cnt = (int32_t) l->n;
}

/* Mirror the request's topics and partitions into the response and resolve
 * each partition to its log. */
static void
fetch_resolve(samsa_apis_t *apis, fetch_op_t *f, const samsa_FetchRequest_t *rq)
{
    /* held by the request: NodeEndpoints' hosts point into it */
    samsa_image_t                 *img = samsa_apis_image(apis->broker,
                                                          f->req);
    samsa_arena_t                 *arena = &f->req->arena;
    const samsa_image_topic_t     *t;
    samsa_FetchableTopicResponse_t *tr;
    size_t                         n = 0;
    int32_t                        i, j;
    bool                           allowed;

    for (i = 0; i < rq->Topics_cnt; i++) {
        n += (size_t) (rq->Topics[i].Partitions_cnt > 0
                           ? rq->Topics[i].Partitions_cnt : 0);
    }
    f->img = img;
    f->parts = samsa_arena_calloc(arena, n, sizeof(*f->parts));
    f->m->Responses_cnt = rq->Topics_cnt > 0 ? rq->Topics_cnt : 0;
    f->m->Responses = samsa_arena_calloc(arena, (size_t) f->m->Responses_cnt,
                                         sizeof(*f->m->Responses));
    for (i = 0; i < f->m->Responses_cnt; i++) {
        tr = &f->m->Responses[i];
        samsa_FetchableTopicResponse_init(tr);
        tr->Topic = rq->Topics[i].Topic;
        tr->TopicId = rq->Topics[i].TopicId;
        t = f->req->hdr.ApiVersion >= 13
                ? samsa_image_topic_find_id(img, rq->Topics[i].TopicId)
                : samsa_image_topic_find(img, tr->Topic.ptr != NULL
                                                  ? tr->Topic.ptr : "",
                                         tr->Topic.len);
        /* READ on the topic (an unknown id stays UNKNOWN_TOPIC_ID) */
        allowed = samsa_apis_allowed(
            apis, f->req, img, SAMSA_ACL_OP_READ, SAMSA_ACL_RESOURCE_TOPIC,
            t != NULL ? (samsa_slice_t) { t->name, t->name_len } : tr->Topic)
            || (t == NULL && f->req->hdr.ApiVersion >= 13);
        tr->Partitions_cnt = rq->Topics[i].Partitions_cnt > 0
                                 ? rq->Topics[i].Partitions_cnt : 0;
        tr->Partitions = samsa_arena_calloc(arena,
                                            (size_t) tr->Partitions_cnt,
                                            sizeof(*tr->Partitions));
        for (j = 0; j < tr->Partitions_cnt; j++) {
            fetch_part_t  *p = &f->parts[f->nparts++];

            p->rq = &rq->Topics[i].Partitions[j];
            p->pd = &tr->Partitions[j];
            samsa_FetchPartitionData_init(p->pd);
            p->pd->PartitionIndex = p->rq->Partition;
            p->pd->Records = fetch_records_empty();
            if (!allowed) {
                fetch_part_error(f, p, SAMSA_ERR_TOPIC_AUTHORIZATION_FAILED);
                continue;
            }
            fetch_part_resolve(apis, f, p, t);
        }
    }
    fetch_node_endpoints(f);
    f->img = NULL;
}

/* ---- reading ----------------------------------------------------------- */

/* Read every healthy partition within the byte limits; returns the bytes
 * found.  With keep, the regions stay for the answer; else released. */
static int64_t
fetch_read(fetch_op_t *f, bool keep)
{
    int64_t        total = 0, limit, hwm, lso, upto;
    fetch_part_t  *p;
    samsa_err_t    err;
    size_t         i;

    for (i = 0; i < f->nparts; i++) {
        p = &f->parts[i];
        if (p->plog == NULL || p->pd->ErrorCode != 0 || p->diverging
            || p->preferred) {
            continue;
        }
        hwm = samsa_plog_high_watermark(p->plog);
        lso = samsa_plog_last_stable_offset(p->plog);
        upto = p->to_leo ? samsa_plog_log_end_offset(p->plog)
                         : f->committed ? lso : hwm;
        limit = f->max_bytes - total;
        if (limit > p->rq->PartitionMaxBytes) {
            limit = p->rq->PartitionMaxBytes;
        }
        if (limit < 0) {
            limit = 0;
        }
        memset(&p->region, 0, sizeof(p->region));
        err = SAMSA_ERR_NONE;
        if (p->rq->FetchOffset < upto && (limit > 0 || total == 0)) {
            err = samsa_plog_read(p->plog, p->rq->FetchOffset,
                                  (int32_t) limit, total == 0, upto,
                                  &p->region);
        }
        if (keep) {
            p->pd->HighWatermark = hwm;
            p->pd->LastStableOffset = lso;
            p->pd->LogStartOffset = samsa_plog_log_start_offset(p->plog);
            if (err != SAMSA_ERR_NONE) {
                fetch_part_error(f, p, err);
            }
        } else if (err != SAMSA_ERR_NONE) {
            f->has_error = true;
        }
        total += (int64_t) p->region.len;
        if (!keep) {
            samsa_plog_region_release(&p->region);
        }
    }
    return total;
}

/* Let go of the regions a keeping read found (the fetch waits instead). */
static void
fetch_release_regions(fetch_op_t *f)
{
    size_t  i;

    for (i = 0; i < f->nparts; i++) {
        samsa_plog_region_release(&f->parts[i].region);
    }
}

/* The splice sink: the response takes the segment reference and pin
 * fetch_hold_regions moved into the region (the descriptor stays open, and
 * the segment may be deleted meanwhile without harm) and lets them go once
 * the region is sent. */
static void
fetch_region_sink(void *ctx, const samsa_file_region_t *r)
{
    samsa_resp_add_region_held(ctx, r->fd, r->offset, r->len, r->release,
                               r->release_arg);
}

/* Collects aborted transactions into a growing array. */
typedef struct fetch_aborted {
    samsa_AbortedTransaction_t  *a;
    size_t                       n;
    size_t                       cap;
} fetch_aborted_t;

static bool
fetch_aborted_cb(void *ctx, const samsa_seg_aborted_t *a)
{
    fetch_aborted_t  *fa = ctx;

    if (fa->n == fa->cap) {
        fa->cap = fa->cap ? fa->cap * 2 : 8;
        fa->a = samsa_realloc(fa->a, fa->cap * sizeof(*fa->a));
    }
    samsa_AbortedTransaction_init(&fa->a[fa->n]);
    fa->a[fa->n].ProducerId = a->producer_id;
    fa->a[fa->n].FirstOffset = a->first_offset;
    fa->n++;
    return true;
}

/* read_committed: the aborted transactions that may touch the records
 * sent, from the fetch offset up to the last stable offset (Kafka stops at
 * the end of the data it sends; a longer list only names transactions
 * the consumer never meets). */
static void
fetch_aborted(fetch_op_t *f, fetch_part_t *p)
{
    fetch_aborted_t  fa = { NULL, 0, 0 };
    samsa_err_t      err;

    p->pd->AbortedTransactions_cnt = 0;
    if (p->region.len == 0) {
        return;
    }
    err = samsa_plog_aborted_txns(p->plog, p->rq->FetchOffset,
                                  p->pd->LastStableOffset, fetch_aborted_cb,
                                  &fa);
    if (err != SAMSA_ERR_NONE) {
        samsa_plog_region_release(&p->region);
        fetch_part_error(f, p, err);
    } else if (fa.n > 0) {
        p->pd->AbortedTransactions = samsa_arena_calloc(
            &f->req->arena, fa.n, sizeof(*p->pd->AbortedTransactions));
        memcpy(p->pd->AbortedTransactions, fa.a, fa.n * sizeof(*fa.a));
        p->pd->AbortedTransactions_cnt = (int32_t) fa.n;
    }
    samsa_free(fa.a);
}

/* Kafka's handleFetchRequest once the data is read (processResponseCallback):
 * the response's size, measured before it is encoded, goes to the fetch
 * byte rate and the handler time so far to the request time (so
 * samsa_apis_send records none).  When either throttles, the size is taken
 * back out of the fetch rate (unrecordQuotaSensor: nothing is sent) and
 * the connection is throttled by the longer time, which is returned (0:
 * the data goes out). */
static int32_t
fetch_quota(samsa_broker_t *b, samsa_req_t *req, const samsa_FetchResponse_t *m)
{
    int64_t  now_ms = samsa_now_ms();
    int32_t  bytes_ms = 0, request_ms, ms;
    double   size = 0.0;

    request_ms = samsa_quota_record_request(b->quota, req);
    /* sized (a counting pass of the encoder) only while a fetch byte rate
     * is enabled: without one nothing would be recorded */
    if (samsa_quota_enabled(b->quota, SAMSA_QUOTA_FETCH)) {
        size = (double) samsa_apis_resp_size(req, m);
        bytes_ms = samsa_quota_record(b->quota, SAMSA_QUOTA_FETCH,
                                      samsa_quota_user(req->principal),
                                      req->hdr.ClientId, size, now_ms);
    }
    ms = bytes_ms > request_ms ? bytes_ms : request_ms;
    if (ms > 0) {
        samsa_quota_unrecord(b->quota, SAMSA_QUOTA_FETCH,
                             samsa_quota_user(req->principal),
                             req->hdr.ClientId, size, now_ms);
        req->throttle_ms = ms;
    }
    return ms;
}

/* Kafka's FetchContext.getThrottledResponse in place of the data:
 * ErrorCode NONE, SessionId 0 (no sessions), no topics at all. */
static void
fetch_throttled(samsa_FetchResponse_t *m)
{
    m->ErrorCode = 0;
    m->SessionId = 0;
    m->Responses_cnt = 0;
    m->Responses = NULL;
}

/* release of a region the response holds (network thread, once sent) */
static void
fetch_region_unhold(void *arg)
{
    samsa_plog_region_t  *held = arg;

    samsa_plog_region_release(held);
    samsa_free(held);
}

/* Move each region's segment reference and pin out of the request's
 * arena into the response's region (no dup of the descriptor: that cost a
 * fcntl and a close per Fetch); p->region keeps its position and length
 * but no longer holds the segment. */
static void
fetch_hold_regions(fetch_op_t *f)
{
    samsa_plog_region_t  *held;
    fetch_part_t         *p;
    size_t                i;

    for (i = 0; i < f->nparts; i++) {
        p = &f->parts[i];
        if (p->region.len > 0) {
            held = samsa_malloc(sizeof(*held));
            *held = p->region;
            p->region.seg = NULL;
            p->file.release = fetch_region_unhold;
            p->file.release_arg = held;
        }
    }
}

/* After a throttle: the held regions are not sent. */
static void
fetch_unhold_regions(fetch_op_t *f)
{
    size_t  i;

    for (i = 0; i < f->nparts; i++) {
        if (f->parts[i].file.release_arg != NULL) {
            fetch_region_unhold(f->parts[i].file.release_arg);
            f->parts[i].file.release = NULL;
            f->parts[i].file.release_arg = NULL;
        }
    }
}

/* Answer f; read selects whether the partitions are read now (a delayed
 * fetch) or were read with keep just before (the first attempt). */
static void
fetch_answer(fetch_op_t *f, bool read)
{
    static const samsa_apis_send_opts_t  opts = { -1, fetch_region_sink,
                                                  true };
    samsa_req_t   *req = f->req;
    fetch_part_t  *p;
    int32_t        throttle_ms;
    size_t         i;

    if (read) {
        fetch_read(f, true);
    }
    for (i = 0; i < f->nparts; i++) {
        p = &f->parts[i];
        p->pd->AbortedTransactions_cnt = -1;
        if (f->committed && p->plog != NULL && p->pd->ErrorCode == 0) {
            fetch_aborted(f, p);
        }
        if (p->pd->ErrorCode != 0) {           /* sends no data */
            samsa_plog_region_release(&p->region);
        }
        if (p->region.len > 0) {
            p->file = (samsa_file_region_t) {
                .fd = p->region.fd, .offset = p->region.pos,
                .len = (int64_t) p->region.len };
            p->pd->Records = (samsa_records_t) { SAMSA_SLICE_NULL, &p->file };
        } else {
            p->pd->Records = fetch_records_empty();
        }
    }
    fetch_hold_regions(f);
    throttle_ms = fetch_quota(f->b, req, f->m);
    if (throttle_ms > 0) {
        fetch_unhold_regions(f);
        fetch_throttled(f->m);
    }
    for (i = 0; i < f->nparts; i++) {
        p = &f->parts[i];
        if (throttle_ms == 0 && p->region.len > 0) {
            samsa_plog_count_bytes_out(p->plog, (int64_t) p->region.len);
        }
    }
    /* before the answer goes: f->parts lives in the request's arena,
     * which the network thread frees once the answer is written (the
     * response holds the segments of its regions) */
    for (i = 0; i < f->nparts; i++) {
        p = &f->parts[i];
        samsa_plog_region_release(&p->region);
        samsa_plog_unref(p->plog);
        p->plog = NULL;
    }
    f->req = NULL;
    samsa_apis_send_opts(f->b, req, f->m, &opts);
}

/* ---- the delayed fetch ------------------------------------------------ */

static bool
fetch_try_complete(samsa_delayed_op_t *op)
{
    fetch_op_t  *f = (fetch_op_t *) op;

    if (fetch_read(f, false) >= f->min_bytes || f->has_error) {
        return samsa_delayed_op_force_complete(op);
    }
    return false;
}

static void
fetch_on_complete(samsa_delayed_op_t *op)
{
    fetch_answer((fetch_op_t *) op, true);
}

static void
fetch_free(samsa_delayed_op_t *op)
{
    samsa_free(op);
}

static const samsa_delayed_op_ops_t  fetch_ops = {
    .try_complete = fetch_try_complete,
    .on_complete = fetch_on_complete,
    .on_expire = NULL,
    .free = fetch_free,
};

static void
fetch_delay(samsa_broker_t *b, fetch_op_t *f, int32_t max_wait_ms)
{
    const char  **keys = samsa_calloc(f->nparts + 1, sizeof(*keys));
    size_t        i, n = 0;

    for (i = 0; i < f->nparts; i++) {
        if (f->parts[i].plog != NULL) {
            keys[n++] = f->parts[i].key;
        }
    }
    samsa_delayed_op_init(&f->op, &fetch_ops, max_wait_ms, NULL);
    samsa_req_mark_local_done(f->req);
    samsa_purgatory_try_complete_else_watch(b->fetch, &f->op, keys, n);
    samsa_free(keys);
    samsa_delayed_op_unref(&f->op);
}

/* ---- the handler -------------------------------------------------------- */

static void
fetch_session_error(samsa_broker_t *b, samsa_req_t *req,
                    samsa_FetchResponse_t *m)
{
    m->ErrorCode = SAMSA_ERR_FETCH_SESSION_ID_NOT_FOUND;
    m->Responses_cnt = 0;
    samsa_apis_send(b, req, m);
}

/* Kafka's fetchMaxBytes: the request's MaxBytes, at most the broker's
 * fetch.max.bytes and what the client's consumer_byte_rate allows in one
 * quota span (getMaxValueInQuotaWindow; consumers are never followers
 * here); MinBytes at most that.  The first batch still goes out whole. */
static void
fetch_limits(samsa_broker_t *b, fetch_op_t *f, const samsa_FetchRequest_t *rq)
{
    int64_t  max = rq->MaxBytes > 0 ? rq->MaxBytes : 0;
    int64_t  quota_max;

    if (max > b->fetch_max_bytes) {
        max = b->fetch_max_bytes;
    }
    quota_max = samsa_quota_max_in_window(b->quota, SAMSA_QUOTA_FETCH,
                                          samsa_quota_user(f->req->principal),
                                          f->req->hdr.ClientId);
    if (max > quota_max) {
        max = quota_max;
    }
    f->max_bytes = (int32_t) max;
    f->min_bytes = rq->MinBytes < f->max_bytes ? rq->MinBytes : f->max_bytes;
}

void
samsa_h_Fetch(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_FetchRequest_t  *rq = body;       /* in req's arena: a delayed
                                               fetch keeps pointing at it */
    fetch_op_t            *f;

    f = samsa_calloc(1, sizeof(*f));
    f->b = apis->broker;
    f->req = req;
    f->m = samsa_arena_calloc(&req->arena, 1, sizeof(*f->m));
    samsa_FetchResponse_init(f->m);
    f->m->SessionId = 0;
    if (rq->SessionId != 0) {
        fetch_session_error(apis->broker, req, f->m);
        samsa_free(f);
        return;
    }
    fetch_limits(apis->broker, f, rq);
    f->committed = rq->IsolationLevel == ISOLATION_READ_COMMITTED;
    f->replica_id = req->hdr.ApiVersion >= 15
                        ? (rq->ReplicaState_set ? rq->ReplicaState.ReplicaId
                                                : -1)
                        : rq->ReplicaId;
    f->rack_id = req->hdr.ApiVersion >= 11 ? rq->RackId : SAMSA_SLICE_NULL;
    fetch_resolve(apis, f, rq);
    if (rq->MaxWaitMs <= 0 || f->has_error) {
        fetch_answer(f, true);
        samsa_free(f);
        return;
    }
    /* read once, keeping what was found: answered at once when it is
     * enough (no second read of the same batch headers), else let go */
    if (fetch_read(f, true) >= f->min_bytes || f->has_error) {
        fetch_answer(f, false);
        samsa_free(f);
        return;
    }
    fetch_release_regions(f);
    fetch_delay(apis->broker, f, rq->MaxWaitMs);
}
