/*
 * client/producer/producer_batch.c - producer batches (see batch.h).
 * Threads: as batch.h says; no locks of its own.
 */
#include "client/producer/producer_batch.h"

#include <string.h>

#include "client/producer/future.h"
#include "util/alloc.h"

samsa_producer_batch_t *
samsa_producer_batch_new(struct samsa_pq *pq, uint8_t *buf, size_t buf_size,
                samsa_codec_t codec, int level, int64_t now_ms)
{
    samsa_producer_batch_t  *batch = samsa_calloc(1, sizeof(*batch));

    samsa_producer_batch_init(batch, pq, buf, buf_size, codec, level, now_ms);
    return batch;
}

void
samsa_producer_batch_init(samsa_producer_batch_t *batch, struct samsa_pq *pq, uint8_t *buf,
                 size_t buf_size, samsa_codec_t codec, int level,
                 int64_t now_ms)
{
    samsa_thunk_t  *thunks = batch->thunks;
    int32_t         cap = batch->thunk_cap;

    memset(batch, 0, sizeof(*batch));
    batch->thunks = thunks;
    batch->thunk_cap = cap;
    batch->pq = pq;
    batch->buf = buf;
    batch->buf_size = buf_size;
    samsa_recbuild_init(&batch->rb, buf, buf_size, codec, level);
    batch->created_ms = now_ms;
    batch->last_attempt_ms = now_ms;
}

bool
samsa_producer_batch_try_append(samsa_producer_batch_t *batch, int64_t ts, const void *key,
                       size_t key_len, const void *value, size_t value_len,
                       const samsa_rechdr_t *hdrs, size_t nhdrs,
                       samsa_delivery_cb *cb, void *opaque,
                       samsa_future_t *fut, size_t *appended)
{
    samsa_thunk_t  *t;

    if (batch->full
        || !samsa_recbuild_append(&batch->rb, ts, key, key_len, value,
                                  value_len, hdrs, nhdrs, appended)) {
        batch->full = true;
        return false;
    }
    if (batch->nthunks == batch->thunk_cap) {
        batch->thunk_cap = batch->thunk_cap ? batch->thunk_cap * 2 : 64;
        batch->thunks = samsa_realloc(batch->thunks,
                                      (size_t) batch->thunk_cap
                                          * sizeof(*batch->thunks));
    }
    t = &batch->thunks[batch->nthunks++];
    t->cb = cb;
    t->opaque = opaque;
    t->fut = fut;
    t->ts = ts;
    t->key_size = key != NULL ? (uint32_t) key_len : 0;
    t->value_size = value != NULL ? (uint32_t) value_len : 0;
    return true;
}

void
samsa_producer_batch_complete(samsa_producer_batch_t *batch, const char *topic,
                     int32_t partition, int64_t base_offset,
                     int64_t log_append_time, samsa_err_t err)
{
    samsa_record_md_t  md;
    samsa_thunk_t     *t;
    int32_t            i;

    md.topic = topic;
    md.partition = partition;
    for (i = 0; i < batch->nthunks; i++) {
        t = &batch->thunks[i];
        md.offset = err == SAMSA_ERR_NONE && base_offset >= 0
                        ? base_offset + i : -1;
        md.timestamp = log_append_time >= 0 ? log_append_time : t->ts;
        md.key_size = t->key_size;
        md.value_size = t->value_size;
        if (t->cb != NULL) {
            t->cb(&md, err, t->opaque);
        }
        if (t->fut != NULL) {
            samsa_future_complete(t->fut, &md, err);
            t->fut = NULL;
        }
    }
    batch->nthunks = 0;
}

/* A new split batch of big's partition, sized for at least one record of
 * need bytes. */
static samsa_producer_batch_t *
batch_split_piece(const samsa_producer_batch_t *big, size_t piece_cap, size_t need)
{
    size_t          cap = need > piece_cap ? need : piece_cap;
    samsa_producer_batch_t  *b;

    b = samsa_producer_batch_new(big->pq, samsa_malloc(cap), cap, big->rb.codec,
                        big->rb.level, big->created_ms);
    b->off_pool = true;
    b->full = true;
    b->id = big->id;
    b->last_attempt_ms = big->last_attempt_ms;
    return b;
}

typedef struct batch_splitter {
    const samsa_producer_batch_t  *big;
    size_t                piece_cap;
    samsa_producer_batch_t        *head;
    samsa_producer_batch_t        *tail;
} batch_splitter_t;

/* samsa_recwalk_fn: record i of the big batch into the current piece, or
 * a new one. */
static samsa_err_t
batch_split_record(void *ctx, int32_t i, int64_t ts, const void *key,
                   size_t key_len, const void *value, size_t value_len,
                   const samsa_rechdr_t *hdrs, size_t nhdrs)
{
    batch_splitter_t  *sp = ctx;
    samsa_producer_batch_t     *cur = sp->tail;
    size_t             appended;

    if (i >= sp->big->nthunks) {
        return SAMSA_ERR_CORRUPT_MESSAGE;
    }
    /* a piece made for one record over piece_cap takes no other */
    if (cur == NULL || cur->buf_size > sp->piece_cap
        || !samsa_recbuild_append(&cur->rb, ts, key, key_len, value,
                                  value_len, hdrs, nhdrs, &appended)) {
        cur = batch_split_piece(sp->big, sp->piece_cap,
                                samsa_recbuild_size_upper(key_len, value_len,
                                                          hdrs, nhdrs));
        if (sp->tail != NULL) {
            sp->tail->next = cur;
        } else {
            sp->head = cur;
        }
        sp->tail = cur;
        if (!samsa_recbuild_append(&cur->rb, ts, key, key_len, value,
                                   value_len, hdrs, nhdrs, &appended)) {
            return SAMSA_ERR__OVERFLOW;         /* cannot happen: sized */
        }
    }
    if (cur->nthunks == cur->thunk_cap) {
        cur->thunk_cap = cur->thunk_cap ? cur->thunk_cap * 2 : 64;
        cur->thunks = samsa_realloc(cur->thunks, (size_t) cur->thunk_cap
                                                     * sizeof(*cur->thunks));
    }
    cur->thunks[cur->nthunks++] = sp->big->thunks[i];
    return SAMSA_ERR_NONE;
}

samsa_producer_batch_t *
samsa_producer_batch_split(samsa_producer_batch_t *big, size_t piece_cap, samsa_buf_t *scratch)
{
    const samsa_recbuild_t  *rb = &big->rb;
    batch_splitter_t         sp = { big, piece_cap, NULL, NULL };
    samsa_producer_batch_t           *cur, *next;
    int32_t                  seq = rb->base_seq;
    size_t                   half;

    if (!rb->closed || rb->count < 2 || rb->count != big->nthunks) {
        return NULL;
    }
    /* halves at most: Samsa's batches never exceed batch.size before
     * compression, so pieces of batch.size alone would not shrink them */
    half = SAMSA_RECBATCH_HDR_SIZE
           + (rb->raw_len - SAMSA_RECBATCH_HDR_SIZE) / 2;
    if (sp.piece_cap > half) {
        sp.piece_cap = half;
    }
    /* one piece would be the same batch again: no progress */
    if (samsa_recbuild_walk(rb, scratch, batch_split_record, &sp)
            != SAMSA_ERR_NONE
        || sp.head == NULL || sp.head->next == NULL) {
        for (cur = sp.head; cur != NULL; cur = next) {
            next = cur->next;
            samsa_free(cur->buf);
            samsa_producer_batch_free(cur);
        }
        return NULL;
    }
    for (cur = sp.head; cur != NULL && big->has_seq; cur = cur->next) {
        samsa_recbuild_set_producer(&cur->rb, rb->producer_id,
                                    rb->producer_epoch, seq,
                                    rb->transactional);
        cur->has_seq = true;
        /* Java's incrementSequence: wraps to 0 past INT32_MAX */
        seq = seq > INT32_MAX - cur->rb.count
                  ? cur->rb.count - (INT32_MAX - seq) - 1
                  : seq + cur->rb.count;
    }
    big->nthunks = 0;
    return sp.head;
}

void
samsa_producer_batch_free(samsa_producer_batch_t *batch)
{
    if (batch == NULL) {
        return;
    }
    samsa_free(batch->thunks);
    samsa_free(batch);
}
