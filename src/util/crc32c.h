/*
 * util/crc32c.h - CRC-32C (Castagnoli), the checksum of Kafka's record
 * batches (magic 2), computed by ISA-L's crc32_iscsi (SSE4.2/PCLMUL paths
 * picked at run time).
 * Threads: pure functions; any thread.
 */
#ifndef SAMSA_UTIL_CRC32C_H
#define SAMSA_UTIL_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* The CRC-32C of len bytes at p, continuing from crc: pass 0 to start, or a
 * previous result to chain, so samsa_crc32c(samsa_crc32c(0, a, n), b, m)
 * equals the CRC of a and b back to back.  The check value ("123456789")
 * is 0xE3069283. */
uint32_t samsa_crc32c(uint32_t crc, const void *p, size_t len);

#endif /* SAMSA_UTIL_CRC32C_H */
