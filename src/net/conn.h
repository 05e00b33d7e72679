/*
 * net/conn.h - one client connection as its network thread sees it:
 * the socket, the size-prefixed receive in progress, the response being
 * written, the mute state, and its place in the idle (LRU) list.
 * Threads: created, used and freed only on the network thread that adopted
 * the socket; other threads name it by samsa_conn_id_t, never by pointer.
 * Ownership: the processor's connection table owns every samsa_conn_t.
 */
#ifndef SAMSA_NET_CONN_H
#define SAMSA_NET_CONN_H

#include <stdbool.h>
#include <stdint.h>

#include <samsa/errors.h>

#include "net/conn_id.h"
#include "net/mempool.h"
#include "net/mute.h"
#include "net/sasl.h"
#include "net/send.h"
#include "net/tls.h"

/* One connection's link in an intrusive doubly linked list of them. */
typedef struct samsa_conn_link {
    struct samsa_conn   *prev;
    struct samsa_conn   *next;
} samsa_conn_link_t;

typedef struct samsa_conn {
    int                  fd;
    samsa_conn_id_t      id;
    samsa_tls_t         *tls;           /* NULL: plaintext; else owned,
                                           every byte goes through it */
    char                 idstr[192];    /* local:port-remote:port-proc-seq */
    char                 remote_ip[64];
    char                 principal[256]; /* Kafka's KafkaPrincipal string,
                                           "User:ANONYMOUS" until SASL or
                                           a client certificate names
                                           someone (issue 21) */
    samsa_mute_state_t   mute;
    uint32_t             events;        /* selector interest now
                                           (SAMSA_SELECTOR_F_*): registered
                                           with epoll, or, on an edge
                                           connection, kept here only */
    bool                 edge;          /* plaintext: registered once for
                                           READ and WRITE edge-triggered;
                                           mute and unmute cost no
                                           epoll_ctl */
    bool                 readable;      /* edge: bytes may wait in the
                                           socket (an edge came, and no
                                           read since came back short or
                                           EAGAIN) */
    bool                 mem_muted;     /* muted while the pool is empty */
    bool                 closing;       /* close requested, not yet done */
    bool                 sniffed;       /* handoff_match said Kafka */
    bool                 handed_off;    /* the fd went to handoff_take */
    bool                 recv_complete; /* a whole request awaits handling */
    /* receive in progress */
    uint8_t              size_buf[4];
    uint32_t             size_got;
    uint8_t              next_size_buf[4]; /* edge: the next request's
                                           size prefix, read with the
                                           last bytes of this one */
    uint32_t             next_size_got;
    int32_t              size;
    uint8_t             *payload;       /* size bytes (address space: pages
                                           are touched as bytes arrive) */
    int32_t              payload_got;
    int32_t              charged;       /* bytes of it charged to the pool
                                           (payload_got <= charged <= size) */
    int64_t              recv_start_ns; /* when its first charge was taken */
    int64_t              recv_done_ns;
    int64_t              net_ns;        /* time this thread spent reading
                                           and writing it since its last
                                           response was sent (Kafka's
                                           KafkaChannel network thread
                                           time, for the request quota) */
    bool                 net_timed;     /* measure net_ns: the last response
                                           was of a request under a request
                                           quota (no clock reads otherwise) */
    /* response being written */
    samsa_send_t        *sending;
    size_t               send_off;      /* frame bytes written */
    size_t               send_region;   /* next region to send */
    int64_t              region_off;    /* bytes of it already sent */
    /* clientInformation (KIP-511), from ApiVersions v3+ */
    char                 sw_name[64];
    char                 sw_version[64];
    /* idle list, least recently active first */
    int64_t              active_ns;
    samsa_conn_link_t    lru;
    /* Throttled by a client quota (MUTED_AND_THROTTLED*): in the
     * processor's throttle list, by deadline, until throttle_end_ns. */
    int64_t              throttle_end_ns;
    samsa_conn_link_t    thr;
    bool                 throttled;
    /* membership in the processor's per-turn lists */
    struct samsa_conn   *next_recv;     /* completed receives */
    struct samsa_conn   *next_send;     /* completed sends */
    struct samsa_conn   *next_dis;      /* to close at the turn's step 6 */
    /* bytes wait while epoll has nothing to say: decrypted TLS bytes,
     * or an edge socket's, unmuted (the processor's list of them); and the
     * TLS handshake's deadline */
    struct samsa_conn   *next_pending;
    bool                 read_queued;
    int64_t              tls_deadline_ns;
    /* SASL listeners: the authentication's state (owned; NULL on other
     * listeners), its deadline (from the accept, as the TLS handshake's),
     * and whether to close once the response being written is out (a
     * failed authentication, as Kafka's authenticationFailureSend) */
    samsa_sasl_t        *sasl;
    int64_t              auth_deadline_ns;
    bool                 authenticating;
    bool                 close_after_send;
} samsa_conn_t;

/* Read toward one complete request (size prefix, then exactly that many
 * bytes; on an edge connection the last read also asks for the next
 * request's 4-byte size prefix, so that a read that comes back short
 * tells the socket is empty without a read that says EAGAIN).
 * Returns NONE (check conn->recv_complete), _CLOSED at EOF, _IO on a socket
 * error, _BAD_MSG if the size is negative or above max_size, _FULL if the
 * memory pool is exhausted (the caller mutes the connection).
 * The pool is charged as the bytes arrive (64 KiB at a time; a smaller
 * request whole), not the whole announced size up front as Kafka's
 * processor does:
 * a client that announces a large request and trickles it (slowloris) holds
 * only what it sent, so it cannot starve the others of the pool. */
SAMSA_MUST_CHECK samsa_err_t samsa_conn_read(samsa_conn_t *conn,
                                             int32_t max_size,
                                             samsa_mempool_t *pool);

/* Take the completed receive's payload (ownership to the caller) and reset
 * the receive state. */
uint8_t *samsa_conn_take_payload(samsa_conn_t *conn, int32_t *size);

/* Write as much of conn->sending as the socket takes.  NONE with *done set
 * when all of it went out; _IO/_CLOSED on error. */
SAMSA_MUST_CHECK samsa_err_t samsa_conn_write(samsa_conn_t *conn, bool *done);

#endif /* SAMSA_NET_CONN_H */
