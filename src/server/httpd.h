/*
 * server/httpd.h - the metrics listener (metrics.listener): a small HTTP
 * server on a thread of its own (libmicrohttpd's internal polling thread,
 * named "metrics") serving
 *   GET  /metrics      Prometheus text format 0.0.4 (server/metrics.h)
 *   GET  /health       liveness: 200 "ok" while the process serves HTTP
 *   GET  /ready        readiness: 200 once logs are loaded and listeners
 *                      are up, else 503
 *   GET  /             the status page (server/status.html)
 *   GET  /api/status   the JSON document the status page polls
 *   GET  /loglevel     the diagnostics level (diag.level)
 *   POST /loglevel     set it: the body is FATAL, ERROR, WARN, INFO, DEBUG
 *                      or TRACE
 * Other paths get 404, other methods 405.  HTTP parsing (and the 400 for
 * malformed requests) is libmicrohttpd's.
 * Threads: open/close on main; requests on the metrics thread.
 */
#ifndef SAMSA_SERVER_HTTPD_H
#define SAMSA_SERVER_HTTPD_H

#include <stddef.h>

#include <samsa/errors.h>

#include "server/metrics.h"

typedef struct samsa_httpd samsa_httpd_t;

/* Parse "http://host:port" (host: a name or an address, IPv6 in
 * brackets, empty for every interface; port 0..65535).  host must hold
 * 256 bytes.  SAMSA_ERR__CONFIG with errstr naming metrics.listener. */
SAMSA_MUST_CHECK samsa_err_t samsa_httpd_parse_listener(
    const char *url, char *host, int *port, char *errstr, size_t errstr_size);

/* Bind url and start serving m (borrowed: it must outlive the listener).
 * admin_token (metrics.listener.admin.token; NULL or "" for none): what a
 * state-changing request (POST /loglevel) must carry as "Authorization:
 * Bearer <token>"; without one every such request is refused (403).
 * Fails (naming the address) when the port is taken. */
SAMSA_MUST_CHECK samsa_err_t samsa_httpd_open(samsa_httpd_t **out,
                                              const char *url,
                                              samsa_metrics_t *m,
                                              const char *admin_token,
                                              char *errstr,
                                              size_t errstr_size);

/* The port bound (useful with port 0). */
int samsa_httpd_port(const samsa_httpd_t *h);

/* Stop the thread and close the socket; NULL is a no-op. */
void samsa_httpd_close(samsa_httpd_t *h);

#endif /* SAMSA_SERVER_HTTPD_H */
