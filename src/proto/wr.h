/*
 * proto/wr.h - the writer: appends Kafka primitives to a samsa_buf_t.
 * Writing never fails: the buffer grows and aborts on OOM (util/alloc.h).
 * Every write returns the offset it wrote at, so sizes and CRCs can be
 * back-patched (samsa_wr_patch_i32).
 * Strings: a null slice given to a non-nullable writer is written as the
 * empty string (callers should not do that; it keeps output well-formed).
 * Threads: a writer belongs to whoever owns its buffer.
 */
#ifndef SAMSA_PROTO_WR_H
#define SAMSA_PROTO_WR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/types.h"
#include "util/buf.h"
#include "util/slice.h"

/* Called when a records field refers to a file region: the sink splices
 * the region in at the buffer's current end (a response's sendfile part),
 * after the length prefix was written. */
typedef void (*samsa_wr_region_fn)(void *ctx, const samsa_file_region_t *r);

/* The error codes one response carried, counted as Kafka's
 * AbstractResponse.errorCounts() counts them: every ErrorCode field the
 * generated encoders write (top level, per topic, per partition), NONE
 * included.  A response with more distinct codes than slots counts the
 * rest in overflow.  Owned with the request; read on its network thread. */
#define SAMSA_ERRTALLY_SLOTS  6

typedef struct samsa_errtally {
    int16_t   code[SAMSA_ERRTALLY_SLOTS];
    uint32_t  count[SAMSA_ERRTALLY_SLOTS];
    uint8_t   n;                /* slots used */
    uint32_t  overflow;         /* codes that found no slot */
} samsa_errtally_t;

typedef struct samsa_wr {
    samsa_buf_t         *buf;       /* borrowed; the writer owns nothing;
                                       NULL: a sizer (samsa_wr_sizer) */
    samsa_wr_region_fn   region;    /* NULL: regions are read into buf */
    void                *region_ctx;
    samsa_errtally_t    *errors;    /* NULL: ErrorCode fields not counted */
    size_t               size;      /* a sizer's bytes so far */
    uint8_t              scratch[16];   /* a sizer's throwaway room */
} samsa_wr_t;

/* Count code in tally. */
void samsa_errtally_add(samsa_errtally_t *tally, int16_t code);

static inline void
samsa_wr_init(samsa_wr_t *wr, samsa_buf_t *buf)
{
    *wr = (samsa_wr_t) { .buf = buf };
}

/* A writer that writes nothing and counts the bytes an encoder would
 * write, file regions of records fields included (Kafka's
 * MessageSizeAccumulator): encode into it, then read .size. */
static inline samsa_wr_t
samsa_wr_sizer(void)
{
    return (samsa_wr_t) { .buf = NULL };
}

/* Offset the next write goes to (bytes written so far). */
static inline size_t
samsa_wr_offset(const samsa_wr_t *wr)
{
    return wr->buf != NULL ? wr->buf->len : wr->size;
}

size_t samsa_wr_raw(samsa_wr_t *wr, const void *p, size_t n);
size_t samsa_wr_i8(samsa_wr_t *wr, int8_t v);
size_t samsa_wr_i16(samsa_wr_t *wr, int16_t v);
/* An ErrorCode field: written as int16 and counted in wr->errors. */
size_t samsa_wr_errcode(samsa_wr_t *wr, int16_t v);
size_t samsa_wr_u16(samsa_wr_t *wr, uint16_t v);
size_t samsa_wr_i32(samsa_wr_t *wr, int32_t v);
size_t samsa_wr_u32(samsa_wr_t *wr, uint32_t v);
size_t samsa_wr_i64(samsa_wr_t *wr, int64_t v);
size_t samsa_wr_f64(samsa_wr_t *wr, double v);
size_t samsa_wr_bool(samsa_wr_t *wr, bool v);
size_t samsa_wr_uuid(samsa_wr_t *wr, samsa_uuid_t v);

/* Protocol varints (unsigned base-128) and record varints (zigzag). */
size_t samsa_wr_uvarint(samsa_wr_t *wr, uint32_t v);
size_t samsa_wr_uvarlong(samsa_wr_t *wr, uint64_t v);
size_t samsa_wr_varint(samsa_wr_t *wr, int32_t v);
size_t samsa_wr_varlong(samsa_wr_t *wr, int64_t v);

/* Strings; s.len must fit the length prefix (int16 for the non-compact
 * forms), which samsa_assert()s. */
size_t samsa_wr_str(samsa_wr_t *wr, samsa_slice_t s);
size_t samsa_wr_nullable_str(samsa_wr_t *wr, samsa_slice_t s);
size_t samsa_wr_compact_str(samsa_wr_t *wr, samsa_slice_t s);
size_t samsa_wr_compact_nullable_str(samsa_wr_t *wr, samsa_slice_t s);
size_t samsa_wr_str_any(samsa_wr_t *wr, bool compact, bool nullable,
                        samsa_slice_t s);

/* Bytes (and records). */
size_t samsa_wr_bytes(samsa_wr_t *wr, samsa_slice_t b);
size_t samsa_wr_nullable_bytes(samsa_wr_t *wr, samsa_slice_t b);
size_t samsa_wr_compact_bytes(samsa_wr_t *wr, samsa_slice_t b);
size_t samsa_wr_compact_nullable_bytes(samsa_wr_t *wr, samsa_slice_t b);
size_t samsa_wr_bytes_any(samsa_wr_t *wr, bool compact, bool nullable,
                          samsa_slice_t b);

/* An array's count; cnt < 0 is null, written as empty unless nullable. */
size_t samsa_wr_array_cnt(samsa_wr_t *wr, bool compact, bool nullable,
                          int32_t cnt);

/* A records field: its bytes, or its file region (handed to wr->region, or
 * read into the buffer with pread when there is no region sink).  A failed
 * read writes zeros and is logged: the frame keeps its announced length. */
size_t samsa_wr_records_any(samsa_wr_t *wr, bool compact, bool nullable,
                            samsa_records_t r);

/* Overwrite 4 bytes at off (written earlier) with v. */
void samsa_wr_patch_i32(samsa_wr_t *wr, size_t off, int32_t v);

/* One tagged field: tag_begin writes the tag and returns where the field's
 * data starts; write the data; tag_end then inserts its size before it. */
size_t samsa_wr_tag_begin(samsa_wr_t *wr, uint32_t tag);
void   samsa_wr_tag_end(samsa_wr_t *wr, size_t data_off);

#endif /* SAMSA_PROTO_WR_H */
