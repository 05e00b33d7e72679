/*
 * proto/compress.c - record-batch codecs over zlib, snappy-c, lz4frame and
 * zstd.  Decoders grow their output in steps and stop at max_out.
 * Threads: any (no shared state).
 */
#include "proto/compress.h"

#include <string.h>

#include <lz4frame.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

#include "util/endian.h"

/* snappy-java's stream header ("xerial"): magic, version 1, compatible 1. */
static const uint8_t  xerial_magic[8] = { 0x82, 'S', 'N', 'A', 'P', 'P',
                                          'Y', 0 };
#define XERIAL_HDR_SIZE     16
#define XERIAL_BLOCK_SIZE   (32 * 1024)     /* snappy-java's default */
#define DECODE_STEP_MIN     (64 * 1024)

const char *
samsa_codec_name(samsa_codec_t codec)
{
    switch (codec) {
    case SAMSA_CODEC_NONE:   return "none";
    case SAMSA_CODEC_GZIP:   return "gzip";
    case SAMSA_CODEC_SNAPPY: return "snappy";
    case SAMSA_CODEC_LZ4:    return "lz4";
    case SAMSA_CODEC_ZSTD:   return "zstd";
    }
    return "unknown";
}

bool
samsa_codec_parse(const char *name, samsa_codec_t *codec)
{
    samsa_codec_t  c;

    for (c = SAMSA_CODEC_NONE; c <= SAMSA_CODEC_ZSTD; c++) {
        if (strcmp(name, samsa_codec_name(c)) == 0) {
            *codec = c;
            return true;
        }
    }
    return false;
}

bool
samsa_codec_level_valid(samsa_codec_t codec, int level)
{
    switch (codec) {
    case SAMSA_CODEC_GZIP:
        return level == -1 || (level >= 1 && level <= 9);
    case SAMSA_CODEC_LZ4:
        return level >= 1 && level <= 17;
    case SAMSA_CODEC_ZSTD:
        return level >= ZSTD_minCLevel() && level <= 22;
    default:
        return level == SAMSA_CODEC_LEVEL_DEFAULT;
    }
}

/* The level to use: Java's defaults (KIP-390) when none was given. */
static int
codec_level(samsa_codec_t codec, int level)
{
    if (level != SAMSA_CODEC_LEVEL_DEFAULT) {
        return level;
    }
    switch (codec) {
    case SAMSA_CODEC_GZIP: return Z_DEFAULT_COMPRESSION;
    case SAMSA_CODEC_LZ4:  return 9;
    case SAMSA_CODEC_ZSTD: return 3;
    default:               return 0;
    }
}

/* ---- compression -------------------------------------------------------- */

static samsa_err_t
gzip_compress(int level, const uint8_t *in, size_t len, samsa_buf_t *out)
{
    z_stream  zs;
    uLong     bound;
    int       r;

    memset(&zs, 0, sizeof(zs));
    if (deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY)
        != Z_OK) {
        return SAMSA_ERR__IO;
    }
    bound = deflateBound(&zs, (uLong) len) + 32;
    zs.next_in = (Bytef *) (uintptr_t) in;
    zs.avail_in = (uInt) len;
    zs.next_out = samsa_buf_reserve(out, bound);
    zs.avail_out = (uInt) bound;
    r = deflate(&zs, Z_FINISH);
    if (r == Z_STREAM_END) {
        out->len += zs.total_out;
    }
    deflateEnd(&zs);
    return r == Z_STREAM_END ? SAMSA_ERR_NONE : SAMSA_ERR__IO;
}

static samsa_err_t
snappy_xerial_compress(const uint8_t *in, size_t len, samsa_buf_t *out)
{
    uint8_t  *p;
    size_t    off, n, clen;

    p = samsa_buf_reserve(out, XERIAL_HDR_SIZE);
    memcpy(p, xerial_magic, sizeof(xerial_magic));
    samsa_store_be32(p + 8, 1);
    samsa_store_be32(p + 12, 1);
    out->len += XERIAL_HDR_SIZE;
    for (off = 0; off < len; off += n) {
        n = len - off < XERIAL_BLOCK_SIZE ? len - off : XERIAL_BLOCK_SIZE;
        clen = snappy_max_compressed_length(n);
        p = samsa_buf_reserve(out, 4 + clen);
        if (snappy_compress((const char *) in + off, n, (char *) p + 4,
                            &clen) != SNAPPY_OK) {
            return SAMSA_ERR__IO;
        }
        samsa_store_be32(p, (uint32_t) clen);
        out->len += 4 + clen;
    }
    return SAMSA_ERR_NONE;
}

static samsa_err_t
lz4_compress(int level, const uint8_t *in, size_t len, samsa_buf_t *out)
{
    LZ4F_preferences_t  prefs;
    size_t              bound, n;

    memset(&prefs, 0, sizeof(prefs));
    prefs.frameInfo.blockSizeID = LZ4F_max64KB;
    prefs.frameInfo.blockMode = LZ4F_blockIndependent;
    prefs.compressionLevel = level;
    bound = LZ4F_compressFrameBound(len, &prefs);
    n = LZ4F_compressFrame(samsa_buf_reserve(out, bound), bound, in, len,
                           &prefs);
    if (LZ4F_isError(n)) {
        return SAMSA_ERR__IO;
    }
    out->len += n;
    return SAMSA_ERR_NONE;
}

static samsa_err_t
zstd_compress(int level, const uint8_t *in, size_t len, samsa_buf_t *out)
{
    size_t  bound = ZSTD_compressBound(len);
    size_t  n;

    n = ZSTD_compress(samsa_buf_reserve(out, bound), bound, in, len, level);
    if (ZSTD_isError(n)) {
        return SAMSA_ERR__IO;
    }
    out->len += n;
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_compress(samsa_codec_t codec, int level, const uint8_t *in, size_t len,
               samsa_buf_t *out)
{
    size_t       old_len;
    samsa_err_t  err;

    if (codec == SAMSA_CODEC_NONE || codec > SAMSA_CODEC_ZSTD
        || (level != SAMSA_CODEC_LEVEL_DEFAULT
            && codec != SAMSA_CODEC_SNAPPY
            && !samsa_codec_level_valid(codec, level))) {
        return SAMSA_ERR__INVALID_ARG;
    }
    level = codec_level(codec, level);
    old_len = out->len;
    switch (codec) {
    case SAMSA_CODEC_GZIP:   err = gzip_compress(level, in, len, out); break;
    case SAMSA_CODEC_SNAPPY: err = snappy_xerial_compress(in, len, out); break;
    case SAMSA_CODEC_LZ4:    err = lz4_compress(level, in, len, out); break;
    default:                 err = zstd_compress(level, in, len, out); break;
    }
    if (err != SAMSA_ERR_NONE) {
        out->len = old_len;
    }
    return err;
}

/* ---- decompression ------------------------------------------------------ */

/* Room for the next decoded bytes: at least one step, never past max_out.
 * *room gets the size; 0 means max_out is reached. */
static uint8_t *
decode_room(samsa_buf_t *out, size_t start, size_t max_out, size_t hint,
            size_t *room)
{
    size_t  produced = out->len - start;
    size_t  want = hint < DECODE_STEP_MIN ? DECODE_STEP_MIN : hint;

    if (produced >= max_out) {
        *room = 0;
        return NULL;
    }
    if (want > max_out - produced) {
        want = max_out - produced;
    }
    *room = want;
    return samsa_buf_reserve(out, want);
}

/* One step of a streaming decoder: decode what fits into dst (room
 * bytes, room > 0), set *produced, and say whether the stream goes on. */
typedef enum {
    DECODE_MORE,
    DECODE_DONE,
    DECODE_BAD          /* corrupt or truncated: SAMSA_ERR__BAD_MSG */
} decode_step_t;

typedef decode_step_t (*decode_step_fn)(void *ctx, uint8_t *dst,
                                        size_t room, size_t *produced);

/* Run step until the stream ends, growing out in decode_room's steps
 * (hinted by the input's size len) and stopping at max_out. */
static samsa_err_t
decode_stream(decode_step_fn step, void *ctx, size_t len, size_t max_out,
              samsa_buf_t *out)
{
    size_t          start = out->len;
    size_t          room, produced;
    uint8_t        *dst;
    decode_step_t   st;

    for (;;) {
        dst = decode_room(out, start, max_out, len * 4, &room);
        if (room == 0) {
            return SAMSA_ERR__OVERFLOW;
        }
        st = step(ctx, dst, room, &produced);
        out->len += produced;
        if (st != DECODE_MORE) {
            return st == DECODE_DONE ? SAMSA_ERR_NONE : SAMSA_ERR__BAD_MSG;
        }
    }
}

static decode_step_t
gzip_step(void *ctx, uint8_t *dst, size_t room, size_t *produced)
{
    z_stream  *zs = ctx;
    int        r;

    zs->next_out = dst;
    zs->avail_out = (uInt) room;
    r = inflate(zs, Z_NO_FLUSH);
    *produced = room - zs->avail_out;
    if (r == Z_STREAM_END && zs->avail_in == 0) {
        return DECODE_DONE;
    }
    if (r == Z_STREAM_END) {                    /* concatenated members */
        return inflateReset(zs) == Z_OK ? DECODE_MORE : DECODE_BAD;
    }
    if (r != Z_OK && !(r == Z_BUF_ERROR && zs->avail_out == 0)) {
        return DECODE_BAD;
    }
    if (r == Z_OK && zs->avail_in == 0 && zs->avail_out > 0) {
        return DECODE_BAD;                      /* truncated stream */
    }
    return DECODE_MORE;
}

static samsa_err_t
gzip_decompress(const uint8_t *in, size_t len, size_t max_out,
                samsa_buf_t *out)
{
    samsa_err_t  err;
    z_stream     zs;

    memset(&zs, 0, sizeof(zs));
    if (inflateInit2(&zs, 15 + 32) != Z_OK) {
        return SAMSA_ERR__IO;
    }
    zs.next_in = (Bytef *) (uintptr_t) in;
    zs.avail_in = (uInt) len;
    err = decode_stream(gzip_step, &zs, len, max_out, out);
    inflateEnd(&zs);
    return err;
}

static samsa_err_t
snappy_block_decompress(const uint8_t *in, size_t len, size_t start,
                        size_t max_out, samsa_buf_t *out)
{
    size_t  n;

    if (snappy_uncompressed_length((const char *) in, len, &n) != SNAPPY_OK) {
        return SAMSA_ERR__BAD_MSG;
    }
    if (n > max_out - (out->len - start)) {
        return SAMSA_ERR__OVERFLOW;
    }
    if (snappy_uncompress((const char *) in, len,
                          (char *) samsa_buf_reserve(out, n), &n)
        != SNAPPY_OK) {
        return SAMSA_ERR__BAD_MSG;
    }
    out->len += n;
    return SAMSA_ERR_NONE;
}

static samsa_err_t
snappy_decompress(const uint8_t *in, size_t len, size_t max_out,
                  samsa_buf_t *out)
{
    size_t       start = out->len;
    size_t       off, n;
    samsa_err_t  err = SAMSA_ERR_NONE;

    if (len < XERIAL_HDR_SIZE
        || memcmp(in, xerial_magic, sizeof(xerial_magic)) != 0) {
        return snappy_block_decompress(in, len, start, max_out, out);
    }
    for (off = XERIAL_HDR_SIZE; off < len && err == SAMSA_ERR_NONE;
         off += n) {
        if (len - off < 4) {
            return SAMSA_ERR__BAD_MSG;
        }
        n = samsa_load_be32(in + off);
        off += 4;
        if (n > len - off) {
            return SAMSA_ERR__BAD_MSG;
        }
        err = snappy_block_decompress(in + off, n, start, max_out, out);
    }
    return err;
}

typedef struct {
    LZ4F_decompressionContext_t  dctx;
    const uint8_t               *in;
    size_t                       len, off;
} lz4_dec_t;

static decode_step_t
lz4_step(void *ctx, uint8_t *dst, size_t room, size_t *produced)
{
    lz4_dec_t  *d = ctx;
    size_t      src_n = d->len - d->off;
    size_t      r;

    *produced = 0;
    r = LZ4F_decompress(d->dctx, dst, &room, d->in + d->off, &src_n, NULL);
    if (LZ4F_isError(r)) {
        return DECODE_BAD;
    }
    d->off += src_n;
    *produced = room;
    if (r == 0) {                               /* frame complete */
        return d->off == d->len ? DECODE_DONE : DECODE_BAD;
    }
    if (d->off == d->len && room == 0) {
        return DECODE_BAD;                      /* truncated frame */
    }
    return DECODE_MORE;
}

static samsa_err_t
lz4_decompress(const uint8_t *in, size_t len, size_t max_out,
               samsa_buf_t *out)
{
    lz4_dec_t    d = { NULL, in, len, 0 };
    samsa_err_t  err;

    if (LZ4F_isError(LZ4F_createDecompressionContext(&d.dctx,
                                                     LZ4F_VERSION))) {
        return SAMSA_ERR__IO;
    }
    err = decode_stream(lz4_step, &d, len, max_out, out);
    LZ4F_freeDecompressionContext(d.dctx);
    return err;
}

typedef struct {
    ZSTD_DStream   *ds;
    ZSTD_inBuffer   ib;
} zstd_dec_t;

static decode_step_t
zstd_step(void *ctx, uint8_t *dst, size_t room, size_t *produced)
{
    zstd_dec_t      *d = ctx;
    ZSTD_outBuffer   ob = { dst, room, 0 };
    size_t           r;

    *produced = 0;
    r = ZSTD_decompressStream(d->ds, &ob, &d->ib);
    if (ZSTD_isError(r)) {
        return DECODE_BAD;
    }
    *produced = ob.pos;
    if (r == 0 && d->ib.pos == d->ib.size) {
        return DECODE_DONE;
    }
    if (d->ib.pos == d->ib.size && ob.pos < ob.size) {
        return DECODE_BAD;                      /* truncated frame */
    }
    return DECODE_MORE;
}

static samsa_err_t
zstd_decompress(const uint8_t *in, size_t len, size_t max_out,
                samsa_buf_t *out)
{
    zstd_dec_t   d = { ZSTD_createDStream(), { in, len, 0 } };
    samsa_err_t  err;

    if (d.ds == NULL) {
        return SAMSA_ERR__IO;
    }
    err = decode_stream(zstd_step, &d, len, max_out, out);
    ZSTD_freeDStream(d.ds);
    return err;
}

samsa_err_t
samsa_decompress(samsa_codec_t codec, const uint8_t *in, size_t len,
                 size_t max_out, samsa_buf_t *out)
{
    size_t       old_len = out->len;
    samsa_err_t  err;

    switch (codec) {
    case SAMSA_CODEC_GZIP:
        err = gzip_decompress(in, len, max_out, out);
        break;
    case SAMSA_CODEC_SNAPPY:
        err = snappy_decompress(in, len, max_out, out);
        break;
    case SAMSA_CODEC_LZ4:
        err = lz4_decompress(in, len, max_out, out);
        break;
    case SAMSA_CODEC_ZSTD:
        err = zstd_decompress(in, len, max_out, out);
        break;
    default:
        return SAMSA_ERR__INVALID_ARG;
    }
    if (err != SAMSA_ERR_NONE) {
        out->len = old_len;
    }
    return err;
}
