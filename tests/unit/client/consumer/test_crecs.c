/*
 * tests/unit/client/consumer/test_crecs.c - the consumer's record-batch reader on
 * batches built with proto/recbuild.c: keys, values and headers (null vs
 * empty), every codec, a fetch offset inside a batch, a partial batch at
 * the end, a CRC failure (records before it kept, position stops at it),
 * control batches skipped, aborted transactions dropped under
 * read_committed and kept under read_uncommitted, LogAppendTime.  Each
 * case runs twice: records copied, and read in place from a response
 * buffer handed over as a source (exactly sized, so ASan sees any read
 * past it, and released by the test before the records are read, so
 * the chunk's own reference must keep it).
 */
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>

#include "client/consumer/crecs.h"
#include "proto/batch.h"
#include "proto/recbuild.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/endian.h"

/* Append a batch of n records "k<i>"/"v<i>" (record 1: null key, record
 * 2: empty value, header h=x on record 0) at base. */
static void
fx_batch(samsa_buf_t *out, int64_t base, int n, samsa_codec_t codec,
         int64_t pid, bool txn)
{
    samsa_recbuild_t  rb;
    samsa_buf_t       scratch = SAMSA_BUF_INIT;
    samsa_rechdr_t    h = { "h", 1, "x", 1 };
    uint8_t          *buf = samsa_malloc(65536);
    char              k[16], v[16];
    size_t            sz;
    int               i;

    samsa_recbuild_init(&rb, buf, 65536, codec, SAMSA_CODEC_LEVEL_DEFAULT);
    for (i = 0; i < n; i++) {
        snprintf(k, sizeof(k), "k%lld", (long long) (base + i));
        snprintf(v, sizeof(v), "v%lld", (long long) (base + i));
        assert_true(samsa_recbuild_append(
            &rb, 1000 + i, i == 1 ? NULL : k, i == 1 ? 0 : strlen(k), v,
            i == 2 ? 0 : strlen(v), i == 0 ? &h : NULL, i == 0 ? 1 : 0,
            &sz));
    }
    assert_int_equal(samsa_recbuild_close(&rb, &scratch), SAMSA_ERR_NONE);
    if (pid >= 0) {
        samsa_recbuild_set_producer(&rb, pid, 0, 0, txn);
    }
    samsa_store_be64(buf, (uint64_t) base);
    samsa_buf_append(out, buf, samsa_recbuild_size(&rb));
    samsa_buf_fini(&scratch);
    samsa_free(buf);
}

/* A control batch (marker type 0 abort / 1 commit) for pid at offset. */
static void
fx_marker(samsa_buf_t *out, int64_t offset, int64_t pid, int16_t type)
{
    samsa_recbuild_t  rb;
    samsa_buf_t       scratch = SAMSA_BUF_INIT;
    uint8_t           key[4] = { 0, 0, 0, (uint8_t) type };
    uint8_t           val[6] = { 0 };
    uint8_t          *buf = samsa_malloc(1024);
    size_t            sz, size;

    samsa_recbuild_init(&rb, buf, 1024, SAMSA_CODEC_NONE,
                        SAMSA_CODEC_LEVEL_DEFAULT);
    assert_true(samsa_recbuild_append(&rb, 5000, key, 4, val, 6, NULL, 0,
                                      &sz));
    assert_int_equal(samsa_recbuild_close(&rb, &scratch), SAMSA_ERR_NONE);
    samsa_recbuild_set_producer(&rb, pid, 0, -1, true);
    size = samsa_recbuild_size(&rb);
    buf[SAMSA_BATCH_OFF_Attributes + 1] |= SAMSA_BATCH_ATTR_CONTROL;
    samsa_store_be32(buf + SAMSA_BATCH_OFF_Crc,
                     samsa_batch_crc_compute(buf, size));
    samsa_store_be64(buf, (uint64_t) offset);
    samsa_buf_append(out, buf, size);
    samsa_buf_fini(&scratch);
    samsa_free(buf);
}

static bool  fx_in_place;           /* parse from a source */

static int
fx_mode_copy(void **state)
{
    (void) state;
    fx_in_place = false;
    return 0;
}

static int
fx_mode_in_place(void **state)
{
    (void) state;
    fx_in_place = true;
    return 0;
}

static samsa_crecs_chunk_t *
fx_parse(const samsa_buf_t *b, size_t len, int64_t fetch_offset,
         bool read_committed, const samsa_crecs_aborted_t *ab, size_t nab)
{
    samsa_crecs_opts_t    o = { fetch_offset, read_committed, true, ab, nab,
                                1 << 20, NULL };
    samsa_crecs_chunk_t  *ch;
    uint8_t              *bytes;

    if (!fx_in_place) {
        return samsa_crecs_parse("t", 3, b->data, len, &o);
    }
    bytes = samsa_malloc(len > 0 ? len : 1);
    memcpy(bytes, b->data, len);
    o.src = samsa_crecs_src_new(bytes);
    ch = samsa_crecs_parse("t", 3, bytes, len, &o);
    samsa_crecs_src_unref(o.src);       /* the chunk keeps its own */
    return ch;
}

/* Does p lie in the chunk's own buffer (a copy), not in a source? */
static bool
fx_copied(const samsa_crecs_chunk_t *ch, const void *p)
{
    const uint8_t  *q = p;

    return ch->data != NULL && q >= ch->data && q < ch->data + ch->data_len;
}

static void
test_crecs_fields_every_codec(void **state)
{
    samsa_codec_t  codecs[] = { SAMSA_CODEC_NONE, SAMSA_CODEC_GZIP,
                                SAMSA_CODEC_SNAPPY, SAMSA_CODEC_LZ4,
                                SAMSA_CODEC_ZSTD };
    size_t         c;

    (void) state;
    for (c = 0; c < 5; c++) {
        samsa_buf_t                     b = SAMSA_BUF_INIT;
        samsa_crecs_chunk_t            *ch;
        const samsa_consumer_record_t  *r;

        fx_batch(&b, 10, 40, codecs[c], -1, false);
        fx_batch(&b, 50, 3, codecs[c], -1, false);
        ch = fx_parse(&b, b.len, 10, false, NULL, 0);
        assert_int_equal(ch->err, SAMSA_ERR_NONE);
        assert_int_equal(ch->n, 43);
        assert_int_equal(ch->next_offset, 53);
        r = &ch->recs[0];
        assert_string_equal(r->topic, "t");
        assert_int_equal(r->partition, 3);
        assert_int_equal(r->offset, 10);
        assert_int_equal(r->timestamp, 1000);
        assert_int_equal(r->timestamp_type, SAMSA_TIMESTAMP_CREATE_TIME);
        assert_int_equal(r->key_len, 3);
        assert_memory_equal(r->key, "k10", 3);
        assert_memory_equal(r->value, "v10", 3);
        assert_int_equal(r->nheaders, 1);
        assert_memory_equal(r->headers[0].key, "h", 1);
        assert_memory_equal(r->headers[0].value, "x", 1);
        assert_null(ch->recs[1].key);                 /* null key */
        assert_non_null(ch->recs[2].value);           /* empty value */
        assert_int_equal(ch->recs[2].value_len, 0);
        assert_int_equal(ch->recs[3].nheaders, 0);
        assert_int_equal(ch->recs[42].offset, 52);
        assert_int_equal(ch->recs[40].nheaders, 1);   /* 2nd batch */
        assert_memory_equal(ch->recs[40].headers[0].value, "x", 1);
        assert_int_equal(ch->recs[41].nheaders, 0);
        /* copied unless in place and not compressed (test_crecs_in_place_
         * mixed checks a batch that is) */
        assert_true(fx_in_place || fx_copied(ch, r->value));
        assert_true(!fx_in_place || codecs[c] != SAMSA_CODEC_NONE
                    || !fx_copied(ch, r->value));
        assert_true(fx_copied(ch, r->headers[0].value)
                    == fx_copied(ch, r->value));
        /* (recbuild keeps a batch that does not shrink uncompressed:
         * the 3-record one may be in place whatever the codec) */
        assert_true(fx_in_place || ch->src == NULL);
        assert_true(!fx_in_place || codecs[c] != SAMSA_CODEC_NONE
                    || ch->src != NULL);
        samsa_crecs_chunk_unref(ch);
        /* fetch offset inside the first batch: earlier records dropped */
        ch = fx_parse(&b, b.len, 45, false, NULL, 0);
        assert_int_equal(ch->n, 8);
        assert_int_equal(ch->recs[0].offset, 45);
        samsa_crecs_chunk_unref(ch);
        samsa_buf_fini(&b);
    }
}

static void
test_crecs_partial_and_crc(void **state)
{
    samsa_buf_t           b = SAMSA_BUF_INIT;
    samsa_crecs_chunk_t  *ch;
    size_t                first;

    (void) state;
    fx_batch(&b, 0, 5, SAMSA_CODEC_NONE, -1, false);
    first = b.len;
    fx_batch(&b, 5, 5, SAMSA_CODEC_GZIP, -1, false);
    /* cut inside the second batch: only the first is read */
    ch = fx_parse(&b, b.len - 3, 0, false, NULL, 0);
    assert_int_equal(ch->err, SAMSA_ERR_NONE);
    assert_int_equal(ch->n, 5);
    assert_int_equal(ch->next_offset, 5);
    samsa_crecs_chunk_unref(ch);
    /* nothing whole at all: the batch is larger than what came */
    ch = fx_parse(&b, 40, 0, false, NULL, 0);
    assert_int_equal(ch->err, SAMSA_ERR_MESSAGE_TOO_LARGE);
    assert_int_equal(ch->n, 0);
    samsa_crecs_chunk_unref(ch);
    /* a flipped byte in the second batch: CRC error at offset 5 */
    b.data[first + 70] ^= 0x40;
    ch = fx_parse(&b, b.len, 0, false, NULL, 0);
    assert_int_equal(ch->err, SAMSA_ERR_CORRUPT_MESSAGE);
    assert_int_equal(ch->err_offset, 5);
    assert_int_equal(ch->n, 5);
    assert_int_equal(ch->next_offset, 5);
    samsa_crecs_chunk_unref(ch);
    samsa_buf_fini(&b);
}

/* pid 7 writes 2..3 and aborts (marker at 4); pid 8 writes 5..6 and
 * commits (marker at 7); plain records at 0..1 and 8. */
static void
test_crecs_transactions(void **state)
{
    samsa_buf_t                  b = SAMSA_BUF_INIT;
    samsa_crecs_chunk_t         *ch;
    const samsa_crecs_aborted_t  ab[] = { { 7, 2 } };
    int64_t                      want_rc[] = { 0, 1, 5, 6, 8 };
    int64_t                      want_ru[] = { 0, 1, 2, 3, 5, 6, 8 };
    size_t                       i;

    (void) state;
    fx_batch(&b, 0, 2, SAMSA_CODEC_NONE, -1, false);
    fx_batch(&b, 2, 2, SAMSA_CODEC_LZ4, 7, true);
    fx_marker(&b, 4, 7, 0);
    fx_batch(&b, 5, 2, SAMSA_CODEC_NONE, 8, true);
    fx_marker(&b, 7, 8, 1);
    fx_batch(&b, 8, 1, SAMSA_CODEC_NONE, -1, false);
    ch = fx_parse(&b, b.len, 0, true, ab, 1);
    assert_int_equal(ch->err, SAMSA_ERR_NONE);
    assert_int_equal(ch->n, 5);
    for (i = 0; i < 5; i++) {
        assert_int_equal(ch->recs[i].offset, want_rc[i]);
    }
    assert_int_equal(ch->next_offset, 9);
    samsa_crecs_chunk_unref(ch);
    ch = fx_parse(&b, b.len, 0, false, ab, 1);
    assert_int_equal(ch->n, 7);             /* markers never handed out */
    for (i = 0; i < 7; i++) {
        assert_int_equal(ch->recs[i].offset, want_ru[i]);
    }
    samsa_crecs_chunk_unref(ch);
    samsa_buf_fini(&b);
}

/* One response, uncompressed and compressed batches mixed, in place: the
 * plain batches' records point into the source, the zstd one's into the
 * chunk; the record array is sized from the batches' counts; a chunk
 * without records does not keep the source. */
static void
test_crecs_in_place_mixed(void **state)
{
    samsa_buf_t           b = SAMSA_BUF_INIT;
    samsa_crecs_chunk_t  *ch;
    samsa_batch_hdr_t     hdr;
    uint8_t              *bytes;
    samsa_crecs_opts_t    o = { 0, false, true, NULL, 0, 1 << 20, NULL };
    size_t                i, first;

    (void) state;
    fx_batch(&b, 0, 4, SAMSA_CODEC_NONE, -1, false);
    first = b.len;
    fx_batch(&b, 4, 40, SAMSA_CODEC_ZSTD, -1, false);
    assert_int_equal(samsa_batch_parse(b.data + first, b.len - first, &hdr),
                     SAMSA_ERR_NONE);
    assert_int_equal(samsa_batch_codec(&hdr), SAMSA_BATCH_CODEC_ZSTD);
    fx_batch(&b, 44, 4, SAMSA_CODEC_NONE, -1, false);
    bytes = samsa_malloc(b.len);
    memcpy(bytes, b.data, b.len);
    o.src = samsa_crecs_src_new(bytes);
    ch = samsa_crecs_parse("t", 0, bytes, b.len, &o);
    assert_int_equal(ch->err, SAMSA_ERR_NONE);
    assert_int_equal(ch->n, 48);
    assert_ptr_equal(ch->src, o.src);
    assert_int_equal(atomic_load(&o.src->refs), 2);
    for (i = 0; i < 48; i++) {
        const uint8_t  *k = ch->recs[i].key;

        assert_int_equal(ch->recs[i].offset, (int64_t) i);
        if (k == NULL) {
            continue;                   /* record 1 of each batch */
        }
        assert_true((k >= bytes && k < bytes + b.len) == (i < 4 || i >= 44));
        assert_true(fx_copied(ch, k) == (i >= 4 && i < 44));
    }
    samsa_crecs_src_unref(o.src);
    assert_memory_equal(ch->recs[47].value, "v47", 3);  /* still there */
    assert_memory_equal(ch->recs[43].value, "v43", 3);
    samsa_crecs_chunk_unref(ch);
    /* at an offset past everything: no records, no reference kept */
    bytes = samsa_malloc(b.len);
    memcpy(bytes, b.data, b.len);
    o.src = samsa_crecs_src_new(bytes);
    o.fetch_offset = 48;
    ch = samsa_crecs_parse("t", 0, bytes, b.len, &o);
    assert_int_equal(ch->n, 0);
    assert_int_equal(ch->next_offset, 48);
    assert_null(ch->src);
    assert_int_equal(atomic_load(&o.src->refs), 1);
    samsa_crecs_chunk_unref(ch);
    samsa_crecs_src_unref(o.src);
    samsa_buf_fini(&b);
}

static void
test_crecs_log_append_time(void **state)
{
    samsa_buf_t           b = SAMSA_BUF_INIT;
    samsa_crecs_chunk_t  *ch;

    (void) state;
    fx_batch(&b, 0, 3, SAMSA_CODEC_NONE, -1, false);
    assert_int_equal(samsa_batch_assign(b.data, b.len, 0, 0, 777777), 3);
    ch = fx_parse(&b, b.len, 0, false, NULL, 0);
    assert_int_equal(ch->n, 3);
    assert_int_equal(ch->recs[2].timestamp, 777777);
    assert_int_equal(ch->recs[2].timestamp_type,
                     SAMSA_TIMESTAMP_LOG_APPEND_TIME);
    samsa_crecs_chunk_unref(ch);
    samsa_buf_fini(&b);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
#define FX_BOTH(t)  cmocka_unit_test_setup(t, fx_mode_copy), \
                    cmocka_unit_test_setup(t, fx_mode_in_place)
        FX_BOTH(test_crecs_fields_every_codec),
        FX_BOTH(test_crecs_partial_and_crc),
        FX_BOTH(test_crecs_transactions),
        FX_BOTH(test_crecs_log_append_time),
        cmocka_unit_test(test_crecs_in_place_mixed),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
