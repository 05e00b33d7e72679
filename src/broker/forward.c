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
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "config/config_kraft.h"
#include "meta/controller/controller.h"
#include "net/server/reqchan.h"
#include "proto/gen/CreateTopics.h"
#include "proto/proto.h"
#include "proto/rd.h"
#include "util/alloc.h"
#include "util/arena.h"
#include "util/diag.h"
#include "util/endian.h"
#include "util/fault.h"
#include "util/time.h"

#define FORWARD_CONNECT_MS   3000
#define FORWARD_IO_MS        60000      /* above CreateTopics' timeouts */
#define FORWARD_MAX_RESPONSE (64 * 1024 * 1024)
#define FORWARD_CT_VERSION     7        /* CreateTopics, flexible */
#define FORWARD_BACKOFF_MS     50       /* first wait between tries */
#define FORWARD_BACKOFF_MAX_MS 1000

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

/* Does the forwarded answer (a response frame without its size prefix)
 * say NOT_CONTROLLER anywhere?  Then the node it went to was no longer
 * the active controller (Kafka's NodeToControllerRequestThread looks at
 * the response's errorCounts for it).  *m gets the answer decoded into
 * arena (its strings borrow answer), NULL when it does not decode: such
 * an answer is taken as it is. */
static bool
forward_not_controller(const samsa_req_t *req, samsa_arena_t *arena,
                       const uint8_t *answer, size_t len, void **m)
{
    const samsa_proto_api_t  *api = samsa_proto_api_find(req->hdr.ApiKey);
    size_t                    hlen;
    samsa_rd_t                rd;

    hlen = samsa_proto_req_is_flexible(req->hdr.ApiKey, req->hdr.ApiVersion)
           ? 5 : 4;                     /* the correlation id and tags */
    *m = NULL;
    if (api == NULL || len < hlen) {
        return false;
    }
    *m = samsa_arena_calloc(arena, 1, api->response_size);
    samsa_rd_init(&rd, answer + hlen, len - hlen);
    if (api->response_decode(&rd, req->hdr.ApiVersion, arena, *m)
        != SAMSA_ERR_NONE) {
        *m = NULL;
        return false;
    }
    return api->response_error_replace(*m, SAMSA_ERR_NOT_CONTROLLER,
                                       SAMSA_ERR_NOT_CONTROLLER) > 0;
}

/* The controller's answer to the client: our own response header (the
 * same bytes the controller wrote: the correlation id and, for a flexible
 * version, no tags), then the controller's body as it came.  @owns req */
static void
forward_relay(samsa_req_t *req, const uint8_t *answer, size_t len)
{
    samsa_resp_t  *resp = samsa_resp_new_send(req);
    size_t         hlen = resp->body_at - 4;        /* 4 or 5 */

    samsa_buf_append(&resp->send.frame, answer + hlen, len - hlen);
    samsa_reqchan_respond(resp);
}

/* Sleep up to *backoff_ms (not past deadline_ms) and double it, capped.
 * @returns false once deadline_ms has passed. */
static bool
forward_backoff(int64_t deadline_ms, int *backoff_ms)
{
    int64_t          left = deadline_ms - samsa_now_ms();
    struct timespec  ts;

    if (left <= 0) {
        return false;
    }
    if (left > *backoff_ms) {
        left = *backoff_ms;
    }
    ts.tv_sec = (time_t) (left / 1000);
    ts.tv_nsec = (long) (left % 1000) * 1000000L;
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
    *backoff_ms = *backoff_ms * 2 > FORWARD_BACKOFF_MAX_MS
                  ? FORWARD_BACKOFF_MAX_MS : *backoff_ms * 2;
    return true;
}

bool
samsa_forward_to_controller(samsa_apis_t *apis, samsa_req_t *req)
{
    uint8_t      *answer = NULL, *last = NULL;
    size_t        len = 0, last_len = 0;
    /* samsa-server-faults: a test's shorter retry timeout */
    long          retry_ms = SAMSA_TEST_HOOK("SAMSA_TEST_FORWARD_RETRY_MS",
                                             SAMSA_FORWARD_RETRY_MS);
    int64_t       deadline = samsa_now_ms() + retry_ms;
    int32_t       active;
    int           backoff = FORWARD_BACKOFF_MS, tries = 0;
    samsa_err_t   err;
    void         *m;
    bool          answered;

    if (apis->broker == NULL || apis->broker->ctrl == NULL
        || req->payload == NULL || req->size_bytes <= 0) {
        return false;
    }
    /* Kafka's forwarding: until the retry timeout, a try whenever the
     * quorum names an active controller; one that cannot be reached, or
     * answers NOT_CONTROLLER, is asked again or the next one is */
    do {
        active = samsa_controller_active_id(apis->broker->ctrl);
        if (active == apis->node->node_id) {
            samsa_free(last);
            return false;               /* this node's controller answers */
        }
        if (active < 0) {
            continue;                   /* no leader known yet */
        }
        tries++;
        err = samsa_forward_roundtrip(samsa_config_kraft(apis->broker->cfg),
                                      active, req->payload,
                                      (size_t) req->size_bytes,
                                      req->hdr.CorrelationId, FORWARD_IO_MS,
                                      &answer, &len);
        if (err != SAMSA_ERR_NONE) {
            samsa_debug("forwarding %s to the active controller %d failed: "
                        "%s", req->connection, (int) active,
                        samsa_err_name(err));
            continue;
        }
        if (!forward_not_controller(req, &req->arena, answer, len, &m)) {
            samsa_free(last);
            samsa_debug("forwarded %s request of %s to the active "
                        "controller %d (try %d)",
                        samsa_proto_api_find(req->hdr.ApiKey)->name,
                        req->connection, (int) active, tries);
            forward_relay(req, answer, len);
            samsa_free(answer);
            return true;
        }
        samsa_debug("controller %d answered %s NOT_CONTROLLER", (int) active,
                    req->connection);
        samsa_free(last);
        last = answer;
        last_len = len;
        answer = NULL;
    } while (forward_backoff(deadline, &backoff));
    samsa_warn("forwarding %s to the active controller: no answer within "
               "%ld ms (%d tries)", req->connection, retry_ms, tries);
    /* Kafka answers its request timeout: the last answer, or when none
     * came this node's own (its controller says NOT_CONTROLLER); either
     * way samsa_apis_send writes REQUEST_TIMED_OUT for NOT_CONTROLLER
     * (req->not_controller_timed_out) */
    answered = last != NULL
               && forward_not_controller(req, &req->arena, last, last_len,
                                         &m);
    if (answered) {
        samsa_apis_send(apis->broker, req, m);
    }
    samsa_free(last);
    return answered;
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

samsa_err_t
samsa_forward_call(const samsa_config_kraft_t *k, int32_t controller_id,
                   int32_t node_id, int16_t api, int16_t version,
                   int32_t correlation_id, int io_ms,
                   samsa_forward_encode_fn *encode, const void *request,
                   samsa_arena_t *arena, void *response, uint8_t **answer)
{
    const samsa_proto_api_t  *pa = samsa_proto_api_find(api);
    samsa_buf_t               frame = SAMSA_BUF_INIT;
    samsa_rd_t                rd;
    samsa_wr_t                wr;
    size_t                    alen = 0;
    samsa_err_t               err;

    samsa_assert(pa != NULL);
    samsa_forward_header(&wr, &frame, api, version, correlation_id, node_id);
    encode(&wr, version, request);
    err = samsa_forward_roundtrip(k, controller_id, frame.data, frame.len,
                                  correlation_id, io_ms, answer, &alen);
    samsa_buf_fini(&frame);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    /* the correlation id was checked (alen >= 5), then the v1 header's
     * tags */
    samsa_rd_init(&rd, *answer + 4, alen - 4);
    samsa_rd_tags_skip(&rd);
    return pa->response_decode(&rd, version, arena, response);
}

samsa_err_t
samsa_forward_create_topic(const samsa_config_kraft_t *kraft,
                           int32_t node_id, int32_t active, const char *name,
                           int32_t nparts, int16_t replication_factor,
                           const samsa_image_config_t *configs,
                           size_t nconfigs, int io_ms)
{
    static _Atomic int32_t           corr;
    samsa_CreateTopicsRequest_t      rq;
    samsa_CreateTopicsResponse_t     resp;
    samsa_CreatableTopic_t           t;
    samsa_CreateableTopicConfig_t    cf[8];
    samsa_arena_t                    arena = SAMSA_ARENA_INIT;
    uint8_t                         *answer = NULL;
    size_t                           i;
    int32_t                          id;
    samsa_err_t                      err;

    if (nconfigs > sizeof(cf) / sizeof(cf[0])) {
        return SAMSA_ERR_INVALID_CONFIG;
    }
    samsa_CreatableTopic_init(&t);
    t.Name = samsa_slice_cstr(name);
    t.NumPartitions = nparts;
    t.ReplicationFactor = replication_factor;
    for (i = 0; i < nconfigs; i++) {
        samsa_CreateableTopicConfig_init(&cf[i]);
        cf[i].Name = samsa_slice_cstr(configs[i].name);
        cf[i].Value = samsa_slice_cstr(configs[i].value);
    }
    t.Configs = cf;
    t.Configs_cnt = (int32_t) nconfigs;
    samsa_CreateTopicsRequest_init(&rq);
    rq.Topics = &t;
    rq.Topics_cnt = 1;
    rq.TimeoutMs = io_ms;
    id = atomic_fetch_add_explicit(&corr, 1, memory_order_relaxed)
         & INT32_MAX;
    err = samsa_forward_call(kraft, active, node_id, SAMSA_API_CreateTopics,
                             FORWARD_CT_VERSION, id, io_ms,
                             samsa_CreateTopicsRequest_encode_any, &rq,
                             &arena, &resp, &answer);
    if (err == SAMSA_ERR_NONE) {
        err = resp.Topics_cnt == 1 ? (samsa_err_t) resp.Topics[0].ErrorCode
                                   : SAMSA_ERR__BAD_MSG;
    }
    if (err == SAMSA_ERR_TOPIC_ALREADY_EXISTS) {
        err = SAMSA_ERR_NONE;
    }
    samsa_arena_fini(&arena);
    samsa_free(answer);
    return err;
}
