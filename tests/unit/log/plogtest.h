/*
 * tests/unit/log/plogtest.h - helpers shared by the partition-log tests:
 * a small log config, appends of generated batches, reading a region.
 */
#ifndef SAMSA_TESTS_UNIT_LOG_PLOGTEST_H
#define SAMSA_TESTS_UNIT_LOG_PLOGTEST_H

#include "log/batchgen.h"
#include "log/plog.h"

static inline samsa_log_config_t
pt_config(void)
{
    samsa_log_config_t  cfg;

    samsa_log_config_defaults(&cfg);
    cfg.segment_bytes = 4096;
    cfg.segment_index_bytes = 1024;
    cfg.index_interval_bytes = 256;
    cfg.file_delete_delay_ms = 0;
    return cfg;
}

/* Append one batch of n records with base timestamp ts; returns the base
 * offset (asserting success). */
static inline int64_t
pt_append(samsa_plog_t *plog, int n, int64_t ts)
{
    samsa_buf_t                 b = SAMSA_BUF_INIT;
    samsa_plog_append_opts_t    opts = { .leader_epoch = 0,
                                         .from_client = true };
    samsa_plog_append_result_t  res;

    bg_simple(&b, n, ts);
    assert_int_equal(samsa_plog_append(plog, b.data, b.len, &opts, &res),
                     SAMSA_ERR_NONE);
    assert_int_equal(res.last_offset - res.base_offset + 1, n);
    samsa_buf_fini(&b);
    return res.base_offset;
}

/* Append one small batch; returns the error. */
static inline samsa_err_t
pt_append_err(samsa_plog_t *plog)
{
    samsa_buf_t                 b = SAMSA_BUF_INIT;
    samsa_plog_append_opts_t    opts = { .from_client = true };
    samsa_plog_append_result_t  res;
    samsa_err_t                 err;

    bg_simple(&b, 1, 1000);
    err = samsa_plog_append(plog, b.data, b.len, &opts, &res);
    samsa_buf_fini(&b);
    return err;
}

/* The bytes of a region (malloc'd, *len of them). */
static inline uint8_t *
pt_region_bytes(const samsa_plog_region_t *r)
{
    uint8_t  *p = malloc(r->len + 1);

    assert_int_equal(pread(r->fd, p, r->len, (off_t) r->pos),
                     (ssize_t) r->len);
    return p;
}

/* Offsets covered by the whole batches of a region; checks every CRC. */
static inline int64_t
pt_region_batches(const samsa_plog_region_t *r, int64_t *first,
                  int64_t *next)
{
    uint8_t            *p = pt_region_bytes(r);
    samsa_batch_hdr_t   hdr;
    size_t              off = 0;
    int64_t             n = 0;

    *first = *next = -1;
    while (off + SAMSA_BATCH_HDR_SIZE <= r->len
           && samsa_batch_parse(p + off, r->len - off, &hdr) == SAMSA_ERR_NONE
           && off + (size_t) samsa_batch_size(&hdr) <= r->len) {
        assert_true(samsa_batch_crc_ok(p + off,
                                       (size_t) samsa_batch_size(&hdr)));
        if (*first < 0) {
            *first = hdr.BaseOffset;
        }
        assert_true(*next < 0 || hdr.BaseOffset == *next);
        *next = samsa_batch_last_offset(&hdr) + 1;
        off += (size_t) samsa_batch_size(&hdr);
        n++;
    }
    free(p);
    return n;
}

#endif /* SAMSA_TESTS_UNIT_LOG_PLOGTEST_H */
