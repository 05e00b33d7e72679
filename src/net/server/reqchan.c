/*
 * net/server/reqchan.c - see reqchan.h.
 */
#include "net/server/reqchan.h"

#include <stddef.h>

#include "net/server/sockserver_int.h"
#include "util/alloc.h"
#include "util/diag.h"
#include "util/endian.h"
#include "util/time.h"

void
samsa_reqchan_init(samsa_reqchan_t *chan, int32_t queued_max_requests,
                   samsa_mempool_t *pool)
{
    samsa_queue_init(&chan->requests, (size_t) queued_max_requests);
    chan->procs = samsa_calloc(SAMSA_SOCKSERVER_MAX_PROCS,
                               sizeof(*chan->procs));
    atomic_init(&chan->nprocs, 0);
    chan->pool = pool;
}

void
samsa_reqchan_fini(samsa_reqchan_t *chan)
{
    samsa_req_t  *req;

    while ((req = samsa_queue_take(&chan->requests, 0)) != NULL) {
        samsa_req_free(req);
    }
    samsa_queue_fini(&chan->requests);
    samsa_free(chan->procs);
    chan->procs = NULL;
}

samsa_proc_t *
samsa_reqchan_proc(samsa_reqchan_t *chan, size_t id)
{
    if (id >= atomic_load_explicit(&chan->nprocs, memory_order_acquire)) {
        return NULL;
    }
    return atomic_load_explicit(&chan->procs[id], memory_order_acquire);
}

void
samsa_reqchan_put(samsa_reqchan_t *chan, samsa_req_t *req)
{
    samsa_queue_put(&chan->requests, req);
}

samsa_req_t *
samsa_reqchan_take(samsa_reqchan_t *chan, int64_t timeout_ms)
{
    return samsa_queue_take(&chan->requests, timeout_ms);
}

void
samsa_reqchan_pool_returned(samsa_reqchan_t *chan)
{
    samsa_proc_t  *proc;
    size_t         i;

    /* a retired thread's eventfd stays open: waking it is harmless */
    for (i = 0; (proc = samsa_reqchan_proc(chan, i)) != NULL; i++) {
        samsa_proc_wakeup(proc);
    }
}

void
samsa_req_mark_local_done(samsa_req_t *req)
{
    if (req->local_done_ns == 0) {
        req->local_done_ns = samsa_now_ns();
    }
}

void
samsa_reqchan_respond(samsa_resp_t *resp)
{
    samsa_req_t      *req = resp->req;
    samsa_reqchan_t  *chan = req->chan;
    samsa_proc_t     *proc = samsa_reqchan_proc(chan, req->conn_id.proc);
    int64_t           now = samsa_now_ns();

    samsa_assert(proc != NULL);
    if (req->local_done_ns == 0) {
        req->local_done_ns = now;
    }
    req->resp_done_ns = now;
    if (resp->kind == SAMSA_RESP_SEND) {
        samsa_assert(resp->send.frame.len >= 4);
        samsa_store_be32(resp->send.frame.data,
                         (uint32_t) (resp->send.frame.len - 4 + resp->send.regions_len));
    }
    samsa_req_release_payload(req);
    /* A thread removed meanwhile drops it (its connection is closed). */
    samsa_proc_enqueue_response(proc, resp);
}
