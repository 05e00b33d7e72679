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
#include "net/server/reqchan.h"
#include "proto/errmap.h"
#include "proto/gen/OffsetCommit.h"
#include "proto/wr.h"

static size_t
offsetcommit_count(const samsa_OffsetCommitRequest_t *rq)
{
    size_t   n = 0;
    int32_t  i;

    for (i = 0; i < rq->Topics_cnt; i++) {
        n += rq->Topics[i].Partitions_cnt > 0
                 ? (size_t) rq->Topics[i].Partitions_cnt : 0;
    }
    return n;
}

void
samsa_h_OffsetCommit(samsa_apis_t *apis, samsa_req_t *req)
{
    samsa_OffsetCommitRequest_t             rq;
    samsa_OffsetCommitResponse_t            m;
    samsa_OffsetCommitResponseTopic_t      *tr;
    const samsa_OffsetCommitRequestPartition_t *rp;
    samsa_grp_commit_req_t                  cr;
    samsa_grp_offset_t                     *offs;
    int16_t                                 v = req->hdr.ApiVersion;
    size_t                                  n, k = 0;
    int32_t                                 i, j;

    samsa_OffsetCommitRequest_init(&rq);
    if (samsa_OffsetCommitRequest_decode(&req->body, v, &req->arena, &rq)
        != SAMSA_ERR_NONE) {
        samsa_apis_close(req, "malformed request body");
        return;
    }
    n = offsetcommit_count(&rq);
    offs = samsa_arena_calloc(&req->arena, n + 1, sizeof(*offs));
    for (i = 0; i < rq.Topics_cnt; i++) {
        for (j = 0; j < rq.Topics[i].Partitions_cnt; j++) {
            rp = &rq.Topics[i].Partitions[j];
            offs[k].topic = rq.Topics[i].Name;
            offs[k].partition = rp->PartitionIndex;
            offs[k].offset = rp->CommittedOffset;
            offs[k].leader_epoch = rp->CommittedLeaderEpoch;
            offs[k].metadata = rp->CommittedMetadata;
            offs[k].commit_timestamp_ms = v == 1 ? rp->CommitTimestamp : -1;
            k++;
        }
    }
    memset(&cr, 0, sizeof(cr));
    cr.group_id = rq.GroupId;
    cr.generation = v >= 1 ? rq.GenerationIdOrMemberEpoch : -1;
    cr.member_id = rq.MemberId;
    cr.instance_id = rq.GroupInstanceId;
    cr.retention_ms = v >= 2 && v <= 4 ? rq.RetentionTimeMs : -1;
    samsa_grp_commit(apis->broker->grp, &cr, offs, n);
    samsa_OffsetCommitResponse_init(&m);
    m.Topics_cnt = rq.Topics_cnt > 0 ? rq.Topics_cnt : 0;
    m.Topics = samsa_arena_calloc(&req->arena, (size_t) m.Topics_cnt + 1,
                                  sizeof(*m.Topics));
    k = 0;
    for (i = 0; i < m.Topics_cnt; i++) {
        tr = &m.Topics[i];
        samsa_OffsetCommitResponseTopic_init(tr);
        tr->Name = rq.Topics[i].Name;
        tr->Partitions_cnt = rq.Topics[i].Partitions_cnt > 0
                                 ? rq.Topics[i].Partitions_cnt : 0;
        tr->Partitions = samsa_arena_calloc(&req->arena,
                                            (size_t) tr->Partitions_cnt + 1,
                                            sizeof(*tr->Partitions));
        for (j = 0; j < tr->Partitions_cnt; j++, k++) {
            tr->Partitions[j].PartitionIndex = offs[k].partition;
            tr->Partitions[j].ErrorCode = samsa_err_wire(offs[k].error);
        }
    }
    samsa_apis_send(apis->broker, req, &m);
}
