/*
 * broker/group/grp.h - the classic group coordinator (Kafka's GroupCoordinator
 * and GroupMetadataManager): groups and their members, the rebalance
 * protocol (JoinGroup, SyncGroup, Heartbeat, LeaveGroup, static
 * membership), committed offsets, and their persistence in the internal
 * topic __consumer_offsets (broker/group/grpstore.c), reloaded at start.
 *
 * Group states are Kafka's: Empty, PreparingRebalance,
 * CompletingRebalance, Stable, Dead.  Rebalance and session timeouts are
 * delayed operations in two purgatories ("rebalance" and "heartbeat"), as
 * Kafka's DelayedJoin, InitialDelayedJoin and DelayedHeartbeat.
 *
 * Threads: every samsa_grp_* call may come from any handler thread; each
 * group has its own (recursive) lock, which is also the lock its delayed
 * operations run under, so the purgatories' reapers and the handlers
 * serialise on it.  The coordinator's table lock guards only the table.
 * Lock order: table lock -> group lock; group lock -> plog lock (appends
 * to __consumer_offsets) -> purgatory locks.
 * Results are handed to callbacks, called exactly once per request and
 * with the group lock held: they must encode and respond at once (never
 * block, never call back into the coordinator).  Everything a result
 * points to is valid only during the callback.
 */
#ifndef SAMSA_BROKER_GROUP_GRP_H
#define SAMSA_BROKER_GROUP_GRP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>

#include "log/logmgr.h"
#include "meta/controller/controller.h"
#include "meta/meta.h"
#include "config/config.h"
#include "util/slice.h"

typedef struct samsa_grpcoord samsa_grpcoord_t;

/* What the coordinator calls of the consumer protocol's (KIP-848) groups,
 * defined in broker/group/grp_int.h and filled by consumer_group.c
 * (samsa_consumer_group_ops): the classic side names the consumer side
 * only through this table, so the two do not call each other in a loop. */
typedef struct samsa_grp_consumer_ops samsa_grp_consumer_ops_t;

#define SAMSA_GRP_OFFSETS_TOPIC  "__consumer_offsets"

/* Kafka's group states; the names are what ListGroups and DescribeGroups
 * show. */
typedef enum samsa_grp_state {
    SAMSA_GRP_EMPTY = 0,
    SAMSA_GRP_PREPARING_REBALANCE,
    SAMSA_GRP_COMPLETING_REBALANCE,
    SAMSA_GRP_STABLE,
    SAMSA_GRP_DEAD,
} samsa_grp_state_t;

const char *samsa_grp_state_name(samsa_grp_state_t state);

/* Kafka's Utils.abs(groupId.hashCode()) % n: Java's String.hashCode over
 * the UTF-16 code units of the (UTF-8) group id. */
int32_t samsa_grp_partition_for(const char *group_id, size_t len, int32_t n);

/* ---- life --------------------------------------------------------------- */

typedef struct samsa_grpcoord_conf {
    const samsa_config_t  *cfg;         /* group.*, offsets.* */
    int32_t                node_id;
    samsa_meta_t          *meta;        /* images (the offsets topic) */
    samsa_controller_t    *ctrl;        /* creates __consumer_offsets */
    samsa_logmgr_t        *logs;
    const samsa_grp_consumer_ops_t *consumer_ops;   /* consumer-type groups
                                               (&samsa_consumer_group_ops);
                                               NULL: none (their records are
                                               skipped at load) */
} samsa_grpcoord_conf_t;

/* Start the coordinator: its purgatories, then load every group and
 * offset kept in __consumer_offsets (if the topic exists).  On error
 * errstr says why.  @thread main */
SAMSA_MUST_CHECK samsa_err_t samsa_grpcoord_open(
    const samsa_grpcoord_conf_t *conf, samsa_grpcoord_t **out, char *errstr,
    size_t errstr_size);

/* Answer every request still waiting (joins and syncs get
 * COORDINATOR_NOT_AVAILABLE, as when Kafka's coordinator resigns) and stop
 * the purgatories.  The handlers must have stopped.  @thread main */
void samsa_grpcoord_answer_waiting(samsa_grpcoord_t *gc);

/* Free everything (after answer_waiting).  NULL is a no-op. */
void samsa_grpcoord_close(samsa_grpcoord_t *gc);

/* Make sure __consumer_offsets exists (created internally on first use
 * with offsets.topic.num.partitions partitions, cleanup.policy=compact).
 * COORDINATOR_NOT_AVAILABLE if it cannot be created. */
SAMSA_MUST_CHECK samsa_err_t samsa_grpcoord_ensure_topic(samsa_grpcoord_t *gc);

/* Kafka's isCoordinatorForGroup: SAMSA_ERR_NONE on a single node (every
 * partition of __consumer_offsets is local) and on a cluster node that
 * leads group_id's partition of it (broker/coordtopic.h), else
 * NOT_COORDINATOR.  Every samsa_grp_* call and the consumer groups'
 * (KIP-848) ones below answer that before anything else about a group;
 * samsa_grp_list lists only the groups of the partitions led here. */
SAMSA_MUST_CHECK samsa_err_t samsa_grpcoord_check(samsa_grpcoord_t *gc,
                                                  samsa_slice_t group_id);

/* ---- JoinGroup ---------------------------------------------------------- */

typedef struct samsa_grp_protocol {
    samsa_slice_t  name;
    samsa_slice_t  metadata;
} samsa_grp_protocol_t;

typedef struct samsa_grp_join_req {
    samsa_slice_t                group_id;
    samsa_slice_t                member_id;         /* "" when new */
    samsa_slice_t                instance_id;       /* ptr NULL: dynamic */
    samsa_slice_t                client_id;
    samsa_slice_t                client_host;
    samsa_slice_t                protocol_type;
    const samsa_grp_protocol_t  *protocols;
    size_t                       nprotocols;
    int32_t                      session_timeout_ms;
    int32_t                      rebalance_timeout_ms; /* -1: session's */
    bool                         require_known_member_id; /* v4+ */
    bool                         supports_skip_assignment; /* v9+ */
} samsa_grp_join_req_t;

typedef struct samsa_grp_member_meta {
    const char     *member_id;
    const char     *instance_id;            /* NULL: none */
    const uint8_t  *metadata;
    size_t          metadata_len;
} samsa_grp_member_meta_t;

typedef struct samsa_grp_join_result {
    samsa_err_t                     error;
    int32_t                         generation;     /* -1 on errors */
    const char                     *protocol_type;  /* NULL: none */
    const char                     *protocol_name;  /* NULL: none */
    const char                     *leader_id;      /* "" when none */
    const char                     *member_id;      /* "" when none */
    bool                            skip_assignment;
    const samsa_grp_member_meta_t  *members;        /* the leader's only */
    size_t                          nmembers;
} samsa_grp_join_result_t;

typedef void samsa_grp_join_cb_t(void *ctx,
                                 const samsa_grp_join_result_t *res);

/* Kafka's handleJoinGroup.  cb(ctx, ...) runs once: at once for errors,
 * MEMBER_ID_REQUIRED and answers from the current generation, else when
 * the rebalance completes (every member rejoined, or the rebalance
 * timeout passed). */
void samsa_grp_join(samsa_grpcoord_t *gc, const samsa_grp_join_req_t *rq,
                    samsa_grp_join_cb_t *cb, void *ctx);

/* ---- SyncGroup ---------------------------------------------------------- */

typedef struct samsa_grp_assignment {
    samsa_slice_t  member_id;
    samsa_slice_t  assignment;
} samsa_grp_assignment_t;

typedef struct samsa_grp_sync_req {
    samsa_slice_t                   group_id;
    int32_t                         generation;
    samsa_slice_t                   member_id;
    samsa_slice_t                   instance_id;     /* ptr NULL: none */
    samsa_slice_t                   protocol_type;   /* ptr NULL: none */
    samsa_slice_t                   protocol_name;   /* ptr NULL: none */
    const samsa_grp_assignment_t   *assignments;     /* the leader's */
    size_t                          nassignments;
} samsa_grp_sync_req_t;

typedef struct samsa_grp_sync_result {
    samsa_err_t     error;
    const char     *protocol_type;          /* NULL: none */
    const char     *protocol_name;
    const uint8_t  *assignment;
    size_t          assignment_len;
} samsa_grp_sync_result_t;

typedef void samsa_grp_sync_cb_t(void *ctx,
                                 const samsa_grp_sync_result_t *res);

/* Kafka's handleSyncGroup: followers wait for the leader's assignment. */
void samsa_grp_sync(samsa_grpcoord_t *gc, const samsa_grp_sync_req_t *rq,
                    samsa_grp_sync_cb_t *cb, void *ctx);

/* ---- Heartbeat, LeaveGroup ---------------------------------------------- */

/* Kafka's handleHeartbeat. */
samsa_err_t samsa_grp_heartbeat(samsa_grpcoord_t *gc, samsa_slice_t group_id,
                                samsa_slice_t member_id,
                                samsa_slice_t instance_id,
                                int32_t generation);

typedef struct samsa_grp_leaver {
    samsa_slice_t  member_id;               /* "" with an instance id */
    samsa_slice_t  instance_id;             /* ptr NULL: none */
    samsa_err_t    error;                   /* out */
} samsa_grp_leaver_t;

/* Kafka's handleLeaveGroup (KIP-345 batch): each leaver's error is set;
 * the return value is the request-level error. */
samsa_err_t samsa_grp_leave(samsa_grpcoord_t *gc, samsa_slice_t group_id,
                            samsa_grp_leaver_t *leavers, size_t n);

/* ---- offsets ------------------------------------------------------------ */

typedef struct samsa_grp_offset {
    samsa_slice_t  topic;
    int32_t        partition;
    int64_t        offset;                  /* commit: in; fetch: out (-1) */
    int32_t        leader_epoch;            /* -1: none */
    samsa_slice_t  metadata;                /* fetch: out, in arena */
    int64_t        commit_timestamp_ms;     /* commit: -1 = now */
    samsa_err_t    error;                   /* out */
} samsa_grp_offset_t;

typedef struct samsa_grp_commit_req {
    samsa_slice_t  group_id;
    int32_t        generation;              /* -1: a simple commit */
    samsa_slice_t  member_id;
    samsa_slice_t  instance_id;             /* ptr NULL: none */
    int64_t        retention_ms;            /* -1: offsets.retention.minutes */
} samsa_grp_commit_req_t;

/* Kafka's handleCommitOffsets: validate the member and generation, write
 * the offsets to __consumer_offsets, then keep them.  Each offset's error
 * is set (a request-level failure is copied to every one). */
void samsa_grp_commit(samsa_grpcoord_t *gc, const samsa_grp_commit_req_t *rq,
                      samsa_grp_offset_t *offs, size_t n);

/* Committed offsets of group_id.  With all, *offs gets every committed
 * partition (allocated in arena, *n set); else each of the n given gets
 * its offset (-1 and metadata "" when none).  @returns the group-level
 * error (COORDINATOR_NOT_AVAILABLE ...); NONE for an unknown group. */
samsa_err_t samsa_grp_fetch_offsets(samsa_grpcoord_t *gc,
                                    samsa_slice_t group_id, bool all,
                                    samsa_arena_t *arena,
                                    samsa_grp_offset_t **offs, size_t *n);

/* Kafka's handleDeleteOffsets (KIP-496): each offset's error is set
 * (GROUP_SUBSCRIBED_TO_TOPIC when a consumer member subscribes to it);
 * returns the group-level error (GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP). */
samsa_err_t samsa_grp_delete_offsets(samsa_grpcoord_t *gc,
                                     samsa_slice_t group_id,
                                     samsa_grp_offset_t *offs, size_t n);

/* ---- transactional offsets (KIP-98) --------------------------------------- */

/* The partition of __consumer_offsets that holds group_id. */
int32_t samsa_grpcoord_partition_for(samsa_grpcoord_t *gc,
                                     samsa_slice_t group_id);

typedef struct samsa_grp_txn_commit_req {
    samsa_slice_t  group_id;
    int32_t        generation;              /* -1: not checked */
    samsa_slice_t  member_id;               /* "": not checked */
    samsa_slice_t  instance_id;             /* ptr NULL: none */
    int64_t        producer_id;
    int16_t        producer_epoch;
} samsa_grp_txn_commit_req_t;

/* Kafka's handleTxnCommitOffsets: the member checks of KIP-447 (when a
 * member id or generation is given), then the offsets are written to
 * __consumer_offsets in a transactional batch and kept pending: OffsetFetch
 * shows them only once the commit marker is written
 * (samsa_grp_txn_complete).  Each offset's error is set. */
void samsa_grp_txn_commit(samsa_grpcoord_t *gc,
                          const samsa_grp_txn_commit_req_t *rq,
                          samsa_grp_offset_t *offs, size_t n);

/* A commit (or abort) marker of producer_id was written to partition of
 * __consumer_offsets: its pending offsets in the groups of that
 * partition become committed offsets (or are dropped).
 * @thread txnmarker  @locks the groups' taken */
void samsa_grp_txn_complete(samsa_grpcoord_t *gc, int32_t partition,
                            int64_t producer_id, bool commit);

/* OffsetFetch's RequireStable (v7+): each of the n offsets of group_id
 * with a pending transactional commit gets UNSTABLE_OFFSET_COMMIT and
 * offset -1. */
void samsa_grp_offsets_mark_unstable(samsa_grpcoord_t *gc,
                                     samsa_slice_t group_id,
                                     samsa_grp_offset_t *offs, size_t n);

/* ---- admin -------------------------------------------------------------- */

typedef struct samsa_grp_listed {
    const char         *group_id;
    const char         *protocol_type;      /* "" for offsets only */
    samsa_grp_state_t   state;
    const char         *state_name;         /* Kafka's name of the state
                                               (consumer groups have
                                               their own states) */
    bool                consumer;           /* a consumer-type group
                                               (KIP-848), else classic */
} samsa_grp_listed_t;

/* Every group (not Dead) whose state is in states (NULL: any); allocated
 * in arena. */
size_t samsa_grp_list(samsa_grpcoord_t *gc, const samsa_slice_t *states,
                      size_t nstates, samsa_arena_t *arena,
                      samsa_grp_listed_t **out);

typedef struct samsa_grp_described_member {
    const char     *member_id;
    const char     *instance_id;            /* NULL: none */
    const char     *client_id;
    const char     *client_host;
    const uint8_t  *metadata;               /* Stable groups only */
    size_t          metadata_len;
    const uint8_t  *assignment;
    size_t          assignment_len;
} samsa_grp_described_member_t;

typedef struct samsa_grp_described {
    samsa_err_t                     error;
    samsa_grp_state_t               state;  /* DEAD for unknown groups */
    const char                     *protocol_type;
    const char                     *protocol_name;  /* "" unless Stable */
    samsa_grp_described_member_t   *members;
    size_t                          nmembers;
} samsa_grp_described_t;

/* Kafka's handleDescribeGroup; out is allocated in arena. */
void samsa_grp_describe(samsa_grpcoord_t *gc, samsa_slice_t group_id,
                        samsa_arena_t *arena, samsa_grp_described_t *out);

/* Kafka's handleDeleteGroups for one group: GROUP_ID_NOT_FOUND,
 * NON_EMPTY_GROUP, INVALID_GROUP_ID, or NONE (its metadata and offsets
 * get tombstones). */
samsa_err_t samsa_grp_delete(samsa_grpcoord_t *gc, samsa_slice_t group_id);

/* ---- offsets retention (offsets.retention.minutes, KIP-211) -------------- */

/* Kafka's cleanupGroupMetadata at now_ms: in every group, the committed
 * offsets that expired get tombstones and are forgotten -- an offset with
 * an explicit expire time (OffsetCommit v2-v4 retention) at that time;
 * otherwise retention_ms after the group became Empty (groups with a
 * protocol type), after its commit for groups without one (simple
 * consumers, assign() commits) and, in a Stable consumer group, for
 * topics no member subscribes to.  An Empty group left without offsets
 * goes Dead: its metadata gets a tombstone and it leaves the table.
 * *groups_removed (may be NULL) gets how many did.  A failed write keeps
 * the group's offsets for the next round.
 * @thread grpexpire (or a test) @locks each group taken in turn */
size_t samsa_grpcoord_expire(samsa_grpcoord_t *gc, int64_t now_ms,
                             int64_t retention_ms, size_t *groups_removed);

/* ---- tests -------------------------------------------------------------- */

/* Groups in the table (Dead ones included until they go). */
size_t samsa_grpcoord_group_count(samsa_grpcoord_t *gc);

#endif /* SAMSA_BROKER_GROUP_GRP_H */
