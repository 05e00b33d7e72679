/*
 * log/cleaner.c - the log cleaner (see cleaner.h): the offset map, the
 * per-batch filter, one cleaning pass over a log, and the logcleaner
 * threads.  Reads sealed segments through a snapshot without the plog
 * lock; only samsa_plog_clean_swap() takes it.
 */
#include "log/cleaner.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log/ckpt.h"
#include "log/seg.h"
#include "proto/batch.h"
#include "proto/compress.h"
#include "proto/wr.h"
#include "util/alloc.h"
#include "util/diag.h"
#include "util/endian.h"
#include "util/locked.h"
#include "util/map.h"
#include "util/time.h"

#define CLEANER_MAP_SLOT_BYTES   sizeof(cleaner_slot_t)
#define CLEANER_MAP_MIN_SLOTS    256
#define CLEANER_PID_MAP_BYTES    (8u << 20)
#define CLEANER_WRITE_CHUNK      (1u << 20)
#define CLEANER_MAX_RECORDS_OUT  ((size_t) INT32_MAX)
#define CLEANER_THROTTLE_CHECK_NS  (300 * 1000000LL)   /* Kafka's 300 ms */

/* ---- offset map ---------------------------------------------------------- */

typedef struct cleaner_slot {
    uint64_t  hash;
    int64_t   offset;               /* -1: empty slot */
    uint32_t  koff;                 /* the key in map->keys */
    uint32_t  klen;
} cleaner_slot_t;

/* samsa_cleaner_map_t - open addressing over exact keys; owned by one
 * thread.  Not a util/map.h map: like Kafka's SkimpyOffsetMap it lives in
 * a fixed budget (log.cleaner.dedupe.buffer.size) that its slots and key
 * bytes are counted against, and it allocates nothing per key; it shares
 * util/map.h's hash only. */
struct samsa_cleaner_map {
    size_t           budget;        /* bytes for slots + keys */
    cleaner_slot_t  *slots;
    size_t           cap;           /* power of two */
    size_t           count;
    samsa_buf_t      keys;
};

static cleaner_slot_t *
cleaner_slots_new(size_t cap)
{
    cleaner_slot_t  *s = samsa_malloc(cap * sizeof(*s));
    size_t           i;

    for (i = 0; i < cap; i++) {
        s[i].offset = -1;
    }
    return s;
}

samsa_cleaner_map_t *
samsa_cleaner_map_new(size_t budget)
{
    samsa_cleaner_map_t  *map = samsa_calloc(1, sizeof(*map));

    map->budget = budget;
    map->cap = CLEANER_MAP_MIN_SLOTS;
    map->slots = cleaner_slots_new(map->cap);
    return map;
}

void
samsa_cleaner_map_free(samsa_cleaner_map_t *map)
{
    if (map != NULL) {
        samsa_free(map->slots);
        samsa_buf_fini(&map->keys);
        samsa_free(map);
    }
}

void
samsa_cleaner_map_clear(samsa_cleaner_map_t *map)
{
    size_t  i;

    for (i = 0; i < map->cap; i++) {
        map->slots[i].offset = -1;
    }
    map->count = 0;
    map->keys.len = 0;
}

size_t
samsa_cleaner_map_count(const samsa_cleaner_map_t *map)
{
    return map->count;
}

/* The slot holding key, or the empty one where it would go. */
static cleaner_slot_t *
cleaner_map_slot(const samsa_cleaner_map_t *map, cleaner_slot_t *slots,
                 size_t cap, uint64_t h, const uint8_t *key, size_t len)
{
    size_t           i = (size_t) h & (cap - 1);
    cleaner_slot_t  *s;

    for (;;) {
        s = &slots[i];
        if (s->offset < 0) {
            return s;
        }
        if (s->hash == h && s->klen == len
            && (len == 0 || memcmp(map->keys.data + s->koff, key, len) == 0)) {
            return s;
        }
        i = (i + 1) & (cap - 1);
    }
}

/* Double the slots if the budget allows.  False if it does not. */
static bool
cleaner_map_grow(samsa_cleaner_map_t *map, size_t extra_key)
{
    size_t           ncap = map->cap * 2, i;
    cleaner_slot_t  *ns, *d;

    if (ncap * CLEANER_MAP_SLOT_BYTES + map->keys.len + extra_key
        > map->budget) {
        return false;
    }
    ns = cleaner_slots_new(ncap);
    for (i = 0; i < map->cap; i++) {
        if (map->slots[i].offset >= 0) {
            d = cleaner_map_slot(map, ns, ncap, map->slots[i].hash,
                                 map->keys.data + map->slots[i].koff,
                                 map->slots[i].klen);
            *d = map->slots[i];
        }
    }
    samsa_free(map->slots);
    map->slots = ns;
    map->cap = ncap;
    return true;
}

bool
samsa_cleaner_map_put(samsa_cleaner_map_t *map, const uint8_t *key,
                      size_t len, int64_t offset)
{
    uint64_t         h = samsa_hash_bytes(key, len, 0);
    cleaner_slot_t  *s = cleaner_map_slot(map, map->slots, map->cap, h, key,
                                          len);

    if (s->offset >= 0) {
        if (offset > s->offset) {
            s->offset = offset;
        }
        return true;
    }
    if (len > UINT32_MAX || map->keys.len + len > UINT32_MAX
        || map->cap * CLEANER_MAP_SLOT_BYTES + map->keys.len + len
               > map->budget) {
        return false;
    }
    if ((map->count + 1) * 4 > map->cap * 3) {
        if (!cleaner_map_grow(map, len)) {
            return false;
        }
        s = cleaner_map_slot(map, map->slots, map->cap, h, key, len);
    }
    s->hash = h;
    s->offset = offset;
    s->klen = (uint32_t) len;
    s->koff = (uint32_t) samsa_buf_append(&map->keys, key, len);
    map->count++;
    return true;
}

int64_t
samsa_cleaner_map_get(const samsa_cleaner_map_t *map, const uint8_t *key,
                      size_t len)
{
    const cleaner_slot_t  *s;

    s = cleaner_map_slot(map, map->slots, map->cap,
                         samsa_hash_bytes(key, len, 0), key, len);
    return s->offset;
}

/* ---- batches ------------------------------------------------------------- */

/* Check a batch read from disk and give a view with plain records: the
 * batch itself, or (compressed) its header followed by the decompressed
 * records in tmp. */
static samsa_err_t
cleaner_open_batch(const uint8_t *batch, size_t size, samsa_batch_hdr_t *hdr,
                   samsa_buf_t *tmp, const uint8_t **view, size_t *vsize)
{
    samsa_err_t  err;

    if (samsa_batch_parse(batch, size, hdr) != SAMSA_ERR_NONE
        || (size_t) samsa_batch_size(hdr) != size
        || !samsa_batch_crc_ok(batch, size) || hdr->RecordsCount < 0) {
        return SAMSA_ERR__BAD_MSG;
    }
    if (samsa_batch_codec(hdr) == SAMSA_BATCH_CODEC_NONE) {
        *view = batch;
        *vsize = size;
        return SAMSA_ERR_NONE;
    }
    tmp->len = 0;
    samsa_buf_append(tmp, batch, SAMSA_BATCH_HDR_SIZE);
    err = samsa_decompress((samsa_codec_t) samsa_batch_codec(hdr),
                           batch + SAMSA_BATCH_HDR_SIZE,
                           size - SAMSA_BATCH_HDR_SIZE,
                           (size_t) hdr->BatchLength * 255 + (1u << 20), tmp);
    if (err != SAMSA_ERR_NONE) {
        return SAMSA_ERR__BAD_MSG;
    }
    *view = tmp->data;
    *vsize = tmp->len;
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_cleaner_map_batch(samsa_cleaner_map_t *map, const uint8_t *batch,
                        size_t size, int64_t min_offset)
{
    samsa_batch_hdr_t  hdr;
    samsa_buf_t        tmp = SAMSA_BUF_INIT;
    samsa_record_it_t  it;
    samsa_record_t     rec;
    const uint8_t     *view;
    size_t             vsize;
    samsa_err_t        err;
    int64_t            off;

    err = cleaner_open_batch(batch, size, &hdr, &tmp, &view, &vsize);
    if (err != SAMSA_ERR_NONE || samsa_batch_is_control(&hdr)
        || (int64_t) ((uint64_t) hdr.BaseOffset
                      + (uint64_t) (int64_t) hdr.LastOffsetDelta)
               < min_offset) {
        samsa_buf_fini(&tmp);
        return err;
    }
    samsa_record_it_init(&it, view, vsize);
    while (samsa_record_it_next(&it, &rec)) {
        off = (int64_t) ((uint64_t) hdr.BaseOffset
                         + (uint64_t) (int64_t) rec.OffsetDelta);
        if (rec.Key == NULL || off < min_offset) {
            continue;
        }
        if (!samsa_cleaner_map_put(map, rec.Key, (size_t) rec.KeyLen, off)) {
            err = SAMSA_ERR__FULL;
            break;
        }
    }
    if (err == SAMSA_ERR_NONE && it.err != SAMSA_ERR_NONE) {
        err = SAMSA_ERR__BAD_MSG;
    }
    samsa_buf_fini(&tmp);
    return err;
}

/* ---- filter -------------------------------------------------------------- */

/* Java's long arithmetic: batches read from disk may hold any values. */
static int64_t
cleaner_wrap_add(int64_t a, int64_t b)
{
    return (int64_t) ((uint64_t) a + (uint64_t) b);
}

/* Whether rec survives (see samsa_cleaner_filter_batch). */
static bool
cleaner_keep(const samsa_batch_hdr_t *hdr, const samsa_record_t *rec,
             const samsa_cleaner_filter_t *f, bool expired, bool *tombstone)
{
    int64_t  latest;

    *tombstone = false;
    if (samsa_batch_is_control(hdr)) {
        return !expired;
    }
    if (rec->Key == NULL) {
        return false;               /* Kafka drops keyless records too */
    }
    if (f->map != NULL) {
        latest = samsa_cleaner_map_get(f->map, rec->Key, (size_t) rec->KeyLen);
        if (latest >= 0
            && cleaner_wrap_add(hdr->BaseOffset, rec->OffsetDelta) < latest) {
            return false;
        }
    }
    if (rec->Value == NULL) {
        *tombstone = true;
        return !expired;
    }
    return true;
}

/* Encode rec with a new timestamp delta. */
static void
cleaner_put_record(samsa_wr_t *wr, samsa_buf_t *scratch,
                   const samsa_record_t *rec, int64_t ts_delta)
{
    samsa_wr_t  body;

    scratch->len = 0;
    samsa_wr_init(&body, scratch);
    body.region = NULL;
    samsa_wr_i8(&body, rec->Attributes);
    samsa_wr_varlong(&body, ts_delta);
    samsa_wr_varint(&body, rec->OffsetDelta);
    samsa_wr_varint(&body, rec->KeyLen);
    if (rec->KeyLen > 0) {
        samsa_wr_raw(&body, rec->Key, (size_t) rec->KeyLen);
    }
    samsa_wr_varint(&body, rec->ValueLen);
    if (rec->ValueLen > 0) {
        samsa_wr_raw(&body, rec->Value, (size_t) rec->ValueLen);
    }
    samsa_wr_varint(&body, rec->HeadersCount);
    if (rec->HeadersLen > 0) {
        samsa_wr_raw(&body, rec->Headers, rec->HeadersLen);
    }
    samsa_wr_varint(wr, (int32_t) scratch->len);
    samsa_wr_raw(wr, scratch->data, scratch->len);
}

/* Write the header (from the original's first 61 bytes) and CRC of the
 * batch that starts at out->data + at. */
static void
cleaner_finish_header(samsa_buf_t *out, size_t at, const uint8_t *orig,
                      int16_t attrs, int64_t base_ts, int64_t max_ts,
                      int32_t count)
{
    uint8_t  *p = out->data + at;
    size_t    size = out->len - at;

    memcpy(p, orig, SAMSA_BATCH_HDR_SIZE);
    samsa_store_be32(p + SAMSA_BATCH_OFF_BatchLength,
                     (uint32_t) (size - SAMSA_BATCH_LOG_OVERHEAD));
    samsa_store_be16(p + SAMSA_BATCH_OFF_Attributes, (uint16_t) attrs);
    samsa_store_be64(p + SAMSA_BATCH_OFF_BaseTimestamp, (uint64_t) base_ts);
    samsa_store_be64(p + SAMSA_BATCH_OFF_MaxTimestamp, (uint64_t) max_ts);
    samsa_store_be32(p + SAMSA_BATCH_OFF_RecordsCount, (uint32_t) count);
    samsa_store_be32(p + SAMSA_BATCH_OFF_Crc,
                     samsa_batch_crc_compute(p, size));
}

/* The batch with no records left (Kafka's RETAIN_EMPTY). */
static void
cleaner_put_empty(samsa_buf_t *out, const uint8_t *orig,
                  const samsa_batch_hdr_t *hdr)
{
    size_t   at = out->len;
    int16_t  attrs = (int16_t) (hdr->Attributes
                                & ~(SAMSA_BATCH_ATTR_CODEC_MASK
                                    | SAMSA_BATCH_ATTR_CONTROL));

    samsa_buf_reserve(out, SAMSA_BATCH_HDR_SIZE);
    out->len += SAMSA_BATCH_HDR_SIZE;
    cleaner_finish_header(out, at, orig, attrs, hdr->BaseTimestamp,
                          hdr->MaxTimestamp, 0);
}

/* What the first walk over a batch's records found. */
typedef struct cleaner_walk {
    int32_t  kept;
    int32_t  removed;
    bool     tomb_kept;             /* a kept tombstone */
    bool     expired;               /* the batch's horizon has passed */
} cleaner_walk_t;

static samsa_err_t
cleaner_walk(const samsa_batch_hdr_t *hdr, const uint8_t *view, size_t vsize,
             const samsa_cleaner_filter_t *f, cleaner_walk_t *w)
{
    samsa_record_it_t  it;
    samsa_record_t     rec;
    bool               tomb;

    memset(w, 0, sizeof(*w));
    w->expired = samsa_batch_has_delete_horizon(hdr)
                 && hdr->BaseTimestamp <= f->now_ms;
    samsa_record_it_init(&it, view, vsize);
    while (samsa_record_it_next(&it, &rec)) {
        if (cleaner_keep(hdr, &rec, f, w->expired, &tomb)) {
            w->kept++;
            w->tomb_kept |= tomb;
        } else {
            w->removed++;
        }
    }
    return it.err == SAMSA_ERR_NONE ? SAMSA_ERR_NONE : SAMSA_ERR__BAD_MSG;
}

/* Write the kept records of the batch as a new batch into out. */
static samsa_err_t
cleaner_rebuild(const uint8_t *orig, const samsa_batch_hdr_t *hdr,
                const uint8_t *view, size_t vsize,
                const samsa_cleaner_filter_t *f, const cleaner_walk_t *w,
                int64_t base_ts, int16_t attrs, samsa_buf_t *out)
{
    samsa_buf_t        recs = SAMSA_BUF_INIT, scratch = SAMSA_BUF_INIT;
    samsa_record_it_t  it;
    samsa_record_t     rec;
    samsa_wr_t         wr;
    samsa_err_t        err = SAMSA_ERR_NONE;
    int64_t            ts, max_ts = SAMSA_BATCH_NO_TIMESTAMP;
    size_t             at = out->len;
    bool               tomb;

    samsa_wr_init(&wr, &recs);
    wr.region = NULL;
    samsa_record_it_init(&it, view, vsize);
    while (samsa_record_it_next(&it, &rec)) {
        if (!cleaner_keep(hdr, &rec, f, w->expired, &tomb)) {
            continue;
        }
        ts = cleaner_wrap_add(hdr->BaseTimestamp, rec.TimestampDelta);
        max_ts = ts > max_ts ? ts : max_ts;
        cleaner_put_record(&wr, &scratch, &rec,
                           cleaner_wrap_add(ts, (int64_t) (0 - (uint64_t)
                                                               base_ts)));
    }
    if (samsa_batch_is_log_append_time(hdr)) {
        max_ts = hdr->MaxTimestamp;
    }
    samsa_buf_reserve(out, SAMSA_BATCH_HDR_SIZE);
    out->len += SAMSA_BATCH_HDR_SIZE;
    if (samsa_batch_codec(hdr) == SAMSA_BATCH_CODEC_NONE) {
        samsa_buf_append(out, recs.data, recs.len);
    } else {
        err = samsa_compress((samsa_codec_t) samsa_batch_codec(hdr),
                             SAMSA_CODEC_LEVEL_DEFAULT, recs.data, recs.len,
                             out);
    }
    if (err == SAMSA_ERR_NONE) {
        cleaner_finish_header(out, at, orig, attrs, base_ts, max_ts, w->kept);
    } else {
        out->len = at;
    }
    samsa_buf_fini(&recs);
    samsa_buf_fini(&scratch);
    return err;
}

static int64_t
cleaner_add_sat(int64_t a, int64_t b)
{
    int64_t  r;

    return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

samsa_err_t
samsa_cleaner_filter_batch(const uint8_t *batch, size_t size,
                           const samsa_cleaner_filter_t *f, samsa_buf_t *out,
                           samsa_cleaner_filter_res_t *res)
{
    samsa_batch_hdr_t  hdr;
    samsa_buf_t        tmp = SAMSA_BUF_INIT;
    cleaner_walk_t     w;
    const uint8_t     *view;
    size_t             vsize;
    samsa_err_t        err;
    bool               has_h, need_h, control;
    int64_t            base_ts;
    int16_t            attrs;

    memset(res, 0, sizeof(*res));
    res->horizon = -1;
    err = cleaner_open_batch(batch, size, &hdr, &tmp, &view, &vsize);
    if (err == SAMSA_ERR_NONE) {
        err = cleaner_walk(&hdr, view, vsize, f, &w);
    }
    if (err != SAMSA_ERR_NONE) {
        samsa_buf_fini(&tmp);
        return err;
    }
    control = samsa_batch_is_control(&hdr);
    has_h = samsa_batch_has_delete_horizon(&hdr);
    need_h = !has_h && (control ? w.kept > 0 : w.tomb_kept);
    res->kept = w.kept;
    res->removed = w.removed;
    base_ts = need_h ? cleaner_add_sat(f->now_ms, f->delete_retention_ms)
                     : hdr.BaseTimestamp;
    if ((control && w.kept > 0) || w.tomb_kept) {
        res->horizon = base_ts;
    }
    if (w.removed == 0 && !need_h) {
        samsa_buf_append(out, batch, size);
    } else if (w.kept == 0) {
        res->changed = true;
        if (f->retain_empty) {
            cleaner_put_empty(out, batch, &hdr);
        }
    } else {
        res->changed = true;
        attrs = (int16_t) (hdr.Attributes
                           | (need_h ? SAMSA_BATCH_ATTR_DELETE_HORIZON : 0));
        err = cleaner_rebuild(batch, &hdr, view, vsize, f, &w, base_ts, attrs,
                              out);
    }
    samsa_buf_fini(&tmp);
    return err;
}

/* ---- reading segments ---------------------------------------------------- */

/* The batch at pos of seg (ending by limit) into buf.  _NOENT at the end;
 * KAFKA_STORAGE_ERROR on a read error or a header that does not fit. */
static samsa_err_t
cleaner_read_batch(samsa_seg_t *seg, uint32_t pos, uint32_t limit,
                   samsa_buf_t *buf, samsa_batch_hdr_t *hdr)
{
    samsa_err_t  err;
    size_t       size;

    err = samsa_seg_batch_at(seg, pos, limit, hdr);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    size = (size_t) samsa_batch_size(hdr);
    buf->len = 0;
    samsa_buf_reserve(buf, size);
    err = samsa_seg_read(seg, pos, buf->data, size);
    buf->len = err == SAMSA_ERR_NONE ? size : 0;
    return err;
}

/* ---- planning ------------------------------------------------------------ */

/* What a log looks like to the cleaner now. */
typedef struct cleaner_plan {
    samsa_log_config_t   cfg;
    samsa_seg_t        **segs;          /* snapshot, last active */
    size_t               n;
    int64_t              first_dirty;
    int64_t              uncleanable;   /* first offset not to clean */
    int64_t              clean_bytes;
    int64_t              dirty_bytes;
    bool                 lag_due;       /* max.compaction.lag.ms passed */
    bool                 horizon_due;   /* a delete horizon passed */
} cleaner_plan_t;

/* The first batch's first timestamp of seg, or -1. */
static int64_t
cleaner_first_ts(samsa_seg_t *seg)
{
    uint8_t            h[SAMSA_BATCH_HDR_SIZE];
    samsa_batch_hdr_t  hdr;

    if (samsa_seg_end(seg).size < SAMSA_BATCH_HDR_SIZE
        || samsa_seg_read(seg, 0, h, sizeof(h)) != SAMSA_ERR_NONE
        || samsa_batch_parse(h, sizeof(h), &hdr) != SAMSA_ERR_NONE
        || samsa_batch_has_delete_horizon(&hdr)) {
        return -1;
    }
    return hdr.BaseTimestamp;
}

static void
cleaner_plan_make(samsa_plog_t *plog, int64_t now_ms, cleaner_plan_t *p)
{
    int64_t          start = samsa_plog_log_start_offset(plog);
    int64_t          co = samsa_plog_clean_offset(plog);
    int64_t          lag, first_ts;
    samsa_seg_end_t  end;
    size_t           i, first = SIZE_MAX;

    memset(p, 0, sizeof(*p));
    samsa_plog_config_get(plog, &p->cfg);
    p->segs = samsa_plog_clean_snapshot(plog, &p->n);
    p->first_dirty = co > start ? co : start;
    p->uncleanable = samsa_seg_base(p->segs[p->n - 1]);
    lag = p->cfg.min_compaction_lag_ms;
    for (i = 0; i + 1 < p->n; i++) {
        end = samsa_seg_end(p->segs[i]);
        if (end.next_offset <= p->first_dirty) {
            p->clean_bytes += end.size;
            continue;
        }
        if (lag > 0 && samsa_seg_max_timestamp(p->segs[i], NULL)
                           > now_ms - lag) {
            p->uncleanable = samsa_seg_base(p->segs[i]);
            break;
        }
        first = first == SIZE_MAX ? i : first;
        p->dirty_bytes += end.size;
    }
    if (first != SIZE_MAX && p->dirty_bytes > 0
        && p->cfg.max_compaction_lag_ms < INT64_MAX) {
        first_ts = cleaner_first_ts(p->segs[first]);
        p->lag_due = first_ts >= 0
                     && now_ms - first_ts > p->cfg.max_compaction_lag_ms;
    }
    p->horizon_due = samsa_plog_clean_horizon(plog) <= now_ms
                     && p->clean_bytes + p->dirty_bytes > 0;
}

static void
cleaner_plan_fini(cleaner_plan_t *p)
{
    samsa_plog_clean_release(p->segs, p->n);
    p->segs = NULL;
}

static double
cleaner_ratio(const cleaner_plan_t *p)
{
    int64_t  total = p->clean_bytes + p->dirty_bytes;

    return total > 0 ? (double) p->dirty_bytes / (double) total : 0.0;
}

bool
samsa_cleaner_log_dirt(samsa_plog_t *plog, int64_t now_ms, double *ratio,
                       bool *must)
{
    samsa_log_config_t  cfg;
    cleaner_plan_t      p;

    samsa_plog_config_get(plog, &cfg);
    *ratio = 0;
    *must = false;
    if ((cfg.cleanup_policy & SAMSA_LOG_CLEANUP_COMPACT) == 0
        || samsa_plog_is_offline(plog)) {
        return false;
    }
    cleaner_plan_make(plog, now_ms, &p);
    *ratio = p.dirty_bytes > 0 ? cleaner_ratio(&p) : 0;
    *must = (p.lag_due && p.dirty_bytes > 0) || p.horizon_due;
    if (p.dirty_bytes > 0 && *ratio < p.cfg.min_cleanable_ratio && !*must) {
        *ratio = 0;                 /* not due */
    }
    cleaner_plan_fini(&p);
    return *ratio > 0 || *must;
}

/* ---- one pass ------------------------------------------------------------ */

typedef struct cleaner_pass {
    samsa_plog_t                *plog;
    const samsa_cleaner_opts_t  *opts;
    cleaner_plan_t               plan;
    samsa_cleaner_map_t         *map;
    samsa_cleaner_map_t         *pids;      /* producer id -> base offset of
                                               its last batch */
    bool                         pids_full;
    int64_t                      end;       /* map covers [first_dirty,
                                               end) */
    int64_t                      min_horizon;
    samsa_buf_t                  in;
    samsa_buf_t                  out;
    samsa_cleaner_stats_t       *stats;
} cleaner_pass_t;

/* Tell the I/O throttle, if any, of bytes read or written. */
static void
cleaner_io(const cleaner_pass_t *cp, size_t bytes)
{
    if (cp->opts->io_fn != NULL) {
        cp->opts->io_fn(cp->opts->io_ctx, (int64_t) bytes);
    }
}

/* Add seg's keys (offsets >= first dirty) to the map. */
static samsa_err_t
cleaner_map_segment(cleaner_pass_t *cp, samsa_seg_t *seg)
{
    samsa_batch_hdr_t  hdr;
    samsa_seg_end_t    end = samsa_seg_end(seg);
    uint32_t           pos = 0;
    samsa_err_t        err;

    for (;;) {
        err = cleaner_read_batch(seg, pos, end.size, &cp->in, &hdr);
        if (err != SAMSA_ERR_NONE) {
            return err == SAMSA_ERR__NOENT ? SAMSA_ERR_NONE : err;
        }
        cp->stats->bytes_read += (int64_t) cp->in.len;
        cleaner_io(cp, cp->in.len);
        err = samsa_cleaner_map_batch(cp->map, cp->in.data, cp->in.len,
                                      cp->plan.first_dirty);
        if (err == SAMSA_ERR__BAD_MSG) {
            samsa_error("log cleaner: cannot decode the batch at offset %"
                        PRId64 " of %s", hdr.BaseOffset,
                        samsa_seg_log_path(seg));
        }
        if (err != SAMSA_ERR_NONE) {
            return err;
        }
        pos += (uint32_t) samsa_batch_size(&hdr);
    }
}

/* Build the map over the dirty segments; cp->end gets where it stops. */
static samsa_err_t
cleaner_build_map(cleaner_pass_t *cp)
{
    cleaner_plan_t  *p = &cp->plan;
    samsa_err_t      err = SAMSA_ERR_NONE;
    size_t           i;
    bool             any = false;

    cp->end = p->first_dirty;
    for (i = 0; i + 1 < p->n; i++) {
        if (samsa_seg_end(p->segs[i]).next_offset <= p->first_dirty) {
            continue;
        }
        if (samsa_seg_base(p->segs[i]) >= p->uncleanable) {
            break;
        }
        err = cleaner_map_segment(cp, p->segs[i]);
        if (err == SAMSA_ERR__FULL && any) {
            return SAMSA_ERR_NONE;  /* stop before this segment */
        }
        if (err == SAMSA_ERR__FULL) {
            samsa_warn("log cleaner: %s: log.cleaner.dedupe.buffer.size too "
                       "small for one segment; keys that did not fit keep "
                       "their older records this pass",
                       samsa_plog_dir(cp->plog));
        } else if (err != SAMSA_ERR_NONE) {
            return err;
        }
        any = true;
        cp->end = samsa_seg_base(p->segs[i + 1]);
    }
    return SAMSA_ERR_NONE;
}

/* The last batch of each producer in segs[0, k) (headers only). */
static samsa_err_t
cleaner_scan_producers(cleaner_pass_t *cp, size_t k)
{
    samsa_batch_hdr_t  hdr;
    uint8_t            h[SAMSA_BATCH_HDR_SIZE], key[8];
    samsa_seg_end_t    end;
    uint32_t           pos;
    size_t             i;
    samsa_err_t        err;

    for (i = 0; i < k; i++) {
        end = samsa_seg_end(cp->plan.segs[i]);
        for (pos = 0; (uint64_t) pos + sizeof(h) <= end.size;
             pos += (uint32_t) samsa_batch_size(&hdr)) {
            err = samsa_seg_read(cp->plan.segs[i], pos, h, sizeof(h));
            if (err != SAMSA_ERR_NONE) {
                return err;
            }
            if (samsa_batch_parse(h, sizeof(h), &hdr) != SAMSA_ERR_NONE) {
                return SAMSA_ERR_KAFKA_STORAGE_ERROR;
            }
            if (hdr.ProducerId < 0) {
                continue;
            }
            samsa_store_be64(key, (uint64_t) hdr.ProducerId);
            if (!samsa_cleaner_map_put(cp->pids, key, sizeof(key),
                                       hdr.BaseOffset)) {
                cp->pids_full = true;   /* then every such batch stays */
            }
        }
    }
    return SAMSA_ERR_NONE;
}

/* Whether the batch must stay (maybe empty) for its producer's state. */
static bool
cleaner_last_of_producer(const cleaner_pass_t *cp,
                         const samsa_batch_hdr_t *hdr)
{
    uint8_t  key[8];

    if (hdr->ProducerId < 0) {
        return false;
    }
    if (cp->pids_full) {
        return true;
    }
    samsa_store_be64(key, (uint64_t) hdr->ProducerId);
    return samsa_cleaner_map_get(cp->pids, key, sizeof(key))
           == hdr->BaseOffset;
}

/* Write cp->out to the cleaned segment. */
static samsa_err_t
cleaner_spill(cleaner_pass_t *cp, samsa_seg_t *cleaned)
{
    samsa_err_t  err = SAMSA_ERR_NONE;

    if (cp->out.len > 0) {
        err = samsa_seg_append(cleaned, cp->out.data, cp->out.len,
                               cp->plan.cfg.index_interval_bytes);
        cleaner_io(cp, cp->out.len);
        cp->out.len = 0;
    }
    return err;
}

/* Filter every batch of segs[a, b) into cleaned; *changed says whether
 * anything differs from the input. */
static samsa_err_t
cleaner_filter_group(cleaner_pass_t *cp, size_t a, size_t b,
                     samsa_seg_t *cleaned, bool *changed, int64_t *removed)
{
    samsa_cleaner_filter_t      f = {
        .map = cp->map, .now_ms = cp->opts->now_ms,
        .delete_retention_ms = cp->plan.cfg.delete_retention_ms,
    };
    samsa_cleaner_filter_res_t  r;
    samsa_batch_hdr_t           hdr;
    samsa_seg_end_t             end;
    samsa_err_t                 err = SAMSA_ERR_NONE;
    uint32_t                    pos;
    size_t                      k;

    for (k = a; k < b && err == SAMSA_ERR_NONE; k++) {
        end = samsa_seg_end(cp->plan.segs[k]);
        for (pos = 0; err == SAMSA_ERR_NONE;
             pos += (uint32_t) samsa_batch_size(&hdr)) {
            err = cleaner_read_batch(cp->plan.segs[k], pos, end.size, &cp->in,
                                     &hdr);
            if (err != SAMSA_ERR_NONE) {
                break;
            }
            cleaner_io(cp, cp->in.len);
            f.retain_empty = (k + 1 == b
                              && pos + cp->in.len == end.size)
                             || cleaner_last_of_producer(cp, &hdr);
            err = samsa_cleaner_filter_batch(cp->in.data, cp->in.len, &f,
                                             &cp->out, &r);
            if (err == SAMSA_ERR__BAD_MSG) {
                samsa_error("log cleaner: cannot decode the batch at offset %"
                            PRId64 " of %s", hdr.BaseOffset,
                            samsa_seg_log_path(cp->plan.segs[k]));
            }
            *changed |= r.changed;
            *removed += r.removed;
            if (r.horizon >= 0 && r.horizon < cp->min_horizon) {
                cp->min_horizon = r.horizon;
            }
            if (err == SAMSA_ERR_NONE && cp->out.len >= CLEANER_WRITE_CHUNK) {
                err = cleaner_spill(cp, cleaned);
            }
        }
        err = err == SAMSA_ERR__NOENT ? SAMSA_ERR_NONE : err;
    }
    return err == SAMSA_ERR_NONE ? cleaner_spill(cp, cleaned) : err;
}

static void
cleaner_unlink_suffixed(const char *dir, int64_t base, const char *suffix)
{
    static const char *const  kinds[] = { ".log", ".index", ".timeindex" };
    char                      path[PATH_MAX];
    size_t                    i;

    for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        snprintf(path, sizeof(path), "%s/%020" PRId64 "%s%s", dir, base,
                 kinds[i], suffix);
        if (unlink(path) != 0 && errno != ENOENT) {
            samsa_warn("log cleaner: cannot delete %s: %s", path,
                       strerror(errno));
        }
    }
}

/* Make the cleaned segment durable and rename it ".swap". */
static samsa_err_t
cleaner_seal_cleaned(samsa_plog_t *plog, samsa_seg_t *cleaned)
{
    samsa_err_t  err;

    err = samsa_seg_seal(cleaned);
    if (err == SAMSA_ERR_NONE) {
        err = samsa_seg_flush(cleaned);
    }
    if (err == SAMSA_ERR_NONE) {
        err = samsa_seg_rename_suffix(cleaned, ".cleaned", ".swap");
    }
    if (err == SAMSA_ERR_NONE) {
        err = samsa_ckpt_fsync_dir(samsa_plog_dir(plog));
    }
    return err;
}

/* Clean segs[a, b) into one segment and swap it in if anything changed. */
static samsa_err_t
cleaner_clean_group(cleaner_pass_t *cp, size_t a, size_t b)
{
    const char   *dir = samsa_plog_dir(cp->plog);
    int64_t       base = samsa_seg_base(cp->plan.segs[a]), removed = 0;
    samsa_seg_t  *cleaned;
    samsa_err_t   err;
    bool          changed = false, swap = false;

    err = samsa_seg_open_suffixed(dir, base, ".cleaned",
                                  SAMSA_SEG_F_CREATE | SAMSA_SEG_F_ACTIVE,
                                  cp->plan.cfg.segment_index_bytes,
                                  cp->opts->now_ms, &cleaned);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    changed = b - a > 1;            /* merging is worth a swap too */
    err = cleaner_filter_group(cp, a, b, cleaned, &changed, &removed);
    if (err == SAMSA_ERR_NONE && changed) {
        err = cleaner_seal_cleaned(cp->plog, cleaned);
        swap = err == SAMSA_ERR_NONE;
    }
    if (swap) {
        err = samsa_plog_clean_swap(cp->plog, &cp->plan.segs[a], b - a,
                                    cleaned,
                                    samsa_seg_base(cp->plan.segs[b]),
                                    cp->opts->now_ms);
        if (err == SAMSA_ERR_NOT_LEADER_OR_FOLLOWER
            || err == SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION) {
            err = SAMSA_ERR__STATE;     /* closed or deleted meanwhile */
        }
        if (err == SAMSA_ERR_NONE) {
            cp->stats->groups_swapped++;
            cp->stats->segments_replaced += (int32_t) (b - a);
            cp->stats->bytes_written += samsa_seg_end(cleaned).size;
            cp->stats->records_removed += removed;
        }
    }
    if (!swap) {
        cleaner_unlink_suffixed(dir, base, ".cleaned");
    } else if (err == SAMSA_ERR__STATE) {
        cleaner_unlink_suffixed(dir, base, ".swap");    /* nothing renamed */
    }
    /* after an I/O error in the swap the files stay: recovery at the next
     * start completes or drops the swap (the log is offline meanwhile) */
    samsa_seg_unref(cleaned);
    return err;
}

/* Kafka's groupSegmentsBySize: from segs[a], consecutive non-empty
 * segments below end whose sizes add up to at most segment.bytes and
 * whose offsets fit one segment.  Returns b (exclusive). */
static size_t
cleaner_group_end(const cleaner_plan_t *p, size_t a, int64_t end)
{
    int64_t          size = 0, base = samsa_seg_base(p->segs[a]);
    samsa_seg_end_t  e;
    size_t           b = a;

    while (b + 1 < p->n && samsa_seg_base(p->segs[b]) < end) {
        e = samsa_seg_end(p->segs[b]);
        if (e.size == 0
            || (b > a && (size + e.size > p->cfg.segment_bytes
                          || samsa_seg_base(p->segs[b + 1]) - 1 - base
                                 > INT32_MAX))) {
            break;
        }
        size += e.size;
        b++;
    }
    return b;
}

/* Clean every sealed segment below cp->end. */
static samsa_err_t
cleaner_clean_segments(cleaner_pass_t *cp)
{
    cleaner_plan_t  *p = &cp->plan;
    samsa_err_t      err = SAMSA_ERR_NONE;
    size_t           a = 0, b, k = 0;

    while (k + 1 < p->n && samsa_seg_base(p->segs[k]) < cp->end) {
        k++;
    }
    err = cleaner_scan_producers(cp, k);
    while (err == SAMSA_ERR_NONE && a < k) {
        b = cleaner_group_end(p, a, cp->end);
        if (b == a) {               /* an empty segment: nothing to do */
            a++;
            continue;
        }
        err = cleaner_clean_group(cp, a, b);
        a = b;
    }
    return err;
}

/* Whether the plan says the log is worth a pass. */
static bool
cleaner_due(const cleaner_plan_t *p, bool force)
{
    if (p->dirty_bytes > 0 && (force || p->lag_due
                               || cleaner_ratio(p)
                                      >= p->cfg.min_cleanable_ratio)) {
        return true;
    }
    return p->horizon_due || (force && p->clean_bytes > 0);
}

samsa_err_t
samsa_cleaner_clean_log(samsa_plog_t *plog, const samsa_cleaner_opts_t *opts,
                        samsa_cleaner_stats_t *stats)
{
    cleaner_pass_t  cp;
    samsa_err_t     err = SAMSA_ERR_NONE;

    memset(stats, 0, sizeof(*stats));
    memset(&cp, 0, sizeof(cp));
    cp.plog = plog;
    cp.opts = opts;
    cp.stats = stats;
    cp.min_horizon = INT64_MAX;
    cleaner_plan_make(plog, opts->now_ms, &cp.plan);
    stats->first_dirty = cp.plan.first_dirty;
    stats->end_offset = cp.plan.first_dirty;
    stats->dirty_ratio = cleaner_ratio(&cp.plan);
    if ((cp.plan.cfg.cleanup_policy & SAMSA_LOG_CLEANUP_COMPACT) == 0
        || !cleaner_due(&cp.plan, opts->force)) {
        cleaner_plan_fini(&cp.plan);
        return SAMSA_ERR_NONE;
    }
    cp.map = samsa_cleaner_map_new(opts->map_bytes);
    cp.pids = samsa_cleaner_map_new(CLEANER_PID_MAP_BYTES);
    err = cleaner_build_map(&cp);
    if (err == SAMSA_ERR_NONE) {
        err = cleaner_clean_segments(&cp);
    }
    stats->cleaned = true;
    if (err == SAMSA_ERR_NONE) {
        stats->end_offset = cp.end;
        samsa_plog_set_clean_offset(plog, cp.end);
        samsa_plog_set_clean_horizon(plog, cp.min_horizon);
    } else if (err == SAMSA_ERR__STATE) {
        err = SAMSA_ERR_NONE;       /* the log changed: next pass */
    }
    samsa_cleaner_map_free(cp.map);
    samsa_cleaner_map_free(cp.pids);
    samsa_buf_fini(&cp.in);
    samsa_buf_fini(&cp.out);
    cleaner_plan_fini(&cp.plan);
    return err;
}

/* ---- threads ------------------------------------------------------------- */

void
samsa_cleaner_config_defaults(samsa_cleaner_config_t *cfg)
{
    cfg->enable = true;
    cfg->threads = 1;
    cfg->backoff_ms = 15000;
    cfg->dedupe_buffer_size = 128LL << 20;
    cfg->io_max_bytes_per_second = DBL_MAX;
}

/*
 * samsa_cleaner_t - the thread pool.  [const] after start; lock guards
 * stop, io_lock the I/O throttle shared by the threads (Kafka's one
 * Throttler per LogCleaner); counters are atomics.
 */
struct samsa_cleaner {
    samsa_cleaner_config_t    cfg;          /* [const] */
    samsa_cleaner_each_fn_t  *each_fn;      /* [const] */
    samsa_cleaner_done_fn_t  *done_fn;      /* [const] */
    void                     *ctx;          /* [const] */
    pthread_t                *tids;         /* [const] */
    int32_t                   nthreads;     /* [const] started */
    pthread_mutex_t           lock;
    pthread_cond_t            cond;
    bool                      stop;         /* [lock] */
    pthread_mutex_t           io_lock;      /* the throttle's; taken
                                               before lock, held while
                                               sleeping as Kafka's */
    int64_t                   io_start_ns;  /* [io_lock] period start */
    double                    io_observed;  /* [io_lock] bytes since */
    _Atomic uint64_t          passes;       /* [atomic] */
    _Atomic uint64_t          groups;       /* [atomic] */
    _Atomic uint64_t          removed;      /* [atomic] */
};

/* Sleep backoff_ms (or until stop); false on stop. */
static bool
cleaner_wait(samsa_cleaner_t *c, int64_t ms)
{
    return samsa_locked_wait_stop(&c->lock, &c->cond, &c->stop,
                                  samsa_now_ms() + ms);
}

/* Kafka's Throttler (checkIntervalMs 300, throttleDown) over the bytes
 * all threads read and write: once a period of 300 ms has passed with
 * bytes seen, a rate above io_max_bytes_per_second sleeps
 * round(bytes / (rate / 1000) - elapsed ms), then a new period starts.
 * A rate of 0 sleeps until the cleaner stops (Kafka's sleeps forever).
 * @thread logcleaner  @locks io_lock taken */
static void
cleaner_throttle(void *ctx, int64_t bytes)
{
    samsa_cleaner_t  *c = ctx;
    double            rate = c->cfg.io_max_bytes_per_second;
    int64_t           now, elapsed_ns;
    double            sleep_ms;

    pthread_mutex_lock(&c->io_lock);
    c->io_observed += (double) bytes;
    now = samsa_now_ns();
    elapsed_ns = now - c->io_start_ns;
    if (elapsed_ns > CLEANER_THROTTLE_CHECK_NS && c->io_observed > 0
        && c->io_observed * 1e9 / (double) elapsed_ns > rate) {
        sleep_ms = rate > 0 ? c->io_observed / (rate / 1000.0)
                                  - (double) (elapsed_ns / 1000000)
                            : (double) INT32_MAX;
        if (sleep_ms >= 0.5) {
            (void) cleaner_wait(c, sleep_ms < (double) INT32_MAX
                                       ? (int64_t) (sleep_ms + 0.5)
                                       : INT32_MAX);
        }
    }
    if (elapsed_ns > CLEANER_THROTTLE_CHECK_NS && c->io_observed > 0) {
        c->io_start_ns = samsa_now_ns();
        c->io_observed = 0;
    }
    pthread_mutex_unlock(&c->io_lock);
}

/* The dirtiest claimable log of one round. */
typedef struct cleaner_pick {
    int64_t        now_ms;
    samsa_plog_t  *best;            /* a reference, claimed */
    double         best_ratio;
    bool           best_must;
} cleaner_pick_t;

static void
cleaner_consider(void *arg, samsa_plog_t *plog)
{
    cleaner_pick_t  *pk = arg;
    double           ratio;
    bool             must;

    if (!samsa_cleaner_log_dirt(plog, pk->now_ms, &ratio, &must)) {
        return;
    }
    if (pk->best != NULL
        && (pk->best_must || (!must && ratio <= pk->best_ratio))) {
        return;
    }
    if (!samsa_plog_clean_claim(plog)) {
        return;                     /* another thread cleans it */
    }
    if (pk->best != NULL) {
        samsa_plog_clean_unclaim(pk->best);
        samsa_plog_unref(pk->best);
    }
    pk->best = samsa_plog_ref(plog);
    pk->best_ratio = ratio;
    pk->best_must = must;
}

/* One round: clean the dirtiest log.  True if a log was cleaned. */
static bool
cleaner_round(samsa_cleaner_t *c)
{
    cleaner_pick_t         pk = { .now_ms = samsa_wall_ms() };
    samsa_cleaner_opts_t   opts;
    samsa_cleaner_stats_t  st;
    samsa_err_t            err;

    c->each_fn(c->ctx, &pk, cleaner_consider);
    if (pk.best == NULL) {
        return false;
    }
    opts = (samsa_cleaner_opts_t) {
        .now_ms = pk.now_ms,
        .map_bytes = (size_t) (c->cfg.dedupe_buffer_size / c->nthreads),
        .io_fn = c->cfg.io_max_bytes_per_second < DBL_MAX ? cleaner_throttle
                                                          : NULL,
        .io_ctx = c,
    };
    err = samsa_cleaner_clean_log(pk.best, &opts, &st);
    if (err != SAMSA_ERR_NONE) {
        samsa_error("log cleaner: cleaning %s failed: %s",
                    samsa_plog_dir(pk.best), samsa_err_name(err));
    } else if (st.cleaned) {
        samsa_info("log cleaner: %s: cleaned offsets %" PRId64 "..%" PRId64
                   " (dirty ratio %.2f): %" PRId32 " segment(s) into %" PRId32
                   ", %" PRId64 " record(s) removed",
                   samsa_plog_dir(pk.best), st.first_dirty, st.end_offset,
                   st.dirty_ratio, st.segments_replaced, st.groups_swapped,
                   st.records_removed);
        atomic_fetch_add(&c->passes, 1);
        atomic_fetch_add(&c->groups, (uint64_t) st.groups_swapped);
        atomic_fetch_add(&c->removed, (uint64_t) st.records_removed);
        if (c->done_fn != NULL) {
            c->done_fn(c->ctx);
        }
    }
    samsa_plog_clean_unclaim(pk.best);
    samsa_plog_unref(pk.best);
    return err == SAMSA_ERR_NONE && st.cleaned;
}

static void *
cleaner_main(void *arg)
{
    samsa_cleaner_t  *c = arg;

    samsa_thread_name_set("logcleaner");
    while (cleaner_wait(c, 0)) {
        if (!cleaner_round(c) && !cleaner_wait(c, c->cfg.backoff_ms)) {
            break;
        }
    }
    return NULL;
}

samsa_cleaner_t *
samsa_cleaner_start(const samsa_cleaner_config_t *cfg,
                    samsa_cleaner_each_fn_t *each_fn,
                    samsa_cleaner_done_fn_t *done_fn, void *ctx)
{
    samsa_cleaner_t     *c = samsa_calloc(1, sizeof(*c));
    pthread_condattr_t   ca;
    int32_t              i, want;

    c->cfg = *cfg;
    c->each_fn = each_fn;
    c->done_fn = done_fn;
    c->ctx = ctx;
    pthread_mutex_init(&c->lock, NULL);
    pthread_mutex_init(&c->io_lock, NULL);
    c->io_start_ns = samsa_now_ns();
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c->cond, &ca);
    pthread_condattr_destroy(&ca);
    want = cfg->enable ? cfg->threads : 0;
    c->tids = samsa_calloc((size_t) want + 1, sizeof(*c->tids));
    c->nthreads = want;             /* the map budget's divisor */
    for (i = 0; i < want; i++) {
        if (pthread_create(&c->tids[i], NULL, cleaner_main, c) != 0) {
            c->nthreads = i;
            samsa_cleaner_stop(c);
            return NULL;
        }
    }
    return c;
}

void
samsa_cleaner_stop(samsa_cleaner_t *c)
{
    int32_t  i;

    if (c == NULL) {
        return;
    }
    pthread_mutex_lock(&c->lock);
    c->stop = true;
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
    for (i = 0; i < c->nthreads; i++) {
        pthread_join(c->tids[i], NULL);
    }
    pthread_mutex_destroy(&c->lock);
    pthread_mutex_destroy(&c->io_lock);
    pthread_cond_destroy(&c->cond);
    samsa_free(c->tids);
    samsa_free(c);
}

void
samsa_cleaner_counters(samsa_cleaner_t *c, samsa_cleaner_counters_t *out)
{
    out->passes = atomic_load(&c->passes);
    out->groups_swapped = atomic_load(&c->groups);
    out->records_removed = atomic_load(&c->removed);
}
