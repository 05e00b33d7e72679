/*
 * broker/handlers/h_OffsetForLeaderEpoch.c - OffsetForLeaderEpoch (key 23),
 * v2 on: per partition the end offset of a leader epoch (Kafka's
 * Partition.lastOffsetForLeaderEpoch, always from the leader): the
 * largest epoch <= LeaderEpoch and the offset where the next epoch starts,
 * the log end offset for the latest; (-1, -1) for an epoch newer than any
 * (samsa_epochs_end_offset).  CurrentLeaderEpoch fences as in ListOffsets
 * (-1: no check).  ReplicaId (-1 consumer, -2 debug, a follower's id) does
 * not change the answer: Kafka's lastOffsetForLeaderEpoch reads from the
 * leader for all of them.  v0-v1 are gone in Kafka 4 and not advertised.
 * Threads: handler.
 */
#include "broker/api_table.h"

#include "broker/broker.h"
#include "broker/route.h"
#include "broker/handlers/tpresp.h"
#include "meta/acl.h"
#include "net/server/reqchan.h"
#include "proto/gen/OffsetForLeaderEpoch.h"

/* samsa_tp_fill_fn (ctx: samsa_tp_image_t) */
static void
offsetforleaderepoch_one(void *ctx, samsa_slice_t name, size_t k,
                         const void *rq, void *resp)
{
    const samsa_tp_image_t                   *c = ctx;
    const samsa_OffsetForLeaderPartition_t   *rp = rq;
    samsa_OffsetForLeaderEpochEndOffset_t    *pr = resp;
    const samsa_image_topic_t                *t;
    samsa_plog_t                             *plog;
    samsa_err_t                               err;
    int32_t                                   epoch;

    (void) k;
    pr->Partition = rp->Partition;
    if (!samsa_tp_allowed(c, name)) {
        pr->ErrorCode = SAMSA_ERR_TOPIC_AUTHORIZATION_FAILED;
        return;
    }
    err = samsa_broker_plog_find_leader(c->b, c->img, name, rp->Partition,
                                        &t, &plog);
    if (err != SAMSA_ERR_NONE) {
        pr->ErrorCode = err;
        return;
    }
    epoch = t->partitions[rp->Partition].leader_epoch;
    pr->ErrorCode = samsa_route_check_leader_epoch(rp->CurrentLeaderEpoch,
                                                   epoch);
    if (pr->ErrorCode != SAMSA_ERR_NONE) {
        samsa_plog_unref(plog);
        return;
    }
    samsa_plog_end_offset_for_epoch(plog, rp->LeaderEpoch, epoch,
                                    &pr->LeaderEpoch, &pr->EndOffset);
    samsa_plog_unref(plog);
}

static const samsa_tp_layout_t  rq_layout = SAMSA_TP_LAYOUT(
    samsa_OffsetForLeaderTopic_t, Topic, Partitions,
    samsa_OffsetForLeaderPartition_t, NULL, NULL);
static const samsa_tp_layout_t  out_layout = SAMSA_TP_LAYOUT(
    samsa_OffsetForLeaderTopicResult_t, Topic, Partitions,
    samsa_OffsetForLeaderEpochEndOffset_t,
    samsa_OffsetForLeaderTopicResult_init_any,
    samsa_OffsetForLeaderEpochEndOffset_init_any);

void
samsa_h_OffsetForLeaderEpoch(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_OffsetForLeaderEpochRequest_t   *rq = body;
    samsa_OffsetForLeaderEpochResponse_t   m;

    samsa_OffsetForLeaderEpochResponse_init(&m);
    m.Topics = samsa_tp_respond_checked(apis, req, SAMSA_ACL_OP_DESCRIBE,
                                        &rq_layout, rq->Topics, rq->Topics_cnt,
                                        &out_layout, &m.Topics_cnt,
                                        offsetforleaderepoch_one, NULL);
    samsa_apis_send(apis->broker, req, &m);
}
