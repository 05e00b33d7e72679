/*
 * broker/handlers/commitoffs.h - the offsets of a commit request and the
 * per-partition answer, shared by OffsetCommit and TxnOffsetCommit: both
 * name topics and partitions with the same fields in different generated
 * structs, so each side is described by a layout (see tpresp.h) plus the
 * offsets of its partition fields.  samsa_commitoffs_authorize does the
 * topic checks both make.
 * Threads: pure functions over the caller's request (any thread), but
 * samsa_commitoffs_authorize (handler).
 */
#ifndef SAMSA_BROKER_HANDLERS_COMMITOFFS_H
#define SAMSA_BROKER_HANDLERS_COMMITOFFS_H

#include <stddef.h>
#include <stdint.h>

#include "broker/api_table.h"
#include "broker/group/grp.h"
#include "broker/handlers/tpresp.h"
#include "util/arena.h"

/* Where a request partition keeps its commit fields. */
typedef struct samsa_commitoffs_rq_layout {
    size_t  index_off;          /* int32_t PartitionIndex */
    size_t  offset_off;         /* int64_t CommittedOffset */
    size_t  epoch_off;          /* int32_t CommittedLeaderEpoch */
    size_t  metadata_off;       /* samsa_slice_t CommittedMetadata */
    size_t  timestamp_off;      /* int64_t CommitTimestamp, or
                                   SAMSA_COMMITOFFS_NO_TIMESTAMP */
} samsa_commitoffs_rq_layout_t;

/* timestamp_off of a request without one: commit_timestamp_ms -1 (now). */
#define SAMSA_COMMITOFFS_NO_TIMESTAMP   SIZE_MAX

/* An initializer: the layout of request partitions of type T; ts is
 * offsetof(T, CommitTimestamp) or SAMSA_COMMITOFFS_NO_TIMESTAMP. */
#define SAMSA_COMMITOFFS_RQ_LAYOUT(T, ts)                                   \
    { offsetof(T, PartitionIndex), offsetof(T, CommittedOffset),            \
      offsetof(T, CommittedLeaderEpoch), offsetof(T, CommittedMetadata),    \
      (ts) }

/* Where a response partition keeps its answer. */
typedef struct samsa_commitoffs_out_layout {
    size_t  index_off;          /* int32_t PartitionIndex */
    size_t  error_off;          /* int16_t ErrorCode */
} samsa_commitoffs_out_layout_t;

/* An initializer: the layout of response partitions of type T. */
#define SAMSA_COMMITOFFS_OUT_LAYOUT(T)                                      \
    { offsetof(T, PartitionIndex), offsetof(T, ErrorCode) }

/* The offsets to commit for every partition of the rq_cnt request topics
 * (laid out as rq, partitions as part), in request order, in arena (*n of
 * them, plus one zeroed entry). */
samsa_grp_offset_t *samsa_commitoffs_from_request(
    samsa_arena_t *arena, const samsa_tp_layout_t *rq, const void *rq_topics,
    int32_t rq_cnt, const samsa_commitoffs_rq_layout_t *part, size_t *n);

/* The response topics (laid out as out, partitions as part; *out_cnt of
 * them) for the request topics, each partition answered with offs[k]'s
 * partition and error, k counting partitions in request order.  Returns
 * the response topic array, in arena. */
void *samsa_commitoffs_respond(samsa_arena_t *arena,
                               const samsa_tp_layout_t *rq,
                               const void *rq_topics, int32_t rq_cnt,
                               const samsa_tp_layout_t *out,
                               const samsa_commitoffs_out_layout_t *part,
                               int32_t *out_cnt,
                               const samsa_grp_offset_t *offs);

/* Kafka's check of the topics of a commit: READ on each; the partitions
 * of a topic that fails get TOPIC_AUTHORIZATION_FAILED and are not
 * committed.  Returns the allowed ones, copied into req's arena (*nok of
 * them), to commit; samsa_commitoffs_merge then gives offs their errors. */
samsa_grp_offset_t *samsa_commitoffs_authorize(samsa_apis_t *apis,
                                               samsa_req_t *req,
                                               samsa_grp_offset_t *offs,
                                               size_t n, size_t *nok);
void samsa_commitoffs_merge(samsa_grp_offset_t *offs, size_t n,
                            const samsa_grp_offset_t *ok, size_t nok);

/* Every offset gets err (a request-level refusal). */
void samsa_commitoffs_fail(samsa_grp_offset_t *offs, size_t n,
                           samsa_err_t err);

#endif /* SAMSA_BROKER_HANDLERS_COMMITOFFS_H */
