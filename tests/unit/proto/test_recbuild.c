/*
 * tests/unit/proto/test_recbuild.c - record batch v2 as written by the
 * builder: header fields, CRC-32C, records (zigzag varints, null key and
 * value, headers), compression at close, producer state rewrites.
 */
#include "unit.h"

#include <stdio.h>

#include <isa-l/crc.h>

#include "proto/rd.h"
#include "proto/recbuild.h"
#include "util/alloc.h"
#include "util/endian.h"

static uint32_t
crc32c(const uint8_t *p, size_t n)
{
    return ~crc32_iscsi((unsigned char *) (uintptr_t) p, (int) n, 0xFFFFFFFF);
}

typedef struct hdr_fields {
    int64_t   base_offset;
    int32_t   length;
    int32_t   ple;
    int8_t    magic;
    uint32_t  crc;
    int16_t   attr;
    int32_t   lod;
    int64_t   base_ts;
    int64_t   max_ts;
    int64_t   pid;
    int16_t   epoch;
    int32_t   seq;
    int32_t   count;
} hdr_fields_t;

static hdr_fields_t
read_header(const uint8_t *b, size_t len)
{
    samsa_rd_t    rd;
    hdr_fields_t  h;

    samsa_rd_init(&rd, b, len);
    h.base_offset = samsa_rd_i64(&rd);
    h.length = samsa_rd_i32(&rd);
    h.ple = samsa_rd_i32(&rd);
    h.magic = samsa_rd_i8(&rd);
    h.crc = samsa_rd_u32(&rd);
    h.attr = samsa_rd_i16(&rd);
    h.lod = samsa_rd_i32(&rd);
    h.base_ts = samsa_rd_i64(&rd);
    h.max_ts = samsa_rd_i64(&rd);
    h.pid = samsa_rd_i64(&rd);
    h.epoch = samsa_rd_i16(&rd);
    h.seq = samsa_rd_i32(&rd);
    h.count = samsa_rd_i32(&rd);
    assert_int_equal(rd.err, SAMSA_ERR_NONE);
    return h;
}

/* Read one record; checks its Length prefix matches. */
static void
read_record(samsa_rd_t *rd, int64_t *ts_delta, int32_t *off_delta,
            samsa_slice_t *key, samsa_slice_t *value, int32_t *nhdrs,
            samsa_slice_t *hk, samsa_slice_t *hv)
{
    int32_t         len = samsa_rd_varint(rd), n;
    const uint8_t  *start = rd->p;

    assert_int_equal(samsa_rd_i8(rd), 0);
    *ts_delta = samsa_rd_varlong(rd);
    *off_delta = samsa_rd_varint(rd);
    n = samsa_rd_varint(rd);
    *key = n < 0 ? SAMSA_SLICE_NULL : (samsa_slice_t) { (const char *) rd->p,
                                                       (size_t) n };
    samsa_rd_skip(rd, n < 0 ? 0 : (size_t) n);
    n = samsa_rd_varint(rd);
    *value = n < 0 ? SAMSA_SLICE_NULL
                   : (samsa_slice_t) { (const char *) rd->p, (size_t) n };
    samsa_rd_skip(rd, n < 0 ? 0 : (size_t) n);
    *nhdrs = samsa_rd_varint(rd);
    if (*nhdrs > 0) {
        n = samsa_rd_varint(rd);
        *hk = (samsa_slice_t) { (const char *) rd->p, (size_t) n };
        samsa_rd_skip(rd, (size_t) n);
        n = samsa_rd_varint(rd);
        *hv = n < 0 ? SAMSA_SLICE_NULL
                    : (samsa_slice_t) { (const char *) rd->p, (size_t) n };
        samsa_rd_skip(rd, n < 0 ? 0 : (size_t) n);
    }
    assert_int_equal(rd->err, SAMSA_ERR_NONE);
    assert_int_equal(rd->p - start, len);
}

static void
test_recbuild_uncompressed_layout(void **state)
{
    uint8_t           buf[1024];
    samsa_recbuild_t  rb;
    samsa_buf_t       scratch = SAMSA_BUF_INIT;
    samsa_rechdr_t    h = { "trace", 5, "abc", 3 };
    hdr_fields_t      f;
    samsa_rd_t        rd;
    samsa_slice_t     key, value, hk, hv;
    int64_t           tsd;
    int32_t           od, nh;
    size_t            n;

    (void) state;
    samsa_recbuild_init(&rb, buf, sizeof(buf), SAMSA_CODEC_NONE,
                        SAMSA_CODEC_LEVEL_DEFAULT);
    assert_true(samsa_recbuild_append(&rb, 1700000000000LL, "k1", 2, "v1", 2,
                                      NULL, 0, &n));
    /* 1 length + 1 attr + 1 ts + 1 off + 1+2 key + 1+2 value + 1 hdrs */
    assert_int_equal(n, 11);
    assert_true(samsa_recbuild_append(&rb, 1699999999000LL, NULL, 0, NULL, 0,
                                      &h, 1, &n));
    assert_true(samsa_recbuild_append(&rb, 1700000005000LL, "", 0, "x", 1,
                                      NULL, 0, &n));
    assert_int_equal(samsa_recbuild_close(&rb, &scratch), SAMSA_ERR_NONE);
    f = read_header(buf, rb.len);
    assert_int_equal(f.base_offset, 0);
    assert_int_equal(f.length, rb.len - 12);
    assert_int_equal(f.ple, -1);
    assert_int_equal(f.magic, 2);
    assert_int_equal(f.attr, 0);
    assert_int_equal(f.lod, 2);
    assert_int_equal(f.base_ts, 1700000000000LL);
    assert_int_equal(f.max_ts, 1700000005000LL);
    assert_int_equal(f.pid, -1);
    assert_int_equal(f.epoch, -1);
    assert_int_equal(f.seq, -1);
    assert_int_equal(f.count, 3);
    assert_int_equal(f.crc, crc32c(buf + 21, rb.len - 21));

    samsa_rd_init(&rd, buf + 61, rb.len - 61);
    read_record(&rd, &tsd, &od, &key, &value, &nh, &hk, &hv);
    assert_int_equal(tsd, 0);
    assert_int_equal(od, 0);
    assert_true(samsa_slice_eq_cstr(key, "k1"));
    assert_true(samsa_slice_eq_cstr(value, "v1"));
    assert_int_equal(nh, 0);
    read_record(&rd, &tsd, &od, &key, &value, &nh, &hk, &hv);
    assert_int_equal(tsd, -1000);               /* zigzag negative delta */
    assert_int_equal(od, 1);
    assert_true(samsa_slice_is_null(key));
    assert_true(samsa_slice_is_null(value));
    assert_int_equal(nh, 1);
    assert_true(samsa_slice_eq_cstr(hk, "trace"));
    assert_true(samsa_slice_eq_cstr(hv, "abc"));
    read_record(&rd, &tsd, &od, &key, &value, &nh, &hk, &hv);
    assert_int_equal(tsd, 5000);
    assert_int_equal(od, 2);
    assert_false(samsa_slice_is_null(key));
    assert_int_equal(key.len, 0);
    assert_int_equal(samsa_rd_remain(&rd), 0);
    samsa_buf_fini(&scratch);
}

/* The exact bytes of a one-record batch, for a record the Java client
 * would write identically (key "a", value "b", ts 0, no headers). */
static void
test_recbuild_golden_record(void **state)
{
    static const uint8_t  rec[] = { 0x10, 0x00, 0x00, 0x00, 0x02, 'a',
                                    0x02, 'b', 0x00 };
    uint8_t               buf[128];
    samsa_recbuild_t      rb;
    samsa_buf_t           scratch = SAMSA_BUF_INIT;
    size_t                n;

    (void) state;
    samsa_recbuild_init(&rb, buf, sizeof(buf), SAMSA_CODEC_NONE,
                        SAMSA_CODEC_LEVEL_DEFAULT);
    assert_true(samsa_recbuild_append(&rb, 0, "a", 1, "b", 1, NULL, 0, &n));
    assert_int_equal(samsa_recbuild_close(&rb, &scratch), SAMSA_ERR_NONE);
    assert_int_equal(rb.len, 61 + sizeof(rec));
    assert_memory_equal(buf + 61, rec, sizeof(rec));
    samsa_buf_fini(&scratch);
}

static void
test_recbuild_room_and_first_record(void **state)
{
    uint8_t           buf[100];
    samsa_recbuild_t  rb;
    char              big[200];
    size_t            n;

    (void) state;
    memset(big, 'x', sizeof(big));
    samsa_recbuild_init(&rb, buf, sizeof(buf), SAMSA_CODEC_NONE,
                        SAMSA_CODEC_LEVEL_DEFAULT);
    assert_false(samsa_recbuild_append(&rb, 0, NULL, 0, big, sizeof(big),
                                       NULL, 0, &n));
    assert_int_equal(rb.count, 0);
    assert_true(samsa_recbuild_append(&rb, 0, NULL, 0, big, 20, NULL, 0,
                                      &n));
    assert_false(samsa_recbuild_append(&rb, 0, NULL, 0, big, 20, NULL, 0,
                                       &n));
    assert_int_equal(rb.count, 1);
    assert_true(samsa_recbuild_size_upper(0, 200, NULL, 0) >= 61 + 200 + 8);
}

static void
test_recbuild_compressed_and_producer_state(void **state)
{
    samsa_codec_t      c;
    samsa_recbuild_t   rb;
    samsa_buf_t        scratch = SAMSA_BUF_INIT, out = SAMSA_BUF_INIT;
    uint8_t           *buf = samsa_malloc(16384);
    hdr_fields_t       f;
    size_t             n, raw_len;
    int                i;
    char               v[64];

    (void) state;
    for (c = SAMSA_CODEC_GZIP; c <= SAMSA_CODEC_ZSTD; c++) {
        samsa_recbuild_init(&rb, buf, 16384, c, SAMSA_CODEC_LEVEL_DEFAULT);
        for (i = 0; i < 100; i++) {
            snprintf(v, sizeof(v), "value-%04d-aaaaaaaaaaaaaaaaaaaa", i);
            assert_true(samsa_recbuild_append(&rb, 1000 + i, NULL, 0, v,
                                              strlen(v), NULL, 0, &n));
        }
        raw_len = rb.len - 61;
        assert_int_equal(samsa_recbuild_close(&rb, &scratch), SAMSA_ERR_NONE);
        f = read_header(buf, rb.len);
        assert_int_equal(f.attr & 7, c);
        assert_true(rb.len - 61 < raw_len);
        assert_int_equal(f.crc, crc32c(buf + 21, rb.len - 21));
        out.len = 0;
        assert_int_equal(samsa_decompress(c, buf + 61, rb.len - 61, 1 << 20,
                                          &out), SAMSA_ERR_NONE);
        assert_int_equal(out.len, raw_len);
        /* A retry after an epoch bump rewrites pid/epoch/seq and CRC. */
        samsa_recbuild_set_producer(&rb, 4000, 3, 77, false);
        f = read_header(buf, rb.len);
        assert_int_equal(f.pid, 4000);
        assert_int_equal(f.epoch, 3);
        assert_int_equal(f.seq, 77);
        assert_int_equal(f.crc, crc32c(buf + 21, rb.len - 21));
        assert_int_equal(f.count, 100);
        assert_int_equal(f.max_ts, 1099);
    }
    /* Incompressible records go out uncompressed (codec bits 0). */
    samsa_recbuild_init(&rb, buf, 16384, SAMSA_CODEC_ZSTD,
                        SAMSA_CODEC_LEVEL_DEFAULT);
    assert_true(samsa_recbuild_append(&rb, 0, NULL, 0, "q", 1, NULL, 0, &n));
    assert_int_equal(samsa_recbuild_close(&rb, &scratch), SAMSA_ERR_NONE);
    f = read_header(buf, rb.len);
    assert_int_equal(f.attr & 7, 0);
    assert_false(samsa_recbuild_append(&rb, 0, NULL, 0, "q", 1, NULL, 0, &n));
    samsa_buf_fini(&scratch);
    samsa_buf_fini(&out);
    samsa_free(buf);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_recbuild_uncompressed_layout),
        cmocka_unit_test(test_recbuild_golden_record),
        cmocka_unit_test(test_recbuild_room_and_first_record),
        cmocka_unit_test(test_recbuild_compressed_and_producer_state),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
