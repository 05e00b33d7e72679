/*
 * tests/unit/proto/rt.h - round-trip checks for generated codecs.
 * RT_DEFINE(M) defines rt_M(version, in, out, arena, buf): encode in at
 * version into buf, decode buf into out (which must consume every byte),
 * encode out again and require identical bytes; then decode every proper
 * prefix (must fail) and every one-byte corruption (must not crash).  out
 * borrows buf, so the caller frees buf (samsa_buf_fini) after its checks.
 */
#ifndef SAMSA_TESTS_UNIT_PROTO_RT_H
#define SAMSA_TESTS_UNIT_PROTO_RT_H

#include "proto/rd.h"
#include "proto/wr.h"
#include "util/arena.h"
#include "util/buf.h"

#define RT_DEFINE(M)                                                        \
static void                                                                 \
rt_##M##_abuse(int16_t version, const samsa_buf_t *buf)                     \
{                                                                           \
    samsa_arena_t   arena;                                                  \
    samsa_##M##_t   m;                                                      \
    samsa_rd_t      rd;                                                     \
    samsa_err_t     err;                                                    \
    uint8_t        *copy = malloc(buf->len + 1);                            \
    size_t          n;                                                      \
                                                                            \
    samsa_arena_init(&arena);                                               \
    for (n = 0; n < buf->len; n++) {                                        \
        samsa_rd_init(&rd, buf->data, n);                                   \
        assert_int_not_equal(samsa_##M##_decode(&rd, version, &arena, &m),  \
                             SAMSA_ERR_NONE);                               \
    }                                                                       \
    for (n = 0; n < buf->len; n++) {                                        \
        memcpy(copy, buf->data, buf->len);                                  \
        copy[n] ^= 0xff;                                                    \
        samsa_rd_init(&rd, copy, buf->len);                                 \
        err = samsa_##M##_decode(&rd, version, &arena, &m);                 \
        (void) err;                                                         \
    }                                                                       \
    samsa_arena_fini(&arena);                                               \
    free(copy);                                                             \
}                                                                           \
                                                                            \
static void                                                                 \
rt_##M(int16_t version, const samsa_##M##_t *in, samsa_##M##_t *out,       \
       samsa_arena_t *arena, samsa_buf_t *buf)                              \
{                                                                           \
    samsa_buf_t  again = SAMSA_BUF_INIT;                                    \
    samsa_wr_t   wr;                                                        \
    samsa_rd_t   rd;                                                        \
                                                                            \
    *buf = SAMSA_BUF_INIT;                                                  \
    samsa_wr_init(&wr, buf);                                                \
    samsa_##M##_encode(&wr, version, in);                                   \
    samsa_rd_init(&rd, buf->data, buf->len);                                \
    assert_int_equal(samsa_##M##_decode(&rd, version, arena, out),          \
                     SAMSA_ERR_NONE);                                       \
    assert_int_equal(samsa_rd_remain(&rd), 0);                              \
    samsa_wr_init(&wr, &again);                                             \
    samsa_##M##_encode(&wr, version, out);                                  \
    assert_int_equal(again.len, buf->len);                                  \
    assert_memory_equal(again.data, buf->data, buf->len);                   \
    samsa_buf_fini(&again);                                                 \
    rt_##M##_abuse(version, buf);                                           \
}

/* Decode exactly len bytes of p as M at version into out: the error, and
 * on success every byte must have been consumed. */
#define RT_DECODE(M, version, in, in_len, arena, out)                       \
    ({                                                                      \
        samsa_rd_t   r_;                                                    \
        samsa_err_t  e_;                                                    \
                                                                            \
        samsa_rd_init(&r_, (in), (in_len));                                 \
        e_ = samsa_##M##_decode(&r_, (version), (arena), (out));            \
        if (e_ == SAMSA_ERR_NONE) {                                         \
            assert_int_equal(samsa_rd_remain(&r_), 0);                      \
        }                                                                   \
        e_;                                                                 \
    })

/* Encode m at version into a fresh buf and require it to equal p/len. */
#define RT_ENCODES_TO(M, version, m, want, want_len)                        \
    do {                                                                    \
        samsa_buf_t  b_ = SAMSA_BUF_INIT;                                   \
        samsa_wr_t   w_;                                                    \
                                                                            \
        samsa_wr_init(&w_, &b_);                                            \
        samsa_##M##_encode(&w_, (version), (m));                            \
        assert_int_equal(b_.len, (want_len));                               \
        assert_memory_equal(b_.data, (want), (want_len));                   \
        samsa_buf_fini(&b_);                                                \
    } while (0)

#define S(cstr) samsa_slice_cstr(cstr)

#endif /* SAMSA_TESTS_UNIT_PROTO_RT_H */
