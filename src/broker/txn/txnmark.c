/*
 * broker/txn/txnmark.c - the transaction coordinator's thread ("txnmarker",
 * Kafka's TxnMarkerSenderThread plus the coordinator's two scheduled
 * tasks): for each transaction queued in PrepareCommit/PrepareAbort it
 * writes a commit or abort marker (a control batch, KIP-98's format) to
 * every partition of the transaction through the normal partition log,
 * tells the group coordinator about markers in __consumer_offsets, then
 * writes CompleteCommit/CompleteAbort.  Every
 * transaction.abort.timed.out.transaction.cleanup.interval.ms it aborts
 * Ongoing transactions older than their timeout (with an epoch bump, as
 * Kafka's abortTimedOutTransactions), and every
 * transaction.remove.expired.transaction.cleanup.interval.ms it removes
 * ids idle for transactional.id.expiration.ms.
 * Threads: txnmarker; enqueue from handlers.  The queue lock is taken
 * under a txn lock, never the reverse.
 */
#include "broker/txn/txn_int.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "broker/coordthread.h"
#include "meta/image.h"
#include "proto/batch.h"
#include "proto/recbuild.h"
#include "util/alloc.h"
#include "util/diag.h"
#include "util/endian.h"
#include "util/fault.h"
#include "util/time.h"

#define TXNMARK_RETRY_MS     500        /* after a failed marker write */
#define TXNMARK_TYPE_ABORT   0          /* ControlRecordType */
#define TXNMARK_TYPE_COMMIT  1

/* ---- the control batch -------------------------------------------------------- */

size_t
samsa_txnmark_build(uint8_t *buf, int64_t pid, int16_t epoch, bool commit,
                    int32_t coordinator_epoch, int64_t now_ms)
{
    samsa_recbuild_t  rb;
    samsa_buf_t       scratch = SAMSA_BUF_INIT;
    uint8_t           key[4], value[6];
    uint16_t          attr;
    size_t            used, size;

    /* key: version 0, type; value: version 0, coordinator epoch
     * (Kafka's ControlRecordType and EndTransactionMarker) */
    samsa_store_be16(key, 0);
    samsa_store_be16(key + 2, commit ? TXNMARK_TYPE_COMMIT
                                     : TXNMARK_TYPE_ABORT);
    samsa_store_be16(value, 0);
    samsa_store_be32(value + 2, (uint32_t) coordinator_epoch);
    samsa_recbuild_init(&rb, buf, SAMSA_TXNMARK_BATCH_MAX, SAMSA_CODEC_NONE,
                        0);
    samsa_assert(samsa_recbuild_append(&rb, now_ms, key, sizeof(key), value,
                                       sizeof(value), NULL, 0, &used));
    samsa_recbuild_set_producer(&rb, pid, epoch, SAMSA_RECBATCH_NO_SEQ, true);
    samsa_assert(samsa_recbuild_close(&rb, &scratch) == SAMSA_ERR_NONE);
    samsa_buf_fini(&scratch);
    size = samsa_recbuild_size(&rb);
    attr = samsa_load_be16(buf + SAMSA_BATCH_OFF_Attributes);
    attr |= SAMSA_BATCH_ATTR_CONTROL;
    samsa_store_be16(buf + SAMSA_BATCH_OFF_Attributes, attr);
    samsa_store_be32(buf + SAMSA_BATCH_OFF_Crc,
                     samsa_batch_crc_compute(buf, size));
    return size;
}

/* Append a marker to topic-partition.  A partition that no longer exists
 * (its topic was deleted) needs none, as in Kafka.
 * @locks txn held */
static samsa_err_t
txnmark_write(samsa_txn_t *txn, const char *topic, int32_t partition,
              bool commit, int32_t coordinator_epoch)
{
    samsa_txncoord_t            *tc = txn->tc;
    samsa_plog_append_opts_t     opts;
    samsa_plog_append_result_t   res;
    samsa_image_t               *img;
    const samsa_image_topic_t   *t;
    samsa_plog_t                *plog;
    uint8_t                      buf[SAMSA_TXNMARK_BATCH_MAX];
    char                         key[SAMSA_PURGATORY_TP_KEY_MAX];
    size_t                       len;
    samsa_err_t                  err;

    memset(&opts, 0, sizeof(opts));
    img = samsa_meta_image_get(tc->conf.meta);
    t = samsa_image_topic_find(img, topic, strlen(topic));
    if (t == NULL || partition >= t->npartitions) {
        samsa_image_put(img);
        samsa_info("transactional id %s: no marker for %s-%d: the partition "
                   "no longer exists", txn->id, topic, (int) partition);
        return SAMSA_ERR_NONE;
    }
    opts.leader_epoch = t->partitions[partition].leader_epoch;
    samsa_image_put(img);
    plog = samsa_logmgr_plog_ref(tc->conf.logs, topic, partition);
    if (plog == NULL) {
        return SAMSA_ERR_NOT_LEADER_OR_FOLLOWER;
    }
    opts.from_client = false;
    len = samsa_txnmark_build(buf, txn->producer_id, txn->epoch, commit,
                              coordinator_epoch, samsa_wall_ms());
    err = samsa_plog_append(plog, buf, len, &opts, &res);
    samsa_plog_unref(plog);
    if (err == SAMSA_ERR_NONE && tc->conf.fetch != NULL) {
        /* a Fetch waiting on the partition: what it may see moved */
        samsa_purgatory_tp_key(key, topic, strlen(topic), partition);
        samsa_purgatory_check_and_complete(tc->conf.fetch, key);
    }
    if (err == SAMSA_ERR_NONE
        && strcmp(topic, SAMSA_GRP_OFFSETS_TOPIC) == 0) {
        samsa_grp_txn_complete(tc->conf.grp, partition, txn->producer_id,
                               commit);
    }
    return err;
}

/* The coordinator epoch markers carry: the leader epoch of the txn's
 * partition of __transaction_state. */
static int32_t
txnmark_coordinator_epoch(samsa_txn_t *txn)
{
    samsa_image_t              *img = samsa_meta_image_get(txn->tc->conf.meta);
    const samsa_image_topic_t  *t;
    int32_t                     epoch = 0;

    t = samsa_image_topic_find(img, SAMSA_TXN_STATE_TOPIC,
                               strlen(SAMSA_TXN_STATE_TOPIC));
    if (t != NULL && txn->partition < t->npartitions) {
        epoch = t->partitions[txn->partition].leader_epoch;
    }
    samsa_image_put(img);
    return epoch;
}

/* Write the markers of txn's transaction to each partition, then the
 * CompleteCommit/CompleteAbort record.  @locks txn held
 * @thread txnmarker */
static SAMSA_MUST_CHECK samsa_err_t
txnmark_complete(samsa_txn_t *txn)
{
    bool          commit = txn->state == SAMSA_TXN_PREPARE_COMMIT;
    int32_t       cepoch;
    samsa_err_t   err = SAMSA_ERR_NONE;

    if (txn->state != SAMSA_TXN_PREPARE_COMMIT
        && txn->state != SAMSA_TXN_PREPARE_ABORT) {
        return SAMSA_ERR_NONE;          /* done meanwhile */
    }
    cepoch = txnmark_coordinator_epoch(txn);
    SAMSA_FAULT("txn.markers.before_first");
    /* Written markers leave the list, so a retry writes only the rest
     * (DescribeTransactions shows what is left, as Kafka's does). */
    while (txn->ntps > 0 && err == SAMSA_ERR_NONE) {
        txn_tp_t  *tp = &txn->tps[txn->ntps - 1];

        err = txnmark_write(txn, tp->topic, tp->partition, commit, cepoch);
        SAMSA_FAULT("txn.markers.after_one");
        if (err == SAMSA_ERR_NONE) {
            samsa_free(tp->topic);
            txn->ntps--;
        } else {
            samsa_warn("transactional id %s: cannot write the %s marker to "
                       "%s-%d: %s (retrying)", txn->id,
                       commit ? "commit" : "abort", tp->topic,
                       (int) tp->partition, samsa_err_name(err));
        }
    }
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    samsa_txn_tps_clear(txn);
    txn->state = commit ? SAMSA_TXN_COMPLETE_COMMIT : SAMSA_TXN_COMPLETE_ABORT;
    txn->update_ms = samsa_wall_ms();
    txn->fenced = false;
    SAMSA_FAULT("txn.markers.before_complete");
    err = samsa_txnstore_write(txn, false);
    if (err != SAMSA_ERR_NONE) {
        /* the markers are written: only the record is missing, and a
         * restart would write the markers again, which is harmless */
        samsa_warn("transactional id %s: cannot write %s: %s", txn->id,
                   samsa_txn_state_name(txn->state), samsa_err_name(err));
    }
    samsa_debug("transactional id %s: %s", txn->id,
                samsa_txn_state_name(txn->state));
    return SAMSA_ERR_NONE;
}

/* ---- the queue ------------------------------------------------------------------ */

void
samsa_txnmark_enqueue(samsa_txn_t *txn)
{
    samsa_txncoord_t  *tc = txn->tc;

    pthread_mutex_lock(&tc->queue_lock);
    if (!txn->queued) {
        if (tc->nqueue == tc->qcap) {
            tc->qcap = tc->qcap == 0 ? 16 : tc->qcap * 2;
            tc->queue = samsa_realloc(tc->queue,
                                      tc->qcap * sizeof(*tc->queue));
        }
        samsa_txn_ref(txn);
        tc->queue[tc->nqueue++] = txn;
        txn->queued = true;
        pthread_cond_signal(&tc->queue_cond);
    }
    pthread_mutex_unlock(&tc->queue_lock);
}

/* Take every queued txn (the caller owns their refs).  @locks queue held */
static samsa_txn_t **
txnmark_take(samsa_txncoord_t *tc, size_t *n)
{
    samsa_txn_t  **out = tc->queue;

    *n = tc->nqueue;
    tc->queue = NULL;
    tc->nqueue = 0;
    tc->qcap = 0;
    return out;
}

/* Process taken txns; those that fail go back in the queue.  Returns
 * whether some failed. */
static bool
txnmark_process(samsa_txncoord_t *tc, samsa_txn_t **work, size_t n)
{
    samsa_err_t  err;
    size_t       i;
    bool         failed = false;

    for (i = 0; i < n; i++) {
        pthread_mutex_lock(&tc->queue_lock);
        work[i]->queued = false;
        pthread_mutex_unlock(&tc->queue_lock);
        pthread_mutex_lock(&work[i]->lock);
        err = txnmark_complete(work[i]);
        if (err != SAMSA_ERR_NONE) {
            samsa_txnmark_enqueue(work[i]);
            failed = true;
        }
        pthread_mutex_unlock(&work[i]->lock);
        samsa_txn_unref(work[i]);
    }
    samsa_free(work);
    return failed;
}

/* ---- timers ------------------------------------------------------------------- */

/* One timer's pass: fn on every transaction in the table, under its
 * lock. */
typedef void txnmark_timer_fn_t(samsa_txncoord_t *tc, samsa_txn_t *txn,
                                int64_t now_ms);

static void
txnmark_pass(samsa_txncoord_t *tc, int64_t now_ms, txnmark_timer_fn_t *fn)
{
    samsa_txn_t  **all;
    size_t         i, n;

    all = samsa_txn_snapshot(tc, &n);
    for (i = 0; i < n; i++) {
        pthread_mutex_lock(&all[i]->lock);
        fn(tc, all[i], now_ms);
        pthread_mutex_unlock(&all[i]->lock);
        samsa_txn_unref(all[i]);
    }
    samsa_free(all);
}

/* Abort an Ongoing transaction past its timeout.  @locks txn held */
static void
txnmark_abort_timed_out(samsa_txncoord_t *tc, samsa_txn_t *txn,
                        int64_t now_ms)
{
    (void) tc;
    if (txn->state == SAMSA_TXN_ONGOING && txn->start_ms >= 0
        && txn->start_ms + txn->timeout_ms < now_ms) {
        samsa_info("transactional id %s: aborting the transaction of "
                   "producer id %lld epoch %d, open past its timeout of "
                   "%d ms", txn->id, (long long) txn->producer_id,
                   (int) txn->epoch, (int) txn->timeout_ms);
        if (samsa_txn_fence_and_abort(txn) != SAMSA_ERR_NONE) {
            samsa_warn("transactional id %s: cannot abort it yet", txn->id);
        }
    }
}

/* Remove an id idle past transactional.id.expiration.ms.
 * @locks txn held */
static void
txnmark_remove_expired(samsa_txncoord_t *tc, samsa_txn_t *txn,
                       int64_t now_ms)
{
    if (samsa_txn_transition_ok(txn->state, SAMSA_TXN_DEAD)
        && txn->update_ms + tc->id_expiration_ms <= now_ms) {
        if (samsa_txnstore_write_tombstone(txn) == SAMSA_ERR_NONE) {
            samsa_info("transactional id %s expired", txn->id);
            txn->state = SAMSA_TXN_DEAD;
            samsa_txn_remove(txn);
        }
    }
}

/* ---- the thread ----------------------------------------------------------------- */

static void
txnmark_wait(samsa_txncoord_t *tc, int64_t until_ms)
{
    struct timespec  ts;
    int64_t          wall = samsa_wall_ms(), ms = until_ms - samsa_now_ms();

    if (ms <= 0) {
        return;
    }
    wall += ms;
    ts.tv_sec = wall / 1000;
    ts.tv_nsec = (wall % 1000) * 1000000;
    (void) pthread_cond_timedwait(&tc->queue_cond, &tc->queue_lock, &ts);
}

static void *
txnmark_main(void *arg)
{
    samsa_txncoord_t  *tc = arg;
    samsa_txn_t      **work;
    size_t             n;
    int64_t            now = samsa_now_ms();
    int64_t            next_abort = now + tc->abort_interval_ms;
    int64_t            next_expire = now + tc->expire_interval_ms;
    int64_t            next_retry = 0, until;
    bool               busy;

    pthread_mutex_lock(&tc->queue_lock);
    while (!tc->stopping) {
        now = samsa_now_ms();
        busy = tc->nqueue > 0 && !tc->test_stop_after_prepare;
        if (busy && now >= next_retry) {
            work = txnmark_take(tc, &n);
            pthread_mutex_unlock(&tc->queue_lock);
            next_retry = txnmark_process(tc, work, n)
                             ? samsa_now_ms() + TXNMARK_RETRY_MS : 0;
            pthread_mutex_lock(&tc->queue_lock);
            continue;
        }
        if (now >= next_abort || now >= next_expire) {
            pthread_mutex_unlock(&tc->queue_lock);
            if (now >= next_abort) {
                txnmark_pass(tc, samsa_wall_ms(), txnmark_abort_timed_out);
                next_abort = samsa_now_ms() + tc->abort_interval_ms;
            }
            if (now >= next_expire) {
                txnmark_pass(tc, samsa_wall_ms(), txnmark_remove_expired);
                next_expire = samsa_now_ms() + tc->expire_interval_ms;
            }
            pthread_mutex_lock(&tc->queue_lock);
            continue;
        }
        until = next_abort < next_expire ? next_abort : next_expire;
        if (busy && next_retry < until) {
            until = next_retry;
        }
        txnmark_wait(tc, until);
    }
    pthread_mutex_unlock(&tc->queue_lock);
    return NULL;
}

samsa_err_t
samsa_txnmark_start(samsa_txncoord_t *tc)
{
    int  rc;

    rc = pthread_create(&tc->thread, NULL, txnmark_main, tc);
    if (rc != 0) {
        samsa_error("cannot start the txnmarker thread: %s", strerror(rc));
        return SAMSA_ERR__IO;
    }
    pthread_setname_np(tc->thread, "txnmarker");
    tc->thread_started = true;
    return SAMSA_ERR_NONE;
}

void
samsa_txnmark_stop(samsa_txncoord_t *tc)
{
    samsa_coordthread_stop(tc->thread, &tc->thread_started, &tc->queue_lock,
                           &tc->queue_cond, &tc->stopping);
}
