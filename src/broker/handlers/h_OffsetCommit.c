/*
 * broker/handlers/h_OffsetCommit.c - OffsetCommit (key 8), v0-v9 (v0 is answered
 * as Kafka 4 does for the ZooKeeper-era commit: like v1 with generation
 * -1).  Every partition is checked (UNKNOWN_TOPIC_OR_PARTITION,
 * OFFSET_METADATA_TOO_LARGE), then the group coordinator checks the
 * member and generation and writes the offsets to __consumer_offsets.
 * Threads: handler.
 */
#include "broker/api_table.h"

#include <stddef.h>
#include <string.h>

#include "broker/group/grp.h"
#include "broker/handlers/commitoffs.h"
#include "broker/handlers/tpresp.h"
#include "meta/acl.h"
#include "net/server/reqchan.h"
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

/* v1 alone carries CommitTimestamp */
static const samsa_commitoffs_rq_layout_t  rq_part_layout =
    SAMSA_COMMITOFFS_RQ_LAYOUT(samsa_OffsetCommitRequestPartition_t,
                               SAMSA_COMMITOFFS_NO_TIMESTAMP);
static const samsa_commitoffs_rq_layout_t  rq_part_layout_v1 =
    SAMSA_COMMITOFFS_RQ_LAYOUT(samsa_OffsetCommitRequestPartition_t,
                               offsetof(samsa_OffsetCommitRequestPartition_t,
                                        CommitTimestamp));
static const samsa_commitoffs_out_layout_t  out_part_layout =
    SAMSA_COMMITOFFS_OUT_LAYOUT(samsa_OffsetCommitResponsePartition_t);

void
samsa_h_OffsetCommit(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_OffsetCommitRequest_t   *rq = body;
    samsa_OffsetCommitResponse_t   m;
    samsa_grp_commit_req_t         cr;
    samsa_grp_offset_t            *offs, *ok;
    int16_t                        v = req->hdr.ApiVersion;
    size_t                         n, nok;

    offs = samsa_commitoffs_from_request(
        &req->arena, &rq_layout, rq->Topics, rq->Topics_cnt,
        v == 1 ? &rq_part_layout_v1 : &rq_part_layout, &n);
    memset(&cr, 0, sizeof(cr));
    cr.group_id = rq->GroupId;
    cr.generation = v >= 1 ? rq->GenerationIdOrMemberEpoch : -1;
    cr.member_id = rq->MemberId;
    cr.instance_id = rq->GroupInstanceId;
    cr.retention_ms = v >= 2 && v <= 4 ? rq->RetentionTimeMs : -1;
    if (!samsa_apis_allowed(apis, req, NULL, SAMSA_ACL_OP_READ,
                            SAMSA_ACL_RESOURCE_GROUP, rq->GroupId)) {
        samsa_commitoffs_fail(offs, n, SAMSA_ERR_GROUP_AUTHORIZATION_FAILED);
    } else {
        ok = samsa_commitoffs_authorize(apis, req, offs, n, &nok);
        if (nok > 0) {
            samsa_grp_commit(apis->broker->grp, &cr, ok, nok);
        }
        samsa_commitoffs_merge(offs, n, ok, nok);
    }
    samsa_OffsetCommitResponse_init(&m);
    m.Topics = samsa_commitoffs_respond(&req->arena, &rq_layout, rq->Topics,
                                        rq->Topics_cnt, &out_layout,
                                        &out_part_layout, &m.Topics_cnt,
                                        offs);
    samsa_apis_send(apis->broker, req, &m);
}
