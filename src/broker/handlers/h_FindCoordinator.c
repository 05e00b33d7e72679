/*
 * broker/handlers/h_FindCoordinator.c - FindCoordinator (key 10), v0-v4 (v4: a
 * batch of keys, KIP-699), as Kafka's KafkaApis.getCoordinator.  Key type 0
 * (GROUP): the coordinator of a group is the leader of its partition of
 * __consumer_offsets (samsa_grpcoord_partition_for), which is created on
 * first use (Kafka creates it here too).  Key type 1 (TRANSACTION): the
 * leader of the transactional id's partition of __transaction_state
 * (samsa_txncoord_partition_for), also created on first use.  The answer
 * is that broker's endpoint on the request's listener, from the metadata
 * image (broker/route.h); a partition without a live leader there is
 * COORDINATOR_NOT_AVAILABLE.  On a single node (no KRaft cluster) this
 * node coordinates everything and answers itself.  An empty key too, as
 * Kafka's.  Other key types get INVALID_REQUEST.
 * Threads: handler.
 */
#include "broker/api_table.h"

#include "broker/group/grp.h"
#include "broker/route.h"
#include "broker/txn/txn.h"
#include "config/config.h"
#include "meta/acl.h"
#include "net/server/reqchan.h"
#include "proto/errmap.h"
#include "proto/gen/FindCoordinator.h"
#include "proto/wr.h"

#define KEY_TYPE_GROUP        0
#define KEY_TYPE_TRANSACTION  1

typedef struct findcoord_answer {
    samsa_err_t   error;
    const char   *message;
    int32_t       node_id;
    const char   *host;
    int32_t       port;
} findcoord_answer_t;

/* On a KRaft cluster node: the leader of key's partition of the internal
 * topic, from the image taken after the topic was made sure of. */
static void
findcoord_leader(samsa_apis_t *apis, samsa_req_t *req, int8_t key_type,
                 samsa_slice_t key, findcoord_answer_t *a)
{
    samsa_route_node_t   node;
    const samsa_image_t *img = samsa_apis_image(apis->broker, req);
    const char          *topic;
    int32_t              partition;

    if (key_type == KEY_TYPE_GROUP) {
        topic = SAMSA_GRP_OFFSETS_TOPIC;
        partition = samsa_grpcoord_partition_for(apis->broker->grp, key);
    } else {
        topic = SAMSA_TXN_STATE_TOPIC;
        partition = samsa_txncoord_partition_for(apis->broker->txn, key);
    }
    a->error = samsa_route_coordinator(img, topic, partition, req->listener,
                                       &req->arena, &node);
    if (a->error != SAMSA_ERR_NONE) {
        a->message = "The coordinator is not available.";
        return;
    }
    /* as on a single node: Errors.NONE.message() in v0-v3, "" in v4 */
    a->message = req->hdr.ApiVersion < 4 ? "NONE" : "";
    a->node_id = node.id;
    a->host = node.host;
    a->port = node.port;
}

static void
findcoord_one(samsa_apis_t *apis, samsa_req_t *req, int8_t key_type,
              samsa_slice_t key, findcoord_answer_t *a)
{
    const samsa_endpoint_t  *ep = samsa_node_endpoint(apis->node,
                                                      req->listener);

    a->node_id = -1;
    a->host = "";
    a->port = -1;
    a->message = NULL;
    if (key_type != KEY_TYPE_GROUP && key_type != KEY_TYPE_TRANSACTION) {
        a->error = SAMSA_ERR_INVALID_REQUEST;
        a->message = "unknown coordinator key type";
        return;
    }
    /* Kafka: DESCRIBE on the group or the transactional id */
    if (!samsa_apis_allowed(apis, req, NULL, SAMSA_ACL_OP_DESCRIBE,
                            key_type == KEY_TYPE_GROUP
                                ? SAMSA_ACL_RESOURCE_GROUP
                                : SAMSA_ACL_RESOURCE_TRANSACTIONAL_ID,
                            key)) {
        a->error = key_type == KEY_TYPE_GROUP
                       ? SAMSA_ERR_GROUP_AUTHORIZATION_FAILED
                       : SAMSA_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
        a->message = key_type == KEY_TYPE_GROUP
                         ? "Group authorization failed."
                         : "Transactional Id authorization failed.";
        return;
    }
    /* An empty key is answered like any other, as Kafka does (tests/diff):
     * JoinGroup then says INVALID_GROUP_ID, InitProducerId
     * INVALID_REQUEST. */
    if ((key_type == KEY_TYPE_GROUP
             ? samsa_grpcoord_ensure_topic(apis->broker->grp)
             : samsa_txncoord_ensure_topic(apis->broker->txn))
        != SAMSA_ERR_NONE) {
        a->error = SAMSA_ERR_COORDINATOR_NOT_AVAILABLE;
        a->message = "The coordinator is not available.";
        return;
    }
    if (samsa_config_kraft(apis->broker->cfg)->is_cluster) {
        findcoord_leader(apis, req, key_type, key, a);
        return;
    }
    if (ep == NULL) {
        a->error = SAMSA_ERR_COORDINATOR_NOT_AVAILABLE;
        a->message = "The coordinator is not available.";
        return;
    }
    /* Kafka sends Errors.NONE.message() here, "NONE" (v0-v3), and an
     * empty text in a v4 batch: a client may show it (tests/diff) */
    a->error = SAMSA_ERR_NONE;
    a->message = req->hdr.ApiVersion < 4 ? "NONE" : "";
    a->node_id = apis->node->node_id;
    a->host = ep->host;
    a->port = ep->port;
}

void
samsa_h_FindCoordinator(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_FindCoordinatorRequest_t   *rq = body;
    samsa_FindCoordinatorResponse_t   m;
    findcoord_answer_t                a;
    int32_t                           i;

    samsa_FindCoordinatorResponse_init(&m);
    if (req->hdr.ApiVersion < 4) {
        findcoord_one(apis, req, rq->KeyType, rq->Key, &a);
        m.ErrorCode = samsa_err_wire(a.error);
        m.ErrorMessage = a.message != NULL ? samsa_slice_cstr(a.message)
                                           : SAMSA_SLICE_NULL;
        m.NodeId = a.node_id;
        m.Host = samsa_slice_cstr(a.host);
        m.Port = a.port;
    } else {
        m.Coordinators_cnt = rq->CoordinatorKeys_cnt > 0
                                 ? rq->CoordinatorKeys_cnt : 0;
        m.Coordinators = samsa_arena_calloc(&req->arena,
                                            (size_t) m.Coordinators_cnt + 1,
                                            sizeof(*m.Coordinators));
        for (i = 0; i < m.Coordinators_cnt; i++) {
            findcoord_one(apis, req, rq->KeyType, rq->CoordinatorKeys[i], &a);
            samsa_Coordinator_init(&m.Coordinators[i]);
            m.Coordinators[i].Key = rq->CoordinatorKeys[i];
            m.Coordinators[i].ErrorCode = samsa_err_wire(a.error);
            m.Coordinators[i].ErrorMessage =
                a.message != NULL ? samsa_slice_cstr(a.message)
                                  : SAMSA_SLICE_NULL;
            m.Coordinators[i].NodeId = a.node_id;
            m.Coordinators[i].Host = samsa_slice_cstr(a.host);
            m.Coordinators[i].Port = a.port;
        }
    }
    samsa_apis_send(apis->broker, req, &m);
}
