/* Unit tests for log/cleaner.c (and the cleaner's parts of plog_clean.c
 * and recover.c): the offset map, the batch filter (tombstones, delete
 * horizons, empty batches kept for producers), cleaning passes over a
 * real partition log (latest value per key at its original offset,
 * compressed batches recompressed with their codec, tombstones dropped
 * after delete.retention.ms with an injected clock), and recovery from
 * the files a crash leaves in every phase of a swap. */
#include "unit.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdarg.h>

#include "log/cleaner.h"
#include "log/plogtest.h"
#include "proto/compress.h"
#include "proto/recbuild.h"
#include "util/diag.h"

#define CT_T0  1700000000000LL     /* injected "now" */

static samsa_uuid_t
ct_uuid(void)
{
    samsa_uuid_t  u;
    int           i;

    for (i = 0; i < 16; i++) {
        u.b[i] = (uint8_t) (i + 1);
    }
    return u;
}

static samsa_log_config_t
ct_config(void)
{
    samsa_log_config_t  cfg = pt_config();

    cfg.segment_bytes = 2048;
    cfg.cleanup_policy = SAMSA_LOG_CLEANUP_COMPACT;
    cfg.delete_retention_ms = 1000;
    cfg.retention_ms = -1;
    return cfg;
}

/* ---- building batches ---------------------------------------------------- */

typedef struct ct_rec {
    int          key;               /* "k<key>" */
    const char  *value;             /* NULL: tombstone */
} ct_rec_t;

/* One batch of n records with codec into b (BaseOffset 0). */
static void
ct_batch(samsa_buf_t *b, const ct_rec_t *recs, int n, samsa_codec_t codec,
         int64_t pid)
{
    uint8_t           *buf = malloc(1 << 16);
    samsa_recbuild_t   rb;
    samsa_buf_t        scratch = SAMSA_BUF_INIT;
    char               key[16];
    size_t             used;
    int                i;

    samsa_recbuild_init(&rb, buf, 1 << 16, codec, SAMSA_CODEC_LEVEL_DEFAULT);
    for (i = 0; i < n; i++) {
        snprintf(key, sizeof(key), "k%d", recs[i].key);
        assert_true(samsa_recbuild_append(
            &rb, CT_T0 + i, key, strlen(key), recs[i].value,
            recs[i].value != NULL ? strlen(recs[i].value) : 0, NULL, 0,
            &used));
    }
    assert_int_equal(samsa_recbuild_close(&rb, &scratch), SAMSA_ERR_NONE);
    if (pid >= 0) {
        samsa_recbuild_set_producer(&rb, pid, 0, 0, false);
    }
    samsa_buf_append(b, buf, samsa_recbuild_size(&rb));
    samsa_buf_fini(&scratch);
    free(buf);
}

/* Append a batch to plog; returns its base offset. */
static int64_t
ct_append(samsa_plog_t *plog, const ct_rec_t *recs, int n,
          samsa_codec_t codec)
{
    samsa_buf_t                 b = SAMSA_BUF_INIT;
    samsa_plog_append_opts_t    opts = { .from_client = true };
    samsa_plog_append_result_t  res;

    ct_batch(&b, recs, n, codec, -1);
    assert_int_equal(samsa_plog_append(plog, b.data, b.len, &opts, &res),
                     SAMSA_ERR_NONE);
    samsa_buf_fini(&b);
    return res.base_offset;
}

/* "v<i>" padded so that compression pays. */
static const char *
ct_value(char *buf, size_t size, int64_t i)
{
    snprintf(buf, size, "v%" PRId64 "-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
             i);
    return buf;
}

/* ---- reading a log back -------------------------------------------------- */

typedef struct ct_seen {
    int64_t   offset;
    int       key;
    char      value[64];            /* "" for a tombstone */
    bool      tombstone;
    int       codec;
} ct_seen_t;

typedef struct ct_log_view {
    ct_seen_t  *r;
    size_t      n;
    int64_t     batches;
    int64_t     empty_batches;
} ct_log_view_t;

static void
ct_view_batch(ct_log_view_t *v, const uint8_t *p, size_t size)
{
    samsa_batch_hdr_t  hdr;
    samsa_buf_t        plain = SAMSA_BUF_INIT;
    samsa_record_it_t  it;
    samsa_record_t     rec;
    ct_seen_t         *s;

    assert_int_equal(samsa_batch_parse(p, size, &hdr), SAMSA_ERR_NONE);
    assert_true(samsa_batch_crc_ok(p, size));
    v->batches++;
    v->empty_batches += hdr.RecordsCount == 0;
    if (samsa_batch_codec(&hdr) != SAMSA_BATCH_CODEC_NONE) {
        samsa_buf_append(&plain, p, SAMSA_BATCH_HDR_SIZE);
        assert_int_equal(samsa_decompress((samsa_codec_t) samsa_batch_codec(
                                              &hdr),
                                          p + SAMSA_BATCH_HDR_SIZE,
                                          size - SAMSA_BATCH_HDR_SIZE,
                                          1 << 24, &plain),
                         SAMSA_ERR_NONE);
        p = plain.data;
        size = plain.len;
    }
    samsa_record_it_init(&it, p, size);
    while (samsa_record_it_next(&it, &rec)) {
        v->r = realloc(v->r, (v->n + 1) * sizeof(*v->r));
        s = &v->r[v->n++];
        memset(s, 0, sizeof(*s));
        s->offset = hdr.BaseOffset + rec.OffsetDelta;
        s->key = atoi((const char *) rec.Key + 1);
        s->tombstone = rec.Value == NULL;
        if (rec.Value != NULL) {
            snprintf(s->value, sizeof(s->value), "%.*s", (int) rec.ValueLen,
                     (const char *) rec.Value);
        }
        s->codec = samsa_batch_codec(&hdr);
    }
    assert_int_equal(it.err, SAMSA_ERR_NONE);
    samsa_buf_fini(&plain);
}

/* Every record of the log, through Fetch's read path. */
static void
ct_read_all(samsa_plog_t *plog, ct_log_view_t *v)
{
    samsa_plog_region_t  r;
    samsa_batch_hdr_t    hdr;
    uint8_t             *p;
    size_t               off;
    int64_t              at = samsa_plog_log_start_offset(plog);
    int64_t              leo = samsa_plog_log_end_offset(plog);

    memset(v, 0, sizeof(*v));
    while (at < leo) {
        assert_int_equal(samsa_plog_read(plog, at, 1 << 20, true, INT64_MAX,
                                         &r),
                         SAMSA_ERR_NONE);
        assert_true(r.len > 0);
        p = pt_region_bytes(&r);
        for (off = 0; off + SAMSA_BATCH_HDR_SIZE <= r.len;
             off += (size_t) samsa_batch_size(&hdr)) {
            assert_int_equal(samsa_batch_parse(p + off, r.len - off, &hdr),
                             SAMSA_ERR_NONE);
            if (off + (size_t) samsa_batch_size(&hdr) > r.len) {
                break;
            }
            ct_view_batch(v, p + off, (size_t) samsa_batch_size(&hdr));
            at = samsa_batch_last_offset(&hdr) + 1;
        }
        free(p);
        samsa_plog_region_release(&r);
    }
}

/* Offsets strictly increase and each record still holds the value it
 * was written with at that offset ("v<offset>..."): nothing moved. */
static void
ct_check_offsets_kept(const ct_log_view_t *v)
{
    char    want[64];
    size_t  i;

    for (i = 0; i < v->n; i++) {
        if (i > 0) {
            assert_true(v->r[i].offset > v->r[i - 1].offset);
        }
        if (!v->r[i].tombstone) {
            ct_value(want, sizeof(want), v->r[i].offset);
            assert_string_equal(v->r[i].value, want);
        }
    }
}

/* Below `below`, a key appears at most once. */
static void
ct_check_unique_below(const ct_log_view_t *v, int64_t below)
{
    size_t  i, j;

    for (i = 0; i < v->n && v->r[i].offset < below; i++) {
        for (j = i + 1; j < v->n && v->r[j].offset < below; j++) {
            assert_int_not_equal(v->r[i].key, v->r[j].key);
        }
    }
}

static bool
ct_has(const ct_log_view_t *v, int64_t offset)
{
    size_t  i;

    for (i = 0; i < v->n; i++) {
        if (v->r[i].offset == offset) {
            return true;
        }
    }
    return false;
}

static int64_t
ct_active_base(samsa_plog_t *plog)
{
    samsa_seg_t  **segs;
    size_t         n;
    int64_t        base;

    segs = samsa_plog_clean_snapshot(plog, &n);
    base = samsa_seg_base(segs[n - 1]);
    samsa_plog_clean_release(segs, n);
    return base;
}

static samsa_cleaner_opts_t
ct_opts(int64_t now, bool force)
{
    return (samsa_cleaner_opts_t) {
        .now_ms = now, .map_bytes = 1 << 20, .force = force,
    };
}

/* 400 single-record updates of 10 keys. */
static samsa_plog_t *
ct_updates_log(char *dir, samsa_codec_t codec, int per_batch)
{
    samsa_log_config_t  cfg = ct_config();
    samsa_plog_t       *plog;
    ct_rec_t            recs[16];
    char                vals[16][64];
    int64_t             o = 0;
    int                 i, j;

    assert_int_equal(samsa_plog_create(dir, "c", 0, ct_uuid(), &cfg, &plog),
                     SAMSA_ERR_NONE);
    for (i = 0; i < 400 / per_batch; i++) {
        for (j = 0; j < per_batch; j++, o++) {
            recs[j].key = (int) (o % 10);
            recs[j].value = ct_value(vals[j], sizeof(vals[j]), o);
        }
        assert_int_equal(ct_append(plog, recs, per_batch, codec),
                         o - per_batch);
    }
    return plog;
}

/* ---- offset map ---------------------------------------------------------- */

static void
test_cleaner_map_latest_and_budget(void **state)
{
    samsa_cleaner_map_t  *m = samsa_cleaner_map_new(1 << 20);
    char                  key[32];
    int                   i;

    (void) state;
    assert_int_equal(samsa_cleaner_map_get(m, (const uint8_t *) "a", 1), -1);
    assert_true(samsa_cleaner_map_put(m, (const uint8_t *) "a", 1, 5));
    assert_true(samsa_cleaner_map_put(m, (const uint8_t *) "a", 1, 3));
    assert_int_equal(samsa_cleaner_map_get(m, (const uint8_t *) "a", 1), 5);
    assert_true(samsa_cleaner_map_put(m, (const uint8_t *) "", 0, 7));
    assert_int_equal(samsa_cleaner_map_get(m, (const uint8_t *) "", 0), 7);
    for (i = 0; i < 5000; i++) {
        snprintf(key, sizeof(key), "key-%d", i);
        assert_true(samsa_cleaner_map_put(m, (const uint8_t *) key,
                                          strlen(key), i));
    }
    for (i = 0; i < 5000; i++) {
        snprintf(key, sizeof(key), "key-%d", i);
        assert_int_equal(samsa_cleaner_map_get(m, (const uint8_t *) key,
                                               strlen(key)), i);
    }
    assert_int_equal(samsa_cleaner_map_count(m), 5002);
    samsa_cleaner_map_free(m);

    m = samsa_cleaner_map_new(8192);        /* about 300 slots */
    for (i = 0; i < 1000; i++) {
        snprintf(key, sizeof(key), "key-%d", i);
        if (!samsa_cleaner_map_put(m, (const uint8_t *) key, strlen(key), i)) {
            break;
        }
    }
    assert_true(i > 100 && i < 1000);       /* filled up, refused */
    assert_int_equal(samsa_cleaner_map_count(m), (size_t) i);
    samsa_cleaner_map_free(m);
}

/* ---- filter -------------------------------------------------------------- */

static void
test_cleaner_filter_batch(void **state)
{
    samsa_cleaner_map_t         *m = samsa_cleaner_map_new(1 << 20);
    samsa_cleaner_filter_t       f = { .map = m, .now_ms = CT_T0,
                                       .delete_retention_ms = 1000 };
    samsa_cleaner_filter_res_t   res;
    samsa_buf_t                  in = SAMSA_BUF_INIT, out = SAMSA_BUF_INIT;
    samsa_buf_t                  again = SAMSA_BUF_INIT;
    samsa_batch_hdr_t            hdr, oh;
    ct_rec_t                     recs[4] = {
        { 1, "a" }, { 2, "b" }, { 3, NULL }, { 4, "d" },
    };
    ct_log_view_t                v = { 0 };

    (void) state;
    ct_batch(&in, recs, 4, SAMSA_CODEC_NONE, 77);
    samsa_store_be64(in.data, 100);             /* BaseOffset 100 */
    assert_true(samsa_cleaner_map_put(m, (const uint8_t *) "k2", 2, 500));
    assert_true(samsa_cleaner_map_put(m, (const uint8_t *) "k1", 2, 100));

    /* k2 superseded; the tombstone k3 stays and gets a horizon */
    assert_int_equal(samsa_cleaner_filter_batch(in.data, in.len, &f, &out,
                                                &res),
                     SAMSA_ERR_NONE);
    assert_true(res.changed);
    assert_int_equal(res.kept, 3);
    assert_int_equal(res.removed, 1);
    assert_int_equal(res.horizon, CT_T0 + 1000);
    assert_int_equal(samsa_batch_parse(out.data, out.len, &oh),
                     SAMSA_ERR_NONE);
    assert_int_equal(samsa_batch_parse(in.data, in.len, &hdr),
                     SAMSA_ERR_NONE);
    assert_int_equal(oh.BaseOffset, 100);
    assert_int_equal(oh.LastOffsetDelta, hdr.LastOffsetDelta);
    assert_int_equal(oh.ProducerId, 77);
    assert_int_equal(oh.RecordsCount, 3);
    assert_true(samsa_batch_has_delete_horizon(&oh));
    assert_int_equal(oh.BaseTimestamp, CT_T0 + 1000);
    assert_int_equal(oh.MaxTimestamp, CT_T0 + 3);   /* records' own */
    ct_view_batch(&v, out.data, out.len);
    assert_int_equal(v.n, 3);
    assert_int_equal(v.r[0].offset, 100);
    assert_int_equal(v.r[1].offset, 102);
    assert_true(v.r[1].tombstone);
    assert_int_equal(v.r[2].offset, 103);

    /* a second pass before the horizon changes nothing */
    assert_int_equal(samsa_cleaner_filter_batch(out.data, out.len, &f,
                                                &again, &res),
                     SAMSA_ERR_NONE);
    assert_false(res.changed);
    assert_int_equal(again.len, out.len);
    assert_memory_equal(again.data, out.data, out.len);

    /* after it the tombstone goes */
    again.len = 0;
    f.now_ms = CT_T0 + 1001;
    assert_int_equal(samsa_cleaner_filter_batch(out.data, out.len, &f,
                                                &again, &res),
                     SAMSA_ERR_NONE);
    assert_true(res.changed);
    assert_int_equal(res.kept, 2);
    assert_int_equal(res.horizon, -1);

    /* everything superseded: gone, or kept empty for its producer */
    assert_true(samsa_cleaner_map_put(m, (const uint8_t *) "k1", 2, 900));
    assert_true(samsa_cleaner_map_put(m, (const uint8_t *) "k3", 2, 900));
    assert_true(samsa_cleaner_map_put(m, (const uint8_t *) "k4", 2, 900));
    again.len = 0;
    assert_int_equal(samsa_cleaner_filter_batch(in.data, in.len, &f, &again,
                                                &res),
                     SAMSA_ERR_NONE);
    assert_int_equal(again.len, 0);
    f.retain_empty = true;
    assert_int_equal(samsa_cleaner_filter_batch(in.data, in.len, &f, &again,
                                                &res),
                     SAMSA_ERR_NONE);
    assert_int_equal(again.len, SAMSA_BATCH_HDR_SIZE);
    assert_int_equal(samsa_batch_parse(again.data, again.len, &oh),
                     SAMSA_ERR_NONE);
    assert_true(samsa_batch_crc_ok(again.data, again.len));
    assert_int_equal(oh.RecordsCount, 0);
    assert_int_equal(oh.BaseOffset, 100);
    assert_int_equal(oh.LastOffsetDelta, 3);
    assert_int_equal(oh.ProducerId, 77);

    /* a corrupt batch is refused, out untouched */
    in.data[in.len - 1] ^= 1;
    again.len = 0;
    assert_int_equal(samsa_cleaner_filter_batch(in.data, in.len, &f, &again,
                                                &res),
                     SAMSA_ERR__BAD_MSG);
    assert_int_equal(again.len, 0);
    free(v.r);
    samsa_buf_fini(&in);
    samsa_buf_fini(&out);
    samsa_buf_fini(&again);
    samsa_cleaner_map_free(m);
}

/* ---- cleaning a log ------------------------------------------------------ */

static void
test_cleaner_keeps_latest_per_key(void **state)
{
    char                   *dir = bg_tmpdir();
    samsa_plog_t           *plog = ct_updates_log(dir, SAMSA_CODEC_NONE, 1);
    samsa_cleaner_opts_t    o = ct_opts(CT_T0, false);
    samsa_cleaner_stats_t   st;
    ct_log_view_t           v;
    int64_t                 active, before = samsa_plog_size_bytes(plog);
    size_t                  nseg = samsa_plog_segment_count(plog);
    double                  ratio;
    bool                    must;
    int                     k;

    (void) state;
    active = ct_active_base(plog);
    assert_true(nseg > 5);
    assert_true(samsa_cleaner_log_dirt(plog, CT_T0, &ratio, &must));
    assert_true(ratio > 0.99);
    assert_int_equal(samsa_cleaner_clean_log(plog, &o, &st), SAMSA_ERR_NONE);
    assert_true(st.cleaned);
    assert_int_equal(st.first_dirty, 0);
    assert_int_equal(st.end_offset, active);
    assert_int_equal(samsa_plog_clean_offset(plog), active);
    assert_true(st.records_removed >= active - 10);
    assert_true(samsa_plog_size_bytes(plog) < before / 3);
    assert_int_equal(samsa_plog_segment_count(plog), nseg); /* 1 to 1 */
    assert_int_equal(samsa_plog_log_end_offset(plog), 400);

    ct_read_all(plog, &v);
    ct_check_offsets_kept(&v);
    ct_check_unique_below(&v, active);
    for (k = 0; k < 10; k++) {                  /* the latest of each key */
        assert_true(ct_has(&v, 390 + k));
    }
    assert_int_equal(v.n, (size_t) (400 - active) + 10);
    free(v.r);

    /* nothing dirty left: not due; a forced pass merges the small
     * cleaned segments (Kafka's grouping by size), then has nothing left
     * to do */
    assert_false(samsa_cleaner_log_dirt(plog, CT_T0, &ratio, &must));
    o.force = true;
    assert_int_equal(samsa_cleaner_clean_log(plog, &o, &st), SAMSA_ERR_NONE);
    assert_true(st.groups_swapped >= 1);
    assert_true(samsa_plog_segment_count(plog) < nseg / 2);
    for (k = 0; k < 5 && st.groups_swapped > 0; k++) {
        assert_int_equal(samsa_cleaner_clean_log(plog, &o, &st),
                         SAMSA_ERR_NONE);
    }
    assert_int_equal(st.groups_swapped, 0);
    assert_true(samsa_plog_segment_count(plog) <= 3);
    assert_true(samsa_plog_size_bytes(plog)
                < (int64_t) ct_config().segment_bytes * 2);
    ct_read_all(plog, &v);
    ct_check_offsets_kept(&v);
    ct_check_unique_below(&v, active);
    assert_int_equal(v.n, (size_t) (400 - active) + 10);
    free(v.r);

    /* the cleaned log survives a restart (crash: no close) */
    samsa_plog_unref(plog);
    {
        samsa_log_config_t  cfg = ct_config();
        samsa_plog_load_t   load = { .recovery_point = -1,
                                     .log_start_offset = -1,
                                     .now_ms = CT_T0 };

        assert_int_equal(samsa_plog_open(dir, "c", 0, &cfg, &load, &plog),
                         SAMSA_ERR_NONE);
    }
    ct_read_all(plog, &v);
    ct_check_offsets_kept(&v);
    ct_check_unique_below(&v, active);
    assert_int_equal(samsa_plog_log_end_offset(plog), 400);
    free(v.r);
    assert_int_equal(samsa_plog_close(plog), SAMSA_ERR_NONE);
    bg_rmrf(dir);
}

static void
test_cleaner_compressed_batches(void **state)
{
    static const samsa_codec_t  codecs[] = {
        SAMSA_CODEC_GZIP, SAMSA_CODEC_SNAPPY, SAMSA_CODEC_LZ4, SAMSA_CODEC_ZSTD,
    };
    samsa_cleaner_opts_t        o = ct_opts(CT_T0, true);
    samsa_cleaner_stats_t       st;
    ct_log_view_t               v;
    samsa_plog_t               *plog;
    char                       *dir;
    int64_t                     active;
    size_t                      c, i;

    (void) state;
    for (c = 0; c < sizeof(codecs) / sizeof(codecs[0]); c++) {
        dir = bg_tmpdir();
        plog = ct_updates_log(dir, codecs[c], 8);
        active = ct_active_base(plog);
        assert_int_equal(samsa_cleaner_clean_log(plog, &o, &st),
                         SAMSA_ERR_NONE);
        assert_true(st.groups_swapped > 0);
        ct_read_all(plog, &v);
        ct_check_offsets_kept(&v);
        ct_check_unique_below(&v, active);
        for (i = 0; i < v.n; i++) {
            assert_int_equal(v.r[i].codec, (int) codecs[c]);
        }
        for (i = 0; i < 10; i++) {
            assert_true(ct_has(&v, 390 + (int64_t) i));
        }
        free(v.r);
        assert_int_equal(samsa_plog_close(plog), SAMSA_ERR_NONE);
        bg_rmrf(dir);
    }
}

static void
test_cleaner_tombstones_after_delete_retention(void **state)
{
    char                   *dir = bg_tmpdir();
    samsa_log_config_t      cfg = ct_config();
    samsa_cleaner_opts_t    o = ct_opts(CT_T0, false);
    samsa_cleaner_stats_t   st;
    samsa_plog_t           *plog;
    ct_log_view_t           v;
    ct_rec_t                r;
    char                    val[64];
    int64_t                 i, tomb0, tomb1;
    double                  ratio;
    bool                    must;

    (void) state;
    assert_int_equal(samsa_plog_create(dir, "c", 0, ct_uuid(), &cfg, &plog),
                     SAMSA_ERR_NONE);
    for (i = 0; i < 20; i++) {
        r = (ct_rec_t) { (int) (i % 5), ct_value(val, sizeof(val), i) };
        ct_append(plog, &r, 1, SAMSA_CODEC_NONE);
    }
    r = (ct_rec_t) { 0, NULL };
    tomb0 = ct_append(plog, &r, 1, SAMSA_CODEC_NONE);
    r = (ct_rec_t) { 1, NULL };
    tomb1 = ct_append(plog, &r, 1, SAMSA_CODEC_NONE);
    for (i = 22; i < 200; i++) {                /* other keys, rolls */
        r = (ct_rec_t) { (int) (100 + i % 7), ct_value(val, sizeof(val), i) };
        ct_append(plog, &r, 1, SAMSA_CODEC_NONE);
    }
    assert_true(ct_active_base(plog) > tomb1);

    /* first pass: the tombstones stay, with a horizon */
    assert_int_equal(samsa_cleaner_clean_log(plog, &o, &st), SAMSA_ERR_NONE);
    assert_true(st.cleaned);
    assert_int_equal(samsa_plog_clean_horizon(plog), CT_T0 + 1000);
    ct_read_all(plog, &v);
    ct_check_offsets_kept(&v);
    assert_true(ct_has(&v, tomb0));
    assert_true(ct_has(&v, tomb1));
    for (i = 0; i < (int64_t) v.n; i++) {       /* k0, k1 values gone */
        assert_false(v.r[i].offset < tomb1 && !v.r[i].tombstone
                     && (v.r[i].key == 0 || v.r[i].key == 1));
    }
    free(v.r);

    /* before the horizon: nothing to do */
    assert_false(samsa_cleaner_log_dirt(plog, CT_T0 + 999, &ratio, &must));
    o.now_ms = CT_T0 + 999;
    assert_int_equal(samsa_cleaner_clean_log(plog, &o, &st), SAMSA_ERR_NONE);
    assert_false(st.cleaned);

    /* after it: due by itself, and the tombstones go */
    assert_true(samsa_cleaner_log_dirt(plog, CT_T0 + 1001, &ratio, &must));
    assert_true(must);
    o.now_ms = CT_T0 + 1001;
    assert_int_equal(samsa_cleaner_clean_log(plog, &o, &st), SAMSA_ERR_NONE);
    assert_true(st.cleaned);
    assert_int_equal(samsa_plog_clean_horizon(plog), INT64_MAX);
    ct_read_all(plog, &v);
    ct_check_offsets_kept(&v);
    assert_false(ct_has(&v, tomb0));
    assert_false(ct_has(&v, tomb1));
    for (i = 0; i < (int64_t) v.n; i++) {
        assert_false(v.r[i].tombstone);
    }
    free(v.r);
    assert_int_equal(samsa_plog_close(plog), SAMSA_ERR_NONE);
    bg_rmrf(dir);
}

static void
test_cleaner_min_compaction_lag(void **state)
{
    char                   *dir = bg_tmpdir();
    samsa_plog_t           *plog = ct_updates_log(dir, SAMSA_CODEC_NONE, 1);
    samsa_log_config_t      cfg;
    samsa_cleaner_opts_t    o = ct_opts(CT_T0 + 100, true);
    samsa_cleaner_stats_t   st;

    (void) state;
    samsa_plog_config_get(plog, &cfg);
    cfg.min_compaction_lag_ms = 60000;  /* every record is younger */
    samsa_plog_config_set(plog, &cfg);
    assert_int_equal(samsa_cleaner_clean_log(plog, &o, &st), SAMSA_ERR_NONE);
    assert_int_equal(st.groups_swapped, 0);
    assert_int_equal(samsa_plog_size_bytes(plog) > 0, true);
    o.now_ms = CT_T0 + 120000;          /* now they are old enough */
    assert_int_equal(samsa_cleaner_clean_log(plog, &o, &st), SAMSA_ERR_NONE);
    assert_true(st.groups_swapped > 0);
    assert_int_equal(samsa_plog_close(plog), SAMSA_ERR_NONE);
    bg_rmrf(dir);
}

static void
test_cleaner_max_compaction_lag(void **state)
{
    char                   *dir = bg_tmpdir();
    samsa_plog_t           *plog = ct_updates_log(dir, SAMSA_CODEC_NONE, 1);
    samsa_log_config_t      cfg;
    samsa_cleaner_opts_t    o = ct_opts(CT_T0, false);
    samsa_cleaner_stats_t   st;
    ct_rec_t                r;
    char                    val[64];
    double                  ratio;
    bool                    must;
    int64_t                 i;

    (void) state;
    assert_int_equal(samsa_cleaner_clean_log(plog, &o, &st), SAMSA_ERR_NONE);
    assert_true(st.cleaned);
    for (i = 400; samsa_plog_segment_count(plog) < 4 || i < 460; i++) {
        r = (ct_rec_t) { (int) (i % 10), ct_value(val, sizeof(val), i) };
        ct_append(plog, &r, 1, SAMSA_CODEC_NONE);
    }
    samsa_plog_config_get(plog, &cfg);
    cfg.min_cleanable_ratio = 1.0;      /* never by ratio */
    cfg.max_compaction_lag_ms = 1000;
    samsa_plog_config_set(plog, &cfg);
    assert_false(samsa_cleaner_log_dirt(plog, CT_T0 + 500, &ratio, &must));
    assert_true(samsa_cleaner_log_dirt(plog, CT_T0 + 5000, &ratio, &must));
    assert_true(must);
    o.now_ms = CT_T0 + 500;
    assert_int_equal(samsa_cleaner_clean_log(plog, &o, &st), SAMSA_ERR_NONE);
    assert_false(st.cleaned);
    o.now_ms = CT_T0 + 5000;
    assert_int_equal(samsa_cleaner_clean_log(plog, &o, &st), SAMSA_ERR_NONE);
    assert_true(st.cleaned && st.groups_swapped > 0);
    assert_int_equal(samsa_plog_close(plog), SAMSA_ERR_NONE);
    bg_rmrf(dir);
}

/* ---- crash recovery ------------------------------------------------------ */

static void ct_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
ct_sh(const char *fmt, ...)
{
    char     cmd[2048];
    va_list  ap;

    va_start(ap, fmt);
    vsnprintf(cmd, sizeof(cmd), fmt, ap);
    va_end(ap);
    assert_int_equal(system(cmd), 0);
}

/* Records of a log as one comparable string. */
static char *
ct_fingerprint(samsa_plog_t *plog)
{
    ct_log_view_t  v;
    samsa_buf_t    b = SAMSA_BUF_INIT;
    char           line[128];
    size_t         i;

    ct_read_all(plog, &v);
    for (i = 0; i < v.n; i++) {
        snprintf(line, sizeof(line), "%" PRId64 ":k%d=%s;", v.r[i].offset,
                 v.r[i].key, v.r[i].tombstone ? "<null>" : v.r[i].value);
        samsa_buf_append(&b, line, strlen(line));
    }
    samsa_buf_append(&b, "", 1);
    free(v.r);
    return (char *) samsa_buf_take(&b, &i);
}

static samsa_plog_t *
ct_reopen(const char *dir)
{
    samsa_log_config_t  cfg = ct_config();
    samsa_plog_load_t   load = { .recovery_point = -1, .log_start_offset = -1,
                                 .now_ms = CT_T0 };
    samsa_plog_t       *plog;

    assert_int_equal(samsa_plog_open(dir, "c", 0, &cfg, &load, &plog),
                     SAMSA_ERR_NONE);
    return plog;
}

static bool
ct_dir_has_suffix(const char *dir, const char *suffix)
{
    DIR            *d = opendir(dir);
    struct dirent  *de;
    bool            found = false;
    size_t          n = strlen(suffix), m;

    assert_non_null(d);
    while ((de = readdir(d)) != NULL) {
        m = strlen(de->d_name);
        found |= m >= n && strcmp(de->d_name + m - n, suffix) == 0;
    }
    closedir(d);
    return found;
}

/* A log whose first segment holds updates of three keys and whose
 * second holds unique keys: one group (the first segment) gets cleaned. */
static samsa_plog_t *
ct_one_group_log(char *dir)
{
    samsa_log_config_t  cfg = ct_config();
    samsa_plog_t       *plog;
    ct_rec_t            r;
    char                val[64];
    int64_t             i;

    assert_int_equal(samsa_plog_create(dir, "c", 0, ct_uuid(), &cfg, &plog),
                     SAMSA_ERR_NONE);
    for (i = 0; samsa_plog_segment_count(plog) < 2; i++) {
        r = (ct_rec_t) { (int) (i % 3), ct_value(val, sizeof(val), i) };
        ct_append(plog, &r, 1, SAMSA_CODEC_NONE);
    }
    for (; samsa_plog_segment_count(plog) < 3; i++) {
        r = (ct_rec_t) { (int) (1000 + i), ct_value(val, sizeof(val), i) };
        ct_append(plog, &r, 1, SAMSA_CODEC_NONE);
    }
    return plog;
}

/* phase: what a crash left of the swap of segment 0.
 * 0: the cleaned files still ".cleaned", the old segment in place;
 * 1: ".swap" files and the old segment in place;
 * 2: ".swap" files, the old segment already renamed to .deleted;
 * 3: the indexes renamed to their final names, the .log still ".swap".
 * Phase 0 must come back as before the cleaning, the others as after. */
static void
ct_crash_case(int phase)
{
    char                   *dir = bg_tmpdir(), *save = bg_tmpdir();
    char                    pdir[600], *before, *after, *got;
    samsa_plog_t           *plog = ct_one_group_log(dir);
    samsa_cleaner_opts_t    o = ct_opts(CT_T0, true);
    samsa_cleaner_stats_t   st;
    static const char      *sfx[] = { ".cleaned", ".swap", ".swap", ".swap" };

    snprintf(pdir, sizeof(pdir), "%s/c-0", dir);
    before = ct_fingerprint(plog);
    ct_sh("cp -a '%s/.' '%s/'", pdir, save);
    assert_int_equal(samsa_cleaner_clean_log(plog, &o, &st), SAMSA_ERR_NONE);
    assert_int_equal(st.groups_swapped, 1);
    after = ct_fingerprint(plog);
    assert_string_not_equal(before, after);
    samsa_plog_unref(plog);                     /* crash: no close */

    ct_sh("cd '%s' && mv 00000000000000000000.log "
          "00000000000000000000.log%s", pdir, sfx[phase]);
    if (phase < 3) {
        ct_sh("cd '%s' && for f in index timeindex; do "
              "mv 00000000000000000000.$f 00000000000000000000.$f%s; done",
              pdir, sfx[phase]);
    }
    if (phase < 2) {                            /* the old one still there */
        ct_sh("cd '%s' && rm -f *.deleted && cp '%s'/00000000000000000000.* .",
              pdir, save);
    }
    plog = ct_reopen(dir);
    got = ct_fingerprint(plog);
    assert_string_equal(got, phase == 0 ? before : after);
    assert_false(ct_dir_has_suffix(pdir, ".cleaned"));
    assert_false(ct_dir_has_suffix(pdir, ".swap"));
    assert_false(ct_dir_has_suffix(pdir, ".deleted"));
    assert_int_equal(samsa_plog_close(plog), SAMSA_ERR_NONE);

    /* and it comes back the same once more (nothing left to finish) */
    plog = ct_reopen(dir);
    free(got);
    got = ct_fingerprint(plog);
    assert_string_equal(got, phase == 0 ? before : after);
    assert_int_equal(samsa_plog_close(plog), SAMSA_ERR_NONE);
    free(got);
    free(before);
    free(after);
    bg_rmrf(dir);
    bg_rmrf(save);
}

static void
test_cleaner_recovers_leftovers(void **state)
{
    int  phase;

    (void) state;
    for (phase = 0; phase < 4; phase++) {
        ct_crash_case(phase);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cleaner_map_latest_and_budget),
        cmocka_unit_test(test_cleaner_filter_batch),
        cmocka_unit_test(test_cleaner_keeps_latest_per_key),
        cmocka_unit_test(test_cleaner_compressed_batches),
        cmocka_unit_test(test_cleaner_tombstones_after_delete_retention),
        cmocka_unit_test(test_cleaner_min_compaction_lag),
        cmocka_unit_test(test_cleaner_max_compaction_lag),
        cmocka_unit_test(test_cleaner_recovers_leftovers),
    };

    samsa_diag_set_level(SAMSA_DIAG_ERROR);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
