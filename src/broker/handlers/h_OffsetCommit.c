/*
 * broker/handlers/h_OffsetCommit.c - OffsetCommit (key 8), v0-v9 (v0 is answered
 * as Kafka 4 does for the ZooKeeper-era commit: like v1 with generation
 * -1).  Every partition is checked (UNKNOWN_TOPIC_OR_PARTITION,
 * OFFSET_METADATA_TOO_LARGE), then the group coordinator checks the
 * member and generation and writes the offsets to __consumer_offsets.
 * Threads: handler.
 */
#include "broker/api_table.h"

#include <string.h>

#include "broker/group/grp.h"
#include "broker/handlers/tpresp.h"
#include "net/server/reqchan.h"
#include "proto/errmap.h"
#include "proto/gen/OffsetCommit.h"
#include "proto/wr.h"

static const samsa_tp_layout_t  rq_layout = SAMSA_TP_LAYOUT(
    samsa_OffsetCommitRequestTopic_t, Name, Partitions,
    samsa_OffsetCommitRequestPartition_t, NULL, NULL);
static const samsa_tp_layout_t  out_layout = SAMSA_TP_LAYOUT(
    samsa_OffsetCommitResponseTopic_t, Name, Partitions,
    samsa_OffsetCommitResponsePartition_t,
    samsa_OffsetCommitResponseTopic_init_any,
    samsa_OffsetCommitResponsePartition_init_any);

/* samsa_tp_fill_fn: the k-th partition's commit result */
static void
offsetcommit_fill(void *ctx, samsa_slice_t name, size_t k, const void *rq,
                  void *out)
{
    const samsa_grp_offset_t               *offs = ctx;
    samsa_OffsetCommitResponsePartition_t  *pr = out;

    (void) name;
    (void) rq;
    pr->PartitionIndex = offs[k].partition;
    pr->ErrorCode = samsa_err_wire(offs[k].error);
}

void
samsa_h_OffsetCommit(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_OffsetCommitRequest_t            *rq = body;
    samsa_OffsetCommitResponse_t            m;
    const samsa_OffsetCommitRequestPartition_t *rp;
    samsa_grp_commit_req_t                  cr;
    samsa_grp_offset_t                     *offs;
    int16_t                                 v = req->hdr.ApiVersion;
    size_t                                  n, k = 0;
    int32_t                                 i, j;

    n = samsa_tp_count(&rq_layout, rq->Topics, rq->Topics_cnt);
    offs = samsa_arena_calloc(&req->arena, n + 1, sizeof(*offs));
    for (i = 0; i < rq->Topics_cnt; i++) {
        for (j = 0; j < rq->Topics[i].Partitions_cnt; j++) {
            rp = &rq->Topics[i].Partitions[j];
            offs[k].topic = rq->Topics[i].Name;
            offs[k].partition = rp->PartitionIndex;
            offs[k].offset = rp->CommittedOffset;
            offs[k].leader_epoch = rp->CommittedLeaderEpoch;
            offs[k].metadata = rp->CommittedMetadata;
            offs[k].commit_timestamp_ms = v == 1 ? rp->CommitTimestamp : -1;
            k++;
        }
    }
    memset(&cr, 0, sizeof(cr));
    cr.group_id = rq->GroupId;
    cr.generation = v >= 1 ? rq->GenerationIdOrMemberEpoch : -1;
    cr.member_id = rq->MemberId;
    cr.instance_id = rq->GroupInstanceId;
    cr.retention_ms = v >= 2 && v <= 4 ? rq->RetentionTimeMs : -1;
    samsa_grp_commit(apis->broker->grp, &cr, offs, n);
    samsa_OffsetCommitResponse_init(&m);
    m.Topics = samsa_tp_respond(&req->arena, &rq_layout, rq->Topics,
                                rq->Topics_cnt, &out_layout, &m.Topics_cnt,
                                offsetcommit_fill, offs);
    samsa_apis_send(apis->broker, req, &m);
}
