/*
 * meta/quorum_transport.c - libraft's raft_uv_transport over sockets that
 * samsa accepts (see quorum_transport.h for the handshake).
 *
 * Every pending piece of work (an inbound socket reading its handshake, an
 * outbound connect) is on one of two lists, so that close() can cancel it:
 * close() uv_close()s their handles, and the transport's close callback
 * runs once both lists are empty.
 */
#include "meta/quorum_transport.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/diag.h"

#define QT_HDR_LEN  32

typedef struct qt_inbound qt_inbound_t;
typedef struct qt_outbound qt_outbound_t;
typedef struct qt_parked qt_parked_t;
typedef struct qt_dialer qt_dialer_t;

/* how long libraft's connect() waits for a reverse socket to be parked */
#define QT_REVERSE_WAIT_MS  1000
#define QT_REVERSE_POLL_MS  10
/* an adopted socket must send its handshake within this */
#define QT_HANDSHAKE_MS     5000
#define QT_SWEEP_MS         1000

typedef struct qt {
    struct raft_uv_transport      *t;
    uv_loop_t                     *loop;
    raft_id                        id;
    char                          *address;
    char                          *cluster_id;
    raft_uv_accept_cb              accept_cb;
    raft_uv_transport_close_cb     close_cb;
    bool                           closing;
    uint64_t                       refused;
    qt_inbound_t                  *inbound;     /* handshakes being read */
    qt_outbound_t                 *outbound;    /* connects in progress */
    qt_parked_t                   *parked;      /* reverse sockets, by id */
    qt_dialer_t                   *dialers;     /* our reverse dials */
    unsigned                       retry_ms;
    samsa_quorum_transport_member_fn *member;
    void                          *member_ctx;
    uv_timer_t                     sweep;       /* handshake timeouts */
    bool                           sweep_open;
} qt_t;

/* A reverse socket a non-voter dialled to us: our outbound stream to it,
 * waiting for libraft to connect() to that id. */
struct qt_parked {
    qt_t          *qt;
    qt_parked_t   *next;
    raft_id        id;
    uv_tcp_t      *tcp;                 /* raft_malloc'd */
    char           junk[64];
    bool           taken;
};

/* One reverse dial of ours (a non-voter) to a voter: dialled, handshake
 * written, then given to libraft as an inbound stream from that voter; a
 * dup of its fd is watched for the peer's close, and then we dial again. */
struct qt_dialer {
    qt_t          *qt;
    qt_dialer_t   *next;
    raft_id        id;
    char          *address;
    struct sockaddr_storage  sa;
    uv_timer_t     timer;
    uv_tcp_t      *tcp;                 /* while dialling */
    uv_connect_t   connect;
    uv_write_t     write;
    uint8_t       *hs;
    size_t         hs_len;
    int            dupfd;               /* -1: none */
    uv_poll_t      poll;
    bool           polling;
    int            handles;             /* open handles (timer, tcp, poll) */
};

struct qt_inbound {
    qt_t          *qt;
    qt_inbound_t  *next;
    qt_inbound_t  *prev;
    uv_tcp_t      *tcp;                 /* raft_malloc'd */
    uint8_t        hdr[QT_HDR_LEN];
    uint8_t        strs[2 * SAMSA_QUORUM_TRANSPORT_STR_MAX];
    size_t         need;                /* bytes of the current stage */
    size_t         got;
    int            stage;               /* 0: header, 1: strings */
    size_t         cid_len;
    size_t         addr_len;
    bool           reverse;             /* a reverse dial: park it */
    uint64_t       since;               /* uv_now at adopt */
};

struct qt_outbound {
    qt_t                   *qt;
    qt_outbound_t          *next;
    qt_outbound_t          *prev;
    struct raft_uv_connect *req;
    uv_tcp_t               *tcp;        /* raft_malloc'd */
    uv_getaddrinfo_t        gai;
    uv_connect_t            connect;
    uv_write_t              write;
    char                   *host;
    char                    port[8];
    uint8_t                *hs;
    size_t                  hs_len;
    bool                    gai_pending;
    bool                    tcp_closed;
    bool                    done;       /* tcp handed to libraft */
    /* reverse: wait for a parked socket instead of dialling */
    bool                    reverse;
    uv_timer_t              timer;
    uint64_t                wait_until;
    uv_tcp_t               *handed;     /* the parked socket taken */
    raft_id                 req_id;
};

/* ---- small helpers --------------------------------------------------- */

static void
qt_put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t) v;
    p[1] = (uint8_t) (v >> 8);
}

static void
qt_put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) {
        p[i] = (uint8_t) (v >> (8 * i));
    }
}

static void
qt_put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) {
        p[i] = (uint8_t) (v >> (8 * i));
    }
}

static uint64_t
qt_get_le(const uint8_t *p, int n)
{
    uint64_t  v = 0;

    for (int i = n - 1; i >= 0; i--) {
        v = (v << 8) | p[i];
    }
    return v;
}

static void
qt_maybe_closed(qt_t *qt)
{
    if (qt->closing && qt->inbound == NULL && qt->outbound == NULL
        && qt->parked == NULL && qt->dialers == NULL && !qt->sweep_open
        && qt->close_cb != NULL) {
        raft_uv_transport_close_cb  cb = qt->close_cb;

        qt->close_cb = NULL;
        cb(qt->t);
    }
}

bool
samsa_quorum_transport_is_magic(const uint8_t *buf, size_t len)
{
    if (len > SAMSA_QUORUM_TRANSPORT_MAGIC_LEN) {
        len = SAMSA_QUORUM_TRANSPORT_MAGIC_LEN;
    }
    return memcmp(buf, SAMSA_QUORUM_TRANSPORT_MAGIC, len) == 0
           || memcmp(buf, SAMSA_QUORUM_TRANSPORT_MAGIC_REVERSE, len) == 0;
}

/* Split "host:port" or "[v6]:port" into host and port. */
static bool
qt_split_address(const char *address, char **host, char port[8])
{
    const char  *hash = strchr(address, '#');   /* "#directory-id" */
    const char  *end = hash != NULL ? hash : address + strlen(address);
    const char  *colon = NULL, *p;
    const char  *h = address;
    size_t       hlen;

    for (p = address; p < end; p++) {
        if (*p == ':') {
            colon = p;
        }
    }
    if (colon == NULL || end - (colon + 1) == 0 || end - (colon + 1) > 5) {
        return false;
    }
    hlen = (size_t) (colon - address);
    if (hlen >= 2 && h[0] == '[' && h[hlen - 1] == ']') {
        h++;
        hlen -= 2;
    }
    if (hlen == 0) {
        return false;
    }
    *host = samsa_strndup(h, hlen);
    snprintf(port, 8, "%.*s", (int) (end - (colon + 1)), colon + 1);
    return true;
}

/* ---- inbound ---------------------------------------------------------- */

static void
qt_inbound_unlink(qt_inbound_t *in)
{
    qt_t  *qt = in->qt;

    if (in->prev != NULL) {
        in->prev->next = in->next;
    } else {
        qt->inbound = in->next;
    }
    if (in->next != NULL) {
        in->next->prev = in->prev;
    }
}

static void
qt_inbound_closed(uv_handle_t *h)
{
    qt_inbound_t  *in = h->data;
    qt_t          *qt = in->qt;

    raft_free(in->tcp);
    qt_inbound_unlink(in);
    samsa_free(in);
    qt_maybe_closed(qt);
}

static void
qt_inbound_drop(qt_inbound_t *in, const char *why)
{
    if (why != NULL) {
        in->qt->refused++;
        samsa_warn("quorum: refused a raft connection: %s", why);
    }
    if (!uv_is_closing((uv_handle_t *) in->tcp)) {
        uv_close((uv_handle_t *) in->tcp, qt_inbound_closed);
    }
}

static void
qt_inbound_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    qt_inbound_t  *in = h->data;
    uint8_t       *base = in->stage == 0 ? in->hdr : in->strs;

    (void) suggested;
    /* exactly what the handshake still needs: never a byte of libraft's */
    buf->base = (char *) base + in->got;
    buf->len = in->need - in->got;
}

static const char *
qt_inbound_check_header(qt_inbound_t *in)
{
    const uint8_t  *p = in->hdr;

    if (memcmp(p, SAMSA_QUORUM_TRANSPORT_MAGIC_REVERSE,
               SAMSA_QUORUM_TRANSPORT_MAGIC_LEN) == 0) {
        in->reverse = true;
    } else if (memcmp(p, SAMSA_QUORUM_TRANSPORT_MAGIC,
                      SAMSA_QUORUM_TRANSPORT_MAGIC_LEN) != 0) {
        return "bad magic";
    }
    if (qt_get_le(p + 8, 4) != SAMSA_QUORUM_TRANSPORT_VERSION) {
        return "unsupported handshake version";
    }
    if (qt_get_le(p + 16, 8) == 0) {
        return "raft id 0";
    }
    in->cid_len = (size_t) qt_get_le(p + 24, 2);
    in->addr_len = (size_t) qt_get_le(p + 26, 2);
    if (in->cid_len == 0 || in->cid_len > SAMSA_QUORUM_TRANSPORT_STR_MAX
        || in->addr_len == 0
        || in->addr_len > SAMSA_QUORUM_TRANSPORT_STR_MAX) {
        return "bad string lengths";
    }
    return NULL;
}

/* ---- parked reverse sockets (the voter's side) ------------------------ */

static void
qt_parked_unlink(qt_parked_t *pk)
{
    qt_parked_t  **pp = &pk->qt->parked;

    while (*pp != NULL && *pp != pk) {
        pp = &(*pp)->next;
    }
    if (*pp == pk) {
        *pp = pk->next;
    }
}

static void
qt_parked_closed(uv_handle_t *h)
{
    qt_parked_t  *pk = h->data;
    qt_t         *qt = pk->qt;

    qt_parked_unlink(pk);
    raft_free(pk->tcp);
    samsa_free(pk);
    qt_maybe_closed(qt);
}

static void
qt_parked_drop(qt_parked_t *pk)
{
    if (!uv_is_closing((uv_handle_t *) pk->tcp)) {
        uv_close((uv_handle_t *) pk->tcp, qt_parked_closed);
    }
}

static void
qt_parked_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    qt_parked_t  *pk = h->data;

    (void) suggested;
    buf->base = pk->junk;
    buf->len = sizeof(pk->junk);
}

/* The non-voter only reads on it: EOF or bytes both end it. */
static void
qt_parked_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    qt_parked_t  *pk = s->data;

    (void) buf;
    if (n == 0) {
        return;
    }
    qt_parked_drop(pk);
}

static void
qt_park(qt_t *qt, raft_id id, uv_tcp_t *tcp)
{
    qt_parked_t  *pk;

    for (pk = qt->parked; pk != NULL; pk = pk->next) {
        if (pk->id == id && !uv_is_closing((uv_handle_t *) pk->tcp)) {
            /* a newer dial replaces it */
            qt_parked_drop(pk);
            break;
        }
    }
    pk = samsa_calloc(1, sizeof(*pk));
    pk->qt = qt;
    pk->id = id;
    pk->tcp = tcp;
    tcp->data = pk;
    uv_read_stop((uv_stream_t *) tcp);
    pk->next = qt->parked;
    qt->parked = pk;
    if (uv_read_start((uv_stream_t *) tcp, qt_parked_alloc,
                      qt_parked_read) != 0) {
        qt_parked_drop(pk);
    }
}

static bool
qt_has_parked(const qt_t *qt, raft_id id)
{
    for (const qt_parked_t *pk = qt->parked; pk != NULL; pk = pk->next) {
        if (pk->id == id && !uv_is_closing((const uv_handle_t *) pk->tcp)) {
            return true;
        }
    }
    return false;
}

/* Take the parked socket of id, NULL if none. */
static uv_tcp_t *
qt_unpark(qt_t *qt, raft_id id)
{
    for (qt_parked_t *pk = qt->parked; pk != NULL; pk = pk->next) {
        if (pk->id == id && !uv_is_closing((uv_handle_t *) pk->tcp)) {
            uv_tcp_t  *tcp = pk->tcp;

            uv_read_stop((uv_stream_t *) tcp);
            qt_parked_unlink(pk);
            samsa_free(pk);
            tcp->data = NULL;
            return tcp;
        }
    }
    return NULL;
}

static void
qt_inbound_finish(qt_inbound_t *in)
{
    qt_t        *qt = in->qt;
    char         address[SAMSA_QUORUM_TRANSPORT_STR_MAX + 1];
    raft_id      id = (raft_id) qt_get_le(in->hdr + 16, 8);
    uv_tcp_t    *tcp = in->tcp;

    if (in->cid_len != strlen(qt->cluster_id)
        || memcmp(in->strs, qt->cluster_id, in->cid_len) != 0) {
        char  why[SAMSA_QUORUM_TRANSPORT_STR_MAX + 64];

        snprintf(why, sizeof(why), "cluster id '%.*s' is not ours ('%s')",
                 (int) in->cid_len, (const char *) in->strs, qt->cluster_id);
        qt_inbound_drop(in, why);
        return;
    }
    memcpy(address, in->strs + in->cid_len, in->addr_len);
    address[in->addr_len] = '\0';
    /* a reverse socket is only parked: it is used once we connect() to
     * that id, which libraft does only for members */
    if (!in->reverse && qt->member != NULL
        && !qt->member(qt->member_ctx, id)) {
        char  why[SAMSA_QUORUM_TRANSPORT_STR_MAX + 64];

        snprintf(why, sizeof(why),
                 "raft id %llu (%s) may not connect (it is ours)",
                 (unsigned long long) id, address);
        qt_inbound_drop(in, why);
        return;
    }
    if (in->reverse) {
        qt_inbound_unlink(in);
        samsa_free(in);
        qt_park(qt, id, tcp);
        return;
    }
    uv_read_stop((uv_stream_t *) tcp);
    qt_inbound_unlink(in);
    samsa_free(in);
    tcp->data = NULL;
    qt->accept_cb(qt->t, id, address, (uv_stream_t *) tcp);
}

static void
qt_inbound_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    qt_inbound_t  *in = s->data;
    const char    *why;

    (void) buf;
    if (n == 0) {
        return;
    }
    if (n < 0) {
        qt_inbound_drop(in, NULL);      /* peer went away mid-handshake */
        return;
    }
    in->got += (size_t) n;
    if (in->got < in->need) {
        return;
    }
    if (in->stage == 0) {
        if ((why = qt_inbound_check_header(in)) != NULL) {
            qt_inbound_drop(in, why);
            return;
        }
        in->stage = 1;
        in->got = 0;
        in->need = in->cid_len + in->addr_len;
        return;
    }
    qt_inbound_finish(in);
}

void
samsa_quorum_transport_adopt(struct raft_uv_transport *t, int fd)
{
    qt_t          *qt = t->impl;
    qt_inbound_t  *in;
    int            rv;

    if (qt->closing || qt->accept_cb == NULL) {
        close(fd);
        return;
    }
    in = samsa_calloc(1, sizeof(*in));
    in->qt = qt;
    in->need = QT_HDR_LEN;
    in->since = uv_now(qt->loop);
    in->tcp = raft_malloc(sizeof(*in->tcp));
    samsa_assert(in->tcp != NULL);
    uv_tcp_init(qt->loop, in->tcp);
    in->tcp->data = in;
    in->next = qt->inbound;
    if (qt->inbound != NULL) {
        qt->inbound->prev = in;
    }
    qt->inbound = in;
    if ((rv = uv_tcp_open(in->tcp, fd)) != 0) {
        samsa_warn("quorum: adopting fd %d: %s", fd, uv_strerror(rv));
        close(fd);
        qt_inbound_drop(in, NULL);
        return;
    }
    uv_tcp_nodelay(in->tcp, 1);
    if ((rv = uv_read_start((uv_stream_t *) in->tcp, qt_inbound_alloc,
                            qt_inbound_read)) != 0) {
        samsa_warn("quorum: reading fd %d: %s", fd, uv_strerror(rv));
        qt_inbound_drop(in, NULL);
    }
}

/* ---- outbound --------------------------------------------------------- */

static void
qt_outbound_free(qt_outbound_t *out)
{
    qt_t  *qt = out->qt;

    if (out->prev != NULL) {
        out->prev->next = out->next;
    } else {
        qt->outbound = out->next;
    }
    if (out->next != NULL) {
        out->next->prev = out->prev;
    }
    samsa_free(out->host);
    samsa_free(out->hs);
    samsa_free(out);
    qt_maybe_closed(qt);
}

static void
qt_outbound_closed(uv_handle_t *h)
{
    qt_outbound_t            *out = h->data;
    struct raft_uv_connect   *req = out->req;

    raft_free(out->tcp);
    out->tcp_closed = true;
    /* libraft retries a failed connect after its connect_retry_delay */
    req->cb(req, NULL, out->qt->closing ? RAFT_CANCELED : RAFT_NOCONNECTION);
    if (!out->gai_pending) {
        qt_outbound_free(out);
    }
}

static void
qt_outbound_timer_closed(uv_handle_t *h)
{
    qt_outbound_t           *out = h->data;
    struct raft_uv_connect  *req = out->req;
    uv_tcp_t                *tcp = out->handed;
    qt_t                    *qt = out->qt;

    if (tcp != NULL) {
        /* libraft discards it itself if it is closing by now */
        req->cb(req, (uv_stream_t *) tcp, 0);
    } else {
        req->cb(req, NULL, qt->closing ? RAFT_CANCELED : RAFT_NOCONNECTION);
    }
    qt_outbound_free(out);
}

static void
qt_outbound_fail(qt_outbound_t *out)
{
    uv_handle_t  *h = out->reverse ? (uv_handle_t *) &out->timer
                                   : (uv_handle_t *) out->tcp;

    if (!uv_is_closing(h)) {
        uv_close(h, out->reverse ? qt_outbound_timer_closed
                                 : qt_outbound_closed);
    }
}

/* A reverse connect: poll for the socket the peer dials to us. */
static void
qt_outbound_wait(uv_timer_t *t)
{
    qt_outbound_t  *out = t->data;

    out->handed = qt_unpark(out->qt, out->req_id);
    if (out->handed != NULL || uv_now(out->qt->loop) >= out->wait_until) {
        uv_timer_stop(t);
        qt_outbound_fail(out);          /* closes the timer, then the cb */
    }
}

static void
qt_outbound_written(uv_write_t *w, int status)
{
    qt_outbound_t           *out = w->data;
    struct raft_uv_connect  *req = out->req;
    uv_tcp_t                *tcp = out->tcp;

    if (status != 0 || out->qt->closing) {
        qt_outbound_fail(out);
        return;
    }
    out->done = true;
    tcp->data = NULL;
    qt_outbound_free(out);
    req->cb(req, (uv_stream_t *) tcp, 0);
}

static void
qt_outbound_connected(uv_connect_t *c, int status)
{
    qt_outbound_t  *out = c->data;
    uv_buf_t        buf;

    if (status != 0 || out->qt->closing) {
        qt_outbound_fail(out);
        return;
    }
    uv_tcp_nodelay(out->tcp, 1);
    buf = uv_buf_init((char *) out->hs, (unsigned) out->hs_len);
    out->write.data = out;
    if (uv_write(&out->write, (uv_stream_t *) out->tcp, &buf, 1,
                 qt_outbound_written) != 0) {
        qt_outbound_fail(out);
    }
}

static void
qt_outbound_dial(qt_outbound_t *out, const struct sockaddr *sa)
{
    out->connect.data = out;
    if (uv_tcp_connect(&out->connect, out->tcp, sa,
                       qt_outbound_connected) != 0) {
        qt_outbound_fail(out);
    }
}

static void
qt_outbound_resolved(uv_getaddrinfo_t *gai, int status, struct addrinfo *res)
{
    qt_outbound_t    *out = gai->data;
    struct addrinfo  *pick;

    out->gai_pending = false;
    if (out->tcp_closed) {              /* cancelled by close() */
        uv_freeaddrinfo(res);
        qt_outbound_free(out);
        return;
    }
    if (status != 0 || res == NULL || out->qt->closing) {
        uv_freeaddrinfo(res);
        qt_outbound_fail(out);
        return;
    }
    /* one address is tried: IPv4 first (listeners bound to 0.0.0.0 or
     * 127.0.0.1 are the common case; "localhost" also gives ::1) */
    for (pick = res; pick != NULL && pick->ai_family != AF_INET;
         pick = pick->ai_next) {
    }
    qt_outbound_dial(out, (pick != NULL ? pick : res)->ai_addr);
    uv_freeaddrinfo(res);
}

/* The handshake (see quorum_transport.h) with magic, samsa_malloc'd. */
static uint8_t *
qt_handshake(const qt_t *qt, const char *magic, size_t *len)
{
    size_t   cid_len = strlen(qt->cluster_id);
    size_t   addr_len = strlen(qt->address);
    uint8_t *p;

    *len = QT_HDR_LEN + cid_len + addr_len;
    p = samsa_calloc(1, *len);
    memcpy(p, magic, SAMSA_QUORUM_TRANSPORT_MAGIC_LEN);
    qt_put_u32(p + 8, SAMSA_QUORUM_TRANSPORT_VERSION);
    qt_put_u32(p + 12, 0);
    qt_put_u64(p + 16, qt->id);
    qt_put_u16(p + 24, (uint16_t) cid_len);
    qt_put_u16(p + 26, (uint16_t) addr_len);
    memcpy(p + QT_HDR_LEN, qt->cluster_id, cid_len);
    memcpy(p + QT_HDR_LEN + cid_len, qt->address, addr_len);
    return p;
}

static void
qt_outbound_handshake(qt_outbound_t *out)
{
    out->hs = qt_handshake(out->qt, SAMSA_QUORUM_TRANSPORT_MAGIC,
                           &out->hs_len);
}

/* ---- reverse dials (the non-voter's side) ----------------------------- */

static void qt_dialer_arm(qt_dialer_t *d, unsigned ms);

static void
qt_dialer_handle_closed(uv_handle_t *h)
{
    qt_dialer_t  *d = h->data;
    qt_t         *qt = d->qt;

    if ((uv_handle_t *) d->tcp == h) {
        raft_free(d->tcp);
        d->tcp = NULL;
    }
    if (--d->handles > 0) {
        if (!qt->closing && d->tcp == NULL && !d->polling) {
            qt_dialer_arm(d, qt->retry_ms);
        }
        return;
    }
    for (qt_dialer_t **pp = &qt->dialers; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == d) {
            *pp = d->next;
            break;
        }
    }
    samsa_free(d->address);
    samsa_free(d->hs);
    samsa_free(d);
    qt_maybe_closed(qt);
}

static void
qt_dialer_close_tcp(qt_dialer_t *d)
{
    if (d->tcp != NULL && !uv_is_closing((uv_handle_t *) d->tcp)) {
        uv_close((uv_handle_t *) d->tcp, qt_dialer_handle_closed);
    }
}

static void
qt_dialer_close_poll(qt_dialer_t *d)
{
    if (d->polling && !uv_is_closing((uv_handle_t *) &d->poll)) {
        uv_poll_stop(&d->poll);
        uv_close((uv_handle_t *) &d->poll, qt_dialer_handle_closed);
    }
    d->polling = false;
    if (d->dupfd >= 0) {
        close(d->dupfd);
        d->dupfd = -1;
    }
}

static void
qt_dialer_stop(qt_dialer_t *d)
{
    uv_timer_stop(&d->timer);
    if (!uv_is_closing((uv_handle_t *) &d->timer)) {
        uv_close((uv_handle_t *) &d->timer, qt_dialer_handle_closed);
    }
    qt_dialer_close_tcp(d);
    qt_dialer_close_poll(d);
}

/* The voter closed the socket (or it broke): dial again. */
static void
qt_dialer_polled(uv_poll_t *p, int status, int events)
{
    qt_dialer_t  *d = p->data;

    (void) status;
    (void) events;
    qt_dialer_close_poll(d);            /* its close cb re-arms the timer */
}

static void
qt_dialer_written(uv_write_t *w, int status)
{
    qt_dialer_t  *d = w->data;
    qt_t         *qt = d->qt;
    uv_tcp_t     *tcp = d->tcp;
    uv_os_fd_t    fd;

    if (status != 0 || qt->closing || qt->accept_cb == NULL) {
        qt_dialer_close_tcp(d);
        return;
    }
    /* watch a dup of the fd: libraft owns the handle from now on */
    if (uv_fileno((uv_handle_t *) tcp, &fd) == 0 && (d->dupfd = dup(fd)) >= 0
        && uv_poll_init_socket(qt->loop, &d->poll, d->dupfd) == 0) {
        d->poll.data = d;
        d->polling = true;
        d->handles++;
        uv_poll_start(&d->poll, UV_DISCONNECT, qt_dialer_polled);
    } else if (d->dupfd >= 0) {
        close(d->dupfd);
        d->dupfd = -1;
    }
    d->tcp = NULL;
    d->handles--;                       /* the tcp is libraft's now */
    tcp->data = NULL;
    qt->accept_cb(qt->t, d->id, d->address, (uv_stream_t *) tcp);
    if (!d->polling) {
        qt_dialer_arm(d, qt->retry_ms);
    }
}

static void
qt_dialer_connected(uv_connect_t *c, int status)
{
    qt_dialer_t  *d = c->data;
    uv_buf_t      buf;

    if (status != 0 || d->qt->closing) {
        qt_dialer_close_tcp(d);
        return;
    }
    uv_tcp_nodelay(d->tcp, 1);
    buf = uv_buf_init((char *) d->hs, (unsigned) d->hs_len);
    d->write.data = d;
    if (uv_write(&d->write, (uv_stream_t *) d->tcp, &buf, 1,
                 qt_dialer_written) != 0) {
        qt_dialer_close_tcp(d);
    }
}

static void
qt_dialer_fire(uv_timer_t *t)
{
    qt_dialer_t  *d = t->data;
    qt_t         *qt = d->qt;

    if (qt->closing || d->tcp != NULL || d->polling) {
        return;
    }
    if (qt->accept_cb == NULL) {        /* not listening yet */
        qt_dialer_arm(d, qt->retry_ms);
        return;
    }
    d->tcp = raft_malloc(sizeof(*d->tcp));
    samsa_assert(d->tcp != NULL);
    uv_tcp_init(qt->loop, d->tcp);
    d->tcp->data = d;
    d->handles++;
    d->connect.data = d;
    if (uv_tcp_connect(&d->connect, d->tcp, (struct sockaddr *) &d->sa,
                       qt_dialer_connected) != 0) {
        qt_dialer_close_tcp(d);
    }
}

static void
qt_dialer_arm(qt_dialer_t *d, unsigned ms)
{
    if (!d->qt->closing) {
        uv_timer_start(&d->timer, qt_dialer_fire, ms, 0);
    }
}

samsa_err_t
samsa_quorum_transport_reverse_dial(struct raft_uv_transport *t,
                                    raft_id id, const char *address,
                                    char *errstr, size_t errstr_size)
{
    qt_t         *qt = t->impl;
    qt_dialer_t  *d;
    char         *host = NULL;
    char          port[8];
    bool          ok;

    if (!qt_split_address(address, &host, port)) {
        samsa_diag_errstr(errstr, errstr_size,
                          "quorum: reverse dial: bad address '%s'", address);
        return SAMSA_ERR__INVALID_ARG;
    }
    d = samsa_calloc(1, sizeof(*d));
    ok = uv_ip4_addr(host, atoi(port), (struct sockaddr_in *) &d->sa) == 0
         || uv_ip6_addr(host, atoi(port), (struct sockaddr_in6 *) &d->sa)
                == 0;
    samsa_free(host);
    if (!ok) {
        samsa_free(d);
        samsa_diag_errstr(errstr, errstr_size,
                          "quorum: reverse dial: '%s' is not an IP address "
                          "and port (names are not resolved here yet)",
                          address);
        return SAMSA_ERR__INVALID_ARG;
    }
    d->qt = qt;
    d->id = id;
    d->dupfd = -1;
    d->address = samsa_strdup(address);
    d->hs = qt_handshake(qt, SAMSA_QUORUM_TRANSPORT_MAGIC_REVERSE,
                         &d->hs_len);
    uv_timer_init(qt->loop, &d->timer);
    d->timer.data = d;
    d->handles = 1;
    d->next = qt->dialers;
    qt->dialers = d;
    qt_dialer_arm(d, 0);
    return SAMSA_ERR_NONE;
}

/* Resolve (IP literals at once, names through the thread pool) and dial. */
static void
qt_outbound_start(qt_outbound_t *out)
{
    qt_t                 *qt = out->qt;
    struct sockaddr_in6   sa6;
    struct sockaddr_in    sa4;
    struct addrinfo       hints;

    if (uv_ip4_addr(out->host, atoi(out->port), &sa4) == 0) {
        qt_outbound_dial(out, (const struct sockaddr *) &sa4);
    } else if (uv_ip6_addr(out->host, atoi(out->port), &sa6) == 0) {
        qt_outbound_dial(out, (const struct sockaddr *) &sa6);
    } else {
        memset(&hints, 0, sizeof(hints));
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        out->gai.data = out;
        out->gai_pending = true;
        if (uv_getaddrinfo(qt->loop, &out->gai, qt_outbound_resolved,
                           out->host, out->port, &hints) != 0) {
            out->gai_pending = false;
            qt_outbound_fail(out);
        }
    }
}

static int
qt_connect(struct raft_uv_transport *t, struct raft_uv_connect *req,
           raft_id id, const char *address, raft_uv_connect_cb cb)
{
    qt_t           *qt = t->impl;
    qt_outbound_t  *out;

    if (qt->closing) {
        return RAFT_CANCELED;
    }
    out = samsa_calloc(1, sizeof(*out));
    out->qt = qt;
    out->req = req;
    out->req_id = id;
    req->cb = cb;
    if (!qt_split_address(address, &out->host, out->port)) {
        samsa_free(out);
        snprintf(t->errmsg, RAFT_ERRMSG_BUF_SIZE, "bad address '%s'",
                 address);
        return RAFT_NOCONNECTION;
    }
    out->next = qt->outbound;
    if (qt->outbound != NULL) {
        qt->outbound->prev = out;
    }
    qt->outbound = out;
    if (strcmp(out->port, "0") == 0 || qt_has_parked(qt, id)) {
        /* not reachable, or it dialled us: use its reverse socket */
        out->reverse = true;
        out->wait_until = uv_now(qt->loop) + QT_REVERSE_WAIT_MS;
        uv_timer_init(qt->loop, &out->timer);
        out->timer.data = out;
        uv_timer_start(&out->timer, qt_outbound_wait, 0, QT_REVERSE_POLL_MS);
        return 0;
    }
    qt_outbound_handshake(out);
    out->tcp = raft_malloc(sizeof(*out->tcp));
    samsa_assert(out->tcp != NULL);
    uv_tcp_init(qt->loop, out->tcp);
    out->tcp->data = out;
    qt_outbound_start(out);
    return 0;
}

/* ---- transport methods ------------------------------------------------ */

static int
qt_init(struct raft_uv_transport *t, raft_id id, const char *address)
{
    qt_t  *qt = t->impl;

    if (strlen(address) == 0
        || strlen(address) > SAMSA_QUORUM_TRANSPORT_STR_MAX) {
        snprintf(t->errmsg, RAFT_ERRMSG_BUF_SIZE, "bad address '%s'",
                 address);
        return RAFT_INVALID;
    }
    qt->id = id;
    samsa_free(qt->address);
    qt->address = samsa_strdup(address);
    return 0;
}

/* Drop adopted sockets that never finished their handshake. */
static void
qt_sweep(uv_timer_t *timer)
{
    qt_t      *qt = timer->data;
    uint64_t   now = uv_now(qt->loop);

    for (qt_inbound_t *in = qt->inbound; in != NULL; in = in->next) {
        if (now - in->since > QT_HANDSHAKE_MS
            && !uv_is_closing((uv_handle_t *) in->tcp)) {
            qt_inbound_drop(in, "no handshake within 5 s");
        }
    }
}

static void
qt_sweep_closed(uv_handle_t *h)
{
    qt_t  *qt = h->data;

    qt->sweep_open = false;
    qt_maybe_closed(qt);
}

static int
qt_listen(struct raft_uv_transport *t, raft_uv_accept_cb cb)
{
    qt_t  *qt = t->impl;

    qt->accept_cb = cb;                 /* sockets come through adopt */
    uv_timer_init(qt->loop, &qt->sweep);
    qt->sweep.data = qt;
    qt->sweep_open = true;
    uv_timer_start(&qt->sweep, qt_sweep, QT_SWEEP_MS, QT_SWEEP_MS);
    return 0;
}

static void
qt_close(struct raft_uv_transport *t, raft_uv_transport_close_cb cb)
{
    qt_t  *qt = t->impl;

    qt->closing = true;
    qt->close_cb = cb;
    for (qt_inbound_t *in = qt->inbound; in != NULL; in = in->next) {
        qt_inbound_drop(in, NULL);
    }
    for (qt_outbound_t *out = qt->outbound; out != NULL; out = out->next) {
        if (out->gai_pending) {
            uv_cancel((uv_req_t *) &out->gai);
        }
        qt_outbound_fail(out);
    }
    for (qt_parked_t *pk = qt->parked; pk != NULL; pk = pk->next) {
        qt_parked_drop(pk);
    }
    for (qt_dialer_t *d = qt->dialers; d != NULL; d = d->next) {
        qt_dialer_stop(d);
    }
    if (qt->sweep_open && !uv_is_closing((uv_handle_t *) &qt->sweep)) {
        uv_timer_stop(&qt->sweep);
        uv_close((uv_handle_t *) &qt->sweep, qt_sweep_closed);
    }
    qt_maybe_closed(qt);
}

samsa_err_t
samsa_quorum_transport_init(struct raft_uv_transport *t, uv_loop_t *loop,
                            const char *cluster_id, char *errstr,
                            size_t errstr_size)
{
    qt_t  *qt;

    if (cluster_id == NULL || strlen(cluster_id) == 0
        || strlen(cluster_id) > SAMSA_QUORUM_TRANSPORT_STR_MAX) {
        samsa_diag_errstr(errstr, errstr_size,
                          "quorum: cluster id must be 1..%d bytes",
                          SAMSA_QUORUM_TRANSPORT_STR_MAX);
        return SAMSA_ERR__INVALID_ARG;
    }
    memset(t, 0, sizeof(*t));
    qt = samsa_calloc(1, sizeof(*qt));
    qt->t = t;
    qt->loop = loop;
    qt->cluster_id = samsa_strdup(cluster_id);
    qt->retry_ms = 200;
    t->impl = qt;
    t->init = qt_init;
    t->listen = qt_listen;
    t->connect = qt_connect;
    t->close = qt_close;
    return SAMSA_ERR_NONE;
}

void
samsa_quorum_transport_set_member_check(struct raft_uv_transport *t,
                                        samsa_quorum_transport_member_fn *fn,
                                        void *ctx)
{
    qt_t  *qt = t->impl;

    qt->member = fn;
    qt->member_ctx = ctx;
}

void
samsa_quorum_transport_set_retry(struct raft_uv_transport *t, unsigned ms)
{
    qt_t  *qt = t->impl;

    qt->retry_ms = ms;
}

uint64_t
samsa_quorum_transport_refused(const struct raft_uv_transport *t)
{
    const qt_t  *qt = t->impl;

    return qt->refused;
}

void
samsa_quorum_transport_fini(struct raft_uv_transport *t)
{
    qt_t  *qt = t->impl;

    if (qt == NULL) {
        return;
    }
    samsa_free(qt->address);
    samsa_free(qt->cluster_id);
    samsa_free(qt);
    t->impl = NULL;
}
