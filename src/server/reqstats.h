/*
 * server/reqstats.h - per-API request metrics of one socket server: request
 * counts, error counts by error code (every ErrorCode the response
 * carried, as Kafka's RequestMetrics ErrorsPerSec), and latency histograms
 * of the seed's six phases (request queue, local, remote, response queue,
 * send, total; server/reqlog.h defines them).
 * Threads: one block per network thread, on cache lines of its own and
 * written only by that thread (the socket server's completion hook, with
 * relaxed loads and stores: no locked instruction, no shared line per
 * request); any thread may read a snapshot, summing the blocks.
 * Ownership: main creates and frees it; it must outlive the socket server
 * whose hook writes it and every reader.
 */
#ifndef SAMSA_SERVER_REQSTATS_H
#define SAMSA_SERVER_REQSTATS_H

#include <stddef.h>
#include <stdint.h>

#include "net/server/req.h"

/* Upper bounds of the latency buckets, in microseconds; the last bucket
 * (+Inf) follows them. */
#define SAMSA_REQSTATS_NBOUNDS  16
extern const int64_t  samsa_reqstats_bounds_us[SAMSA_REQSTATS_NBOUNDS];

/* Error codes counted one by one: -1 .. SAMSA_REQSTATS_ERR_MAX; others
 * (and codes a response's tally had no slot for) count as "other". */
#define SAMSA_REQSTATS_ERR_MAX  158

typedef enum samsa_reqstats_phase {
    SAMSA_PHASE_REQUEST_QUEUE = 0,
    SAMSA_PHASE_LOCAL,
    SAMSA_PHASE_REMOTE,
    SAMSA_PHASE_RESPONSE_QUEUE,
    SAMSA_PHASE_SEND,
    SAMSA_PHASE_TOTAL,
    SAMSA_PHASE_COUNT
} samsa_reqstats_phase_t;

typedef struct samsa_reqstats samsa_reqstats_t;

/* Sums over every network thread for one API. */
typedef struct samsa_reqstats_api {
    uint64_t  requests;
    uint64_t  errors[SAMSA_REQSTATS_ERR_MAX + 2];   /* [code + 1] */
    uint64_t  errors_other;
    uint64_t  buckets[SAMSA_PHASE_COUNT][SAMSA_REQSTATS_NBOUNDS + 1];
                                                    /* not cumulative */
    uint64_t  sum_ns[SAMSA_PHASE_COUNT];
} samsa_reqstats_api_t;

/* Stats for network thread ids 0 .. nprocs-1 (a thread's block is made
 * on its first request, so nprocs may be the most ids a server can use:
 * threads come and go at run time; a removed thread's counts stay in the
 * sums). */
samsa_reqstats_t *samsa_reqstats_new(const char *kind, size_t nprocs);
void samsa_reqstats_free(samsa_reqstats_t *rs);     /* NULL: no-op */

const char *samsa_reqstats_kind(const samsa_reqstats_t *rs);

/* Record a completed request (req->end_ns set).
 * @thread network (the one with id req->conn_id.proc) */
void samsa_reqstats_record(samsa_reqstats_t *rs, const samsa_req_t *req);

/* APIs with a schema, in samsa_proto_apis[] order. */
size_t samsa_reqstats_napis(void);

/* Sum of every network thread's block for API index i (see
 * samsa_reqstats_napis()).  @thread any */
void samsa_reqstats_get(const samsa_reqstats_t *rs, size_t i,
                        samsa_reqstats_api_t *out);

/* The phase's metric name after Kafka's RequestMetrics names. */
const char *samsa_reqstats_phase_name(samsa_reqstats_phase_t phase);

/* The bucket a duration falls in (0 .. SAMSA_REQSTATS_NBOUNDS). */
size_t samsa_reqstats_bucket(int64_t ns);

#endif /* SAMSA_SERVER_REQSTATS_H */
