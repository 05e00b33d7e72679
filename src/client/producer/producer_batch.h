/*
 * client/producer/producer_batch.h - one producer batch (Java's ProducerBatch): a record
 * batch being written in wire form into a buffer-pool buffer, plus what to
 * do for each record when the batch completes (callback, future).
 * Threads: while the batch is the last one of its partition queue, app
 * threads append to it under the queue's lock; once drained it belongs to
 * the sender thread until it completes and is freed.
 */
#ifndef SAMSA_CLIENT_PRODUCER_PRODUCER_BATCH_H
#define SAMSA_CLIENT_PRODUCER_PRODUCER_BATCH_H

#include <stdbool.h>
#include <stdint.h>

#include <samsa/producer.h>

#include "proto/recbuild.h"

struct samsa_pq;

/* One record's completion: the callback, the future, what metadata needs. */
typedef struct samsa_thunk {
    samsa_delivery_cb  *cb;
    void               *opaque;
    samsa_future_t     *fut;
    int64_t             ts;
    uint32_t            key_size;
    uint32_t            value_size;
} samsa_thunk_t;

typedef struct samsa_batch {
    struct samsa_batch  *next;          /* queue / sender list link */
    struct samsa_batch  *inc_prev;      /* the accumulator's incomplete */
    struct samsa_batch  *inc_next;      /*   list (its own lock) */
    uint64_t             id;            /* creation order (flush) */
    struct samsa_pq     *pq;            /* [const] its partition queue */
    samsa_recbuild_t     rb;
    uint8_t             *buf;           /* from the buffer pool */
    size_t               buf_size;
    samsa_thunk_t       *thunks;
    int32_t              nthunks;
    int32_t              thunk_cap;
    int64_t              created_ms;    /* monotonic */
    int64_t              last_attempt_ms;
    int64_t              drained_ms;
    int64_t              backoff_ms;    /* this retry's backoff */
    int32_t              attempts;      /* sends so far */
    bool                 full;          /* closed for appends */
    bool                 in_retry;
    bool                 has_seq;       /* a sequence was assigned */
    bool                 off_pool;      /* buf is heap memory outside the
                                           buffer pool (a split batch) */
} samsa_producer_batch_t;

/* A new empty batch over buf (buf_size bytes).  @owns buf (until free) */
samsa_producer_batch_t *samsa_producer_batch_new(struct samsa_pq *pq, uint8_t *buf,
                               size_t buf_size, samsa_codec_t codec,
                               int level, int64_t now_ms);

/* (Re)start batch as a new empty batch over buf, as samsa_producer_batch_new does,
 * keeping its completion array (a recycled batch: no allocation per
 * batch).  @owns buf (until free) */
void samsa_producer_batch_init(samsa_producer_batch_t *batch, struct samsa_pq *pq,
                      uint8_t *buf, size_t buf_size, samsa_codec_t codec,
                      int level, int64_t now_ms);

/* Append one record and its completion; false if it does not fit (the
 * batch is then marked full: Java's closeForRecordAppends). */
bool samsa_producer_batch_try_append(samsa_producer_batch_t *batch, int64_t ts,
                            const void *key, size_t key_len,
                            const void *value, size_t value_len,
                            const samsa_rechdr_t *hdrs, size_t nhdrs,
                            samsa_delivery_cb *cb, void *opaque,
                            samsa_future_t *fut, size_t *appended);

/* Run every record's callback and future: offsets base_offset + i (or -1
 * on error / unknown), timestamps log_append_time if >= 0 else each
 * record's own.  @thread sender */
void samsa_producer_batch_complete(samsa_producer_batch_t *batch, const char *topic,
                          int32_t partition, int64_t base_offset,
                          int64_t log_append_time, samsa_err_t err);

/* Split a closed batch the broker rejected as too large (Java's
 * ProducerBatch.split): its records, in order, into new batches of at most
 * piece_cap bytes each and at most half the rejected batch's records
 * (uncompressed) each, so that every split makes progress (a record larger
 * than that gets a batch of its own),
 * each taking its records' completions.  The new batches keep the big
 * one's pq, id, creation time and producer state; with a sequence, each
 * starts at the big batch's base sequence plus the records before it.
 * They are full (closed for appends) but not closed, and their buffers are
 * heap memory outside buffer.memory (off_pool), as Java's split batches
 * are.  scratch is work space (compressed batches are decompressed into
 * it).  Returns the new batches (linked by ->next, oldest first) and moves
 * every completion out of batch (nthunks 0), or returns NULL and leaves
 * batch as it was if it holds fewer than two records or its records cannot
 * be read back.  @thread sender */
samsa_producer_batch_t *samsa_producer_batch_split(samsa_producer_batch_t *batch, size_t piece_cap,
                                 samsa_buf_t *scratch);

/* Free the batch (not its buffer: the caller returns that to the pool). */
void samsa_producer_batch_free(samsa_producer_batch_t *batch);

#endif /* SAMSA_CLIENT_PRODUCER_PRODUCER_BATCH_H */
