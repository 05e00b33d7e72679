/*
 * broker/handlers/h_ListOffsets.c - ListOffsets (key 2), v1 on: per partition the
 * offset for a timestamp: -2 earliest (log start), -1 latest (high
 * watermark, or the last stable offset for read_committed), -3 the record with the largest timestamp (KIP-734), -4
 * earliest local (KIP-405; no tiering: earliest), -5 latest tiered (none:
 * -1), else the first offset whose timestamp is at or after it (time
 * index).  v0 (MaxNumOffsets) is gone in Kafka 4 and not advertised.
 * Threads: handler.
 */
#include "broker/api_table.h"

#include "broker/broker.h"
#include "broker/route.h"
#include "broker/handlers/tpresp.h"
#include "meta/acl.h"
#include "net/server/reqchan.h"
#include "proto/errmap.h"
#include "proto/gen/ListOffsets.h"
#include "proto/wr.h"

#define TS_LATEST_TIERED (-5)

/* samsa_tp_fill_fn (ctx: samsa_tp_image_t, its arg a bool: read_committed) */
static void
listoffsets_one(void *ctx, samsa_slice_t name, size_t k, const void *rq,
                void *resp)
{
    const samsa_tp_image_t                *c = ctx;
    const bool                            *committed = c->arg;
    const samsa_ListOffsetsPartition_t    *rp = rq;
    samsa_ListOffsetsPartitionResponse_t  *pr = resp;
    const samsa_image_topic_t             *t;
    samsa_plog_ts_offset_t                 out;
    samsa_plog_t                          *plog;
    samsa_err_t                            err;
    int64_t                                lso;
    int32_t                                epoch;

    (void) k;
    pr->PartitionIndex = rp->PartitionIndex;
    if (!samsa_tp_allowed(c, name)) {
        pr->ErrorCode = SAMSA_ERR_TOPIC_AUTHORIZATION_FAILED;
        return;
    }
    err = samsa_broker_plog_find_leader(c->b, c->img, name,
                                        rp->PartitionIndex, &t, &plog);
    if (err != SAMSA_ERR_NONE) {
        pr->ErrorCode = err;
        return;
    }
    epoch = t->partitions[rp->PartitionIndex].leader_epoch;
    pr->ErrorCode = samsa_route_check_leader_epoch(rp->CurrentLeaderEpoch,
                                                   epoch);
    if (pr->ErrorCode != SAMSA_ERR_NONE) {
        samsa_plog_unref(plog);
        return;
    }
    if (rp->Timestamp == TS_LATEST_TIERED) {
        samsa_plog_unref(plog);         /* nothing tiered: -1, -1 */
        return;
    }
    err = samsa_plog_offset_for_time(plog, rp->Timestamp, &out);
    if (err == SAMSA_ERR_NONE && *committed) {
        /* Kafka's lastFetchableOffset for read_committed: the LSO */
        lso = samsa_plog_last_stable_offset(plog);
        if (rp->Timestamp == SAMSA_PLOG_TS_LATEST) {
            out.offset = lso;
        } else if (rp->Timestamp != SAMSA_PLOG_TS_EARLIEST
                   && rp->Timestamp != SAMSA_PLOG_TS_EARLIEST_LOCAL
                   && out.offset >= lso) {
            out = (samsa_plog_ts_offset_t) { -1, -1, -1 };
        }
    }
    samsa_plog_unref(plog);
    if (err != SAMSA_ERR_NONE) {
        pr->ErrorCode = samsa_err_wire(err);
        return;
    }
    pr->Timestamp = out.timestamp;
    pr->Offset = out.offset;
    /* no match: -1 everywhere, as Kafka answers */
    pr->LeaderEpoch = out.offset < 0 ? -1
                      : out.leader_epoch >= 0 ? out.leader_epoch : epoch;
}

static const samsa_tp_layout_t  rq_layout = SAMSA_TP_LAYOUT(
    samsa_ListOffsetsTopic_t, Name, Partitions,
    samsa_ListOffsetsPartition_t, NULL, NULL);
static const samsa_tp_layout_t  out_layout = SAMSA_TP_LAYOUT(
    samsa_ListOffsetsTopicResponse_t, Name, Partitions,
    samsa_ListOffsetsPartitionResponse_t,
    samsa_ListOffsetsTopicResponse_init_any,
    samsa_ListOffsetsPartitionResponse_init_any);

void
samsa_h_ListOffsets(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_ListOffsetsRequest_t   *rq = body;
    samsa_ListOffsetsResponse_t   m;
    bool                          committed = rq->IsolationLevel == 1;

    samsa_ListOffsetsResponse_init(&m);
    m.Topics = samsa_tp_respond_checked(apis, req, SAMSA_ACL_OP_DESCRIBE,
                                        &rq_layout, rq->Topics, rq->Topics_cnt,
                                        &out_layout, &m.Topics_cnt,
                                        listoffsets_one, &committed);
    samsa_apis_send(apis->broker, req, &m);
}
