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
#include "broker/fwdcheck.h"
#include "meta/acl.h"
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

/* Fill rs from one request resource: its type and name, and nops
 * zeroed operations (allocated from the arena) for the caller to set. */
static samsa_controller_config_op_t *
ac_resource(samsa_arena_t *arena, samsa_controller_alter_config_t *rs,
            int8_t resource_type, samsa_slice_t resource_name, int32_t cnt)
{
    samsa_controller_config_op_t  *ops;

    rs->resource_type = resource_type;
    rs->resource_name = resource_name;
    rs->nops = (size_t) (cnt > 0 ? cnt : 0);
    ops = samsa_arena_calloc(arena, rs->nops + 1, sizeof(*ops));
    rs->ops = ops;
    return ops;
}

static void
ac_op(samsa_arena_t *arena, samsa_controller_config_op_t *op,
      samsa_slice_t name, int8_t config_op, samsa_slice_t value)
{
    op->name = ac_cstr(arena, name);
    op->op = config_op;
    op->value = ac_cstr(arena, value);
}

/* Answer the BROKER_LOGGER resources of rs[0..n) (incremental: apply
 * them; legacy: refuse them) and forward the others to the controller in
 * one call (which failing answers each of them UNKNOWN_SERVER_ERROR).
 * Returns the n results, allocated from the request's arena. */
static samsa_controller_result_t *
ac_alter(samsa_apis_t *apis, samsa_req_t *req,
         const samsa_controller_alter_config_t *rs, size_t n,
         bool incremental, bool validate_only)
{
    samsa_controller_alter_config_t  *fwd;
    samsa_controller_result_t        *res, *fres;
    size_t                           *at, i, j, m = 0;
    samsa_err_t                       err;
    bool                              dup;

    res = samsa_arena_calloc(&req->arena, n + 1, sizeof(*res));
    fwd = samsa_arena_calloc(&req->arena, n + 1, sizeof(*fwd));
    at = samsa_arena_calloc(&req->arena, n + 1, sizeof(*at));
    for (i = 0; i < n; i++) {
        /* Kafka: ALTER_CONFIGS on the topic, group or cluster */
        if (!samsa_fwdcheck_config_allowed(apis, req, NULL,
                                           SAMSA_ACL_OP_ALTER_CONFIGS,
                                           rs[i].resource_type,
                                           rs[i].resource_name, &err)) {
            res[i].error = err;
            continue;
        }
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
        return res;
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
    return res;
}

/* The two handlers differ only in their generated types, the operation
 * of each config (legacy: always SET) and `incremental`, so one body
 * serves both; a function cannot, the request and response structs being
 * distinct types with the same field names. */
#define AC_HANDLER(Api, incremental, config_op)                              \
    void                                                                     \
    samsa_h_##Api(samsa_apis_t *apis, samsa_req_t *req, void *body)          \
    {                                                                        \
        samsa_##Api##Request_t            *rq = body;                        \
        samsa_##Api##Response_t            m;                                \
        samsa_controller_alter_config_t   *rs;                               \
        samsa_controller_config_op_t      *ops;                              \
        samsa_controller_result_t         *res;                              \
        size_t                             i, n;                             \
        int32_t                            j;                                \
                                                                             \
        n = (size_t) (rq->Resources_cnt > 0 ? rq->Resources_cnt : 0);       \
        rs = samsa_arena_calloc(&req->arena, n + 1, sizeof(*rs));            \
        for (i = 0; i < n; i++) {                                            \
            const samsa_##Api##Resource_t  *r = &rq->Resources[i];           \
                                                                             \
            ops = ac_resource(&req->arena, &rs[i], r->ResourceType,          \
                              r->ResourceName, r->Configs_cnt);              \
            for (j = 0; j < (int32_t) rs[i].nops; j++) {                     \
                ac_op(&req->arena, &ops[j], r->Configs[j].Name,              \
                      (config_op), r->Configs[j].Value);                     \
            }                                                                \
        }                                                                    \
        res = ac_alter(apis, req, rs, n, (incremental), rq->ValidateOnly);   \
        samsa_##Api##Response_init(&m);                                      \
        m.Responses_cnt = (int32_t) n;                                       \
        m.Responses = samsa_arena_calloc(&req->arena, n + 1,                 \
                                         sizeof(*m.Responses));              \
        for (i = 0; i < n; i++) {                                            \
            samsa_##Api##ResourceResponse_init(&m.Responses[i]);             \
            m.Responses[i].ResourceType = rq->Resources[i].ResourceType;     \
            m.Responses[i].ResourceName = rq->Resources[i].ResourceName;     \
            m.Responses[i].ErrorCode = samsa_err_wire(res[i].error);         \
            m.Responses[i].ErrorMessage = samsa_slice_cstr(res[i].message);  \
        }                                                                    \
        samsa_apis_send(apis->broker, req, &m);                              \
    }

AC_HANDLER(AlterConfigs, false, SAMSA_CONFIG_OP_SET)
AC_HANDLER(IncrementalAlterConfigs, true, r->Configs[j].ConfigOperation)
