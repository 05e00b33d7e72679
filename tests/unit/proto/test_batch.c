/* Unit tests for proto/batch.c: record batch v2 header, validation of
 * produced data and in-place offset assignment. */
#include "unit.h"

#include "log/batchgen.h"
#include "proto/batch.h"
#include "proto/recbuild.h"

#define NOW_MS 1700000000000LL

static samsa_batch_rules_t
rules_default(void)
{
    return (samsa_batch_rules_t) {
        .now_ms = NOW_MS,
        .max_message_bytes = 1048588,
        .timestamp_before_max_ms = INT64_MAX,
        .timestamp_after_max_ms = INT64_MAX,
        .from_client = true,
    };
}

static samsa_err_t
validate(samsa_buf_t *b, const samsa_batch_rules_t *rules,
         samsa_batch_summary_t *sum)
{
    samsa_batch_summary_t  tmp;

    return samsa_batch_validate(b->data, b->len, rules,
                                sum != NULL ? sum : &tmp);
}

static void
test_batch_parse_header(void **state)
{
    samsa_buf_t        b = SAMSA_BUF_INIT;
    samsa_batch_hdr_t  hdr;
    size_t             size;

    (void) state;
    size = bg_simple(&b, 3, NOW_MS);
    assert_int_equal(samsa_batch_parse(b.data, b.len, &hdr), SAMSA_ERR_NONE);
    assert_int_equal(hdr.BaseOffset, 0);
    assert_int_equal(samsa_batch_size(&hdr), (int64_t) size);
    assert_int_equal(hdr.PartitionLeaderEpoch, -1);
    assert_int_equal(hdr.Magic, 2);
    assert_int_equal(hdr.LastOffsetDelta, 2);
    assert_int_equal(hdr.BaseTimestamp, NOW_MS);
    assert_int_equal(hdr.MaxTimestamp, NOW_MS + 2);
    assert_int_equal(hdr.ProducerId, -1);
    assert_int_equal(hdr.ProducerEpoch, -1);
    assert_int_equal(hdr.BaseSequence, -1);
    assert_int_equal(hdr.RecordsCount, 3);
    assert_int_equal(samsa_batch_codec(&hdr), SAMSA_BATCH_CODEC_NONE);
    assert_false(samsa_batch_is_log_append_time(&hdr));
    assert_false(samsa_batch_is_transactional(&hdr));
    assert_false(samsa_batch_is_control(&hdr));
    assert_false(samsa_batch_has_delete_horizon(&hdr));
    assert_int_equal(samsa_batch_last_offset(&hdr), 2);
    assert_true(samsa_batch_crc_ok(b.data, size));
    /* short input, other magic, impossible length */
    assert_int_equal(samsa_batch_parse(b.data, 16, &hdr),
                     SAMSA_ERR__UNDERFLOW);
    assert_int_equal(samsa_batch_parse(b.data, 60, &hdr),
                     SAMSA_ERR__UNDERFLOW);
    b.data[SAMSA_BATCH_OFF_Magic] = 1;
    assert_int_equal(samsa_batch_parse(b.data, b.len, &hdr),
                     SAMSA_ERR_UNSUPPORTED_FOR_MESSAGE_FORMAT);
    b.data[SAMSA_BATCH_OFF_Magic] = 2;
    samsa_store_be32(b.data + SAMSA_BATCH_OFF_BatchLength, 48);
    assert_int_equal(samsa_batch_parse(b.data, b.len, &hdr),
                     SAMSA_ERR_CORRUPT_MESSAGE);
    samsa_buf_fini(&b);
}

static void
test_batch_attribute_bits(void **state)
{
    samsa_batch_hdr_t  hdr = { .Attributes = 0x7f };

    (void) state;
    assert_int_equal(samsa_batch_codec(&hdr), 7);
    assert_true(samsa_batch_is_log_append_time(&hdr));
    assert_true(samsa_batch_is_transactional(&hdr));
    assert_true(samsa_batch_is_control(&hdr));
    assert_true(samsa_batch_has_delete_horizon(&hdr));
    hdr.Attributes = SAMSA_BATCH_CODEC_ZSTD;
    assert_int_equal(samsa_batch_codec(&hdr), SAMSA_BATCH_CODEC_ZSTD);
    assert_false(samsa_batch_is_log_append_time(&hdr));
}

static void
test_batch_validate_good_blob(void **state)
{
    samsa_buf_t            b = SAMSA_BUF_INIT;
    samsa_batch_rules_t    rules = rules_default();
    samsa_batch_summary_t  sum;
    bg_spec_t              s = { .nrec = 4, .nheaders = 2, .base_ts = 5000 };

    (void) state;
    bg_simple(&b, 1, 1000);
    bg_batch(&b, &s);
    bg_simple(&b, 7, 3000);
    assert_int_equal(validate(&b, &rules, &sum), SAMSA_ERR_NONE);
    assert_int_equal(sum.nbatches, 3);
    assert_int_equal(sum.nrecords, 12);
    assert_int_equal(sum.max_timestamp, 5003);
    assert_false(sum.compressed);
    assert_int_equal(sum.err_batch, -1);
    assert_null(sum.err_msg);
    samsa_buf_fini(&b);
}

/* Every byte of a batch, flipped, is caught (CRC or a header check). */
static void
test_batch_validate_every_flipped_byte(void **state)
{
    samsa_buf_t          b = SAMSA_BUF_INIT;
    samsa_batch_rules_t  rules = rules_default();
    size_t               i, size;

    (void) state;
    size = bg_simple(&b, 3, NOW_MS);
    for (i = 0; i < size; i++) {
        if (i >= SAMSA_BATCH_OFF_PartitionLeaderEpoch
            && i < SAMSA_BATCH_OFF_Magic) {
            continue;           /* the leader epoch is ours to set */
        }
        b.data[i] ^= 0x40;
        assert_int_not_equal(validate(&b, &rules, NULL), SAMSA_ERR_NONE);
        b.data[i] ^= 0x40;
    }
    assert_int_equal(validate(&b, &rules, NULL), SAMSA_ERR_NONE);
    b.data[7] = 5;                  /* first BaseOffset must be 0 */
    assert_int_equal(validate(&b, &rules, NULL), SAMSA_ERR_INVALID_RECORD);
    rules.from_client = false;
    assert_int_equal(validate(&b, &rules, NULL), SAMSA_ERR_NONE);
    samsa_buf_fini(&b);
}

static void
test_batch_validate_framing_errors(void **state)
{
    samsa_buf_t            b = SAMSA_BUF_INIT;
    samsa_batch_rules_t    rules = rules_default();
    samsa_batch_summary_t  sum;
    size_t                 size, cut;

    (void) state;
    assert_int_equal(samsa_batch_validate(NULL, 0, &rules, &sum),
                     SAMSA_ERR_CORRUPT_MESSAGE);
    bg_simple(&b, 2, NOW_MS);
    size = bg_simple(&b, 2, NOW_MS);
    for (cut = 1; cut < size; cut++) {      /* whole batches only */
        assert_int_equal(samsa_batch_validate(b.data, b.len - cut, &rules,
                                              &sum),
                         SAMSA_ERR_CORRUPT_MESSAGE);
        assert_int_equal(sum.err_batch, 1);
        assert_int_equal(sum.nbatches, 1);
    }
    b.data[size + SAMSA_BATCH_OFF_Magic] = 1;
    assert_int_equal(validate(&b, &rules, &sum),
                     SAMSA_ERR_UNSUPPORTED_FOR_MESSAGE_FORMAT);
    b.data[size + SAMSA_BATCH_OFF_Magic] = 0;
    assert_int_equal(validate(&b, &rules, &sum),
                     SAMSA_ERR_UNSUPPORTED_FOR_MESSAGE_FORMAT);
    samsa_buf_fini(&b);
}

/* Change a header field and re-sign, so that only the semantic check can
 * catch it. */
static samsa_err_t
validate_with_i32(size_t off, uint32_t v, samsa_batch_summary_t *sum)
{
    samsa_buf_t          b = SAMSA_BUF_INIT;
    samsa_batch_rules_t  rules = rules_default();
    samsa_err_t          err;

    bg_simple(&b, 3, NOW_MS);
    samsa_store_be32(b.data + off, v);
    bg_resign(b.data, b.len);
    err = validate(&b, &rules, sum);
    samsa_buf_fini(&b);
    return err;
}

static void
test_batch_validate_counts(void **state)
{
    samsa_batch_summary_t  sum;

    (void) state;
    assert_int_equal(validate_with_i32(SAMSA_BATCH_OFF_RecordsCount, 2, &sum),
                     SAMSA_ERR_INVALID_RECORD);
    assert_int_equal(validate_with_i32(SAMSA_BATCH_OFF_RecordsCount, 0, &sum),
                     SAMSA_ERR_INVALID_RECORD);
    assert_int_equal(validate_with_i32(SAMSA_BATCH_OFF_LastOffsetDelta, 3,
                                       &sum),
                     SAMSA_ERR_INVALID_RECORD);
    assert_int_equal(validate_with_i32(SAMSA_BATCH_OFF_LastOffsetDelta,
                                       0xffffffff, &sum),
                     SAMSA_ERR_INVALID_RECORD);
    assert_non_null(sum.err_msg);
    /* count and delta agree but the records say otherwise */
    {
        samsa_buf_t          b = SAMSA_BUF_INIT;
        samsa_batch_rules_t  rules = rules_default();

        bg_simple(&b, 3, NOW_MS);
        samsa_store_be32(b.data + SAMSA_BATCH_OFF_RecordsCount, 4);
        samsa_store_be32(b.data + SAMSA_BATCH_OFF_LastOffsetDelta, 3);
        bg_resign(b.data, b.len);
        assert_int_equal(validate(&b, &rules, &sum),
                         SAMSA_ERR_INVALID_RECORD);
        samsa_store_be32(b.data + SAMSA_BATCH_OFF_RecordsCount, 2);
        samsa_store_be32(b.data + SAMSA_BATCH_OFF_LastOffsetDelta, 1);
        bg_resign(b.data, b.len);
        assert_int_equal(validate(&b, &rules, &sum),
                         SAMSA_ERR_INVALID_RECORD);   /* bytes left over */
        samsa_buf_fini(&b);
    }
}

/* Offset of record i's first byte (its length varint) in a batch built
 * by bg_simple with small records (1-byte lengths). */
static size_t
record_at(const uint8_t *p, int i)
{
    size_t  off = SAMSA_BATCH_HDR_SIZE;

    while (i-- > 0) {
        off += 1 + (p[off] >> 1);
    }
    return off;
}

static void
test_batch_validate_records(void **state)
{
    samsa_buf_t            b = SAMSA_BUF_INIT;
    samsa_batch_rules_t    rules = rules_default();
    samsa_batch_summary_t  sum;
    size_t                 r1;

    (void) state;
    bg_simple(&b, 3, NOW_MS);
    r1 = record_at(b.data, 1);
    /* record 1's OffsetDelta (after length, attributes, ts delta) */
    b.data[r1 + 3] = 2 << 1;
    bg_resign(b.data, b.len);
    assert_int_equal(validate(&b, &rules, &sum), SAMSA_ERR_INVALID_RECORD);
    assert_int_equal(sum.err_batch, 0);
    assert_int_equal(sum.err_record, 1);
    b.data[r1 + 3] = 1 << 1;
    b.data[r1] = 0x7e;                      /* record length too large */
    bg_resign(b.data, b.len);
    assert_int_equal(validate(&b, &rules, &sum), SAMSA_ERR_INVALID_RECORD);
    b.data[r1] = 0x01;                      /* negative length */
    bg_resign(b.data, b.len);
    assert_int_equal(validate(&b, &rules, &sum), SAMSA_ERR_INVALID_RECORD);
    b.data[r1] = 0xff;                      /* varint running past */
    b.data[r1 + 1] = 0xff;
    bg_resign(b.data, b.len);
    assert_int_equal(validate(&b, &rules, &sum), SAMSA_ERR_INVALID_RECORD);
    samsa_buf_fini(&b);
    /* key length beyond the record */
    bg_simple(&b, 1, NOW_MS);
    b.data[record_at(b.data, 0) + 4] = 40 << 1;
    bg_resign(b.data, b.len);
    assert_int_equal(validate(&b, &rules, &sum), SAMSA_ERR_INVALID_RECORD);
    samsa_buf_fini(&b);
}

static void
test_batch_validate_headers_and_keys(void **state)
{
    samsa_buf_t          b = SAMSA_BUF_INIT;
    samsa_batch_rules_t  rules = rules_default();
    bg_spec_t            s = { .nrec = 2, .no_keys = true, .nheaders = 3 };
    samsa_record_it_t    it;
    samsa_record_t       rec;

    (void) state;
    bg_batch(&b, &s);
    assert_int_equal(validate(&b, &rules, NULL), SAMSA_ERR_NONE);
    samsa_record_it_init(&it, b.data, b.len);
    assert_true(samsa_record_it_next(&it, &rec));
    assert_int_equal(rec.KeyLen, -1);
    assert_null(rec.Key);
    assert_int_equal(rec.ValueLen, 10);
    assert_int_equal(rec.HeadersCount, 3);
    assert_int_equal(rec.HeadersLen, 3 * 6);
    assert_true(samsa_record_it_next(&it, &rec));
    assert_int_equal(rec.OffsetDelta, 1);
    assert_false(samsa_record_it_next(&it, &rec));
    assert_int_equal(it.err, SAMSA_ERR_NONE);
    rules.require_keys = true;              /* cleanup.policy=compact */
    assert_int_equal(validate(&b, &rules, NULL), SAMSA_ERR_INVALID_RECORD);
    samsa_buf_fini(&b);
}

/* A gzip batch of two records, the second with key (or without). */
static void
gzip_batch(samsa_buf_t *b, bool second_key)
{
    static uint8_t     buf[4096];
    samsa_recbuild_t   rb;
    samsa_buf_t        scratch = SAMSA_BUF_INIT;
    size_t             used;
    const char        *v = "vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv";

    samsa_recbuild_init(&rb, buf, sizeof(buf), SAMSA_CODEC_GZIP,
                        SAMSA_CODEC_LEVEL_DEFAULT);
    assert_true(samsa_recbuild_append(&rb, NOW_MS, "k", 1, v, strlen(v),
                                      NULL, 0, &used));
    assert_true(samsa_recbuild_append(&rb, NOW_MS, second_key ? "k" : NULL,
                                      second_key ? 1 : 0, v, strlen(v), NULL,
                                      0, &used));
    assert_int_equal(samsa_recbuild_close(&rb, &scratch), SAMSA_ERR_NONE);
    assert_int_equal(rb.attr_codec, SAMSA_CODEC_GZIP);
    b->len = 0;
    samsa_buf_append(b, buf, samsa_recbuild_size(&rb));
    samsa_buf_fini(&scratch);
}

/* Compacted topics: keys are checked inside compressed batches too. */
static void
test_batch_validate_compressed_keys(void **state)
{
    samsa_buf_t            b = SAMSA_BUF_INIT;
    samsa_batch_rules_t    rules = rules_default();
    samsa_batch_summary_t  sum;

    (void) state;
    rules.require_keys = true;
    gzip_batch(&b, true);
    assert_int_equal(validate(&b, &rules, NULL), SAMSA_ERR_NONE);
    gzip_batch(&b, false);
    assert_int_equal(validate(&b, &rules, &sum), SAMSA_ERR_INVALID_RECORD);
    assert_int_equal(sum.err_record, 1);
    rules.require_keys = false;             /* delete topics don't care */
    assert_int_equal(validate(&b, &rules, NULL), SAMSA_ERR_NONE);
    samsa_buf_fini(&b);
}

static void
test_batch_validate_control_and_size(void **state)
{
    samsa_buf_t          b = SAMSA_BUF_INIT;
    samsa_batch_rules_t  rules = rules_default();
    bg_spec_t            s = { .attrs = SAMSA_BATCH_ATTR_CONTROL
                                        | SAMSA_BATCH_ATTR_TRANSACTIONAL };
    size_t               size;

    (void) state;
    bg_batch(&b, &s);
    assert_int_equal(validate(&b, &rules, NULL), SAMSA_ERR_INVALID_RECORD);
    rules.from_client = false;
    assert_int_equal(validate(&b, &rules, NULL), SAMSA_ERR_NONE);
    samsa_buf_fini(&b);
    rules = rules_default();
    size = bg_simple(&b, 5, NOW_MS);
    rules.max_message_bytes = (int32_t) size;
    assert_int_equal(validate(&b, &rules, NULL), SAMSA_ERR_NONE);
    rules.max_message_bytes = (int32_t) size - 1;
    assert_int_equal(validate(&b, &rules, NULL), SAMSA_ERR_MESSAGE_TOO_LARGE);
    samsa_buf_fini(&b);
}

static void
test_batch_validate_timestamps(void **state)
{
    samsa_buf_t          b = SAMSA_BUF_INIT;
    samsa_batch_rules_t  rules = rules_default();
    bg_spec_t            s = { .nrec = 3, .base_ts = NOW_MS - 100 };

    (void) state;
    bg_batch(&b, &s);
    rules.timestamp_before_max_ms = 100;
    assert_int_equal(validate(&b, &rules, NULL), SAMSA_ERR_NONE);
    rules.timestamp_before_max_ms = 99;     /* record 0 too old */
    assert_int_equal(validate(&b, &rules, NULL),
                     SAMSA_ERR_INVALID_TIMESTAMP);
    rules.log_append_time = true;           /* not checked then */
    assert_int_equal(validate(&b, &rules, NULL), SAMSA_ERR_NONE);
    samsa_buf_fini(&b);
    rules = rules_default();
    s.base_ts = NOW_MS + 10;
    bg_batch(&b, &s);
    rules.timestamp_after_max_ms = 12;
    assert_int_equal(validate(&b, &rules, NULL), SAMSA_ERR_NONE);
    rules.timestamp_after_max_ms = 11;      /* record 2 too far ahead */
    assert_int_equal(validate(&b, &rules, NULL),
                     SAMSA_ERR_INVALID_TIMESTAMP);
    samsa_buf_fini(&b);
    /* NO_TIMESTAMP (-1) records are exempt */
    s = (bg_spec_t) { .nrec = 1, .base_ts = -1 };
    bg_batch(&b, &s);
    rules.timestamp_before_max_ms = 0;
    rules.timestamp_after_max_ms = 0;
    assert_int_equal(validate(&b, &rules, NULL), SAMSA_ERR_NONE);
    samsa_buf_fini(&b);
}

/* A compressed batch is accepted on its header and CRC alone. */
static void
test_batch_validate_compressed_without_decompressing(void **state)
{
    samsa_buf_t            b = SAMSA_BUF_INIT;
    samsa_batch_rules_t    rules = rules_default();
    samsa_batch_summary_t  sum;
    bg_spec_t              s = { .nrec = 5, .attrs = SAMSA_BATCH_CODEC_ZSTD,
                                 .base_ts = NOW_MS };
    size_t                 size;

    (void) state;
    size = bg_batch(&b, &s);
    assert_int_equal(validate(&b, &rules, &sum), SAMSA_ERR_NONE);
    assert_true(sum.compressed);
    assert_int_equal(sum.nrecords, 5);
    assert_int_equal(sum.max_timestamp, NOW_MS + 4);
    b.data[size - 1] ^= 1;                  /* still CRC-checked */
    assert_int_equal(validate(&b, &rules, NULL), SAMSA_ERR_CORRUPT_MESSAGE);
    b.data[size - 1] ^= 1;
    rules.timestamp_after_max_ms = 0;       /* MaxTimestamp checked */
    assert_int_equal(validate(&b, &rules, NULL),
                     SAMSA_ERR_INVALID_TIMESTAMP);
    samsa_buf_fini(&b);
    s.attrs = 5;                            /* no such codec */
    bg_batch(&b, &s);
    assert_int_equal(validate(&b, &rules, NULL), SAMSA_ERR_CORRUPT_MESSAGE);
    samsa_buf_fini(&b);
}

/* On a CreateTime topic MaxTimestamp becomes the records' largest and a
 * producer's LogAppendTime bit is cleared (Kafka's setMaxTimestamp), with
 * a fresh CRC. */
static void
test_batch_validate_normalizes_create_time(void **state)
{
    samsa_buf_t          b = SAMSA_BUF_INIT;
    samsa_batch_rules_t  rules = rules_default();
    samsa_batch_hdr_t    hdr;
    bg_spec_t            s = { .nrec = 3, .base_ts = 5000,
                               .attrs = SAMSA_BATCH_ATTR_LOG_APPEND_TIME };

    (void) state;
    bg_batch(&b, &s);
    samsa_store_be64(b.data + SAMSA_BATCH_OFF_MaxTimestamp, 1);
    bg_resign(b.data, b.len);
    assert_int_equal(validate(&b, &rules, NULL), SAMSA_ERR_NONE);
    assert_int_equal(samsa_batch_parse(b.data, b.len, &hdr), SAMSA_ERR_NONE);
    assert_int_equal(hdr.MaxTimestamp, 5002);
    assert_false(samsa_batch_is_log_append_time(&hdr));
    assert_true(samsa_batch_crc_ok(b.data, b.len));
    samsa_buf_fini(&b);
}

static void
test_batch_assign_offsets(void **state)
{
    samsa_buf_t          b = SAMSA_BUF_INIT;
    samsa_batch_rules_t  rules = rules_default();
    samsa_batch_hdr_t    hdr;
    size_t               s1;

    (void) state;
    s1 = bg_simple(&b, 3, NOW_MS);
    bg_simple(&b, 2, NOW_MS);
    assert_int_equal(validate(&b, &rules, NULL), SAMSA_ERR_NONE);
    assert_int_equal(samsa_batch_assign(b.data, b.len, 100, 7, -1), 105);
    assert_int_equal(samsa_batch_parse(b.data, b.len, &hdr), SAMSA_ERR_NONE);
    assert_int_equal(hdr.BaseOffset, 100);
    assert_int_equal(hdr.PartitionLeaderEpoch, 7);
    assert_int_equal(hdr.MaxTimestamp, NOW_MS + 2);
    assert_true(samsa_batch_crc_ok(b.data, s1));
    assert_int_equal(samsa_batch_parse(b.data + s1, b.len - s1, &hdr),
                     SAMSA_ERR_NONE);
    assert_int_equal(hdr.BaseOffset, 103);
    assert_true(samsa_batch_crc_ok(b.data + s1, b.len - s1));
    samsa_buf_fini(&b);
}

static void
test_batch_assign_log_append_time(void **state)
{
    samsa_buf_t          b = SAMSA_BUF_INIT;
    samsa_batch_rules_t  rules = rules_default();
    samsa_batch_hdr_t    hdr;
    bg_spec_t            s = { .nrec = 4, .base_ts = 5000,
                               .attrs = SAMSA_BATCH_CODEC_LZ4 };
    size_t               s1;

    (void) state;
    s1 = bg_simple(&b, 3, 1234);
    bg_batch(&b, &s);
    rules.log_append_time = true;
    assert_int_equal(validate(&b, &rules, NULL), SAMSA_ERR_NONE);
    assert_int_equal(samsa_batch_assign(b.data, b.len, 0, 3, NOW_MS), 7);
    assert_int_equal(samsa_batch_parse(b.data, b.len, &hdr), SAMSA_ERR_NONE);
    assert_true(samsa_batch_is_log_append_time(&hdr));
    assert_int_equal(hdr.MaxTimestamp, NOW_MS);
    assert_int_equal(hdr.BaseTimestamp, 1234);      /* kept, as Kafka */
    assert_true(samsa_batch_crc_ok(b.data, s1));
    assert_int_equal(samsa_batch_parse(b.data + s1, b.len - s1, &hdr),
                     SAMSA_ERR_NONE);
    assert_true(samsa_batch_is_log_append_time(&hdr));
    assert_int_equal(samsa_batch_codec(&hdr), SAMSA_BATCH_CODEC_LZ4);
    assert_int_equal(hdr.BaseOffset, 3);
    assert_true(samsa_batch_crc_ok(b.data + s1, b.len - s1));
    rules.from_client = false;              /* still valid afterwards */
    assert_int_equal(validate(&b, &rules, NULL), SAMSA_ERR_NONE);
    samsa_buf_fini(&b);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batch_parse_header),
        cmocka_unit_test(test_batch_attribute_bits),
        cmocka_unit_test(test_batch_validate_good_blob),
        cmocka_unit_test(test_batch_validate_every_flipped_byte),
        cmocka_unit_test(test_batch_validate_framing_errors),
        cmocka_unit_test(test_batch_validate_counts),
        cmocka_unit_test(test_batch_validate_records),
        cmocka_unit_test(test_batch_validate_headers_and_keys),
        cmocka_unit_test(test_batch_validate_control_and_size),
        cmocka_unit_test(test_batch_validate_compressed_keys),
        cmocka_unit_test(test_batch_validate_timestamps),
        cmocka_unit_test(test_batch_validate_compressed_without_decompressing),
        cmocka_unit_test(test_batch_validate_normalizes_create_time),
        cmocka_unit_test(test_batch_assign_offsets),
        cmocka_unit_test(test_batch_assign_log_append_time),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
