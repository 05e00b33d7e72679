/*
 * broker/handlers/h_TxnOffsetCommit.c - TxnOffsetCommit (key 28), v0-v4: a group's
 * offsets committed inside a transaction.  The transaction must hold the
 * group's partition of __consumer_offsets (AddOffsetsToTxn first; the
 * KIP-890 check, INVALID_TXN_STATE otherwise, INVALID_PRODUCER_EPOCH for
 * a fenced producer); then the group coordinator checks the member
 * (KIP-447, v3+) and writes the offsets, which stay pending until the
 * commit marker.
 * Threads: handler.
 */
#include "broker/api_table.h"

#include <string.h>

#include "broker/group/grp.h"
#include "broker/txn/txn.h"
#include "broker/handlers/commitoffs.h"
#include "broker/handlers/tpresp.h"
#include "meta/acl.h"
#include "net/server/reqchan.h"
#include "proto/gen/TxnOffsetCommit.h"
#include "proto/wr.h"

static const samsa_tp_layout_t  rq_layout = SAMSA_TP_LAYOUT(
    samsa_TxnOffsetCommitRequestTopic_t, Name, Partitions,
    samsa_TxnOffsetCommitRequestPartition_t, NULL, NULL);
static const samsa_tp_layout_t  out_layout = SAMSA_TP_LAYOUT(
    samsa_TxnOffsetCommitResponseTopic_t, Name, Partitions,
    samsa_TxnOffsetCommitResponsePartition_t,
    samsa_TxnOffsetCommitResponseTopic_init_any,
    samsa_TxnOffsetCommitResponsePartition_init_any);

static const samsa_commitoffs_rq_layout_t  rq_part_layout =
    SAMSA_COMMITOFFS_RQ_LAYOUT(samsa_TxnOffsetCommitRequestPartition_t,
                               SAMSA_COMMITOFFS_NO_TIMESTAMP);
static const samsa_commitoffs_out_layout_t  out_part_layout =
    SAMSA_COMMITOFFS_OUT_LAYOUT(samsa_TxnOffsetCommitResponsePartition_t);

static void
txnoffsetcommit_reply(samsa_broker_t *b, samsa_req_t *req,
                      const samsa_TxnOffsetCommitRequest_t *rq,
                      const samsa_grp_offset_t *offs)
{
    samsa_TxnOffsetCommitResponse_t  m;

    samsa_TxnOffsetCommitResponse_init(&m);
    m.Topics = samsa_commitoffs_respond(&req->arena, &rq_layout, rq->Topics,
                                        rq->Topics_cnt, &out_layout,
                                        &out_part_layout, &m.Topics_cnt,
                                        offs);
    samsa_apis_send_opts(b, req, &m, &samsa_apis_uncounted);
}

void
samsa_h_TxnOffsetCommit(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_TxnOffsetCommitRequest_t *rq = body;
    samsa_grp_txn_commit_req_t      cr;
    samsa_grp_offset_t             *offs, *ok;
    samsa_err_t                     err;
    size_t                          n, i, nok;

    offs = samsa_commitoffs_from_request(&req->arena, &rq_layout, rq->Topics,
                                         rq->Topics_cnt, &rq_part_layout,
                                         &n);
    err = rq->TransactionalId.len == 0 ? SAMSA_ERR_INVALID_REQUEST
                                      : rq->GroupId.len == 0
                                            ? SAMSA_ERR_INVALID_GROUP_ID
                                            : SAMSA_ERR_NONE;
    /* Kafka: WRITE on the transactional id, then READ on the group */
    if (err == SAMSA_ERR_NONE
        && !samsa_apis_allowed(apis, req, NULL, SAMSA_ACL_OP_WRITE,
                               SAMSA_ACL_RESOURCE_TRANSACTIONAL_ID,
                               rq->TransactionalId)) {
        err = SAMSA_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
    } else if (err == SAMSA_ERR_NONE
               && !samsa_apis_allowed(apis, req, NULL, SAMSA_ACL_OP_READ,
                                      SAMSA_ACL_RESOURCE_GROUP,
                                      rq->GroupId)) {
        err = SAMSA_ERR_GROUP_AUTHORIZATION_FAILED;
    }
    if (err == SAMSA_ERR_NONE) {
        err = samsa_txn_partition_in_txn(
            apis->broker->txn, rq->TransactionalId, rq->ProducerId,
            rq->ProducerEpoch, samsa_slice_cstr(SAMSA_GRP_OFFSETS_TOPIC),
            samsa_grpcoord_partition_for(apis->broker->grp, rq->GroupId));
    }
    if (err != SAMSA_ERR_NONE) {
        for (i = 0; i < n; i++) {
            offs[i].error = err;
        }
    } else {
        memset(&cr, 0, sizeof(cr));
        cr.group_id = rq->GroupId;
        cr.generation = rq->GenerationId;
        cr.member_id = rq->MemberId;
        cr.instance_id = rq->GroupInstanceId;
        cr.producer_id = rq->ProducerId;
        cr.producer_epoch = rq->ProducerEpoch;
        ok = samsa_commitoffs_authorize(apis, req, offs, n, &nok);
        if (nok > 0) {
            samsa_grp_txn_commit(apis->broker->grp, &cr, ok, nok);
        }
        samsa_commitoffs_merge(offs, n, ok, nok);
    }
    txnoffsetcommit_reply(apis->broker, req, rq, offs);
}
