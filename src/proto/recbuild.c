/*
 * proto/recbuild.c - record batch v2 writer (see recbuild.h).
 * Layout: BaseOffset i64 | Length i32 | PartitionLeaderEpoch i32 | Magic i8
 * | CRC u32 | Attributes i16 | LastOffsetDelta i32 | BaseTimestamp i64 |
 * MaxTimestamp i64 | ProducerId i64 | ProducerEpoch i16 | BaseSequence i32 |
 * RecordsCount i32 | Records.  CRC-32C covers Attributes to the end.
 * Threads: the builder's owner.
 */
#include "proto/recbuild.h"

#include <stdlib.h>
#include <string.h>

#include "proto/batch.h"
#include "util/alloc.h"
#include "util/crc32c.h"
#include "util/diag.h"
#include "util/endian.h"

#define OFF_LENGTH      8
#define OFF_PLE         12
#define OFF_MAGIC       16
#define OFF_CRC         17
#define OFF_ATTR        21
#define OFF_LOD         23
#define OFF_BASE_TS     27
#define OFF_MAX_TS      35
#define OFF_PID         43
#define OFF_EPOCH       51
#define OFF_SEQ         53
#define OFF_COUNT       57

static size_t
uvarlong_size(uint64_t v)
{
    size_t  n = 1;

    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static size_t
varlong_size(int64_t v)
{
    return uvarlong_size(((uint64_t) v << 1) ^ (uint64_t) (v >> 63));
}

static uint8_t *
put_varlong(uint8_t *p, int64_t v)
{
    uint64_t  u = ((uint64_t) v << 1) ^ (uint64_t) (v >> 63);

    while (u >= 0x80) {
        *p++ = (uint8_t) (u | 0x80);
        u >>= 7;
    }
    *p++ = (uint8_t) u;
    return p;
}

/* A length-prefixed field: varint length (-1 for null) then the bytes. */
static size_t
field_size(const void *p, size_t len)
{
    return p == NULL ? 1 : varlong_size((int64_t) len) + len;
}

static uint8_t *
put_field(uint8_t *out, const void *p, size_t len)
{
    if (p == NULL) {
        return put_varlong(out, -1);
    }
    out = put_varlong(out, (int64_t) len);
    if (len > 0) {
        memcpy(out, p, len);
    }
    return out + len;
}

/* The record's body size (everything after its Length varint). */
static size_t
record_body_size(int64_t ts_delta, int32_t offset_delta, const void *key,
                 size_t key_len, const void *value, size_t value_len,
                 const samsa_rechdr_t *hdrs, size_t nhdrs)
{
    size_t  n, i;

    n = 1 + varlong_size(ts_delta) + varlong_size(offset_delta)
        + field_size(key, key_len) + field_size(value, value_len)
        + varlong_size((int64_t) nhdrs);
    for (i = 0; i < nhdrs; i++) {
        n += field_size(hdrs[i].key != NULL ? hdrs[i].key : "",
                        hdrs[i].key_len)
             + field_size(hdrs[i].value, hdrs[i].value_len);
    }
    return n;
}

void
samsa_recbuild_init(samsa_recbuild_t *rb, uint8_t *buf, size_t cap,
                    samsa_codec_t codec, int level)
{
    samsa_assert(cap >= SAMSA_RECBATCH_HDR_SIZE);
    memset(rb, 0, sizeof(*rb));
    rb->buf = buf;
    rb->cap = cap;
    rb->len = SAMSA_RECBATCH_HDR_SIZE;
    rb->codec = codec;
    rb->level = level;
    rb->attr_codec = SAMSA_CODEC_NONE;
    rb->producer_id = SAMSA_RECBATCH_NO_PID;
    rb->producer_epoch = SAMSA_RECBATCH_NO_EPOCH;
    rb->base_seq = SAMSA_RECBATCH_NO_SEQ;
}

size_t
samsa_recbuild_size_upper(size_t key_len, size_t value_len,
                          const samsa_rechdr_t *hdrs, size_t nhdrs)
{
    size_t  n, i;

    /* Length 5 + attributes 1 + ts delta 10 + offset delta 5 + key/value
     * lengths 5 each + header count 5. */
    n = SAMSA_RECBATCH_HDR_SIZE + 5 + 1 + 10 + 5 + 5 + key_len + 5
        + value_len + 5;
    for (i = 0; i < nhdrs; i++) {
        n += 10 + hdrs[i].key_len + hdrs[i].value_len;
    }
    return n;
}

bool
samsa_recbuild_append(samsa_recbuild_t *rb, int64_t ts, const void *key,
                      size_t key_len, const void *value, size_t value_len,
                      const samsa_rechdr_t *hdrs, size_t nhdrs,
                      size_t *appended)
{
    int64_t   ts_delta;
    size_t    body, total, i;
    uint8_t  *p;

    if (rb->closed) {
        return false;
    }
    if (rb->count == 0) {
        rb->base_ts = ts;
        rb->max_ts = ts;
    }
    ts_delta = ts - rb->base_ts;
    body = record_body_size(ts_delta, rb->count, key, key_len, value,
                            value_len, hdrs, nhdrs);
    total = varlong_size((int64_t) body) + body;
    if (total > rb->cap - rb->len) {
        return false;
    }
    p = put_varlong(rb->buf + rb->len, (int64_t) body);
    *p++ = 0;                                   /* record attributes */
    p = put_varlong(p, ts_delta);
    p = put_varlong(p, rb->count);
    p = put_field(p, key, key_len);
    p = put_field(p, value, value_len);
    p = put_varlong(p, (int64_t) nhdrs);
    for (i = 0; i < nhdrs; i++) {
        p = put_field(p, hdrs[i].key != NULL ? hdrs[i].key : "",
                      hdrs[i].key_len);
        p = put_field(p, hdrs[i].value, hdrs[i].value_len);
    }
    samsa_assert((size_t) (p - rb->buf) == rb->len + total);
    rb->len += total;
    rb->count++;
    if (ts > rb->max_ts) {
        rb->max_ts = ts;
    }
    *appended = total;
    return true;
}

void
samsa_recbuild_finish_header(samsa_recbuild_t *rb)
{
    uint8_t   *b = rb->buf;
    uint16_t   attr = (uint16_t) rb->attr_codec;

    if (rb->transactional) {
        attr |= SAMSA_RECBATCH_F_TXN;
    }
    samsa_store_be64(b, 0);                             /* BaseOffset */
    samsa_store_be32(b + OFF_LENGTH, (uint32_t) (rb->len - 12));
    samsa_store_be32(b + OFF_PLE, (uint32_t) -1);
    b[OFF_MAGIC] = 2;
    samsa_store_be16(b + OFF_ATTR, attr);
    samsa_store_be32(b + OFF_LOD, (uint32_t) (rb->count - 1));
    samsa_store_be64(b + OFF_BASE_TS, (uint64_t) rb->base_ts);
    samsa_store_be64(b + OFF_MAX_TS, (uint64_t) rb->max_ts);
    samsa_store_be64(b + OFF_PID, (uint64_t) rb->producer_id);
    samsa_store_be16(b + OFF_EPOCH, (uint16_t) rb->producer_epoch);
    samsa_store_be32(b + OFF_SEQ, (uint32_t) rb->base_seq);
    samsa_store_be32(b + OFF_COUNT, (uint32_t) rb->count);
    samsa_store_be32(b + OFF_CRC,
                     samsa_crc32c(0, b + OFF_ATTR, rb->len - OFF_ATTR));
}

samsa_err_t
samsa_recbuild_close(samsa_recbuild_t *rb, samsa_buf_t *scratch)
{
    size_t       raw = rb->len - SAMSA_RECBATCH_HDR_SIZE;
    samsa_err_t  err;

    if (rb->closed) {
        return SAMSA_ERR_NONE;
    }
    rb->raw_len = rb->len;
    rb->attr_codec = SAMSA_CODEC_NONE;
    if (rb->codec != SAMSA_CODEC_NONE && raw > 0) {
        scratch->len = 0;
        err = samsa_compress(rb->codec, rb->level,
                             rb->buf + SAMSA_RECBATCH_HDR_SIZE, raw, scratch);
        if (err != SAMSA_ERR_NONE) {
            return err;
        }
        if (scratch->len < raw) {
            memcpy(rb->buf + SAMSA_RECBATCH_HDR_SIZE, scratch->data,
                   scratch->len);
            rb->len = SAMSA_RECBATCH_HDR_SIZE + scratch->len;
            rb->attr_codec = rb->codec;
        }
    }
    rb->closed = true;
    samsa_recbuild_finish_header(rb);
    return SAMSA_ERR_NONE;
}

void
samsa_recbuild_set_producer(samsa_recbuild_t *rb, int64_t producer_id,
                            int16_t producer_epoch, int32_t base_seq,
                            bool transactional)
{
    rb->producer_id = producer_id;
    rb->producer_epoch = producer_epoch;
    rb->base_seq = base_seq;
    rb->transactional = transactional;
    if (rb->closed) {
        samsa_recbuild_finish_header(rb);
    }
}

/* Decode a record's encoded headers into hdrs (n of them). */
static bool
recbuild_headers(const samsa_record_t *rec, samsa_rechdr_t *hdrs)
{
    samsa_rd_t  rd;
    int32_t     i, klen, vlen;

    samsa_rd_init(&rd, rec->Headers, rec->HeadersLen);
    for (i = 0; i < rec->HeadersCount; i++) {
        klen = samsa_rd_varint(&rd);
        if (klen < 0 || !samsa_rd_need(&rd, (size_t) klen)) {
            return false;
        }
        hdrs[i].key = (const char *) rd.p;
        hdrs[i].key_len = (size_t) klen;
        rd.p += klen;
        vlen = samsa_rd_varint(&rd);
        if (vlen >= 0 && !samsa_rd_need(&rd, (size_t) vlen)) {
            return false;
        }
        hdrs[i].value = vlen >= 0 ? rd.p : NULL;
        hdrs[i].value_len = vlen >= 0 ? (size_t) vlen : 0;
        rd.p += vlen >= 0 ? vlen : 0;
    }
    return rd.err == SAMSA_ERR_NONE;
}

samsa_err_t
samsa_recbuild_walk(const samsa_recbuild_t *rb, samsa_buf_t *scratch,
                    samsa_recwalk_fn *fn, void *ctx)
{
    const uint8_t      *whole = rb->buf;
    size_t              whole_len = rb->len;
    samsa_rechdr_t     *hdrs = NULL;
    samsa_record_it_t   it;
    samsa_record_t      rec;
    samsa_err_t         err = SAMSA_ERR_NONE;

    if (!rb->closed) {
        return SAMSA_ERR__STATE;
    }
    if (rb->attr_codec != SAMSA_CODEC_NONE) {
        /* the header as it is, then the records decompressed */
        scratch->len = 0;
        samsa_buf_append(scratch, rb->buf, SAMSA_RECBATCH_HDR_SIZE);
        if (samsa_decompress(rb->attr_codec, rb->buf + SAMSA_RECBATCH_HDR_SIZE,
                             rb->len - SAMSA_RECBATCH_HDR_SIZE, SIZE_MAX,
                             scratch) != SAMSA_ERR_NONE) {
            return SAMSA_ERR_CORRUPT_MESSAGE;
        }
        whole = scratch->data;
        whole_len = scratch->len;
    }
    samsa_record_it_init(&it, whole, whole_len);
    while (err == SAMSA_ERR_NONE && samsa_record_it_next(&it, &rec)) {
        if (rec.HeadersCount > 0) {
            hdrs = samsa_realloc(hdrs, (size_t) rec.HeadersCount
                                           * sizeof(*hdrs));
            if (!recbuild_headers(&rec, hdrs)) {
                err = SAMSA_ERR_CORRUPT_MESSAGE;
                break;
            }
        }
        err = fn(ctx, it.index - 1, rb->base_ts + rec.TimestampDelta,
                 rec.Key, rec.KeyLen > 0 ? (size_t) rec.KeyLen : 0, rec.Value,
                 rec.ValueLen > 0 ? (size_t) rec.ValueLen : 0, hdrs,
                 rec.HeadersCount > 0 ? (size_t) rec.HeadersCount : 0);
    }
    samsa_free(hdrs);
    if (err == SAMSA_ERR_NONE
        && (it.err != SAMSA_ERR_NONE || it.index != rb->count)) {
        err = SAMSA_ERR_CORRUPT_MESSAGE;
    }
    return err;
}
