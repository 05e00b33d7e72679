/*
 * broker/api_table.c - the table of implemented APIs and the dispatch over
 * it (Kafka's KafkaApis.handle / ControllerApis.handle match).
 * Threads: const table; gate on network threads, dispatch on handlers.
 */
#include "broker/api_table.h"

#include <stdio.h>
#include <string.h>

#include "broker/quota.h"
#include "net/server/reqchan.h"
#include "proto/errmap.h"
#include "proto/proto.h"
#include "proto/resphdr.h"
#include "broker/forward.h"
#include "broker/fwdcheck.h"
#include "meta/image.h"
#include "meta/meta.h"
#include "meta/controller/controller.h"
#include "util/diag.h"
#include "util/time.h"

#define B SAMSA_API_F_BROKER
#define C SAMSA_API_F_CONTROLLER
#define R SAMSA_API_F_RAW
#define A SAMSA_API_F_ADMIN
#define Q SAMSA_API_F_QUORUM

/* Version ranges: CLIENTS.md.  Produce v0-v2 are listed but answered by
 * closing (librdkafka compresses only if Produce v0 is listed; Kafka 4
 * does the same); the other APIs start where Kafka 4 starts (KIP-896).
 * Where a response has ThrottleTimeMs the schema says (proto/gen/apis.h). */
static const samsa_api_def_t  api_defs[] = {
    { SAMSA_API_Produce, 0, 11, samsa_h_Produce, B, 3 },
    { SAMSA_API_Fetch, 4, 16, samsa_h_Fetch, B, 0 },
    { SAMSA_API_ListOffsets, 1, 9, samsa_h_ListOffsets, B, 0 },
    { SAMSA_API_Metadata, 0, 12, samsa_h_Metadata, B, 0 },
    { SAMSA_API_OffsetCommit, 0, 9, samsa_h_OffsetCommit, B, 0 },
    { SAMSA_API_OffsetFetch, 0, 9, samsa_h_OffsetFetch, B, 0 },
    { SAMSA_API_FindCoordinator, 0, 4, samsa_h_FindCoordinator, B, 0 },
    { SAMSA_API_JoinGroup, 0, 9, samsa_h_JoinGroup, B, 0 },
    { SAMSA_API_Heartbeat, 0, 4, samsa_h_Heartbeat, B, 0 },
    { SAMSA_API_LeaveGroup, 0, 5, samsa_h_LeaveGroup, B, 0 },
    { SAMSA_API_SyncGroup, 0, 5, samsa_h_SyncGroup, B, 0 },
    { SAMSA_API_DescribeGroups, 0, 5, samsa_h_DescribeGroups, B, 0 },
    { SAMSA_API_ListGroups, 0, 5, samsa_h_ListGroups, B, 0 },
    { SAMSA_API_ApiVersions, 0, 4, samsa_h_ApiVersions, B | C | R, 0 },
    { SAMSA_API_CreateTopics, 2, 7, samsa_h_CreateTopics, B | A, 0 },
    { SAMSA_API_DeleteTopics, 1, 6, samsa_h_DeleteTopics, B | A, 0 },
    { SAMSA_API_DeleteRecords, 0, 2, samsa_h_DeleteRecords, B, 0 },
    { SAMSA_API_InitProducerId, 0, 5, samsa_h_InitProducerId, B, 0 },
    { SAMSA_API_OffsetForLeaderEpoch, 2, 4, samsa_h_OffsetForLeaderEpoch, B, 0 },
    { SAMSA_API_AddPartitionsToTxn, 0, 3, samsa_h_AddPartitionsToTxn, B, 0 },
    { SAMSA_API_AddOffsetsToTxn, 0, 4, samsa_h_AddOffsetsToTxn, B, 0 },
    { SAMSA_API_EndTxn, 0, 4, samsa_h_EndTxn, B, 0 },
    { SAMSA_API_TxnOffsetCommit, 0, 4, samsa_h_TxnOffsetCommit, B, 0 },
    { SAMSA_API_DescribeAcls, 1, 3, samsa_h_DescribeAcls, B, 0 },
    { SAMSA_API_CreateAcls, 1, 3, samsa_h_CreateAcls, B | A, 0 },
    { SAMSA_API_DeleteAcls, 1, 3, samsa_h_DeleteAcls, B | A, 0 },
    { SAMSA_API_DescribeConfigs, 0, 4, samsa_h_DescribeConfigs, B, 0 },
    { SAMSA_API_AlterConfigs, 0, 2, samsa_h_AlterConfigs, B | A, 0 },
    { SAMSA_API_DescribeLogDirs, 0, 4, samsa_h_DescribeLogDirs, B, 0 },
    { SAMSA_API_CreatePartitions, 0, 3, samsa_h_CreatePartitions, B | A, 0 },
    { SAMSA_API_DeleteGroups, 0, 2, samsa_h_DeleteGroups, B, 0 },
    { SAMSA_API_ElectLeaders, 0, 2, samsa_h_ElectLeaders, B | A, 0 },
    { SAMSA_API_IncrementalAlterConfigs, 0, 1, samsa_h_IncrementalAlterConfigs, B | A, 0 },
    { SAMSA_API_AlterPartitionReassignments, 0, 1, samsa_h_AlterPartitionReassignments, B | A, 0 },
    { SAMSA_API_ListPartitionReassignments, 0, 0, samsa_h_ListPartitionReassignments, B, 0 },
    { SAMSA_API_OffsetDelete, 0, 0, samsa_h_OffsetDelete, B, 0 },
    { SAMSA_API_DescribeClientQuotas, 0, 1, samsa_h_DescribeClientQuotas, B, 0 },
    { SAMSA_API_AlterClientQuotas, 0, 1, samsa_h_AlterClientQuotas, B | A, 0 },
    { SAMSA_API_DescribeUserScramCredentials, 0, 0, samsa_h_DescribeUserScramCredentials, B, 0 },
    { SAMSA_API_AlterUserScramCredentials, 0, 0, samsa_h_AlterUserScramCredentials, B | A, 0 },
    { SAMSA_API_DescribeCluster, 0, 2, samsa_h_DescribeCluster, B | C, 0 },
    { SAMSA_API_DescribeQuorum, 0, 2, samsa_h_DescribeQuorum, Q | A, 0 },
    { SAMSA_API_BrokerRegistration, 0, 4, samsa_h_BrokerRegistration, C, 0 },
    { SAMSA_API_BrokerHeartbeat, 0, 1, samsa_h_BrokerHeartbeat, C, 0 },
    { SAMSA_API_UnregisterBroker, 0, 0, samsa_h_UnregisterBroker, B | A, 0 },
    { SAMSA_API_DescribeProducers, 0, 0, samsa_h_DescribeProducers, B, 0 },
    { SAMSA_API_DescribeTransactions, 0, 0, samsa_h_DescribeTransactions, B, 0 },
    { SAMSA_API_ListTransactions, 0, 1, samsa_h_ListTransactions, B, 0 },
    { SAMSA_API_AllocateProducerIds, 0, 0, samsa_h_AllocateProducerIds, C, 0 },
    /* Kafka 4 serves v2-3 (v0-1 removed, KIP-896) on the CONTROLLER
     * listener only */
    { SAMSA_API_AlterPartition, 2, 3, samsa_h_AlterPartition, C, 0 },
    { SAMSA_API_AddRaftVoter, 0, 1, samsa_h_AddRaftVoter, C, 0 },
    { SAMSA_API_RemoveRaftVoter, 0, 0, samsa_h_RemoveRaftVoter, C, 0 },
    { SAMSA_API_ConsumerGroupHeartbeat, 0, 1, samsa_h_ConsumerGroupHeartbeat, B, 0 },
    { SAMSA_API_ConsumerGroupDescribe, 0, 1, samsa_h_ConsumerGroupDescribe, B, 0 },
    { SAMSA_API_SaslHandshake, 0, 1, samsa_h_SaslHandshake, B, 0 },
    { SAMSA_API_SaslAuthenticate, 0, 2, samsa_h_SaslAuthenticate, B, 0 },
};

void
samsa_apis_init(samsa_apis_t *apis, const char *kind, const samsa_node_t *node,
                samsa_broker_t *broker, unsigned flag)
{
    size_t  i;

    memset(apis, 0, sizeof(*apis));
    apis->kind = kind;
    apis->node = node;
    apis->broker = broker;
    for (i = 0; i < sizeof(api_defs) / sizeof(api_defs[0]); i++) {
        samsa_assert(api_defs[i].key >= 0
                     && api_defs[i].key < SAMSA_API_KEY_LIMIT);
        /* a codec must exist for every advertised version */
        samsa_assert(samsa_proto_api_find(api_defs[i].key) != NULL);
        if (api_defs[i].flags & flag) {
            apis->defs[api_defs[i].key] = &api_defs[i];
        }
    }
}

static bool
apis_is_live_broker(const samsa_image_t *img, int32_t id)
{
    const samsa_image_broker_t  *br = samsa_image_broker_find(img, id);

    return br != NULL && !br->fenced;
}

int32_t
samsa_apis_controller_id(const samsa_apis_t *apis)
{
    samsa_image_t  *img;
    int32_t         id;
    size_t          i;

    if (apis->broker == NULL || apis->broker->ctrl == NULL) {
        return apis->node->controller_id;
    }
    id = samsa_controller_active_id(apis->broker->ctrl);
    if (id < 0 || !apis->forward) {     /* forward: a cluster node's
                                           broker listener */
        return id;
    }
    img = samsa_meta_image_get(apis->broker->meta);
    if (!apis_is_live_broker(img, id)) {
        id = -1;
        if (apis_is_live_broker(img, apis->node->node_id)) {
            id = apis->node->node_id;
        }
        for (i = 0; id < 0 && i < samsa_image_broker_count(img); i++) {
            if (!samsa_image_broker_at(img, i)->fenced) {
                id = samsa_image_broker_at(img, i)->id;
            }
        }
    }
    samsa_image_put(img);
    return id;
}

const samsa_api_def_t *
samsa_apis_find(const samsa_apis_t *apis, int16_t key)
{
    if (key < 0 || key >= SAMSA_API_KEY_LIMIT) {
        return NULL;
    }
    return apis->defs[key];
}

samsa_api_gate_t
samsa_apis_gate(void *ctx, int16_t key, int16_t version)
{
    const samsa_api_def_t  *def = samsa_apis_find(ctx, key);

    if (def == NULL) {
        return SAMSA_API_GATE_UNKNOWN_API;
    }
    if (version < def->min_version || version > def->max_version) {
        return SAMSA_API_GATE_UNSUPPORTED_VERSION;
    }
    return SAMSA_API_GATE_OK;
}

void
samsa_apis_handle(void *ctx, samsa_req_t *req)
{
    samsa_apis_t             *apis = ctx;
    const samsa_api_def_t    *def = samsa_apis_find(apis, req->hdr.ApiKey);
    const samsa_proto_api_t  *api;
    void                     *rq;
    char                      why[128];

    /* The network thread let only known APIs through (and ApiVersions of
     * any version, which its handler answers). */
    samsa_assert(def != NULL);
    if (def->flags & SAMSA_API_F_RAW) {
        def->fn(apis, req, NULL);
        return;
    }
    req->not_controller_timed_out = apis->forward
                                    && (def->flags & SAMSA_API_F_ADMIN);
    if (apis->forward && (def->flags & SAMSA_API_F_ADMIN)
        && !samsa_apis_authz_on(apis)
        && samsa_forward_to_controller(apis, req)) {
        return;                         /* answered by the active one */
    }
    if (req->hdr.ApiVersion < def->served_from) {
        snprintf(why, sizeof(why), "%s v%d-v%d are no longer supported "
                 "(KIP-896): use v%d or later",
                 samsa_proto_api_find(def->key)->name, def->min_version,
                 def->served_from - 1, def->served_from);
        samsa_apis_close(req, why);
        return;
    }
    api = samsa_proto_api_find(def->key);
    rq = samsa_arena_calloc(&req->arena, 1, api->request_size);
    api->request_init(rq);
    if (api->request_decode(&req->body, req->hdr.ApiVersion, &req->arena, rq)
        != SAMSA_ERR_NONE) {
        samsa_apis_close(req, "malformed request body");
        return;
    }
    /* with an authorizer, forwarded only once this node checked it */
    if (apis->forward && (def->flags & SAMSA_API_F_ADMIN)
        && samsa_apis_authz_on(apis)
        && samsa_fwdcheck_forwardable(apis, req, rq)
        && samsa_forward_to_controller(apis, req)) {
        return;
    }
    def->fn(apis, req, rq);
}

/* The request-time throttle (unless the handler recorded it) against the
 * one the handler set: the longer wins (Kafka throttles by the longer of a
 * byte-rate and the request time). */
static int32_t
apis_throttle(samsa_broker_t *b, samsa_req_t *req)
{
    int32_t  ms;

    if (b != NULL && !req->request_quota_done) {
        ms = samsa_quota_record_request(b->quota, req);
        if (ms > req->throttle_ms) {
            req->throttle_ms = ms;
        }
    }
    return req->throttle_ms;
}

void
samsa_apis_send_opts(samsa_broker_t *b, samsa_req_t *req, void *m,
                     const samsa_apis_send_opts_t *opts)
{
    const samsa_proto_api_t  *api = samsa_proto_api_find(req->hdr.ApiKey);
    int16_t                   v = opts->version >= 0 ? opts->version
                                                     : req->hdr.ApiVersion;
    int32_t                   ms = apis_throttle(b, req);
    samsa_resp_t             *resp;
    samsa_wr_t                wr;

    samsa_assert(api != NULL);
    if (req->not_controller_timed_out) {
        (void) api->response_error_replace(m, SAMSA_ERR_NOT_CONTROLLER,
                                           SAMSA_ERR_REQUEST_TIMED_OUT);
    }
    if (api->throttle_from >= 0 && v >= api->throttle_from) {
        memcpy((char *) m + api->throttle_off, &ms, sizeof(ms));
    }
    resp = samsa_resp_new_send_version(req, v);
    resp->throttle_ms = ms;     /* muted all the same without the field */
    wr = opts->count_errors ? samsa_resp_wr(resp)
                            : (samsa_wr_t) { .buf = &resp->send.frame };
    wr.region = opts->region;
    wr.region_ctx = resp;
    api->response_encode(&wr, v, m);
    samsa_reqchan_respond(resp);
}

const samsa_apis_send_opts_t  samsa_apis_uncounted = { -1, NULL, false };

void
samsa_apis_send(samsa_broker_t *b, samsa_req_t *req, void *m)
{
    static const samsa_apis_send_opts_t  defaults = { -1, NULL, true };

    samsa_apis_send_opts(b, req, m, &defaults);
}

samsa_err_t
samsa_apis_txn_error(samsa_err_t err, int16_t version, int16_t since)
{
    if (err == SAMSA_ERR_PRODUCER_FENCED && version < since) {
        return SAMSA_ERR_INVALID_PRODUCER_EPOCH;
    }
    return err;
}

samsa_apis_call_t *
samsa_apis_call(samsa_apis_t *apis, samsa_req_t *req)
{
    samsa_apis_call_t  *call = samsa_arena_calloc(&req->arena, 1,
                                                  sizeof(*call));

    call->broker = apis->broker;
    call->req = req;
    return call;
}

size_t
samsa_apis_resp_size(const samsa_req_t *req, const void *m)
{
    const samsa_proto_api_t  *api = samsa_proto_api_find(req->hdr.ApiKey);
    samsa_wr_t                wr = samsa_wr_sizer();

    samsa_assert(api != NULL);
    (void) samsa_wr_i32(&wr, 0);        /* the frame's size */
    samsa_resphdr_encode(&wr, req->hdr.ApiKey, req->hdr.ApiVersion,
                         req->hdr.CorrelationId);
    api->response_encode(&wr, req->hdr.ApiVersion, m);
    return wr.size;
}

samsa_err_t
samsa_apis_mutate(samsa_apis_t *apis, samsa_req_t *req, int16_t strict_since,
                  bool charge, samsa_apis_mutation_fn *fn, void *ctx)
{
    samsa_quota_mutation_t  mq;
    samsa_err_t             err;

    samsa_quota_mutation_begin(apis->broker->quota, &mq,
                               samsa_quota_user(req->principal),
                               req->hdr.ClientId,
                               req->hdr.ApiVersion >= strict_since);
    err = fn(ctx, charge ? samsa_quota_mutation_ctl(&mq) : NULL);
    req->throttle_ms = samsa_quota_mutation_end(&mq, samsa_now_ms());
    return err;
}

int16_t
samsa_apis_controller_error(samsa_err_t err)
{
    return err == SAMSA_ERR_NOT_CONTROLLER || err == SAMSA_ERR__SHUTDOWN
               ? SAMSA_ERR_NOT_CONTROLLER
               : samsa_err_wire(err);
}

static void
apis_image_release(void *img)
{
    samsa_image_put(img);
}

bool
samsa_apis_authz_on(const samsa_apis_t *apis)
{
    return apis->broker != NULL && apis->broker->authz.enabled
           && strcmp(apis->kind, "controller") != 0;
}

bool
samsa_apis_allowed(samsa_apis_t *apis, const samsa_req_t *req,
                   const samsa_image_t *img, int8_t operation,
                   int8_t resource_type, samsa_slice_t name)
{
    samsa_image_t  *own = NULL;
    bool            ok;

    if (!samsa_apis_authz_on(apis)) {
        return true;
    }
    if (img == NULL) {
        img = own = samsa_meta_image_get(apis->broker->meta);
    }
    ok = samsa_authz_decide(&apis->broker->authz, img, req->principal,
                            req->client_host, operation, resource_type,
                            name);
    samsa_image_put(own);
    return ok;
}

bool
samsa_apis_allowed_cluster(samsa_apis_t *apis, const samsa_req_t *req,
                           int8_t operation)
{
    return samsa_apis_allowed(apis, req, NULL, operation,
                              SAMSA_ACL_RESOURCE_CLUSTER,
                              samsa_slice_cstr(SAMSA_ACL_CLUSTER_NAME));
}

bool
samsa_apis_allowed_any(samsa_apis_t *apis, const samsa_req_t *req,
                       int8_t operation, int8_t resource_type)
{
    samsa_image_t  *img;
    bool            ok;

    if (!samsa_apis_authz_on(apis)
        || samsa_authz_is_super(&apis->broker->authz, req->principal)) {
        return true;
    }
    img = samsa_meta_image_get(apis->broker->meta);
    ok = samsa_acl_authorize_by_type(samsa_image_acls(img), req->principal,
                                     req->client_host, operation,
                                     resource_type,
                                     apis->broker->authz.allow_if_none);
    samsa_image_put(img);
    return ok;
}

int32_t
samsa_apis_authorized_ops(samsa_apis_t *apis, const samsa_req_t *req,
                          const samsa_image_t *img, int8_t resource_type,
                          samsa_slice_t name)
{
    samsa_image_t  *own = NULL;
    int32_t         ops;

    if (!samsa_apis_authz_on(apis)) {
        return (int32_t) samsa_acl_supported_ops(resource_type);
    }
    if (img == NULL) {
        img = own = samsa_meta_image_get(apis->broker->meta);
    }
    ops = samsa_authz_decide_ops(&apis->broker->authz, img, req->principal,
                                 req->client_host, resource_type, name);
    samsa_image_put(own);
    return ops;
}

samsa_image_t *
samsa_apis_image(samsa_broker_t *b, samsa_req_t *req)
{
    samsa_image_t  *img = samsa_meta_image_get(b->meta);

    samsa_req_hold(req, apis_image_release, img);
    return img;
}

void *
samsa_apis_resp_array(samsa_req_t *req, int32_t rq_cnt, size_t size,
                      int32_t *cnt)
{
    *cnt = rq_cnt > 0 ? rq_cnt : 0;
    return samsa_arena_calloc(&req->arena, (size_t) *cnt + 1, size);
}

void
samsa_apis_net_time(void *ctx, const samsa_req_t *req, int64_t ns)
{
    samsa_apis_t  *apis = ctx;

    if (apis->broker != NULL) {
        samsa_quota_record_request_net(apis->broker->quota, req, ns);
    }
}

void
samsa_apis_close(samsa_req_t *req, const char *why)
{
    samsa_info("closing connection %s: %s request v%d (correlation id %d) "
               "from client '%s': %s",
               req->connection,
               samsa_proto_api_find(req->hdr.ApiKey)->name,
               req->hdr.ApiVersion, req->hdr.CorrelationId,
               req->client_id != NULL ? req->client_id : "", why);
    samsa_reqchan_respond(samsa_resp_new(req, SAMSA_RESP_CLOSE));
}
