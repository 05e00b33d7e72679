/*
 * client/netclient.h - the producer's network client (Kafka's
 * NetworkClient): one connection per broker, each framed and written by
 * net/conn.c (the channel code the broker's network threads use), driven
 * by a net/selector.c selector (the broker's network threads each drive
 * one too).  A connection is usable once its ApiVersions
 * exchange is done (v3, falling back to v0); requests go out in order, at
 * most max.in.flight per connection, and their responses come back to
 * the caller's callback in order.  A request past request.timeout.ms, a
 * connection that does not complete within
 * socket.connection.setup.timeout.ms, or any socket error closes the
 * connection and fails everything in flight on it; reconnects back off
 * exponentially (reconnect.backoff.ms .. reconnect.backoff.max.ms).
 * A response's throttle time holds the node back (KIP-219): the netclient
 * reads it from every response but Produce's, which the sender passes in
 * (samsa_netclient_throttle).
 * Threads: everything on the sender thread, except
 * samsa_netclient_wakeup() (any thread).
 */
#ifndef SAMSA_CLIENT_NETCLIENT_H
#define SAMSA_CLIENT_NETCLIENT_H

#include <stdbool.h>
#include <stdint.h>

#include <samsa/errors.h>

#include "proto/rd.h"
#include "proto/wr.h"
#include "net/tls.h"
#include "util/buf.h"

typedef struct samsa_netclient samsa_netclient_t;

typedef struct samsa_nc_conf {
    const char  *client_id;
    int32_t      max_in_flight;
    int64_t      request_timeout_ms;
    int64_t      reconnect_backoff_ms;
    int64_t      reconnect_backoff_max_ms;
    int64_t      connection_setup_timeout_ms;
    int32_t      send_buffer_bytes;        /* -1: OS default */
    int32_t      receive_buffer_bytes;     /* -1: OS default */
    const char  *log_name;      /* prefix of its log lines; NULL:
                                   "producer" (a static string) */
    samsa_tls_ctx_t *tls;       /* SSL: connections do a TLS handshake
                                   (SNI and host check: the node's host)
                                   before ApiVersions; the client takes
                                   its own reference.  NULL: PLAINTEXT */
    int          sasl_mech;     /* a samsa_sasl_mech_t: after ApiVersions
                                   (and TLS), SaslHandshake v1 and
                                   SaslAuthenticate with these (copied);
                                   0: no SASL */
    const char  *sasl_username;
    const char  *sasl_password;
    const char  *sasl_oauth_jaas;   /* OAUTHBEARER: the sasl.jaas.config
                                       its tokens are made from (a fresh
                                       one per authentication) */
} samsa_nc_conf_t;

/* A response (err NONE, body at the response body) or the reason there is
 * none (_CLOSED, _TIMED_OUT, _SHUTDOWN, _IO, _RESOLVE; body NULL).
 * @thread sender */
typedef void samsa_nc_resp_fn(void *ctx, int32_t node, samsa_err_t err,
                              samsa_rd_t *body, void *opaque);

samsa_netclient_t *samsa_netclient_new(const samsa_nc_conf_t *conf);

/* Close every connection, failing requests in flight with _SHUTDOWN. */
void samsa_netclient_free(samsa_netclient_t *nc);

/* Add node (or change its address: an open connection to the old one is
 * closed). */
void samsa_netclient_node_set(samsa_netclient_t *nc, int32_t node,
                              const char *host, int32_t port);

/* True if a request can go to node now (connected, ApiVersions known,
 * fewer than max.in.flight outstanding, not throttled).  Otherwise starts
 * connecting if it is not connected and not backing off. */
bool samsa_netclient_ready(samsa_netclient_t *nc, int32_t node,
                           int64_t now_ms);

/* A response of (api, version) from node said throttle_time_ms: for the
 * versions that leave the waiting to the client (KIP-219, Kafka's
 * shouldClientThrottle: Produce v6+, Fetch v8+, Metadata v6+, ... and
 * every API newer than Kafka 2.0) node is not ready until
 * now_ms + throttle_ms, as in Java's ClusterConnectionStates, a poll waits
 * no longer than that, and requests sent meanwhile are queued and written
 * when it ends.  Older versions and throttle_ms <= 0 change nothing.  The
 * netclient reads the throttle time of every response itself except
 * Produce's (at the end of its body): the sender passes that one in. */
void samsa_netclient_throttle(samsa_netclient_t *nc, int32_t node,
                              int16_t api, int16_t version,
                              int32_t throttle_ms, int64_t now_ms);

/* True if node's connection is up and at max.in.flight: it takes no
 * request before it answers one. */
bool samsa_netclient_busy(samsa_netclient_t *nc, int32_t node);

/* True while node's connection exists (connecting or up). */
bool samsa_netclient_connected(samsa_netclient_t *nc, int32_t node);

/* The highest version of api in [lo, hi] that node supports, or -1. */
int16_t samsa_netclient_version(samsa_netclient_t *nc, int32_t node,
                                int16_t api, int16_t lo, int16_t hi);

#define SAMSA_NC_NO_NODE INT32_MIN    /* bootstrap nodes have ids -1, -2.. */

/* A node to send a cluster-wide request (Metadata, InitProducerId) to:
 * a ready one with the fewest requests in flight, else one connecting,
 * else one to start connecting to; SAMSA_NC_NO_NODE if all are backing
 * off. */
int32_t samsa_netclient_least_loaded(samsa_netclient_t *nc, int64_t now_ms);

/* Why node's connection last closed (SAMSA_ERR__CLOSED: refused or
 * reset, _RESOLVE, _TIMED_OUT: setup timeout, ...); SAMSA_ERR_NONE if it
 * never did, _NOENT for an unknown node. */
samsa_err_t samsa_netclient_last_error(samsa_netclient_t *nc, int32_t node);

/* The last SASL failure of a connection (SASL_AUTHENTICATION_FAILED,
 * UNSUPPORTED_SASL_MECHANISM, ILLEGAL_SASL_STATE), with "node N
 * (host:port): <the broker's message>" in msg, until a connection
 * authenticates; SAMSA_ERR_NONE (msg "") otherwise.  Callers waiting for
 * a node give up on it: Java surfaces it as AuthenticationException.
 * @thread any */
samsa_err_t samsa_netclient_auth_error(samsa_netclient_t *nc, char *msg,
                                       size_t size);

/* Requests in flight to node. */
int32_t samsa_netclient_inflight(samsa_netclient_t *nc, int32_t node);

/* Start a request frame in frame (reset): size placeholder and request
 * header for (api, version); encode the body after it with wr (set up over
 * frame) and pass frame to samsa_netclient_send().  Returns the
 * correlation id. */
int32_t samsa_netclient_frame_begin(samsa_netclient_t *nc, int16_t api,
                                    int16_t version, samsa_buf_t *frame,
                                    samsa_wr_t *wr);

/* Queue frame for node.  With expect_response, cb gets the response or
 * the failure; without (Produce acks=0), cb is called with NONE and a NULL
 * body once the frame is written.  Fails (cb not called) with
 * SAMSA_ERR__STATE if node is not ready.  @owns frame's storage (taken;
 * frame is reset) */
SAMSA_MUST_CHECK samsa_err_t samsa_netclient_send(
    samsa_netclient_t *nc, int32_t node, samsa_buf_t *frame, int16_t api,
    int16_t version, bool expect_response, samsa_nc_resp_fn *cb, void *ctx,
    void *opaque, int64_t now_ms);

/* Wait up to timeout_ms for I/O (or a wakeup), do it, run callbacks,
 * expire requests and connection attempts. */
void samsa_netclient_poll(samsa_netclient_t *nc, int64_t timeout_ms);

/* Only inside a response callback: take the buffer its body lies in
 * (free it with samsa_free()), so that data can point into the response
 * after the callback returns (the consumer's records do).  NULL once
 * taken, or outside a callback. */
uint8_t *samsa_netclient_take_response(samsa_netclient_t *nc);

/* Make a poll in progress (or the next) return at once.  @thread any */
void samsa_netclient_wakeup(samsa_netclient_t *nc);

/* Close every connection, failing what is in flight with err. */
void samsa_netclient_close_all(samsa_netclient_t *nc, samsa_err_t err);

/* Close node's connection (failing what is in flight with err). */
void samsa_netclient_disconnect(samsa_netclient_t *nc, int32_t node,
                                samsa_err_t err);

#endif /* SAMSA_CLIENT_NETCLIENT_H */
