/*
 * proto/rd.h - the sticky-error reader over one received Kafka message.
 * After the first failure (short input, malformed length or varint) every
 * read returns 0 or a null slice and consumes nothing, so a decoder reads
 * straight through and checks rd->err once at the end.
 * Strings and bytes come back as slices borrowed from the input buffer:
 * they live as long as that buffer does.
 * Errors: SAMSA_ERR__UNDERFLOW when the input ends early, SAMSA_ERR__BAD_MSG
 * for input that can never be valid (negative lengths, null where the field
 * is not nullable, over-long varints).
 * Threads: a reader belongs to the thread decoding the message.
 */
#ifndef SAMSA_PROTO_RD_H
#define SAMSA_PROTO_RD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <samsa/errors.h>

#include "proto/types.h"
#include "util/endian.h"
#include "util/slice.h"

typedef struct samsa_rd {
    const uint8_t  *p;
    const uint8_t  *end;
    samsa_err_t     err;            /* first failure; later reads are no-ops */
} samsa_rd_t;

static inline void
samsa_rd_init(samsa_rd_t *rd, const void *ptr, size_t len)
{
    rd->p = ptr;
    rd->end = len > 0 ? rd->p + len : rd->p;    /* NULL + 0 is UB */
    rd->err = SAMSA_ERR_NONE;
}

/* Bytes left to read; 0 once a read has failed. */
static inline size_t
samsa_rd_remain(const samsa_rd_t *rd)
{
    return rd->err == SAMSA_ERR_NONE ? (size_t) (rd->end - rd->p) : 0;
}

/* Record err as the reader's failure unless it already has one. */
static inline void
samsa_rd_fail(samsa_rd_t *rd, samsa_err_t err)
{
    if (rd->err == SAMSA_ERR_NONE) {
        rd->err = err;
    }
}

/* False (and err set) if fewer than n bytes remain or a read already failed. */
static inline bool
samsa_rd_need(samsa_rd_t *rd, size_t n)
{
    if (rd->err == SAMSA_ERR_NONE && (size_t) (rd->end - rd->p) < n) {
        rd->err = SAMSA_ERR__UNDERFLOW;
    }
    return rd->err == SAMSA_ERR_NONE;
}

/* Consume the next n bytes and return where they start, or NULL (the
 * reader fails) if fewer remain.  The fixed-size readers below read
 * through it and return 0 on failure.  */
static inline const uint8_t *
samsa_rd_fixed(samsa_rd_t *rd, size_t n)
{
    const uint8_t  *p = NULL;

    if (samsa_rd_need(rd, n)) {
        p = rd->p;
        if (n > 0) {
            rd->p += n;                     /* NULL + 0 is UB */
        }
    }
    return p;
}

static inline void
samsa_rd_skip(samsa_rd_t *rd, size_t n)
{
    (void) samsa_rd_fixed(rd, n);
}

static inline int8_t
samsa_rd_i8(samsa_rd_t *rd)
{
    const uint8_t  *p = samsa_rd_fixed(rd, 1);

    return p != NULL ? (int8_t) p[0] : 0;
}

static inline uint16_t
samsa_rd_u16(samsa_rd_t *rd)
{
    const uint8_t  *p = samsa_rd_fixed(rd, 2);

    return p != NULL ? samsa_load_be16(p) : 0;
}

static inline int16_t
samsa_rd_i16(samsa_rd_t *rd)
{
    return (int16_t) samsa_rd_u16(rd);
}

static inline uint32_t
samsa_rd_u32(samsa_rd_t *rd)
{
    const uint8_t  *p = samsa_rd_fixed(rd, 4);

    return p != NULL ? samsa_load_be32(p) : 0;
}

static inline int32_t
samsa_rd_i32(samsa_rd_t *rd)
{
    return (int32_t) samsa_rd_u32(rd);
}

static inline int64_t
samsa_rd_i64(samsa_rd_t *rd)
{
    const uint8_t  *p = samsa_rd_fixed(rd, 8);

    return p != NULL ? (int64_t) samsa_load_be64(p) : 0;
}

/* Kafka's float64: an IEEE 754 double, big-endian. */
static inline double
samsa_rd_f64(samsa_rd_t *rd)
{
    uint64_t  u = (uint64_t) samsa_rd_i64(rd);
    double    v;

    memcpy(&v, &u, sizeof(v));
    return v;
}

/* One byte; any non-zero value is true, as Kafka reads it. */
static inline bool
samsa_rd_bool(samsa_rd_t *rd)
{
    return samsa_rd_i8(rd) != 0;
}

static inline samsa_uuid_t
samsa_rd_uuid(samsa_rd_t *rd)
{
    samsa_uuid_t    u;
    const uint8_t  *p = samsa_rd_fixed(rd, sizeof(u.b));

    memset(&u, 0, sizeof(u));
    if (p != NULL) {
        memcpy(u.b, p, sizeof(u.b));
    }
    return u;
}

/* Protocol varints: unsigned base-128, at most 5 bytes (uvarint) or 10
 * (uvarlong); a value that does not fit is SAMSA_ERR__BAD_MSG. */
uint32_t samsa_rd_uvarint(samsa_rd_t *rd);
uint64_t samsa_rd_uvarlong(samsa_rd_t *rd);

/* Record fields: zigzag-encoded signed varints. */
int32_t samsa_rd_varint(samsa_rd_t *rd);
int64_t samsa_rd_varlong(samsa_rd_t *rd);

/* Strings: int16 length (-1 = null) or, compact, uvarint length + 1
 * (0 = null).  The non-nullable readers fail with SAMSA_ERR__BAD_MSG on
 * null.  An empty string is a non-NULL slice of length 0. */
samsa_slice_t samsa_rd_str(samsa_rd_t *rd);
samsa_slice_t samsa_rd_nullable_str(samsa_rd_t *rd);
samsa_slice_t samsa_rd_compact_str(samsa_rd_t *rd);
samsa_slice_t samsa_rd_compact_nullable_str(samsa_rd_t *rd);
samsa_slice_t samsa_rd_str_any(samsa_rd_t *rd, bool compact, bool nullable);

/* Bytes (and records): int32 length (-1 = null) or, compact, uvarint
 * length + 1 (0 = null). */
samsa_slice_t samsa_rd_bytes(samsa_rd_t *rd);
samsa_slice_t samsa_rd_nullable_bytes(samsa_rd_t *rd);
samsa_slice_t samsa_rd_compact_bytes(samsa_rd_t *rd);
samsa_slice_t samsa_rd_compact_nullable_bytes(samsa_rd_t *rd);
samsa_slice_t samsa_rd_bytes_any(samsa_rd_t *rd, bool compact, bool nullable);

/* A records field: its bytes, borrowed from the input. */
static inline samsa_records_t
samsa_rd_records_any(samsa_rd_t *rd, bool compact, bool nullable)
{
    return (samsa_records_t) { samsa_rd_bytes_any(rd, compact, nullable),
                               NULL };
}

/* An array's element count: -1 for null (only if nullable, else
 * SAMSA_ERR__BAD_MSG), else 0..INT32_MAX.  Fails with SAMSA_ERR__UNDERFLOW
 * unless count * elem_min bytes (elem_min >= 1 assumed) still remain, so a
 * hostile count never drives a large allocation. */
int32_t samsa_rd_array_cnt(samsa_rd_t *rd, bool compact, bool nullable,
                           size_t elem_min);

/* Skip a whole tagged-field section (KIP-482): count, then per field its
 * tag, size and size bytes. */
void samsa_rd_tags_skip(samsa_rd_t *rd);

/* Take the next n bytes as their own reader sub (for one tagged field).
 * On failure sub is an exhausted reader carrying rd's error. */
void samsa_rd_sub(samsa_rd_t *rd, size_t n, samsa_rd_t *sub);

#endif /* SAMSA_PROTO_RD_H */
