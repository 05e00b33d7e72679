/*
 * proto/wr.c - see wr.h.  Threads: the buffer's owner.
 */
#include "proto/wr.h"

#include <unistd.h>

#include <errno.h>

#include <string.h>

#include "util/diag.h"
#include "util/endian.h"

/* Room for n bytes at the end; the caller fills them, then commits. */
static uint8_t *
wr_room(samsa_wr_t *wr, size_t n, size_t *off)
{
    uint8_t  *p;

    if (wr->buf == NULL) {              /* a sizer: counts, keeps nothing */
        samsa_assert(n <= sizeof(wr->scratch));
        *off = wr->size;
        wr->size += n;
        return wr->scratch;
    }
    p = samsa_buf_reserve(wr->buf, n);
    *off = wr->buf->len;
    wr->buf->len += n;
    return p;
}

/* Encode v as a protocol uvarint into out (10 bytes); returns its length. */
static size_t
wr_uvarlong_enc(uint8_t *out, uint64_t v)
{
    size_t  n = 0;

    while (v >= 0x80) {
        out[n++] = (uint8_t) (v | 0x80);
        v >>= 7;
    }
    out[n++] = (uint8_t) v;
    return n;
}

size_t
samsa_wr_raw(samsa_wr_t *wr, const void *p, size_t n)
{
    size_t  off;

    if (wr->buf == NULL) {
        off = wr->size;
        wr->size += n;
        return off;
    }
    return samsa_buf_append(wr->buf, p, n);
}

size_t
samsa_wr_i8(samsa_wr_t *wr, int8_t v)
{
    size_t  off;

    *wr_room(wr, 1, &off) = (uint8_t) v;
    return off;
}

size_t
samsa_wr_u16(samsa_wr_t *wr, uint16_t v)
{
    size_t  off;

    samsa_store_be16(wr_room(wr, 2, &off), v);
    return off;
}

size_t
samsa_wr_i16(samsa_wr_t *wr, int16_t v)
{
    return samsa_wr_u16(wr, (uint16_t) v);
}

void
samsa_errtally_add(samsa_errtally_t *tally, int16_t code)
{
    size_t  i;

    for (i = 0; i < tally->n; i++) {
        if (tally->code[i] == code) {
            tally->count[i]++;
            return;
        }
    }
    if (tally->n == SAMSA_ERRTALLY_SLOTS) {
        tally->overflow++;
        return;
    }
    tally->code[tally->n] = code;
    tally->count[tally->n++] = 1;
}

size_t
samsa_wr_errcode(samsa_wr_t *wr, int16_t v)
{
    if (wr->errors != NULL) {
        samsa_errtally_add(wr->errors, v);
    }
    return samsa_wr_i16(wr, v);
}

size_t
samsa_wr_u32(samsa_wr_t *wr, uint32_t v)
{
    size_t  off;

    samsa_store_be32(wr_room(wr, 4, &off), v);
    return off;
}

size_t
samsa_wr_i32(samsa_wr_t *wr, int32_t v)
{
    return samsa_wr_u32(wr, (uint32_t) v);
}

size_t
samsa_wr_i64(samsa_wr_t *wr, int64_t v)
{
    size_t  off;

    samsa_store_be64(wr_room(wr, 8, &off), (uint64_t) v);
    return off;
}

size_t
samsa_wr_f64(samsa_wr_t *wr, double v)
{
    uint64_t  u;

    memcpy(&u, &v, sizeof(u));
    return samsa_wr_i64(wr, (int64_t) u);
}

size_t
samsa_wr_bool(samsa_wr_t *wr, bool v)
{
    return samsa_wr_i8(wr, v ? 1 : 0);
}

size_t
samsa_wr_uuid(samsa_wr_t *wr, samsa_uuid_t v)
{
    return samsa_wr_raw(wr, v.b, sizeof(v.b));
}

size_t
samsa_wr_uvarlong(samsa_wr_t *wr, uint64_t v)
{
    uint8_t  tmp[10];

    return samsa_wr_raw(wr, tmp, wr_uvarlong_enc(tmp, v));
}

size_t
samsa_wr_uvarint(samsa_wr_t *wr, uint32_t v)
{
    return samsa_wr_uvarlong(wr, v);
}

size_t
samsa_wr_varint(samsa_wr_t *wr, int32_t v)
{
    uint32_t  u = (uint32_t) v;

    return samsa_wr_uvarint(wr, (u << 1) ^ (0u - (u >> 31)));
}

size_t
samsa_wr_varlong(samsa_wr_t *wr, int64_t v)
{
    uint64_t  u = (uint64_t) v;

    return samsa_wr_uvarlong(wr, (u << 1) ^ (0u - (u >> 63)));
}

/*
 * A length prefix then the data: -1 (null) when s is null and nullable,
 * otherwise s.len (0 for a null slice).  wide picks int32 over int16.
 */
static size_t
wr_blob(samsa_wr_t *wr, bool compact, bool nullable, bool wide,
        samsa_slice_t s)
{
    bool    is_null = s.ptr == NULL;
    size_t  len = is_null ? 0 : s.len;
    size_t  off = samsa_wr_offset(wr);

    if (compact) {
        samsa_assert(len < UINT32_MAX);
        samsa_wr_uvarint(wr, is_null && nullable ? 0 : (uint32_t) len + 1);
    } else if (wide) {
        samsa_assert(len <= INT32_MAX);
        samsa_wr_i32(wr, is_null && nullable ? -1 : (int32_t) len);
    } else {
        samsa_assert(len <= INT16_MAX);
        samsa_wr_i16(wr, is_null && nullable ? -1 : (int16_t) len);
    }
    samsa_wr_raw(wr, s.ptr, len);
    return off;
}

size_t
samsa_wr_str_any(samsa_wr_t *wr, bool compact, bool nullable, samsa_slice_t s)
{
    return wr_blob(wr, compact, nullable, false, s);
}

size_t
samsa_wr_str(samsa_wr_t *wr, samsa_slice_t s)
{
    return wr_blob(wr, false, false, false, s);
}

size_t
samsa_wr_nullable_str(samsa_wr_t *wr, samsa_slice_t s)
{
    return wr_blob(wr, false, true, false, s);
}

size_t
samsa_wr_compact_str(samsa_wr_t *wr, samsa_slice_t s)
{
    return wr_blob(wr, true, false, false, s);
}

size_t
samsa_wr_compact_nullable_str(samsa_wr_t *wr, samsa_slice_t s)
{
    return wr_blob(wr, true, true, false, s);
}

size_t
samsa_wr_bytes_any(samsa_wr_t *wr, bool compact, bool nullable,
                   samsa_slice_t b)
{
    return wr_blob(wr, compact, nullable, true, b);
}

size_t
samsa_wr_bytes(samsa_wr_t *wr, samsa_slice_t b)
{
    return wr_blob(wr, false, false, true, b);
}

size_t
samsa_wr_nullable_bytes(samsa_wr_t *wr, samsa_slice_t b)
{
    return wr_blob(wr, false, true, true, b);
}

size_t
samsa_wr_compact_bytes(samsa_wr_t *wr, samsa_slice_t b)
{
    return wr_blob(wr, true, false, true, b);
}

size_t
samsa_wr_compact_nullable_bytes(samsa_wr_t *wr, samsa_slice_t b)
{
    return wr_blob(wr, true, true, true, b);
}

size_t
samsa_wr_array_cnt(samsa_wr_t *wr, bool compact, bool nullable, int32_t cnt)
{
    if (cnt < 0) {
        cnt = nullable ? -1 : 0;
    }
    if (compact) {
        return samsa_wr_uvarint(wr, (uint32_t) cnt + 1);
    }
    return samsa_wr_i32(wr, cnt);
}

void
samsa_wr_patch_i32(samsa_wr_t *wr, size_t off, int32_t v)
{
    if (wr->buf == NULL) {
        return;
    }
    samsa_assert(off <= wr->buf->len && wr->buf->len - off >= 4);
    samsa_store_be32(wr->buf->data + off, (uint32_t) v);
}

size_t
samsa_wr_tag_begin(samsa_wr_t *wr, uint32_t tag)
{
    samsa_wr_uvarint(wr, tag);
    return samsa_wr_offset(wr);
}

void
samsa_wr_tag_end(samsa_wr_t *wr, size_t data_off)
{
    samsa_buf_t  *buf = wr->buf;
    size_t        len, k;
    uint8_t       tmp[10];

    if (buf == NULL) {
        samsa_assert(data_off <= wr->size);
        wr->size += wr_uvarlong_enc(tmp, wr->size - data_off);
        return;
    }
    samsa_assert(data_off <= buf->len);
    len = buf->len - data_off;
    samsa_assert(len <= UINT32_MAX);
    k = wr_uvarlong_enc(tmp, len);
    samsa_buf_reserve(buf, k);
    memmove(buf->data + data_off + k, buf->data + data_off, len);
    memcpy(buf->data + data_off, tmp, k);
    buf->len += k;
}

/* The length prefix of a blob of len bytes (never null). */
static void
wr_blob_len(samsa_wr_t *wr, bool compact, int64_t len)
{
    samsa_assert(len >= 0 && len < INT32_MAX);
    if (compact) {
        samsa_wr_uvarint(wr, (uint32_t) len + 1);
    } else {
        samsa_wr_i32(wr, (int32_t) len);
    }
}

static void
wr_region_read(samsa_wr_t *wr, const samsa_file_region_t *r)
{
    uint8_t  *p = samsa_buf_reserve(wr->buf, (size_t) r->len);
    int64_t   got = 0;
    ssize_t   n;

    while (got < r->len) {
        n = pread(r->fd, p + got, (size_t) (r->len - got), r->offset + got);
        if (n <= 0) {
            samsa_error("reading %lld bytes of records at %lld: %s",
                        (long long) r->len, (long long) r->offset,
                        n == 0 ? "end of file" : strerror(errno));
            memset(p + got, 0, (size_t) (r->len - got));
            break;
        }
        got += n;
    }
    wr->buf->len += (size_t) r->len;
}

size_t
samsa_wr_records_any(samsa_wr_t *wr, bool compact, bool nullable,
                     samsa_records_t r)
{
    size_t  off = samsa_wr_offset(wr);

    if (r.file == NULL) {
        return samsa_wr_bytes_any(wr, compact, nullable, r.bytes);
    }
    wr_blob_len(wr, compact, r.file->len);
    if (wr->buf == NULL) {
        wr->size += (size_t) r.file->len;
    } else if (wr->region != NULL) {
        wr->region(wr->region_ctx, r.file);
    } else {
        wr_region_read(wr, r.file);
    }
    return off;
}
