/*
 * broker/handlers/h_FindCoordinator.c - FindCoordinator (key 10), v0-v4 (v4: a
 * batch of keys, KIP-699).  Key type 0 (GROUP): this node coordinates
 * every group; __consumer_offsets is created on first use (Kafka creates
 * it here too).  Key type 1 (TRANSACTION): this node coordinates every
 * transactional id; __transaction_state is created on first use.  An
 * empty key too, as Kafka's.  Other key types get INVALID_REQUEST.
 * Threads: handler.
 */
#include "broker/api_table.h"

#include "broker/group/grp.h"
#include "broker/txn/txn.h"
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
    /* An empty key is answered like any other, as Kafka does (tests/diff):
     * JoinGroup then says INVALID_GROUP_ID, InitProducerId
     * INVALID_REQUEST. */
    (void) key;
    if (ep == NULL
        || (key_type == KEY_TYPE_GROUP
                ? samsa_grpcoord_ensure_topic(apis->broker->grp)
                : samsa_txncoord_ensure_topic(apis->broker->txn))
               != SAMSA_ERR_NONE) {
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
