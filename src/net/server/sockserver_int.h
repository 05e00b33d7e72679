/*
 * net/server/sockserver_int.h - the socket server's parts as its own modules see
 * them (acceptor.c, proc.c, reqchan.c, hpool.c, sockserver.c).  Each struct
 * names its owning thread; shared fields name their guard.
 */
#ifndef SAMSA_NET_SERVER_SOCKSERVER_INT_H
#define SAMSA_NET_SERVER_SOCKSERVER_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "net/conn.h"
#include "net/server/connquota.h"
#include "net/mempool.h"
#include "net/server/reqchan.h"
#include "net/selector.h"
#include "net/server/sockserver.h"
#include "util/queue.h"

#define SAMSA_PROC_NEWCONN_QUEUE   20   /* Kafka's CONNECTION_QUEUE_SIZE */
#define SAMSA_PROC_NEWCONN_PER_TURN 20
#define SAMSA_PROC_POLL_MS         300
#define SAMSA_PROC_RECV_STALL_MS   30000   /* see proc_close_stalled() */
/* A TLS handshake must end within this long (or connections.max.idle.ms
 * if that is shorter), counted from the accept: a client that never sends
 * its ClientHello, or trickles it, is closed. */
#define SAMSA_PROC_TLS_HANDSHAKE_MS 10000
#define SAMSA_ACCEPTOR_POLL_MS     500
#define SAMSA_HANDLER_POLL_MS      300
/* A network thread removed at run time stops reading requests, writes the
 * answers of those in flight for up to this long, then closes its
 * connections (their clients reconnect to the remaining threads). */
#define SAMSA_PROC_REMOVE_DRAIN_MS 10000

typedef struct samsa_proc samsa_proc_t;

struct samsa_reqchan {
    samsa_queue_t            requests;  /* queued.max.requests */
    /* Every network thread by id, SAMSA_SOCKSERVER_MAX_PROCS entries:
     * an entry is set once (under the server's ids_lock, release) before
     * nprocs counts it, and stays until the server is freed, so any
     * thread may read entries below nprocs without a lock. */
    samsa_proc_t *_Atomic   *procs;     /* [const] array */
    _Atomic size_t           nprocs;    /* [atomic] ids used so far */
    samsa_mempool_t         *pool;      /* [const] */
};

/* A socket accepted and waiting for its network thread. */
typedef struct samsa_newconn {
    int   fd;
    char  remote_ip[64];
} samsa_newconn_t;

typedef enum samsa_proc_run {
    SAMSA_PROC_RUNNING = 0,
    SAMSA_PROC_DRAINING,            /* no new requests; finish in-flight */
    SAMSA_PROC_STOPPING,            /* close everything and exit */
} samsa_proc_run_t;

/* Where a network thread stands: LIVE in its acceptor's list; REMOVED
 * (by its acceptor: taken out of the list, told to drain); EXITED (set by
 * the thread as it leaves: connections closed, responses dropped from
 * then on). */
typedef enum samsa_proc_state {
    SAMSA_PROC_LIVE = 0,
    SAMSA_PROC_REMOVED,
    SAMSA_PROC_EXITED,
} samsa_proc_state_t;

/* One network thread.  Owned by the socket server (freed with it, even
 * after the thread left); the thread itself owns everything not marked
 * otherwise. */
struct samsa_proc {
    uint16_t                    id;         /* [const] per socket server */
    size_t                      listener;   /* [const] index */
    samsa_sockserver_t         *ss;         /* [const] */
    pthread_t                   thread;     /* [starter] the acceptor for */
    bool                        started;    /* a thread added at run time,
                                               else main */
    _Atomic int                 state;      /* [atomic] samsa_proc_state_t */
    bool                        retired;    /* [resp_lock] thread gone:
                                               responses are dropped */
    samsa_selector_t            sel;        /* [const] epoll set; its
                                               wake-up: any thread */
    samsa_queue_t               newconns;   /* [thread-safe] from acceptor */
    pthread_mutex_t             resp_lock;  /* guards retired, resp_*,
                                               nresp */
    samsa_resp_t               *resp_head;  /* [resp_lock] */
    samsa_resp_t               *resp_tail;  /* [resp_lock] */
    _Atomic int                 run;        /* [atomic] samsa_proc_run_t */
    _Atomic int64_t             drain_deadline_ns;  /* [atomic] */
    size_t                      nresp;      /* [resp_lock] queued responses */
    /* Metrics: written by the network thread alone (relaxed load + store),
     * read by the metrics thread. */
    _Atomic uint64_t            stat_idle_ns;       /* in epoll_wait */
    _Atomic int64_t             stat_conns;         /* open now */
    _Atomic uint64_t            stat_conns_created; /* adopted */
    _Atomic int64_t             stat_mem_muted;     /* nmem_muted */
    _Atomic uint64_t            stat_mem_mutes;     /* mutes for memory */
    _Atomic uint64_t            stat_auth_ok;       /* SASL successes */
    _Atomic uint64_t            stat_auth_failed;   /* SASL failures */
    /* network thread only: */
    samsa_conn_t              **slots;
    uint32_t                   *gens;
    size_t                      nslots;
    uint32_t                   *free_slots;
    size_t                      nfree;
    size_t                      nconns;
    uint64_t                    conn_seq;
    samsa_conn_t               *lru_head;   /* least recently active */
    samsa_conn_t               *lru_tail;
    samsa_conn_t               *thr_head;   /* throttled, soonest end
                                               first */
    samsa_conn_t               *recv_done;  /* this turn's receives */
    samsa_conn_t               *send_done;  /* this turn's sends */
    samsa_conn_t               *dis_done;   /* this turn's closes */
    size_t                      nmem_muted; /* muted for memory */
    int64_t                     stall_check_ns; /* last stalled-receive
                                                   sweep */
    size_t                      inflight;   /* requests put, not finished */
    samsa_conn_t               *read_pending; /* connections holding
                                                 bytes epoll will not
                                                 announce: decrypted TLS
                                                 bytes, or a plain socket
                                                 unmuted after its edge
                                                 (next_pending) */
    size_t                      nhandshaking; /* TLS handshakes under way */
    size_t                      nauthenticating; /* SASL exchanges under
                                                    way */
    int64_t                     hs_check_ns;  /* last handshake sweep */
};

/* One acceptor thread per listener.  It owns its listener's list of
 * network threads: it alone adds threads to it and removes them
 * (num.network.threads at run time: set_network_threads stores `want`
 * and wakes it), so a socket is never handed to a thread that is being
 * removed. */
typedef struct samsa_acceptor {
    samsa_sockserver_t  *ss;            /* [const] */
    size_t               listener;      /* [const] index */
    int                  fd;            /* [const] listening socket */
    int                  epfd;          /* [const] */
    int                  wakefd;        /* [const] eventfd: stop now */
    int                  port;          /* [const] bound port */
    pthread_t            thread;
    bool                 started;
    _Atomic bool         running;       /* [atomic] cleared to stop */
    size_t               next_proc;     /* acceptor thread: round robin */
    _Atomic int32_t      want;          /* [atomic] threads wanted */
    /* acceptor thread (main before start): */
    samsa_proc_t       **procs;         /* this listener's live threads */
    size_t               nprocs;
    samsa_proc_t       **removed;       /* removed, not yet joined */
    size_t               nremoved;
    /* acceptor thread: sockets refused by an ip connection_creation_rate
     * quota, closed when their throttle time ends (Kafka's
     * DelayedCloseSocket) */
    struct samsa_delayed_close {
        int      fd;
        int64_t  close_ms;              /* samsa_now_ms() */
    }                   *closing;
    size_t               nclosing;
} samsa_acceptor_t;

/* The most handler threads a pool may have (num.io.threads at start is
 * not limited; a run-time change is: meta/brokercfg.c refuses more). */
#define SAMSA_HPOOL_MAX_THREADS  4096

/* Where a handler slot stands.  RUNNING <-> STOPPING under the pool lock;
 * STOPPING -> EXITED by the thread itself (CAS, so a resize that revives
 * a stopping handler and the handler leaving cannot both win). */
typedef enum samsa_hslot_state {
    SAMSA_HSLOT_IDLE = 0,       /* no thread */
    SAMSA_HSLOT_RUNNING,
    SAMSA_HSLOT_STOPPING,       /* finish the request in hand, then exit */
    SAMSA_HSLOT_EXITED,         /* left its loop; still to be joined */
} samsa_hslot_state_t;

/* One handler thread slot (handler-<index>), on cache lines of its own.
 * Allocated on first use, freed with the pool. */
typedef struct samsa_hslot {
    _Alignas(64) _Atomic uint64_t  idle_ns;   /* written by its thread alone
                                                 (relaxed load + store), read
                                                 by the metrics thread */
    _Atomic int                    state;     /* samsa_hslot_state_t */
    pthread_t                      thread;    /* [pool lock] */
    bool                           joinable;  /* [pool lock] */
} samsa_hslot_t;

typedef struct samsa_hpool {
    samsa_sockserver_t       *ss;           /* [const] */
    pthread_mutex_t           lock;         /* resize vs stop */
    samsa_hslot_t *_Atomic   *slots;        /* [const] array; entries set
                                               under lock, read by any */
    size_t                    cap;          /* [const] */
    _Atomic size_t            nthreads;     /* [atomic] handlers wanted */
    _Atomic size_t            nslots;       /* [atomic] slots ever used */
    bool                      stopped;      /* [lock] */
    int64_t                   test_delay_ms;     /* [const] test-only hook */
    int                       test_delay_api;    /* [const] -1 = every API */
} samsa_hpool_t;

struct samsa_sockserver {
    samsa_sockserver_conf_t   conf;         /* [const] */
    samsa_reqchan_t           chan;
    samsa_mempool_t           pool;
    samsa_connquota_t         quota;
    samsa_acceptor_t         *acceptors;    /* one per listener */
    pthread_mutex_t           ids_lock;     /* network thread ids: adding
                                               to chan.procs */
    samsa_hpool_t             hpool;
    pthread_mutex_t           tls_lock;     /* guards tls */
    samsa_tls_ctx_t         **tls;          /* [tls_lock] per listener: a
                                               reference to the context
                                               new connections get (NULL:
                                               plaintext); replaced at run
                                               time by
                                               samsa_sockserver_set_tls */
};

/* sockserver.c: a new network thread for listener, with the next id
 * (not started); NULL when the ids are used up.  @thread any
 * @locks ids_lock */
samsa_proc_t *samsa_sockserver_proc_new(samsa_sockserver_t *ss,
                                        size_t listener);

/* proc.c */
void samsa_proc_init(samsa_proc_t *proc, samsa_sockserver_t *ss, uint16_t id,
                     size_t listener);
void samsa_proc_fini(samsa_proc_t *proc);
SAMSA_MUST_CHECK samsa_err_t samsa_proc_start(samsa_proc_t *proc);
void samsa_proc_join(samsa_proc_t *proc);
/* @thread acceptor: offer (or, if may_block, put) a new socket. */
bool samsa_proc_accept(samsa_proc_t *proc, samsa_newconn_t *nc,
                       bool may_block);
/* @thread any */
void samsa_proc_enqueue_response(samsa_proc_t *proc, samsa_resp_t *resp);
void samsa_proc_wakeup(samsa_proc_t *proc);
void samsa_proc_set_run(samsa_proc_t *proc, samsa_proc_run_t run,
                        int64_t deadline_ns);
/* Has the thread left (connections closed)?  @thread any */
bool samsa_proc_exited(samsa_proc_t *proc);

/* acceptor.c */
SAMSA_MUST_CHECK samsa_err_t samsa_acceptor_open(samsa_acceptor_t *acc,
                                                 samsa_sockserver_t *ss,
                                                 size_t listener,
                                                 char *errstr,
                                                 size_t errstr_size);
SAMSA_MUST_CHECK samsa_err_t samsa_acceptor_start(samsa_acceptor_t *acc);
void samsa_acceptor_stop(samsa_acceptor_t *acc);      /* and join */
/* Ask the acceptor for n network threads (see
 * samsa_sockserver_set_network_threads).  @thread any */
void samsa_acceptor_resize(samsa_acceptor_t *acc, int32_t n);
void samsa_acceptor_close(samsa_acceptor_t *acc);

/* reqchan.c */
void samsa_reqchan_init(samsa_reqchan_t *chan, int32_t queued_max_requests,
                        samsa_mempool_t *pool);
void samsa_reqchan_fini(samsa_reqchan_t *chan);
void samsa_reqchan_put(samsa_reqchan_t *chan, samsa_req_t *req);
/* Network thread id, live or retired; NULL past the ids used.
 * @thread any */
samsa_proc_t *samsa_reqchan_proc(samsa_reqchan_t *chan, size_t id);
samsa_req_t *samsa_reqchan_take(samsa_reqchan_t *chan, int64_t timeout_ms);
/* Bytes went back to the pool and it was exhausted: wake every network
 * thread so that connections muted for memory resume. */
void samsa_reqchan_pool_returned(samsa_reqchan_t *chan);

/* hpool.c */
void samsa_hpool_init(samsa_hpool_t *hp, samsa_sockserver_t *ss);
SAMSA_MUST_CHECK samsa_err_t samsa_hpool_start(samsa_hpool_t *hp);
/* Grow or shrink to n handlers (handler-<i> for i < n): a removed
 * handler finishes the request it holds, then exits; it is joined when its
 * slot is reused or the pool stops.  Never waits for a handler.
 * @thread any but a handler  @locks pool lock */
SAMSA_MUST_CHECK samsa_err_t samsa_hpool_resize(samsa_hpool_t *hp, size_t n);
void samsa_hpool_stop(samsa_hpool_t *hp);    /* and join; idempotent */
void samsa_hpool_fini(samsa_hpool_t *hp);

#endif /* SAMSA_NET_SERVER_SOCKSERVER_INT_H */
