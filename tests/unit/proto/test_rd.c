/* Unit tests for proto/rd.c and proto/rd.h: the sticky-error reader. */
#include "unit.h"

#include "proto/rd.h"

#define RD(rd, ...)                                                     \
    static const uint8_t  rd##_in[] = { __VA_ARGS__ };                  \
    samsa_rd_t            rd;                                           \
    samsa_rd_init(&rd, rd##_in, sizeof(rd##_in))

/* Fixed-size reads are big-endian and advance exactly. */
static void
test_rd_fixed_sizes(void **state)
{
    RD(rd, 0x80, 0x12, 0x34, 0xff, 0xff, 0xff, 0xfe, 0x01, 0x02, 0x03, 0x04,
       0x05, 0x06, 0x07, 0x08, 0xfe, 0xdc, 0x00, 0x02,
       0x40, 0x09, 0x21, 0xfb, 0x54, 0x44, 0x2d, 0x18);

    (void) state;
    assert_int_equal(samsa_rd_i8(&rd), -128);
    assert_int_equal(samsa_rd_i16(&rd), 0x1234);
    assert_int_equal(samsa_rd_i32(&rd), -2);
    assert_true(samsa_rd_i64(&rd) == 0x0102030405060708LL);
    assert_int_equal(samsa_rd_u16(&rd), 0xfedc);
    assert_true(samsa_rd_bool(&rd) == false);
    assert_true(samsa_rd_bool(&rd) == true);        /* any non-zero */
    assert_true(samsa_rd_f64(&rd) == 3.141592653589793);
    assert_int_equal(samsa_rd_remain(&rd), 0);
    assert_int_equal(rd.err, SAMSA_ERR_NONE);
}

static void
test_rd_u32_and_uuid(void **state)
{
    RD(rd, 0xff, 0xff, 0xff, 0xff, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
       13, 14, 15);
    samsa_uuid_t  u;

    (void) state;
    assert_true(samsa_rd_u32(&rd) == UINT32_MAX);
    u = samsa_rd_uuid(&rd);
    assert_int_equal(u.b[0], 0);
    assert_int_equal(u.b[15], 15);
    assert_false(samsa_uuid_is_zero(u));
    assert_int_equal(rd.err, SAMSA_ERR_NONE);
}

/* A short read fails once and every read after it keeps failing. */
static void
test_rd_underflow_is_sticky(void **state)
{
    RD(rd, 0x00, 0x00, 0x01);

    (void) state;
    assert_int_equal(samsa_rd_i32(&rd), 0);
    assert_int_equal(rd.err, SAMSA_ERR__UNDERFLOW);
    assert_int_equal(samsa_rd_i16(&rd), 0);
    assert_int_equal(samsa_rd_i8(&rd), 0);
    assert_null(samsa_rd_nullable_str(&rd).ptr);
    assert_int_equal(samsa_rd_uvarint(&rd), 0);
    assert_ptr_equal(rd.p, rd_in);                  /* nothing consumed */
    assert_int_equal(samsa_rd_remain(&rd), 0);
    assert_int_equal(rd.err, SAMSA_ERR__UNDERFLOW);
}

/* The first error stays, even when a later read would fail differently. */
static void
test_rd_first_error_wins(void **state)
{
    RD(rd, 0xff, 0xfe, 0x00);

    (void) state;
    assert_null(samsa_rd_str(&rd).ptr);            /* length -2 */
    assert_int_equal(rd.err, SAMSA_ERR__BAD_MSG);
    samsa_rd_skip(&rd, 100);
    assert_int_equal(rd.err, SAMSA_ERR__BAD_MSG);
}

static void
test_rd_empty_input(void **state)
{
    samsa_rd_t  rd;

    (void) state;
    samsa_rd_init(&rd, NULL, 0);
    assert_int_equal(samsa_rd_remain(&rd), 0);
    samsa_rd_skip(&rd, 0);
    assert_int_equal(rd.err, SAMSA_ERR_NONE);
    assert_int_equal(samsa_rd_i8(&rd), 0);
    assert_int_equal(rd.err, SAMSA_ERR__UNDERFLOW);
}

/* uvarint: 1..5 bytes, UINT32_MAX is the largest; more is BAD_MSG. */
static void
test_rd_uvarint_edges(void **state)
{
    RD(rd, 0x00, 0x7f, 0x80, 0x01, 0xff, 0xff, 0xff, 0xff, 0x0f);
    RD(big, 0xff, 0xff, 0xff, 0xff, 0x10);          /* 2^32 */
    RD(longer, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00); /* 6 bytes */
    RD(cut, 0x80, 0x80);

    (void) state;
    assert_int_equal(samsa_rd_uvarint(&rd), 0);
    assert_int_equal(samsa_rd_uvarint(&rd), 127);
    assert_int_equal(samsa_rd_uvarint(&rd), 128);
    assert_true(samsa_rd_uvarint(&rd) == UINT32_MAX);
    assert_int_equal(rd.err, SAMSA_ERR_NONE);
    assert_int_equal(samsa_rd_remain(&rd), 0);

    assert_int_equal(samsa_rd_uvarint(&big), 0);
    assert_int_equal(big.err, SAMSA_ERR__BAD_MSG);
    assert_ptr_equal(big.p, big_in);
    assert_int_equal(samsa_rd_uvarint(&longer), 0);
    assert_int_equal(longer.err, SAMSA_ERR__BAD_MSG);
    assert_int_equal(samsa_rd_uvarint(&cut), 0);
    assert_int_equal(cut.err, SAMSA_ERR__UNDERFLOW);
    assert_ptr_equal(cut.p, cut_in);
}

static void
test_rd_uvarlong_edges(void **state)
{
    RD(rd, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01);
    RD(big, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02);

    (void) state;
    assert_true(samsa_rd_uvarlong(&rd) == UINT64_MAX);
    assert_int_equal(rd.err, SAMSA_ERR_NONE);
    assert_true(samsa_rd_uvarlong(&big) == 0);
    assert_int_equal(big.err, SAMSA_ERR__BAD_MSG);
}

/* Zigzag: 0 -> 0, -1 -> 1, 1 -> 2, and the extremes. */
static void
test_rd_zigzag(void **state)
{
    RD(rd, 0x00, 0x01, 0x02, 0x03, 0xfe, 0xff, 0xff, 0xff, 0x0f,
       0xff, 0xff, 0xff, 0xff, 0x0f);
    RD(rl, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
       0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01);

    (void) state;
    assert_int_equal(samsa_rd_varint(&rd), 0);
    assert_int_equal(samsa_rd_varint(&rd), -1);
    assert_int_equal(samsa_rd_varint(&rd), 1);
    assert_int_equal(samsa_rd_varint(&rd), -2);
    assert_int_equal(samsa_rd_varint(&rd), INT32_MAX);
    assert_int_equal(samsa_rd_varint(&rd), INT32_MIN);
    assert_int_equal(rd.err, SAMSA_ERR_NONE);
    assert_true(samsa_rd_varlong(&rl) == -1);
    assert_true(samsa_rd_varlong(&rl) == INT64_MIN);
    assert_true(samsa_rd_varlong(&rl) == INT64_MAX);
    assert_int_equal(rl.err, SAMSA_ERR_NONE);
}

static void
test_rd_strings(void **state)
{
    RD(rd, 0x00, 0x02, 'h', 'i', 0xff, 0xff, 0x00, 0x00);
    samsa_slice_t  s;

    (void) state;
    s = samsa_rd_str(&rd);
    assert_true(samsa_slice_eq_cstr(s, "hi"));
    s = samsa_rd_nullable_str(&rd);
    assert_null(s.ptr);
    s = samsa_rd_str(&rd);
    assert_non_null(s.ptr);                         /* empty, not null */
    assert_int_equal(s.len, 0);
    assert_int_equal(rd.err, SAMSA_ERR_NONE);
}

/* A non-nullable string sent as null is malformed. */
static void
test_rd_str_null_is_bad(void **state)
{
    RD(rd, 0xff, 0xff);
    RD(crd, 0x00);

    (void) state;
    assert_null(samsa_rd_str(&rd).ptr);
    assert_int_equal(rd.err, SAMSA_ERR__BAD_MSG);
    assert_null(samsa_rd_compact_str(&crd).ptr);
    assert_int_equal(crd.err, SAMSA_ERR__BAD_MSG);
}

/* Compact: 0 is null, 1 is empty, N+1 is N bytes. */
static void
test_rd_compact_null_and_empty(void **state)
{
    RD(rd, 0x00, 0x01, 0x03, 'a', 'b', 0x00, 0x01, 0x02, 'z');
    samsa_slice_t  s;

    (void) state;
    assert_null(samsa_rd_compact_nullable_str(&rd).ptr);
    s = samsa_rd_compact_str(&rd);
    assert_non_null(s.ptr);
    assert_int_equal(s.len, 0);
    assert_true(samsa_slice_eq_cstr(samsa_rd_compact_nullable_str(&rd), "ab"));
    assert_null(samsa_rd_compact_nullable_bytes(&rd).ptr);
    s = samsa_rd_compact_bytes(&rd);
    assert_non_null(s.ptr);
    assert_int_equal(s.len, 0);
    s = samsa_rd_compact_bytes(&rd);
    assert_int_equal(s.len, 1);
    assert_int_equal(s.ptr[0], 'z');
    assert_int_equal(rd.err, SAMSA_ERR_NONE);
}

static void
test_rd_bytes(void **state)
{
    RD(rd, 0x00, 0x00, 0x00, 0x01, 0x7f, 0xff, 0xff, 0xff, 0xff,
       0x00, 0x00, 0x00, 0x05, 'x');
    samsa_slice_t  s;

    (void) state;
    s = samsa_rd_bytes(&rd);
    assert_int_equal(s.len, 1);
    assert_null(samsa_rd_nullable_bytes(&rd).ptr);
    assert_null(samsa_rd_bytes(&rd).ptr);           /* 5 > 1 left */
    assert_int_equal(rd.err, SAMSA_ERR__UNDERFLOW);
}

static void
test_rd_string_longer_than_input(void **state)
{
    RD(rd, 0x00, 0x05, 'a', 'b');

    (void) state;
    assert_null(samsa_rd_str(&rd).ptr);
    assert_int_equal(rd.err, SAMSA_ERR__UNDERFLOW);
    assert_ptr_equal(rd.p, rd_in + 2);  /* the length was read, not the data */
}

/* Array counts are checked against what is left before any allocation. */
static void
test_rd_array_cnt(void **state)
{
    RD(ok, 0x00, 0x00, 0x00, 0x02, 1, 2, 3, 4, 5, 6, 7, 8);
    RD(huge, 0x7f, 0xff, 0xff, 0xff, 1, 2, 3, 4);
    RD(nul, 0xff, 0xff, 0xff, 0xff, 0x00);
    RD(neg, 0xff, 0xff, 0xff, 0xfe);
    RD(cnull, 0x00);

    (void) state;
    assert_int_equal(samsa_rd_array_cnt(&ok, false, false, 4), 2);
    assert_int_equal(ok.err, SAMSA_ERR_NONE);
    assert_int_equal(samsa_rd_array_cnt(&huge, false, false, 1), 0);
    assert_int_equal(huge.err, SAMSA_ERR__UNDERFLOW);
    assert_int_equal(samsa_rd_array_cnt(&nul, false, true, 4), -1);
    assert_int_equal(nul.err, SAMSA_ERR_NONE);
    samsa_rd_init(&nul, nul_in, sizeof(nul_in));
    assert_int_equal(samsa_rd_array_cnt(&nul, false, false, 4), 0);
    assert_int_equal(nul.err, SAMSA_ERR__BAD_MSG);
    assert_int_equal(samsa_rd_array_cnt(&neg, false, true, 4), 0);
    assert_int_equal(neg.err, SAMSA_ERR__BAD_MSG);
    assert_int_equal(samsa_rd_array_cnt(&cnull, true, true, 4), -1);
}

/* Compact counts too; 2^32-1 + 1 wraps to nothing, never a huge count. */
static void
test_rd_array_cnt_compact(void **state)
{
    RD(rd, 0x03, 0xaa, 0xbb);
    RD(max, 0xff, 0xff, 0xff, 0xff, 0x0f);

    (void) state;
    assert_int_equal(samsa_rd_array_cnt(&rd, true, false, 1), 2);
    assert_int_equal(samsa_rd_array_cnt(&max, true, false, 0), 0);
    assert_int_equal(max.err, SAMSA_ERR__BAD_MSG);  /* > INT32_MAX */
}

/* Tagged-field sections are skipped whole, whatever the tags. */
static void
test_rd_tags_skip(void **state)
{
    RD(rd, 0x00, 0x42, 0x02, 0x05, 0x02, 0xaa, 0xbb, 0x90, 0x01, 0x00, 0x43);
    RD(cut, 0x01, 0x00, 0x05, 0xaa);

    (void) state;
    samsa_rd_tags_skip(&rd);                        /* empty */
    assert_int_equal(samsa_rd_i8(&rd), 0x42);
    samsa_rd_tags_skip(&rd);                        /* tags 5 and 144 */
    assert_int_equal(samsa_rd_i8(&rd), 0x43);
    assert_int_equal(rd.err, SAMSA_ERR_NONE);
    samsa_rd_tags_skip(&cut);
    assert_int_equal(cut.err, SAMSA_ERR__UNDERFLOW);
}

static void
test_rd_sub(void **state)
{
    RD(rd, 1, 2, 3, 4);
    samsa_rd_t  sub;

    (void) state;
    samsa_rd_sub(&rd, 2, &sub);
    assert_int_equal(samsa_rd_i16(&sub), 0x0102);
    assert_int_equal(samsa_rd_i8(&sub), 0);
    assert_int_equal(sub.err, SAMSA_ERR__UNDERFLOW);
    assert_int_equal(rd.err, SAMSA_ERR_NONE);
    assert_int_equal(samsa_rd_remain(&rd), 2);
    samsa_rd_sub(&rd, 3, &sub);
    assert_int_equal(sub.err, SAMSA_ERR__UNDERFLOW);
    assert_int_equal(rd.err, SAMSA_ERR__UNDERFLOW);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_rd_fixed_sizes),
        cmocka_unit_test(test_rd_u32_and_uuid),
        cmocka_unit_test(test_rd_underflow_is_sticky),
        cmocka_unit_test(test_rd_first_error_wins),
        cmocka_unit_test(test_rd_empty_input),
        cmocka_unit_test(test_rd_uvarint_edges),
        cmocka_unit_test(test_rd_uvarlong_edges),
        cmocka_unit_test(test_rd_zigzag),
        cmocka_unit_test(test_rd_strings),
        cmocka_unit_test(test_rd_str_null_is_bad),
        cmocka_unit_test(test_rd_compact_null_and_empty),
        cmocka_unit_test(test_rd_bytes),
        cmocka_unit_test(test_rd_string_longer_than_input),
        cmocka_unit_test(test_rd_array_cnt),
        cmocka_unit_test(test_rd_array_cnt_compact),
        cmocka_unit_test(test_rd_tags_skip),
        cmocka_unit_test(test_rd_sub),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
