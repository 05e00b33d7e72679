/*
 * server/reqstats.c - see reqstats.h.
 */
#include "server/reqstats.h"

#include <stdatomic.h>
#include <string.h>

#include "proto/proto.h"
#include "util/alloc.h"
#include "util/diag.h"

const int64_t  samsa_reqstats_bounds_us[SAMSA_REQSTATS_NBOUNDS] = {
    100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000,
    500000, 1000000, 2500000, 5000000, 10000000,
};

/* One API's counters in one network thread's block. */
typedef struct reqstats_cell {
    _Atomic uint64_t  requests;
    _Atomic uint64_t  errors[SAMSA_REQSTATS_ERR_MAX + 2];
    _Atomic uint64_t  errors_other;
    _Atomic uint64_t  buckets[SAMSA_PHASE_COUNT][SAMSA_REQSTATS_NBOUNDS + 1];
    _Atomic uint64_t  sum_ns[SAMSA_PHASE_COUNT];
} reqstats_cell_t;

struct samsa_reqstats {
    const char        *kind;        /* [const] "broker" / "controller" */
    size_t             nprocs;      /* [const] network thread ids */
    /* [const] array: one array of cells per network thread id,
     * cache-line aligned, allocated by that thread on its first request
     * (ids come and go with num.network.threads) and written only by it;
     * NULL until then. */
    reqstats_cell_t *_Atomic  *blocks;
    _Atomic size_t             nused;   /* [atomic] ids below this may
                                           have a block */
};

static const char *const  reqstats_phase_names[SAMSA_PHASE_COUNT] = {
    "samsa_request_queue_time_seconds", "samsa_request_local_time_seconds",
    "samsa_request_remote_time_seconds", "samsa_response_queue_time_seconds",
    "samsa_response_send_time_seconds", "samsa_request_total_time_seconds",
};

/* Index in samsa_proto_apis[] by API key; -1 when there is no schema. */
static int
reqstats_api_index(int16_t key)
{
    const samsa_proto_api_t  *api = samsa_proto_api_find(key);

    if (api == NULL) {
        return -1;
    }
    return (int) (api - samsa_proto_apis);
}

size_t
samsa_reqstats_napis(void)
{
    return samsa_proto_apis_cnt;
}

const char *
samsa_reqstats_phase_name(samsa_reqstats_phase_t phase)
{
    return reqstats_phase_names[phase];
}

samsa_reqstats_t *
samsa_reqstats_new(const char *kind, size_t nprocs)
{
    samsa_reqstats_t  *rs = samsa_calloc(1, sizeof(*rs));
    size_t             i;

    rs->kind = kind;
    rs->nprocs = nprocs;
    rs->blocks = samsa_calloc(nprocs, sizeof(*rs->blocks));
    for (i = 0; i < nprocs; i++) {
        atomic_init(&rs->blocks[i], NULL);
    }
    atomic_init(&rs->nused, 0);
    return rs;
}

void
samsa_reqstats_free(samsa_reqstats_t *rs)
{
    size_t  i;

    if (rs == NULL) {
        return;
    }
    for (i = 0; i < rs->nprocs; i++) {
        samsa_free(atomic_load(&rs->blocks[i]));
    }
    samsa_free(rs->blocks);
    samsa_free(rs);
}

const char *
samsa_reqstats_kind(const samsa_reqstats_t *rs)
{
    return rs->kind;
}

size_t
samsa_reqstats_bucket(int64_t ns)
{
    size_t  i;

    for (i = 0; i < SAMSA_REQSTATS_NBOUNDS; i++) {
        if (ns <= samsa_reqstats_bounds_us[i] * 1000) {
            return i;
        }
    }
    return SAMSA_REQSTATS_NBOUNDS;
}

/* Add n to a counter only the calling thread writes. */
static void
reqstats_add(_Atomic uint64_t *c, uint64_t n)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
                          memory_order_relaxed);
}

/* A phase's duration; 0 when a stamp is missing (a request answered
 * before a step, or dropped). */
static int64_t
reqstats_span(int64_t from_ns, int64_t to_ns)
{
    if (from_ns == 0 || to_ns == 0 || to_ns < from_ns) {
        return 0;
    }
    return to_ns - from_ns;
}

static void
reqstats_phase(reqstats_cell_t *cell, samsa_reqstats_phase_t phase,
               int64_t ns)
{
    reqstats_add(&cell->buckets[phase][samsa_reqstats_bucket(ns)], 1);
    reqstats_add(&cell->sum_ns[phase], (uint64_t) ns);
}

static void
reqstats_errors(reqstats_cell_t *cell, const samsa_errtally_t *tally)
{
    size_t  i;
    int     code;

    for (i = 0; i < tally->n; i++) {
        code = tally->code[i];
        if (code >= -1 && code <= SAMSA_REQSTATS_ERR_MAX) {
            reqstats_add(&cell->errors[code + 1], tally->count[i]);
        } else {
            reqstats_add(&cell->errors_other, tally->count[i]);
        }
    }
    if (tally->overflow > 0) {
        reqstats_add(&cell->errors_other, tally->overflow);
    }
}

/* nused = max(nused, n): readers look at ids below it. */
static void
reqstats_raise_used(samsa_reqstats_t *rs, size_t n)
{
    size_t  cur = atomic_load(&rs->nused);

    while (cur < n && !atomic_compare_exchange_weak(&rs->nused, &cur, n)) {
    }
}

void
samsa_reqstats_record(samsa_reqstats_t *rs, const samsa_req_t *req)
{
    reqstats_cell_t  *block, *cell;
    int               api = reqstats_api_index(req->hdr.ApiKey);
    /* The phases' bounds: phase p runs from t[p] to t[p + 1]. */
    const int64_t     t[SAMSA_PHASE_TOTAL + 1] = {
        req->start_ns, req->dequeue_ns, req->local_done_ns,
        req->resp_done_ns, req->resp_dequeue_ns, req->end_ns,
    };
    int               p;

    if (api < 0 || req->conn_id.proc >= rs->nprocs) {
        return;             /* unknown APIs never reach a handler */
    }
    block = atomic_load_explicit(&rs->blocks[req->conn_id.proc],
                                 memory_order_relaxed);
    if (block == NULL) {
        block = samsa_aligned_calloc(64, samsa_proto_apis_cnt,
                                     sizeof(reqstats_cell_t));
        atomic_store_explicit(&rs->blocks[req->conn_id.proc], block,
                              memory_order_release);
        reqstats_raise_used(rs, (size_t) req->conn_id.proc + 1);
    }
    cell = &block[api];
    reqstats_add(&cell->requests, 1);
    reqstats_errors(cell, &req->errors);
    for (p = SAMSA_PHASE_REQUEST_QUEUE; p < SAMSA_PHASE_TOTAL; p++) {
        reqstats_phase(cell, p, reqstats_span(t[p], t[p + 1]));
    }
    reqstats_phase(cell, SAMSA_PHASE_TOTAL,
                   reqstats_span(req->start_ns, req->end_ns));
}

static uint64_t
reqstats_load(const _Atomic uint64_t *c)
{
    return atomic_load_explicit((_Atomic uint64_t *) c, memory_order_relaxed);
}

static void
reqstats_sum_cell(const reqstats_cell_t *cell, samsa_reqstats_api_t *out)
{
    size_t  i, j;

    out->requests += reqstats_load(&cell->requests);
    for (i = 0; i < SAMSA_REQSTATS_ERR_MAX + 2; i++) {
        out->errors[i] += reqstats_load(&cell->errors[i]);
    }
    out->errors_other += reqstats_load(&cell->errors_other);
    for (i = 0; i < SAMSA_PHASE_COUNT; i++) {
        for (j = 0; j <= SAMSA_REQSTATS_NBOUNDS; j++) {
            out->buckets[i][j] += reqstats_load(&cell->buckets[i][j]);
        }
        out->sum_ns[i] += reqstats_load(&cell->sum_ns[i]);
    }
}

void
samsa_reqstats_get(const samsa_reqstats_t *rs, size_t i,
                   samsa_reqstats_api_t *out)
{
    reqstats_cell_t  *block;
    size_t            p, n;

    samsa_assert(i < samsa_proto_apis_cnt);
    memset(out, 0, sizeof(*out));
    n = atomic_load(&((samsa_reqstats_t *) rs)->nused);
    for (p = 0; p < n; p++) {
        block = atomic_load_explicit(
            &((samsa_reqstats_t *) rs)->blocks[p], memory_order_acquire);
        if (block != NULL) {
            reqstats_sum_cell(&block[i], out);
        }
    }
}
