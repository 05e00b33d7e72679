/*
 * meta/controller/ctlreassign.c - partition reassignments (KIP-455) on the
 * controller thread, as Kafka's ReplicationControlManager
 * .alterPartitionReassignments with PartitionReassignmentReplicas,
 * PartitionReassignmentRevert and PartitionChangeBuilder's
 * completeReassignmentIfNeeded:
 *  - a target replica list validated as a manual assignment becomes one
 *    PartitionChangeRecord: Replicas = the target, then the current
 *    replicas not in it; AddingReplicas = target - current and
 *    RemovingReplicas = current - target (both in id order);
 *  - the reassignment completes (Replicas = target, ISR = ISR minus the
 *    removed, both lists cleared, a leader from the target when the
 *    current one was removed) as soon as the ISR holds every target
 *    replica: at once for a subset or a reordering, else when an
 *    AlterPartition expansion brings the last adding replica in (ctlisr.c
 *    calls samsa_ctlreassign_complete);
 *  - a cancel reverts to the replicas before the reassignment (current -
 *    adding), ISR minus the adding ones; an ISR that would be empty needs
 *    unclean.leader.election.enable (then its first original replica).
 * Unlike Kafka, a new target for a partition already being reassigned
 * sets AddingReplicas and RemovingReplicas from the new target alone
 * (Kafka's builder keeps an earlier AddingReplicas when the new target
 * adds nothing).
 * Threads: the controller thread.
 */
#include "meta/controller/controller_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "util/alloc.h"
#include "util/diag.h"

/* A partition's replica sets as a change builds them (samsa_malloc'd,
 * each with room for every replica). */
typedef struct ctlreassign_part {
    int32_t  *replicas;
    int32_t   nreplicas;
    int32_t  *isr;
    int32_t   nisr;
    int32_t  *adding;
    int32_t   nadding;
    int32_t  *removing;
    int32_t   nremoving;
    int32_t   leader;
} ctlreassign_part_t;

static int32_t *
ctlreassign_ints(size_t cap, const int32_t *v, int32_t n)
{
    int32_t  *c = samsa_calloc(cap + 1, sizeof(*c));

    if (n > 0) {
        memcpy(c, v, (size_t) n * sizeof(*c));
    }
    return c;
}

/* x as p is now, with room for cap replicas. */
static void
ctlreassign_part_init(ctlreassign_part_t *x, const samsa_image_partition_t *p,
                      size_t cap)
{
    cap += (size_t) p->nreplicas;
    x->replicas = ctlreassign_ints(cap, p->replicas, p->nreplicas);
    x->nreplicas = p->nreplicas;
    x->isr = ctlreassign_ints(cap, p->isr, p->nisr);
    x->nisr = p->nisr;
    x->adding = ctlreassign_ints(cap, p->adding, p->nadding);
    x->nadding = p->nadding;
    x->removing = ctlreassign_ints(cap, p->removing, p->nremoving);
    x->nremoving = p->nremoving;
    x->leader = p->leader;
}

static void
ctlreassign_part_fini(ctlreassign_part_t *x)
{
    samsa_free(x->replicas);
    samsa_free(x->isr);
    samsa_free(x->adding);
    samsa_free(x->removing);
}

/* v minus the members of drop, order kept, in place; the new count. */
static int32_t
ctlreassign_minus(int32_t *v, int32_t n, const int32_t *drop, int32_t ndrop)
{
    int32_t  i, k = 0;

    for (i = 0; i < n; i++) {
        if (!samsa_ctlbrokers_has(drop, ndrop, v[i])) {
            v[k++] = v[i];
        }
    }
    return k;
}

static int
ctlreassign_id_cmp(const void *x, const void *y)
{
    int32_t  a = *(const int32_t *) x, b = *(const int32_t *) y;

    return (a > b) - (a < b);
}

/* PartitionReassignmentReplicas.maybeCompleteReassignment: with x's ISR,
 * is the reassignment done?  If so x becomes its end (replicas and ISR
 * without the removed ones, no adding, no removing). */
static bool
ctlreassign_try_complete(ctlreassign_part_t *x)
{
    int32_t  nisr, nrep, i;

    if (x->nadding == 0 && x->nremoving == 0) {
        return false;
    }
    nisr = 0;
    nrep = 0;
    for (i = 0; i < x->nisr; i++) {
        nisr += !samsa_ctlbrokers_has(x->removing, x->nremoving, x->isr[i]);
    }
    for (i = 0; i < x->nreplicas; i++) {
        if (!samsa_ctlbrokers_has(x->removing, x->nremoving,
                                  x->replicas[i])) {
            nrep++;
            if (!samsa_ctlbrokers_has(x->isr, x->nisr, x->replicas[i])) {
                return false;   /* a target replica not in the ISR yet */
            }
        }
    }
    if (nisr == 0 || nrep == 0) {
        return false;
    }
    x->nisr = ctlreassign_minus(x->isr, x->nisr, x->removing, x->nremoving);
    x->nreplicas = ctlreassign_minus(x->replicas, x->nreplicas, x->removing,
                                     x->nremoving);
    x->nadding = 0;
    x->nremoving = 0;
    return true;
}

/* PartitionChangeBuilder's election: the leader stays while it is a
 * replica in the ISR; else the first replica (target order) in the ISR
 * and active, or none (-1). */
static void
ctlreassign_elect(const samsa_ctlbatch_t *b, ctlreassign_part_t *x)
{
    int32_t  i;

    if (x->leader >= 0
        && samsa_ctlbrokers_has(x->isr, x->nisr, x->leader)
        && samsa_ctlbrokers_has(x->replicas, x->nreplicas, x->leader)) {
        return;
    }
    x->leader = -1;
    for (i = 0; i < x->nreplicas; i++) {
        if (samsa_ctlbrokers_has(x->isr, x->nisr, x->replicas[i])
            && samsa_ctlbrokers_active(b, x->replicas[i])) {
            x->leader = x->replicas[i];
            return;
        }
    }
}

static bool
ctlreassign_same(const int32_t *a, int32_t na, const int32_t *b, int32_t nb)
{
    return na == nb && (na == 0 || memcmp(a, b, (size_t) na * sizeof(*a))
                                   == 0);
}

/* The PartitionChangeRecord taking p of t to x (only what changed);
 * nothing when nothing did. */
static void
ctlreassign_write(samsa_ctlbatch_t *b, const samsa_image_topic_t *t,
                  const samsa_image_partition_t *p,
                  const ctlreassign_part_t *x)
{
    samsa_MetadataRecords_any_t     rec;
    samsa_PartitionChangeRecord_t  *r = &rec.u.PartitionChangeRecord;
    bool                            any = false;

    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_PartitionChangeRecord;
    samsa_PartitionChangeRecord_init(r);
    r->TopicId = t->id;
    r->PartitionId = p->partition;
    if (!ctlreassign_same(x->isr, x->nisr, p->isr, p->nisr)) {
        r->Isr = x->isr;
        r->Isr_cnt = x->nisr;
        any = true;
    }
    if (!ctlreassign_same(x->replicas, x->nreplicas, p->replicas,
                          p->nreplicas)) {
        r->Replicas = x->replicas;
        r->Replicas_cnt = x->nreplicas;
        any = true;
    }
    if (!ctlreassign_same(x->adding, x->nadding, p->adding, p->nadding)) {
        r->AddingReplicas = x->adding;
        r->AddingReplicas_cnt = x->nadding;
        any = true;
    }
    if (!ctlreassign_same(x->removing, x->nremoving, p->removing,
                          p->nremoving)) {
        r->RemovingReplicas = x->removing;
        r->RemovingReplicas_cnt = x->nremoving;
        any = true;
    }
    if (x->leader != p->leader) {
        r->Leader = x->leader;
        any = true;
    }
    if (any) {
        samsa_ctlbatch_add(b, &rec);
    }
}

bool
samsa_ctlreassign_complete(samsa_ctlbatch_t *b, const samsa_image_topic_t *t,
                           int32_t partition, const int32_t *isr,
                           int32_t nisr)
{
    const samsa_image_partition_t  *p = &t->partitions[partition];
    ctlreassign_part_t              x;
    bool                            done;

    if (p->nadding == 0 && p->nremoving == 0) {
        return false;
    }
    ctlreassign_part_init(&x, p, (size_t) (nisr > 0 ? nisr : 0));
    memcpy(x.isr, isr, (size_t) (nisr > 0 ? nisr : 0) * sizeof(*isr));
    x.nisr = nisr;
    done = ctlreassign_try_complete(&x);
    if (done) {
        ctlreassign_elect(b, &x);
        samsa_info("controller: the reassignment of %s-%" PRId32 " is "
                   "complete (%" PRId32 " replica(s), leader %" PRId32 ")",
                   t->name, partition, x.nreplicas, x.leader);
        ctlreassign_write(b, t, p, &x);
    }
    ctlreassign_part_fini(&x);
    return done;
}

/* Kafka's validatePartitionReplicationFactorUnchanged: the replication
 * factor p has, or is moving to (its replicas less the removing ones). */
static int32_t
ctlreassign_target_size(const samsa_image_partition_t *p)
{
    int32_t  i, n = 0;

    for (i = 0; i < p->nreplicas; i++) {
        if (!samsa_ctlbrokers_has(p->removing, p->nremoving,
                                  p->replicas[i])) {
            n++;
        }
    }
    return n;
}

/* changePartitionReassignment: p of t to the target replicas. */
static samsa_err_t
ctlreassign_change(samsa_ctlbatch_t *b, const samsa_image_topic_t *t,
                   const samsa_image_partition_t *p,
                   const samsa_controller_reassign_t *r,
                   samsa_arena_t *arena, const char **msg)
{
    ctlreassign_part_t  x;
    int32_t             i;

    *msg = samsa_ctltopics_check_manual(b, r->replicas, r->nreplicas, -1,
                                        arena);
    if (*msg != NULL) {
        return SAMSA_ERR_INVALID_REPLICA_ASSIGNMENT;
    }
    if (r->keep_replication_factor
        && ctlreassign_target_size(p) != r->nreplicas) {
        *msg = samsa_arena_printf(arena, "The replication factor is changed "
                                  "from %" PRId32 " to %" PRId32,
                                  ctlreassign_target_size(p), r->nreplicas);
        return SAMSA_ERR_INVALID_REPLICATION_FACTOR;
    }
    ctlreassign_part_init(&x, p, (size_t) r->nreplicas);
    x.nadding = 0;
    x.nremoving = 0;
    for (i = 0; i < r->nreplicas; i++) {
        x.replicas[i] = r->replicas[i];
        if (!samsa_ctlbrokers_has(p->replicas, p->nreplicas,
                                  r->replicas[i])) {
            x.adding[x.nadding++] = r->replicas[i];
        }
    }
    x.nreplicas = r->nreplicas;
    for (i = 0; i < p->nreplicas; i++) {
        if (!samsa_ctlbrokers_has(r->replicas, r->nreplicas,
                                  p->replicas[i])) {
            x.removing[x.nremoving++] = p->replicas[i];
        }
    }
    qsort(x.adding, (size_t) x.nadding, sizeof(*x.adding),
          ctlreassign_id_cmp);
    qsort(x.removing, (size_t) x.nremoving, sizeof(*x.removing),
          ctlreassign_id_cmp);
    /* the removed ones after the target, in id order (Kafka's rule) */
    memcpy(&x.replicas[x.nreplicas], x.removing,
           (size_t) x.nremoving * sizeof(*x.removing));
    x.nreplicas += x.nremoving;
    if (x.nadding > 0 && b->broker_cfg != NULL
        && !samsa_config_bool(b->broker_cfg, "unstable.replication.enable")) {
        /* a new replica needs a follower to copy the log (issue 19) */
        *msg = samsa_arena_printf(arena, "Unable to reassign partition %s:%"
                                  PRId32 ": replication across brokers is "
                                  "not available yet "
                                  "(unstable.replication.enable=false).",
                                  t->name, p->partition);
        ctlreassign_part_fini(&x);
        return SAMSA_ERR_INVALID_REPLICA_ASSIGNMENT;
    }
    if (ctlreassign_try_complete(&x)) {
        samsa_info("controller: the reassignment of %s-%" PRId32 " needs "
                   "no new replica: complete at once", t->name,
                   p->partition);
    }
    ctlreassign_elect(b, &x);
    ctlreassign_write(b, t, p, &x);
    ctlreassign_part_fini(&x);
    return SAMSA_ERR_NONE;
}

/* cancelPartitionReassignment with PartitionReassignmentRevert. */
static samsa_err_t
ctlreassign_cancel(samsa_ctlbatch_t *b, const samsa_image_topic_t *t,
                   const samsa_image_partition_t *p, samsa_arena_t *arena,
                   const char **msg)
{
    ctlreassign_part_t  x;

    if (p->nadding == 0 && p->nremoving == 0) {
        return SAMSA_ERR_NO_REASSIGNMENT_IN_PROGRESS;
    }
    ctlreassign_part_init(&x, p, 1);
    x.nreplicas = ctlreassign_minus(x.replicas, x.nreplicas, x.adding,
                                    x.nadding);
    x.nisr = ctlreassign_minus(x.isr, x.nisr, x.adding, x.nadding);
    if (x.nisr == 0 && x.nreplicas > 0) {
        if (!samsa_ctlbrokers_unclean(b, t)) {
            *msg = samsa_arena_printf(arena, "Unable to revert partition "
                                      "assignment for %s:%" PRId32 " because "
                                      "it would require an unclean leader "
                                      "election.", t->name, p->partition);
            ctlreassign_part_fini(&x);
            return SAMSA_ERR_INVALID_REPLICA_ASSIGNMENT;
        }
        x.isr[0] = x.replicas[0];
        x.nisr = 1;
    }
    x.nadding = 0;
    x.nremoving = 0;
    ctlreassign_elect(b, &x);
    ctlreassign_write(b, t, p, &x);
    samsa_info("controller: cancelled the reassignment of %s-%" PRId32,
               t->name, p->partition);
    ctlreassign_part_fini(&x);
    return SAMSA_ERR_NONE;
}

void
samsa_ctlreassign_alter(samsa_ctlbatch_t *b,
                        const samsa_controller_reassign_t *parts, size_t n,
                        samsa_arena_t *arena,
                        samsa_controller_result_t *results)
{
    const samsa_image_topic_t  *t;
    const samsa_controller_reassign_t *r;
    size_t                      i;

    for (i = 0; i < n; i++) {
        r = &parts[i];
        results[i].error = SAMSA_ERR_NONE;
        results[i].message = NULL;
        t = samsa_image_delta_topic_find(b->delta, (const char *) r->topic.ptr,
                                         r->topic.len);
        if (t == NULL) {
            results[i].error = SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION;
            results[i].message = samsa_arena_printf(
                arena, "Unable to find a topic named %.*s.",
                (int) r->topic.len, (const char *) r->topic.ptr);
            continue;
        }
        if (r->partition < 0 || r->partition >= t->npartitions) {
            results[i].error = SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION;
            results[i].message = samsa_arena_printf(
                arena, "Unable to find partition %s:%" PRId32 ".", t->name,
                r->partition);
            continue;
        }
        if (!samsa_ctlbatch_room(b, 1)) {
            return;                     /* the batch fails whole */
        }
        /* t's partitions as the batch leaves them so far */
        results[i].error = r->replicas == NULL
            ? ctlreassign_cancel(b, t, &t->partitions[r->partition], arena,
                                 &results[i].message)
            : ctlreassign_change(b, t, &t->partitions[r->partition], r,
                                 arena, &results[i].message);
    }
}
