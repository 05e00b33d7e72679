/*
 * client/admin/admin_int.h - what admin.c (handle, connections, round trips,
 * metadata, request arrays, results) shares with admin_topics.c and
 * admin_groups.c.
 * Threads: whichever application thread holds the handle's call lock;
 * everything here is called with it held.
 */
#ifndef SAMSA_CLIENT_ADMIN_ADMIN_INT_H
#define SAMSA_CLIENT_ADMIN_ADMIN_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/admin.h>

#include "client/mdcache.h"
#include "client/netclient.h"
#include "proto/gen/Metadata.h"
#include "proto/rd.h"
#include "proto/wr.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/slice.h"

#define SAMSA_ADMIN_ANY  SAMSA_NC_NO_NODE    /* least loaded node */

struct samsa_admin {
    pthread_mutex_t      lock;          /* serialises calls */
    samsa_netclient_t   *nc;            /* [lock] */
    samsa_mdcache_t     *mdc;           /* [const] the last Metadata answer
                                           (each call asks afresh) */
    int64_t              request_timeout_ms;        /* [const] */
    int64_t              default_api_timeout_ms;    /* [const] */
    int64_t              retry_backoff_ms;          /* [const] */
    char                *bootstrap;     /* [const] for messages */
    int32_t              nbootstrap;    /* [const] nodes -1 .. -n */
};

/* A request under way: what one call waits for. */
typedef struct samsa_admin_rpc {
    int32_t       node;
    int16_t       api;
    int16_t       version;
    samsa_buf_t   frame;
    samsa_wr_t    wr;
} samsa_admin_rpc_t;

/* A result block: the arena every part of a result is allocated from;
 * the public struct sits right after this header. */
int64_t samsa_admin_deadline(const samsa_admin_t *a, int64_t timeout_ms);

/* The time left before deadline, capped at request.timeout.ms, for
 * requests' own TimeoutMs fields. */
int32_t samsa_admin_req_timeout(const samsa_admin_t *a, int64_t deadline);

/* Allocate a result of size bytes with its own arena in *arenap. */
void *samsa_admin_result_new(size_t size, samsa_arena_t **arenap);

/* A zeroed result array (one spare slot) for the cnt items of a decoded
 * wire array, none for a null one (-1); *np the number of items. */
void *samsa_admin_items(samsa_arena_t *arena, int32_t cnt, size_t size,
                        size_t *np);

/* Copy s into arena as a C string (NULL for a null slice). */
char *samsa_admin_str(samsa_arena_t *arena, samsa_slice_t s);

/* The same for a name a result always carries: "" for a null slice. */
const char *samsa_admin_name(samsa_arena_t *arena, samsa_slice_t s);

/* The message for err: the broker's msg when it sent one, else err's
 * text; NULL when err is NONE. */
const char *samsa_admin_errmsg(samsa_arena_t *arena, samsa_err_t err,
                               samsa_slice_t msg);

/* Wait until node (SAMSA_ADMIN_ANY: any) can take a request and pick the
 * highest version of api in [lo, hi] it supports; begin the frame.
 * SAMSA_ERR_UNSUPPORTED_VERSION if none; a transport error or
 * SAMSA_ERR__TIMED_OUT if node is not ready by deadline. */
SAMSA_MUST_CHECK samsa_err_t samsa_admin_rpc_begin(samsa_admin_t *a,
                                                   samsa_admin_rpc_t *rpc,
                                                   int32_t node, int16_t api,
                                                   int16_t lo, int16_t hi,
                                                   int64_t deadline);

/* Send rpc's encoded frame and wait for the response; on success *rd reads
 * the response body, copied into arena (what a decoder borrows from it
 * lives as long as arena).  Always releases the frame. */
SAMSA_MUST_CHECK samsa_err_t samsa_admin_rpc_call(samsa_admin_t *a,
                                                  samsa_admin_rpc_t *rpc,
                                                  int64_t deadline,
                                                  samsa_arena_t *arena,
                                                  samsa_rd_t *rd);

/* Release rpc's frame without sending it. */
void samsa_admin_rpc_abort(samsa_admin_rpc_t *rpc);

/* A generated message's untyped encoder and decoder
 * (samsa_<Msg>_encode_any, samsa_<Msg>_decode_any). */
typedef void samsa_admin_encode_fn(samsa_wr_t *wr, int16_t version,
                                   const void *m);
typedef samsa_err_t samsa_admin_decode_fn(samsa_rd_t *rd, int16_t version,
                                          samsa_arena_t *arena, void *m);

/* The rest of a round trip begun by samsa_admin_rpc_begin: encode req into
 * rpc's frame, send it (samsa_admin_rpc_call) and decode the answer into
 * resp (arena memory).  The transport's or the decoder's error; resp is
 * only filled on success. */
SAMSA_MUST_CHECK samsa_err_t samsa_admin_rpc_run(samsa_admin_t *a,
                                                 samsa_admin_rpc_t *rpc,
                                                 samsa_admin_encode_fn *encode,
                                                 const void *req,
                                                 samsa_admin_decode_fn *decode,
                                                 void *resp, int64_t deadline,
                                                 samsa_arena_t *arena);

/* Metadata for topics (NULL/0: all), decoded into arena; records the
 * brokers as nodes and installs the answer in a->mdc.  @locks a->lock */
SAMSA_MUST_CHECK samsa_err_t samsa_admin_metadata(
    samsa_admin_t *a, const char *const *topics, size_t n, int64_t deadline,
    samsa_arena_t *arena, samsa_MetadataResponse_t *resp);

/* The group's coordinator (FindCoordinator), recorded as a node. */
SAMSA_MUST_CHECK samsa_err_t samsa_admin_coordinator(samsa_admin_t *a,
                                                     const char *group_id,
                                                     int64_t deadline,
                                                     int32_t *node);

/* Kafka's ConsumerProtocolAssignment (v0-v3, never flexible): version
 * i16, [topic string, [partition i32]], user data bytes.  Appends the
 * partitions to m->assignment (arena memory); false (m partly filled) if
 * data is not one.  Empty data is an empty assignment. */
bool samsa_admin_decode_assignment(samsa_arena_t *arena, samsa_slice_t data,
                                   samsa_group_member_t *m);

/* Sort helpers for results: by topic, then partition. */
int samsa_admin_cmp_tp(const char *topic_a, int32_t partition_a,
                       const char *topic_b, int32_t partition_b);
int samsa_admin_cmp_tp_result(const void *x, const void *y);

/* Finish a call that built res: on err free res and return err; else sort
 * its items by topic and partition and hand it to *resultp. */
samsa_err_t samsa_admin_tp_results_done(samsa_tp_results_t *res,
                                        samsa_err_t err,
                                        samsa_tp_results_t **resultp);

/* Per-partition request items (samsa_tp_spec_t, samsa_topic_partition_t):
 * arrays of structs that open with `const char *topic; int32_t partition;`,
 * stride bytes apart. */
const samsa_topic_partition_t *samsa_admin_tp_at(const void *items,
                                                 size_t stride, size_t i);

/* Are the n items (stride apart) there, each with a topic and a partition
 * >= 0? */
bool samsa_admin_tps_valid(const void *items, size_t n, size_t stride);

/* Where a generated request keeps what samsa_admin_tp_request fills: the
 * topic struct's Name (samsa_slice_t), partition array and its int32_t
 * count; the partition struct's int32_t index.  part_init NULL: the
 * partitions are bare int32_t indexes (index_off 0). */
typedef struct samsa_admin_tp_layout {
    size_t   topic_size;
    void   (*topic_init)(void *m);
    size_t   name_off;
    size_t   parts_off;
    size_t   parts_cnt_off;
    size_t   part_size;
    void   (*part_init)(void *m);
    size_t   index_off;
} samsa_admin_tp_layout_t;

/* The layout of generated samsa_<T>_t topics holding Partitions of
 * samsa_<P>_t, each with a PartitionIndex (type names: a function can't). */
#define SAMSA_ADMIN_TP_LAYOUT(T, P)                                         \
    {                                                                       \
        sizeof(samsa_##T##_t), samsa_##T##_init_any,                        \
        offsetof(samsa_##T##_t, Name), offsetof(samsa_##T##_t, Partitions), \
        offsetof(samsa_##T##_t, Partitions_cnt), sizeof(samsa_##P##_t),     \
        samsa_##P##_init_any, offsetof(samsa_##P##_t, PartitionIndex)       \
    }

/* A request's topic array (ntopics of them) and the partition array they
 * point into, one partition per item, in order (scratch memory). */
typedef struct samsa_admin_tp_arrays {
    void     *topics;
    void     *parts;
    int32_t   ntopics;
} samsa_admin_tp_arrays_t;

/* Build the topic and partition arrays of a request for the n items listed
 * by order (indexes into items, same-topic items adjacent; one topic per
 * run of them), each struct initialised
 * and given its name, partitions, count and index as layout says; the
 * caller sets the partitions' other fields.  Cannot fail. */
samsa_admin_tp_arrays_t samsa_admin_tp_request(
    samsa_arena_t *scratch, const void *items, size_t stride,
    const size_t *order, size_t n, const samsa_admin_tp_layout_t *layout);

#endif /* SAMSA_CLIENT_ADMIN_ADMIN_INT_H */
