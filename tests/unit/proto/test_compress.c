/*
 * tests/unit/proto/test_compress.c - every codec round-trips, snappy reads
 * both xerial and raw blocks, bad input and bombs are refused.
 */
#include "unit.h"

#include <snappy-c.h>

#include "proto/compress.h"
#include "util/alloc.h"

static uint8_t *
make_input(size_t len)
{
    uint8_t  *p = samsa_malloc(len + 1);
    size_t    i;

    for (i = 0; i < len; i++) {
        p[i] = (uint8_t) ("abcdefgh"[i % 8] + (i / 1000) % 3);
    }
    return p;
}

static void
roundtrip(samsa_codec_t codec, int level, size_t len)
{
    uint8_t      *in = make_input(len);
    samsa_buf_t   z = SAMSA_BUF_INIT, back = SAMSA_BUF_INIT;

    assert_int_equal(samsa_compress(codec, level, in, len, &z),
                     SAMSA_ERR_NONE);
    if (len > 4096) {
        assert_true(z.len < len / 2);
    }
    assert_int_equal(samsa_decompress(codec, z.data, z.len, len + 16, &back),
                     SAMSA_ERR_NONE);
    assert_int_equal(back.len, len);
    if (len > 0) {
        assert_memory_equal(back.data, in, len);
    }
    samsa_buf_fini(&z);
    samsa_buf_fini(&back);
    samsa_free(in);
}

static void
test_compress_roundtrip_all_codecs(void **state)
{
    static const size_t  lens[] = { 0, 1, 100, 70000, 300000 };
    samsa_codec_t        c;
    size_t               i;

    (void) state;
    for (c = SAMSA_CODEC_GZIP; c <= SAMSA_CODEC_ZSTD; c++) {
        for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
            roundtrip(c, SAMSA_CODEC_LEVEL_DEFAULT, lens[i]);
        }
    }
    roundtrip(SAMSA_CODEC_GZIP, 1, 5000);
    roundtrip(SAMSA_CODEC_LZ4, 1, 5000);
    roundtrip(SAMSA_CODEC_ZSTD, -5, 5000);
    roundtrip(SAMSA_CODEC_ZSTD, 19, 5000);
}

static void
test_compress_appends_to_existing(void **state)
{
    uint8_t      *in = make_input(1000);
    samsa_buf_t   z = SAMSA_BUF_INIT, back = SAMSA_BUF_INIT;

    (void) state;
    samsa_buf_append(&z, "XY", 2);
    assert_int_equal(samsa_compress(SAMSA_CODEC_ZSTD, 3, in, 1000, &z),
                     SAMSA_ERR_NONE);
    samsa_buf_append(&back, "Q", 1);
    assert_int_equal(samsa_decompress(SAMSA_CODEC_ZSTD, z.data + 2,
                                      z.len - 2, 1000, &back),
                     SAMSA_ERR_NONE);
    assert_int_equal(back.len, 1001);
    assert_memory_equal(back.data + 1, in, 1000);
    samsa_buf_fini(&z);
    samsa_buf_fini(&back);
    samsa_free(in);
}

/* xerial framing as snappy-java writes it: magic, two version ints, then
 * (be32 length, raw block)... */
static void
test_compress_snappy_xerial_and_raw(void **state)
{
    uint8_t      *in = make_input(100000);
    samsa_buf_t   z = SAMSA_BUF_INIT, back = SAMSA_BUF_INIT;
    size_t        rawlen = snappy_max_compressed_length(100000);
    char         *raw = samsa_malloc(rawlen);
    static const uint8_t  hdr[16] = { 0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0,
                                      0, 0, 0, 1, 0, 0, 0, 1 };

    (void) state;
    assert_int_equal(samsa_compress(SAMSA_CODEC_SNAPPY,
                                    SAMSA_CODEC_LEVEL_DEFAULT, in, 100000,
                                    &z), SAMSA_ERR_NONE);
    assert_memory_equal(z.data, hdr, 16);
    /* raw snappy (librdkafka's form) reads too */
    assert_int_equal(snappy_compress((const char *) in, 100000, raw, &rawlen),
                     SNAPPY_OK);
    assert_int_equal(samsa_decompress(SAMSA_CODEC_SNAPPY, (uint8_t *) raw,
                                      rawlen, 100000, &back),
                     SAMSA_ERR_NONE);
    assert_int_equal(back.len, 100000);
    assert_memory_equal(back.data, in, 100000);
    samsa_buf_fini(&z);
    samsa_buf_fini(&back);
    samsa_free(raw);
    samsa_free(in);
}

static void
test_compress_bad_input_and_bomb(void **state)
{
    uint8_t        *in = make_input(200000);
    samsa_buf_t     z = SAMSA_BUF_INIT, back = SAMSA_BUF_INIT;
    const uint8_t   junk[] = "this is not compressed data at all!!";
    samsa_codec_t   c;

    (void) state;
    for (c = SAMSA_CODEC_GZIP; c <= SAMSA_CODEC_ZSTD; c++) {
        z.len = 0;
        assert_int_equal(samsa_compress(c, SAMSA_CODEC_LEVEL_DEFAULT, in,
                                        200000, &z), SAMSA_ERR_NONE);
        /* bomb: the output limit is below the real size */
        assert_int_equal(samsa_decompress(c, z.data, z.len, 1000, &back),
                         SAMSA_ERR__OVERFLOW);
        assert_int_equal(back.len, 0);
        /* truncated */
        assert_int_not_equal(samsa_decompress(c, z.data, z.len / 2, 1 << 20,
                                              &back), SAMSA_ERR_NONE);
        assert_int_equal(back.len, 0);
        assert_int_not_equal(samsa_decompress(c, junk, sizeof(junk), 1 << 20,
                                              &back), SAMSA_ERR_NONE);
        assert_int_equal(back.len, 0);
    }
    samsa_buf_fini(&z);
    samsa_buf_fini(&back);
    samsa_free(in);
}

static void
test_compress_names_and_levels(void **state)
{
    samsa_codec_t  c;

    (void) state;
    assert_true(samsa_codec_parse("zstd", &c));
    assert_int_equal(c, SAMSA_CODEC_ZSTD);
    assert_true(samsa_codec_parse("none", &c));
    assert_int_equal(c, SAMSA_CODEC_NONE);
    assert_false(samsa_codec_parse("ZSTD", &c));
    assert_false(samsa_codec_parse("brotli", &c));
    assert_string_equal(samsa_codec_name(SAMSA_CODEC_LZ4), "lz4");
    assert_true(samsa_codec_level_valid(SAMSA_CODEC_GZIP, -1));
    assert_false(samsa_codec_level_valid(SAMSA_CODEC_GZIP, 0));
    assert_false(samsa_codec_level_valid(SAMSA_CODEC_GZIP, 10));
    assert_true(samsa_codec_level_valid(SAMSA_CODEC_LZ4, 17));
    assert_false(samsa_codec_level_valid(SAMSA_CODEC_LZ4, 18));
    assert_true(samsa_codec_level_valid(SAMSA_CODEC_ZSTD, 22));
    assert_false(samsa_codec_level_valid(SAMSA_CODEC_ZSTD, 23));
    assert_int_equal(samsa_compress(SAMSA_CODEC_NONE, 0, NULL, 0, NULL),
                     SAMSA_ERR__INVALID_ARG);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_compress_roundtrip_all_codecs),
        cmocka_unit_test(test_compress_appends_to_existing),
        cmocka_unit_test(test_compress_snappy_xerial_and_raw),
        cmocka_unit_test(test_compress_bad_input_and_bomb),
        cmocka_unit_test(test_compress_names_and_levels),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
