/*
 * proto/compress.h - the record-batch codecs of Kafka's Attributes bits 0-2:
 * gzip (zlib, a gzip stream), snappy (xerial framing written, xerial and
 * raw snappy read), lz4 (the LZ4 frame format, 64 KiB independent blocks as
 * Java's KafkaLZ4BlockOutputStream writes) and zstd (one zstd frame).
 * The producer compresses a batch's records when the batch closes; the
 * broker (and consumers) decompress with the same module.
 * Threads: pure functions over caller-owned buffers; any thread.
 */
#ifndef SAMSA_PROTO_COMPRESS_H
#define SAMSA_PROTO_COMPRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>

#include "util/buf.h"

/* Attributes bits 0-2 of a record batch (and compression.type's values). */
typedef enum samsa_codec {
    SAMSA_CODEC_NONE   = 0,
    SAMSA_CODEC_GZIP   = 1,
    SAMSA_CODEC_SNAPPY = 2,
    SAMSA_CODEC_LZ4    = 3,
    SAMSA_CODEC_ZSTD   = 4,
} samsa_codec_t;

#define SAMSA_CODEC_MASK 0x07

/* Level meaning "the codec's default" (Java: compression.<codec>.level
 * defaults, KIP-390: gzip -1, lz4 9, zstd 3). */
#define SAMSA_CODEC_LEVEL_DEFAULT INT32_MIN

/* "none", "gzip", "snappy", "lz4", "zstd"; "unknown" otherwise. */
const char *samsa_codec_name(samsa_codec_t codec);

/* Parse a compression.type value (case-sensitive, as Java).  False if
 * name is not one of the five. */
bool samsa_codec_parse(const char *name, samsa_codec_t *codec);

/* True if level is valid for codec's compression.<codec>.level
 * (gzip: -1 or 1..9; lz4: 1..17; zstd: ZSTD_minCLevel()..22). */
bool samsa_codec_level_valid(samsa_codec_t codec, int level);

/* Compress len bytes at in with codec at level (or
 * SAMSA_CODEC_LEVEL_DEFAULT), appending the result to out.
 * SAMSA_ERR__INVALID_ARG for SAMSA_CODEC_NONE, an unknown codec or a bad
 * level; SAMSA_ERR__IO if the library fails (out is then restored to its
 * old length). */
SAMSA_MUST_CHECK samsa_err_t samsa_compress(samsa_codec_t codec, int level,
                                            const uint8_t *in, size_t len,
                                            samsa_buf_t *out);

/* Decompress len bytes at in, appending the result to out.  Snappy input
 * may be xerial-framed or raw.  The output may not grow past max_out bytes
 * (a decompression bomb is SAMSA_ERR__OVERFLOW).  Malformed input is
 * SAMSA_ERR__BAD_MSG; out is restored to its old length on any error. */
SAMSA_MUST_CHECK samsa_err_t samsa_decompress(samsa_codec_t codec,
                                              const uint8_t *in, size_t len,
                                              size_t max_out,
                                              samsa_buf_t *out);

#endif /* SAMSA_PROTO_COMPRESS_H */
