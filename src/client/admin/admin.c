/*
 * client/admin/admin.c - the admin client's handle, its blocking round trips
 * over the client's network client (netclient.c), metadata (each call
 * asks afresh and installs the answer in the client's metadata cache,
 * mdcache.c), topic and cluster descriptions, the topic/partition arrays
 * of per-partition requests, and result blocks (see samsa/admin.h).
 * Threads: any application thread; one call at a time per handle (the
 * handle's lock), and that call drives the netclient's poll loop itself
 * and is the only writer of the handle's metadata cache.
 */
#include <samsa/admin.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/admin/admin_int.h"
#include "client/client_config.h"
#include "client/conf_defs.h"
#include "proto/gen/DescribeCluster.h"
#include "proto/gen/DescribeQuorum.h"
#include "proto/gen/FindCoordinator.h"
#include "proto/gen/apis.h"
#include "util/alloc.h"
#include "util/diag.h"
#include "util/time.h"

#define ADMIN_POLL_MS  50

/* ---- results ----------------------------------------------------------- */

typedef union admin_res_hdr {
    samsa_arena_t  arena;
    max_align_t    align;
} admin_res_hdr_t;

void *
samsa_admin_result_new(size_t size, samsa_arena_t **arenap)
{
    admin_res_hdr_t  *h = samsa_calloc(1, sizeof(*h) + size);

    samsa_arena_init(&h->arena);
    *arenap = &h->arena;
    return (char *) h + sizeof(*h);
}

void
samsa_admin_result_free(void *result)
{
    admin_res_hdr_t  *h;

    if (result == NULL) {
        return;
    }
    h = (admin_res_hdr_t *) (void *) ((char *) result - sizeof(*h));
    samsa_arena_fini(&h->arena);
    samsa_free(h);
}

void *
samsa_admin_items(samsa_arena_t *arena, int32_t cnt, size_t size, size_t *np)
{
    *np = cnt > 0 ? (size_t) cnt : 0;
    return samsa_arena_calloc(arena, *np + 1, size);
}

char *
samsa_admin_str(samsa_arena_t *arena, samsa_slice_t s)
{
    if (s.ptr == NULL) {
        return NULL;
    }
    return samsa_arena_strndup(arena, s.ptr, s.len);
}

const char *
samsa_admin_name(samsa_arena_t *arena, samsa_slice_t s)
{
    return s.ptr != NULL ? samsa_arena_strndup(arena, s.ptr, s.len) : "";
}

const char *
samsa_admin_errmsg(samsa_arena_t *arena, samsa_err_t err, samsa_slice_t msg)
{
    if (err == SAMSA_ERR_NONE) {
        return NULL;
    }
    if (msg.ptr != NULL && msg.len > 0) {
        return samsa_admin_str(arena, msg);
    }
    return samsa_err_text(err);
}

int
samsa_admin_cmp_tp(const char *topic_a, int32_t partition_a,
                   const char *topic_b, int32_t partition_b)
{
    int  c = strcmp(topic_a, topic_b);

    if (c != 0) {
        return c;
    }
    return (partition_a > partition_b) - (partition_a < partition_b);
}

int
samsa_admin_cmp_tp_result(const void *x, const void *y)
{
    const samsa_tp_result_t  *a = x, *b = y;

    return samsa_admin_cmp_tp(a->topic, a->partition, b->topic, b->partition);
}

samsa_err_t
samsa_admin_tp_results_done(samsa_tp_results_t *res, samsa_err_t err,
                            samsa_tp_results_t **resultp)
{
    if (err != SAMSA_ERR_NONE) {
        samsa_admin_result_free(res);
        return err;
    }
    qsort(res->items, res->n, sizeof(*res->items), samsa_admin_cmp_tp_result);
    *resultp = res;
    return SAMSA_ERR_NONE;
}

const samsa_topic_partition_t *
samsa_admin_tp_at(const void *items, size_t stride, size_t i)
{
    return (const void *) ((const char *) items + i * stride);
}

bool
samsa_admin_tps_valid(const void *items, size_t n, size_t stride)
{
    size_t  i;

    if (n == 0 || items == NULL) {
        return false;
    }
    for (i = 0; i < n; i++) {
        const samsa_topic_partition_t  *tp = samsa_admin_tp_at(items, stride,
                                                               i);

        if (tp->topic == NULL || tp->partition < 0) {
            return false;
        }
    }
    return true;
}

/* One topic's share of a request: positions first .. first + n - 1 of the
 * order it was cut from. */
typedef struct admin_topic_run {
    const char  *topic;
    size_t       first;
    int32_t      n;
} admin_topic_run_t;

/* Cut the n items listed by order (indexes into items, same-topic items
 * adjacent) into runs of one topic each, for a request's topic array;
 * returns the number of runs, *runsp (scratch memory) the runs. */
static size_t
admin_topic_runs(samsa_arena_t *scratch, const void *items, size_t stride,
                 const size_t *order, size_t n, admin_topic_run_t **runsp)
{
    admin_topic_run_t  *runs;
    const char         *topic, *prev = NULL;
    size_t              i, nt = 0;

    runs = samsa_arena_calloc(scratch, n + 1, sizeof(*runs));
    for (i = 0; i < n; i++) {
        topic = samsa_admin_tp_at(items, stride, order[i])->topic;
        if (prev == NULL || strcmp(topic, prev) != 0) {
            runs[nt].topic = topic;
            runs[nt].first = i;
            nt++;
        }
        runs[nt - 1].n++;
        prev = topic;
    }
    *runsp = runs;
    return nt;
}

samsa_admin_tp_arrays_t
samsa_admin_tp_request(samsa_arena_t *scratch, const void *items,
                       size_t stride, const size_t *order, size_t n,
                       const samsa_admin_tp_layout_t *layout)
{
    samsa_admin_tp_arrays_t   arr;
    admin_topic_run_t        *runs;
    samsa_slice_t             name;
    uint8_t                  *t, *p;
    void                     *first;
    int32_t                   index;
    size_t                    i, nt;

    nt = admin_topic_runs(scratch, items, stride, order, n, &runs);
    arr.topics = samsa_arena_calloc(scratch, nt, layout->topic_size);
    arr.parts = samsa_arena_calloc(scratch, n, layout->part_size);
    arr.ntopics = (int32_t) nt;
    for (i = 0; i < nt; i++) {
        t = (uint8_t *) arr.topics + i * layout->topic_size;
        layout->topic_init(t);
        name = samsa_slice_cstr(runs[i].topic);
        first = (uint8_t *) arr.parts + runs[i].first * layout->part_size;
        memcpy(t + layout->name_off, &name, sizeof(name));
        memcpy(t + layout->parts_off, &first, sizeof(first));
        memcpy(t + layout->parts_cnt_off, &runs[i].n, sizeof(runs[i].n));
    }
    for (i = 0; i < n; i++) {
        p = (uint8_t *) arr.parts + i * layout->part_size;
        if (layout->part_init != NULL) {
            layout->part_init(p);
        }
        index = samsa_admin_tp_at(items, stride, order[i])->partition;
        memcpy(p + layout->index_off, &index, sizeof(index));
    }
    return arr;
}

const char *
samsa_admin_config_source_name(int source)
{
    static const char *const  names[] = {
        "UNKNOWN", "DYNAMIC_TOPIC_CONFIG", "DYNAMIC_BROKER_CONFIG",
        "DYNAMIC_DEFAULT_BROKER_CONFIG", "STATIC_BROKER_CONFIG",
        "DEFAULT_CONFIG", "DYNAMIC_BROKER_LOGGER_CONFIG",
    };

    if (source < 0 || source >= (int) (sizeof(names) / sizeof(names[0]))) {
        return "UNKNOWN";
    }
    return names[source];
}

/* ---- the handle -------------------------------------------------------- */

/* Split bootstrap.servers into nodes -1, -2, ... (a NULL: only check);
 * false if an entry has no port or the list is empty. */
static bool
admin_bootstrap(samsa_admin_t *a, const char *list)
{
    char  *copy = samsa_strdup(list), *save = NULL, *tok, *colon, *host;
    char    *end;
    long     port;
    size_t   n = 0;

    for (tok = strtok_r(copy, ", \t", &save); tok != NULL;
         tok = strtok_r(NULL, ", \t", &save)) {
        colon = strrchr(tok, ':');
        if (colon == NULL || colon == tok) {
            samsa_free(copy);
            return false;
        }
        port = strtol(colon + 1, &end, 10);
        if (*end != '\0' || port <= 0 || port > 65535) {
            samsa_free(copy);
            return false;
        }
        *colon = '\0';
        host = tok;
        if (host[0] == '[' && colon[-1] == ']') {      /* [ipv6]:port */
            colon[-1] = '\0';
            host++;
        }
        n++;
        if (a != NULL) {
            a->nbootstrap = (int32_t) n;
            samsa_netclient_node_set(a->nc, -a->nbootstrap, host,
                                     (int32_t) port);
        }
    }
    samsa_free(copy);
    return n > 0;
}

samsa_err_t
samsa_admin_new(const samsa_conf_t *conf, samsa_admin_t **adminp,
                char *errstr, size_t errstr_size)
{
    samsa_admin_t          *a;
    const char             *bs = samsa_conf_get(conf, "bootstrap.servers");
    samsa_client_config_t   net;
    samsa_nc_conf_t         ncc;
    samsa_err_t             err;

    *adminp = NULL;
    if (bs == NULL || bs[0] == '\0') {
        snprintf(errstr, errstr_size, "missing required configuration "
                 "'bootstrap.servers'");
        return SAMSA_ERR__CONFIG;
    }
    if (!admin_bootstrap(NULL, bs)) {
        snprintf(errstr, errstr_size, "invalid value '%s' for configuration "
                 "'bootstrap.servers': expected host:port[,host:port...]",
                 bs);
        return SAMSA_ERR__CONFIG;
    }
    err = samsa_client_config_load(&net, conf, errstr, errstr_size);
    if (err != SAMSA_ERR_NONE) {
        samsa_client_config_fini(&net);
        return err;
    }
    ncc = samsa_client_config_nc(&net, 5, NULL);
    if (net.client_id[0] == '\0') {
        ncc.client_id = "samsa-admin";
    }
    a = samsa_calloc(1, sizeof(*a));
    samsa_assert(pthread_mutex_init(&a->lock, NULL) == 0);
    a->nc = samsa_netclient_new(&ncc);
    /* never due on its own: the admin client asks when a call needs it */
    a->mdc = samsa_mdcache_new(SAMSA_MDCACHE_ANSWERED, INT64_MAX / 2, NULL,
                               NULL);
    a->request_timeout_ms = net.request_timeout_ms;
    a->default_api_timeout_ms = samsa_conf_long(conf,
                                                "default.api.timeout.ms");
    a->retry_backoff_ms = net.retry_backoff_ms;
    a->bootstrap = samsa_strdup(bs);
    samsa_assert(admin_bootstrap(a, bs));
    samsa_client_config_fini(&net);
    *adminp = a;
    return SAMSA_ERR_NONE;
}

void
samsa_admin_free(samsa_admin_t *a)
{
    if (a == NULL) {
        return;
    }
    samsa_netclient_free(a->nc);
    samsa_mdcache_free(a->mdc);
    pthread_mutex_destroy(&a->lock);
    samsa_free(a->bootstrap);
    samsa_free(a);
}

int64_t
samsa_admin_deadline(const samsa_admin_t *a, int64_t timeout_ms)
{
    return samsa_now_ms()
           + (timeout_ms < 0 ? a->default_api_timeout_ms : timeout_ms);
}

int32_t
samsa_admin_req_timeout(const samsa_admin_t *a, int64_t deadline)
{
    int64_t  left = deadline - samsa_now_ms();

    if (left > a->request_timeout_ms) {
        left = a->request_timeout_ms;
    }
    return (int32_t) (left < 1 ? 1 : left);
}

/* ---- round trips ------------------------------------------------------- */

/* Why no node became ready: the last connection error of a node tried. */
static samsa_err_t
admin_unreachable(samsa_admin_t *a, int32_t node)
{
    samsa_err_t  err = SAMSA_ERR_NONE;
    int32_t      i;

    if (node != SAMSA_ADMIN_ANY) {
        err = samsa_netclient_last_error(a->nc, node);
    }
    for (i = 1; err == SAMSA_ERR_NONE && i <= a->nbootstrap; i++) {
        err = samsa_netclient_last_error(a->nc, -i);
    }
    return err != SAMSA_ERR_NONE && err != SAMSA_ERR__NOENT
               ? err : SAMSA_ERR__TIMED_OUT;
}

samsa_err_t
samsa_admin_rpc_begin(samsa_admin_t *a, samsa_admin_rpc_t *rpc, int32_t node,
                      int16_t api, int16_t lo, int16_t hi, int64_t deadline)
{
    int64_t      now;
    int32_t      id;
    samsa_err_t  err;

    memset(rpc, 0, sizeof(*rpc));
    rpc->frame = SAMSA_BUF_INIT;
    for (;;) {
        now = samsa_now_ms();
        id = node == SAMSA_ADMIN_ANY ? samsa_netclient_least_loaded(a->nc, now)
                                    : node;
        if (id != SAMSA_NC_NO_NODE && samsa_netclient_ready(a->nc, id, now)) {
            break;
        }
        /* an authentication failure is final for the call, as Java's
         * AuthenticationException: no retries until the deadline */
        err = samsa_netclient_auth_error(a->nc, NULL, 0);
        if (err != SAMSA_ERR_NONE) {
            return err;
        }
        if (now >= deadline) {
            return admin_unreachable(a, node);
        }
        samsa_netclient_poll(a->nc, deadline - now < ADMIN_POLL_MS
                                        ? deadline - now : ADMIN_POLL_MS);
    }
    rpc->node = id;
    rpc->api = api;
    rpc->version = samsa_netclient_version(a->nc, id, api, lo, hi);
    if (rpc->version < 0) {
        samsa_debug("admin: node %d has no version of API %d in %d..%d",
                    id, api, lo, hi);
        return SAMSA_ERR_UNSUPPORTED_VERSION;
    }
    samsa_netclient_frame_begin(a->nc, api, rpc->version, &rpc->frame,
                                &rpc->wr);
    return SAMSA_ERR_NONE;
}

void
samsa_admin_rpc_abort(samsa_admin_rpc_t *rpc)
{
    samsa_buf_fini(&rpc->frame);
}

typedef struct admin_wait {
    bool          done;
    samsa_err_t   err;
    uint8_t      *body;
    size_t        len;
} admin_wait_t;

/* @thread the caller's (inside samsa_netclient_poll) */
static void
admin_on_response(void *ctx, int32_t node, samsa_err_t err, samsa_rd_t *body,
                  void *opaque)
{
    admin_wait_t  *w = opaque;

    (void) ctx;
    (void) node;
    w->done = true;
    w->err = err;
    if (err == SAMSA_ERR_NONE && body != NULL) {
        w->len = (size_t) (body->end - body->p);
        w->body = samsa_malloc(w->len + 1);
        memcpy(w->body, body->p, w->len);
    } else if (err == SAMSA_ERR_NONE) {
        w->err = SAMSA_ERR__BAD_MSG;
    }
}

samsa_err_t
samsa_admin_rpc_call(samsa_admin_t *a, samsa_admin_rpc_t *rpc, int64_t deadline,
                     samsa_arena_t *arena, samsa_rd_t *rd)
{
    uint8_t      *copy;
    admin_wait_t  w;
    samsa_err_t   err;
    int64_t       now = samsa_now_ms();

    memset(&w, 0, sizeof(w));
    err = samsa_netclient_send(a->nc, rpc->node, &rpc->frame, rpc->api,
                               rpc->version, true, admin_on_response, NULL,
                               &w, now);
    if (err != SAMSA_ERR_NONE) {
        samsa_buf_fini(&rpc->frame);
        return err;
    }
    while (!w.done) {
        now = samsa_now_ms();
        if (now >= deadline) {
            /* fails what is in flight: w is completed before we return */
            samsa_netclient_disconnect(a->nc, rpc->node, SAMSA_ERR__TIMED_OUT);
            break;
        }
        samsa_netclient_poll(a->nc, deadline - now < ADMIN_POLL_MS
                                        ? deadline - now : ADMIN_POLL_MS);
    }
    samsa_assert(w.done);
    if (w.err != SAMSA_ERR_NONE) {
        samsa_free(w.body);
        return w.err;
    }
    copy = samsa_arena_alloc(arena, w.len + 1);
    memcpy(copy, w.body, w.len);
    samsa_free(w.body);
    samsa_rd_init(rd, copy, w.len);
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_admin_rpc_run(samsa_admin_t *a, samsa_admin_rpc_t *rpc,
                    samsa_admin_encode_fn *encode, const void *req,
                    samsa_admin_decode_fn *decode, void *resp,
                    int64_t deadline, samsa_arena_t *arena)
{
    samsa_rd_t   rd;
    samsa_err_t  err;

    encode(&rpc->wr, rpc->version, req);
    err = samsa_admin_rpc_call(a, rpc, deadline, arena, &rd);
    if (err == SAMSA_ERR_NONE) {
        err = decode(&rd, rpc->version, arena, resp);
    }
    return err;
}

/* ---- metadata ---------------------------------------------------------- */

samsa_err_t
samsa_admin_metadata(samsa_admin_t *a, const char *const *topics, size_t n,
                     int64_t deadline, samsa_arena_t *arena,
                     samsa_MetadataResponse_t *resp)
{
    samsa_MetadataRequest_t        req;
    samsa_MetadataRequestTopic_t  *rt = NULL;
    samsa_admin_rpc_t              rpc;
    samsa_err_t                    err;
    size_t                         i;

    err = samsa_admin_rpc_begin(a, &rpc, SAMSA_ADMIN_ANY, SAMSA_API_Metadata,
                                1, 12, deadline);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    samsa_MetadataRequest_init(&req);
    req.AllowAutoTopicCreation = false;
    req.Topics_cnt = -1;                            /* all */
    if (topics != NULL) {
        rt = samsa_calloc(n + 1, sizeof(*rt));
        for (i = 0; i < n; i++) {
            samsa_MetadataRequestTopic_init(&rt[i]);
            rt[i].Name = samsa_slice_cstr(topics[i]);
        }
        req.Topics = rt;
        req.Topics_cnt = (int32_t) n;
    }
    err = samsa_admin_rpc_run(a, &rpc, samsa_MetadataRequest_encode_any, &req,
                              samsa_MetadataResponse_decode_any, resp, deadline,
                              arena);
    samsa_free(rt);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    samsa_mdcache_nodes_set(a->nc, resp);
    samsa_mdcache_update(a->mdc, resp, samsa_now_ms());
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_admin_connect(samsa_admin_t *a, int64_t timeout_ms, char *errstr,
                    size_t errstr_size)
{
    samsa_MetadataResponse_t  resp;
    samsa_arena_t             arena = SAMSA_ARENA_INIT;
    samsa_err_t               err;
    const char               *const none[1] = { NULL };
    char                      why[1024];

    pthread_mutex_lock(&a->lock);
    err = samsa_admin_metadata(a, none, 0,
                               samsa_admin_deadline(a, timeout_ms), &arena,
                               &resp);
    pthread_mutex_unlock(&a->lock);
    samsa_arena_fini(&arena);
    if (err != SAMSA_ERR_NONE && errstr != NULL
        && samsa_netclient_auth_error(a->nc, why, sizeof(why)) == err) {
        snprintf(errstr, errstr_size, "SASL authentication with '%s' "
                 "failed: %s: %s", a->bootstrap, samsa_err_name(err), why);
    } else if (err != SAMSA_ERR_NONE && errstr != NULL) {
        snprintf(errstr, errstr_size, "cannot reach any broker of '%s' "
                 "within %lld ms: %s (%s)", a->bootstrap,
                 (long long) (timeout_ms < 0 ? a->default_api_timeout_ms
                                             : timeout_ms),
                 err == SAMSA_ERR__CLOSED
                     ? "connection refused or closed"
                     : err == SAMSA_ERR__RESOLVE
                           ? "host name not resolved"
                           : samsa_err_text(err),
                 samsa_err_name(err));
    }
    return err;
}

/* ---- coordinators ------------------------------------------------------ */

static bool
admin_coord_retriable(samsa_err_t err)
{
    return err == SAMSA_ERR_COORDINATOR_NOT_AVAILABLE
           || err == SAMSA_ERR_COORDINATOR_LOAD_IN_PROGRESS
           || err == SAMSA_ERR_NOT_COORDINATOR;
}

samsa_err_t
samsa_admin_coordinator(samsa_admin_t *a, const char *group_id,
                        int64_t deadline, int32_t *node)
{
    samsa_FindCoordinatorRequest_t   req;
    samsa_FindCoordinatorResponse_t  resp;
    samsa_arena_t                    arena = SAMSA_ARENA_INIT;
    samsa_admin_rpc_t                rpc;
    samsa_err_t                      err;
    char                             host[256];

    for (;;) {
        err = samsa_admin_rpc_begin(a, &rpc, SAMSA_ADMIN_ANY,
                                    SAMSA_API_FindCoordinator, 0, 3, deadline);
        if (err != SAMSA_ERR_NONE) {
            break;
        }
        samsa_FindCoordinatorRequest_init(&req);
        req.Key = samsa_slice_cstr(group_id);
        req.KeyType = 0;                            /* group */
        err = samsa_admin_rpc_run(a, &rpc,
                                  samsa_FindCoordinatorRequest_encode_any, &req,
                                  samsa_FindCoordinatorResponse_decode_any,
                                  &resp, deadline, &arena);
        if (err == SAMSA_ERR_NONE) {
            err = (samsa_err_t) resp.ErrorCode;
        }
        if (err == SAMSA_ERR_NONE) {
            snprintf(host, sizeof(host), "%.*s", (int) resp.Host.len,
                     resp.Host.ptr);
            samsa_netclient_node_set(a->nc, resp.NodeId, host, resp.Port);
            *node = resp.NodeId;
            break;
        }
        samsa_arena_fini(&arena);
        if (!admin_coord_retriable(err)
            || samsa_now_ms() + a->retry_backoff_ms >= deadline) {
            break;
        }
        samsa_netclient_poll(a->nc, a->retry_backoff_ms);
    }
    samsa_arena_fini(&arena);
    return err;
}

/* ---- topics and the cluster -------------------------------------------- */

static int32_t *
admin_i32s(samsa_arena_t *arena, const int32_t *v, int32_t n, size_t *np)
{
    int32_t  *out;

    *np = n > 0 ? (size_t) n : 0;
    out = samsa_arena_calloc(arena, *np + 1, sizeof(int32_t));
    if (*np > 0) {
        memcpy(out, v, *np * sizeof(int32_t));
    }
    return out;
}

static int
admin_cmp_part(const void *x, const void *y)
{
    const samsa_partition_desc_t  *a = x, *b = y;

    return (a->partition > b->partition) - (a->partition < b->partition);
}

static int
admin_cmp_topic(const void *x, const void *y)
{
    const samsa_topic_desc_t  *a = x, *b = y;

    return strcmp(a->name, b->name);
}

static void
admin_topic_desc(samsa_arena_t *arena, samsa_topic_desc_t *td,
                 const samsa_MetadataResponseTopic_t *t)
{
    const samsa_MetadataResponsePartition_t  *p;
    samsa_partition_desc_t                   *pd;
    int32_t                                   j;

    td->name = samsa_admin_name(arena, t->Name);
    td->err = (samsa_err_t) t->ErrorCode;
    td->errmsg = samsa_admin_errmsg(arena, td->err, SAMSA_SLICE_NULL);
    memcpy(td->topic_id, t->TopicId.b, sizeof(td->topic_id));
    td->is_internal = t->IsInternal;
    td->partitions = samsa_admin_items(arena, t->Partitions_cnt,
                                       sizeof(*td->partitions),
                                       &td->npartitions);
    for (j = 0; j < (int32_t) td->npartitions; j++) {
        p = &t->Partitions[j];
        pd = &td->partitions[j];
        pd->partition = p->PartitionIndex;
        pd->err = (samsa_err_t) p->ErrorCode;
        pd->leader = p->LeaderId;
        pd->leader_epoch = p->LeaderEpoch;
        pd->replicas = admin_i32s(arena, p->ReplicaNodes, p->ReplicaNodes_cnt,
                                  &pd->nreplicas);
        pd->isr = admin_i32s(arena, p->IsrNodes, p->IsrNodes_cnt, &pd->nisr);
        pd->offline = admin_i32s(arena, p->OfflineReplicas,
                                 p->OfflineReplicas_cnt, &pd->noffline);
    }
    qsort(td->partitions, td->npartitions, sizeof(*td->partitions),
          admin_cmp_part);
}

samsa_err_t
samsa_admin_describe_topics(samsa_admin_t *a, const char *const *names,
                            size_t n, int64_t timeout_ms,
                            samsa_topic_descs_t **resultp)
{
    samsa_MetadataResponse_t   resp;
    samsa_arena_t              scratch = SAMSA_ARENA_INIT, *arena;
    samsa_topic_descs_t       *res;
    samsa_err_t                err;
    size_t                     i;

    *resultp = NULL;
    if (n > 0 && names == NULL) {
        return SAMSA_ERR__INVALID_ARG;
    }
    pthread_mutex_lock(&a->lock);
    err = samsa_admin_metadata(a, n > 0 ? names : NULL, n,
                               samsa_admin_deadline(a, timeout_ms), &scratch,
                               &resp);
    pthread_mutex_unlock(&a->lock);
    if (err == SAMSA_ERR_NONE) {
        res = samsa_admin_result_new(sizeof(*res), &arena);
        res->topics = samsa_admin_items(arena, resp.Topics_cnt,
                                        sizeof(*res->topics), &res->n);
        for (i = 0; i < res->n; i++) {
            admin_topic_desc(arena, &res->topics[i], &resp.Topics[i]);
        }
        qsort(res->topics, res->n, sizeof(*res->topics), admin_cmp_topic);
        *resultp = res;
    }
    samsa_arena_fini(&scratch);
    return err;
}

static int
admin_cmp_broker(const void *x, const void *y)
{
    const samsa_broker_desc_t  *a = x, *b = y;

    return (a->id > b->id) - (a->id < b->id);
}

/* broker_fenced for res (sorted by id) from a v2 answer. */
static void
admin_cluster_fenced(samsa_cluster_desc_t *res, samsa_arena_t *arena,
                     const samsa_DescribeClusterResponse_t *resp)
{
    bool     *f = samsa_arena_calloc(arena, res->nbrokers + 1, sizeof(*f));
    size_t    i;
    int32_t   j;

    for (i = 0; i < res->nbrokers; i++) {
        for (j = 0; j < resp->Brokers_cnt; j++) {
            if (resp->Brokers[j].BrokerId == res->brokers[i].id) {
                f[i] = resp->Brokers[j].IsFenced;
            }
        }
    }
    res->broker_fenced = f;
}

/* The result for a cluster (brokers sorted by id); broker_fenced from a
 * v2 answer when fenced_from is one. */
static samsa_cluster_desc_t *
admin_cluster_desc(samsa_slice_t cluster_id, int32_t controller_id,
                   const samsa_mdbroker_t *brokers, int32_t n,
                   const samsa_DescribeClusterResponse_t *fenced_from)
{
    samsa_cluster_desc_t  *res;
    samsa_arena_t         *arena;
    int32_t                i;

    res = samsa_admin_result_new(sizeof(*res), &arena);
    res->cluster_id = samsa_admin_str(arena, cluster_id);
    res->controller_id = controller_id;
    res->nbrokers = (size_t) n;
    res->brokers = samsa_arena_calloc(arena, res->nbrokers + 1,
                                      sizeof(*res->brokers));
    for (i = 0; i < n; i++) {
        const samsa_mdbroker_t  *b = &brokers[i];

        res->brokers[i].id = b->node_id;
        res->brokers[i].host = samsa_admin_str(arena,
                                               samsa_slice_cstr(b->host));
        res->brokers[i].port = b->port;
        res->brokers[i].rack = samsa_admin_str(arena,
                                               samsa_slice_cstr(b->rack));
    }
    qsort(res->brokers, res->nbrokers, sizeof(*res->brokers),
          admin_cmp_broker);
    if (fenced_from != NULL) {
        admin_cluster_fenced(res, arena, fenced_from);
    }
    return res;
}

/* DescribeCluster (KIP-700), answered by any broker; v2 with the fenced
 * brokers when with_fenced. */
static samsa_err_t
admin_describe_cluster_dc(samsa_admin_t *a, int64_t deadline,
                          samsa_arena_t *scratch, bool with_fenced,
                          samsa_cluster_desc_t **resultp)
{
    samsa_DescribeClusterRequest_t   req;
    samsa_DescribeClusterResponse_t  resp;
    samsa_mdbroker_t                *brokers;
    samsa_admin_rpc_t                rpc;
    samsa_err_t                      err;
    int32_t                          i;

    err = samsa_admin_rpc_begin(a, &rpc, SAMSA_ADMIN_ANY,
                                SAMSA_API_DescribeCluster,
                                with_fenced ? 2 : 0, with_fenced ? 2 : 1,
                                deadline);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    samsa_DescribeClusterRequest_init(&req);
    req.IncludeFencedBrokers = with_fenced;
    err = samsa_admin_rpc_run(a, &rpc, samsa_DescribeClusterRequest_encode_any,
                              &req, samsa_DescribeClusterResponse_decode_any,
                              &resp, deadline, scratch);
    if (err == SAMSA_ERR_NONE) {
        err = (samsa_err_t) resp.ErrorCode;
    }
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    brokers = samsa_arena_calloc(scratch, (size_t) resp.Brokers_cnt + 1,
                                 sizeof(*brokers));
    for (i = 0; i < resp.Brokers_cnt; i++) {
        brokers[i].node_id = resp.Brokers[i].BrokerId;
        brokers[i].host = samsa_admin_str(scratch, resp.Brokers[i].Host);
        brokers[i].port = resp.Brokers[i].Port;
        brokers[i].rack = samsa_admin_str(scratch, resp.Brokers[i].Rack);
    }
    *resultp = admin_cluster_desc(
        resp.ClusterId, resp.ControllerId, brokers,
        resp.Brokers_cnt > 0 ? resp.Brokers_cnt : 0,
        with_fenced ? &resp : NULL);
    return SAMSA_ERR_NONE;
}

static samsa_err_t
admin_describe_cluster_md(samsa_admin_t *a, int64_t deadline,
                          samsa_arena_t *scratch,
                          samsa_cluster_desc_t **resultp)
{
    samsa_MetadataResponse_t   resp;
    samsa_mdbroker_t          *brokers;
    samsa_err_t                err;
    const char                *const none[1] = { NULL };
    char                      *cluster_id;
    int32_t                    n, controller_id;

    err = samsa_admin_metadata(a, none, 0, deadline, scratch, &resp);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    /* the answer, as the metadata cache keeps it */
    brokers = samsa_mdcache_cluster(a->mdc, &n, &controller_id, &cluster_id);
    *resultp = admin_cluster_desc(samsa_slice_cstr(cluster_id),
                                  controller_id, brokers, n, NULL);
    samsa_mdcache_brokers_free(brokers, n);
    samsa_free(cluster_id);
    return SAMSA_ERR_NONE;
}

/* DescribeCluster (v2 with the fenced brokers when with_fenced); without
 * them a broker lacking DescribeCluster is asked for Metadata. */
static samsa_err_t
admin_describe_cluster(samsa_admin_t *a, int64_t timeout_ms,
                       bool with_fenced, samsa_cluster_desc_t **resultp)
{
    samsa_arena_t  scratch = SAMSA_ARENA_INIT;
    int64_t        deadline;
    samsa_err_t    err;

    *resultp = NULL;
    deadline = samsa_admin_deadline(a, timeout_ms);
    pthread_mutex_lock(&a->lock);
    err = admin_describe_cluster_dc(a, deadline, &scratch, with_fenced,
                                    resultp);
    if (err == SAMSA_ERR_UNSUPPORTED_VERSION && !with_fenced) {
        err = admin_describe_cluster_md(a, deadline, &scratch, resultp);
    }
    pthread_mutex_unlock(&a->lock);
    samsa_arena_fini(&scratch);
    return err;
}

samsa_err_t
samsa_admin_describe_cluster(samsa_admin_t *a, int64_t timeout_ms,
                             samsa_cluster_desc_t **resultp)
{
    return admin_describe_cluster(a, timeout_ms, false, resultp);
}

samsa_err_t
samsa_admin_describe_cluster_fenced(samsa_admin_t *a, int64_t timeout_ms,
                                    samsa_cluster_desc_t **resultp)
{
    return admin_describe_cluster(a, timeout_ms, true, resultp);
}

static int
admin_cmp_i32(const void *x, const void *y)
{
    int32_t  a = *(const int32_t *) x, b = *(const int32_t *) y;

    return (a > b) - (a < b);
}

/* DescribeQuorum of __cluster_metadata-0 (forwarded by a cluster node's
 * broker listener to the active controller). */
static samsa_err_t
admin_describe_quorum(samsa_admin_t *a, int64_t deadline,
                      samsa_arena_t *scratch, samsa_quorum_info_t **resultp)
{
    samsa_DescribeQuorumRequest_t          req;
    samsa_DescribeQuorumResponse_t         resp;
    samsa_DescribeQuorumTopicData_t        td;
    samsa_DescribeQuorumPartitionData_t    pd;
    const samsa_DescribeQuorumPartitionResult_t  *pr;
    samsa_quorum_info_t                   *res;
    samsa_arena_t                         *arena;
    samsa_admin_rpc_t                      rpc;
    samsa_err_t                            err;
    int32_t                                i;

    err = samsa_admin_rpc_begin(a, &rpc, SAMSA_ADMIN_ANY,
                                SAMSA_API_DescribeQuorum, 0, 2, deadline);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    samsa_DescribeQuorumRequest_init(&req);
    pd.PartitionIndex = 0;
    td.TopicName = samsa_slice_cstr("__cluster_metadata");
    td.Partitions = &pd;
    td.Partitions_cnt = 1;
    req.Topics = &td;
    req.Topics_cnt = 1;
    err = samsa_admin_rpc_run(a, &rpc, samsa_DescribeQuorumRequest_encode_any,
                              &req, samsa_DescribeQuorumResponse_decode_any,
                              &resp, deadline, scratch);
    if (err == SAMSA_ERR_NONE) {
        err = (samsa_err_t) resp.ErrorCode;
    }
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    if (resp.Topics_cnt != 1 || resp.Topics[0].Partitions_cnt != 1) {
        return SAMSA_ERR__BAD_MSG;
    }
    pr = &resp.Topics[0].Partitions[0];
    if (pr->ErrorCode != 0) {
        return (samsa_err_t) pr->ErrorCode;
    }
    res = samsa_admin_result_new(sizeof(*res), &arena);
    res->leader_id = pr->LeaderId;
    res->leader_epoch = pr->LeaderEpoch;
    res->high_watermark = pr->HighWatermark;
    res->nvoters = pr->CurrentVoters_cnt > 0 ? (size_t) pr->CurrentVoters_cnt
                                             : 0;
    res->voters = samsa_arena_calloc(arena, res->nvoters + 1,
                                     sizeof(*res->voters));
    for (i = 0; i < (int32_t) res->nvoters; i++) {
        res->voters[i] = pr->CurrentVoters[i].ReplicaId;
    }
    qsort(res->voters, res->nvoters, sizeof(*res->voters), admin_cmp_i32);
    *resultp = res;
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_admin_describe_quorum(samsa_admin_t *a, int64_t timeout_ms,
                            samsa_quorum_info_t **resultp)
{
    samsa_arena_t  scratch = SAMSA_ARENA_INIT;
    int64_t        deadline;
    samsa_err_t    err;

    *resultp = NULL;
    deadline = samsa_admin_deadline(a, timeout_ms);
    pthread_mutex_lock(&a->lock);
    err = admin_describe_quorum(a, deadline, &scratch, resultp);
    pthread_mutex_unlock(&a->lock);
    samsa_arena_fini(&scratch);
    return err;
}
