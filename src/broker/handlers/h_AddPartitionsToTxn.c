/*
 * broker/handlers/h_AddPartitionsToTxn.c - AddPartitionsToTxn (key 24), v0-v3 (the
 * client versions; v4+ batch transactions for broker-to-broker
 * verification, which one node does not need).  Each partition gets the
 * coordinator's answer; PRODUCER_FENCED is INVALID_PRODUCER_EPOCH before
 * v2.
 * Threads: handler.
 */
#include "broker/api_table.h"

#include "broker/txn/txn.h"
#include "net/server/reqchan.h"
#include "proto/errmap.h"
#include "proto/gen/AddPartitionsToTxn.h"
#include "proto/wr.h"

static size_t
addparts_count(const samsa_AddPartitionsToTxnRequest_t *rq)
{
    size_t   n = 0;
    int32_t  i;

    for (i = 0; i < rq->V3AndBelowTopics_cnt; i++) {
        n += rq->V3AndBelowTopics[i].Partitions_cnt > 0
                 ? (size_t) rq->V3AndBelowTopics[i].Partitions_cnt : 0;
    }
    return n;
}

void
samsa_h_AddPartitionsToTxn(samsa_apis_t *apis, samsa_req_t *req)
{
    samsa_AddPartitionsToTxnRequest_t       rq;
    samsa_AddPartitionsToTxnResponse_t      m;
    samsa_AddPartitionsToTxnTopicResult_t  *tr;
    const samsa_AddPartitionsToTxnTopic_t  *rt;
    samsa_txn_tp_t                         *tps;
    int16_t                                 v = req->hdr.ApiVersion;
    samsa_err_t                             err;
    size_t                                  n, k = 0;
    int32_t                                 i, j;

    samsa_AddPartitionsToTxnRequest_init(&rq);
    if (samsa_AddPartitionsToTxnRequest_decode(&req->body, v, &req->arena,
                                               &rq)
        != SAMSA_ERR_NONE) {
        samsa_apis_close(req, "malformed request body");
        return;
    }
    n = addparts_count(&rq);
    tps = samsa_arena_calloc(&req->arena, n + 1, sizeof(*tps));
    for (i = 0; i < rq.V3AndBelowTopics_cnt; i++) {
        rt = &rq.V3AndBelowTopics[i];
        for (j = 0; j < rt->Partitions_cnt; j++, k++) {
            tps[k].topic = rt->Name;
            tps[k].partition = rt->Partitions[j];
        }
    }
    samsa_txn_add_partitions(apis->broker->txn, rq.V3AndBelowTransactionalId,
                             rq.V3AndBelowProducerId,
                             rq.V3AndBelowProducerEpoch, tps, n);
    samsa_AddPartitionsToTxnResponse_init(&m);
    m.ResultsByTopicV3AndBelow_cnt = rq.V3AndBelowTopics_cnt > 0
                                         ? rq.V3AndBelowTopics_cnt : 0;
    m.ResultsByTopicV3AndBelow = samsa_arena_calloc(
        &req->arena, (size_t) m.ResultsByTopicV3AndBelow_cnt + 1,
        sizeof(*m.ResultsByTopicV3AndBelow));
    k = 0;
    for (i = 0; i < m.ResultsByTopicV3AndBelow_cnt; i++) {
        rt = &rq.V3AndBelowTopics[i];
        tr = &m.ResultsByTopicV3AndBelow[i];
        samsa_AddPartitionsToTxnTopicResult_init(tr);
        tr->Name = rt->Name;
        tr->ResultsByPartition_cnt = rt->Partitions_cnt > 0
                                         ? rt->Partitions_cnt : 0;
        tr->ResultsByPartition = samsa_arena_calloc(
            &req->arena, (size_t) tr->ResultsByPartition_cnt + 1,
            sizeof(*tr->ResultsByPartition));
        for (j = 0; j < tr->ResultsByPartition_cnt; j++, k++) {
            err = tps[k].error;
            if (err == SAMSA_ERR_PRODUCER_FENCED && v < 2) {
                err = SAMSA_ERR_INVALID_PRODUCER_EPOCH;
            }
            tr->ResultsByPartition[j].PartitionIndex = tps[k].partition;
            tr->ResultsByPartition[j].PartitionErrorCode = samsa_err_wire(err);
        }
    }
    samsa_apis_send_opts(apis->broker, req, &m, &samsa_apis_uncounted);
}
