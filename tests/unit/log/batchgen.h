/*
 * tests/unit/log/batchgen.h - record batches (magic 2) built by the
 * storage and batch tests, with correct lengths and CRC-32C, plus
 * temporary directories.  Header-only; every helper is static inline.
 */
#ifndef SAMSA_TESTS_UNIT_LOG_BATCHGEN_H
#define SAMSA_TESTS_UNIT_LOG_BATCHGEN_H

#include <ftw.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/batch.h"
#include "util/buf.h"
#include "util/endian.h"

/* What a batch looks like; zero means the default named. */
typedef struct bg_spec {
    int       nrec;             /* records (1) */
    int64_t   base_ts;          /* BaseTimestamp (1000) */
    size_t    vsize;            /* value bytes per record (10) */
    uint16_t  attrs;            /* Attributes (0) */
    bool      no_keys;          /* null keys */
    int       nheaders;         /* headers per record (0) */
    int64_t   ts_step;          /* timestamp delta per record (1) */
} bg_spec_t;

static inline void
bg_varlong(samsa_buf_t *b, int64_t v)
{
    uint64_t  u = ((uint64_t) v << 1) ^ (uint64_t) (v >> 63);
    uint8_t   c;

    do {
        c = (uint8_t) (u & 0x7f);
        u >>= 7;
        if (u != 0) {
            c |= 0x80;
        }
        samsa_buf_append(b, &c, 1);
    } while (u != 0);
}

/* One record's body (without its length prefix). */
static inline void
bg_record_body(samsa_buf_t *body, const bg_spec_t *s, int i)
{
    char     key[32];
    uint8_t  zero = 0;
    size_t   j;
    int      h;

    samsa_buf_append(body, &zero, 1);                   /* Attributes */
    bg_varlong(body, (int64_t) i * (s->ts_step ? s->ts_step : 1));
    bg_varlong(body, i);                                /* OffsetDelta */
    if (s->no_keys) {
        bg_varlong(body, -1);
    } else {
        snprintf(key, sizeof(key), "k%d", i);
        bg_varlong(body, (int64_t) strlen(key));
        samsa_buf_append(body, key, strlen(key));
    }
    bg_varlong(body, (int64_t) (s->vsize ? s->vsize : 10));
    for (j = 0; j < (s->vsize ? s->vsize : 10); j++) {
        uint8_t  v = (uint8_t) ('a' + (i + j) % 26);

        samsa_buf_append(body, &v, 1);
    }
    bg_varlong(body, s->nheaders);
    for (h = 0; h < s->nheaders; h++) {
        bg_varlong(body, 2);
        samsa_buf_append(body, "hk", 2);
        bg_varlong(body, 2);
        samsa_buf_append(body, "hv", 2);
    }
}

/* Re-sign the batch at p (size bytes) after a test changed it. */
static inline void
bg_resign(uint8_t *p, size_t size)
{
    samsa_store_be32(p + SAMSA_BATCH_OFF_Crc, samsa_batch_crc_compute(p, size));
}

/* Append one batch to b; returns its size.  For a compressed codec the
 * records are filler bytes (nothing here decompresses). */
static inline size_t
bg_batch(samsa_buf_t *b, const bg_spec_t *spec)
{
    bg_spec_t    s = *spec;
    samsa_buf_t  body = SAMSA_BUF_INIT;
    size_t       start = b->len, size;
    uint8_t      hdr[SAMSA_BATCH_HDR_SIZE] = { 0 }, *p;
    int          i;

    s.nrec = s.nrec ? s.nrec : 1;
    s.base_ts = s.base_ts ? s.base_ts : 1000;
    samsa_store_be32(hdr + SAMSA_BATCH_OFF_PartitionLeaderEpoch, 0xffffffff);
    hdr[SAMSA_BATCH_OFF_Magic] = 2;
    samsa_store_be16(hdr + SAMSA_BATCH_OFF_Attributes, s.attrs);
    samsa_store_be32(hdr + SAMSA_BATCH_OFF_LastOffsetDelta,
                     (uint32_t) (s.nrec - 1));
    samsa_store_be64(hdr + SAMSA_BATCH_OFF_BaseTimestamp, (uint64_t) s.base_ts);
    samsa_store_be64(hdr + SAMSA_BATCH_OFF_MaxTimestamp,
                     (uint64_t) (s.base_ts + (int64_t) (s.nrec - 1)
                                                 * (s.ts_step ? s.ts_step : 1)));
    samsa_store_be64(hdr + SAMSA_BATCH_OFF_ProducerId, UINT64_MAX);
    samsa_store_be16(hdr + SAMSA_BATCH_OFF_ProducerEpoch, 0xffff);
    samsa_store_be32(hdr + SAMSA_BATCH_OFF_BaseSequence, 0xffffffff);
    samsa_store_be32(hdr + SAMSA_BATCH_OFF_RecordsCount, (uint32_t) s.nrec);
    samsa_buf_append(b, hdr, sizeof(hdr));
    for (i = 0; i < s.nrec; i++) {
        body.len = 0;
        if ((s.attrs & SAMSA_BATCH_ATTR_CODEC_MASK) != 0) {
            samsa_buf_append(b, "compressed-bytes", 16);
            continue;
        }
        bg_record_body(&body, &s, i);
        bg_varlong(b, (int64_t) body.len);
        samsa_buf_append(b, body.data, body.len);
    }
    samsa_buf_fini(&body);
    size = b->len - start;
    p = b->data + start;
    samsa_store_be32(p + SAMSA_BATCH_OFF_BatchLength,
                     (uint32_t) (size - SAMSA_BATCH_LOG_OVERHEAD));
    bg_resign(p, size);
    return size;
}

/* A batch of n records with base timestamp ts (defaults otherwise). */
static inline size_t
bg_simple(samsa_buf_t *b, int n, int64_t ts)
{
    bg_spec_t  s = { .nrec = n, .base_ts = ts };

    return bg_batch(b, &s);
}

/* ---- temporary directories ------------------------------------------- */

static inline char *
bg_tmpdir(void)
{
    char  tmpl[] = "/tmp/samsa-logtest-XXXXXX";
    char *d = mkdtemp(tmpl);

    return d != NULL ? strdup(d) : NULL;
}

static inline int
bg_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void) st;
    (void) flag;
    (void) ftw;
    return remove(path);
}

static inline void
bg_rmrf(char *dir)
{
    if (dir != NULL) {
        nftw(dir, bg_rm_one, 16, FTW_DEPTH | FTW_PHYS);
        free(dir);
    }
}

static inline int64_t
bg_file_size(const char *path)
{
    struct stat  st;

    return stat(path, &st) == 0 ? (int64_t) st.st_size : -1;
}

#endif /* SAMSA_TESTS_UNIT_LOG_BATCHGEN_H */
