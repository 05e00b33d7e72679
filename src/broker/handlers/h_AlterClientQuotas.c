/*
 * broker/handlers/h_AlterClientQuotas.c - AlterClientQuotas (key 49, KIP-546): set
 * or remove client quotas.  The controller validates each entry and
 * writes one ClientQuotaRecord per changed key (meta/controller/controller.h); the
 * broker's quota manager (broker/quota.h) reads the new values from the
 * next image.  Each entry answers with its own error; the entity is
 * echoed as sent.
 * Threads: handler.
 */
#include "broker/api_table.h"

#include "broker/broker.h"
#include "meta/acl.h"
#include "net/server/reqchan.h"
#include "proto/errmap.h"
#include "proto/gen/AlterClientQuotas.h"
#include "proto/wr.h"

static void
acq_echo(samsa_req_t *req, const samsa_AlterClientQuotasEntry_t *in,
         samsa_AlterClientQuotasEntryResult_t *out)
{
    int32_t  i, n = in->Entity_cnt > 0 ? in->Entity_cnt : 0;

    out->Entity = samsa_arena_calloc(&req->arena, (size_t) n + 1,
                                     sizeof(*out->Entity));
    for (i = 0; i < n; i++) {
        samsa_AlterClientQuotasEntityResult_init(&out->Entity[i]);
        out->Entity[i].EntityType = in->Entity[i].EntityType;
        out->Entity[i].EntityName = in->Entity[i].EntityName;
    }
    out->Entity_cnt = n;
}

void
samsa_h_AlterClientQuotas(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_AlterClientQuotasRequest_t  *rq = body;
    samsa_AlterClientQuotasResponse_t  m;
    samsa_controller_quota_alter_t    *es;
    samsa_controller_quota_part_t     *parts;
    samsa_controller_quota_op_t       *ops;
    samsa_controller_result_t         *res;
    samsa_err_t                        err;
    size_t                             i, n;
    int32_t                            j;

    n = (size_t) (rq->Entries_cnt > 0 ? rq->Entries_cnt : 0);
    es = samsa_arena_calloc(&req->arena, n + 1, sizeof(*es));
    for (i = 0; i < n; i++) {
        const samsa_AlterClientQuotasEntry_t  *e = &rq->Entries[i];

        es[i].nentity = (size_t) (e->Entity_cnt > 0 ? e->Entity_cnt : 0);
        parts = samsa_arena_calloc(&req->arena, es[i].nentity + 1,
                                   sizeof(*parts));
        for (j = 0; j < (int32_t) es[i].nentity; j++) {
            parts[j].type = e->Entity[j].EntityType;
            parts[j].name = e->Entity[j].EntityName;
        }
        es[i].entity = parts;
        es[i].nops = (size_t) (e->Ops_cnt > 0 ? e->Ops_cnt : 0);
        ops = samsa_arena_calloc(&req->arena, es[i].nops + 1, sizeof(*ops));
        for (j = 0; j < (int32_t) es[i].nops; j++) {
            ops[j].key = e->Ops[j].Key;
            ops[j].value = e->Ops[j].Value;
            ops[j].remove = e->Ops[j].Remove;
        }
        es[i].ops = ops;
    }
    res = samsa_arena_calloc(&req->arena, n + 1, sizeof(*res));
    /* Kafka: ALTER_CONFIGS on the cluster, else every entry fails */
    if (!samsa_apis_allowed_cluster(apis, req, SAMSA_ACL_OP_ALTER_CONFIGS)) {
        for (i = 0; i < n; i++) {
            res[i] = (samsa_controller_result_t) {
                SAMSA_ERR_CLUSTER_AUTHORIZATION_FAILED,
                "Cluster authorization failed." };
        }
        err = SAMSA_ERR_NONE;
    } else {
        err = samsa_controller_alter_client_quotas(apis->broker->ctrl, es, n,
                                                   rq->ValidateOnly,
                                                   &req->arena, res);
    }
    samsa_AlterClientQuotasResponse_init(&m);
    m.Entries_cnt = (int32_t) n;
    m.Entries = samsa_arena_calloc(&req->arena, n + 1, sizeof(*m.Entries));
    for (i = 0; i < n; i++) {
        samsa_AlterClientQuotasEntryResult_init(&m.Entries[i]);
        acq_echo(req, &rq->Entries[i], &m.Entries[i]);
        m.Entries[i].ErrorCode = samsa_err_wire(
            err != SAMSA_ERR_NONE ? SAMSA_ERR_UNKNOWN_SERVER_ERROR
                                  : res[i].error);
        if (err == SAMSA_ERR_NONE) {
            m.Entries[i].ErrorMessage = samsa_slice_cstr(res[i].message);
        }
    }
    samsa_apis_send(apis->broker, req, &m);
}
