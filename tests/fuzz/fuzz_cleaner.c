/*
 * libFuzzer target: a batch read back from a segment through the log
 * cleaner's decoders (samsa_cleaner_map_batch, samsa_cleaner_filter_batch).
 * The first byte picks the options: bit 0 re-signs the CRC (so that the
 * records get decoded), bit 1 retain_empty, bit 2 an offset map with keys
 * k0..k3 at late offsets, bit 3 a clock past every delete horizon.  What
 * the filter writes must be whole batches with valid CRCs, keep the base
 * and last offset, and come through a second identical filter unchanged.
 */
#include "fuzz.h"

#include "log/cleaner.h"
#include "proto/batch.h"
#include "util/endian.h"

static void
fuzz_cleaner_check(const uint8_t *in, const uint8_t *out, size_t len,
                   const samsa_cleaner_filter_t *f)
{
    samsa_batch_hdr_t           ih, oh;
    samsa_cleaner_filter_res_t  res;
    samsa_buf_t                 again = SAMSA_BUF_INIT;

    if (len == 0) {
        return;
    }
    fuzz_require(samsa_batch_parse(in, SAMSA_BATCH_HDR_SIZE, &ih)
                 == SAMSA_ERR_NONE);
    fuzz_require(samsa_batch_parse(out, len, &oh) == SAMSA_ERR_NONE);
    fuzz_require((size_t) samsa_batch_size(&oh) == len);
    fuzz_require(samsa_batch_crc_ok(out, len));
    fuzz_require(oh.BaseOffset == ih.BaseOffset
                 && oh.LastOffsetDelta == ih.LastOffsetDelta
                 && oh.ProducerId == ih.ProducerId);
    fuzz_require(samsa_cleaner_filter_batch(out, len, f, &again, &res)
                 == SAMSA_ERR_NONE);
    fuzz_require(!res.changed && again.len == len
                 && memcmp(again.data, out, len) == 0);
    samsa_buf_fini(&again);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    samsa_cleaner_map_t         *map = NULL;
    samsa_cleaner_filter_t       f;
    samsa_cleaner_filter_res_t   res;
    samsa_buf_t                  out = SAMSA_BUF_INIT;
    uint8_t                     *p;
    char                         key[4] = "k0";
    int                          i;

    if (size < 1 + SAMSA_BATCH_HDR_SIZE) {
        return 0;
    }
    p = malloc(size - 1);
    memcpy(p, data + 1, size - 1);
    if (data[0] & 1) {
        samsa_store_be32(p + SAMSA_BATCH_OFF_Crc,
                         samsa_batch_crc_compute(p, size - 1));
    }
    if (data[0] & 4) {
        map = samsa_cleaner_map_new(1 << 16);
        for (i = 0; i < 4; i++) {
            key[1] = (char) ('0' + i);
            fuzz_require(samsa_cleaner_map_put(map, (const uint8_t *) key, 2,
                                               1000 + i));
        }
        (void) samsa_cleaner_map_batch(map, p, size - 1, 0);
    }
    f = (samsa_cleaner_filter_t) {
        .map = map,
        .now_ms = (data[0] & 8) ? INT64_MAX - 1 : 1700000000000LL,
        .delete_retention_ms = 1000,
        .retain_empty = (data[0] & 2) != 0,
    };
    if (samsa_cleaner_filter_batch(p, size - 1, &f, &out, &res)
        == SAMSA_ERR_NONE) {
        fuzz_cleaner_check(p, out.data, out.len, &f);
    } else {
        fuzz_require(out.len == 0);
    }
    samsa_buf_fini(&out);
    samsa_cleaner_map_free(map);
    free(p);
    return 0;
}
