/*
 * config/config_defs.c - the table of every broker configuration key: Kafka's
 * names and defaults (Kafka 4.x ConfigDefs: SocketServerConfigs,
 * ServerConfigs, ServerLogConfigs, KRaftConfigs, ReplicationConfigs,
 * GroupCoordinatorConfig, TransactionLogConfig...), except where a row's doc
 * says Samsa's default differs, plus Samsa's own keys.  Keep docs/CONFIG.md
 * in step: scripts/gen_config_doc.sh rewrites its table, and a unit test
 * fails when it is stale.
 * Threads: const data; any thread.
 */
#include "config/config_defs.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const  config_roles[] = { "broker", "controller", NULL };

static const char *const  config_consumer_assignors[] = {
    "uniform", "range", NULL,
};

static const char *const  config_compression_types[] = {
    "uncompressed", "zstd", "lz4", "snappy", "gzip", "producer", NULL,
};

static const char *const  config_ssl_client_auth[] = {
    "required", "requested", "none", NULL,
};

static const char *const  config_ssl_protocols[] = {
    "TLSv1.2", "TLSv1.3", NULL,
};

static const char *const  config_ssl_protocol[] = {
    "TLSv1.3", "TLSv1.2", "TLS", NULL,
};

static const char *const  config_security_protocols[] = {
    "PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL", NULL,
};

static const char *const  config_cleanup_policies[] = {
    "compact", "delete", NULL,
};

static const char *const  config_diag_levels[] = {
    "FATAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE", NULL,
};

/* replica.selector.class (KIP-392): Kafka's two ReplicaSelectors */
static const char *const  config_replica_selectors[] = {
    "org.apache.kafka.common.replica.RackAwareReplicaSelector",
    "org.apache.kafka.common.replica.LeaderSelector", NULL,
};

static const char *const  config_timestamp_types[] = {
    "CreateTime", "LogAppendTime", NULL,
};

/* compression.gzip.level: -1 (zlib's default) or 1..9, as Kafka's
 * GzipCompression.LevelValidator. */
static bool
config_check_gzip_level(const char *text, int64_t num, char *why,
                        size_t why_size)
{
    (void) text;
    if (num == -1 || (num >= 1 && num <= 9)) {
        return true;
    }
    snprintf(why, why_size, "must be -1 or between 1 and 9");
    return false;
}

/* sasl.server.callback.handler.class: OAUTHBEARER's token validator,
 * Kafka's unsecured one (KIP-255) or its JWKS one (KIP-768, under its
 * current and its older package). */
static bool
config_check_sasl_server_handler(const char *text, int64_t num, char *why,
                                 size_t why_size)
{
    (void) num;
    if (strcmp(text, "org.apache.kafka.common.security.oauthbearer."
                     "internals.unsecured."
                     "OAuthBearerUnsecuredValidatorCallbackHandler") == 0
        || strcmp(text, "org.apache.kafka.common.security.oauthbearer."
                        "OAuthBearerValidatorCallbackHandler") == 0
        || strcmp(text, "org.apache.kafka.common.security.oauthbearer."
                        "secured.OAuthBearerValidatorCallbackHandler") == 0) {
        return true;
    }
    snprintf(why, why_size, "'%s' is not supported: Samsa validates "
             "OAUTHBEARER tokens as Kafka's "
             "OAuthBearerUnsecuredValidatorCallbackHandler (unsecured JWTs) "
             "or OAuthBearerValidatorCallbackHandler (JWKS, KIP-768) does",
             text);
    return false;
}

static const char *const  config_principal_rules[] = { "DEFAULT", NULL };

/* authorizer.class.name: none ("") or Kafka's StandardAuthorizer (the
 * KRaft one; the ZooKeeper AclAuthorizer is gone from Kafka 4). */
static bool
config_check_authorizer(const char *text, int64_t num, char *why,
                        size_t why_size)
{
    (void) num;
    if (text[0] == '\0'
        || strcmp(text, "org.apache.kafka.metadata.authorizer."
                        "StandardAuthorizer") == 0) {
        return true;
    }
    snprintf(why, why_size, "unknown authorizer class '%s': only "
             "org.apache.kafka.metadata.authorizer.StandardAuthorizer (or "
             "empty, no authorizer) is supported", text);
    return false;
}

const samsa_config_def_t  samsa_config_defs[] = {
    {
        .name = "process.roles",
        .type = SAMSA_CONFIG_LIST,
        .dflt = NULL,
        .check = SAMSA_CONFIG_CHECK_ENUM,
        .names = config_roles,
        .nonempty = true,
        .implemented = true,
        .doc = "Roles of this node: broker, controller, or both in one "
               "process. Set, it makes a KRaft cluster node (its log dirs "
               "formatted by samsa-server format); null (Kafka: required) "
               "runs Samsa's single node, broker and controller, its own "
               "only voter.",
    },
    {
        .name = "node.id",
        .type = SAMSA_CONFIG_INT,
        .dflt = "1",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 0, .max = INT32_MAX,
        .implemented = true,
        .doc = "Id of this node in the cluster (Kafka: -1, required); must "
               "be set when process.roles is.",
    },
    {
        .name = "broker.id",
        .type = SAMSA_CONFIG_INT,
        .dflt = NULL,
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 0, .max = INT32_MAX,
        .implemented = true,
        .doc = "Alias of node.id; if both are set they must be equal.",
    },
    {
        .name = "controller.listener.names",
        .type = SAMSA_CONFIG_LIST,
        .dflt = "CONTROLLER",
        .valid = "listener names",
        .implemented = true,
        .doc = "Listeners the controller serves, and a broker-only node "
               "reaches the controllers by (Kafka: no default, required).",
    },
    {
        .name = "controller.quorum.voters",
        .type = SAMSA_CONFIG_LIST,
        .dflt = "",
        .valid = "id@host:port, ...; ids unique",
        .implemented = true,
        .doc = "Static controller quorum. Without process.roles only this "
               "node may be named (empty: this node alone); with it, a "
               "controller must be listed and a broker-only node must not.",
    },
    {
        .name = "controller.quorum.bootstrap.servers",
        .type = SAMSA_CONFIG_LIST,
        .dflt = "",
        .valid = "host:port, ...",
        .implemented = true,
        .doc = "A dynamic quorum (KIP-853) on a controller, instead of "
               "controller.quorum.voters (only one of the two may be set): "
               "the initial voters come from `samsa-server format "
               "--standalone` or --initial-controllers, a controller "
               "formatted --no-initial-controllers waits to be added "
               "(AddRaftVoter). Broker-only nodes need "
               "controller.quorum.voters in this build. Without "
               "process.roles only this node's controller listener may be "
               "named.",
    },
    {
        .name = "controller.quorum.election.timeout.ms",
        .type = SAMSA_CONFIG_INT,
        .dflt = "1000",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT32_MAX,
        .implemented = true,
        .doc = "Longest a voter waits for a leader's fetch before it starts "
               "an election.",
    },
    {
        .name = "controller.quorum.fetch.timeout.ms",
        .type = SAMSA_CONFIG_INT,
        .dflt = "2000",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT32_MAX,
        .implemented = false,
        .doc = "Longest a follower goes without a successful fetch from the "
               "leader before it becomes a candidate.",
    },
    {
        .name = "metadata.log.dir",
        .type = SAMSA_CONFIG_STRING,
        .dflt = NULL,
        .implemented = true,
        .doc = "Directory of the cluster metadata log; null means the first "
               "log directory.",
    },
    {
        .name = "metadata.log.segment.bytes",
        .type = SAMSA_CONFIG_INT,
        .dflt = "1073741824",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 8388608, .max = INT32_MAX,
        .implemented = false,
        .doc = "Maximum size of one metadata log segment.",
    },
    {
        .name = "metadata.log.max.record.bytes.between.snapshots",
        .type = SAMSA_CONFIG_LONG,
        .dflt = "20971520",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT64_MAX,
        .implemented = true,
        .doc = "Metadata log bytes between two snapshots.",
    },
    {
        .name = "metadata.max.retention.bytes",
        .type = SAMSA_CONFIG_LONG,
        .dflt = "104857600",
        .implemented = false,
        .doc = "Maximum size of metadata log and snapshots before old ones "
               "are deleted.",
    },
    {
        .name = "metadata.max.retention.ms",
        .type = SAMSA_CONFIG_LONG,
        .dflt = "604800000",
        .implemented = false,
        .doc = "Time metadata log files and snapshots are kept.",
    },
    {
        .name = "metadata.max.idle.interval.ms",
        .type = SAMSA_CONFIG_INT,
        .dflt = "500",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 0, .max = INT32_MAX,
        .implemented = false,
        .doc = "How often the active controller appends a no-op record when "
               "idle.",
    },
    {
        .name = "broker.heartbeat.interval.ms",
        .type = SAMSA_CONFIG_INT,
        .dflt = "2000",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT32_MAX,
        .implemented = true,
        .doc = "Time between a broker's heartbeats to the active controller "
               "(cluster mode).",
    },
    {
        .name = "broker.session.timeout.ms",
        .type = SAMSA_CONFIG_INT,
        .dflt = "9000",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT32_MAX,
        .implemented = true,
        .doc = "Time a broker's registration lasts without heartbeats: the "
               "active controller fences it after that (cluster mode).",
    },
    {
        .name = "listeners",
        .type = SAMSA_CONFIG_LIST,
        .dflt = "PLAINTEXT://localhost:9092,CONTROLLER://localhost:9093",
        .valid = "NAME://host:port, ...; host empty (all interfaces), a "
                 "name, an IPv4 or a [bracketed] IPv6 literal; port "
                 "0..65535",
        .implemented = true,
        .doc = "Addresses to listen on (Kafka: PLAINTEXT://:9092). Only the "
               "PLAINTEXT security protocol is supported yet.",
    },
    {
        .name = "advertised.listeners",
        .type = SAMSA_CONFIG_LIST,
        .dflt = NULL,
        .valid = "NAME://host:port, ... naming non-controller listeners",
        .implemented = true,
        .doc = "Addresses given to clients; null means the non-controller "
               "listeners, an empty host advertised as this machine's host "
               "name.",
    },
    {
        .name = "listener.security.protocol.map",
        .type = SAMSA_CONFIG_LIST,
        .dflt = "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL,"
                "SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL",
        .valid = "NAME:PROTOCOL, ...; PROTOCOL one of PLAINTEXT, SSL, "
                 "SASL_PLAINTEXT, SASL_SSL",
        .implemented = true,
        .doc = "Security protocol of each listener name.",
    },
    {
        .name = "num.network.threads",
        .type = SAMSA_CONFIG_INT,
        .dflt = "3",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT32_MAX,
        .implemented = true,
        .doc = "Network threads (processors) per listener. Dynamic: "
               "IncrementalAlterConfigs/AlterConfigs on the BROKER "
               "resource change every listener's count at run time.",
    },
    {
        .name = "num.io.threads",
        .type = SAMSA_CONFIG_INT,
        .dflt = "8",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT32_MAX,
        .implemented = true,
        .doc = "Request handler threads per pool (broker and controller). "
               "Dynamic: IncrementalAlterConfigs/AlterConfigs on the "
               "BROKER resource resize the pools at run time.",
    },
    {
        .name = "queued.max.requests",
        .type = SAMSA_CONFIG_INT,
        .dflt = "500",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT32_MAX,
        .implemented = true,
        .doc = "Requests the request queue holds before network threads "
               "stop reading.",
    },
    {
        .name = "queued.max.request.bytes",
        .type = SAMSA_CONFIG_LONG,
        .dflt = "-1",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = -1, .max = INT64_MAX,
        .implemented = true,
        .doc = "Bytes of queued requests before connections are muted; -1 "
               "(or 0) means no limit, else at least "
               "socket.request.max.bytes.",
    },
    {
        .name = "socket.request.max.bytes",
        .type = SAMSA_CONFIG_INT,
        .dflt = "104857600",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT32_MAX,
        .implemented = true,
        .doc = "Largest request accepted, in bytes.",
    },
    {
        .name = "socket.send.buffer.bytes",
        .type = SAMSA_CONFIG_INT,
        .dflt = "102400",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = -1, .max = INT32_MAX,
        .implemented = true,
        .doc = "SO_SNDBUF of accepted sockets; -1 means the OS default.",
    },
    {
        .name = "socket.receive.buffer.bytes",
        .type = SAMSA_CONFIG_INT,
        .dflt = "102400",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = -1, .max = INT32_MAX,
        .implemented = true,
        .doc = "SO_RCVBUF of accepted sockets; -1 means the OS default.",
    },
    {
        .name = "socket.listen.backlog.size",
        .type = SAMSA_CONFIG_INT,
        .dflt = "50",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT32_MAX,
        .implemented = true,
        .doc = "Backlog of each listening socket (listen(2)).",
    },
    {
        .name = "connections.max.idle.ms",
        .type = SAMSA_CONFIG_LONG,
        .dflt = "600000",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = -1, .max = INT64_MAX,
        .implemented = true,
        .doc = "Idle connections are closed after this long; -1 disables.",
    },
    {
        .name = "max.connections",
        .type = SAMSA_CONFIG_INT,
        .dflt = "2147483647",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 0, .max = INT32_MAX,
        .implemented = true,
        .per_listener = true,
        .doc = "Connections the broker accepts in all; acceptors wait above "
               "it. Per listener: listener.name.<listener>.max.connections "
               "(else this value). Dynamic (BROKER resource).",
    },
    {
        .name = "max.connections.per.ip",
        .type = SAMSA_CONFIG_INT,
        .dflt = "2147483647",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 0, .max = INT32_MAX,
        .implemented = true,
        .doc = "Connections accepted from one IP address; 0 only together "
               "with overrides. Dynamic (BROKER resource).",
    },
    {
        .name = "max.connections.per.ip.overrides",
        .type = SAMSA_CONFIG_STRING,
        .dflt = "",
        .valid = "host:count, ...; host an IP literal or a name (every "
                 "address it resolves to); count >= 0",
        .implemented = true,
        .doc = "Per-IP exceptions to max.connections.per.ip. Dynamic "
               "(BROKER resource).",
    },
    {
        .name = "max.connection.creation.rate",
        .type = SAMSA_CONFIG_INT,
        .dflt = "2147483647",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 0, .max = INT32_MAX,
        .implemented = true,
        .per_listener = true,
        .doc = "New connections per second the broker's listeners accept "
               "in all; above it the acceptor delays accepting (the "
               "controller listeners are exempt). Per listener: "
               "listener.name.<listener>.max.connection.creation.rate "
               "(else this value). Dynamic (BROKER resource).",
    },
    {
        .name = "quota.window.num",
        .type = SAMSA_CONFIG_INT,
        .dflt = "11",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = 64,
        .implemented = true,
        .doc = "The number of samples to retain in memory for client "
               "quotas.",
    },
    {
        .name = "quota.window.size.seconds",
        .type = SAMSA_CONFIG_INT,
        .dflt = "1",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT32_MAX,
        .implemented = true,
        .doc = "The time span of each sample for client quotas.",
    },
    {
        .name = "controller.quota.window.num",
        .type = SAMSA_CONFIG_INT,
        .dflt = "11",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT32_MAX,
        .implemented = true,
        .doc = "The number of samples to retain in memory for controller "
               "mutation quotas (the token bucket holds this many windows' "
               "worth of controller_mutation_rate).",
    },
    {
        .name = "controller.quota.window.size.seconds",
        .type = SAMSA_CONFIG_INT,
        .dflt = "1",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT32_MAX,
        .implemented = true,
        .doc = "The time span of each sample for controller mutations "
               "quotas.",
    },
    {
        .name = "authorizer.class.name",
        .type = SAMSA_CONFIG_STRING,
        .dflt = "",
        .check = SAMSA_CONFIG_CHECK_FN,
        .fn = config_check_authorizer,
        .valid = "empty, or org.apache.kafka.metadata.authorizer."
                 "StandardAuthorizer",
        .implemented = true,
        .doc = "The authorizer: empty for none (every request allowed, "
               "ACL APIs answer SECURITY_DISABLED), or Kafka's "
               "StandardAuthorizer, whose ACLs live in the metadata log.",
    },
    {
        .name = "super.users",
        .type = SAMSA_CONFIG_STRING,
        .dflt = NULL,
        .implemented = true,
        .doc = "Semicolon-separated principals (User:admin;User:ops) the "
               "authorizer allows everything, whatever the ACLs say.",
    },
    {
        .name = "allow.everyone.if.no.acl.found",
        .type = SAMSA_CONFIG_BOOL,
        .dflt = "false",
        .implemented = true,
        .doc = "With the authorizer: allow an action on a resource no ACL "
               "applies to (otherwise denied).",
    },
    {
        .name = "request.log.enable",
        .type = SAMSA_CONFIG_BOOL,
        .dflt = "false",
        .implemented = true,
        .doc = "Samsa: write one line per completed request from the "
               "start (Kafka's kafka.request.logger at DEBUG; the logger "
               "can also be set at run time through BROKER_LOGGER).",
    },
    {
        .name = "request.log.file",
        .type = SAMSA_CONFIG_STRING,
        .dflt = "",
        .implemented = true,
        .doc = "Samsa: request log path; empty means <first log "
               "dir>/samsa-request.log, 'stderr' means standard error.",
    },
    {
        .name = "metrics.listener",
        .type = SAMSA_CONFIG_STRING,
        .dflt = "http://127.0.0.1:9644",
        .valid = "http://host:port or https://host:port (port 0: any "
                 "free port); empty disables it",
        .implemented = true,
        .doc = "Samsa: HTTP listener for /metrics (Prometheus text), "
               "/health, /ready, /loglevel and the status page at / "
               "(docs/METRICS.md); https:// serves TLS 1.2 and 1.3 with "
               "metrics.listener.ssl.keystore.location.",
    },
    {
        .name = "metrics.listener.ssl.keystore.location",
        .type = SAMSA_CONFIG_STRING,
        .dflt = "",
        .implemented = true,
        .doc = "Samsa: PEM file with the private key and the certificate "
               "chain (leaf first) an https:// metrics.listener presents, "
               "as ssl.keystore.location with ssl.keystore.type=PEM; "
               "required with https://, refused with http://.",
    },
    {
        .name = "metrics.listener.ssl.key.password",
        .type = SAMSA_CONFIG_PASSWORD,
        .dflt = "",
        .implemented = true,
        .doc = "Samsa: password of the encrypted private key in "
               "metrics.listener.ssl.keystore.location.",
    },
    {
        .name = "metrics.listener.admin.token",
        .type = SAMSA_CONFIG_PASSWORD,
        .dflt = "",
        .implemented = true,
        .doc = "Samsa: the bearer token a state-changing request to "
               "metrics.listener (POST /loglevel) must carry as "
               "'Authorization: Bearer <token>' (401 otherwise); empty "
               "(the default) refuses every such request (403). GETs need "
               "none.",
    },
    {
        .name = "diag.level",
        .type = SAMSA_CONFIG_STRING,
        .dflt = "INFO",
        .check = SAMSA_CONFIG_CHECK_ENUM,
        .names = config_diag_levels,
        .implemented = true,
        .doc = "Samsa: level of the diagnostics on standard error (Kafka "
               "sets its log4j root logger level in log4j's own file); "
               "changed at run time, not persisted, by "
               "IncrementalAlterConfigs on the BROKER_LOGGER logger root "
               "or by POST /loglevel on metrics.listener.",
    },
    {
        .name = "message.max.bytes",
        .type = SAMSA_CONFIG_INT,
        .dflt = "1048588",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 0, .max = INT32_MAX,
        .implemented = true,
        .doc = "Largest record batch the broker accepts (topic: "
               "max.message.bytes).",
    },
    {
        .name = "background.threads",
        .type = SAMSA_CONFIG_INT,
        .dflt = "10",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT32_MAX,
        .implemented = false,
        .doc = "Threads for background tasks.",
    },
    {
        .name = "request.timeout.ms",
        .type = SAMSA_CONFIG_INT,
        .dflt = "30000",
        .implemented = false,
        .doc = "Timeout of requests this node sends.",
    },
    {
        .name = "auto.create.topics.enable",
        .type = SAMSA_CONFIG_BOOL,
        .dflt = "true",
        .implemented = true,
        .doc = "Create a topic when a client asks for its metadata.",
    },
    {
        .name = "delete.topic.enable",
        .type = SAMSA_CONFIG_BOOL,
        .dflt = "true",
        .implemented = false,
        .doc = "Allow DeleteTopics.",
    },
    {
        .name = "num.partitions",
        .type = SAMSA_CONFIG_INT,
        .dflt = "1",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT32_MAX,
        .implemented = true,
        .doc = "Partitions of a topic created without a count (auto-"
               "created, or CreateTopics with -1).",
    },
    {
        .name = "default.replication.factor",
        .type = SAMSA_CONFIG_INT,
        .dflt = "1",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT32_MAX,
        .implemented = true,
        .doc = "Replication factor of a topic created without one "
               "(auto-created, or CreateTopics with -1); above 1 is "
               "refused unless unstable.replication.enable is true.",
    },
    {
        .name = "min.insync.replicas",
        .type = SAMSA_CONFIG_INT,
        .dflt = "1",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT32_MAX,
        .implemented = true,
        .doc = "Replicas that must acknowledge an acks=all write: fewer in the "
               "ISR answer NOT_ENOUGH_REPLICAS (replicated partitions, "
               "unstable.replication.enable).",
    },
    {
        .name = "compression.type",
        .type = SAMSA_CONFIG_STRING,
        .dflt = "producer",
        .check = SAMSA_CONFIG_CHECK_ENUM,
        .names = config_compression_types,
        .implemented = false,
        .doc = "Final compression of a topic's batches; producer keeps the "
               "producer's.",
    },
    {
        .name = "compression.gzip.level",
        .type = SAMSA_CONFIG_INT,
        .dflt = "-1",
        .check = SAMSA_CONFIG_CHECK_FN,
        .fn = config_check_gzip_level,
        .valid = "-1, or [1,...,9]",
        .implemented = false,
        .doc = "gzip level when compression.type=gzip.",
    },
    {
        .name = "compression.lz4.level",
        .type = SAMSA_CONFIG_INT,
        .dflt = "9",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = 17,
        .implemented = false,
        .doc = "lz4 level when compression.type=lz4.",
    },
    {
        .name = "compression.zstd.level",
        .type = SAMSA_CONFIG_INT,
        .dflt = "3",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = -131072, .max = 22,
        .implemented = false,
        .doc = "zstd level when compression.type=zstd.",
    },
    {
        .name = "unclean.leader.election.enable",
        .type = SAMSA_CONFIG_BOOL,
        .dflt = "false",
        .implemented = true,
        .doc = "Allow an out-of-sync replica to become leader: the "
               "controller elects the first live replica when no ISR "
               "member is live (the topic's override wins).",
    },
    {
        .name = "auto.leader.rebalance.enable",
        .type = SAMSA_CONFIG_BOOL,
        .dflt = "true",
        .implemented = true,
        .doc = "The active controller moves leadership back to each "
               "partition's preferred (first) replica when it is in the "
               "ISR and active, every "
               "leader.imbalance.check.interval.seconds (KRaft's rule: "
               "leader.imbalance.per.broker.percentage is not used).",
    },
    {
        .name = "leader.imbalance.per.broker.percentage",
        .type = SAMSA_CONFIG_INT,
        .dflt = "10",
        .implemented = false,
        .doc = "Leader imbalance allowed per broker, in percent.",
    },
    {
        .name = "leader.imbalance.check.interval.seconds",
        .type = SAMSA_CONFIG_LONG,
        .dflt = "300",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT64_MAX / 1000,
        .implemented = true,
        .doc = "How often the active controller looks for partitions "
               "whose preferred replica does not lead "
               "(auto.leader.rebalance.enable).",
    },
    {
        .name = "broker.rack",
        .type = SAMSA_CONFIG_STRING,
        .dflt = NULL,
        .implemented = true,
        .doc = "Rack of this broker: sent in its registration, shown in "
               "Metadata and DescribeCluster, and used by the rack-aware "
               "placement of new partitions' replicas.",
    },
    {
        .name = "replica.selector.class",
        .type = SAMSA_CONFIG_STRING,
        .dflt = NULL,
        .check = SAMSA_CONFIG_CHECK_ENUM,
        .names = config_replica_selectors,
        .implemented = true,
        .doc = "KIP-392: which replica a leader tells a consumer (Fetch "
               "v11+) to fetch from: RackAwareReplicaSelector picks an "
               "in-sync replica in the consumer's rack (client.rack), the "
               "most caught-up one, unless the leader is in it; null or "
               "LeaderSelector: the leader.",
    },
    {
        .name = "fetch.max.bytes",
        .type = SAMSA_CONFIG_INT,
        .dflt = "57671680",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1024, .max = INT32_MAX,
        .implemented = true,
        .doc = "Most bytes returned for one fetch request.",
    },
    {
        .name = "max.incremental.fetch.session.cache.slots",
        .type = SAMSA_CONFIG_INT,
        .dflt = "1000",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 0, .max = INT32_MAX,
        .implemented = false,
        .doc = "Incremental fetch sessions kept.",
    },
    {
        .name = "controlled.shutdown.enable",
        .type = SAMSA_CONFIG_BOOL,
        .dflt = "true",
        .implemented = true,
        .doc = "Move leadership away before shutting down.",
    },
    {
        .name = "security.inter.broker.protocol",
        .type = SAMSA_CONFIG_STRING,
        .dflt = "PLAINTEXT",
        .check = SAMSA_CONFIG_CHECK_ENUM,
        .names = config_security_protocols,
        .implemented = false,
        .doc = "Security protocol between brokers.",
    },
    {
        .name = "inter.broker.listener.name",
        .type = SAMSA_CONFIG_STRING,
        .dflt = NULL,
        .valid = "an advertised, non-controller listener's name",
        .implemented = true,
        .doc = "Listener used between brokers; null: the one named by "
               "security.inter.broker.protocol. Not both may be set. Replica "
               "fetchers use it (null: the leader's first PLAINTEXT endpoint).",
    },
    {
        .name = "log.dir",
        .type = SAMSA_CONFIG_LIST,
        .dflt = "./samsa-data",
        .valid = "directories, no duplicates",
        .nonempty = true,
        .implemented = true,
        .doc = "Data directory, used when log.dirs is not set (Kafka: "
               "/tmp/kafka-logs).",
    },
    {
        .name = "log.dirs",
        .type = SAMSA_CONFIG_LIST,
        .dflt = NULL,
        .valid = "directories, no duplicates",
        .nonempty = true,
        .implemented = true,
        .doc = "Data directories; wins over log.dir.",
    },
    {
        .name = "log.segment.bytes",
        .type = SAMSA_CONFIG_INT,
        .dflt = "1073741824",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1048576, .max = INT32_MAX,
        .implemented = true,
        .doc = "Maximum size of one log segment.",
    },
    {
        .name = "log.roll.ms",
        .type = SAMSA_CONFIG_LONG,
        .dflt = NULL,
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT64_MAX,
        .implemented = true,
        .doc = "Time before a new segment is rolled; null means "
               "log.roll.hours.",
    },
    {
        .name = "log.roll.hours",
        .type = SAMSA_CONFIG_INT,
        .dflt = "168",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT32_MAX,
        .implemented = true,
        .doc = "Time before a new segment is rolled, in hours.",
    },
    {
        .name = "log.roll.jitter.ms",
        .type = SAMSA_CONFIG_LONG,
        .dflt = NULL,
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 0, .max = INT64_MAX,
        .implemented = true,
        .doc = "Jitter subtracted from the roll time; null means "
               "log.roll.jitter.hours.",
    },
    {
        .name = "log.roll.jitter.hours",
        .type = SAMSA_CONFIG_INT,
        .dflt = "0",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 0, .max = INT32_MAX,
        .implemented = true,
        .doc = "Jitter subtracted from the roll time, in hours.",
    },
    {
        .name = "log.retention.ms",
        .type = SAMSA_CONFIG_LONG,
        .dflt = NULL,
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = -1, .max = INT64_MAX,
        .implemented = true,
        .doc = "Time a segment is kept; null means log.retention.minutes; "
               "-1 means forever.",
    },
    {
        .name = "log.retention.minutes",
        .type = SAMSA_CONFIG_INT,
        .dflt = NULL,
        .implemented = true,
        .doc = "Time a segment is kept, in minutes; null means "
               "log.retention.hours.",
    },
    {
        .name = "log.retention.hours",
        .type = SAMSA_CONFIG_INT,
        .dflt = "168",
        .implemented = true,
        .doc = "Time a segment is kept, in hours.",
    },
    {
        .name = "log.retention.bytes",
        .type = SAMSA_CONFIG_LONG,
        .dflt = "-1",
        .implemented = true,
        .doc = "Size a partition's log is trimmed to; -1 means no limit.",
    },
    {
        .name = "log.retention.check.interval.ms",
        .type = SAMSA_CONFIG_LONG,
        .dflt = "300000",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT64_MAX,
        .implemented = true,
        .doc = "How often retention is checked.",
    },
    {
        .name = "log.cleanup.policy",
        .type = SAMSA_CONFIG_LIST,
        .dflt = "delete",
        .check = SAMSA_CONFIG_CHECK_ENUM,
        .names = config_cleanup_policies,
        .implemented = true,
        .doc = "What happens to old segments: delete, compact or both.",
    },
    {
        .name = "log.index.size.max.bytes",
        .type = SAMSA_CONFIG_INT,
        .dflt = "10485760",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 4, .max = INT32_MAX,
        .implemented = true,
        .doc = "Maximum size of an offset index.",
    },
    {
        .name = "log.index.interval.bytes",
        .type = SAMSA_CONFIG_INT,
        .dflt = "4096",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 0, .max = INT32_MAX,
        .implemented = true,
        .doc = "Bytes of log between offset index entries.",
    },
    {
        .name = "log.flush.interval.messages",
        .type = SAMSA_CONFIG_LONG,
        .dflt = "9223372036854775807",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT64_MAX,
        .implemented = true,
        .doc = "Messages appended before a partition is fsynced.",
    },
    {
        .name = "log.flush.interval.ms",
        .type = SAMSA_CONFIG_LONG,
        .dflt = NULL,
        .implemented = true,
        .doc = "Time a message waits before fsync; null means "
               "log.flush.scheduler.interval.ms.",
    },
    {
        .name = "log.flush.scheduler.interval.ms",
        .type = SAMSA_CONFIG_LONG,
        .dflt = "9223372036854775807",
        .implemented = true,
        .doc = "How often the flusher checks for logs to fsync.",
    },
    {
        .name = "log.flush.offset.checkpoint.interval.ms",
        .type = SAMSA_CONFIG_INT,
        .dflt = "60000",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 0, .max = INT32_MAX,
        .implemented = true,
        .doc = "How often the recovery-point checkpoint is written.",
    },
    {
        .name = "log.flush.start.offset.checkpoint.interval.ms",
        .type = SAMSA_CONFIG_INT,
        .dflt = "60000",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 0, .max = INT32_MAX,
        .implemented = true,
        .doc = "How often the log-start-offset checkpoint is written.",
    },
    {
        .name = "log.segment.delete.delay.ms",
        .type = SAMSA_CONFIG_LONG,
        .dflt = "60000",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 0, .max = INT64_MAX,
        .implemented = true,
        .doc = "Delay before a deleted segment's files are removed.",
    },
    {
        .name = "log.preallocate",
        .type = SAMSA_CONFIG_BOOL,
        .dflt = "false",
        .implemented = false,
        .doc = "Preallocate segment files.",
    },
    {
        .name = "log.message.timestamp.type",
        .type = SAMSA_CONFIG_STRING,
        .dflt = "CreateTime",
        .check = SAMSA_CONFIG_CHECK_ENUM,
        .names = config_timestamp_types,
        .implemented = true,
        .doc = "Timestamp kept in batches: the producer's or the append time.",
    },
    {
        .name = "log.message.timestamp.before.max.ms",
        .type = SAMSA_CONFIG_LONG,
        .dflt = "9223372036854775807",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 0, .max = INT64_MAX,
        .implemented = true,
        .doc = "How far in the past a CreateTime timestamp may be.",
    },
    {
        .name = "log.message.timestamp.after.max.ms",
        .type = SAMSA_CONFIG_LONG,
        .dflt = "3600000",              /* Kafka 4.0, KIP-1030 */
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 0, .max = INT64_MAX,
        .implemented = true,
        .doc = "How far in the future a CreateTime timestamp may be "
               "(one hour since Kafka 4.0, KIP-1030).",
    },
    {
        .name = "num.recovery.threads.per.data.dir",
        .type = SAMSA_CONFIG_INT,
        .dflt = "1",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT32_MAX,
        .implemented = true,
        .doc = "Threads per data directory for recovery at start-up.",
    },
    /* ---- fdlru (issue 22): the log layer's descriptor cache ---- */
    {
        .name = "log.open.files.max",
        .type = SAMSA_CONFIG_LONG,
        .dflt = "0",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 0, .max = INT64_MAX,
        .valid = "0 (half the soft RLIMIT_NOFILE, at most a quarter of "
                 "vm.max_map_count, at least 64), or [1,...]",
        .implemented = true,
        .doc = "Samsa: most file descriptors the log layer keeps open for "
               "segments (one each, the .log: the indexes are mapped and "
               "hold none, but each open segment holds two mappings); "
               "the least recently used are closed beyond it and "
               "reopened on use, so idle partitions hold none (Kafka has "
               "no such key).",
    },
    {
        .name = "log.cleaner.enable",
        .type = SAMSA_CONFIG_BOOL,
        .dflt = "true",
        .implemented = true,
        .doc = "Run the log cleaner (needed by compacted topics).",
    },
    {
        .name = "log.cleaner.threads",
        .type = SAMSA_CONFIG_INT,
        .dflt = "1",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 0, .max = INT32_MAX,
        .implemented = true,
        .doc = "Log cleaner threads. Dynamic: a change on the BROKER "
               "resource restarts the cleaner with the new count (at "
               "least 1, half to double the current value).",
    },
    {
        .name = "log.cleaner.dedupe.buffer.size",
        .type = SAMSA_CONFIG_LONG,
        .dflt = "134217728",
        .implemented = true,
        .doc = "Memory for deduplication across all cleaner threads "
               "(each thread's offset map gets its share). Dynamic: a "
               "change on the BROKER resource restarts the cleaner "
               "(at least 1 MiB per cleaner thread).",
    },
    {
        .name = "log.cleaner.io.buffer.size",
        .type = SAMSA_CONFIG_INT,
        .dflt = "524288",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 0, .max = INT32_MAX,
        .implemented = false,
        .doc = "Memory for cleaner I/O buffers across all cleaner threads.",
    },
    {
        .name = "log.cleaner.io.buffer.load.factor",
        .type = SAMSA_CONFIG_DOUBLE,
        .dflt = "0.9",
        .implemented = false,
        .doc = "Load factor of the deduplication buffer.",
    },
    {
        .name = "log.cleaner.io.max.bytes.per.second",
        .type = SAMSA_CONFIG_DOUBLE,
        .dflt = "1.7976931348623157E308",
        .implemented = true,
        .doc = "Bytes per second the cleaner threads read and write in "
               "all (Kafka's Throttler: checked every 300 ms, the thread "
               "sleeps to bring the rate back down). Dynamic (BROKER "
               "resource).",
    },
    {
        .name = "log.cleaner.backoff.ms",
        .type = SAMSA_CONFIG_LONG,
        .dflt = "15000",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 0, .max = INT64_MAX,
        .implemented = true,
        .doc = "Sleep of the cleaner when there is nothing to clean. "
               "Dynamic (BROKER resource).",
    },
    {
        .name = "log.cleaner.min.cleanable.ratio",
        .type = SAMSA_CONFIG_DOUBLE,
        .dflt = "0.5",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .dmin = 0, .dmax = 1,
        .implemented = true,
        .doc = "Dirty ratio above which a log is cleaned.",
    },
    {
        .name = "log.cleaner.delete.retention.ms",
        .type = SAMSA_CONFIG_LONG,
        .dflt = "86400000",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 0, .max = INT64_MAX,
        .implemented = true,
        .doc = "Time tombstones are kept in compacted topics.",
    },
    {
        .name = "log.cleaner.min.compaction.lag.ms",
        .type = SAMSA_CONFIG_LONG,
        .dflt = "0",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 0, .max = INT64_MAX,
        .implemented = true,
        .doc = "Time a message stays uncompacted.",
    },
    {
        .name = "log.cleaner.max.compaction.lag.ms",
        .type = SAMSA_CONFIG_LONG,
        .dflt = "9223372036854775807",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT64_MAX,
        .implemented = true,
        .doc = "Time after which a message must be compacted.",
    },
    {
        .name = "unstable.replication.enable",
        .type = SAMSA_CONFIG_BOOL,
        .dflt = "false",
        .implemented = true,
        .doc = "Let the controller accept a replication factor above 1 and "
               "brokers replicate such partitions: under development, see "
               "docs/REPLICATION.md (no ISR changes by leaders, no epoch "
               "truncation yet).",
    },
    {
        .name = "num.replica.fetchers",
        .type = SAMSA_CONFIG_INT,
        .dflt = "1",
        .implemented = true,
        .doc = "Fetcher threads per source broker "
               "(unstable.replication.enable).",
    },
    {
        .name = "replica.lag.time.max.ms",
        .type = SAMSA_CONFIG_LONG,
        .dflt = "30000",
        .implemented = true,
        .doc = "A follower that has not caught up with the leader's log "
               "end for this long leaves the ISR (the leader checks every "
               "half of it and asks the controller with AlterPartition; "
               "unstable.replication.enable).",
    },
    {
        .name = "replica.fetch.max.bytes",
        .type = SAMSA_CONFIG_INT,
        .dflt = "1048576",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 0, .max = INT32_MAX,
        .implemented = true,
        .doc = "Bytes fetched per partition by followers.",
    },
    {
        .name = "replica.fetch.min.bytes",
        .type = SAMSA_CONFIG_INT,
        .dflt = "1",
        .implemented = true,
        .doc = "Bytes a follower fetch waits for.",
    },
    {
        .name = "replica.fetch.wait.max.ms",
        .type = SAMSA_CONFIG_INT,
        .dflt = "500",
        .implemented = true,
        .doc = "Longest wait of a follower fetch.",
    },
    {
        .name = "replica.fetch.response.max.bytes",
        .type = SAMSA_CONFIG_INT,
        .dflt = "10485760",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 0, .max = INT32_MAX,
        .implemented = true,
        .doc = "Bytes per follower fetch response.",
    },
    {
        .name = "replica.fetch.backoff.ms",
        .type = SAMSA_CONFIG_INT,
        .dflt = "1000",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 0, .max = INT32_MAX,
        .implemented = true,
        .doc = "Sleep after a follower fetch error.",
    },
    {
        .name = "replica.socket.timeout.ms",
        .type = SAMSA_CONFIG_INT,
        .dflt = "30000",
        .implemented = true,
        .doc = "Socket timeout of follower fetches.",
    },
    {
        .name = "replica.socket.receive.buffer.bytes",
        .type = SAMSA_CONFIG_INT,
        .dflt = "65536",
        .implemented = false,
        .doc = "SO_RCVBUF of follower fetch sockets.",
    },
    {
        .name = "replica.high.watermark.checkpoint.interval.ms",
        .type = SAMSA_CONFIG_LONG,
        .dflt = "5000",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT64_MAX,
        .implemented = true,
        .doc = "How often each log dir's replication-offset-checkpoint "
               "(every partition's high watermark) is written; also at a "
               "clean shutdown. At start a replicated partition's high "
               "watermark is min(checkpointed, log end offset); with one "
               "replica it stays the log end offset.",
    },
    {
        .name = "fetch.purgatory.purge.interval.requests",
        .type = SAMSA_CONFIG_INT,
        .dflt = "1000",
        .implemented = false,
        .doc = "Purge interval of the fetch purgatory.",
    },
    {
        .name = "producer.purgatory.purge.interval.requests",
        .type = SAMSA_CONFIG_INT,
        .dflt = "1000",
        .implemented = false,
        .doc = "Purge interval of the produce purgatory.",
    },
    {
        .name = "delete.records.purgatory.purge.interval.requests",
        .type = SAMSA_CONFIG_INT,
        .dflt = "1",
        .implemented = false,
        .doc = "Purge interval of the delete-records purgatory.",
    },
    {
        .name = "group.initial.rebalance.delay.ms",
        .type = SAMSA_CONFIG_INT,
        .dflt = "3000",
        .implemented = true,
        .doc = "Wait for more members before a new group's first rebalance.",
    },
    {
        .name = "group.min.session.timeout.ms",
        .type = SAMSA_CONFIG_INT,
        .dflt = "6000",
        .implemented = true,
        .doc = "Shortest session timeout a member may ask for.",
    },
    {
        .name = "group.max.session.timeout.ms",
        .type = SAMSA_CONFIG_INT,
        .dflt = "1800000",
        .implemented = true,
        .doc = "Longest session timeout a member may ask for.",
    },
    {
        .name = "group.max.size",
        .type = SAMSA_CONFIG_INT,
        .dflt = "2147483647",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT32_MAX,
        .implemented = true,
        .doc = "Members a classic group may have.",
    },
    {
        .name = "group.consumer.session.timeout.ms",
        .type = SAMSA_CONFIG_INT,
        .dflt = "45000",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT32_MAX,
        .implemented = true,
        .doc = "Session timeout of the consumer group protocol (KIP-848): a "
               "member without a heartbeat for this long is removed.",
    },
    {
        .name = "group.consumer.heartbeat.interval.ms",
        .type = SAMSA_CONFIG_INT,
        .dflt = "5000",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT32_MAX,
        .implemented = true,
        .doc = "Heartbeat interval of the consumer group protocol (KIP-848), "
               "told to every member.",
    },
    {
        .name = "group.consumer.max.size",
        .type = SAMSA_CONFIG_INT,
        .dflt = "2147483647",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT32_MAX,
        .implemented = true,
        .doc = "Members a consumer group (KIP-848) may have.",
    },
    {
        .name = "group.consumer.assignors",
        .type = SAMSA_CONFIG_LIST,
        .dflt = "uniform,range",
        .check = SAMSA_CONFIG_CHECK_ENUM,
        .names = config_consumer_assignors,
        .nonempty = true,
        .implemented = true,
        .doc = "Server-side assignors of consumer groups (KIP-848); the "
               "first is the default.",
    },
    {
        .name = "offsets.topic.num.partitions",
        .type = SAMSA_CONFIG_INT,
        .dflt = "50",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT32_MAX,
        .implemented = true,
        .doc = "Partitions of __consumer_offsets.",
    },
    {
        .name = "offsets.topic.replication.factor",
        .type = SAMSA_CONFIG_INT,
        .dflt = "3",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = 32767,
        .implemented = true,
        .doc = "Replication factor of __consumer_offsets (one node: 1 whatever "
               "the value).",
    },
    {
        .name = "offsets.topic.segment.bytes",
        .type = SAMSA_CONFIG_INT,
        .dflt = "104857600",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT32_MAX,
        .implemented = true,
        .doc = "Segment size of __consumer_offsets.",
    },
    {
        .name = "offsets.load.buffer.size",
        .type = SAMSA_CONFIG_INT,
        .dflt = "5242880",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT32_MAX,
        .implemented = false,
        .doc = "Read size when loading offsets into the cache.",
    },
    {
        .name = "offsets.retention.minutes",
        .type = SAMSA_CONFIG_INT,
        .dflt = "10080",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT32_MAX,
        .implemented = true,
        .doc = "Time committed offsets of an empty group are kept.",
    },
    {
        .name = "offsets.retention.check.interval.ms",
        .type = SAMSA_CONFIG_LONG,
        .dflt = "600000",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT64_MAX,
        .implemented = true,
        .doc = "How often stale offsets are looked for.",
    },
    {
        .name = "offsets.commit.timeout.ms",
        .type = SAMSA_CONFIG_INT,
        .dflt = "5000",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT32_MAX,
        .implemented = false,
        .doc = "Timeout of an offset commit's write.",
    },
    {
        .name = "offset.metadata.max.bytes",
        .type = SAMSA_CONFIG_INT,
        .dflt = "4096",
        .implemented = true,
        .doc = "Largest metadata string of an offset commit.",
    },
    {
        .name = "transaction.state.log.num.partitions",
        .type = SAMSA_CONFIG_INT,
        .dflt = "50",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT32_MAX,
        .implemented = true,
        .doc = "Partitions of __transaction_state.",
    },
    {
        .name = "transaction.state.log.replication.factor",
        .type = SAMSA_CONFIG_INT,
        .dflt = "3",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = 32767,
        .implemented = true,
        .doc = "Replication factor of __transaction_state.",
    },
    {
        .name = "transaction.state.log.min.isr",
        .type = SAMSA_CONFIG_INT,
        .dflt = "2",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT32_MAX,
        .implemented = false,
        .doc = "min.insync.replicas of __transaction_state.",
    },
    {
        .name = "transaction.state.log.segment.bytes",
        .type = SAMSA_CONFIG_INT,
        .dflt = "104857600",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT32_MAX,
        .implemented = true,
        .doc = "Segment size of __transaction_state.",
    },
    {
        .name = "transaction.state.log.load.buffer.size",
        .type = SAMSA_CONFIG_INT,
        .dflt = "5242880",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT32_MAX,
        .implemented = false,
        .doc = "Read size when loading transaction state.",
    },
    {
        .name = "transaction.max.timeout.ms",
        .type = SAMSA_CONFIG_INT,
        .dflt = "900000",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT32_MAX,
        .implemented = true,
        .doc = "Longest transaction timeout a producer may ask for.",
    },
    {
        .name = "transactional.id.expiration.ms",
        .type = SAMSA_CONFIG_INT,
        .dflt = "604800000",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT32_MAX,
        .implemented = true,
        .doc = "Idle time after which a transactional id expires.",
    },
    {
        .name = "transaction.abort.timed.out.transaction.cleanup.interval.ms",
        .type = SAMSA_CONFIG_INT,
        .dflt = "10000",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT32_MAX,
        .implemented = true,
        .doc = "How often timed-out transactions are aborted.",
    },
    {
        .name = "transaction.remove.expired.transaction.cleanup.interval.ms",
        .type = SAMSA_CONFIG_INT,
        .dflt = "3600000",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT32_MAX,
        .implemented = true,
        .doc = "How often expired transactional ids are removed.",
    },
    {
        .name = "producer.id.expiration.ms",
        .type = SAMSA_CONFIG_INT,
        .dflt = "86400000",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT32_MAX,
        .implemented = true,
        .doc = "Idle time after which a producer id's state expires.",
    },
    {
        .name = "producer.id.expiration.check.interval.ms",
        .type = SAMSA_CONFIG_INT,
        .dflt = "600000",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 1, .max = INT32_MAX,
        .implemented = true,
        .doc = "How often producer id expiry runs.",
    },
    /* ---- TLS (net/tls.c; per listener as
     * listener.name.<listener>.ssl.*, resolved key by key) ---- */
    {
        .name = "ssl.keystore.type",
        .type = SAMSA_CONFIG_STRING,
        .dflt = "JKS",
        .implemented = true,
        .per_listener = true,
        .doc = "Key store format. Only PEM is supported: set it to PEM "
               "(Kafka's default, JKS, stops the start of a TLS "
               "listener).",
    },
    {
        .name = "ssl.keystore.location",
        .type = SAMSA_CONFIG_STRING,
        .dflt = NULL,
        .implemented = true,
        .per_listener = true,
        .doc = "PEM file with the private key and the certificate chain "
               "(leaf first).",
    },
    {
        .name = "ssl.keystore.password",
        .type = SAMSA_CONFIG_PASSWORD,
        .dflt = NULL,
        .implemented = true,
        .per_listener = true,
        .doc = "Key store password: refused with PEM key stores (as in "
               "Kafka); an encrypted key's password is ssl.key.password.",
    },
    {
        .name = "ssl.keystore.certificate.chain",
        .type = SAMSA_CONFIG_PASSWORD,
        .dflt = NULL,
        .implemented = true,
        .per_listener = true,
        .doc = "The certificate chain as PEM text (KIP-651), with "
               "ssl.keystore.key, instead of ssl.keystore.location.",
    },
    {
        .name = "ssl.keystore.key",
        .type = SAMSA_CONFIG_PASSWORD,
        .dflt = NULL,
        .implemented = true,
        .per_listener = true,
        .doc = "The private key as PEM text (KIP-651), with "
               "ssl.keystore.certificate.chain.",
    },
    {
        .name = "ssl.key.password",
        .type = SAMSA_CONFIG_PASSWORD,
        .dflt = NULL,
        .implemented = true,
        .per_listener = true,
        .doc = "Password of an encrypted PEM private key.",
    },
    {
        .name = "ssl.truststore.type",
        .type = SAMSA_CONFIG_STRING,
        .dflt = "JKS",
        .implemented = true,
        .per_listener = true,
        .doc = "Trust store format: only PEM is supported (set it to PEM "
               "with a trust store).",
    },
    {
        .name = "ssl.truststore.location",
        .type = SAMSA_CONFIG_STRING,
        .dflt = NULL,
        .implemented = true,
        .per_listener = true,
        .doc = "PEM file of the CA certificates client certificates are "
               "checked against; null (and no ssl.truststore.certificates) "
               "means the system's CAs.",
    },
    {
        .name = "ssl.truststore.password",
        .type = SAMSA_CONFIG_PASSWORD,
        .dflt = NULL,
        .implemented = true,
        .per_listener = true,
        .doc = "Trust store password: refused with PEM trust stores.",
    },
    {
        .name = "ssl.truststore.certificates",
        .type = SAMSA_CONFIG_PASSWORD,
        .dflt = NULL,
        .implemented = true,
        .per_listener = true,
        .doc = "The trusted CA certificates as PEM text (KIP-651).",
    },
    {
        .name = "ssl.client.auth",
        .type = SAMSA_CONFIG_STRING,
        .dflt = "none",
        .check = SAMSA_CONFIG_CHECK_ENUM,
        .names = config_ssl_client_auth,
        .implemented = true,
        .per_listener = true,
        .doc = "Client certificates: required (no or an untrusted "
               "certificate fails the handshake), requested (checked if "
               "sent), none.",
    },
    {
        .name = "ssl.enabled.protocols",
        .type = SAMSA_CONFIG_LIST,
        .dflt = "TLSv1.2,TLSv1.3",
        .check = SAMSA_CONFIG_CHECK_ENUM,
        .names = config_ssl_protocols,
        .nonempty = true,
        .implemented = true,
        .per_listener = true,
        .doc = "TLS versions accepted (TLSv1.1 and older are not "
               "offered).",
    },
    {
        .name = "ssl.protocol",
        .type = SAMSA_CONFIG_STRING,
        .dflt = "TLSv1.3",
        .check = SAMSA_CONFIG_CHECK_ENUM,
        .names = config_ssl_protocol,
        .implemented = true,
        .per_listener = true,
        .doc = "Highest TLS version of the context: TLSv1.2 caps "
               "ssl.enabled.protocols at 1.2; TLSv1.3 and TLS do not.",
    },
    {
        .name = "ssl.cipher.suites",
        .type = SAMSA_CONFIG_LIST,
        .dflt = NULL,
        .implemented = true,
        .per_listener = true,
        .doc = "Cipher suites (IANA names as Kafka's, or OpenSSL's); TLS "
               "1.3 and TLS 1.2 suites are set apart, a version none is "
               "named for keeps OpenSSL's defaults. Null: OpenSSL's "
               "defaults.",
    },
    {
        .name = "ssl.endpoint.identification.algorithm",
        .type = SAMSA_CONFIG_STRING,
        .dflt = "https",
        .implemented = false,
        .per_listener = true,
        .doc = "Client side only (host name checked against the server's "
               "certificate); the broker makes no TLS connections yet.",
    },
    {
        .name = "ssl.allow.dn.changes",
        .type = SAMSA_CONFIG_BOOL,
        .dflt = "false",
        .implemented = true,
        .per_listener = true,
        .doc = "Let a dynamic key store update (listener.name.<l>.ssl."
               "keystore.* through AlterConfigs) change the certificate's "
               "subject DN; refused otherwise.",
    },
    {
        .name = "ssl.allow.san.changes",
        .type = SAMSA_CONFIG_BOOL,
        .dflt = "false",
        .implemented = true,
        .per_listener = true,
        .doc = "Let a dynamic key store update change the certificate's "
               "subject alternative names; refused otherwise.",
    },
    {
        .name = "ssl.principal.mapping.rules",
        .type = SAMSA_CONFIG_STRING,
        .dflt = "DEFAULT",
        .check = SAMSA_CONFIG_CHECK_ENUM,
        .names = config_principal_rules,
        .implemented = true,
        .doc = "How an SSL listener's client certificate names the "
               "principal. Samsa has Kafka's DEFAULT only: the subject's "
               "distinguished name in RFC 2253 form (User:CN=...,O=...); "
               "RULE:... mappings are refused. Without a client "
               "certificate the principal is User:ANONYMOUS.",
    },
    /* ---- SASL (issue 21): SASL_PLAINTEXT and SASL_SSL listeners ---- */
    {
        .name = "sasl.enabled.mechanisms",
        .type = SAMSA_CONFIG_LIST,
        .dflt = "GSSAPI",
        .implemented = true,
        .per_listener = true,
        .doc = "SASL mechanisms enabled on SASL listeners. Samsa supports "
               "PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER; other "
               "names (Kafka's default GSSAPI) are left out with a "
               "warning, and a SASL listener left with none refuses to "
               "start.",
    },
    {
        .name = "sasl.jaas.config",
        .type = SAMSA_CONFIG_PASSWORD,
        .dflt = NULL,
        .implemented = true,
        .per_listener = true,
        .doc = "JAAS login context of the SASL listeners, in JAAS file "
               "syntax. Kafka's form is per listener and mechanism: "
               "listener.name.<listener>.<mechanism>.sasl.jaas.config (e.g. "
               "listener.name.sasl_ssl.plain.sasl.jaas.config="
               "org.apache.kafka.common.security.plain.PlainLoginModule "
               "required user_admin=\"pw\";); the PlainLoginModule's "
               "user_NAME=\"PASSWORD\" options are the PLAIN users. "
               "ScramLoginModule needs no options on the broker (SCRAM "
               "credentials live in the metadata log).",
    },
    {
        .name = "sasl.server.callback.handler.class",
        .type = SAMSA_CONFIG_STRING,
        .dflt = NULL,
        .check = SAMSA_CONFIG_CHECK_FN,
        .fn = config_check_sasl_server_handler,
        .valid = "null, org.apache.kafka.common.security.oauthbearer."
                 "internals.unsecured."
                 "OAuthBearerUnsecuredValidatorCallbackHandler or "
                 "org.apache.kafka.common.security.oauthbearer."
                 "OAuthBearerValidatorCallbackHandler",
        .implemented = true,
        .per_listener = true,
        .doc = "The SASL server's callback handler; Kafka's form is per "
               "listener and mechanism (listener.name.<listener>."
               "oauthbearer.sasl.server.callback.handler.class). "
               "OAUTHBEARER's validators: the unsecured-JWT one (KIP-255, "
               "the default) and the JWKS one (KIP-768: signed JWTs checked "
               "against sasl.oauthbearer.jwks.endpoint.url).",
    },
    {
        .name = "sasl.oauthbearer.jwks.endpoint.url",
        .type = SAMSA_CONFIG_STRING,
        .dflt = NULL,
        .implemented = true,
        .per_listener = true,
        .doc = "OAuthBearerValidatorCallbackHandler: where the identity "
               "provider's JSON Web Key Set is, read at start. Samsa reads "
               "file: URLs (Kafka's file-based JWKS: a token whose kid is "
               "not in the file is refused); http(s) endpoints are refused "
               "at start (not implemented).",
    },
    {
        .name = "sasl.oauthbearer.expected.audience",
        .type = SAMSA_CONFIG_LIST,
        .dflt = NULL,
        .implemented = true,
        .per_listener = true,
        .doc = "OAuthBearerValidatorCallbackHandler: when set, a token's "
               "aud claim must name one of these.",
    },
    {
        .name = "sasl.oauthbearer.expected.issuer",
        .type = SAMSA_CONFIG_STRING,
        .dflt = NULL,
        .implemented = true,
        .per_listener = true,
        .doc = "OAuthBearerValidatorCallbackHandler: when set, a token's "
               "iss claim must be this.",
    },
    {
        .name = "sasl.oauthbearer.sub.claim.name",
        .type = SAMSA_CONFIG_STRING,
        .dflt = "sub",
        .implemented = true,
        .per_listener = true,
        .doc = "OAuthBearerValidatorCallbackHandler: the claim that names "
               "the principal.",
    },
    {
        .name = "sasl.oauthbearer.scope.claim.name",
        .type = SAMSA_CONFIG_STRING,
        .dflt = "scope",
        .implemented = true,
        .per_listener = true,
        .doc = "OAuthBearerValidatorCallbackHandler: the claim that holds "
               "the token's scope (a string or a list of strings).",
    },
    {
        .name = "sasl.oauthbearer.clock.skew.seconds",
        .type = SAMSA_CONFIG_INT,
        .dflt = "30",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 0, .max = INT32_MAX,
        .implemented = true,
        .per_listener = true,
        .doc = "OAuthBearerValidatorCallbackHandler: how far the token's "
               "exp, nbf and iat may be off the broker's clock.",
    },
    {
        .name = "connections.max.reauth.ms",
        .type = SAMSA_CONFIG_LONG,
        .dflt = "0",
        .check = SAMSA_CONFIG_CHECK_RANGE,
        .min = 0, .max = INT64_MAX,
        .implemented = true,
        .per_listener = true,
        .doc = "When positive, a SASL session lasts at most this long "
               "(SaslAuthenticate v1+ SessionLifetimeMs, KIP-368): the "
               "client re-authenticates on the connection, else its next "
               "request after the end closes it. 0: sessions never end.",
    },
};

const size_t  samsa_config_ndefs =
    sizeof(samsa_config_defs) / sizeof(samsa_config_defs[0]);

size_t
samsa_config_defs_index(const char *key)
{
    size_t  i;

    for (i = 0; i < samsa_config_ndefs; i++) {
        if (strcmp(samsa_config_defs[i].name, key) == 0) {
            break;
        }
    }
    return i;
}

const char *
samsa_config_defs_type_name(samsa_config_type_t type)
{
    switch (type) {
    case SAMSA_CONFIG_INT:      return "int";
    case SAMSA_CONFIG_LONG:     return "long";
    case SAMSA_CONFIG_DOUBLE:   return "double";
    case SAMSA_CONFIG_BOOL:     return "boolean";
    case SAMSA_CONFIG_STRING:   return "string";
    case SAMSA_CONFIG_LIST:     return "list";
    case SAMSA_CONFIG_PASSWORD: return "password";
    }
    return "?";
}

/* Write s with Markdown table pipes escaped. */
static void
defs_md_text(FILE *out, const char *s)
{
    for (; *s != '\0'; s++) {
        if (*s == '|') {
            fputc('\\', out);
        }
        fputc(*s, out);
    }
}

static void
defs_md_default(FILE *out, const samsa_config_def_t *def)
{
    if (def->dflt == NULL) {
        fputs("null", out);
    } else if (def->dflt[0] == '\0') {
        fputs("\"\"", out);
    } else {
        fputc('`', out);
        defs_md_text(out, def->dflt);
        fputc('`', out);
    }
}

/* Kafka's notation: [1,...] for at least 1, [1,...,17] for a range. */
static void
defs_md_range(FILE *out, const samsa_config_def_t *def)
{
    int64_t  type_max;

    if (def->type == SAMSA_CONFIG_DOUBLE) {
        fprintf(out, "[%g,...,%g]", def->dmin, def->dmax);
        return;
    }
    type_max = def->type == SAMSA_CONFIG_INT ? INT32_MAX : INT64_MAX;
    if (def->max == type_max) {
        fprintf(out, "[%lld,...]", (long long) def->min);
    } else {
        fprintf(out, "[%lld,...,%lld]", (long long) def->min,
                (long long) def->max);
    }
}

/* The valid values in words (md: with Markdown's pipes escaped). */
static void
defs_valid(FILE *out, const samsa_config_def_t *def, bool md)
{
    size_t  i;

    if (def->valid != NULL) {
        if (md) {
            defs_md_text(out, def->valid);
        } else {
            fputs(def->valid, out);
        }
    } else if (def->check == SAMSA_CONFIG_CHECK_RANGE) {
        defs_md_range(out, def);
    } else if (def->check == SAMSA_CONFIG_CHECK_ENUM) {
        fputc('[', out);
        for (i = 0; def->names[i] != NULL; i++) {
            fprintf(out, "%s%s", i > 0 ? ", " : "", def->names[i]);
        }
        fputc(']', out);
    }
}

void
samsa_config_defs_markdown(FILE *out)
{
    const samsa_config_def_t  *def;
    size_t                     i;

    fputs("| Key | Type | Default | Valid values | Used | Description |\n"
          "|---|---|---|---|---|---|\n", out);
    for (i = 0; i < samsa_config_ndefs; i++) {
        def = &samsa_config_defs[i];
        fprintf(out, "| `%s` | %s | ", def->name,
                samsa_config_defs_type_name(def->type));
        defs_md_default(out, def);
        fputs(" | ", out);
        defs_valid(out, def, true);
        fprintf(out, " | %s | ", def->implemented ? "yes" : "no");
        defs_md_text(out, def->doc);
        fputs(" |\n", out);
    }
}

/* "# " + text, wrapped at 78 columns on blanks. */
static void
defs_props_comment(FILE *out, const char *text)
{
    const char  *p = text, *brk;
    size_t       n;

    while (*p != '\0') {
        n = strlen(p);
        if (n > 76) {
            for (brk = p + 76; brk > p && *brk != ' '; brk--) {
            }
            n = brk > p ? (size_t) (brk - p) : 76;
        }
        fprintf(out, "# %.*s\n", (int) n, p);
        p += n;
        while (*p == ' ') {
            p++;
        }
    }
}

/* A value as the right side of key=value: backslashes doubled, a leading
 * blank escaped (java.util.Properties would drop it). */
static void
defs_props_value(FILE *out, const char *v)
{
    const char  *p;

    for (p = v; *p != '\0'; p++) {
        if (*p == '\\' || (p == v && *p == ' ')) {
            fputc('\\', out);
        }
        fputc(*p, out);
    }
}

void
samsa_config_defs_properties(FILE *out)
{
    const samsa_config_def_t  *def;
    char                      *valid = NULL;
    size_t                     i, validlen = 0;
    FILE                      *vf;

    fputs("# samsa-server configuration: Kafka's server.properties keys.\n"
          "#\n"
          "# Every key samsa-server knows is below, commented out at its\n"
          "# default; uncomment a line to change it.  Without a file\n"
          "# samsa-server runs one node (broker and controller).  Each\n"
          "# --override key=value on the command line wins over this file.\n"
          "# docs/CONFIG.md describes the keys and how they combine.\n"
          "# (Generated from src/config/config_defs.c by\n"
          "# scripts/gen_config_doc.sh.)\n", out);
    for (i = 0; i < samsa_config_ndefs; i++) {
        def = &samsa_config_defs[i];
        fputs("\n", out);
        defs_props_comment(out, def->doc);
        vf = open_memstream(&valid, &validlen);
        if (vf != NULL) {
            fprintf(vf, "Type: %s", samsa_config_defs_type_name(def->type));
            if (def->valid != NULL || def->check == SAMSA_CONFIG_CHECK_RANGE
                || def->check == SAMSA_CONFIG_CHECK_ENUM) {
                fputs("; valid values: ", vf);
                defs_valid(vf, def, false);
            }
            if (def->dflt == NULL) {
                fputs("; no default", vf);
            }
            if (!def->implemented) {
                fputs("; accepted, not used yet", vf);
            }
            if (def->per_listener) {
                fprintf(vf, "; also listener.name.<listener>.%s", def->name);
            }
            fputc('.', vf);
            fclose(vf);
            defs_props_comment(out, valid);
            free(valid);
            valid = NULL;
        }
        fprintf(out, "#%s=", def->name);
        if (def->dflt != NULL) {
            defs_props_value(out, def->dflt);
        }
        fputc('\n', out);
    }
}
