/*
 * libFuzzer target: a Fetch response's Records through the consumer's
 * batch reader, samsa_crecs_parse().  The first byte picks the options
 * (read_committed, check.crcs, an aborted transaction list taken from the
 * next 16 bytes, and bit 0x40: parse in place from a copy handed over as
 * a source, released before the records are checked); the rest is the
 * records blob.  Whatever comes back must be consistent: records in
 * offset order at or after the fetch offset, every key/value/header
 * inside the chunk's own bytes or its source, the next offset not behind
 * the fetch offset.
 */
#include "fuzz.h"

#include "client/consumer/crecs.h"
#include "util/alloc.h"
#include "util/endian.h"

static size_t  fuzz_src_len;        /* bytes of the source, in place */

static void
fuzz_crecs_inside(const samsa_crecs_chunk_t *ch, const void *p, size_t len)
{
    const uint8_t  *b = p;

    if (p == NULL) {
        return;
    }
    if (ch->src != NULL && b >= ch->src->bytes
        && b + len <= ch->src->bytes + fuzz_src_len) {
        return;
    }
    fuzz_require(b >= ch->data && b + len <= ch->data + ch->data_len);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    samsa_crecs_opts_t     o;
    samsa_crecs_aborted_t  ab;
    samsa_crecs_chunk_t   *ch;
    int64_t                prev = -1;
    size_t                 i, j;

    if (size < 17) {
        return 0;
    }
    memset(&o, 0, sizeof(o));
    o.read_committed = (data[0] & 1) != 0;
    o.check_crcs = (data[0] & 2) != 0;
    o.fetch_offset = (data[0] >> 2) & 7;
    o.max_batch_bytes = 1 << 20;
    ab.producer_id = (int64_t) samsa_load_be64(data + 1);
    ab.first_offset = (int64_t) samsa_load_be64(data + 9);
    if (data[0] & 0x80) {
        o.aborted = &ab;
        o.naborted = 1;
    }
    fuzz_src_len = 0;
    if (data[0] & 0x40) {
        uint8_t  *copy = samsa_malloc(size > 17 ? size - 17 : 1);

        memcpy(copy, data + 17, size - 17);
        fuzz_src_len = size - 17;
        o.src = samsa_crecs_src_new(copy);
        ch = samsa_crecs_parse("fuzz", 0, copy, size - 17, &o);
        samsa_crecs_src_unref(o.src);   /* the chunk keeps its own */
    } else {
        ch = samsa_crecs_parse("fuzz", 0, data + 17, size - 17, &o);
    }
    fuzz_require(ch->next_offset >= o.fetch_offset);
    for (i = 0; i < ch->n; i++) {
        const samsa_consumer_record_t  *r = &ch->recs[i];

        fuzz_require(r->offset >= o.fetch_offset && r->offset > prev);
        prev = r->offset;
        fuzz_crecs_inside(ch, r->key, r->key_len);
        fuzz_crecs_inside(ch, r->value, r->value_len);
        for (j = 0; j < r->nheaders; j++) {
            fuzz_crecs_inside(ch, r->headers[j].key, r->headers[j].key_len);
            fuzz_crecs_inside(ch, r->headers[j].value,
                              r->headers[j].value_len);
        }
    }
    samsa_crecs_chunk_unref(ch);
    return 0;
}
