/*
 * broker/txn/txn.h - the transaction coordinator (Kafka's TransactionCoordinator,
 * TransactionStateManager and TransactionMarkerChannelManager, KIP-98):
 * transactional ids and their producer id and epoch, the state machine
 * (Empty, Ongoing, PrepareCommit, PrepareAbort, CompleteCommit,
 * CompleteAbort, PrepareEpochFence, Dead), the partitions of each open
 * transaction, and the state kept in the internal topic __transaction_state
 * (broker/txn/txnstore.c), reloaded at start.  Commit and abort markers
 * (control batches) are written to every partition of a transaction by the
 * coordinator's own thread ("txnmarker", Kafka's TxnMarkerSenderThread),
 * which also aborts timed-out transactions and removes expired ids.
 *
 * Threads: every samsa_txn_* call may come from any handler thread; each
 * transactional id has its own lock, held for the whole of an operation
 * (log writes included); the table lock guards only the table.  The
 * marker thread takes the same locks.
 * Lock order: txn lock -> table lock; txn lock -> plog locks; txn lock ->
 * group locks (markers to __consumer_offsets); txn lock -> queue lock.
 * Nothing in the group coordinator takes a txn lock.
 */
#ifndef SAMSA_BROKER_TXN_TXN_H
#define SAMSA_BROKER_TXN_TXN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>

#include "broker/group/grp.h"
#include "broker/pidmgr.h"
#include "broker/purgatory.h"
#include "log/logmgr.h"
#include "meta/controller/controller.h"
#include "meta/meta.h"
#include "util/arena.h"
#include "config/config.h"
#include "util/slice.h"

typedef struct samsa_txncoord samsa_txncoord_t;

#define SAMSA_TXN_STATE_TOPIC  "__transaction_state"

/* Kafka's TransactionState ids (TransactionLogValue.TransactionStatus). */
typedef enum samsa_txn_state {
    SAMSA_TXN_EMPTY = 0,
    SAMSA_TXN_ONGOING = 1,
    SAMSA_TXN_PREPARE_COMMIT = 2,
    SAMSA_TXN_PREPARE_ABORT = 3,
    SAMSA_TXN_COMPLETE_COMMIT = 4,
    SAMSA_TXN_COMPLETE_ABORT = 5,
    SAMSA_TXN_DEAD = 6,
    SAMSA_TXN_PREPARE_EPOCH_FENCE = 7,
} samsa_txn_state_t;

#define SAMSA_TXN_STATE_COUNT  8

/* Kafka's names ("Empty", "Ongoing", ...), as DescribeTransactions and
 * ListTransactions show them. */
const char *samsa_txn_state_name(samsa_txn_state_t state);

/* The state named name; false if none is. */
bool samsa_txn_state_parse(samsa_slice_t name, samsa_txn_state_t *state);

/* ---- life --------------------------------------------------------------- */

typedef struct samsa_txncoord_conf {
    const samsa_config_t  *cfg;         /* transaction.*, transactional.* */
    int32_t                node_id;
    samsa_meta_t          *meta;
    samsa_controller_t    *ctrl;        /* creates the topic; producer ids
                                           when pids is NULL */
    samsa_pidmgr_t        *pids;        /* the broker's producer ids
                                           (broker/pidmgr.h); may be NULL */
    samsa_logmgr_t        *logs;
    samsa_grpcoord_t      *grp;         /* markers to __consumer_offsets */
    samsa_purgatory_t     *fetch;       /* woken after a marker (the last
                                           stable offset moves); may be
                                           NULL */
} samsa_txncoord_conf_t;

/* Load every transactional id kept in __transaction_state (if it exists),
 * then start the marker thread, which first completes the transactions
 * found in PrepareCommit or PrepareAbort.  @thread main */
SAMSA_MUST_CHECK samsa_err_t samsa_txncoord_open(
    const samsa_txncoord_conf_t *conf, samsa_txncoord_t **out, char *errstr,
    size_t errstr_size);

/* Stop the marker thread (work left stays in the log: a transaction in
 * PrepareCommit completes at the next start).  @thread main */
void samsa_txncoord_stop(samsa_txncoord_t *tc);

/* Stop and free.  NULL is a no-op.  @thread main */
void samsa_txncoord_close(samsa_txncoord_t *tc);

/* Create __transaction_state on first use (transaction.state.log.*).
 * COORDINATOR_NOT_AVAILABLE if it cannot be created. */
SAMSA_MUST_CHECK samsa_err_t samsa_txncoord_ensure_topic(samsa_txncoord_t *tc);

/* The partition of __transaction_state that holds txn_id (Kafka's
 * partitionFor: abs(hashCode) % transaction.state.log.num.partitions). */
int32_t samsa_txncoord_partition_for(samsa_txncoord_t *tc,
                                     samsa_slice_t txn_id);

/* Kafka's isCoordinatorForTransactionalId: SAMSA_ERR_NONE on a single node
 * and on a cluster node that leads txn_id's partition of
 * __transaction_state (broker/coordtopic.h), else NOT_COORDINATOR.
 * InitProducerId (with an id), AddPartitionsToTxn, AddOffsetsToTxn, EndTxn
 * and DescribeTransactions answer that first; samsa_txn_list lists only
 * the ids of the partitions led here. */
SAMSA_MUST_CHECK samsa_err_t samsa_txncoord_check(samsa_txncoord_t *tc,
                                                  samsa_slice_t txn_id);

/* ---- the client's requests ------------------------------------------------ */

/* InitProducerId with a transactional id (Kafka's handleInitProducerId):
 * a new id gets a producer id and epoch 0; a known one a bumped epoch
 * (KIP-360 checks of pid_in/epoch_in when pid_in >= 0); an open
 * transaction is first aborted with the epoch fenced (CONCURRENT_
 * TRANSACTIONS until its markers are written).  PRODUCER_FENCED is the
 * caller's to map for old versions. */
SAMSA_MUST_CHECK samsa_err_t samsa_txn_init_producer_id(
    samsa_txncoord_t *tc, samsa_slice_t txn_id, int32_t timeout_ms,
    int64_t pid_in, int16_t epoch_in, int64_t *pid_out, int16_t *epoch_out);

/* A producer id for a producer without a transactional id, from the same
 * blocks (conf.pids, else samsa_controller_alloc_producer_ids).  Until
 * the per-partition producer state exists (branch pstate) nothing checks
 * its sequences. */
SAMSA_MUST_CHECK samsa_err_t samsa_txn_alloc_producer_id(samsa_txncoord_t *tc,
                                                         int64_t *pid_out);

/* One partition of AddPartitionsToTxn; error is set on return. */
typedef struct samsa_txn_tp {
    samsa_slice_t  topic;
    int32_t        partition;
    samsa_err_t    error;
} samsa_txn_tp_t;

/* AddPartitionsToTxn: every tp must exist (else UNKNOWN_TOPIC_OR_PARTITION
 * and the others OPERATION_NOT_ATTEMPTED); then the coordinator's checks,
 * whose error every tp gets. */
void samsa_txn_add_partitions(samsa_txncoord_t *tc, samsa_slice_t txn_id,
                              int64_t pid, int16_t epoch, samsa_txn_tp_t *tps,
                              size_t n);

/* AddOffsetsToTxn: the group's __consumer_offsets partition joins the
 * transaction. */
SAMSA_MUST_CHECK samsa_err_t samsa_txn_add_offsets(samsa_txncoord_t *tc,
                                                   samsa_slice_t txn_id,
                                                   int64_t pid, int16_t epoch,
                                                   samsa_slice_t group_id);

/* EndTxn: write PrepareCommit/PrepareAbort (fdatasynced), answer, and
 * leave the markers and CompleteCommit/CompleteAbort to the marker
 * thread. */
SAMSA_MUST_CHECK samsa_err_t samsa_txn_end(samsa_txncoord_t *tc,
                                           samsa_slice_t txn_id, int64_t pid,
                                           int16_t epoch, bool commit);

/* KIP-890 part 1 verification: NONE if topic-partition is in the ongoing
 * transaction of txn_id with this producer id and epoch; else
 * INVALID_PRODUCER_ID_MAPPING (unknown id or other producer id),
 * INVALID_PRODUCER_EPOCH (older epoch), INVALID_TXN_STATE (not added, or
 * no open transaction).  Produce of transactional batches and
 * TxnOffsetCommit call it. */
SAMSA_MUST_CHECK samsa_err_t samsa_txn_partition_in_txn(
    samsa_txncoord_t *tc, samsa_slice_t txn_id, int64_t pid, int16_t epoch,
    samsa_slice_t topic, int32_t partition);

/* samsa_txn_partition_in_txn() in the shape of Produce's hook (broker.h's
 * samsa_txn_verify_fn): ctx is the samsa_txncoord_t; samsa_broker_open()
 * sets it as the broker's txn_verify. */
samsa_err_t samsa_txn_verify_hook(void *ctx, samsa_slice_t txn_id,
                                  int64_t pid, int16_t epoch,
                                  const char *topic, int32_t partition);

/* ---- admin ---------------------------------------------------------------- */

typedef struct samsa_txn_described_topic {
    const char  *topic;
    int32_t     *partitions;
    size_t       npartitions;
} samsa_txn_described_topic_t;

typedef struct samsa_txn_described {
    samsa_err_t                   error;     /* TRANSACTIONAL_ID_NOT_FOUND */
    samsa_txn_state_t             state;
    int32_t                       timeout_ms;
    int64_t                       start_ms;  /* -1: none */
    int64_t                       producer_id;
    int16_t                       epoch;
    samsa_txn_described_topic_t  *topics;
    size_t                        ntopics;
} samsa_txn_described_t;

/* DescribeTransactions for one id; out allocated in arena. */
void samsa_txn_describe(samsa_txncoord_t *tc, samsa_slice_t txn_id,
                        samsa_arena_t *arena, samsa_txn_described_t *out);

typedef struct samsa_txn_listed {
    const char         *txn_id;
    int64_t             producer_id;
    samsa_txn_state_t   state;
} samsa_txn_listed_t;

/* ListTransactions: ids whose state is in states (nstates 0: any), whose
 * producer id is in pids (npids 0: any), and (min_duration_ms >= 0) whose
 * transaction has run at least that long; allocated in arena. */
size_t samsa_txn_list(samsa_txncoord_t *tc, const samsa_txn_state_t *states,
                      size_t nstates, const int64_t *pids, size_t npids,
                      int64_t min_duration_ms, samsa_arena_t *arena,
                      samsa_txn_listed_t **out);

/* ---- tests -------------------------------------------------------------- */

/* Transactional ids in the table. */
size_t samsa_txncoord_count(samsa_txncoord_t *tc);

#endif /* SAMSA_BROKER_TXN_TXN_H */
