/*
 * net/server/acceptor.c - an acceptor thread per listener (Kafka's Acceptor): its
 * own epoll over the listening socket, woken at least every 500 ms to see
 * whether it should stop.  Each accepted socket gets its connection-quota
 * slot, non-blocking mode, TCP_NODELAY, keep-alive and the send buffer size,
 * and goes to the next network thread round robin: offered to each without
 * blocking, waiting only on the last try.  It never touches a network
 * thread's epoll.  It also owns its listener's list of network threads
 * and applies num.network.threads changes to it (see below).
 * Threads: open/close on main; the loop on the acceptor thread;
 * samsa_acceptor_resize from any.
 */
#include "net/server/sockserver_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/diag.h"
#include "util/fsutil.h"
#include "util/time.h"

static samsa_err_t
acceptor_resolve(const samsa_netlistener_t *l, struct addrinfo **res,
                 char *errstr, size_t errstr_size)
{
    struct addrinfo  hints;
    char             port[16];
    int              rc;

    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    snprintf(port, sizeof(port), "%d", l->port);
    rc = getaddrinfo(l->host[0] != '\0' ? l->host : NULL, port, &hints, res);
    if (rc != 0) {
        snprintf(errstr, errstr_size, "listener %s: cannot resolve host '%s': %s",
                 l->name, l->host, gai_strerror(rc));
        return SAMSA_ERR__RESOLVE;
    }
    return SAMSA_ERR_NONE;
}

static int
acceptor_bound_port(int fd)
{
    struct sockaddr_storage  sa;
    socklen_t                len = sizeof(sa);

    if (getsockname(fd, (struct sockaddr *) &sa, &len) != 0) {
        return -1;
    }
    if (sa.ss_family == AF_INET6) {
        return ntohs(((struct sockaddr_in6 *) &sa)->sin6_port);
    }
    return ntohs(((struct sockaddr_in *) &sa)->sin_port);
}

/* Open and bind the listening socket (Kafka: SO_REUSEADDR, receive buffer
 * size set before bind, socket.listen.backlog.size). */
static samsa_err_t
acceptor_listen(samsa_acceptor_t *acc, const samsa_netlistener_t *l,
                char *errstr, size_t errstr_size)
{
    const samsa_sockserver_conf_t  *conf = &acc->ss->conf;
    struct addrinfo                *res = NULL, *ai;
    samsa_err_t                     err;
    int                             fd = -1, one = 1, rcvbuf, e = 0;

    err = acceptor_resolve(l, &res, errstr, errstr_size);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    /* Prefer IPv6 "any" (dual stack) when the host is empty. */
    for (ai = res; ai != NULL; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK
                                       | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            e = errno;
            continue;
        }
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        rcvbuf = conf->socket_receive_buffer_bytes;
        if (rcvbuf > 0) {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
        }
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0
            && listen(fd, conf->socket_listen_backlog_size) == 0) {
            break;
        }
        e = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        snprintf(errstr, errstr_size,
                 "listener %s: cannot listen on %s:%d: %s", l->name,
                 l->host[0] != '\0' ? l->host : "*", l->port, strerror(e));
        return SAMSA_ERR__IO;
    }
    acc->fd = fd;
    acc->port = acceptor_bound_port(fd);
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_acceptor_open(samsa_acceptor_t *acc, samsa_sockserver_t *ss,
                    size_t listener, char *errstr, size_t errstr_size)
{
    struct epoll_event  ev = { .events = EPOLLIN };
    samsa_err_t         err;

    memset(acc, 0, sizeof(*acc));
    acc->ss = ss;
    acc->listener = listener;
    acc->fd = -1;
    acc->epfd = -1;
    acc->wakefd = -1;
    atomic_init(&acc->running, true);
    err = acceptor_listen(acc, &ss->conf.listeners[listener], errstr,
                          errstr_size);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    acc->epfd = epoll_create1(EPOLL_CLOEXEC);
    samsa_assert(acc->epfd >= 0);
    ev.data.fd = acc->fd;
    samsa_assert(epoll_ctl(acc->epfd, EPOLL_CTL_ADD, acc->fd, &ev) == 0);
    acc->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    samsa_assert(acc->wakefd >= 0);
    ev.data.fd = acc->wakefd;
    samsa_assert(epoll_ctl(acc->epfd, EPOLL_CTL_ADD, acc->wakefd, &ev) == 0);
    return SAMSA_ERR_NONE;
}

static void
acceptor_configure(samsa_acceptor_t *acc, int fd)
{
    int  one = 1, sndbuf = acc->ss->conf.socket_send_buffer_bytes;

    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
    if (sndbuf > 0) {
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
    }
}

static void
acceptor_peer_ip(const struct sockaddr_storage *sa, char *out, size_t size)
{
    snprintf(out, size, "?");
    if (sa->ss_family == AF_INET) {
        inet_ntop(AF_INET, &((const struct sockaddr_in *) sa)->sin_addr, out,
                  (socklen_t) size);
    } else if (sa->ss_family == AF_INET6) {
        const struct sockaddr_in6  *in6 = (const struct sockaddr_in6 *) sa;

        if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
            inet_ntop(AF_INET, &in6->sin6_addr.s6_addr[12], out,
                      (socklen_t) size);
        } else {
            inet_ntop(AF_INET6, &in6->sin6_addr, out, (socklen_t) size);
        }
    }
}

/* Round robin: offer to each network thread, block only on the last. */
static void
acceptor_assign(samsa_acceptor_t *acc, samsa_newconn_t *nc)
{
    size_t         retries = acc->nprocs;
    samsa_proc_t  *proc;

    do {
        retries--;
        proc = acc->procs[acc->next_proc % acc->nprocs];
        acc->next_proc++;
    } while (!samsa_proc_accept(proc, nc, retries == 0));
}

/* ---- sockets refused by an ip connection_creation_rate quota ----------
 * Kafka keeps such a socket open for the throttle time and then closes
 * it, so a client that reconnects at once is held back too. */

static void
acceptor_close_later(samsa_acceptor_t *acc, int fd, int64_t delay_ms)
{
    acc->closing = samsa_realloc(acc->closing, (acc->nclosing + 1)
                                                   * sizeof(*acc->closing));
    acc->closing[acc->nclosing].fd = fd;
    acc->closing[acc->nclosing].close_ms = samsa_now_ms() + delay_ms;
    acc->nclosing++;
}

/* Close the sockets whose time came (all of them if all); return the ms
 * until the next one is due, at most SAMSA_ACCEPTOR_POLL_MS. */
static int
acceptor_close_due(samsa_acceptor_t *acc, bool all)
{
    int64_t  now = samsa_now_ms(), next = SAMSA_ACCEPTOR_POLL_MS;
    size_t   i = 0;

    while (i < acc->nclosing) {
        if (all || acc->closing[i].close_ms <= now) {
            close(acc->closing[i].fd);
            acc->closing[i] = acc->closing[--acc->nclosing];
        } else {
            if (acc->closing[i].close_ms - now < next) {
                next = acc->closing[i].close_ms - now;
            }
            i++;
        }
    }
    return (int) next;
}

static void
acceptor_accept_one(samsa_acceptor_t *acc)
{
    struct sockaddr_storage  sa;
    socklen_t                len = sizeof(sa);
    samsa_newconn_t         *nc;
    samsa_err_t              err;
    int64_t                  delay_ms;
    char                     ip[64];
    int                      fd;

    fd = accept4(acc->fd, (struct sockaddr *) &sa, &len,
                 SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            samsa_warn("accept on port %d failed: %s", acc->port,
                       strerror(errno));
            if (errno == EMFILE || errno == ENFILE) {
                usleep(100000);         /* let descriptors come back */
            }
        }
        return;
    }
    acceptor_peer_ip(&sa, ip, sizeof(ip));
    err = samsa_connquota_take(&acc->ss->quota, acc->listener, ip,
                               &acc->running,
                               SAMSA_ACCEPTOR_POLL_MS, &delay_ms);
    if (err == SAMSA_ERR__FULL && delay_ms > 0) {
        samsa_debug("Delaying closing of connection from %s for %" PRId64
                    " ms", ip, delay_ms);
        acceptor_close_later(acc, fd, delay_ms);
        return;
    }
    if (err != SAMSA_ERR_NONE) {
        if (err == SAMSA_ERR__FULL) {
            samsa_info("rejected connection from %s on port %d: "
                       "max.connections.per.ip reached", ip, acc->port);
        }
        close(fd);
        return;
    }
    acceptor_configure(acc, fd);
    nc = samsa_malloc(sizeof(*nc));
    nc->fd = fd;
    snprintf(nc->remote_ip, sizeof(nc->remote_ip), "%s", ip);
    acceptor_assign(acc, nc);
}

/* ---- run-time resizing (num.network.threads) ----------------------------
 * Only this thread changes its list, between two hand-overs, so a socket
 * is never given to a thread being removed; Kafka's Acceptor does the same
 * under its lock. */

static bool
acceptor_grow_one(samsa_acceptor_t *acc)
{
    samsa_proc_t  *proc = samsa_sockserver_proc_new(acc->ss, acc->listener);

    if (proc == NULL) {
        samsa_error("listener %s: cannot add a network thread: the %d "
                    "network thread ids of this server are used up",
                    acc->ss->conf.listeners[acc->listener].name,
                    SAMSA_SOCKSERVER_MAX_PROCS);
        return false;
    }
    if (samsa_proc_start(proc) != SAMSA_ERR_NONE) {
        /* never ran: counts as gone (its id stays unused) */
        atomic_store_explicit(&proc->state, SAMSA_PROC_EXITED,
                              memory_order_release);
        return false;
    }
    acc->procs = samsa_realloc(acc->procs,
                               (acc->nprocs + 1) * sizeof(*acc->procs));
    acc->procs[acc->nprocs++] = proc;
    return true;
}

/* Kafka removes a listener's last processors. */
static void
acceptor_remove_last(samsa_acceptor_t *acc)
{
    samsa_proc_t  *proc = acc->procs[--acc->nprocs];

    atomic_store_explicit(&proc->state, SAMSA_PROC_REMOVED,
                          memory_order_release);
    samsa_proc_set_run(proc, SAMSA_PROC_DRAINING,
                       samsa_now_ns()
                           + (int64_t) SAMSA_PROC_REMOVE_DRAIN_MS * 1000000);
    acc->removed = samsa_realloc(acc->removed,
                                 (acc->nremoved + 1) * sizeof(*acc->removed));
    acc->removed[acc->nremoved++] = proc;
}

/* Join the removed threads that have left (their task is gone already). */
static void
acceptor_reap(samsa_acceptor_t *acc)
{
    size_t  i = 0;

    while (i < acc->nremoved) {
        if (samsa_proc_exited(acc->removed[i])) {
            samsa_proc_join(acc->removed[i]);
            acc->removed[i] = acc->removed[--acc->nremoved];
        } else {
            i++;
        }
    }
}

static void
acceptor_apply_resize(samsa_acceptor_t *acc)
{
    size_t  want = (size_t) atomic_load_explicit(&acc->want,
                                                 memory_order_acquire);
    size_t  before = acc->nprocs;

    acceptor_reap(acc);
    if (want == before || want == 0) {
        return;
    }
    while (acc->nprocs < want && acceptor_grow_one(acc)) {
    }
    while (acc->nprocs > want) {
        acceptor_remove_last(acc);
    }
    acc->next_proc = 0;
    samsa_info("%s listener %s: num.network.threads %zu -> %zu",
               acc->ss->conf.kind,
               acc->ss->conf.listeners[acc->listener].name, before,
               acc->nprocs);
}

void
samsa_acceptor_resize(samsa_acceptor_t *acc, int32_t n)
{
    uint64_t  one = 1;

    atomic_store_explicit(&acc->want, n, memory_order_release);
    if (acc->wakefd >= 0 && write(acc->wakefd, &one, sizeof(one)) < 0) {
        /* the 500 ms poll notices the change anyway */
    }
}

static void *
acceptor_main(void *arg)
{
    samsa_acceptor_t    *acc = arg;
    struct epoll_event   ev;
    uint64_t             cnt;
    char                 name[16];
    int                  n, timeout;

    snprintf(name, sizeof(name), "acceptor-%d", acc->port);
    samsa_thread_name_set(name);
    while (atomic_load_explicit(&acc->running, memory_order_acquire)) {
        acceptor_apply_resize(acc);
        timeout = acceptor_close_due(acc, false);
        n = epoll_wait(acc->epfd, &ev, 1, timeout);
        if (n > 0 && ev.data.fd == acc->wakefd) {
            /* stop (the loop test exits) or resize (the loop top) */
            if (read(acc->wakefd, &cnt, sizeof(cnt)) < 0) {
                /* EAGAIN: another wake-up took it */
            }
            continue;
        }
        if (n > 0) {
            acceptor_accept_one(acc);
        } else if (n < 0 && errno != EINTR) {
            samsa_error("acceptor epoll_wait failed: %s", strerror(errno));
        }
    }
    (void) acceptor_close_due(acc, true);
    return NULL;
}

samsa_err_t
samsa_acceptor_start(samsa_acceptor_t *acc)
{
    if (pthread_create(&acc->thread, NULL, acceptor_main, acc) != 0) {
        samsa_error("cannot start the acceptor for port %d", acc->port);
        return SAMSA_ERR__IO;
    }
    acc->started = true;
    return SAMSA_ERR_NONE;
}

void
samsa_acceptor_stop(samsa_acceptor_t *acc)
{
    uint64_t  one = 1;

    atomic_store_explicit(&acc->running, false, memory_order_release);
    if (acc->wakefd >= 0 && write(acc->wakefd, &one, sizeof(one)) < 0) {
        /* the 500 ms poll notices the stop anyway */
    }
    if (acc->started) {
        pthread_join(acc->thread, NULL);
        acc->started = false;
    }
    samsa_acceptor_close(acc);
}

void
samsa_acceptor_close(samsa_acceptor_t *acc)
{
    samsa_close_fd(&acc->fd);
    samsa_close_fd(&acc->epfd);
    samsa_close_fd(&acc->wakefd);
}
