/*
 * net/server/connquota.h - connection counts and creation rates of one socket
 * server (Kafka's ConnectionQuotas): the total against max.connections,
 * the count per client IP against max.connections.per.ip and its
 * overrides, the creation rate against max.connection.creation.rate (the
 * acceptor waits until the rate allows the connection) and, per client
 * IP, against the connection_creation_rate client quota (a connection over
 * it is refused: its socket is closed after the throttle time).  Rates are
 * util/qrate.h rates over quota.window.num windows of
 * quota.window.size.seconds; throttle times are capped at one window, as
 * Kafka's.  Each listener also has its own limits (Kafka's
 * ListenerConnectionQuota: listener.name.<listener>.max.connections and
 * .max.connection.creation.rate), checked beside the broker-wide ones.
 * The limits can change at run time (samsa_connquota_set_limits, Kafka's
 * DynamicConnectionQuota); acceptors waiting for a slot look again.
 * Threads: the acceptors take slots, the network threads give them back,
 * the reconf hook changes the limits; the mutex guards the counts, the
 * limits and the rates.
 */
#ifndef SAMSA_NET_SERVER_CONNQUOTA_H
#define SAMSA_NET_SERVER_CONNQUOTA_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>

#include "util/qrate.h"

typedef struct samsa_connquota_override {
    char     ip[64];                /* numeric, as inet_ntop writes it */
    int32_t  max;
} samsa_connquota_override_t;

typedef struct samsa_connquota_ip {
    char     ip[64];
    int32_t  count;
} samsa_connquota_ip_t;

/* The connection_creation_rate quota of ip (its own, else the default
 * ip entity's), or INT32_MAX (Kafka's IP_CONNECTION_RATE_DEFAULT): none.
 * Called on the acceptor thread without the lock; must not block. */
typedef int32_t (*samsa_connquota_ip_rate_fn)(void *ctx, const char *ip);

/* One listener's connections and limits (INT32_MAX: none). */
typedef struct samsa_connquota_listener {
    int32_t        max;             /* [lock] max.connections */
    int32_t        max_rate;        /* [lock] max.connection.creation.rate */
    int32_t        count;           /* [lock] */
    samsa_qrate_t  rate;            /* [lock] */
    _Atomic uint64_t  throttle_ms;  /* [atomic] accept throttle times
                                       given, summed (Kafka's
                                       connection-accept-throttle-time) */
    _Atomic uint64_t  throttles;    /* [atomic] accepts throttled */
} samsa_connquota_listener_t;

typedef struct samsa_connquota_iprate {
    char           ip[64];
    int64_t        last_ms;         /* last recorded */
    samsa_qrate_t  rate;
} samsa_connquota_iprate_t;

typedef struct samsa_connquota {
    pthread_mutex_t              lock;      /* guards [lock] fields */
    pthread_cond_t               freed;     /* a slot was given back */
    _Atomic int32_t              max_total; /* [lock] writes; atomic reads */
    int32_t                      max_per_ip;        /* [lock] */
    samsa_connquota_override_t  *overrides;         /* [lock] */
    size_t                       noverrides;        /* [lock] */
    samsa_connquota_listener_t  *listeners; /* [const] array, fields [lock] */
    size_t                       nlisteners;        /* [const] */
    samsa_connquota_ip_t        *ips;       /* [lock] IPs with connections */
    size_t                       nips;      /* [lock] */
    size_t                       ips_cap;   /* [lock] */
    _Atomic int32_t              total;     /* [lock] writes; atomic reads */
    /* creation rates (samsa_connquota_set_rates, before any take): */
    int32_t                      max_rate;          /* [lock] */
    int64_t                      window_ms;         /* [const] */
    int                          samples;           /* [const] */
    samsa_connquota_ip_rate_fn   ip_rate;           /* [const] may be NULL */
    void                        *ip_rate_ctx;       /* [const] */
    samsa_qrate_t                rate;      /* [lock] broker-wide */
    samsa_connquota_iprate_t   **iprates;   /* [lock] IPs with a quota */
    size_t                       niprates;  /* [lock] */
    _Atomic uint64_t             rate_waits;    /* [atomic] accepts delayed
                                                   by max.connection.
                                                   creation.rate */
    _Atomic uint64_t             ip_throttled;  /* [atomic] connections
                                                   refused by an ip quota */
} samsa_connquota_t;

/* overrides are copied; nlisteners listeners, with no limit of their
 * own until samsa_connquota_set_limits. */
void samsa_connquota_init(samsa_connquota_t *q, int32_t max_total,
                          int32_t max_per_ip,
                          const samsa_connquota_override_t *overrides,
                          size_t noverrides, size_t nlisteners);

/* The limits, set at start or changed at run time (Kafka's
 * DynamicConnectionQuota and ListenerConnectionQuota.reconfigure): the
 * broker-wide max.connections, max.connections.per.ip and its overrides
 * (copied), max.connection.creation.rate, and per listener (nlisteners of
 * them, as at init) its max.connections and creation rate.  A lower limit
 * closes nothing at once (the network threads close connections over
 * max.connections one a turn); waiting acceptors look again.
 * @thread any */
void samsa_connquota_set_limits(samsa_connquota_t *q, int32_t max_total,
                                int32_t max_per_ip,
                                const samsa_connquota_override_t *overrides,
                                size_t noverrides, int32_t max_rate,
                                const int32_t *listener_max,
                                const int32_t *listener_rate);
void samsa_connquota_fini(samsa_connquota_t *q);

/* Creation rates: max_rate (max.connection.creation.rate, INT32_MAX: no
 * limit), samples and window_ms (quota.window.num, .size.seconds * 1000),
 * and the per-IP quota lookup (NULL: none).  Call after init, before the
 * acceptors start; without it no rate is limited. */
void samsa_connquota_set_rates(samsa_connquota_t *q, int32_t max_rate,
                               int samples, int64_t window_ms,
                               samsa_connquota_ip_rate_fn ip_rate, void *ctx);

/* Take a slot for a connection from ip on listener (an index), in
 * Kafka's order: record the connection in the broker-wide and the
 * listener's rates and wait out the longer throttle time, wait (in steps
 * of wait_ms, while *running stays true) for the listener's count to drop
 * below its max.connections and the total below the broker's, then check
 * the ip's creation rate and count.
 * SAMSA_ERR__FULL if ip is over its connection_creation_rate quota
 * (*close_delay_ms > 0: close the socket after that long, as Kafka does)
 * or already has its maximum connections (*close_delay_ms 0);
 * SAMSA_ERR__SHUTDOWN if *running went false while waiting.
 * @thread acceptor */
SAMSA_MUST_CHECK samsa_err_t samsa_connquota_take(samsa_connquota_t *q,
                                                  size_t listener,
                                                  const char *ip,
                                                  _Atomic bool *running,
                                                  int wait_ms,
                                                  int64_t *close_delay_ms);

/* Give back the slot of a closed connection from ip on listener.
 * @thread network */
void samsa_connquota_give(samsa_connquota_t *q, size_t listener,
                          const char *ip);

/* The accept throttle time (ms, summed) and count of listener's
 * connections delayed by a creation rate (the broker-wide or the
 * listener's), since start.  @thread any */
void samsa_connquota_listener_throttles(samsa_connquota_t *q,
                                        size_t listener,
                                        uint64_t *throttle_ms,
                                        uint64_t *throttles);
int32_t samsa_connquota_total(samsa_connquota_t *q);
int32_t samsa_connquota_max_total(samsa_connquota_t *q);
bool    samsa_connquota_over(samsa_connquota_t *q);   /* total > max */

#endif /* SAMSA_NET_SERVER_CONNQUOTA_H */
