/*
 * broker/replica.h - the broker's replica manager for partitions with a
 * replication factor above 1 (issue 19 steps 2 and 3, docs/REPLICATION.md),
 * behind unstable.replication.enable: without it, or with one replica,
 * nothing here runs and the high watermark is the LEO as on one node.
 *
 * Follower side (Kafka's ReplicaFetcherManager/ReplicaFetcherThread): for
 * every partition this node replicates but does not lead in the metadata
 * image, a fetcher thread ("rfetch-<leader>-<i>", num.replica.fetchers
 * per leader broker; a partition goes to fetcher hash % n) sends Fetch v15
 * with ReplicaState {this node id, its broker epoch} to the leader's
 * inter-broker listener (inter.broker.listener.name, else the leader's
 * first PLAINTEXT endpoint) over one kept connection
 * (samsa_forward_connect), appends what comes back as the leader wrote it
 * (samsa_plog_append_replica) and moves its high watermark and log start
 * offset from the answer.  A leader change in the image moves the
 * partition to the new leader's fetcher; becoming leader, or leaving the
 * replicas, stops fetching it.  Truncation (KIP-101/279/320, as Kafka
 * 2.7+): each fetch sends LastFetchedEpoch; a DivergingEpoch answer
 * truncates the log where samsa_plog_truncation_offset says and it is
 * fetched again; OFFSET_OUT_OF_RANGE asks the leader's LEO with
 * OffsetForLeaderEpoch and truncates to it, or, below the leader's log
 * start, restarts the log there (samsa_plog_truncate_fully).  Only a log
 * without leader epochs truncates to its high watermark on a new leader
 * epoch.
 *
 * Leader side (Kafka's Partition): every Fetch from a follower records its
 * LEO (the fetch offset) and caught-up time (broker/isrstate.h) and moves
 * the high watermark to the smallest LEO over the maximal ISR (KIP-497:
 * the committed ISR plus a pending change's members); when it moves, the
 * produce purgatory (acks=all) and the fetch purgatory (consumers' long
 * polls) are checked for the partition.  ISR changes (Kafka's
 * maybeShrinkIsr / maybeExpandIsr): every replica.lag.time.max.ms / 2 the
 * ISR manager (broker/isrmgr.h, its "isr-manager" thread) asks for the
 * shrinks samsa_isrstate_shrink finds; a follower fetch that makes a
 * replica outside the ISR samsa_isrstate_can_join asks to add it.  One
 * change per partition is in flight (AlterPartition with the leader epoch
 * and partition epoch of the ISR it changes); a committed answer is the
 * ISR at once, with its partition epoch (an image with an older partition
 * epoch leaves it); a refused one waits replica.fetch.backoff.ms before
 * the next proposal.  min.insync.replicas counts the committed ISR.
 *
 * Start-up (docs/REPLICATION.md bug 3): a cluster node applies no image
 * before samsa_replmgr_caught_up, and the handlers let it lead a
 * replicated partition only where samsa_replmgr_leads says so.
 *
 * Threads: the image listener runs on the thread publishing images;
 * handlers call the leader-side functions; the fetcher threads and the
 * ISR manager are the manager's.  rm->lock guards the partition table, the
 * fetchers and the ISR manager pointer; it is never held across I/O or a
 * purgatory call (lock order: purgatory op lock -> replica manager lock
 * -> ISR manager queue lock, plog lock).
 */
#ifndef SAMSA_BROKER_REPLICA_H
#define SAMSA_BROKER_REPLICA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>

#include "broker/purgatory.h"
#include "config/config.h"
#include "log/logmgr.h"
#include "meta/controller/controller.h"
#include "meta/meta.h"

typedef struct samsa_replmgr samsa_replmgr_t;

typedef struct samsa_replmgr_conf {
    const samsa_config_t  *cfg;
    int32_t                node_id;
    samsa_meta_t          *meta;        /* images: leaders, endpoints */
    samsa_logmgr_t        *logs;
    samsa_purgatory_t     *produce;     /* woken when a HW moves */
    samsa_purgatory_t     *fetch;
} samsa_replmgr_conf_t;

/* The manager (no thread until a partition needs fetching): *out.  Every
 * object conf names outlives it.  @thread main */
void samsa_replmgr_new(const samsa_replmgr_conf_t *conf,
                       samsa_replmgr_t **out);

/* Start the ISR manager (broker/isrmgr.h): from now on leaders propose
 * ISR changes to the active controller, through ctrl (which outlives
 * rm).  Nothing when the gate is off.  @returns SAMSA_ERR__IO when its
 * thread cannot start.  @thread main */
SAMSA_MUST_CHECK samsa_err_t samsa_replmgr_isr_start(samsa_replmgr_t *rm,
                                                     samsa_controller_t *ctrl);

/* Stop the ISR manager and join every fetcher (each ends within its
 * current exchange: the connection is shut down); image changes are
 * ignored from then on.
 * Idempotent.  @thread main, before the purgatories go */
void samsa_replmgr_stop(samsa_replmgr_t *rm);

/* samsa_replmgr_stop, then drop the partitions and free; called once no
 * image can be published any more, before the logs close.  NULL: no-op.
 * @thread main */
void samsa_replmgr_free(samsa_replmgr_t *rm);

/* The meta listener (samsa_meta_listen): follow the image's leaders.
 * @thread the image publisher */
void samsa_replmgr_on_image(void *ctx, const samsa_image_t *old_img,
                            const samsa_image_t *new_img);

/* This node registered and caught up with the metadata log (the active
 * controller's heartbeat answer said IsCaughtUp, broker/lifecycle.c): from
 * now on it leads and follows as the image says, starting with the
 * current image.  Before it, a cluster node applies no image: the one it
 * replayed at start may name it leader in an epoch the controller ends
 * with its new registration (Kafka's broker serves no partition before
 * its initial catch-up).  Idempotent; nothing when the gate is off.
 * @thread broker-lifecycle */
void samsa_replmgr_caught_up(samsa_replmgr_t *rm);

/* May this node act as leader of topic-partition, a partition with more
 * than one replica the image says it leads in leader_epoch?  Only once
 * the manager leads it in that epoch too (not before
 * samsa_replmgr_caught_up, nor while the image listener has not run):
 * else Produce and Fetch answer NOT_LEADER_OR_FOLLOWER (retriable), not
 * an acks=all success nobody replicated.  true when the gate is off.
 * @thread handler */
bool samsa_replmgr_leads(samsa_replmgr_t *rm, const char *topic,
                         size_t topic_len, int32_t partition,
                         int32_t leader_epoch);

/* KIP-392: does this node follow topic-partition, a replicated partition
 * another node leads in leader_epoch (the image's epoch, taken by the
 * manager)?  Then a consumer's Fetch v11+ may read it here, up to the HW
 * the leader sent.  @thread handler */
bool samsa_replmgr_follows(samsa_replmgr_t *rm, const char *topic,
                           size_t topic_len, int32_t partition,
                           int32_t leader_epoch);

/* Is replica_id a follower of topic-partition, which this node leads with
 * more than one replica?  Then a Fetch from it reads up to the LEO.
 * @thread handler */
bool samsa_replmgr_is_follower(samsa_replmgr_t *rm, const char *topic,
                               size_t topic_len, int32_t partition,
                               int32_t replica_id);

/* A Fetch from follower replica_id at fetch_offset, its log starting at
 * log_start_offset: its state and the high watermark move (and the
 * purgatories are checked when it did).  Nothing for a partition this
 * node does not lead.  @thread handler */
void samsa_replmgr_follower_fetch(samsa_replmgr_t *rm, const char *topic,
                                  size_t topic_len, int32_t partition,
                                  int32_t replica_id, int64_t fetch_offset,
                                  int64_t log_start_offset);

/* One follower as the leader sees it (KIP-392's ReplicaView). */
typedef struct samsa_replmgr_follower_view {
    int32_t  id;
    int64_t  log_end_offset;            /* -1: no fetch yet */
    int64_t  log_start_offset;          /* -1: unknown */
    int64_t  last_caught_up_ms;         /* -1: never */
} samsa_replmgr_follower_view_t;

/* The followers of topic-partition, a replicated partition this node
 * leads in leader_epoch, into out (at most max): their count; 0 when it
 * does not lead it so.  @thread handler */
size_t samsa_replmgr_followers(samsa_replmgr_t *rm, const char *topic,
                               size_t topic_len, int32_t partition,
                               int32_t leader_epoch,
                               samsa_replmgr_follower_view_t *out,
                               size_t max);

/* The leader appended to topic-partition: with the ISR reduced to itself
 * the high watermark moves at once.  @thread handler */
void samsa_replmgr_leader_appended(samsa_replmgr_t *rm, const char *topic,
                                   size_t topic_len, int32_t partition);

/* acks=all on a replicated partition this node leads: true and *nisr (the
 * ISR's size now), *min_isr (min.insync.replicas: the topic's, else the
 * broker's) and *leader_epoch (the epoch it leads).  false: not
 * replicated here (one replica, the gate off) or no longer led by this
 * node.  @thread handler, produce purgatory */
bool samsa_replmgr_leader_isr(samsa_replmgr_t *rm, const char *topic,
                              size_t topic_len, int32_t partition,
                              size_t *nisr, int32_t *min_isr,
                              int32_t *leader_epoch);

/* The ISR changes this node's leaderships made and the controller
 * committed since start: *shrinks smaller ISRs, *expands larger ones
 * (Kafka's IsrShrinksPerSec / IsrExpandsPerSec).  NULL rm: 0, 0.
 * @thread any */
void samsa_replmgr_isr_changes(samsa_replmgr_t *rm, uint64_t *shrinks,
                               uint64_t *expands);

/* samsa_replmgr_leader_isr by the partition's purgatory key
 * (samsa_purgatory_tp_key): for a delayed Produce.  @thread any */
bool samsa_replmgr_leader_isr_key(samsa_replmgr_t *rm, const char *key,
                                  size_t *nisr, int32_t *min_isr,
                                  int32_t *leader_epoch);

#endif /* SAMSA_BROKER_REPLICA_H */
