/*
 * meta/controller/ctlisr.c - AlterPartition (API 56, KIP-497) on the
 * controller thread, as Kafka's ReplicationControlManager.alterPartition
 * and validateAlterPartitionData: a partition leader's proposed ISR is
 * checked against the batch's image (the sender's broker epoch; the
 * topic and partition; the leader epoch and partition epoch it saw, which
 * fence a stale request; that it leads the partition; that the ISR holds
 * only replicas, once each, the leader among them; the leader recovery
 * state; KIP-841's eligibility of every member: registered, unfenced, not
 * in controlled shutdown, with KIP-903 the broker epoch the leader saw)
 * and becomes a PartitionChangeRecord (ISR only: the leader stays; the
 * replay bumps the partition epoch).  An ISR equal to the current one
 * writes nothing and answers the current state, as PartitionChangeBuilder
 * does.
 * What is simplified: samsa never writes LeaderRecoveryState=RECOVERING
 * (an unclean election does not set it, ctlbrokers.c) and the image does
 * not keep it, so every partition is RECOVERED here: a request asking for
 * RECOVERING is INVALID_REQUEST (Kafka's "RECOVERED to RECOVERING").  An
 * ISR that holds every target replica of a reassignment in progress
 * completes it (ctlreassign.c); when that removes the leader the answer
 * is NEW_LEADER_ELECTED.  No ELR (KIP-966).
 * Threads: the controller thread.
 */
#include "meta/controller/controller_int.h"

#include <inttypes.h>
#include <string.h>

#include "util/alloc.h"
#include "util/diag.h"

/* KIP-704's LeaderRecoveryState values. */
#define CTLISR_RECOVERED   0
#define CTLISR_RECOVERING  1

/* Kafka's Replicas.validateIsr: every member a replica, none twice. */
static bool
ctlisr_valid_members(const samsa_image_partition_t *p,
                     const samsa_controller_isr_change_t *c)
{
    size_t  i, j;

    for (i = 0; i < c->nisr; i++) {
        if (!samsa_ctlbrokers_has(p->replicas, p->nreplicas,
                                  c->isr[i].broker_id)) {
            return false;
        }
        for (j = 0; j < i; j++) {
            if (c->isr[j].broker_id == c->isr[i].broker_id) {
                return false;
            }
        }
    }
    return true;
}

/* Kafka's ineligibleReplicasForIsr: the first member that may not be in
 * an ISR, with why (NULL: all may). */
static const char *
ctlisr_ineligible(const samsa_ctlbatch_t *b,
                  const samsa_controller_isr_change_t *c, int32_t *who)
{
    const samsa_image_broker_t  *br;
    size_t                       i;

    for (i = 0; i < c->nisr; i++) {
        *who = c->isr[i].broker_id;
        br = samsa_image_delta_broker_find(b->delta, c->isr[i].broker_id);
        if (br == NULL) {
            return "not registered";
        }
        if (br->in_controlled_shutdown) {
            return "shutting down";
        }
        if (br->fenced) {
            return "fenced";
        }
        if (c->isr[i].broker_epoch != -1
            && c->isr[i].broker_epoch != br->epoch) {
            return "broker epoch mismatch";
        }
    }
    return NULL;
}

/* The epochs: NOT_CONTROLLER when the request is ahead of this image (the
 * sender saw a newer controller), FENCED_LEADER_EPOCH for an old leader
 * epoch, INVALID_REQUEST from a non-leader, INVALID_UPDATE_VERSION for an
 * old partition epoch, in Kafka's order. */
static samsa_err_t
ctlisr_check_epochs(int32_t broker_id, const samsa_image_topic_t *t,
                    const samsa_image_partition_t *p,
                    const samsa_controller_isr_change_t *c)
{
    if (c->leader_epoch > p->leader_epoch
        || c->partition_epoch > p->partition_epoch) {
        return SAMSA_ERR_NOT_CONTROLLER;
    }
    if (c->leader_epoch < p->leader_epoch) {
        samsa_debug("controller: AlterPartition from node %" PRId32 " for "
                    "%s-%" PRId32 ": the current leader epoch is %" PRId32
                    ", not %" PRId32, broker_id, t->name, c->partition,
                    p->leader_epoch, c->leader_epoch);
        return SAMSA_ERR_FENCED_LEADER_EPOCH;
    }
    if (broker_id != p->leader) {
        samsa_info("controller: rejecting AlterPartition from node %" PRId32
                   " for %s-%" PRId32 ": the current leader is %" PRId32,
                   broker_id, t->name, c->partition, p->leader);
        return SAMSA_ERR_INVALID_REQUEST;
    }
    if (c->partition_epoch < p->partition_epoch) {
        samsa_info("controller: rejecting AlterPartition from node %" PRId32
                   " for %s-%" PRId32 ": the current partition epoch is %"
                   PRId32 ", not %" PRId32, broker_id, t->name, c->partition,
                   p->partition_epoch, c->partition_epoch);
        return SAMSA_ERR_INVALID_UPDATE_VERSION;
    }
    return SAMSA_ERR_NONE;
}

/* validateAlterPartitionData for one change of a known topic t. */
static samsa_err_t
ctlisr_validate(const samsa_ctlbatch_t *b, int32_t broker_id,
                const samsa_image_topic_t *t,
                const samsa_controller_isr_change_t *c)
{
    const samsa_image_partition_t  *p;
    const char                     *why;
    int32_t                         who = -1;
    size_t                          i;
    bool                            has_leader = false;
    samsa_err_t                     err;

    if (c->partition < 0 || c->partition >= t->npartitions) {
        return SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION;
    }
    p = &t->partitions[c->partition];
    err = ctlisr_check_epochs(broker_id, t, p, c);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    for (i = 0; i < c->nisr; i++) {
        has_leader = has_leader || c->isr[i].broker_id == p->leader;
    }
    if (!ctlisr_valid_members(p, c) || !has_leader) {
        samsa_warn("controller: rejecting AlterPartition from node %" PRId32
                   " for %s-%" PRId32 ": invalid ISR (%zu member(s)%s)",
                   broker_id, t->name, c->partition, c->nisr,
                   has_leader ? "" : ", without the leader");
        return SAMSA_ERR_INVALID_REQUEST;
    }
    if (c->leader_recovery_state != CTLISR_RECOVERED) {
        samsa_info("controller: rejecting AlterPartition from node %" PRId32
                   " for %s-%" PRId32 ": the leader recovery state cannot "
                   "change from RECOVERED to RECOVERING", broker_id,
                   t->name, c->partition);
        return SAMSA_ERR_INVALID_REQUEST;
    }
    why = ctlisr_ineligible(b, c, &who);
    if (why != NULL) {
        samsa_info("controller: rejecting AlterPartition from node %" PRId32
                   " for %s-%" PRId32 ": replica %" PRId32 " is ineligible "
                   "for the ISR (%s)", broker_id, t->name, c->partition, who,
                   why);
        return SAMSA_ERR_INELIGIBLE_REPLICA;
    }
    return SAMSA_ERR_NONE;
}

/* Is c's ISR the partition's current one (same members, same order)? */
static bool
ctlisr_unchanged(const samsa_image_partition_t *p,
                 const samsa_controller_isr_change_t *c)
{
    size_t  i;

    if ((size_t) p->nisr != c->nisr) {
        return false;
    }
    for (i = 0; i < c->nisr; i++) {
        if (p->isr[i] != c->isr[i].broker_id) {
            return false;
        }
    }
    return true;
}

/* The PartitionChangeRecord of a valid change (none if unchanged); one
 * that completes a reassignment in progress completes it in the same
 * record, as Kafka's PartitionChangeBuilder. */
static void
ctlisr_write(samsa_ctlbatch_t *b, const samsa_image_topic_t *t,
             const samsa_controller_isr_change_t *c)
{
    samsa_MetadataRecords_any_t     rec;
    samsa_PartitionChangeRecord_t  *r = &rec.u.PartitionChangeRecord;
    int32_t                        *isr;
    size_t                          i;

    isr = samsa_calloc(c->nisr + 1, sizeof(*isr));
    for (i = 0; i < c->nisr; i++) {
        isr[i] = c->isr[i].broker_id;
    }
    if (!samsa_ctlreassign_complete(b, t, c->partition, isr,
                                    (int32_t) c->nisr)
        && !ctlisr_unchanged(&t->partitions[c->partition], c)) {
        memset(&rec, 0, sizeof(rec));
        rec.type = SAMSA_MetadataRecords_PartitionChangeRecord;
        samsa_PartitionChangeRecord_init(r);
        r->TopicId = t->id;
        r->PartitionId = c->partition;
        r->Isr = isr;
        r->Isr_cnt = (int32_t) c->nisr;
        samsa_ctlbatch_add(b, &rec);
    }
    samsa_free(isr);
}

/* The answer for a valid change: the partition as the batch leaves it.
 * @returns its topic */
static const samsa_image_topic_t *
ctlisr_answer(const samsa_ctlbatch_t *b, samsa_uuid_t topic_id,
              int32_t partition, samsa_arena_t *arena,
              samsa_controller_isr_result_t *res)
{
    const samsa_image_topic_t      *t;
    const samsa_image_partition_t  *p;
    int32_t                        *isr;

    t = samsa_image_delta_topic_find_id(b->delta, topic_id);
    samsa_assert(t != NULL && partition < t->npartitions);
    p = &t->partitions[partition];
    isr = samsa_arena_alloc(arena, ((size_t) p->nisr + 1) * sizeof(*isr));
    if (p->nisr > 0) {
        memcpy(isr, p->isr, (size_t) p->nisr * sizeof(*isr));
    }
    res->error = SAMSA_ERR_NONE;
    res->leader_id = p->leader;
    res->leader_epoch = p->leader_epoch;
    res->partition_epoch = p->partition_epoch;
    res->leader_recovery_state = CTLISR_RECOVERED;
    res->isr = isr;
    res->nisr = (size_t) p->nisr;
    return t;
}

samsa_err_t
samsa_ctlisr_alter(samsa_ctlbatch_t *b, int32_t broker_id,
                   int64_t broker_epoch,
                   const samsa_controller_isr_change_t *changes, size_t n,
                   samsa_arena_t *arena,
                   samsa_controller_isr_result_t *results)
{
    const samsa_image_topic_t  *t;
    samsa_err_t                 err;
    size_t                      i;

    err = samsa_ctlbrokers_check_epoch(b, broker_id, broker_epoch);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    for (i = 0; i < n; i++) {
        memset(&results[i], 0, sizeof(results[i]));
        results[i].leader_id = -1;
        t = samsa_image_delta_topic_find_id(b->delta, changes[i].topic_id);
        err = t == NULL ? SAMSA_ERR_UNKNOWN_TOPIC_ID
                        : ctlisr_validate(b, broker_id, t, &changes[i]);
        if (err != SAMSA_ERR_NONE) {
            results[i].error = err;
            continue;
        }
        if (!samsa_ctlbatch_room(b, 1)) {
            return SAMSA_ERR_NONE;      /* the operation fails whole */
        }
        ctlisr_write(b, t, &changes[i]);
        /* the replay may have moved t: ctlisr_answer finds it again */
        t = ctlisr_answer(b, changes[i].topic_id, changes[i].partition,
                          arena, &results[i]);
        if (results[i].leader_id != broker_id) {
            /* a completed reassignment moved the leadership: Kafka's
             * NEW_LEADER_ELECTED (the record is written all the same) */
            results[i].error = SAMSA_ERR_NEW_LEADER_ELECTED;
        }
        samsa_info("controller: node %" PRId32 " altered the ISR of %s-%"
                   PRId32 " to %zu member(s) (partition epoch %" PRId32 ")",
                   broker_id, t->name, changes[i].partition,
                   results[i].nisr, results[i].partition_epoch);
    }
    return SAMSA_ERR_NONE;
}
