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
#include "net/server/reqchan.h"
#include "proto/errmap.h"
#include "proto/gen/ListOffsets.h"
#include "proto/wr.h"

#define TS_LATEST_TIERED (-5)

static void
listoffsets_one(samsa_broker_t *b, const samsa_image_t *img,
                samsa_slice_t name, bool committed,
                const samsa_ListOffsetsPartition_t *rp,
                samsa_ListOffsetsPartitionResponse_t *pr)
{
    const samsa_image_topic_t  *t;
    samsa_plog_ts_offset_t      out;
    samsa_plog_t               *plog;
    samsa_err_t                 err;
    int64_t                     lso;
    int32_t                     epoch;

    pr->PartitionIndex = rp->PartitionIndex;
    plog = samsa_broker_plog_find(b, img, name, rp->PartitionIndex, &t);
    if (plog == NULL) {
        pr->ErrorCode = SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION;
        return;
    }
    epoch = t->partitions[rp->PartitionIndex].leader_epoch;
    if (rp->CurrentLeaderEpoch >= 0 && rp->CurrentLeaderEpoch != epoch) {
        pr->ErrorCode = rp->CurrentLeaderEpoch < epoch
                            ? SAMSA_ERR_FENCED_LEADER_EPOCH
                            : SAMSA_ERR_UNKNOWN_LEADER_EPOCH;
        samsa_plog_unref(plog);
        return;
    }
    if (rp->Timestamp == TS_LATEST_TIERED) {
        samsa_plog_unref(plog);         /* nothing tiered: -1, -1 */
        return;
    }
    err = samsa_plog_offset_for_time(plog, rp->Timestamp, &out);
    if (err == SAMSA_ERR_NONE && committed) {
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

void
samsa_h_ListOffsets(samsa_apis_t *apis, samsa_req_t *req)
{
    samsa_ListOffsetsRequest_t             rq;
    samsa_ListOffsetsResponse_t            m;
    samsa_ListOffsetsTopicResponse_t      *tr;
    samsa_image_t                         *img;
    int32_t                                i, j;

    samsa_ListOffsetsRequest_init(&rq);
    if (samsa_ListOffsetsRequest_decode(&req->body, req->hdr.ApiVersion,
                                        &req->arena, &rq)
        != SAMSA_ERR_NONE) {
        samsa_apis_close(req, "malformed request body");
        return;
    }
    samsa_ListOffsetsResponse_init(&m);
    img = samsa_meta_image_get(apis->broker->meta);
    m.Topics_cnt = rq.Topics_cnt > 0 ? rq.Topics_cnt : 0;
    m.Topics = samsa_arena_calloc(&req->arena, (size_t) m.Topics_cnt,
                                  sizeof(*m.Topics));
    for (i = 0; i < m.Topics_cnt; i++) {
        tr = &m.Topics[i];
        samsa_ListOffsetsTopicResponse_init(tr);
        tr->Name = rq.Topics[i].Name;
        tr->Partitions_cnt = rq.Topics[i].Partitions_cnt > 0
                                 ? rq.Topics[i].Partitions_cnt : 0;
        tr->Partitions = samsa_arena_calloc(&req->arena,
                                            (size_t) tr->Partitions_cnt,
                                            sizeof(*tr->Partitions));
        for (j = 0; j < tr->Partitions_cnt; j++) {
            samsa_ListOffsetsPartitionResponse_init(&tr->Partitions[j]);
            listoffsets_one(apis->broker, img, tr->Name,
                            rq.IsolationLevel == 1,
                            &rq.Topics[i].Partitions[j], &tr->Partitions[j]);
        }
    }
    samsa_image_put(img);
    samsa_apis_send(apis->broker, req, &m);
}
