/*
 * server/metrics.h - the broker's metrics, gathered when asked (a scrape)
 * from the counters the threads keep for themselves: request metrics
 * (server/reqstats.h), the socket servers' queue sizes, idle times and
 * connections (net/server/sockserver.h), per-partition logs and per-topic
 * traffic (log/plog.h), purgatories, groups and their lag, and the
 * process (RSS, CPU, open fds).  Rendered as Prometheus text format 0.0.4
 * (docs/METRICS.md lists every metric) or as the JSON the status page
 * polls.
 * Threads: built by main before the servers start, then read by the
 * metrics thread (server/httpd.c); the idle-ratio window is under lock.
 * Ownership: main owns it; every server and broker it names must outlive
 * it (main stops the HTTP listener first).
 */
#ifndef SAMSA_SERVER_METRICS_H
#define SAMSA_SERVER_METRICS_H

#include <stdbool.h>

#include "broker/broker.h"
#include "net/server/sockserver.h"
#include "server/reqstats.h"
#include "util/buf.h"

typedef struct samsa_metrics samsa_metrics_t;

/* brk may be NULL (a controller-only node). */
samsa_metrics_t *samsa_metrics_new(samsa_broker_t *brk);
void samsa_metrics_free(samsa_metrics_t *m);        /* NULL: no-op */

/* Observe a socket server and its request stats (both borrowed).
 * @thread main, before samsa_metrics_set_ready(m, true): until then the
 * metrics thread reads neither the servers nor the broker (the ready flag
 * is stored with release and loaded with acquire). */
void samsa_metrics_add_server(samsa_metrics_t *m, samsa_sockserver_t *ss,
                              samsa_reqstats_t *rs);

/* Readiness (/ready): set by main once the logs are loaded and every
 * listener is up.  @thread any */
void samsa_metrics_set_ready(samsa_metrics_t *m, bool ready);
bool samsa_metrics_is_ready(const samsa_metrics_t *m);

/* Append the Prometheus text exposition (format 0.0.4) to out.
 * @thread metrics */
void samsa_metrics_render_prom(samsa_metrics_t *m, samsa_buf_t *out);

/* Append the status page's JSON document to out.  @thread metrics */
void samsa_metrics_render_json(samsa_metrics_t *m, samsa_buf_t *out);

#endif /* SAMSA_SERVER_METRICS_H */
