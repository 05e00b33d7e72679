/*
 * broker/handlers/h_AlterUserScramCredentials.c - AlterUserScramCredentials
 * (key 51, KIP-554): set users' SCRAM credentials from salted passwords or
 * delete them, through the controller (meta/controller/controller.h:
 * samsa_controller_alter_scram, which writes UserScramCredentialRecord /
 * RemoveUserScramCredentialRecord); forwarded to the active controller
 * from other brokers of a cluster like the other admin APIs.  One result
 * per user, in the order the users first appear (deletions first).
 * Threads: handler.
 */
#include "broker/api_table.h"

#include "broker/broker.h"
#include "proto/errmap.h"
#include "proto/gen/AlterUserScramCredentials.h"

void
samsa_h_AlterUserScramCredentials(samsa_apis_t *apis, samsa_req_t *req,
                                  void *body)
{
    samsa_AlterUserScramCredentialsRequest_t   *rq = body;
    samsa_AlterUserScramCredentialsResponse_t   m;
    samsa_controller_scram_op_t                *ops;
    samsa_controller_result_t                  *res;
    samsa_err_t                                 err;
    size_t                                      i, j, nd, nu, n;

    nd = (size_t) (rq->Deletions_cnt > 0 ? rq->Deletions_cnt : 0);
    nu = (size_t) (rq->Upsertions_cnt > 0 ? rq->Upsertions_cnt : 0);
    n = nd + nu;
    ops = samsa_arena_calloc(&req->arena, n + 1, sizeof(*ops));
    for (i = 0; i < nd; i++) {
        ops[i].name = rq->Deletions[i].Name;
        ops[i].mechanism = rq->Deletions[i].Mechanism;
        ops[i].remove = true;
    }
    for (i = 0; i < nu; i++) {
        ops[nd + i].name = rq->Upsertions[i].Name;
        ops[nd + i].mechanism = rq->Upsertions[i].Mechanism;
        ops[nd + i].iterations = rq->Upsertions[i].Iterations;
        ops[nd + i].salt = rq->Upsertions[i].Salt;
        ops[nd + i].salted_password = rq->Upsertions[i].SaltedPassword;
    }
    res = samsa_arena_calloc(&req->arena, n + 1, sizeof(*res));
    err = samsa_controller_alter_scram(apis->broker->ctrl, ops, n,
                                       &req->arena, res);
    samsa_AlterUserScramCredentialsResponse_init(&m);
    m.Results = samsa_arena_calloc(&req->arena, n + 1, sizeof(*m.Results));
    for (i = 0; i < n; i++) {
        for (j = 0; j < i && !samsa_slice_eq(ops[j].name, ops[i].name); j++) {
        }
        if (j < i) {
            continue;                   /* one result per user */
        }
        samsa_AlterUserScramCredentialsResult_init(
            &m.Results[m.Results_cnt]);
        m.Results[m.Results_cnt].User = ops[i].name;
        m.Results[m.Results_cnt].ErrorCode = samsa_err_wire(
            err != SAMSA_ERR_NONE ? SAMSA_ERR_UNKNOWN_SERVER_ERROR
                                  : res[i].error);
        if (err == SAMSA_ERR_NONE && res[i].message != NULL) {
            m.Results[m.Results_cnt].ErrorMessage =
                samsa_slice_cstr(res[i].message);
        }
        m.Results_cnt++;
    }
    samsa_apis_send(apis->broker, req, &m);
}
