/*
 * proto/types.h - small value types the Kafka protocol shares between the
 * reader, the writer and the generated codecs.
 * Threads: plain values; any thread.
 */
#ifndef SAMSA_PROTO_TYPES_H
#define SAMSA_PROTO_TYPES_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "util/slice.h"

/* Kafka's uuid (topic ids): 16 bytes as sent, most significant first.
 * The all-zero uuid is Kafka's Uuid.ZERO_UUID ("no id"). */
typedef struct samsa_uuid {
    uint8_t  b[16];
} samsa_uuid_t;

static inline bool
samsa_uuid_eq(samsa_uuid_t a, samsa_uuid_t b)
{
    return memcmp(a.b, b.b, sizeof(a.b)) == 0;
}

static inline bool
samsa_uuid_is_zero(samsa_uuid_t u)
{
    static const samsa_uuid_t  zero;

    return samsa_uuid_eq(u, zero);
}

/* A stretch of an open file, sent as is (Fetch's records, read with
 * sendfile(2) from a log segment).  The fd is borrowed.  release, when not
 * NULL, is what keeps fd open (release(release_arg) lets it go): a response
 * that takes the region calls it once sent, instead of owning a
 * descriptor of its own. */
typedef struct samsa_file_region {
    int      fd;
    int64_t  offset;
    int64_t  len;
    void   (*release)(void *release_arg);
    void    *release_arg;
} samsa_file_region_t;

/* A records field: bytes in memory, or, when encoding, a file region
 * instead (file != NULL).  Decoding always gives bytes.  Null is bytes.ptr
 * NULL with no file. */
typedef struct samsa_records {
    samsa_slice_t                bytes;
    const samsa_file_region_t   *file;
} samsa_records_t;

#define SAMSA_RECORDS_NULL ((samsa_records_t) { SAMSA_SLICE_NULL, NULL })

#endif /* SAMSA_PROTO_TYPES_H */
