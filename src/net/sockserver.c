/*
 * net/sockserver.c - see sockserver.h: builds and runs the acceptors,
 * network threads and handler pool of one socket server.  Processor ids
 * count per socket server across its listeners, as Kafka's do.
 * Threads: main only.
 */
#include "net/sockserver.h"

#include <stdio.h>
#include <string.h>

#include "net/sockserver_int.h"
#include "util/alloc.h"
#include "util/diag.h"
#include "util/time.h"

samsa_err_t
samsa_sockserver_open(samsa_sockserver_t **out,
                      const samsa_sockserver_conf_t *conf, char *errstr,
                      size_t errstr_size)
{
    samsa_sockserver_t  *ss = samsa_calloc(1, sizeof(*ss));
    size_t               i, nthreads = (size_t) conf->num_network_threads;
    samsa_err_t          err;

    samsa_assert(conf->nlisteners > 0 && nthreads > 0);
    ss->conf = *conf;
    samsa_mempool_init(&ss->pool, conf->queued_max_request_bytes);
    samsa_reqchan_init(&ss->chan, conf->queued_max_requests, &ss->pool);
    samsa_connquota_init(&ss->quota, conf->max_connections,
                         conf->max_connections_per_ip, conf->overrides,
                         conf->noverrides);
    ss->acceptors = samsa_calloc(conf->nlisteners, sizeof(*ss->acceptors));
    for (i = 0; i < conf->nlisteners; i++) {
        ss->acceptors[i].fd = ss->acceptors[i].epfd = -1;
        ss->acceptors[i].wakefd = -1;
    }
    ss->nprocs = conf->nlisteners * nthreads;
    ss->procs = samsa_calloc(ss->nprocs, sizeof(*ss->procs));
    ss->chan.procs = samsa_calloc(ss->nprocs, sizeof(*ss->chan.procs));
    ss->chan.nprocs = ss->nprocs;
    for (i = 0; i < ss->nprocs; i++) {
        samsa_proc_init(&ss->procs[i], ss, (uint16_t) i, i / nthreads);
        ss->chan.procs[i] = &ss->procs[i];
    }
    samsa_hpool_init(&ss->hpool, ss);
    for (i = 0; i < conf->nlisteners; i++) {
        ss->acceptors[i].procs = &ss->chan.procs[i * nthreads];
        ss->acceptors[i].nprocs = nthreads;
        err = samsa_acceptor_open(&ss->acceptors[i], ss, i, errstr,
                                  errstr_size);
        if (err != SAMSA_ERR_NONE) {
            samsa_sockserver_free(ss);
            return err;
        }
        ss->acceptors[i].procs = &ss->chan.procs[i * nthreads];
        ss->acceptors[i].nprocs = nthreads;
    }
    *out = ss;
    return SAMSA_ERR_NONE;
}

int
samsa_sockserver_port(const samsa_sockserver_t *ss, size_t i)
{
    return ss->acceptors[i].port;
}

size_t
samsa_sockserver_nprocs(const samsa_sockserver_t *ss)
{
    return ss->nprocs;
}

void
samsa_sockserver_proc_stats(samsa_sockserver_t *ss, size_t i,
                            samsa_netstats_proc_t *out)
{
    samsa_proc_t  *proc = &ss->procs[i];

    out->id = proc->id;
    out->listener = ss->conf.listeners[proc->listener].name;
    out->idle_ns = atomic_load_explicit(&proc->stat_idle_ns,
                                        memory_order_relaxed);
    out->connections = atomic_load_explicit(&proc->stat_conns,
                                            memory_order_relaxed);
    out->connections_created = atomic_load_explicit(
        &proc->stat_conns_created, memory_order_relaxed);
    pthread_mutex_lock(&proc->resp_lock);
    out->response_queue_size = proc->nresp;
    pthread_mutex_unlock(&proc->resp_lock);
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
samsa_sockserver_nlisteners(const samsa_sockserver_t *ss)
{
    return ss->conf.nlisteners;
}

const char *
samsa_sockserver_listener_name(const samsa_sockserver_t *ss, size_t i)
{
    return ss->conf.listeners[i].name;
}

samsa_err_t
samsa_sockserver_start(samsa_sockserver_t *ss)
{
    samsa_err_t  err;
    size_t       i;

    err = samsa_hpool_start(&ss->hpool);
    for (i = 0; err == SAMSA_ERR_NONE && i < ss->nprocs; i++) {
        err = samsa_proc_start(&ss->procs[i]);
    }
    for (i = 0; err == SAMSA_ERR_NONE && i < ss->conf.nlisteners; i++) {
        err = samsa_acceptor_start(&ss->acceptors[i]);
        if (err == SAMSA_ERR_NONE) {
            samsa_info("%s listener %s on %s:%d: %d network threads",
                       ss->conf.kind, ss->conf.listeners[i].name,
                       ss->conf.listeners[i].host[0] != '\0'
                           ? ss->conf.listeners[i].host
                           : "*",
                       ss->acceptors[i].port, ss->conf.num_network_threads);
        }
    }
    return err;
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
    int64_t  deadline = samsa_now_ns() + timeout_ms * 1000000;
    size_t   i;

    for (i = 0; i < ss->nprocs; i++) {
        samsa_proc_set_run(&ss->procs[i], SAMSA_PROC_DRAINING, deadline);
    }
    for (i = 0; i < ss->nprocs; i++) {
        samsa_proc_join(&ss->procs[i]);
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
    size_t  i;

    if (ss == NULL) {
        return;
    }
    for (i = 0; i < ss->conf.nlisteners; i++) {
        samsa_acceptor_stop(&ss->acceptors[i]);
    }
    for (i = 0; i < ss->nprocs; i++) {
        samsa_proc_set_run(&ss->procs[i], SAMSA_PROC_STOPPING, 0);
        samsa_proc_join(&ss->procs[i]);
    }
    samsa_hpool_stop(&ss->hpool);
    samsa_hpool_fini(&ss->hpool);
    samsa_reqchan_fini(&ss->chan);
    for (i = 0; i < ss->nprocs; i++) {
        samsa_proc_fini(&ss->procs[i]);
    }
    samsa_free(ss->procs);
    samsa_free(ss->chan.procs);
    samsa_free(ss->acceptors);
    samsa_connquota_fini(&ss->quota);
    samsa_free(ss);
}
