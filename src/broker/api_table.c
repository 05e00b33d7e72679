/*
 * broker/api_table.c - the table of implemented APIs and the dispatch over
 * it (Kafka's KafkaApis.handle / ControllerApis.handle match).
 * Threads: const table; gate on network threads, dispatch on handlers.
 */
#include "broker/api_table.h"

#include <string.h>

#include "broker/quota.h"
#include "net/server/reqchan.h"
#include "proto/proto.h"
#include "util/diag.h"
#include "util/endian.h"

#define B SAMSA_API_F_BROKER
#define C SAMSA_API_F_CONTROLLER

/* Version ranges: CLIENTS.md.  Produce v0-v2 are listed but answered by
 * closing (librdkafka compresses only if Produce v0 is listed; Kafka 4
 * does the same); the other APIs start where Kafka 4 starts (KIP-896).
 * The last two columns place the response's ThrottleTimeMs (the schemas
 * in proto/schema/): the first version with it, and its offset in the
 * body; -1: the handler throttles itself (Produce and ApiVersions, where
 * it follows an array). */
static const samsa_api_def_t  api_defs[] = {
    { 0, 0, 11, samsa_h_Produce, B, -1, 0 },
    { 1, 4, 16, samsa_h_Fetch, B, 1, 0 },
    { 2, 1, 9, samsa_h_ListOffsets, B, 2, 0 },
    { 3, 0, 12, samsa_h_Metadata, B, 3, 0 },
    { 8, 0, 9, samsa_h_OffsetCommit, B, 3, 0 },
    { 9, 0, 9, samsa_h_OffsetFetch, B, 3, 0 },
    { 10, 0, 4, samsa_h_FindCoordinator, B, 1, 0 },
    { 11, 0, 9, samsa_h_JoinGroup, B, 2, 0 },
    { 12, 0, 4, samsa_h_Heartbeat, B, 1, 0 },
    { 13, 0, 5, samsa_h_LeaveGroup, B, 1, 0 },
    { 14, 0, 5, samsa_h_SyncGroup, B, 1, 0 },
    { 15, 0, 5, samsa_h_DescribeGroups, B, 1, 0 },
    { 16, 0, 5, samsa_h_ListGroups, B, 1, 0 },
    { 18, 0, 4, samsa_h_ApiVersions, B | C, -1, 0 },
    { 19, 2, 7, samsa_h_CreateTopics, B, 2, 0 },
    { 20, 1, 6, samsa_h_DeleteTopics, B, 1, 0 },
    { 21, 0, 2, samsa_h_DeleteRecords, B, 0, 0 },
    { 22, 0, 5, samsa_h_InitProducerId, B, 0, 0 },
    { 24, 0, 3, samsa_h_AddPartitionsToTxn, B, 0, 0 },
    { 25, 0, 4, samsa_h_AddOffsetsToTxn, B, 0, 0 },
    { 26, 0, 4, samsa_h_EndTxn, B, 0, 0 },
    { 28, 0, 4, samsa_h_TxnOffsetCommit, B, 0, 0 },
    { 32, 0, 4, samsa_h_DescribeConfigs, B, 0, 0 },
    { 33, 0, 2, samsa_h_AlterConfigs, B, 0, 0 },
    { 35, 0, 4, samsa_h_DescribeLogDirs, B, 0, 0 },
    { 37, 0, 3, samsa_h_CreatePartitions, B, 0, 0 },
    { 42, 0, 2, samsa_h_DeleteGroups, B, 0, 0 },
    { 44, 0, 1, samsa_h_IncrementalAlterConfigs, B, 0, 0 },
    { 47, 0, 0, samsa_h_OffsetDelete, B, 0, 2 },
    { 48, 0, 1, samsa_h_DescribeClientQuotas, B, 0, 0 },
    { 49, 0, 1, samsa_h_AlterClientQuotas, B, 0, 0 },
    { 60, 0, 1, samsa_h_DescribeCluster, B, 0, 0 },
    { 61, 0, 0, samsa_h_DescribeProducers, B, 0, 0 },
    { 65, 0, 0, samsa_h_DescribeTransactions, B, 0, 0 },
    { 66, 0, 1, samsa_h_ListTransactions, B, 0, 0 },
    { 68, 0, 1, samsa_h_ConsumerGroupHeartbeat, B, 0, 0 },
    { 69, 0, 1, samsa_h_ConsumerGroupDescribe, B, 0, 0 },
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
    samsa_apis_t           *apis = ctx;
    const samsa_api_def_t  *def = samsa_apis_find(apis, req->hdr.ApiKey);

    /* The network thread let only known APIs through (and ApiVersions of
     * any version, which its handler answers). */
    samsa_assert(def != NULL);
    def->fn(apis, req);
}

void
samsa_apis_respond(void *ctx, samsa_resp_t *resp)
{
    samsa_apis_t           *apis = ctx;
    samsa_req_t            *req = resp->req;
    const samsa_api_def_t  *def = samsa_apis_find(apis, req->hdr.ApiKey);
    int32_t                 ms;
    uint8_t                *at;

    if (apis->broker == NULL || def == NULL || req->request_quota_done
        || resp->kind != SAMSA_RESP_SEND) {
        return;
    }
    ms = samsa_quota_record_request(apis->broker->quota, req);
    if (ms <= resp->throttle_ms) {
        return;
    }
    /* Kafka throttles by the longer of a byte-rate and the request time */
    resp->throttle_ms = ms;
    req->throttle_ms = ms;
    if (def->throttle_from < 0 || req->hdr.ApiVersion < def->throttle_from) {
        return;                 /* muted all the same, as Kafka does */
    }
    samsa_assert(resp->send.frame.len >= resp->body_at + def->throttle_at + 4);
    at = resp->send.frame.data + resp->body_at + def->throttle_at;
    samsa_store_be32(at, (uint32_t) ms);
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
