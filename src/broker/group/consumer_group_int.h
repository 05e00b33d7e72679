/*
 * broker/group/consumer_group_int.h - the consumer group's state (KIP-848) shared by
 * broker/group/consumer_group.c (heartbeats, reconciliation, timers) and
 * broker/group/consumer_group_store.c (its records in __consumer_offsets).
 * Threads: everything under the owning samsa_grp_t's lock.
 */
#ifndef SAMSA_BROKER_GROUP_CONSUMER_GROUP_INT_H
#define SAMSA_BROKER_GROUP_CONSUMER_GROUP_INT_H

#include "broker/group/grp_int.h"
#include "proto/batch.h"
#include "proto/rd.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/re.h"

/* The records a group and each member have (consumer_group_store.c keeps the value
 * last written of each, to write only what changed). */
enum { CG_REC_GROUP, CG_REC_TOPICS, CG_REC_TARGET_META, CG_REC_GROUP_N };
enum { CG_REC_MEMBER, CG_REC_MEMBER_TARGET, CG_REC_MEMBER_CURRENT,
       CG_REC_MEMBER_N };

/* Kafka's special member epochs. */
#define CG_LEAVE_EPOCH         (-1)
#define CG_LEAVE_STATIC_EPOCH  (-2)

typedef struct cg_tp {
    samsa_uuid_t  tid;
    int32_t       p;
} cg_tp_t;

/* A set of partitions, sorted by (topic id, partition). */
typedef struct cg_set {
    cg_tp_t  *v;
    size_t    n;
} cg_set_t;

typedef enum cg_mstate {
    CG_STABLE,                      /* has its target, or all it may have */
    CG_UNREVOKED,                   /* must first revoke some partitions */
    CG_UNRELEASED,                  /* waits for others to release some */
} cg_mstate_t;

typedef struct cg_timer cg_timer_t;

typedef struct cg_member {
    char         *id;
    char         *instance_id;      /* NULL: dynamic */
    char         *rack_id;          /* NULL: none */
    char         *client_id;
    char         *client_host;
    char         *assignor;         /* ServerAssignor, NULL: none */
    char        **topics;           /* subscription, sorted, unique */
    size_t        ntopics;
    char         *regex;            /* SubscribedTopicRegex, NULL: none */
    samsa_re_t   *re;               /* regex compiled (when set) */
    int32_t       rebalance_timeout_ms;
    int32_t       epoch;
    int32_t       prev_epoch;
    cg_mstate_t   state;
    cg_set_t      assigned;         /* may use now */
    cg_set_t      revoking;         /* must give up */
    cg_set_t      target;
    cg_timer_t   *session;          /* borrowed: cleared on completion */
    cg_timer_t   *revoke;           /* armed while CG_UNREVOKED */
    bool          has_meta;         /* loaded: its metadata record seen */
    samsa_buf_t   rec[CG_REC_MEMBER_N]; /* values last written (consumer_group_store.c) */
} cg_member_t;

/* A subscribed topic as of the last group epoch. */
typedef struct cg_topic {
    char          *name;
    samsa_uuid_t   id;
    int32_t        npartitions;
} cg_topic_t;

struct samsa_consumer_group {
    int32_t        group_epoch;
    int32_t        assignment_epoch;
    char          *assignor;        /* of the last target assignment */
    cg_member_t  **members;         /* in join order */
    size_t         nmembers;
    cg_topic_t    *topics;          /* sorted by name */
    size_t         ntopics;
    samsa_buf_t    rec[CG_REC_GROUP_N];  /* values last written (consumer_group_store.c) */
    char         **gone;          /* removed members whose records need
                                     tombstones (consumer_group_store.c) */
    size_t         ngone;
};

/* ---- consumer_group.c ------------------------------------------------------------ */

void samsa_consumer_group_set_add(cg_set_t *s, const cg_tp_t *tp);
void samsa_consumer_group_set_sort(cg_set_t *s);
void samsa_consumer_group_set_clear(cg_set_t *s);

/* A SubscribedTopicRegex compiled to match whole names; false with why. */
bool samsa_consumer_group_regex_compile(const char *pattern, size_t len,
                                        samsa_re_t **re, char *why,
                                        size_t why_size);

/* A member record's member, created (empty, epoch 0) if new (load). */
cg_member_t *samsa_consumer_group_member_get(samsa_consumer_group_t *cg, samsa_slice_t id);

/* Take a loaded member out, writing nothing (a tombstone at load). */
void samsa_consumer_group_member_drop(samsa_consumer_group_t *cg, cg_member_t *m);

/* After the load: members without metadata go, the others get session
 * timers from now (and revocation timers when revoking), as Kafka re-arms
 * them; a group left with nothing stops being a consumer group.
 * @locks grp held */
void samsa_consumer_group_load_finish(samsa_grp_t *grp);

/* ---- consumer_group.c: what samsa_consumer_group_ops holds ------------- */

/* Free a consumer group's state (its timers must be gone: they hold a ref
 * of the group).  NULL is a no-op. */
void samsa_consumer_group_free(samsa_consumer_group_t *cg);

/* Members of the consumer group (0 for NULL). */
size_t samsa_consumer_group_nmembers(const samsa_consumer_group_t *cg);

/* Kafka's ConsumerGroupState name: Empty, Assigning, Reconciling,
 * Stable.  @locks grp held */
const char *samsa_consumer_group_state_name(const samsa_consumer_group_t *cg);

/* Whether a member subscribes to topic.  @locks grp held */
bool samsa_consumer_group_subscribes(const samsa_consumer_group_t *cg, const char *topic);

/* OffsetCommit's member check (Kafka's ConsumerGroup.validateOffsetCommit:
 * the member epoch is the generation).  @locks grp held */
samsa_err_t samsa_consumer_group_commit_check(samsa_grp_t *grp, samsa_slice_t member_id,
                                    int32_t member_epoch);

/* TxnOffsetCommit's member check for a consumer group (UNKNOWN_MEMBER_ID,
 * ILLEGAL_GENERATION).  @locks grp held */
samsa_err_t samsa_consumer_group_txn_commit_check(samsa_grp_t *grp,
                                        samsa_slice_t member_id,
                                        int32_t member_epoch);

/* ---- consumer_group_store.c -------------------------------------------------------- */

/* Append what changed in the group since the last write (members gone:
 * tombstones) as one batch; on failure nothing counts as written.
 * @locks grp held */
SAMSA_MUST_CHECK samsa_err_t samsa_consumer_group_store_write(samsa_grp_t *grp);

/* Tombstones of every record of the group's consumer state, appended to
 * *recs (n of them so far); returns the new count.  @locks grp held */
size_t samsa_consumer_group_store_tombstones(samsa_grp_t *grp,
                                   samsa_grpstore_rec_t **recs, size_t n);

/* Append tombstones of every record of the group's consumer state (an
 * empty consumer group becoming a classic one).  @locks grp held */
SAMSA_MUST_CHECK samsa_err_t samsa_consumer_group_store_forget(samsa_grp_t *grp);

/* One consumer group record read back at start (type: the key's version,
 * 3-8; krd after it): rebuilds the group.  Runs on main, no handler yet. */
void samsa_consumer_group_store_load(samsa_grpcoord_t *gc, int16_t type,
                           samsa_rd_t *krd, const samsa_record_t *rec,
                           samsa_arena_t *arena);

/* Forget what was written (the state is being freed). */
void samsa_consumer_group_store_fini(samsa_consumer_group_t *cg);

#endif /* SAMSA_BROKER_GROUP_CONSUMER_GROUP_INT_H */
