/*
 * net/server/proc.c - a network thread (Kafka's Processor): its own selector
 * (net/selector.c: epoll set and wake-up), the connections the acceptor
 * gave it, and the seven-step turn:
 *   1 configure new connections (at most 20 a turn)
 *   2 process new responses (from the handlers), writing each at once;
 *     those written whole go through step 5 here already, so that their
 *     connections are unmuted before the wait
 *   3 poll: announce the wait (wake-ups are skipped until here), selector
 *     wait (0 ms if connections, responses or reads epoll will not
 *     announce wait, else up to 300 ms, or until the first client-quota
 *     throttle ends), then read and write; at
 *     most one completed receive per connection; then end the throttles
 *     whose delay passed (MUTED_AND_THROTTLED -> MUTED, and unmute)
 *   4 process completed receives: parse the header, queue the request
 *     (blocking while the queue is full) and mute the connection
 *   5 process completed sends: request log, unmute
 *   6 process disconnected: close what broke or was asked to close
 *   7 close excess connections (max.connections) and idle ones
 * Threads: everything here runs on the processor's own thread except
 * samsa_proc_accept (acceptor), samsa_proc_enqueue_response,
 * samsa_proc_wakeup and samsa_proc_exited (any), samsa_proc_set_run (main,
 * or the acceptor removing the thread).  A thread that leaves closes its
 * connections, marks itself retired (responses for it are dropped from
 * then on) and EXITED; its struct lives until the socket server is
 * freed.
 */
#include "net/server/sockserver_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proto/gen/ApiVersions.h"
#include "proto/gen/SaslAuthenticate.h"
#include "proto/gen/SaslHandshake.h"
#include "proto/proto.h"
#include "util/alloc.h"
#include "util/diag.h"
#include "util/locked.h"
#include "util/time.h"

#define PROC_MAX_EVENTS 256

/* Add n to a metrics counter this network thread alone writes: a relaxed
 * load and store, no locked instruction. */
static void
proc_stat_add(_Atomic uint64_t *counter, uint64_t n)
{
    atomic_store_explicit(counter,
                          atomic_load_explicit(counter, memory_order_relaxed)
                              + n,
                          memory_order_relaxed);
}

/* Copy the string src into dst (size bytes), cut to fit, NUL-terminated. */
static void
proc_strlcpy(char *dst, size_t size, const char *src)
{
    size_t  n = strnlen(src, size - 1);

    memcpy(dst, src, n);
    dst[n] = '\0';
}

static samsa_conn_t *
proc_conn_find(samsa_proc_t *proc, samsa_conn_id_t id)
{
    if (id.slot >= proc->nslots || proc->gens[id.slot] != id.gen) {
        return NULL;
    }
    return proc->slots[id.slot];
}

/* A TLS connection's interest follows from its state alone: during the
 * handshake what OpenSSL waits for; then READ while not muted, WRITE
 * while a response is blocked on a full socket, plus what a blocked TLS
 * read (WRITE) or write (READ) waits for. */
static uint32_t
proc_tls_events(const samsa_conn_t *conn)
{
    uint32_t  rd = samsa_tls_read_wants(conn->tls);
    uint32_t  wr = samsa_tls_write_wants(conn->tls);
    uint32_t  ev = 0;

    if (samsa_tls_handshaking(conn->tls)) {
        return rd != 0 ? rd : SAMSA_SELECTOR_F_READ;
    }
    if (conn->mute == SAMSA_MUTE_NOT_MUTED) {
        ev |= SAMSA_SELECTOR_F_READ;
    }
    if (conn->sending != NULL) {
        ev |= wr;
    }
    return ev | (rd & SAMSA_SELECTOR_F_WRITE);
}

static void
proc_sel_set(samsa_proc_t *proc, samsa_conn_t *conn, uint32_t events)
{
    if (conn->edge) {
        /* registered for both, edge-triggered: the interest is ours to
         * keep (an edge that finds it muted is remembered as readable) */
        conn->events = events;
        return;
    }
    if (conn->tls != NULL) {
        events = proc_tls_events(conn);
    }
    if (conn->events == events) {
        return;
    }
    if (samsa_selector_modify(&proc->sel, conn->fd, events, conn)
        != SAMSA_ERR_NONE) {
        samsa_error("changing the interest of connection %s failed",
                    conn->idstr);
    }
    conn->events = events;
}

/* ---- idle (LRU) list ---------------------------------------------------- */

/* The link at offset @off in connection @c. */
#define PROC_LINK(c, off) ((samsa_conn_link_t *) ((char *) (c) + (off)))

/* Unlink @conn from a connection list: *@head is its first element,
 * *@tail (NULL: the list keeps no tail) its last, and @off the offset of
 * the list's link in a connection.  @conn must be in the list. */
static void
proc_list_unlink(samsa_conn_t **head, samsa_conn_t **tail,
                 samsa_conn_t *conn, size_t off)
{
    samsa_conn_link_t  *link = PROC_LINK(conn, off);

    if (link->prev != NULL) {
        PROC_LINK(link->prev, off)->next = link->next;
    } else {
        *head = link->next;
    }
    if (link->next != NULL) {
        PROC_LINK(link->next, off)->prev = link->prev;
    } else if (tail != NULL) {
        *tail = link->prev;
    }
    link->prev = link->next = NULL;
}

static void
proc_lru_unlink(samsa_proc_t *proc, samsa_conn_t *conn)
{
    if (conn->lru.prev == NULL && proc->lru_head != conn) {
        return;                         /* not in the list */
    }
    proc_list_unlink(&proc->lru_head, &proc->lru_tail, conn,
                     offsetof(samsa_conn_t, lru));
}

static void
proc_lru_touch(samsa_proc_t *proc, samsa_conn_t *conn, int64_t now)
{
    conn->active_ns = now;
    if (proc->lru_tail == conn) {
        return;
    }
    proc_lru_unlink(proc, conn);
    conn->lru.prev = proc->lru_tail;
    if (proc->lru_tail != NULL) {
        proc->lru_tail->lru.next = conn;
    } else {
        proc->lru_head = conn;
    }
    proc->lru_tail = conn;
}

/* ---- mute state ---------------------------------------------------------- */

/* Apply ev; an illegal transition is our bug: report it and close. */
static bool
proc_mute_event(samsa_proc_t *proc, samsa_conn_t *conn, samsa_mute_event_t ev)
{
    samsa_mute_state_t  before = conn->mute;

    (void) proc;
    if (samsa_mute_apply(&conn->mute, ev) != SAMSA_ERR_NONE) {
        samsa_error("BUG: illegal mute transition %s in state %s on "
                    "connection %s; closing it",
                    samsa_mute_event_name(ev), samsa_mute_state_name(before),
                    conn->idstr);
        return false;
    }
    return true;
}

static void proc_conn_schedule_close(samsa_proc_t *proc, samsa_conn_t *conn);
static void proc_queue_read(samsa_proc_t *proc, samsa_conn_t *conn);
static void proc_write_now(samsa_proc_t *proc, samsa_conn_t *conn,
                           int64_t now);

static void
proc_conn_mute(samsa_proc_t *proc, samsa_conn_t *conn)
{
    if (!proc_mute_event(proc, conn, SAMSA_MUTE_EV_MUTE)) {
        proc_conn_schedule_close(proc, conn);
        return;
    }
    proc_sel_set(proc, conn, conn->events & ~SAMSA_SELECTOR_F_READ);
}

/* Kafka's tryUnmuteChannel: resume reading if nothing holds the connection
 * (no response pending, no throttle) and the server is not draining. */
static void
proc_conn_try_unmute(samsa_proc_t *proc, samsa_conn_t *conn)
{
    if (atomic_load_explicit(&proc->run, memory_order_acquire)
        != SAMSA_PROC_RUNNING) {
        return;
    }
    if (!proc_mute_event(proc, conn, SAMSA_MUTE_EV_UNMUTE)) {
        proc_conn_schedule_close(proc, conn);
        return;
    }
    if (conn->mute == SAMSA_MUTE_NOT_MUTED) {
        proc_sel_set(proc, conn, conn->events | SAMSA_SELECTOR_F_READ);
        proc_queue_read(proc, conn);
    }
}

/* Mute conn for memory (the pool is exhausted: Kafka's KafkaChannel.read()
 * muting itself), and the end of it; nmem_muted and its metrics follow. */
static void
proc_mem_mute(samsa_proc_t *proc, samsa_conn_t *conn)
{
    conn->mem_muted = true;
    proc->nmem_muted++;
    atomic_store_explicit(&proc->stat_mem_muted, (int64_t) proc->nmem_muted,
                          memory_order_relaxed);
    proc_stat_add(&proc->stat_mem_mutes, 1);
    proc_conn_mute(proc, conn);
}

static void
proc_mem_muted_end(samsa_proc_t *proc, samsa_conn_t *conn)
{
    conn->mem_muted = false;
    proc->nmem_muted--;
    atomic_store_explicit(&proc->stat_mem_muted, (int64_t) proc->nmem_muted,
                          memory_order_relaxed);
}

/* ---- throttling (client quotas) ------------------------------------------ */

static void
proc_throttle_unlink(samsa_proc_t *proc, samsa_conn_t *conn)
{
    if (!conn->throttled) {
        return;
    }
    proc_list_unlink(&proc->thr_head, NULL, conn,
                     offsetof(samsa_conn_t, thr));
    conn->throttled = false;
}

/* Kafka's StartThrottlingResponse: a quota throttles the connection for
 * ms from now; its response still goes out at once (KIP-219: the client
 * backs off by itself, and an older client simply is not read), but the
 * connection is not read again before the delay ends. */
static bool
proc_throttle_start(samsa_proc_t *proc, samsa_conn_t *conn, int32_t ms,
                    int64_t now)
{
    samsa_conn_t  **pp, *prev = NULL;

    if (!proc_mute_event(proc, conn, SAMSA_MUTE_EV_THROTTLE_STARTED)) {
        proc_conn_schedule_close(proc, conn);
        return false;
    }
    conn->throttle_end_ns = now + (int64_t) ms * 1000000;
    for (pp = &proc->thr_head; *pp != NULL
                               && (*pp)->throttle_end_ns
                                      <= conn->throttle_end_ns;
         pp = &(*pp)->thr.next) {
        prev = *pp;
    }
    conn->thr.next = *pp;
    conn->thr.prev = prev;
    if (*pp != NULL) {
        (*pp)->thr.prev = conn;
    }
    *pp = conn;
    conn->throttled = true;
    return true;
}

/* Kafka's EndThrottlingResponse for every connection whose delay ended. */
static void
proc_throttle_expire(samsa_proc_t *proc, int64_t now)
{
    samsa_conn_t  *conn;

    while ((conn = proc->thr_head) != NULL && conn->throttle_end_ns <= now) {
        proc_throttle_unlink(proc, conn);
        if (conn->closing) {
            continue;
        }
        if (!proc_mute_event(proc, conn, SAMSA_MUTE_EV_THROTTLE_ENDED)) {
            proc_conn_schedule_close(proc, conn);
            continue;
        }
        proc_conn_try_unmute(proc, conn);
    }
}

/* Poll no longer than until the first throttle ends. */
static int
proc_throttle_poll_ms(samsa_proc_t *proc, int timeout, int64_t now)
{
    int64_t  ms;

    if (proc->thr_head == NULL) {
        return timeout;
    }
    ms = (proc->thr_head->throttle_end_ns - now + 999999) / 1000000;
    if (ms < 0) {
        ms = 0;
    }
    return ms < timeout ? (int) ms : timeout;
}

/* ---- reads epoll will not announce ---------------------------------------- */

/* An unmuted connection that holds bytes epoll will not announce is read
 * at this turn's poll: a TLS connection's decrypted bytes (a pipelined
 * request read with the one before it), or an edge socket that had bytes
 * when its edge came (a pipelined request, the rest of one that met an
 * empty pool, or the socket not yet read empty). */
static void
proc_queue_read(samsa_proc_t *proc, samsa_conn_t *conn)
{
    if (conn->read_queued) {
        return;
    }
    if (conn->tls != NULL ? !samsa_tls_has_pending(conn->tls)
                          : !conn->readable) {
        return;
    }
    conn->read_queued = true;
    conn->next_pending = proc->read_pending;
    proc->read_pending = conn;
}

/* Take conn out of the pending list (it is being destroyed). */
static void
proc_unqueue_read(samsa_proc_t *proc, samsa_conn_t *conn)
{
    samsa_conn_t  **pp;

    if (!conn->read_queued) {
        return;
    }
    for (pp = &proc->read_pending; *pp != NULL; pp = &(*pp)->next_pending) {
        if (*pp == conn) {
            *pp = conn->next_pending;
            break;
        }
    }
    conn->read_queued = false;
}

/* ---- TLS ----------------------------------------------------------------- */

/* Free conn's TLS state. */
static void
proc_tls_forget(samsa_proc_t *proc, samsa_conn_t *conn)
{
    if (samsa_tls_handshaking(conn->tls)) {
        proc->nhandshaking--;
    }
    samsa_tls_free(conn->tls);
    conn->tls = NULL;
}

/* ---- closing -------------------------------------------------------------- */

/* Close at step 6 of this turn; until then the connection is skipped. */
static void
proc_conn_schedule_close(samsa_proc_t *proc, samsa_conn_t *conn)
{
    if (conn->closing) {
        return;
    }
    conn->closing = true;
    conn->next_dis = proc->dis_done;
    proc->dis_done = conn;
}

static void
proc_conn_destroy(samsa_proc_t *proc, samsa_conn_t *conn)
{
    samsa_sockserver_t  *ss = proc->ss;

    /* logged if it fails; the close below leaves the set anyway */
    (void) !samsa_selector_remove(&proc->sel, conn->fd);
    proc_unqueue_read(proc, conn);
    if (conn->tls != NULL) {
        proc_tls_forget(proc, conn);
    }
    if (conn->sasl != NULL) {
        if (conn->authenticating) {
            proc->nauthenticating--;
        }
        samsa_sasl_fini(conn->sasl);
        samsa_free(conn->sasl);
    }
    if (conn->handed_off) {
        ss->conf.handoff_take(ss->conf.handoff_ctx, conn->fd);
    } else {
        close(conn->fd);
    }
    samsa_connquota_give(&ss->quota, proc->listener, conn->remote_ip);
    if (conn->payload != NULL) {
        samsa_free(conn->payload);
        if (conn->charged > 0
            && samsa_mempool_give(&ss->pool, conn->charged)) {
            samsa_reqchan_pool_returned(&ss->chan);
        }
    }
    if (conn->sending != NULL) {
        proc->inflight--;
        samsa_resp_free(samsa_resp_of_send(conn->sending));
    }
    if (conn->mem_muted) {
        proc_mem_muted_end(proc, conn);
    }
    proc_lru_unlink(proc, conn);
    proc_throttle_unlink(proc, conn);
    proc->slots[conn->id.slot] = NULL;
    proc->gens[conn->id.slot]++;
    proc->free_slots[proc->nfree++] = conn->id.slot;
    proc->nconns--;
    atomic_store_explicit(&proc->stat_conns, (int64_t) proc->nconns,
                          memory_order_relaxed);
    samsa_debug("closed connection %s", conn->idstr);
    samsa_free(conn);
}

/* Step 6. */
static void
proc_process_disconnected(samsa_proc_t *proc)
{
    samsa_conn_t  *conn, *next;

    for (conn = proc->dis_done; conn != NULL; conn = next) {
        next = conn->next_dis;
        proc_conn_destroy(proc, conn);
    }
    proc->dis_done = NULL;
}

/* ---- step 1: new connections ------------------------------------------ */

static void
proc_format_addr(const struct sockaddr_storage *sa, char *out, size_t size,
                 int *port)
{
    char  host[INET6_ADDRSTRLEN] = "?";

    if (sa->ss_family == AF_INET) {
        const struct sockaddr_in  *in = (const struct sockaddr_in *) sa;

        inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
        *port = ntohs(in->sin_port);
    } else if (sa->ss_family == AF_INET6) {
        const struct sockaddr_in6  *in6 = (const struct sockaddr_in6 *) sa;

        inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
        *port = ntohs(in6->sin6_port);
    } else {
        *port = 0;
    }
    snprintf(out, size, "%s", host);
}

static uint32_t
proc_slot_alloc(samsa_proc_t *proc)
{
    size_t  i, n;

    if (proc->nfree == 0) {
        n = proc->nslots == 0 ? 64 : proc->nslots * 2;
        proc->slots = samsa_realloc(proc->slots, n * sizeof(*proc->slots));
        proc->gens = samsa_realloc(proc->gens, n * sizeof(*proc->gens));
        proc->free_slots = samsa_realloc(proc->free_slots,
                                         n * sizeof(*proc->free_slots));
        for (i = n; i > proc->nslots; i--) {
            proc->slots[i - 1] = NULL;
            proc->gens[i - 1] = 0;
            proc->free_slots[proc->nfree++] = (uint32_t) (i - 1);
        }
        proc->nslots = n;
    }
    return proc->free_slots[--proc->nfree];
}

static void
proc_conn_name(samsa_proc_t *proc, samsa_conn_t *conn)
{
    struct sockaddr_storage  local, remote;
    socklen_t                llen = sizeof(local), rlen = sizeof(remote);
    char                     lhost[64] = "?", rhost[64] = "?";
    int                      lport = 0, rport = 0;

    if (getsockname(conn->fd, (struct sockaddr *) &local, &llen) == 0) {
        proc_format_addr(&local, lhost, sizeof(lhost), &lport);
    }
    if (getpeername(conn->fd, (struct sockaddr *) &remote, &rlen) == 0) {
        proc_format_addr(&remote, rhost, sizeof(rhost), &rport);
    }
    snprintf(conn->idstr, sizeof(conn->idstr), "%s:%d-%s:%d-%u-%llu", lhost,
             lport, rhost, rport, (unsigned) proc->id,
             (unsigned long long) proc->conn_seq++);
}

/* On a TLS listener: the connection's TLS state, handshake not started
 * (the ClientHello comes first), and its deadline.  False (and the
 * connection closed at step 6) if it cannot be set up. */
static bool
proc_tls_adopt(samsa_proc_t *proc, samsa_conn_t *conn, int64_t now)
{
    samsa_tls_ctx_t  *ctx;
    int64_t           ms = SAMSA_PROC_TLS_HANDSHAKE_MS;
    int64_t           idle_ms = proc->ss->conf.connections_max_idle_ms;
    samsa_err_t       err;

    if (proc->ss->conf.listeners[proc->listener].tls == NULL) {
        return true;
    }
    /* the context in effect now (a key store update replaces it) */
    ctx = samsa_sockserver_tls(proc->ss, proc->listener);
    err = samsa_tls_new(&conn->tls, ctx, conn->fd, conn->idstr, NULL);
    samsa_tls_ctx_unref(ctx);
    if (err != SAMSA_ERR_NONE) {
        proc_conn_schedule_close(proc, conn);
        return false;
    }
    proc->nhandshaking++;
    if (idle_ms >= 0 && idle_ms < ms) {
        ms = idle_ms;
    }
    conn->tls_deadline_ns = now + ms * 1000000;
    return true;
}

/* On a SASL listener: the connection's authentication state, and the
 * time it has to complete it (the TLS handshake's bound, counted from the
 * accept: a client that connects and never authenticates is closed). */
static void
proc_sasl_adopt(samsa_proc_t *proc, samsa_conn_t *conn, int64_t now)
{
    const samsa_sasl_conf_t  *conf = proc->ss->conf.listeners[proc->listener].sasl;
    int64_t                   ms = SAMSA_PROC_TLS_HANDSHAKE_MS;
    int64_t                   idle_ms = proc->ss->conf.connections_max_idle_ms;

    if (conf == NULL) {
        return;
    }
    conn->sasl = samsa_malloc(sizeof(*conn->sasl));
    samsa_sasl_init(conn->sasl, conf);
    conn->authenticating = true;
    proc->nauthenticating++;
    if (idle_ms >= 0 && idle_ms < ms) {
        ms = idle_ms;
    }
    conn->auth_deadline_ns = now + ms * 1000000;
}

static void
proc_conn_adopt(samsa_proc_t *proc, samsa_newconn_t *nc, int64_t now)
{
    samsa_conn_t        *conn = samsa_calloc(1, sizeof(*conn));
    uint32_t             slot = proc_slot_alloc(proc);

    conn->fd = nc->fd;
    snprintf(conn->remote_ip, sizeof(conn->remote_ip), "%s", nc->remote_ip);
    proc_strlcpy(conn->principal, sizeof(conn->principal), "User:ANONYMOUS");
    conn->id = (samsa_conn_id_t) { proc->id, slot, proc->gens[slot] };
    conn->mute = SAMSA_MUTE_NOT_MUTED;
    snprintf(conn->sw_name, sizeof(conn->sw_name), "unknown");
    snprintf(conn->sw_version, sizeof(conn->sw_version), "unknown");
    proc_conn_name(proc, conn);
    proc->slots[slot] = conn;
    proc->nconns++;
    atomic_store_explicit(&proc->stat_conns, (int64_t) proc->nconns,
                          memory_order_relaxed);
    proc_stat_add(&proc->stat_conns_created, 1);
    proc_lru_touch(proc, conn, now);
    if (!proc_tls_adopt(proc, conn, now)) {
        return;
    }
    proc_sasl_adopt(proc, conn, now);
    /* plaintext: both directions, edge-triggered, once (no epoll_ctl per
     * mute and unmute); TLS follows what OpenSSL waits for */
    conn->edge = conn->tls == NULL;
    if (samsa_selector_add(&proc->sel, conn->fd,
                           conn->edge ? SAMSA_SELECTOR_F_READ
                                            | SAMSA_SELECTOR_F_WRITE
                                            | SAMSA_SELECTOR_F_EDGE
                                      : SAMSA_SELECTOR_F_READ,
                           conn)
        != SAMSA_ERR_NONE) {
        samsa_error("registering connection %s failed", conn->idstr);
        proc_conn_schedule_close(proc, conn);
        return;
    }
    conn->events = SAMSA_SELECTOR_F_READ;
    samsa_debug("new connection %s", conn->idstr);
}

static void
proc_configure_new_connections(samsa_proc_t *proc)
{
    samsa_newconn_t  *nc;
    int64_t           now = samsa_now_ns();
    int               i;

    for (i = 0; i < SAMSA_PROC_NEWCONN_PER_TURN; i++) {
        nc = samsa_queue_take(&proc->newconns, 0);
        if (nc == NULL) {
            break;
        }
        proc_conn_adopt(proc, nc, now);
        samsa_free(nc);
    }
}

/* ---- step 2: new responses --------------------------------------------- */

static void
proc_request_done(samsa_proc_t *proc, samsa_conn_t *conn, samsa_resp_t *resp,
                  int64_t now)
{
    samsa_sockserver_t  *ss = proc->ss;

    resp->req->end_ns = now;
    conn->net_timed = ss->conf.net_time != NULL
                      && resp->req->request_quota_net;
    if (conn->net_timed) {
        ss->conf.net_time(ss->conf.ctx, resp->req, conn->net_ns);
    }
    conn->net_ns = 0;
    if (ss->conf.done != NULL) {
        ss->conf.done(ss->conf.done_ctx, resp->req);
    }
    proc->inflight--;
}

static void
proc_response_sent(samsa_proc_t *proc, samsa_conn_t *conn)
{
    if (!proc_mute_event(proc, conn, SAMSA_MUTE_EV_RESPONSE_SENT)) {
        proc_conn_schedule_close(proc, conn);
        return;
    }
    proc_conn_try_unmute(proc, conn);
}

static void
proc_handle_response(samsa_proc_t *proc, samsa_resp_t *resp, int64_t now)
{
    samsa_conn_t  *conn = proc_conn_find(proc, resp->req->conn_id);
    int64_t        from;
    bool           timed;

    resp->req->resp_dequeue_ns = now;
    if (conn == NULL || conn->closing) {
        /* The connection went away meanwhile: the answer has nowhere to
         * go. */
        resp->req->end_ns = now;
        proc->inflight--;
        samsa_resp_free(resp);
        return;
    }
    if (resp->throttle_ms > 0 && resp->kind != SAMSA_RESP_CLOSE
        && !proc_throttle_start(proc, conn, resp->throttle_ms, now)) {
        resp->req->end_ns = now;
        proc->inflight--;
        samsa_resp_free(resp);
        return;
    }
    switch (resp->kind) {
    case SAMSA_RESP_SEND:
        samsa_assert(conn->sending == NULL);
        conn->sending = &resp->send;
        conn->send_off = 0;
        conn->send_region = 0;
        conn->region_off = 0;
        /* Most responses fit the socket buffer: write now rather than after
         * another epoll round; what is left waits for EPOLLOUT. */
        timed = resp->req->request_quota_net;  /* resp may go in the write */
        from = timed ? samsa_now_ns() : 0;
        proc_write_now(proc, conn, now);
        if (timed) {
            conn->net_ns += samsa_now_ns() - from;
        }
        return;
    case SAMSA_RESP_NOOP:
        proc_request_done(proc, conn, resp, now);
        samsa_resp_free(resp);
        proc_response_sent(proc, conn);
        return;
    case SAMSA_RESP_CLOSE:
        proc_request_done(proc, conn, resp, now);
        samsa_resp_free(resp);
        samsa_debug("closing connection %s as the response asks",
                    conn->idstr);
        proc_conn_schedule_close(proc, conn);
        return;
    }
}

/* Take the whole response queue (retire: and mark the processor retired,
 * so that no more are queued).  @locks resp_lock taken */
static samsa_resp_t *
proc_resp_take(samsa_proc_t *proc, bool retire)
{
    samsa_resp_t  *resp;

    pthread_mutex_lock(&proc->resp_lock);
    if (retire) {
        proc->retired = true;
    }
    resp = proc->resp_head;
    proc->resp_head = proc->resp_tail = NULL;
    proc->nresp = 0;
    pthread_mutex_unlock(&proc->resp_lock);
    return resp;
}

/* Responses wait in the queue.  @locks resp_lock taken */
static bool
proc_resp_queued(samsa_proc_t *proc)
{
    return SAMSA_LOCKED_READ(&proc->resp_lock, proc->resp_head != NULL);
}

static void
proc_process_new_responses(samsa_proc_t *proc)
{
    samsa_resp_t  *resp, *next;
    int64_t        now = samsa_now_ns();

    resp = proc_resp_take(proc, false);
    for (; resp != NULL; resp = next) {
        next = resp->next;
        resp->next = NULL;
        proc_handle_response(proc, resp, now);
    }
}

/* ---- step 3: poll --------------------------------------------------------- */

static void
proc_resume_mem_muted(samsa_proc_t *proc)
{
    samsa_conn_t  *conn;
    size_t         i;

    if (proc->nmem_muted == 0 || samsa_mempool_is_exhausted(&proc->ss->pool)) {
        return;
    }
    for (i = 0; i < proc->nslots && proc->nmem_muted > 0; i++) {
        conn = proc->slots[i];
        if (conn != NULL && conn->mem_muted) {
            proc_mem_muted_end(proc, conn);
            proc_conn_try_unmute(proc, conn);
        }
    }
}

/* Before the first Kafka read on a server with a handoff: true if conn
 * must wait (a prefix of the other protocol's magic came) or leaves (all
 * of it came: handed over at destroy, without close). */
static bool
proc_handoff_sniff(samsa_proc_t *proc, samsa_conn_t *conn)
{
    samsa_sockserver_t  *ss = proc->ss;
    uint8_t              buf[SAMSA_SOCKSERVER_HANDOFF_LEN];
    ssize_t              n;

    n = recv(conn->fd, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK
                  || errno == EINTR)) {
        return true;
    }
    if (n <= 0) {
        conn->sniffed = true;           /* EOF or error: the read sees it */
        return false;
    }
    if (!ss->conf.handoff_match(ss->conf.handoff_ctx, buf, (size_t) n)) {
        conn->sniffed = true;
        return false;
    }
    if ((size_t) n == sizeof(buf)) {
        samsa_debug("connection %s handed over (not Kafka)", conn->idstr);
        conn->handed_off = true;
        proc_conn_schedule_close(proc, conn);
    }
    return true;
}

static void
proc_on_readable(samsa_proc_t *proc, samsa_conn_t *conn, int64_t now)
{
    samsa_sockserver_t  *ss = proc->ss;
    samsa_err_t          err;

    if (conn->mute != SAMSA_MUTE_NOT_MUTED || conn->recv_complete) {
        return;
    }
    if (ss->conf.handoff_match != NULL && !conn->sniffed
        && proc_handoff_sniff(proc, conn)) {
        return;
    }
    err = samsa_conn_read(conn, ss->conf.socket_request_max_bytes, &ss->pool);
    proc_lru_touch(proc, conn, now);
    switch (err) {
    case SAMSA_ERR_NONE:
        if (conn->recv_complete) {
            conn->recv_done_ns = now;
            conn->next_recv = proc->recv_done;
            proc->recv_done = conn;
        }
        return;
    case SAMSA_ERR__FULL:
        proc_mem_mute(proc, conn);
        return;
    case SAMSA_ERR__BAD_MSG:
        samsa_info("closing connection %s: request size %d is invalid or "
                   "larger than socket.request.max.bytes (%d)",
                   conn->idstr, conn->size, ss->conf.socket_request_max_bytes);
        break;
    default:
        break;
    }
    proc_conn_schedule_close(proc, conn);
}

/* Write conn->sending now; if the socket takes only part, wait for
 * EPOLLOUT for the rest. */
static void
proc_write_now(samsa_proc_t *proc, samsa_conn_t *conn, int64_t now)
{
    bool  done;

    if (samsa_conn_write(conn, &done) != SAMSA_ERR_NONE) {
        proc_conn_schedule_close(proc, conn);
        return;
    }
    proc_lru_touch(proc, conn, now);
    if (done) {
        conn->next_send = proc->send_done;
        proc->send_done = conn;
    } else {
        proc_sel_set(proc, conn, conn->events | SAMSA_SELECTOR_F_WRITE);
    }
}

static void
proc_on_writable(samsa_proc_t *proc, samsa_conn_t *conn, int64_t now)
{
    samsa_err_t  err;
    bool         done;

    if (conn->sending == NULL) {
        proc_sel_set(proc, conn, conn->events & ~SAMSA_SELECTOR_F_WRITE);
        return;
    }
    err = samsa_conn_write(conn, &done);
    proc_lru_touch(proc, conn, now);
    if (err != SAMSA_ERR_NONE) {
        proc_conn_schedule_close(proc, conn);
        return;
    }
    if (done) {
        proc_sel_set(proc, conn, conn->events & ~SAMSA_SELECTOR_F_WRITE);
        conn->next_send = proc->send_done;
        proc->send_done = conn;
    }
}

/* An SSL listener's principal: the client certificate's subject, as
 * Kafka's ssl.principal.mapping.rules=DEFAULT maps it ("User:CN=...,O=...");
 * without one User:ANONYMOUS stays.  (On SASL_SSL, SASL names it.) */
static void
proc_tls_principal(samsa_proc_t *proc, samsa_conn_t *conn)
{
    char  dn[sizeof(conn->principal) - 5];

    if (conn->sasl != NULL || !samsa_tls_peer_dn(conn->tls, dn, sizeof(dn))) {
        return;
    }
    (void) proc;
    memcpy(conn->principal, "User:", 5);
    proc_strlcpy(conn->principal + 5, sizeof(conn->principal) - 5, dn);
}

/* One step of a TLS handshake; once it is done the connection reads as
 * any other (the client's first request may already be decrypted). */
static void
proc_tls_handshake(samsa_proc_t *proc, samsa_conn_t *conn, int64_t now)
{
    samsa_err_t  err = samsa_tls_handshake(conn->tls);

    proc_lru_touch(proc, conn, now);
    if (err != SAMSA_ERR_NONE) {
        proc_conn_schedule_close(proc, conn);
        return;
    }
    if (!samsa_tls_handshaking(conn->tls)) {
        proc->nhandshaking--;
        proc_tls_principal(proc, conn);
        if (atomic_load_explicit(&proc->run, memory_order_acquire)
            == SAMSA_PROC_RUNNING) {
            proc_on_readable(proc, conn, now);
        }
    }
    if (!conn->closing) {
        proc_sel_set(proc, conn, conn->events);
    }
}

/* A TLS connection's readiness.  Reads and writes each go on when the
 * socket is ready for what they wait for: a blocked write may wait for
 * READ, a blocked read for WRITE. */
static void
proc_tls_on_event(samsa_proc_t *proc, samsa_conn_t *conn, uint32_t ready,
                  int64_t now)
{
    uint32_t  rd_want = samsa_tls_read_wants(conn->tls);
    uint32_t  wr_want = samsa_tls_write_wants(conn->tls);
    uint32_t  any = ready & (SAMSA_SELECTOR_F_READ | SAMSA_SELECTOR_F_WRITE
                             | SAMSA_SELECTOR_F_HUP | SAMSA_SELECTOR_F_ERR);

    if ((ready & SAMSA_SELECTOR_F_ERR) && conn->sending == NULL) {
        proc_conn_schedule_close(proc, conn);
        return;
    }
    if (samsa_tls_handshaking(conn->tls)) {
        proc_tls_handshake(proc, conn, now);
        return;
    }
    if (conn->sending != NULL
        && ((ready & SAMSA_SELECTOR_F_WRITE) || (wr_want & any) != 0)) {
        proc_on_writable(proc, conn, now);
    }
    if (!conn->closing
        && ((ready & ~SAMSA_SELECTOR_F_WRITE) || (rd_want & any) != 0)
        && atomic_load_explicit(&proc->run, memory_order_acquire)
               == SAMSA_PROC_RUNNING) {
        proc_on_readable(proc, conn, now);
    }
    if (!conn->closing) {
        proc_sel_set(proc, conn, conn->events);
    }
}

/* Read the connections whose bytes epoll will not announce. */
static void
proc_run_queued_reads(samsa_proc_t *proc, int64_t now)
{
    samsa_conn_t  *conn = proc->read_pending, *next;

    proc->read_pending = NULL;
    for (; conn != NULL; conn = next) {
        next = conn->next_pending;
        conn->next_pending = NULL;
        conn->read_queued = false;
        if (conn->closing
            || atomic_load_explicit(&proc->run, memory_order_acquire)
                   != SAMSA_PROC_RUNNING) {
            continue;
        }
        proc_on_readable(proc, conn, now);
        if (!conn->closing) {
            proc_sel_set(proc, conn, conn->events);
        }
    }
}

/* Close the TLS connections whose handshake outlived its deadline (a few
 * sweeps a second while handshakes are under way). */
static void
proc_tls_expire_handshakes(samsa_proc_t *proc, int64_t now)
{
    samsa_conn_t  *conn;
    size_t         i;

    if (now - proc->hs_check_ns < 200000000) {
        return;
    }
    proc->hs_check_ns = now;
    for (i = 0; i < proc->nslots; i++) {
        conn = proc->slots[i];
        if (conn == NULL || conn->closing) {
            continue;
        }
        if (conn->authenticating && now >= conn->auth_deadline_ns) {
            samsa_info("closing connection %s: SASL authentication not "
                       "completed in time", conn->idstr);
            proc_stat_add(&proc->stat_auth_failed, 1);
            proc_lru_unlink(proc, conn);
            proc_conn_schedule_close(proc, conn);
            continue;
        }
        if (conn->tls == NULL || !samsa_tls_handshaking(conn->tls)
            || now < conn->tls_deadline_ns) {
            continue;
        }
        samsa_info("closing connection %s: TLS handshake not completed "
                   "in time", conn->idstr);
        proc_lru_unlink(proc, conn);
        proc_conn_schedule_close(proc, conn);
    }
}

/* Kafka closes connections idle for connections.max.idle.ms; one with a
 * request in flight is not idle (it waits on us). */
static void
proc_expire_idle(samsa_proc_t *proc, int64_t now)
{
    int64_t        idle_ns = proc->ss->conf.connections_max_idle_ms * 1000000;
    samsa_conn_t  *conn;
    size_t         n = proc->nconns;

    if (proc->ss->conf.connections_max_idle_ms < 0) {
        return;
    }
    while ((conn = proc->lru_head) != NULL && n-- > 0
           && now - conn->active_ns > idle_ns) {
        if (conn->mute != SAMSA_MUTE_NOT_MUTED && !conn->mem_muted) {
            proc_lru_touch(proc, conn, now);
            continue;
        }
        samsa_debug("closing connection %s: idle for more than "
                    "connections.max.idle.ms (%lld ms)",
                    conn->idstr,
                    (long long) proc->ss->conf.connections_max_idle_ms);
        proc_lru_unlink(proc, conn);
        proc_conn_schedule_close(proc, conn);
    }
}

/* A deadlock the incremental charging of samsa_conn_read() could build:
 * connections each holding part of their request's bytes, the pool
 * empty, all waiting for more.  While the pool is empty, a receive that
 * holds pool memory and has not completed within SAMSA_PROC_RECV_STALL_MS
 * (the clients' default request.timeout.ms: its client has given the
 * request up by then) is closed, once a second at most. */
static void
proc_close_stalled(samsa_proc_t *proc, int64_t now)
{
    const int64_t  stall_ns = (int64_t) SAMSA_PROC_RECV_STALL_MS * 1000000;
    samsa_conn_t  *conn;
    size_t         i;

    if (proc->nmem_muted == 0 || now - proc->stall_check_ns < 1000000000
        || !samsa_mempool_is_exhausted(&proc->ss->pool)) {
        return;
    }
    proc->stall_check_ns = now;
    for (i = 0; i < proc->nslots; i++) {
        conn = proc->slots[i];
        if (conn == NULL || conn->closing || conn->recv_complete
            || conn->charged == 0 || now - conn->recv_start_ns < stall_ns) {
            continue;
        }
        samsa_info("closing connection %s: its request has held %d bytes "
                   "of queued.max.request.bytes for more than %d ms "
                   "without completing while others wait for memory",
                   conn->idstr, conn->charged, SAMSA_PROC_RECV_STALL_MS);
        proc_conn_schedule_close(proc, conn);
    }
}

static void
proc_poll(samsa_proc_t *proc)
{
    samsa_selector_event_t  evs[PROC_MAX_EVENTS];
    samsa_conn_t           *conn;
    int                     timeout;
    size_t                  n, i;
    int64_t                 now, idle_from, from;
    bool                    timed;

    /* From here on wake-ups write the eventfd; until here they were
     * skipped (this thread was awake and looks below at what they were
     * for: new connections, responses, memory back in the pool, run). */
    samsa_selector_prepare_wait(&proc->sel);
    proc_resume_mem_muted(proc);
    /* Don't wait when connections or responses are queued for us, or when
     * step 2 already finished sends that step 5 must unmute. */
    timeout = samsa_queue_size(&proc->newconns) > 0 || proc->send_done != NULL
                      || proc->read_pending != NULL || proc_resp_queued(proc)
                  ? 0
                  : SAMSA_PROC_POLL_MS;
    if (atomic_load_explicit(&proc->run, memory_order_acquire)
        != SAMSA_PROC_RUNNING) {
        timeout = timeout > 20 ? 20 : timeout;
    }
    idle_from = samsa_now_ns();
    timeout = proc_throttle_poll_ms(proc, timeout, idle_from);
    if (samsa_selector_wait(&proc->sel, evs, PROC_MAX_EVENTS, timeout, &n)
        != SAMSA_ERR_NONE) {
        /* logged; n is 0 and the turn goes on */
    }
    now = samsa_now_ns();
    proc_stat_add(&proc->stat_idle_ns, (uint64_t) (now - idle_from));
    for (i = 0; i < n; i++) {
        conn = evs[i].ptr;
        if (conn->closing) {
            continue;
        }
        timed = conn->net_timed;        /* fixed for this event */
        from = timed ? samsa_now_ns() : 0;
        if (conn->edge
            && (evs[i].ready & (SAMSA_SELECTOR_F_READ | SAMSA_SELECTOR_F_HUP
                                | SAMSA_SELECTOR_F_ERR))) {
            conn->readable = true;      /* read below, or at the unmute */
        }
        if (conn->tls != NULL) {
            proc_tls_on_event(proc, conn, evs[i].ready, now);
        } else if ((evs[i].ready & SAMSA_SELECTOR_F_WRITE)
                   && (!conn->edge
                       || (conn->events & SAMSA_SELECTOR_F_WRITE))) {
            /* (an edge socket reports WRITE with every edge: only a
             * response the socket refused waits for it) */
            proc_on_writable(proc, conn, now);
        }
        if (!conn->closing
            && (evs[i].ready & (SAMSA_SELECTOR_F_READ | SAMSA_SELECTOR_F_HUP
                                | SAMSA_SELECTOR_F_ERR))) {
            if ((evs[i].ready & SAMSA_SELECTOR_F_ERR)
                && conn->sending == NULL) {
                proc_conn_schedule_close(proc, conn);
            } else if (atomic_load_explicit(&proc->run, memory_order_acquire)
                       == SAMSA_PROC_RUNNING) {
                proc_on_readable(proc, conn, now);
            }
        }
        /* scheduled closes free conn only at the turn's step 6 */
        if (timed) {
            conn->net_ns += samsa_now_ns() - from;
        }
    }
    if (proc->read_pending != NULL) {
        proc_run_queued_reads(proc, now);
    }
    if (proc->nhandshaking > 0 || proc->nauthenticating > 0) {
        proc_tls_expire_handshakes(proc, now);
    }
    proc_throttle_expire(proc, now);
    proc_expire_idle(proc, now);
    proc_close_stalled(proc, now);
}

/* ---- step 4: completed receives ----------------------------------------- */

/* Kafka keeps names that fit its tables: at most 63 bytes here. */
static bool
proc_sw_valid(samsa_slice_t s)
{
    return s.len <= 63 && samsa_proto_software_valid(s);
}

/* ApiVersions v3+ names the client software: remember it for the requests
 * that follow on this connection (this one still logs the old value). */
static void
proc_note_client_software(samsa_conn_t *conn, const samsa_req_t *req)
{
    samsa_ApiVersionsRequest_t  m;
    samsa_arena_t               arena = SAMSA_ARENA_INIT;
    samsa_rd_t                  rd = req->body;

    samsa_ApiVersionsRequest_init(&m);
    if (samsa_ApiVersionsRequest_decode(&rd, req->hdr.ApiVersion, &arena, &m)
            == SAMSA_ERR_NONE
        && proc_sw_valid(m.ClientSoftwareName)
        && proc_sw_valid(m.ClientSoftwareVersion)) {
        snprintf(conn->sw_name, sizeof(conn->sw_name), "%.*s",
                 (int) m.ClientSoftwareName.len, m.ClientSoftwareName.ptr);
        snprintf(conn->sw_version, sizeof(conn->sw_version), "%.*s",
                 (int) m.ClientSoftwareVersion.len,
                 m.ClientSoftwareVersion.ptr);
    }
    samsa_arena_fini(&arena);
}

static samsa_req_t *
proc_build_request(samsa_proc_t *proc, samsa_conn_t *conn, uint8_t *payload,
                   int32_t size, const samsa_reqhdr_t *hdr, samsa_rd_t *rd)
{
    samsa_sockserver_t   *ss = proc->ss;
    samsa_req_t          *req = samsa_calloc(1, sizeof(*req));
    const samsa_netlistener_t  *l = &ss->conf.listeners[proc->listener];

    req->chan = &ss->chan;
    req->conn_id = conn->id;
    req->hdr = *hdr;
    if (hdr->ClientId.ptr != NULL) {
        req->client_id = samsa_slice_dup(hdr->ClientId);
        req->hdr.ClientId.ptr = req->client_id;
    }
    /* copies, not snprintf: three of those cost ~1,700 instructions per
     * request (callgrind) */
    proc_strlcpy(req->connection, sizeof(req->connection), conn->idstr);
    req->listener = l->name;
    req->security_protocol = l->security_protocol;
    proc_strlcpy(req->principal, sizeof(req->principal), conn->principal);
    proc_strlcpy(req->client_host, sizeof(req->client_host), conn->remote_ip);
    proc_strlcpy(req->sw_name, sizeof(req->sw_name), conn->sw_name);
    proc_strlcpy(req->sw_version, sizeof(req->sw_version), conn->sw_version);
    req->payload = payload;
    req->payload_size = size;
    req->size_bytes = size;
    req->body = *rd;
    samsa_arena_init(&req->arena);
    req->start_ns = samsa_now_ns();
    return req;
}

/* ---- SASL: the answers the network thread gives itself ------------------ */

/* Encode res as the answer to req (SaslHandshake, SaslAuthenticate, or a
 * bare token after SaslHandshake v0). */
static samsa_resp_t *
proc_sasl_encode(samsa_conn_t *conn, samsa_req_t *req,
                 samsa_sasl_route_t route, const samsa_sasl_result_t *res)
{
    const samsa_sasl_conf_t          *conf = conn->sasl->conf;
    samsa_SaslHandshakeResponse_t     hs;
    samsa_SaslAuthenticateResponse_t  au;
    samsa_resp_t                     *resp;
    samsa_wr_t                        wr;
    size_t                            i;

    if (route == SAMSA_SASL_ROUTE_RAW_TOKEN) {
        resp = samsa_resp_new(req, SAMSA_RESP_SEND);
        samsa_buf_init(&resp->send.frame, 16 + res->token_len);
        wr = samsa_resp_wr(resp);
        (void) samsa_wr_i32(&wr, 0);    /* size, patched at respond */
        resp->body_at = resp->send.frame.len;
        samsa_wr_raw(&wr, res->token, res->token_len);
        return resp;
    }
    resp = samsa_resp_new_send(req);
    wr = samsa_resp_wr(resp);
    if (route == SAMSA_SASL_ROUTE_HANDSHAKE) {
        samsa_SaslHandshakeResponse_init(&hs);
        hs.ErrorCode = res->error;
        hs.Mechanisms_cnt = (int32_t) conf->nmech_names;
        hs.Mechanisms = samsa_arena_alloc(&req->arena,
                                          (conf->nmech_names + 1)
                                              * sizeof(samsa_slice_t));
        for (i = 0; i < conf->nmech_names; i++) {
            hs.Mechanisms[i] = samsa_slice_cstr(conf->mech_names[i]);
        }
        samsa_SaslHandshakeResponse_encode(&wr, req->hdr.ApiVersion, &hs);
        return resp;
    }
    samsa_SaslAuthenticateResponse_init(&au);
    au.ErrorCode = res->error;
    if (res->message[0] != '\0') {
        au.ErrorMessage = samsa_slice_cstr(res->message);
    }
    au.AuthBytes = (samsa_slice_t) { (const char *) res->token,
                                     res->token_len };
    au.SessionLifetimeMs = res->session_lifetime_ms;
    samsa_SaslAuthenticateResponse_encode(&wr, req->hdr.ApiVersion, &au);
    return resp;
}

/* Decode req's body for route and run that step of the exchange; false
 * if the body does not decode (Kafka: InvalidRequestException, a
 * close). */
static bool
proc_sasl_step(samsa_conn_t *conn, samsa_req_t *req, samsa_sasl_route_t route,
               samsa_sasl_result_t *res)
{
    samsa_SaslHandshakeRequest_t     hs;
    samsa_SaslAuthenticateRequest_t  au;
    samsa_rd_t                       rd = req->body;
    int64_t                          now = samsa_now_ns();

    switch (route) {
    case SAMSA_SASL_ROUTE_HANDSHAKE:
        samsa_SaslHandshakeRequest_init(&hs);
        if (samsa_SaslHandshakeRequest_decode(&rd, req->hdr.ApiVersion,
                                              &req->arena, &hs)
            != SAMSA_ERR_NONE) {
            return false;
        }
        samsa_sasl_handshake(conn->sasl, req->hdr.ApiVersion, hs.Mechanism,
                             res);
        return true;
    case SAMSA_SASL_ROUTE_AUTHENTICATE:
        samsa_SaslAuthenticateRequest_init(&au);
        if (samsa_SaslAuthenticateRequest_decode(&rd, req->hdr.ApiVersion,
                                                 &req->arena, &au)
            != SAMSA_ERR_NONE) {
            return false;
        }
        samsa_sasl_token(conn->sasl, req->hdr.ApiVersion, au.AuthBytes, now,
                         res);
        return true;
    default:
        samsa_sasl_token(conn->sasl, -1,
                         (samsa_slice_t) { (const char *) rd.p,
                                           (size_t) (rd.end - rd.p) },
                         now, res);
        return true;
    }
}

/* Answer a SaslHandshake / SaslAuthenticate (or bare token) here, as
 * Kafka's authenticator does in its network thread: the request takes
 * the same way as any other (muted until its answer is written; the
 * answer goes through the response queue, so the request log sees it),
 * but no handler runs. */
static void
proc_sasl_answer(samsa_proc_t *proc, samsa_conn_t *conn, samsa_req_t *req,
                 samsa_sasl_route_t route)
{
    samsa_sasl_result_t  res;
    samsa_resp_t        *resp;

    proc->inflight++;
    proc_conn_mute(proc, conn);
    if (!conn->closing
        && !proc_mute_event(proc, conn, SAMSA_MUTE_EV_REQUEST_RECEIVED)) {
        proc_conn_schedule_close(proc, conn);
    }
    if (!proc_sasl_step(conn, req, route, &res)) {
        samsa_info("closing connection %s: malformed %s request during "
                   "SASL authentication", conn->idstr,
                   route == SAMSA_SASL_ROUTE_HANDSHAKE ? "SaslHandshake"
                                                       : "SaslAuthenticate");
        proc_stat_add(&proc->stat_auth_failed, 1);
        samsa_reqchan_respond(samsa_resp_new(req, SAMSA_RESP_CLOSE));
        return;
    }
    if (res.complete) {
        memcpy(conn->principal, "User:", 5);
        proc_strlcpy(conn->principal + 5, sizeof(conn->principal) - 5,
                     conn->sasl->user);
        if (conn->authenticating) {
            conn->authenticating = false;
            proc->nauthenticating--;
        }
        proc_stat_add(&proc->stat_auth_ok, 1);
        samsa_debug("connection %s authenticated as %s (%s)", conn->idstr,
                    conn->principal, samsa_sasl_mech_name(conn->sasl->mech));
    }
    if (res.close) {
        samsa_info("connection %s: SASL authentication failed (%s%s%s); "
                   "closing it once the answer is written", conn->idstr,
                   samsa_sasl_mech_name(conn->sasl->mech),
                   res.message[0] != '\0' ? ": " : "", res.message);
        conn->close_after_send = true;
        proc_stat_add(&proc->stat_auth_failed, 1);
        if (route == SAMSA_SASL_ROUTE_RAW_TOKEN) {
            /* Kafka answers nothing on a bare-token failure */
            samsa_reqchan_respond(samsa_resp_new(req, SAMSA_RESP_CLOSE));
            return;
        }
    }
    resp = proc_sasl_encode(conn, req, route, &res);
    samsa_reqchan_respond(resp);
}

/* Parse the header; unknown API, unsupported version (but ApiVersions) or
 * garbage closes the connection, as Kafka's parseRequestHeader does. */
static void
proc_receive_one(samsa_proc_t *proc, samsa_conn_t *conn)
{
    samsa_sockserver_t  *ss = proc->ss;
    samsa_reqhdr_t       hdr;
    samsa_rd_t           rd;
    samsa_req_t         *req;
    samsa_api_gate_t     gate;
    samsa_sasl_route_t   route;
    uint8_t             *payload;
    int32_t              size;
    char                 why[256];

    payload = samsa_conn_take_payload(conn, &size);
    samsa_rd_init(&rd, payload, (size_t) size);
    memset(&hdr, 0, sizeof(hdr));
    if (conn->sasl != NULL && samsa_sasl_expects_raw(conn->sasl)) {
        /* SaslHandshake v0: the token comes bare, no request header */
        hdr.ApiKey = SAMSA_API_SaslAuthenticate;
        hdr.ApiVersion = -1;
        hdr.CorrelationId = -1;
        req = proc_build_request(proc, conn, payload, size, &hdr, &rd);
        proc_sasl_answer(proc, conn, req, SAMSA_SASL_ROUTE_RAW_TOKEN);
        return;
    }
    if (samsa_reqhdr_decode(&rd, &hdr) != SAMSA_ERR_NONE) {
        samsa_info("closing connection %s: malformed request header "
                   "(api key %d, version %d)",
                   conn->idstr, hdr.ApiKey, hdr.ApiVersion);
        goto out_close;
    }
    gate = ss->conf.gate(ss->conf.ctx, hdr.ApiKey, hdr.ApiVersion);
    if (gate != SAMSA_API_GATE_OK && hdr.ApiKey != SAMSA_API_ApiVersions) {
        samsa_info("closing connection %s: %s api key %d version %d",
                   conn->idstr,
                   gate == SAMSA_API_GATE_UNKNOWN_API ? "unknown"
                                                      : "unsupported",
                   hdr.ApiKey, hdr.ApiVersion);
        goto out_close;
    }
    if (conn->sasl != NULL) {
        route = samsa_sasl_route(conn->sasl, hdr.ApiKey, samsa_now_ns(), why,
                                 sizeof(why));
        if (route == SAMSA_SASL_ROUTE_CLOSE) {
            samsa_info("closing connection %s: %s", conn->idstr, why);
            if (conn->authenticating) {
                proc_stat_add(&proc->stat_auth_failed, 1);
            }
            goto out_close;
        }
        if (route != SAMSA_SASL_ROUTE_HANDLERS) {
            req = proc_build_request(proc, conn, payload, size, &hdr, &rd);
            proc_sasl_answer(proc, conn, req, route);
            return;
        }
    }
    req = proc_build_request(proc, conn, payload, size, &hdr, &rd);
    if (hdr.ApiKey == SAMSA_API_ApiVersions && hdr.ApiVersion >= 3 && gate == SAMSA_API_GATE_OK) {
        proc_note_client_software(conn, req);
    }
    proc->inflight++;
    samsa_reqchan_put(&ss->chan, req);          /* may block: back pressure */
    proc_conn_mute(proc, conn);
    if (!conn->closing
        && !proc_mute_event(proc, conn, SAMSA_MUTE_EV_REQUEST_RECEIVED)) {
        proc_conn_schedule_close(proc, conn);
    }
    return;

out_close:
    samsa_free(payload);
    if (samsa_mempool_give(&ss->pool, size)) {
        samsa_reqchan_pool_returned(&ss->chan);
    }
    proc_conn_schedule_close(proc, conn);
}

static void
proc_process_completed_receives(samsa_proc_t *proc)
{
    samsa_conn_t  *conn, *next;

    for (conn = proc->recv_done; conn != NULL; conn = next) {
        next = conn->next_recv;
        conn->next_recv = NULL;
        if (!conn->closing) {
            proc_receive_one(proc, conn);
        }
    }
    proc->recv_done = NULL;
}

/* ---- step 5: completed sends ---------------------------------------------- */

static void
proc_process_completed_sends(samsa_proc_t *proc)
{
    samsa_conn_t  *conn, *next;
    samsa_resp_t  *resp;
    int64_t        now = samsa_now_ns();

    for (conn = proc->send_done; conn != NULL; conn = next) {
        next = conn->next_send;
        conn->next_send = NULL;
        if (conn->closing) {
            continue;                   /* destroy frees the send */
        }
        resp = samsa_resp_of_send(conn->sending);
        conn->sending = NULL;
        proc_request_done(proc, conn, resp, now);
        samsa_resp_free(resp);
        if (conn->close_after_send) {
            proc_conn_schedule_close(proc, conn);
            continue;
        }
        proc_response_sent(proc, conn);
    }
    proc->send_done = NULL;
}

/* ---- step 7: excess connections ------------------------------------------- */

/* Over max.connections: close one connection, the least recently active
 * (Kafka prefers one already closing; ours close within the turn). */
static void
proc_close_excess_connections(samsa_proc_t *proc)
{
    samsa_conn_t  *conn = proc->lru_head;

    if (conn == NULL || !samsa_connquota_over(&proc->ss->quota)) {
        return;
    }
    samsa_info("closing connection %s: over max.connections (%d)",
               conn->idstr, samsa_connquota_max_total(&proc->ss->quota));
    proc_lru_unlink(proc, conn);
    proc_conn_schedule_close(proc, conn);
    proc_process_disconnected(proc);
}

/* ---- the thread ------------------------------------------------------------ */

static bool
proc_should_exit(samsa_proc_t *proc)
{
    int  run = atomic_load_explicit(&proc->run, memory_order_acquire);

    if (run == SAMSA_PROC_STOPPING) {
        return true;
    }
    if (run == SAMSA_PROC_DRAINING) {
        return proc->inflight == 0
               || samsa_now_ns() > atomic_load_explicit(
                      &proc->drain_deadline_ns, memory_order_acquire);
    }
    return false;
}

static void
proc_close_all(samsa_proc_t *proc)
{
    samsa_newconn_t  *nc;
    samsa_resp_t     *resp, *next;
    size_t            i;

    for (i = 0; i < proc->nslots; i++) {
        if (proc->slots[i] != NULL && !proc->slots[i]->closing) {
            proc_conn_schedule_close(proc, proc->slots[i]);
        }
    }
    proc_process_disconnected(proc);
    while ((nc = samsa_queue_take(&proc->newconns, 0)) != NULL) {
        close(nc->fd);
        samsa_connquota_give(&proc->ss->quota, proc->listener,
                             nc->remote_ip);
        samsa_free(nc);
    }
    /* From here on responses for this thread are dropped as they come
     * (their connections are closed): a thread removed at run time is
     * never joined by the handlers that answer it. */
    resp = proc_resp_take(proc, true);
    for (; resp != NULL; resp = next) {
        next = resp->next;
        samsa_resp_free(resp);
    }
}

/* What only the thread used: its connection table.  (Its selector stays
 * until samsa_proc_fini: other threads may still wake it.) */
static void
proc_release(samsa_proc_t *proc)
{
    samsa_free(proc->slots);
    samsa_free(proc->gens);
    samsa_free(proc->free_slots);
    proc->slots = NULL;
    proc->gens = NULL;
    proc->free_slots = NULL;
    proc->nslots = proc->nfree = 0;
}

static void *
proc_main(void *arg)
{
    samsa_proc_t  *proc = arg;
    char           name[16];

    snprintf(name, sizeof(name), "network-%d-%u",
             samsa_sockserver_port(proc->ss, proc->listener),
             (unsigned) proc->id);
    samsa_thread_name_set(name);
    while (!proc_should_exit(proc)) {
        proc_configure_new_connections(proc);
        proc_process_new_responses(proc);
        proc_process_completed_sends(proc);
        proc_poll(proc);
        proc_process_completed_receives(proc);
        proc_process_completed_sends(proc);
        proc_process_disconnected(proc);
        proc_close_excess_connections(proc);
    }
    proc_close_all(proc);
    proc_release(proc);
    atomic_store_explicit(&proc->state, SAMSA_PROC_EXITED,
                          memory_order_release);
    return NULL;
}

/* ---- life and cross-thread entry points ------------------------------------ */

void
samsa_proc_init(samsa_proc_t *proc, samsa_sockserver_t *ss, uint16_t id,
                size_t listener)
{
    memset(proc, 0, sizeof(*proc));
    proc->id = id;
    proc->listener = listener;
    proc->ss = ss;
    samsa_assert(samsa_selector_init(&proc->sel) == SAMSA_ERR_NONE);
    samsa_queue_init(&proc->newconns, SAMSA_PROC_NEWCONN_QUEUE);
    pthread_mutex_init(&proc->resp_lock, NULL);
    atomic_init(&proc->run, SAMSA_PROC_RUNNING);
    atomic_init(&proc->state, SAMSA_PROC_LIVE);
    atomic_init(&proc->drain_deadline_ns, INT64_MAX);
}

void
samsa_proc_fini(samsa_proc_t *proc)
{
    samsa_resp_t  *resp, *next;

    for (resp = proc->resp_head; resp != NULL; resp = next) {
        next = resp->next;
        samsa_resp_free(resp);
    }
    samsa_queue_fini(&proc->newconns);
    pthread_mutex_destroy(&proc->resp_lock);
    proc_release(proc);
    samsa_selector_fini(&proc->sel);
}

samsa_err_t
samsa_proc_start(samsa_proc_t *proc)
{
    if (pthread_create(&proc->thread, NULL, proc_main, proc) != 0) {
        samsa_error("cannot start a network thread: %s", strerror(errno));
        return SAMSA_ERR__IO;
    }
    proc->started = true;
    return SAMSA_ERR_NONE;
}

void
samsa_proc_join(samsa_proc_t *proc)
{
    if (proc->started) {
        pthread_join(proc->thread, NULL);
        proc->started = false;
    }
}

void
samsa_proc_wakeup(samsa_proc_t *proc)
{
    samsa_selector_wakeup(&proc->sel);
}

bool
samsa_proc_accept(samsa_proc_t *proc, samsa_newconn_t *nc, bool may_block)
{
    if (samsa_queue_offer(&proc->newconns, nc)) {
        samsa_proc_wakeup(proc);
        return true;
    }
    if (!may_block) {
        return false;
    }
    samsa_queue_put(&proc->newconns, nc);
    samsa_proc_wakeup(proc);
    return true;
}

void
samsa_proc_enqueue_response(samsa_proc_t *proc, samsa_resp_t *resp)
{
    resp->next = NULL;
    pthread_mutex_lock(&proc->resp_lock);
    if (proc->retired) {
        pthread_mutex_unlock(&proc->resp_lock);
        samsa_resp_free(resp);
        return;
    }
    if (proc->resp_tail != NULL) {
        proc->resp_tail->next = resp;
    } else {
        proc->resp_head = resp;
    }
    proc->resp_tail = resp;
    proc->nresp++;
    pthread_mutex_unlock(&proc->resp_lock);
    samsa_proc_wakeup(proc);
}

void
samsa_proc_set_run(samsa_proc_t *proc, samsa_proc_run_t run,
                   int64_t deadline_ns)
{
    atomic_store_explicit(&proc->drain_deadline_ns, deadline_ns,
                          memory_order_release);
    atomic_store_explicit(&proc->run, run, memory_order_release);
    samsa_proc_wakeup(proc);
}

bool
samsa_proc_exited(samsa_proc_t *proc)
{
    return atomic_load_explicit(&proc->state, memory_order_acquire)
           == SAMSA_PROC_EXITED;
}
