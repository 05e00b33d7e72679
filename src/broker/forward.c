/*
 * broker/forward.c - see forward.h.
 */
#include "broker/forward.h"

#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "config/config_kraft.h"
#include "meta/controller/controller.h"
#include "net/server/reqchan.h"
#include "proto/proto.h"
#include "util/endian.h"
#include "util/alloc.h"
#include "util/diag.h"

#define FORWARD_CONNECT_MS   3000
#define FORWARD_IO_MS        60000      /* above CreateTopics' timeouts */
#define FORWARD_MAX_RESPONSE (64 * 1024 * 1024)

int
samsa_forward_connect(const char *host, int port, int io_ms)
{
    struct addrinfo  hints, *res = NULL, *ai;
    struct timeval   tv;
    struct pollfd    pfd;
    char             svc[16];
    int              fd = -1, err = 0, one = 1;
    socklen_t        elen = sizeof(err);

    memset(&hints, 0, sizeof(hints));
    hints.ai_socktype = SOCK_STREAM;
    snprintf(svc, sizeof(svc), "%d", port);
    if (getaddrinfo(host, svc, &hints, &res) != 0) {
        return -1;
    }
    for (ai = res; ai != NULL && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK
                    | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) {
            continue;
        }
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
            break;
        }
        pfd.fd = fd;
        pfd.events = POLLOUT;
        if (errno != EINPROGRESS
            || poll(&pfd, 1, io_ms < FORWARD_CONNECT_MS
                                 ? io_ms : FORWARD_CONNECT_MS) != 1
            || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) != 0
            || err != 0) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd >= 0) {
        /* the size prefix and the frame go in two sends: no Nagle wait
         * (40 ms with the peer's delayed ACK) between them */
        (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        tv.tv_sec = io_ms / 1000;
        tv.tv_usec = io_ms % 1000 * 1000;
        (void) setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        (void) setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    }
    return fd;
}

static bool
forward_io(int fd, void *buf, size_t len, bool out, int io_ms)
{
    uint8_t  *p = buf;
    ssize_t   n;
    int       waited = 0;

    while (len > 0) {
        n = out ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            struct pollfd  pfd = { .fd = fd,
                                   .events = out ? POLLOUT : POLLIN };

            if (waited >= io_ms || poll(&pfd, 1, 100) < 0) {
                return false;
            }
            waited += 100;
            continue;
        }
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        p += n;
        len -= (size_t) n;
    }
    return true;
}

/* The active controller's CONTROLLER address, from the voters. */
static const samsa_config_voter_t *
forward_voter(const samsa_config_kraft_t *k, int32_t id)
{
    size_t  i;

    for (i = 0; i < k->nvoters; i++) {
        if (k->voters[i].id == id) {
            return &k->voters[i];
        }
    }
    return NULL;
}

samsa_err_t
samsa_forward_roundtrip(const samsa_config_kraft_t *k, int32_t controller_id,
                        const void *request, size_t len,
                        int32_t correlation_id, int io_ms,
                        uint8_t **answer, size_t *answer_len)
{
    const samsa_config_voter_t  *v = forward_voter(k, controller_id);
    samsa_err_t                  err;
    int                          fd;

    *answer = NULL;
    *answer_len = 0;
    if (v == NULL) {
        return SAMSA_ERR_NOT_CONTROLLER;
    }
    fd = samsa_forward_connect(v->addr.host, v->addr.port, io_ms);
    if (fd < 0) {
        samsa_debug("cannot connect to the active controller %d at %s:%d",
                    (int) controller_id, v->addr.host, v->addr.port);
        return SAMSA_ERR__IO;
    }
    err = samsa_forward_exchange(fd, request, len, correlation_id, io_ms,
                                 answer, answer_len);
    close(fd);
    if (err != SAMSA_ERR_NONE) {
        samsa_debug("round trip to the active controller %d at %s:%d "
                    "failed", (int) controller_id, v->addr.host,
                    v->addr.port);
    }
    return err;
}

samsa_err_t
samsa_forward_exchange(int fd, const void *request, size_t len,
                       int32_t correlation_id, int io_ms, uint8_t **answer,
                       size_t *answer_len)
{
    uint8_t   hdr[4], *buf = NULL;
    uint32_t  alen;

    *answer = NULL;
    *answer_len = 0;
    samsa_store_be32(hdr, (uint32_t) len);
    errno = 0;
    if (!forward_io(fd, hdr, 4, true, io_ms)
        || !forward_io(fd, (void *) request, len, true, io_ms)
        || !forward_io(fd, hdr, 4, false, io_ms)) {
        goto fail;
    }
    alen = samsa_load_be32(hdr);
    if (alen < 5 || alen > FORWARD_MAX_RESPONSE) {  /* a header at least */
        errno = 0;
        goto fail;
    }
    buf = samsa_malloc(alen);
    if (!forward_io(fd, buf, alen, false, io_ms)) {
        goto fail;
    }
    if (samsa_load_be32(buf) != (uint32_t) correlation_id) {
        errno = 0;
        goto fail;
    }
    *answer = buf;
    *answer_len = alen;
    return SAMSA_ERR_NONE;

fail:
    samsa_debug("request/response exchange failed: %s",
                errno != 0 ? strerror(errno) : "bad answer");
    samsa_free(buf);
    return SAMSA_ERR__IO;
}

bool
samsa_forward_to_controller(samsa_apis_t *apis, samsa_req_t *req)
{
    samsa_resp_t  *resp;
    uint8_t       *answer = NULL;
    size_t         len, hlen;
    int32_t        active;
    samsa_err_t    err;

    if (apis->broker == NULL || apis->broker->ctrl == NULL
        || req->payload == NULL || req->size_bytes <= 0) {
        return false;
    }
    active = samsa_controller_active_id(apis->broker->ctrl);
    if (active < 0 || active == apis->node->node_id) {
        return false;
    }
    err = samsa_forward_roundtrip(samsa_config_kraft(apis->broker->cfg),
                                  active, req->payload,
                                  (size_t) req->size_bytes,
                                  req->hdr.CorrelationId, FORWARD_IO_MS,
                                  &answer, &len);
    if (err != SAMSA_ERR_NONE) {
        samsa_warn("forwarding %s to the active controller %d failed: %s",
                   req->connection, (int) active, samsa_err_name(err));
        return false;
    }
    /* our own response header (the same bytes the controller wrote: the
     * correlation id and, for a flexible version, no tags), then the
     * controller's body as it came */
    resp = samsa_resp_new_send(req);
    hlen = resp->body_at - 4;           /* 4 or 5 */
    samsa_buf_append(&resp->send.frame, answer + hlen, len - hlen);
    samsa_free(answer);
    samsa_debug("forwarded %s request of %s to the active controller %d",
                samsa_proto_api_find(req->hdr.ApiKey)->name,
                req->connection, (int) active);
    samsa_reqchan_respond(resp);
    return true;
}

void
samsa_forward_header(samsa_wr_t *wr, samsa_buf_t *frame, int16_t api,
                     int16_t version, int32_t correlation_id,
                     int32_t node_id)
{
    char  client_id[48];

    snprintf(client_id, sizeof(client_id), "samsa-broker-%" PRId32, node_id);
    frame->len = 0;
    samsa_wr_init(wr, frame);
    samsa_wr_i16(wr, api);
    samsa_wr_i16(wr, version);
    samsa_wr_i32(wr, correlation_id);
    samsa_wr_nullable_str(wr, samsa_slice_cstr(client_id));
    samsa_wr_uvarint(wr, 0);                /* header tagged fields */
}
