/*
 * proto/batch.h - Kafka record batches (magic 2, KIP-98): the 61-byte
 * header, the checks a broker makes on produced data, and the in-place
 * rewrite that assigns offsets (BaseOffset, PartitionLeaderEpoch: outside
 * the CRC) and, for LogAppendTime topics, the timestamp type and
 * MaxTimestamp (inside the CRC, which is then recomputed).
 *
 * Layout (big-endian):  BaseOffset i64 | BatchLength i32 |
 * PartitionLeaderEpoch i32 | Magic i8 | Crc u32 | Attributes i16 |
 * LastOffsetDelta i32 | BaseTimestamp i64 | MaxTimestamp i64 |
 * ProducerId i64 | ProducerEpoch i16 | BaseSequence i32 | RecordsCount i32
 * | Records.  A batch takes BatchLength + 12 bytes; CRC-32C covers
 * Attributes to the end.  Compressed batches (codec != 0) keep their
 * records as one compressed block that nothing here decompresses
 * (compression.type=producer stores batches as received).
 *
 * Threads: pure functions over caller-owned bytes; any thread.
 */
#ifndef SAMSA_PROTO_BATCH_H
#define SAMSA_PROTO_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>

#include "proto/rd.h"

#define SAMSA_BATCH_HDR_SIZE      61    /* header up to RecordsCount */
#define SAMSA_BATCH_LOG_OVERHEAD  12    /* BaseOffset + BatchLength */
#define SAMSA_BATCH_MAGIC_V2      2
#define SAMSA_BATCH_NO_TIMESTAMP  (-1)  /* RecordBatch.NO_TIMESTAMP */

/* Byte offsets of the header fields. */
#define SAMSA_BATCH_OFF_BaseOffset            0
#define SAMSA_BATCH_OFF_BatchLength           8
#define SAMSA_BATCH_OFF_PartitionLeaderEpoch  12
#define SAMSA_BATCH_OFF_Magic                 16
#define SAMSA_BATCH_OFF_Crc                   17
#define SAMSA_BATCH_OFF_Attributes            21    /* CRC starts here */
#define SAMSA_BATCH_OFF_LastOffsetDelta       23
#define SAMSA_BATCH_OFF_BaseTimestamp         27
#define SAMSA_BATCH_OFF_MaxTimestamp          35
#define SAMSA_BATCH_OFF_ProducerId            43
#define SAMSA_BATCH_OFF_ProducerEpoch         51
#define SAMSA_BATCH_OFF_BaseSequence          53
#define SAMSA_BATCH_OFF_RecordsCount          57

/* Attributes bits. */
#define SAMSA_BATCH_ATTR_CODEC_MASK       0x07  /* bits 0-2 */
#define SAMSA_BATCH_ATTR_LOG_APPEND_TIME  0x08  /* bit 3: timestamp type */
#define SAMSA_BATCH_ATTR_TRANSACTIONAL    0x10  /* bit 4 */
#define SAMSA_BATCH_ATTR_CONTROL          0x20  /* bit 5 */
#define SAMSA_BATCH_ATTR_DELETE_HORIZON   0x40  /* bit 6 (KIP-534) */

typedef enum samsa_batch_codec {
    SAMSA_BATCH_CODEC_NONE   = 0,
    SAMSA_BATCH_CODEC_GZIP   = 1,
    SAMSA_BATCH_CODEC_SNAPPY = 2,
    SAMSA_BATCH_CODEC_LZ4    = 3,
    SAMSA_BATCH_CODEC_ZSTD   = 4,
} samsa_batch_codec_t;

/* The header, decoded.  Field names are Kafka's. */
typedef struct samsa_batch_hdr {
    int64_t   BaseOffset;
    int32_t   BatchLength;
    int32_t   PartitionLeaderEpoch;
    int8_t    Magic;
    uint32_t  Crc;
    int16_t   Attributes;
    int32_t   LastOffsetDelta;
    int64_t   BaseTimestamp;
    int64_t   MaxTimestamp;
    int64_t   ProducerId;
    int16_t   ProducerEpoch;
    int32_t   BaseSequence;
    int32_t   RecordsCount;
} samsa_batch_hdr_t;

static inline samsa_batch_codec_t
samsa_batch_codec(const samsa_batch_hdr_t *hdr)
{
    return (samsa_batch_codec_t) (hdr->Attributes
                                  & SAMSA_BATCH_ATTR_CODEC_MASK);
}

static inline bool
samsa_batch_is_log_append_time(const samsa_batch_hdr_t *hdr)
{
    return (hdr->Attributes & SAMSA_BATCH_ATTR_LOG_APPEND_TIME) != 0;
}

static inline bool
samsa_batch_is_transactional(const samsa_batch_hdr_t *hdr)
{
    return (hdr->Attributes & SAMSA_BATCH_ATTR_TRANSACTIONAL) != 0;
}

static inline bool
samsa_batch_is_control(const samsa_batch_hdr_t *hdr)
{
    return (hdr->Attributes & SAMSA_BATCH_ATTR_CONTROL) != 0;
}

static inline bool
samsa_batch_has_delete_horizon(const samsa_batch_hdr_t *hdr)
{
    return (hdr->Attributes & SAMSA_BATCH_ATTR_DELETE_HORIZON) != 0;
}

/* Bytes the whole batch takes: BatchLength + 12. */
static inline int64_t
samsa_batch_size(const samsa_batch_hdr_t *hdr)
{
    return (int64_t) hdr->BatchLength + SAMSA_BATCH_LOG_OVERHEAD;
}

static inline int64_t
samsa_batch_last_offset(const samsa_batch_hdr_t *hdr)
{
    return hdr->BaseOffset + hdr->LastOffsetDelta;
}

/* Decode the header at p (len bytes available; the records need not be).
 * @returns SAMSA_ERR__UNDERFLOW when len is too short for the header,
 * UNSUPPORTED_FOR_MESSAGE_FORMAT when Magic is not 2 (magic 0/1 message
 * sets keep Magic at the same byte), CORRUPT_MESSAGE when BatchLength is
 * below the header's size.  hdr is filled as far as it could be read. */
SAMSA_MUST_CHECK samsa_err_t samsa_batch_parse(const uint8_t *p, size_t len,
                                               samsa_batch_hdr_t *hdr);

/* CRC-32C of a whole batch of size bytes (size >= 61), over Attributes to
 * the end, as the Crc field must hold it. */
uint32_t samsa_batch_crc_compute(const uint8_t *p, size_t size);

/* Whether the Crc field of the size-byte batch at p matches its bytes. */
bool samsa_batch_crc_ok(const uint8_t *p, size_t size);

/* ---- records (uncompressed batches only) --------------------------------- */

/* One record, borrowed from the batch's bytes.  A null key or value has
 * len -1 and ptr NULL. */
typedef struct samsa_record {
    int8_t          Attributes;
    int64_t         TimestampDelta;
    int32_t         OffsetDelta;
    int32_t         KeyLen;
    const uint8_t  *Key;
    int32_t         ValueLen;
    const uint8_t  *Value;
    int32_t         HeadersCount;
    const uint8_t  *Headers;        /* the encoded headers */
    size_t          HeadersLen;
} samsa_record_t;

/* Walks the records of one uncompressed batch.  Init with the whole batch
 * (header included); next() returns false at the end or on the first bad
 * record (err then INVALID_RECORD, msg saying what).  After the last
 * record the batch must be used up exactly (Kafka: "Incorrect declared
 * batch size"). */
typedef struct samsa_record_it {
    samsa_rd_t    rd;
    int32_t       count;            /* RecordsCount */
    int32_t       index;            /* records returned so far */
    samsa_err_t   err;
    const char   *msg;              /* static text for err */
} samsa_record_it_t;

void samsa_record_it_init(samsa_record_it_t *it, const uint8_t *batch,
                          size_t size);
bool samsa_record_it_next(samsa_record_it_t *it, samsa_record_t *rec);

/* ---- control batches (KIP-98 transaction markers) ------------------------ */

#define SAMSA_BATCH_CONTROL_ABORT   0   /* ControlRecordType.ABORT */
#define SAMSA_BATCH_CONTROL_COMMIT  1   /* ControlRecordType.COMMIT */

/* The end-transaction marker in the first record of an uncompressed
 * control batch of size bytes at batch (header included): the record's
 * key is int16 version (0) + int16 type, its value int16 version (0) +
 * int32 coordinator epoch.  *type gets the type (any value the key
 * holds: 0 abort, 1 commit, others are not markers), *coordinator_epoch
 * the epoch (-1 when the record has no marker value).
 * @returns INVALID_RECORD when the batch is not a control batch or its
 * first record or key cannot be read. */
SAMSA_MUST_CHECK samsa_err_t samsa_batch_control_parse(const uint8_t *batch,
                                                       size_t size,
                                                       int16_t *type,
                                                       int32_t *coordinator_epoch);

/* ---- produced data: validate, then assign offsets ------------------------ */

/* The topic's rules for produced batches (Kafka's LogValidator). */
typedef struct samsa_batch_rules {
    int64_t  now_ms;                    /* wall clock, for timestamps */
    int32_t  max_message_bytes;         /* max.message.bytes: per batch */
    bool     log_append_time;           /* message.timestamp.type */
    int64_t  timestamp_before_max_ms;   /* message.timestamp.before.max.ms */
    int64_t  timestamp_after_max_ms;    /* message.timestamp.after.max.ms */
    bool     require_keys;              /* cleanup.policy has compact */
    bool     from_client;               /* a producer's data: control batches
                                           are refused and the first
                                           BaseOffset must be 0 (Kafka's
                                           AppendOrigin.CLIENT) */
} samsa_batch_rules_t;

/* What validation found; on error which batch/record failed and why, for
 * the Produce response's RecordErrors and ErrorMessage. */
typedef struct samsa_batch_summary {
    int32_t      nbatches;
    int64_t      nrecords;              /* sum of LastOffsetDelta + 1 */
    int64_t      max_timestamp;         /* largest MaxTimestamp, or -1 */
    bool         compressed;            /* some batch has a codec */
    int32_t      err_batch;             /* failing batch index, else -1 */
    int32_t      err_record;            /* failing record in it, else -1 */
    const char  *err_msg;               /* static text, NULL if none */
} samsa_batch_summary_t;

/* Validate a Produce records blob of len bytes at p: whole magic-2
 * batches back to back (else UNSUPPORTED_FOR_MESSAGE_FORMAT for another
 * magic, CORRUPT_MESSAGE for bad sizes or CRC), each at most
 * max_message_bytes (MESSAGE_TOO_LARGE), RecordsCount == LastOffsetDelta
 * + 1 >= 1 and, from clients, no control batch and a first BaseOffset of
 * 0 (INVALID_RECORD), every
 * record of an uncompressed batch well formed with OffsetDelta 0..n-1 in
 * order and, if require_keys, a key (INVALID_RECORD), CreateTime
 * timestamps within the before/after bounds (INVALID_TIMESTAMP; records
 * with -1 are exempt; compressed batches are checked on BaseTimestamp
 * and MaxTimestamp only).
 * On success each batch is rewritten to Kafka's normal form for the
 * topic's timestamp type where needed: for CreateTime the timestamp-type
 * bit is cleared and an uncompressed batch's MaxTimestamp set to the
 * largest record timestamp (CRC recomputed only if a byte changed).
 * Offsets are left for samsa_batch_assign().  An empty blob is
 * CORRUPT_MESSAGE (Kafka: no records).  sum is always filled.
 * @thread any (handler; no lock needed: p is the caller's) */
SAMSA_MUST_CHECK samsa_err_t samsa_batch_validate(
    uint8_t *p, size_t len, const samsa_batch_rules_t *rules,
    samsa_batch_summary_t *sum);

/* Assign offsets in place to a blob that passed samsa_batch_validate():
 * BaseOffset runs on from first_offset, PartitionLeaderEpoch is set to
 * leader_epoch; with log_append_time_ms >= 0 each batch gets the
 * LogAppendTime bit and MaxTimestamp = log_append_time_ms and a new CRC
 * (BaseTimestamp is kept, as Kafka's in-place path keeps it; readers use
 * MaxTimestamp for every record of a LogAppendTime batch).
 * @returns the offset after the last one assigned. */
int64_t samsa_batch_assign(uint8_t *p, size_t len, int64_t first_offset,
                           int32_t leader_epoch, int64_t log_append_time_ms);

#endif /* SAMSA_PROTO_BATCH_H */
