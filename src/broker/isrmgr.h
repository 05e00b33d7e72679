/*
 * broker/isrmgr.h - a partition leader's ISR changes on their way to the
 * active controller, Kafka's AlterPartitionManager plus the leader's
 * isr-expiration task (issue 19 step 4, docs/REPLICATION.md).
 *
 * The replica manager (broker/replica.h) decides the changes (a shrink:
 * samsa_isrstate_shrink; an expansion: samsa_isrstate_can_join) and keeps
 * one in flight per partition; it hands each to samsa_isrmgr_submit.  The
 * "isr-manager" thread sends what is queued as one AlterPartition (API
 * 56, v3: NewIsrWithEpochs, each member's broker epoch from this node's
 * image, KIP-903) with this broker's id and epoch to the active
 * controller's CONTROLLER listener (broker/forward.h's
 * samsa_forward_roundtrip, a connection per try as broker-lifecycle does,
 * to this node's own listener too when it is the active controller: every
 * step is bounded; a single node, with no quorum, calls its controller),
 * and hands each partition's answer to the answer callback.
 * Errors that say retry (no answer, NOT_CONTROLLER, STALE_BROKER_EPOCH
 * while this broker registers again, REQUEST_TIMED_OUT, ...) keep the
 * change queued for another try after SAMSA_ISRMGR_RETRY_MS; the others
 * (FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION, INELIGIBLE_REPLICA,
 * OPERATION_NOT_ATTEMPTED, UNKNOWN_TOPIC_ID, UNKNOWN_TOPIC_OR_PARTITION,
 * NEW_LEADER_ELECTED, INVALID_REQUEST) and success are answered (Kafka's
 * Partition.handleAlterPartitionError drops those).  Every expire_ms
 * (replica.lag.time.max.ms / 2, Kafka's isr-expiration schedule) the
 * thread calls the expire callback, which submits the shrinks due.
 *
 * Threads: samsa_isrmgr_submit from any thread (handler threads on a
 * follower's fetch, the isr-manager thread in the expire callback); the
 * isr-manager thread owns the exchange (correlation ids) and runs both
 * callbacks with no lock of the manager held; main creates and frees it.
 * im->lock guards the queue, the retry time and stop.
 */
#ifndef SAMSA_BROKER_ISRMGR_H
#define SAMSA_BROKER_ISRMGR_H

#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>

#include "broker/purgatory.h"
#include "config/config_kraft.h"
#include "meta/controller/controller.h"
#include "meta/meta.h"
#include "proto/types.h"

#define SAMSA_ISRMGR_RETRY_MS  100  /* between tries of a change that
                                       must be retried */
#define SAMSA_ISRMGR_IO_MS     2000 /* bounds each step of an exchange,
                                       and so free */

typedef struct samsa_isrmgr samsa_isrmgr_t;

/* One proposed ISR of a partition this node leads, as it saw it. */
typedef struct samsa_isrmgr_item {
    char           key[SAMSA_PURGATORY_TP_KEY_MAX];  /* the proposer's */
    uint64_t       id;                  /* the proposer's, to match */
    samsa_uuid_t   topic_id;
    int32_t        partition;
    int32_t        leader_epoch;
    int32_t        partition_epoch;
    int32_t       *isr;                 /* samsa_malloc'ed */
    size_t         nisr;
} samsa_isrmgr_item_t;

/* The controller's answer to one item. */
typedef struct samsa_isrmgr_answer {
    samsa_err_t     err;                /* NONE: committed, the rest set */
    int32_t         leader_epoch;
    int32_t         partition_epoch;
    const int32_t  *isr;
    size_t          nisr;
} samsa_isrmgr_answer_t;

/* The shrinks due at now_ms: submitted by the callee.  @thread isr-manager */
typedef void samsa_isrmgr_expire_fn(void *ctx, int64_t now_ms);
/* item's final answer.  @thread isr-manager */
typedef void samsa_isrmgr_answer_fn(void *ctx, const samsa_isrmgr_item_t *item,
                                    const samsa_isrmgr_answer_t *ans);

typedef struct samsa_isrmgr_conf {
    int32_t                      node_id;
    samsa_controller_t          *ctrl;      /* active id; local calls */
    const samsa_config_kraft_t  *kraft;     /* the voters' addresses */
    samsa_meta_t                *meta;      /* broker epochs */
    int64_t                      expire_ms;
    samsa_isrmgr_expire_fn      *expire;
    samsa_isrmgr_answer_fn      *answer;
    void                        *ctx;
} samsa_isrmgr_conf_t;

/* Start the manager and its thread: *out.  Everything conf names
 * outlives it.  @returns SAMSA_ERR__IO when the thread cannot start.
 * @thread main */
SAMSA_MUST_CHECK samsa_err_t samsa_isrmgr_new(const samsa_isrmgr_conf_t *conf,
                                              samsa_isrmgr_t **out);

/* Queue item (copied; @owns item->isr, on every path) for the next
 * AlterPartition.  After samsa_isrmgr_free began it is dropped.
 * @thread any */
void samsa_isrmgr_submit(samsa_isrmgr_t *im, const samsa_isrmgr_item_t *item);

/* Stop the thread (an exchange in progress ends within SAMSA_ISRMGR_IO_MS
 * per step), join it and free the manager and what is queued, without
 * answers.  NULL: no-op.  @thread main */
void samsa_isrmgr_free(samsa_isrmgr_t *im);

#endif /* SAMSA_BROKER_ISRMGR_H */
