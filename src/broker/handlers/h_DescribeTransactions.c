/*
 * broker/handlers/h_DescribeTransactions.c - DescribeTransactions (key 65), v0
 * (KIP-664): state, producer id and epoch, timeout, start time and
 * partitions of each transactional id; TRANSACTIONAL_ID_NOT_FOUND for
 * unknown ones.
 * Threads: handler.
 */
#include "broker/api_table.h"

#include "broker/txn/txn.h"
#include "meta/acl.h"
#include "net/server/reqchan.h"
#include "proto/errmap.h"
#include "proto/gen/DescribeTransactions.h"
#include "proto/wr.h"

static void
describetxn_one(samsa_apis_t *apis, samsa_req_t *req, samsa_slice_t id,
                samsa_DescribedTxn_t *out)
{
    samsa_txn_described_t  d;
    size_t                 i;

    samsa_DescribedTxn_init(out);
    if (!samsa_apis_allowed(apis, req, NULL, SAMSA_ACL_OP_DESCRIBE,
                            SAMSA_ACL_RESOURCE_TRANSACTIONAL_ID, id)) {
        out->ErrorCode = SAMSA_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
        out->TransactionalId = id;
        out->TransactionState = samsa_slice_cstr("");
        out->Topics_cnt = 0;
        return;
    }
    samsa_txn_describe(apis->broker->txn, id, &req->arena, &d);
    out->ErrorCode = samsa_err_wire(d.error);
    out->TransactionalId = id;
    if (d.error != SAMSA_ERR_NONE) {
        return;                 /* the rest at the schema's defaults (0,
                                   ""), as Kafka's coordinator leaves them */
    }
    out->TransactionState = samsa_slice_cstr(samsa_txn_state_name(d.state));
    out->TransactionTimeoutMs = d.timeout_ms;
    out->TransactionStartTimeMs = d.start_ms;
    out->ProducerId = d.producer_id;
    out->ProducerEpoch = d.epoch;
    out->Topics_cnt = (int32_t) d.ntopics;
    out->Topics = samsa_arena_calloc(&req->arena, d.ntopics + 1,
                                     sizeof(*out->Topics));
    for (i = 0; i < d.ntopics; i++) {
        samsa_DescribedTxnTopic_init(&out->Topics[i]);
        out->Topics[i].Topic = samsa_slice_cstr(d.topics[i].topic);
        out->Topics[i].Partitions = d.topics[i].partitions;
        out->Topics[i].Partitions_cnt = (int32_t) d.topics[i].npartitions;
    }
}

void
samsa_h_DescribeTransactions(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_DescribeTransactionsRequest_t  *rq = body;
    samsa_DescribeTransactionsResponse_t  m;
    int32_t                               i;

    samsa_DescribeTransactionsResponse_init(&m);
    m.TransactionStates = samsa_apis_resp_array(
        req, rq->TransactionalIds_cnt, sizeof(*m.TransactionStates),
        &m.TransactionStates_cnt);
    for (i = 0; i < m.TransactionStates_cnt; i++) {
        describetxn_one(apis, req, rq->TransactionalIds[i],
                        &m.TransactionStates[i]);
    }
    samsa_apis_send_opts(apis->broker, req, &m, &samsa_apis_uncounted);
}
