/*
 * libFuzzer target: a follower's append of what a leader sent
 * (samsa_plog_append_replica, log/plog.h; issue 19).  The input is handed
 * to a fresh replicated log twice: as is, and with each batch's base
 * offset set to follow on from the log end and its CRC recomputed (so the
 * fuzzer reaches the write path).  The append must never crash, never take
 * more bytes than it was given, must leave the log end after the last
 * offset taken and the high watermark where it was (0); the log must then
 * close and reopen (recovery) without losing anything it took.
 */
#include "fuzz.h"

#include <stdio.h>
#include <unistd.h>

#include "log/plog.h"
#include "proto/batch.h"
#include "util/diag.h"
#include "util/endian.h"

static char  fuzz_dir[64];
static int   fuzz_n;

static int64_t
fuzz_plog_repl_feed(const uint8_t *p, size_t n)
{
    samsa_log_config_t          cfg;
    samsa_plog_load_t           load = { .recovery_point = -1,
                                         .log_start_offset = -1,
                                         .clean = false, .now_ms = 0 };
    samsa_plog_append_result_t  res;
    samsa_plog_t               *plog;
    samsa_uuid_t                id = { { 1 } };
    char                        name[32];
    int64_t                     leo;
    samsa_err_t                 err;

    samsa_log_config_defaults(&cfg);
    cfg.segment_bytes = 1 << 20;
    cfg.file_delete_delay_ms = 0;
    snprintf(name, sizeof(name), "t%d", fuzz_n++);
    fuzz_require(samsa_plog_create(fuzz_dir, name, 0, id, &cfg, &plog)
                 == SAMSA_ERR_NONE);
    samsa_plog_set_replicated(plog, true);
    err = samsa_plog_append_replica(plog, p, n, &res);
    leo = samsa_plog_log_end_offset(plog);
    fuzz_require(res.bytes <= n);
    fuzz_require(samsa_plog_high_watermark(plog) == 0);
    if (err != SAMSA_ERR_NONE || res.bytes == 0) {
        fuzz_require(leo == 0);
    } else {
        fuzz_require(leo == res.last_offset + 1);
    }
    fuzz_require(samsa_plog_close(plog) == SAMSA_ERR_NONE);
    fuzz_require(samsa_plog_open(fuzz_dir, name, 0, &cfg, &load, &plog)
                 == SAMSA_ERR_NONE);
    fuzz_require(samsa_plog_log_end_offset(plog) == leo);
    {
        char  renamed[4096];

        fuzz_require(samsa_plog_delete(plog, renamed, sizeof(renamed))
                     == SAMSA_ERR_NONE);
        samsa_plog_unref(plog);
        fuzz_require(samsa_plog_remove_dir(renamed) == SAMSA_ERR_NONE);
    }
    return leo;
}

/* Base offsets following on from 0, CRCs recomputed. */
static void
fuzz_plog_repl_fix(uint8_t *p, size_t n)
{
    samsa_batch_hdr_t  hdr;
    size_t             off = 0;
    int64_t            next = 0, size;

    while (off + SAMSA_BATCH_HDR_SIZE <= n
           && samsa_batch_parse(p + off, n - off, &hdr) == SAMSA_ERR_NONE) {
        size = samsa_batch_size(&hdr);
        if ((size_t) size > n - off || hdr.LastOffsetDelta < 0
            || hdr.LastOffsetDelta > (1 << 20)) {
            break;
        }
        samsa_store_be64(p + off, (uint64_t) next);
        samsa_store_be32(p + off + SAMSA_BATCH_OFF_Crc,
                         samsa_batch_crc_compute(p + off, (size_t) size));
        next += (int64_t) hdr.LastOffsetDelta + 1;
        off += (size_t) size;
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t  *copy;

    if (fuzz_dir[0] == '\0') {       /* tmpfs first: fsync is free there */
        snprintf(fuzz_dir, sizeof(fuzz_dir), "/dev/shm/samsa-fuzz-XXXXXX");
        if (mkdtemp(fuzz_dir) == NULL) {
            snprintf(fuzz_dir, sizeof(fuzz_dir), "/tmp/samsa-fuzz-XXXXXX");
            fuzz_require(mkdtemp(fuzz_dir) != NULL);
        }
        samsa_diag_set_level(SAMSA_DIAG_ERROR);
    }
    (void) fuzz_plog_repl_feed(data, size);
    copy = malloc(size + 1);
    memcpy(copy, data, size);
    fuzz_plog_repl_fix(copy, size);
    (void) fuzz_plog_repl_feed(copy, size);
    free(copy);
    return 0;
}
