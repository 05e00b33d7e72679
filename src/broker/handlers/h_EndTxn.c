/*
 * broker/handlers/h_EndTxn.c - EndTxn (key 26), v0-v4: commit or abort.  The answer
 * goes out once PrepareCommit/PrepareAbort is durable in
 * __transaction_state; the markers follow on the coordinator's thread.
 * PRODUCER_FENCED is INVALID_PRODUCER_EPOCH before v2.
 * Threads: handler.
 */
#include "broker/api_table.h"

#include "broker/txn/txn.h"
#include "meta/acl.h"
#include "net/server/reqchan.h"
#include "proto/errmap.h"
#include "proto/gen/EndTxn.h"
#include "proto/wr.h"

void
samsa_h_EndTxn(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_EndTxnRequest_t  *rq = body;
    samsa_EndTxnResponse_t  m;
    samsa_err_t             err;

    err = !samsa_apis_allowed(apis, req, NULL, SAMSA_ACL_OP_WRITE,
                              SAMSA_ACL_RESOURCE_TRANSACTIONAL_ID,
                              rq->TransactionalId)
              ? SAMSA_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED
              : samsa_txn_end(apis->broker->txn, rq->TransactionalId,
                              rq->ProducerId, rq->ProducerEpoch,
                              rq->Committed);
    samsa_EndTxnResponse_init(&m);
    m.ErrorCode = samsa_err_wire(
        samsa_apis_txn_error(err, req->hdr.ApiVersion, 2));
    samsa_apis_send_opts(apis->broker, req, &m, &samsa_apis_uncounted);
}
