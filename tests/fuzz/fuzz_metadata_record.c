/* libFuzzer target: one metadata log record value as Kafka frames it
 * (frame version, type, version as unsigned varints, then the body:
 * samsa_MetadataRecords_decode_framed).  A record that decodes must
 * re-encode to bytes that decode to the same encoding again. */
#include "fuzz.h"

#include "proto/gen/MetadataRecords.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    samsa_MetadataRecords_any_t  m, again;
    samsa_arena_t                arena;
    samsa_buf_t                  b1 = SAMSA_BUF_INIT, b2 = SAMSA_BUF_INIT;
    samsa_wr_t                   wr;
    samsa_rd_t                   rd;

    samsa_arena_init(&arena);
    samsa_rd_init(&rd, data, size);
    if (samsa_MetadataRecords_decode_framed(&rd, &arena, &m)
        == SAMSA_ERR_NONE) {
        samsa_wr_init(&wr, &b1);
        samsa_MetadataRecords_encode_framed(&wr, &m);
        samsa_rd_init(&rd, b1.data, b1.len);
        fuzz_require(samsa_MetadataRecords_decode_framed(&rd, &arena, &again)
                     == SAMSA_ERR_NONE);
        fuzz_require(samsa_rd_remain(&rd) == 0);
        fuzz_require(again.type == m.type && again.version == m.version);
        samsa_wr_init(&wr, &b2);
        samsa_MetadataRecords_encode_framed(&wr, &again);
        fuzz_require(b1.len == b2.len);
        fuzz_require(memcmp(b1.data, b2.data, b1.len) == 0);
    }
    samsa_buf_fini(&b1);
    samsa_buf_fini(&b2);
    samsa_arena_fini(&arena);
    return 0;
}
