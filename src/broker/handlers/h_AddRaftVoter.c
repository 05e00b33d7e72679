/*
 * broker/handlers/h_AddRaftVoter.c - AddRaftVoter (key 80, KIP-853) and
 * RemoveRaftVoter (key 81): change the metadata quorum's voters
 * (kafka-metadata-quorum add-controller / remove-controller).  Served on
 * the CONTROLLER listener only (as Kafka's ControllerApis: a broker
 * listener does not list them); the active controller makes the change
 * over libraft's configuration changes (samsa_controller_change_voter),
 * another node answers NOT_LEADER_OR_FOLLOWER (the client finds the
 * leader with DescribeCluster and retries).  A ClusterId, when given,
 * must be this cluster's (INCONSISTENT_CLUSTER_ID).  The new voter's
 * endpoint is the request's listener named like this node's controller
 * listener (controller.listener.names), as Kafka's leader picks it.
 * Authorization: ALTER on the cluster, as Kafka's.
 * Threads: handler (waits for the configuration change to commit).
 */
#include "broker/api_table.h"

#include <string.h>
#include <strings.h>

#include "config/config_kraft.h"
#include "meta/acl.h"
#include "meta/controller/controller.h"
#include "meta/image.h"
#include "meta/metaprops.h"
#include "proto/gen/AddRaftVoter.h"
#include "proto/gen/RemoveRaftVoter.h"

#define RV_TIMEOUT_MAX_MS  60000
#define RV_TIMEOUT_MIN_MS  1000

/* Checks common to both: false with the answer's error set. */
static bool
rv_precheck(samsa_apis_t *apis, samsa_req_t *req, samsa_slice_t cluster_id,
            int16_t *error, const char **msg)
{
    const char  *cid = apis->node->cluster_id;

    if (apis->broker == NULL || apis->broker->ctrl == NULL) {
        *error = SAMSA_ERR_NOT_LEADER_OR_FOLLOWER;
        return false;
    }
    if (!samsa_apis_allowed_cluster(apis, req, SAMSA_ACL_OP_ALTER)) {
        *error = SAMSA_ERR_CLUSTER_AUTHORIZATION_FAILED;
        return false;
    }
    if (cluster_id.ptr != NULL
        && (cluster_id.len != strlen(cid)
            || memcmp(cluster_id.ptr, cid, cluster_id.len) != 0)) {
        *error = SAMSA_ERR_INCONSISTENT_CLUSTER_ID;
        *msg = "The clusterId in the request does not match that found on "
               "the server";
        return false;
    }
    return true;
}

/* The directory id as text, in req's arena; NULL for the zero uuid. */
static const char *
rv_dir_id(samsa_req_t *req, samsa_uuid_t id)
{
    char  *s;

    if (samsa_uuid_is_zero(id)) {
        return NULL;
    }
    s = samsa_arena_calloc(&req->arena, 1, SAMSA_UUID_STR_SIZE);
    samsa_image_id_str(id, s);
    return s;
}

static samsa_slice_t
rv_msg(const char *msg)
{
    return msg != NULL ? samsa_slice_cstr(msg) : SAMSA_SLICE_NULL;
}

void
samsa_h_AddRaftVoter(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_AddRaftVoterRequest_t   *rq = body;
    samsa_AddRaftVoterResponse_t   m;
    const samsa_AddRaftVoterListener_t *l = NULL;
    const samsa_config_kraft_t    *k;
    const char                    *msg = NULL, *dir_id;
    char                          *host;
    int16_t                        error = SAMSA_ERR_NONE;
    int                            timeout;
    int32_t                        i;

    samsa_AddRaftVoterResponse_init(&m);
    if (!rv_precheck(apis, req, rq->ClusterId, &error, &msg)) {
        goto out;
    }
    k = samsa_config_kraft(apis->broker->cfg);
    for (i = 0; l == NULL && i < rq->Listeners_cnt; i++) {
        if (k->controller_listener_name != NULL
            && rq->Listeners[i].Name.len == strlen(k->controller_listener_name)
            && strncasecmp(rq->Listeners[i].Name.ptr,
                           k->controller_listener_name,
                           rq->Listeners[i].Name.len) == 0) {
            l = &rq->Listeners[i];
        }
    }
    dir_id = rv_dir_id(req, rq->VoterDirectoryId);
    if (rq->VoterId < 0) {
        error = SAMSA_ERR_INVALID_REQUEST;
        msg = "The voter id must not be negative";
    } else if (dir_id == NULL) {
        error = SAMSA_ERR_INVALID_REQUEST;
        msg = "The voter's directory id must be given (its metadata dir's "
              "meta.properties directory.id)";
    } else if (l == NULL || l->Host.len == 0 || l->Port == 0) {
        error = SAMSA_ERR_INVALID_REQUEST;
        msg = "The voter has no endpoint for the controller listener of "
              "this quorum (controller.listener.names)";
    } else {
        host = samsa_arena_calloc(&req->arena, 1, l->Host.len + 1);
        memcpy(host, l->Host.ptr, l->Host.len);
        timeout = rq->TimeoutMs < RV_TIMEOUT_MIN_MS ? RV_TIMEOUT_MIN_MS
                  : rq->TimeoutMs > RV_TIMEOUT_MAX_MS ? RV_TIMEOUT_MAX_MS
                  : rq->TimeoutMs;
        samsa_controller_change_voter(apis->broker->ctrl, true, rq->VoterId,
                                      dir_id, host, l->Port, timeout, &error,
                                      &msg);
    }
out:
    m.ErrorCode = error;
    m.ErrorMessage = rv_msg(msg);
    samsa_apis_send(apis->broker, req, &m);
}

void
samsa_h_RemoveRaftVoter(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_RemoveRaftVoterRequest_t   *rq = body;
    samsa_RemoveRaftVoterResponse_t   m;
    const char                       *msg = NULL;
    int16_t                           error = SAMSA_ERR_NONE;

    samsa_RemoveRaftVoterResponse_init(&m);
    if (rv_precheck(apis, req, rq->ClusterId, &error, &msg)) {
        samsa_controller_change_voter(apis->broker->ctrl, false, rq->VoterId,
                                      rv_dir_id(req, rq->VoterDirectoryId),
                                      NULL, 0, RV_TIMEOUT_MAX_MS / 2, &error,
                                      &msg);
    }
    m.ErrorCode = error;
    m.ErrorMessage = rv_msg(msg);
    samsa_apis_send(apis->broker, req, &m);
}
