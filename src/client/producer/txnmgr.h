/*
 * client/producer/txnmgr.h - the transactional producer's transaction manager
 * (Java's TransactionManager): the state machine of docs/PRODUCER.md, the
 * application's init/begin/send_offsets/commit/abort calls, and the
 * coordinator requests (FindCoordinator, InitProducerId,
 * AddPartitionsToTxn, AddOffsetsToTxn, TxnOffsetCommit, EndTxn) that the
 * sender thread sends for them.
 *
 * An application call checks and changes the state under tm->lock, posts
 * an operation for the sender and waits (up to its timeout) until the
 * sender finishes it.  A call that timed out leaves its operation running;
 * calling the same function again waits for it (Java's retry of a timed
 * out commit/abort/init).  The sender adds a partition to the transaction
 * before it drains the partition's first batch (samsa_pq_t.txn_wait).
 *
 * Threads: samsa_txnmgr_{init,begin,send_*,send_offsets,commit_*,abort_*,
 * run_op,state} from app threads; samsa_txnmgr_poll, _batch_failed, _pid
 * from the sender thread only.  Locks: tm->lock is a leaf, except that the
 * sender takes queue locks (accum) without holding it.
 */
#ifndef SAMSA_CLIENT_PRODUCER_TXNMGR_H
#define SAMSA_CLIENT_PRODUCER_TXNMGR_H

#include <stdbool.h>
#include <stdint.h>

#include <samsa/producer.h>

#include "client/producer/accum.h"
#include "client/netclient.h"
#include "client/producer/pconf.h"

typedef enum samsa_txn_state {
    SAMSA_TXN_UNINITIALIZED = 0,
    SAMSA_TXN_INITIALIZING,
    SAMSA_TXN_READY,
    SAMSA_TXN_IN_TRANSACTION,
    SAMSA_TXN_COMMITTING,
    SAMSA_TXN_ABORTING,
    SAMSA_TXN_ABORTABLE_ERROR,
    SAMSA_TXN_FATAL_ERROR,
} samsa_txn_state_t;

/* Java's State.isTransitionValid: may the manager go from -> to? */
bool samsa_txn_transition_valid(samsa_txn_state_t from,
                                samsa_txn_state_t to);

const char *samsa_txn_state_name(samsa_txn_state_t state);

/* The fatal errors of a transactional producer (ProducerFencedException,
 * InvalidProducerEpoch, authorization...). */
bool samsa_txn_err_fatal(samsa_err_t err);

/* Coordinator errors (and lost connections) worth the same request again:
 * the transactional requests' and the idempotent producer's
 * InitProducerId's. */
bool samsa_txn_err_retriable(samsa_err_t err);

typedef struct samsa_txnmgr samsa_txnmgr_t;

/* wake(ctx) wakes the sender after an operation was posted. */
samsa_txnmgr_t *samsa_txnmgr_new(const samsa_pconf_t *pc,
                                 samsa_accum_t *accum,
                                 void (*wake)(void *ctx), void *ctx);
void samsa_txnmgr_free(samsa_txnmgr_t *tm);

/* ---- app threads -------------------------------------------------------- */

samsa_txn_state_t samsa_txnmgr_state(samsa_txnmgr_t *tm);

SAMSA_MUST_CHECK samsa_err_t samsa_txnmgr_init(samsa_txnmgr_t *tm,
                                               int64_t timeout_ms);
SAMSA_MUST_CHECK samsa_err_t samsa_txnmgr_begin(samsa_txnmgr_t *tm);

/* send(): enter checks that a transaction is open and holds it open
 * (commit and abort wait for the appends in progress) until exit. */
SAMSA_MUST_CHECK samsa_err_t samsa_txnmgr_send_enter(samsa_txnmgr_t *tm);
void samsa_txnmgr_send_exit(samsa_txnmgr_t *tm);

SAMSA_MUST_CHECK samsa_err_t samsa_txnmgr_send_offsets(
    samsa_txnmgr_t *tm, const samsa_txn_offset_t *offsets, size_t n,
    const samsa_txn_group_t *group, int64_t timeout_ms);

/* commit: _commit_begin (IN_TRANSACTION -> COMMITTING, or resuming a
 * timed out commit), the caller flushes, then _commit_end sends EndTxn. */
SAMSA_MUST_CHECK samsa_err_t samsa_txnmgr_commit_begin(samsa_txnmgr_t *tm);
SAMSA_MUST_CHECK samsa_err_t samsa_txnmgr_commit_end(samsa_txnmgr_t *tm,
                                                     int64_t timeout_ms);
SAMSA_MUST_CHECK samsa_err_t samsa_txnmgr_abort(samsa_txnmgr_t *tm,
                                                int64_t timeout_ms);

/* ---- sender thread ------------------------------------------------------ */

typedef struct samsa_txn_poll {
    samsa_err_t  fatal;         /* != NONE: the producer is dead */
    samsa_err_t  fail_queued;   /* != NONE: fail every queued batch
                                   with it (abort, abortable error) */
} samsa_txn_poll_t;

/* One sender turn's transactional work.  inflight: batches in Produce
 * requests.  @thread sender */
void samsa_txnmgr_poll(samsa_txnmgr_t *tm, samsa_netclient_t *nc,
                       int64_t inflight, int64_t now_ms,
                       samsa_txn_poll_t *out);

/* A batch completed with err (not NONE); had_seq: it had a sequence the
 * broker may or may not have written.  @thread sender */
void samsa_txnmgr_batch_failed(samsa_txnmgr_t *tm, samsa_err_t err,
                               bool had_seq);

/* The producer id and epoch to produce with (-1 before init).
 * @thread sender */
void samsa_txnmgr_pid(const samsa_txnmgr_t *tm, int64_t *pid,
                      int16_t *epoch);

#endif /* SAMSA_CLIENT_PRODUCER_TXNMGR_H */
