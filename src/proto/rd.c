/*
 * proto/rd.c - the reader's varints, strings, bytes, arrays and tagged
 * fields; fixed-size reads are inline in rd.h.
 * Threads: the reader's owner.
 */
#include "proto/rd.h"

#include <limits.h>

uint32_t
samsa_rd_uvarint(samsa_rd_t *rd)
{
    uint32_t        v = 0;
    unsigned        shift;
    const uint8_t  *p;

    if (rd->err != SAMSA_ERR_NONE) {
        return 0;
    }
    for (p = rd->p, shift = 0; p < rd->end; p++, shift += 7) {
        if (shift == 28 && (*p & 0xf0) != 0) {
            rd->err = SAMSA_ERR__BAD_MSG;       /* > 32 bits or > 5 bytes */
            return 0;
        }
        v |= (uint32_t) (*p & 0x7f) << shift;
        if ((*p & 0x80) == 0) {
            rd->p = p + 1;
            return v;
        }
    }
    rd->err = SAMSA_ERR__UNDERFLOW;
    return 0;
}

uint64_t
samsa_rd_uvarlong(samsa_rd_t *rd)
{
    uint64_t        v = 0;
    unsigned        shift;
    const uint8_t  *p;

    if (rd->err != SAMSA_ERR_NONE) {
        return 0;
    }
    for (p = rd->p, shift = 0; p < rd->end; p++, shift += 7) {
        if (shift == 63 && (*p & 0xfe) != 0) {
            rd->err = SAMSA_ERR__BAD_MSG;       /* > 64 bits or > 10 bytes */
            return 0;
        }
        v |= (uint64_t) (*p & 0x7f) << shift;
        if ((*p & 0x80) == 0) {
            rd->p = p + 1;
            return v;
        }
    }
    rd->err = SAMSA_ERR__UNDERFLOW;
    return 0;
}

int32_t
samsa_rd_varint(samsa_rd_t *rd)
{
    uint32_t  u = samsa_rd_uvarint(rd);

    return (int32_t) ((u >> 1) ^ (0u - (u & 1)));
}

int64_t
samsa_rd_varlong(samsa_rd_t *rd)
{
    uint64_t  u = samsa_rd_uvarlong(rd);

    return (int64_t) ((u >> 1) ^ (0u - (u & 1)));
}

/*
 * The n bytes after a length prefix as a slice; len -1 is null (an error
 * unless nullable), other negative lengths are malformed.
 */
static samsa_slice_t
rd_take(samsa_rd_t *rd, int64_t len, bool nullable)
{
    samsa_slice_t  s = SAMSA_SLICE_NULL;

    if (rd->err != SAMSA_ERR_NONE) {
        return s;
    }
    if (len < 0) {
        if (len != -1 || !nullable) {
            rd->err = SAMSA_ERR__BAD_MSG;
        }
        return s;
    }
    if (samsa_rd_need(rd, (uint64_t) len)) {
        s.ptr = (const char *) rd->p;
        s.len = (size_t) len;
        rd->p += len;
    }
    return s;
}

/* A compact length: uvarint N+1, 0 meaning null (-1). */
static int64_t
rd_compact_len(samsa_rd_t *rd)
{
    return (int64_t) samsa_rd_uvarint(rd) - 1;
}

samsa_slice_t
samsa_rd_str_any(samsa_rd_t *rd, bool compact, bool nullable)
{
    int64_t  len = compact ? rd_compact_len(rd) : samsa_rd_i16(rd);

    return rd_take(rd, len, nullable);
}

samsa_slice_t
samsa_rd_str(samsa_rd_t *rd)
{
    return samsa_rd_str_any(rd, false, false);
}

samsa_slice_t
samsa_rd_nullable_str(samsa_rd_t *rd)
{
    return samsa_rd_str_any(rd, false, true);
}

samsa_slice_t
samsa_rd_compact_str(samsa_rd_t *rd)
{
    return samsa_rd_str_any(rd, true, false);
}

samsa_slice_t
samsa_rd_compact_nullable_str(samsa_rd_t *rd)
{
    return samsa_rd_str_any(rd, true, true);
}

samsa_slice_t
samsa_rd_bytes_any(samsa_rd_t *rd, bool compact, bool nullable)
{
    int64_t  len = compact ? rd_compact_len(rd) : samsa_rd_i32(rd);

    return rd_take(rd, len, nullable);
}

samsa_slice_t
samsa_rd_bytes(samsa_rd_t *rd)
{
    return samsa_rd_bytes_any(rd, false, false);
}

samsa_slice_t
samsa_rd_nullable_bytes(samsa_rd_t *rd)
{
    return samsa_rd_bytes_any(rd, false, true);
}

samsa_slice_t
samsa_rd_compact_bytes(samsa_rd_t *rd)
{
    return samsa_rd_bytes_any(rd, true, false);
}

samsa_slice_t
samsa_rd_compact_nullable_bytes(samsa_rd_t *rd)
{
    return samsa_rd_bytes_any(rd, true, true);
}

int32_t
samsa_rd_array_cnt(samsa_rd_t *rd, bool compact, bool nullable,
                   size_t elem_min)
{
    int64_t  cnt = compact ? rd_compact_len(rd) : samsa_rd_i32(rd);

    if (rd->err != SAMSA_ERR_NONE) {
        return 0;
    }
    if (cnt < 0) {
        if (cnt != -1 || !nullable) {
            rd->err = SAMSA_ERR__BAD_MSG;
            return 0;
        }
        return -1;
    }
    if (cnt > INT32_MAX) {
        rd->err = SAMSA_ERR__BAD_MSG;
        return 0;
    }
    if (elem_min == 0) {
        elem_min = 1;
    }
    if ((uint64_t) cnt > samsa_rd_remain(rd) / elem_min) {
        rd->err = SAMSA_ERR__UNDERFLOW;
        return 0;
    }
    return (int32_t) cnt;
}

void
samsa_rd_tags_skip(samsa_rd_t *rd)
{
    uint32_t  n;

    for (n = samsa_rd_uvarint(rd); n > 0 && rd->err == SAMSA_ERR_NONE; n--) {
        (void) samsa_rd_uvarint(rd);                    /* tag */
        samsa_rd_skip(rd, samsa_rd_uvarint(rd));        /* size, data */
    }
}

void
samsa_rd_sub(samsa_rd_t *rd, size_t n, samsa_rd_t *sub)
{
    if (samsa_rd_need(rd, n)) {
        samsa_rd_init(sub, rd->p, n);
        rd->p = sub->end;
    } else {
        samsa_rd_init(sub, NULL, 0);
        sub->err = rd->err;
    }
}
