/*
 * client/mdcache.c - the client's metadata cache (see mdcache.h).
 * Threads: [lock] fields under mdc->lock; snapshots are immutable.
 */
#include "client/mdcache.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "proto/gen/apis.h"
#include "util/alloc.h"
#include "util/arena.h"
#include "util/slice.h"
#include "util/time.h"
#include "util/locked.h"

typedef struct md_entry {
    char             *name;
    samsa_mdtopic_t  *md;           /* NULL until the first answer */
} md_entry_t;

struct samsa_mdcache {
    pthread_mutex_t   lock;
    pthread_cond_t    cond;         /* an update came */
    samsa_mdcache_mode_t  mode;     /* [const] */
    int64_t           max_age_ms;   /* [const] */
    void            (*wake)(void *ctx);     /* [const] */
    void             *wake_ctx;     /* [const] */
    md_entry_t       *topics;       /* [lock] */
    int32_t           ntopics;      /* [lock] */
    bool              need_update;  /* [lock] */
    bool              closed;       /* [lock] */
    samsa_err_t       fatal;        /* [lock] waits fail with it (an
                                       authentication failure) */
    int64_t           last_update_ms;   /* [lock] */
    uint64_t          gen;          /* [lock] */
    samsa_mdbroker_t *brokers;      /* [lock] */
    int32_t           nbrokers;     /* [lock] */
    int32_t           controller_id;    /* [lock] -1 unknown */
    char             *cluster_id;   /* [lock] NULL unknown */
};

samsa_mdcache_t *
samsa_mdcache_new(samsa_mdcache_mode_t mode, int64_t max_age_ms,
                  void (*wake)(void *ctx), void *wake_ctx)
{
    samsa_mdcache_t     *mdc = samsa_calloc(1, sizeof(*mdc));
    pthread_condattr_t   attr;

    pthread_mutex_init(&mdc->lock, NULL);
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&mdc->cond, &attr);
    pthread_condattr_destroy(&attr);
    mdc->mode = mode;
    mdc->max_age_ms = max_age_ms;
    mdc->controller_id = -1;
    mdc->wake = wake;
    mdc->wake_ctx = wake_ctx;
    mdc->need_update = true;
    return mdc;
}

void
samsa_mdtopic_unref(samsa_mdtopic_t *t)
{
    if (t == NULL
        || atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) > 1) {
        return;
    }
    samsa_free(t->name);
    samsa_free(t->leaders);
    samsa_free(t->avail);
    samsa_free(t);
}

void
samsa_mdcache_free(samsa_mdcache_t *mdc)
{
    int32_t  i;

    if (mdc == NULL) {
        return;
    }
    for (i = 0; i < mdc->ntopics; i++) {
        samsa_free(mdc->topics[i].name);
        samsa_mdtopic_unref(mdc->topics[i].md);
    }
    samsa_free(mdc->topics);
    samsa_mdcache_brokers_free(mdc->brokers, mdc->nbrokers);
    samsa_free(mdc->cluster_id);
    pthread_cond_destroy(&mdc->cond);
    pthread_mutex_destroy(&mdc->lock);
    samsa_free(mdc);
}

/* @locks mdc->lock held */
static md_entry_t *
md_find(samsa_mdcache_t *mdc, const char *name, size_t len)
{
    int32_t  i;

    for (i = 0; i < mdc->ntopics; i++) {
        if (strlen(mdc->topics[i].name) == len
            && memcmp(mdc->topics[i].name, name, len) == 0) {
            return &mdc->topics[i];
        }
    }
    return NULL;
}

/* Partition indexes beyond this are ignored (a hostile answer). */
#define MD_MAX_PARTITIONS  1000000

/* Errors worth waiting out (the topic may be being created). */
static bool
md_retriable(samsa_err_t err)
{
    return err == SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION
           || err == SAMSA_ERR_LEADER_NOT_AVAILABLE
           || err == SAMSA_ERR_NONE;
}

void
samsa_mdcache_set_error(samsa_mdcache_t *mdc, samsa_err_t err)
{
    pthread_mutex_lock(&mdc->lock);
    mdc->fatal = err;
    pthread_cond_broadcast(&mdc->cond);
    pthread_mutex_unlock(&mdc->lock);
}

samsa_err_t
samsa_mdcache_wait(samsa_mdcache_t *mdc, const char *topic,
                   int32_t partition, int64_t max_wait_ms,
                   samsa_mdtopic_t **out)
{
    struct timespec   deadline;
    md_entry_t       *e;
    samsa_mdtopic_t  *md;
    samsa_err_t       err = SAMSA_ERR__TIMED_OUT;
    bool              woke = false;
    bool              known;

    *out = NULL;
    deadline = samsa_timespec_after(CLOCK_MONOTONIC, max_wait_ms);
    pthread_mutex_lock(&mdc->lock);
    for (;;) {
        if (mdc->closed) {
            err = SAMSA_ERR__SHUTDOWN;
            break;
        }
        if (mdc->fatal != SAMSA_ERR_NONE) {
            err = mdc->fatal;
            break;
        }
        e = md_find(mdc, topic, strlen(topic));
        md = e != NULL ? e->md : NULL;
        if (md != NULL && md->err == SAMSA_ERR_NONE && md->npartitions > 0
            && partition < md->npartitions) {
            atomic_fetch_add_explicit(&md->refs, 1, memory_order_relaxed);
            *out = md;
            err = SAMSA_ERR_NONE;
            break;
        }
        if (md != NULL && !md_retriable(md->err)) {
            err = md->err;
            break;
        }
        if (e == NULL) {
            mdc->topics = samsa_realloc(mdc->topics,
                                        (size_t) (mdc->ntopics + 1)
                                            * sizeof(*mdc->topics));
            mdc->topics[mdc->ntopics++] = (md_entry_t) {
                samsa_strdup(topic), NULL };
        }
        if (!woke) {
            mdc->need_update = true;
            pthread_mutex_unlock(&mdc->lock);
            if (mdc->wake != NULL) {
                mdc->wake(mdc->wake_ctx);
            }
            pthread_mutex_lock(&mdc->lock);
            woke = true;
            continue;
        }
        if (pthread_cond_timedwait(&mdc->cond, &mdc->lock, &deadline) != 0) {
            break;
        }
        woke = false;                   /* an update came; ask again */
    }
    /* looked up again: md may have been replaced (and freed) by an update
     * while pthread_cond_timedwait() had the lock released */
    e = md_find(mdc, topic, strlen(topic));
    known = e != NULL && e->md != NULL && e->md->npartitions > 0;
    pthread_mutex_unlock(&mdc->lock);
    if (err == SAMSA_ERR__TIMED_OUT && partition >= 0 && known) {
        err = SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION;
    }
    return err;
}

void
samsa_mdcache_close(samsa_mdcache_t *mdc)
{
    pthread_mutex_lock(&mdc->lock);
    mdc->closed = true;
    pthread_cond_broadcast(&mdc->cond);
    pthread_mutex_unlock(&mdc->lock);
}

void
samsa_mdcache_request_update(samsa_mdcache_t *mdc)
{
    pthread_mutex_lock(&mdc->lock);
    mdc->need_update = true;
    pthread_mutex_unlock(&mdc->lock);
}

bool
samsa_mdcache_update_requested(samsa_mdcache_t *mdc)
{
    return SAMSA_LOCKED_READ(&mdc->lock, mdc->need_update);
}

bool
samsa_mdcache_update_due(samsa_mdcache_t *mdc, int64_t now_ms,
                         int64_t *next_ms)
{
    bool     due, none;
    int64_t  age;

    pthread_mutex_lock(&mdc->lock);
    none = mdc->mode == SAMSA_MDCACHE_ASKED && mdc->ntopics == 0;
    age = now_ms - mdc->last_update_ms;
    due = (mdc->need_update || age >= mdc->max_age_ms) && !none;
    *next_ms = due ? 0 : mdc->max_age_ms - age;
    if (none) {
        *next_ms = INT64_MAX;
    }
    pthread_mutex_unlock(&mdc->lock);
    return due;
}

void
samsa_mdcache_update_sent(samsa_mdcache_t *mdc)
{
    pthread_mutex_lock(&mdc->lock);
    mdc->need_update = false;
    pthread_mutex_unlock(&mdc->lock);
}

char **
samsa_mdcache_topics(samsa_mdcache_t *mdc, int32_t *n)
{
    char    **out;
    int32_t   i;

    pthread_mutex_lock(&mdc->lock);
    out = samsa_calloc((size_t) mdc->ntopics + 1, sizeof(char *));
    for (i = 0; i < mdc->ntopics; i++) {
        out[i] = samsa_strdup(mdc->topics[i].name);
    }
    *n = mdc->ntopics;
    pthread_mutex_unlock(&mdc->lock);
    return out;
}

void
samsa_mdcache_topics_free(char **topics)
{
    char  **p;

    for (p = topics; p != NULL && *p != NULL; p++) {
        samsa_free(*p);
    }
    samsa_free(topics);
}

static samsa_mdtopic_t *
md_snapshot(const samsa_MetadataResponseTopic_t *t)
{
    samsa_mdtopic_t  *md = samsa_calloc(1, sizeof(*md));
    int32_t           i, p, max = -1;

    atomic_init(&md->refs, 1);
    md->name = samsa_slice_dup(t->Name);
    md->err = (samsa_err_t) t->ErrorCode;
    md->internal = t->IsInternal;
    md->id = t->TopicId;
    for (i = 0; i < t->Partitions_cnt; i++) {
        if (t->Partitions[i].PartitionIndex > max
            && t->Partitions[i].PartitionIndex < MD_MAX_PARTITIONS) {
            max = t->Partitions[i].PartitionIndex;
        }
    }
    md->npartitions = max + 1;
    md->leaders = samsa_calloc((size_t) md->npartitions + 1, sizeof(int32_t));
    md->avail = samsa_calloc((size_t) md->npartitions + 1, sizeof(int32_t));
    for (p = 0; p < md->npartitions; p++) {
        md->leaders[p] = -1;
    }
    for (i = 0; i < t->Partitions_cnt; i++) {
        p = t->Partitions[i].PartitionIndex;
        if (p >= 0 && p < md->npartitions) {
            md->leaders[p] = t->Partitions[i].LeaderId;
        }
    }
    for (p = 0; p < md->npartitions; p++) {
        if (md->leaders[p] >= 0) {
            md->avail[md->navail++] = p;
        }
    }
    return md;
}

/* Does t's error make the cache ask again soon?  @locks mdc->lock */
static bool
md_err_retry(const samsa_mdcache_t *mdc, samsa_err_t err)
{
    if (mdc->mode == SAMSA_MDCACHE_ASKED) {
        return err != SAMSA_ERR_NONE;   /* keep asking while it is not
                                           there (auto-creation) */
    }
    return err == SAMSA_ERR_LEADER_NOT_AVAILABLE;
}

/* @locks mdc->lock held */
static void
md_cluster_set(samsa_mdcache_t *mdc, const samsa_MetadataResponse_t *resp)
{
    int32_t  i;

    samsa_mdcache_brokers_free(mdc->brokers, mdc->nbrokers);
    mdc->brokers = samsa_calloc((size_t) resp->Brokers_cnt + 1,
                                sizeof(*mdc->brokers));
    for (i = 0; i < resp->Brokers_cnt; i++) {
        const samsa_MetadataResponseBroker_t  *b = &resp->Brokers[i];

        mdc->brokers[i].node_id = b->NodeId;
        mdc->brokers[i].host = samsa_slice_dup(b->Host);
        mdc->brokers[i].port = b->Port;
        mdc->brokers[i].rack = b->Rack.ptr != NULL ? samsa_slice_dup(b->Rack)
                                                   : NULL;
    }
    mdc->nbrokers = resp->Brokers_cnt;
    mdc->controller_id = resp->ControllerId;
    samsa_free(mdc->cluster_id);
    mdc->cluster_id = resp->ClusterId.ptr != NULL
                          ? samsa_slice_dup(resp->ClusterId) : NULL;
}

void
samsa_mdcache_update(samsa_mdcache_t *mdc,
                     const samsa_MetadataResponse_t *resp, int64_t now_ms)
{
    const samsa_MetadataResponseTopic_t  *t;
    md_entry_t                           *e;
    int32_t                               i;

    pthread_mutex_lock(&mdc->lock);
    md_cluster_set(mdc, resp);
    for (i = 0; i < resp->Topics_cnt; i++) {
        t = &resp->Topics[i];
        if (t->Name.ptr == NULL) {
            continue;
        }
        e = md_find(mdc, t->Name.ptr, t->Name.len);
        if (e == NULL && mdc->mode == SAMSA_MDCACHE_ANSWERED) {
            mdc->topics = samsa_realloc(mdc->topics,
                                        (size_t) (mdc->ntopics + 1)
                                            * sizeof(*mdc->topics));
            e = &mdc->topics[mdc->ntopics++];
            *e = (md_entry_t) { samsa_slice_dup(t->Name), NULL };
        }
        if (e == NULL) {
            continue;
        }
        if (md_err_retry(mdc, (samsa_err_t) t->ErrorCode)) {
            mdc->need_update = true;
        }
        samsa_mdtopic_unref(e->md);
        e->md = md_snapshot(t);
        if (e->md->navail < e->md->npartitions) {
            mdc->need_update = true;
        }
    }
    mdc->last_update_ms = now_ms;
    mdc->gen++;
    pthread_cond_broadcast(&mdc->cond);
    pthread_mutex_unlock(&mdc->lock);
}

samsa_mdcache_send_t
samsa_mdcache_send(samsa_mdcache_t *mdc, samsa_netclient_t *nc,
                   const char *const *names, int32_t n,
                   bool allow_auto_create, samsa_nc_resp_fn *cb, void *ctx,
                   int64_t now)
{
    samsa_MetadataRequest_t        req;
    samsa_MetadataRequestTopic_t  *rt = NULL;
    samsa_buf_t                    frame = SAMSA_BUF_INIT;
    samsa_wr_t                     wr;
    int32_t                        node, i;
    int16_t                        v;

    node = samsa_netclient_least_loaded(nc, now);
    if (node == SAMSA_NC_NO_NODE || !samsa_netclient_ready(nc, node, now)
        || (v = samsa_netclient_version(nc, node, SAMSA_API_Metadata, 1,
                                        12)) < 0) {
        return SAMSA_MDCACHE_NO_NODE;
    }
    samsa_MetadataRequest_init(&req);
    req.Topics = NULL;
    req.Topics_cnt = -1;                            /* all */
    if (n >= 0) {
        rt = samsa_calloc((size_t) n + 1, sizeof(*rt));
        for (i = 0; i < n; i++) {
            samsa_MetadataRequestTopic_init(&rt[i]);
            rt[i].Name = samsa_slice_cstr(names[i]);
        }
        req.Topics = rt;
        req.Topics_cnt = n;
    }
    req.AllowAutoTopicCreation = allow_auto_create;
    samsa_netclient_frame_begin(nc, SAMSA_API_Metadata, v, &frame, &wr);
    samsa_MetadataRequest_encode(&wr, v, &req);
    samsa_free(rt);
    samsa_mdcache_update_sent(mdc);
    if (samsa_netclient_send(nc, node, &frame, SAMSA_API_Metadata, v, true,
                             cb, ctx, (void *) (intptr_t) v, now)
        != SAMSA_ERR_NONE) {
        samsa_buf_fini(&frame);
        return SAMSA_MDCACHE_SEND_FAILED;
    }
    return SAMSA_MDCACHE_SENT;
}

samsa_err_t
samsa_mdcache_answer(samsa_mdcache_t *mdc, samsa_netclient_t *nc,
                     samsa_err_t err, samsa_rd_t *body, int16_t version)
{
    samsa_MetadataResponse_t  resp;
    samsa_arena_t             arena = SAMSA_ARENA_INIT;

    if (err == SAMSA_ERR_NONE) {
        err = samsa_MetadataResponse_decode(body, version, &arena, &resp);
    }
    if (err != SAMSA_ERR_NONE) {
        samsa_mdcache_update_failed(mdc);
    } else {
        samsa_mdcache_nodes_set(nc, &resp);
        samsa_mdcache_update(mdc, &resp, samsa_now_ms());
    }
    samsa_arena_fini(&arena);
    return err;
}

void
samsa_mdcache_update_failed(samsa_mdcache_t *mdc)
{
    samsa_mdcache_request_update(mdc);
}

uint64_t
samsa_mdcache_gen(samsa_mdcache_t *mdc)
{
    return SAMSA_LOCKED_READ(&mdc->lock, mdc->gen);
}

int32_t
samsa_mdcache_leader(void *ctx, const char *topic, int32_t partition)
{
    samsa_mdcache_t  *mdc = ctx;
    md_entry_t       *e;
    int32_t           leader = -1;

    pthread_mutex_lock(&mdc->lock);
    e = md_find(mdc, topic, strlen(topic));
    if (e != NULL && e->md != NULL && partition >= 0
        && partition < e->md->npartitions) {
        leader = e->md->leaders[partition];
    }
    pthread_mutex_unlock(&mdc->lock);
    return leader;
}

const samsa_mdtopic_t *
samsa_mdcache_peek(samsa_mdcache_t *mdc, const char *topic, size_t len)
{
    md_entry_t             *e;
    const samsa_mdtopic_t  *md;

    pthread_mutex_lock(&mdc->lock);
    e = md_find(mdc, topic, len);
    md = e != NULL ? e->md : NULL;
    pthread_mutex_unlock(&mdc->lock);
    return md;
}

int32_t
samsa_mdcache_count(samsa_mdcache_t *mdc)
{
    return SAMSA_LOCKED_READ(&mdc->lock, mdc->ntopics);
}

const samsa_mdtopic_t *
samsa_mdcache_peek_at(samsa_mdcache_t *mdc, int32_t i)
{
    const samsa_mdtopic_t  *md = NULL;

    pthread_mutex_lock(&mdc->lock);
    if (i >= 0 && i < mdc->ntopics) {
        md = mdc->topics[i].md;
    }
    pthread_mutex_unlock(&mdc->lock);
    return md;
}

const char *
samsa_mdcache_topic_by_id(samsa_mdcache_t *mdc, samsa_uuid_t id)
{
    const char  *name = NULL;
    int32_t      i;

    if (samsa_uuid_is_zero(id)) {
        return NULL;
    }
    pthread_mutex_lock(&mdc->lock);
    for (i = 0; i < mdc->ntopics && name == NULL; i++) {
        const samsa_mdtopic_t  *md = mdc->topics[i].md;

        if (md != NULL && md->err == SAMSA_ERR_NONE
            && samsa_uuid_eq(md->id, id)) {
            name = md->name;
        }
    }
    pthread_mutex_unlock(&mdc->lock);
    return name;
}

samsa_mdbroker_t *
samsa_mdcache_cluster(samsa_mdcache_t *mdc, int32_t *n,
                      int32_t *controller_id, char **cluster_id)
{
    samsa_mdbroker_t  *out;
    int32_t            i;

    pthread_mutex_lock(&mdc->lock);
    *controller_id = mdc->controller_id;
    *cluster_id = mdc->cluster_id != NULL ? samsa_strdup(mdc->cluster_id)
                                          : NULL;
    out = samsa_calloc((size_t) mdc->nbrokers + 1, sizeof(*out));
    for (i = 0; i < mdc->nbrokers; i++) {
        out[i] = mdc->brokers[i];
        out[i].host = samsa_strdup(mdc->brokers[i].host);
        out[i].rack = mdc->brokers[i].rack != NULL
                          ? samsa_strdup(mdc->brokers[i].rack) : NULL;
    }
    *n = mdc->nbrokers;
    pthread_mutex_unlock(&mdc->lock);
    return out;
}

void
samsa_mdcache_brokers_free(samsa_mdbroker_t *b, int32_t n)
{
    int32_t  i;

    for (i = 0; b != NULL && i < n; i++) {
        samsa_free(b[i].host);
        samsa_free(b[i].rack);
    }
    samsa_free(b);
}

void
samsa_mdcache_nodes_set(samsa_netclient_t *nc,
                        const samsa_MetadataResponse_t *resp)
{
    char     host[256];
    int32_t  i;

    for (i = 0; i < resp->Brokers_cnt; i++) {
        snprintf(host, sizeof(host), "%.*s", (int) resp->Brokers[i].Host.len,
                 resp->Brokers[i].Host.ptr);
        samsa_netclient_node_set(nc, resp->Brokers[i].NodeId, host,
                                 resp->Brokers[i].Port);
    }
}
