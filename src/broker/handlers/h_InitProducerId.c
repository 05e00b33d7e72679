/*
 * broker/handlers/h_InitProducerId.c - InitProducerId (key 22), v0-v5.
 *
 * Without a transactional id (idempotent producers) Kafka's coordinator
 * "always blindly accepts the request and returns a new producerId": a
 * fresh id from the broker's producer-id block (broker/pidmgr.h) with
 * epoch 0, whatever ProducerId/ProducerEpoch (v3+) the request carries.
 * That is also KIP-360's answer to an idempotent producer that wants to
 * bump its epoch: it gets a new id, whose sequences start at 0 (the Java
 * client bumps an idempotent producer's epoch locally; librdkafka asks
 * here).  An empty transactional id is INVALID_REQUEST.
 *
 * With a transactional id the transaction coordinator answers (fencing,
 * epoch bumps, aborting the open transaction): initpid_transactional().
 * Threads: handler.
 */
#include "broker/api_table.h"

#include "broker/broker.h"
#include "broker/txn/txn.h"
#include "meta/acl.h"
#include "net/server/reqchan.h"
#include "proto/errmap.h"
#include "proto/gen/InitProducerId.h"
#include "proto/wr.h"

/* Kafka's initTransactionError: no id, no epoch. */
static void
initpid_error(samsa_InitProducerIdResponse_t *m, samsa_err_t err)
{
    m->ErrorCode = samsa_err_wire(err);
    m->ProducerId = -1;
    m->ProducerEpoch = -1;
}

/* The transaction coordinator's part (broker/txn/txn.h): fencing, KIP-360
 * epoch bumps, aborting an open transaction, CONCURRENT_TRANSACTIONS
 * while it completes.  PRODUCER_FENCED is INVALID_PRODUCER_EPOCH before
 * v4 (KIP-588). */
static void
initpid_transactional(samsa_apis_t *apis, samsa_req_t *req,
                      const samsa_InitProducerIdRequest_t *rq,
                      samsa_InitProducerIdResponse_t *m)
{
    int16_t      v = req->hdr.ApiVersion;
    int64_t      pid = -1;
    int16_t      epoch = -1;
    samsa_err_t  err;

    err = samsa_txn_init_producer_id(apis->broker->txn, rq->TransactionalId,
                                     rq->TransactionTimeoutMs,
                                     v >= 3 ? rq->ProducerId : -1,
                                     v >= 3 ? rq->ProducerEpoch : -1, &pid,
                                     &epoch);
    err = samsa_apis_txn_error(err, v, 4);
    if (err != SAMSA_ERR_NONE) {
        initpid_error(m, err);
    } else {
        m->ProducerId = pid;
        m->ProducerEpoch = epoch;
    }
    samsa_apis_send_opts(apis->broker, req, m, &samsa_apis_uncounted);
}

void
samsa_h_InitProducerId(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_InitProducerIdRequest_t  *rq = body;
    samsa_InitProducerIdResponse_t  m;
    int64_t                         pid;
    samsa_err_t                     err;

    samsa_InitProducerIdResponse_init(&m);
    if (!samsa_slice_is_null(rq->TransactionalId)) {
        if (rq->TransactionalId.len == 0) {
            initpid_error(&m, SAMSA_ERR_INVALID_REQUEST);
            samsa_apis_send_opts(apis->broker, req, &m, &samsa_apis_uncounted);
            return;
        }
        if (!samsa_apis_allowed(apis, req, NULL, SAMSA_ACL_OP_WRITE,
                                SAMSA_ACL_RESOURCE_TRANSACTIONAL_ID,
                                rq->TransactionalId)) {
            initpid_error(&m, SAMSA_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
            samsa_apis_send_opts(apis->broker, req, &m, &samsa_apis_uncounted);
            return;
        }
        initpid_transactional(apis, req, rq, &m);
        return;
    }
    /* Kafka: IDEMPOTENT_WRITE on the cluster, or WRITE on some topic */
    if (!samsa_apis_allowed_cluster(apis, req, SAMSA_ACL_OP_IDEMPOTENT_WRITE)
        && !samsa_apis_allowed_any(apis, req, SAMSA_ACL_OP_WRITE,
                                   SAMSA_ACL_RESOURCE_TOPIC)) {
        initpid_error(&m, SAMSA_ERR_CLUSTER_AUTHORIZATION_FAILED);
        samsa_apis_send_opts(apis->broker, req, &m, &samsa_apis_uncounted);
        return;
    }
    err = samsa_pidmgr_next(apis->broker->pids, &pid);
    if (err != SAMSA_ERR_NONE) {
        initpid_error(&m, err);
    } else {
        m.ProducerId = pid;
        m.ProducerEpoch = 0;
    }
    samsa_apis_send_opts(apis->broker, req, &m, &samsa_apis_uncounted);
}
