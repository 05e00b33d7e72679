/*
 * broker/handlers/h_AddOffsetsToTxn.c - AddOffsetsToTxn (key 25), v0-v4: the
 * group's partition of __consumer_offsets joins the transaction, so that
 * its TxnOffsetCommit offsets get the transaction's marker.
 * PRODUCER_FENCED is INVALID_PRODUCER_EPOCH before v2.
 * Threads: handler.
 */
#include "broker/api_table.h"

#include "broker/txn/txn.h"
#include "meta/acl.h"
#include "net/server/reqchan.h"
#include "proto/errmap.h"
#include "proto/gen/AddOffsetsToTxn.h"
#include "proto/wr.h"

void
samsa_h_AddOffsetsToTxn(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_AddOffsetsToTxnRequest_t  *rq = body;
    samsa_AddOffsetsToTxnResponse_t  m;
    samsa_err_t                      err;

    if (!samsa_apis_allowed(apis, req, NULL, SAMSA_ACL_OP_WRITE,
                            SAMSA_ACL_RESOURCE_TRANSACTIONAL_ID,
                            rq->TransactionalId)) {
        err = SAMSA_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
    } else if (!samsa_apis_allowed(apis, req, NULL, SAMSA_ACL_OP_READ,
                                   SAMSA_ACL_RESOURCE_GROUP, rq->GroupId)) {
        err = SAMSA_ERR_GROUP_AUTHORIZATION_FAILED;
    } else {
        err = samsa_txn_add_offsets(apis->broker->txn, rq->TransactionalId,
                                    rq->ProducerId, rq->ProducerEpoch,
                                    rq->GroupId);
    }
    samsa_AddOffsetsToTxnResponse_init(&m);
    m.ErrorCode = samsa_err_wire(
        samsa_apis_txn_error(err, req->hdr.ApiVersion, 2));
    samsa_apis_send_opts(apis->broker, req, &m, &samsa_apis_uncounted);
}
