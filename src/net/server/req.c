/*
 * net/server/req.c - requests and responses: creation of responses, and freeing.
 * Threads: whoever owns the object at the time (see req.h).
 */
#include "net/server/req.h"

#include "net/server/sockserver_int.h"
#include "proto/resphdr.h"
#include "proto/wr.h"
#include "util/alloc.h"
#include "util/diag.h"

#include <string.h>
#include <unistd.h>

samsa_resp_t *
samsa_resp_new(samsa_req_t *req, samsa_resp_kind_t kind)
{
    samsa_resp_t  *resp = samsa_calloc(1, sizeof(*resp));

    resp->kind = kind;
    resp->req = req;
    resp->send = SAMSA_SEND_INIT;
    return resp;
}

samsa_resp_t *
samsa_resp_new_send_version(samsa_req_t *req, int16_t version)
{
    samsa_resp_t  *resp = samsa_resp_new(req, SAMSA_RESP_SEND);
    samsa_wr_t     wr = samsa_resp_wr(resp);

    samsa_buf_init(&resp->send.frame, 256);
    (void) samsa_wr_i32(&wr, 0);        /* size, patched at respond */
    samsa_resphdr_encode(&wr, req->hdr.ApiKey, version,
                         req->hdr.CorrelationId);
    resp->body_at = resp->send.frame.len;
    return resp;
}

samsa_resp_t *
samsa_resp_new_send(samsa_req_t *req)
{
    return samsa_resp_new_send_version(req, req->hdr.ApiVersion);
}

void
samsa_req_hold(samsa_req_t *req, void (*release)(void *obj), void *obj)
{
    samsa_req_hold_t  *h = samsa_arena_alloc(&req->arena, sizeof(*h));

    h->release = release;
    h->obj = obj;
    h->next = req->holds;
    req->holds = h;
}

static void
req_release_holds(samsa_req_t *req)
{
    samsa_req_hold_t  *h;

    while ((h = req->holds) != NULL) {
        req->holds = h->next;
        h->release(h->obj);
    }
}

/* Release what only the handler needed: the receive buffer (back to the
 * memory pool) and the arena. */
void
samsa_req_release_payload(samsa_req_t *req)
{
    if (req->payload != NULL) {
        samsa_free(req->payload);
        req->payload = NULL;
        req->body = (samsa_rd_t) { 0 };
        if (samsa_mempool_give(req->chan->pool, req->payload_size)) {
            samsa_reqchan_pool_returned(req->chan);
        }
        req->payload_size = 0;
    }
    req_release_holds(req);
    samsa_arena_fini(&req->arena);
}

void
samsa_req_free(samsa_req_t *req)
{
    if (req == NULL) {
        return;
    }
    samsa_req_release_payload(req);
    samsa_free(req->client_id);
    samsa_free(req);
}

void
samsa_resp_free(samsa_resp_t *resp)
{
    if (resp == NULL) {
        return;
    }
    samsa_send_fini(&resp->send);
    samsa_req_free(resp->req);
    samsa_free(resp);
}
