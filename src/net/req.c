/*
 * net/req.c - requests and responses: creation of responses, and freeing.
 * Threads: whoever owns the object at the time (see req.h).
 */
#include "net/req.h"

#include "net/sockserver_int.h"
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
    resp->frame = SAMSA_BUF_INIT;
    return resp;
}

samsa_resp_t *
samsa_resp_new_send_version(samsa_req_t *req, int16_t version)
{
    samsa_resp_t  *resp = samsa_resp_new(req, SAMSA_RESP_SEND);
    samsa_wr_t     wr = samsa_resp_wr(resp);

    samsa_buf_init(&resp->frame, 256);
    (void) samsa_wr_i32(&wr, 0);        /* size, patched at respond */
    samsa_resphdr_encode(&wr, req->hdr.ApiKey, version,
                         req->hdr.CorrelationId);
    resp->body_at = resp->frame.len;
    return resp;
}

samsa_resp_t *
samsa_resp_new_send(samsa_req_t *req)
{
    return samsa_resp_new_send_version(req, req->hdr.ApiVersion);
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
samsa_resp_add_region(samsa_resp_t *resp, int fd, int64_t offset, int64_t len)
{
    samsa_resp_region_t  *r;

    if (resp->nregions == resp->regions_cap) {
        resp->regions_cap = resp->regions_cap == 0 ? 4 : resp->regions_cap * 2;
        resp->regions = samsa_realloc(resp->regions,
                                      resp->regions_cap * sizeof(*r));
    }
    r = &resp->regions[resp->nregions++];
    r->at = resp->frame.len;
    r->fd = fd;
    r->offset = offset;
    r->len = len;
    resp->regions_len += len;
}

void
samsa_resp_clear_body(samsa_resp_t *resp)
{
    size_t  i;

    samsa_assert(resp->kind == SAMSA_RESP_SEND);
    for (i = 0; i < resp->nregions; i++) {
        close(resp->regions[i].fd);
    }
    resp->nregions = 0;
    resp->regions_len = 0;
    resp->frame.len = resp->body_at;
    memset(&resp->req->errors, 0, sizeof(resp->req->errors));
}

void
samsa_resp_free(samsa_resp_t *resp)
{
    size_t  i;

    if (resp == NULL) {
        return;
    }
    for (i = 0; i < resp->nregions; i++) {
        close(resp->regions[i].fd);
    }
    samsa_free(resp->regions);
    samsa_req_free(resp->req);
    samsa_buf_fini(&resp->frame);
    samsa_free(resp);
}
