/*
 * server/reqlog.c - see reqlog.h.
 */
#include "server/reqlog.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proto/proto.h"
#include "util/alloc.h"
#include "util/diag.h"

void
samsa_reqlog_init(samsa_reqlog_t *rl, const char *path)
{
    rl->path = samsa_strdup(path);
    atomic_init(&rl->fd, -1);
    rl->owns_fd = false;
    pthread_mutex_init(&rl->lock, NULL);
}

/* Open the file for appending unless open already.  Also the request
 * logger's samsa_diag_enable_fn (ctx is the samsa_reqlog_t). */
static samsa_err_t
reqlog_open(samsa_reqlog_t *rl, char *errstr, size_t errstr_size)
{
    samsa_err_t  err = SAMSA_ERR_NONE;
    int          fd;

    pthread_mutex_lock(&rl->lock);
    if (atomic_load_explicit(&rl->fd, memory_order_acquire) >= 0) {
        /* open already */
    } else if (strcmp(rl->path, "stderr") == 0) {
        atomic_store_explicit(&rl->fd, STDERR_FILENO, memory_order_release);
    } else {
        fd = open(rl->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd < 0) {
            snprintf(errstr, errstr_size,
                     "cannot open the request log '%s' (request.log.file): "
                     "%s", rl->path, strerror(errno));
            err = SAMSA_ERR__IO;
        } else {
            rl->owns_fd = true;
            atomic_store_explicit(&rl->fd, fd, memory_order_release);
        }
    }
    pthread_mutex_unlock(&rl->lock);
    return err;
}

bool
samsa_reqlog_enable_hook(void *ctx, char *errstr, size_t errstr_size)
{
    return reqlog_open(ctx, errstr, errstr_size) == SAMSA_ERR_NONE;
}

void
samsa_reqlog_close(samsa_reqlog_t *rl)
{
    int  fd;

    if (rl->path == NULL) {
        return;                         /* never set up */
    }
    fd = atomic_exchange_explicit(&rl->fd, -1, memory_order_acq_rel);
    if (rl->owns_fd && fd >= 0) {
        close(fd);
    }
    rl->owns_fd = false;
    samsa_free(rl->path);
    rl->path = NULL;
    pthread_mutex_destroy(&rl->lock);
}

/* A bounded appender: once out of room, further text is dropped. */
typedef struct reqlog_out {
    char    *p;
    size_t   len;
    size_t   size;
} reqlog_out_t;

static void reqlog_printf(reqlog_out_t *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
reqlog_printf(reqlog_out_t *o, const char *fmt, ...)
{
    va_list  ap;
    int      n;

    if (o->len + 1 >= o->size) {
        return;
    }
    va_start(ap, fmt);
    n = vsnprintf(o->p + o->len, o->size - o->len, fmt, ap);
    va_end(ap);
    if (n > 0) {
        o->len += (size_t) n < o->size - o->len ? (size_t) n
                                                : o->size - o->len - 1;
    }
}

/* A JSON string literal (null for NULL). */
static void
reqlog_json_str(reqlog_out_t *o, const char *s)
{
    const unsigned char  *c;

    if (s == NULL) {
        reqlog_printf(o, "null");
        return;
    }
    reqlog_printf(o, "\"");
    for (c = (const unsigned char *) s; *c != '\0'; c++) {
        if (*c == '"' || *c == '\\') {
            reqlog_printf(o, "\\%c", *c);
        } else if (*c < 0x20) {
            reqlog_printf(o, "\\u%04x", *c);
        } else {
            reqlog_printf(o, "%c", *c);
        }
    }
    reqlog_printf(o, "\"");
}

static double
reqlog_ms(int64_t from_ns, int64_t to_ns)
{
    if (from_ns == 0 || to_ns == 0 || to_ns < from_ns) {
        return 0.0;
    }
    return (double) (to_ns - from_ns) / 1e6;
}

static void
reqlog_time(reqlog_out_t *o)
{
    struct timespec  ts;
    struct tm        tm;

    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    reqlog_printf(o, "\"%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ\"",
                  tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                  tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
}

/* Format req's line into out (NUL-terminated); returns its length. */
static size_t
reqlog_format(const samsa_req_t *req, char *out, size_t size)
{
    const samsa_proto_api_t  *api = samsa_proto_api_find(req->hdr.ApiKey);
    reqlog_out_t              o = { out, 0, size };

    reqlog_printf(&o, "{\"time\":");
    reqlog_time(&o);
    reqlog_printf(&o, ",\"isForwarded\":false,\"requestHeader\":{"
                      "\"requestApiKey\":%d,\"requestApiVersion\":%d,"
                      "\"correlationId\":%d,\"clientId\":",
                  req->hdr.ApiKey, req->hdr.ApiVersion,
                  req->hdr.CorrelationId);
    reqlog_json_str(&o, req->client_id);
    reqlog_printf(&o, ",\"requestApiKeyName\":");
    reqlog_json_str(&o, api != NULL ? api->enum_name : "UNKNOWN");
    reqlog_printf(&o, "},\"connection\":");
    reqlog_json_str(&o, req->connection);
    reqlog_printf(&o,
                  ",\"totalTimeMs\":%.3f,\"requestQueueTimeMs\":%.3f,"
                  "\"localTimeMs\":%.3f,\"remoteTimeMs\":%.3f,"
                  "\"throttleTimeMs\":%d,\"responseQueueTimeMs\":%.3f,"
                  "\"sendTimeMs\":%.3f,\"securityProtocol\":",
                  reqlog_ms(req->start_ns, req->end_ns),
                  reqlog_ms(req->start_ns, req->dequeue_ns),
                  reqlog_ms(req->dequeue_ns, req->local_done_ns),
                  reqlog_ms(req->local_done_ns, req->resp_done_ns),
                  (int) req->throttle_ms,
                  reqlog_ms(req->resp_done_ns, req->resp_dequeue_ns),
                  reqlog_ms(req->resp_dequeue_ns, req->end_ns));
    reqlog_json_str(&o, req->security_protocol);
    reqlog_printf(&o, ",\"principal\":");
    reqlog_json_str(&o, req->principal);
    reqlog_printf(&o, ",\"listener\":");
    reqlog_json_str(&o, req->listener);
    reqlog_printf(&o, ",\"clientInformation\":{\"softwareName\":");
    reqlog_json_str(&o, req->sw_name);
    reqlog_printf(&o, ",\"softwareVersion\":");
    reqlog_json_str(&o, req->sw_version);
    reqlog_printf(&o, "}}\n");
    if (o.len > 0 && out[o.len - 1] != '\n') {
        out[o.len - 1] = '\n';          /* truncated: still one line */
    }
    return o.len;
}

void
samsa_reqlog_done(void *ctx, const samsa_req_t *req)
{
    samsa_reqlog_t  *rl = ctx;
    char             line[2048];
    size_t           len;
    int              fd;

    if (!samsa_diag_logger_enabled(SAMSA_DIAG_LOGGER_REQUEST,
                                   SAMSA_DIAG_DEBUG)) {
        return;
    }
    fd = atomic_load_explicit(&rl->fd, memory_order_acquire);
    if (fd < 0) {
        return;                         /* its hook failed, or none */
    }
    len = reqlog_format(req, line, sizeof(line));
    if (write(fd, line, len) < 0) {
        samsa_warn("cannot write the request log: %s", strerror(errno));
    }
}
