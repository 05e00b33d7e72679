/*
 * util/endian.h - big-endian loads and stores (Kafka's byte order).
 * Threads: any.
 */
#ifndef SAMSA_UTIL_ENDIAN_H
#define SAMSA_UTIL_ENDIAN_H

#include <stdint.h>

static inline uint16_t
samsa_load_be16(const uint8_t *p)
{
    return (uint16_t) ((uint16_t) p[0] << 8 | p[1]);
}

static inline uint32_t
samsa_load_be32(const uint8_t *p)
{
    return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16
           | (uint32_t) p[2] << 8 | p[3];
}

static inline uint64_t
samsa_load_be64(const uint8_t *p)
{
    return (uint64_t) samsa_load_be32(p) << 32 | samsa_load_be32(p + 4);
}

static inline void
samsa_store_be16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t) (v >> 8);
    p[1] = (uint8_t) v;
}

static inline void
samsa_store_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t) (v >> 24);
    p[1] = (uint8_t) (v >> 16);
    p[2] = (uint8_t) (v >> 8);
    p[3] = (uint8_t) v;
}

static inline void
samsa_store_be64(uint8_t *p, uint64_t v)
{
    samsa_store_be32(p, (uint32_t) (v >> 32));
    samsa_store_be32(p + 4, (uint32_t) v);
}

#endif /* SAMSA_UTIL_ENDIAN_H */
