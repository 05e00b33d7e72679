/*
 * broker/txn/txn.c - the transaction coordinator's table of transactional ids,
 * its life (load, topic creation, producer-id blocks), Kafka's state
 * machine and the client's requests: InitProducerId with a transactional
 * id, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, the KIP-890 partition
 * check, DescribeTransactions and ListTransactions.  Records are in
 * txnstore.c, markers and timers in txnmark.c.
 * Threads: any handler; main for open/close; txnmarker for the queued
 * work.  Lock order: txn lock -> table lock (never the reverse).
 */
#include "broker/txn/txn_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "meta/image.h"
#include "broker/coordload.h"
#include "broker/coordtopic.h"
#include "util/alloc.h"
#include "util/diag.h"
#include "util/fault.h"
#include "util/time.h"

static const char *const  txn_state_names[SAMSA_TXN_STATE_COUNT] = {
    [SAMSA_TXN_EMPTY] = "Empty",
    [SAMSA_TXN_ONGOING] = "Ongoing",
    [SAMSA_TXN_PREPARE_COMMIT] = "PrepareCommit",
    [SAMSA_TXN_PREPARE_ABORT] = "PrepareAbort",
    [SAMSA_TXN_COMPLETE_COMMIT] = "CompleteCommit",
    [SAMSA_TXN_COMPLETE_ABORT] = "CompleteAbort",
    [SAMSA_TXN_DEAD] = "Dead",
    [SAMSA_TXN_PREPARE_EPOCH_FENCE] = "PrepareEpochFence",
};

const char *
samsa_txn_state_name(samsa_txn_state_t state)
{
    return (unsigned) state < SAMSA_TXN_STATE_COUNT ? txn_state_names[state]
                                                    : "Unknown";
}

bool
samsa_txn_state_parse(samsa_slice_t name, samsa_txn_state_t *state)
{
    int  i;

    for (i = 0; i < SAMSA_TXN_STATE_COUNT; i++) {
        if (samsa_slice_eq_cstr(name, txn_state_names[i])) {
            *state = (samsa_txn_state_t) i;
            return true;
        }
    }
    return false;
}

/* Kafka's TransactionState.validPreviousStates, as a bit set per target. */
bool
samsa_txn_transition_ok(samsa_txn_state_t from, samsa_txn_state_t to)
{
#define S(x) (1u << SAMSA_TXN_##x)
    static const unsigned  prev[SAMSA_TXN_STATE_COUNT] = {
        [SAMSA_TXN_EMPTY] = S(EMPTY) | S(COMPLETE_COMMIT) | S(COMPLETE_ABORT),
        [SAMSA_TXN_ONGOING] = S(ONGOING) | S(EMPTY) | S(COMPLETE_COMMIT)
                              | S(COMPLETE_ABORT),
        [SAMSA_TXN_PREPARE_COMMIT] = S(ONGOING),
        [SAMSA_TXN_PREPARE_ABORT] = S(ONGOING) | S(PREPARE_EPOCH_FENCE),
        [SAMSA_TXN_COMPLETE_COMMIT] = S(PREPARE_COMMIT),
        [SAMSA_TXN_COMPLETE_ABORT] = S(PREPARE_ABORT),
        [SAMSA_TXN_DEAD] = S(EMPTY) | S(COMPLETE_COMMIT) | S(COMPLETE_ABORT),
        [SAMSA_TXN_PREPARE_EPOCH_FENCE] = S(ONGOING),
    };
#undef S
    if ((unsigned) from >= SAMSA_TXN_STATE_COUNT
        || (unsigned) to >= SAMSA_TXN_STATE_COUNT) {
        return false;
    }
    return (prev[to] & (1u << from)) != 0;
}

/* ---- the table ------------------------------------------------------------ */

static void *
txn_new(void *arg, samsa_slice_t id)
{
    samsa_txncoord_t  *tc = arg;
    samsa_txn_t       *txn = samsa_calloc(1, sizeof(*txn));

    pthread_mutex_init(&txn->lock, NULL);
    atomic_init(&txn->refs, 1);
    txn->tc = tc;
    txn->id = samsa_strndup(id.ptr, id.len);
    txn->partition = samsa_grp_partition_for(id.ptr, id.len,
                                             tc->num_partitions);
    txn->producer_id = -1;
    txn->last_producer_id = -1;
    txn->epoch = SAMSA_TXN_NO_EPOCH;
    txn->last_epoch = SAMSA_TXN_NO_EPOCH;
    txn->state = SAMSA_TXN_EMPTY;
    txn->start_ms = -1;
    txn->update_ms = samsa_wall_ms();
    return txn;
}

samsa_txn_t *
samsa_txn_get(samsa_txncoord_t *tc, samsa_slice_t id, bool create)
{
    return samsa_idtab_get(&tc->table, id, create);
}

void
samsa_txn_ref(samsa_txn_t *txn)
{
    atomic_fetch_add_explicit(&txn->refs, 1, memory_order_relaxed);
}

void
samsa_txn_tps_clear(samsa_txn_t *txn)
{
    size_t  i;

    for (i = 0; i < txn->ntps; i++) {
        samsa_free(txn->tps[i].topic);
    }
    samsa_free(txn->tps);
    txn->tps = NULL;
    txn->ntps = 0;
}

static bool
txn_tps_has(const samsa_txn_t *txn, const char *topic, size_t len,
            int32_t partition)
{
    size_t  i;

    for (i = 0; i < txn->ntps; i++) {
        if (txn->tps[i].partition == partition
            && strlen(txn->tps[i].topic) == len
            && memcmp(txn->tps[i].topic, topic, len) == 0) {
            return true;
        }
    }
    return false;
}

void
samsa_txn_tps_add(samsa_txn_t *txn, const char *topic, size_t len,
                  int32_t partition)
{
    if (txn_tps_has(txn, topic, len, partition)) {
        return;
    }
    txn->tps = samsa_realloc(txn->tps, (txn->ntps + 1) * sizeof(*txn->tps));
    txn->tps[txn->ntps].topic = samsa_strndup(topic, len);
    txn->tps[txn->ntps].partition = partition;
    txn->ntps++;
}

void
samsa_txn_unref(samsa_txn_t *txn)
{
    /* acq_rel: each release pairs with the last unref's acquire (a
     * fence would do, but TSan does not see fences) */
    if (txn != NULL
        && atomic_fetch_sub_explicit(&txn->refs, 1, memory_order_acq_rel)
               == 1) {
        samsa_txn_tps_clear(txn);
        samsa_free(txn->id);
        pthread_mutex_destroy(&txn->lock);
        samsa_free(txn);
    }
}

/* Unlocks txn and drops the caller's reference to it. */
static void
txn_unlock_unref(samsa_txn_t *txn)
{
    pthread_mutex_unlock(&txn->lock);
    samsa_txn_unref(txn);
}

void
samsa_txn_remove(samsa_txn_t *txn)
{
    if (samsa_idtab_remove(&txn->tc->table, txn)) {
        samsa_txn_unref(txn);                   /* the caller holds another */
    }
}

samsa_txn_t **
samsa_txn_snapshot(samsa_txncoord_t *tc, size_t *n)
{
    return (samsa_txn_t **) samsa_idtab_snapshot(&tc->table, n);
}

size_t
samsa_txncoord_count(samsa_txncoord_t *tc)
{
    return samsa_idtab_count(&tc->table);
}

static const char *
txn_id_of(const void *txn)
{
    return ((const samsa_txn_t *) txn)->id;
}

static void
txn_ref_item(void *txn)
{
    samsa_txn_ref(txn);
}

static void
txn_unref_item(void *txn)
{
    samsa_txn_unref(txn);
}

static const samsa_idtab_ops_t  txn_table_ops = {
    txn_id_of, txn_ref_item, txn_unref_item, txn_new,
};

/* ---- producer ids ----------------------------------------------------------- */

/* Kafka's ProducerIdManager: ids from blocks the controller records in the
 * metadata log, so that no id is handed out twice across restarts. */
samsa_err_t
samsa_txn_alloc_producer_id(samsa_txncoord_t *tc, int64_t *pid_out)
{
    samsa_err_t  err = SAMSA_ERR_NONE;
    int64_t      first;

    if (tc->conf.pids != NULL) {
        /* the broker's manager: blocks from the active controller on
         * every cluster node; COORDINATOR_LOAD_IN_PROGRESS while none is
         * at hand */
        return samsa_pidmgr_next(tc->conf.pids, pid_out);
    }
    pthread_mutex_lock(&tc->pid_lock);
    if (tc->next_pid >= tc->end_pid) {
        err = tc->conf.ctrl != NULL
                  ? samsa_controller_alloc_producer_ids(tc->conf.ctrl, &first)
                  : SAMSA_ERR_COORDINATOR_NOT_AVAILABLE;
        if (err == SAMSA_ERR_NONE) {
            tc->next_pid = first;
            tc->end_pid = first + SAMSA_CONTROLLER_PRODUCER_ID_BLOCK;
        } else {
            samsa_warn("cannot allocate producer ids: %s",
                       samsa_err_name(err));
            err = SAMSA_ERR_COORDINATOR_NOT_AVAILABLE;
        }
    }
    if (err == SAMSA_ERR_NONE) {
        *pid_out = tc->next_pid++;
    }
    pthread_mutex_unlock(&tc->pid_lock);
    return err;
}

/* ---- life ------------------------------------------------------------------- */

samsa_err_t
samsa_txncoord_open(const samsa_txncoord_conf_t *conf, samsa_txncoord_t **out,
                    char *errstr, size_t errstr_size)
{
    samsa_txncoord_t  *tc = samsa_calloc(1, sizeof(*tc));
    samsa_err_t        err;

    tc->conf = *conf;
    tc->num_partitions =
        samsa_config_int(conf->cfg, "transaction.state.log.num.partitions");
    tc->max_timeout_ms =
        samsa_config_int(conf->cfg, "transaction.max.timeout.ms");
    tc->id_expiration_ms =
        samsa_config_int(conf->cfg, "transactional.id.expiration.ms");
    tc->abort_interval_ms = samsa_config_int(
        conf->cfg,
        "transaction.abort.timed.out.transaction.cleanup.interval.ms");
    tc->expire_interval_ms = samsa_config_int(
        conf->cfg, "transaction.remove.expired.transaction.cleanup.interval.ms");
    tc->segment_bytes =
        samsa_config_int(conf->cfg, "transaction.state.log.segment.bytes");
    tc->test_stop_after_prepare =
        SAMSA_TEST_HOOK("SAMSA_TEST_TXN_STOP_AFTER_PREPARE", 0) != 0;
    if (tc->test_stop_after_prepare) {
        samsa_warn("SAMSA_TEST_TXN_STOP_AFTER_PREPARE is set: transactions "
                   "stay in PrepareCommit/PrepareAbort (a test hook)");
    }
    samsa_idtab_init(&tc->table, &txn_table_ops, tc);
    pthread_mutex_init(&tc->topic_lock, NULL);
    pthread_mutex_init(&tc->load_lock, NULL);
    atomic_init(&tc->loaded, false);
    pthread_mutex_init(&tc->pid_lock, NULL);
    pthread_mutex_init(&tc->queue_lock, NULL);
    pthread_cond_init(&tc->queue_cond, NULL);
    atomic_init(&tc->topic_ready, false);
    *out = tc;
    err = samsa_txnstore_load(tc, errstr, errstr_size);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    err = samsa_txnmark_start(tc);
    if (err != SAMSA_ERR_NONE) {
        snprintf(errstr, errstr_size, "cannot start the transaction "
                                      "coordinator's marker thread");
    }
    return err;
}

void
samsa_txncoord_stop(samsa_txncoord_t *tc)
{
    if (tc != NULL) {
        samsa_txnmark_stop(tc);
    }
}

void
samsa_txncoord_close(samsa_txncoord_t *tc)
{
    size_t  i;

    if (tc == NULL) {
        return;
    }
    samsa_txnmark_stop(tc);
    for (i = 0; i < tc->nqueue; i++) {
        samsa_txn_unref(tc->queue[i]);
    }
    samsa_free(tc->queue);
    samsa_idtab_fini(&tc->table);
    pthread_cond_destroy(&tc->queue_cond);
    pthread_mutex_destroy(&tc->queue_lock);
    pthread_mutex_destroy(&tc->pid_lock);
    pthread_mutex_destroy(&tc->topic_lock);
    pthread_mutex_destroy(&tc->load_lock);
    samsa_free(tc);
}

samsa_err_t
samsa_txncoord_ensure_topic(samsa_txncoord_t *tc)
{
    samsa_image_config_t  configs[4];
    char                  segment[24];

    if (atomic_load_explicit(&tc->topic_ready, memory_order_acquire)) {
        return SAMSA_ERR_NONE;
    }
    snprintf(segment, sizeof(segment), "%d", (int) tc->segment_bytes);
    /* Kafka's TransactionLog topic configs */
    configs[0] = (samsa_image_config_t) { "cleanup.policy", "compact" };
    configs[1] = (samsa_image_config_t) { "compression.type", "uncompressed" };
    configs[2] = (samsa_image_config_t) { "segment.bytes", segment };
    configs[3] = (samsa_image_config_t) { "unclean.leader.election.enable",
                                          "false" };
    return samsa_coordtopic_ensure(tc->conf.meta, tc->conf.ctrl,
                                   samsa_config_kraft(tc->conf.cfg),
                                   tc->conf.node_id,
                                   SAMSA_TXN_STATE_TOPIC, tc->num_partitions,
                                   configs, 4, &tc->topic_lock,
                                   &tc->topic_ready);
}

int32_t
samsa_txncoord_partition_for(samsa_txncoord_t *tc, samsa_slice_t txn_id)
{
    return samsa_grp_partition_for(txn_id.ptr != NULL ? txn_id.ptr : "",
                                   txn_id.len, tc->num_partitions);
}

/* As grp_load_late: a cluster node loads __transaction_state once its
 * image has it, if it did not at open (transactions found in a Prepare
 * state are queued for their markers then).  @locks takes load_lock */
static void
txn_load_late(samsa_txncoord_t *tc)
{
    char  errstr[256];

    if (atomic_load(&tc->loaded)
        || !samsa_config_kraft(tc->conf.cfg)->is_cluster) {
        return;
    }
    pthread_mutex_lock(&tc->load_lock);
    if (!atomic_load(&tc->loaded)
        && samsa_coordload_npartitions(tc->conf.meta,
                                       SAMSA_TXN_STATE_TOPIC) > 0
        && samsa_txnstore_load(tc, errstr, sizeof(errstr))
               != SAMSA_ERR_NONE) {
        samsa_error("%s", errstr);
    }
    pthread_mutex_unlock(&tc->load_lock);
}

samsa_err_t
samsa_txncoord_check(samsa_txncoord_t *tc, samsa_slice_t txn_id)
{
    txn_load_late(tc);
    return samsa_coordtopic_owner_check(tc->conf.meta, NULL,
                                        samsa_config_kraft(tc->conf.cfg),
                                        tc->conf.node_id,
                                        SAMSA_TXN_STATE_TOPIC,
                                        samsa_txncoord_partition_for(
                                            tc, txn_id));
}

/* ---- state changes ------------------------------------------------------------ */

/* Move txn to state and write it (durable for the Prepare states).  On a
 * failed write the in-memory state goes back to what it was.
 * @locks txn held */
static samsa_err_t
txn_transit(samsa_txn_t *txn, samsa_txn_state_t state)
{
    samsa_txn_state_t  was = txn->state;
    int64_t            was_ms = txn->update_ms;
    samsa_err_t        err;

    samsa_assert(samsa_txn_transition_ok(was, state));
    txn->state = state;
    txn->update_ms = samsa_wall_ms();
    err = samsa_txnstore_write(txn, state == SAMSA_TXN_PREPARE_COMMIT
                                        || state == SAMSA_TXN_PREPARE_ABORT);
    if (err != SAMSA_ERR_NONE) {
        txn->state = was;
        txn->update_ms = was_ms;
    }
    return err;
}

samsa_err_t
samsa_txn_fence_and_abort(samsa_txn_t *txn)
{
    int16_t      was_epoch = txn->epoch, was_last = txn->last_epoch;
    samsa_err_t  err;

    samsa_assert(samsa_txn_transition_ok(txn->state,
                                         SAMSA_TXN_PREPARE_EPOCH_FENCE));
    /* Kafka's prepareFenceProducerEpoch: the bumped epoch goes into the
     * markers, so that the old producer's writes are refused. */
    txn->state = SAMSA_TXN_PREPARE_EPOCH_FENCE;
    if (txn->epoch < SAMSA_TXN_EPOCH_MAX) {
        txn->last_epoch = txn->epoch;
        txn->epoch++;
    }
    txn->fenced = true;
    err = txn_transit(txn, SAMSA_TXN_PREPARE_ABORT);
    if (err != SAMSA_ERR_NONE) {
        txn->state = SAMSA_TXN_ONGOING;
        txn->epoch = was_epoch;
        txn->last_epoch = was_last;
        txn->fenced = false;
        return err;
    }
    samsa_txnmark_enqueue(txn);
    return SAMSA_ERR_NONE;
}

/* ---- InitProducerId ------------------------------------------------------------ */

/* Kafka's prepareIncrementProducerEpoch / prepareProducerIdRotation for a
 * txn in Empty, CompleteCommit or CompleteAbort.  @locks txn held */
static samsa_err_t
txn_init_bump(samsa_txn_t *txn, int32_t timeout_ms, int64_t pid_in,
              int16_t epoch_in)
{
    samsa_txncoord_t  *tc = txn->tc;
    int64_t            new_pid;
    samsa_err_t        err;

    if (pid_in >= 0 && pid_in != txn->producer_id
        && pid_in != txn->last_producer_id) {
        return SAMSA_ERR_PRODUCER_FENCED;
    }
    if (txn->epoch >= SAMSA_TXN_EPOCH_MAX - 1
        && (pid_in < 0 || epoch_in == txn->epoch)) {
        err = samsa_txn_alloc_producer_id(tc, &new_pid);
        if (err != SAMSA_ERR_NONE) {
            return err;
        }
        txn->last_producer_id = txn->producer_id;
        txn->producer_id = new_pid;
        txn->last_epoch = SAMSA_TXN_NO_EPOCH;
        txn->epoch = 0;
    } else if (pid_in < 0 || txn->epoch == SAMSA_TXN_NO_EPOCH
               || epoch_in == txn->epoch) {
        txn->last_epoch = txn->epoch;
        txn->epoch++;
    } else if (epoch_in != txn->last_epoch) {
        return SAMSA_ERR_PRODUCER_FENCED;
    }
    /* else a retry of the last InitProducerId: the current epoch again */
    txn->timeout_ms = timeout_ms;
    txn->start_ms = -1;
    samsa_txn_tps_clear(txn);
    return txn_transit(txn, SAMSA_TXN_EMPTY);
}

samsa_err_t
samsa_txn_init_producer_id(samsa_txncoord_t *tc, samsa_slice_t txn_id,
                           int32_t timeout_ms, int64_t pid_in,
                           int16_t epoch_in, int64_t *pid_out,
                           int16_t *epoch_out)
{
    samsa_txn_t  *txn;
    samsa_err_t   err;
    int64_t       pid;

    if (txn_id.len == 0) {
        return SAMSA_ERR_INVALID_REQUEST;
    }
    if (timeout_ms <= 0 || timeout_ms > tc->max_timeout_ms) {
        return SAMSA_ERR_INVALID_TRANSACTION_TIMEOUT;
    }
    err = samsa_txncoord_check(tc, txn_id);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    if (samsa_txncoord_ensure_topic(tc) != SAMSA_ERR_NONE) {
        return SAMSA_ERR_COORDINATOR_NOT_AVAILABLE;
    }
    txn = samsa_txn_get(tc, txn_id, true);
    pthread_mutex_lock(&txn->lock);
    if (txn->producer_id < 0) {
        /* new: Kafka's putTransactionStateIfNotExists */
        err = samsa_txn_alloc_producer_id(tc, &pid);
        if (err != SAMSA_ERR_NONE) {
            samsa_txn_remove(txn);
            goto out;
        }
        txn->producer_id = pid;
    }
    switch (txn->state) {
    case SAMSA_TXN_EMPTY:
    case SAMSA_TXN_COMPLETE_COMMIT:
    case SAMSA_TXN_COMPLETE_ABORT:
        err = txn_init_bump(txn, timeout_ms, pid_in, epoch_in);
        break;
    case SAMSA_TXN_ONGOING:
        /* abort the open transaction first; the client retries */
        if (pid_in >= 0 && pid_in != txn->producer_id) {
            err = SAMSA_ERR_PRODUCER_FENCED;
            break;
        }
        err = samsa_txn_fence_and_abort(txn);
        if (err == SAMSA_ERR_NONE) {
            err = SAMSA_ERR_CONCURRENT_TRANSACTIONS;
        }
        break;
    case SAMSA_TXN_PREPARE_COMMIT:
    case SAMSA_TXN_PREPARE_ABORT:
        err = SAMSA_ERR_CONCURRENT_TRANSACTIONS;
        break;
    default:
        err = SAMSA_ERR_UNKNOWN_SERVER_ERROR;
        break;
    }
    if (err == SAMSA_ERR_NONE) {
        *pid_out = txn->producer_id;
        *epoch_out = txn->epoch;
        samsa_info("transactional id %s: producer id %lld epoch %d", txn->id,
                   (long long) txn->producer_id, (int) txn->epoch);
    }
out:
    txn_unlock_unref(txn);
    return err;
}

/* ---- AddPartitionsToTxn, AddOffsetsToTxn ------------------------------------- */

/* The checks every request of an open producer goes through, in Kafka's
 * order.  @locks txn held */
static samsa_err_t
txn_check_producer(const samsa_txn_t *txn, int64_t pid, int16_t epoch)
{
    if (txn->producer_id != pid) {
        return SAMSA_ERR_INVALID_PRODUCER_ID_MAPPING;
    }
    if (txn->epoch != epoch) {
        return SAMSA_ERR_PRODUCER_FENCED;
    }
    return SAMSA_ERR_NONE;
}

/* Add the n partitions (whose error is NONE) to txn.  @locks txn held */
static samsa_err_t
txn_add_locked(samsa_txn_t *txn, int64_t pid, int16_t epoch,
               const samsa_txn_tp_t *tps, size_t n)
{
    txn_tp_t     *saved;
    size_t        i, nsaved;
    bool          all_in = txn->state == SAMSA_TXN_ONGOING;
    samsa_err_t   err;
    int64_t       was_start = txn->start_ms;

    err = txn_check_producer(txn, pid, epoch);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    if (txn->state == SAMSA_TXN_PREPARE_COMMIT
        || txn->state == SAMSA_TXN_PREPARE_ABORT) {
        return SAMSA_ERR_CONCURRENT_TRANSACTIONS;
    }
    if (!samsa_txn_transition_ok(txn->state, SAMSA_TXN_ONGOING)) {
        return SAMSA_ERR_INVALID_TXN_STATE;
    }
    for (i = 0; i < n && all_in; i++) {
        all_in = txn_tps_has(txn, tps[i].topic.ptr, tps[i].topic.len,
                             tps[i].partition);
    }
    if (all_in) {
        return SAMSA_ERR_NONE;
    }
    saved = txn->tps;
    nsaved = txn->ntps;
    txn->tps = NULL;
    txn->ntps = 0;
    if (txn->state == SAMSA_TXN_ONGOING) {
        for (i = 0; i < nsaved; i++) {
            samsa_txn_tps_add(txn, saved[i].topic, strlen(saved[i].topic),
                              saved[i].partition);
        }
    } else {
        txn->start_ms = samsa_wall_ms();
    }
    for (i = 0; i < n; i++) {
        samsa_txn_tps_add(txn, tps[i].topic.ptr, tps[i].topic.len,
                          tps[i].partition);
    }
    err = txn_transit(txn, SAMSA_TXN_ONGOING);
    if (err != SAMSA_ERR_NONE) {
        samsa_txn_tps_clear(txn);
        txn->tps = saved;
        txn->ntps = nsaved;
        txn->start_ms = was_start;
        return err;
    }
    for (i = 0; i < nsaved; i++) {
        samsa_free(saved[i].topic);
    }
    samsa_free(saved);
    return SAMSA_ERR_NONE;
}

/* The known transactional id txn_id (a reference), locked, as
 * AddPartitionsToTxn and EndTxn look it up: INVALID_REQUEST for an empty
 * id, NOT_COORDINATOR for one another broker coordinates,
 * INVALID_PRODUCER_ID_MAPPING for one this coordinator does not have.
 * The caller lets it go with txn_unlock_unref(). */
static samsa_err_t
txn_lock_known(samsa_txncoord_t *tc, samsa_slice_t txn_id, samsa_txn_t **txn)
{
    samsa_err_t  err;

    if (txn_id.len == 0) {
        return SAMSA_ERR_INVALID_REQUEST;
    }
    err = samsa_txncoord_check(tc, txn_id);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    *txn = samsa_txn_get(tc, txn_id, false);
    if (*txn == NULL) {
        return SAMSA_ERR_INVALID_PRODUCER_ID_MAPPING;
    }
    pthread_mutex_lock(&(*txn)->lock);
    return SAMSA_ERR_NONE;
}

static samsa_err_t
txn_add(samsa_txncoord_t *tc, samsa_slice_t txn_id, int64_t pid,
        int16_t epoch, const samsa_txn_tp_t *tps, size_t n)
{
    samsa_txn_t  *txn;
    samsa_err_t   err;

    err = txn_lock_known(tc, txn_id, &txn);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    err = txn_add_locked(txn, pid, epoch, tps, n);
    txn_unlock_unref(txn);
    return err;
}

void
samsa_txn_add_partitions(samsa_txncoord_t *tc, samsa_slice_t txn_id,
                         int64_t pid, int16_t epoch, samsa_txn_tp_t *tps,
                         size_t n)
{
    samsa_image_t              *img = samsa_meta_image_get(tc->conf.meta);
    const samsa_image_topic_t  *t;
    samsa_err_t                 err;
    size_t                      i;
    bool                        bad = false;

    err = txn_id.len > 0 ? samsa_txncoord_check(tc, txn_id) : SAMSA_ERR_NONE;
    for (i = 0; err != SAMSA_ERR_NONE && i < n; i++) {
        tps[i].error = err;
    }
    if (err != SAMSA_ERR_NONE) {
        samsa_image_put(img);
        return;
    }
    for (i = 0; i < n; i++) {
        t = samsa_image_topic_find(img, tps[i].topic.ptr != NULL
                                            ? tps[i].topic.ptr : "",
                                   tps[i].topic.len);
        tps[i].error = t == NULL || t->is_internal || tps[i].partition < 0
                               || tps[i].partition >= t->npartitions
                           ? SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION
                           : SAMSA_ERR_NONE;
        bad |= tps[i].error != SAMSA_ERR_NONE;
    }
    samsa_image_put(img);
    if (bad) {
        for (i = 0; i < n; i++) {
            if (tps[i].error == SAMSA_ERR_NONE) {
                tps[i].error = SAMSA_ERR_OPERATION_NOT_ATTEMPTED;
            }
        }
        return;
    }
    err = txn_add(tc, txn_id, pid, epoch, tps, n);
    for (i = 0; i < n; i++) {
        tps[i].error = err;
    }
}

samsa_err_t
samsa_txn_add_offsets(samsa_txncoord_t *tc, samsa_slice_t txn_id, int64_t pid,
                      int16_t epoch, samsa_slice_t group_id)
{
    samsa_txn_tp_t  tp;
    samsa_err_t     err;

    if (group_id.len == 0) {
        return SAMSA_ERR_INVALID_GROUP_ID;
    }
    err = samsa_grpcoord_ensure_topic(tc->conf.grp);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    memset(&tp, 0, sizeof(tp));
    tp.topic = samsa_slice_cstr(SAMSA_GRP_OFFSETS_TOPIC);
    tp.partition = samsa_grpcoord_partition_for(tc->conf.grp, group_id);
    return txn_add(tc, txn_id, pid, epoch, &tp, 1);
}

/* ---- EndTxn ------------------------------------------------------------------- */

/* Kafka's endTransaction (isFromClient).  @locks txn held */
static samsa_err_t
txn_end_locked(samsa_txn_t *txn, int64_t pid, int16_t epoch, bool commit)
{
    samsa_err_t  err;

    if (txn->producer_id != pid) {
        return SAMSA_ERR_INVALID_PRODUCER_ID_MAPPING;
    }
    if (txn->epoch != epoch) {
        return SAMSA_ERR_PRODUCER_FENCED;
    }
    switch (txn->state) {
    case SAMSA_TXN_ONGOING:
        err = txn_transit(txn, commit ? SAMSA_TXN_PREPARE_COMMIT
                                      : SAMSA_TXN_PREPARE_ABORT);
        if (err == SAMSA_ERR_NONE) {
            samsa_txnmark_enqueue(txn);
        }
        return err;
    case SAMSA_TXN_COMPLETE_COMMIT:
        return commit ? SAMSA_ERR_NONE : SAMSA_ERR_INVALID_TXN_STATE;
    case SAMSA_TXN_COMPLETE_ABORT:
        return commit ? SAMSA_ERR_INVALID_TXN_STATE : SAMSA_ERR_NONE;
    case SAMSA_TXN_PREPARE_COMMIT:
        return commit ? SAMSA_ERR_CONCURRENT_TRANSACTIONS
                      : SAMSA_ERR_INVALID_TXN_STATE;
    case SAMSA_TXN_PREPARE_ABORT:
        return commit ? SAMSA_ERR_INVALID_TXN_STATE
                      : SAMSA_ERR_CONCURRENT_TRANSACTIONS;
    case SAMSA_TXN_EMPTY:
        return SAMSA_ERR_INVALID_TXN_STATE;
    default:
        return SAMSA_ERR_UNKNOWN_SERVER_ERROR;
    }
}

samsa_err_t
samsa_txn_end(samsa_txncoord_t *tc, samsa_slice_t txn_id, int64_t pid,
              int16_t epoch, bool commit)
{
    samsa_txn_t  *txn;
    samsa_err_t   err;

    err = txn_lock_known(tc, txn_id, &txn);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    err = txn_end_locked(txn, pid, epoch, commit);
    if (err == SAMSA_ERR_NONE) {
        samsa_debug("transactional id %s: %s", txn->id,
                    samsa_txn_state_name(txn->state));
    }
    txn_unlock_unref(txn);
    return err;
}

/* ---- the partition check (KIP-890 part 1) ----------------------------------- */

samsa_err_t
samsa_txn_partition_in_txn(samsa_txncoord_t *tc, samsa_slice_t txn_id,
                           int64_t pid, int16_t epoch, samsa_slice_t topic,
                           int32_t partition)
{
    samsa_txn_t  *txn = samsa_txn_get(tc, txn_id, false);
    samsa_err_t   err = SAMSA_ERR_NONE;

    if (txn == NULL) {
        return SAMSA_ERR_INVALID_PRODUCER_ID_MAPPING;
    }
    pthread_mutex_lock(&txn->lock);
    if (txn->producer_id != pid) {
        err = SAMSA_ERR_INVALID_PRODUCER_ID_MAPPING;
    } else if (epoch < txn->epoch) {
        err = SAMSA_ERR_INVALID_PRODUCER_EPOCH;
    } else if (epoch != txn->epoch || txn->state != SAMSA_TXN_ONGOING
               || !txn_tps_has(txn, topic.ptr, topic.len, partition)) {
        err = SAMSA_ERR_INVALID_TXN_STATE;
    }
    txn_unlock_unref(txn);
    return err;
}

samsa_err_t
samsa_txn_verify_hook(void *ctx, samsa_slice_t txn_id, int64_t pid,
                      int16_t epoch, const char *topic, int32_t partition)
{
    return samsa_txn_partition_in_txn(ctx, txn_id, pid, epoch,
                                      samsa_slice_cstr(topic), partition);
}

/* ---- DescribeTransactions, ListTransactions --------------------------------- */

static void
txn_describe_topics(const samsa_txn_t *txn, samsa_arena_t *arena,
                    samsa_txn_described_t *out)
{
    samsa_txn_described_topic_t  *dt;
    size_t                        i, j;

    out->topics = samsa_arena_calloc(arena, txn->ntps + 1,
                                     sizeof(*out->topics));
    for (i = 0; i < txn->ntps; i++) {
        for (j = 0; j < out->ntopics; j++) {
            if (strcmp(out->topics[j].topic, txn->tps[i].topic) == 0) {
                break;
            }
        }
        dt = &out->topics[j];
        if (j == out->ntopics) {
            dt->topic = samsa_arena_strndup(arena, txn->tps[i].topic,
                                            strlen(txn->tps[i].topic));
            dt->partitions = samsa_arena_calloc(arena, txn->ntps + 1,
                                                sizeof(int32_t));
            out->ntopics++;
        }
        dt->partitions[dt->npartitions++] = txn->tps[i].partition;
    }
}

void
samsa_txn_describe(samsa_txncoord_t *tc, samsa_slice_t txn_id,
                   samsa_arena_t *arena, samsa_txn_described_t *out)
{
    samsa_txn_t  *txn;

    memset(out, 0, sizeof(*out));
    out->producer_id = -1;
    out->epoch = -1;
    out->start_ms = -1;
    out->state = SAMSA_TXN_DEAD;
    out->error = samsa_txncoord_check(tc, txn_id);
    if (out->error != SAMSA_ERR_NONE) {
        return;
    }
    txn = samsa_txn_get(tc, txn_id, false);
    if (txn == NULL) {
        out->error = SAMSA_ERR_TRANSACTIONAL_ID_NOT_FOUND;
        return;
    }
    pthread_mutex_lock(&txn->lock);
    if (txn->state == SAMSA_TXN_DEAD || txn->producer_id < 0) {
        out->error = SAMSA_ERR_TRANSACTIONAL_ID_NOT_FOUND;
    } else {
        out->state = txn->state;
        out->timeout_ms = txn->timeout_ms;
        out->start_ms = txn->start_ms;
        out->producer_id = txn->producer_id;
        out->epoch = txn->epoch;
        txn_describe_topics(txn, arena, out);
    }
    txn_unlock_unref(txn);
}

static bool
txn_listed(const samsa_txn_t *txn, const samsa_txn_state_t *states,
           size_t nstates, const int64_t *pids, size_t npids,
           int64_t min_duration_ms, int64_t now)
{
    size_t  i;
    bool    ok = nstates == 0;

    if (txn->state == SAMSA_TXN_DEAD || txn->producer_id < 0) {
        return false;
    }
    for (i = 0; i < nstates && !ok; i++) {
        ok = states[i] == txn->state;
    }
    if (!ok) {
        return false;
    }
    ok = npids == 0;
    for (i = 0; i < npids && !ok; i++) {
        ok = pids[i] == txn->producer_id;
    }
    if (ok && min_duration_ms >= 0) {
        ok = txn->start_ms >= 0 && now - txn->start_ms >= min_duration_ms;
    }
    return ok;
}

size_t
samsa_txn_list(samsa_txncoord_t *tc, const samsa_txn_state_t *states,
               size_t nstates, const int64_t *pids, size_t npids,
               int64_t min_duration_ms, samsa_arena_t *arena,
               samsa_txn_listed_t **out)
{
    samsa_txn_t  **all;
    samsa_image_t *img;
    size_t         i, n, k = 0;
    int64_t        now = samsa_wall_ms();

    txn_load_late(tc);
    all = samsa_txn_snapshot(tc, &n);
    *out = samsa_arena_calloc(arena, n + 1, sizeof(**out));
    img = samsa_meta_image_get(tc->conf.meta);
    for (i = 0; i < n; i++) {
        pthread_mutex_lock(&all[i]->lock);
        /* each broker lists the transactional ids it coordinates */
        if (txn_listed(all[i], states, nstates, pids, npids, min_duration_ms,
                       now)
            && samsa_coordtopic_owner_check(
                   tc->conf.meta, img, samsa_config_kraft(tc->conf.cfg),
                   tc->conf.node_id, SAMSA_TXN_STATE_TOPIC,
                   all[i]->partition) == SAMSA_ERR_NONE) {
            (*out)[k].txn_id = samsa_arena_strndup(arena, all[i]->id,
                                                   strlen(all[i]->id));
            (*out)[k].producer_id = all[i]->producer_id;
            (*out)[k].state = all[i]->state;
            k++;
        }
        pthread_mutex_unlock(&all[i]->lock);
        samsa_txn_unref(all[i]);
    }
    samsa_image_put(img);
    samsa_free(all);
    return k;
}
