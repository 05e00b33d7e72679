/*
 * broker/api_table.h - the one table of implemented Kafka APIs: key,
 * version range, handler, and which socket servers serve it.  It drives
 * both dispatch and the ApiVersions answer, so nothing is advertised that
 * is not implemented.
 * Threads: the table is const; a samsa_apis_t is built by main and then
 * read by the network threads (gate) and handler threads (dispatch).
 */
#ifndef SAMSA_BROKER_API_TABLE_H
#define SAMSA_BROKER_API_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "broker/broker.h"
#include "broker/node.h"
#include "meta/controller/controller.h"
#include "net/server/req.h"
#include "net/server/sockserver.h"

#define SAMSA_API_F_BROKER      0x1     /* served on broker listeners */
#define SAMSA_API_F_CONTROLLER  0x2     /* served on controller listeners */
#define SAMSA_API_F_RAW         0x4     /* its handler decodes the body
                                           (ApiVersions answers versions
                                           it cannot decode) */
#define SAMSA_API_F_ADMIN       0x8     /* a controller operation: on a
                                           cluster node also served on
                                           controller listeners, and
                                           forwarded there by a broker
                                           that is not the active
                                           controller (broker/forward.h) */
#define SAMSA_API_F_QUORUM      0x10    /* served only by a KRaft cluster
                                           node (DescribeQuorum) */

#define SAMSA_API_KEY_LIMIT     128     /* keys are below this */

typedef struct samsa_apis samsa_apis_t;

/* Handle req and respond exactly once (samsa_apis_send, or
 * samsa_reqchan_respond): validate, apply, fill the response.  rq is the
 * request body the table decoded (the API's <Api>Request_t, in req's
 * arena), or NULL for an API flagged SAMSA_API_F_RAW. */
typedef void (*samsa_api_fn)(samsa_apis_t *apis, samsa_req_t *req, void *rq);

typedef struct samsa_api_def {
    int16_t        key;
    int16_t        min_version;     /* implemented and advertised */
    int16_t        max_version;
    samsa_api_fn   fn;
    unsigned       flags;           /* SAMSA_API_F_* */
    int16_t        served_from;     /* versions below are listed but
                                       answered by closing (KIP-896) */
} samsa_api_def_t;

/* One socket server's view of the table. */
struct samsa_apis {
    const char              *kind;          /* "broker" / "controller" */
    const samsa_node_t      *node;
    samsa_broker_t          *broker;        /* NULL on a controller-only
                                               socket server */
    bool                     forward;       /* SAMSA_API_F_ADMIN requests go
                                               to the active controller
                                               (a cluster node's broker
                                               listeners) */
    const samsa_api_def_t   *defs[SAMSA_API_KEY_LIMIT];
};

/* ---- authorization (broker/authz.h): one call per check in a handler */

/* Whether this request's principal may do operation on the resource
 * (type SAMSA_ACL_RESOURCE_*, name): true without an authorizer, on a
 * controller listener (broker/authz.h says why) and for super users.  img:
 * the handler's image (NULL: the latest). */
bool samsa_apis_allowed(samsa_apis_t *apis, const samsa_req_t *req,
                        const samsa_image_t *img, int8_t operation,
                        int8_t resource_type, samsa_slice_t name);
/* The same on the CLUSTER resource ("kafka-cluster"). */
bool samsa_apis_allowed_cluster(samsa_apis_t *apis, const samsa_req_t *req,
                                int8_t operation);
/* Kafka's authorizeByResourceType (meta/acl.h) for this request: may it
 * do operation on some resource of the type? */
bool samsa_apis_allowed_any(samsa_apis_t *apis, const samsa_req_t *req,
                            int8_t operation, int8_t resource_type);
/* KIP-430's authorized operations of the resource for this request's
 * principal (every supported one without an authorizer). */
int32_t samsa_apis_authorized_ops(samsa_apis_t *apis, const samsa_req_t *req,
                                  const samsa_image_t *img,
                                  int8_t resource_type, samsa_slice_t name);
/* Whether checks apply to requests of apis (an authorizer is configured
 * and apis is a broker listener's). */
bool samsa_apis_authz_on(const samsa_apis_t *apis);

/* Select the APIs carrying flag (SAMSA_API_F_BROKER or _CONTROLLER). */
void samsa_apis_init(samsa_apis_t *apis, const char *kind,
                     const samsa_node_t *node, samsa_broker_t *broker,
                     unsigned flag);

const samsa_api_def_t *samsa_apis_find(const samsa_apis_t *apis, int16_t key);

/* The ControllerId Metadata and DescribeCluster answer: this node, or in
 * KRaft cluster mode the active controller (the raft leader, -1 while
 * none is known) where it is an unfenced broker too (combined nodes).
 * An active controller that is no broker (process.roles=controller) is
 * not reachable by clients, which send admin requests to the ControllerId:
 * a broker listener then answers a live broker instead, as Kafka's KRaft
 * brokers do (they answer a random alive broker, which forwards): this
 * node if it is an unfenced broker, else the lowest-id one (-1: none).
 * @thread any */
int32_t samsa_apis_controller_id(const samsa_apis_t *apis);

/* samsa_api_gate_fn and samsa_req_handle_fn for the socket server. */
samsa_api_gate_t samsa_apis_gate(void *ctx, int16_t key, int16_t version);
void samsa_apis_handle(void *ctx, samsa_req_t *req);

/* How samsa_apis_send_opts encodes: the defaults are {-1, NULL, true}. */
typedef struct samsa_apis_send_opts {
    int16_t             version;    /* -1: the request's version */
    samsa_wr_region_fn  region;     /* file regions of records fields go
                                       here (ctx: the response); NULL:
                                       read into the frame */
    bool                count_errors;  /* ErrorCodes go to req->errors */
} samsa_apis_send_opts_t;

/* Kafka's sendResponseMaybeThrottle with createResponse(throttleMs): answer
 * req with m, its API's response struct (proto/gen/<Api>.h).  Before
 * encoding, on a broker (b not NULL) the request's handler time goes to the
 * request-time quota unless its handler recorded it; the longer of that
 * throttle and req->throttle_ms (a byte-rate one the handler set) becomes
 * req->throttle_ms, the response's mute time and m's ThrottleTimeMs where
 * the version has one.  Then m is encoded once and responded.
 * @thread whoever completes req (handler, purgatory, coordinator) */
void samsa_apis_send(samsa_broker_t *b, samsa_req_t *req, void *m);
/* The transaction APIs' responses: their ErrorCodes are not counted in the
 * per-error request metrics (as they never were). */
extern const samsa_apis_send_opts_t  samsa_apis_uncounted;
void samsa_apis_send_opts(samsa_broker_t *b, samsa_req_t *req, void *m,
                          const samsa_apis_send_opts_t *opts);

/* KIP-588: the transaction APIs answer PRODUCER_FENCED only from version
 * since; an older client is told INVALID_PRODUCER_EPOCH.  Returns err so
 * mapped for a request of version version. */
samsa_err_t samsa_apis_txn_error(samsa_err_t err, int16_t version,
                                 int16_t since);

/* The ErrorCode of a controller-listener API (BrokerRegistration,
 * BrokerHeartbeat, UnregisterBroker, AllocateProducerIds) for what the
 * controller call returned: NOT_CONTROLLER also when the controller is
 * shutting down (the broker retries elsewhere), else samsa_err_wire(). */
int16_t samsa_apis_controller_error(samsa_err_t err);

/* The current metadata image, kept until req's response is encoded: what a
 * handler answers from it (topic names, replica arrays, broker hosts) may
 * point into it.  The caller does not put it.
 * @thread req's owner */
samsa_image_t *samsa_apis_image(samsa_broker_t *b, samsa_req_t *req);

/* What an asynchronous completion needs to answer req with
 * samsa_apis_send: a callback's ctx, in req's arena. */
typedef struct samsa_apis_call {
    samsa_broker_t  *broker;
    samsa_req_t     *req;
} samsa_apis_call_t;

samsa_apis_call_t *samsa_apis_call(samsa_apis_t *apis, samsa_req_t *req);

/* The bytes m would take as req's response (size, header, body and file
 * regions), measured without encoding: what a byte-rate quota charges. */
size_t samsa_apis_resp_size(const samsa_req_t *req, const void *m);

/* samsa_req_net_time_fn of the broker's socket server: the network
 * thread's time on a request goes to its request-time sensor, without
 * throttling (Kafka's recordNetworkThreadTimeCallback).  @thread network */
void samsa_apis_net_time(void *ctx, const samsa_req_t *req, int64_t ns);

/* Answer req by closing its connection (a request we cannot decode). */
void samsa_apis_close(samsa_req_t *req, const char *why);

/* One controller call of a mutating admin API; quota is what it passes
 * the controller (NULL: not charged).  Returns the controller's error. */
typedef samsa_err_t samsa_apis_mutation_fn(void *ctx,
                                           const samsa_controller_quota_t
                                               *quota);

/* Kafka's ControllerApis under the controller mutation quota
 * (broker/quota.h): begin req's client's quota, strict from version
 * strict_since, make the call fn(ctx, quota), charged unless charge is
 * false (validate_only), then end the quota and set req->throttle_ms to
 * the throttle the response carries.  Returns fn's error.
 * @thread handler */
SAMSA_MUST_CHECK samsa_err_t samsa_apis_mutate(
    samsa_apis_t *apis, samsa_req_t *req, int16_t strict_since, bool charge,
    samsa_apis_mutation_fn *fn, void *ctx);

/* A response array answering a request array of rq_cnt entries one for
 * one (a null array's -1, or any negative count, is none): zeroed, in
 * req's arena, with a spare entry so it is never NULL; *cnt gets its
 * length. */
void *samsa_apis_resp_array(samsa_req_t *req, int32_t rq_cnt, size_t size,
                            int32_t *cnt);

/* "/127.0.0.1": the client's address as Kafka shows it (group members'
 * ClientHost), in req's arena. */
samsa_slice_t samsa_apis_client_host(samsa_req_t *req);

/* Handlers, one file each (h_<Api>.c). */
void samsa_h_ApiVersions(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_Metadata(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_DescribeCluster(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_SaslHandshake(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_SaslAuthenticate(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_DescribeQuorum(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_BrokerHeartbeat(samsa_apis_t *apis, samsa_req_t *req,
                             void *body);
void samsa_h_AllocateProducerIds(samsa_apis_t *apis, samsa_req_t *req,
                                 void *body);
void samsa_h_AlterPartition(samsa_apis_t *apis, samsa_req_t *req,
                            void *body);
void samsa_h_UnregisterBroker(samsa_apis_t *apis, samsa_req_t *req,
                              void *body);
void samsa_h_AddRaftVoter(samsa_apis_t *apis, samsa_req_t *req, void *body);
void samsa_h_RemoveRaftVoter(samsa_apis_t *apis, samsa_req_t *req,
                             void *body);
void samsa_h_BrokerRegistration(samsa_apis_t *apis, samsa_req_t *req,
                                void *rq);
void samsa_h_DescribeClientQuotas(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_AlterClientQuotas(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_DescribeUserScramCredentials(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_AlterUserScramCredentials(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_DescribeAcls(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_CreateAcls(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_DeleteAcls(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_Produce(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_Fetch(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_ListOffsets(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_OffsetForLeaderEpoch(samsa_apis_t *apis, samsa_req_t *req,
                                  void *rq);
void samsa_h_CreateTopics(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_DeleteTopics(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_DeleteRecords(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_DescribeConfigs(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_AlterConfigs(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_DescribeLogDirs(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_CreatePartitions(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_ElectLeaders(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_AlterPartitionReassignments(samsa_apis_t *apis,
                                         samsa_req_t *req, void *rq);
void samsa_h_ListPartitionReassignments(samsa_apis_t *apis, samsa_req_t *req,
                                        void *rq);
void samsa_h_IncrementalAlterConfigs(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_FindCoordinator(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_JoinGroup(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_SyncGroup(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_Heartbeat(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_LeaveGroup(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_OffsetCommit(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_OffsetFetch(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_ListGroups(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_DescribeGroups(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_DeleteGroups(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_OffsetDelete(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_InitProducerId(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_DescribeProducers(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_AddPartitionsToTxn(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_AddOffsetsToTxn(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_EndTxn(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_TxnOffsetCommit(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_DescribeTransactions(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_ListTransactions(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_ConsumerGroupHeartbeat(samsa_apis_t *apis, samsa_req_t *req, void *rq);
void samsa_h_ConsumerGroupDescribe(samsa_apis_t *apis, samsa_req_t *req, void *rq);

#endif /* SAMSA_BROKER_API_TABLE_H */
