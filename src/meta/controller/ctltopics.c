/*
 * meta/controller/ctltopics.c - the controller's topic operations: CreateTopics,
 * DeleteTopics and CreatePartitions, validated and turned into records as
 * Kafka's ReplicationControlManager and ControllerApis do (same checks in
 * the same order, same error codes and messages).  Replicas go on the
 * registered brokers: placed by Kafka's striped placer (placement.h) over
 * the usable ones, or as a manual assignment names them; the ISR is the
 * replicas that are active (unfenced, not shutting down), led by its
 * first.  Until this node registers itself the image has no broker and
 * this node is the only one, unfenced.  Replication factors above 1 pass
 * Kafka's checks and are then refused: followers do not replicate yet.
 * Threads: the controller thread (see controller_int.h).
 */
#include "meta/controller/controller_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "meta/controller/placement.h"
#include "meta/topic_config.h"
#include "meta/topic_name.h"
#include "util/diag.h"

/* ---- records */

static void
ctl_rec_init(samsa_MetadataRecords_any_t *rec, int16_t type)
{
    memset(rec, 0, sizeof(*rec));
    rec->type = type;
    rec->version = 0;
}

static void
ctl_add_topic_record(samsa_ctlbatch_t *b, samsa_slice_t name,
                     samsa_uuid_t id)
{
    samsa_MetadataRecords_any_t  rec;

    ctl_rec_init(&rec, SAMSA_MetadataRecords_TopicRecord);
    samsa_TopicRecord_init(&rec.u.TopicRecord);
    rec.u.TopicRecord.Name = name;
    rec.u.TopicRecord.TopicId = id;
    samsa_ctlbatch_add(b, &rec);
}

/* The PartitionRecord of a new partition: isr (non-empty, see ctl_isr())
 * led by its first (Kafka's buildPartitionRegistration). */
static void
ctl_add_partition_record(samsa_ctlbatch_t *b, samsa_uuid_t id,
                         int32_t partition, int32_t *replicas,
                         int32_t nreplicas, int32_t *isr, int32_t nisr)
{
    samsa_MetadataRecords_any_t  rec;
    samsa_PartitionRecord_t     *p = &rec.u.PartitionRecord;

    samsa_assert(nisr > 0);
    ctl_rec_init(&rec, SAMSA_MetadataRecords_PartitionRecord);
    samsa_PartitionRecord_init(p);
    p->PartitionId = partition;
    p->TopicId = id;
    p->Replicas = replicas;
    p->Replicas_cnt = nreplicas;
    p->Isr = isr;
    p->Isr_cnt = nisr;
    p->Leader = isr[0];
    p->LeaderEpoch = 0;
    p->PartitionEpoch = 0;
    samsa_ctlbatch_add(b, &rec);
}

/* ---- brokers */

/* True if no broker registered yet: this node then stands for the
 * cluster, unfenced (today's single node, which writes no
 * RegisterBrokerRecord of its own). */
static bool
ctl_only_self(const samsa_ctlbatch_t *b)
{
    return samsa_image_broker_count(b->img) == 0;
}

/* Kafka's brokerRegistrations().containsKey(id). */
static bool
ctl_registered(const samsa_ctlbatch_t *b, int32_t id)
{
    return ctl_only_self(b) ? id == b->node_id
                            : samsa_image_broker_find(b->img, id) != NULL;
}

/* Kafka's isActive: registered, unfenced, not in controlled shutdown. */
static bool
ctl_active(const samsa_ctlbatch_t *b, int32_t id)
{
    const samsa_image_broker_t  *br;

    if (ctl_only_self(b)) {
        return id == b->node_id;
    }
    br = samsa_image_broker_find(b->img, id);
    return br != NULL && !br->fenced && !br->in_controlled_shutdown;
}

/* The brokers replicas may go on (Kafka's usableBrokers: registered, not
 * in controlled shutdown, fenced or not), in arena; *n gets their count. */
static samsa_placement_broker_t *
ctl_usable(const samsa_ctlbatch_t *b, samsa_arena_t *arena, size_t *n)
{
    size_t                     count = samsa_image_broker_count(b->img), i;
    samsa_placement_broker_t  *out = samsa_arena_calloc(arena, count + 1,
                                                        sizeof(*out));
    const samsa_image_broker_t  *br;

    *n = 0;
    if (count == 0) {
        out[(*n)++] = (samsa_placement_broker_t) { b->node_id, NULL, false };
        return out;
    }
    for (i = 0; i < count; i++) {
        br = samsa_image_broker_at(b->img, i);
        if (!br->in_controlled_shutdown) {
            out[(*n)++] = (samsa_placement_broker_t) { br->id, br->rack,
                                                       br->fenced };
        }
    }
    return out;
}

/* The active replicas (the new partition's ISR), in replica order, in
 * arena; *nisr gets their count (0: none is active). */
static int32_t *
ctl_isr(const samsa_ctlbatch_t *b, const int32_t *replicas, int32_t n,
        samsa_arena_t *arena, int32_t *nisr)
{
    int32_t  *isr = samsa_arena_calloc(arena, (size_t) n + 1, sizeof(*isr));
    int32_t   i;

    *nisr = 0;
    for (i = 0; i < n; i++) {
        if (ctl_active(b, replicas[i])) {
            isr[(*nisr)++] = replicas[i];
        }
    }
    return isr;
}

/* A seed for one placement (Kafka's controller keeps one Random; any
 * unpredictable seed will do, so a clock stands in if getrandom fails). */
static uint64_t
ctl_placement_seed(void)
{
    uint64_t         seed;
    struct timespec  ts;

    if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK)
        == (ssize_t) sizeof(seed)) {
        return seed;
    }
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * UINT64_C(1000000000)
           + (uint64_t) ts.tv_nsec;
}

/* Kafka's placer checks of nparts partitions of rf replicas over the
 * usable brokers, before any is placed: NULL, else the placer's message
 * (INVALID_REPLICATION_FACTOR). */
static const char *
ctl_place_check(const samsa_ctlbatch_t *b, int32_t start, int32_t nparts,
                int32_t rf, samsa_arena_t *arena)
{
    samsa_placement_spec_t     spec = { start, nparts, rf };
    samsa_placement_broker_t  *brokers;
    size_t                     n;
    char                       err[256];

    brokers = ctl_usable(b, arena, &n);
    if (samsa_placement_check(&spec, brokers, n, err, sizeof(err))
        != SAMSA_ERR_NONE) {
        return samsa_ctl_msg(arena, "%s", err);
    }
    return NULL;
}

/* Place nparts partitions of rf replicas over the usable brokers (Kafka's
 * StripedReplicaPlacer): nparts * rf ids in arena, or NULL with the
 * placer's message in *msg. */
static int32_t *
ctl_place(const samsa_ctlbatch_t *b, int32_t start, int32_t nparts,
          int32_t rf, samsa_arena_t *arena, const char **msg)
{
    samsa_placement_spec_t     spec = { start, nparts, rf };
    samsa_placement_rng_t      rng;
    samsa_placement_rand_t     rnd = { samsa_placement_rng_next, &rng };
    samsa_placement_broker_t  *brokers;
    size_t                     n;
    int32_t                   *out;
    char                       err[256];

    brokers = ctl_usable(b, arena, &n);
    out = samsa_arena_calloc(arena, (size_t) nparts * (size_t) rf + 1,
                             sizeof(*out));
    samsa_placement_rng_seed(&rng, ctl_placement_seed());
    if (samsa_placement_place(&spec, brokers, n, &rnd, out, err, sizeof(err))
        != SAMSA_ERR_NONE) {
        *msg = samsa_ctl_msg(arena, "%s", err);
        return NULL;
    }
    return out;
}

/* May a partition get rf replicas?  Above 1 only with
 * unstable.replication.enable (issue 19: followers do not replicate yet,
 * see docs/REPLICATION.md). */
static bool
ctl_rf_allowed(const samsa_ctlbatch_t *b, int32_t rf)
{
    return rf <= 1
           || samsa_config_bool(b->broker_cfg, "unstable.replication.enable");
}

/* The refusal of a replication factor above 1 that Kafka would accept,
 * while unstable.replication.enable is false. */
static const char *
ctl_rf_unsupported(samsa_arena_t *arena, int32_t rf)
{
    return samsa_ctl_msg(arena, "Unable to replicate the partition %" PRId32
                         " time(s): replication across brokers is not "
                         "available yet, so the replication factor must be "
                         "1.", rf);
}

/* ---- shared checks */

static int
ctl_id_cmp(const void *x, const void *y)
{
    int32_t  a = *(const int32_t *) x, b = *(const int32_t *) y;

    return (a > b) - (a < b);
}

/* Kafka's validateManualPartitionAssignment: the replicas in id order,
 * each registered and none twice (the first fault in that order is the
 * one reported).  rf < 0: no replication factor to match yet. */
const char *
samsa_ctltopics_check_manual(samsa_ctlbatch_t *b, const int32_t *replicas, int32_t n,
                 int32_t rf, samsa_arena_t *arena)
{
    int32_t  *sorted;
    int32_t   i;

    if (n <= 0) {
        return "The manual partition assignment includes an empty replica "
               "list.";
    }
    sorted = samsa_arena_calloc(arena, (size_t) n, sizeof(*sorted));
    memcpy(sorted, replicas, (size_t) n * sizeof(*sorted));
    qsort(sorted, (size_t) n, sizeof(*sorted), ctl_id_cmp);
    for (i = 0; i < n; i++) {
        if (!ctl_registered(b, sorted[i])) {
            return samsa_ctl_msg(arena, "The manual partition assignment "
                                 "includes broker %" PRId32 ", but no such "
                                 "broker is registered.", sorted[i]);
        }
        if (i > 0 && sorted[i] == sorted[i - 1]) {
            return samsa_ctl_msg(arena, "The manual partition assignment "
                                 "includes the broker %" PRId32 " more than "
                                 "once.", sorted[i]);
        }
    }
    if (rf >= 0 && n != rf) {
        return samsa_ctl_msg(arena, "The manual partition assignment "
                             "includes a partition with %" PRId32 " "
                             "replica(s), but this is not consistent with "
                             "previous partitions, which have %" PRId32 " "
                             "replica(s).", n, rf);
    }
    return NULL;
}

/* The name of a topic of the delta that name collides with, or NULL. */
static const char *
ctl_colliding(const samsa_image_delta_t *delta, samsa_slice_t name)
{
    const samsa_image_topic_t  *t;
    size_t                      i;

    if (!samsa_topic_name_has_collision_chars(name.ptr, name.len)) {
        return NULL;
    }
    for (i = 0; i < samsa_image_delta_topic_slots(delta); i++) {
        t = samsa_image_delta_topic_slot(delta, i);
        if (t != NULL && samsa_topic_name_collides(t->name, t->name_len,
                                                   name.ptr, name.len)) {
            return t->name;
        }
    }
    return NULL;
}

/* Mark results[i] as failed unless it already is. */
static void
ctl_topic_fail(samsa_controller_topic_result_t *r, samsa_err_t err,
               const char *msg)
{
    if (r->error == SAMSA_ERR_NONE) {
        r->error = err;
        r->message = msg;
    }
}

/* Charge quota (NULL: none) the partitions a topic that passed every other
 * check mutates: false if it refuses them (Kafka's
 * applyPartitionChangeQuota throwing ThrottlingQuotaExceededException,
 * answered with the error and no message). */
static bool
ctl_quota_apply(const samsa_controller_quota_t *quota, int32_t partitions)
{
    return quota == NULL || quota->apply == NULL
           || quota->apply(quota->ctx, partitions);
}

static bool
ctl_slice_eq(samsa_slice_t a, samsa_slice_t b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

/* ---- CreateTopics */

/* The topic's checks before its counts (ControllerApis, then
 * validateNewTopicNames, the existence check and computeConfigChanges). */
static void
ctl_create_check_name(samsa_ctlbatch_t *b,
                      const samsa_controller_create_topics_t *req,
                      const samsa_controller_new_topic_t *t,
                      samsa_arena_t *arena,
                      samsa_controller_topic_result_t *r)
{
    char         err[512];
    const char  *other;

    if (samsa_topic_name_validate(t->name.ptr, t->name.len, err, sizeof(err))
        != SAMSA_ERR_NONE) {
        ctl_topic_fail(r, SAMSA_ERR_INVALID_TOPIC_EXCEPTION,
                       samsa_ctl_msg(arena, "%s", err));
        return;
    }
    if (samsa_slice_eq_cstr(t->name, SAMSA_TOPIC_CLUSTER_METADATA)
        || (!req->internal
            && samsa_topic_name_is_internal(t->name.ptr, t->name.len))) {
        ctl_topic_fail(r, SAMSA_ERR_INVALID_REQUEST,
                       samsa_ctl_msg(arena, "Creation of internal topic %.*s "
                                     "is prohibited.", (int) t->name.len,
                                     t->name.ptr));
        return;
    }
    if (samsa_image_delta_topic_find(b->delta, t->name.ptr, t->name.len)
        != NULL) {
        ctl_topic_fail(r, SAMSA_ERR_TOPIC_ALREADY_EXISTS,
                       samsa_ctl_msg(arena, "Topic '%.*s' already exists.",
                                     (int) t->name.len, t->name.ptr));
        return;
    }
    other = ctl_colliding(b->delta, t->name);
    if (other != NULL) {
        ctl_topic_fail(r, SAMSA_ERR_INVALID_TOPIC_EXCEPTION,
                       samsa_ctl_msg(arena, "Topic '%.*s' collides with "
                                     "existing topic: %s", (int) t->name.len,
                                     t->name.ptr, other));
    }
}

/* The configs of a new topic, last value of a repeated key winning, as
 * Kafka's HashMap does; NULL values kept for the check to refuse. */
static samsa_image_config_t *
ctl_create_configs(const samsa_controller_new_topic_t *t,
                   samsa_arena_t *arena, size_t *n)
{
    samsa_image_config_t  *cfgs = samsa_arena_calloc(arena, t->nconfigs + 1,
                                                     sizeof(*cfgs));
    size_t                 i, j;

    *n = 0;
    for (i = 0; i < t->nconfigs; i++) {
        for (j = 0; j < *n && strcmp(cfgs[j].name, t->configs[i].name) != 0;
             j++) {
        }
        cfgs[j] = t->configs[i];
        if (j == *n) {
            (*n)++;
        }
    }
    return cfgs;
}

/* A manual assignment of new partition p (p >= 0: CreateTopics' index)
 * passes Kafka's checks and has an active broker: NULL, else the message
 * (INVALID_REPLICA_ASSIGNMENT). */
static const char *
ctl_check_assignment(samsa_ctlbatch_t *b,
                     const samsa_controller_assignment_t *a, int32_t p,
                     int32_t rf, samsa_arena_t *arena)
{
    const char  *msg;
    int32_t      nisr;

    msg = samsa_ctltopics_check_manual(b, a->replicas, a->nreplicas, rf, arena);
    if (msg != NULL) {
        return msg;
    }
    (void) ctl_isr(b, a->replicas, a->nreplicas, arena, &nisr);
    if (nisr == 0) {
        return samsa_ctl_msg(arena, "All brokers specified in the manual "
                             "partition assignment for partition %" PRId32
                             " are fenced or in controlled shutdown.", p);
    }
    return NULL;
}

/* Manual assignments (Kafka's createTopic): n * rf replica ids, partition
 * p's at [p * rf], or NULL with an error in r. */
static int32_t *
ctl_create_manual(samsa_ctlbatch_t *b, const samsa_controller_new_topic_t *t,
                  samsa_arena_t *arena, samsa_controller_topic_result_t *r,
                  int32_t *rf)
{
    size_t        n = t->nassignments, i, j;
    bool         *seen = samsa_arena_calloc(arena, n + 1, sizeof(*seen));
    int32_t      *parts = NULL;
    bool          gap = false;
    const char   *msg;

    *rf = -1;
    if (t->replication_factor != -1 || t->num_partitions != -1) {
        ctl_topic_fail(r, SAMSA_ERR_INVALID_REQUEST, samsa_ctl_msg(arena,
                       "A manual partition assignment was specified, but %s "
                       "was not set to -1.", t->replication_factor != -1
                       ? "replication factor" : "numPartitions"));
        return NULL;
    }
    if (!samsa_ctlbatch_room(b, (int64_t) n)) {
        return NULL;
    }
    for (i = 0; i < n; i++) {
        const samsa_controller_assignment_t  *a = &t->assignments[i];
        bool                                  in = a->partition >= 0
                                                   && (size_t) a->partition
                                                      < n;
        bool                                  dup = in && seen[a->partition];

        for (j = 0; !in && j < i && !dup; j++) {    /* out of range: rare */
            dup = t->assignments[j].partition == a->partition;
        }
        gap = gap || !in;
        if (dup) {
            ctl_topic_fail(r, SAMSA_ERR_INVALID_REPLICA_ASSIGNMENT,
                           samsa_ctl_msg(arena, "Found multiple manual "
                                         "partition assignments for "
                                         "partition %" PRId32,
                                         a->partition));
            return NULL;
        }
        msg = ctl_check_assignment(b, a, a->partition, *rf, arena);
        if (msg != NULL) {
            ctl_topic_fail(r, SAMSA_ERR_INVALID_REPLICA_ASSIGNMENT, msg);
            return NULL;
        }
        *rf = a->nreplicas;
        if (parts == NULL) {
            parts = samsa_arena_calloc(arena, n * (size_t) *rf + 1,
                                       sizeof(*parts));
        }
        if (in) {
            seen[a->partition] = true;
            memcpy(&parts[(size_t) a->partition * (size_t) *rf],
                   a->replicas, (size_t) *rf * sizeof(*parts));
        }
    }
    if (gap) {
        ctl_topic_fail(r, SAMSA_ERR_INVALID_REPLICA_ASSIGNMENT,
                       "partitions should be a consecutive 0-based integer "
                       "sequence");
        return NULL;
    }
    if (!ctl_rf_allowed(b, *rf)) {
        ctl_topic_fail(r, SAMSA_ERR_INVALID_REPLICATION_FACTOR,
                       ctl_rf_unsupported(arena, *rf));
        return NULL;
    }
    return parts;
}

/* Counts from the request or the broker's defaults, checked as Kafka's
 * placer checks them against the usable brokers. */
static bool
ctl_create_counts(samsa_ctlbatch_t *b, const samsa_controller_new_topic_t *t,
                  samsa_arena_t *arena, samsa_controller_topic_result_t *r,
                  int32_t *nparts, int32_t *rf)
{
    const samsa_config_t  *cfg = b->broker_cfg;
    const char            *msg;

    if (t->replication_factor < -1 || t->replication_factor == 0) {
        ctl_topic_fail(r, SAMSA_ERR_INVALID_REPLICATION_FACTOR,
                       "Replication factor must be larger than 0, or -1 to "
                       "use the default value.");
        return false;
    }
    if (t->num_partitions < -1 || t->num_partitions == 0) {
        ctl_topic_fail(r, SAMSA_ERR_INVALID_PARTITIONS,
                       "Number of partitions was set to an invalid "
                       "non-positive value.");
        return false;
    }
    *nparts = t->num_partitions == -1
              ? samsa_config_int(cfg, "num.partitions") : t->num_partitions;
    *rf = t->replication_factor == -1
          ? samsa_config_int(cfg, "default.replication.factor")
          : t->replication_factor;
    msg = ctl_place_check(b, 0, *nparts, *rf, arena);
    if (msg != NULL) {
        ctl_topic_fail(r, SAMSA_ERR_INVALID_REPLICATION_FACTOR,
                       samsa_ctl_msg(arena, "Unable to replicate the "
                                     "partition %" PRId32 " time(s): %s",
                                     *rf, msg));
        return false;
    }
    if (!ctl_rf_allowed(b, *rf)) {
        ctl_topic_fail(r, SAMSA_ERR_INVALID_REPLICATION_FACTOR,
                       ctl_rf_unsupported(arena, *rf));
        return false;
    }
    return true;
}

/* The TopicRecord, its ConfigRecords and the PartitionRecords of parts
 * (nparts * rf ids). */
static void
ctl_create_records(samsa_ctlbatch_t *b, const samsa_controller_new_topic_t *t,
                   samsa_uuid_t id, const samsa_image_config_t *cfgs,
                   size_t ncfgs, int32_t *parts, int32_t nparts, int32_t rf,
                   samsa_arena_t *arena)
{
    samsa_MetadataRecords_any_t  rec;
    size_t                       i;
    int32_t                      p, nisr, *replicas, *isr;

    ctl_add_topic_record(b, t->name, id);
    for (i = 0; i < ncfgs; i++) {     /* after TopicRecord, before the
                                         PartitionRecords, as Kafka */
        ctl_rec_init(&rec, SAMSA_MetadataRecords_ConfigRecord);
        samsa_ConfigRecord_init(&rec.u.ConfigRecord);
        rec.u.ConfigRecord.ResourceType = SAMSA_CONFIG_RESOURCE_TOPIC;
        rec.u.ConfigRecord.ResourceName = t->name;
        rec.u.ConfigRecord.Name = samsa_slice_cstr(cfgs[i].name);
        rec.u.ConfigRecord.Value = samsa_slice_cstr(cfgs[i].value);
        samsa_ctlbatch_add(b, &rec);
    }
    for (p = 0; p < nparts; p++) {
        replicas = &parts[(size_t) p * (size_t) rf];
        isr = ctl_isr(b, replicas, rf, arena, &nisr);
        ctl_add_partition_record(b, id, p, replicas, rf, isr, nisr);
    }
}

static void
ctl_create_one(samsa_ctlbatch_t *b,
               const samsa_controller_create_topics_t *req,
               const samsa_controller_new_topic_t *t, samsa_arena_t *arena,
               samsa_controller_topic_result_t *r)
{
    samsa_image_config_t  *cfgs;
    size_t                 ncfgs;
    int32_t               *parts = NULL, nparts, rf;
    const char            *msg = NULL;
    char                   err[512];
    samsa_uuid_t           id;

    ctl_create_check_name(b, req, t, arena, r);
    if (r->error != SAMSA_ERR_NONE) {
        return;
    }
    cfgs = ctl_create_configs(t, arena, &ncfgs);
    if (samsa_topic_config_validate(b->broker_cfg, b->img,
                                    cfgs, ncfgs, err, sizeof(err))
        != SAMSA_ERR_NONE) {
        ctl_topic_fail(r, SAMSA_ERR_INVALID_CONFIG,
                       samsa_ctl_msg(arena, "%s", err));
        return;
    }
    if (t->nassignments > 0) {
        parts = ctl_create_manual(b, t, arena, r, &rf);
        nparts = (int32_t) t->nassignments;
    } else if (!ctl_create_counts(b, t, arena, r, &nparts, &rf)) {
        return;
    }
    if (r->error != SAMSA_ERR_NONE
        || !samsa_ctlbatch_room(b, 1 + (int64_t) ncfgs + nparts)) {
        return;
    }
    if (parts == NULL) {            /* checked: the placer succeeds */
        parts = ctl_place(b, 0, nparts, rf, arena, &msg);
        if (parts == NULL) {
            ctl_topic_fail(r, SAMSA_ERR_INVALID_REPLICATION_FACTOR, msg);
            return;
        }
    }
    if (!ctl_quota_apply(req->quota, nparts)) {
        r->error = SAMSA_ERR_THROTTLING_QUOTA_EXCEEDED;
        return;
    }
    do {
        id = samsa_image_id_random();
    } while (samsa_image_delta_topic_find_id(b->delta, id) != NULL);
    r->topic_id = id;
    r->num_partitions = nparts;
    r->replication_factor = (int16_t) rf;
    ctl_create_records(b, t, id, cfgs, ncfgs, parts, nparts, rf, arena);
}

void
samsa_ctltopics_create(samsa_ctlbatch_t *b,
                       const samsa_controller_create_topics_t *req,
                       samsa_arena_t *arena,
                       samsa_controller_topic_result_t *results)
{
    size_t  i, j;

    memset(results, 0, req->ntopics * sizeof(*results));
    for (i = 0; i < req->ntopics; i++) {        /* ControllerApis */
        for (j = 0; j < req->ntopics; j++) {
            if (j != i && ctl_slice_eq(req->topics[i].name,
                                       req->topics[j].name)) {
                ctl_topic_fail(&results[i], SAMSA_ERR_INVALID_REQUEST,
                               "Duplicate topic name.");
            }
        }
    }
    for (i = 0; i < req->ntopics; i++) {
        if (results[i].error == SAMSA_ERR_NONE) {
            ctl_create_one(b, req, &req->topics[i], arena, &results[i]);
        }
    }
}

/* ---- DeleteTopics */

/* ControllerApis' checks of item i: name or id, not both, not twice. */
static bool
ctl_delete_check(const samsa_controller_topic_ref_t *refs, size_t n,
                 size_t i, samsa_controller_delete_result_t *r)
{
    bool    by_name = refs[i].name.ptr != NULL;
    size_t  j;

    if (!by_name && samsa_uuid_is_zero(refs[i].id)) {
        r->error = SAMSA_ERR_INVALID_REQUEST;
        r->message = "Neither topic name nor id were specified.";
        return false;
    }
    if (by_name && !samsa_uuid_is_zero(refs[i].id)) {
        r->error = SAMSA_ERR_INVALID_REQUEST;
        r->message = "You may not specify both topic name and topic id.";
        return false;
    }
    for (j = 0; j < n; j++) {
        if (j == i || (refs[j].name.ptr != NULL) != by_name
            || (by_name && !samsa_uuid_is_zero(refs[j].id))) {
            continue;
        }
        if (by_name ? ctl_slice_eq(refs[j].name, refs[i].name)
                    : samsa_uuid_eq(refs[j].id, refs[i].id)) {
            r->error = SAMSA_ERR_INVALID_REQUEST;
            r->message = by_name ? "Duplicate topic name."
                                 : "Duplicate topic id.";
            return false;
        }
    }
    return true;
}

static void
ctl_delete_one(samsa_ctlbatch_t *b, const samsa_controller_topic_ref_t *ref,
               const samsa_controller_quota_t *quota, samsa_arena_t *arena,
               samsa_controller_delete_result_t *r)
{
    const samsa_image_topic_t    *t;
    samsa_MetadataRecords_any_t   rec;
    bool                          by_name = ref->name.ptr != NULL;

    /* Resolved against the image as it was before this operation, so a
     * topic named twice (by name and by id) is deleted once and both
     * items succeed, as Kafka's idToName map makes it. */
    t = by_name ? samsa_image_topic_find(b->img, ref->name.ptr,
                                         ref->name.len)
                : samsa_image_topic_find_id(b->img, ref->id);
    if (t == NULL) {
        r->error = by_name ? SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION
                           : SAMSA_ERR_UNKNOWN_TOPIC_ID;
        r->message = by_name ? "This server does not host this "
                               "topic-partition."
                             : "This server does not host this topic ID.";
        return;
    }
    r->id = t->id;
    r->name = samsa_arena_strndup(arena, t->name, t->name_len);
    if (samsa_image_delta_topic_find_id(b->delta, t->id) == NULL
        || !samsa_ctlbatch_room(b, 1)) {
        return;                         /* already removed by this batch */
    }
    if (!ctl_quota_apply(quota, (int32_t) t->npartitions)) {
        r->error = SAMSA_ERR_THROTTLING_QUOTA_EXCEEDED;
        return;
    }
    ctl_rec_init(&rec, SAMSA_MetadataRecords_RemoveTopicRecord);
    samsa_RemoveTopicRecord_init(&rec.u.RemoveTopicRecord);
    rec.u.RemoveTopicRecord.TopicId = t->id;
    samsa_ctlbatch_add(b, &rec);
}

void
samsa_ctltopics_delete(samsa_ctlbatch_t *b,
                       const samsa_controller_topic_ref_t *refs, size_t n,
                       const samsa_controller_quota_t *quota,
                       samsa_arena_t *arena,
                       samsa_controller_delete_result_t *results)
{
    size_t  i;

    memset(results, 0, n * sizeof(*results));
    for (i = 0; i < n; i++) {
        results[i].id = refs[i].id;
        results[i].name = refs[i].name.ptr != NULL
                          ? samsa_arena_strndup(arena, refs[i].name.ptr,
                                                refs[i].name.len)
                          : NULL;
        if (ctl_delete_check(refs, n, i, &results[i])) {
            ctl_delete_one(b, &refs[i], quota, arena, &results[i]);
        }
    }
}

/* ---- CreatePartitions */

/* Manual assignments of the add new partitions after the have ones:
 * add * rf ids in arena, or NULL with the error in r. */
static int32_t *
ctl_partitions_manual(samsa_ctlbatch_t *b,
                      const samsa_controller_new_partitions_t *t,
                      int32_t have, int32_t add, int32_t rf,
                      samsa_arena_t *arena, samsa_controller_result_t *r)
{
    int32_t     *parts;
    const char  *msg;
    size_t       i;

    parts = samsa_arena_calloc(arena, (size_t) add * (size_t) rf + 1,
                               sizeof(*parts));
    for (i = 0; i < t->nassignments; i++) {
        msg = ctl_check_assignment(b, &t->assignments[i],
                                   have + (int32_t) i, rf, arena);
        if (msg != NULL) {
            r->error = SAMSA_ERR_INVALID_REPLICA_ASSIGNMENT;
            r->message = msg;
            return NULL;
        }
        memcpy(&parts[i * (size_t) rf], t->assignments[i].replicas,
               (size_t) rf * sizeof(*parts));
    }
    return parts;
}

static void
ctl_partitions_one(samsa_ctlbatch_t *b,
                   const samsa_controller_new_partitions_t *t,
                   const samsa_controller_quota_t *quota,
                   samsa_arena_t *arena, samsa_controller_result_t *r)
{
    const samsa_image_topic_t  *topic;
    int32_t                     have, add, rf, p, nisr, *parts, *isr;

    topic = samsa_image_delta_topic_find(b->delta, t->name.ptr, t->name.len);
    if (topic == NULL) {
        r->error = SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION;
        return;
    }
    have = topic->npartitions;
    if (t->count == have) {
        r->error = SAMSA_ERR_INVALID_PARTITIONS;
        r->message = samsa_ctl_msg(arena, "Topic already has %" PRId32
                                   " partition(s).", have);
        return;
    }
    if (t->count < have) {
        r->error = SAMSA_ERR_INVALID_PARTITIONS;
        r->message = samsa_ctl_msg(arena, "The topic %.*s currently has %"
                                   PRId32 " partition(s); %" PRId32 " would "
                                   "not be an increase.", (int) t->name.len,
                                   t->name.ptr, have, t->count);
        return;
    }
    add = t->count - have;
    if (t->assignments != NULL && t->nassignments != (size_t) add) {
        r->error = SAMSA_ERR_INVALID_REPLICA_ASSIGNMENT;
        r->message = samsa_ctl_msg(arena, "Attempted to add %" PRId32
                                   " additional partition(s), but only %zu "
                                   "assignment(s) were specified.", add,
                                   t->nassignments);
        return;
    }
    rf = have > 0 ? topic->partitions[0].nreplicas : 1;
    parts = NULL;
    if (t->assignments != NULL) {
        parts = ctl_partitions_manual(b, t, have, add, rf, arena, r);
        if (parts == NULL) {
            return;
        }
    } else {
        r->message = ctl_place_check(b, have, add, rf, arena);
        if (r->message != NULL) {       /* Kafka's text, no prefix here */
            r->error = SAMSA_ERR_INVALID_REPLICATION_FACTOR;
            return;
        }
    }
    if (!ctl_rf_allowed(b, rf)) {       /* no such topic yet */
        r->error = SAMSA_ERR_INVALID_REPLICATION_FACTOR;
        r->message = ctl_rf_unsupported(arena, rf);
        return;
    }
    if (!samsa_ctlbatch_room(b, add)) {
        return;
    }
    if (parts == NULL) {                /* checked: the placer succeeds */
        parts = ctl_place(b, have, add, rf, arena, &r->message);
        if (parts == NULL) {
            r->error = SAMSA_ERR_INVALID_REPLICATION_FACTOR;
            return;
        }
    }
    if (!ctl_quota_apply(quota, add)) {
        r->error = SAMSA_ERR_THROTTLING_QUOTA_EXCEEDED;
        return;
    }
    for (p = 0; p < add; p++) {
        isr = ctl_isr(b, &parts[(size_t) p * (size_t) rf], rf, arena, &nisr);
        ctl_add_partition_record(b, topic->id, have + p,
                                 &parts[(size_t) p * (size_t) rf], rf, isr,
                                 nisr);
    }
}

void
samsa_ctltopics_partitions(samsa_ctlbatch_t *b,
                           const samsa_controller_new_partitions_t *t,
                           size_t n, const samsa_controller_quota_t *quota,
                           samsa_arena_t *arena,
                           samsa_controller_result_t *results)
{
    size_t  i, j;

    memset(results, 0, n * sizeof(*results));
    for (i = 0; i < n; i++) {
        for (j = 0; j < n && results[i].error == SAMSA_ERR_NONE; j++) {
            if (j != i && ctl_slice_eq(t[i].name, t[j].name)) {
                results[i].error = SAMSA_ERR_INVALID_REQUEST;
                results[i].message = "Duplicate topic name.";
            }
        }
        if (results[i].error == SAMSA_ERR_NONE) {
            ctl_partitions_one(b, &t[i], quota, arena, &results[i]);
        }
    }
}
