/*
 * broker/pidmgr.c - producer ids from controller-allocated blocks (see
 * pidmgr.h).
 */
#include "broker/pidmgr.h"

#include <inttypes.h>
#include <pthread.h>
#include <time.h>

#include "broker/forward.h"
#include "proto/gen/AllocateProducerIds.h"
#include "proto/rd.h"
#include "proto/wr.h"
#include "util/alloc.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/diag.h"
#include "util/time.h"

#define PIDMGR_APV_VERSION  0

/* One block of ids, [next, end) still unused; empty when next >= end. */
typedef struct pidmgr_block {
    int64_t   first;
    int64_t   next;
    int64_t   end;
} pidmgr_block_t;

struct samsa_pidmgr {
    samsa_pidmgr_conf_t  conf;      /* [const] */
    pthread_t            thread;
    pthread_mutex_t      lock;
    pthread_cond_t       cond;      /* CLOCK_MONOTONIC; wakes pid-fetch */
    pidmgr_block_t       cur;       /* [lock] ids are handed out from it */
    pidmgr_block_t       nxt;       /* [lock] the prefetched block, or
                                       empty */
    bool                 wanted;    /* [lock] pid-fetch should fetch */
    bool                 stop;      /* [lock] */
    int64_t              epoch;     /* [lock] broker epoch, -1: none */
    int64_t              retry_ms;  /* [lock] no fetch before (backoff) */
    int64_t              backoff_ms;/* [lock] the next failure's backoff */
    int32_t              corr;      /* [pid-fetch] correlation ids */
};

bool
samsa_pidmgr_prefetch_due(int64_t first, int64_t next, int64_t end)
{
    /* next >= first + 0.9 * (end - first), in integers */
    return end > first && (next - first) * 10 >= (end - first) * 9;
}

static bool
pidmgr_block_empty(const pidmgr_block_t *blk)
{
    return blk->next >= blk->end;
}

/* Take an id, moving to the prefetched block when the current one is used
 * up, and ask for the next block when it is due.  @locks lock held */
static bool
pidmgr_take(samsa_pidmgr_t *pm, int64_t *pid)
{
    bool  got = false;

    if (pidmgr_block_empty(&pm->cur) && !pidmgr_block_empty(&pm->nxt)) {
        pm->cur = pm->nxt;
        pm->nxt.first = pm->nxt.next = pm->nxt.end = 0;
    }
    if (!pidmgr_block_empty(&pm->cur)) {
        *pid = pm->cur.next++;
        got = true;
    }
    if (pidmgr_block_empty(&pm->nxt)
        && (pidmgr_block_empty(&pm->cur)
            || samsa_pidmgr_prefetch_due(pm->cur.first, pm->cur.next,
                                         pm->cur.end))
        && !pm->wanted) {
        pm->wanted = true;
        pthread_cond_signal(&pm->cond);
    }
    return got;
}

/* Keep a new block [first, first + len): the current one if that is used
 * up, else the next one; with both in hand it is left unused (never
 * reused: the controller recorded it).  @locks lock held */
static void
pidmgr_install(samsa_pidmgr_t *pm, int64_t first, int32_t len)
{
    pidmgr_block_t  blk = { first, first, first + len };

    if (pidmgr_block_empty(&pm->cur) && pidmgr_block_empty(&pm->nxt)) {
        pm->cur = blk;
    } else if (pidmgr_block_empty(&pm->nxt)) {
        pm->nxt = blk;
    } else {
        samsa_debug("producer ids %" PRId64 "..%" PRId64 " left unused",
                    first, first + len - 1);
        return;
    }
    samsa_debug("producer ids %" PRId64 "..%" PRId64 " at hand", first,
                first + len - 1);
}

/* ---- where blocks come from --------------------------------------------- */

/* Is this node the one that allocates (the active controller, or a single
 * node)?  @thread any */
static bool
pidmgr_is_local(samsa_pidmgr_t *pm)
{
    if (pm->conf.fetch != NULL) {
        return pm->conf.fetch_local;
    }
    if (pm->conf.ctrl == NULL) {
        return false;
    }
    return pm->conf.kraft == NULL || !pm->conf.kraft->is_cluster
           || samsa_controller_active_id(pm->conf.ctrl) == pm->conf.node_id;
}

/* AllocateProducerIds v0 to the active controller.  @thread pid-fetch */
static samsa_err_t
pidmgr_fetch_remote(samsa_pidmgr_t *pm, int32_t active, int64_t epoch,
                    int64_t *first, int32_t *len)
{
    samsa_AllocateProducerIdsRequest_t    rq;
    samsa_AllocateProducerIdsResponse_t   resp;
    samsa_arena_t                         arena = SAMSA_ARENA_INIT;
    uint8_t                              *answer = NULL;
    samsa_err_t                           err;

    samsa_AllocateProducerIdsRequest_init(&rq);
    rq.BrokerId = pm->conf.node_id;
    rq.BrokerEpoch = epoch;
    pm->corr = pm->corr == INT32_MAX ? 0 : pm->corr + 1;
    err = samsa_forward_call(pm->conf.kraft, active, pm->conf.node_id,
                             SAMSA_API_AllocateProducerIds,
                             PIDMGR_APV_VERSION, pm->corr,
                             SAMSA_PIDMGR_IO_MS,
                             samsa_AllocateProducerIdsRequest_encode_any,
                             &rq, &arena, &resp, &answer);
    if (err == SAMSA_ERR_NONE) {
        err = (samsa_err_t) resp.ErrorCode;
    }
    if (err == SAMSA_ERR_NONE
        && (resp.ProducerIdStart < 0 || resp.ProducerIdLen <= 0
            || resp.ProducerIdStart > INT64_MAX - resp.ProducerIdLen)) {
        samsa_warn("AllocateProducerIds at controller %" PRId32 ": bad "
                   "block %" PRId64 "+%" PRId32, active,
                   resp.ProducerIdStart, resp.ProducerIdLen);
        err = SAMSA_ERR__BAD_MSG;
    }
    if (err == SAMSA_ERR_NONE) {
        *first = resp.ProducerIdStart;
        *len = resp.ProducerIdLen;
    }
    samsa_arena_fini(&arena);
    samsa_free(answer);
    return err;
}

/* One block from wherever blocks come from now.  @thread pid-fetch */
static samsa_err_t
pidmgr_fetch(samsa_pidmgr_t *pm, int64_t epoch, int64_t *first,
             int32_t *len)
{
    int32_t      active;
    samsa_err_t  err;

    if (pm->conf.fetch != NULL) {
        return pm->conf.fetch(pm->conf.fetch_ctx, epoch, first, len);
    }
    if (pidmgr_is_local(pm)) {
        *len = SAMSA_CONTROLLER_PRODUCER_ID_BLOCK;
        return samsa_controller_alloc_producer_ids(pm->conf.ctrl, first);
    }
    /* rediscovered each try, as broker-lifecycle does */
    active = samsa_controller_active_id(pm->conf.ctrl);
    if (active < 0) {
        return SAMSA_ERR_NOT_CONTROLLER;        /* no leader yet */
    }
    if (epoch < 0) {
        return SAMSA_ERR_BROKER_ID_NOT_REGISTERED;  /* not yet, or again */
    }
    err = pidmgr_fetch_remote(pm, active, epoch, first, len);
    if (err != SAMSA_ERR_NONE) {
        samsa_debug("AllocateProducerIds at controller %" PRId32 ": %s",
                    active, samsa_err_name(err));
    }
    return err;
}

/* ---- the pid-fetch thread ----------------------------------------------- */

/* Wait until a fetch is wanted and the backoff is over, or stop.
 * @returns false on stop.  @locks lock held (released while waiting) */
static bool
pidmgr_wait(samsa_pidmgr_t *pm)
{
    struct timespec  ts;
    int64_t          until;

    for (;;) {
        if (pm->stop) {
            return false;
        }
        if (pm->wanted && samsa_now_ms() >= pm->retry_ms) {
            return true;
        }
        until = pm->wanted ? pm->retry_ms : samsa_now_ms() + 1000;
        ts.tv_sec = until / 1000;
        ts.tv_nsec = until % 1000 * 1000000;
        pthread_cond_timedwait(&pm->cond, &pm->lock, &ts);
    }
}

static void *
pidmgr_main(void *arg)
{
    samsa_pidmgr_t  *pm = arg;
    int64_t          epoch, first = 0;
    int32_t          len = 0;
    samsa_err_t      err;

    samsa_thread_name_set("pid-fetch");
    pthread_mutex_lock(&pm->lock);
    while (pidmgr_wait(pm)) {
        epoch = pm->epoch;
        pthread_mutex_unlock(&pm->lock);
        err = pidmgr_fetch(pm, epoch, &first, &len);
        pthread_mutex_lock(&pm->lock);
        if (err == SAMSA_ERR_NONE) {
            pidmgr_install(pm, first, len);
            pm->wanted = false;
            pm->backoff_ms = SAMSA_PIDMGR_BACKOFF_MS;
            pm->retry_ms = 0;
            continue;
        }
        if (pm->backoff_ms >= SAMSA_PIDMGR_BACKOFF_MAX_MS) {
            samsa_warn("cannot get a block of producer ids: %s",
                       samsa_err_name(err));
        }
        pm->retry_ms = samsa_now_ms() + pm->backoff_ms;
        pm->backoff_ms = pm->backoff_ms * 2 > SAMSA_PIDMGR_BACKOFF_MAX_MS
                         ? SAMSA_PIDMGR_BACKOFF_MAX_MS : pm->backoff_ms * 2;
    }
    pthread_mutex_unlock(&pm->lock);
    return NULL;
}

/* ---- life and the handlers' side ---------------------------------------- */

samsa_err_t
samsa_pidmgr_new(const samsa_pidmgr_conf_t *conf, samsa_pidmgr_t **out)
{
    samsa_pidmgr_t      *pm = samsa_calloc(1, sizeof(*pm));
    pthread_condattr_t   ca;

    *out = NULL;
    pm->conf = *conf;
    pm->epoch = -1;
    pm->backoff_ms = SAMSA_PIDMGR_BACKOFF_MS;
    pthread_mutex_init(&pm->lock, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&pm->cond, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&pm->thread, NULL, pidmgr_main, pm) != 0) {
        pthread_cond_destroy(&pm->cond);
        pthread_mutex_destroy(&pm->lock);
        samsa_free(pm);
        return SAMSA_ERR__IO;
    }
    *out = pm;
    return SAMSA_ERR_NONE;
}

void
samsa_pidmgr_free(samsa_pidmgr_t *pm)
{
    if (pm == NULL) {
        return;
    }
    pthread_mutex_lock(&pm->lock);
    pm->stop = true;
    pthread_cond_broadcast(&pm->cond);
    pthread_mutex_unlock(&pm->lock);
    pthread_join(pm->thread, NULL);
    pthread_cond_destroy(&pm->cond);
    pthread_mutex_destroy(&pm->lock);
    samsa_free(pm);
}

void
samsa_pidmgr_broker_epoch_set(samsa_pidmgr_t *pm, int64_t epoch)
{
    pthread_mutex_lock(&pm->lock);
    if (pm->epoch != epoch) {
        pm->epoch = epoch;
        pm->retry_ms = 0;               /* a new epoch: try at once */
        pm->backoff_ms = SAMSA_PIDMGR_BACKOFF_MS;
    }
    if (epoch >= 0 && pidmgr_block_empty(&pm->cur)
        && pidmgr_block_empty(&pm->nxt)) {
        pm->wanted = true;              /* the first block, up front */
    }
    pthread_cond_signal(&pm->cond);
    pthread_mutex_unlock(&pm->lock);
}

samsa_err_t
samsa_pidmgr_next(samsa_pidmgr_t *pm, int64_t *pid)
{
    samsa_err_t  err;
    int64_t      first = 0;
    int32_t      len = SAMSA_CONTROLLER_PRODUCER_ID_BLOCK;
    bool         got;

    pthread_mutex_lock(&pm->lock);
    got = pidmgr_take(pm, pid);
    pthread_mutex_unlock(&pm->lock);
    if (got) {
        return SAMSA_ERR_NONE;
    }
    if (!pidmgr_is_local(pm)) {
        return SAMSA_ERR_COORDINATOR_LOAD_IN_PROGRESS;  /* pid-fetch is on
                                                           its way */
    }
    /* The active controller: its own controller writes and fsyncs the
     * metadata log, no lock held. */
    err = pm->conf.fetch != NULL
          ? pm->conf.fetch(pm->conf.fetch_ctx, -1, &first, &len)
          : samsa_controller_alloc_producer_ids(pm->conf.ctrl, &first);
    if (err != SAMSA_ERR_NONE) {
        samsa_warn("cannot allocate a block of producer ids: %s",
                   samsa_err_name(err));
        return SAMSA_ERR_COORDINATOR_LOAD_IN_PROGRESS;
    }
    pthread_mutex_lock(&pm->lock);
    pidmgr_install(pm, first, len);
    got = pidmgr_take(pm, pid);
    pthread_mutex_unlock(&pm->lock);
    return got ? SAMSA_ERR_NONE : SAMSA_ERR_COORDINATOR_LOAD_IN_PROGRESS;
}
