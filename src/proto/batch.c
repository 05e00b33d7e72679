/*
 * proto/batch.c - record batch v2 header, produce-side validation and the
 * in-place offset assignment (see batch.h).  The checks follow Kafka's
 * UnifiedLog.analyzeAndValidateRecords and LogValidator.
 * Threads: any; everything works on caller-owned bytes.
 */
#include "proto/batch.h"

#include "proto/compress.h"

#include "util/crc32c.h"
#include "util/endian.h"

samsa_err_t
samsa_batch_parse(const uint8_t *p, size_t len, samsa_batch_hdr_t *hdr)
{
    samsa_rd_t  rd;

    memset(hdr, 0, sizeof(*hdr));
    if (len <= SAMSA_BATCH_OFF_Magic) {
        return SAMSA_ERR__UNDERFLOW;
    }
    samsa_rd_init(&rd, p, len);
    hdr->BaseOffset = samsa_rd_i64(&rd);
    hdr->BatchLength = samsa_rd_i32(&rd);
    hdr->PartitionLeaderEpoch = samsa_rd_i32(&rd);
    hdr->Magic = samsa_rd_i8(&rd);
    if (hdr->Magic != SAMSA_BATCH_MAGIC_V2) {
        return SAMSA_ERR_UNSUPPORTED_FOR_MESSAGE_FORMAT;
    }
    hdr->Crc = samsa_rd_u32(&rd);
    hdr->Attributes = samsa_rd_i16(&rd);
    hdr->LastOffsetDelta = samsa_rd_i32(&rd);
    hdr->BaseTimestamp = samsa_rd_i64(&rd);
    hdr->MaxTimestamp = samsa_rd_i64(&rd);
    hdr->ProducerId = samsa_rd_i64(&rd);
    hdr->ProducerEpoch = samsa_rd_i16(&rd);
    hdr->BaseSequence = samsa_rd_i32(&rd);
    hdr->RecordsCount = samsa_rd_i32(&rd);
    if (rd.err != SAMSA_ERR_NONE) {
        return SAMSA_ERR__UNDERFLOW;
    }
    if (hdr->BatchLength < SAMSA_BATCH_HDR_SIZE - SAMSA_BATCH_LOG_OVERHEAD) {
        return SAMSA_ERR_CORRUPT_MESSAGE;
    }
    return SAMSA_ERR_NONE;
}

uint32_t
samsa_batch_crc_compute(const uint8_t *p, size_t size)
{
    return samsa_crc32c(0, p + SAMSA_BATCH_OFF_Attributes,
                        size - SAMSA_BATCH_OFF_Attributes);
}

bool
samsa_batch_crc_ok(const uint8_t *p, size_t size)
{
    if (size < SAMSA_BATCH_HDR_SIZE) {
        return false;
    }
    return samsa_load_be32(p + SAMSA_BATCH_OFF_Crc)
           == samsa_batch_crc_compute(p, size);
}

/* ---- records ------------------------------------------------------------- */

void
samsa_record_it_init(samsa_record_it_t *it, const uint8_t *batch,
                     size_t size)
{
    memset(it, 0, sizeof(*it));
    if (size < SAMSA_BATCH_HDR_SIZE) {
        samsa_rd_init(&it->rd, batch, 0);
        it->err = SAMSA_ERR_CORRUPT_MESSAGE;
        it->msg = "batch shorter than its header";
        return;
    }
    it->count = (int32_t) samsa_load_be32(batch + SAMSA_BATCH_OFF_RecordsCount);
    samsa_rd_init(&it->rd, batch + SAMSA_BATCH_HDR_SIZE,
                  size - SAMSA_BATCH_HDR_SIZE);
}

static bool
record_fail(samsa_record_it_t *it, const char *msg)
{
    it->err = SAMSA_ERR_INVALID_RECORD;
    it->msg = msg;
    return false;
}

/* A length-prefixed field (varint length, -1 = null when nullable). */
static bool
record_field(samsa_rd_t *rd, bool nullable, int32_t *len,
             const uint8_t **ptr)
{
    *len = samsa_rd_varint(rd);
    *ptr = NULL;
    if (rd->err != SAMSA_ERR_NONE || *len < (nullable ? -1 : 0)) {
        return false;
    }
    if (*len >= 0) {
        *ptr = rd->p;
        samsa_rd_skip(rd, (size_t) *len);
    }
    return rd->err == SAMSA_ERR_NONE;
}

/* The headers of one record: count, then (key, value) pairs. */
static bool
record_headers(samsa_rd_t *rd, samsa_record_t *rec)
{
    const uint8_t  *ptr;
    int32_t         i, len;

    rec->HeadersCount = samsa_rd_varint(rd);
    rec->Headers = rd->p;
    if (rd->err != SAMSA_ERR_NONE || rec->HeadersCount < 0) {
        return false;
    }
    for (i = 0; i < rec->HeadersCount; i++) {
        if (!record_field(rd, false, &len, &ptr)
            || !record_field(rd, true, &len, &ptr)) {
            return false;
        }
    }
    rec->HeadersLen = (size_t) (rd->p - rec->Headers);
    return true;
}

bool
samsa_record_it_next(samsa_record_it_t *it, samsa_record_t *rec)
{
    samsa_rd_t  body;
    int32_t     len;

    if (it->err != SAMSA_ERR_NONE) {
        return false;
    }
    if (it->index >= it->count) {
        if (samsa_rd_remain(&it->rd) != 0) {
            return record_fail(it, "Incorrect declared batch size, "
                                   "records still remaining");
        }
        return false;
    }
    len = samsa_rd_varint(&it->rd);
    if (it->rd.err != SAMSA_ERR_NONE || len < 0
        || (size_t) len > samsa_rd_remain(&it->rd)) {
        return record_fail(it, "Invalid record size");
    }
    samsa_rd_init(&body, it->rd.p, (size_t) len);
    samsa_rd_skip(&it->rd, (size_t) len);
    memset(rec, 0, sizeof(*rec));
    rec->Attributes = samsa_rd_i8(&body);
    rec->TimestampDelta = samsa_rd_varlong(&body);
    rec->OffsetDelta = samsa_rd_varint(&body);
    if (!record_field(&body, true, &rec->KeyLen, &rec->Key)
        || !record_field(&body, true, &rec->ValueLen, &rec->Value)) {
        return record_fail(it, "Invalid record key or value size");
    }
    if (!record_headers(&body, rec)) {
        return record_fail(it, "Found invalid record headers");
    }
    if (samsa_rd_remain(&body) != 0) {
        return record_fail(it, "Invalid record size: bytes left in the "
                               "record payload");
    }
    it->index++;
    return true;
}

/* ---- validation ---------------------------------------------------------- */

/* Per-batch state between the checks and the normal-form rewrite. */
typedef struct batch_check {
    const samsa_batch_rules_t  *rules;
    samsa_batch_summary_t      *sum;
    int64_t                     rec_max_ts;    /* largest record ts */
} batch_check_t;

static samsa_err_t
batch_fail(batch_check_t *bc, samsa_err_t err, int32_t record,
           const char *msg)
{
    bc->sum->err_record = record;
    bc->sum->err_msg = msg;
    return err;
}

/* KIP-937: a CreateTime timestamp must lie within
 * [now - before.max.ms, now + after.max.ms]; -1 (none) is exempt. */
static bool
batch_ts_ok(const samsa_batch_rules_t *rules, int64_t ts)
{
    int64_t  lo, hi;

    if (rules->log_append_time || ts == SAMSA_BATCH_NO_TIMESTAMP) {
        return true;
    }
    if (__builtin_sub_overflow(rules->now_ms, rules->timestamp_before_max_ms,
                               &lo)) {
        lo = INT64_MIN;
    }
    if (__builtin_add_overflow(rules->now_ms, rules->timestamp_after_max_ms,
                               &hi)) {
        hi = INT64_MAX;
    }
    return ts >= lo && ts <= hi;
}

/* Every record of an uncompressed batch: well formed, OffsetDelta 0..n-1,
 * key present if required, timestamp in bounds. */
static samsa_err_t
batch_check_records(batch_check_t *bc, const uint8_t *p, size_t size,
                    const samsa_batch_hdr_t *hdr)
{
    samsa_record_it_t  it;
    samsa_record_t     rec;
    int64_t            ts;

    bc->rec_max_ts = SAMSA_BATCH_NO_TIMESTAMP;
    samsa_record_it_init(&it, p, size);
    while (samsa_record_it_next(&it, &rec)) {
        if (rec.OffsetDelta != it.index - 1) {
            return batch_fail(bc, SAMSA_ERR_INVALID_RECORD, it.index - 1,
                              "Record offset deltas are not 0..n-1 in order");
        }
        if (bc->rules->require_keys && rec.KeyLen < 0) {
            return batch_fail(bc, SAMSA_ERR_INVALID_RECORD, it.index - 1,
                              "Compacted topic cannot accept message "
                              "without key");
        }
        if (__builtin_add_overflow(hdr->BaseTimestamp, rec.TimestampDelta,
                                   &ts)
            || !batch_ts_ok(bc->rules, ts)) {
            return batch_fail(bc, SAMSA_ERR_INVALID_TIMESTAMP, it.index - 1,
                              "Timestamp of the record is out of the "
                              "acceptable range");
        }
        if (ts > bc->rec_max_ts) {
            bc->rec_max_ts = ts;
        }
    }
    if (it.err != SAMSA_ERR_NONE) {
        return batch_fail(bc, it.err, it.index, it.msg);
    }
    if (it.index != hdr->RecordsCount) {
        return batch_fail(bc, SAMSA_ERR_INVALID_RECORD, it.index,
                          "Incorrect declared batch size, premature EOF");
    }
    return SAMSA_ERR_NONE;
}

/* A compressed batch on a compacted topic: decompress it and check its
 * records as an uncompressed one (Kafka's LogValidator does the same: a
 * record without a key is INVALID_RECORD). */
static samsa_err_t
batch_check_compressed(batch_check_t *bc, const uint8_t *p, size_t size,
                       const samsa_batch_hdr_t *hdr)
{
    samsa_buf_t  plain = SAMSA_BUF_INIT;
    samsa_err_t  err;
    size_t       max_out = size * 255 + (1u << 20);

    if (max_out > (256u << 20)) {
        max_out = 256u << 20;
    }
    samsa_buf_append(&plain, p, SAMSA_BATCH_HDR_SIZE);
    err = samsa_decompress((samsa_codec_t) samsa_batch_codec(hdr),
                           p + SAMSA_BATCH_HDR_SIZE,
                           size - SAMSA_BATCH_HDR_SIZE, max_out, &plain);
    if (err != SAMSA_ERR_NONE) {
        err = batch_fail(bc, SAMSA_ERR_CORRUPT_MESSAGE, -1,
                         "Record batch cannot be decompressed");
    } else {
        err = batch_check_records(bc, plain.data, plain.len, hdr);
    }
    samsa_buf_fini(&plain);
    return err;
}

/* The header-level checks of one batch of size bytes. */
static samsa_err_t
batch_check_header(batch_check_t *bc, const uint8_t *p, int64_t size,
                   const samsa_batch_hdr_t *hdr)
{
    const samsa_batch_rules_t  *rules = bc->rules;

    if (size > rules->max_message_bytes) {
        return batch_fail(bc, SAMSA_ERR_MESSAGE_TOO_LARGE, -1,
                          "Batch is larger than max.message.bytes");
    }
    if (!samsa_batch_crc_ok(p, (size_t) size)) {
        return batch_fail(bc, SAMSA_ERR_CORRUPT_MESSAGE, -1,
                          "Record batch is corrupt (CRC mismatch)");
    }
    if (samsa_batch_codec(hdr) > SAMSA_BATCH_CODEC_ZSTD) {
        return batch_fail(bc, SAMSA_ERR_CORRUPT_MESSAGE, -1,
                          "Unknown compression codec");
    }
    if (rules->from_client && samsa_batch_is_control(hdr)) {
        return batch_fail(bc, SAMSA_ERR_INVALID_RECORD, -1,
                          "Clients are not allowed to write control "
                          "records");
    }
    if (hdr->LastOffsetDelta < 0 || hdr->RecordsCount <= 0
        || hdr->RecordsCount != hdr->LastOffsetDelta + 1) {
        return batch_fail(bc, SAMSA_ERR_INVALID_RECORD, -1,
                          "Invalid reported count for record batch");
    }
    if (samsa_batch_codec(hdr) != SAMSA_BATCH_CODEC_NONE
        && (!batch_ts_ok(rules, hdr->BaseTimestamp)
            || !batch_ts_ok(rules, hdr->MaxTimestamp))) {
        return batch_fail(bc, SAMSA_ERR_INVALID_TIMESTAMP, -1,
                          "Timestamp of the batch is out of the "
                          "acceptable range");
    }
    return SAMSA_ERR_NONE;
}

/* Kafka's setMaxTimestamp(CREATE_TIME, max) on a CreateTime topic: clear
 * the LogAppendTime bit, set MaxTimestamp (to the records' largest for an
 * uncompressed batch), and re-sign if anything changed. */
static void
batch_normalize(uint8_t *p, size_t size, const samsa_batch_hdr_t *hdr,
                int64_t max_ts)
{
    uint16_t  attr = (uint16_t) hdr->Attributes;

    if (!samsa_batch_is_log_append_time(hdr) && hdr->MaxTimestamp == max_ts) {
        return;
    }
    attr &= (uint16_t) ~SAMSA_BATCH_ATTR_LOG_APPEND_TIME;
    samsa_store_be16(p + SAMSA_BATCH_OFF_Attributes, attr);
    samsa_store_be64(p + SAMSA_BATCH_OFF_MaxTimestamp, (uint64_t) max_ts);
    samsa_store_be32(p + SAMSA_BATCH_OFF_Crc,
                     samsa_batch_crc_compute(p, size));
}

/* One batch at p with remain bytes left in the blob; *size gets its size. */
static samsa_err_t
batch_check_one(batch_check_t *bc, uint8_t *p, size_t remain, int64_t *size)
{
    samsa_batch_hdr_t  hdr;
    samsa_err_t        err;
    int64_t            max_ts;

    err = samsa_batch_parse(p, remain, &hdr);
    if (err == SAMSA_ERR__UNDERFLOW) {
        return batch_fail(bc, SAMSA_ERR_CORRUPT_MESSAGE, -1,
                          "Truncated record batch header");
    }
    if (err != SAMSA_ERR_NONE) {
        return batch_fail(bc, err, -1,
                          err == SAMSA_ERR_CORRUPT_MESSAGE
                              ? "Record batch length too small"
                              : "Only magic 2 record batches are accepted");
    }
    *size = samsa_batch_size(&hdr);
    if ((uint64_t) *size > remain) {
        return batch_fail(bc, SAMSA_ERR_CORRUPT_MESSAGE, -1,
                          "Record batch length exceeds the data");
    }
    if (bc->rules->from_client && bc->sum->nbatches == 0
        && hdr.BaseOffset != 0) {
        return batch_fail(bc, SAMSA_ERR_INVALID_RECORD, -1,
                          "The baseOffset of the record batch in the "
                          "append should be 0");
    }
    err = batch_check_header(bc, p, *size, &hdr);
    if (err == SAMSA_ERR_NONE && samsa_batch_codec(&hdr) == 0) {
        err = batch_check_records(bc, p, (size_t) *size, &hdr);
    } else if (err == SAMSA_ERR_NONE && bc->rules->require_keys) {
        err = batch_check_compressed(bc, p, (size_t) *size, &hdr);
    }
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    bc->sum->nrecords += hdr.RecordsCount;
    bc->sum->compressed |= samsa_batch_codec(&hdr) != 0;
    max_ts = samsa_batch_codec(&hdr) == 0 ? bc->rec_max_ts : hdr.MaxTimestamp;
    if (!bc->rules->log_append_time) {
        batch_normalize(p, (size_t) *size, &hdr, max_ts);
        if (max_ts > bc->sum->max_timestamp) {
            bc->sum->max_timestamp = max_ts;
        }
    }
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_batch_validate(uint8_t *p, size_t len, const samsa_batch_rules_t *rules,
                     samsa_batch_summary_t *sum)
{
    batch_check_t  bc = { .rules = rules, .sum = sum };
    size_t         off = 0;
    int64_t        size = 0;
    samsa_err_t    err;

    memset(sum, 0, sizeof(*sum));
    sum->max_timestamp = SAMSA_BATCH_NO_TIMESTAMP;
    sum->err_batch = -1;
    sum->err_record = -1;
    if (len == 0) {
        sum->err_msg = "No record batches";
        return SAMSA_ERR_CORRUPT_MESSAGE;
    }
    while (off < len) {
        err = batch_check_one(&bc, p + off, len - off, &size);
        if (err != SAMSA_ERR_NONE) {
            sum->err_batch = sum->nbatches;
            return err;
        }
        sum->nbatches++;
        off += (size_t) size;
    }
    return SAMSA_ERR_NONE;
}

int64_t
samsa_batch_assign(uint8_t *p, size_t len, int64_t first_offset,
                   int32_t leader_epoch, int64_t log_append_time_ms)
{
    size_t    off = 0, size;
    int64_t   next = first_offset;
    uint16_t  attr;
    uint8_t  *b;

    while (len - off >= SAMSA_BATCH_HDR_SIZE) {
        b = p + off;
        size = (size_t) samsa_load_be32(b + SAMSA_BATCH_OFF_BatchLength)
               + SAMSA_BATCH_LOG_OVERHEAD;
        if (size > len - off) {
            break;                      /* not validated: leave it */
        }
        samsa_store_be64(b + SAMSA_BATCH_OFF_BaseOffset, (uint64_t) next);
        samsa_store_be32(b + SAMSA_BATCH_OFF_PartitionLeaderEpoch,
                         (uint32_t) leader_epoch);
        if (log_append_time_ms >= 0) {
            attr = samsa_load_be16(b + SAMSA_BATCH_OFF_Attributes);
            attr |= SAMSA_BATCH_ATTR_LOG_APPEND_TIME;
            samsa_store_be16(b + SAMSA_BATCH_OFF_Attributes, attr);
            samsa_store_be64(b + SAMSA_BATCH_OFF_MaxTimestamp,
                             (uint64_t) log_append_time_ms);
            samsa_store_be32(b + SAMSA_BATCH_OFF_Crc,
                             samsa_batch_crc_compute(b, size));
        }
        next += (int64_t) (int32_t) samsa_load_be32(
                    b + SAMSA_BATCH_OFF_LastOffsetDelta) + 1;
        off += size;
    }
    return next;
}

/* ---- control batches ---------------------------------------------------- */

samsa_err_t
samsa_batch_control_parse(const uint8_t *batch, size_t size, int16_t *type,
                          int32_t *coordinator_epoch)
{
    samsa_batch_hdr_t  hdr;
    samsa_record_it_t  it;
    samsa_record_t     rec;

    *type = -1;
    *coordinator_epoch = -1;
    if (samsa_batch_parse(batch, size, &hdr) != SAMSA_ERR_NONE
        || !samsa_batch_is_control(&hdr)
        || samsa_batch_codec(&hdr) != SAMSA_BATCH_CODEC_NONE
        || (uint64_t) samsa_batch_size(&hdr) > size) {
        return SAMSA_ERR_INVALID_RECORD;
    }
    samsa_record_it_init(&it, batch, (size_t) samsa_batch_size(&hdr));
    if (!samsa_record_it_next(&it, &rec) || rec.KeyLen < 4) {
        return SAMSA_ERR_INVALID_RECORD;
    }
    *type = (int16_t) samsa_load_be16(rec.Key + 2);
    if (rec.ValueLen >= 6) {
        *coordinator_epoch = (int32_t) samsa_load_be32(rec.Value + 2);
    }
    return SAMSA_ERR_NONE;
}
