/*
 * log/plog_scan.c - a whole-log read for coordinators loading their
 * internal topic (see samsa_plog_scan() in plog.h).
 */
#include "log/plog.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/diag.h"

samsa_err_t
samsa_plog_scan(samsa_plog_t *plog, int32_t chunk_bytes,
                samsa_plog_scan_fn *fn, void *ctx)
{
    samsa_plog_region_t  region;
    samsa_err_t          err = SAMSA_ERR_NONE;
    uint8_t             *buf = NULL;
    int64_t              off = samsa_plog_log_start_offset(plog);
    int64_t              end = samsa_plog_high_watermark(plog);
    int64_t              next;
    size_t               len;
    ssize_t              got;

    while (off < end) {
        err = samsa_plog_read(plog, off, chunk_bytes, true, end, &region);
        if (err != SAMSA_ERR_NONE || region.len == 0) {
            samsa_plog_region_release(&region);
            break;
        }
        len = region.len;
        buf = samsa_realloc(buf, len);
        got = pread(region.fd, buf, len, region.pos);
        samsa_plog_region_release(&region);
        if (got != (ssize_t) len) {
            samsa_error("log: cannot read %s: %s", samsa_plog_dir(plog),
                        got < 0 ? strerror(errno) : "short read");
            err = SAMSA_ERR__IO;
            break;
        }
        next = fn(ctx, buf, len, off);
        if (next <= off) {
            break;                      /* nothing whole: stop here */
        }
        off = next;
    }
    samsa_free(buf);
    return err;
}
