/*
 * net/server/req.h - one request on its way through the broker, and its response.
 *
 * Life: a network thread builds the samsa_req_t when a receive completes
 * and puts it on the request channel; from then on it belongs to the
 * handler that takes it, then to whoever completes it (a handler, later the
 * purgatory).  Completing it means creating exactly one samsa_resp_t for it
 * (send, no-op or close) and passing that to samsa_reqchan_respond(): the
 * response owns the request from then on and travels back to the network
 * thread that read it, which writes it, logs it and frees both.  After
 * respond, the completing thread touches neither.
 */
#ifndef SAMSA_NET_SERVER_REQ_H
#define SAMSA_NET_SERVER_REQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/conn_id.h"
#include "net/send.h"
#include "proto/rd.h"
#include "proto/reqhdr.h"
#include "proto/wr.h"
#include "util/arena.h"
#include "util/buf.h"

typedef struct samsa_reqchan samsa_reqchan_t;

/* Something the response borrows from until it is encoded (an image whose
 * strings and arrays its fields point into): released with the arena. */
typedef struct samsa_req_hold {
    struct samsa_req_hold  *next;
    void                  (*release)(void *obj);
    void                   *obj;
} samsa_req_hold_t;

typedef struct samsa_req {
    samsa_reqchan_t  *chan;             /* [const] where the answer goes */
    samsa_conn_id_t   conn_id;          /* names the connection */
    samsa_reqhdr_t    hdr;              /* ClientId points into client_id */
    char             *client_id;        /* NUL-terminated copy, or NULL */
    char              connection[192];  /* Kafka's connection id string */
    const char       *listener;         /* [const] listener name */
    const char       *security_protocol; /* [const] */
    char              principal[256];   /* [const] the connection's
                                           principal at arrival
                                           ("User:ANONYMOUS", "User:alice") */
    char              client_host[64];  /* [const] the client's address,
                                           for ACL host matching */
    char              sw_name[64];      /* clientInformation at arrival */
    char              sw_version[64];
    uint8_t          *payload;          /* the whole receive (header+body) */
    int64_t           payload_size;     /* bytes charged to the mempool */
    int32_t           size_bytes;       /* [const] the request's size
                                           (header + body), for quotas */
    samsa_rd_t        body;             /* what follows the header */
    samsa_arena_t     arena;            /* decode output and scratch */
    samsa_req_hold_t *holds;            /* released before the arena (in
                                           its nodes) */
    samsa_errtally_t  errors;           /* the response's ErrorCodes */
    int32_t           throttle_ms;      /* the quota throttle time its
                                           response gave (request log) */
    bool              request_quota_done;  /* its handler time went to the
                                           request-time quota already
                                           (broker/quota.h) */
    bool              request_quota_net;   /* and request quotas exist: the
                                           network thread's time on it
                                           goes there too */
    bool              not_controller_timed_out;  /* an admin request on
                                           a KRaft cluster node's broker
                                           listener: its answer says
                                           REQUEST_TIMED_OUT where it would
                                           say NOT_CONTROLLER (Kafka's
                                           broker forwards and retries;
                                           broker/forward.h) */
    /* Timings (monotonic ns), as Kafka's RequestChannel.Request keeps them:
     * start: receive completed on the network thread; dequeue: taken by a
     * handler; local_done: the handler's own work ended; resp_done: the
     * response was handed to the channel; resp_dequeue: the network thread
     * took it; end: its last byte was written (or it was dropped). */
    int64_t           start_ns;
    int64_t           dequeue_ns;
    int64_t           local_done_ns;
    int64_t           resp_done_ns;
    int64_t           resp_dequeue_ns;
    int64_t           end_ns;
} samsa_req_t;

typedef enum samsa_resp_kind {
    SAMSA_RESP_SEND,            /* write frame, then unmute */
    SAMSA_RESP_NOOP,            /* nothing to write (acks=0 ok): unmute */
    SAMSA_RESP_CLOSE,           /* close the connection (acks=0 failure) */
} samsa_resp_kind_t;

typedef struct samsa_resp {
    struct samsa_resp    *next;         /* response queue link */
    samsa_resp_kind_t     kind;
    samsa_req_t          *req;          /* owned */
    samsa_send_t          send;         /* frame: size + response header +
                                           body, and its file regions */
    size_t                body_at;      /* where the body begins in frame
                                           (SAMSA_RESP_SEND) */
    int32_t               throttle_ms;  /* > 0: a client quota throttles
                                           the connection this long: the
                                           network thread sends the
                                           response at once and does not
                                           read the connection until the
                                           delay passes (KIP-219) */
} samsa_resp_t;

/* A response that will be written: frame holds the 4-byte size (patched at
 * respond time) and the response header for req's API and version; encode
 * the body after it.  @owns req */
samsa_resp_t *samsa_resp_new_send(samsa_req_t *req);

/* A writer for resp's frame that counts the ErrorCode fields it writes in
 * resp->req->errors (the per-error-code request metrics). */
static inline samsa_wr_t
samsa_resp_wr(samsa_resp_t *resp)
{
    return (samsa_wr_t) { .buf = &resp->send.frame,
                          .errors = &resp->req->errors };
}

/* As samsa_resp_new_send but with the header of another version (an
 * ApiVersions error answer is always written as v0). */
samsa_resp_t *samsa_resp_new_send_version(samsa_req_t *req, int16_t version);

samsa_resp_t *samsa_resp_new(samsa_req_t *req, samsa_resp_kind_t kind);

/* Splice len bytes of fd at offset into the response at the current end of
 * its frame (what is encoded next follows them).  The caller encodes the
 * length prefix itself.  @owns fd (closed with the response, errors too) */
static inline void
samsa_resp_add_region(samsa_resp_t *resp, int fd, int64_t offset, int64_t len)
{
    samsa_send_add_region(&resp->send, fd, offset, len);
}

/* As samsa_resp_add_region for a descriptor someone else holds open:
 * release(release_arg) instead of close when the response is done.
 * @owns the hold */
static inline void
samsa_resp_add_region_held(samsa_resp_t *resp, int fd, int64_t offset,
                           int64_t len, void (*release)(void *),
                           void *release_arg)
{
    samsa_send_add_region_held(&resp->send, fd, offset, len, release,
                               release_arg);
}

/* The response whose frame send is (a connection's samsa_conn_t.sending). */
static inline samsa_resp_t *
samsa_resp_of_send(samsa_send_t *send)
{
    return send == NULL ? NULL
                        : (samsa_resp_t *) (void *) ((char *) send
                                                     - offsetof(samsa_resp_t,
                                                                send));
}

/* Free resp and the request it owns (releasing the request's memory-pool
 * bytes if still held). */
void samsa_resp_free(samsa_resp_t *resp);

/* Keep obj until req's response is encoded (samsa_reqchan_respond, or the
 * request's free), then call release(obj) on the thread that does that.
 * The node lives in req's arena (which aborts on OOM, as every arena
 * allocation does). */
void samsa_req_hold(samsa_req_t *req, void (*release)(void *obj), void *obj);

/* Free the request's payload (returning its memory-pool bytes), run its
 * holds and free its arena; its header copy and timings stay. */
void samsa_req_release_payload(samsa_req_t *req);

/* Free a request that never got a response (shutdown paths). */
void samsa_req_free(samsa_req_t *req);

#endif /* SAMSA_NET_SERVER_REQ_H */
