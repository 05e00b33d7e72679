/*
 * net/connquota.h - connection counts of one socket server (Kafka's
 * ConnectionQuotas): the total against max.connections and the count per
 * client IP against max.connections.per.ip and its overrides.
 * Threads: the acceptors take slots, the network threads give them back;
 * the mutex guards the counts.
 */
#ifndef SAMSA_NET_CONNQUOTA_H
#define SAMSA_NET_CONNQUOTA_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>

typedef struct samsa_connquota_override {
    char     ip[64];                /* numeric, as inet_ntop writes it */
    int32_t  max;
} samsa_connquota_override_t;

typedef struct samsa_connquota_ip {
    char     ip[64];
    int32_t  count;
} samsa_connquota_ip_t;

typedef struct samsa_connquota {
    pthread_mutex_t              lock;      /* guards [lock] fields */
    pthread_cond_t               freed;     /* a slot was given back */
    int32_t                      max_total;         /* [const] */
    int32_t                      max_per_ip;        /* [const] */
    samsa_connquota_override_t  *overrides;         /* [const] */
    size_t                       noverrides;        /* [const] */
    samsa_connquota_ip_t        *ips;       /* [lock] IPs with connections */
    size_t                       nips;      /* [lock] */
    size_t                       ips_cap;   /* [lock] */
    _Atomic int32_t              total;     /* [lock] writes; atomic reads */
} samsa_connquota_t;

/* overrides are copied. */
void samsa_connquota_init(samsa_connquota_t *q, int32_t max_total,
                          int32_t max_per_ip,
                          const samsa_connquota_override_t *overrides,
                          size_t noverrides);
void samsa_connquota_fini(samsa_connquota_t *q);

/* Take a slot for a connection from ip.  Waits (in steps of wait_ms, while
 * *running stays true) for the total to drop below max.connections, then
 * checks the per-IP limit: SAMSA_ERR__FULL if ip already has its maximum,
 * SAMSA_ERR__SHUTDOWN if *running went false while waiting.
 * @thread acceptor */
SAMSA_MUST_CHECK samsa_err_t samsa_connquota_take(samsa_connquota_t *q,
                                                  const char *ip,
                                                  _Atomic bool *running,
                                                  int wait_ms);

/* Give back the slot of a closed connection from ip. @thread network */
void samsa_connquota_give(samsa_connquota_t *q, const char *ip);

int32_t samsa_connquota_total(samsa_connquota_t *q);
bool    samsa_connquota_over(samsa_connquota_t *q);   /* total > max */

#endif /* SAMSA_NET_CONNQUOTA_H */
