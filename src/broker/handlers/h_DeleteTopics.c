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
#include "meta/acl.h"
#include "net/server/reqchan.h"
#include "proto/errmap.h"
#include "proto/gen/DeleteTopics.h"
#include "proto/wr.h"

/* The controller call of samsa_h_DeleteTopics. */
typedef struct deletetopics_call {
    samsa_broker_t                      *b;
    const samsa_controller_topic_ref_t  *refs;
    size_t                               n;
    samsa_arena_t                       *arena;
    samsa_controller_delete_result_t    *res;
} deletetopics_call_t;

/* samsa_apis_mutation_fn (ctx: a deletetopics_call_t) */
static samsa_err_t
deletetopics_delete(void *ctx, const samsa_controller_quota_t *quota)
{
    deletetopics_call_t  *c = ctx;

    return samsa_controller_delete_topics(c->b->ctrl, c->refs, c->n, quota,
                                          c->arena, c->res);
}

void
samsa_h_DeleteTopics(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_DeleteTopicsRequest_t         *rq = body;
    samsa_DeleteTopicsResponse_t         m;
    samsa_controller_topic_ref_t        *refs, *ok;
    samsa_controller_delete_result_t    *res, *ok_res;
    const samsa_image_topic_t           *t;
    samsa_image_t                       *img;
    samsa_slice_t                        name;
    bool                                *denied;
    size_t                               j, nok = 0;
    samsa_DeletableTopicResult_t        *r;
    deletetopics_call_t                  c;
    samsa_err_t                          err;
    size_t                               i, n;
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
    /* Kafka: DELETE on each topic (one named by id and not describable
     * answers without its name); the controller gets the allowed ones */
    img = samsa_apis_image(apis->broker, req);
    denied = samsa_arena_calloc(&req->arena, n + 1, sizeof(*denied));
    ok = samsa_arena_calloc(&req->arena, n + 1, sizeof(*ok));
    res = samsa_arena_calloc(&req->arena, n + 1, sizeof(*res));
    for (i = 0; i < n; i++) {
        name = refs[i].name;
        if (name.ptr == NULL
            && (t = samsa_image_topic_find_id(img, refs[i].id)) != NULL) {
            name = (samsa_slice_t) { t->name, t->name_len };
        }
        denied[i] = name.ptr != NULL
                    && !samsa_apis_allowed(apis, req, img,
                                           SAMSA_ACL_OP_DELETE,
                                           SAMSA_ACL_RESOURCE_TOPIC, name);
        if (denied[i]) {
            res[i].error = SAMSA_ERR_TOPIC_AUTHORIZATION_FAILED;
            res[i].id = refs[i].id;
            res[i].name = refs[i].name.ptr != NULL ? NULL : "";
        } else {
            ok[nok++] = refs[i];
        }
    }
    ok_res = samsa_arena_calloc(&req->arena, nok + 1, sizeof(*ok_res));
    c = (deletetopics_call_t) { apis->broker, ok, nok, &req->arena, ok_res };
    err = nok == 0 ? SAMSA_ERR_NONE
                   : samsa_apis_mutate(apis, req, 5, true,
                                       deletetopics_delete, &c);
    for (i = 0, j = 0; i < n; i++) {
        if (!denied[i]) {
            res[i] = ok_res[j++];
        }
    }
    samsa_DeleteTopicsResponse_init(&m);
    m.ThrottleTimeMs = req->throttle_ms;
    m.Responses_cnt = (int32_t) n;
    m.Responses = samsa_arena_calloc(&req->arena, n + 1, sizeof(*m.Responses));
    for (i = 0; i < n; i++) {
        r = &m.Responses[i];
        samsa_DeletableTopicResult_init(r);
        r->Name = res[i].name != NULL ? samsa_slice_cstr(res[i].name)
                                      : refs[i].name;
        if (denied[i] && refs[i].name.ptr == NULL) {
            r->Name = SAMSA_SLICE_NULL;     /* not describable: no name */
        }
        r->TopicId = res[i].id;
        if (err != SAMSA_ERR_NONE && !denied[i]) {
            r->ErrorCode = SAMSA_ERR_UNKNOWN_SERVER_ERROR;
            continue;
        }
        r->ErrorCode = samsa_err_wire(res[i].error);
        r->ErrorMessage = samsa_slice_cstr(res[i].message);
    }
    samsa_apis_send(apis->broker, req, &m);
}
