/*
 * broker/broker.h - what the broker's request handlers share: the node's
 * identity, the configuration, the metadata (image and controller), the
 * partition logs, the purgatories for delayed Produce and Fetch, the
 * group coordinator and the transaction coordinator.
 * Threads: built by main before any server starts, torn down after every
 * handler stopped; the pointers are [const] in between, and each object
 * they point to is thread-safe on its own.
 */
#ifndef SAMSA_BROKER_BROKER_H
#define SAMSA_BROKER_BROKER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <samsa/errors.h>

#include "broker/authz.h"
#include "broker/group/grp.h"
#include "broker/node.h"
#include "broker/pidmgr.h"
#include "broker/purgatory.h"
#include "broker/quota.h"
#include "broker/replica.h"
#include "broker/route.h"
#include "broker/txn/txn.h"
#include "log/logmgr.h"
#include "meta/controller/controller.h"
#include "meta/meta.h"
#include "config/config.h"
#include "util/slice.h"

/* The transaction coordinator's check of a transactional Produce (KIP-890
 * style verification that AddPartitionsToTxn added the partition to the
 * producer's ongoing transaction): called on the handler thread, before
 * the append and outside every log lock, for each partition whose first
 * batch is transactional.  Return SAMSA_ERR_NONE to let the append go on,
 * or the partition's error (INVALID_TXN_STATE, PRODUCER_FENCED, ...).
 * samsa_broker_open() sets it to the transaction coordinator's check
 * once the coordinator is open (NULL before: no check). */
typedef samsa_err_t samsa_txn_verify_fn(void *ctx,
                                        samsa_slice_t transactional_id,
                                        int64_t producer_id,
                                        int16_t producer_epoch,
                                        const char *topic, int32_t partition);

/* Dynamic broker configs changed (or the hook was just installed): img
 * is the image now, borrowed for the call.  Called on the controller
 * thread (cluster mode: the quorum thread; or the installer's), under the broker's reconf lock; must not
 * call the controller nor wait for a handler. */
typedef void samsa_broker_reconf_fn(void *ctx, const samsa_image_t *img);

typedef struct samsa_broker {
    const samsa_config_t  *cfg;         /* [const] */
    const samsa_node_t    *node;        /* [const] */
    samsa_meta_t          *meta;        /* [const] where images are */
    samsa_controller_t    *ctrl;        /* [const] admin changes */
    samsa_logmgr_t        *logs;        /* [const] */
    samsa_purgatory_t     *produce;     /* [const] waiting for durability */
    samsa_purgatory_t     *fetch;       /* [const] waiting for min.bytes */
    samsa_replmgr_t       *repl;        /* [const] replicas (RF > 1) */
    samsa_grpcoord_t      *grp;         /* [const] group coordinator */
    samsa_pidmgr_t        *pids;        /* [const] producer ids */
    samsa_txn_verify_fn   *txn_verify;  /* [const] set before the servers
                                           start; NULL: no check */
    void                  *txn_verify_ctx; /* [const] */
    samsa_txncoord_t      *txn;         /* [const] transaction coordinator */
    samsa_quota_mgr_t     *quota;       /* [const] client quotas, the
                                           controller mutation one too */
    int32_t                fetch_max_bytes; /* [const] fetch.max.bytes */
    samsa_authz_t          authz;       /* [const] the authorizer's
                                           settings (broker/authz.h) */
    pthread_mutex_t        reconf_lock; /* guards the two below and their
                                           calls */
    samsa_broker_reconf_fn *reconf;     /* [reconf_lock] NULL: none */
    void                  *reconf_ctx;  /* [reconf_lock] */
    pthread_mutex_t        strays_lock; /* guards caught_up and the
                                           sweeps of stray logs */
    bool                   caught_up;   /* [strays_lock] cluster mode: the
                                           image has reached this broker's
                                           registration; before it, no log
                                           is taken for a stray */
} samsa_broker_t;

/* Open everything the handlers need, in order: the purgatories, the
 * partition logs (recovered), then the controller, whose first image
 * makes the logs match the metadata (missing logs created, strays
 * deleted), then the group coordinator (which loads __consumer_offsets).
 * On error errstr says what; call samsa_broker_close() anyway.
 * @thread main */
SAMSA_MUST_CHECK samsa_err_t samsa_broker_open(samsa_broker_t *b,
                                               const samsa_config_t *cfg,
                                               const samsa_node_t *node,
                                               char *errstr,
                                               size_t errstr_size);

/* Kafka's SecurityProtocol id of a security protocol name (PLAINTEXT 0,
 * SSL 1, SASL_PLAINTEXT 2, SASL_SSL 3; 0 for another).  @thread any */
int16_t samsa_broker_security_protocol_id(const char *name);

/* Register this node with the controller (samsa_controller_register_broker)
 * with the endpoints of b->node, which must be final (ports bound), so
 * that the image lists it unfenced: Metadata, DescribeCluster and the
 * leader checks answer from the image alone.  Each start registers anew
 * (a new incarnation id and broker epoch).  @thread main */
/* Cluster mode: the active controller answered IsCaughtUp (the image has
 * applied this broker's registration, so it holds every topic committed
 * before this start).  The first call deletes the stray logs (topics or
 * partitions deleted while the node was down), as Kafka's broker finds
 * strays only once its metadata has caught up; until then a partial image
 * of the replayed metadata log must not take live logs for strays.  It
 * also lets the replica manager lead and follow (samsa_replmgr_caught_up:
 * nothing before, issue 19).  Later calls do nothing.
 * @thread broker-lifecycle */
void samsa_broker_caught_up(samsa_broker_t *b);

SAMSA_MUST_CHECK samsa_err_t samsa_broker_register(samsa_broker_t *b,
                                                   char *errstr,
                                                   size_t errstr_size);

/* Install (fn != NULL: then called at once with the current image) or
 * remove (fn == NULL: waits for a call in progress) the hook that applies
 * dynamic broker configs.  @thread main */
void samsa_broker_set_reconf(samsa_broker_t *b, samsa_broker_reconf_fn *fn,
                             void *ctx);

/* After every handler stopped, while the socket servers still exist:
 * expire what waits in the purgatories so every request is answered (or
 * its answer dropped with its connection).  @thread main */
void samsa_broker_answer_waiting(samsa_broker_t *b);

/* After the socket servers are gone: the purgatories if still there, the
 * controller, the logs (closed cleanly), the metadata.  @thread main */
void samsa_broker_close(samsa_broker_t *b);

/* The log config of topic t (NULL: the broker's defaults). */
void samsa_broker_log_config(const samsa_broker_t *b, const samsa_image_t *img,
                             const samsa_image_topic_t *t,
                             samsa_log_config_t *lc);

/* The log of partition of the topic named name in img, with a reference
 * (drop it with samsa_plog_unref), and *topic set; or NULL when the topic,
 * the partition or its log does not exist.  @thread handler */
samsa_plog_t *samsa_broker_plog_find(samsa_broker_t *b,
                                     const samsa_image_t *img,
                                     samsa_slice_t name, int32_t partition,
                                     const samsa_image_topic_t **topic);

/* samsa_route_check of partition of t for this node, and (issue 19) for
 * a partition with more than one replica the replica manager's word too
 * (samsa_replmgr_leads): a node not caught up since it registered, or
 * whose replica manager has not taken the image's leadership yet, answers
 * NOT_LEADER_OR_FOLLOWER with *leader_id -1, not an acks=all success no
 * follower replicated.  @thread handler */
SAMSA_MUST_CHECK samsa_err_t samsa_broker_route_check(
    samsa_broker_t *b, const samsa_image_t *img,
    const samsa_image_topic_t *t, int32_t partition, const char *listener,
    samsa_arena_t *arena, samsa_route_leaders_t *leaders,
    int32_t *leader_id, int32_t *leader_epoch);

/* As samsa_broker_plog_find, for the APIs only a partition's leader
 * serves (ListOffsets, DeleteRecords): NONE and *plog (a reference) when
 * this node leads the partition in img; NOT_LEADER_OR_FOLLOWER when it
 * exists but another node, or none, leads it (broker/route.h), or this
 * node holds no log of it (as Kafka's ReplicaManager answers a partition
 * its metadata has and it does not host); UNKNOWN_TOPIC_OR_PARTITION when
 * the partition does not exist.  *topic
 * is set as samsa_broker_plog_find sets it.  @thread handler */
SAMSA_MUST_CHECK samsa_err_t samsa_broker_plog_find_leader(
    samsa_broker_t *b, const samsa_image_t *img, samsa_slice_t name,
    int32_t partition, const samsa_image_topic_t **topic,
    samsa_plog_t **plog);

#endif /* SAMSA_BROKER_BROKER_H */
