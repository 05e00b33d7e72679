/*
 * client/consumer/consumer_int.h - the consumer's shared state, between
 * consumer.c (the application-facing API, the background thread's loop
 * and metadata), cfetch.c (Fetch and ListOffsets) and coordinator.c (the
 * group: FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
 * OffsetCommit, OffsetFetch).
 *
 * Threads and locks: one recursive mutex, c->lock, guards every [lock]
 * field.  The background thread ("bg") owns the network client and takes
 * the lock for each round of work and in each response callback, never
 * across the epoll wait.  The application thread ("app") takes it in
 * every API call and waits on c->cond (records arrived, an operation
 * finished); it never calls back into the application while holding it.
 * Data crosses threads only through the [lock] queues below: record
 * chunks (bg -> app), events for callbacks (bg -> app), operations (app
 * -> bg).
 */
#ifndef SAMSA_CLIENT_CONSUMER_CONSUMER_INT_H
#define SAMSA_CLIENT_CONSUMER_CONSUMER_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <samsa/consumer.h>

#include "client/consumer/cconf.h"
#include "client/consumer/membership.h"
#include "client/consumer/cproto.h"
#include "client/consumer/crecs.h"
#include "client/mdcache.h"
#include "client/netclient.h"
#include "util/re.h"

/* Where an assigned partition's position comes from. */
typedef enum samsa_cpart_state {
    SAMSA_CPART_NEED_COMMITTED = 0,     /* ask the group (OffsetFetch) */
    SAMSA_CPART_NEED_RESET,             /* ListOffsets with reset_to */
    SAMSA_CPART_READY,                  /* position known: fetch */
} samsa_cpart_state_t;

/* One assigned partition.  [lock] */
typedef struct samsa_cpart {
    char                  *topic;
    int32_t                partition;
    samsa_cpart_state_t    state;
    int64_t                reset_to;        /* SAMSA_OFFSET_BEGINNING/END */
    int64_t                position;        /* next offset for the app */
    int64_t                fetch_offset;    /* next offset to fetch */
    uint64_t               gen;             /* new on every seek/reset */
    bool                   paused;
    bool                   fetch_inflight;
    bool                   lo_inflight;     /* ListOffsets for a reset */
    bool                   of_inflight;     /* OffsetFetch */
    bool                   blocked;         /* err pending: no fetching */
    int64_t                backoff_until_ms;
    int64_t                high_watermark;  /* -1 unknown */
    int64_t                last_stable_offset;
    int64_t                log_start_offset;
    int64_t                committed;       /* last committed, -1 none */
    int32_t                preferred_replica;   /* KIP-392: the leader's
                                                   PreferredReadReplica;
                                                   -1 none */
    int64_t                preferred_until_ms;  /* then the leader again
                                                   (metadata.max.age.ms) */
    samsa_err_t            err;             /* for the app's next poll */
    samsa_crecs_chunk_t   *q_head;          /* fetched, not yet handed out */
    samsa_crecs_chunk_t   *q_tail;
    int32_t                nchunks;
} samsa_cpart_t;

/* Events for the application thread (callbacks run in poll()).  [lock] */
typedef enum samsa_cevent_kind {
    SAMSA_CEVENT_ASSIGN = 0,    /* add parts, then ASSIGNED callback */
    SAMSA_CEVENT_REVOKE,        /* commit (auto), REVOKED callback, drop */
    SAMSA_CEVENT_LOST,          /* LOST callback, drop */
    SAMSA_CEVENT_COMMIT,        /* commit_async callback */
} samsa_cevent_kind_t;

typedef struct samsa_cevent {
    struct samsa_cevent       *next;
    samsa_cevent_kind_t        kind;
    samsa_topic_partition_t   *tps;         /* owned (topics too) */
    size_t                     n;
    bool                       rejoin;      /* REVOKE/LOST: join after */
    int32_t                    generation;  /* of the group when queued */
    samsa_err_t                err;         /* COMMIT */
    samsa_commit_cb           *cb;
    void                      *opaque;
} samsa_cevent_t;

/* Operations the application asks the background thread for.  [lock] */
typedef enum samsa_cop_kind {
    SAMSA_COP_COMMIT = 0,
    SAMSA_COP_COMMITTED,        /* OffsetFetch */
    SAMSA_COP_LIST_OFFSETS,     /* tps[i].timestamp: -2, -1 or a time */
    SAMSA_COP_LEAVE,            /* LeaveGroup */
} samsa_cop_kind_t;

typedef struct samsa_cop {
    struct samsa_cop          *next;
    samsa_cop_kind_t           kind;
    samsa_topic_partition_t   *tps;         /* owned (topics too) */
    size_t                     n;
    int32_t                    pending;     /* requests in flight */
    bool                       sent;
    bool                       done;
    bool                       waited;      /* an app thread waits: it
                                               frees the op */
    samsa_err_t                err;
    int64_t                    deadline_ms;
    samsa_commit_cb           *cb;          /* COMMIT async */
    void                      *opaque;
    bool                       is_auto;     /* auto-commit */
    int64_t                    not_before_ms;   /* retry after (stale
                                                   member epoch) */
} samsa_cop_t;

typedef enum samsa_coordinator_state {
    SAMSA_COORDINATOR_IDLE = 0,      /* not subscribed */
    SAMSA_COORDINATOR_NEED_JOIN,     /* join when the coordinator is known */
    SAMSA_COORDINATOR_WAIT_APP,      /* a REVOKE/LOST event must run first */
    SAMSA_COORDINATOR_JOINING,       /* JoinGroup in flight */
    SAMSA_COORDINATOR_AWAIT_MD,      /* leader: metadata for members' topics */
    SAMSA_COORDINATOR_SYNCING,       /* SyncGroup in flight */
    SAMSA_COORDINATOR_STABLE,
} samsa_coordinator_state_t;

/* A member as the leader sees it in a JoinGroup answer.  [lock] */
typedef struct samsa_cmember {
    char                 *member_id;
    char                 *instance_id;
    samsa_cproto_sub_t    sub;
} samsa_cmember_t;

struct samsa_cmembership;

/* The group part of the consumer.  [lock] */
typedef struct samsa_coordinator {
    const struct samsa_cmembership  *mship;     /* the protocol's
                                                   membership: classic or
                                                   KIP-848, chosen at
                                                   subscribe */
    samsa_coordinator_state_t   state;
    int32_t                coord_id;        /* broker id, -1 unknown */
    int32_t                coord_node;      /* netclient node id */
    bool                   coord_inflight;
    int64_t                coord_retry_ms;
    char                  *member_id;       /* "" before the first join */
    int32_t                generation;      /* -1 none */
    char                  *protocol;        /* assignor chosen */
    char                  *leader_id;
    samsa_cmember_t       *members;         /* leader only */
    int32_t                nmembers;
    bool                   hb_inflight;
    int64_t                hb_next_ms;
    int64_t                hb_last_ok_ms;
    bool                   of_inflight;     /* OffsetFetch for positions */
    int64_t                join_retry_ms;
    int64_t                join_start_ns;
    char                 **joined_topics;   /* own topics at the join */
    int32_t                njoined_topics;
    int32_t               *joined_nparts;
    bool                   cooperative;     /* protocol COOPERATIVE */
    samsa_err_t            fatal;           /* FENCED_INSTANCE_ID ... */
    bool                   poll_expired;
    /* group.protocol=consumer (coordinator_consumer.c); generation and member_id
       above mirror its epoch and id, for commits */
    samsa_membership_t          k848;
    samsa_membership_tp_t      *k848_added;      /* assign once revoked */
    int32_t                nk848_added;
    samsa_cop_t           *k848_leave_op;   /* done when the leave
                                               heartbeat is answered */
    bool                   k848_left;       /* left on purpose: no
                                               rejoin */
    bool                   k848_id_set;     /* member id initialised */
    bool                   k848_id_from_coord;  /* v0: the coordinator
                                                   gave the member id */
} samsa_coordinator_t;

typedef enum samsa_csub_mode {
    SAMSA_CSUB_NONE = 0,
    SAMSA_CSUB_ASSIGN,
    SAMSA_CSUB_TOPICS,
    SAMSA_CSUB_PATTERN,
} samsa_csub_mode_t;

struct samsa_consumer {
    pthread_mutex_t           lock;         /* recursive */
    pthread_cond_t            cond;         /* [lock] app waits here */
    samsa_cconf_t             cc;           /* [const] */
    pthread_t                 thread;
    _Atomic bool              running;      /* [atomic] */
    _Atomic bool              woken;        /* [atomic] wakeup() */
    samsa_netclient_t        *nc;           /* [bg] */
    /* metadata: the topics in mdc are installed by the bg thread under
     * lock and read under lock, so borrowed snapshots (samsa_mdcache_peek)
     * stay valid while lock is held */
    samsa_mdcache_t          *mdc;          /* [const] */
    char                    **md_extra;     /* [lock] topics asked for by
                                               ops */
    int32_t                   nmd_extra;    /* [lock] */
    bool                      md_inflight;  /* [lock] */
    int64_t                   md_last_ms;   /* [lock] last sent or
                                               answered (retry backoff) */
    /* subscription and assignment [lock] */
    samsa_csub_mode_t         sub_mode;
    char                    **sub_topics;
    int32_t                   nsub_topics;
    samsa_re_t               *sub_re;
    bool                      has_re;
    char                     *sub_re_src;   /* the pattern as given */
    samsa_cpart_t           **parts;
    int32_t                   nparts;
    int32_t                   rr;           /* poll's round-robin start */
    uint64_t                  gen_seq;
    int32_t                  *fetch_nodes;  /* nodes with a Fetch out */
    int32_t                   nfetch_nodes;
    /* group [lock] */
    samsa_coordinator_t            grp;
    int64_t                   last_poll_ms;
    int64_t                   next_autocommit_ms;
    samsa_rebalance_cb       *rebalance_cb;
    void                     *rebalance_opaque;
    /* queues [lock] */
    samsa_cevent_t           *ev_head, *ev_tail;
    samsa_cop_t              *op_head, *op_tail;
    bool                      closing;
    /* metrics [atomic] */
    _Atomic int64_t           m_records;
    _Atomic int64_t           m_bytes;
    _Atomic int64_t           m_fetches;
    _Atomic int64_t           m_fetch_ns;
    _Atomic int64_t           m_rebalances;
    _Atomic int64_t           m_rebalance_ns;
    _Atomic int64_t           m_commits;
};

/* ---- consumer.c --------------------------------------------------------- */

/* The partition, or NULL.  @locks c->lock */
samsa_cpart_t *samsa_consumer_part_find(samsa_consumer_t *c,
                                        const char *topic, size_t topic_len,
                                        int32_t partition);

/* The partition if it is still at generation gen (no seek, reset or new
 * assignment since), else NULL.  @locks c->lock */
samsa_cpart_t *samsa_consumer_part_at_gen(samsa_consumer_t *c,
                                          const char *topic,
                                          int32_t partition, uint64_t gen);

/* The metadata of topic, or NULL; borrowed until c->lock is released.
 * @locks c->lock */
const samsa_mdtopic_t *samsa_consumer_md_find(samsa_consumer_t *c,
                                              const char *topic,
                                              size_t topic_len);

/* Leader of (topic, partition) or -1.  @locks c->lock */
int32_t samsa_consumer_leader(samsa_consumer_t *c, const char *topic,
                              int32_t partition);

/* Ask for metadata soon (and wake the background thread). */
void samsa_consumer_md_request(samsa_consumer_t *c);

/* Drop the partition's buffered records.  @locks c->lock */
void samsa_consumer_part_drop_chunks(samsa_cpart_t *p);

/* A new generation number for a partition's fetch state. */
uint64_t samsa_consumer_next_gen(samsa_consumer_t *c);

/* Queue an event for the app and wake it.  @locks c->lock */
void samsa_consumer_event_push(samsa_consumer_t *c, samsa_cevent_t *ev);

/* Finish op: wake the waiter, or queue its callback, or free it.
 * @locks c->lock */
void samsa_consumer_op_done(samsa_consumer_t *c, samsa_cop_t *op,
                            samsa_err_t err);

/* Take op out of the queue (it was sent, or is being finished).
 * @locks c->lock */
void samsa_consumer_op_unlink(samsa_consumer_t *c, samsa_cop_t *op);

/* Ask for metadata of topic too (an operation needs it).
 * @locks c->lock */
void samsa_consumer_md_want(samsa_consumer_t *c, const char *topic);

/* Wait on c->cond until deadline_ms (monotonic ms; INT64_MAX: none);
 * false once it passed.  @thread app @locks c->lock (held once) */
bool samsa_consumer_wait(samsa_consumer_t *c, int64_t deadline_ms);

/* now + timeout_ms (-1: default.api.timeout.ms). */
int64_t samsa_consumer_deadline_ms(const samsa_consumer_t *c,
                                   int64_t timeout_ms);

/* Queue op for the background thread.  @locks c->lock */
void samsa_consumer_op_push(samsa_consumer_t *c, samsa_cop_t *op);

/* Run op and wait for it (or deadline_ms); copies offsets, timestamps and
 * errors into results when given.  @owns op  @thread app
 * @locks c->lock (held once) */
samsa_err_t samsa_consumer_op_run(samsa_consumer_t *c, samsa_cop_t *op,
                                  int64_t deadline_ms,
                                  samsa_topic_partition_t *results);

void samsa_consumer_op_free(samsa_cop_t *op);

/* Positions of the assigned, positioned partitions (moved_only: those not
 * committed since), *n entries; free with samsa_tp_array_free().
 * @locks c->lock */
samsa_topic_partition_t *samsa_consumer_positions(samsa_consumer_t *c,
                                                  size_t *n,
                                                  bool moved_only);

/* Copy n entries (topic strings too). */
samsa_topic_partition_t *samsa_consumer_tps_dup(
    const samsa_topic_partition_t *tps, size_t n);

/* The topics this member subscribes to now (list, or the pattern's
 * matches in metadata), as a NULL-terminated array of borrowed names
 * (free the array only).  @locks c->lock */
const char **samsa_consumer_sub_topics(samsa_consumer_t *c, int32_t *n);

/* ---- cfetch.c ----------------------------------------------------------- */

/* Send what is due: ListOffsets for resets and ops, Fetch per broker.
 * @thread bg @locks c->lock */
void samsa_cfetch_work(samsa_consumer_t *c, int64_t now_ms);

/* ---- group membership: classic (coordinator.c) or KIP-848 (coordinator_consumer.c) ---- */

/* What differs between the two protocols; the rest (coordinator,
 * commits, committed offsets, auto-commit) is coordinator.c's, shared.  The
 * consumer picks one at subscribe() from group.protocol.
 * @thread bg (step, md_changed, leave) or app (join, event_done)
 * @locks c->lock, always */
typedef struct samsa_cmembership {
    const char  *name;
    /* subscribe() or a new subscription: (re)join */
    void       (*join)(samsa_consumer_t *c);
    /* the coordinator is ready: join, heartbeat, reconcile */
    void       (*step)(samsa_consumer_t *c, int64_t now);
    /* metadata changed */
    void       (*md_changed)(samsa_consumer_t *c);
    /* leave the group (op may be NULL); false: nothing was sent and op
       is the caller's to finish */
    bool       (*leave)(samsa_consumer_t *c, samsa_cop_t *op, int64_t now);
    /* the app ran a REVOKE or LOST event's callback and dropped its
       partitions */
    void       (*event_done)(samsa_consumer_t *c, const samsa_cevent_t *ev);
    /* membership given up (unsubscribe) */
    void       (*reset)(samsa_consumer_t *c);
} samsa_group_protocol_t;

extern const samsa_group_protocol_t  samsa_group_protocol_classic;
extern const samsa_group_protocol_t  samsa_group_protocol_consumer;

/* ---- coordinator.c: shared with coordinator_consumer.c ------------------------------------ */

/* Send frame to the coordinator; false (frame freed) if it could not go.
 * @thread bg @locks c->lock */
bool samsa_coordinator_send(samsa_consumer_t *c, samsa_buf_t *frame, int16_t api,
                       int16_t v, samsa_nc_resp_fn *cb, void *opaque,
                       int64_t now);

/* The version to use with the coordinator, or -1. */
int16_t samsa_coordinator_version(samsa_consumer_t *c, int16_t api, int16_t lo,
                             int16_t hi);

/* Find the coordinator again (after retry.backoff.ms). */
void samsa_coordinator_coord_dead(samsa_consumer_t *c, samsa_err_t err);

/* A fatal group error: every later poll() returns it. */
void samsa_coordinator_fatal(samsa_consumer_t *c, samsa_err_t err,
                        const char *what);

/* max.poll.interval.ms: has the app gone longer than that without poll()?
 * Warns (it is leaving the group) when it has. */
bool samsa_coordinator_poll_overdue(samsa_consumer_t *c, int64_t now);

/* Queue a rebalance event (tps owned by the event). */
void samsa_coordinator_push(samsa_consumer_t *c, samsa_cevent_kind_t kind,
                       samsa_topic_partition_t *tps, size_t n, bool rejoin);

/* ---- coordinator.c ----------------------------------------------------------- */

/* Coordinator, join/sync/heartbeat, commits, OffsetFetch; returns the
 * time until it next needs to run.  @thread bg @locks c->lock */
int64_t samsa_coordinator_work(samsa_consumer_t *c, int64_t now_ms);

/* Metadata changed: rejoin if this member's topics changed.
 * @thread bg @locks c->lock */
void samsa_coordinator_md_changed(samsa_consumer_t *c);

/* enable.auto.commit: when auto.commit.interval.ms has passed, queue an
 * async commit of the positions - called from poll(), so that what is
 * committed was returned by an earlier poll() (Java's at-least-once
 * auto-commit).  @thread app @locks c->lock */
void samsa_coordinator_autocommit(samsa_consumer_t *c, int64_t now_ms);

void samsa_coordinator_fini(samsa_coordinator_t *g);

#endif /* SAMSA_CLIENT_CONSUMER_CONSUMER_INT_H */
