/*
 * broker/txn/txnstore.c - the transaction coordinator's records in
 * __transaction_state (Kafka's TransactionStateManager and TransactionLog):
 * key TransactionLogKey v0 (the transactional id), value
 * TransactionLogValue v0 (producer id, epoch, timeout, state, partitions,
 * timestamps), a null value for an expired id; written through the normal
 * partition log as uncompressed batches, and replayed at start (last
 * record per id wins).
 * Threads: writes on handlers or txnmarker with the txn's lock held; the
 * load on main before any handler starts.
 */
#include "broker/txn/txn_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "meta/image.h"
#include "proto/batch.h"
#include "proto/gen/TransactionRecords.h"
#include "proto/wr.h"
#include "broker/coordload.h"
#include "broker/coordtopic.h"
#include "util/alloc.h"
#include "util/diag.h"
#include "util/time.h"

#define TXNSTORE_KEY_VERSION    0
#define TXNSTORE_VALUE_VERSION  0
#define TXNSTORE_READ_BYTES     (1 << 20)

/* ---- writing ------------------------------------------------------------------ */

static void
txnstore_key(samsa_buf_t *buf, const char *id)
{
    samsa_TransactionLogKey_t  k;
    samsa_wr_t                 wr;

    samsa_TransactionLogKey_init(&k);
    k.TransactionalId = samsa_slice_cstr(id);
    samsa_wr_init(&wr, buf);
    samsa_wr_i16(&wr, TXNSTORE_KEY_VERSION);
    samsa_TransactionLogKey_encode(&wr, TXNSTORE_KEY_VERSION, &k);
}

/* The partitions grouped by topic, as TransactionLogValue lists them. */
static samsa_PartitionsSchema_t *
txnstore_partitions(const samsa_txn_t *txn, int32_t *cnt)
{
    samsa_PartitionsSchema_t  *ps = samsa_calloc(txn->ntps + 1, sizeof(*ps));
    size_t                     i;
    int32_t                    j, n = 0;

    for (i = 0; i < txn->ntps; i++) {
        for (j = 0; j < n; j++) {
            if (samsa_slice_eq_cstr(ps[j].Topic, txn->tps[i].topic)) {
                break;
            }
        }
        if (j == n) {
            samsa_PartitionsSchema_init(&ps[n]);
            ps[n].Topic = samsa_slice_cstr(txn->tps[i].topic);
            ps[n].PartitionIds = samsa_calloc(txn->ntps + 1, sizeof(int32_t));
            ps[n].PartitionIds_cnt = 0;
            n++;
        }
        ps[j].PartitionIds[ps[j].PartitionIds_cnt++] = txn->tps[i].partition;
    }
    *cnt = n;
    return ps;
}

/* Append rec to txn's partition; with durable, fdatasync it before
 * returning. */
static samsa_err_t
txnstore_append(samsa_txn_t *txn, const samsa_coordtopic_rec_t *rec,
                bool durable)
{
    samsa_txncoord_t           *tc = txn->tc;
    samsa_coordtopic_append_t   how = { -1, -1, durable, NULL, NULL };
    samsa_err_t                 err;

    err = samsa_coordtopic_append(tc->conf.meta, tc->conf.logs,
                                  SAMSA_TXN_STATE_TOPIC, txn->partition, rec,
                                  1, &how);
    if (err != SAMSA_ERR_NONE && err != SAMSA_ERR_COORDINATOR_NOT_AVAILABLE) {
        samsa_warn("transactional id %s: cannot write to %s-%d: %s", txn->id,
                   SAMSA_TXN_STATE_TOPIC, (int) txn->partition,
                   samsa_err_name(err));
        /* Kafka answers a failed state write with a coordinator error */
        err = SAMSA_ERR_COORDINATOR_NOT_AVAILABLE;
    }
    return err;
}

samsa_err_t
samsa_txnstore_write(samsa_txn_t *txn, bool durable)
{
    samsa_TransactionLogValue_t   v;
    samsa_coordtopic_rec_t        rec = { SAMSA_BUF_INIT, SAMSA_BUF_INIT,
                                          false };
    samsa_wr_t                    wr;
    samsa_err_t                   err;
    int32_t                       i;

    samsa_TransactionLogValue_init(&v);
    v.ProducerId = txn->producer_id;
    v.ProducerEpoch = txn->epoch;
    v.TransactionTimeoutMs = txn->timeout_ms;
    v.TransactionStatus = (int8_t) txn->state;
    v.TransactionPartitions = txnstore_partitions(txn,
                                                  &v.TransactionPartitions_cnt);
    v.TransactionLastUpdateTimestampMs = txn->update_ms;
    v.TransactionStartTimestampMs = txn->start_ms;
    txnstore_key(&rec.key, txn->id);
    samsa_wr_init(&wr, &rec.value);
    samsa_wr_i16(&wr, TXNSTORE_VALUE_VERSION);
    samsa_TransactionLogValue_encode(&wr, TXNSTORE_VALUE_VERSION, &v);
    err = txnstore_append(txn, &rec, durable);
    for (i = 0; i < v.TransactionPartitions_cnt; i++) {
        samsa_free(v.TransactionPartitions[i].PartitionIds);
    }
    samsa_free(v.TransactionPartitions);
    samsa_buf_fini(&rec.key);
    samsa_buf_fini(&rec.value);
    return err;
}

samsa_err_t
samsa_txnstore_write_tombstone(samsa_txn_t *txn)
{
    samsa_coordtopic_rec_t  rec = { SAMSA_BUF_INIT, SAMSA_BUF_INIT, true };
    samsa_err_t             err;

    txnstore_key(&rec.key, txn->id);
    err = txnstore_append(txn, &rec, false);
    samsa_buf_fini(&rec.key);
    return err;
}

/* ---- loading ------------------------------------------------------------------ */

/* Replace txn's state with what v says (Kafka's readTxnRecordValue). */
static samsa_err_t
txnstore_apply_value(samsa_txn_t *txn, const samsa_TransactionLogValue_t *v)
{
    const samsa_PartitionsSchema_t  *ps;
    int32_t                          i, j;

    if (v->TransactionStatus < 0
        || v->TransactionStatus >= SAMSA_TXN_STATE_COUNT
        || v->TransactionStatus == SAMSA_TXN_PREPARE_EPOCH_FENCE
        || v->ProducerId < 0) {
        return SAMSA_ERR_CORRUPT_MESSAGE;
    }
    txn->producer_id = v->ProducerId;
    txn->last_producer_id = v->PreviousProducerId;
    txn->epoch = v->ProducerEpoch;
    txn->last_epoch = SAMSA_TXN_NO_EPOCH;
    txn->timeout_ms = v->TransactionTimeoutMs;
    txn->state = (samsa_txn_state_t) v->TransactionStatus;
    txn->update_ms = v->TransactionLastUpdateTimestampMs;
    txn->start_ms = v->TransactionStartTimestampMs;
    txn->fenced = false;
    samsa_txn_tps_clear(txn);
    for (i = 0; i < v->TransactionPartitions_cnt; i++) {
        ps = &v->TransactionPartitions[i];
        for (j = 0; j < ps->PartitionIds_cnt; j++) {
            samsa_txn_tps_add(txn, ps->Topic.ptr != NULL ? ps->Topic.ptr : "",
                              ps->Topic.len, ps->PartitionIds[j]);
        }
    }
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_txnstore_apply(samsa_txncoord_t *tc, const uint8_t *key,
                     size_t key_len, const uint8_t *value, size_t value_len)
{
    samsa_TransactionLogKey_t    k;
    samsa_TransactionLogValue_t  v;
    samsa_arena_t                arena;
    samsa_txn_t                 *txn;
    samsa_rd_t                   rd;
    samsa_err_t                  err;
    int16_t                      ver;

    samsa_arena_init(&arena);
    samsa_rd_init(&rd, key, key_len);
    ver = samsa_rd_i16(&rd);
    samsa_TransactionLogKey_init(&k);
    err = rd.err != SAMSA_ERR_NONE || ver != TXNSTORE_KEY_VERSION
              ? SAMSA_ERR_CORRUPT_MESSAGE
              : samsa_TransactionLogKey_decode(&rd, ver, &arena, &k);
    if (err != SAMSA_ERR_NONE || k.TransactionalId.len == 0) {
        samsa_arena_fini(&arena);
        return SAMSA_ERR_CORRUPT_MESSAGE;
    }
    samsa_TransactionLogValue_init(&v);
    if (value != NULL) {
        samsa_rd_init(&rd, value, value_len);
        ver = samsa_rd_i16(&rd);
        err = rd.err != SAMSA_ERR_NONE || ver < 0 || ver > 1
                  ? SAMSA_ERR_CORRUPT_MESSAGE
                  : samsa_TransactionLogValue_decode(&rd, ver, &arena, &v);
        if (err != SAMSA_ERR_NONE) {
            samsa_arena_fini(&arena);
            return SAMSA_ERR_CORRUPT_MESSAGE;
        }
    }
    txn = samsa_txn_get(tc, k.TransactionalId, value != NULL);
    if (txn != NULL) {
        pthread_mutex_lock(&txn->lock);
        if (value == NULL) {
            txn->state = SAMSA_TXN_DEAD;
            samsa_txn_remove(txn);
        } else {
            err = txnstore_apply_value(txn, &v);
            if (err != SAMSA_ERR_NONE && txn->producer_id < 0) {
                samsa_txn_remove(txn);
            }
        }
        pthread_mutex_unlock(&txn->lock);
        samsa_txn_unref(txn);
    }
    samsa_arena_fini(&arena);
    return err;
}

static void
txnstore_load_data(void *ctx, int32_t p, const samsa_batch_hdr_t *hdr,
                   const samsa_record_t *rec)
{
    (void) p;
    if (rec->Key != NULL
        && samsa_txnstore_apply(ctx, rec->Key, (size_t) rec->KeyLen,
                                rec->Value,
                                rec->Value != NULL ? (size_t) rec->ValueLen
                                                   : 0)
               != SAMSA_ERR_NONE) {
        samsa_warn("%s: skipping a record at offset %lld that does not "
                   "decode", SAMSA_TXN_STATE_TOPIC,
                   (long long) (hdr->BaseOffset + rec->OffsetDelta));
    }
}

static const samsa_coordload_ops_t  txnstore_load_ops = {
    txnstore_load_data, NULL,           /* markers: not ours to replay */
};

/* After the load: transactions caught in PrepareCommit/PrepareAbort (a
 * crash between the prepare record and the complete one) get their
 * markers. */
static void
txnstore_load_finish(samsa_txncoord_t *tc)
{
    samsa_txn_t  **all;
    size_t         i, n;

    all = samsa_txn_snapshot(tc, &n);
    for (i = 0; i < n; i++) {
        pthread_mutex_lock(&all[i]->lock);
        if (all[i]->state == SAMSA_TXN_PREPARE_COMMIT
            || all[i]->state == SAMSA_TXN_PREPARE_ABORT) {
            samsa_info("transactional id %s: completing %s after restart",
                       all[i]->id, samsa_txn_state_name(all[i]->state));
            samsa_txnmark_enqueue(all[i]);
        }
        pthread_mutex_unlock(&all[i]->lock);
        samsa_txn_unref(all[i]);
    }
    samsa_free(all);
}

samsa_err_t
samsa_txnstore_load(samsa_txncoord_t *tc, char *errstr, size_t errstr_size)
{
    samsa_err_t  err;
    int32_t      np;
    int64_t      start = samsa_now_ms();

    np = samsa_coordload_npartitions(tc->conf.meta, SAMSA_TXN_STATE_TOPIC);
    if (np == 0) {
        return SAMSA_ERR_NONE;
    }
    tc->num_partitions = np;            /* the topic decides once it exists */
    atomic_store(&tc->topic_ready, true);
    atomic_store(&tc->loaded, true);
    err = samsa_coordload_scan(tc->conf.logs, tc->conf.meta,
                               samsa_config_kraft(tc->conf.cfg),
                               tc->conf.node_id, SAMSA_TXN_STATE_TOPIC, np,
                               TXNSTORE_READ_BYTES, &txnstore_load_ops, tc,
                               errstr, errstr_size);
    txnstore_load_finish(tc);
    samsa_info("loaded %zu transactional ids from %s in %lld ms",
               samsa_txncoord_count(tc), SAMSA_TXN_STATE_TOPIC,
               (long long) (samsa_now_ms() - start));
    return err;
}
