/*
 * net/hpool.c - the request-handler pool of one socket server (Kafka's
 * KafkaRequestHandlerPool): num.io.threads threads named handler-<id>, each
 * taking requests from the shared queue (300 ms at a time), stamping the
 * dequeue time and calling the server's handler.  Stopping puts one
 * shutdown marker per thread on the queue, behind the requests already
 * there.
 * Test-only hook: SAMSA_TEST_HANDLER_DELAY_MS (and optionally
 * SAMSA_TEST_HANDLER_DELAY_API, an API key) make each handler sleep before
 * handling, so tests can hold requests in the handlers.
 * Threads: init/start/stop on main; the loop on the handler threads.
 */
#include "net/sockserver_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/alloc.h"
#include "util/diag.h"
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

static void *
hpool_main(void *varg)
{
    hpool_arg_t          *arg = varg;
    samsa_hpool_t        *hp = arg->hp;
    samsa_sockserver_t   *ss = hp->ss;
    _Atomic uint64_t     *idle = &hp->stats[arg->id].idle_ns;
    samsa_req_t          *req;
    char                  name[16];
    int64_t               from, now;

    snprintf(name, sizeof(name), "handler-%zu", arg->id);
    samsa_free(arg);
    samsa_thread_name_set(name);
    for (;;) {
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
            break;
        }
        req->dequeue_ns = now;
        hpool_test_delay(hp, req);
        ss->conf.handle(ss->conf.ctx, req);     /* req is no longer ours */
    }
    return NULL;
}

static int64_t
hpool_env_int(const char *name, int64_t dflt)
{
    const char  *v = getenv(name);
    char        *end;
    long long    n;

    if (v == NULL || *v == '\0') {
        return dflt;
    }
    n = strtoll(v, &end, 10);
    if (*end != '\0') {
        samsa_warn("ignoring %s='%s': not a number", name, v);
        return dflt;
    }
    return n;
}

void
samsa_hpool_init(samsa_hpool_t *hp, samsa_sockserver_t *ss)
{
    memset(hp, 0, sizeof(*hp));
    hp->ss = ss;
    hp->nthreads = (size_t) ss->conf.num_io_threads;
    hp->threads = samsa_calloc(hp->nthreads, sizeof(*hp->threads));
    hp->stats = samsa_aligned_calloc(64, hp->nthreads, sizeof(*hp->stats));
    hp->test_delay_ms = hpool_env_int("SAMSA_TEST_HANDLER_DELAY_MS", 0);
    hp->test_delay_api = (int) hpool_env_int("SAMSA_TEST_HANDLER_DELAY_API", -1);
    if (hp->test_delay_ms > 0) {
        samsa_warn("test hook: %s handlers sleep %lld ms before each "
                   "request%s", ss->conf.kind, (long long) hp->test_delay_ms,
                   hp->test_delay_api >= 0 ? " of the chosen API" : "");
    }
}

samsa_err_t
samsa_hpool_start(samsa_hpool_t *hp)
{
    hpool_arg_t  *arg;
    size_t        i;

    for (i = 0; i < hp->nthreads; i++) {
        arg = samsa_malloc(sizeof(*arg));
        arg->hp = hp;
        arg->id = i;
        if (pthread_create(&hp->threads[i], NULL, hpool_main, arg) != 0) {
            samsa_free(arg);
            samsa_error("cannot start request handler %zu", i);
            return SAMSA_ERR__IO;
        }
        hp->nstarted++;
    }
    return SAMSA_ERR_NONE;
}

void
samsa_hpool_stop(samsa_hpool_t *hp)
{
    size_t  i;

    for (i = 0; i < hp->nstarted; i++) {
        samsa_reqchan_put(&hp->ss->chan, &hpool_shutdown_marker);
    }
    for (i = 0; i < hp->nstarted; i++) {
        pthread_join(hp->threads[i], NULL);
    }
    hp->nstarted = 0;
}

void
samsa_hpool_fini(samsa_hpool_t *hp)
{
    samsa_free(hp->threads);
    hp->threads = NULL;
    samsa_free(hp->stats);
    hp->stats = NULL;
}
