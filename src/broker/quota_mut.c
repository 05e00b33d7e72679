/*
 * broker/quota_mut.c - see quota_mut.h.  Two chained hash tables under the
 * manager's mutex, as broker/quota.c keeps its own: client ids (each
 * caching the image offset its quota was resolved at, the quota and the
 * sensor) and sensors (by the level's user and client-id tags).  Neither is
 * pruned: Kafka expires a sensor idle for an hour, we keep it.
 */
#include "broker/quota_mut.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "broker/quota.h"
#include "meta/image.h"
#include "util/alloc.h"
#include "util/qrate.h"
#include "util/tbucket.h"
#include "util/time.h"

#define MUTQUOTA_BUCKETS  256
#define MUTQUOTA_KEY      "controller_mutation_rate"

struct samsa_mutquota_sensor {
    struct samsa_mutquota_sensor *next; /* [mgr lock] chain */
    char                 *user;         /* [const] tag, "" if none */
    char                 *client;       /* [const] tag, "" if none */
    pthread_mutex_t       lock;
    samsa_tbucket_t       bucket;       /* [lock] */
    samsa_qrate_t         rate;         /* [lock] mutations recorded */
    double                bound;        /* [lock] last quota applied */
    uint64_t              throttled;    /* [lock] */
    uint64_t              throttle_ms;  /* [lock] */
};

typedef struct mutquota_client {
    struct mutquota_client   *next;
    char                     *id;       /* "" for a null client id */
    int64_t                   offset;   /* -2: unresolved */
    double                    bound;
    samsa_mutquota_sensor_t  *sensor;
} mutquota_client_t;

struct samsa_mutquota_mgr {
    samsa_meta_t             *meta;     /* [const] */
    int                       samples;  /* [const] */
    int64_t                   window_ms;   /* [const] */
    pthread_mutex_t           lock;     /* guards everything below */
    mutquota_client_t        *clients[MUTQUOTA_BUCKETS];
    samsa_mutquota_sensor_t  *sensors[MUTQUOTA_BUCKETS];
    int64_t                   any_offset;  /* image offset `any` is for */
    bool                      any;      /* the image sets the key */
    _Atomic int64_t           none_at;  /* [atomic] (offset + 1) of an
                                           image known to set no
                                           controller_mutation_rate, or -1:
                                           the lock-free fast path */
};

samsa_mutquota_mgr_t *
samsa_mutquota_mgr_new(samsa_meta_t *meta, int samples, int window_s)
{
    samsa_mutquota_mgr_t  *q = samsa_calloc(1, sizeof(*q));

    q->meta = meta;
    q->samples = samples;
    q->window_ms = (int64_t) window_s * 1000;
    q->any_offset = -2;
    atomic_init(&q->none_at, -1);
    pthread_mutex_init(&q->lock, NULL);
    return q;
}

void
samsa_mutquota_mgr_free(samsa_mutquota_mgr_t *q)
{
    mutquota_client_t        *c, *cn;
    samsa_mutquota_sensor_t  *s, *sn;
    size_t                    i;

    if (q == NULL) {
        return;
    }
    for (i = 0; i < MUTQUOTA_BUCKETS; i++) {
        for (c = q->clients[i]; c != NULL; c = cn) {
            cn = c->next;
            samsa_free(c->id);
            samsa_free(c);
        }
        for (s = q->sensors[i]; s != NULL; s = sn) {
            sn = s->next;
            pthread_mutex_destroy(&s->lock);
            samsa_free(s->user);
            samsa_free(s->client);
            samsa_free(s);
        }
    }
    pthread_mutex_destroy(&q->lock);
    samsa_free(q);
}

static uint32_t
mutquota_hash(const char *a, size_t alen, const char *b)
{
    uint32_t  h = 2166136261u;
    size_t    i;

    for (i = 0; i < alen; i++) {
        h = (h ^ (uint8_t) a[i]) * 16777619u;
    }
    h = (h ^ 0xffu) * 16777619u;        /* separates ("ab","") from
                                           ("a","b") */
    for (; b != NULL && *b != '\0'; b++) {
        h = (h ^ (uint8_t) *b) * 16777619u;
    }
    return h % MUTQUOTA_BUCKETS;
}

/* @locks q->lock held */
static mutquota_client_t *
mutquota_client_get(samsa_mutquota_mgr_t *q, samsa_slice_t id)
{
    const char         *p = id.ptr != NULL ? id.ptr : "";
    uint32_t            h = mutquota_hash(p, id.len, NULL);
    mutquota_client_t  *c;

    for (c = q->clients[h]; c != NULL; c = c->next) {
        if (strlen(c->id) == id.len && memcmp(c->id, p, id.len) == 0) {
            return c;
        }
    }
    c = samsa_calloc(1, sizeof(*c));
    c->id = samsa_calloc(1, id.len + 1);
    memcpy(c->id, p, id.len);
    c->offset = -2;
    c->next = q->clients[h];
    q->clients[h] = c;
    return c;
}

/* @locks q->lock held */
static samsa_mutquota_sensor_t *
mutquota_sensor_get(samsa_mutquota_mgr_t *q, const char *user,
                    const char *client)
{
    uint32_t                  h = mutquota_hash(user, strlen(user), client);
    samsa_mutquota_sensor_t  *s;

    for (s = q->sensors[h]; s != NULL; s = s->next) {
        if (strcmp(s->user, user) == 0 && strcmp(s->client, client) == 0) {
            return s;
        }
    }
    s = samsa_calloc(1, sizeof(*s));
    s->user = samsa_strdup(user);
    s->client = samsa_strdup(client);
    pthread_mutex_init(&s->lock, NULL);
    samsa_tbucket_init(&s->bucket);
    samsa_qrate_init(&s->rate, q->samples, q->window_ms);
    s->next = q->sensors[h];
    q->sensors[h] = s;
    return s;
}

/* Does img set controller_mutation_rate for any entity?  @locks q->lock
 * held */
static bool
mutquota_any(samsa_mutquota_mgr_t *q, const samsa_image_t *img)
{
    const samsa_image_config_t  *cf;
    const char                  *name;
    size_t                       i, j, n, cnt;
    int8_t                       type;

    if (q->any_offset == samsa_image_offset(img)) {
        return q->any;
    }
    q->any = false;
    cnt = samsa_image_resource_count(img);
    for (i = 0; i < cnt && !q->any; i++) {
        cf = samsa_image_resource_at(img, i, &type, &name, &n);
        for (j = 0; type == SAMSA_IMAGE_RESOURCE_CLIENT_QUOTA && j < n; j++) {
            if (strcmp(cf[j].name, MUTQUOTA_KEY) == 0) {
                q->any = true;
                break;
            }
        }
    }
    q->any_offset = samsa_image_offset(img);
    atomic_store_explicit(&q->none_at, q->any ? -1 : q->any_offset + 1,
                          memory_order_relaxed);
    return q->any;
}

static bool
mutquota_apply(void *ctx, int32_t partitions)
{
    return samsa_mutquota_record(ctx, (double) partitions, samsa_now_ms());
}

void
samsa_mutquota_begin(samsa_mutquota_mgr_t *q, samsa_mutquota_t *mq,
                     samsa_slice_t client_id, bool strict)
{
    samsa_image_t      *img = samsa_meta_image_get(q->meta);
    mutquota_client_t  *c;
    const char         *utag, *ctag;

    memset(mq, 0, sizeof(*mq));
    mq->mgr = q;
    mq->strict = strict;
    mq->ctl.apply = mutquota_apply;
    mq->ctl.ctx = mq;
    if (atomic_load_explicit(&q->none_at, memory_order_relaxed)
        == samsa_image_offset(img) + 1) {
        samsa_image_put(img);
        return;
    }
    pthread_mutex_lock(&q->lock);
    if (mutquota_any(q, img)) {
        c = mutquota_client_get(q, client_id);
        if (c->offset != samsa_image_offset(img)) {
            c->bound = samsa_quota_resolve_key(img, MUTQUOTA_KEY, c->id,
                                               &utag, &ctag);
            c->sensor = c->bound > 0.0 ? mutquota_sensor_get(q, utag, ctag)
                                       : NULL;
            c->offset = samsa_image_offset(img);
        }
        mq->sensor = c->sensor;
        mq->bound = c->bound;
    }
    pthread_mutex_unlock(&q->lock);
    samsa_image_put(img);
}

const samsa_controller_quota_t *
samsa_mutquota_ctl(samsa_mutquota_t *mq)
{
    return mq->sensor != NULL ? &mq->ctl : NULL;
}

bool
samsa_mutquota_record(samsa_mutquota_t *mq, double permits, int64_t now_ms)
{
    samsa_mutquota_sensor_t  *s = mq->sensor;
    double                    burst, tokens;
    bool                      ok = true;

    if (s == NULL) {
        return true;
    }
    burst = samsa_tbucket_burst(mq->bound, mq->mgr->samples,
                                mq->mgr->window_ms);
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
samsa_mutquota_end(samsa_mutquota_t *mq, int64_t now_ms)
{
    samsa_mutquota_sensor_t  *s = mq->sensor;
    int64_t                   ms;

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
samsa_mutquota_snapshot(samsa_mutquota_mgr_t *q, int64_t now_ms,
                        void (*fn)(void *ctx, const samsa_mutquota_stat_t *s),
                        void *ctx)
{
    samsa_mutquota_stat_t     st;
    samsa_mutquota_sensor_t  *s;
    size_t                    i;

    pthread_mutex_lock(&q->lock);
    for (i = 0; i < MUTQUOTA_BUCKETS; i++) {
        for (s = q->sensors[i]; s != NULL; s = s->next) {
            pthread_mutex_lock(&s->lock);
            st = (samsa_mutquota_stat_t) {
                .user = s->user, .client_id = s->client,
                .rate = samsa_qrate_measure(&s->rate, now_ms),
                .tokens = s->bound > 0.0
                              ? samsa_tbucket_measure(
                                    &s->bucket, s->bound,
                                    samsa_tbucket_burst(s->bound, q->samples,
                                                        q->window_ms),
                                    now_ms)
                              : 0.0,
                .quota = s->bound, .throttle_time_ms = s->throttle_ms,
                .throttled = s->throttled,
            };
            pthread_mutex_unlock(&s->lock);
            fn(ctx, &st);
        }
    }
    pthread_mutex_unlock(&q->lock);
}
