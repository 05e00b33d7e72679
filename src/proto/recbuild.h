/*
 * proto/recbuild.h - writes one record batch (magic 2) in wire form,
 * straight into a caller-given buffer: Kafka's MemoryRecordsBuilder.  Each
 * record is encoded once, at append time (zigzag varints, headers); close()
 * compresses the records as one block (when that makes them smaller),
 * fills the 61-byte header and the CRC-32C.  The producer state (producer
 * id, epoch, base sequence, transactional bit) can be set or changed after
 * close (a retry after an epoch bump): that rewrites the header and CRC.
 * Threads: a builder belongs to one thread at a time (the accumulator hands
 * a batch from appending threads, under its deque lock, to the sender).
 * Ownership: the builder borrows buf; whoever gave it frees it.
 */
#ifndef SAMSA_PROTO_RECBUILD_H
#define SAMSA_PROTO_RECBUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>

#include "proto/compress.h"
#include "util/buf.h"
#include "util/slice.h"

#define SAMSA_RECBATCH_HDR_SIZE     61
#define SAMSA_RECBATCH_F_TXN        0x10    /* Attributes bit 4 */
#define SAMSA_RECBATCH_NO_PID       (-1LL)
#define SAMSA_RECBATCH_NO_EPOCH     ((int16_t) -1)
#define SAMSA_RECBATCH_NO_SEQ       (-1)

/* One record header: a string key and nullable bytes value (ptr NULL =
 * null).  The same shape as the public samsa_header_t. */
typedef struct samsa_rechdr {
    const char   *key;
    size_t        key_len;
    const void   *value;
    size_t        value_len;
} samsa_rechdr_t;

typedef struct samsa_recbuild {
    uint8_t        *buf;            /* borrowed; cap bytes */
    size_t          cap;
    size_t          len;            /* header + records written so far */
    size_t          raw_len;        /* len before compression (by close) */
    samsa_codec_t   codec;          /* wanted; attr_codec is what close used */
    int             level;
    samsa_codec_t   attr_codec;
    int64_t         base_ts;
    int64_t         max_ts;
    int32_t         count;
    bool            closed;
    int64_t         producer_id;
    int16_t         producer_epoch;
    int32_t         base_seq;
    bool            transactional;
} samsa_recbuild_t;

/* Start an empty batch in buf (cap >= SAMSA_RECBATCH_HDR_SIZE). */
void samsa_recbuild_init(samsa_recbuild_t *rb, uint8_t *buf, size_t cap,
                         samsa_codec_t codec, int level);

/* Upper bound of the bytes a batch holding only this record needs
 * (header included, worst-case varints): what to allocate for a record
 * larger than batch.size.  Java's estimateSizeInBytesUpperBound. */
size_t samsa_recbuild_size_upper(size_t key_len, size_t value_len,
                                 const samsa_rechdr_t *hdrs, size_t nhdrs);

/* Append one record (key/value ptr NULL = null) with timestamp ts (ms).
 * The first record always goes in if it fits cap; later ones only if they
 * fit.  Returns false (nothing written) if it does not fit or the batch is
 * closed; *appended gets the record's encoded size otherwise. */
bool samsa_recbuild_append(samsa_recbuild_t *rb, int64_t ts,
                           const void *key, size_t key_len,
                           const void *value, size_t value_len,
                           const samsa_rechdr_t *hdrs, size_t nhdrs,
                           size_t *appended);

/* Size of the batch as it would go out now (uncompressed if not closed). */
static inline size_t
samsa_recbuild_size(const samsa_recbuild_t *rb)
{
    return rb->len;
}

/* Close for appends: compress the records with rb->codec unless that does
 * not make them smaller (the batch then goes out uncompressed, which every
 * reader accepts), then write header and CRC.  scratch is a caller-owned
 * work buffer (reused across calls; its contents are undefined after).
 * Closing twice is a no-op. */
SAMSA_MUST_CHECK samsa_err_t samsa_recbuild_close(samsa_recbuild_t *rb,
                                                  samsa_buf_t *scratch);

/* Set the idempotence/transaction fields; after close this rewrites the
 * header and CRC in place. */
void samsa_recbuild_set_producer(samsa_recbuild_t *rb, int64_t producer_id,
                                 int16_t producer_epoch, int32_t base_seq,
                                 bool transactional);

/* One record read back from a batch (key/value NULL = null; hdrs valid
 * only during the call).  An error stops the walk and is its result. */
typedef samsa_err_t samsa_recwalk_fn(void *ctx, int32_t index, int64_t ts,
                              const void *key, size_t key_len,
                              const void *value, size_t value_len,
                              const samsa_rechdr_t *hdrs, size_t nhdrs);

/* Read back the records of a closed batch, in order (decompressing into
 * scratch if it was compressed): what splitting a batch needs.
 * SAMSA_ERR_CORRUPT_MESSAGE if they do not parse or their number is not
 * the batch's count; SAMSA_ERR__STATE if the batch is not closed; fn's
 * error if it returned one. */
SAMSA_MUST_CHECK samsa_err_t samsa_recbuild_walk(const samsa_recbuild_t *rb,
                                                 samsa_buf_t *scratch,
                                                 samsa_recwalk_fn *fn,
                                                 void *ctx);

/* Writes the header and CRC of a closed batch (done by close and
 * set_producer; exposed for tests). */
void samsa_recbuild_finish_header(samsa_recbuild_t *rb);

#endif /* SAMSA_PROTO_RECBUILD_H */
