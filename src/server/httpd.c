/*
 * server/httpd.c - see httpd.h.  Our own thread, "metrics", drives
 * libmicrohttpd (epoll, no internal thread) with MHD_run_wait(): every
 * callback below runs on it, so a scrape never blocks a broker thread.
 */
#include "server/httpd.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include <microhttpd.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "net/tls.h"
#include "server/status_html.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/diag.h"

#define HTTPD_CONN_LIMIT        64
#define HTTPD_CONN_TIMEOUT_S    10
#define HTTPD_BODY_MAX          64      /* POST /loglevel */
#define HTTPD_POLL_MS           200     /* how soon close() is noticed */
/* https: GnuTLS priorities (libmicrohttpd's TLS is GnuTLS): TLS 1.2 and
 * 1.3, Kafka's default ssl.enabled.protocols */
#define HTTPD_TLS_PRIORITIES    "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"

struct samsa_httpd {
    struct MHD_Daemon  *daemon;         /* [const] used by the thread */
    samsa_metrics_t    *metrics;        /* [const] borrowed */
    bool                has_token;      /* [const] an admin token is set */
    unsigned char       token_sha[32];  /* [const] its SHA-256 */
    int                 port;           /* [const] bound */
    char               *key_pem;        /* [const] https: the key store as */
    size_t              key_len;        /*   PEM for libmicrohttpd (which */
    char               *chain_pem;      /*   keeps the pointers), cleansed
                                           and freed at close */
    pthread_t           thread;
    _Atomic bool        running;        /* [atomic] cleared by close */
};

/* One request's state between libmicrohttpd's calls. */
typedef struct httpd_req {
    char    body[HTTPD_BODY_MAX + 1];
    size_t  len;
    bool    too_large;
} httpd_req_t;

samsa_err_t
samsa_httpd_parse_listener(const char *url, char *host, int *port,
                           bool *tls, char *errstr, size_t errstr_size)
{
    const char  *p = url, *colon, *end;
    char        *num_end;
    long         n;
    size_t       hlen;

    if (strncmp(p, "http://", 7) == 0) {
        *tls = false;
        p += 7;
    } else if (strncmp(p, "https://", 8) == 0) {
        *tls = true;
        p += 8;
    } else {
        goto bad;
    }
    if (*p == '[') {
        end = strchr(p, ']');
        if (end == NULL || end[1] != ':') {
            goto bad;
        }
        hlen = (size_t) (end - p - 1);
        p++;
        colon = end + 1;
    } else {
        colon = strrchr(p, ':');
        if (colon == NULL) {
            goto bad;
        }
        hlen = (size_t) (colon - p);
    }
    if (hlen >= 256 || memchr(p, '/', hlen) != NULL) {
        goto bad;
    }
    memcpy(host, p, hlen);
    host[hlen] = '\0';
    n = strtol(colon + 1, &num_end, 10);
    if (colon[1] == '\0' || !isdigit((unsigned char) colon[1])
        || (*num_end != '\0' && strcmp(num_end, "/") != 0) || n < 0
        || n > 65535) {
        goto bad;
    }
    *port = (int) n;
    return SAMSA_ERR_NONE;
bad:
    snprintf(errstr, errstr_size, "invalid value '%s' for configuration "
             "'metrics.listener': expected http://host:port or "
             "https://host:port (or empty to disable it)", url);
    return SAMSA_ERR__CONFIG;
}

/* ---- responses ----------------------------------------------------------- */

static enum MHD_Result
httpd_send(struct MHD_Connection *c, unsigned code, const char *type,
           void *data, size_t len, enum MHD_ResponseMemoryMode mode)
{
    struct MHD_Response  *r;
    enum MHD_Result       ret;

    r = MHD_create_response_from_buffer(len, data, mode);
    if (r == NULL) {
        if (mode == MHD_RESPMEM_MUST_FREE) {
            samsa_free(data);
        }
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    if (code == MHD_HTTP_METHOD_NOT_ALLOWED) {
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    }
    ret = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result
httpd_text(struct MHD_Connection *c, unsigned code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static enum MHD_Result
httpd_text(struct MHD_Connection *c, unsigned code, const char *fmt, ...)
{
    char     msg[256];
    va_list  ap;
    int      n;

    va_start(ap, fmt);
    n = vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (n < 0) {
        n = 0;
    }
    return httpd_send(c, code, "text/plain; charset=utf-8",
                      samsa_strndup(msg, strlen(msg)), strlen(msg),
                      MHD_RESPMEM_MUST_FREE);
}

/* A rendered document: buf's storage goes to libmicrohttpd. */
static enum MHD_Result
httpd_buf(struct MHD_Connection *c, const char *type, samsa_buf_t *buf)
{
    size_t    len;
    uint8_t  *data = samsa_buf_take(buf, &len);

    return httpd_send(c, MHD_HTTP_OK, type, data, len, MHD_RESPMEM_MUST_FREE);
}

/* ---- endpoints ----------------------------------------------------------- */

/* SHA-256 of n bytes at p into out (32 bytes). */
static void
httpd_sha256(const void *p, size_t n, unsigned char *out)
{
    unsigned int  len = 32;

    if (EVP_Digest(p, n, out, &len, EVP_sha256(), NULL) != 1) {
        memset(out, 0, 32);     /* cannot happen with the default provider;
                                   a zero digest then matches nothing a
                                   token hashes to */
    }
}

/* Whether the request may change state: metrics.listener.admin.token is
 * set and the request carries "Authorization: Bearer <it>" (compared as
 * SHA-256 digests in constant time, so neither the token nor its length
 * leaks through timing).  *allowed: it may (nothing queued); else the
 * refusal (403 without a token, 401 with the wrong one) is queued and its
 * result returned. */
static enum MHD_Result
httpd_authorize(const samsa_httpd_t *h, struct MHD_Connection *c,
                bool *allowed)
{
    static const char     msg[] = "unauthorized: POST /loglevel needs "
                                  "Authorization: Bearer <the "
                                  "metrics.listener.admin.token>\n";
    const char           *auth;
    unsigned char         sha[32];
    struct MHD_Response  *r;
    enum MHD_Result       rc;

    *allowed = false;
    if (!h->has_token) {
        return httpd_text(c, MHD_HTTP_FORBIDDEN,
                          "POST /loglevel is disabled: set "
                          "metrics.listener.admin.token to enable it "
                          "(then send Authorization: Bearer <token>)\n");
    }
    auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                       MHD_HTTP_HEADER_AUTHORIZATION);
    if (auth != NULL && strncasecmp(auth, "Bearer ", 7) == 0) {
        httpd_sha256(auth + 7, strlen(auth + 7), sha);
        if (CRYPTO_memcmp(sha, h->token_sha, sizeof(sha)) == 0) {
            *allowed = true;
            return MHD_YES;
        }
    }
    r = MHD_create_response_from_buffer(sizeof(msg) - 1, (void *) msg,
                                        MHD_RESPMEM_PERSISTENT);
    if (r == NULL) {
        return MHD_NO;
    }
    (void) MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                                   "text/plain; charset=utf-8");
    (void) MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
                                   "Bearer realm=\"samsa\"");
    rc = MHD_queue_response(c, MHD_HTTP_UNAUTHORIZED, r);
    MHD_destroy_response(r);
    return rc;
}

static enum MHD_Result
httpd_loglevel_post(struct MHD_Connection *c, httpd_req_t *hr)
{
    samsa_diag_level_t  level;
    char               *s = hr->body, *e;
    char                err[512];

    if (hr->too_large) {
        return httpd_text(c, MHD_HTTP_CONTENT_TOO_LARGE,
                          "body too large: send one of FATAL, ERROR, WARN, "
                          "INFO, DEBUG, TRACE\n");
    }
    hr->body[hr->len] = '\0';
    while (isspace((unsigned char) *s)) {
        s++;
    }
    for (e = s + strlen(s); e > s && isspace((unsigned char) e[-1]); e--) {
    }
    *e = '\0';
    if (strncmp(s, "level=", 6) == 0) {
        s += 6;                 /* a form post: level=DEBUG */
    }
    if (!samsa_diag_level_parse(s, &level)) {
        return httpd_text(c, MHD_HTTP_BAD_REQUEST,
                          "unknown level: send one of FATAL, ERROR, WARN, "
                          "INFO, DEBUG, TRACE\n");
    }
    if (!samsa_diag_logger_update(SAMSA_DIAG_LOGGER_ROOT, false, level,
                                  err, sizeof(err))) {
        return httpd_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s\n", err);
    }
    samsa_warn("diagnostics level set to %s (POST /loglevel)",
               samsa_diag_level_name(level));
    return httpd_text(c, MHD_HTTP_OK, "%s\n", samsa_diag_level_name(level));
}

/* Whether the query string names key (with or without a value). */
static bool
httpd_has_arg(struct MHD_Connection *c, const char *key)
{
    return MHD_lookup_connection_value_n(c, MHD_GET_ARGUMENT_KIND, key,
                                         strlen(key), NULL, NULL)
           == MHD_YES;
}

static enum MHD_Result
httpd_get(samsa_httpd_t *h, struct MHD_Connection *c, const char *url)
{
    samsa_buf_t  buf = SAMSA_BUF_INIT;

    if (strcmp(url, "/metrics") == 0) {
        samsa_metrics_render_prom(h->metrics, &buf);
        return httpd_buf(c, "text/plain; version=0.0.4; charset=utf-8", &buf);
    }
    if (strcmp(url, "/api/status") == 0) {
        samsa_metrics_render_json(h->metrics, &buf);
        return httpd_buf(c, "application/json", &buf);
    }
    if (strcmp(url, "/") == 0) {
        return httpd_send(c, MHD_HTTP_OK, "text/html; charset=utf-8",
                          (void *) samsa_status_html,
                          samsa_status_html_len, MHD_RESPMEM_PERSISTENT);
    }
    if (strcmp(url, "/health") == 0 && !httpd_has_arg(c, "ready")) {
        return httpd_text(c, MHD_HTTP_OK, "ok\n");
    }
    if (strcmp(url, "/ready") == 0 || strcmp(url, "/health") == 0) {
        if (samsa_metrics_is_ready(h->metrics)) {
            return httpd_text(c, MHD_HTTP_OK, "ready\n");
        }
        return httpd_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "not ready\n");
    }
    if (strcmp(url, "/loglevel") == 0) {
        return httpd_text(c, MHD_HTTP_OK, "%s\n",
                          samsa_diag_level_name(samsa_diag_get_level()));
    }
    return httpd_text(c, MHD_HTTP_NOT_FOUND, "not found: %s\n", url);
}

static bool
httpd_is_path(const char *url)
{
    return strcmp(url, "/metrics") == 0 || strcmp(url, "/api/status") == 0
           || strcmp(url, "/") == 0 || strcmp(url, "/health") == 0
           || strcmp(url, "/ready") == 0 || strcmp(url, "/loglevel") == 0;
}

/* Gather a POST body, at most HTTPD_BODY_MAX bytes (the rest is read and
 * dropped, and the request refused). */
static void
httpd_gather(httpd_req_t *hr, const char *data, size_t n)
{
    if (hr->len + n > HTTPD_BODY_MAX) {
        hr->too_large = true;
        return;
    }
    memcpy(hr->body + hr->len, data, n);
    hr->len += n;
}

static enum MHD_Result
httpd_access(void *cls, struct MHD_Connection *c, const char *url,
             const char *method, const char *version, const char *upload,
             size_t *upload_size, void **ctx)
{
    samsa_httpd_t  *h = cls;
    httpd_req_t    *hr = *ctx;
    bool            is_post = strcmp(method, MHD_HTTP_METHOD_POST) == 0;

    (void) version;
    if (hr == NULL) {               /* headers are in: set up, body next */
        *ctx = samsa_calloc(1, sizeof(httpd_req_t));
        return MHD_YES;
    }
    if (*upload_size > 0) {
        httpd_gather(hr, upload, *upload_size);
        *upload_size = 0;
        return MHD_YES;
    }
    if (is_post && strcmp(url, "/loglevel") == 0) {
        bool             allowed;
        enum MHD_Result  rc = httpd_authorize(h, c, &allowed);

        return allowed ? httpd_loglevel_post(c, hr) : rc;
    }
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0
        && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0) {
        if (!httpd_is_path(url)) {
            return httpd_text(c, MHD_HTTP_NOT_FOUND, "not found: %s\n", url);
        }
        return httpd_text(c, MHD_HTTP_METHOD_NOT_ALLOWED,
                          "method %s not allowed on %s\n", method, url);
    }
    return httpd_get(h, c, url);
}

static void
httpd_completed(void *cls, struct MHD_Connection *c, void **ctx,
                enum MHD_RequestTerminationCode why)
{
    (void) cls;
    (void) c;
    (void) why;
    samsa_free(*ctx);
    *ctx = NULL;
}

/* libmicrohttpd's MHD_LogCallback: fmt is its own printf format. */
__attribute__((format(printf, 2, 0))) static void
httpd_log(void *cls, const char *fmt, va_list ap)
{
    char  msg[512];

    (void) cls;
    vsnprintf(msg, sizeof(msg), fmt, ap);
    msg[strcspn(msg, "\n")] = '\0';
    samsa_debug("metrics listener: %s", msg);
}

/* ---- life ---------------------------------------------------------------- */

static void *
httpd_main(void *arg)
{
    samsa_httpd_t  *h = arg;

    samsa_thread_name_set("metrics");
    while (atomic_load_explicit(&h->running, memory_order_relaxed)) {
        if (MHD_run_wait(h->daemon, HTTPD_POLL_MS) != MHD_YES) {
            samsa_warn("metrics listener: MHD_run_wait failed");
            break;
        }
    }
    return NULL;
}

static samsa_err_t
httpd_resolve(const char *url, struct sockaddr_storage *sa, bool *tls,
              char *errstr, size_t errstr_size)
{
    struct addrinfo   hints, *res = NULL;
    char              host[256], port_str[16];
    int               port, rc;
    samsa_err_t       err;

    err = samsa_httpd_parse_listener(url, host, &port, tls, errstr,
                                     errstr_size);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    memset(&hints, 0, sizeof(hints));
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    snprintf(port_str, sizeof(port_str), "%d", port);
    rc = getaddrinfo(host[0] != '\0' ? host : NULL, port_str, &hints, &res);
    if (rc != 0 || res == NULL) {
        snprintf(errstr, errstr_size, "metrics.listener '%s': cannot "
                 "resolve '%s': %s", url, host, gai_strerror(rc));
        return SAMSA_ERR__RESOLVE;
    }
    memset(sa, 0, sizeof(*sa));
    memcpy(sa, res->ai_addr, res->ai_addrlen);
    freeaddrinfo(res);
    return SAMSA_ERR_NONE;
}

/* https: the key store of conf, read and checked as a Kafka listener's
 * (net/tls), into h as PEM text for libmicrohttpd. */
static samsa_err_t
httpd_load_keystore(samsa_httpd_t *h, const samsa_httpd_conf_t *conf,
                    char *errstr, size_t errstr_size)
{
    samsa_tls_conf_t   tc;
    samsa_tls_ctx_t   *ctx;
    samsa_err_t        err;

    memset(&tc, 0, sizeof(tc));
    tc.keystore_type = (samsa_tls_opt_t) { "metrics.listener", "PEM" };
    tc.keystore_location = (samsa_tls_opt_t) {
        "metrics.listener.ssl.keystore.location", conf->keystore_location };
    tc.key_password = (samsa_tls_opt_t) {
        "metrics.listener.ssl.key.password",
        conf->key_password != NULL && conf->key_password[0] != '\0'
            ? conf->key_password : NULL };
    err = samsa_tls_ctx_new(&ctx, &tc, true, "metrics.listener", errstr,
                            errstr_size);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    err = samsa_tls_ctx_export_pem(ctx, "metrics.listener", &h->key_pem,
                                   &h->key_len, &h->chain_pem, errstr,
                                   errstr_size);
    samsa_tls_ctx_unref(ctx);
    return err;
}

static void
httpd_free(samsa_httpd_t *h)
{
    if (h->key_pem != NULL) {
        OPENSSL_cleanse(h->key_pem, h->key_len);
    }
    samsa_free(h->key_pem);
    samsa_free(h->chain_pem);
    samsa_free(h);
}

samsa_err_t
samsa_httpd_open(samsa_httpd_t **out, const samsa_httpd_conf_t *conf,
                 samsa_metrics_t *m, char *errstr, size_t errstr_size)
{
    struct sockaddr_storage    sa;
    const union MHD_DaemonInfo *info;
    samsa_httpd_t              *h;
    const char                 *url = conf->url;
    bool                        tls = false, has_keystore;
    unsigned                    flags;
    samsa_err_t                 err;

    err = httpd_resolve(url, &sa, &tls, errstr, errstr_size);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    has_keystore = conf->keystore_location != NULL
                   && conf->keystore_location[0] != '\0';
    if (tls && !has_keystore) {
        snprintf(errstr, errstr_size, "metrics.listener '%s' needs "
                 "metrics.listener.ssl.keystore.location (a PEM file with "
                 "the private key and the certificate chain)", url);
        return SAMSA_ERR__CONFIG;
    }
    if (!tls && has_keystore) {
        snprintf(errstr, errstr_size, "metrics.listener.ssl.keystore."
                 "location is set but metrics.listener '%s' is plain HTTP: "
                 "use https:// to serve TLS, or leave the key store unset",
                 url);
        return SAMSA_ERR__CONFIG;
    }
    h = samsa_calloc(1, sizeof(*h));
    h->metrics = m;
    if (conf->admin_token != NULL && conf->admin_token[0] != '\0') {
        h->has_token = true;
        httpd_sha256(conf->admin_token, strlen(conf->admin_token),
                     h->token_sha);
    }
    if (tls) {
        err = httpd_load_keystore(h, conf, errstr, errstr_size);
        if (err != SAMSA_ERR_NONE) {
            httpd_free(h);
            return err;
        }
    }
    flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG | (tls ? MHD_USE_TLS : 0);
    if (sa.ss_family == AF_INET6) {
        flags |= MHD_USE_IPv6;
    }
    /* the TLS options last: MHD_OPTION_END in their place ends the list
     * for plain HTTP */
    h->daemon = MHD_start_daemon(
        flags, 0, NULL, NULL, httpd_access, h,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *) &sa,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned) HTTPD_CONN_LIMIT,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned) HTTPD_CONN_TIMEOUT_S,
        MHD_OPTION_NOTIFY_COMPLETED, httpd_completed, NULL,
        MHD_OPTION_EXTERNAL_LOGGER, httpd_log, NULL,
        tls ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_END, h->key_pem,
        MHD_OPTION_HTTPS_MEM_CERT, h->chain_pem,
        MHD_OPTION_HTTPS_PRIORITIES, HTTPD_TLS_PRIORITIES,
        MHD_OPTION_END);
    if (h->daemon == NULL) {
        snprintf(errstr, errstr_size, "metrics.listener '%s': cannot "
                 "listen (address in use?%s)", url,
                 tls ? " or a key store libmicrohttpd's TLS refused" : "");
        httpd_free(h);
        return SAMSA_ERR__IO;
    }
    info = MHD_get_daemon_info(h->daemon, MHD_DAEMON_INFO_BIND_PORT);
    h->port = info != NULL ? info->port : 0;
    atomic_init(&h->running, true);
    if (pthread_create(&h->thread, NULL, httpd_main, h) != 0) {
        snprintf(errstr, errstr_size, "cannot start the metrics thread");
        MHD_stop_daemon(h->daemon);
        httpd_free(h);
        return SAMSA_ERR__IO;
    }
    *out = h;
    return SAMSA_ERR_NONE;
}

int
samsa_httpd_port(const samsa_httpd_t *h)
{
    return h->port;
}

void
samsa_httpd_close(samsa_httpd_t *h)
{
    if (h == NULL) {
        return;
    }
    atomic_store_explicit(&h->running, false, memory_order_relaxed);
    pthread_join(h->thread, NULL);
    MHD_stop_daemon(h->daemon);
    httpd_free(h);
}
