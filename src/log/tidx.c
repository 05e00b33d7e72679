/*
 * log/tidx.c - the time index (see tidx.h).
 */
#include "log/tidx.h"

#include <limits.h>

#include "util/endian.h"

samsa_err_t
samsa_tidx_open(samsa_tidx_t *tidx, const char *path, int64_t base_offset,
                bool *created)
{
    tidx->base_offset = base_offset;
    return samsa_ixfile_open(&tidx->file, path, SAMSA_TIDX_ENTRY_SIZE,
                             created);
}

void
samsa_tidx_close(samsa_tidx_t *tidx)
{
    samsa_ixfile_close(&tidx->file);
}

static samsa_tidx_entry_t
tidx_entry_at(const samsa_tidx_t *tidx, const uint8_t *e)
{
    return (samsa_tidx_entry_t) {
        .timestamp = (int64_t) samsa_load_be64(e),
        .offset = tidx->base_offset + (int32_t) samsa_load_be32(e + 8),
    };
}

bool
samsa_tidx_full(samsa_tidx_t *tidx)
{
    return samsa_ixfile_count(&tidx->file) + 1 >= tidx->file.max_entries;
}

bool
samsa_tidx_maybe_append(samsa_tidx_t *tidx, int64_t timestamp,
                        int64_t offset, bool roll)
{
    uint8_t             e[SAMSA_TIDX_ENTRY_SIZE];
    size_t              n = samsa_ixfile_count(&tidx->file);
    int64_t             rel = offset - tidx->base_offset;
    samsa_tidx_entry_t  last = { -1, tidx->base_offset };

    if (rel < 0 || rel > INT32_MAX || (!roll && samsa_tidx_full(tidx))) {
        return false;
    }
    if (n > 0) {            /* the writer's own entries: no lock needed */
        last = tidx_entry_at(tidx, tidx->file.map
                                       + (n - 1) * SAMSA_TIDX_ENTRY_SIZE);
    }
    if ((n > 0 && timestamp <= last.timestamp) || timestamp < 0
        || offset < last.offset) {
        return false;
    }
    samsa_store_be64(e, (uint64_t) timestamp);
    samsa_store_be32(e + 8, (uint32_t) rel);
    return samsa_ixfile_append(&tidx->file, e);
}

/* Index of the last entry with timestamp <= ts, or -1. */
static ptrdiff_t
tidx_search(const uint8_t *map, size_t n, int64_t ts)
{
    size_t  lo = 0, hi = n, mid;

    while (lo < hi) {
        mid = lo + (hi - lo) / 2;
        if ((int64_t) samsa_load_be64(map + mid * SAMSA_TIDX_ENTRY_SIZE)
            <= ts) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return (ptrdiff_t) lo - 1;
}

samsa_tidx_entry_t
samsa_tidx_lookup(samsa_tidx_t *tidx, int64_t timestamp)
{
    samsa_tidx_entry_t  r = { -1, tidx->base_offset };
    const uint8_t      *map;
    size_t              n;
    ptrdiff_t           i;

    map = samsa_ixfile_read_begin(&tidx->file, &n);
    i = n > 0 ? tidx_search(map, n, timestamp) : -1;
    if (i >= 0) {
        r = tidx_entry_at(tidx, map + (size_t) i * SAMSA_TIDX_ENTRY_SIZE);
    }
    samsa_ixfile_read_end(&tidx->file);
    return r;
}

samsa_tidx_entry_t
samsa_tidx_last(samsa_tidx_t *tidx)
{
    samsa_tidx_entry_t  r = { -1, tidx->base_offset };
    const uint8_t      *map;
    size_t              n;

    map = samsa_ixfile_read_begin(&tidx->file, &n);
    if (n > 0) {
        r = tidx_entry_at(tidx, map + (n - 1) * SAMSA_TIDX_ENTRY_SIZE);
    }
    samsa_ixfile_read_end(&tidx->file);
    return r;
}

void
samsa_tidx_truncate_to(samsa_tidx_t *tidx, int64_t offset)
{
    const uint8_t  *map;
    size_t          n, lo = 0, hi, mid;

    map = samsa_ixfile_read_begin(&tidx->file, &n);
    hi = n;
    while (lo < hi) {           /* first entry at or past offset */
        mid = lo + (hi - lo) / 2;
        if (tidx_entry_at(tidx, map + mid * SAMSA_TIDX_ENTRY_SIZE).offset
            < offset) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    samsa_ixfile_read_end(&tidx->file);
    samsa_ixfile_truncate(&tidx->file, lo);
}

bool
samsa_tidx_sane(samsa_tidx_t *tidx, int64_t next_offset, bool full)
{
    const uint8_t       *map;
    size_t               n, i;
    samsa_tidx_entry_t   prev = { 0, 0 }, e;
    bool                 ok = !tidx->file.misaligned;

    map = samsa_ixfile_read_begin(&tidx->file, &n);
    for (i = 0; ok && i < n; i++) {
        if (!full && i > 0 && i < n - 1) {
            i = n - 1;
        }
        e = tidx_entry_at(tidx, map + i * SAMSA_TIDX_ENTRY_SIZE);
        ok = e.offset >= tidx->base_offset && e.offset < next_offset
             && e.timestamp >= 0
             && (i == 0 || (e.timestamp > prev.timestamp
                            && e.offset >= prev.offset));
        prev = e;
    }
    samsa_ixfile_read_end(&tidx->file);
    return ok;
}
