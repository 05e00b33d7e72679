/*
 * broker/isrstate.h - the leader's view of its followers, as pure
 * decisions (issue 19 steps 3-4, docs/REPLICATION.md): Kafka's
 * Replica.updateFetchState caught-up rule, the high watermark as the
 * smallest log end offset over the (maximal) ISR, the ISR shrink and
 * expand candidates of Partition.getOutOfSyncReplicas / isFollowerInSync,
 * and the acks=all answer of Partition.checkEnoughReplicasReachOffset.
 * No I/O, no locks, no clock: every time is passed in.
 * Wired (broker/replica.h, h_Produce.c): follower_fetch, high_watermark,
 * check_min_isr, acks_answer (acks_done), and through AlterPartition
 * (broker/isrmgr.h) shrink, can_join and maximal.
 * Threads: a samsa_isrstate_follower_t belongs to whoever owns the
 * partition's replica state (the replica manager's lock).
 */
#ifndef SAMSA_BROKER_ISRSTATE_H
#define SAMSA_BROKER_ISRSTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>

/* One follower as its leader tracks it (Kafka's ReplicaState). */
typedef struct samsa_isrstate_follower {
    int32_t  id;                        /* broker id */
    int64_t  log_end_offset;            /* its last fetch offset; -1:
                                           unknown (no fetch yet) */
    int64_t  last_caught_up_ms;         /* -1: never caught up */
    int64_t  last_fetch_leader_leo;     /* the leader's LEO at its
                                           previous fetch; -1: none */
    int64_t  last_fetch_ms;             /* its previous fetch; -1: none */
    int64_t  log_start_offset;          /* its last fetch's LogStartOffset
                                           (KIP-392's choice); -1: unknown */
} samsa_isrstate_follower_t;

/* A follower not heard from yet (a new leader resets its followers so). */
void samsa_isrstate_follower_init(samsa_isrstate_follower_t *f, int32_t id);

/* A fetch from f at fetch_offset, now_ms, while the leader's LEO is
 * leader_leo (Kafka's updateFetchState): caught up now when fetch_offset
 * >= leader_leo; else caught up as of its previous fetch when
 * fetch_offset >= the leader's LEO at that previous fetch.  Then f's LEO
 * becomes fetch_offset and the leader's LEO and now_ms are remembered. */
void samsa_isrstate_follower_fetch(samsa_isrstate_follower_t *f,
                                   int64_t fetch_offset, int64_t leader_leo,
                                   int64_t now_ms);

/* Kafka's isCaughtUp: at the leader's LEO, or caught up no longer than
 * lag_ms (replica.lag.time.max.ms) ago. */
bool samsa_isrstate_caught_up(const samsa_isrstate_follower_t *f,
                              int64_t leader_leo, int64_t now_ms,
                              int64_t lag_ms);

/* The high watermark: the smallest LEO over leader_id (at leader_leo)
 * and the followers of fs that are in isr (a follower in isr that fs
 * does not hold, or with an unknown LEO, holds it at old_hw); never below
 * old_hw (a high watermark only moves forward) nor above leader_leo. */
int64_t samsa_isrstate_high_watermark(int64_t old_hw, int64_t leader_leo,
                                      int32_t leader_id,
                                      const samsa_isrstate_follower_t *fs,
                                      size_t nfs, const int32_t *isr,
                                      size_t nisr);

/* The ISR after dropping the followers that are out of sync (not caught
 * up within lag_ms), into out (room for nisr ids), in ISR order; the
 * leader never leaves.  Returns the new count; equal to nisr: no shrink
 * is needed.  An ISR member that fs does not hold is kept (a new leader
 * gives its followers lag_ms from when it took over: the caller inits
 * them with last_caught_up_ms = the takeover time). */
size_t samsa_isrstate_shrink(const int32_t *isr, size_t nisr,
                             int32_t leader_id,
                             const samsa_isrstate_follower_t *fs, size_t nfs,
                             int64_t leader_leo, int64_t now_ms,
                             int64_t lag_ms, int32_t *out);

/* Kafka's isFollowerInSync for an expansion: f, not in the ISR, has
 * reached the high watermark and the start offset of the leader's current
 * epoch (so it holds everything the ISR agreed on in this epoch). */
bool samsa_isrstate_can_join(const samsa_isrstate_follower_t *f, int64_t hw,
                             int64_t leader_epoch_start_offset);

/* KIP-497's maximal ISR while an ISR change is in flight: isr's members,
 * then pending's members that isr lacks (an expansion counts its new
 * member for the high watermark at once; a shrink's leaving members
 * count until it commits), into out (room for nisr + npending).
 * Returns the count. */
size_t samsa_isrstate_maximal(const int32_t *isr, size_t nisr,
                              const int32_t *pending, size_t npending,
                              int32_t *out);

/* acks=all for a batch whose last offset + 1 is required_offset (Kafka's
 * checkEnoughReplicasReachOffset): false while the high watermark is
 * below it (keep waiting); true once it is reached, with *err NONE, or
 * NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR (nisr) has shrunk below
 * min_isr meanwhile. */
bool samsa_isrstate_acks_done(int64_t hw, int64_t required_offset,
                              size_t nisr, int32_t min_isr, samsa_err_t *err);

/* A delayed acks=all answer, as the produce purgatory asks it: leads
 * tells whether this node leads the partition now, leader_epoch its
 * epoch then, append_epoch the epoch it led when it appended the batch.
 * Not leading in append_epoch any more (a follower, or leader again in a
 * later epoch): true with NOT_LEADER_OR_FOLLOWER whatever hw says (a
 * follower's HW is the new leader's, over a log that may have lost the
 * batch to truncation: Kafka's checkEnoughReplicasReachOffset answers a
 * former leader so too); else samsa_isrstate_acks_done. */
bool samsa_isrstate_acks_answer(bool leads, int32_t leader_epoch,
                                int32_t append_epoch, int64_t hw,
                                int64_t required_offset, size_t nisr,
                                int32_t min_isr, samsa_err_t *err);

/* Before an acks=all append (Kafka's appendRecordsToLeader):
 * NOT_ENOUGH_REPLICAS when the ISR (nisr) is smaller than min_isr. */
SAMSA_MUST_CHECK samsa_err_t samsa_isrstate_check_min_isr(size_t nisr,
                                                          int32_t min_isr);

#endif /* SAMSA_BROKER_ISRSTATE_H */
