/*
 * tests/unit/log/txngen.h - idempotent and transactional batches and
 * transaction markers (control batches) for the producer-state tests.
 * Header-only; every helper is static inline.
 */
#ifndef SAMSA_TESTS_UNIT_LOG_TXNGEN_H
#define SAMSA_TESTS_UNIT_LOG_TXNGEN_H

#include "log/batchgen.h"

/* Append a batch of nrec records from producer pid/epoch starting at
 * sequence seq (transactional if txn) to b; returns its size. */
static inline size_t
tg_batch(samsa_buf_t *b, int nrec, int64_t pid, int16_t epoch, int32_t seq,
         bool txn, int64_t ts)
{
    bg_spec_t  s = { .nrec = nrec, .base_ts = ts,
                     .attrs = txn ? SAMSA_BATCH_ATTR_TRANSACTIONAL : 0 };
    size_t     start = b->len, size;
    uint8_t   *p;

    size = bg_batch(b, &s);
    p = b->data + start;
    samsa_store_be64(p + SAMSA_BATCH_OFF_ProducerId, (uint64_t) pid);
    samsa_store_be16(p + SAMSA_BATCH_OFF_ProducerEpoch, (uint16_t) epoch);
    samsa_store_be32(p + SAMSA_BATCH_OFF_BaseSequence, (uint32_t) seq);
    bg_resign(p, size);
    return size;
}

/* Append a commit (type 1) or abort (type 0) marker of pid/epoch with
 * coordinator epoch coord to b, as a coordinator writes it; returns its
 * size. */
static inline size_t
tg_marker(samsa_buf_t *b, int64_t pid, int16_t epoch, int16_t type,
          int32_t coord, int64_t ts)
{
    uint8_t   hdr[SAMSA_BATCH_HDR_SIZE] = { 0 }, rec[32], *p;
    size_t    start = b->len, size, n = 0;

    samsa_store_be32(hdr + SAMSA_BATCH_OFF_PartitionLeaderEpoch, 0xffffffff);
    hdr[SAMSA_BATCH_OFF_Magic] = 2;
    samsa_store_be16(hdr + SAMSA_BATCH_OFF_Attributes,
                     SAMSA_BATCH_ATTR_TRANSACTIONAL | SAMSA_BATCH_ATTR_CONTROL);
    samsa_store_be64(hdr + SAMSA_BATCH_OFF_BaseTimestamp, (uint64_t) ts);
    samsa_store_be64(hdr + SAMSA_BATCH_OFF_MaxTimestamp, (uint64_t) ts);
    samsa_store_be64(hdr + SAMSA_BATCH_OFF_ProducerId, (uint64_t) pid);
    samsa_store_be16(hdr + SAMSA_BATCH_OFF_ProducerEpoch, (uint16_t) epoch);
    samsa_store_be32(hdr + SAMSA_BATCH_OFF_BaseSequence, 0xffffffff);
    samsa_store_be32(hdr + SAMSA_BATCH_OFF_RecordsCount, 1);
    rec[n++] = 0;                   /* attributes */
    rec[n++] = 0;                   /* timestamp delta */
    rec[n++] = 0;                   /* offset delta */
    rec[n++] = 8;                   /* key length 4 (zigzag) */
    rec[n++] = 0;
    rec[n++] = 0;                   /* version 0 */
    rec[n++] = 0;
    rec[n++] = (uint8_t) type;
    rec[n++] = 12;                  /* value length 6 */
    rec[n++] = 0;
    rec[n++] = 0;                   /* version 0 */
    samsa_store_be32(rec + n, (uint32_t) coord);
    n += 4;
    rec[n++] = 0;                   /* headers */
    samsa_buf_append(b, hdr, sizeof(hdr));
    bg_varlong(b, (int64_t) n);
    samsa_buf_append(b, rec, n);
    size = b->len - start;
    p = b->data + start;
    samsa_store_be32(p + SAMSA_BATCH_OFF_BatchLength,
                     (uint32_t) (size - SAMSA_BATCH_LOG_OVERHEAD));
    bg_resign(p, size);
    return size;
}

#endif /* SAMSA_TESTS_UNIT_LOG_TXNGEN_H */
