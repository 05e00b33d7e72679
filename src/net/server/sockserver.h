/*
 * net/server/sockserver.h - one socket server (Kafka's SocketServer plus its
 * request-handler pool): an acceptor thread per listener, num.network.threads
 * network threads per listener, one bounded request queue, and a pool of
 * num.io.threads handler threads.  A combined broker+controller process runs
 * two: the broker's and the controller's, as Kafka does.
 *
 * The server knows nothing of Kafka APIs beyond the request header: the
 * owner supplies a gate (is this API and version served here?), a handler
 * (run on a handler thread for each request) and a completion hook (run on
 * the network thread when a request's response was written: the request
 * log).
 * Threads: open/start/stop/free from the main thread only; the resizes
 * and the metrics readers from any.
 */
#ifndef SAMSA_NET_SERVER_SOCKSERVER_H
#define SAMSA_NET_SERVER_SOCKSERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>

#include "net/server/connquota.h"
#include "net/server/req.h"
#include "net/sasl.h"
#include "net/tls.h"

typedef struct samsa_sockserver samsa_sockserver_t;

/* Network thread ids per socket server (conn ids carry them as uint16).
 * Ids are never reused, as Kafka's nextProcessorId: a late response for
 * a removed thread finds it retired and is dropped. */
#define SAMSA_SOCKSERVER_MAX_PROCS 65535

typedef struct samsa_netlistener {
    const char  *name;                  /* "PLAINTEXT" */
    const char  *host;                  /* "" = every interface */
    int          port;                  /* 0 = pick one */
    const char  *security_protocol;     /* "PLAINTEXT", "SSL" */
    samsa_tls_ctx_t *tls;               /* SSL (and the TLS half of
                                           SASL_SSL): every connection does
                                           a TLS handshake first; NULL:
                                           plaintext.  Borrowed: outlives
                                           the server */
    const samsa_sasl_conf_t *sasl;      /* SASL_PLAINTEXT, SASL_SSL: every
                                           connection authenticates
                                           before its requests reach the
                                           handlers (net/sasl.h); NULL:
                                           none.  Borrowed: outlives the
                                           server */
} samsa_netlistener_t;

typedef enum samsa_api_gate {
    SAMSA_API_GATE_OK = 0,
    SAMSA_API_GATE_UNKNOWN_API,
    SAMSA_API_GATE_UNSUPPORTED_VERSION,
} samsa_api_gate_t;

/* Is (key, version) served?  Called on network threads: must not block. */
typedef samsa_api_gate_t (*samsa_api_gate_fn)(void *ctx, int16_t key,
                                              int16_t version);
/* Handle req on a handler thread; must end with exactly one
 * samsa_reqchan_respond() for it (now, or later from another thread). */
typedef void (*samsa_req_handle_fn)(void *ctx, samsa_req_t *req);
/* req's response was sent: ns is the time the network thread spent on
 * its connection since the previous one was (reading it, writing the
 * answer).  Called on the network thread for requests whose handler time
 * went to a request-time quota (req->request_quota_net); must not block
 * for long. */
typedef void (*samsa_req_net_time_fn)(void *ctx, const samsa_req_t *req,
                                      int64_t ns);
/* req's response was written (or dropped): req->end_ns is set.  Called on
 * the network thread; must not block for long. */
typedef void (*samsa_req_done_fn)(void *ctx, const samsa_req_t *req);

typedef struct samsa_sockserver_conf {
    const char                        *kind;    /* "broker" / "controller" */
    const samsa_netlistener_t         *listeners;
    size_t                             nlisteners;
    int32_t                            num_network_threads;
    int32_t                            num_io_threads;
    int32_t                            queued_max_requests;
    int64_t                            queued_max_request_bytes;
    int32_t                            socket_request_max_bytes;
    int32_t                            socket_send_buffer_bytes;    /* -1 */
    int32_t                            socket_receive_buffer_bytes; /* -1 */
    int32_t                            socket_listen_backlog_size;
    int64_t                            connections_max_idle_ms;
    int32_t                            max_connections;
    int32_t                            max_connections_per_ip;
    const samsa_connquota_override_t  *overrides;
    size_t                             noverrides;
    int32_t                            max_connection_creation_rate;
    const int32_t                     *listener_max_connections;
    const int32_t                     *listener_max_connection_creation_rate;
                                        /* listener.name.<l>.*, one per
                                           listener; NULL: no limit */
    int32_t                            quota_window_num;   /* rates' */
    int64_t                            quota_window_ms;
    samsa_connquota_ip_rate_fn         ip_rate;   /* NULL: no ip quotas */
    void                              *ip_rate_ctx;
    samsa_api_gate_fn                  gate;
    samsa_req_handle_fn                handle;
    samsa_req_net_time_fn              net_time; /* may be NULL */
    void                              *ctx;     /* for gate, handle,
                                                   respond and net_time */
    samsa_req_done_fn                  done;    /* may be NULL */
    void                              *done_ctx;
    /* Another protocol sharing these listeners (the metadata quorum's on
     * the CONTROLLER listeners; NULL: Kafka only).  Before a connection's
     * first Kafka read its network thread peeks (MSG_PEEK) at up to
     * SAMSA_SOCKSERVER_HANDOFF_LEN bytes: while handoff_match says they
     * may start the other protocol and fewer have come, it waits; once
     * that many match, the connection leaves the server (its quota is
     * released, the fd is not closed) and handoff_take owns the fd.
     * Both run on network threads and must not block. */
    bool                             (*handoff_match)(void *ctx,
                                                      const uint8_t *buf,
                                                      size_t len);
    void                             (*handoff_take)(void *ctx, int fd);
    void                              *handoff_ctx;
} samsa_sockserver_conf_t;

#define SAMSA_SOCKSERVER_HANDOFF_LEN  8

/* Bind every listener (so a taken port fails here, naming it) and build the
 * threads' state; nothing runs yet.  conf's strings must outlive the
 * server. */
SAMSA_MUST_CHECK samsa_err_t samsa_sockserver_open(
    samsa_sockserver_t **out, const samsa_sockserver_conf_t *conf,
    char *errstr, size_t errstr_size);

/* The port listener i is bound to (useful with port 0). */
int samsa_sockserver_port(const samsa_sockserver_t *ss, size_t i);

/* ---- metrics (read by the metrics thread while the server runs; valid
 * from open until free) ---------------------------------------------- */

typedef struct samsa_netstats_proc {
    uint16_t     id;                    /* network thread id */
    const char  *listener;              /* its listener's name */
    uint64_t     idle_ns;               /* spent waiting in epoll_wait */
    size_t       response_queue_size;   /* responses not yet taken */
    int64_t      connections;           /* open now */
    uint64_t     connections_created;   /* adopted since start */
    int64_t      mem_muted;             /* connections muted for memory
                                           (queued.max.request.bytes) now */
    uint64_t     mem_mutes;             /* times one was, since start */
    uint64_t     auth_ok;               /* SASL authentications that
                                           succeeded, since start */
    uint64_t     auth_failed;           /* and failed (wrong password,
                                           bad mechanism, out of time) */
} samsa_netstats_proc_t;

/* Network threads now (num.network.threads times the listeners, as last
 * applied by the acceptors). */
size_t samsa_sockserver_nprocs(const samsa_sockserver_t *ss);
/* Network thread ids ever used (>= nprocs after threads were removed):
 * ids are 0 .. proc_ids-1 and never reused. */
size_t samsa_sockserver_proc_ids(const samsa_sockserver_t *ss);
/* Network thread id's stats; true while it is live.  A removed thread's
 * totals stay as they were (sums over every id stay monotonic); its
 * per-thread series should no longer be shown.
 * @thread any  @locks the processor's response-queue lock taken */
bool samsa_sockserver_proc_stats(samsa_sockserver_t *ss, size_t id,
                                 samsa_netstats_proc_t *out);
/* Handlers now (num.io.threads as last applied). */
size_t samsa_sockserver_nhandlers(const samsa_sockserver_t *ss);
/* Handler slots ever used (>= nhandlers after a pool shrank): summing
 * the idle time of all of them keeps the sum monotonic across resizes. */
size_t samsa_sockserver_handler_slots(const samsa_sockserver_t *ss);
/* Time handler i (i < handler_slots) spent waiting for a request; a
 * removed handler's total stays as it was.  @thread any */
uint64_t samsa_sockserver_handler_idle_ns(const samsa_sockserver_t *ss,
                                          size_t i);
/* Requests waiting for a handler (Kafka's RequestQueueSize), and the
 * most that ever waited at once since open (<= queued.max.requests). */
size_t samsa_sockserver_request_queue_size(samsa_sockserver_t *ss);
size_t samsa_sockserver_request_queue_max_size(samsa_sockserver_t *ss);
/* The request memory pool (queued.max.request.bytes; Kafka's
 * MemoryPoolAvailable and MemoryPoolUsed): its capacity (<= 0:
 * unlimited), bytes taken now and the most taken at once since open. */
void samsa_sockserver_memory_pool(samsa_sockserver_t *ss, int64_t *capacity,
                                  int64_t *used, int64_t *max_used);
size_t samsa_sockserver_nlisteners(const samsa_sockserver_t *ss);
/* Connections whose accept waited for max.connection.creation.rate, and
 * connections closed over their IP's connection_creation_rate quota,
 * since start.  @thread any */
void samsa_sockserver_conn_throttles(samsa_sockserver_t *ss,
                                     uint64_t *rate_waits,
                                     uint64_t *ip_throttled);
const char *samsa_sockserver_listener_name(const samsa_sockserver_t *ss,
                                           size_t i);
/* Listener i's accept throttle time (ms, summed) and throttled accepts
 * (net/server/connquota.h), since start.  @thread any */
void samsa_sockserver_accept_throttles(samsa_sockserver_t *ss, size_t i,
                                       uint64_t *throttle_ms,
                                       uint64_t *throttles);

/* Start the handlers, then the network threads, then the acceptors. */
SAMSA_MUST_CHECK samsa_err_t samsa_sockserver_start(samsa_sockserver_t *ss);

/* Resize the handler pool to n threads at run time (num.io.threads,
 * Kafka's resizeThreadPool): a removed handler finishes its request and
 * exits; none is waited for.  Ignored once the handlers stopped.
 * @thread any but a handler of this server */
SAMSA_MUST_CHECK samsa_err_t samsa_sockserver_set_io_threads(
    samsa_sockserver_t *ss, int32_t n);

/* Change the connection limits at run time (Kafka's
 * DynamicConnectionQuota and ListenerConnectionQuota): max.connections,
 * max.connections.per.ip and its overrides (copied),
 * max.connection.creation.rate, and per listener (one value each, in the
 * order of conf.listeners) its own max.connections and creation rate
 * (INT32_MAX: none).  @thread any */
void samsa_sockserver_set_conn_limits(
    samsa_sockserver_t *ss, int32_t max_connections,
    int32_t max_connections_per_ip,
    const samsa_connquota_override_t *overrides, size_t noverrides,
    int32_t max_connection_creation_rate, const int32_t *listener_max,
    const int32_t *listener_rate);

/* Replace listener i's TLS context at run time (a dynamic key store
 * update, Kafka's SslFactory.reconfigure): connections accepted from now
 * on handshake with ctx (a reference is taken); those already open keep
 * theirs.  False when listener i is not a TLS listener (nothing changes).
 * @thread any */
bool samsa_sockserver_set_tls(samsa_sockserver_t *ss, size_t i,
                              samsa_tls_ctx_t *ctx);

/* A reference to the TLS context listener i's new connections get now
 * (samsa_tls_ctx_unref it); NULL on a plaintext listener.  @thread any */
samsa_tls_ctx_t *samsa_sockserver_tls(samsa_sockserver_t *ss, size_t i);

/* Set every listener's network threads to n at run time
 * (num.network.threads, Kafka's DataPlaneAcceptor.reconfigure): each
 * acceptor, woken, adds threads (new connections go round robin onto all
 * of them) or removes its last ones: a removed thread takes no new
 * connection, stops reading requests, writes the answers of those in
 * flight (up to 10 s), closes its connections (clients reconnect to the
 * others) and exits; the acceptor joins it.  Returns at once.
 * @thread any */
SAMSA_MUST_CHECK samsa_err_t samsa_sockserver_set_network_threads(
    samsa_sockserver_t *ss, int32_t n);

/* Shutdown, in three steps so that a process with two servers can do each
 * step for both: stop accepting (acceptors exit, listening sockets close);
 * drain (network threads stop reading requests, write the responses of
 * those in flight for up to timeout_ms, then close every connection and
 * exit); stop the handlers. */
void samsa_sockserver_stop_accepting(samsa_sockserver_t *ss);
void samsa_sockserver_drain(samsa_sockserver_t *ss, int64_t timeout_ms);
void samsa_sockserver_stop_handlers(samsa_sockserver_t *ss);

void samsa_sockserver_free(samsa_sockserver_t *ss);

#endif /* SAMSA_NET_SERVER_SOCKSERVER_H */
