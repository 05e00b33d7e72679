/*
 * net/server/hpool.c - the request-handler pool of one socket server (Kafka's
 * KafkaRequestHandlerPool): num.io.threads threads named handler-<id>, each
 * taking requests from the shared queue (300 ms at a time), stamping the
 * dequeue time and calling the server's handler.  Stopping puts one
 * shutdown marker per thread on the queue, behind the requests already
 * there.  num.io.threads can change at run time (Kafka's
 * KafkaRequestHandlerPool.resizeThreadPool): see samsa_hpool_resize().
 * Test hook of samsa-server-faults only (util/fault.h):
 * SAMSA_TEST_HANDLER_DELAY_MS (and optionally SAMSA_TEST_HANDLER_DELAY_API,
 * an API key) make each handler sleep before handling, so tests can hold
 * requests in the handlers.
 * Threads: init/start/stop on main; resize from any thread but a handler
 * (the metadata listener); the loop on the handler threads.
 */
#include "net/server/sockserver_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/alloc.h"
#include "util/diag.h"
#include "util/fault.h"
#include "util/time.h"

/* The shutdown marker: never dereferenced. */
static samsa_req_t  hpool_shutdown_marker;

typedef struct hpool_arg {
    samsa_hpool_t  *hp;
    size_t          id;
} hpool_arg_t;

static void
hpool_test_delay(const samsa_hpool_t *hp, const samsa_req_t *req)
{
    struct timespec  ts;

    if (hp->test_delay_ms <= 0
        || (hp->test_delay_api >= 0 && req->hdr.ApiKey != hp->test_delay_api)) {
        return;
    }
    ts.tv_sec = hp->test_delay_ms / 1000;
    ts.tv_nsec = (hp->test_delay_ms % 1000) * 1000000L;
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static samsa_hslot_t *
hpool_slot(const samsa_hpool_t *hp, size_t i)
{
    return atomic_load_explicit(&hp->slots[i], memory_order_acquire);
}

/* Told to stop (and not revived meanwhile)? */
static bool
hpool_leaving(samsa_hslot_t *slot)
{
    int  st = SAMSA_HSLOT_STOPPING;

    return atomic_compare_exchange_strong(&slot->state, &st,
                                          SAMSA_HSLOT_EXITED);
}

static void *
hpool_main(void *varg)
{
    hpool_arg_t          *arg = varg;
    samsa_hpool_t        *hp = arg->hp;
    samsa_sockserver_t   *ss = hp->ss;
    samsa_hslot_t        *slot = hpool_slot(hp, arg->id);
    _Atomic uint64_t     *idle = &slot->idle_ns;
    samsa_req_t          *req;
    char                  name[16];
    int64_t               from, now;

    snprintf(name, sizeof(name), "handler-%zu", arg->id);
    samsa_free(arg);
    samsa_thread_name_set(name);
    while (!hpool_leaving(slot)) {
        from = samsa_now_ns();
        req = samsa_reqchan_take(&ss->chan, SAMSA_HANDLER_POLL_MS);
        now = samsa_now_ns();
        /* only this thread writes it: no locked add needed */
        atomic_store_explicit(idle,
                              atomic_load_explicit(idle, memory_order_relaxed)
                                  + (uint64_t) (now - from),
                              memory_order_relaxed);
        if (req == NULL) {
            continue;
        }
        if (req == &hpool_shutdown_marker) {
            atomic_store(&slot->state, SAMSA_HSLOT_EXITED);
            break;
        }
        req->dequeue_ns = now;
        hpool_test_delay(hp, req);
        ss->conf.handle(ss->conf.ctx, req);     /* req is no longer ours */
    }
    return NULL;
}

void
samsa_hpool_init(samsa_hpool_t *hp, samsa_sockserver_t *ss)
{
    size_t  n = (size_t) ss->conf.num_io_threads;

    memset(hp, 0, sizeof(*hp));
    hp->ss = ss;
    pthread_mutex_init(&hp->lock, NULL);
    hp->cap = n > SAMSA_HPOOL_MAX_THREADS ? n : SAMSA_HPOOL_MAX_THREADS;
    hp->slots = samsa_calloc(hp->cap, sizeof(*hp->slots));
    atomic_init(&hp->nthreads, 0);
    atomic_init(&hp->nslots, 0);
    hp->test_delay_ms = SAMSA_TEST_HOOK("SAMSA_TEST_HANDLER_DELAY_MS", 0);
    hp->test_delay_api = (int) SAMSA_TEST_HOOK("SAMSA_TEST_HANDLER_DELAY_API", -1);
    if (hp->test_delay_ms > 0) {
        samsa_warn("test hook: %s handlers sleep %lld ms before each "
                   "request%s", ss->conf.kind, (long long) hp->test_delay_ms,
                   hp->test_delay_api >= 0 ? " of the chosen API" : "");
    }
}

/* Start (or revive) handler i.  @locks pool lock held */
static samsa_err_t
hpool_start_one(samsa_hpool_t *hp, size_t i)
{
    samsa_hslot_t  *slot = hpool_slot(hp, i);
    hpool_arg_t    *arg;
    int             st = SAMSA_HSLOT_STOPPING;

    if (slot == NULL) {
        slot = samsa_aligned_calloc(64, 1, sizeof(*slot));
        atomic_init(&slot->state, SAMSA_HSLOT_IDLE);
        atomic_store_explicit(&hp->slots[i], slot, memory_order_release);
        if (i + 1 > atomic_load(&hp->nslots)) {
            atomic_store(&hp->nslots, i + 1);
        }
    }
    if (atomic_compare_exchange_strong(&slot->state, &st,
                                       SAMSA_HSLOT_RUNNING)) {
        return SAMSA_ERR_NONE;      /* it had not left yet: it stays */
    }
    if (slot->joinable) {
        /* EXITED: it is past its loop, the join is immediate */
        pthread_join(slot->thread, NULL);
        slot->joinable = false;
    }
    atomic_store(&slot->state, SAMSA_HSLOT_RUNNING);
    arg = samsa_malloc(sizeof(*arg));
    arg->hp = hp;
    arg->id = i;
    if (pthread_create(&slot->thread, NULL, hpool_main, arg) != 0) {
        atomic_store(&slot->state, SAMSA_HSLOT_IDLE);
        samsa_free(arg);
        samsa_error("cannot start request handler %zu", i);
        return SAMSA_ERR__IO;
    }
    slot->joinable = true;
    return SAMSA_ERR_NONE;
}

/* @locks pool lock held */
static samsa_err_t
hpool_resize_locked(samsa_hpool_t *hp, size_t n)
{
    size_t       i, cur = atomic_load(&hp->nthreads);
    samsa_err_t  err = SAMSA_ERR_NONE;

    for (i = n; i < cur; i++) {
        atomic_store(&hpool_slot(hp, i)->state, SAMSA_HSLOT_STOPPING);
    }
    for (i = cur; i < n && err == SAMSA_ERR_NONE; i++) {
        err = hpool_start_one(hp, i);
        if (err == SAMSA_ERR_NONE) {
            atomic_store(&hp->nthreads, i + 1);
        }
    }
    if (n < cur) {
        atomic_store(&hp->nthreads, n);
    }
    return err;
}

samsa_err_t
samsa_hpool_start(samsa_hpool_t *hp)
{
    samsa_err_t  err;

    pthread_mutex_lock(&hp->lock);
    err = hpool_resize_locked(hp, (size_t) hp->ss->conf.num_io_threads);
    pthread_mutex_unlock(&hp->lock);
    return err;
}

samsa_err_t
samsa_hpool_resize(samsa_hpool_t *hp, size_t n)
{
    samsa_err_t  err = SAMSA_ERR_NONE;
    size_t       cur;

    if (n == 0 || n > hp->cap) {
        return SAMSA_ERR__INVALID_ARG;
    }
    pthread_mutex_lock(&hp->lock);
    cur = atomic_load(&hp->nthreads);
    if (!hp->stopped && n != cur) {
        err = hpool_resize_locked(hp, n);
        samsa_info("%s request handler pool resized from %zu to %zu "
                   "threads", hp->ss->conf.kind, cur,
                   atomic_load(&hp->nthreads));
    }
    pthread_mutex_unlock(&hp->lock);
    return err;
}

/* One marker per live handler, behind the queued requests.  A stopping
 * handler is revived first, so that every live one is RUNNING and leaves
 * only by taking exactly one marker.  Idempotent. */
void
samsa_hpool_stop(samsa_hpool_t *hp)
{
    samsa_hslot_t  *slot;
    size_t          i, live = 0;
    int             st;

    pthread_mutex_lock(&hp->lock);
    hp->stopped = true;
    for (i = 0; i < hp->cap; i++) {
        slot = hpool_slot(hp, i);
        st = SAMSA_HSLOT_STOPPING;
        if (slot == NULL || !slot->joinable) {
            continue;
        }
        atomic_compare_exchange_strong(&slot->state, &st,
                                       SAMSA_HSLOT_RUNNING);
        live += atomic_load(&slot->state) == SAMSA_HSLOT_RUNNING;
    }
    atomic_store(&hp->nthreads, 0);
    pthread_mutex_unlock(&hp->lock);
    /* Joined without the lock: a handler may be waiting for the thread
     * that resizes; once stopped, resizes leave the slots alone. */
    for (i = 0; i < live; i++) {
        samsa_reqchan_put(&hp->ss->chan, &hpool_shutdown_marker);
    }
    for (i = 0; i < hp->cap; i++) {
        slot = hpool_slot(hp, i);
        if (slot != NULL && slot->joinable) {
            pthread_join(slot->thread, NULL);
            slot->joinable = false;
            atomic_store(&slot->state, SAMSA_HSLOT_IDLE);
        }
    }
}

void
samsa_hpool_fini(samsa_hpool_t *hp)
{
    size_t  i;

    if (hp->slots == NULL) {
        return;
    }
    for (i = 0; i < hp->cap; i++) {
        samsa_free(hpool_slot(hp, i));
    }
    samsa_free(hp->slots);
    hp->slots = NULL;
    pthread_mutex_destroy(&hp->lock);
}
