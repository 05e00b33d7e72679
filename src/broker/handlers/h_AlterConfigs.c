/*
 * broker/handlers/h_AlterConfigs.c - AlterConfigs (key 33, full replace of a
 * resource's overrides) and IncrementalAlterConfigs (key 44: SET, DELETE,
 * APPEND, SUBTRACT), both forwarded to the controller; the image listener
 * then applies topic changes to the partition logs and dynamic broker
 * configs to the thread pools.  BROKER_LOGGER resources are the broker's
 * own (broker/brokerlog.h), answered here and not forwarded, as Kafka's
 * ConfigAdminManager.preprocess does; legacy AlterConfigs refuses them
 * ("Unknown resource type 8").
 * Threads: handler.
 */
#include "broker/api_table.h"

#include <string.h>

#include "broker/broker.h"
#include "broker/brokerlog.h"
#include "net/server/reqchan.h"
#include "proto/errmap.h"
#include "proto/gen/AlterConfigs.h"
#include "proto/gen/IncrementalAlterConfigs.h"
#include "proto/wr.h"

static const char *
ac_cstr(samsa_arena_t *arena, samsa_slice_t s)
{
    return s.ptr == NULL ? NULL : samsa_arena_strndup(arena, s.ptr, s.len);
}

/* Answer the BROKER_LOGGER resources of rs[0..n) into res (incremental:
 * apply them; legacy: refuse them) and forward the others to the
 * controller in one call (which failing answers each of them
 * UNKNOWN_SERVER_ERROR). */
static void
ac_alter(samsa_apis_t *apis, samsa_req_t *req,
         const samsa_controller_alter_config_t *rs, size_t n,
         bool incremental, bool validate_only,
         samsa_controller_result_t *res)
{
    samsa_controller_alter_config_t  *fwd;
    samsa_controller_result_t        *fres;
    size_t                           *at, i, j, m = 0;
    samsa_err_t                       err;
    bool                              dup;

    fwd = samsa_arena_calloc(&req->arena, n + 1, sizeof(*fwd));
    at = samsa_arena_calloc(&req->arena, n + 1, sizeof(*at));
    for (i = 0; i < n; i++) {
        if (rs[i].resource_type != SAMSA_CONFIG_RESOURCE_BROKER_LOGGER) {
            at[m] = i;
            fwd[m++] = rs[i];
            continue;
        }
        dup = false;
        for (j = 0; j < n; j++) {
            dup = dup || (j != i && rs[j].resource_type == rs[i].resource_type
                          && samsa_slice_eq(rs[j].resource_name,
                                            rs[i].resource_name));
        }
        if (dup) {
            res[i].error = SAMSA_ERR_INVALID_REQUEST;
            res[i].message = "Each resource must appear at most once.";
        } else if (!incremental) {
            res[i].error = SAMSA_ERR_INVALID_REQUEST;
            res[i].message = "Unknown resource type 8";
        } else {
            samsa_brokerlog_alter(apis->broker->node->node_id,
                                  rs[i].resource_name, rs[i].ops,
                                  rs[i].nops, validate_only, &req->arena,
                                  &res[i]);
        }
    }
    if (m == 0) {
        return;
    }
    fres = samsa_arena_calloc(&req->arena, m + 1, sizeof(*fres));
    err = samsa_controller_alter_configs(apis->broker->ctrl, fwd, m,
                                         incremental, validate_only,
                                         &req->arena, fres);
    for (j = 0; j < m; j++) {
        res[at[j]] = err != SAMSA_ERR_NONE
                         ? (samsa_controller_result_t) {
                               SAMSA_ERR_UNKNOWN_SERVER_ERROR, NULL }
                         : fres[j];
    }
}

void
samsa_h_AlterConfigs(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_AlterConfigsRequest_t       *rq = body;
    samsa_AlterConfigsResponse_t       m;
    samsa_controller_alter_config_t   *rs;
    samsa_controller_config_op_t      *ops;
    samsa_controller_result_t         *res;
    size_t                             i, n;
    int32_t                            j;

    n = (size_t) (rq->Resources_cnt > 0 ? rq->Resources_cnt : 0);
    rs = samsa_arena_calloc(&req->arena, n + 1, sizeof(*rs));
    for (i = 0; i < n; i++) {
        const samsa_AlterConfigsResource_t  *r = &rq->Resources[i];

        rs[i].resource_type = r->ResourceType;
        rs[i].resource_name = r->ResourceName;
        rs[i].nops = (size_t) (r->Configs_cnt > 0 ? r->Configs_cnt : 0);
        ops = samsa_arena_calloc(&req->arena, rs[i].nops + 1, sizeof(*ops));
        for (j = 0; j < (int32_t) rs[i].nops; j++) {
            ops[j].name = ac_cstr(&req->arena, r->Configs[j].Name);
            ops[j].op = SAMSA_CONFIG_OP_SET;
            ops[j].value = ac_cstr(&req->arena, r->Configs[j].Value);
        }
        rs[i].ops = ops;
    }
    res = samsa_arena_calloc(&req->arena, n + 1, sizeof(*res));
    ac_alter(apis, req, rs, n, false, rq->ValidateOnly, res);
    samsa_AlterConfigsResponse_init(&m);
    m.Responses_cnt = (int32_t) n;
    m.Responses = samsa_arena_calloc(&req->arena, n + 1,
                                     sizeof(*m.Responses));
    for (i = 0; i < n; i++) {
        samsa_AlterConfigsResourceResponse_init(&m.Responses[i]);
        m.Responses[i].ResourceType = rq->Resources[i].ResourceType;
        m.Responses[i].ResourceName = rq->Resources[i].ResourceName;
        m.Responses[i].ErrorCode = samsa_err_wire(res[i].error);
        m.Responses[i].ErrorMessage = samsa_slice_cstr(res[i].message);
    }
    samsa_apis_send(apis->broker, req, &m);
}

void
samsa_h_IncrementalAlterConfigs(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_IncrementalAlterConfigsRequest_t  *rq = body;
    samsa_IncrementalAlterConfigsResponse_t  m;
    samsa_controller_alter_config_t         *rs;
    samsa_controller_config_op_t            *ops;
    samsa_controller_result_t               *res;
    size_t                                   i, n;
    int32_t                                  j;

    n = (size_t) (rq->Resources_cnt > 0 ? rq->Resources_cnt : 0);
    rs = samsa_arena_calloc(&req->arena, n + 1, sizeof(*rs));
    for (i = 0; i < n; i++) {
        const samsa_IncrementalAlterConfigsResource_t  *r = &rq->Resources[i];

        rs[i].resource_type = r->ResourceType;
        rs[i].resource_name = r->ResourceName;
        rs[i].nops = (size_t) (r->Configs_cnt > 0 ? r->Configs_cnt : 0);
        ops = samsa_arena_calloc(&req->arena, rs[i].nops + 1, sizeof(*ops));
        for (j = 0; j < (int32_t) rs[i].nops; j++) {
            ops[j].name = ac_cstr(&req->arena, r->Configs[j].Name);
            ops[j].op = r->Configs[j].ConfigOperation;
            ops[j].value = ac_cstr(&req->arena, r->Configs[j].Value);
        }
        rs[i].ops = ops;
    }
    res = samsa_arena_calloc(&req->arena, n + 1, sizeof(*res));
    ac_alter(apis, req, rs, n, true, rq->ValidateOnly, res);
    samsa_IncrementalAlterConfigsResponse_init(&m);
    m.Responses_cnt = (int32_t) n;
    m.Responses = samsa_arena_calloc(&req->arena, n + 1,
                                     sizeof(*m.Responses));
    for (i = 0; i < n; i++) {
        samsa_IncrementalAlterConfigsResourceResponse_init(&m.Responses[i]);
        m.Responses[i].ResourceType = rq->Resources[i].ResourceType;
        m.Responses[i].ResourceName = rq->Resources[i].ResourceName;
        m.Responses[i].ErrorCode = samsa_err_wire(res[i].error);
        m.Responses[i].ErrorMessage = samsa_slice_cstr(res[i].message);
    }
    samsa_apis_send(apis->broker, req, &m);
}
