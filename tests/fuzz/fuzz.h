/*
 * tests/fuzz/fuzz.h - shared by the libFuzzer targets (tests/fuzz/fuzz_*.c,
 * built with -DSAMSA_FUZZ=ON under clang; `make fuzz` runs them).
 * FUZZ_DEFINE(M) defines fuzz_M(version, p, n): decode p as M; when that
 * succeeds, encode, decode the encoding and encode again: both decodes
 * must succeed and consume everything, and the two encodings must be
 * identical, else abort() (a crash for libFuzzer).
 */
#ifndef SAMSA_TESTS_FUZZ_FUZZ_H
#define SAMSA_TESTS_FUZZ_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/rd.h"
#include "proto/wr.h"
#include "util/arena.h"
#include "util/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Abort (a finding) unless cond holds. */
static inline void
fuzz_require(int cond)
{
    if (!cond) {
        abort();
    }
}

#define FUZZ_DEFINE(M)                                                      \
static void                                                                 \
fuzz_##M(int16_t version, const uint8_t *p, size_t n)                       \
{                                                                           \
    samsa_arena_t   arena;                                                  \
    samsa_##M##_t   m, again;                                               \
    samsa_buf_t     b1 = SAMSA_BUF_INIT, b2 = SAMSA_BUF_INIT;               \
    samsa_wr_t      wr;                                                     \
    samsa_rd_t      rd;                                                     \
                                                                            \
    samsa_arena_init(&arena);                                               \
    samsa_rd_init(&rd, p, n);                                               \
    if (samsa_##M##_decode(&rd, version, &arena, &m) == SAMSA_ERR_NONE) {   \
        samsa_wr_init(&wr, &b1);                                            \
        samsa_##M##_encode(&wr, version, &m);                               \
        samsa_rd_init(&rd, b1.data, b1.len);                                \
        fuzz_require(samsa_##M##_decode(&rd, version, &arena, &again)       \
                     == SAMSA_ERR_NONE);                                    \
        fuzz_require(samsa_rd_remain(&rd) == 0);                            \
        samsa_wr_init(&wr, &b2);                                            \
        samsa_##M##_encode(&wr, version, &again);                           \
        fuzz_require(b1.len == b2.len);                                     \
        fuzz_require(b1.len == 0                                            \
                     || memcmp(b1.data, b2.data, b1.len) == 0);             \
    }                                                                       \
    samsa_buf_fini(&b1);                                                    \
    samsa_buf_fini(&b2);                                                    \
    samsa_arena_fini(&arena);                                               \
}

/* A request-body target: the first 2 bytes pick the version (big-endian,
 * folded into the schema's range so that most inputs reach the decoder),
 * the rest is the body. */
#define FUZZ_REQUEST_TARGET(M, vmin, vmax)                                  \
FUZZ_DEFINE(M)                                                              \
                                                                            \
int                                                                         \
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)                    \
{                                                                           \
    int16_t  version;                                                       \
                                                                            \
    if (size < 2) {                                                         \
        return 0;                                                           \
    }                                                                       \
    version = (int16_t) samsa_load_be16(data);                              \
    if (version > (vmax) + 1 || version < (vmin) - 1) {                     \
        version = (int16_t) ((vmin) + (uint16_t) version % ((vmax) + 1));   \
    }                                                                       \
    fuzz_##M(version, data + 2, size - 2);                                  \
    return 0;                                                               \
}

#endif /* SAMSA_TESTS_FUZZ_FUZZ_H */
