/*
 * client/batch.c - producer batches (see batch.h).
 * Threads: as batch.h says; no locks of its own.
 */
#include "client/batch.h"

#include "client/future.h"
#include "util/alloc.h"

samsa_batch_t *
samsa_batch_new(struct samsa_pq *pq, uint8_t *buf, size_t buf_size,
                samsa_codec_t codec, int level, int64_t now_ms)
{
    samsa_batch_t  *batch = samsa_calloc(1, sizeof(*batch));

    batch->pq = pq;
    batch->buf = buf;
    batch->buf_size = buf_size;
    samsa_recbuild_init(&batch->rb, buf, buf_size, codec, level);
    batch->created_ms = now_ms;
    batch->last_attempt_ms = now_ms;
    return batch;
}

bool
samsa_batch_try_append(samsa_batch_t *batch, int64_t ts, const void *key,
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
samsa_batch_complete(samsa_batch_t *batch, const char *topic,
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

void
samsa_batch_free(samsa_batch_t *batch)
{
    if (batch == NULL) {
        return;
    }
    samsa_free(batch->thunks);
    samsa_free(batch);
}
