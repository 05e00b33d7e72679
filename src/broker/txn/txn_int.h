/*
 * broker/txn/txn_int.h - the transaction coordinator's private structures,
 * shared by txn.c (table, state machine, requests), txnstore.c (records in
 * __transaction_state, load) and txnmark.c (the marker thread: markers,
 * completion, timeouts, expiry).
 * Threads: a samsa_txn_t's fields are guarded by its lock ([lock]) unless
 * marked; the table by the table lock; the work queue by the queue lock.
 */
#ifndef SAMSA_BROKER_TXN_TXN_INT_H
#define SAMSA_BROKER_TXN_TXN_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "broker/txn/txn.h"
#include "util/idtab.h"

/* Kafka's RecordBatch.NO_PRODUCER_EPOCH and the epoch past which a new
 * producer id is handed out (TransactionMetadata.isEpochExhausted). */
#define SAMSA_TXN_NO_EPOCH        ((int16_t) -1)
#define SAMSA_TXN_EPOCH_MAX       ((int16_t) 32767)

typedef struct txn_tp {
    char     *topic;
    int32_t   partition;
} txn_tp_t;

/* One transactional id: Kafka's TransactionMetadata. */
typedef struct samsa_txn {
    pthread_mutex_t      lock;              /* guards the rest */
    _Atomic uint32_t     refs;              /* [atomic] table, queue,
                                               callers */
    samsa_txncoord_t    *tc;                /* [const] */
    char                *id;                /* [const] */
    int32_t              partition;         /* [const] in the state topic */
    int64_t              producer_id;
    int64_t              last_producer_id;  /* -1: none (KIP-360 retries) */
    int16_t              epoch;
    int16_t              last_epoch;
    int32_t              timeout_ms;
    samsa_txn_state_t    state;
    txn_tp_t            *tps;               /* partitions in the txn */
    size_t               ntps;
    int64_t              start_ms;          /* -1: no transaction */
    int64_t              update_ms;
    bool                 fenced;            /* the open txn is aborted by a
                                               fence (PrepareEpochFence) */
    bool                 queued;            /* [queue lock] in the queue */
} samsa_txn_t;

struct samsa_txncoord {
    samsa_txncoord_conf_t  conf;            /* [const] */
    int32_t                num_partitions;  /* [const after open] */
    int32_t                max_timeout_ms;  /* [const] */
    int64_t                id_expiration_ms;        /* [const] */
    int64_t                abort_interval_ms;       /* [const] */
    int64_t                expire_interval_ms;      /* [const] */
    int32_t                segment_bytes;   /* [const] */
    bool                   test_stop_after_prepare; /* [const] samsa-server-faults'
                                           SAMSA_TEST_TXN_STOP_AFTER_PREPARE */
    samsa_idtab_t          table;           /* the ids (samsa_txn_t) */
    pthread_mutex_t        topic_lock;      /* one creation at a time */
    _Atomic bool           topic_ready;     /* [atomic] release once it
                                               exists; acquired before use */
    pthread_mutex_t        load_lock;       /* one load at a time */
    _Atomic bool           loaded;          /* [atomic] the internal topic
                                               was loaded (at open, or on
                                               a cluster node once its
                                               image had the topic) */
    pthread_mutex_t        pid_lock;        /* guards next_pid, end_pid */
    int64_t                next_pid;
    int64_t                end_pid;
    pthread_mutex_t        queue_lock;      /* guards queue, nqueue, qcap,
                                               stopping, the cond */
    pthread_cond_t         queue_cond;
    samsa_txn_t          **queue;           /* one ref each */
    size_t                 nqueue;
    size_t                 qcap;
    bool                   stopping;
    bool                   thread_started;  /* [const after open] */
    pthread_t              thread;
};

/* ---- txn.c ---------------------------------------------------------------- */

/* The txn with a ref (samsa_txn_unref), or NULL; with create, a new Empty
 * one (producer id -1) when there is none. */
samsa_txn_t *samsa_txn_get(samsa_txncoord_t *tc, samsa_slice_t id,
                           bool create);
void samsa_txn_ref(samsa_txn_t *txn);
void samsa_txn_unref(samsa_txn_t *txn);

/* Take txn out of the table.  @locks txn held */
void samsa_txn_remove(samsa_txn_t *txn);

/* Every txn with a ref each; *n set.  Free the array with samsa_free
 * after unref'ing each. */
samsa_txn_t **samsa_txn_snapshot(samsa_txncoord_t *tc, size_t *n);

/* Replace txn's partitions (copies). */
void samsa_txn_tps_clear(samsa_txn_t *txn);
void samsa_txn_tps_add(samsa_txn_t *txn, const char *topic, size_t len,
                       int32_t partition);

/* Kafka's state machine: may a txn in from move to to? */
bool samsa_txn_transition_ok(samsa_txn_state_t from, samsa_txn_state_t to);

/* Fence the open transaction and start its abort: epoch + 1 (unless
 * exhausted), PrepareAbort written durably, markers queued.
 * @locks txn held */
SAMSA_MUST_CHECK samsa_err_t samsa_txn_fence_and_abort(samsa_txn_t *txn);

/* ---- txnstore.c ----------------------------------------------------------- */

/* Append txn's current state to its partition of __transaction_state;
 * with durable, wait for the data to be fdatasynced.  @locks txn held */
SAMSA_MUST_CHECK samsa_err_t samsa_txnstore_write(samsa_txn_t *txn,
                                                  bool durable);

/* Append a tombstone for txn's id (expired).  @locks txn held */
SAMSA_MUST_CHECK samsa_err_t samsa_txnstore_write_tombstone(samsa_txn_t *txn);

/* Replay every partition of __transaction_state.  @thread main (open) */
SAMSA_MUST_CHECK samsa_err_t samsa_txnstore_load(samsa_txncoord_t *tc,
                                                 char *errstr,
                                                 size_t errstr_size);

/* Apply one record (key and value as stored; value NULL: tombstone) to
 * tc's table: the load's step, exposed for the unit test and fuzzing. */
SAMSA_MUST_CHECK samsa_err_t samsa_txnstore_apply(samsa_txncoord_t *tc,
                                                  const uint8_t *key,
                                                  size_t key_len,
                                                  const uint8_t *value,
                                                  size_t value_len);

/* ---- txnmark.c ------------------------------------------------------------ */

/* Queue txn (PrepareCommit/PrepareAbort) for its markers.
 * @locks txn held */
void samsa_txnmark_enqueue(samsa_txn_t *txn);

/* The control batch of a marker, in buf (SAMSA_TXNMARK_BATCH_MAX bytes);
 * returns its size. */
#define SAMSA_TXNMARK_BATCH_MAX  96
size_t samsa_txnmark_build(uint8_t *buf, int64_t pid, int16_t epoch,
                           bool commit, int32_t coordinator_epoch,
                           int64_t now_ms);

/* Start / stop the marker thread. */
SAMSA_MUST_CHECK samsa_err_t samsa_txnmark_start(samsa_txncoord_t *tc);
void samsa_txnmark_stop(samsa_txncoord_t *tc);

#endif /* SAMSA_BROKER_TXN_TXN_INT_H */
