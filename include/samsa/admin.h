/*
 * samsa/admin.h - libsamsa's admin client (Kafka's Java AdminClient, as
 * blocking calls): topics, partitions, configs, consumer groups and their
 * offsets, log offsets, record deletion and the cluster's brokers.
 *
 * Configuration: samsa/conf.h with the Java AdminClient's names
 * (bootstrap.servers, client.id, request.timeout.ms, default.api.timeout.ms,
 * retry.backoff.ms, reconnect.backoff.ms, reconnect.backoff.max.ms,
 * socket.connection.setup.timeout.ms, send.buffer.bytes,
 * receive.buffer.bytes, security.protocol=PLAINTEXT); other client keys
 * are accepted and ignored.
 *
 * Every call blocks until its answers are in or timeout_ms passed
 * (timeout_ms < 0: default.api.timeout.ms).  The call's return value says
 * whether the call as a whole worked (SAMSA_ERR_NONE), or why no answer
 * came (SAMSA_ERR__TIMED_OUT, a transport error such as
 * SAMSA_ERR__CLOSED, SAMSA_ERR__INVALID_ARG, a request-level Kafka error);
 * each item of a result carries its own Kafka error code (err) and text
 * (errmsg: the broker's message when it sent one, else the code's text).
 * Results live in one block freed with samsa_admin_result_free(); all
 * strings in a result are NUL-terminated and owned by it.
 *
 * Threads: a samsa_admin_t may be used from any thread; calls on one
 * handle are serialised (a second caller waits for the first).  The
 * network I/O of a call runs on the calling thread: the admin client has
 * no thread of its own.
 */
#ifndef SAMSA_ADMIN_H
#define SAMSA_ADMIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/conf.h>
#include <samsa/errors.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct samsa_admin samsa_admin_t;

/* Create an admin client from conf (copied).  SAMSA_ERR__CONFIG with
 * errstr naming the key for a bad setting (e.g. no bootstrap.servers).
 * No network I/O happens here.  @thread any */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_admin_new(
    const samsa_conf_t *conf, samsa_admin_t **adminp, char *errstr,
    size_t errstr_size);

/* Close every connection and free admin; NULL is a no-op.  No call may be
 * running or follow.  @thread any */
SAMSA_API void samsa_admin_free(samsa_admin_t *admin);

/* Wait up to timeout_ms for a usable connection to one bootstrap broker
 * (TCP and the ApiVersions exchange) and its cluster metadata.  On
 * failure the error of the last attempt (SAMSA_ERR__CLOSED: refused,
 * SAMSA_ERR__RESOLVE, SAMSA_ERR__TIMED_OUT, ...) with errstr naming the
 * brokers tried; SAMSA_ERR_SASL_AUTHENTICATION_FAILED or
 * SAMSA_ERR_UNSUPPORTED_SASL_MECHANISM at once (no retry until the
 * timeout) when SASL fails, errstr holding the broker's message.  Calls
 * connect by themselves (and fail with those SASL errors the same way);
 * this only lets a tool tell "cannot reach the cluster" apart from a
 * failed operation. */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_admin_connect(
    samsa_admin_t *admin, int64_t timeout_ms, char *errstr,
    size_t errstr_size);

/* Free a result of any call below; NULL is a no-op. */
SAMSA_API void samsa_admin_result_free(void *result);

/* ---- topics ------------------------------------------------------------- */

typedef struct samsa_admin_kv {
    const char  *name;
    const char  *value;         /* NULL: null (DELETE, or a default) */
} samsa_admin_kv_t;

typedef struct samsa_new_topic {
    const char              *name;
    int32_t                  num_partitions;     /* -1: broker default */
    int16_t                  replication_factor; /* -1: broker default */
    const samsa_admin_kv_t  *configs;
    size_t                   nconfigs;
} samsa_new_topic_t;

/* A per-topic or per-group outcome. */
typedef struct samsa_admin_item {
    const char   *name;
    samsa_err_t   err;
    const char   *errmsg;       /* NULL when err is NONE */
} samsa_admin_item_t;

typedef struct samsa_admin_items {
    samsa_admin_item_t  *items;
    size_t               n;
} samsa_admin_items_t;

/* CreateTopics, DeleteTopics and CreatePartitions retry the topics a
 * broker refuses with THROTTLING_QUOTA_EXCEEDED (controller_mutation_rate,
 * KIP-599) once the response's throttle time has passed, while the call's
 * timeout allows, as Kafka's AdminClient does by default
 * (retryOnQuotaViolation); then they keep the error. */

/* CreateTopics.  validate_only: check, create nothing. */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_admin_create_topics(
    samsa_admin_t *admin, const samsa_new_topic_t *topics, size_t n,
    bool validate_only, int64_t timeout_ms, samsa_admin_items_t **resultp);

/* DeleteTopics by name. */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_admin_delete_topics(
    samsa_admin_t *admin, const char *const *names, size_t n,
    int64_t timeout_ms, samsa_admin_items_t **resultp);

/* CreatePartitions: grow topic names[i] to counts[i] partitions. */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_admin_create_partitions(
    samsa_admin_t *admin, const char *const *names, const int32_t *counts,
    size_t n, bool validate_only, int64_t timeout_ms,
    samsa_admin_items_t **resultp);

typedef struct samsa_partition_desc {
    int32_t       partition;
    samsa_err_t   err;
    int32_t       leader;           /* -1: none */
    int32_t       leader_epoch;
    int32_t      *replicas;
    size_t        nreplicas;
    int32_t      *isr;
    size_t        nisr;
    int32_t      *offline;
    size_t        noffline;
} samsa_partition_desc_t;

typedef struct samsa_topic_desc {
    const char              *name;
    samsa_err_t              err;   /* UNKNOWN_TOPIC_OR_PARTITION, ... */
    const char              *errmsg;
    uint8_t                  topic_id[16];      /* all zero: unknown */
    bool                     is_internal;
    samsa_partition_desc_t  *partitions;        /* by partition index */
    size_t                   npartitions;
} samsa_topic_desc_t;

typedef struct samsa_broker_desc {
    int32_t      id;
    const char  *host;
    int32_t      port;
    const char  *rack;              /* NULL: none */
} samsa_broker_desc_t;

typedef struct samsa_topic_descs {
    samsa_topic_desc_t   *topics;   /* sorted by name */
    size_t                n;
} samsa_topic_descs_t;

/* Metadata for names (n > 0), or for every topic (names NULL, n 0).
 * Never creates topics.  An unknown name gets UNKNOWN_TOPIC_OR_PARTITION
 * in its item. */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_admin_describe_topics(
    samsa_admin_t *admin, const char *const *names, size_t n,
    int64_t timeout_ms, samsa_topic_descs_t **resultp);

/* ---- cluster ------------------------------------------------------------ */

typedef struct samsa_cluster_desc {
    const char           *cluster_id;   /* NULL if the broker sent none */
    int32_t               controller_id;    /* -1: unknown */
    samsa_broker_desc_t  *brokers;      /* sorted by id */
    size_t                nbrokers;
    const bool           *broker_fenced;    /* [i]: brokers[i] is fenced;
                                               NULL but from
                                               ..._describe_cluster_fenced */
} samsa_cluster_desc_t;

/* DescribeCluster where the broker has it, else Metadata: the live
 * (unfenced) brokers. */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_admin_describe_cluster(
    samsa_admin_t *admin, int64_t timeout_ms,
    samsa_cluster_desc_t **resultp);

/* The same with the fenced brokers too (DescribeCluster v2, KIP-1073:
 * Kafka's DescribeClusterOptions.includeFencedBrokers); broker_fenced
 * says which.  UNSUPPORTED_VERSION from a broker without v2. */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_admin_describe_cluster_fenced(
    samsa_admin_t *admin, int64_t timeout_ms,
    samsa_cluster_desc_t **resultp);

/* Kafka's QuorumInfo, as Admin.describeMetadataQuorum returns it (not
 * meta/quorum.h's samsa_quorum_desc_t, the server's own view). */
typedef struct samsa_quorum_info {
    int32_t    leader_id;       /* -1: unknown */
    int32_t    leader_epoch;
    int64_t    high_watermark;
    int32_t   *voters;          /* voter node ids, sorted */
    size_t     nvoters;
} samsa_quorum_info_t;

/* DescribeQuorum (API 55) of the metadata partition __cluster_metadata-0.
 * SAMSA_ERR_UNSUPPORTED_VERSION where no broker serves it (a single node
 * with no quorum); the response's error (top level or partition) as is. */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_admin_describe_quorum(
    samsa_admin_t *admin, int64_t timeout_ms,
    samsa_quorum_info_t **resultp);

/* ---- configs ------------------------------------------------------------ */

/* Kafka's ConfigResource.Type codes. */
#define SAMSA_RESOURCE_TOPIC         2
#define SAMSA_RESOURCE_BROKER        4
#define SAMSA_RESOURCE_BROKER_LOGGER 8

/* Kafka's ConfigEntry.ConfigSource codes (DescribeConfigs v1+). */
#define SAMSA_CONFIG_SOURCE_UNKNOWN                  0
#define SAMSA_CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG     1
#define SAMSA_CONFIG_SOURCE_DYNAMIC_BROKER_CONFIG    2
#define SAMSA_CONFIG_SOURCE_DYNAMIC_DEFAULT_BROKER   3
#define SAMSA_CONFIG_SOURCE_STATIC_BROKER_CONFIG     4
#define SAMSA_CONFIG_SOURCE_DEFAULT_CONFIG           5
#define SAMSA_CONFIG_SOURCE_DYNAMIC_BROKER_LOGGER    6

/* The name of a ConfigSource code ("DYNAMIC_TOPIC_CONFIG", ...). */
SAMSA_API const char *samsa_admin_config_source_name(int source);

typedef struct samsa_config_entry {
    const char  *name;
    const char  *value;             /* NULL: null (sensitive, or unset) */
    int8_t       source;            /* SAMSA_CONFIG_SOURCE_* */
    bool         is_default;        /* source is DEFAULT_CONFIG */
    bool         read_only;
    bool         is_sensitive;
} samsa_config_entry_t;

typedef struct samsa_config_resource {
    int8_t                 type;    /* SAMSA_RESOURCE_* */
    const char            *name;
    samsa_err_t            err;
    const char            *errmsg;
    samsa_config_entry_t  *entries; /* sorted by name */
    size_t                 nentries;
} samsa_config_resource_t;

typedef struct samsa_config_resources {
    samsa_config_resource_t  *resources;
    size_t                    n;
} samsa_config_resources_t;

typedef struct samsa_resource_ref {
    int8_t       type;              /* SAMSA_RESOURCE_* */
    const char  *name;              /* topic name, or broker id as text */
} samsa_resource_ref_t;

/* DescribeConfigs: every config of each resource. */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_admin_describe_configs(
    samsa_admin_t *admin, const samsa_resource_ref_t *resources, size_t n,
    int64_t timeout_ms, samsa_config_resources_t **resultp);

/* Kafka's AlterConfigOp.OpType codes. */
#define SAMSA_ALTER_OP_SET       0
#define SAMSA_ALTER_OP_DELETE    1
#define SAMSA_ALTER_OP_APPEND    2
#define SAMSA_ALTER_OP_SUBTRACT  3

typedef struct samsa_alter_op {
    const char  *name;
    int8_t       op;                /* SAMSA_ALTER_OP_* */
    const char  *value;             /* NULL for DELETE */
} samsa_alter_op_t;

typedef struct samsa_alter_resource {
    int8_t                   type;
    const char              *name;
    const samsa_alter_op_t  *ops;
    size_t                   nops;
} samsa_alter_resource_t;

/* IncrementalAlterConfigs.  Items are named by resource name. */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_admin_incremental_alter_configs(
    samsa_admin_t *admin, const samsa_alter_resource_t *resources, size_t n,
    bool validate_only, int64_t timeout_ms, samsa_admin_items_t **resultp);

/* Legacy AlterConfigs: each resource's configs become exactly the ops'
 * (name, value) pairs (op ignored; anything not named returns to its
 * default), as Kafka's deprecated alterConfigs. */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_admin_alter_configs(
    samsa_admin_t *admin, const samsa_alter_resource_t *resources, size_t n,
    bool validate_only, int64_t timeout_ms, samsa_admin_items_t **resultp);

/* ---- log offsets and records -------------------------------------------- */

/* ListOffsets timestamps with a special meaning (Kafka's OffsetSpec). */
#define SAMSA_OFFSET_SPEC_LATEST        (-1LL)
#define SAMSA_OFFSET_SPEC_EARLIEST      (-2LL)
#define SAMSA_OFFSET_SPEC_MAX_TIMESTAMP (-3LL)

/* A topic partition with a number whose meaning depends on the call. */
typedef struct samsa_tp_spec {
    const char  *topic;
    int32_t      partition;
    int64_t      value;     /* offset spec, offset, or deletion offset */
} samsa_tp_spec_t;

/* A per-partition outcome. */
typedef struct samsa_tp_result {
    const char   *topic;
    int32_t       partition;
    samsa_err_t   err;
    const char   *errmsg;
    int64_t       offset;       /* see each call; -1 if none */
    int64_t       timestamp;    /* list_offsets; -1 otherwise */
    int32_t       leader_epoch; /* -1 if unknown */
    const char   *metadata;     /* list_group_offsets: commit metadata */
} samsa_tp_result_t;

typedef struct samsa_tp_results {
    samsa_err_t         err;        /* group-level error (group calls) */
    samsa_tp_result_t  *items;      /* sorted by topic, partition */
    size_t              n;
} samsa_tp_results_t;

/* ListOffsets, each partition to its leader.  value: a
 * SAMSA_OFFSET_SPEC_* or a timestamp (ms): the earliest offset whose
 * timestamp is >= it (offset -1 if none).  read_committed: isolation
 * level READ_COMMITTED.  offset/timestamp/leader_epoch as returned. */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_admin_list_offsets(
    samsa_admin_t *admin, const samsa_tp_spec_t *tps, size_t n,
    bool read_committed, int64_t timeout_ms, samsa_tp_results_t **resultp);

/* DeleteRecords: delete every record before value (-1: the high
 * watermark).  offset = the partition's new low watermark. */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_admin_delete_records(
    samsa_admin_t *admin, const samsa_tp_spec_t *tps, size_t n,
    int64_t timeout_ms, samsa_tp_results_t **resultp);

/* ---- consumer groups ---------------------------------------------------- */

typedef struct samsa_group_listing {
    const char  *group_id;
    const char  *protocol_type;     /* "consumer", "" for offsets only */
    const char  *state;             /* "" if the broker is too old */
    const char  *type;              /* "classic"/"consumer", "" unknown */
    int32_t      coordinator;
} samsa_group_listing_t;

typedef struct samsa_group_listings {
    samsa_group_listing_t  *groups; /* sorted by group id */
    size_t                  n;
    samsa_err_t             err;    /* first broker-level error, if any */
    const char             *errmsg;
} samsa_group_listings_t;

/* ListGroups on every broker; states (Kafka's names: "Stable", "Empty",
 * ...) filters when nstates > 0 (ListGroups v4+; a broker with an older
 * ListGroups reports no states, and its groups are not filtered). */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_admin_list_groups(
    samsa_admin_t *admin, const char *const *states, size_t nstates,
    int64_t timeout_ms, samsa_group_listings_t **resultp);

typedef struct samsa_topic_partition {
    const char  *topic;
    int32_t      partition;
} samsa_topic_partition_t;

typedef struct samsa_group_member {
    const char               *member_id;
    const char               *group_instance_id;   /* NULL: dynamic */
    const char               *client_id;
    const char               *client_host;
    samsa_topic_partition_t  *assignment;  /* decoded consumer protocol */
    size_t                    nassignment;
    bool                      assignment_decoded;  /* false: not the
                                                      consumer protocol
                                                      or malformed */
} samsa_group_member_t;

typedef struct samsa_group_desc {
    const char            *group_id;
    samsa_err_t            err;
    const char            *errmsg;
    const char            *state;       /* "Dead" for unknown groups */
    const char            *protocol_type;
    const char            *protocol;    /* the assignor, e.g. "range" */
    int32_t                coordinator;
    samsa_group_member_t  *members;
    size_t                 nmembers;
    const char            *type;        /* "consumer" (KIP-848,
                                           ConsumerGroupDescribe) or
                                           "classic" (DescribeGroups) */
} samsa_group_desc_t;

typedef struct samsa_group_descs {
    samsa_group_desc_t  *groups;
    size_t               n;
} samsa_group_descs_t;

/* FindCoordinator, then ConsumerGroupDescribe for a consumer-type group
 * (KIP-848: members and their current assignments), else DescribeGroups
 * (classic groups; member assignments decoded from
 * ConsumerProtocolAssignment v0-v3 when the protocol type is
 * "consumer"). */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_admin_describe_groups(
    samsa_admin_t *admin, const char *const *group_ids, size_t n,
    int64_t timeout_ms, samsa_group_descs_t **resultp);

/* DeleteGroups (each at its coordinator). */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_admin_delete_groups(
    samsa_admin_t *admin, const char *const *group_ids, size_t n,
    int64_t timeout_ms, samsa_admin_items_t **resultp);

/* OffsetFetch: the group's committed offsets for tps (value ignored), or
 * for every partition it has offsets for (tps NULL, n 0).  offset = the
 * committed offset, -1 if none; leader_epoch, metadata as committed. */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_admin_list_group_offsets(
    samsa_admin_t *admin, const char *group_id,
    const samsa_topic_partition_t *tps, size_t n, int64_t timeout_ms,
    samsa_tp_results_t **resultp);

/* OffsetCommit of value for each partition as an admin (generation -1, no
 * member id), as Java's alterConsumerGroupOffsets.  Refused with
 * SAMSA_ERR_NON_EMPTY_GROUP (and nothing committed) unless the group is
 * Empty or unknown (Dead): a live group would overwrite the offsets. */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_admin_alter_group_offsets(
    samsa_admin_t *admin, const char *group_id, const samsa_tp_spec_t *tps,
    size_t n, int64_t timeout_ms, samsa_tp_results_t **resultp);

/* OffsetDelete: forget the group's committed offsets for tps. */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_admin_delete_group_offsets(
    samsa_admin_t *admin, const char *group_id,
    const samsa_topic_partition_t *tps, size_t n, int64_t timeout_ms,
    samsa_tp_results_t **resultp);

/* ---- ACLs (CreateAcls, DescribeAcls, DeleteAcls) ------------------------- */

/* One ACL binding, or (describe, delete) a binding filter, in Kafka's
 * codes: resource_type ResourceType (1 ANY, 2 TOPIC, 3 GROUP, 4 CLUSTER,
 * 5 TRANSACTIONAL_ID, 6 DELEGATION_TOKEN, 7 USER), pattern_type
 * PatternType (1 ANY, 2 MATCH, 3 LITERAL, 4 PREFIXED), operation
 * AclOperation (1 ANY, 2 ALL, 3 READ, 4 WRITE, 5 CREATE, 6 DELETE, 7 ALTER,
 * 8 DESCRIBE, 9 CLUSTER_ACTION, 10 DESCRIBE_CONFIGS, 11 ALTER_CONFIGS,
 * 12 IDEMPOTENT_WRITE, ...), permission AclPermissionType (1 ANY, 2 DENY,
 * 3 ALLOW).  In a filter a NULL string matches any. */
typedef struct samsa_acl_binding {
    int8_t        resource_type;
    const char   *resource_name;
    int8_t        pattern_type;
    const char   *principal;        /* "User:alice" */
    const char   *host;             /* "*" or an address */
    int8_t        operation;
    int8_t        permission;
} samsa_acl_binding_t;

typedef struct samsa_acl_bindings {
    samsa_acl_binding_t  *acls;
    size_t                n;
} samsa_acl_bindings_t;

/* CreateAcls: one item per binding (name: its resource name), each with
 * the broker's error (SECURITY_DISABLED without an authorizer,
 * CLUSTER_AUTHORIZATION_FAILED without ALTER on the cluster,
 * INVALID_REQUEST...). */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_admin_create_acls(
    samsa_admin_t *admin, const samsa_acl_binding_t *acls, size_t n,
    int64_t timeout_ms, samsa_admin_items_t **resultp);

/* DescribeAcls: the bindings matching filter; the response's error (and
 * no result) when it has one. */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_admin_describe_acls(
    samsa_admin_t *admin, const samsa_acl_binding_t *filter,
    int64_t timeout_ms, samsa_acl_bindings_t **resultp);

/* DeleteAcls of one filter: the bindings it removed; the filter's error
 * (and no result) when it has one. */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t samsa_admin_delete_acls(
    samsa_admin_t *admin, const samsa_acl_binding_t *filter,
    int64_t timeout_ms, samsa_acl_bindings_t **resultp);

/* ---- SCRAM credentials (KIP-554) ---------------------------------------- */

/* Kafka's ScramMechanism type codes. */
#define SAMSA_SCRAM_MECHANISM_SHA_256   1
#define SAMSA_SCRAM_MECHANISM_SHA_512   2
/* Kafka's bounds on a credential's iterations (ScramMechanism) and
 * kafka-configs' default. */
#define SAMSA_SCRAM_ITERATIONS_MIN      4096
#define SAMSA_SCRAM_ITERATIONS_MAX      16384
#define SAMSA_SCRAM_ITERATIONS_DEFAULT  4096

/* "SCRAM-SHA-256" / "SCRAM-SHA-512" for a type code, NULL for another. */
SAMSA_API const char *samsa_admin_scram_mechanism_name(int8_t mechanism);

typedef struct samsa_scram_credential_info {
    int8_t   mechanism;             /* SAMSA_SCRAM_MECHANISM_* */
    int32_t  iterations;
} samsa_scram_credential_info_t;

typedef struct samsa_user_scram_desc {
    const char                     *user;
    samsa_err_t                     err;    /* RESOURCE_NOT_FOUND: a user
                                               named that has none */
    const char                     *errmsg;
    samsa_scram_credential_info_t  *infos;  /* by mechanism */
    size_t                          ninfos;
} samsa_user_scram_desc_t;

typedef struct samsa_user_scram_descs {
    samsa_user_scram_desc_t  *users;        /* sorted by user */
    size_t                    n;
} samsa_user_scram_descs_t;

/* DescribeUserScramCredentials (API 50) for users (n > 0), or for every
 * user with a credential (users NULL, n 0).  The response's top-level
 * error is the call's. */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t
samsa_admin_describe_user_scram_credentials(
    samsa_admin_t *admin, const char *const *users, size_t n,
    int64_t timeout_ms, samsa_user_scram_descs_t **resultp);

typedef struct samsa_user_scram_alteration {
    const char  *user;
    int8_t       mechanism;         /* SAMSA_SCRAM_MECHANISM_* */
    bool         is_delete;         /* true: remove user's credential for
                                       mechanism; the rest is ignored */
    int32_t      iterations;        /* upsert: 0 means the default */
    const char  *password;          /* upsert: the clear password */
} samsa_user_scram_alteration_t;

/* AlterUserScramCredentials (API 51).  For each upsert the client draws
 * a random 32-byte salt and sends SaltedPassword = Hi(password, salt,
 * iterations), as Kafka's Admin does: the password never leaves the
 * process.  Items are named by user, one per user named.
 * SAMSA_ERR__INVALID_ARG (nothing sent) for an unknown mechanism, a NULL
 * user or password, or iterations outside
 * SAMSA_SCRAM_ITERATIONS_MIN..MAX. */
SAMSA_API SAMSA_MUST_CHECK samsa_err_t
samsa_admin_alter_user_scram_credentials(
    samsa_admin_t *admin, const samsa_user_scram_alteration_t *alterations,
    size_t n, int64_t timeout_ms, samsa_admin_items_t **resultp);

#ifdef __cplusplus
}
#endif

#endif /* SAMSA_ADMIN_H */
