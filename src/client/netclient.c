/*
 * client/netclient.c - connections to brokers for the sender thread (see
 * netclient.h).  Framing and socket writes are net/conn.c's, the epoll
 * set and its wake-up net/selector.c's (both shared with the broker's
 * network threads); this file adds connecting, the ApiVersions
 * handshake, request/response matching by correlation id, timeouts,
 * backoff and throttling.
 * Threads: the sender thread owns everything here (the selector
 * included); other threads only wake the selector.
 */
#include "client/netclient.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <pthread.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "client/jaas_conf.h"
#include "client/oauth_login.h"
#include "client/sasl_client.h"
#include "net/conn.h"
#include "net/mempool.h"
#include "net/selector.h"
#include "proto/gen/ApiVersions.h"
#include "proto/gen/SaslAuthenticate.h"
#include "proto/gen/SaslHandshake.h"
#include "proto/gen/apis.h"
#include "proto/proto.h"
#include "util/alloc.h"
#include "util/arena.h"
#include "util/diag.h"
#include "util/time.h"

#define NC_MAX_API      128
#define NC_MAX_EVENTS   64

typedef enum nc_state {
    NC_DISCONNECTED = 0,
    NC_CONNECTING,              /* TCP connect in progress */
    NC_TLS,                     /* TLS handshake in progress (SSL) */
    NC_HANDSHAKE,               /* ApiVersions sent */
    NC_SASL_HANDSHAKE,          /* SASL_*: SaslHandshake v1 sent */
    NC_SASL_AUTH,               /* SaslAuthenticate tokens going */
    NC_READY,
} nc_state_t;

typedef struct nc_req {
    struct nc_req      *next;
    int32_t             corr;
    int16_t             api;
    int16_t             version;
    bool                expect_response;
    bool                internal;       /* the connection set-up's own:
                                           ApiVersions, SaslHandshake,
                                           SaslAuthenticate */
    samsa_nc_resp_fn   *cb;
    void               *ctx;
    void               *opaque;
    int64_t             sent_ms;
    samsa_send_t        send;           /* the request's frame, freed once
                                           written */
} nc_req_t;

typedef struct nc_node {
    int32_t         id;
    char            host[256];
    int32_t         port;
    nc_state_t      state;
    samsa_conn_t    conn;               /* net/conn.c's channel state */
    nc_req_t       *outq;               /* to write, oldest first */
    nc_req_t       *outq_tail;
    nc_req_t       *inflight;           /* written, awaiting responses */
    nc_req_t       *inflight_tail;
    int32_t         nreqs;              /* outq + inflight, not internal */
    bool            want_write;         /* last write blocked */
    int64_t         connect_deadline_ms;
    int64_t         backoff_ms;
    int64_t         backoff_until_ms;
    int64_t         throttle_until_ms;  /* KIP-219: nothing is sent
                                           before (kept over reconnects,
                                           as the broker's quota is) */
    samsa_err_t     last_err;           /* why it last disconnected */
    int16_t         apiv_version;       /* ApiVersions version tried */
    samsa_sasl_client_t *sasl;          /* NC_SASL_*: the exchange */
    int64_t         reauth_at_ms;       /* KIP-368: re-authenticate (a
                                           new connection) after; 0:
                                           never */
    int16_t         api_min[NC_MAX_API];
    int16_t         api_max[NC_MAX_API];    /* -1: unsupported */
} nc_node_t;

struct samsa_netclient {
    samsa_nc_conf_t   conf;
    char             *client_id;
    samsa_selector_t  sel;              /* wakeups: any thread (they
                                           coalesce: one syscall per
                                           sender turn, not per record) */
    nc_node_t       **nodes;
    int32_t           nnodes;
    int32_t           corr;
    samsa_mempool_t   mempool;          /* unlimited: receive accounting */
    uint8_t          *resp_buf;         /* the response whose callback
                                           runs, until taken */
    char             *sasl_username;
    char             *sasl_password;
    char             *sasl_oauth_jaas;
    pthread_mutex_t   auth_lock;        /* auth_err, auth_msg: read by
                                           any thread */
    samsa_err_t       auth_err;         /* the last SASL failure, until a
                                           connection authenticates */
    char              auth_msg[1024];
};

static void nc_disconnect(samsa_netclient_t *nc, nc_node_t *n,
                          samsa_err_t err);

samsa_netclient_t *
samsa_netclient_new(const samsa_nc_conf_t *conf)
{
    samsa_netclient_t   *nc = samsa_calloc(1, sizeof(*nc));

    nc->conf = *conf;
    nc->client_id = samsa_strdup(conf->client_id != NULL ? conf->client_id
                                                         : "");
    nc->conf.client_id = nc->client_id;
    if (nc->conf.log_name == NULL) {
        nc->conf.log_name = "producer";
    }
    if (conf->tls != NULL) {
        nc->conf.tls = samsa_tls_ctx_ref(conf->tls);
    }
    if (conf->sasl_mech != 0) {
        nc->sasl_username = samsa_strdup(conf->sasl_username != NULL
                                             ? conf->sasl_username : "");
        nc->sasl_password = samsa_strdup(conf->sasl_password != NULL
                                             ? conf->sasl_password : "");
        nc->sasl_oauth_jaas = samsa_strdup(conf->sasl_oauth_jaas != NULL
                                               ? conf->sasl_oauth_jaas : "");
    }
    nc->conf.sasl_username = nc->sasl_username;
    nc->conf.sasl_password = nc->sasl_password;
    nc->conf.sasl_oauth_jaas = nc->sasl_oauth_jaas;
    samsa_assert(pthread_mutex_init(&nc->auth_lock, NULL) == 0);
    samsa_assert(samsa_selector_init(&nc->sel) == SAMSA_ERR_NONE);
    samsa_mempool_init(&nc->mempool, 0);
    return nc;
}

void
samsa_netclient_free(samsa_netclient_t *nc)
{
    int32_t  i;

    if (nc == NULL) {
        return;
    }
    for (i = 0; i < nc->nnodes; i++) {
        nc_disconnect(nc, nc->nodes[i], SAMSA_ERR__SHUTDOWN);
        samsa_free(nc->nodes[i]);
    }
    samsa_free(nc->nodes);
    samsa_selector_fini(&nc->sel);
    samsa_tls_ctx_unref(nc->conf.tls);
    samsa_free(nc->client_id);
    if (nc->sasl_password != NULL) {
        memset(nc->sasl_password, 0, strlen(nc->sasl_password));
    }
    if (nc->sasl_oauth_jaas != NULL) {
        memset(nc->sasl_oauth_jaas, 0, strlen(nc->sasl_oauth_jaas));
    }
    samsa_free(nc->sasl_username);
    samsa_free(nc->sasl_password);
    samsa_free(nc->sasl_oauth_jaas);
    pthread_mutex_destroy(&nc->auth_lock);
    samsa_free(nc);
}

static nc_node_t *
nc_node_find(samsa_netclient_t *nc, int32_t id)
{
    int32_t  i;

    for (i = 0; i < nc->nnodes; i++) {
        if (nc->nodes[i]->id == id) {
            return nc->nodes[i];
        }
    }
    return NULL;
}

void
samsa_netclient_node_set(samsa_netclient_t *nc, int32_t id,
                         const char *host, int32_t port)
{
    nc_node_t  *n = nc_node_find(nc, id);

    if (n != NULL) {
        if (strcmp(n->host, host) == 0 && n->port == port) {
            return;
        }
        nc_disconnect(nc, n, SAMSA_ERR__CLOSED);
    } else {
        n = samsa_calloc(1, sizeof(*n));
        n->id = id;
        n->conn.fd = -1;
        nc->nodes = samsa_realloc(nc->nodes, (size_t) (nc->nnodes + 1)
                                                 * sizeof(*nc->nodes));
        nc->nodes[nc->nnodes++] = n;
    }
    snprintf(n->host, sizeof(n->host), "%s", host);
    n->port = port;
}

/* ---- requests ----------------------------------------------------------- */

int32_t
samsa_netclient_frame_begin(samsa_netclient_t *nc, int16_t api,
                            int16_t version, samsa_buf_t *frame,
                            samsa_wr_t *wr)
{
    int32_t  corr = nc->corr++;

    if (nc->corr < 0) {
        nc->corr = 0;
    }
    frame->len = 0;
    samsa_wr_init(wr, frame);
    wr->region = NULL;
    samsa_wr_i32(wr, 0);                        /* size, patched at send */
    samsa_wr_i16(wr, api);
    samsa_wr_i16(wr, version);
    samsa_wr_i32(wr, corr);
    samsa_wr_nullable_str(wr, samsa_slice_cstr(nc->client_id));
    if (samsa_proto_req_is_flexible(api, version)) {
        samsa_wr_uvarint(wr, 0);                /* header tagged fields */
    }
    return corr;
}

/* Register what n waits for now: writability while connecting or while a
 * write is blocked, readability once connected.  _IO (logged) if the
 * selector refuses: the caller closes the connection. */
static samsa_err_t
nc_events(samsa_netclient_t *nc, nc_node_t *n)
{
    uint32_t  want;

    if (n->conn.fd < 0) {
        return SAMSA_ERR_NONE;
    }
    want = n->state == NC_CONNECTING
               ? SAMSA_SELECTOR_F_WRITE
               : SAMSA_SELECTOR_F_READ
                     | (n->want_write ? SAMSA_SELECTOR_F_WRITE : 0);
    if (n->conn.tls != NULL) {
        /* the handshake waits for what OpenSSL says; a read may wait
         * for WRITE */
        want = n->state == NC_TLS
                   ? samsa_tls_read_wants(n->conn.tls)
                   : want | (samsa_tls_read_wants(n->conn.tls)
                             & SAMSA_SELECTOR_F_WRITE);
    }
    if (want == n->conn.events) {
        return SAMSA_ERR_NONE;
    }
    if (samsa_selector_modify(&nc->sel, n->conn.fd, want, n)
        != SAMSA_ERR_NONE) {
        return SAMSA_ERR__IO;
    }
    n->conn.events = want;
    return SAMSA_ERR_NONE;
}

/* Fail and free every request of n.  @thread sender */
static void
nc_fail_all(nc_node_t *n, samsa_err_t err)
{
    nc_req_t  *lists[2] = { n->inflight, n->outq };
    nc_req_t  *r, *next;
    int        i;

    n->inflight = n->inflight_tail = NULL;
    n->outq = n->outq_tail = NULL;
    n->nreqs = 0;
    for (i = 0; i < 2; i++) {
        for (r = lists[i]; r != NULL; r = next) {
            next = r->next;
            if (!r->internal && r->cb != NULL) {
                r->cb(r->ctx, n->id, err, NULL, r->opaque);
            }
            samsa_send_fini(&r->send);
            samsa_free(r);
        }
    }
}

static void
nc_disconnect(samsa_netclient_t *nc, nc_node_t *n, samsa_err_t err)
{
    int64_t  now = samsa_now_ms();
    int32_t  size;

    if (n->state == NC_DISCONNECTED) {
        return;
    }
    if (err != SAMSA_ERR__SHUTDOWN) {
        samsa_info("%s: connection to node %d (%s:%d) closed: %s",
                   nc->conf.log_name, n->id, n->host, n->port,
                   samsa_err_name(err));
    }
    if (n->conn.fd >= 0) {
        if (n->conn.events != 0) {
            /* logged if it fails; the close leaves the set anyway */
            (void) !samsa_selector_remove(&nc->sel, n->conn.fd);
        }
        samsa_tls_free(n->conn.tls);
        close(n->conn.fd);
    }
    samsa_sasl_client_free(n->sasl);
    n->sasl = NULL;
    n->reauth_at_ms = 0;
    samsa_free(samsa_conn_take_payload(&n->conn, &size));
    if (n->conn.sending != NULL) {
        n->conn.sending = NULL;         /* owned by the outq head */
    }
    memset(&n->conn, 0, sizeof(n->conn));
    n->conn.fd = -1;
    n->state = NC_DISCONNECTED;
    n->last_err = err;
    n->want_write = false;
    n->backoff_ms = n->backoff_ms == 0
                        ? nc->conf.reconnect_backoff_ms
                        : n->backoff_ms * 2;
    if (n->backoff_ms > nc->conf.reconnect_backoff_max_ms) {
        n->backoff_ms = nc->conf.reconnect_backoff_max_ms;
    }
    n->backoff_until_ms = now + n->backoff_ms;
    nc_fail_all(n, err);
}

void
samsa_netclient_close_all(samsa_netclient_t *nc, samsa_err_t err)
{
    int32_t  i;

    for (i = 0; i < nc->nnodes; i++) {
        nc_disconnect(nc, nc->nodes[i], err);
    }
}

void
samsa_netclient_disconnect(samsa_netclient_t *nc, int32_t node,
                           samsa_err_t err)
{
    nc_node_t  *n = nc_node_find(nc, node);

    if (n != NULL) {
        nc_disconnect(nc, n, err);
    }
}

/* Is n throttled (KIP-219) now?  Clears an ended throttle, so that an
 * unthrottled node costs no clock read.  @thread sender */
static bool
nc_throttled(nc_node_t *n)
{
    if (n->throttle_until_ms == 0) {
        return false;
    }
    if (samsa_now_ms() < n->throttle_until_ms) {
        return true;
    }
    n->throttle_until_ms = 0;
    return false;
}

/* Write queued frames until the socket is full.  While the node is
 * throttled, requests not yet begun stay queued (callers that do not ask
 * samsa_netclient_ready first, such as the admin client and the group
 * coordinator calls, are held back too); samsa_netclient_poll writes them
 * when the throttle ends.  @thread sender */
static samsa_err_t
nc_flush(samsa_netclient_t *nc, nc_node_t *n)
{
    nc_req_t     *r;
    samsa_err_t   err;
    bool          done;

    while ((r = n->outq) != NULL) {
        if (!r->internal && n->conn.sending != &r->send && nc_throttled(n)) {
            break;
        }
        if (n->conn.sending != &r->send) {
            n->conn.sending = &r->send;
            n->conn.send_off = 0;
            n->conn.send_region = 0;
            n->conn.region_off = 0;
        }
        err = samsa_conn_write(&n->conn, &done);
        if (err != SAMSA_ERR_NONE) {
            return err;
        }
        if (!done) {
            n->want_write = true;
            return nc_events(nc, n);
        }
        n->conn.sending = NULL;
        samsa_send_fini(&r->send);
        n->outq = r->next;
        if (n->outq == NULL) {
            n->outq_tail = NULL;
        }
        r->next = NULL;
        if (r->expect_response) {
            if (n->inflight_tail != NULL) {
                n->inflight_tail->next = r;
            } else {
                n->inflight = r;
            }
            n->inflight_tail = r;
        } else {
            n->nreqs--;
            if (r->cb != NULL) {
                r->cb(r->ctx, n->id, SAMSA_ERR_NONE, NULL, r->opaque);
            }
            samsa_free(r);
        }
    }
    n->want_write = false;
    return nc_events(nc, n);
}

static void
nc_enqueue(samsa_netclient_t *nc, nc_node_t *n, nc_req_t *r,
           samsa_buf_t *frame)
{
    samsa_err_t  err;

    r->send = SAMSA_SEND_INIT;
    r->send.frame = *frame;
    *frame = SAMSA_BUF_INIT;
    samsa_store_be32(r->send.frame.data, (uint32_t) (r->send.frame.len - 4));
    if (n->outq_tail != NULL) {
        n->outq_tail->next = r;
    } else {
        n->outq = r;
    }
    n->outq_tail = r;
    if (!r->internal) {
        n->nreqs++;
    }
    err = nc_flush(nc, n);
    if (err != SAMSA_ERR_NONE) {
        nc_disconnect(nc, n, err);
    }
}

samsa_err_t
samsa_netclient_send(samsa_netclient_t *nc, int32_t node, samsa_buf_t *frame,
                     int16_t api, int16_t version, bool expect_response,
                     samsa_nc_resp_fn *cb, void *ctx, void *opaque,
                     int64_t now_ms)
{
    nc_node_t  *n = nc_node_find(nc, node);
    nc_req_t   *r;

    if (n == NULL || n->state != NC_READY) {
        return SAMSA_ERR__STATE;
    }
    r = samsa_calloc(1, sizeof(*r));
    r->corr = (int32_t) samsa_load_be32(frame->data + 8);
    r->api = api;
    r->version = version;
    r->expect_response = expect_response;
    r->cb = cb;
    r->ctx = ctx;
    r->opaque = opaque;
    r->sent_ms = now_ms;
    nc_enqueue(nc, n, r, frame);
    return SAMSA_ERR_NONE;
}

/* ---- connecting and the ApiVersions handshake --------------------------- */

static void
nc_send_apiversions(samsa_netclient_t *nc, nc_node_t *n)
{
    samsa_ApiVersionsRequest_t  req;
    samsa_buf_t                 frame = SAMSA_BUF_INIT;
    samsa_wr_t                  wr;
    nc_req_t                   *r = samsa_calloc(1, sizeof(*r));

    samsa_ApiVersionsRequest_init(&req);
    req.ClientSoftwareName = samsa_slice_cstr("samsa");
    req.ClientSoftwareVersion = samsa_slice_cstr("0.1");
    r->corr = samsa_netclient_frame_begin(nc, SAMSA_API_ApiVersions,
                                          n->apiv_version, &frame, &wr);
    samsa_ApiVersionsRequest_encode(&wr, n->apiv_version, &req);
    r->api = SAMSA_API_ApiVersions;
    r->version = n->apiv_version;
    r->expect_response = true;
    r->internal = true;
    r->sent_ms = samsa_now_ms();
    n->state = NC_HANDSHAKE;
    nc_enqueue(nc, n, r, &frame);
}

static void
nc_ready(samsa_netclient_t *nc, nc_node_t *n)
{
    n->state = NC_READY;
    n->backoff_ms = 0;
    samsa_debug("%s: node %d (%s:%d) ready", nc->conf.log_name, n->id,
                n->host, n->port);
}

static void nc_sasl_handshake(samsa_netclient_t *nc, nc_node_t *n);

static void
nc_handle_apiversions(samsa_netclient_t *nc, nc_node_t *n, nc_req_t *r,
                      samsa_rd_t *body)
{
    samsa_ApiVersionsResponse_t  resp;
    samsa_arena_t                arena = SAMSA_ARENA_INIT;
    samsa_err_t                  err;
    int32_t                      i;
    int16_t                      k;

    /* An unsupported version is answered as v0 with the broker's list. */
    err = samsa_ApiVersionsResponse_decode(body, r->version, &arena, &resp);
    if (err != SAMSA_ERR_NONE && r->version > 0) {
        samsa_arena_fini(&arena);
        n->apiv_version = 0;
        nc_send_apiversions(nc, n);
        return;
    }
    if (err == SAMSA_ERR_NONE
        && resp.ErrorCode == SAMSA_ERR_UNSUPPORTED_VERSION
        && r->version > 0) {
        n->apiv_version = 0;
        samsa_arena_fini(&arena);
        nc_send_apiversions(nc, n);
        return;
    }
    if (err != SAMSA_ERR_NONE || resp.ErrorCode != 0) {
        samsa_arena_fini(&arena);
        nc_disconnect(nc, n, err != SAMSA_ERR_NONE
                                 ? err : (samsa_err_t) resp.ErrorCode);
        return;
    }
    for (k = 0; k < NC_MAX_API; k++) {
        n->api_min[k] = n->api_max[k] = -1;
    }
    for (i = 0; i < resp.ApiKeys_cnt; i++) {
        k = resp.ApiKeys[i].ApiKey;
        if (k >= 0 && k < NC_MAX_API) {
            n->api_min[k] = resp.ApiKeys[i].MinVersion;
            n->api_max[k] = resp.ApiKeys[i].MaxVersion;
        }
    }
    samsa_arena_fini(&arena);
    if (nc->conf.sasl_mech != 0) {
        nc_sasl_handshake(nc, n);
        return;
    }
    nc_ready(nc, n);
}

static void
nc_sockopts(samsa_netclient_t *nc, int fd)
{
    int  one = 1;

    (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    (void) setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
    if (nc->conf.send_buffer_bytes > 0) {
        (void) setsockopt(fd, SOL_SOCKET, SO_SNDBUF,
                          &nc->conf.send_buffer_bytes, sizeof(int32_t));
    }
    if (nc->conf.receive_buffer_bytes > 0) {
        (void) setsockopt(fd, SOL_SOCKET, SO_RCVBUF,
                          &nc->conf.receive_buffer_bytes, sizeof(int32_t));
    }
}

static void
nc_connect(samsa_netclient_t *nc, nc_node_t *n, int64_t now_ms)
{
    struct addrinfo  hints, *ai = NULL;
    char             port[16];
    int              fd, r;

    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    snprintf(port, sizeof(port), "%d", n->port);
    n->state = NC_CONNECTING;           /* so that disconnect backs off */
    if (getaddrinfo(n->host, port, &hints, &ai) != 0 || ai == NULL) {
        samsa_warn("%s: cannot resolve %s", nc->conf.log_name, n->host);
        nc_disconnect(nc, n, SAMSA_ERR__RESOLVE);
        return;
    }
    fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
                0);
    if (fd < 0) {
        freeaddrinfo(ai);
        nc_disconnect(nc, n, SAMSA_ERR__IO);
        return;
    }
    nc_sockopts(nc, fd);
    r = connect(fd, ai->ai_addr, ai->ai_addrlen);
    freeaddrinfo(ai);
    n->conn.fd = fd;
    if (r < 0 && errno != EINPROGRESS) {
        nc_disconnect(nc, n, SAMSA_ERR__CLOSED);
        return;
    }
    if (samsa_selector_add(&nc->sel, fd, SAMSA_SELECTOR_F_WRITE, n)
        != SAMSA_ERR_NONE) {
        nc_disconnect(nc, n, SAMSA_ERR__IO);
        return;
    }
    n->conn.events = SAMSA_SELECTOR_F_WRITE;
    n->connect_deadline_ms = now_ms + nc->conf.connection_setup_timeout_ms;
    n->apiv_version = 3;
}

static void nc_tls_handshake(samsa_netclient_t *nc, nc_node_t *n);

static void
nc_connected(samsa_netclient_t *nc, nc_node_t *n)
{
    int        soerr = 0;
    socklen_t  len = sizeof(soerr);

    if (getsockopt(n->conn.fd, SOL_SOCKET, SO_ERROR, &soerr, &len) != 0
        || soerr != 0) {
        nc_disconnect(nc, n, SAMSA_ERR__CLOSED);
        return;
    }
    if (nc->conf.tls != NULL) {
        if (samsa_tls_new(&n->conn.tls, nc->conf.tls, n->conn.fd, n->host,
                          n->host) != SAMSA_ERR_NONE) {
            nc_disconnect(nc, n, SAMSA_ERR__IO);
            return;
        }
        n->state = NC_TLS;
        nc_tls_handshake(nc, n);
        return;
    }
    nc_send_apiversions(nc, n);
    if (n->state != NC_DISCONNECTED && nc_events(nc, n) != SAMSA_ERR_NONE) {
        nc_disconnect(nc, n, SAMSA_ERR__IO);
    }
}

/* One step of the TLS handshake; once done, ApiVersions as on a
 * plaintext connection.  A failure is logged once by net/tls.c. */
static void
nc_tls_handshake(samsa_netclient_t *nc, nc_node_t *n)
{
    samsa_err_t  err = samsa_tls_handshake(n->conn.tls);

    if (err != SAMSA_ERR_NONE) {
        nc_disconnect(nc, n, err);
        return;
    }
    if (!samsa_tls_handshaking(n->conn.tls)) {
        nc_send_apiversions(nc, n);     /* state NC_HANDSHAKE */
    }
    if (n->state != NC_DISCONNECTED && nc_events(nc, n) != SAMSA_ERR_NONE) {
        nc_disconnect(nc, n, SAMSA_ERR__IO);
    }
}

bool
samsa_netclient_ready(samsa_netclient_t *nc, int32_t node, int64_t now_ms)
{
    nc_node_t  *n = nc_node_find(nc, node);

    if (n == NULL) {
        return false;
    }
    if (n->state == NC_DISCONNECTED && now_ms >= n->backoff_until_ms) {
        nc_connect(nc, n, now_ms);
    }
    return n->state == NC_READY && n->nreqs < nc->conf.max_in_flight
           && now_ms >= n->throttle_until_ms;
}

/* Where a response says its throttle time, for the netclient to read it
 * itself: from version `from` on, Kafka's shouldClientThrottle is true
 * (KIP-219: the broker answered at once and the client must wait; before
 * it the broker delayed the response itself) and ThrottleTimeMs is the
 * int32 at byte `at` of the body.  Produce's comes after its responses:
 * the sender reads it (at -1).  APIs not listed never throttle the
 * client; the ApiVersions handshake is the netclient's own and exempt. */
static const struct nc_throttle_field {
    int16_t  api;
    int16_t  from;
    int8_t   at;
} nc_throttle_fields[] = {
    { SAMSA_API_Produce,                 6, -1 },
    { SAMSA_API_Fetch,                   8, 0 },
    { SAMSA_API_ListOffsets,             3, 0 },
    { SAMSA_API_Metadata,                6, 0 },
    { SAMSA_API_OffsetCommit,            4, 0 },
    { SAMSA_API_OffsetFetch,             4, 0 },
    { SAMSA_API_FindCoordinator,         2, 0 },
    { SAMSA_API_JoinGroup,               3, 0 },
    { SAMSA_API_Heartbeat,               2, 0 },
    { SAMSA_API_LeaveGroup,              2, 0 },
    { SAMSA_API_SyncGroup,               2, 0 },
    { SAMSA_API_DescribeGroups,          2, 0 },
    { SAMSA_API_ListGroups,              2, 0 },
    { SAMSA_API_CreateTopics,            3, 0 },
    { SAMSA_API_DeleteTopics,            2, 0 },
    { SAMSA_API_DeleteRecords,           1, 0 },
    { SAMSA_API_InitProducerId,          1, 0 },
    { SAMSA_API_AddPartitionsToTxn,      1, 0 },
    { SAMSA_API_AddOffsetsToTxn,         1, 0 },
    { SAMSA_API_EndTxn,                  1, 0 },
    { SAMSA_API_TxnOffsetCommit,         1, 0 },
    { SAMSA_API_DescribeConfigs,         2, 0 },
    { SAMSA_API_AlterConfigs,            1, 0 },
    { SAMSA_API_DescribeLogDirs,         1, 0 },
    { SAMSA_API_CreatePartitions,        1, 0 },
    { SAMSA_API_DeleteGroups,            1, 0 },
    { SAMSA_API_IncrementalAlterConfigs, 0, 0 },
    { SAMSA_API_OffsetDelete,            0, 2 },    /* after ErrorCode */
    { SAMSA_API_DescribeClientQuotas,    0, 0 },
    { SAMSA_API_AlterClientQuotas,       0, 0 },
    { SAMSA_API_DescribeCluster,         0, 0 },
    { SAMSA_API_DescribeProducers,       0, 0 },
    { SAMSA_API_DescribeTransactions,    0, 0 },
    { SAMSA_API_ListTransactions,        0, 0 },
    { SAMSA_API_ConsumerGroupHeartbeat,  0, 0 },
    { SAMSA_API_ConsumerGroupDescribe,   0, 0 },
};

static const struct nc_throttle_field *
nc_throttle_field(int16_t api, int16_t version)
{
    size_t  i;

    for (i = 0; i < sizeof(nc_throttle_fields)
                        / sizeof(nc_throttle_fields[0]); i++) {
        if (nc_throttle_fields[i].api == api) {
            return version >= nc_throttle_fields[i].from
                       ? &nc_throttle_fields[i]
                       : NULL;
        }
    }
    return NULL;
}

void
samsa_netclient_throttle(samsa_netclient_t *nc, int32_t node, int16_t api,
                         int16_t version, int32_t throttle_ms,
                         int64_t now_ms)
{
    nc_node_t  *n = nc_node_find(nc, node);

    if (n == NULL || throttle_ms <= 0
        || nc_throttle_field(api, version) == NULL
        || now_ms + throttle_ms <= n->throttle_until_ms) {
        return;
    }
    samsa_debug("%s: node %d throttled for %d ms", nc->conf.log_name,
                node, throttle_ms);
    n->throttle_until_ms = now_ms + throttle_ms;
}

bool
samsa_netclient_busy(samsa_netclient_t *nc, int32_t node)
{
    nc_node_t  *n = nc_node_find(nc, node);

    return n != NULL && n->state == NC_READY
           && n->nreqs >= nc->conf.max_in_flight;
}

bool
samsa_netclient_connected(samsa_netclient_t *nc, int32_t node)
{
    nc_node_t  *n = nc_node_find(nc, node);

    return n != NULL && n->state != NC_DISCONNECTED;
}

int16_t
samsa_netclient_version(samsa_netclient_t *nc, int32_t node, int16_t api,
                        int16_t lo, int16_t hi)
{
    nc_node_t  *n = nc_node_find(nc, node);
    int16_t     v;

    if (n == NULL || n->state != NC_READY || api < 0 || api >= NC_MAX_API
        || n->api_max[api] < 0) {
        return -1;
    }
    v = n->api_max[api] < hi ? n->api_max[api] : hi;
    return v >= lo && v >= n->api_min[api] ? v : -1;
}

int32_t
samsa_netclient_least_loaded(samsa_netclient_t *nc, int64_t now_ms)
{
    nc_node_t  *n, *best = NULL;
    int32_t     i, start;

    if (nc->nnodes == 0) {
        return SAMSA_NC_NO_NODE;
    }
    start = (int32_t) (now_ms % nc->nnodes);
    for (i = 0; i < nc->nnodes; i++) {
        n = nc->nodes[(start + i) % nc->nnodes];
        if (n->state == NC_READY && n->nreqs < nc->conf.max_in_flight
            && now_ms >= n->throttle_until_ms
            && (best == NULL || best->state != NC_READY
                || n->nreqs < best->nreqs)) {
            best = n;
        } else if (best == NULL && n->state != NC_DISCONNECTED) {
            best = n;
        }
    }
    for (i = 0; best == NULL && i < nc->nnodes; i++) {
        n = nc->nodes[(start + i) % nc->nnodes];
        if (now_ms >= n->backoff_until_ms) {
            best = n;
        }
    }
    return best != NULL ? best->id : SAMSA_NC_NO_NODE;
}

samsa_err_t
samsa_netclient_last_error(samsa_netclient_t *nc, int32_t node)
{
    nc_node_t  *n = nc_node_find(nc, node);

    return n != NULL ? n->last_err : SAMSA_ERR__NOENT;
}

int32_t
samsa_netclient_inflight(samsa_netclient_t *nc, int32_t node)
{
    nc_node_t  *n = nc_node_find(nc, node);

    return n != NULL ? n->nreqs : 0;
}

/* ---- SASL (security.protocol SASL_PLAINTEXT / SASL_SSL) ---------------- */

/* A SASL failure: remembered with the broker's message for the
 * application (samsa_netclient_auth_error), logged, and the connection
 * closed with err.  Reconnects back off as after any close; callers that
 * wait for a node look at the remembered error and give up rather than
 * retry (Java's AuthenticationException). */
static void
nc_auth_fail(samsa_netclient_t *nc, nc_node_t *n, samsa_err_t err,
             const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void
nc_auth_fail(samsa_netclient_t *nc, nc_node_t *n, samsa_err_t err,
             const char *fmt, ...)
{
    char     why[400];
    va_list  ap;

    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&nc->auth_lock);
    nc->auth_err = err;
    snprintf(nc->auth_msg, sizeof(nc->auth_msg), "node %d (%s:%d): %s",
             n->id, n->host, n->port, why);
    pthread_mutex_unlock(&nc->auth_lock);
    samsa_warn("%s: SASL %s with node %d (%s:%d) failed: %s: %s",
               nc->conf.log_name,
               samsa_sasl_client_mech_name((samsa_sasl_mech_t) nc->conf.sasl_mech),
               n->id, n->host, n->port, samsa_err_name(err), why);
    nc_disconnect(nc, n, err);
}

samsa_err_t
samsa_netclient_auth_error(samsa_netclient_t *nc, char *msg, size_t size)
{
    samsa_err_t  err;

    pthread_mutex_lock(&nc->auth_lock);
    err = nc->auth_err;
    if (msg != NULL && size > 0) {
        snprintf(msg, size, "%s", err != SAMSA_ERR_NONE ? nc->auth_msg : "");
    }
    pthread_mutex_unlock(&nc->auth_lock);
    return err;
}

/* Queue one of the set-up's own requests (internal: not counted, no
 * callback). */
static void
nc_send_internal(samsa_netclient_t *nc, nc_node_t *n, int16_t api,
                 int16_t version, samsa_buf_t *frame, int32_t corr)
{
    nc_req_t  *r = samsa_calloc(1, sizeof(*r));

    r->corr = corr;
    r->api = api;
    r->version = version;
    r->expect_response = true;
    r->internal = true;
    r->sent_ms = samsa_now_ms();
    nc_enqueue(nc, n, r, frame);
}

/* OAUTHBEARER: an exchange with a token made now from the JAAS options
 * (client/oauth_login.h), so that a re-authentication (KIP-368) sends a
 * fresh one.  The options were checked when the client was made; a
 * failure here fails the connection's authentication. */
static samsa_err_t
nc_oauth_client(samsa_netclient_t *nc, nc_node_t *n)
{
    samsa_jaas_conf_t  jc;
    samsa_buf_t        token = SAMSA_BUF_INIT, ext = SAMSA_BUF_INIT;
    char               why[512];
    samsa_err_t        err;

    err = samsa_jaas_conf_parse(nc->sasl_oauth_jaas, &jc, why, sizeof(why));
    if (err == SAMSA_ERR_NONE) {
        err = samsa_oauth_login_token(&jc, samsa_wall_ms(), &token, &ext,
                                      why, sizeof(why));
    }
    samsa_jaas_conf_fini(&jc);
    if (err == SAMSA_ERR_NONE) {
        n->sasl = samsa_sasl_client_new_oauthbearer((const char *) token.data,
                                                    (const char *) ext.data);
    } else {
        nc_auth_fail(nc, n, SAMSA_ERR_SASL_AUTHENTICATION_FAILED, "%s", why);
    }
    if (token.data != NULL) {
        memset(token.data, 0, token.len);
    }
    samsa_buf_fini(&token);
    samsa_buf_fini(&ext);
    return err;
}

/* SaslHandshake v1 naming the mechanism (v0's raw tokens are not
 * spoken: every broker since Kafka 1.0 takes v1). */
static void
nc_sasl_handshake(samsa_netclient_t *nc, nc_node_t *n)
{
    samsa_SaslHandshakeRequest_t  req;
    samsa_buf_t                   frame = SAMSA_BUF_INIT;
    samsa_wr_t                    wr;
    const char                   *mech = samsa_sasl_client_mech_name(
        (samsa_sasl_mech_t) nc->conf.sasl_mech);
    int32_t                       corr;

    if (n->api_max[SAMSA_API_SaslHandshake] < 1
        || n->api_max[SAMSA_API_SaslAuthenticate] < 0) {
        nc_auth_fail(nc, n, SAMSA_ERR_ILLEGAL_SASL_STATE,
                     "the broker offers no SaslHandshake v1 / "
                     "SaslAuthenticate (is this a SASL listener?)");
        return;
    }
    samsa_sasl_client_free(n->sasl);
    n->sasl = NULL;
    if (nc->conf.sasl_mech == SAMSA_SASL_OAUTHBEARER) {
        if (nc_oauth_client(nc, n) != SAMSA_ERR_NONE) {
            return;
        }
    } else {
        n->sasl = samsa_sasl_client_new(
            (samsa_sasl_mech_t) nc->conf.sasl_mech, nc->sasl_username,
            nc->sasl_password);
    }
    samsa_SaslHandshakeRequest_init(&req);
    req.Mechanism = samsa_slice_cstr(mech);
    corr = samsa_netclient_frame_begin(nc, SAMSA_API_SaslHandshake, 1,
                                       &frame, &wr);
    samsa_SaslHandshakeRequest_encode(&wr, 1, &req);
    n->state = NC_SASL_HANDSHAKE;
    nc_send_internal(nc, n, SAMSA_API_SaslHandshake, 1, &frame, corr);
}

/* One SaslAuthenticate carrying token (v2 where the broker has it). */
static void
nc_sasl_send_token(samsa_netclient_t *nc, nc_node_t *n,
                   const samsa_buf_t *token)
{
    samsa_SaslAuthenticateRequest_t  req;
    samsa_buf_t                      frame = SAMSA_BUF_INIT;
    samsa_wr_t                       wr;
    int16_t                          v = n->api_max[SAMSA_API_SaslAuthenticate];
    int32_t                          corr;

    if (v > 2) {
        v = 2;
    }
    samsa_SaslAuthenticateRequest_init(&req);
    req.AuthBytes = (samsa_slice_t) { (const char *) token->data,
                                      token->len };
    if (req.AuthBytes.ptr == NULL) {
        req.AuthBytes.ptr = "";
    }
    corr = samsa_netclient_frame_begin(nc, SAMSA_API_SaslAuthenticate, v,
                                       &frame, &wr);
    samsa_SaslAuthenticateRequest_encode(&wr, v, &req);
    n->state = NC_SASL_AUTH;
    nc_send_internal(nc, n, SAMSA_API_SaslAuthenticate, v, &frame, corr);
}

/* The client's next step with the server's token in; sends the next
 * token, or the connection is ready. */
static void
nc_sasl_step(samsa_netclient_t *nc, nc_node_t *n, samsa_slice_t in,
             int64_t session_lifetime_ms)
{
    samsa_buf_t  out = SAMSA_BUF_INIT;
    samsa_err_t  err;
    char         why[256];
    bool         done;
    int64_t      now;

    err = samsa_sasl_client_step(n->sasl, in, &out, &done, why, sizeof(why));
    if (err != SAMSA_ERR_NONE) {
        samsa_buf_fini(&out);
        nc_auth_fail(nc, n, SAMSA_ERR_SASL_AUTHENTICATION_FAILED, "%s", why);
        return;
    }
    if (!done) {
        nc_sasl_send_token(nc, n, &out);
        samsa_buf_fini(&out);
        return;
    }
    samsa_buf_fini(&out);
    samsa_sasl_client_free(n->sasl);
    n->sasl = NULL;
    pthread_mutex_lock(&nc->auth_lock);
    nc->auth_err = SAMSA_ERR_NONE;
    pthread_mutex_unlock(&nc->auth_lock);
    /* KIP-368: re-authenticate at 85..95 % of the session, as Java's
     * SaslClientAuthenticator picks */
    n->reauth_at_ms = 0;
    if (session_lifetime_ms > 0) {
        now = samsa_now_ms();
        n->reauth_at_ms = now + session_lifetime_ms * (85 + random() % 11)
                                    / 100;
        samsa_debug("%s: node %d: SASL session of %lld ms",
                    nc->conf.log_name, n->id,
                    (long long) session_lifetime_ms);
    }
    samsa_debug("%s: node %d authenticated (SASL %s)", nc->conf.log_name,
                n->id,
                samsa_sasl_client_mech_name((samsa_sasl_mech_t) nc->conf.sasl_mech));
    nc_ready(nc, n);
}

static void
nc_handle_sasl_handshake(samsa_netclient_t *nc, nc_node_t *n, nc_req_t *r,
                         samsa_rd_t *body)
{
    samsa_SaslHandshakeResponse_t  resp;
    samsa_arena_t                  arena = SAMSA_ARENA_INIT;
    samsa_err_t                    err;
    char                           list[256] = "";
    size_t                         off = 0;
    int32_t                        i;

    err = samsa_SaslHandshakeResponse_decode(body, r->version, &arena, &resp);
    if (err != SAMSA_ERR_NONE) {
        samsa_arena_fini(&arena);
        nc_disconnect(nc, n, SAMSA_ERR__BAD_MSG);
        return;
    }
    for (i = 0; i < resp.Mechanisms_cnt && off < sizeof(list); i++) {
        off += (size_t) snprintf(list + off, sizeof(list) - off, "%s%.*s",
                                 i > 0 ? ", " : "",
                                 (int) resp.Mechanisms[i].len,
                                 resp.Mechanisms[i].ptr);
    }
    err = (samsa_err_t) resp.ErrorCode;
    samsa_arena_fini(&arena);
    if (err == SAMSA_ERR_UNSUPPORTED_SASL_MECHANISM) {
        nc_auth_fail(nc, n, err, "the broker does not enable SASL mechanism "
                     "%s (it enables: %s)",
                     samsa_sasl_client_mech_name(
                         (samsa_sasl_mech_t) nc->conf.sasl_mech),
                     list[0] != '\0' ? list : "none");
        return;
    }
    if (err != SAMSA_ERR_NONE) {
        nc_auth_fail(nc, n, err, "SaslHandshake: %s", samsa_err_text(err));
        return;
    }
    nc_sasl_step(nc, n, SAMSA_SLICE_NULL, 0);
}

static void
nc_handle_sasl_authenticate(samsa_netclient_t *nc, nc_node_t *n,
                            nc_req_t *r, samsa_rd_t *body)
{
    samsa_SaslAuthenticateResponse_t  resp;
    samsa_arena_t                     arena = SAMSA_ARENA_INIT;
    samsa_err_t                       err;

    err = samsa_SaslAuthenticateResponse_decode(body, r->version, &arena,
                                                &resp);
    if (err != SAMSA_ERR_NONE) {
        samsa_arena_fini(&arena);
        nc_disconnect(nc, n, SAMSA_ERR__BAD_MSG);
        return;
    }
    if (resp.ErrorCode != 0) {
        err = (samsa_err_t) resp.ErrorCode;
        nc_auth_fail(nc, n, err, "%.*s",
                     resp.ErrorMessage.ptr != NULL
                         ? (int) resp.ErrorMessage.len : 0,
                     resp.ErrorMessage.ptr != NULL ? resp.ErrorMessage.ptr
                                                   : "");
        samsa_arena_fini(&arena);
        return;
    }
    nc_sasl_step(nc, n, resp.AuthBytes, resp.SessionLifetimeMs);
    samsa_arena_fini(&arena);
}

/* KIP-368: once n's session is near its end and nothing is in flight,
 * authenticate again on the same connection (SaslHandshake, then the
 * tokens); requests wait meanwhile (the node is not ready). */
static void
nc_reauth(samsa_netclient_t *nc, nc_node_t *n, int64_t now_ms)
{
    if (n->state != NC_READY || n->reauth_at_ms == 0
        || now_ms < n->reauth_at_ms || n->inflight != NULL
        || n->outq != NULL) {
        return;
    }
    samsa_info("%s: node %d: re-authenticating (KIP-368)",
               nc->conf.log_name, n->id);
    n->reauth_at_ms = 0;
    n->connect_deadline_ms = now_ms + nc->conf.connection_setup_timeout_ms;
    nc_sasl_handshake(nc, n);
}

/* ---- receiving ---------------------------------------------------------- */

/* KIP-219 for every API: read the throttle time of r's response, whose
 * body rd starts, and hold n back for it (Produce's the sender reads). */
static void
nc_response_throttle(samsa_netclient_t *nc, nc_node_t *n, const nc_req_t *r,
                     const samsa_rd_t *body)
{
    const struct nc_throttle_field  *f = nc_throttle_field(r->api,
                                                           r->version);
    samsa_rd_t                       rd = *body;
    int32_t                          ms;

    if (f == NULL || f->at < 0 || body->err != SAMSA_ERR_NONE) {
        return;
    }
    samsa_rd_skip(&rd, (size_t) f->at);
    ms = samsa_rd_i32(&rd);
    if (rd.err == SAMSA_ERR_NONE && ms > 0) {
        samsa_netclient_throttle(nc, n->id, r->api, r->version, ms,
                                 samsa_now_ms());
    }
}

/* One complete response: match it to the oldest request in flight. */
static void
nc_handle_response(samsa_netclient_t *nc, nc_node_t *n, uint8_t *payload,
                   int32_t size)
{
    nc_req_t    *r = n->inflight;
    samsa_rd_t   rd;
    int32_t      corr;

    samsa_rd_init(&rd, payload, (size_t) size);
    corr = samsa_rd_i32(&rd);
    if (r == NULL || rd.err != SAMSA_ERR_NONE || corr != r->corr) {
        samsa_warn("%s: node %d sent correlation id %d, expected %d",
                   nc->conf.log_name, n->id, corr,
                   r != NULL ? r->corr : -1);
        nc_disconnect(nc, n, SAMSA_ERR__BAD_MSG);
        return;
    }
    n->inflight = r->next;
    if (n->inflight == NULL) {
        n->inflight_tail = NULL;
    }
    if (r->api != SAMSA_API_ApiVersions
        && samsa_proto_req_is_flexible(r->api, r->version)) {
        samsa_rd_tags_skip(&rd);
    }
    if (r->internal && r->api == SAMSA_API_ApiVersions) {
        nc_handle_apiversions(nc, n, r, &rd);
    } else if (r->internal && r->api == SAMSA_API_SaslHandshake) {
        nc_handle_sasl_handshake(nc, n, r, &rd);
    } else if (r->internal) {
        nc_handle_sasl_authenticate(nc, n, r, &rd);
    } else {
        nc_response_throttle(nc, n, r, &rd);
        n->nreqs--;
        if (r->cb != NULL) {
            r->cb(r->ctx, n->id, rd.err, rd.err == SAMSA_ERR_NONE ? &rd
                                                                : NULL,
                  r->opaque);
        }
    }
    samsa_free(r);
}

static void
nc_readable(samsa_netclient_t *nc, nc_node_t *n)
{
    samsa_err_t  err;
    uint8_t     *payload;
    int32_t      size;

    while (n->state == NC_READY || n->state == NC_HANDSHAKE
           || n->state == NC_SASL_HANDSHAKE || n->state == NC_SASL_AUTH) {
        err = samsa_conn_read(&n->conn, INT32_MAX, &nc->mempool);
        if (err != SAMSA_ERR_NONE) {
            nc_disconnect(nc, n, err);
            return;
        }
        if (!n->conn.recv_complete) {
            return;
        }
        payload = samsa_conn_take_payload(&n->conn, &size);
        (void) samsa_mempool_give(&nc->mempool, size);
        nc->resp_buf = payload;
        nc_handle_response(nc, n, payload, size);
        samsa_free(nc->resp_buf);       /* NULL if the callback took it */
        nc->resp_buf = NULL;
    }
}

static void
nc_event(samsa_netclient_t *nc, nc_node_t *n, uint32_t events)
{
    samsa_err_t  err;

    if (n->state == NC_CONNECTING) {
        if (events & (SAMSA_SELECTOR_F_WRITE | SAMSA_SELECTOR_F_ERR
                      | SAMSA_SELECTOR_F_HUP)) {
            nc_connected(nc, n);
        }
        return;
    }
    if (n->state == NC_TLS) {
        nc_tls_handshake(nc, n);
        return;
    }
    if ((events & SAMSA_SELECTOR_F_READ)
        || (n->conn.tls != NULL && (events & SAMSA_SELECTOR_F_WRITE)
            && (samsa_tls_read_wants(n->conn.tls)
                & SAMSA_SELECTOR_F_WRITE))) {
        nc_readable(nc, n);
    }
    if (n->state != NC_DISCONNECTED
        && (events & (SAMSA_SELECTOR_F_WRITE | SAMSA_SELECTOR_F_ERR))) {
        err = nc_flush(nc, n);
        if (err != SAMSA_ERR_NONE) {
            nc_disconnect(nc, n, err);
        }
    }
    if (n->state != NC_DISCONNECTED
        && (events & (SAMSA_SELECTOR_F_HUP | SAMSA_SELECTOR_F_ERR))
        && !(events & SAMSA_SELECTOR_F_READ)) {
        nc_disconnect(nc, n, SAMSA_ERR__CLOSED);
    }
}

static void
nc_expire(samsa_netclient_t *nc, int64_t now_ms)
{
    nc_node_t  *n;
    nc_req_t   *r;
    int32_t     i;

    for (i = 0; i < nc->nnodes; i++) {
        n = nc->nodes[i];
        if ((n->state == NC_CONNECTING || n->state == NC_TLS
             || n->state == NC_HANDSHAKE || n->state == NC_SASL_HANDSHAKE
             || n->state == NC_SASL_AUTH)
            && now_ms >= n->connect_deadline_ms) {
            nc_disconnect(nc, n, SAMSA_ERR__TIMED_OUT);
            continue;
        }
        r = n->inflight != NULL ? n->inflight : n->outq;
        if (r != NULL && r == n->outq && n->conn.sending != &r->send) {
            continue;           /* held by a throttle, not yet written */
        }
        if (r != NULL && now_ms - r->sent_ms > nc->conf.request_timeout_ms) {
            samsa_warn("%s: request to node %d timed out after "
                       "%lld ms", nc->conf.log_name, n->id,
                       (long long) nc->conf.request_timeout_ms);
            nc_disconnect(nc, n, SAMSA_ERR__TIMED_OUT);
        }
    }
}

/* Write what a throttle held once it has ended; the request timeout of a
 * held request counts from now, when it is written.  @thread sender */
static void
nc_resume(samsa_netclient_t *nc, nc_node_t *n, int64_t now_ms)
{
    nc_req_t     *r;
    samsa_err_t   err;

    if (n->state != NC_READY || n->outq == NULL || n->want_write
        || n->conn.sending == &n->outq->send || nc_throttled(n)) {
        return;
    }
    for (r = n->outq; r != NULL; r = r->next) {
        r->sent_ms = now_ms;
    }
    err = nc_flush(nc, n);
    if (err != SAMSA_ERR_NONE) {
        nc_disconnect(nc, n, err);
    }
}

void
samsa_netclient_poll(samsa_netclient_t *nc, int64_t timeout_ms)
{
    samsa_selector_event_t  evs[NC_MAX_EVENTS];
    size_t                  i, n;
    int64_t                 now = samsa_now_ms();
    int32_t                 k;

    /* wake when a throttle ends: the caller may send then */
    for (k = 0; k < nc->nnodes; k++) {
        if (nc->nodes[k]->throttle_until_ms > now
            && nc->nodes[k]->throttle_until_ms - now < timeout_ms) {
            timeout_ms = nc->nodes[k]->throttle_until_ms - now;
        }
    }
    if (samsa_selector_wait(&nc->sel, evs, NC_MAX_EVENTS, timeout_ms, &n)
        != SAMSA_ERR_NONE) {
        /* logged; n is 0: expire what is due and let the caller poll
         * again */
    }
    for (i = 0; i < n; i++) {
        nc_event(nc, evs[i].ptr, evs[i].ready);
    }
    now = samsa_now_ms();
    for (k = 0; k < nc->nnodes; k++) {
        nc_resume(nc, nc->nodes[k], now);
        nc_reauth(nc, nc->nodes[k], now);
    }
    nc_expire(nc, now);
}

uint8_t *
samsa_netclient_take_response(samsa_netclient_t *nc)
{
    uint8_t  *p = nc->resp_buf;

    nc->resp_buf = NULL;
    return p;
}

void
samsa_netclient_wakeup(samsa_netclient_t *nc)
{
    samsa_selector_wakeup(&nc->sel);
}
