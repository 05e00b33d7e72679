/*
 * broker/h_AlterConfigs.c - AlterConfigs (key 33, full replace of a
 * resource's overrides) and IncrementalAlterConfigs (key 44: SET, DELETE,
 * APPEND, SUBTRACT), both forwarded to the controller; the image listener
 * then applies topic changes to the partition logs and dynamic broker
 * configs to the thread pools.
 * Threads: handler.
 */
#include "broker/api_table.h"

#include "broker/broker.h"
#include "net/reqchan.h"
#include "proto/errmap.h"
#include "proto/gen/AlterConfigs.h"
#include "proto/gen/IncrementalAlterConfigs.h"
#include "proto/wr.h"

static const char *
ac_cstr(samsa_arena_t *arena, samsa_slice_t s)
{
    return s.ptr == NULL ? NULL : samsa_arena_strndup(arena, s.ptr, s.len);
}

void
samsa_h_AlterConfigs(samsa_apis_t *apis, samsa_req_t *req)
{
    samsa_AlterConfigsRequest_t        rq;
    samsa_AlterConfigsResponse_t       m;
    samsa_controller_alter_config_t   *rs;
    samsa_controller_config_op_t      *ops;
    samsa_controller_result_t         *res;
    samsa_resp_t                      *resp;
    samsa_wr_t                         wr;
    samsa_err_t                        err;
    size_t                             i, n;
    int32_t                            j;

    samsa_AlterConfigsRequest_init(&rq);
    if (samsa_AlterConfigsRequest_decode(&req->body, req->hdr.ApiVersion,
                                         &req->arena, &rq)
        != SAMSA_ERR_NONE) {
        samsa_apis_close(req, "malformed request body");
        return;
    }
    n = (size_t) (rq.Resources_cnt > 0 ? rq.Resources_cnt : 0);
    rs = samsa_arena_calloc(&req->arena, n + 1, sizeof(*rs));
    for (i = 0; i < n; i++) {
        const samsa_AlterConfigsResource_t  *r = &rq.Resources[i];

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
    err = samsa_controller_alter_configs(apis->broker->ctrl, rs, n, false,
                                         rq.ValidateOnly, &req->arena, res);
    samsa_AlterConfigsResponse_init(&m);
    m.Responses_cnt = (int32_t) n;
    m.Responses = samsa_arena_calloc(&req->arena, n + 1,
                                     sizeof(*m.Responses));
    for (i = 0; i < n; i++) {
        samsa_AlterConfigsResourceResponse_init(&m.Responses[i]);
        m.Responses[i].ResourceType = rq.Resources[i].ResourceType;
        m.Responses[i].ResourceName = rq.Resources[i].ResourceName;
        m.Responses[i].ErrorCode = samsa_err_wire(
            err != SAMSA_ERR_NONE ? SAMSA_ERR_UNKNOWN_SERVER_ERROR
                                  : res[i].error);
        if (err == SAMSA_ERR_NONE) {
            m.Responses[i].ErrorMessage = samsa_slice_cstr(res[i].message);
        }
    }
    resp = samsa_resp_new_send(req);
    wr = samsa_resp_wr(resp);
    samsa_AlterConfigsResponse_encode(&wr, req->hdr.ApiVersion, &m);
    samsa_reqchan_respond(resp);
}

void
samsa_h_IncrementalAlterConfigs(samsa_apis_t *apis, samsa_req_t *req)
{
    samsa_IncrementalAlterConfigsRequest_t   rq;
    samsa_IncrementalAlterConfigsResponse_t  m;
    samsa_controller_alter_config_t         *rs;
    samsa_controller_config_op_t            *ops;
    samsa_controller_result_t               *res;
    samsa_resp_t                            *resp;
    samsa_wr_t                               wr;
    samsa_err_t                              err;
    size_t                                   i, n;
    int32_t                                  j;

    samsa_IncrementalAlterConfigsRequest_init(&rq);
    if (samsa_IncrementalAlterConfigsRequest_decode(
            &req->body, req->hdr.ApiVersion, &req->arena, &rq)
        != SAMSA_ERR_NONE) {
        samsa_apis_close(req, "malformed request body");
        return;
    }
    n = (size_t) (rq.Resources_cnt > 0 ? rq.Resources_cnt : 0);
    rs = samsa_arena_calloc(&req->arena, n + 1, sizeof(*rs));
    for (i = 0; i < n; i++) {
        const samsa_IncrementalAlterConfigsResource_t  *r = &rq.Resources[i];

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
    err = samsa_controller_alter_configs(apis->broker->ctrl, rs, n, true,
                                         rq.ValidateOnly, &req->arena, res);
    samsa_IncrementalAlterConfigsResponse_init(&m);
    m.Responses_cnt = (int32_t) n;
    m.Responses = samsa_arena_calloc(&req->arena, n + 1,
                                     sizeof(*m.Responses));
    for (i = 0; i < n; i++) {
        samsa_IncrementalAlterConfigsResourceResponse_init(&m.Responses[i]);
        m.Responses[i].ResourceType = rq.Resources[i].ResourceType;
        m.Responses[i].ResourceName = rq.Resources[i].ResourceName;
        m.Responses[i].ErrorCode = samsa_err_wire(
            err != SAMSA_ERR_NONE ? SAMSA_ERR_UNKNOWN_SERVER_ERROR
                                  : res[i].error);
        if (err == SAMSA_ERR_NONE) {
            m.Responses[i].ErrorMessage = samsa_slice_cstr(res[i].message);
        }
    }
    resp = samsa_resp_new_send(req);
    wr = samsa_resp_wr(resp);
    samsa_IncrementalAlterConfigsResponse_encode(&wr, req->hdr.ApiVersion, &m);
    samsa_reqchan_respond(resp);
}
