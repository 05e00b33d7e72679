/*
 * server/httpd.h - the metrics listener (metrics.listener): a small HTTP
 * (or HTTPS) server on a thread of its own (libmicrohttpd's internal polling thread,
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

#include <stdbool.h>
#include <stddef.h>

#include <samsa/errors.h>

#include "server/metrics.h"

typedef struct samsa_httpd samsa_httpd_t;

/* Parse "http://host:port" or "https://host:port" (host: a name or an
 * address, IPv6 in brackets, empty for every interface; port 0..65535);
 * *tls says which.  host must hold 256 bytes.  SAMSA_ERR__CONFIG with
 * errstr naming metrics.listener. */
SAMSA_MUST_CHECK samsa_err_t samsa_httpd_parse_listener(
    const char *url, char *host, int *port, bool *tls, char *errstr,
    size_t errstr_size);

/* What the listener is opened with (borrowed for the call). */
typedef struct samsa_httpd_conf {
    const char  *url;               /* metrics.listener */
    const char  *admin_token;       /* metrics.listener.admin.token: what a
                                       state-changing request (POST
                                       /loglevel) must carry as
                                       "Authorization: Bearer <token>";
                                       NULL or "": every such request is
                                       refused (403) */
    const char  *keystore_location; /* metrics.listener.ssl.keystore.
                                       location: PEM key and chain, for
                                       https:// (required there, refused
                                       with http://) */
    const char  *key_password;      /* metrics.listener.ssl.key.password */
} samsa_httpd_conf_t;

/* Bind conf->url and start serving m (borrowed: it must outlive the
 * listener); https:// through libmicrohttpd's TLS, TLS 1.2 and 1.3 only,
 * with the key store read and checked by net/tls (the same errors as a
 * Kafka listener's ssl.keystore.location).  Fails naming the key or the
 * address (a taken port). */
SAMSA_MUST_CHECK samsa_err_t samsa_httpd_open(samsa_httpd_t **out,
                                              const samsa_httpd_conf_t *conf,
                                              samsa_metrics_t *m,
                                              char *errstr,
                                              size_t errstr_size);

/* The port bound (useful with port 0). */
int samsa_httpd_port(const samsa_httpd_t *h);

/* Stop the thread and close the socket; NULL is a no-op. */
void samsa_httpd_close(samsa_httpd_t *h);

#endif /* SAMSA_SERVER_HTTPD_H */
