/*
 * meta/controller/ctlbrokers.c - broker registration on the controller
 * thread, as Kafka's ClusterControlManager.registerBroker and the
 * heartbeat that unfences a caught-up broker: a RegisterBrokerRecord
 * (fenced, its broker epoch its own offset, with the broker's endpoints
 * and the feature range it supports) followed by a
 * BrokerRegistrationChangeRecord unfencing it (one node only; in cluster
 * mode the heartbeat does, samsa_ctlbrokers_heartbeat).  Records are written at
 * metadata.version 3.3-IV3 (SAMSA_META_METADATA_VERSION):
 * RegisterBrokerRecord v1, BrokerRegistrationChangeRecord v0 (v1 for
 * InControlledShutdown), PartitionChangeRecord v0.
 * Partition leadership follows the broker's state as in Kafka's
 * ReplicationControlManager (handleBrokerFenced, handleBrokerUnfenced,
 * handleBrokerInControlledShutdown through PartitionChangeBuilder): in the
 * batch that fences a broker or puts it in controlled shutdown, every
 * partition it leads or has in its ISR gets a PartitionChangeRecord that
 * drops it from the ISR (unless it is the last member, which stays) and
 * elects the first other active ISR member, or none (leader -1); in the
 * batch that unfences it, every leader-less partition with it in the ISR
 * is given a leader again.  With unclean.leader.election.enable (the
 * topic's, else the broker's) a partition left with no active ISR member
 * elects its first active replica instead, ISR = [it] (Kafka's unclean
 * election; LeaderRecoveryState RECOVERING is not written: no KIP-704
 * recovery by the new leader, ctlisr.c).
 * The image bumps the leader epoch of a leader change and the partition
 * epoch of every change.
 * Threads: the controller thread.
 */
#include "meta/controller/controller_int.h"

#include <inttypes.h>
#include <string.h>
#include <strings.h>

#include "util/alloc.h"
#include "util/diag.h"

/* BrokerRegistrationChangeRecord v1: InControlledShutdown (3.3-IV3). */
#define CTLBROKERS_CHANGE_CS_VERSION  1

/* ---- partition leadership */

/* One PartitionChangeRecord to write (collected first: a record replayed
 * into the delta may move the topic being scanned). */
typedef struct ctlbrokers_change {
    samsa_uuid_t  topic_id;
    int32_t       partition;
    int32_t       leader;           /* -2: no change, -1: none */
    int32_t      *isr;              /* NULL: no change */
    int32_t       nisr;
} ctlbrokers_change_t;

typedef struct ctlbrokers_changes {
    ctlbrokers_change_t  *v;
    size_t                n;
    size_t                cap;
} ctlbrokers_changes_t;

bool
samsa_ctlbrokers_has(const int32_t *ids, int32_t n, int32_t id)
{
    int32_t  i;

    for (i = 0; i < n; i++) {
        if (ids[i] == id) {
            return true;
        }
    }
    return false;
}

/* Kafka's isActive for leader election: registered, unfenced and not in
 * controlled shutdown, as the batch so far says. */
bool
samsa_ctlbrokers_active(const samsa_ctlbatch_t *b, int32_t id)
{
    const samsa_image_broker_t  *br = samsa_image_delta_broker_find(b->delta,
                                                                    id);

    return br != NULL && !br->fenced && !br->in_controlled_shutdown;
}

/* The first replica (preferred order) in isr that is active and not
 * except: PartitionChangeBuilder's election from the ISR; -1: none. */
static int32_t
ctlbrokers_elect(const samsa_ctlbatch_t *b, const samsa_image_partition_t *p,
                 const int32_t *isr, int32_t nisr, int32_t except)
{
    int32_t  i;

    for (i = 0; i < p->nreplicas; i++) {
        if (p->replicas[i] != except
            && samsa_ctlbrokers_has(isr, nisr, p->replicas[i])
            && samsa_ctlbrokers_active(b, p->replicas[i])) {
            return p->replicas[i];
        }
    }
    return -1;
}

/* Kafka's effective unclean.leader.election.enable of t: its override,
 * else the broker's (false without a broker config). */
bool
samsa_ctlbrokers_unclean(const samsa_ctlbatch_t *b,
                         const samsa_image_topic_t *t)
{
    const char  *v = samsa_image_topic_config(t,
                                              "unclean.leader.election.enable");

    if (v != NULL) {
        return strcasecmp(v, "true") == 0;
    }
    return b->broker_cfg != NULL
           && samsa_config_bool(b->broker_cfg,
                                "unclean.leader.election.enable");
}

/* PartitionChangeBuilder's unclean election: the first active replica
 * (preferred order) other than except, with x's ISR set to it alone;
 * false: none is active. */
static bool
ctlbrokers_elect_unclean(const samsa_ctlbatch_t *b,
                         const samsa_image_partition_t *p, int32_t except,
                         ctlbrokers_change_t *x)
{
    int32_t  i;

    for (i = 0; i < p->nreplicas; i++) {
        if (p->replicas[i] != except
            && samsa_ctlbrokers_active(b, p->replicas[i])) {
            samsa_free(x->isr);
            x->isr = samsa_calloc(1, sizeof(*x->isr));
            x->isr[0] = p->replicas[i];
            x->nisr = 1;
            x->leader = p->replicas[i];
            return true;
        }
    }
    return false;
}

static void
ctlbrokers_changes_push(ctlbrokers_changes_t *c, const ctlbrokers_change_t *x)
{
    if (c->n == c->cap) {
        c->cap = c->cap * 2 + 16;
        c->v = samsa_realloc(c->v, c->cap * sizeof(*c->v));
    }
    c->v[c->n++] = *x;
}

/* Write the collected changes and free them. */
static void
ctlbrokers_changes_write(samsa_ctlbatch_t *b, ctlbrokers_changes_t *c)
{
    samsa_MetadataRecords_any_t       rec;
    samsa_PartitionChangeRecord_t    *r = &rec.u.PartitionChangeRecord;
    size_t                            i;

    for (i = 0; i < c->n; i++) {
        memset(&rec, 0, sizeof(rec));
        rec.type = SAMSA_MetadataRecords_PartitionChangeRecord;
        samsa_PartitionChangeRecord_init(r);
        r->TopicId = c->v[i].topic_id;
        r->PartitionId = c->v[i].partition;
        r->Leader = c->v[i].leader;
        if (c->v[i].isr != NULL) {
            r->Isr = c->v[i].isr;
            r->Isr_cnt = c->v[i].nisr;
        }
        samsa_ctlbatch_add(b, &rec);
        samsa_free(c->v[i].isr);
    }
    samsa_free(c->v);
    memset(c, 0, sizeof(*c));
}

/* Kafka's generateLeaderAndIsrUpdates(brokerToRemove = broker_id): every
 * partition that broker_id leads or has in its ISR loses it from the ISR
 * (the last member stays: an ISR never goes empty) and, where it led,
 * gets the first other active ISR member as leader, or none. */
static void
ctlbrokers_leave(samsa_ctlbatch_t *b, int32_t broker_id)
{
    const samsa_image_topic_t      *t;
    const samsa_image_partition_t  *p;
    ctlbrokers_changes_t            c = { 0 };
    ctlbrokers_change_t             x;
    size_t                          i;
    int32_t                         j, k;
    const int32_t                  *isr;
    int32_t                         nisr;

    for (i = 0; i < samsa_image_delta_topic_slots(b->delta); i++) {
        t = samsa_image_delta_topic_slot(b->delta, i);
        for (j = 0; t != NULL && j < t->npartitions; j++) {
            p = &t->partitions[j];
            if (p->leader != broker_id
                && !samsa_ctlbrokers_has(p->isr, p->nisr, broker_id)) {
                continue;
            }
            x.topic_id = t->id;
            x.partition = p->partition;
            x.leader = -2;
            x.isr = NULL;
            x.nisr = 0;
            isr = p->isr;
            nisr = p->nisr;
            if (p->nisr > 1
                && samsa_ctlbrokers_has(p->isr, p->nisr, broker_id)) {
                x.isr = samsa_calloc((size_t) p->nisr, sizeof(*x.isr));
                for (k = 0; k < p->nisr; k++) {
                    if (p->isr[k] != broker_id) {
                        x.isr[x.nisr++] = p->isr[k];
                    }
                }
                isr = x.isr;
                nisr = x.nisr;
            }
            if (p->leader == broker_id) {
                x.leader = ctlbrokers_elect(b, p, isr, nisr, broker_id);
                if (x.leader == -1 && samsa_ctlbrokers_unclean(b, t)) {
                    (void) ctlbrokers_elect_unclean(b, p, broker_id, &x);
                }
            }
            if (x.leader == -2 && x.isr == NULL) {
                continue;               /* the last ISR member, no leader */
            }
            ctlbrokers_changes_push(&c, &x);
        }
    }
    ctlbrokers_changes_write(b, &c);
}

/* Kafka's generateLeaderAndIsrUpdates(brokerToAdd = broker_id) over the
 * leader-less partitions: each with broker_id in its ISR elects a leader
 * from its ISR again (broker_id, now active, or an earlier active one);
 * one with broker_id as a replica outside the ISR, with unclean leader
 * election on, elects its first active replica (ISR = [it]).
 * sole: only those whose ISR is broker_id alone (no unclean election). */
static void
ctlbrokers_lead(samsa_ctlbatch_t *b, int32_t broker_id, bool sole)
{
    const samsa_image_topic_t      *t;
    const samsa_image_partition_t  *p;
    ctlbrokers_changes_t            c = { 0 };
    ctlbrokers_change_t             x;
    size_t                          i;
    int32_t                         j;

    for (i = 0; i < samsa_image_delta_topic_slots(b->delta); i++) {
        t = samsa_image_delta_topic_slot(b->delta, i);
        for (j = 0; t != NULL && j < t->npartitions; j++) {
            p = &t->partitions[j];
            if (p->leader != -1 || (sole && p->nisr != 1)) {
                continue;
            }
            x.topic_id = t->id;
            x.partition = p->partition;
            x.leader = -1;
            x.isr = NULL;
            x.nisr = 0;
            if (samsa_ctlbrokers_has(p->isr, p->nisr, broker_id)) {
                x.leader = ctlbrokers_elect(b, p, p->isr, p->nisr, -1);
            } else if (!sole
                       && samsa_ctlbrokers_has(p->replicas, p->nreplicas,
                                               broker_id)
                       && samsa_ctlbrokers_unclean(b, t)) {
                /* no ISR member is active (else it would lead) */
                (void) ctlbrokers_elect_unclean(b, p, -1, &x);
            }
            if (x.leader >= 0) {
                ctlbrokers_changes_push(&c, &x);
            } else {
                samsa_free(x.isr);
            }
        }
    }
    ctlbrokers_changes_write(b, &c);
}

/* Kafka's ReplicationControlManager.electLeader for partition p of t:
 * PREFERRED moves leadership to the first replica when it is in the ISR
 * and active (ELECTION_NOT_NEEDED when it leads, else
 * PREFERRED_LEADER_NOT_AVAILABLE); UNCLEAN gives a leader-less partition
 * one, from the ISR or else the first active replica (ISR = [it]),
 * whatever unclean.leader.election.enable says (ELECTION_NOT_NEEDED when
 * it has a leader, else ELIGIBLE_LEADERS_NOT_AVAILABLE).  The change goes
 * to c. */
static samsa_err_t
ctlbrokers_elect_one(const samsa_ctlbatch_t *b, const samsa_image_topic_t *t,
                     const samsa_image_partition_t *p, int8_t type,
                     ctlbrokers_changes_t *c)
{
    ctlbrokers_change_t  x = { t->id, p->partition, -2, NULL, 0 };

    if (type == SAMSA_CONTROLLER_ELECTION_PREFERRED) {
        if (p->nreplicas > 0 && p->leader == p->replicas[0]) {
            return SAMSA_ERR_ELECTION_NOT_NEEDED;
        }
        if (p->nreplicas == 0
            || !samsa_ctlbrokers_has(p->isr, p->nisr, p->replicas[0])
            || !samsa_ctlbrokers_active(b, p->replicas[0])) {
            return SAMSA_ERR_PREFERRED_LEADER_NOT_AVAILABLE;
        }
        x.leader = p->replicas[0];
    } else {
        if (p->leader >= 0) {
            return SAMSA_ERR_ELECTION_NOT_NEEDED;
        }
        x.leader = ctlbrokers_elect(b, p, p->isr, p->nisr, -1);
        if (x.leader < 0 && !ctlbrokers_elect_unclean(b, p, -1, &x)) {
            return SAMSA_ERR_ELIGIBLE_LEADERS_NOT_AVAILABLE;
        }
    }
    ctlbrokers_changes_push(c, &x);
    return SAMSA_ERR_NONE;
}

void
samsa_ctlbrokers_elect_leaders(samsa_ctlbatch_t *b, int8_t type,
                               const samsa_controller_elect_t *parts,
                               size_t n, samsa_arena_t *arena,
                               samsa_controller_elect_result_t *results)
{
    const samsa_image_topic_t  *t;
    ctlbrokers_changes_t        c = { 0 };
    size_t                      i, j;

    for (i = 0; i < n; i++) {
        results[i].message = NULL;
        for (j = 0; j < i; j++) {
            if (samsa_slice_eq(parts[j].topic, parts[i].topic)
                && parts[j].partition == parts[i].partition) {
                break;
            }
        }
        if (j < i) {                /* asked twice: the first answer */
            results[i] = results[j];
            continue;
        }
        t = samsa_image_delta_topic_find(b->delta,
                                         (const char *) parts[i].topic.ptr,
                                         parts[i].topic.len);
        if (t == NULL) {
            results[i].error = SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION;
            results[i].message = samsa_arena_printf(
                arena, "No such topic as %.*s", (int) parts[i].topic.len,
                (const char *) parts[i].topic.ptr);
            continue;
        }
        if (parts[i].partition < 0 || parts[i].partition >= t->npartitions) {
            results[i].error = SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION;
            results[i].message = samsa_arena_printf(
                arena, "No such partition as %.*s-%" PRId32,
                (int) parts[i].topic.len, (const char *) parts[i].topic.ptr,
                parts[i].partition);
            continue;
        }
        results[i].error = ctlbrokers_elect_one(
            b, t, &t->partitions[parts[i].partition], type, &c);
    }
    ctlbrokers_changes_write(b, &c);
}

size_t
samsa_ctlbrokers_balance_leaders(samsa_ctlbatch_t *b, size_t max)
{
    const samsa_image_topic_t  *t;
    ctlbrokers_changes_t        c = { 0 };
    size_t                      i, n;
    int32_t                     j;

    for (i = 0; i < samsa_image_delta_topic_slots(b->delta) && c.n < max;
         i++) {
        t = samsa_image_delta_topic_slot(b->delta, i);
        for (j = 0; t != NULL && j < t->npartitions && c.n < max; j++) {
            (void) ctlbrokers_elect_one(b, t, &t->partitions[j],
                                        SAMSA_CONTROLLER_ELECTION_PREFERRED,
                                        &c);
        }
    }
    n = c.n;
    ctlbrokers_changes_write(b, &c);
    return n;
}

/* Does broker_id lead any partition, as the batch so far says (Kafka's
 * BrokerHeartbeatManager hasLeaderships)? */
static bool
ctlbrokers_leads(const samsa_ctlbatch_t *b, int32_t broker_id)
{
    const samsa_image_topic_t  *t;
    size_t                      i;
    int32_t                     j;

    for (i = 0; i < samsa_image_delta_topic_slots(b->delta); i++) {
        t = samsa_image_delta_topic_slot(b->delta, i);
        for (j = 0; t != NULL && j < t->npartitions; j++) {
            if (t->partitions[j].leader == broker_id) {
                return true;
            }
        }
    }
    return false;
}

/* ---- broker state */

/* A BrokerRegistrationChangeRecord (v0) setting the broker's fence state
 * (fenced 1 fences, -1 unfences), then the partition changes that follow
 * it: a fenced broker leads nothing, an unfenced one leads again the
 * leader-less partitions whose ISR it is in. */
void
samsa_ctlbrokers_fence(samsa_ctlbatch_t *b, int32_t broker_id,
                       int64_t broker_epoch, int8_t fenced)
{
    samsa_MetadataRecords_any_t  rec;

    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_BrokerRegistrationChangeRecord;
    samsa_BrokerRegistrationChangeRecord_init(
        &rec.u.BrokerRegistrationChangeRecord);
    rec.u.BrokerRegistrationChangeRecord.BrokerId = broker_id;
    rec.u.BrokerRegistrationChangeRecord.BrokerEpoch = broker_epoch;
    rec.u.BrokerRegistrationChangeRecord.Fenced = fenced;
    samsa_ctlbatch_add(b, &rec);
    if (fenced == 1) {
        ctlbrokers_leave(b, broker_id);
    } else if (fenced == -1) {
        ctlbrokers_lead(b, broker_id, false);
    }
}

/* Kafka's handleBrokerInControlledShutdown: a
 * BrokerRegistrationChangeRecord v1 with InControlledShutdown=1, then
 * leadership moves off the broker as on a fence. */
static void
ctlbrokers_controlled_shutdown(samsa_ctlbatch_t *b,
                               const samsa_image_broker_t *br)
{
    samsa_MetadataRecords_any_t  rec;

    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_BrokerRegistrationChangeRecord;
    rec.version = CTLBROKERS_CHANGE_CS_VERSION;
    samsa_BrokerRegistrationChangeRecord_init(
        &rec.u.BrokerRegistrationChangeRecord);
    rec.u.BrokerRegistrationChangeRecord.BrokerId = br->id;
    rec.u.BrokerRegistrationChangeRecord.BrokerEpoch = br->epoch;
    rec.u.BrokerRegistrationChangeRecord.InControlledShutdown = 1;
    samsa_ctlbatch_add(b, &rec);
    ctlbrokers_leave(b, br->id);
}

/* RegisterBrokerRecord v1 (InControlledShutdown) from 3.3-IV3 on. */
#define CTLBROKERS_REGISTER_VERSION  1

void
samsa_ctlbrokers_register(samsa_ctlbatch_t *b,
                          const samsa_controller_broker_reg_t *reg,
                          bool unfence, int64_t *epoch)
{
    samsa_MetadataRecords_any_t      rec;
    samsa_RegisterBrokerRecord_t    *r = &rec.u.RegisterBrokerRecord;
    samsa_RegisterBrokerEndpoint_t  *eps;
    samsa_RegisterBrokerFeature_t    feat;
    size_t                           i;
    bool                             prev;

    prev = samsa_image_delta_broker_find(b->delta, reg->broker_id) != NULL;
    *epoch = b->next_offset;
    eps = samsa_calloc(reg->nendpoints + 1, sizeof(*eps));
    for (i = 0; i < reg->nendpoints; i++) {
        samsa_RegisterBrokerEndpoint_init(&eps[i]);
        eps[i].Name = samsa_slice_cstr(reg->endpoints[i].listener);
        eps[i].Host = samsa_slice_cstr(reg->endpoints[i].host);
        eps[i].Port = reg->endpoints[i].port;
        eps[i].SecurityProtocol = reg->endpoints[i].security_protocol;
    }
    samsa_RegisterBrokerFeature_init(&feat);
    feat.Name = samsa_slice_cstr(SAMSA_META_METADATA_VERSION_NAME);
    feat.MinSupportedVersion = SAMSA_META_METADATA_VERSION;
    feat.MaxSupportedVersion = SAMSA_META_METADATA_VERSION;
    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_RegisterBrokerRecord;
    rec.version = CTLBROKERS_REGISTER_VERSION;
    samsa_RegisterBrokerRecord_init(r);
    r->BrokerId = reg->broker_id;
    r->IncarnationId = reg->incarnation_id;
    r->BrokerEpoch = *epoch;
    r->EndPoints = eps;
    r->EndPoints_cnt = (int32_t) reg->nendpoints;
    r->Features = &feat;
    r->Features_cnt = 1;
    r->Rack = reg->rack != NULL ? samsa_slice_cstr(reg->rack)
                                : SAMSA_SLICE_NULL;
    r->Fenced = true;
    samsa_ctlbatch_add(b, &rec);
    samsa_free(eps);
    if (!unfence) {
        /* cluster mode: the first caught-up heartbeat unfences it; the
         * new registration is fenced, so a restarted broker that the
         * controller had not fenced yet leads nothing until then */
        if (prev) {
            ctlbrokers_leave(b, reg->broker_id);
        }
        return;
    }
    /* one node: unfenced in the same batch.  Nothing fences it; only an
     * UnregisterBroker of itself leaves its partitions leader-less, with
     * it their sole ISR member: those it leads again.  Other leader-less
     * partitions stay as the log has them (records of other nodes). */
    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_BrokerRegistrationChangeRecord;
    samsa_BrokerRegistrationChangeRecord_init(
        &rec.u.BrokerRegistrationChangeRecord);
    rec.u.BrokerRegistrationChangeRecord.BrokerId = reg->broker_id;
    rec.u.BrokerRegistrationChangeRecord.BrokerEpoch = *epoch;
    rec.u.BrokerRegistrationChangeRecord.Fenced = -1;     /* unfence */
    samsa_ctlbatch_add(b, &rec);
    ctlbrokers_lead(b, reg->broker_id, true);
}

samsa_err_t
samsa_ctlbrokers_check_epoch(samsa_ctlbatch_t *b, int32_t broker_id,
                             int64_t broker_epoch)
{
    const samsa_image_broker_t  *br = samsa_image_broker_find(b->img,
                                                              broker_id);

    if (br == NULL || br->epoch != broker_epoch) {
        return SAMSA_ERR_STALE_BROKER_EPOCH;
    }
    return SAMSA_ERR_NONE;
}

/* Kafka's ClusterControlManager / BrokerHeartbeatManager on a heartbeat:
 * the broker must be registered with this epoch; it is caught up once it
 * has applied its own registration record (the broker epoch is that
 * record's offset); a fenced, caught-up broker that does not ask to stay
 * fenced (nor to shut down) is unfenced.  WantShutDown follows
 * BrokerHeartbeatManager.calculateNextBrokerState: a fenced broker may
 * shut down now; an unfenced one that leads partitions enters controlled
 * shutdown (its leadership moves, ctlbrokers_controlled_shutdown) and is
 * told to shut down on a later heartbeat, once it leads nothing; then
 * (Kafka's SHUTDOWN_NOW) it is fenced in the same batch. */
void
samsa_ctlbrokers_heartbeat(samsa_ctlbatch_t *b,
                           const samsa_controller_heartbeat_t *hb,
                           samsa_controller_heartbeat_result_t *res)
{
    const samsa_image_broker_t  *br = samsa_image_broker_find(b->img,
                                                              hb->broker_id);

    res->error = SAMSA_ERR_NONE;
    res->caught_up = false;
    res->fenced = true;
    res->should_shutdown = false;
    if (br == NULL) {
        res->error = SAMSA_ERR_BROKER_ID_NOT_REGISTERED;
        return;
    }
    if (br->epoch != hb->broker_epoch) {
        res->error = SAMSA_ERR_STALE_BROKER_EPOCH;
        return;
    }
    res->caught_up = hb->current_offset >= br->epoch;
    res->fenced = br->fenced;
    if (hb->want_shutdown) {
        if (br->fenced) {
            res->should_shutdown = true;
        } else if (!br->in_controlled_shutdown
                   && ctlbrokers_leads(b, br->id)) {
            samsa_info("controller: broker %" PRId32 " (broker epoch %"
                       PRId64 ") entered controlled shutdown", br->id,
                       br->epoch);
            ctlbrokers_controlled_shutdown(b, br);
        } else if (!ctlbrokers_leads(b, br->id)) {
            samsa_info("controller: broker %" PRId32 " (broker epoch %"
                       PRId64 ") leads no partition: it may shut down "
                       "now", br->id, br->epoch);
            samsa_ctlbrokers_fence(b, br->id, br->epoch, 1);
            res->fenced = true;
            res->should_shutdown = true;
        }
        return;
    }
    if (br->fenced && res->caught_up && !hb->want_fence
        && !br->in_controlled_shutdown) {
        samsa_ctlbrokers_fence(b, br->id, br->epoch, -1);
        res->fenced = false;
    } else if (!br->fenced && hb->want_fence) {
        samsa_ctlbrokers_fence(b, br->id, br->epoch, 1);
        res->fenced = true;
    }
}

/* Kafka's handleBrokerUnregistered: leadership moves off the broker as on
 * a fence, then an UnregisterBrokerRecord with its broker epoch. */
void
samsa_ctlbrokers_unregister(samsa_ctlbatch_t *b, int32_t broker_id,
                            samsa_err_t *error)
{
    const samsa_image_broker_t   *br = samsa_image_delta_broker_find(b->delta,
                                                                     broker_id);
    samsa_MetadataRecords_any_t   rec;
    int64_t                       epoch;

    if (br == NULL) {
        *error = SAMSA_ERR_BROKER_ID_NOT_REGISTERED;
        return;
    }
    epoch = br->epoch;
    *error = SAMSA_ERR_NONE;
    samsa_info("controller: unregistering broker %" PRId32 " (broker epoch %"
               PRId64 ")", broker_id, epoch);
    ctlbrokers_leave(b, broker_id);
    memset(&rec, 0, sizeof(rec));
    rec.type = SAMSA_MetadataRecords_UnregisterBrokerRecord;
    samsa_UnregisterBrokerRecord_init(&rec.u.UnregisterBrokerRecord);
    rec.u.UnregisterBrokerRecord.BrokerId = broker_id;
    rec.u.UnregisterBrokerRecord.BrokerEpoch = epoch;
    samsa_ctlbatch_add(b, &rec);
}
