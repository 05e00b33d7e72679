/*
 * broker/quota.c - see quota.h.  Two hash maps (util/map.h) under the
 * manager's mutex: client ids (each caching, per quota type, the image
 * offset its quota was resolved at, the bound and the sensor) and sensors
 * (by type and the level's user and client-id tags).  A sensor's stat is
 * its sampled rate for Produce, Fetch and Request and its token bucket
 * for Mutation (whose rate is the mutation-rate metric only).  Neither
 * table is pruned: Kafka expires a sensor idle for an hour, we keep it
 * (one per distinct user and client id that talked to us while its type
 * was enabled).
 */
#include "broker/quota.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "util/qrate.h"
#include "meta/image.h"
#include "meta/qentity.h"
#include "net/server/reqchan.h"
#include "util/alloc.h"
#include "util/arena.h"
#include "util/diag.h"
#include "util/map.h"
#include "util/tbucket.h"
#include "util/time.h"

struct samsa_quota_sensor {
    samsa_map_node_t      node;         /* [mgr lock] in sensors */
    samsa_quota_type_t    type;         /* [const] */
    char                 *user;         /* [const] tag, "" if none */
    char                 *client;       /* [const] tag, "" if none */
    pthread_mutex_t       lock;
    samsa_qrate_t         rate;         /* [lock] the stat; Mutation: the
                                           mutations recorded (metric) */
    samsa_tbucket_t       bucket;       /* [lock] Mutation: the stat */
    double                bound;        /* [lock] last quota applied */
    uint64_t              throttled;    /* [lock] */
    uint64_t              throttle_ms;  /* [lock] */
};

typedef struct quota_client {
    samsa_map_node_t      node;         /* in clients */
    char                 *user;         /* the principal's name */
    char                 *id;           /* "" for a null client id */
    int64_t               offset[SAMSA_QUOTA__NTYPES];  /* -2: unresolved */
    double                bound[SAMSA_QUOTA__NTYPES];
    samsa_quota_sensor_t *sensor[SAMSA_QUOTA__NTYPES];
} quota_client_t;

struct samsa_quota_mgr {
    samsa_meta_t     *meta;             /* [const] */
    int               samples[SAMSA_QUOTA__NTYPES];     /* [const] */
    int64_t           window_ms[SAMSA_QUOTA__NTYPES];   /* [const] */
    pthread_mutex_t   lock;             /* guards everything below */
    samsa_map_t       clients;          /* quota_client_t by user and
                                           client id */
    samsa_map_t       sensors;          /* by type, user and client */
    int64_t           any_offset;       /* image offset `any` is for */
    bool              any[SAMSA_QUOTA__NTYPES];  /* the image sets the
                                                    type's key */
    _Atomic int64_t   none_at[SAMSA_QUOTA__NTYPES];  /* [atomic]
                                           (offset + 1) of an image known
                                           to set none of the type's key,
                                           or -1: the lock-free fast path
                                           of every request while the type
                                           is not enabled */
};

/* Each type's quota key and Kafka's QuotaType name. */
static const struct {
    const char  *key, *name;
} quota_types[SAMSA_QUOTA__NTYPES] = {
    { "producer_byte_rate", "Produce" },
    { "consumer_byte_rate", "Fetch" },
    { "request_percentage", "Request" },
    { "controller_mutation_rate", "ControllerMutation" },
};

const char *
samsa_quota_type_name(samsa_quota_type_t type)
{
    return (unsigned) type < SAMSA_QUOTA__NTYPES ? quota_types[type].name
                                                 : "?";
}

/* The key of a client (user and the len bytes at p) or a sensor (type,
 * user and client). */
typedef struct quota_key {
    const char          *p;
    size_t               len;
    samsa_quota_type_t   type;
    const char          *user, *client;
} quota_key_t;

static bool
quota_client_eq(const samsa_map_node_t *node, const void *key)
{
    const quota_client_t  *c = SAMSA_MAP_ENTRY(node, quota_client_t, node);
    const quota_key_t     *k = key;

    return strlen(c->id) == k->len && memcmp(c->id, k->p, k->len) == 0
           && strcmp(c->user, k->user) == 0;
}

static bool
quota_sensor_eq(const samsa_map_node_t *node, const void *key)
{
    const samsa_quota_sensor_t  *s = SAMSA_MAP_ENTRY(node,
                                                     samsa_quota_sensor_t,
                                                     node);
    const quota_key_t           *k = key;

    return s->type == k->type && strcmp(s->user, k->user) == 0
           && strcmp(s->client, k->client) == 0;
}

samsa_quota_mgr_t *
samsa_quota_mgr_new(samsa_meta_t *meta, int samples, int window_s,
                    int ctl_samples, int ctl_window_s)
{
    samsa_quota_mgr_t  *q = samsa_calloc(1, sizeof(*q));
    int                 t;

    q->meta = meta;
    for (t = 0; t < SAMSA_QUOTA__NTYPES; t++) {
        q->samples[t] = t == SAMSA_QUOTA_MUTATION ? ctl_samples : samples;
        q->window_ms[t] = (int64_t) (t == SAMSA_QUOTA_MUTATION ? ctl_window_s
                                                               : window_s)
                          * 1000;
        atomic_init(&q->none_at[t], -1);
    }
    q->any_offset = -2;
    samsa_map_init(&q->clients);
    samsa_map_init(&q->sensors);
    pthread_mutex_init(&q->lock, NULL);
    return q;
}

void
samsa_quota_mgr_free(samsa_quota_mgr_t *q)
{
    samsa_map_iter_t       it;
    samsa_map_node_t      *n;
    quota_client_t        *c;
    samsa_quota_sensor_t  *s;

    if (q == NULL) {
        return;
    }
    samsa_map_iter_init(&it, &q->clients);
    while ((n = samsa_map_iter_next(&it)) != NULL) {
        c = SAMSA_MAP_ENTRY(n, quota_client_t, node);
        samsa_free(c->user);
        samsa_free(c->id);
        samsa_free(c);
    }
    samsa_map_iter_init(&it, &q->sensors);
    while ((n = samsa_map_iter_next(&it)) != NULL) {
        s = SAMSA_MAP_ENTRY(n, samsa_quota_sensor_t, node);
        pthread_mutex_destroy(&s->lock);
        samsa_free(s->user);
        samsa_free(s->client);
        samsa_free(s);
    }
    samsa_map_fini(&q->clients);
    samsa_map_fini(&q->sensors);
    pthread_mutex_destroy(&q->lock);
    samsa_free(q);
}

/* @locks q->lock held */
static quota_client_t *
quota_client_get(samsa_quota_mgr_t *q, const char *user, samsa_slice_t id)
{
    quota_key_t        k = { .p = id.ptr != NULL ? id.ptr : "",
                             .len = id.len, .user = user };
    uint64_t           h = samsa_hash_bytes(k.p, k.len,
                                            samsa_hash_str(user, 0));
    samsa_map_node_t  *n = samsa_map_find(&q->clients, h, quota_client_eq,
                                          &k);
    quota_client_t    *c;
    int                t;

    if (n != NULL) {
        return SAMSA_MAP_ENTRY(n, quota_client_t, node);
    }
    c = samsa_calloc(1, sizeof(*c));
    c->user = samsa_strdup(user);
    c->id = samsa_calloc(1, id.len + 1);
    memcpy(c->id, k.p, id.len);
    for (t = 0; t < SAMSA_QUOTA__NTYPES; t++) {
        c->offset[t] = -2;
    }
    samsa_map_insert(&q->clients, &c->node, h);
    return c;
}

/* @locks q->lock held */
static samsa_quota_sensor_t *
quota_sensor_get(samsa_quota_mgr_t *q, samsa_quota_type_t type,
                 const char *user, const char *client)
{
    quota_key_t            k = { .type = type, .user = user,
                                 .client = client };
    uint64_t               h = samsa_hash_str(client, samsa_hash_str(
                                   user, (uint64_t) type));
    samsa_map_node_t      *n = samsa_map_find(&q->sensors, h,
                                              quota_sensor_eq, &k);
    samsa_quota_sensor_t  *s;

    if (n != NULL) {
        return SAMSA_MAP_ENTRY(n, samsa_quota_sensor_t, node);
    }
    s = samsa_calloc(1, sizeof(*s));
    s->type = type;
    s->user = samsa_strdup(user);
    s->client = samsa_strdup(client);
    pthread_mutex_init(&s->lock, NULL);
    samsa_qrate_init(&s->rate, q->samples[type], q->window_ms[type]);
    samsa_tbucket_init(&s->bucket);     /* used by Mutation only */
    samsa_map_insert(&q->sensors, &s->node, h);
    return s;
}

/* Does img set type's key for any entity (Kafka's quotasEnabled of the
 * type's manager)?  One pass over img answers every type and sets their
 * none_at.  @locks q->lock held */
static bool
quota_enabled(samsa_quota_mgr_t *q, const samsa_image_t *img,
              samsa_quota_type_t type)
{
    const samsa_image_config_t  *cf;
    const char                  *name;
    size_t                       i, j, n, cnt;
    int8_t                       rtype;
    int                          t;

    if (q->any_offset == samsa_image_offset(img)) {
        return q->any[type];
    }
    memset(q->any, 0, sizeof(q->any));
    cnt = samsa_image_resource_count(img);
    for (i = 0; i < cnt; i++) {
        cf = samsa_image_resource_at(img, i, &rtype, &name, &n);
        for (j = 0; rtype == SAMSA_IMAGE_RESOURCE_CLIENT_QUOTA && j < n;
             j++) {
            for (t = 0; t < SAMSA_QUOTA__NTYPES; t++) {
                q->any[t] = q->any[t]
                            || strcmp(cf[j].name, quota_types[t].key) == 0;
            }
        }
    }
    q->any_offset = samsa_image_offset(img);
    for (t = 0; t < SAMSA_QUOTA__NTYPES; t++) {
        atomic_store_explicit(&q->none_at[t],
                              q->any[t] ? -1 : q->any_offset + 1,
                              memory_order_relaxed);
    }
    return q->any[type];
}

/* Kafka's eight levels, most specific first: which of user and client-id
 * the entity has (0 none, 1 named, 2 default), and whether the sensor is
 * shared by every client id of the user (no client-id tag). */
static const struct {
    int8_t  user, client;
    bool    user_tag, client_tag;
} quota_levels[8] = {
    { 1, 1, true, true },  { 1, 2, true, true },  { 1, 0, true, false },
    { 2, 1, true, true },  { 2, 2, true, true },  { 2, 0, true, false },
    { 0, 1, false, true }, { 0, 2, false, true },
};

/* The bound key sets for user and client id (0: none) at the most
 * specific level that sets it, and that level's sensor tags (pointing to
 * user, client or a static string). */
static double
quota_resolve(const samsa_image_t *img, const char *key, const char *user,
              const char *client, const char **user_tag,
              const char **client_tag)
{
    samsa_arena_t    arena = SAMSA_ARENA_INIT;
    samsa_qentity_t  e;
    double           v = 0.0;
    size_t           i;

    *user_tag = "";
    *client_tag = client;
    for (i = 0; i < sizeof(quota_levels) / sizeof(quota_levels[0]); i++) {
        memset(&e, 0, sizeof(e));
        if (quota_levels[i].user != 0) {
            e.has[SAMSA_QENTITY_USER] = true;
            if (quota_levels[i].user == 1) {
                e.name[SAMSA_QENTITY_USER] = samsa_slice_cstr(user);
            }
        }
        if (quota_levels[i].client != 0) {
            e.has[SAMSA_QENTITY_CLIENT_ID] = true;
            if (quota_levels[i].client == 1) {
                e.name[SAMSA_QENTITY_CLIENT_ID] = samsa_slice_cstr(client);
            }
        }
        if (samsa_image_client_quota(img, samsa_qentity_key(&e, &arena), key,
                                     &v)) {
            *user_tag = quota_levels[i].user_tag ? user : "";
            *client_tag = quota_levels[i].client_tag ? client : "";
            break;
        }
        v = 0.0;
    }
    samsa_arena_fini(&arena);
    return v;
}

int32_t
samsa_quota_ip_conn_rate(void *meta, const char *ip)
{
    samsa_image_t    *img = samsa_meta_image_get(meta);
    samsa_arena_t     arena = SAMSA_ARENA_INIT;
    samsa_qentity_t   e;
    double            v = 0.0;
    bool              found;

    memset(&e, 0, sizeof(e));
    e.has[SAMSA_QENTITY_IP] = true;
    e.name[SAMSA_QENTITY_IP] = samsa_slice_cstr(ip);
    found = samsa_image_client_quota(img, samsa_qentity_key(&e, &arena),
                                     "connection_creation_rate", &v);
    if (!found) {
        e.name[SAMSA_QENTITY_IP] = (samsa_slice_t) { 0 };
        found = samsa_image_client_quota(img, samsa_qentity_key(&e, &arena),
                                         "connection_creation_rate", &v);
    }
    samsa_arena_fini(&arena);
    samsa_image_put(img);
    if (!found || !(v > 0.0) || v >= (double) INT32_MAX) {
        return INT32_MAX;
    }
    return (int32_t) v;
}

/* The client's sensor under type and its bound, or NULL while the image
 * sets no key of type (one atomic load, no lock, on that path); a Mutation
 * sensor only when a quota applies to the client. */
static samsa_quota_sensor_t *
quota_sensor_for(samsa_quota_mgr_t *q, samsa_quota_type_t type,
                 const char *user, samsa_slice_t client_id, double *bound)
{
    samsa_image_t         *img = samsa_meta_image_get(q->meta);
    quota_client_t        *c;
    samsa_quota_sensor_t  *s = NULL;
    const char            *utag, *ctag;

    if (atomic_load_explicit(&q->none_at[type], memory_order_relaxed)
        == samsa_image_offset(img) + 1) {
        samsa_image_put(img);
        return NULL;
    }
    pthread_mutex_lock(&q->lock);
    if (quota_enabled(q, img, type)) {
        c = quota_client_get(q, user != NULL ? user : SAMSA_QUOTA_ANONYMOUS,
                             client_id);
        if (c->offset[type] != samsa_image_offset(img)) {
            c->bound[type] = quota_resolve(img, quota_types[type].key,
                                           c->user, c->id, &utag, &ctag);
            c->sensor[type] = type != SAMSA_QUOTA_MUTATION
                                      || c->bound[type] > 0.0
                                  ? quota_sensor_get(q, type, utag, ctag)
                                  : NULL;
            c->offset[type] = samsa_image_offset(img);
        }
        s = c->sensor[type];
        *bound = c->bound[type];
    }
    pthread_mutex_unlock(&q->lock);
    samsa_image_put(img);
    return s;
}

bool
samsa_quota_enabled(samsa_quota_mgr_t *q, samsa_quota_type_t type)
{
    samsa_image_t  *img = samsa_meta_image_get(q->meta);
    bool            on = false;

    if (atomic_load_explicit(&q->none_at[type], memory_order_relaxed)
        != samsa_image_offset(img) + 1) {
        pthread_mutex_lock(&q->lock);
        on = quota_enabled(q, img, type);
        pthread_mutex_unlock(&q->lock);
    }
    samsa_image_put(img);
    return on;
}

/* Record value for the client under type (a sampled-rate type) at now_ms
 * and return the throttle time it earned, capped at one window for
 * Request as Kafka caps only request-time throttles; throttle false
 * records only (Kafka's recordNoThrottle) and returns 0.  *enabled (when
 * not NULL) tells whether the type is enabled.  @locks q->lock, then the
 * sensor's, each taken here */
static int32_t
quota_record(samsa_quota_mgr_t *q, samsa_quota_type_t type,
             const char *user, samsa_slice_t client_id, double value,
             bool throttle, int64_t now_ms, bool *enabled)
{
    samsa_quota_sensor_t  *s;
    double                 bound = 0.0;
    int64_t                ms = 0;

    samsa_assert(type != SAMSA_QUOTA_MUTATION);
    s = quota_sensor_for(q, type, user, client_id, &bound);
    if (enabled != NULL) {
        *enabled = s != NULL;
    }
    if (s == NULL) {
        return 0;
    }
    pthread_mutex_lock(&s->lock);
    s->bound = bound;
    if (!throttle) {
        samsa_qrate_record(&s->rate, value, now_ms);
    } else {
        ms = samsa_qrate_record_throttle(
            &s->rate, value, bound,
            type == SAMSA_QUOTA_REQUEST ? q->window_ms[type] : 0, now_ms);
    }
    if (ms > 0) {
        s->throttled++;
        s->throttle_ms += (uint64_t) ms;
    }
    pthread_mutex_unlock(&s->lock);
    return ms > INT32_MAX ? INT32_MAX : (int32_t) ms;
}

const char *
samsa_quota_user(const char *principal)
{
    const char  *colon = principal != NULL ? strchr(principal, ':') : NULL;

    return colon != NULL ? colon + 1 : SAMSA_QUOTA_ANONYMOUS;
}

int32_t
samsa_quota_record(samsa_quota_mgr_t *q, samsa_quota_type_t type,
                   const char *user, samsa_slice_t client_id, double value,
                   int64_t now_ms)
{
    return quota_record(q, type, user, client_id, value, true, now_ms, NULL);
}

void
samsa_quota_unrecord(samsa_quota_mgr_t *q, samsa_quota_type_t type,
                     const char *user, samsa_slice_t client_id, double value,
                     int64_t now_ms)
{
    (void) quota_record(q, type, user, client_id, -value, false, now_ms,
                        NULL);
}

int64_t
samsa_quota_max_in_window(samsa_quota_mgr_t *q, samsa_quota_type_t type,
                          const char *user, samsa_slice_t client_id)
{
    double  bound = 0.0, max;

    samsa_assert(type != SAMSA_QUOTA_MUTATION);
    if (quota_sensor_for(q, type, user, client_id, &bound) == NULL
        || !(bound > 0.0)) {
        return INT64_MAX;
    }
    max = bound * (double) (q->samples[type] - 1)
          * (double) (q->window_ms[type] / 1000);
    return max >= (double) INT64_MAX ? INT64_MAX : (int64_t) max;
}

/* Kafka's nanosToPercentage: 100 is one thread busy for one second. */
static double
quota_percentage(int64_t ns)
{
    return ns > 0 ? (double) ns * 100.0 / 1e9 : 0.0;
}

int32_t
samsa_quota_record_request(samsa_quota_mgr_t *q, samsa_req_t *req)
{
    samsa_req_mark_local_done(req);
    req->request_quota_done = true;
    return quota_record(q, SAMSA_QUOTA_REQUEST,
                        samsa_quota_user(req->principal), req->hdr.ClientId,
                        quota_percentage(req->local_done_ns
                                         - req->dequeue_ns),
                        true, samsa_now_ms(), &req->request_quota_net);
}

void
samsa_quota_record_request_net(samsa_quota_mgr_t *q, const samsa_req_t *req,
                               int64_t ns)
{
    (void) quota_record(q, SAMSA_QUOTA_REQUEST,
                        samsa_quota_user(req->principal), req->hdr.ClientId,
                        quota_percentage(ns), false, samsa_now_ms(), NULL);
}

/* The controller's samsa_controller_quota_t.apply: charge now. */
static bool
quota_mutation_apply(void *ctx, int32_t partitions)
{
    return samsa_quota_mutation_record(ctx, (double) partitions,
                                       samsa_now_ms());
}

void
samsa_quota_mutation_begin(samsa_quota_mgr_t *q, samsa_quota_mutation_t *mq,
                           const char *user, samsa_slice_t client_id,
                           bool strict)
{
    memset(mq, 0, sizeof(*mq));
    mq->mgr = q;
    mq->strict = strict;
    mq->ctl.apply = quota_mutation_apply;
    mq->ctl.ctx = mq;
    mq->sensor = quota_sensor_for(q, SAMSA_QUOTA_MUTATION, user, client_id,
                                  &mq->bound);
}

const samsa_controller_quota_t *
samsa_quota_mutation_ctl(samsa_quota_mutation_t *mq)
{
    return mq->sensor != NULL ? &mq->ctl : NULL;
}

/* The burst of a Mutation sensor whose quota is bound. */
static double
quota_mutation_burst(const samsa_quota_mgr_t *q, double bound)
{
    return samsa_tbucket_burst(bound, q->samples[SAMSA_QUOTA_MUTATION],
                               q->window_ms[SAMSA_QUOTA_MUTATION]);
}

bool
samsa_quota_mutation_record(samsa_quota_mutation_t *mq, double permits,
                            int64_t now_ms)
{
    samsa_quota_sensor_t  *s = mq->sensor;
    double                 burst, tokens;
    bool                   ok = true;

    if (s == NULL) {
        return true;
    }
    burst = quota_mutation_burst(mq->mgr, mq->bound);
    pthread_mutex_lock(&s->lock);
    s->bound = mq->bound;
    if (mq->strict) {
        /* Kafka's checkQuotas, then record without checking: a charge is
         * refused only when the bucket is already below zero */
        tokens = samsa_tbucket_measure(&s->bucket, mq->bound, burst, now_ms);
        if (tokens < 0.0) {
            ok = false;
            mq->throttle_ms = samsa_tbucket_throttle_ms(tokens, mq->bound);
            mq->throttle_at = now_ms;
        }
    }
    if (ok) {
        samsa_tbucket_record(&s->bucket, permits, mq->bound, burst, now_ms);
        samsa_qrate_record(&s->rate, permits, now_ms);
        tokens = s->bucket.tokens;
        if (!mq->strict && tokens < 0.0) {     /* record, then check */
            mq->throttle_ms = samsa_tbucket_throttle_ms(tokens, mq->bound);
            mq->throttle_at = now_ms;
        }
    }
    pthread_mutex_unlock(&s->lock);
    return ok;
}

int32_t
samsa_quota_mutation_end(samsa_quota_mutation_t *mq, int64_t now_ms)
{
    samsa_quota_sensor_t  *s = mq->sensor;
    int64_t                ms;

    if (s == NULL || mq->throttle_ms <= 0) {
        return 0;
    }
    ms = mq->throttle_ms - (now_ms - mq->throttle_at);
    if (ms <= 0) {
        return 0;
    }
    if (ms > INT32_MAX) {
        ms = INT32_MAX;
    }
    pthread_mutex_lock(&s->lock);
    s->throttled++;
    s->throttle_ms += (uint64_t) ms;
    pthread_mutex_unlock(&s->lock);
    return (int32_t) ms;
}

void
samsa_quota_snapshot(samsa_quota_mgr_t *q, int64_t now_ms,
                     void (*fn)(void *ctx, const samsa_quota_stat_t *s),
                     void *ctx)
{
    samsa_quota_stat_t     st;
    samsa_quota_sensor_t  *s;
    samsa_map_iter_t       it;
    samsa_map_node_t      *n;

    pthread_mutex_lock(&q->lock);
    samsa_map_iter_init(&it, &q->sensors);
    while ((n = samsa_map_iter_next(&it)) != NULL) {
        s = SAMSA_MAP_ENTRY(n, samsa_quota_sensor_t, node);
        pthread_mutex_lock(&s->lock);
        st = (samsa_quota_stat_t) {
            .type = s->type, .user = s->user, .client_id = s->client,
            .rate = samsa_qrate_measure(&s->rate, now_ms),
            .quota = s->bound, .throttle_time_ms = s->throttle_ms,
            .throttled = s->throttled,
        };
        if (s->type == SAMSA_QUOTA_MUTATION && s->bound > 0.0) {
            st.tokens = samsa_tbucket_measure(
                &s->bucket, s->bound, quota_mutation_burst(q, s->bound),
                now_ms);
        }
        pthread_mutex_unlock(&s->lock);
        fn(ctx, &st);
    }
    pthread_mutex_unlock(&q->lock);
}
