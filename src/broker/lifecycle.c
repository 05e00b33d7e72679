/*
 * broker/lifecycle.c - see lifecycle.h.
 */
#include "broker/lifecycle.h"

#include <inttypes.h>
#include <pthread.h>
#include <string.h>
#include <sys/prctl.h>

#include "broker/forward.h"
#include "broker/pidmgr.h"
#include "config/config.h"
#include "config/config_kraft.h"
#include "meta/controller/controller.h"
#include "meta/image.h"
#include "proto/gen/BrokerHeartbeat.h"
#include "proto/gen/BrokerRegistration.h"
#include "meta/meta.h"
#include "proto/rd.h"
#include "proto/wr.h"
#include "util/alloc.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/diag.h"
#include "util/locked.h"
#include "util/time.h"

#define LC_VERSION  4               /* Kafka 4's broker sends v4 */

struct samsa_lifecycle {
    samsa_broker_t   *b;
    pthread_t         thread;
    pthread_mutex_t   lock;
    pthread_cond_t    cond;         /* CLOCK_MONOTONIC */
    bool              stop;         /* [lock] */
    bool              wake;         /* [lock] a shutdown was asked for */
    bool              want_shutdown;  /* [lock] controlled shutdown */
    bool              shutdown_done;  /* [lock] approved, or nothing to
                                         wait for: the thread is done */
    int64_t           epoch;        /* [lock] -1 until registered */
    samsa_uuid_t      incarnation;  /* [broker-lifecycle] */
    int32_t           corr;         /* [broker-lifecycle] */
    size_t            probe;        /* [broker-lifecycle] next voter to
                                       try while no leader is known */
    bool              dup_warned;   /* [broker-lifecycle] this streak of
                                       DUPLICATE_BROKER_REGISTRATION was
                                       logged */
};

/* Where this try goes: the active controller the quorum names, else (a
 * broker-only node is no raft member until the active controller adds it
 * as an observer, after its registration: it learns no leader before)
 * the voters of controller.quorum.voters in turn; one that is not the
 * active controller answers NOT_CONTROLLER and the next try goes on.
 * -1 when there is none to try. */
static int32_t
lc_target(samsa_lifecycle_t *lc)
{
    const samsa_config_kraft_t  *k = samsa_config_kraft(lc->b->cfg);
    int32_t                      active;

    active = samsa_controller_active_id(lc->b->ctrl);
    if (active >= 0 || k->nvoters == 0) {
        return active;
    }
    return k->voters[lc->probe++ % k->nvoters].id;
}

/* Start frame (no size prefix) with request header v2 for api/version
 * and the next correlation id; the body follows through *wr. */
static void
lc_header(samsa_lifecycle_t *lc, samsa_wr_t *wr, samsa_buf_t *frame,
          int16_t api, int16_t version)
{
    lc->corr = lc->corr == INT32_MAX ? 0 : lc->corr + 1;
    samsa_forward_header(wr, frame, api, version, lc->corr,
                         lc->b->node->node_id);
}

/* Send frame to the CONTROLLER listener of node active and read the
 * answer: *rd is then at the response body (past the correlation id and
 * the v1 header's tags), in *answer (the caller frees it).  Errors are
 * logged at debug with what; frame is emptied. */
static samsa_err_t
lc_roundtrip(samsa_lifecycle_t *lc, int32_t active, samsa_buf_t *frame,
             const char *what, uint8_t **answer, samsa_rd_t *rd)
{
    size_t       alen = 0;
    samsa_err_t  err;

    *answer = NULL;
    err = samsa_forward_roundtrip(samsa_config_kraft(lc->b->cfg), active,
                                  frame->data, frame->len, lc->corr,
                                  SAMSA_LIFECYCLE_IO_MS, answer, &alen);
    samsa_buf_fini(frame);
    if (err != SAMSA_ERR_NONE) {
        samsa_debug("%s at controller %" PRId32 ": %s", what, active,
                    samsa_err_name(err));
        return err;
    }
    /* samsa_forward_roundtrip checked the correlation id: alen >= 5 */
    samsa_rd_init(rd, *answer + 4, alen - 4);
    samsa_rd_tags_skip(rd);
    return SAMSA_ERR_NONE;
}

/* The registration request frame for this try. */
static void
lc_frame(samsa_lifecycle_t *lc, samsa_buf_t *frame)
{
    const samsa_node_t                   *node = lc->b->node;
    samsa_BrokerRegistrationRequest_t     rq;
    samsa_BrokerRegistrationListener_t   *ls;
    samsa_wr_t                            wr;
    const char                           *rack;
    size_t                                i;

    ls = samsa_calloc(node->nendpoints + 1, sizeof(*ls));
    for (i = 0; i < node->nendpoints; i++) {
        samsa_BrokerRegistrationListener_init(&ls[i]);
        ls[i].Name = samsa_slice_cstr(node->endpoints[i].listener);
        ls[i].Host = samsa_slice_cstr(node->endpoints[i].host);
        ls[i].Port = (uint16_t) node->endpoints[i].port;
        ls[i].SecurityProtocol = samsa_broker_security_protocol_id(
            node->endpoints[i].security_protocol);
    }
    samsa_BrokerRegistrationRequest_init(&rq);
    rq.BrokerId = node->node_id;
    rq.ClusterId = samsa_slice_cstr(node->cluster_id);
    rq.IncarnationId = lc->incarnation;
    rq.Listeners = ls;
    rq.Listeners_cnt = (int32_t) node->nendpoints;
    rq.Features = NULL;
    rq.Features_cnt = 0;
    rack = samsa_config_str(lc->b->cfg, "broker.rack");
    rq.Rack = rack != NULL ? samsa_slice_cstr(rack) : SAMSA_SLICE_NULL;
    rq.LogDirs = NULL;
    rq.LogDirs_cnt = 0;
    rq.PreviousBrokerEpoch = -1;
    lc_header(lc, &wr, frame, SAMSA_API_BrokerRegistration, LC_VERSION);
    samsa_BrokerRegistrationRequest_encode(&wr, LC_VERSION, &rq);
    samsa_free(ls);
}

/* One try: the broker epoch, or -1 (logged why at debug). */
static int64_t
lc_try(samsa_lifecycle_t *lc)
{
    samsa_BrokerRegistrationResponse_t    resp;
    samsa_arena_t                         arena = SAMSA_ARENA_INIT;
    samsa_buf_t                           frame = SAMSA_BUF_INIT;
    samsa_rd_t                            rd;
    uint8_t                              *answer = NULL;
    int32_t                               active;
    int64_t                               epoch = -1;
    samsa_err_t                           err;

    active = lc_target(lc);
    if (active < 0) {
        samsa_debug("broker registration: no active controller yet");
        return -1;
    }
    lc_frame(lc, &frame);
    if (lc_roundtrip(lc, active, &frame, "broker registration", &answer,
                     &rd) != SAMSA_ERR_NONE) {
        return -1;
    }
    err = samsa_BrokerRegistrationResponse_decode(&rd, LC_VERSION, &arena,
                                                  &resp);
    if (err != SAMSA_ERR_NONE) {
        samsa_warn("broker registration at controller %" PRId32 ": bad "
                   "answer: %s", active, samsa_err_name(err));
    } else if (resp.ErrorCode == SAMSA_ERR_DUPLICATE_BROKER_REGISTRATION) {
        /* Kafka's: the controller still holds a valid session of another
         * incarnation of this node.id (another process, or this one's
         * before a kill): try again until that session expires */
        if (!lc->dup_warned) {
            samsa_warn("broker registration at controller %" PRId32 ": "
                       "DUPLICATE_BROKER_REGISTRATION: another broker is "
                       "registered with node.id %" PRId32 " and its session "
                       "is valid; trying again every %d ms until it expires "
                       "(broker.session.timeout.ms)", active,
                       lc->b->node->node_id, SAMSA_LIFECYCLE_RETRY_MS);
            lc->dup_warned = true;
        }
    } else if (resp.ErrorCode != SAMSA_ERR_NONE) {
        samsa_debug("broker registration at controller %" PRId32 ": %s",
                    active, samsa_err_name((samsa_err_t) resp.ErrorCode));
    } else {
        lc->dup_warned = false;
        epoch = resp.BrokerEpoch;
        samsa_info("broker %" PRId32 " registered with the active "
                   "controller %" PRId32 ": %zu endpoint(s), broker epoch %"
                   PRId64, lc->b->node->node_id, active,
                   lc->b->node->nendpoints, epoch);
    }
    samsa_arena_fini(&arena);
    samsa_free(answer);
    return epoch;
}

#define LC_HB_VERSION  1

/* One heartbeat with epoch (WantShutDown if want_shutdown): 0 answered
 * (fenced or not; *should_shutdown gets ShouldShutDown), 1 re-register
 * (STALE_BROKER_EPOCH, BROKER_ID_NOT_REGISTERED), -1 retry later. */
static int
lc_heartbeat(samsa_lifecycle_t *lc, int64_t epoch, bool want_shutdown,
             bool *fenced, bool *should_shutdown)
{
    samsa_BrokerHeartbeatRequest_t     rq;
    samsa_BrokerHeartbeatResponse_t    resp;
    samsa_arena_t                      arena = SAMSA_ARENA_INIT;
    samsa_buf_t                        frame = SAMSA_BUF_INIT;
    samsa_image_t                     *img;
    samsa_rd_t                         rd;
    samsa_wr_t                         wr;
    uint8_t                           *answer = NULL;
    int32_t                            active;
    int                                rc = -1;
    samsa_err_t                        err;

    active = lc_target(lc);
    if (active < 0) {
        return -1;
    }
    img = samsa_meta_image_get(lc->b->meta);
    samsa_BrokerHeartbeatRequest_init(&rq);
    rq.BrokerId = lc->b->node->node_id;
    rq.BrokerEpoch = epoch;
    rq.CurrentMetadataOffset = samsa_image_offset(img);
    rq.WantFence = false;
    rq.WantShutDown = want_shutdown;
    samsa_image_put(img);
    lc_header(lc, &wr, &frame, SAMSA_API_BrokerHeartbeat, LC_HB_VERSION);
    samsa_BrokerHeartbeatRequest_encode(&wr, LC_HB_VERSION, &rq);
    if (lc_roundtrip(lc, active, &frame, "broker heartbeat", &answer,
                     &rd) != SAMSA_ERR_NONE) {
        return -1;
    }
    err = samsa_BrokerHeartbeatResponse_decode(&rd, LC_HB_VERSION, &arena,
                                               &resp);
    if (err != SAMSA_ERR_NONE) {
        samsa_warn("broker heartbeat to controller %" PRId32 ": bad "
                   "answer: %s", active, samsa_err_name(err));
    } else if (resp.ErrorCode == SAMSA_ERR_STALE_BROKER_EPOCH
               || resp.ErrorCode == SAMSA_ERR_BROKER_ID_NOT_REGISTERED) {
        samsa_warn("broker heartbeat to controller %" PRId32 ": %s: "
                   "registering again", active,
                   samsa_err_name((samsa_err_t) resp.ErrorCode));
        rc = 1;
    } else if (resp.ErrorCode != SAMSA_ERR_NONE) {
        samsa_debug("broker heartbeat to controller %" PRId32 ": %s",
                    active, samsa_err_name((samsa_err_t) resp.ErrorCode));
    } else {
        if (*fenced && !resp.IsFenced) {
            samsa_info("broker %" PRId32 " unfenced by the active "
                       "controller %" PRId32, lc->b->node->node_id, active);
        } else if (!*fenced && resp.IsFenced) {
            samsa_warn("broker %" PRId32 " is fenced", lc->b->node->node_id);
        }
        *fenced = resp.IsFenced;
        *should_shutdown = resp.ShouldShutDown;
        if (resp.IsCaughtUp) {
            samsa_broker_caught_up(lc->b);  /* the first time: strays */
        }
        rc = 0;
    }
    samsa_arena_fini(&arena);
    samsa_free(answer);
    return rc;
}

/* Wait until until_ms, a stop or a shutdown request (lc->wake).
 * @returns false when stopped */
static bool
lc_wait(samsa_lifecycle_t *lc, int64_t until_ms)
{
    struct timespec  ts;
    bool             stopped;

    ts.tv_sec = until_ms / 1000;
    ts.tv_nsec = until_ms % 1000 * 1000000;
    pthread_mutex_lock(&lc->lock);
    while (!lc->stop && !lc->wake && samsa_now_ms() < until_ms) {
        pthread_cond_timedwait(&lc->cond, &lc->lock, &ts);
    }
    lc->wake = false;
    stopped = lc->stop;
    pthread_mutex_unlock(&lc->lock);
    return !stopped;
}

/* The controlled shutdown is over (approved, or nothing to wait for). */
static void
lc_shutdown_done(samsa_lifecycle_t *lc)
{
    pthread_mutex_lock(&lc->lock);
    lc->shutdown_done = true;
    pthread_cond_broadcast(&lc->cond);
    pthread_mutex_unlock(&lc->lock);
}

static void *
lc_main(void *arg)
{
    samsa_lifecycle_t  *lc = arg;
    const samsa_config_kraft_t *k = samsa_config_kraft(lc->b->cfg);
    int64_t             epoch = -1, wait;
    bool                fenced = true, want, should = false;
    int                 rc, failed = 0;

    prctl(PR_SET_NAME, "broker-lifecycle", 0, 0, 0);
    do {
        wait = SAMSA_LIFECYCLE_RETRY_MS;
        want = SAMSA_LOCKED_READ(&lc->lock, lc->want_shutdown);
        if (epoch < 0) {
            if (want) {
                break;          /* not registered: it leads nothing */
            }
            epoch = lc_try(lc);
            fenced = true;
            pthread_mutex_lock(&lc->lock);
            lc->epoch = epoch;
            pthread_mutex_unlock(&lc->lock);
            if (lc->b->pids != NULL) {
                /* what AllocateProducerIds sends (broker/pidmgr.h) */
                samsa_pidmgr_broker_epoch_set(lc->b->pids, epoch);
            }
            if (epoch < 0) {
                continue;
            }
        }
        /* Kafka's BrokerLifecycleManager: heartbeats every
         * broker.heartbeat.interval.ms once registered; in controlled
         * shutdown every SAMSA_LIFECYCLE_RETRY_MS until the controller
         * answers ShouldShutDown */
        rc = lc_heartbeat(lc, epoch, want, &fenced, &should);
        failed = rc == -1 ? failed + 1 : 0;
        if (rc == 1) {
            epoch = -1;
        } else if (rc == 0 && want && should) {
            samsa_info("broker %" PRId32 ": the controller approved the "
                       "controlled shutdown", lc->b->node->node_id);
            break;
        } else if (want && failed >= SAMSA_LIFECYCLE_SHUTDOWN_TRIES) {
            samsa_warn("broker %" PRId32 ": controlled shutdown: no active "
                       "controller answered %d heartbeat(s): giving up",
                       lc->b->node->node_id, failed);
            break;
        }
        wait = want ? SAMSA_LIFECYCLE_RETRY_MS
                    : k->broker_heartbeat_interval_ms;
    } while (lc_wait(lc, samsa_now_ms() + wait));
    lc_shutdown_done(lc);
    return NULL;
}

samsa_lifecycle_t *
samsa_lifecycle_start(samsa_broker_t *b)
{
    samsa_lifecycle_t   *lc = samsa_calloc(1, sizeof(*lc));
    pthread_condattr_t   ca;

    lc->b = b;
    lc->epoch = -1;
    lc->incarnation = samsa_image_id_random();
    pthread_mutex_init(&lc->lock, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&lc->cond, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&lc->thread, NULL, lc_main, lc) != 0) {
        pthread_cond_destroy(&lc->cond);
        pthread_mutex_destroy(&lc->lock);
        samsa_free(lc);
        return NULL;
    }
    return lc;
}

int64_t
samsa_lifecycle_epoch(samsa_lifecycle_t *lc)
{
    return SAMSA_LOCKED_READ(&lc->lock, lc->epoch);
}

samsa_err_t
samsa_lifecycle_shutdown(samsa_lifecycle_t *lc)
{
    const samsa_config_kraft_t  *k;
    struct timespec              ts;
    int64_t                      until_ms;
    bool                         done;

    if (lc == NULL
        || !samsa_config_bool(lc->b->cfg, "controlled.shutdown.enable")) {
        return SAMSA_ERR_NONE;
    }
    k = samsa_config_kraft(lc->b->cfg);
    until_ms = samsa_now_ms() + k->broker_session_timeout_ms;
    ts.tv_sec = until_ms / 1000;
    ts.tv_nsec = until_ms % 1000 * 1000000;
    samsa_info("broker %" PRId32 ": controlled shutdown: asking the active "
               "controller to move leadership away",
               lc->b->node->node_id);
    pthread_mutex_lock(&lc->lock);
    lc->want_shutdown = true;
    lc->wake = true;
    pthread_cond_broadcast(&lc->cond);
    while (!lc->shutdown_done && samsa_now_ms() < until_ms) {
        pthread_cond_timedwait(&lc->cond, &lc->lock, &ts);
    }
    done = lc->shutdown_done;
    pthread_mutex_unlock(&lc->lock);
    return done ? SAMSA_ERR_NONE : SAMSA_ERR__TIMED_OUT;
}

void
samsa_lifecycle_stop(samsa_lifecycle_t *lc)
{
    if (lc == NULL) {
        return;
    }
    pthread_mutex_lock(&lc->lock);
    lc->stop = true;
    pthread_cond_broadcast(&lc->cond);
    pthread_mutex_unlock(&lc->lock);
    pthread_join(lc->thread, NULL);
    pthread_cond_destroy(&lc->cond);
    pthread_mutex_destroy(&lc->lock);
    samsa_free(lc);
}
