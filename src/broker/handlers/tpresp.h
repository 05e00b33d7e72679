/*
 * broker/handlers/tpresp.h - the topic x partition response: a request
 * that names topics and their partitions is answered by topics and
 * partitions in the same order (Produce, ListOffsets, DeleteRecords,
 * OffsetCommit, TxnOffsetCommit, DescribeProducers ...).  The generated
 * structs differ per API, so each side is described by a layout (where a
 * topic keeps its name and its partition array) and the helper walks
 * both, leaving each response partition to the handler's fill function.
 * samsa_tp_respond_image does the same for the APIs that answer from the
 * partition logs, over one metadata image taken for the whole answer.
 * Threads: samsa_tp_respond and samsa_tp_count are pure functions over the
 * caller's request (any thread); samsa_tp_respond_image runs on a handler.
 */
#ifndef SAMSA_BROKER_HANDLERS_TPRESP_H
#define SAMSA_BROKER_HANDLERS_TPRESP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "broker/api_table.h"
#include "broker/broker.h"
#include "net/server/req.h"
#include "util/arena.h"
#include "util/slice.h"

typedef struct samsa_tp_layout {
    size_t   topic_size;        /* sizeof a topic struct */
    size_t   name_off;          /* offsetof its samsa_slice_t name */
    size_t   parts_off;         /* offsetof its partition array pointer */
    size_t   parts_cnt_off;     /* offsetof its int32_t partition count */
    size_t   part_size;         /* sizeof one partition entry */
    void   (*topic_init)(void *t);      /* response side; NULL on the */
    void   (*part_init)(void *p);       /* request side */
} samsa_tp_layout_t;

/* An initializer: the layout of topics of type T whose name is T.N and partitions T.P
 * (entries of type PT); the inits are the generated samsa_<S>_init_any,
 * or NULL. */
#define SAMSA_TP_LAYOUT(T, N, P, PT, tinit, pinit)                          \
    { sizeof(T), offsetof(T, N), offsetof(T, P), offsetof(T, P##_cnt),      \
      sizeof(PT), (tinit), (pinit) }

/* One partition: k counts partitions over all topics (0, 1, ...), rq is the
 * request's entry and out the response's, initialised. */
typedef void samsa_tp_fill_fn(void *ctx, samsa_slice_t topic, size_t k,
                              const void *rq, void *out);

/* Mirror rq_cnt request topics (rq_topics, laid out as rq) into response
 * topics laid out as out, allocated in arena (*out_cnt of them; a null or
 * negative count is none): each gets the request topic's name and as many
 * partitions, each filled by fill.  Returns the response topic array. */
void *samsa_tp_respond(samsa_arena_t *arena, const samsa_tp_layout_t *rq,
                       const void *rq_topics, int32_t rq_cnt,
                       const samsa_tp_layout_t *out, int32_t *out_cnt,
                       samsa_tp_fill_fn *fill, void *ctx);

/* What each fill of samsa_tp_respond_image gets as its ctx: the broker,
 * the request, the image every partition of the answer is read against
 * (borrowed for the call) and the handler's own arg. */
typedef struct samsa_tp_image {
    samsa_broker_t       *b;
    samsa_req_t          *req;
    const samsa_image_t  *img;
    void                 *arg;
    samsa_apis_t         *apis;         /* samsa_tp_respond_checked: */
    int8_t                op;           /* the operation on each topic */
} samsa_tp_image_t;

/* samsa_tp_respond in req's arena, each fill given a samsa_tp_image_t
 * (with arg) as ctx, over the metadata image now.  @thread handler */
void *samsa_tp_respond_image(samsa_broker_t *b, samsa_req_t *req,
                             const samsa_tp_layout_t *rq,
                             const void *rq_topics, int32_t rq_cnt,
                             const samsa_tp_layout_t *out, int32_t *out_cnt,
                             samsa_tp_fill_fn *fill, void *arg);

/* samsa_tp_respond_image whose fills check operation (SAMSA_ACL_OP_*) on
 * each topic with samsa_tp_allowed.  @thread handler */
void *samsa_tp_respond_checked(samsa_apis_t *apis, samsa_req_t *req,
                               int8_t operation,
                               const samsa_tp_layout_t *rq,
                               const void *rq_topics, int32_t rq_cnt,
                               const samsa_tp_layout_t *out, int32_t *out_cnt,
                               samsa_tp_fill_fn *fill, void *arg);

/* In a fill of samsa_tp_respond_checked: may the request do the
 * operation on topic name (samsa_apis_allowed)?  The fill answers
 * TOPIC_AUTHORIZATION_FAILED when not.  True for the other walks. */
bool samsa_tp_allowed(const samsa_tp_image_t *c, samsa_slice_t name);

/* The partitions over all rq_cnt request topics. */
size_t samsa_tp_count(const samsa_tp_layout_t *rq, const void *rq_topics,
                      int32_t rq_cnt);

#endif /* SAMSA_BROKER_HANDLERS_TPRESP_H */
