/*
 * broker/handlers/h_AlterPartitionReassignments.c -
 * AlterPartitionReassignments (key 45, KIP-455), v0-1: per partition a
 * target replica list (or null: cancel the reassignment in progress; v1,
 * KIP-860: AllowReplicationFactorChange=false refuses a target that
 * changes the partition's replication factor), run
 * by the controller (samsa_controller_alter_reassignments, ctlreassign.c;
 * a cluster node that is not the active controller forwards the
 * request).  ALTER on the cluster, else every partition fails with
 * CLUSTER_AUTHORIZATION_FAILED, as Kafka's ControllerApis.
 * Threads: handler.
 */
#include "broker/api_table.h"

#include "broker/broker.h"
#include "meta/acl.h"
#include "meta/controller/controller.h"
#include "net/server/reqchan.h"
#include "proto/gen/AlterPartitionReassignments.h"
#include "util/arena.h"

/* The request's partitions, flattened (*n of them, in arena). */
static samsa_controller_reassign_t *
reassign_parts(samsa_req_t *req,
               const samsa_AlterPartitionReassignmentsRequest_t *rq,
               size_t *n)
{
    const samsa_ReassignableTopic_t      *tp;
    const samsa_ReassignablePartition_t  *pp;
    samsa_controller_reassign_t          *v;
    int32_t                               i, j;

    *n = 0;
    for (i = 0; i < rq->Topics_cnt; i++) {
        *n += (size_t) (rq->Topics[i].Partitions_cnt > 0
                            ? rq->Topics[i].Partitions_cnt : 0);
    }
    v = samsa_arena_calloc(&req->arena, *n + 1, sizeof(*v));
    *n = 0;
    for (i = 0; i < rq->Topics_cnt; i++) {
        tp = &rq->Topics[i];
        for (j = 0; j < tp->Partitions_cnt; j++) {
            pp = &tp->Partitions[j];
            v[*n].topic = tp->Name;
            v[*n].partition = pp->PartitionIndex;
            v[*n].replicas = pp->Replicas_cnt >= 0 ? pp->Replicas : NULL;
            v[*n].nreplicas = pp->Replicas_cnt >= 0 ? pp->Replicas_cnt : 0;
            v[(*n)++].keep_replication_factor =
                !rq->AllowReplicationFactorChange;
        }
    }
    return v;
}

/* The controller's answers (or err for every partition). */
static samsa_controller_result_t *
reassign_run(samsa_apis_t *apis, samsa_req_t *req,
             const samsa_controller_reassign_t *parts, size_t n,
             samsa_err_t err)
{
    samsa_controller_result_t  *res;

    res = samsa_arena_calloc(&req->arena, n + 1, sizeof(*res));
    if (err == SAMSA_ERR_NONE && n > 0) {
        err = apis->broker->ctrl == NULL
                  ? SAMSA_ERR_NOT_CONTROLLER
                  : samsa_controller_alter_reassignments(
                        apis->broker->ctrl, parts, n, &req->arena, res);
    }
    samsa_controller_results_failed(res, n, err);
    return res;
}

void
samsa_h_AlterPartitionReassignments(samsa_apis_t *apis, samsa_req_t *req,
                                    void *body)
{
    samsa_AlterPartitionReassignmentsRequest_t   *rq = body;
    samsa_AlterPartitionReassignmentsResponse_t   m;
    samsa_ReassignableTopicResponse_t            *tr;
    samsa_ReassignablePartitionResponse_t        *pr;
    samsa_controller_reassign_t                  *parts;
    samsa_controller_result_t                    *res;
    samsa_err_t                                   err = SAMSA_ERR_NONE;
    size_t                                        n, k = 0;
    int32_t                                       i, j;

    samsa_AlterPartitionReassignmentsResponse_init(&m);
    m.AllowReplicationFactorChange = rq->AllowReplicationFactorChange;
    if (!samsa_apis_allowed_cluster(apis, req, SAMSA_ACL_OP_ALTER)) {
        err = SAMSA_ERR_CLUSTER_AUTHORIZATION_FAILED;
    }
    parts = reassign_parts(req, rq, &n);
    res = reassign_run(apis, req, parts, n, err);
    m.Responses_cnt = rq->Topics_cnt > 0 ? rq->Topics_cnt : 0;
    m.Responses = samsa_arena_calloc(&req->arena, (size_t) m.Responses_cnt
                                                  + 1, sizeof(*m.Responses));
    for (i = 0; i < m.Responses_cnt; i++) {
        tr = &m.Responses[i];
        samsa_ReassignableTopicResponse_init(tr);
        tr->Name = rq->Topics[i].Name;
        tr->Partitions_cnt = rq->Topics[i].Partitions_cnt > 0
                                 ? rq->Topics[i].Partitions_cnt : 0;
        tr->Partitions = samsa_arena_calloc(&req->arena,
                                            (size_t) tr->Partitions_cnt + 1,
                                            sizeof(*tr->Partitions));
        for (j = 0; j < tr->Partitions_cnt; j++, k++) {
            pr = &tr->Partitions[j];
            samsa_ReassignablePartitionResponse_init(pr);
            pr->PartitionIndex = parts[k].partition;
            pr->ErrorCode = res[k].error;
            pr->ErrorMessage = res[k].error == SAMSA_ERR_NONE
                ? SAMSA_SLICE_NULL
                : samsa_slice_cstr(res[k].message != NULL
                                       ? res[k].message
                                       : samsa_err_text(res[k].error));
        }
    }
    samsa_apis_send(apis->broker, req, &m);
}
