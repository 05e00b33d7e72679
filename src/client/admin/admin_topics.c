/*
 * client/admin/admin_topics.c - the admin client's topic, partition, config,
 * log-offset and record-deletion calls (see samsa/admin.h).
 * Threads: any application thread, under the handle's call lock.
 */
#include <samsa/admin.h>

#include <stdlib.h>
#include <string.h>

#include "client/admin/admin_int.h"
#include "proto/gen/AlterConfigs.h"
#include "proto/gen/CreatePartitions.h"
#include "proto/gen/CreateTopics.h"
#include "proto/gen/DeleteRecords.h"
#include "proto/gen/DeleteTopics.h"
#include "proto/gen/DescribeConfigs.h"
#include "proto/gen/IncrementalAlterConfigs.h"
#include "proto/gen/ListOffsets.h"
#include "proto/gen/apis.h"
#include "util/alloc.h"
#include "util/time.h"

static samsa_admin_items_t *
admin_items_new(size_t n, samsa_arena_t **arenap)
{
    samsa_admin_items_t  *res = samsa_admin_result_new(sizeof(*res), arenap);

    res->items = samsa_arena_calloc(*arenap, n + 1, sizeof(*res->items));
    return res;
}

static void
admin_item_set(samsa_arena_t *arena, samsa_admin_item_t *it,
               samsa_slice_t name, int16_t code, samsa_slice_t msg)
{
    it->name = samsa_admin_name(arena, name);
    it->err = (samsa_err_t) code;
    it->errmsg = samsa_admin_errmsg(arena, it->err, msg);
}

/* ---- CreateTopics, DeleteTopics, CreatePartitions ---------------------- */

/* One round trip of a topic call: the items sent (their indexes in the
 * call) and the answers, in the same order, in the round's arena. */
typedef struct admin_round {
    size_t          n;              /* items sent */
    const size_t   *idx;            /* [n] their indexes in the call */
    samsa_slice_t  *names;          /* [n] answers */
    int16_t        *codes;
    samsa_slice_t  *msgs;
    int32_t         throttle_ms;    /* the response's ThrottleTimeMs */
} admin_round_t;

/* Send the items r->idx of the call described by ctx and fill r's
 * answers (allocated in arena); SAMSA_ERR__BAD_MSG when the response does
 * not answer each item once. */
typedef samsa_err_t admin_round_fn(samsa_admin_t *a, const void *ctx,
                                   int64_t deadline, samsa_arena_t *arena,
                                   admin_round_t *r);

/* Where a decoded response of a topic call keeps its per-topic results
 * (an array and its int32_t count), their Name, int16_t ErrorCode and
 * ErrorMessage, and its int32_t ThrottleTimeMs. */
typedef struct admin_answer_layout {
    size_t  results_off;
    size_t  cnt_off;
    size_t  throttle_off;
    size_t  result_size;
    size_t  name_off;
    size_t  code_off;
    size_t  msg_off;
} admin_answer_layout_t;

/* The layout of a samsa_<Resp>_t whose results are Results, an array of
 * samsa_<Item>_t (type and field names: a function can't). */
#define ADMIN_ANSWER_LAYOUT(Resp, Results, Item)                        \
    {                                                                   \
        offsetof(samsa_##Resp##_t, Results),                            \
        offsetof(samsa_##Resp##_t, Results##_cnt),                      \
        offsetof(samsa_##Resp##_t, ThrottleTimeMs),                     \
        sizeof(samsa_##Item##_t), offsetof(samsa_##Item##_t, Name),     \
        offsetof(samsa_##Item##_t, ErrorCode),                          \
        offsetof(samsa_##Item##_t, ErrorMessage)                        \
    }

/* Fill r's answers (in arena) from resp, the decoded response of a round
 * trip that ended with err, laid out as layout says: err itself when it is
 * an error, SAMSA_ERR__BAD_MSG when resp does not answer each item once.
 * r->throttle_ms is 0 unless the answers were taken. */
static samsa_err_t
admin_round_answer(samsa_arena_t *arena, admin_round_t *r, samsa_err_t err,
                   const void *resp, const admin_answer_layout_t *layout)
{
    const uint8_t  *results, *it;
    int32_t         count;
    size_t          i;

    r->throttle_ms = 0;
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    memcpy(&count, (const uint8_t *) resp + layout->cnt_off, sizeof(count));
    if (count < 0 || (size_t) count != r->n) {
        return SAMSA_ERR__BAD_MSG;
    }
    memcpy(&results, (const uint8_t *) resp + layout->results_off,
           sizeof(results));
    r->names = samsa_arena_calloc(arena, r->n + 1, sizeof(*r->names));
    r->codes = samsa_arena_calloc(arena, r->n + 1, sizeof(*r->codes));
    r->msgs = samsa_arena_calloc(arena, r->n + 1, sizeof(*r->msgs));
    for (i = 0; i < r->n; i++) {
        it = results + i * layout->result_size;
        memcpy(&r->names[i], it + layout->name_off, sizeof(r->names[i]));
        memcpy(&r->codes[i], it + layout->code_off, sizeof(r->codes[i]));
        memcpy(&r->msgs[i], it + layout->msg_off, sizeof(r->msgs[i]));
    }
    memcpy(&r->throttle_ms, (const uint8_t *) resp + layout->throttle_off,
           sizeof(r->throttle_ms));
    return SAMSA_ERR_NONE;
}

/* Run a topic call of n items, as Kafka's AdminClient does with its
 * default retryOnQuotaViolation: the items a response refuses with
 * THROTTLING_QUOTA_EXCEEDED are sent again, on their own, once its
 * throttle time has passed (the broker does not read the connection
 * before), as long as that ends before the deadline; otherwise they keep
 * the error.  A round trip that fails whole fails the call when it is the
 * first; on a retry the items it carried keep their quota error. */
static samsa_err_t
admin_topics_call(samsa_admin_t *a, size_t n, admin_round_fn *fn,
                  const void *ctx, int64_t deadline,
                  samsa_admin_items_t **resultp)
{
    samsa_arena_t         scratch, *arena;
    samsa_admin_items_t  *res;
    admin_round_t         r;
    samsa_err_t           err = SAMSA_ERR_NONE;
    size_t               *idx, i, pending = n, keep;
    int64_t               wait_ms, until, now;
    bool                  retry;

    res = admin_items_new(n, &arena);
    idx = samsa_calloc(n + 1, sizeof(*idx));
    for (i = 0; i < n; i++) {
        idx[i] = i;
    }
    while (pending > 0) {
        scratch = SAMSA_ARENA_INIT;
        memset(&r, 0, sizeof(r));
        r.n = pending;
        r.idx = idx;
        err = fn(a, ctx, deadline, &scratch, &r);
        if (err != SAMSA_ERR_NONE) {
            samsa_arena_fini(&scratch);
            break;
        }
        wait_ms = r.throttle_ms > 0 ? r.throttle_ms : a->retry_backoff_ms;
        retry = samsa_now_ms() + wait_ms < deadline;
        keep = 0;
        for (i = 0; i < r.n; i++) {
            admin_item_set(arena, &res->items[idx[i]], r.names[i],
                           r.codes[i], r.msgs[i]);
            if (retry
                && r.codes[i] == (int16_t) SAMSA_ERR_THROTTLING_QUOTA_EXCEEDED) {
                idx[keep++] = idx[i];
            }
        }
        samsa_arena_fini(&scratch);
        if (pending == n) {
            res->n = n;                 /* every item has its answer */
        }
        pending = keep;
        until = samsa_now_ms() + wait_ms;
        while (pending > 0 && (now = samsa_now_ms()) < until) {
            samsa_netclient_poll(a->nc, until - now);
        }
    }
    samsa_free(idx);
    if (res->n == 0) {                  /* the first round trip failed */
        samsa_admin_result_free(res);
        return err;
    }
    *resultp = res;
    return SAMSA_ERR_NONE;
}

typedef struct admin_create_topics {
    const samsa_new_topic_t  *topics;
    bool                      validate_only;
} admin_create_topics_t;

static const admin_answer_layout_t  admin_create_topics_answer =
    ADMIN_ANSWER_LAYOUT(CreateTopicsResponse, Topics, CreatableTopicResult);

static samsa_err_t
admin_create_topics_round(samsa_admin_t *a, const void *ctx,
                          int64_t deadline, samsa_arena_t *scratch,
                          admin_round_t *r)
{
    const admin_create_topics_t    *c = ctx;
    const samsa_new_topic_t        *t;
    samsa_CreateTopicsRequest_t     req;
    samsa_CreateTopicsResponse_t    resp;
    samsa_CreatableTopic_t         *ct;
    samsa_CreateableTopicConfig_t  *cfg;
    samsa_admin_rpc_t               rpc;
    samsa_err_t                     err;
    size_t                          i, j;

    err = samsa_admin_rpc_begin(a, &rpc, SAMSA_ADMIN_ANY,
                                SAMSA_API_CreateTopics, 2, 7, deadline);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    ct = samsa_arena_calloc(scratch, r->n, sizeof(*ct));
    for (i = 0; i < r->n; i++) {
        t = &c->topics[r->idx[i]];
        samsa_CreatableTopic_init(&ct[i]);
        ct[i].Name = samsa_slice_cstr(t->name);
        ct[i].NumPartitions = t->num_partitions;
        ct[i].ReplicationFactor = t->replication_factor;
        cfg = samsa_arena_calloc(scratch, t->nconfigs + 1, sizeof(*cfg));
        for (j = 0; j < t->nconfigs; j++) {
            samsa_CreateableTopicConfig_init(&cfg[j]);
            cfg[j].Name = samsa_slice_cstr(t->configs[j].name);
            cfg[j].Value = samsa_slice_cstr(t->configs[j].value);
        }
        ct[i].Configs = cfg;
        ct[i].Configs_cnt = (int32_t) t->nconfigs;
    }
    samsa_CreateTopicsRequest_init(&req);
    req.Topics = ct;
    req.Topics_cnt = (int32_t) r->n;
    req.TimeoutMs = samsa_admin_req_timeout(a, deadline);
    req.ValidateOnly = c->validate_only;
    err = samsa_admin_rpc_run(a, &rpc, samsa_CreateTopicsRequest_encode_any,
                              &req, samsa_CreateTopicsResponse_decode_any,
                              &resp, deadline, scratch);
    return admin_round_answer(scratch, r, err, &resp,
                              &admin_create_topics_answer);
}

samsa_err_t
samsa_admin_create_topics(samsa_admin_t *a, const samsa_new_topic_t *topics,
                          size_t n, bool validate_only, int64_t timeout_ms,
                          samsa_admin_items_t **resultp)
{
    admin_create_topics_t  c = { topics, validate_only };
    samsa_err_t            err;
    int64_t                deadline;

    *resultp = NULL;
    deadline = samsa_admin_deadline(a, timeout_ms);
    if (n == 0 || topics == NULL) {
        return SAMSA_ERR__INVALID_ARG;
    }
    pthread_mutex_lock(&a->lock);
    err = admin_topics_call(a, n, admin_create_topics_round, &c, deadline,
                            resultp);
    pthread_mutex_unlock(&a->lock);
    return err;
}

static const admin_answer_layout_t  admin_delete_topics_answer =
    ADMIN_ANSWER_LAYOUT(DeleteTopicsResponse, Responses, DeletableTopicResult);

static samsa_err_t
admin_delete_topics_round(samsa_admin_t *a, const void *ctx,
                          int64_t deadline, samsa_arena_t *scratch,
                          admin_round_t *r)
{
    const char *const             *names = ctx;
    samsa_DeleteTopicsRequest_t    req;
    samsa_DeleteTopicsResponse_t   resp;
    samsa_slice_t                 *sl;
    samsa_admin_rpc_t              rpc;
    samsa_err_t                    err;
    size_t                         i;

    err = samsa_admin_rpc_begin(a, &rpc, SAMSA_ADMIN_ANY,
                                SAMSA_API_DeleteTopics, 1, 5, deadline);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    sl = samsa_arena_calloc(scratch, r->n, sizeof(*sl));
    for (i = 0; i < r->n; i++) {
        sl[i] = samsa_slice_cstr(names[r->idx[i]]);
    }
    samsa_DeleteTopicsRequest_init(&req);
    req.TopicNames = sl;
    req.TopicNames_cnt = (int32_t) r->n;
    req.TimeoutMs = samsa_admin_req_timeout(a, deadline);
    err = samsa_admin_rpc_run(a, &rpc, samsa_DeleteTopicsRequest_encode_any,
                              &req, samsa_DeleteTopicsResponse_decode_any,
                              &resp, deadline, scratch);
    return admin_round_answer(scratch, r, err, &resp,
                              &admin_delete_topics_answer);
}

samsa_err_t
samsa_admin_delete_topics(samsa_admin_t *a, const char *const *names,
                          size_t n, int64_t timeout_ms,
                          samsa_admin_items_t **resultp)
{
    samsa_err_t  err;
    int64_t      deadline;

    *resultp = NULL;
    deadline = samsa_admin_deadline(a, timeout_ms);
    if (n == 0 || names == NULL) {
        return SAMSA_ERR__INVALID_ARG;
    }
    pthread_mutex_lock(&a->lock);
    err = admin_topics_call(a, n, admin_delete_topics_round, names, deadline,
                            resultp);
    pthread_mutex_unlock(&a->lock);
    return err;
}

typedef struct admin_create_partitions {
    const char *const  *names;
    const int32_t      *counts;
    bool                validate_only;
} admin_create_partitions_t;

static const admin_answer_layout_t  admin_create_partitions_answer =
    ADMIN_ANSWER_LAYOUT(CreatePartitionsResponse, Results,
                        CreatePartitionsTopicResult);

static samsa_err_t
admin_create_partitions_round(samsa_admin_t *a, const void *ctx,
                              int64_t deadline, samsa_arena_t *scratch,
                              admin_round_t *r)
{
    const admin_create_partitions_t   *c = ctx;
    samsa_CreatePartitionsRequest_t    req;
    samsa_CreatePartitionsResponse_t   resp;
    samsa_CreatePartitionsTopic_t     *ct;
    samsa_admin_rpc_t                  rpc;
    samsa_err_t                        err;
    size_t                             i;

    err = samsa_admin_rpc_begin(a, &rpc, SAMSA_ADMIN_ANY,
                                SAMSA_API_CreatePartitions, 0, 3, deadline);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    ct = samsa_arena_calloc(scratch, r->n, sizeof(*ct));
    for (i = 0; i < r->n; i++) {
        samsa_CreatePartitionsTopic_init(&ct[i]);
        ct[i].Name = samsa_slice_cstr(c->names[r->idx[i]]);
        ct[i].Count = c->counts[r->idx[i]];
        ct[i].Assignments_cnt = -1;                 /* broker assigns */
    }
    samsa_CreatePartitionsRequest_init(&req);
    req.Topics = ct;
    req.Topics_cnt = (int32_t) r->n;
    req.TimeoutMs = samsa_admin_req_timeout(a, deadline);
    req.ValidateOnly = c->validate_only;
    err = samsa_admin_rpc_run(a, &rpc, samsa_CreatePartitionsRequest_encode_any,
                              &req, samsa_CreatePartitionsResponse_decode_any,
                              &resp, deadline, scratch);
    return admin_round_answer(scratch, r, err, &resp,
                              &admin_create_partitions_answer);
}

samsa_err_t
samsa_admin_create_partitions(samsa_admin_t *a, const char *const *names,
                              const int32_t *counts, size_t n,
                              bool validate_only, int64_t timeout_ms,
                              samsa_admin_items_t **resultp)
{
    admin_create_partitions_t  c = { names, counts, validate_only };
    samsa_err_t                err;
    int64_t                    deadline;

    *resultp = NULL;
    deadline = samsa_admin_deadline(a, timeout_ms);
    if (n == 0 || names == NULL || counts == NULL) {
        return SAMSA_ERR__INVALID_ARG;
    }
    pthread_mutex_lock(&a->lock);
    err = admin_topics_call(a, n, admin_create_partitions_round, &c,
                            deadline, resultp);
    pthread_mutex_unlock(&a->lock);
    return err;
}

/* ---- configs ----------------------------------------------------------- */

static int
admin_cmp_entry(const void *x, const void *y)
{
    const samsa_config_entry_t  *a = x, *b = y;

    return strcmp(a->name, b->name);
}

static void
admin_config_resource(samsa_arena_t *arena, samsa_config_resource_t *cr,
                      const samsa_DescribeConfigsResult_t *r)
{
    const samsa_DescribeConfigsResourceResult_t  *c;
    samsa_config_entry_t                         *e;
    int32_t                                       j;

    cr->type = r->ResourceType;
    cr->name = samsa_admin_name(arena, r->ResourceName);
    cr->err = (samsa_err_t) r->ErrorCode;
    cr->errmsg = samsa_admin_errmsg(arena, cr->err, r->ErrorMessage);
    cr->entries = samsa_admin_items(arena, r->Configs_cnt, sizeof(*cr->entries),
                                    &cr->nentries);
    for (j = 0; j < (int32_t) cr->nentries; j++) {
        c = &r->Configs[j];
        e = &cr->entries[j];
        e->name = samsa_admin_name(arena, c->Name);
        e->value = samsa_admin_str(arena, c->Value);
        e->source = c->ConfigSource;
        e->is_default = c->ConfigSource == SAMSA_CONFIG_SOURCE_DEFAULT_CONFIG;
        e->read_only = c->ReadOnly;
        e->is_sensitive = c->IsSensitive;
    }
    qsort(cr->entries, cr->nentries, sizeof(*cr->entries), admin_cmp_entry);
}

samsa_err_t
samsa_admin_describe_configs(samsa_admin_t *a,
                             const samsa_resource_ref_t *resources, size_t n,
                             int64_t timeout_ms,
                             samsa_config_resources_t **resultp)
{
    samsa_DescribeConfigsRequest_t    req;
    samsa_DescribeConfigsResponse_t   resp;
    samsa_DescribeConfigsResource_t  *rr;
    samsa_arena_t                     scratch = SAMSA_ARENA_INIT, *arena;
    samsa_config_resources_t         *res;
    samsa_admin_rpc_t                 rpc;
    samsa_err_t                       err;
    int64_t                           deadline;
    size_t                            i;

    *resultp = NULL;
    deadline = samsa_admin_deadline(a, timeout_ms);
    if (n == 0 || resources == NULL) {
        return SAMSA_ERR__INVALID_ARG;
    }
    pthread_mutex_lock(&a->lock);
    /* v1+: ConfigSource.  A broker resource belongs at that broker, but
     * Samsa is one node: any broker answers for topics. */
    err = samsa_admin_rpc_begin(a, &rpc, SAMSA_ADMIN_ANY,
                                SAMSA_API_DescribeConfigs, 1, 4, deadline);
    if (err != SAMSA_ERR_NONE) {
        goto out;
    }
    rr = samsa_arena_calloc(&scratch, n, sizeof(*rr));
    for (i = 0; i < n; i++) {
        samsa_DescribeConfigsResource_init(&rr[i]);
        rr[i].ResourceType = resources[i].type;
        rr[i].ResourceName = samsa_slice_cstr(resources[i].name);
        rr[i].ConfigurationKeys_cnt = -1;           /* all */
    }
    samsa_DescribeConfigsRequest_init(&req);
    req.Resources = rr;
    req.Resources_cnt = (int32_t) n;
    err = samsa_admin_rpc_run(a, &rpc, samsa_DescribeConfigsRequest_encode_any,
                              &req, samsa_DescribeConfigsResponse_decode_any,
                              &resp, deadline, &scratch);
    if (err == SAMSA_ERR_NONE) {
        res = samsa_admin_result_new(sizeof(*res), &arena);
        res->resources = samsa_admin_items(arena, resp.Results_cnt,
                                           sizeof(*res->resources), &res->n);
        for (i = 0; i < res->n; i++) {
            admin_config_resource(arena, &res->resources[i],
                                  &resp.Results[i]);
        }
        *resultp = res;
    }
out:
    pthread_mutex_unlock(&a->lock);
    samsa_arena_fini(&scratch);
    return err;
}

static samsa_err_t
admin_alter_check(const samsa_alter_resource_t *resources, size_t n)
{
    size_t  i, j;

    if (n == 0 || resources == NULL) {
        return SAMSA_ERR__INVALID_ARG;
    }
    for (i = 0; i < n; i++) {
        if (resources[i].name == NULL
            || (resources[i].nops > 0 && resources[i].ops == NULL)) {
            return SAMSA_ERR__INVALID_ARG;
        }
        for (j = 0; j < resources[i].nops; j++) {
            if (resources[i].ops[j].name == NULL
                || resources[i].ops[j].op < SAMSA_ALTER_OP_SET
                || resources[i].ops[j].op > SAMSA_ALTER_OP_SUBTRACT) {
                return SAMSA_ERR__INVALID_ARG;
            }
        }
    }
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_admin_incremental_alter_configs(samsa_admin_t *a,
                                      const samsa_alter_resource_t *resources,
                                      size_t n, bool validate_only,
                                      int64_t timeout_ms,
                                      samsa_admin_items_t **resultp)
{
    samsa_IncrementalAlterConfigsRequest_t    req;
    samsa_IncrementalAlterConfigsResponse_t   resp;
    samsa_IncrementalAlterConfigsResource_t  *rr;
    samsa_IncrementalAlterableConfig_t       *cfg;
    samsa_arena_t                             scratch = SAMSA_ARENA_INIT;
    samsa_arena_t                            *arena;
    samsa_admin_items_t                      *res;
    samsa_admin_rpc_t                         rpc;
    samsa_err_t                               err;
    int64_t                                   deadline;
    size_t                                    i, j;

    *resultp = NULL;
    err = admin_alter_check(resources, n);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    deadline = samsa_admin_deadline(a, timeout_ms);
    pthread_mutex_lock(&a->lock);
    err = samsa_admin_rpc_begin(a, &rpc, SAMSA_ADMIN_ANY,
                                SAMSA_API_IncrementalAlterConfigs, 0, 1,
                                deadline);
    if (err != SAMSA_ERR_NONE) {
        goto out;
    }
    rr = samsa_arena_calloc(&scratch, n, sizeof(*rr));
    for (i = 0; i < n; i++) {
        samsa_IncrementalAlterConfigsResource_init(&rr[i]);
        rr[i].ResourceType = resources[i].type;
        rr[i].ResourceName = samsa_slice_cstr(resources[i].name);
        cfg = samsa_arena_calloc(&scratch, resources[i].nops + 1,
                                 sizeof(*cfg));
        for (j = 0; j < resources[i].nops; j++) {
            samsa_IncrementalAlterableConfig_init(&cfg[j]);
            cfg[j].Name = samsa_slice_cstr(resources[i].ops[j].name);
            cfg[j].ConfigOperation = resources[i].ops[j].op;
            cfg[j].Value = samsa_slice_cstr(resources[i].ops[j].value);
        }
        rr[i].Configs = cfg;
        rr[i].Configs_cnt = (int32_t) resources[i].nops;
    }
    samsa_IncrementalAlterConfigsRequest_init(&req);
    req.Resources = rr;
    req.Resources_cnt = (int32_t) n;
    req.ValidateOnly = validate_only;
    err = samsa_admin_rpc_run(a, &rpc,
                              samsa_IncrementalAlterConfigsRequest_encode_any,
                              &req,
                              samsa_IncrementalAlterConfigsResponse_decode_any,
                              &resp, deadline, &scratch);
    if (err == SAMSA_ERR_NONE) {
        res = admin_items_new((size_t) resp.Responses_cnt, &arena);
        for (i = 0; i < (size_t) resp.Responses_cnt; i++) {
            admin_item_set(arena, &res->items[i],
                           resp.Responses[i].ResourceName,
                           resp.Responses[i].ErrorCode,
                           resp.Responses[i].ErrorMessage);
        }
        res->n = (size_t) resp.Responses_cnt;
        *resultp = res;
    }
out:
    pthread_mutex_unlock(&a->lock);
    samsa_arena_fini(&scratch);
    return err;
}

samsa_err_t
samsa_admin_alter_configs(samsa_admin_t *a,
                          const samsa_alter_resource_t *resources, size_t n,
                          bool validate_only, int64_t timeout_ms,
                          samsa_admin_items_t **resultp)
{
    samsa_AlterConfigsRequest_t    req;
    samsa_AlterConfigsResponse_t   resp;
    samsa_AlterConfigsResource_t  *rr;
    samsa_AlterableConfig_t       *cfg;
    samsa_arena_t                  scratch = SAMSA_ARENA_INIT, *arena;
    samsa_admin_items_t           *res;
    samsa_admin_rpc_t              rpc;
    samsa_err_t                    err;
    int64_t                        deadline;
    size_t                         i, j;

    *resultp = NULL;
    err = admin_alter_check(resources, n);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    deadline = samsa_admin_deadline(a, timeout_ms);
    pthread_mutex_lock(&a->lock);
    err = samsa_admin_rpc_begin(a, &rpc, SAMSA_ADMIN_ANY,
                                SAMSA_API_AlterConfigs, 0, 2, deadline);
    if (err != SAMSA_ERR_NONE) {
        goto out;
    }
    rr = samsa_arena_calloc(&scratch, n, sizeof(*rr));
    for (i = 0; i < n; i++) {
        samsa_AlterConfigsResource_init(&rr[i]);
        rr[i].ResourceType = resources[i].type;
        rr[i].ResourceName = samsa_slice_cstr(resources[i].name);
        cfg = samsa_arena_calloc(&scratch, resources[i].nops + 1,
                                 sizeof(*cfg));
        for (j = 0; j < resources[i].nops; j++) {
            samsa_AlterableConfig_init(&cfg[j]);
            cfg[j].Name = samsa_slice_cstr(resources[i].ops[j].name);
            cfg[j].Value = samsa_slice_cstr(resources[i].ops[j].value);
        }
        rr[i].Configs = cfg;
        rr[i].Configs_cnt = (int32_t) resources[i].nops;
    }
    samsa_AlterConfigsRequest_init(&req);
    req.Resources = rr;
    req.Resources_cnt = (int32_t) n;
    req.ValidateOnly = validate_only;
    err = samsa_admin_rpc_run(a, &rpc, samsa_AlterConfigsRequest_encode_any,
                              &req, samsa_AlterConfigsResponse_decode_any,
                              &resp, deadline, &scratch);
    if (err == SAMSA_ERR_NONE) {
        res = admin_items_new((size_t) resp.Responses_cnt, &arena);
        for (i = 0; i < (size_t) resp.Responses_cnt; i++) {
            admin_item_set(arena, &res->items[i],
                           resp.Responses[i].ResourceName,
                           resp.Responses[i].ErrorCode,
                           resp.Responses[i].ErrorMessage);
        }
        res->n = (size_t) resp.Responses_cnt;
        *resultp = res;
    }
out:
    pthread_mutex_unlock(&a->lock);
    samsa_arena_fini(&scratch);
    return err;
}

/* ---- ListOffsets and DeleteRecords, per partition leader --------------- */

/* What one leader gets: indexes into the caller's tps, grouped by topic. */
typedef struct admin_route {
    int32_t    leader;
    size_t    *idx;             /* into tps; same topic adjacent */
    size_t     n;
} admin_route_t;

typedef struct admin_routes {
    admin_route_t  *routes;
    size_t          n;
} admin_routes_t;

static int
admin_cmp_idx_topic(const void *x, const void *y, void *arg)
{
    const samsa_tp_spec_t  *tps = arg;
    size_t                  a = *(const size_t *) x, b = *(const size_t *) y;

    return strcmp(tps[a].topic, tps[b].topic);
}

/* Find each partition's leader through Metadata; partitions without one
 * get their error in res right away. */
static samsa_err_t
admin_route(samsa_admin_t *a, const samsa_tp_spec_t *tps, size_t n,
            int64_t deadline, samsa_arena_t *scratch, samsa_tp_results_t *res,
            admin_routes_t *routes)
{
    samsa_MetadataResponse_t          md;
    const samsa_MetadataResponseTopic_t  *t;
    const char                      **names;
    samsa_err_t                       err;
    int32_t                           leader;
    size_t                            i, j, k, nn = 0;

    names = samsa_arena_calloc(scratch, n + 1, sizeof(*names));
    for (i = 0; i < n; i++) {
        for (j = 0; j < nn && strcmp(names[j], tps[i].topic) != 0; j++) {
        }
        if (j == nn) {
            names[nn++] = tps[i].topic;
        }
    }
    err = samsa_admin_metadata(a, names, nn, deadline, scratch, &md);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    routes->routes = samsa_arena_calloc(scratch, n + 1,
                                        sizeof(*routes->routes));
    routes->n = 0;
    for (i = 0; i < n; i++) {
        err = SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION;
        leader = -1;
        for (j = 0; j < (size_t) md.Topics_cnt; j++) {
            t = &md.Topics[j];
            if (!samsa_slice_eq_cstr(t->Name, tps[i].topic)) {
                continue;
            }
            if (t->ErrorCode != 0) {
                err = (samsa_err_t) t->ErrorCode;
                break;
            }
            for (k = 0; k < (size_t) t->Partitions_cnt; k++) {
                if (t->Partitions[k].PartitionIndex == tps[i].partition) {
                    leader = t->Partitions[k].LeaderId;
                    err = leader < 0 ? SAMSA_ERR_LEADER_NOT_AVAILABLE
                                     : SAMSA_ERR_NONE;
                }
            }
            break;
        }
        if (err != SAMSA_ERR_NONE) {
            res->items[i].err = err;
            res->items[i].errmsg = samsa_err_text(err);
            continue;
        }
        for (j = 0; j < routes->n && routes->routes[j].leader != leader;
             j++) {
        }
        if (j == routes->n) {
            routes->routes[j].leader = leader;
            routes->routes[j].idx = samsa_arena_calloc(scratch, n,
                                                       sizeof(size_t));
            routes->n++;
        }
        routes->routes[j].idx[routes->routes[j].n++] = i;
    }
    for (j = 0; j < routes->n; j++) {
        qsort_r(routes->routes[j].idx, routes->routes[j].n, sizeof(size_t),
                admin_cmp_idx_topic, (void *) tps);
    }
    return SAMSA_ERR_NONE;
}

/* The item of res for (topic, partition), given the partition's error
 * code; NULL if res has none (an answer we did not ask for). */
static samsa_tp_result_t *
admin_tp_answer(samsa_tp_results_t *res, samsa_slice_t topic,
                int32_t partition, int16_t code)
{
    samsa_tp_result_t  *it;
    size_t              i;

    for (i = 0; i < res->n; i++) {
        it = &res->items[i];
        if (it->partition == partition
            && samsa_slice_eq_cstr(topic, it->topic)) {
            it->err = (samsa_err_t) code;
            it->errmsg = samsa_admin_errmsg(NULL, it->err, SAMSA_SLICE_NULL);
            return it;
        }
    }
    return NULL;
}

static samsa_tp_results_t *
admin_tp_results_new(const samsa_tp_spec_t *tps, size_t n,
                     samsa_arena_t **arenap)
{
    samsa_tp_results_t  *res = samsa_admin_result_new(sizeof(*res), arenap);
    size_t               i;

    res->items = samsa_arena_calloc(*arenap, n + 1, sizeof(*res->items));
    res->n = n;
    for (i = 0; i < n; i++) {
        res->items[i].topic = samsa_arena_strndup(*arenap, tps[i].topic,
                                                  strlen(tps[i].topic));
        res->items[i].partition = tps[i].partition;
        res->items[i].offset = -1;
        res->items[i].timestamp = -1;
        res->items[i].leader_epoch = -1;
        res->items[i].err = SAMSA_ERR__TIMED_OUT;       /* until answered */
        res->items[i].errmsg = samsa_err_text(SAMSA_ERR__TIMED_OUT);
    }
    return res;
}

/* One leader's share of a per-partition call: send it, fill res. */
typedef samsa_err_t admin_leader_fn(samsa_admin_t *a, const admin_route_t *r,
                                    const samsa_tp_spec_t *tps,
                                    int64_t deadline, samsa_arena_t *scratch,
                                    samsa_tp_results_t *res, void *ctx);

/* Route tps to their leaders through Metadata, call one for each leader
 * in turn, and hand back the sorted results.  @thread app */
static samsa_err_t
admin_per_leader(samsa_admin_t *a, const samsa_tp_spec_t *tps, size_t n,
                 int64_t timeout_ms, admin_leader_fn *one, void *ctx,
                 samsa_tp_results_t **resultp)
{
    samsa_arena_t        scratch = SAMSA_ARENA_INIT, *arena;
    samsa_tp_results_t  *res;
    admin_routes_t       routes;
    samsa_err_t          err;
    int64_t              deadline;
    size_t               i;

    *resultp = NULL;
    deadline = samsa_admin_deadline(a, timeout_ms);
    if (!samsa_admin_tps_valid(tps, n, sizeof(*tps))) {
        return SAMSA_ERR__INVALID_ARG;
    }
    res = admin_tp_results_new(tps, n, &arena);
    pthread_mutex_lock(&a->lock);
    err = admin_route(a, tps, n, deadline, &scratch, res, &routes);
    for (i = 0; err == SAMSA_ERR_NONE && i < routes.n; i++) {
        err = one(a, &routes.routes[i], tps, deadline, &scratch, res, ctx);
    }
    pthread_mutex_unlock(&a->lock);
    samsa_arena_fini(&scratch);
    return samsa_admin_tp_results_done(res, err, resultp);
}

static const samsa_admin_tp_layout_t  admin_list_offsets_layout =
    SAMSA_ADMIN_TP_LAYOUT(ListOffsetsTopic, ListOffsetsPartition);

/* ctx: bool, read_committed */
static samsa_err_t
admin_list_offsets_one(samsa_admin_t *a, const admin_route_t *r,
                       const samsa_tp_spec_t *tps, int64_t deadline,
                       samsa_arena_t *scratch, samsa_tp_results_t *res,
                       void *ctx)
{
    bool                           read_committed = *(const bool *) ctx;
    samsa_ListOffsetsRequest_t     req;
    samsa_ListOffsetsResponse_t    resp;
    samsa_ListOffsetsPartition_t  *lp;
    samsa_admin_tp_arrays_t        arr;
    samsa_tp_result_t             *it;
    samsa_admin_rpc_t              rpc;
    samsa_err_t                    err;
    int16_t                        lo = read_committed ? 2 : 1;
    size_t                         i;
    int32_t                        j, k;

    for (i = 0; i < r->n; i++) {
        if (tps[r->idx[i]].value == SAMSA_OFFSET_SPEC_MAX_TIMESTAMP) {
            lo = 7;                                 /* KIP-734 */
        }
    }
    err = samsa_admin_rpc_begin(a, &rpc, r->leader, SAMSA_API_ListOffsets, lo,
                                9, deadline);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    arr = samsa_admin_tp_request(scratch, tps, sizeof(*tps), r->idx, r->n,
                                 &admin_list_offsets_layout);
    lp = arr.parts;
    for (i = 0; i < r->n; i++) {
        lp[i].Timestamp = tps[r->idx[i]].value;
    }
    samsa_ListOffsetsRequest_init(&req);
    req.ReplicaId = -1;
    req.IsolationLevel = read_committed ? 1 : 0;
    req.Topics = arr.topics;
    req.Topics_cnt = arr.ntopics;
    err = samsa_admin_rpc_run(a, &rpc, samsa_ListOffsetsRequest_encode_any,
                              &req, samsa_ListOffsetsResponse_decode_any, &resp,
                              deadline, scratch);
    for (j = 0; err == SAMSA_ERR_NONE && j < resp.Topics_cnt; j++) {
        for (k = 0; k < resp.Topics[j].Partitions_cnt; k++) {
            const samsa_ListOffsetsPartitionResponse_t  *p =
                &resp.Topics[j].Partitions[k];

            it = admin_tp_answer(res, resp.Topics[j].Name,
                                 p->PartitionIndex, p->ErrorCode);
            if (it != NULL) {
                it->offset = p->Offset;
                it->timestamp = p->Timestamp;
                it->leader_epoch = p->LeaderEpoch;
            }
        }
    }
    return err;
}

samsa_err_t
samsa_admin_list_offsets(samsa_admin_t *a, const samsa_tp_spec_t *tps,
                         size_t n, bool read_committed, int64_t timeout_ms,
                         samsa_tp_results_t **resultp)
{
    return admin_per_leader(a, tps, n, timeout_ms, admin_list_offsets_one,
                            &read_committed, resultp);
}

static const samsa_admin_tp_layout_t  admin_delete_records_layout =
    SAMSA_ADMIN_TP_LAYOUT(DeleteRecordsTopic, DeleteRecordsPartition);

static samsa_err_t
admin_delete_records_one(samsa_admin_t *a, const admin_route_t *r,
                         const samsa_tp_spec_t *tps, int64_t deadline,
                         samsa_arena_t *scratch, samsa_tp_results_t *res,
                         void *ctx)
{
    samsa_DeleteRecordsRequest_t     req;
    samsa_DeleteRecordsResponse_t    resp;
    samsa_DeleteRecordsPartition_t  *dp;
    samsa_admin_tp_arrays_t          arr;
    samsa_tp_result_t               *it;
    samsa_admin_rpc_t                rpc;
    samsa_err_t                      err;
    size_t                           i;
    int32_t                          j, k;

    (void) ctx;
    err = samsa_admin_rpc_begin(a, &rpc, r->leader, SAMSA_API_DeleteRecords, 0,
                                2, deadline);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    arr = samsa_admin_tp_request(scratch, tps, sizeof(*tps), r->idx, r->n,
                                 &admin_delete_records_layout);
    dp = arr.parts;
    for (i = 0; i < r->n; i++) {
        dp[i].Offset = tps[r->idx[i]].value;
    }
    samsa_DeleteRecordsRequest_init(&req);
    req.Topics = arr.topics;
    req.Topics_cnt = arr.ntopics;
    req.TimeoutMs = samsa_admin_req_timeout(a, deadline);
    err = samsa_admin_rpc_run(a, &rpc, samsa_DeleteRecordsRequest_encode_any,
                              &req, samsa_DeleteRecordsResponse_decode_any,
                              &resp, deadline, scratch);
    for (j = 0; err == SAMSA_ERR_NONE && j < resp.Topics_cnt; j++) {
        for (k = 0; k < resp.Topics[j].Partitions_cnt; k++) {
            const samsa_DeleteRecordsPartitionResult_t  *p =
                &resp.Topics[j].Partitions[k];

            it = admin_tp_answer(res, resp.Topics[j].Name,
                                 p->PartitionIndex, p->ErrorCode);
            if (it != NULL) {
                it->offset = p->LowWatermark;
            }
        }
    }
    return err;
}

samsa_err_t
samsa_admin_delete_records(samsa_admin_t *a, const samsa_tp_spec_t *tps,
                           size_t n, int64_t timeout_ms,
                           samsa_tp_results_t **resultp)
{
    return admin_per_leader(a, tps, n, timeout_ms, admin_delete_records_one,
                            NULL, resultp);
}
