/*
 * client/consumer/crecs.c - record batches of a Fetch response into consumer
 * records (see crecs.h).  Two passes: the first walks the batches and
 * decides which to keep: an uncompressed one stays where it is when the
 * response is handed over as a source (else it is copied), a compressed
 * one is decompressed behind a copy of its 61-byte header into the
 * chunk's buffer; the second walks the kept batches' records and points
 * the records at them, once that buffer no longer moves.  The record
 * array is sized once from the kept batches' record counts.
 * Threads: pure over the caller's bytes.
 */
#include "client/consumer/crecs.h"

#include <stdlib.h>
#include <string.h>

#include "proto/batch.h"
#include "proto/compress.h"
#include "proto/rd.h"
#include "util/alloc.h"
#include "util/buf.h"

#define CRECS_CONTROL_ABORT 0

typedef struct crecs_span {
    const uint8_t  *at;     /* in the source, or NULL: at off in data */
    size_t          off;    /* in data */
    size_t          size;   /* header + records */
} crecs_span_t;

typedef struct crecs_pids {
    int64_t  *v;
    size_t    n;
    size_t    cap;
} crecs_pids_t;

typedef struct crecs_state {
    const samsa_crecs_opts_t  *o;
    samsa_buf_t                data;
    crecs_span_t              *spans;
    size_t                     nspans;
    size_t                     cap_spans;
    crecs_pids_t               aborted_pids;    /* open aborted txns */
    samsa_crecs_aborted_t     *aborted;         /* sorted copy */
    size_t                     naborted;
    size_t                     next_aborted;
    size_t                     nhdrs;           /* headers so far */
    size_t                     nrecs_max;       /* kept batches' counts */
    bool                       in_place;        /* a kept batch is in src */
    int64_t                    last_off;        /* last record kept */
    samsa_crecs_chunk_t       *chunk;
} crecs_state_t;

static bool
crecs_pid_has(const crecs_pids_t *s, int64_t pid)
{
    size_t  i;

    for (i = 0; i < s->n; i++) {
        if (s->v[i] == pid) {
            return true;
        }
    }
    return false;
}

static void
crecs_pid_add(crecs_pids_t *s, int64_t pid)
{
    if (crecs_pid_has(s, pid)) {
        return;
    }
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 8;
        s->v = samsa_realloc(s->v, s->cap * sizeof(*s->v));
    }
    s->v[s->n++] = pid;
}

static void
crecs_pid_del(crecs_pids_t *s, int64_t pid)
{
    size_t  i;

    for (i = 0; i < s->n; i++) {
        if (s->v[i] == pid) {
            s->v[i] = s->v[--s->n];
            return;
        }
    }
}

static int
crecs_aborted_cmp(const void *a, const void *b)
{
    int64_t  x = ((const samsa_crecs_aborted_t *) a)->first_offset;
    int64_t  y = ((const samsa_crecs_aborted_t *) b)->first_offset;

    return (x > y) - (x < y);
}

/* Open every aborted transaction that starts at or before last_offset
 * (Java: abortedTransactions.peek().firstOffset <= batch.lastOffset()). */
static void
crecs_open_aborted(crecs_state_t *st, int64_t last_offset)
{
    while (st->next_aborted < st->naborted
           && st->aborted[st->next_aborted].first_offset <= last_offset) {
        crecs_pid_add(&st->aborted_pids,
                      st->aborted[st->next_aborted].producer_id);
        st->next_aborted++;
    }
}

/* Is this (uncompressed-form) control batch an abort marker?  The key of
 * its one record: version i16, type i16 (0 abort, 1 commit). */
static bool
crecs_is_abort_marker(const uint8_t *batch, size_t size)
{
    samsa_record_it_t  it;
    samsa_record_t     rec;
    samsa_rd_t         rd;
    int16_t            type;

    samsa_record_it_init(&it, batch, size);
    if (!samsa_record_it_next(&it, &rec) || rec.KeyLen < 4) {
        return false;
    }
    samsa_rd_init(&rd, rec.Key, (size_t) rec.KeyLen);
    (void) samsa_rd_i16(&rd);
    type = samsa_rd_i16(&rd);
    return rd.err == SAMSA_ERR_NONE && type == CRECS_CONTROL_ABORT;
}

static void
crecs_fail(crecs_state_t *st, samsa_err_t err, int64_t offset)
{
    st->chunk->err = err;
    st->chunk->err_offset = offset;
}

/* Copy one batch (decompressed) into data; returns the span, or false
 * with the chunk's err set. */
static bool
crecs_take_batch(crecs_state_t *st, const uint8_t *p, size_t size,
                 const samsa_batch_hdr_t *hdr, crecs_span_t *span)
{
    samsa_err_t  err;
    size_t       before = st->data.len;

    span->at = NULL;
    span->off = before;
    if (samsa_batch_codec(hdr) == SAMSA_BATCH_CODEC_NONE
        && st->o->src != NULL) {
        span->at = p;                   /* parsed in place */
        span->size = size;
        return true;
    }
    if (samsa_batch_codec(hdr) == SAMSA_BATCH_CODEC_NONE) {
        samsa_buf_append(&st->data, p, size);
        span->size = size;
        return true;
    }
    samsa_buf_append(&st->data, p, SAMSA_BATCH_HDR_SIZE);
    err = samsa_decompress((samsa_codec_t) samsa_batch_codec(hdr),
                           p + SAMSA_BATCH_HDR_SIZE,
                           size - SAMSA_BATCH_HDR_SIZE,
                           st->o->max_batch_bytes, &st->data);
    if (err != SAMSA_ERR_NONE) {
        st->data.len = before;
        crecs_fail(st, err == SAMSA_ERR__OVERFLOW
                           ? SAMSA_ERR_MESSAGE_TOO_LARGE
                           : SAMSA_ERR_CORRUPT_MESSAGE, hdr->BaseOffset);
        return false;
    }
    span->size = st->data.len - before;
    return true;
}

static void
crecs_span_add(crecs_state_t *st, crecs_span_t span)
{
    if (st->nspans == st->cap_spans) {
        st->cap_spans = st->cap_spans ? st->cap_spans * 2 : 16;
        st->spans = samsa_realloc(st->spans,
                                  st->cap_spans * sizeof(*st->spans));
    }
    st->spans[st->nspans++] = span;
}

/* One complete batch of size bytes at p.  Returns false to stop. */
static bool
crecs_batch(crecs_state_t *st, const uint8_t *p, size_t size,
            const samsa_batch_hdr_t *hdr)
{
    const samsa_crecs_opts_t  *o = st->o;
    crecs_span_t               span;
    int64_t                    last;

    if (o->check_crcs && !samsa_batch_crc_ok(p, size)) {
        crecs_fail(st, SAMSA_ERR_CORRUPT_MESSAGE, hdr->BaseOffset);
        return false;
    }
    if (hdr->BaseOffset < 0 || hdr->LastOffsetDelta < 0
        || __builtin_add_overflow(hdr->BaseOffset,
                                  (int64_t) hdr->LastOffsetDelta, &last)
        || last == INT64_MAX) {
        crecs_fail(st, SAMSA_ERR_CORRUPT_MESSAGE, hdr->BaseOffset);
        return false;
    }
    if (o->read_committed) {
        crecs_open_aborted(st, last);
    }
    if (last < o->fetch_offset) {
        return true;                    /* wholly before the position */
    }
    if (samsa_batch_is_control(hdr)) {
        if (o->read_committed && st->aborted_pids.n > 0) {
            if (!crecs_take_batch(st, p, size, hdr, &span)) {
                return false;
            }
            if (crecs_is_abort_marker(span.at != NULL
                                          ? span.at
                                          : st->data.data + span.off,
                                      span.size)) {
                crecs_pid_del(&st->aborted_pids, hdr->ProducerId);
            }
            st->data.len = span.off;    /* never handed out */
        }
        st->chunk->next_offset = last + 1;
        return true;
    }
    if (o->read_committed && samsa_batch_is_transactional(hdr)
        && crecs_pid_has(&st->aborted_pids, hdr->ProducerId)) {
        st->chunk->next_offset = last + 1;
        return true;
    }
    if (!crecs_take_batch(st, p, size, hdr, &span)) {
        return false;
    }
    crecs_span_add(st, span);
    st->in_place = st->in_place || span.at != NULL;
    if (hdr->RecordsCount > 0) {
        st->nrecs_max += (size_t) hdr->RecordsCount;
    }
    st->chunk->next_offset = last + 1;
    return true;
}

/* Pass 1. */
static void
crecs_walk(crecs_state_t *st, const uint8_t *p, size_t len)
{
    samsa_batch_hdr_t  hdr;
    samsa_err_t        err;
    size_t             size;
    bool               any = false;

    while (len >= SAMSA_BATCH_LOG_OVERHEAD + 5) {
        err = samsa_batch_parse(p, len, &hdr);
        if (err == SAMSA_ERR__UNDERFLOW) {
            break;                      /* partial header at the end */
        }
        if (err != SAMSA_ERR_NONE) {
            crecs_fail(st, err, hdr.BaseOffset);
            return;
        }
        size = (size_t) samsa_batch_size(&hdr);
        if (size > len) {
            break;                      /* partial batch at the end */
        }
        any = true;
        if (!crecs_batch(st, p, size, &hdr)) {
            return;
        }
        p += size;
        len -= size;
    }
    if (!any && len > 0) {
        crecs_fail(st, SAMSA_ERR_MESSAGE_TOO_LARGE, st->o->fetch_offset);
    }
}

/* Headers of one record into hdrs (growing). */
static bool
crecs_headers(const samsa_record_t *rec, samsa_consumer_header_t **hdrs,
              size_t *nhdrs, size_t *cap)
{
    samsa_rd_t  rd;
    int32_t     i, klen, vlen;

    samsa_rd_init(&rd, rec->Headers, rec->HeadersLen);
    for (i = 0; i < rec->HeadersCount; i++) {
        if (*nhdrs == *cap) {
            *cap = *cap ? *cap * 2 : 16;
            *hdrs = samsa_realloc(*hdrs, *cap * sizeof(**hdrs));
        }
        klen = samsa_rd_varint(&rd);
        if (rd.err != SAMSA_ERR_NONE || klen < 0
            || (size_t) klen > samsa_rd_remain(&rd)) {
            return false;
        }
        (*hdrs)[*nhdrs].key = (const char *) rd.p;
        (*hdrs)[*nhdrs].key_len = (size_t) klen;
        samsa_rd_skip(&rd, (size_t) klen);
        vlen = samsa_rd_varint(&rd);
        if (rd.err != SAMSA_ERR_NONE || vlen < -1
            || (vlen > 0 && (size_t) vlen > samsa_rd_remain(&rd))) {
            return false;
        }
        (*hdrs)[*nhdrs].value = vlen < 0 ? NULL : rd.p;
        (*hdrs)[*nhdrs].value_len = vlen < 0 ? 0 : (size_t) vlen;
        if (vlen > 0) {
            samsa_rd_skip(&rd, (size_t) vlen);
        }
        (*nhdrs)++;
    }
    return rd.err == SAMSA_ERR_NONE;
}

/* Pass 2 over one kept batch. */
static bool
crecs_fill(crecs_state_t *st, const crecs_span_t *span, size_t *cap_recs,
           size_t **hdr_start, size_t *cap_hdrs)
{
    samsa_crecs_chunk_t      *c = st->chunk;
    const uint8_t            *b = span->at != NULL ? span->at
                                                   : c->data + span->off;
    samsa_batch_hdr_t         hdr;
    samsa_record_it_t         it;
    samsa_record_t            rec;
    samsa_consumer_record_t  *r;
    size_t                    nh;

    if (samsa_batch_parse(b, span->size, &hdr) != SAMSA_ERR_NONE) {
        return false;
    }
    samsa_record_it_init(&it, b, span->size);
    while (samsa_record_it_next(&it, &rec)) {
        int64_t  off, ts;

        if (rec.OffsetDelta < 0 || rec.OffsetDelta > hdr.LastOffsetDelta) {
            return false;               /* outside its batch */
        }
        off = hdr.BaseOffset + rec.OffsetDelta;
        if (off < st->o->fetch_offset || off <= st->last_off) {
            continue;                   /* before the position, or out of
                                           order (overlapping batches) */
        }
        st->last_off = off;
        if (c->n == *cap_recs) {
            *cap_recs = *cap_recs ? *cap_recs * 2 : 64;
            c->recs = samsa_realloc(c->recs, *cap_recs * sizeof(*c->recs));
            *hdr_start = samsa_realloc(*hdr_start,
                                       *cap_recs * sizeof(**hdr_start));
        }
        r = &c->recs[c->n];
        memset(r, 0, sizeof(*r));
        r->topic = c->topic;
        r->partition = c->partition;
        r->offset = off;
        r->leader_epoch = hdr.PartitionLeaderEpoch;
        if (samsa_batch_is_log_append_time(&hdr)) {
            r->timestamp = hdr.MaxTimestamp;
            r->timestamp_type = SAMSA_TIMESTAMP_LOG_APPEND_TIME;
        } else {
            if (__builtin_add_overflow(hdr.BaseTimestamp,
                                       rec.TimestampDelta, &ts)) {
                ts = -1;                /* nonsense: no timestamp */
            }
            r->timestamp = ts;
            r->timestamp_type = SAMSA_TIMESTAMP_CREATE_TIME;
        }
        r->key = rec.KeyLen < 0 ? NULL : rec.Key;
        r->key_len = rec.KeyLen < 0 ? 0 : (size_t) rec.KeyLen;
        r->value = rec.ValueLen < 0 ? NULL : rec.Value;
        r->value_len = rec.ValueLen < 0 ? 0 : (size_t) rec.ValueLen;
        (*hdr_start)[c->n] = st->nhdrs;
        nh = st->nhdrs;
        if (!crecs_headers(&rec, &c->hdrs, &nh, cap_hdrs)) {
            return false;
        }
        st->nhdrs = nh;
        r->nheaders = nh - (*hdr_start)[c->n];
        c->n++;
    }
    return it.err == SAMSA_ERR_NONE;
}

/* Room for the records of the kept batches: their RecordsCount fields,
 * bounded by the bytes (a record takes at least 7), so a lying header
 * cannot ask for much; crecs_fill() still grows the arrays if needed. */
static void
crecs_presize(crecs_state_t *st, size_t *cap_recs, size_t **hdr_start)
{
    samsa_crecs_chunk_t  *c = st->chunk;
    size_t                bytes = 0, n, i;

    for (i = 0; i < st->nspans; i++) {
        bytes += st->spans[i].size;
    }
    n = st->nrecs_max < bytes / 7 + 1 ? st->nrecs_max : bytes / 7 + 1;
    if (n == 0) {
        return;
    }
    c->recs = samsa_realloc(c->recs, n * sizeof(*c->recs));
    *hdr_start = samsa_realloc(*hdr_start, n * sizeof(**hdr_start));
    *cap_recs = n;
}

/* Pass 2 over every kept batch; a bad one ends the chunk with the
 * records before it and CORRUPT_MESSAGE at its base offset. */
static void
crecs_fill_all(crecs_state_t *st)
{
    samsa_crecs_chunk_t  *c = st->chunk;
    int64_t               fetch_offset = st->o->fetch_offset;
    size_t                i, cap_recs = 0, cap_hdrs = 0;
    size_t               *hdr_start = NULL;

    crecs_presize(st, &cap_recs, &hdr_start);
    for (i = 0; i < st->nspans; i++) {
        const crecs_span_t  *sp = &st->spans[i];
        size_t               n_before = c->n, h_before = st->nhdrs;
        samsa_batch_hdr_t    hdr;

        if (crecs_fill(st, sp, &cap_recs, &hdr_start, &cap_hdrs)) {
            continue;
        }
        /* keep the batches before the bad one; stop at it */
        c->n = n_before;
        st->nhdrs = h_before;
        if (samsa_batch_parse(sp->at != NULL ? sp->at : c->data + sp->off,
                              sp->size, &hdr) != SAMSA_ERR_NONE) {
            hdr.BaseOffset = fetch_offset;
        }
        crecs_fail(st, SAMSA_ERR_CORRUPT_MESSAGE, hdr.BaseOffset);
        if (c->next_offset > hdr.BaseOffset) {
            c->next_offset = hdr.BaseOffset > fetch_offset ? hdr.BaseOffset
                                                           : fetch_offset;
        }
        break;
    }
    for (i = 0; i < c->n; i++) {
        c->recs[i].headers = c->recs[i].nheaders > 0
                                 ? &c->hdrs[hdr_start[i]] : NULL;
    }
    samsa_free(hdr_start);
}

samsa_crecs_chunk_t *
samsa_crecs_parse(const char *topic, int32_t partition, const uint8_t *p,
                  size_t len, const samsa_crecs_opts_t *opts)
{
    crecs_state_t         st;
    samsa_crecs_chunk_t  *c = samsa_calloc(1, sizeof(*c));

    atomic_init(&c->refs, 1);
    c->topic = samsa_strdup(topic);
    c->partition = partition;
    c->fetch_offset = opts->fetch_offset;
    c->next_offset = opts->fetch_offset;
    c->err_offset = -1;
    memset(&st, 0, sizeof(st));
    st.o = opts;
    st.chunk = c;
    st.data = SAMSA_BUF_INIT;
    st.last_off = -1;
    if (opts->read_committed && opts->naborted > 0) {
        st.naborted = opts->naborted;
        st.aborted = samsa_calloc(st.naborted, sizeof(*st.aborted));
        memcpy(st.aborted, opts->aborted, st.naborted * sizeof(*st.aborted));
        qsort(st.aborted, st.naborted, sizeof(*st.aborted),
              crecs_aborted_cmp);
    }
    crecs_walk(&st, p, len);
    c->data = samsa_buf_take(&st.data, &c->data_len);
    crecs_fill_all(&st);
    if (c->n > 0 && st.in_place) {
        atomic_fetch_add_explicit(&opts->src->refs, 1, memory_order_relaxed);
        c->src = opts->src;
    }
    samsa_free(st.spans);
    samsa_free(st.aborted_pids.v);
    samsa_free(st.aborted);
    return c;
}

samsa_crecs_src_t *
samsa_crecs_src_new(uint8_t *bytes)
{
    samsa_crecs_src_t  *src = samsa_malloc(sizeof(*src));

    atomic_init(&src->refs, 1);
    src->bytes = bytes;
    return src;
}

/* Drop one of the references counted in *refs: is it the last one? */
static bool
crecs_unref_last(_Atomic int *refs)
{
    return atomic_fetch_sub_explicit(refs, 1, memory_order_acq_rel) <= 1;
}

void
samsa_crecs_src_unref(samsa_crecs_src_t *src)
{
    if (src == NULL || !crecs_unref_last(&src->refs)) {
        return;
    }
    samsa_free(src->bytes);
    samsa_free(src);
}

void
samsa_crecs_chunk_ref(samsa_crecs_chunk_t *chunk)
{
    atomic_fetch_add_explicit(&chunk->refs, 1, memory_order_relaxed);
}

void
samsa_crecs_chunk_unref(samsa_crecs_chunk_t *chunk)
{
    if (chunk == NULL || !crecs_unref_last(&chunk->refs)) {
        return;
    }
    samsa_free(chunk->topic);
    samsa_free(chunk->recs);
    samsa_free(chunk->hdrs);
    samsa_free(chunk->data);
    samsa_crecs_src_unref(chunk->src);
    samsa_free(chunk);
}
