/*
 * client/producer/producer.c - samsa_producer_t (samsa/producer.h): wires the
 * configuration, buffer pool, accumulator, metadata cache and sender
 * together, and implements send() as the seed describes: wait for
 * metadata, check the size, pick the partition, append, wake the sender.
 * Threads: any app thread; the parts say how they are shared.
 */
#include <samsa/producer.h>

#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "client/producer/accum.h"
#include "client/producer/bufpool.h"
#include "client/producer/future.h"
#include "client/mdcache.h"
#include "client/producer/partitioner.h"
#include "client/producer/pconf.h"
#include "client/producer/sender.h"
#include "client/producer/txnmgr.h"
#include "util/alloc.h"
#include "util/diag.h"
#include "util/time.h"

/* samsa_header_t and samsa_rechdr_t are the same shape: pass through. */
_Static_assert(sizeof(samsa_header_t) == sizeof(samsa_rechdr_t),
               "header layout");
_Static_assert(offsetof(samsa_header_t, value_len)
                   == offsetof(samsa_rechdr_t, value_len),
               "header layout");

struct samsa_producer {
    samsa_pconf_t       pc;             /* [const] */
    samsa_bufpool_t    *pool;           /* [const] */
    samsa_accum_t      *accum;          /* [const] */
    samsa_mdcache_t    *mdc;            /* [const] */
    samsa_sender_t     *sender;         /* [const] after new */
    samsa_txnmgr_t     *tm;             /* [const] NULL: not transactional */
    samsa_pmetrics_t    m;              /* [atomic] fields */
    _Atomic bool        closing;        /* [atomic] */
};

static void
producer_wake(void *ctx)
{
    samsa_producer_t  *p = ctx;

    samsa_sender_wakeup(p->sender);
}

samsa_err_t
samsa_producer_new(const samsa_conf_t *conf, samsa_producer_t **producerp,
                   char *errstr, size_t errstr_size)
{
    samsa_producer_t    *p;
    samsa_accum_conf_t   ac;
    samsa_err_t          err;

    *producerp = NULL;
    p = samsa_calloc(1, sizeof(*p));
    err = samsa_pconf_load(&p->pc, conf, errstr, errstr_size);
    if (err != SAMSA_ERR_NONE) {
        samsa_pconf_fini(&p->pc);
        samsa_free(p);
        return err;
    }
    p->pool = samsa_bufpool_new(p->pc.buffer_memory,
                                (size_t) p->pc.batch_size);
    ac = (samsa_accum_conf_t) {
        .batch_size = (size_t) p->pc.batch_size,
        .codec = p->pc.codec,
        .level = p->pc.level,
        .linger_ms = p->pc.linger_ms,
        .delivery_timeout_ms = p->pc.delivery_timeout_ms,
        .adaptive = p->pc.adaptive,
        .availability_timeout_ms = p->pc.availability_timeout_ms,
        .pool = p->pool,
        .seed = (uint64_t) samsa_now_ns() ^ (uint64_t) (uintptr_t) p,
        .transactional = p->pc.transactional_id != NULL,
    };
    p->accum = samsa_accum_new(&ac);
    p->mdc = samsa_mdcache_new(SAMSA_MDCACHE_ASKED,
                               p->pc.net.metadata_max_age_ms, producer_wake,
                               p);
    atomic_init(&p->closing, false);
    atomic_init(&p->m.producer_id, -1);
    atomic_init(&p->m.producer_epoch, -1);
    if (p->pc.transactional_id != NULL) {
        p->tm = samsa_txnmgr_new(&p->pc, p->accum, producer_wake, p);
    }
    p->sender = samsa_sender_start(&p->pc, p->accum, p->mdc, p->pool, &p->m,
                                   p->tm);
    *producerp = p;
    return SAMSA_ERR_NONE;
}

/* Java's ensureValidRecordSize. */
static samsa_err_t
producer_check_size(samsa_producer_t *p, const samsa_record_t *rec)
{
    size_t  size = samsa_recbuild_size_upper(
        rec->key != NULL ? rec->key_len : 0,
        rec->value != NULL ? rec->value_len : 0,
        (const samsa_rechdr_t *) rec->headers, rec->nheaders);

    if (size > (size_t) p->pc.max_request_size
        || (int64_t) size > p->pc.buffer_memory) {
        return SAMSA_ERR_MESSAGE_TOO_LARGE;
    }
    return SAMSA_ERR_NONE;
}

static samsa_err_t producer_append(samsa_producer_t *p,
                                   const samsa_record_t *rec,
                                   samsa_delivery_cb *cb, void *opaque,
                                   samsa_future_t **futurep, int64_t t0);

samsa_err_t
samsa_producer_send(samsa_producer_t *p, const samsa_record_t *rec,
                    samsa_delivery_cb *cb, void *opaque,
                    samsa_future_t **futurep)
{
    samsa_err_t  err;
    int64_t      t0 = samsa_now_ms();

    if (futurep != NULL) {
        *futurep = NULL;
    }
    if (rec == NULL || rec->topic == NULL || rec->topic[0] == '\0'
        || (rec->nheaders > 0 && rec->headers == NULL)) {
        return SAMSA_ERR__INVALID_ARG;
    }
    if (atomic_load_explicit(&p->closing, memory_order_acquire)) {
        return SAMSA_ERR__SHUTDOWN;
    }
    err = samsa_sender_fatal(p->sender);
    if (err == SAMSA_ERR_NONE) {
        err = producer_check_size(p, rec);
    }
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    if (p->tm != NULL) {
        /* Java's maybeBeginSend checks: only inside a transaction; the
         * append then happens before a commit or abort can start */
        err = samsa_txnmgr_send_enter(p->tm);
        if (err != SAMSA_ERR_NONE) {
            return err;
        }
        err = producer_append(p, rec, cb, opaque, futurep, t0);
        samsa_txnmgr_send_exit(p->tm);
        return err;
    }
    return producer_append(p, rec, cb, opaque, futurep, t0);
}

/* The rest of send(): metadata, partition, append.  */
static samsa_err_t
producer_append(samsa_producer_t *p, const samsa_record_t *rec,
                samsa_delivery_cb *cb, void *opaque,
                samsa_future_t **futurep, int64_t t0)
{
    samsa_mdtopic_t     *md;
    samsa_partview_t     view;
    samsa_append_res_t   res;
    samsa_future_t      *fut = NULL;
    samsa_err_t          err;
    int64_t              left;
    int32_t              partition;

    err = samsa_mdcache_wait(p->mdc, rec->topic, rec->partition,
                             p->pc.max_block_ms, &md);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    view = (samsa_partview_t) { md->npartitions, md->avail, md->navail };
    partition = rec->partition;
    if (partition < 0 && rec->key != NULL && !p->pc.ignore_keys) {
        partition = samsa_partition_for_key(rec->key, rec->key_len,
                                            md->npartitions);
    }
    left = p->pc.max_block_ms - (samsa_now_ms() - t0);
    if (futurep != NULL) {
        fut = samsa_future_new();
    }
    atomic_fetch_add_explicit(&p->m.records_in_flight, 1,
                              memory_order_relaxed);
    err = samsa_accum_append(p->accum, rec->topic, partition, &view,
                             rec->timestamp < 0 ? samsa_wall_ms()
                                                : rec->timestamp,
                             rec->key, rec->key_len, rec->value,
                             rec->value_len,
                             (const samsa_rechdr_t *) rec->headers,
                             rec->nheaders, cb, opaque, fut,
                             left > 0 ? left : 0, &res);
    samsa_mdtopic_unref(md);
    if (err != SAMSA_ERR_NONE) {
        atomic_fetch_sub_explicit(&p->m.records_in_flight, 1,
                                  memory_order_relaxed);
        if (fut != NULL) {
            samsa_future_free(fut);     /* the batch's hold */
            samsa_future_free(fut);     /* and the caller's */
        }
        return err;
    }
    atomic_fetch_add_explicit(&p->m.record_send_total, 1,
                              memory_order_relaxed);
    if ((res.batch_full || res.new_batch) && !res.sender_busy) {
        samsa_sender_wakeup(p->sender);
    }
    if (futurep != NULL) {
        *futurep = fut;
    }
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_producer_flush(samsa_producer_t *p, int64_t timeout_ms)
{
    samsa_err_t  err;

    samsa_accum_flush_begin(p->accum);
    samsa_sender_wakeup(p->sender);
    err = samsa_accum_flush_wait(p->accum, timeout_ms);
    samsa_accum_flush_end(p->accum);
    return err;
}

samsa_err_t
samsa_producer_close(samsa_producer_t *p, int64_t timeout_ms)
{
    samsa_err_t  err;

    if (p == NULL) {
        return SAMSA_ERR_NONE;
    }
    atomic_store_explicit(&p->closing, true, memory_order_release);
    samsa_accum_close(p->accum);
    samsa_mdcache_close(p->mdc);
    samsa_bufpool_close(p->pool);
    err = samsa_sender_stop(p->sender, timeout_ms);
    samsa_txnmgr_free(p->tm);
    samsa_accum_free(p->accum);
    samsa_mdcache_free(p->mdc);
    samsa_bufpool_free(p->pool);
    samsa_pconf_fini(&p->pc);
    samsa_free(p);
    return err;
}

samsa_err_t
samsa_producer_partitions_for(samsa_producer_t *p, const char *topic,
                              samsa_partition_info_t **partsp,
                              int32_t *countp)
{
    samsa_mdtopic_t  *md;
    samsa_err_t       err;
    int32_t           i;

    *partsp = NULL;
    *countp = 0;
    if (topic == NULL) {
        return SAMSA_ERR__INVALID_ARG;
    }
    err = samsa_mdcache_wait(p->mdc, topic, -1, p->pc.max_block_ms, &md);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    *partsp = samsa_calloc((size_t) md->npartitions, sizeof(**partsp));
    for (i = 0; i < md->npartitions; i++) {
        (*partsp)[i].partition = i;
        (*partsp)[i].leader = md->leaders[i];
    }
    *countp = md->npartitions;
    samsa_mdtopic_unref(md);
    return SAMSA_ERR_NONE;
}

void
samsa_producer_metrics(samsa_producer_t *p, samsa_producer_metrics_t *m)
{
#define LOAD(x) atomic_load_explicit(&p->m.x, memory_order_relaxed)
    memset(m, 0, sizeof(*m));
    m->record_send_total = LOAD(record_send_total);
    m->record_error_total = LOAD(record_error_total);
    m->record_retry_total = LOAD(record_retry_total);
    m->records_delivered = LOAD(records_delivered);
    m->batch_total = LOAD(batch_total);
    m->request_total = LOAD(request_total);
    m->bytes_sent = LOAD(bytes_sent);
    m->records_in_flight = LOAD(records_in_flight);
    m->metadata_requests = LOAD(metadata_requests);
    m->producer_id = LOAD(producer_id);
    m->producer_epoch = (int16_t) LOAD(producer_epoch);
    m->batch_split_total = LOAD(batch_split_total);
    m->partition_inflight_max = LOAD(partition_inflight_max);
#undef LOAD
    m->buffer_total_bytes = samsa_bufpool_total(p->pool);
    m->buffer_available_bytes = samsa_bufpool_available(p->pool);
    m->bufferpool_wait_time_ns_total = samsa_bufpool_wait_ns(p->pool);
    m->waiting_threads = samsa_bufpool_waiters(p->pool);
}

/* ---- transactions ------------------------------------------------------- */

samsa_err_t
samsa_producer_init_transactions(samsa_producer_t *p, int64_t timeout_ms)
{
    samsa_err_t  err = samsa_sender_fatal(p->sender);

    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    return p->tm != NULL ? samsa_txnmgr_init(p->tm, timeout_ms)
                         : SAMSA_ERR__STATE;
}

samsa_err_t
samsa_producer_begin_transaction(samsa_producer_t *p)
{
    return p->tm != NULL ? samsa_txnmgr_begin(p->tm) : SAMSA_ERR__STATE;
}

samsa_err_t
samsa_producer_send_offsets_to_transaction(samsa_producer_t *p,
                                           const samsa_txn_offset_t *offsets,
                                           size_t n,
                                           const samsa_txn_group_t *group,
                                           int64_t timeout_ms)
{
    if (p->tm == NULL) {
        return SAMSA_ERR__STATE;
    }
    return samsa_txnmgr_send_offsets(p->tm, offsets, n, group, timeout_ms);
}

samsa_err_t
samsa_producer_commit_transaction(samsa_producer_t *p, int64_t timeout_ms)
{
    samsa_err_t  err;
    int64_t      t0 = samsa_now_ms(), left;

    if (p->tm == NULL) {
        return SAMSA_ERR__STATE;
    }
    err = samsa_txnmgr_commit_begin(p->tm);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    /* Every record of the transaction delivered (or failed: then the
     * transaction is ABORTABLE_ERROR and commit_end says so). */
    err = samsa_producer_flush(p, timeout_ms);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    left = timeout_ms < 0 ? -1 : timeout_ms - (samsa_now_ms() - t0);
    return samsa_txnmgr_commit_end(p->tm, left < 0 && timeout_ms >= 0 ? 0
                                                                      : left);
}

samsa_err_t
samsa_producer_abort_transaction(samsa_producer_t *p, int64_t timeout_ms)
{
    if (p->tm == NULL) {
        return SAMSA_ERR__STATE;
    }
    return samsa_txnmgr_abort(p->tm, timeout_ms);
}

void
samsa_free_mem(void *ptr)
{
    samsa_free(ptr);
}
