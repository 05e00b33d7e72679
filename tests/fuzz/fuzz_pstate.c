/*
 * libFuzzer target: producer state snapshot files (<offset>.snapshot,
 * log/pstate.h) and transaction markers.  The input is decoded as a
 * snapshot twice: as is, and with its CRC field recomputed (so the fuzzer
 * reaches the entries).  A decoded state must encode to a snapshot that
 * decodes again and encodes to the same bytes.  The input is also read as
 * a control batch (samsa_batch_control_parse) and, when it parses as
 * record batches, applied to the state as a coordinator's append.
 */
#include "fuzz.h"

#include "log/pstate.h"
#include "util/crc32c.h"
#include "util/endian.h"

static void
fuzz_pstate_decode(samsa_pstate_t *ps, const uint8_t *p, size_t n)
{
    samsa_pstate_t  *again;
    samsa_buf_t      b1 = SAMSA_BUF_INIT, b2 = SAMSA_BUF_INIT;

    if (samsa_pstate_decode(ps, p, n) != SAMSA_ERR_NONE) {
        fuzz_require(samsa_pstate_count(ps) == 0);
        return;
    }
    samsa_pstate_encode(ps, &b1);
    again = samsa_pstate_new();
    fuzz_require(samsa_pstate_decode(again, b1.data, b1.len)
                 == SAMSA_ERR_NONE);
    samsa_pstate_encode(again, &b2);
    fuzz_require(b1.len == b2.len && memcmp(b1.data, b2.data, b1.len) == 0);
    fuzz_require(samsa_pstate_count(again) == samsa_pstate_count(ps));
    samsa_pstate_free(again);
    samsa_buf_fini(&b1);
    samsa_buf_fini(&b2);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    samsa_pstate_t         *ps = samsa_pstate_new();
    samsa_pstate_change_t   ch;
    samsa_pstate_batch_t    dup;
    samsa_batch_hdr_t       hdr;
    uint8_t                *copy;
    int16_t                 type;
    int32_t                 coord;
    bool                    is_dup;

    fuzz_pstate_decode(ps, data, size);
    if (size >= SAMSA_PSTATE_HEADER_SIZE) {
        copy = malloc(size);
        memcpy(copy, data, size);
        samsa_store_be32(copy + 2, samsa_crc32c(0, copy + 6, size - 6));
        fuzz_pstate_decode(ps, copy, size);
        free(copy);
    }
    (void) samsa_batch_control_parse(data, size, &type, &coord);
    if (samsa_batch_parse(data, size, &hdr) == SAMSA_ERR_NONE
        && (uint64_t) samsa_batch_size(&hdr) <= size) {
        samsa_pstate_change_init(&ch);
        if (samsa_pstate_apply(ps, data, (size_t) samsa_batch_size(&hdr), 0,
                               SAMSA_PSTATE_COORDINATOR, &ch, &is_dup, &dup,
                               NULL)
            == SAMSA_ERR_NONE) {
            samsa_pstate_commit(ps, &ch);
        }
    }
    samsa_pstate_free(ps);
    return 0;
}
