/*
 * util/crc32c.c - see crc32c.h.  ISA-L works on the raw (un-inverted)
 * register and takes an int length, so finished values are inverted on the
 * way in and out and long inputs go in chunks.
 */
#include "util/crc32c.h"

#include <limits.h>

#include <isa-l/crc.h>

#define CRC32C_CHUNK ((size_t) 1 << 30)

uint32_t
samsa_crc32c(uint32_t crc, const void *p, size_t len)
{
    const unsigned char  *b = p;
    unsigned int          raw = ~crc;
    size_t                n;

    while (len > 0) {
        n = len < CRC32C_CHUNK ? len : CRC32C_CHUNK;
        /* crc32_iscsi() takes a non-const pointer but only reads it */
        raw = crc32_iscsi((unsigned char *) b, (int) n, raw);
        b += n;
        len -= n;
    }
    return ~raw;
}
