/* Unit tests for proto/wr.c: the writer, checked byte-wise and against
 * the reader. */
#include "unit.h"

#include <stdlib.h>
#include <unistd.h>

#include "proto/rd.h"
#include "proto/wr.h"
#include "proto/gen/DeleteTopics.h"

typedef struct fixture {
    samsa_buf_t  buf;
    samsa_wr_t   wr;
} fixture_t;

static int
setup(void **state)
{
    fixture_t  *fx = calloc(1, sizeof(*fx));

    samsa_buf_init(&fx->buf, 0);
    samsa_wr_init(&fx->wr, &fx->buf);
    *state = fx;
    return 0;
}

static int
teardown(void **state)
{
    fixture_t  *fx = *state;

    samsa_buf_fini(&fx->buf);
    free(fx);
    return 0;
}

static void
expect_bytes(const fixture_t *fx, const uint8_t *want, size_t n)
{
    assert_int_equal(fx->buf.len, n);
    assert_memory_equal(fx->buf.data, want, n);
}

/* Fixed-size writes are big-endian and return their offsets. */
static void
test_wr_fixed_sizes(void **state)
{
    fixture_t            *fx = *state;
    static const uint8_t  want[] = {
        0xff, 0x12, 0x34, 0x80, 0x00, 0x00, 0x00, 0x01, 0x02, 0x03, 0x04,
        0x05, 0x06, 0x07, 0x08, 0x01, 0x00, 0xfe, 0xdc, 0xde, 0xad, 0xbe,
        0xef,
    };

    assert_int_equal(samsa_wr_i8(&fx->wr, -1), 0);
    assert_int_equal(samsa_wr_i16(&fx->wr, 0x1234), 1);
    assert_int_equal(samsa_wr_i32(&fx->wr, INT32_MIN), 3);
    assert_int_equal(samsa_wr_i64(&fx->wr, 0x0102030405060708LL), 7);
    assert_int_equal(samsa_wr_bool(&fx->wr, true), 15);
    assert_int_equal(samsa_wr_bool(&fx->wr, false), 16);
    assert_int_equal(samsa_wr_u16(&fx->wr, 0xfedc), 17);
    assert_int_equal(samsa_wr_u32(&fx->wr, 0xdeadbeef), 19);
    expect_bytes(fx, want, sizeof(want));
}

static void
test_wr_f64_uuid_round_trip(void **state)
{
    fixture_t     *fx = *state;
    samsa_uuid_t   u, back;
    samsa_rd_t     rd;
    int            i;

    for (i = 0; i < 16; i++) {
        u.b[i] = (uint8_t) (i * 17);
    }
    samsa_wr_f64(&fx->wr, -0.125);
    samsa_wr_uuid(&fx->wr, u);
    samsa_rd_init(&rd, fx->buf.data, fx->buf.len);
    assert_true(samsa_rd_f64(&rd) == -0.125);
    back = samsa_rd_uuid(&rd);
    assert_true(samsa_uuid_eq(u, back));
    assert_int_equal(samsa_rd_remain(&rd), 0);
}

static void
test_wr_uvarint_bytes(void **state)
{
    fixture_t            *fx = *state;
    static const uint8_t  want[] = {
        0x00, 0x7f, 0x80, 0x01, 0xac, 0x02, 0xff, 0xff, 0xff, 0xff, 0x0f,
    };

    samsa_wr_uvarint(&fx->wr, 0);
    samsa_wr_uvarint(&fx->wr, 127);
    samsa_wr_uvarint(&fx->wr, 128);
    samsa_wr_uvarint(&fx->wr, 300);
    samsa_wr_uvarint(&fx->wr, UINT32_MAX);
    expect_bytes(fx, want, sizeof(want));
}

/* Every varint flavour reads back as written, extremes included. */
static void
test_wr_varints_round_trip(void **state)
{
    fixture_t      *fx = *state;
    static const int64_t  v[] = {
        0, 1, -1, 63, -64, 64, 127, 128, -129, 300, INT32_MAX, INT32_MIN,
        (int64_t) INT32_MAX + 1, INT64_MAX, INT64_MIN,
    };
    samsa_rd_t      rd;
    size_t          i;

    for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        samsa_wr_varlong(&fx->wr, v[i]);
        samsa_wr_uvarlong(&fx->wr, (uint64_t) v[i]);
        if (v[i] >= INT32_MIN && v[i] <= INT32_MAX) {
            samsa_wr_varint(&fx->wr, (int32_t) v[i]);
            samsa_wr_uvarint(&fx->wr, (uint32_t) v[i]);
        }
    }
    samsa_rd_init(&rd, fx->buf.data, fx->buf.len);
    for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        assert_true(samsa_rd_varlong(&rd) == v[i]);
        assert_true(samsa_rd_uvarlong(&rd) == (uint64_t) v[i]);
        if (v[i] >= INT32_MIN && v[i] <= INT32_MAX) {
            assert_int_equal(samsa_rd_varint(&rd), v[i]);
            assert_true(samsa_rd_uvarint(&rd) == (uint32_t) v[i]);
        }
    }
    assert_int_equal(rd.err, SAMSA_ERR_NONE);
    assert_int_equal(samsa_rd_remain(&rd), 0);
}

/* Zigzag bytes as Kafka's records carry them. */
static void
test_wr_zigzag_bytes(void **state)
{
    fixture_t            *fx = *state;
    static const uint8_t  want[] = { 0x00, 0x01, 0x02, 0x03, 0x80, 0x01 };

    samsa_wr_varint(&fx->wr, 0);
    samsa_wr_varint(&fx->wr, -1);
    samsa_wr_varint(&fx->wr, 1);
    samsa_wr_varint(&fx->wr, -2);
    samsa_wr_varint(&fx->wr, 64);
    expect_bytes(fx, want, sizeof(want));
}

static void
test_wr_strings(void **state)
{
    fixture_t            *fx = *state;
    static const uint8_t  want[] = {
        0x00, 0x02, 'h', 'i', 0xff, 0xff, 0x00, 0x00, 0x03, 'h', 'i', 0x00,
        0x01, 0x01,
    };
    samsa_slice_t         hi = samsa_slice_cstr("hi");

    samsa_wr_str(&fx->wr, hi);
    samsa_wr_nullable_str(&fx->wr, SAMSA_SLICE_NULL);
    samsa_wr_str(&fx->wr, SAMSA_SLICE_NULL);        /* null -> empty */
    samsa_wr_compact_str(&fx->wr, hi);
    samsa_wr_compact_nullable_str(&fx->wr, SAMSA_SLICE_NULL);
    samsa_wr_compact_nullable_str(&fx->wr, samsa_slice_cstr(""));
    samsa_wr_compact_str(&fx->wr, SAMSA_SLICE_NULL);
    expect_bytes(fx, want, sizeof(want));
}

static void
test_wr_bytes(void **state)
{
    fixture_t            *fx = *state;
    static const uint8_t  want[] = {
        0x00, 0x00, 0x00, 0x01, 0x7a, 0xff, 0xff, 0xff, 0xff, 0x02, 0x7a,
        0x00, 0x01,
    };
    samsa_slice_t         z = samsa_slice_cstr("z");

    samsa_wr_bytes(&fx->wr, z);
    samsa_wr_nullable_bytes(&fx->wr, SAMSA_SLICE_NULL);
    samsa_wr_compact_bytes(&fx->wr, z);
    samsa_wr_compact_nullable_bytes(&fx->wr, SAMSA_SLICE_NULL);
    samsa_wr_compact_bytes(&fx->wr, SAMSA_SLICE_NULL);
    expect_bytes(fx, want, sizeof(want));
}

static void
test_wr_array_cnt(void **state)
{
    fixture_t            *fx = *state;
    static const uint8_t  want[] = {
        0x00, 0x00, 0x00, 0x03, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00,
        0x00, 0x04, 0x00, 0x01,
    };

    samsa_wr_array_cnt(&fx->wr, false, false, 3);
    samsa_wr_array_cnt(&fx->wr, false, true, -1);
    samsa_wr_array_cnt(&fx->wr, false, false, -1);  /* null -> empty */
    samsa_wr_array_cnt(&fx->wr, true, false, 3);
    samsa_wr_array_cnt(&fx->wr, true, true, -1);
    samsa_wr_array_cnt(&fx->wr, true, false, -1);
    expect_bytes(fx, want, sizeof(want));
}

static void
test_wr_patch_i32(void **state)
{
    fixture_t            *fx = *state;
    static const uint8_t  want[] = { 0x00, 0x00, 0x00, 0x02, 0xab, 0xcd };
    size_t                off;

    off = samsa_wr_i32(&fx->wr, 0);
    samsa_wr_i16(&fx->wr, (int16_t) 0xabcd);
    samsa_wr_patch_i32(&fx->wr, off, (int32_t) (fx->buf.len - off - 4));
    expect_bytes(fx, want, sizeof(want));
}

/* tag_end inserts the field's size, however many bytes the size takes. */
static void
test_wr_tag_sizes(void **state)
{
    fixture_t     *fx = *state;
    uint8_t        blob[300];
    samsa_rd_t     rd, sub;
    size_t         off;

    memset(blob, 0x5a, sizeof(blob));
    samsa_wr_uvarint(&fx->wr, 2);
    off = samsa_wr_tag_begin(&fx->wr, 1);
    samsa_wr_i16(&fx->wr, 7);
    samsa_wr_tag_end(&fx->wr, off);
    off = samsa_wr_tag_begin(&fx->wr, 200);
    samsa_wr_raw(&fx->wr, blob, sizeof(blob));
    samsa_wr_tag_end(&fx->wr, off);

    assert_int_equal(fx->buf.data[1], 1);           /* tag */
    assert_int_equal(fx->buf.data[2], 2);           /* size */
    samsa_rd_init(&rd, fx->buf.data, fx->buf.len);
    assert_int_equal(samsa_rd_uvarint(&rd), 2);
    assert_int_equal(samsa_rd_uvarint(&rd), 1);
    assert_int_equal(samsa_rd_uvarint(&rd), 2);
    assert_int_equal(samsa_rd_i16(&rd), 7);
    assert_int_equal(samsa_rd_uvarint(&rd), 200);
    assert_int_equal(samsa_rd_uvarint(&rd), sizeof(blob));  /* 2 bytes */
    samsa_rd_sub(&rd, sizeof(blob), &sub);
    assert_memory_equal(sub.p, blob, sizeof(blob));
    assert_int_equal(samsa_rd_remain(&rd), 0);
    samsa_rd_init(&rd, fx->buf.data, fx->buf.len);
    samsa_rd_tags_skip(&rd);
    assert_int_equal(rd.err, SAMSA_ERR_NONE);
    assert_int_equal(samsa_rd_remain(&rd), 0);
}

typedef struct region_sink {
    samsa_file_region_t  got;
    size_t               at;
    int                  calls;
} region_sink_t;

static void
region_sink_fn(void *ctx, const samsa_file_region_t *r)
{
    region_sink_t  *sink = ctx;

    sink->got = *r;
    sink->calls++;
}

/* A records field given as a file region: the length prefix, then either
 * the region handed to the sink (sendfile later) or its bytes read in. */
static void
test_wr_records_file_region(void **state)
{
    samsa_buf_t           buf = SAMSA_BUF_INIT;
    samsa_wr_t            wr = { .buf = &buf };
    char                  path[] = "/tmp/samsa-test-wr-XXXXXX";
    samsa_file_region_t   fr;
    samsa_records_t       r;
    region_sink_t         sink = { 0 };
    int                   fd;

    (void) state;
    fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    assert_int_equal(write(fd, "xxBATCHyy", 9), 9);
    fr = (samsa_file_region_t) { .fd = fd, .offset = 2, .len = 5 };
    r = (samsa_records_t) { SAMSA_SLICE_NULL, &fr };
    samsa_wr_records_any(&wr, false, true, r);          /* no sink: pread */
    assert_int_equal(buf.len, 9);
    assert_memory_equal(buf.data, "\0\0\0\5BATCH", 9);
    buf.len = 0;
    samsa_wr_records_any(&wr, true, true, r);           /* compact */
    assert_int_equal(buf.len, 6);
    assert_memory_equal(buf.data, "\6BATCH", 6);
    buf.len = 0;
    wr.region = region_sink_fn;
    wr.region_ctx = &sink;
    samsa_wr_records_any(&wr, false, true, r);
    assert_int_equal(buf.len, 4);                       /* prefix only */
    assert_int_equal(sink.calls, 1);
    assert_int_equal(sink.got.offset, 2);
    assert_int_equal(sink.got.len, 5);
    buf.len = 0;
    samsa_wr_records_any(&wr, false, true, SAMSA_RECORDS_NULL);
    assert_memory_equal(buf.data, "\xff\xff\xff\xff", 4);
    samsa_buf_fini(&buf);
    close(fd);
}

/* A sizer counts what the writer would write, tagged-field sizes and file
 * regions included, and writes nothing (no buffer, no sink call). */
static void
test_wr_sizer(void **state)
{
    samsa_buf_t           buf = SAMSA_BUF_INIT;
    samsa_wr_t            wr = { .buf = &buf }, sz = samsa_wr_sizer();
    samsa_wr_t           *w[2] = { &wr, &sz };
    uint8_t               blob[300];
    samsa_file_region_t   fr = { .fd = -1, .offset = 0, .len = 1000 };
    samsa_records_t       r = { SAMSA_SLICE_NULL, &fr };
    region_sink_t         sink = { 0 };
    size_t                off, i;

    (void) state;
    memset(blob, 0x5a, sizeof(blob));
    wr.region = region_sink_fn;
    wr.region_ctx = &sink;
    sz.region = region_sink_fn;
    sz.region_ctx = &sink;
    for (i = 0; i < 2; i++) {
        samsa_wr_i32(w[i], 0);
        samsa_wr_compact_str(w[i], samsa_slice_cstr("topic"));
        samsa_wr_uuid(w[i], (samsa_uuid_t) { { 0 } });
        off = samsa_wr_tag_begin(w[i], 200);
        samsa_wr_raw(w[i], blob, sizeof(blob));
        samsa_wr_tag_end(w[i], off);
        samsa_wr_patch_i32(w[i], 0, 77);
        samsa_wr_records_any(w[i], true, true, r);
    }
    assert_int_equal(sink.calls, 1);                    /* the writer's */
    assert_int_equal(sz.size, buf.len + 1000);          /* + the region */
    samsa_buf_fini(&buf);
}

/* Distinct codes get slots, repeats count up, and codes past the slots
 * are counted, not lost. */
static void
test_wr_errtally_slots_and_overflow(void **state)
{
    samsa_errtally_t  t;
    int16_t           code;

    (void) state;
    memset(&t, 0, sizeof(t));
    samsa_errtally_add(&t, 0);
    samsa_errtally_add(&t, 0);
    samsa_errtally_add(&t, 3);
    assert_int_equal(t.n, 2);
    assert_int_equal(t.code[0], 0);
    assert_int_equal(t.count[0], 2);
    assert_int_equal(t.code[1], 3);
    assert_int_equal(t.count[1], 1);
    for (code = 10; code < 10 + SAMSA_ERRTALLY_SLOTS; code++) {
        samsa_errtally_add(&t, code);
    }
    assert_int_equal(t.n, SAMSA_ERRTALLY_SLOTS);
    assert_int_equal(t.overflow, 2);
    samsa_errtally_add(&t, 0);              /* a known code still counts */
    assert_int_equal(t.count[0], 3);
}

/* A generated encoder counts every ErrorCode field it writes, nested ones
 * included, and writes the same bytes with or without a tally. */
static void
test_wr_errcode_counted_by_encoders(void **state)
{
    samsa_DeletableTopicResult_t  res[3];
    samsa_DeleteTopicsResponse_t  m;
    samsa_errtally_t              t;
    samsa_buf_t                   a = SAMSA_BUF_INIT, b = SAMSA_BUF_INIT;
    samsa_wr_t                    wa, wb;
    int                           i;

    (void) state;
    memset(&t, 0, sizeof(t));
    samsa_DeleteTopicsResponse_init(&m);
    for (i = 0; i < 3; i++) {
        samsa_DeletableTopicResult_init(&res[i]);
        res[i].Name = samsa_slice_cstr("t");
        res[i].ErrorCode = i == 2 ? 3 : 0;
    }
    m.Responses = res;
    m.Responses_cnt = 3;
    samsa_wr_init(&wa, &a);
    wa.errors = &t;
    samsa_wr_init(&wb, &b);
    samsa_DeleteTopicsResponse_encode(&wa, 4, &m);
    samsa_DeleteTopicsResponse_encode(&wb, 4, &m);
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.data, b.data, a.len);
    assert_int_equal(t.n, 2);
    assert_int_equal(t.code[0], 0);
    assert_int_equal(t.count[0], 2);
    assert_int_equal(t.code[1], 3);
    assert_int_equal(t.count[1], 1);
    samsa_buf_fini(&a);
    samsa_buf_fini(&b);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test_setup_teardown(test_wr_fixed_sizes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wr_f64_uuid_round_trip, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_wr_uvarint_bytes, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_wr_varints_round_trip, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_wr_zigzag_bytes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wr_strings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wr_bytes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wr_array_cnt, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wr_patch_i32, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wr_tag_sizes, setup, teardown),
        cmocka_unit_test(test_wr_records_file_region),
        cmocka_unit_test(test_wr_sizer),
        cmocka_unit_test(test_wr_errtally_slots_and_overflow),
        cmocka_unit_test(test_wr_errcode_counted_by_encoders),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
