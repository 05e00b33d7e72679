/*
 * broker/handlers/h_CreateTopics.c - CreateTopics (key 19), forwarded to the
 * controller (DESIGN.md section 6: in-process on a combined node).  v5+
 * answers carry the new topic's partitions, replication factor and every
 * topic config with its source, as Kafka's do.  The controller mutation
 * quota (broker/quota.h) is strict from v6, as Kafka's
 * ControllerApis makes it; validate_only requests are not charged.
 * Threads: handler (the controller call waits for the controller thread).
 */
#include "broker/api_table.h"

#include <string.h>

#include "broker/broker.h"
#include "meta/acl.h"
#include "meta/topic_config.h"
#include "net/server/reqchan.h"
#include "proto/errmap.h"
#include "proto/gen/CreateTopics.h"
#include "proto/wr.h"

/* The request's topics in the controller's terms (arena-allocated). */
static samsa_controller_new_topic_t *
createtopics_convert(samsa_arena_t *arena, const samsa_CreateTopicsRequest_t *rq)
{
    samsa_controller_new_topic_t   *nt;
    samsa_controller_assignment_t  *as;
    samsa_image_config_t           *cf;
    const samsa_CreatableTopic_t   *t;
    int32_t                         i, j;

    nt = samsa_arena_calloc(arena, (size_t) rq->Topics_cnt + 1, sizeof(*nt));
    for (i = 0; i < rq->Topics_cnt; i++) {
        t = &rq->Topics[i];
        nt[i].name = t->Name;
        nt[i].num_partitions = t->NumPartitions;
        nt[i].replication_factor = t->ReplicationFactor;
        if (t->Assignments_cnt > 0) {
            as = samsa_arena_calloc(arena, (size_t) t->Assignments_cnt,
                                    sizeof(*as));
            for (j = 0; j < t->Assignments_cnt; j++) {
                as[j].partition = t->Assignments[j].PartitionIndex;
                as[j].replicas = t->Assignments[j].BrokerIds;
                as[j].nreplicas = t->Assignments[j].BrokerIds_cnt > 0
                                      ? t->Assignments[j].BrokerIds_cnt : 0;
            }
            nt[i].assignments = as;
            nt[i].nassignments = (size_t) t->Assignments_cnt;
        }
        if (t->Configs_cnt > 0) {
            cf = samsa_arena_calloc(arena, (size_t) t->Configs_cnt,
                                    sizeof(*cf));
            for (j = 0; j < t->Configs_cnt; j++) {
                cf[j].name = samsa_arena_strndup(arena, t->Configs[j].Name.ptr
                                                     ? t->Configs[j].Name.ptr
                                                     : "",
                                                 t->Configs[j].Name.len);
                cf[j].value = t->Configs[j].Value.ptr == NULL
                                  ? NULL
                                  : samsa_arena_strndup(
                                        arena, t->Configs[j].Value.ptr,
                                        t->Configs[j].Value.len);
            }
            nt[i].configs = cf;
            nt[i].nconfigs = (size_t) t->Configs_cnt;
        }
    }
    return nt;
}

/* v5+: every topic config of the (new) topic, with its source. */
static void
createtopics_configs(samsa_broker_t *b, samsa_req_t *req,
                     const samsa_controller_new_topic_t *nt,
                     samsa_CreatableTopicResult_t *tr)
{
    /* held by the request: the values may point into it */
    samsa_image_t               *img = samsa_apis_image(b, req);
    samsa_arena_t               *arena = &req->arena;
    samsa_topic_config_entry_t   e;
    size_t                       i, n = 0;

    tr->Configs = samsa_arena_calloc(arena, samsa_topic_config_ndefs,
                                     sizeof(*tr->Configs));
    for (i = 0; i < samsa_topic_config_ndefs; i++) {
        if (samsa_topic_config_resolve(b->cfg, img, nt->configs, nt->nconfigs,
                                       samsa_topic_config_defs[i].name, arena,
                                       &e)
            != SAMSA_ERR_NONE) {
            continue;
        }
        samsa_CreatableTopicConfigs_init(&tr->Configs[n]);
        tr->Configs[n].Name = samsa_slice_cstr(e.def->name);
        tr->Configs[n].Value = samsa_slice_cstr(e.value);
        tr->Configs[n].ConfigSource = (int8_t) e.source;
        n++;
    }
    tr->Configs_cnt = (int32_t) n;
}

/* The controller call of samsa_h_CreateTopics. */
typedef struct createtopics_call {
    samsa_broker_t                    *b;
    samsa_controller_create_topics_t  *ct;
    samsa_arena_t                     *arena;
    samsa_controller_topic_result_t   *res;
} createtopics_call_t;

/* samsa_apis_mutation_fn (ctx: a createtopics_call_t) */
static samsa_err_t
createtopics_create(void *ctx, const samsa_controller_quota_t *quota)
{
    createtopics_call_t  *c = ctx;

    c->ct->quota = quota;
    return samsa_controller_create_topics(c->b->ctrl, c->ct, c->arena,
                                          c->res);
}

void
samsa_h_CreateTopics(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_CreateTopicsRequest_t        *rq = body;
    samsa_CreateTopicsResponse_t        m;
    samsa_controller_create_topics_t    ct;
    samsa_controller_topic_result_t    *res, *ok_res;
    samsa_controller_new_topic_t       *all, *ok;
    samsa_CreatableTopicResult_t       *tr;
    bool                               *denied, cluster;
    size_t                              j, n, nok = 0;
    createtopics_call_t                 c;
    samsa_err_t                         err;
    int32_t                             i;
    char                                nofile[320];
    bool                                refused;

    memset(&ct, 0, sizeof(ct));
    all = createtopics_convert(&req->arena, rq);
    n = (size_t) (rq->Topics_cnt > 0 ? rq->Topics_cnt : 0);
    /* Kafka: CREATE on the cluster, else on each topic; the controller
     * gets only the allowed ones */
    denied = samsa_arena_calloc(&req->arena, n + 1, sizeof(*denied));
    ok = samsa_arena_calloc(&req->arena, n + 1, sizeof(*ok));
    cluster = samsa_apis_allowed_cluster(apis, req, SAMSA_ACL_OP_CREATE);
    for (j = 0; j < n; j++) {
        denied[j] = !cluster
                    && !samsa_apis_allowed(apis, req, NULL,
                                           SAMSA_ACL_OP_CREATE,
                                           SAMSA_ACL_RESOURCE_TOPIC,
                                           all[j].name);
        if (!denied[j]) {
            ok[nok++] = all[j];
        }
    }
    ct.topics = ok;
    ct.ntopics = nok;
    ct.validate_only = rq->ValidateOnly;
    /* the CONTROLLER listener serves the brokers: one that is not the
     * active controller creates __consumer_offsets and __transaction_state
     * through it (broker/coordtopic.h), as Kafka's AutoTopicCreationManager
     * through ControllerApis */
    ct.internal = strcmp(apis->kind, "controller") == 0;
    res = samsa_arena_calloc(&req->arena, n + 1, sizeof(*res));
    ok_res = samsa_arena_calloc(&req->arena, nok + 1, sizeof(*ok_res));
    c = (createtopics_call_t) { apis->broker, &ct, &req->arena, ok_res };
    /* issue 22: out of descriptors, the logs could not be created:
     * refuse now with the reason (REQUEST_TIMED_OUT: transient) */
    refused = !rq->ValidateOnly
              && !samsa_logmgr_files_available(apis->broker->logs, nofile,
                                               sizeof(nofile));
    err = refused ? SAMSA_ERR__NOFILE
          : nok == 0 ? SAMSA_ERR_NONE
                     : samsa_apis_mutate(apis, req, 6, !rq->ValidateOnly,
                                         createtopics_create, &c);
    for (i = 0, j = 0; i < (int32_t) n; i++) {
        if (denied[i]) {
            res[i].error = SAMSA_ERR_TOPIC_AUTHORIZATION_FAILED;
            res[i].message = "Authorization failed.";
        } else {
            res[i] = ok_res[j++];
        }
    }
    samsa_CreateTopicsResponse_init(&m);
    m.ThrottleTimeMs = req->throttle_ms;
    m.Topics_cnt = (int32_t) n;
    m.Topics = samsa_arena_calloc(&req->arena, n + 1, sizeof(*m.Topics));
    for (i = 0; i < m.Topics_cnt; i++) {
        tr = &m.Topics[i];
        samsa_CreatableTopicResult_init(tr);
        tr->Name = rq->Topics[i].Name;
        if (refused) {
            tr->ErrorCode = samsa_err_wire(SAMSA_ERR__NOFILE);
            tr->ErrorMessage = samsa_slice_cstr(nofile);
            continue;
        }
        if (err != SAMSA_ERR_NONE && !denied[i]) {
            tr->ErrorCode = samsa_err_wire(err == SAMSA_ERR__SHUTDOWN
                                               ? SAMSA_ERR_NOT_CONTROLLER
                                               : SAMSA_ERR_UNKNOWN_SERVER_ERROR);
            continue;
        }
        tr->ErrorCode = samsa_err_wire(res[i].error);
        tr->ErrorMessage = samsa_slice_cstr(res[i].message);
        tr->TopicId = res[i].topic_id;
        if (res[i].error != SAMSA_ERR_NONE) {
            continue;
        }
        /* Kafka's ControllerApis: the partitions, replication factor and
         * configs only of a topic the principal may DESCRIBE_CONFIGS,
         * else TopicConfigErrorCode TOPIC_AUTHORIZATION_FAILED (v5+) */
        if (!samsa_apis_allowed(apis, req, NULL,
                                SAMSA_ACL_OP_DESCRIBE_CONFIGS,
                                SAMSA_ACL_RESOURCE_TOPIC, all[i].name)) {
            tr->TopicConfigErrorCode = samsa_err_wire(
                SAMSA_ERR_TOPIC_AUTHORIZATION_FAILED);
            continue;
        }
        tr->NumPartitions = res[i].num_partitions;
        tr->ReplicationFactor = res[i].replication_factor;
        if (req->hdr.ApiVersion >= 5) {
            createtopics_configs(apis->broker, req, &all[i], tr);
        }
    }
    samsa_apis_send(apis->broker, req, &m);
}
