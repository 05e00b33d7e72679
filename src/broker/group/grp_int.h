/*
 * broker/group/grp_int.h - the group coordinator's private structures, shared by
 * grp.c (table, offsets, admin), grpjoin.c (the rebalance protocol; also
 * the group timers and random member-id bytes that consumer_group.c uses
 * too) and grpstore.c (__consumer_offsets records).
 * Threads: a samsa_grp_t's fields are guarded by its lock ([lock]) unless
 * marked; the coordinator's table by its table lock.
 */
#ifndef SAMSA_BROKER_GROUP_GRP_INT_H
#define SAMSA_BROKER_GROUP_GRP_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "broker/coordtopic.h"
#include "broker/group/grp.h"
#include "broker/purgatory.h"
#include "proto/batch.h"
#include "proto/rd.h"
#include "util/arena.h"
#include "util/idtab.h"

typedef struct samsa_grp samsa_grp_t;
typedef struct samsa_consumer_group samsa_consumer_group_t;     /* broker/group/consumer_group.c */

/* How long a new member (one that has never completed a join) may wait in
 * its first JoinGroup before it is removed: Kafka's
 * GroupCoordinator.NewMemberJoinTimeoutMs (GroupCoordinatorConfig.
 * CLASSIC_GROUP_NEW_MEMBER_JOIN_TIMEOUT_MS), 5 minutes, not configurable. */
#define SAMSA_GRP_NEW_MEMBER_JOIN_TIMEOUT_MS  (5 * 60 * 1000)

/* One protocol a member supports (copied out of its JoinGroup). */
typedef struct grp_proto {
    char     *name;
    uint8_t  *metadata;
    size_t    metadata_len;
} grp_proto_t;

typedef struct grp_hb_op grp_hb_op_t;

/* One member (or, with is_pending, a KIP-394 member id handed out but not
 * yet joined).  [lock] of its group. */
typedef struct grp_member {
    char                 *member_id;
    char                 *instance_id;      /* NULL: dynamic member */
    char                 *client_id;
    char                 *client_host;
    int32_t               session_timeout_ms;
    int32_t               rebalance_timeout_ms;
    grp_proto_t          *protos;           /* preferred first */
    size_t                nprotos;
    uint8_t              *assignment;
    size_t                assignment_len;
    samsa_grp_join_cb_t  *join_cb;          /* awaiting join, or NULL */
    void                 *join_ctx;
    bool                  join_skip_ok;     /* the waiting join is v9+ */
    samsa_grp_sync_cb_t  *sync_cb;          /* awaiting sync, or NULL */
    void                 *sync_ctx;
    bool                  is_new;
    bool                  is_pending;
    bool                  pending_sync;     /* joined this generation, no
                                               SyncGroup yet (DelayedSync) */
    grp_hb_op_t          *hb;               /* current session timer, or
                                               NULL (borrowed: cleared when
                                               it completes) */
} grp_member_t;

/* One committed offset.  [lock] */
typedef struct grp_offset {
    char      *topic;
    int32_t    partition;
    int64_t    offset;
    int32_t    leader_epoch;
    char      *metadata;
    int64_t    commit_ts_ms;
    int64_t    expire_ts_ms;                /* -1: by group emptiness */
} grp_offset_t;

/* An offset committed in an open transaction (TxnOffsetCommit): kept
 * apart until the transaction's marker reaches the group's partition of
 * __consumer_offsets.  [lock] */
typedef struct grp_txn_offset {
    int64_t        producer_id;
    grp_offset_t   o;
} grp_txn_offset_t;

typedef struct grp_join_op grp_join_op_t;

struct samsa_grp {
    pthread_mutex_t      lock;              /* recursive; guards the rest,
                                               and the group's delayed ops
                                               run under it */
    _Atomic uint32_t     refs;              /* [atomic] the table's, each
                                               delayed op's, each caller's */
    samsa_grpcoord_t    *gc;                /* [const] */
    char                *id;                /* [const] */
    int32_t              partition;         /* [const] in the offsets topic */
    samsa_grp_state_t    state;
    int64_t              state_ts_ms;
    int32_t              generation;
    char                *protocol_type;     /* NULL: none yet */
    char                *protocol_name;     /* NULL: none */
    char                *leader_id;         /* NULL: none */
    grp_member_t       **members;           /* joined, in join order */
    size_t               nmembers;
    grp_member_t       **pending;           /* KIP-394 pending members */
    size_t               npending;
    bool                 new_member_added;  /* InitialDelayedJoin */
    struct grp_sync_op  *sync_op;           /* the sync timer while members
                                               owe a SyncGroup (borrowed:
                                               cleared on completion) */
    grp_join_op_t       *join_op;           /* the rebalance timer while
                                               PreparingRebalance (borrowed:
                                               cleared on completion) */
    grp_offset_t        *offsets;
    size_t               noffsets;
    grp_txn_offset_t    *txn_offsets;       /* pending, in commit order */
    size_t               ntxn_offsets;
    samsa_consumer_group_t        *cg;                /* a consumer-type group
                                               (KIP-848, consumer_group.c); NULL:
                                               classic */
};

struct samsa_grpcoord {
    samsa_grpcoord_conf_t  conf;            /* [const] */
    int32_t                initial_rebalance_delay_ms;  /* [const] */
    int32_t                min_session_timeout_ms;      /* [const] */
    int32_t                max_session_timeout_ms;      /* [const] */
    int32_t                max_size;                    /* [const] */
    int32_t                metadata_max_bytes;          /* [const] */
    int32_t                num_partitions;              /* [const] */
    samsa_purgatory_t     *rebalance;       /* [const] DelayedJoin */
    samsa_purgatory_t     *heartbeat;       /* [const] DelayedHeartbeat */
    samsa_idtab_t          table;           /* the groups (samsa_grp_t) */
    pthread_mutex_t        topic_lock;      /* one creation of the offsets
                                               topic at a time */
    _Atomic bool           topic_ready;     /* [atomic] release once it
                                               exists; acquired before use */
    pthread_mutex_t        load_lock;       /* one load at a time */
    _Atomic bool           loaded;          /* [atomic] the internal topic
                                               was loaded (at open, or on
                                               a cluster node once its
                                               image had the topic) */
    _Atomic bool           stopping;        /* [atomic] shutting down:
                                               no new timers */
    int64_t                retention_ms;    /* [const] offsets.retention.
                                               minutes */
    int64_t                check_interval_ms;   /* [const] offsets.
                                               retention.check.interval.ms */
    pthread_t              expire_thread;   /* [const] grpexpire */
    bool                   expire_started;  /* [main] open/close only */
    pthread_mutex_t        expire_lock;     /* guards expire_stop */
    pthread_cond_t         expire_cond;
    bool                   expire_stop;     /* [expire_lock] */
    int32_t                cg_session_timeout_ms;   /* [const] group.
                                               consumer.session.timeout.ms */
    int32_t                cg_heartbeat_interval_ms;    /* [const] */
    int32_t                cg_max_size;     /* [const] group.consumer.
                                               max.size */
    char *const           *cg_assignors;    /* [const] group.consumer.
                                               assignors (the config's) */
    size_t                 cg_nassignors;   /* [const] */
};

/* Whether the group's committed offset o has expired at now_ms (Kafka's
 * GroupMetadata.removeExpiredOffsets rules, see samsa_grpcoord_expire).
 * @locks grp held */
bool samsa_grp_offset_expired(samsa_grp_t *grp, const grp_offset_t *o,
                              int64_t now_ms, int64_t retention_ms);

/* ---- grp.c ---------------------------------------------------------------- */

/* The group with a ref (samsa_grp_unref), or NULL; with create, a new
 * Empty group when there is none. */
samsa_grp_t *samsa_grp_get(samsa_grpcoord_t *gc, samsa_slice_t id,
                           bool create);
void samsa_grp_ref(samsa_grp_t *grp);
void samsa_grp_unref(samsa_grp_t *grp);

/* Take the group out of the table (it went Dead).  @locks grp held */
void samsa_grp_remove(samsa_grp_t *grp);

void samsa_grp_set_state(samsa_grp_t *grp, samsa_grp_state_t state);

/* Every group with a ref each; *n set (free the array with samsa_free
 * after unref'ing each). */
samsa_grp_t **samsa_grp_snapshot(samsa_grpcoord_t *gc, size_t *n);

grp_offset_t *samsa_grp_offset_find(samsa_grp_t *grp, const char *topic,
                                    size_t topic_len, int32_t partition);

/* Insert or replace one committed offset (copies the strings). */
void samsa_grp_offset_put(samsa_grp_t *grp, const char *topic,
                          size_t topic_len, int32_t partition, int64_t offset,
                          int32_t leader_epoch, const char *metadata,
                          size_t metadata_len, int64_t commit_ts_ms,
                          int64_t expire_ts_ms);

void samsa_grp_offset_drop(samsa_grp_t *grp, size_t i);

/* ---- grpjoin.c ------------------------------------------------------------ */

/* What each of a group's timers starts with (grpjoin's and the consumer
 * groups'): the delayed op (run under the group lock), a ref on the
 * group, for a member's timer the member's id, and whether it expired
 * (set by samsa_grp_timer_on_expire). */
typedef struct grp_timer {
    samsa_delayed_op_t  op;
    samsa_grp_t        *grp;            /* ref */
    char               *member_id;      /* owned; NULL: a group's timer */
    bool                expired;
} grp_timer_t;

/* A zeroed heap block of size bytes starting with a grp_timer_t set up
 * to run ops on g after delay_ms (a member's timer: a copy of member_id;
 * NULL: a group's); the caller fills in the rest, then watches it.  The
 * timer holds a ref on g until it is freed. */
void *samsa_grp_timer_new(size_t size, const samsa_delayed_op_ops_t *ops,
                          samsa_grp_t *g, const char *member_id,
                          int64_t delay_ms);

/* samsa_grp_timer_new for member_id's timer, or NULL once the
 * coordinator is stopping (no new timers then). */
void *samsa_grp_member_timer_new(size_t size,
                                 const samsa_delayed_op_ops_t *ops,
                                 samsa_grp_t *g, const char *member_id,
                                 int64_t delay_ms);

/* Complete t now if it can, else watch it in purg; drops the caller's
 * ref on the op. */
void samsa_grp_timer_watch(grp_timer_t *t, samsa_purgatory_t *purg);

/* Complete t at once (it may be the last ref that goes). */
void samsa_grp_timer_complete(grp_timer_t *t);

/* try_complete of a timer that only something else completes (a
 * heartbeat, a stop) or that expires: never ready. */
bool samsa_grp_timer_never_ready(samsa_delayed_op_t *op);

/* on_expire of a timer whose on_complete reads t->expired. */
void samsa_grp_timer_on_expire(samsa_delayed_op_t *op);

/* The free of a timer with nothing to free but its grp_timer_t (first
 * in a heap block): the member id, the group ref, the block. */
void samsa_grp_timer_free(samsa_delayed_op_t *op);


grp_member_t *samsa_grp_member_find(samsa_grp_t *grp, const char *id,
                                    size_t len);
/* The member whose group.instance.id is instance_id; NULL: none. */
grp_member_t *samsa_grp_static_find(samsa_grp_t *grp,
                                    samsa_slice_t instance_id);
/* n random bytes for member ids (getrandom, else random()). */
void samsa_grp_random_bytes(uint8_t *u, size_t n);

/* A new member with no protocols and no assignment yet; takes member_id
 * (a heap string), copies the rest (instance_id's ptr NULL: none). */
grp_member_t *samsa_grp_member_new(char *member_id, samsa_slice_t instance_id,
                                   samsa_slice_t client_id,
                                   samsa_slice_t client_host,
                                   int32_t session_timeout_ms,
                                   int32_t rebalance_timeout_ms);
void samsa_grp_member_free(grp_member_t *m);

/* Arm the member's next session timer (completing the current one).
 * A new member's first join is timed by SAMSA_GRP_NEW_MEMBER_JOIN_TIMEOUT_MS
 * instead, armed when it is added.  @locks grp held */
void samsa_grp_member_touch(samsa_grp_t *grp, grp_member_t *m);

/* Whether an expiring timer leaves m in the group (Kafka's
 * hasSatisfiedHeartbeat): m waits in a join or a sync and is not new.
 * @locks m's group held */
bool samsa_grp_member_keep_alive(const grp_member_t *m);

/* Answer every waiting join and sync with err, forget the members' timers
 * (coordinator shutdown).  @locks grp held */
void samsa_grp_fail_waiting(samsa_grp_t *grp, samsa_err_t err);

/* ---- grptxn.c ------------------------------------------------------------ */

/* Keep one pending transactional offset of producer_id (copies). */
void samsa_grp_txn_offset_put(samsa_grp_t *grp, int64_t producer_id,
                              const char *topic, size_t topic_len,
                              int32_t partition, int64_t offset,
                              int32_t leader_epoch, const char *metadata,
                              size_t metadata_len, int64_t commit_ts_ms);

/* Free every pending offset (group teardown). */
void samsa_grp_txn_offsets_free(samsa_grp_t *grp);

/* ---- grpstore.c ----------------------------------------------------------- */

/* One record to append: key and value (tombstone: a null value). */
typedef samsa_coordtopic_rec_t samsa_grpstore_rec_t;

/* Append n records as one (non-transactional) batch to the group's
 * partition; returns once they are in the log, with Kafka's mapping of
 * append errors (COORDINATOR_NOT_AVAILABLE, INVALID_COMMIT_OFFSET_SIZE).
 * @locks grp held */
SAMSA_MUST_CHECK samsa_err_t samsa_grpstore_append(samsa_grp_t *grp,
                                                   samsa_grpstore_rec_t *recs,
                                                   size_t n);

/* Free n records and the array. */
void samsa_grpstore_recs_free(samsa_grpstore_rec_t *recs, size_t n);

/* Append the group's metadata (members and assignments) to its
 * partition.  @locks grp held */
SAMSA_MUST_CHECK samsa_err_t samsa_grpstore_write_group(samsa_grp_t *grp);

/* Append offset commits (n of them, with their values) in one batch. */
SAMSA_MUST_CHECK samsa_err_t samsa_grpstore_write_offsets(
    samsa_grp_t *grp, const samsa_grp_offset_t *offs, size_t n,
    int64_t now_ms, int64_t expire_ts_ms);

/* Append offset commits of a transaction: one transactional batch with
 * the producer's id and epoch (Kafka's TxnOffsetCommit append). */
SAMSA_MUST_CHECK samsa_err_t samsa_grpstore_write_txn_offsets(
    samsa_grp_t *grp, const samsa_grp_offset_t *offs, size_t n,
    int64_t now_ms, int64_t producer_id, int16_t producer_epoch);

/* Append tombstones: the group's metadata (with_group) and the offsets
 * offs[i] for which which[i] (NULL: all n). */
SAMSA_MUST_CHECK samsa_err_t samsa_grpstore_write_tombstones(
    samsa_grp_t *grp, bool with_group, const grp_offset_t *offs, size_t n);

/* Replay every partition of __consumer_offsets into gc's groups.
 * @thread main (open) */
SAMSA_MUST_CHECK samsa_err_t samsa_grpstore_load(samsa_grpcoord_t *gc,
                                                 char *errstr,
                                                 size_t errstr_size);

/* ---- the consumer protocol's side (consumer_group*.c) ------------------ */

struct samsa_grp_consumer_ops {
    /* Free a consumer group's state (its timers must be gone: they hold a
     * ref of the group). */
    void (*free)(samsa_consumer_group_t *cg);
    /* Members of the consumer group. */
    size_t (*nmembers)(const samsa_consumer_group_t *cg);
    /* Kafka's ConsumerGroupState name: Empty, Assigning, Reconciling,
     * Stable.  @locks grp held */
    const char *(*state_name)(const samsa_consumer_group_t *cg);
    /* Whether a member subscribes to topic.  @locks grp held */
    bool (*subscribes)(const samsa_consumer_group_t *cg, const char *topic);
    /* OffsetCommit's member check (Kafka's
     * ConsumerGroup.validateOffsetCommit: the member epoch is the
     * generation).  @locks grp held */
    samsa_err_t (*commit_check)(samsa_grp_t *grp, samsa_slice_t member_id,
                                int32_t member_epoch);
    /* TxnOffsetCommit's member check (UNKNOWN_MEMBER_ID,
     * ILLEGAL_GENERATION).  @locks grp held */
    samsa_err_t (*txn_commit_check)(samsa_grp_t *grp,
                                    samsa_slice_t member_id,
                                    int32_t member_epoch);
    /* Append tombstones of every record of the group's consumer state (an
     * empty consumer group becoming a classic one).  @locks grp held */
    samsa_err_t (*store_forget)(samsa_grp_t *grp);
    /* Tombstones of every record of the group's consumer state, appended
     * to *recs (n of them so far); returns the new count.
     * @locks grp held */
    size_t (*store_tombstones)(samsa_grp_t *grp, samsa_grpstore_rec_t **recs,
                               size_t n);
    /* One consumer group record read back at start (type: the key's
     * version, 3-8; krd after it).  Runs on main, no handler yet. */
    void (*store_load)(samsa_grpcoord_t *gc, int16_t type, samsa_rd_t *krd,
                       const samsa_record_t *rec, samsa_arena_t *arena);
    /* After the load, for every group (with or without consumer state).
     * @locks grp held */
    void (*load_finish)(samsa_grp_t *grp);
};

/* The consumer side's table, NULL when the coordinator has none. */
static inline const samsa_grp_consumer_ops_t *
samsa_grp_cg_ops(const samsa_grp_t *grp)
{
    return grp->gc->conf.consumer_ops;
}

/* Members of grp's consumer state; 0 when it has none. */
static inline size_t
samsa_grp_cg_nmembers(const samsa_grp_t *grp)
{
    return grp->cg != NULL ? samsa_grp_cg_ops(grp)->nmembers(grp->cg) : 0;
}

#endif /* SAMSA_BROKER_GROUP_GRP_INT_H */
