/*
 * meta/controller/controller.h - the KRaft controller.  On a single node
 * it owns the metadata log (__cluster_metadata-0, meta/mlog.h), rebuilds the
 * image from it at start, and carries out the admin changes the broker's
 * handlers forward to it (CreateTopics, DeleteTopics, CreatePartitions,
 * AlterConfigs, IncrementalAlterConfigs, producer-id blocks) the way
 * Kafka's QuorumController does: validate against the current image,
 * write the resulting records to the metadata log as one batch, fsync,
 * and only then publish the new image (meta/meta.h) and answer.
 *
 * The interface is request and result structs per operation, so that a
 * network hop (ControllerApis over the CONTROLLER listener) can sit behind
 * it later (DESIGN.md section 6).  Brokers register through it too
 * (samsa_controller_register_broker), so the image lists every broker.
 * Results are per item, in the order of the request's items, each with
 * Kafka's error code and message.
 *
 * In KRaft cluster mode the log is the metadata quorum's (meta/quorum.h,
 * see samsa_controller_open): changes go through the raft leader, the
 * active controller, and every node's image is what the quorum committed.
 * Threads: one controller thread ("controller", Kafka's
 * quorum-controller event handler) owns the metadata log and the
 * controller's state and runs every operation in turn; the samsa_controller_*
 * operations may be called from any thread (handler threads): each queues
 * its request and waits for the controller thread's answer.  Nothing here
 * holds a lock while writing, fsyncing or calling listeners.  Readers of
 * metadata never come here: they take images from meta/meta.h.
 * Ownership: requests are borrowed for the call; result messages and
 * names are allocated in the caller's arena.
 */
#ifndef SAMSA_META_CONTROLLER_CONTROLLER_H
#define SAMSA_META_CONTROLLER_CONTROLLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>
#include "meta/acl.h"
#include "meta/brokercfg.h"
#include "meta/image.h"
#include "meta/meta.h"
#include "proto/types.h"
#include "util/arena.h"
#include "config/config.h"
#include "util/slice.h"

typedef struct samsa_controller samsa_controller_t;

/* Kafka's MAX_RECORDS_PER_USER_OP: an operation needing more records
 * fails whole with POLICY_VIOLATION "Unable to perform excessively large
 * batch operation." */
#define SAMSA_CONTROLLER_MAX_RECORDS  10000

/* Kafka's ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE. */
#define SAMSA_CONTROLLER_PRODUCER_ID_BLOCK  1000

typedef struct samsa_controller_conf {
    int32_t                node_id;
    const char            *metadata_dir;    /* metadata.log.dir, else the
                                               first log dir; the log is
                                               <dir>/__cluster_metadata-0 */
    const samsa_config_t  *broker_cfg;      /* num.partitions,
                                               default.replication.factor,
                                               the topic configs' broker
                                               fallbacks; outlives ctrl */
    samsa_meta_t          *meta;            /* where images go; outlives
                                               ctrl */
    /* KRaft cluster mode (process.roles set, controller role): the
     * metadata log is the quorum's (meta/quorum.h), opened by
     * samsa_controller_open in <metadata_dir>/__raft_metadata with the
     * voters and timeouts of broker_cfg's samsa_config_kraft; NULL: the
     * single node's own log (__cluster_metadata-0) */
    const char            *cluster_id;
} samsa_controller_conf_t;

/* conf for a broker configured by cfg: node.id, metadata.log.dir or else
 * the first of log.dirs, cfg itself, and meta.  @thread main */
void samsa_controller_conf_init(samsa_controller_conf_t *conf,
                                const samsa_config_t *cfg,
                                samsa_meta_t *meta);

/* Open the metadata log (creating it on a first start, whose first batch
 * is Kafka's bootstrap: FeatureLevelRecord metadata.version), replay it
 * into an image, publish that image (listeners see (empty, loaded)), and
 * start the controller thread.
 * Cluster mode (conf->cluster_id set): publish the empty image, open the
 * quorum and return; every member's image is then built only from
 * committed entries, in the quorum's commit callback on the "quorum"
 * thread (listeners run there), and the raft leader is the active
 * controller: once leader_change says is_self it writes the bootstrap
 * batch if the log has none yet (once per cluster), and only it accepts
 * changes.  Elsewhere every change answers NOT_CONTROLLER.  A corrupt record in the middle of the log
 * stops the start (errstr names the offset); a torn tail after a crash is
 * cut off by the log layer's recovery first.
 * @thread main */
SAMSA_MUST_CHECK samsa_err_t samsa_controller_open(
    samsa_controller_t **ctrl, const samsa_controller_conf_t *conf,
    char *errstr, size_t errstr_size);

/* Stop the controller thread (operations still queued fail with
 * SAMSA_ERR__SHUTDOWN) and close the metadata log.  The callers (handler
 * pools) must have stopped first: an operation started after close
 * returns is undefined.  The last published image stays in conf->meta.
 * NULL is a no-op.  @thread main */
void samsa_controller_close(samsa_controller_t *ctrl);

/* Each operation returns SAMSA_ERR_NONE when it ran (look at each item's
 * result: in cluster mode every item is NOT_CONTROLLER on a node that is
 * not the active controller, or when leadership was lost while the batch
 * was in flight), or a whole-operation failure: SAMSA_ERR__SHUTDOWN (closing),
 * SAMSA_ERR__IO (the metadata log could not be written or synced: nothing
 * was applied, and the controller refuses every later change, as a Kafka
 * controller that lost its log would resign).  Items are independent
 * except that a batch over SAMSA_CONTROLLER_MAX_RECORDS fails whole.
 * @thread any but the controller's (listeners must not call these) */

/* ---- the controller mutation quota */

/* Kafka's ControllerRequestContext.applyPartitionChangeQuota (KIP-599):
 * the topic operations call apply on the controller thread for each topic
 * that passed every other check, with the partitions it creates, deletes
 * or adds, before making its records; false refuses that topic with
 * THROTTLING_QUOTA_EXCEEDED and no message (Kafka's ApiError.fromThrowable
 * leaves out a message that is the error's default one).  A NULL quota
 * (or apply) is none: internal and validate_only requests, which Kafka does
 * not count either.  apply must not call the controller. */
typedef struct samsa_controller_quota {
    bool  (*apply)(void *ctx, int32_t partitions);
    void   *ctx;
} samsa_controller_quota_t;

/* ---- CreateTopics */

typedef struct samsa_controller_assignment {
    int32_t         partition;
    const int32_t  *replicas;           /* registered broker ids */
    int32_t         nreplicas;
} samsa_controller_assignment_t;

typedef struct samsa_controller_new_topic {
    samsa_slice_t                         name;
    int32_t                               num_partitions;   /* -1: default */
    int16_t                               replication_factor; /* -1: default */
    const samsa_controller_assignment_t  *assignments;      /* manual, or
                                                               NULL/0 */
    size_t                                nassignments;
    const samsa_image_config_t           *configs;          /* value NULL is
                                                               an error, as
                                                               in Kafka */
    size_t                                nconfigs;
} samsa_controller_new_topic_t;

typedef struct samsa_controller_create_topics {
    const samsa_controller_new_topic_t  *topics;
    size_t                               ntopics;
    bool                                 validate_only;
    bool                                 internal;  /* the broker itself:
                                                       may create
                                                       __consumer_offsets and
                                                       __transaction_state */
    const samsa_controller_quota_t      *quota;     /* NULL: none */
} samsa_controller_create_topics_t;

typedef struct samsa_controller_topic_result {
    samsa_err_t    error;
    const char    *message;             /* NULL on success */
    samsa_uuid_t   topic_id;            /* the new id (also when
                                           validate_only, as Kafka) */
    int32_t        num_partitions;      /* on success */
    int16_t        replication_factor;
} samsa_controller_topic_result_t;

/* Kafka's errors: INVALID_REQUEST (duplicate name in the request "Duplicate
 * topic name.", manual assignment with counts set, creating
 * __cluster_metadata, or an internal topic unless req->internal),
 * INVALID_TOPIC_EXCEPTION (Topic.validate; '.'/'_' collision "Topic 'a.b'
 * collides with existing topic: a_b"), TOPIC_ALREADY_EXISTS ("Topic 'x'
 * already exists."), INVALID_PARTITIONS, INVALID_REPLICATION_FACTOR
 * ("Unable to replicate the partition 3 time(s): The target replication
 * factor of 3 cannot be reached because only 1 broker(s) are
 * registered."; above 1, while followers do not replicate yet, "...:
 * replication across brokers is not available yet, so the replication
 * factor must be 1."), INVALID_REPLICA_ASSIGNMENT, INVALID_CONFIG,
 * THROTTLING_QUOTA_EXCEEDED (req->quota, charged the topic's partitions).
 * results[i] answers req->topics[i]. */
SAMSA_MUST_CHECK samsa_err_t samsa_controller_create_topics(
    samsa_controller_t *ctrl, const samsa_controller_create_topics_t *req,
    samsa_arena_t *arena, samsa_controller_topic_result_t *results);

/* ---- DeleteTopics */

/* A topic named by name (name.ptr != NULL, id zero) or by id. */
typedef struct samsa_controller_topic_ref {
    samsa_slice_t  name;
    samsa_uuid_t   id;
} samsa_controller_topic_ref_t;

typedef struct samsa_controller_delete_result {
    samsa_err_t    error;               /* UNKNOWN_TOPIC_OR_PARTITION,
                                           UNKNOWN_TOPIC_ID,
                                           INVALID_REQUEST (duplicates, both
                                           or neither of name and id) */
    const char    *message;             /* NULL on success */
    const char    *name;                /* the topic's name when known */
    samsa_uuid_t   id;                  /* the topic's id when known */
} samsa_controller_delete_result_t;

/* Delete topics (one RemoveTopicRecord each: partitions and configs go
 * with it).  quota (NULL: none) is charged each topic's partitions and may
 * refuse it with THROTTLING_QUOTA_EXCEEDED.  results[i] answers refs[i]. */
SAMSA_MUST_CHECK samsa_err_t samsa_controller_delete_topics(
    samsa_controller_t *ctrl, const samsa_controller_topic_ref_t *refs,
    size_t n, const samsa_controller_quota_t *quota, samsa_arena_t *arena,
    samsa_controller_delete_result_t *results);

/* ---- CreatePartitions */

typedef struct samsa_controller_new_partitions {
    samsa_slice_t                         name;
    int32_t                               count;  /* the new total */
    const samsa_controller_assignment_t  *assignments; /* one per new
                                                          partition (their
                                                          .partition is
                                                          ignored), or NULL */
    size_t                                nassignments;
} samsa_controller_new_partitions_t;

typedef struct samsa_controller_result {
    samsa_err_t   error;
    const char   *message;              /* NULL on success */
} samsa_controller_result_t;

/* Kafka's errors: UNKNOWN_TOPIC_OR_PARTITION, INVALID_PARTITIONS ("The
 * topic t currently has 3 partition(s); 2 would not be an increase.",
 * "Topic already has 3 partition(s)."), INVALID_REPLICA_ASSIGNMENT,
 * INVALID_REPLICATION_FACTOR (the placer's message as is: "All brokers
 * are currently fenced."), INVALID_REQUEST ("Duplicate topic name."), THROTTLING_QUOTA_EXCEEDED
 * (quota, NULL: none, charged the partitions each topic adds).
 * results[i] answers topics[i]. */
SAMSA_MUST_CHECK samsa_err_t samsa_controller_create_partitions(
    samsa_controller_t *ctrl, const samsa_controller_new_partitions_t *topics,
    size_t n, bool validate_only, const samsa_controller_quota_t *quota,
    samsa_arena_t *arena, samsa_controller_result_t *results);

/* ---- AlterConfigs / IncrementalAlterConfigs */

/* Kafka's AlterConfigOp.OpType ids. */
typedef enum samsa_config_op {
    SAMSA_CONFIG_OP_SET      = 0,
    SAMSA_CONFIG_OP_DELETE   = 1,
    SAMSA_CONFIG_OP_APPEND   = 2,
    SAMSA_CONFIG_OP_SUBTRACT = 3,
} samsa_config_op_t;

typedef struct samsa_controller_config_op {
    const char   *name;
    int8_t        op;                   /* samsa_config_op_t; ignored by
                                           the full replace */
    const char   *value;                /* NULL for DELETE */
} samsa_controller_config_op_t;

typedef struct samsa_controller_alter_config {
    int8_t                               resource_type; /* SAMSA_CONFIG_
                                                           RESOURCE_* */
    samsa_slice_t                        resource_name;
    const samsa_controller_config_op_t  *ops;
    size_t                               nops;
} samsa_controller_alter_config_t;

/* AlterConfigs: each resource's overrides become exactly ops' name/value
 * pairs (keys not listed are removed).  Incremental: SET, DELETE, and
 * APPEND/SUBTRACT of comma-separated items on LIST keys ("Can't APPEND to
 * key retention.ms because its type is not LIST.").  TOPIC resources,
 * and BROKER resources ("" or a broker id: dynamic broker configs,
 * checked by meta/brokercfg.h, refusals INVALID_CONFIG: the KAFKA-13609
 * intent, where Kafka 3.x's broker answers INVALID_REQUEST); other types INVALID_REQUEST "Unsupported configuration
 * resource type ...".  Unknown topic: UNKNOWN_TOPIC_OR_PARTITION "The topic
 * 'x' does not exist."; bad keys or values: INVALID_CONFIG.  results[i]
 * answers resources[i]. */
SAMSA_MUST_CHECK samsa_err_t samsa_controller_alter_configs(
    samsa_controller_t *ctrl,
    const samsa_controller_alter_config_t *resources, size_t n,
    bool incremental, bool validate_only, samsa_arena_t *arena,
    samsa_controller_result_t *results);

/* ---- AlterClientQuotas */

typedef struct samsa_controller_quota_part {
    samsa_slice_t  type;                /* "user", "client-id", "ip" */
    samsa_slice_t  name;                /* ptr NULL: the default entity */
} samsa_controller_quota_part_t;

typedef struct samsa_controller_quota_op {
    samsa_slice_t  key;                 /* producer_byte_rate, ... */
    double         value;
    bool           remove;
} samsa_controller_quota_op_t;

typedef struct samsa_controller_quota_alter {
    const samsa_controller_quota_part_t  *entity;
    size_t                                nentity;
    const samsa_controller_quota_op_t    *ops;
    size_t                                nops;
} samsa_controller_quota_alter_t;

/* Set or remove client quotas (one ClientQuotaRecord per changed key), as
 * Kafka's ClientQuotaControlManager: INVALID_REQUEST "Invalid empty client
 * quota entity", "Invalid client quota entity, duplicate entity entry
 * user", "Unhandled client quota entity type: x", "Empty user not
 * supported", "Invalid quota entity combination, IP entity shouldnot be
 * combined with User or ClientId" (sic), "x is not a valid IP or
 * resolvable host." (literal addresses only: no name lookup), "Duplicate
 * quota key k not updating quota for this entity <entity>", "Invalid
 * configuration key k", "Quota k must be greater than 0", "k cannot be a
 * fractional value.", "Proposed value for k is too large for a LONG."
 * (an INT for connection_creation_rate).  results[i] answers
 * entries[i]. */
SAMSA_MUST_CHECK samsa_err_t samsa_controller_alter_client_quotas(
    samsa_controller_t *ctrl, const samsa_controller_quota_alter_t *entries,
    size_t n, bool validate_only, samsa_arena_t *arena,
    samsa_controller_result_t *results);

/* ---- AlterUserScramCredentials */

/* One deletion (remove) or upsertion of a user's credential. */
typedef struct samsa_controller_scram_op {
    samsa_slice_t  name;
    int8_t         mechanism;           /* ScramMechanism type: 1, 2 */
    bool           remove;
    int32_t        iterations;          /* upsertions: */
    samsa_slice_t  salt;
    samsa_slice_t  salted_password;
} samsa_controller_scram_op_t;

/* Kafka's ScramControlManager.alterCredentials: ops (deletions first,
 * then upsertions, as the request has them) grouped by user; a user named
 * twice fails with DUPLICATE_RESOURCE ("A user credential cannot be
 * altered twice in the same request"), an empty name or an unknown
 * mechanism with UNACCEPTABLE_CREDENTIAL / UNSUPPORTED_SASL_MECHANISM,
 * iterations outside 4096..16384 with UNACCEPTABLE_CREDENTIAL ("Too few
 * iterations", "Too many iterations"), deleting what is not there with
 * RESOURCE_NOT_FOUND.  results[i] answers ops[i]: every op of a user gets
 * the user's answer.  The users that pass get one
 * UserScramCredentialRecord or RemoveUserScramCredentialRecord, all in
 * one batch. */
SAMSA_MUST_CHECK samsa_err_t samsa_controller_alter_scram(
    samsa_controller_t *ctrl, const samsa_controller_scram_op_t *ops,
    size_t n, samsa_arena_t *arena, samsa_controller_result_t *results);
/* ---- CreateAcls / DeleteAcls (meta/acl.h) */

/* One DeleteAcls filter's answer: the bindings it matched (strings in the
 * caller's arena), each removed by this operation. */
typedef struct samsa_controller_acl_delete_result {
    samsa_err_t         error;
    const char         *message;        /* NULL on success */
    samsa_acl_t        *matched;        /* in arena */
    size_t              nmatched;
} samsa_controller_acl_delete_result_t;

/* Add ACL bindings (ids are the controller's), as Kafka's
 * AclControlManager.createAcls: INVALID_REQUEST "Invalid resourceType X",
 * "Invalid patternType X", "Invalid operation X", "Invalid permissionType
 * X", "Resource name should not be empty"; a binding that exists already
 * succeeds and adds nothing.  results[i] answers acls[i]. */
SAMSA_MUST_CHECK samsa_err_t samsa_controller_create_acls(
    samsa_controller_t *ctrl, const samsa_acl_t *acls, size_t n,
    samsa_arena_t *arena, samsa_controller_result_t *results);

/* Remove every binding each filter matches (AclControlManager.deleteAcls):
 * INVALID_REQUEST "Unknown patternFilter." / "Unknown entryFilter." for a
 * filter with UNKNOWN codes.  results[i] answers filters[i]. */
SAMSA_MUST_CHECK samsa_err_t samsa_controller_delete_acls(
    samsa_controller_t *ctrl, const samsa_acl_filter_t *filters, size_t n,
    samsa_arena_t *arena, samsa_controller_acl_delete_result_t *results);

/* ---- the quorum (cluster mode) */

/* The active controller's node id: this node in single-node mode; in
 * cluster mode the raft leader (-1 while none is known, or while a new
 * leader has not committed its barrier).  @thread any */
int32_t samsa_controller_active_id(samsa_controller_t *ctrl);

/* The quorum in cluster mode (for adopt_fd and describe), else NULL.
 * Valid until close.  @thread any */
struct samsa_quorum *samsa_controller_quorum(samsa_controller_t *ctrl);

/* ---- producer ids */

/* Allocate the next block of SAMSA_CONTROLLER_PRODUCER_ID_BLOCK producer
 * ids (a ProducerIdsRecord naming this node): *first is its first id.
 * For this node's own producer-id manager (broker/pidmgr.h) when it is the
 * active controller, or a single node; no broker epoch check. */
SAMSA_MUST_CHECK samsa_err_t samsa_controller_alloc_producer_ids(
    samsa_controller_t *ctrl, int64_t *first);

/* A broker's AllocateProducerIds (KIP-730). */
typedef struct samsa_controller_pid_req {
    int32_t   broker_id;
    int64_t   broker_epoch;
} samsa_controller_pid_req_t;

/* The next block for req's broker (the ProducerIdsRecord names it), as
 * Kafka's ProducerIdControlManager: STALE_BROKER_EPOCH when the broker is
 * not registered or registered with another epoch (Kafka's
 * ClusterControlManager.checkBrokerEpoch answers both so), NOT_CONTROLLER
 * on a node that is not the active controller.  *first as above. */
SAMSA_MUST_CHECK samsa_err_t samsa_controller_allocate_producer_ids(
    samsa_controller_t *ctrl, const samsa_controller_pid_req_t *req,
    int64_t *first);

/* ---- broker registration */

/* One endpoint a broker registers: where clients reach it on a listener. */
typedef struct samsa_controller_endpoint {
    const char  *listener;              /* listener name */
    const char  *host;
    uint16_t     port;
    int16_t      security_protocol;     /* Kafka's SecurityProtocol id */
} samsa_controller_endpoint_t;

/* A broker's registration (Kafka's BrokerRegistrationRequest, less what
 * one process has no use for yet: log dirs, ZK migration). */
typedef struct samsa_controller_broker_reg {
    int32_t                             broker_id;
    samsa_uuid_t                        incarnation_id; /* this process */
    const samsa_controller_endpoint_t  *endpoints;
    size_t                              nendpoints;
    const char                         *rack;           /* NULL: none */
} samsa_controller_broker_reg_t;

/* Register a broker: a RegisterBrokerRecord (fenced; its broker epoch is
 * its own offset, as Kafka's).  On one node a BrokerRegistrationChangeRecord
 * unfencing it follows in the same batch; in cluster mode its first
 * caught-up heartbeat unfences it (samsa_controller_broker_heartbeat).  A registration replaces the broker's earlier one.
 * *epoch gets the new broker epoch.  On one node the broker registers
 * itself at start, once its listeners are bound (samsa_broker_register). */
SAMSA_MUST_CHECK samsa_err_t samsa_controller_register_broker(
    samsa_controller_t *ctrl, const samsa_controller_broker_reg_t *reg,
    int64_t *epoch);

/* ---- broker heartbeats (cluster mode) */

typedef struct samsa_controller_heartbeat {
    int32_t   broker_id;
    int64_t   broker_epoch;
    int64_t   current_offset;       /* the last metadata offset the broker
                                       applied */
    bool      want_fence;
    bool      want_shutdown;        /* controlled shutdown (KIP-631) */
} samsa_controller_heartbeat_t;

typedef struct samsa_controller_heartbeat_result {
    samsa_err_t   error;            /* NONE, BROKER_ID_NOT_REGISTERED,
                                       STALE_BROKER_EPOCH, NOT_CONTROLLER */
    bool          caught_up;
    bool          fenced;
    bool          should_shutdown;  /* the broker may finish shutting
                                       down: it leads nothing */
} samsa_controller_heartbeat_result_t;

/* A broker's heartbeat, as Kafka's QuorumController.processBrokerHeartbeat:
 * restarts the broker's session clock and unfences a fenced broker once
 * current_offset reaches its registration record (the broker epoch).  The
 * active controller fences (BrokerRegistrationChangeRecord Fenced=1) an
 * unfenced broker that sent none for broker.session.timeout.ms; a newly
 * elected one starts every session clock at its election.  Partition
 * leadership follows (Kafka's ReplicationControlManager): the batch that
 * fences a broker moves leadership off it (leader -1 where no other ISR
 * member is active), the one that unfences it elects it again where it is
 * the leader-less partitions' ISR.  want_shutdown is KIP-631's controlled
 * shutdown: the broker enters it (BrokerRegistrationChangeRecord
 * InControlledShutdown, its leadership moved) and a later heartbeat, once
 * it leads nothing, answers should_shutdown and fences it. */
SAMSA_MUST_CHECK samsa_err_t samsa_controller_broker_heartbeat(
    samsa_controller_t *ctrl, const samsa_controller_heartbeat_t *hb,
    samsa_controller_heartbeat_result_t *res);

/* ---- ISR changes by partition leaders (AlterPartition, KIP-497) */

/* One member of a proposed ISR: broker_epoch -1 skips its epoch check
 * (AlterPartition before v3). */
typedef struct samsa_controller_isr_member {
    int32_t  broker_id;
    int64_t  broker_epoch;
} samsa_controller_isr_member_t;

/* One partition's proposed ISR, as its leader saw the partition. */
typedef struct samsa_controller_isr_change {
    samsa_uuid_t                          topic_id;
    int32_t                               partition;
    int32_t                               leader_epoch;
    int32_t                               partition_epoch;
    int8_t                                leader_recovery_state;
    const samsa_controller_isr_member_t  *isr;
    size_t                                nisr;
} samsa_controller_isr_change_t;

typedef struct samsa_controller_isr_result {
    samsa_err_t     error;          /* Kafka's partition-level code */
    int32_t         leader_id;      /* the rest: error NONE only */
    int32_t         leader_epoch;
    int32_t         partition_epoch;
    int8_t          leader_recovery_state;
    const int32_t  *isr;            /* in the caller's arena */
    size_t          nisr;
} samsa_controller_isr_result_t;

/* Kafka's ReplicationControlManager.alterPartition: broker_id (with
 * broker_epoch, else STALE_BROKER_EPOCH for the whole request) asks for
 * the n ISR changes of changes.  Each is checked against the current
 * image (unknown topic id: UNKNOWN_TOPIC_ID; unknown partition:
 * UNKNOWN_TOPIC_OR_PARTITION; a leader or partition epoch above the
 * controller's: NOT_CONTROLLER; an older leader epoch:
 * FENCED_LEADER_EPOCH; a sender that does not lead it: INVALID_REQUEST;
 * an older partition epoch: INVALID_UPDATE_VERSION; an ISR with a
 * non-replica, a duplicate, or without the leader, and a RECOVERING
 * leader recovery state: INVALID_REQUEST; a member that is not
 * registered, fenced, in controlled shutdown or (its broker_epoch not -1)
 * of another broker epoch: INELIGIBLE_REPLICA) and the valid ones become
 * one batch of PartitionChangeRecords (none for an unchanged ISR), whose
 * results (the new ISR, leader and epochs, in arena) are answered once
 * the batch is committed.  @returns NONE, STALE_BROKER_EPOCH,
 * NOT_CONTROLLER, or the commit's failure. */
SAMSA_MUST_CHECK samsa_err_t samsa_controller_alter_partition(
    samsa_controller_t *ctrl, int32_t broker_id, int64_t broker_epoch,
    const samsa_controller_isr_change_t *changes, size_t n,
    samsa_arena_t *arena, samsa_controller_isr_result_t *results);

/* ---- leader elections (ElectLeaders, KIP-183 / KIP-460) */

#define SAMSA_CONTROLLER_ELECTION_PREFERRED  0
#define SAMSA_CONTROLLER_ELECTION_UNCLEAN    1

typedef struct samsa_controller_elect {
    samsa_slice_t  topic;
    int32_t        partition;
} samsa_controller_elect_t;

/* message: in the caller's arena; NULL: the error's own text */
typedef samsa_controller_result_t samsa_controller_elect_result_t;

/* Kafka's ReplicationControlManager.electLeaders: for each of the n
 * partitions an election of type (PREFERRED: the first replica, if it is
 * in the ISR and active; UNCLEAN: a leader-less partition gets one from
 * the ISR, else its first active replica), one batch of
 * PartitionChangeRecords answered once committed.  Per partition: NONE,
 * ELECTION_NOT_NEEDED, PREFERRED_LEADER_NOT_AVAILABLE,
 * ELIGIBLE_LEADERS_NOT_AVAILABLE, UNKNOWN_TOPIC_OR_PARTITION (with
 * Kafka's message), NOT_CONTROLLER.  @returns the operation's error. */
SAMSA_MUST_CHECK samsa_err_t samsa_controller_elect_leaders(
    samsa_controller_t *ctrl, int8_t type,
    const samsa_controller_elect_t *parts, size_t n, samsa_arena_t *arena,
    samsa_controller_elect_result_t *results);

/* The answers of an operation on n items that failed whole with err (a
 * handler's view of samsa_controller_elect_leaders,
 * samsa_controller_alter_reassignments): each item gets err, except that
 * with NOT_CONTROLLER an item the controller had answered otherwise
 * keeps its answer; __SHUTDOWN reads NOT_CONTROLLER and any other local
 * failure UNKNOWN_SERVER_ERROR, as Kafka answers.  Nothing for NONE. */
void samsa_controller_results_failed(samsa_controller_result_t *results,
                                     size_t n, samsa_err_t err);

/* ---- partition reassignments (AlterPartitionReassignments, KIP-455) */

typedef struct samsa_controller_reassign {
    samsa_slice_t   topic;
    int32_t         partition;
    const int32_t  *replicas;       /* the target; NULL: cancel */
    int32_t         nreplicas;
    bool            keep_replication_factor;    /* KIP-860: a target of
                                                   another size fails */
} samsa_controller_reassign_t;

/* Kafka's ReplicationControlManager.alterPartitionReassignments: for each
 * of the n partitions, a target replica list or a cancel, one batch of
 * PartitionChangeRecords answered once committed.  A target makes
 * Replicas = target then the current replicas not in it, AddingReplicas
 * = target - current, RemovingReplicas = current - target; when the ISR
 * already holds the whole target the reassignment completes at once.  A
 * cancel reverts to the replicas before it.  Per partition (with Kafka's
 * messages): NONE, UNKNOWN_TOPIC_OR_PARTITION, INVALID_REPLICA_ASSIGNMENT,
 * INVALID_REPLICATION_FACTOR (keep_replication_factor and a target of
 * another size than the partition's, or than the one it is moving to),
 * NO_REASSIGNMENT_IN_PROGRESS, NOT_CONTROLLER.  @returns the operation's
 * error. */
SAMSA_MUST_CHECK samsa_err_t samsa_controller_alter_reassignments(
    samsa_controller_t *ctrl, const samsa_controller_reassign_t *parts,
    size_t n, samsa_arena_t *arena, samsa_controller_result_t *results);

/* ---- unregistering a broker (UnregisterBroker, KIP-500) */

/* Kafka's ReplicationControlManager.unregisterBroker: one batch moving the
 * broker's partition leadership away (as a fence does) and an
 * UnregisterBrokerRecord removing its registration.  *error gets NONE or
 * BROKER_ID_NOT_REGISTERED; the return is the operation's (NOT_CONTROLLER
 * on a node that is not the active controller, a commit failure). */
SAMSA_MUST_CHECK samsa_err_t samsa_controller_unregister_broker(
    samsa_controller_t *ctrl, int32_t broker_id, samsa_err_t *error);

/* A change of the metadata quorum's voters (KIP-853: AddRaftVoter,
 * RemoveRaftVoter), on the active controller, over libraft's
 * configuration changes: add puts voter_id (host:port, its CONTROLLER
 * endpoint, and dir_id, its metadata directory id) into the raft
 * configuration and promotes it to voter once it has caught up
 * (raft_add, raft_assign); remove takes it out (raft_remove; dir_id, if
 * not NULL, must be the voter's).  One membership change at a time (the
 * observers' too): while one is pending the answer is REQUEST_TIMED_OUT.
 * Waits at most timeout_ms for the new configuration to commit.  *error
 * gets Kafka's code: NONE, NOT_LEADER_OR_FOLLOWER (not the active
 * controller), DUPLICATE_VOTER, VOTER_NOT_FOUND (unknown id, or another
 * directory id), INVALID_REQUEST, REQUEST_TIMED_OUT; *msg a static
 * message or NULL.  @thread any but the quorum thread (blocks) */
void samsa_controller_change_voter(samsa_controller_t *ctrl, bool add,
                                   int32_t voter_id, const char *dir_id,
                                   const char *host, uint16_t port,
                                   int timeout_ms, int16_t *error,
                                   const char **msg);

/* This node's dynamic broker configs get check's test too before
 * AlterConfigs writes them (the TLS key stores: server/main.c).  Set it
 * before any listener starts.  @thread main */
void samsa_controller_set_broker_check(samsa_controller_t *ctrl,
                                       const samsa_brokercfg_check_t *check);

#endif /* SAMSA_META_CONTROLLER_CONTROLLER_H */
