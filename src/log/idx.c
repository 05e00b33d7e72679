/*
 * log/idx.c - the offset index (see idx.h).
 */
#include "log/idx.h"

#include <limits.h>

#include "util/endian.h"

samsa_err_t
samsa_idx_open(samsa_idx_t *idx, const char *path, int64_t base_offset,
               bool *created)
{
    idx->base_offset = base_offset;
    return samsa_ixfile_open(&idx->file, path, SAMSA_IDX_ENTRY_SIZE, created);
}

void
samsa_idx_close(samsa_idx_t *idx)
{
    samsa_ixfile_close(&idx->file);
}

static samsa_idx_entry_t
idx_entry_at(const samsa_idx_t *idx, const uint8_t *e)
{
    return (samsa_idx_entry_t) {
        .offset = idx->base_offset + (int32_t) samsa_load_be32(e),
        .pos = samsa_load_be32(e + 4),
    };
}

bool
samsa_idx_append(samsa_idx_t *idx, int64_t offset, uint32_t pos)
{
    uint8_t         e[SAMSA_IDX_ENTRY_SIZE];
    int64_t         rel = offset - idx->base_offset;
    size_t          n = samsa_ixfile_count(&idx->file);
    const uint8_t  *last;

    if (rel < 0 || rel > INT32_MAX) {
        return false;
    }
    if (n > 0) {            /* the writer's own entries: no lock needed */
        last = idx->file.map + (n - 1) * SAMSA_IDX_ENTRY_SIZE;
        if (idx_entry_at(idx, last).offset >= offset) {
            return false;
        }
    }
    samsa_store_be32(e, (uint32_t) rel);
    samsa_store_be32(e + 4, pos);
    return samsa_ixfile_append(&idx->file, e);
}

/* Index of the last entry with relative offset <= rel, or -1. */
static ptrdiff_t
idx_search(const uint8_t *map, size_t n, int64_t rel)
{
    size_t  lo = 0, hi = n, mid;

    while (lo < hi) {           /* first entry with offset > rel */
        mid = lo + (hi - lo) / 2;
        if ((int32_t) samsa_load_be32(map + mid * SAMSA_IDX_ENTRY_SIZE)
            <= rel) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return (ptrdiff_t) lo - 1;
}

samsa_idx_entry_t
samsa_idx_lookup(samsa_idx_t *idx, int64_t offset)
{
    samsa_idx_entry_t  r = { idx->base_offset, 0 };
    const uint8_t     *map;
    size_t             n;
    ptrdiff_t          i;
    int64_t            rel = offset - idx->base_offset;

    if (rel < 0) {
        return r;
    }
    if (rel > INT32_MAX) {
        rel = INT32_MAX;
    }
    map = samsa_ixfile_read_begin(&idx->file, &n);
    i = n > 0 ? idx_search(map, n, rel) : -1;
    if (i >= 0) {
        r = idx_entry_at(idx, map + (size_t) i * SAMSA_IDX_ENTRY_SIZE);
    }
    samsa_ixfile_read_end(&idx->file);
    return r;
}

samsa_idx_entry_t
samsa_idx_last(samsa_idx_t *idx)
{
    samsa_idx_entry_t  r = { idx->base_offset, 0 };
    const uint8_t     *map;
    size_t             n;

    map = samsa_ixfile_read_begin(&idx->file, &n);
    if (n > 0) {
        r = idx_entry_at(idx, map + (n - 1) * SAMSA_IDX_ENTRY_SIZE);
    }
    samsa_ixfile_read_end(&idx->file);
    return r;
}

void
samsa_idx_truncate_to(samsa_idx_t *idx, int64_t offset)
{
    const uint8_t  *map;
    size_t          n;
    ptrdiff_t       i;
    int64_t         rel = offset - idx->base_offset;

    if (rel <= 0) {
        samsa_ixfile_truncate(&idx->file, 0);
        return;
    }
    map = samsa_ixfile_read_begin(&idx->file, &n);
    i = n > 0 ? idx_search(map, n, rel - 1) : -1;   /* last entry < offset */
    samsa_ixfile_read_end(&idx->file);
    samsa_ixfile_truncate(&idx->file, (size_t) (i + 1));
}

/* Entry e lies in the segment: [base, next_offset), within the log. */
static bool
idx_entry_ok(const samsa_idx_t *idx, samsa_idx_entry_t e, int64_t next_offset,
             uint32_t log_size)
{
    return e.offset >= idx->base_offset && e.offset < next_offset
           && e.pos < log_size;
}

bool
samsa_idx_sane(samsa_idx_t *idx, int64_t next_offset, uint32_t log_size,
               bool full)
{
    const uint8_t      *map;
    size_t              n, i;
    samsa_idx_entry_t   prev = { 0, 0 }, e;
    bool                ok = !idx->file.misaligned;

    map = samsa_ixfile_read_begin(&idx->file, &n);
    for (i = 0; ok && i < n; i++) {
        if (!full && i > 0 && i < n - 1) {
            i = n - 1;                          /* first and last only */
        }
        e = idx_entry_at(idx, map + i * SAMSA_IDX_ENTRY_SIZE);
        ok = idx_entry_ok(idx, e, next_offset, log_size)
             && (i == 0 || (e.offset > prev.offset && e.pos >= prev.pos));
        prev = e;
    }
    samsa_ixfile_read_end(&idx->file);
    return ok;
}
