/*
 * broker/handlers/h_CreatePartitions.c - CreatePartitions (key 37): raise a topic's
 * partition count, forwarded to the controller; the image listener creates
 * the new partitions' logs.
 * Threads: handler.
 */
#include "broker/api_table.h"

#include "broker/broker.h"
#include "meta/acl.h"
#include "net/server/reqchan.h"
#include "proto/errmap.h"
#include "proto/gen/CreatePartitions.h"
#include "proto/wr.h"

/* The controller call of samsa_h_CreatePartitions. */
typedef struct createpartitions_call {
    samsa_broker_t                           *b;
    const samsa_controller_new_partitions_t  *np;
    size_t                                    n;
    bool                                      validate_only;
    samsa_arena_t                            *arena;
    samsa_controller_result_t                *res;
} createpartitions_call_t;

/* samsa_apis_mutation_fn (ctx: a createpartitions_call_t) */
static samsa_err_t
createpartitions_create(void *ctx, const samsa_controller_quota_t *quota)
{
    createpartitions_call_t  *c = ctx;

    return samsa_controller_create_partitions(c->b->ctrl, c->np, c->n,
                                              c->validate_only, quota,
                                              c->arena, c->res);
}

void
samsa_h_CreatePartitions(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_CreatePartitionsRequest_t       *rq = body;
    samsa_CreatePartitionsResponse_t       m;
    samsa_controller_new_partitions_t     *np, *ok;
    samsa_controller_assignment_t         *as;
    samsa_controller_result_t             *res, *ok_res;
    bool                                  *denied;
    size_t                                 k, nok = 0;
    createpartitions_call_t                c;
    samsa_err_t                            err;
    size_t                                 i, n;
    int32_t                                j;
    char                                   nofile[320];
    bool                                   refused;

    n = (size_t) (rq->Topics_cnt > 0 ? rq->Topics_cnt : 0);
    np = samsa_arena_calloc(&req->arena, n + 1, sizeof(*np));
    for (i = 0; i < n; i++) {
        np[i].name = rq->Topics[i].Name;
        np[i].count = rq->Topics[i].Count;
        if (rq->Topics[i].Assignments_cnt > 0) {
            as = samsa_arena_calloc(&req->arena,
                                    (size_t) rq->Topics[i].Assignments_cnt,
                                    sizeof(*as));
            for (j = 0; j < rq->Topics[i].Assignments_cnt; j++) {
                as[j].replicas = rq->Topics[i].Assignments[j].BrokerIds;
                as[j].nreplicas =
                    rq->Topics[i].Assignments[j].BrokerIds_cnt > 0
                        ? rq->Topics[i].Assignments[j].BrokerIds_cnt : 0;
            }
            np[i].assignments = as;
            np[i].nassignments = (size_t) rq->Topics[i].Assignments_cnt;
        }
    }
    /* Kafka: ALTER on each topic; the controller gets the allowed ones */
    denied = samsa_arena_calloc(&req->arena, n + 1, sizeof(*denied));
    ok = samsa_arena_calloc(&req->arena, n + 1, sizeof(*ok));
    for (i = 0; i < n; i++) {
        denied[i] = !samsa_apis_allowed(apis, req, NULL, SAMSA_ACL_OP_ALTER,
                                        SAMSA_ACL_RESOURCE_TOPIC, np[i].name);
        if (!denied[i]) {
            ok[nok++] = np[i];
        }
    }
    res = samsa_arena_calloc(&req->arena, n + 1, sizeof(*res));
    ok_res = samsa_arena_calloc(&req->arena, nok + 1, sizeof(*ok_res));
    c = (createpartitions_call_t) { apis->broker, ok, nok, rq->ValidateOnly,
                                    &req->arena, ok_res };
    /* issue 22: out of descriptors: refuse with the reason */
    refused = !rq->ValidateOnly
              && !samsa_logmgr_files_available(apis->broker->logs, nofile,
                                               sizeof(nofile));
    err = refused ? SAMSA_ERR__NOFILE
          : nok == 0 ? SAMSA_ERR_NONE
                     : samsa_apis_mutate(apis, req, 3, !rq->ValidateOnly,
                                         createpartitions_create, &c);
    for (i = 0, k = 0; i < n; i++) {
        res[i] = denied[i] ? (samsa_controller_result_t) {
                                 SAMSA_ERR_TOPIC_AUTHORIZATION_FAILED,
                                 "The topic authorization is failed." }
                           : ok_res[k++];
    }
    samsa_CreatePartitionsResponse_init(&m);
    m.ThrottleTimeMs = req->throttle_ms;
    m.Results_cnt = (int32_t) n;
    m.Results = samsa_arena_calloc(&req->arena, n + 1, sizeof(*m.Results));
    for (i = 0; i < n; i++) {
        samsa_CreatePartitionsTopicResult_init(&m.Results[i]);
        m.Results[i].Name = rq->Topics[i].Name;
        m.Results[i].ErrorCode = samsa_err_wire(
            refused                 ? SAMSA_ERR__NOFILE
            : err != SAMSA_ERR_NONE && !denied[i]
                                    ? SAMSA_ERR_UNKNOWN_SERVER_ERROR
                                    : res[i].error);
        if (refused) {
            m.Results[i].ErrorMessage = samsa_slice_cstr(nofile);
        } else if (err == SAMSA_ERR_NONE || denied[i]) {
            m.Results[i].ErrorMessage = samsa_slice_cstr(res[i].message);
        }
    }
    samsa_apis_send(apis->broker, req, &m);
}
