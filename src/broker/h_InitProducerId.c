/*
 * broker/h_InitProducerId.c - InitProducerId (key 22), v0-v5.  With a
 * transactional id the transaction coordinator answers (broker/txn.h:
 * fencing, aborting an open transaction, CONCURRENT_TRANSACTIONS while it
 * completes).  Without one the producer gets a fresh id from the same
 * producer-id blocks and epoch 0; the per-partition producer state that
 * checks its sequences is the pstate branch's (issue 5 item 1), which
 * replaces that branch of this handler.
 * PRODUCER_FENCED is answered as INVALID_PRODUCER_EPOCH before v4
 * (KIP-588).
 * Threads: handler.
 */
#include "broker/api_table.h"

#include "broker/txn.h"
#include "net/reqchan.h"
#include "proto/errmap.h"
#include "proto/gen/InitProducerId.h"
#include "proto/wr.h"

void
samsa_h_InitProducerId(samsa_apis_t *apis, samsa_req_t *req)
{
    samsa_InitProducerIdRequest_t   rq;
    samsa_InitProducerIdResponse_t  m;
    samsa_resp_t                   *resp;
    samsa_wr_t                      wr;
    samsa_err_t                     err;
    int64_t                         pid = -1;
    int16_t                         epoch = -1;
    int16_t                         v = req->hdr.ApiVersion;

    samsa_InitProducerIdRequest_init(&rq);
    if (samsa_InitProducerIdRequest_decode(&req->body, v, &req->arena, &rq)
        != SAMSA_ERR_NONE) {
        samsa_apis_close(req, "malformed request body");
        return;
    }
    if (samsa_slice_is_null(rq.TransactionalId)) {
        /* TODO(#5): the pstate branch's idempotent-producer path */
        err = samsa_txn_alloc_producer_id(apis->broker->txn, &pid);
        epoch = err == SAMSA_ERR_NONE ? 0 : -1;
    } else {
        err = samsa_txn_init_producer_id(apis->broker->txn, rq.TransactionalId,
                                         rq.TransactionTimeoutMs,
                                         v >= 3 ? rq.ProducerId : -1,
                                         v >= 3 ? rq.ProducerEpoch : -1, &pid,
                                         &epoch);
    }
    if (err == SAMSA_ERR_PRODUCER_FENCED && v < 4) {
        err = SAMSA_ERR_INVALID_PRODUCER_EPOCH;
    }
    samsa_InitProducerIdResponse_init(&m);
    m.ErrorCode = samsa_err_wire(err);
    m.ProducerId = err == SAMSA_ERR_NONE ? pid : -1;
    m.ProducerEpoch = err == SAMSA_ERR_NONE ? epoch : -1;
    resp = samsa_resp_new_send(req);
    wr = (samsa_wr_t) { .buf = &resp->frame };
    samsa_InitProducerIdResponse_encode(&wr, v, &m);
    samsa_reqchan_respond(resp);
}
