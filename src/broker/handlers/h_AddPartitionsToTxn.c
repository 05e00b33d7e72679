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
#include "broker/handlers/tpresp.h"
#include "meta/acl.h"
#include "net/server/reqchan.h"
#include "proto/errmap.h"
#include "proto/gen/AddPartitionsToTxn.h"
#include "proto/wr.h"

static const samsa_tp_layout_t  rq_layout = SAMSA_TP_LAYOUT(
    samsa_AddPartitionsToTxnTopic_t, Name, Partitions, int32_t, NULL, NULL);
static const samsa_tp_layout_t  out_layout = SAMSA_TP_LAYOUT(
    samsa_AddPartitionsToTxnTopicResult_t, Name, ResultsByPartition,
    samsa_AddPartitionsToTxnPartitionResult_t,
    samsa_AddPartitionsToTxnTopicResult_init_any, NULL);

typedef struct addparts_ctx {
    const samsa_txn_tp_t  *tps;
    int16_t                version;
} addparts_ctx_t;

/* samsa_tp_fill_fn: the k-th partition's result; PRODUCER_FENCED is
 * INVALID_PRODUCER_EPOCH before v2. */
static void
addparts_fill(void *ctx, samsa_slice_t name, size_t k, const void *rq,
              void *out)
{
    const addparts_ctx_t                       *c = ctx;
    samsa_AddPartitionsToTxnPartitionResult_t  *pr = out;

    (void) name;
    (void) rq;
    pr->PartitionIndex = c->tps[k].partition;
    pr->PartitionErrorCode = samsa_err_wire(
        samsa_apis_txn_error(c->tps[k].error, c->version, 2));
}

/* Kafka's checks (v3 and below, the clients' versions): WRITE on the
 * transactional id, else every partition fails with
 * TRANSACTIONAL_ID_AUTHORIZATION_FAILED; WRITE on each topic, else its
 * partitions fail with TOPIC_AUTHORIZATION_FAILED and the others with
 * OPERATION_NOT_ATTEMPTED.  Returns whether all passed. */
static bool
addparts_authorize(samsa_apis_t *apis, samsa_req_t *req,
                   samsa_slice_t txn_id, samsa_txn_tp_t *tps, size_t n)
{
    bool    denied = false;
    size_t  k;

    if (!samsa_apis_allowed(apis, req, NULL, SAMSA_ACL_OP_WRITE,
                            SAMSA_ACL_RESOURCE_TRANSACTIONAL_ID, txn_id)) {
        for (k = 0; k < n; k++) {
            tps[k].error = SAMSA_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
        }
        return false;
    }
    for (k = 0; k < n; k++) {
        if (!samsa_apis_allowed(apis, req, NULL, SAMSA_ACL_OP_WRITE,
                                SAMSA_ACL_RESOURCE_TOPIC, tps[k].topic)) {
            tps[k].error = SAMSA_ERR_TOPIC_AUTHORIZATION_FAILED;
            denied = true;
        }
    }
    for (k = 0; k < n && denied; k++) {
        if (tps[k].error == SAMSA_ERR_NONE) {
            tps[k].error = SAMSA_ERR_OPERATION_NOT_ATTEMPTED;
        }
    }
    return !denied;
}

void
samsa_h_AddPartitionsToTxn(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_AddPartitionsToTxnRequest_t      *rq = body;
    samsa_AddPartitionsToTxnResponse_t      m;
    const samsa_AddPartitionsToTxnTopic_t  *rt;
    samsa_txn_tp_t                         *tps;
    int16_t                                 v = req->hdr.ApiVersion;
    addparts_ctx_t                          c;
    size_t                                  n, k = 0;
    int32_t                                 i, j;

    n = samsa_tp_count(&rq_layout, rq->V3AndBelowTopics,
                       rq->V3AndBelowTopics_cnt);
    tps = samsa_arena_calloc(&req->arena, n + 1, sizeof(*tps));
    for (i = 0; i < rq->V3AndBelowTopics_cnt; i++) {
        rt = &rq->V3AndBelowTopics[i];
        for (j = 0; j < rt->Partitions_cnt; j++, k++) {
            tps[k].topic = rt->Name;
            tps[k].partition = rt->Partitions[j];
        }
    }
    if (addparts_authorize(apis, req, rq->V3AndBelowTransactionalId, tps,
                           n)) {
        samsa_txn_add_partitions(apis->broker->txn,
                                 rq->V3AndBelowTransactionalId,
                                 rq->V3AndBelowProducerId,
                                 rq->V3AndBelowProducerEpoch, tps, n);
    }
    samsa_AddPartitionsToTxnResponse_init(&m);
    c = (addparts_ctx_t) { tps, v };
    m.ResultsByTopicV3AndBelow = samsa_tp_respond(
        &req->arena, &rq_layout, rq->V3AndBelowTopics, rq->V3AndBelowTopics_cnt,
        &out_layout, &m.ResultsByTopicV3AndBelow_cnt, addparts_fill, &c);
    samsa_apis_send_opts(apis->broker, req, &m, &samsa_apis_uncounted);
}
