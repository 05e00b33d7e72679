/*
 * libFuzzer target: a Produce records blob through samsa_batch_validate().
 * The first byte picks the topic's rules (timestamp type, key
 * requirement, client or coordinator); the rest is the blob.  Whatever is
 * accepted must survive samsa_batch_assign() with every CRC still valid,
 * cover exactly the reported offsets, and validate again.
 */
#include "fuzz.h"

#include "proto/batch.h"

static void
fuzz_batch_check_assigned(const uint8_t *p, size_t len, int64_t first,
                          int64_t next)
{
    samsa_batch_hdr_t  hdr;
    size_t             off = 0;
    int64_t            expect = first;

    while (off < len) {
        fuzz_require(samsa_batch_parse(p + off, len - off, &hdr)
                     == SAMSA_ERR_NONE);
        fuzz_require(hdr.BaseOffset == expect);
        fuzz_require(samsa_batch_crc_ok(p + off,
                                        (size_t) samsa_batch_size(&hdr)));
        expect = samsa_batch_last_offset(&hdr) + 1;
        off += (size_t) samsa_batch_size(&hdr);
    }
    fuzz_require(off == len && expect == next);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    samsa_batch_rules_t    rules;
    samsa_batch_summary_t  sum;
    uint8_t               *p;
    int64_t                next, lat;

    if (size < 1) {
        return 0;
    }
    rules = (samsa_batch_rules_t) {
        .now_ms = 1700000000000LL,
        .max_message_bytes = (data[0] & 0x10) ? 200 : 1 << 20,
        .log_append_time = (data[0] & 1) != 0,
        .timestamp_before_max_ms = (data[0] & 8) ? 1000 : INT64_MAX,
        .timestamp_after_max_ms = (data[0] & 8) ? 1000 : INT64_MAX,
        .require_keys = (data[0] & 2) != 0,
        .from_client = (data[0] & 4) != 0,
    };
    p = malloc(size);
    memcpy(p, data + 1, size - 1);
    if (samsa_batch_validate(p, size - 1, &rules, &sum) == SAMSA_ERR_NONE) {
        fuzz_require(sum.nbatches > 0 && sum.nrecords >= sum.nbatches);
        lat = rules.log_append_time ? rules.now_ms : -1;
        next = samsa_batch_assign(p, size - 1, 1000, 5, lat);
        fuzz_require(next == 1000 + sum.nrecords);
        fuzz_batch_check_assigned(p, size - 1, 1000, next);
        rules.from_client = false;
        fuzz_require(samsa_batch_validate(p, size - 1, &rules, &sum)
                     == SAMSA_ERR_NONE);
    } else {
        fuzz_require(sum.err_msg != NULL);
    }
    free(p);
    return 0;
}
