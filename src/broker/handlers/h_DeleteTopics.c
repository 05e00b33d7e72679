/*
 * broker/handlers/h_DeleteTopics.c - DeleteTopics (key 20): by name (v0-v5) or by
 * name or id (v6), forwarded to the controller; the image listener then
 * deletes the partition logs.  The controller mutation quota
 * (broker/quota.h) is strict from v5, as Kafka's ControllerApis makes
 * it.
 * Threads: handler.
 */
#include "broker/api_table.h"

#include "broker/broker.h"
#include "net/server/reqchan.h"
#include "proto/errmap.h"
#include "proto/gen/DeleteTopics.h"
#include "proto/wr.h"
#include "util/time.h"

void
samsa_h_DeleteTopics(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_DeleteTopicsRequest_t         *rq = body;
    samsa_DeleteTopicsResponse_t         m;
    samsa_controller_topic_ref_t        *refs;
    samsa_controller_delete_result_t    *res;
    samsa_DeletableTopicResult_t        *r;
    samsa_quota_mutation_t               mq;
    samsa_err_t                          err;
    size_t                               i, n;
    int32_t                              throttle_ms;
    bool                                 v6 = req->hdr.ApiVersion >= 6;

    n = (size_t) ((v6 ? rq->Topics_cnt : rq->TopicNames_cnt) > 0
                      ? (v6 ? rq->Topics_cnt : rq->TopicNames_cnt) : 0);
    refs = samsa_arena_calloc(&req->arena, n + 1, sizeof(*refs));
    for (i = 0; i < n; i++) {
        if (v6) {
            refs[i].name = rq->Topics[i].Name;
            refs[i].id = rq->Topics[i].TopicId;
        } else {
            refs[i].name = rq->TopicNames[i];
        }
    }
    res = samsa_arena_calloc(&req->arena, n + 1, sizeof(*res));
    samsa_quota_mutation_begin(apis->broker->quota, &mq, req->hdr.ClientId,
                               req->hdr.ApiVersion >= 5);
    err = samsa_controller_delete_topics(apis->broker->ctrl, refs, n,
                                         samsa_quota_mutation_ctl(&mq),
                                         &req->arena, res);
    throttle_ms = samsa_quota_mutation_end(&mq, samsa_now_ms());
    samsa_DeleteTopicsResponse_init(&m);
    m.ThrottleTimeMs = throttle_ms;
    m.Responses_cnt = (int32_t) n;
    m.Responses = samsa_arena_calloc(&req->arena, n + 1, sizeof(*m.Responses));
    for (i = 0; i < n; i++) {
        r = &m.Responses[i];
        samsa_DeletableTopicResult_init(r);
        r->Name = res[i].name != NULL ? samsa_slice_cstr(res[i].name)
                                      : refs[i].name;
        r->TopicId = res[i].id;
        if (err != SAMSA_ERR_NONE) {
            r->ErrorCode = SAMSA_ERR_UNKNOWN_SERVER_ERROR;
            continue;
        }
        r->ErrorCode = samsa_err_wire(res[i].error);
        r->ErrorMessage = samsa_slice_cstr(res[i].message);
    }
    req->throttle_ms = throttle_ms;
    samsa_apis_send(apis->broker, req, &m);
}
