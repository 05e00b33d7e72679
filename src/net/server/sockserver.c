/*
 * net/server/sockserver.c - see sockserver.h: builds and runs the acceptors,
 * network threads and handler pool of one socket server.  Processor ids
 * count per socket server across its listeners, as Kafka's do, and are
 * never reused.
 * Threads: main only, but set_network_threads (any: it only asks the
 * acceptors) and the metrics readers (any).
 */
#include "net/server/sockserver.h"

#include <stdio.h>
#include <string.h>

#include "net/server/sockserver_int.h"
#include "util/alloc.h"
#include "util/diag.h"
#include "util/time.h"

samsa_proc_t *
samsa_sockserver_proc_new(samsa_sockserver_t *ss, size_t listener)
{
    samsa_proc_t  *proc = NULL;
    size_t         id;

    pthread_mutex_lock(&ss->ids_lock);
    id = atomic_load_explicit(&ss->chan.nprocs, memory_order_relaxed);
    if (id < SAMSA_SOCKSERVER_MAX_PROCS) {
        proc = samsa_calloc(1, sizeof(*proc));
        samsa_proc_init(proc, ss, (uint16_t) id, listener);
        atomic_store_explicit(&ss->chan.procs[id], proc,
                              memory_order_release);
        atomic_store_explicit(&ss->chan.nprocs, id + 1, memory_order_release);
    }
    pthread_mutex_unlock(&ss->ids_lock);
    return proc;
}

/* The listeners' own limits at open (NULL: none), the broker-wide ones
 * as conf says. */
static void
sockserver_listener_limits(samsa_sockserver_t *ss, const int32_t *max,
                           const int32_t *rate)
{
    const samsa_sockserver_conf_t  *c = &ss->conf;
    int32_t                        *m, *r;
    size_t                          i;

    m = samsa_calloc(c->nlisteners + 1, sizeof(*m));
    r = samsa_calloc(c->nlisteners + 1, sizeof(*r));
    for (i = 0; i < c->nlisteners; i++) {
        m[i] = max != NULL ? max[i] : INT32_MAX;
        r[i] = rate != NULL ? rate[i] : INT32_MAX;
    }
    samsa_connquota_set_limits(&ss->quota, c->max_connections,
                               c->max_connections_per_ip, c->overrides,
                               c->noverrides,
                               c->max_connection_creation_rate, m, r);
    samsa_free(m);
    samsa_free(r);
}

void
samsa_sockserver_set_conn_limits(samsa_sockserver_t *ss,
                                 int32_t max_connections,
                                 int32_t max_connections_per_ip,
                                 const samsa_connquota_override_t *overrides,
                                 size_t noverrides,
                                 int32_t max_connection_creation_rate,
                                 const int32_t *listener_max,
                                 const int32_t *listener_rate)
{
    samsa_connquota_set_limits(&ss->quota, max_connections,
                               max_connections_per_ip, overrides, noverrides,
                               max_connection_creation_rate, listener_max,
                               listener_rate);
}

samsa_err_t
samsa_sockserver_open(samsa_sockserver_t **out,
                      const samsa_sockserver_conf_t *conf, char *errstr,
                      size_t errstr_size)
{
    samsa_sockserver_t  *ss = samsa_calloc(1, sizeof(*ss));
    samsa_acceptor_t    *acc;
    size_t               i, j, nthreads = (size_t) conf->num_network_threads;
    samsa_err_t          err;

    samsa_assert(conf->nlisteners > 0 && nthreads > 0
                 && conf->nlisteners * nthreads < SAMSA_SOCKSERVER_MAX_PROCS);
    ss->conf = *conf;
    pthread_mutex_init(&ss->ids_lock, NULL);
    pthread_mutex_init(&ss->tls_lock, NULL);
    ss->tls = samsa_calloc(conf->nlisteners, sizeof(*ss->tls));
    for (i = 0; i < conf->nlisteners; i++) {
        ss->tls[i] = conf->listeners[i].tls != NULL
                         ? samsa_tls_ctx_ref(conf->listeners[i].tls) : NULL;
    }
    samsa_mempool_init(&ss->pool, conf->queued_max_request_bytes);
    samsa_reqchan_init(&ss->chan, conf->queued_max_requests, &ss->pool);
    samsa_connquota_init(&ss->quota, conf->max_connections,
                         conf->max_connections_per_ip, conf->overrides,
                         conf->noverrides, conf->nlisteners);
    samsa_connquota_set_rates(&ss->quota, conf->max_connection_creation_rate,
                              conf->quota_window_num,
                              conf->quota_window_ms, conf->ip_rate,
                              conf->ip_rate_ctx);
    sockserver_listener_limits(ss, conf->listener_max_connections,
                               conf->listener_max_connection_creation_rate);
    ss->acceptors = samsa_calloc(conf->nlisteners, sizeof(*ss->acceptors));
    for (i = 0; i < conf->nlisteners; i++) {
        ss->acceptors[i].fd = ss->acceptors[i].epfd = -1;
        ss->acceptors[i].wakefd = -1;
    }
    samsa_hpool_init(&ss->hpool, ss);
    for (i = 0; i < conf->nlisteners; i++) {
        acc = &ss->acceptors[i];
        err = samsa_acceptor_open(acc, ss, i, errstr, errstr_size);
        if (err != SAMSA_ERR_NONE) {
            samsa_sockserver_free(ss);
            return err;
        }
        /* ids count across listeners, as Kafka's */
        acc->procs = samsa_calloc(nthreads, sizeof(*acc->procs));
        for (j = 0; j < nthreads; j++) {
            acc->procs[acc->nprocs++] = samsa_sockserver_proc_new(ss, i);
        }
        atomic_store(&acc->want, (int32_t) nthreads);
    }
    *out = ss;
    return SAMSA_ERR_NONE;
}

bool
samsa_sockserver_set_tls(samsa_sockserver_t *ss, size_t i,
                         samsa_tls_ctx_t *ctx)
{
    samsa_tls_ctx_t  *old;

    if (i >= ss->conf.nlisteners || ctx == NULL) {
        return false;
    }
    pthread_mutex_lock(&ss->tls_lock);
    old = ss->tls[i];
    if (old != NULL) {
        ss->tls[i] = samsa_tls_ctx_ref(ctx);
    }
    pthread_mutex_unlock(&ss->tls_lock);
    /* the connections made with it hold OpenSSL's own reference */
    samsa_tls_ctx_unref(old);
    return old != NULL;
}

samsa_tls_ctx_t *
samsa_sockserver_tls(samsa_sockserver_t *ss, size_t i)
{
    samsa_tls_ctx_t  *ctx = NULL;

    if (i < ss->conf.nlisteners) {
        pthread_mutex_lock(&ss->tls_lock);
        if (ss->tls[i] != NULL) {
            ctx = samsa_tls_ctx_ref(ss->tls[i]);
        }
        pthread_mutex_unlock(&ss->tls_lock);
    }
    return ctx;
}

int
samsa_sockserver_port(const samsa_sockserver_t *ss, size_t i)
{
    return ss->acceptors[i].port;
}

size_t
samsa_sockserver_nprocs(const samsa_sockserver_t *ss)
{
    samsa_reqchan_t  *chan = (samsa_reqchan_t *) &ss->chan;
    samsa_proc_t     *proc;
    size_t            i, n = 0;

    for (i = 0; (proc = samsa_reqchan_proc(chan, i)) != NULL; i++) {
        n += atomic_load_explicit(&proc->state, memory_order_acquire)
             == SAMSA_PROC_LIVE;
    }
    return n;
}

size_t
samsa_sockserver_proc_ids(const samsa_sockserver_t *ss)
{
    return atomic_load_explicit(&ss->chan.nprocs, memory_order_acquire);
}

bool
samsa_sockserver_proc_stats(samsa_sockserver_t *ss, size_t i,
                            samsa_netstats_proc_t *out)
{
    samsa_proc_t  *proc = samsa_reqchan_proc(&ss->chan, i);

    memset(out, 0, sizeof(*out));
    if (proc == NULL) {
        return false;
    }
    out->id = proc->id;
    out->listener = ss->conf.listeners[proc->listener].name;
    out->idle_ns = atomic_load_explicit(&proc->stat_idle_ns,
                                        memory_order_relaxed);
    out->connections = atomic_load_explicit(&proc->stat_conns,
                                            memory_order_relaxed);
    out->connections_created = atomic_load_explicit(
        &proc->stat_conns_created, memory_order_relaxed);
    out->mem_muted = atomic_load_explicit(&proc->stat_mem_muted,
                                          memory_order_relaxed);
    out->mem_mutes = atomic_load_explicit(&proc->stat_mem_mutes,
                                          memory_order_relaxed);
    out->auth_ok = atomic_load_explicit(&proc->stat_auth_ok,
                                        memory_order_relaxed);
    out->auth_failed = atomic_load_explicit(&proc->stat_auth_failed,
                                            memory_order_relaxed);
    pthread_mutex_lock(&proc->resp_lock);
    out->response_queue_size = proc->nresp;
    pthread_mutex_unlock(&proc->resp_lock);
    return atomic_load_explicit(&proc->state, memory_order_acquire)
           == SAMSA_PROC_LIVE;
}

size_t
samsa_sockserver_nhandlers(const samsa_sockserver_t *ss)
{
    return atomic_load(&ss->hpool.nthreads);
}

size_t
samsa_sockserver_handler_slots(const samsa_sockserver_t *ss)
{
    return atomic_load(&ss->hpool.nslots);
}

uint64_t
samsa_sockserver_handler_idle_ns(const samsa_sockserver_t *ss, size_t i)
{
    samsa_hslot_t  *slot = atomic_load_explicit(&ss->hpool.slots[i],
                                                memory_order_acquire);

    return slot == NULL ? 0 : atomic_load_explicit(&slot->idle_ns,
                                                   memory_order_relaxed);
}

size_t
samsa_sockserver_request_queue_size(samsa_sockserver_t *ss)
{
    return samsa_queue_size(&ss->chan.requests);
}

size_t
samsa_sockserver_request_queue_max_size(samsa_sockserver_t *ss)
{
    return samsa_queue_max_size(&ss->chan.requests);
}

void
samsa_sockserver_memory_pool(samsa_sockserver_t *ss, int64_t *capacity,
                             int64_t *used, int64_t *max_used)
{
    *capacity = ss->pool.capacity;
    *used = samsa_mempool_used(&ss->pool);
    *max_used = samsa_mempool_max_used(&ss->pool);
}

size_t
samsa_sockserver_nlisteners(const samsa_sockserver_t *ss)
{
    return ss->conf.nlisteners;
}

void
samsa_sockserver_conn_throttles(samsa_sockserver_t *ss, uint64_t *rate_waits,
                                uint64_t *ip_throttled)
{
    *rate_waits = atomic_load_explicit(&ss->quota.rate_waits,
                                       memory_order_relaxed);
    *ip_throttled = atomic_load_explicit(&ss->quota.ip_throttled,
                                         memory_order_relaxed);
}

const char *
samsa_sockserver_listener_name(const samsa_sockserver_t *ss, size_t i)
{
    return ss->conf.listeners[i].name;
}

void
samsa_sockserver_accept_throttles(samsa_sockserver_t *ss, size_t i,
                                  uint64_t *throttle_ms, uint64_t *throttles)
{
    samsa_connquota_listener_throttles(&ss->quota, i, throttle_ms, throttles);
}

samsa_err_t
samsa_sockserver_start(samsa_sockserver_t *ss)
{
    samsa_acceptor_t  *acc;
    samsa_err_t        err;
    size_t             i, j;

    err = samsa_hpool_start(&ss->hpool);
    for (i = 0; err == SAMSA_ERR_NONE && i < ss->conf.nlisteners; i++) {
        acc = &ss->acceptors[i];
        for (j = 0; err == SAMSA_ERR_NONE && j < acc->nprocs; j++) {
            err = samsa_proc_start(acc->procs[j]);
        }
    }
    for (i = 0; err == SAMSA_ERR_NONE && i < ss->conf.nlisteners; i++) {
        err = samsa_acceptor_start(&ss->acceptors[i]);
        if (err == SAMSA_ERR_NONE) {
            samsa_info("%s listener %s on %s:%d: %zu network threads",
                       ss->conf.kind, ss->conf.listeners[i].name,
                       ss->conf.listeners[i].host[0] != '\0'
                           ? ss->conf.listeners[i].host
                           : "*",
                       ss->acceptors[i].port, ss->acceptors[i].nprocs);
        }
    }
    return err;
}

samsa_err_t
samsa_sockserver_set_network_threads(samsa_sockserver_t *ss, int32_t n)
{
    size_t  i;

    if (n < 1 || (size_t) n >= SAMSA_SOCKSERVER_MAX_PROCS) {
        return SAMSA_ERR__INVALID_ARG;
    }
    for (i = 0; i < ss->conf.nlisteners; i++) {
        samsa_acceptor_resize(&ss->acceptors[i], n);
    }
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_sockserver_set_io_threads(samsa_sockserver_t *ss, int32_t n)
{
    if (n < 1) {
        return SAMSA_ERR__INVALID_ARG;
    }
    return samsa_hpool_resize(&ss->hpool, (size_t) n);
}

void
samsa_sockserver_stop_accepting(samsa_sockserver_t *ss)
{
    size_t  i;

    for (i = 0; i < ss->conf.nlisteners; i++) {
        samsa_acceptor_stop(&ss->acceptors[i]);
    }
}

void
samsa_sockserver_drain(samsa_sockserver_t *ss, int64_t timeout_ms)
{
    int64_t        deadline = samsa_now_ns() + timeout_ms * 1000000;
    samsa_proc_t  *proc;
    size_t         i;

    /* the acceptors stopped: nothing adds or removes threads now */
    for (i = 0; (proc = samsa_reqchan_proc(&ss->chan, i)) != NULL; i++) {
        if (!samsa_proc_exited(proc)) {
            samsa_proc_set_run(proc, SAMSA_PROC_DRAINING, deadline);
        }
    }
    for (i = 0; (proc = samsa_reqchan_proc(&ss->chan, i)) != NULL; i++) {
        samsa_proc_join(proc);
    }
}

void
samsa_sockserver_stop_handlers(samsa_sockserver_t *ss)
{
    samsa_hpool_stop(&ss->hpool);
}

void
samsa_sockserver_free(samsa_sockserver_t *ss)
{
    samsa_proc_t  *proc;
    size_t         i, n;

    if (ss == NULL) {
        return;
    }
    for (i = 0; i < ss->conf.nlisteners; i++) {
        samsa_acceptor_stop(&ss->acceptors[i]);
    }
    n = samsa_sockserver_proc_ids(ss);
    for (i = 0; i < n; i++) {
        proc = samsa_reqchan_proc(&ss->chan, i);
        samsa_proc_set_run(proc, SAMSA_PROC_STOPPING, 0);
        samsa_proc_join(proc);
    }
    samsa_hpool_stop(&ss->hpool);
    samsa_hpool_fini(&ss->hpool);
    for (i = 0; i < n; i++) {
        proc = samsa_reqchan_proc(&ss->chan, i);
        samsa_proc_fini(proc);
        samsa_free(proc);
    }
    samsa_reqchan_fini(&ss->chan);
    for (i = 0; i < ss->conf.nlisteners; i++) {
        samsa_free(ss->acceptors[i].procs);
        samsa_free(ss->acceptors[i].removed);
        samsa_free(ss->acceptors[i].closing);   /* closed by the thread */
    }
    samsa_free(ss->acceptors);
    samsa_connquota_fini(&ss->quota);
    for (i = 0; ss->tls != NULL && i < ss->conf.nlisteners; i++) {
        samsa_tls_ctx_unref(ss->tls[i]);
    }
    samsa_free(ss->tls);
    pthread_mutex_destroy(&ss->tls_lock);
    pthread_mutex_destroy(&ss->ids_lock);
    samsa_free(ss);
}
