/*
 * server/metrics.c - see metrics.h.  A scrape takes a snapshot (request
 * stats summed over the network threads, the partitions of the current
 * metadata image with their logs, the groups and their committed offsets)
 * and writes it out as Prometheus text; status_json.c writes the same
 * snapshot for the status page.  Nothing here runs on a request's path.
 */
#include "server/metrics.h"
#include "server/metrics_int.h"

#include <dirent.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "broker/replica.h"
#include "meta/controller/controller.h"
#include "meta/image_stats.h"
#include "proto/proto.h"
#include "util/alloc.h"
#include "util/arena.h"
#include "util/diag.h"
#include "util/time.h"

samsa_metrics_t *
samsa_metrics_new(samsa_broker_t *brk)
{
    samsa_metrics_t  *m = samsa_calloc(1, sizeof(*m));

    m->brk = brk;
    m->start_wall_ms = samsa_wall_ms();
    atomic_init(&m->ready, false);
    pthread_mutex_init(&m->lock, NULL);
    return m;
}

void
samsa_metrics_free(samsa_metrics_t *m)
{
    if (m == NULL) {
        return;
    }
    pthread_mutex_destroy(&m->lock);
    samsa_free(m);
}

void
samsa_metrics_add_server(samsa_metrics_t *m, samsa_sockserver_t *ss,
                         samsa_reqstats_t *rs)
{
    samsa_metrics_server_t  *s;

    samsa_assert(m->nservers < METRICS_MAX_SERVERS);
    s = &m->servers[m->nservers++];
    s->ss = ss;
    s->rs = rs;
    s->win_ns = samsa_now_ns();
    s->net_idle_ratio = s->hdl_idle_ratio = 1.0;
}

void
samsa_metrics_set_ready(samsa_metrics_t *m, bool ready)
{
    atomic_store_explicit(&m->ready, ready, memory_order_release);
}

bool
samsa_metrics_is_ready(const samsa_metrics_t *m)
{
    return atomic_load_explicit(&((samsa_metrics_t *) m)->ready,
                                memory_order_acquire);
}

/* Time the server's network threads and handlers spent idle. */
static void
metrics_idle_sums(samsa_sockserver_t *ss, uint64_t *net, uint64_t *hdl)
{
    samsa_netstats_proc_t  ps;
    size_t                 i;

    *net = *hdl = 0;
    /* every id ever used: removed threads' totals stay, so the sum never
     * goes down when num.network.threads shrinks */
    for (i = 0; i < samsa_sockserver_proc_ids(ss); i++) {
        (void) samsa_sockserver_proc_stats(ss, i, &ps);
        *net += ps.idle_ns;
    }
    /* every slot ever used: removed handlers' totals stay, so the sum
     * never goes down when the pool shrinks */
    for (i = 0; i < samsa_sockserver_handler_slots(ss); i++) {
        *hdl += samsa_sockserver_handler_idle_ns(ss, i);
    }
}

static double
metrics_ratio(uint64_t idle_ns, int64_t span_ns, size_t nthreads)
{
    double  r;

    if (span_ns <= 0 || nthreads == 0) {
        return 1.0;
    }
    r = (double) idle_ns / ((double) span_ns * (double) nthreads);
    return r < 0.0 ? 0.0 : r > 1.0 ? 1.0 : r;
}

/* Kafka's NetworkProcessorAvgIdlePercent and RequestHandlerAvgIdlePercent
 * are rates over a window: here the time since the last window closed,
 * once that is at least a second (scrapes in between reuse the value). */
static void
metrics_update_idle(samsa_metrics_t *m)
{
    samsa_metrics_server_t  *s;
    uint64_t           net, hdl;
    int64_t            now = samsa_now_ns();
    size_t             i;

    pthread_mutex_lock(&m->lock);
    for (i = 0; i < m->nservers; i++) {
        s = &m->servers[i];
        if (now - s->win_ns < METRICS_WINDOW_NS) {
            continue;
        }
        metrics_idle_sums(s->ss, &net, &hdl);
        s->net_idle_ratio = metrics_ratio(net - s->win_net_idle_ns,
                                          now - s->win_ns,
                                          samsa_sockserver_nprocs(s->ss));
        s->hdl_idle_ratio = metrics_ratio(hdl - s->win_hdl_idle_ns,
                                          now - s->win_ns,
                                          samsa_sockserver_nhandlers(s->ss));
        s->win_ns = now;
        s->win_net_idle_ns = net;
        s->win_hdl_idle_ns = hdl;
    }
    pthread_mutex_unlock(&m->lock);
}

/* min.insync.replicas of a topic: its override, else the broker's. */
static int32_t
metrics_min_isr(const samsa_broker_t *b, const samsa_image_topic_t *t)
{
    return samsa_image_topic_min_isr(
        t, (int32_t) samsa_config_int(b->cfg, "min.insync.replicas"));
}

static void
metrics_snap_part(samsa_broker_t *b, const samsa_image_topic_t *t,
                  int32_t i, samsa_metrics_part_t *p)
{
    const samsa_image_partition_t  *pt;
    samsa_plog_t                   *plog;
    int32_t                         j;

    memset(p, 0, sizeof(*p));
    p->topic = t->name;
    p->partition = i;
    pt = &t->partitions[i];
    p->under_min_isr = pt->leader == b->node->node_id
                       && pt->nisr < metrics_min_isr(b, t);
    p->under_replicated = samsa_image_partition_under_replicated(
        pt, b->node->node_id);
    for (j = 0; j < pt->nreplicas && !p->hosted; j++) {
        p->hosted = pt->replicas[j] == b->node->node_id;
    }
    p->hosted = p->hosted || pt->leader == b->node->node_id;
    plog = samsa_logmgr_plog_ref(b->logs, t->name, i);
    if (plog == NULL) {
        return;
    }
    p->has_log = true;
    p->hosted = true;
    p->log_start = samsa_plog_log_start_offset(plog);
    p->log_end = samsa_plog_log_end_offset(plog);
    p->size_bytes = samsa_plog_size_bytes(plog);
    p->segments = samsa_plog_segment_count(plog);
    samsa_plog_stats(plog, &p->st);
    samsa_plog_unref(plog);
}

static void
metrics_snap_parts(samsa_broker_t *b, samsa_metrics_snap_t *snap)
{
    const samsa_image_topic_t  *t;
    size_t                      i, n = 0, cap = 0;
    int32_t                     j;

    snap->img = samsa_meta_image_get(b->meta);
    for (i = 0; i < samsa_image_topic_count(snap->img); i++) {
        cap += (size_t) samsa_image_topic_at(snap->img, i)->npartitions;
    }
    snap->parts = samsa_calloc(cap + 1, sizeof(*snap->parts));
    for (i = 0; i < samsa_image_topic_count(snap->img); i++) {
        t = samsa_image_topic_at(snap->img, i);
        for (j = 0; j < t->npartitions && n < cap; j++) {
            metrics_snap_part(b, t, j, &snap->parts[n++]);
        }
    }
    snap->nparts = n;
}

static int64_t
metrics_log_end(samsa_broker_t *b, const char *topic, int32_t partition)
{
    samsa_plog_t  *plog = samsa_logmgr_plog_ref(b->logs, topic, partition);
    int64_t        end;

    if (plog == NULL) {
        return -1;
    }
    end = samsa_plog_log_end_offset(plog);
    samsa_plog_unref(plog);
    return end;
}

/* Every group and, for each committed partition, its lag. */
static void
metrics_snap_groups(samsa_broker_t *b, samsa_metrics_snap_t *snap)
{
    samsa_grp_offset_t  *offs;
    size_t               i, j, n, cap = 0;
    const char          *gid;
    char                *topic;

    snap->ngroups = samsa_grp_list(b->grp, NULL, 0, &snap->arena,
                                   &snap->groups);
    for (i = 0; i < snap->ngroups; i++) {
        gid = snap->groups[i].group_id;
        offs = NULL;
        n = 0;
        if (samsa_grp_fetch_offsets(b->grp, samsa_slice_cstr(gid), true,
                                    &snap->arena, &offs, &n)
            != SAMSA_ERR_NONE) {
            continue;
        }
        for (j = 0; j < n; j++) {
            if (offs[j].offset < 0) {
                continue;
            }
            if (snap->nlags == cap) {
                cap = cap == 0 ? 64 : cap * 2;
                snap->lags = samsa_realloc(snap->lags,
                                           cap * sizeof(*snap->lags));
            }
            topic = samsa_arena_strndup(&snap->arena, offs[j].topic.ptr,
                                        offs[j].topic.len);
            snap->lags[snap->nlags++] = (samsa_metrics_lag_t) {
                gid, topic, offs[j].partition, offs[j].offset,
                metrics_log_end(b, topic, offs[j].partition),
            };
        }
    }
}

void
samsa_metrics_snap_take(samsa_metrics_t *m, samsa_metrics_snap_t *snap)
{
    size_t  napis = samsa_reqstats_napis();
    size_t  i, j;

    memset(snap, 0, sizeof(*snap));
    samsa_arena_init(&snap->arena);
    snap->apis = samsa_calloc(m->nservers * napis + 1, sizeof(*snap->apis));
    for (i = 0; i < m->nservers; i++) {
        for (j = 0; j < napis; j++) {
            samsa_reqstats_get(m->servers[i].rs, j,
                               &snap->apis[i * napis + j]);
        }
    }
    metrics_update_idle(m);
    if (m->brk != NULL) {
        metrics_snap_parts(m->brk, snap);
        metrics_snap_groups(m->brk, snap);
        samsa_image_stats(snap->img, m->brk->node->node_id,
                          (int32_t) samsa_config_int(m->brk->cfg,
                                                     "min.insync.replicas"),
                          &snap->stats);
        samsa_replmgr_isr_changes(m->brk->repl, &snap->isr_shrinks,
                                  &snap->isr_expands);
        snap->controller_id = samsa_controller_active_id(m->brk->ctrl);
        snap->active_controller =
            snap->controller_id == m->brk->node->node_id;
    }
}

void
samsa_metrics_snap_free(samsa_metrics_snap_t *snap)
{
    samsa_image_put(snap->img);
    samsa_free(snap->parts);
    samsa_free(snap->lags);
    samsa_free(snap->apis);
    samsa_arena_fini(&snap->arena);
}

/* ---- process ------------------------------------------------------------- */

void
samsa_metrics_proc_read(samsa_metrics_proc_t *pr)
{
    struct rusage   ru;
    struct rlimit   rl;
    long            pages_total = 0, pages_rss = 0;
    FILE           *f;
    DIR            *d;
    struct dirent  *e;
    long            psize = sysconf(_SC_PAGESIZE);

    memset(pr, 0, sizeof(*pr));
    f = fopen("/proc/self/statm", "r");
    if (f != NULL) {
        if (fscanf(f, "%ld %ld", &pages_total, &pages_rss) != 2) {
            pages_total = pages_rss = 0;
        }
        fclose(f);
    }
    pr->rss_bytes = (int64_t) pages_rss * psize;
    pr->vsize_bytes = (int64_t) pages_total * psize;
    if (getrusage(RUSAGE_SELF, &ru) == 0) {
        pr->cpu_seconds = (double) ru.ru_utime.tv_sec
                          + (double) ru.ru_utime.tv_usec / 1e6
                          + (double) ru.ru_stime.tv_sec
                          + (double) ru.ru_stime.tv_usec / 1e6;
    }
    d = opendir("/proc/self/fd");
    if (d != NULL) {
        while ((e = readdir(d)) != NULL) {
            pr->open_fds += e->d_name[0] != '.';
        }
        closedir(d);
        pr->open_fds--;             /* opendir's own descriptor */
    }
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        pr->max_fds = rl.rlim_cur == RLIM_INFINITY ? -1
                                                   : (int64_t) rl.rlim_cur;
    }
}

/* ---- text helpers -------------------------------------------------------- */

void
samsa_mx_printf(samsa_buf_t *out, const char *fmt, ...)
{
    va_list  ap;
    int      n;
    char    *p;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n <= 0) {
        return;
    }
    p = (char *) samsa_buf_reserve(out, (size_t) n + 1);
    va_start(ap, fmt);
    vsnprintf(p, (size_t) n + 1, fmt, ap);
    va_end(ap);
    out->len += (size_t) n;
}

/* Length of the valid UTF-8 sequence at s (1-4), or 0 if the bytes there
 * are not one (a group id is whatever bytes a client sent). */
size_t
samsa_mx_utf8_len(const unsigned char *s)
{
    size_t  n, i;

    if (s[0] < 0x80) {
        return 1;
    }
    n = s[0] >= 0xc2 && s[0] <= 0xdf   ? 2
        : s[0] >= 0xe0 && s[0] <= 0xef ? 3
        : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4
                                       : 0;
    for (i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) {
            return 0;
        }
    }
    if ((n == 3 && s[0] == 0xe0 && s[1] < 0xa0)
        || (n == 3 && s[0] == 0xed && s[1] >= 0xa0)
        || (n == 4 && s[0] == 0xf0 && s[1] < 0x90)
        || (n == 4 && s[0] == 0xf4 && s[1] >= 0x90)) {
        return 0;                   /* overlong, surrogate, > U+10FFFF */
    }
    return n;
}

/* A label value: backslash, double quote and newline escaped; bytes that
 * are not UTF-8 written as the text \xHH, so the exposition stays valid
 * UTF-8 whatever a client named its group. */
static void
mx_label(samsa_buf_t *out, const char *str)
{
    const unsigned char  *s = (const unsigned char *) str;
    size_t                n;

    while (*s != '\0') {
        n = samsa_mx_utf8_len(s);
        if (n == 0) {
            samsa_mx_printf(out, "\\\\x%02x", *s);
            s++;
        } else if (*s == '\\' || *s == '"') {
            samsa_mx_printf(out, "\\%c", *s);
            s++;
        } else if (*s == '\n') {
            samsa_mx_printf(out, "\\n");
            s++;
        } else {
            samsa_buf_append(out, s, n);
            s += n;
        }
    }
}

static void
mx_family(samsa_buf_t *out, const char *name, const char *type,
          const char *help)
{
    samsa_mx_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A double the way Prometheus reads it. */
void
samsa_mx_double(samsa_buf_t *out, double v)
{
    samsa_mx_printf(out, "%.15g", v);
}

/* ---- Prometheus: requests ------------------------------------------------ */

static const char *const  mx_phase_help[SAMSA_PHASE_COUNT] = {
    "Time a request waited in the request queue (RequestQueueTimeMs).",
    "Time a handler spent on a request (LocalTimeMs).",
    "Time a request waited in a purgatory after its handler "
    "(RemoteTimeMs).",
    "Time a response waited in its network thread's queue "
    "(ResponseQueueTimeMs).",
    "Time taken to write a response (ResponseSendTimeMs).",
    "Time from reading a request to writing its response (TotalTimeMs).",
};

const char *
samsa_mx_api_name(size_t i)
{
    return samsa_proto_apis[i].name;
}

static void
mx_requests_total(samsa_metrics_t *m, samsa_metrics_snap_t *snap, samsa_buf_t *out)
{
    size_t                       napis = samsa_reqstats_napis(), i, j;
    const samsa_reqstats_api_t  *a;

    mx_family(out, "samsa_requests_total", "counter",
              "Requests completed, per API, all versions (Kafka's "
              "RequestsPerSec).");
    for (i = 0; i < m->nservers; i++) {
        for (j = 0; j < napis; j++) {
            a = &snap->apis[i * napis + j];
            if (a->requests > 0) {
                samsa_mx_printf(out, "samsa_requests_total{server=\"%s\","
                          "request=\"%s\"} %llu\n",
                          samsa_reqstats_kind(m->servers[i].rs),
                          samsa_mx_api_name(j), (unsigned long long) a->requests);
            }
        }
    }
}

static void
mx_errors_one(samsa_buf_t *out, const char *kind, size_t api,
              const char *error, uint64_t n)
{
    if (n > 0) {
        samsa_mx_printf(out, "samsa_request_errors_total{server=\"%s\","
                  "request=\"%s\",error=\"%s\"} %llu\n", kind,
                  samsa_mx_api_name(api), error, (unsigned long long) n);
    }
}

static void
mx_errors(samsa_metrics_t *m, samsa_metrics_snap_t *snap, samsa_buf_t *out)
{
    size_t                       napis = samsa_reqstats_napis(), i, j, k;
    const samsa_reqstats_api_t  *a;
    const char                  *kind;

    mx_family(out, "samsa_request_errors_total", "counter",
              "Error codes in responses, per API and code, NONE included: "
              "every ErrorCode field counts (Kafka's ErrorsPerSec).");
    for (i = 0; i < m->nservers; i++) {
        kind = samsa_reqstats_kind(m->servers[i].rs);
        for (j = 0; j < napis; j++) {
            a = &snap->apis[i * napis + j];
            for (k = 0; k < SAMSA_REQSTATS_ERR_MAX + 2; k++) {
                mx_errors_one(out, kind, j,
                              samsa_err_name((samsa_err_t) ((int) k - 1)),
                              a->errors[k]);
            }
            mx_errors_one(out, kind, j, "OTHER", a->errors_other);
        }
    }
}

static void
mx_histogram_one(samsa_buf_t *out, const char *name, const char *kind,
                 size_t api, const uint64_t *buckets, uint64_t sum_ns)
{
    uint64_t  cum = 0;
    size_t    k;

    for (k = 0; k <= SAMSA_REQSTATS_NBOUNDS; k++) {
        cum += buckets[k];
        samsa_mx_printf(out, "%s_bucket{server=\"%s\",request=\"%s\",le=\"", name,
                  kind, samsa_mx_api_name(api));
        if (k < SAMSA_REQSTATS_NBOUNDS) {
            samsa_mx_double(out, (double) samsa_reqstats_bounds_us[k] / 1e6);
        } else {
            samsa_mx_printf(out, "+Inf");
        }
        samsa_mx_printf(out, "\"} %llu\n", (unsigned long long) cum);
    }
    samsa_mx_printf(out, "%s_sum{server=\"%s\",request=\"%s\"} ", name, kind,
              samsa_mx_api_name(api));
    samsa_mx_double(out, (double) sum_ns / 1e9);
    samsa_mx_printf(out, "\n%s_count{server=\"%s\",request=\"%s\"} %llu\n", name,
              kind, samsa_mx_api_name(api), (unsigned long long) cum);
}

static void
mx_histograms(samsa_metrics_t *m, samsa_metrics_snap_t *snap, samsa_buf_t *out)
{
    size_t                       napis = samsa_reqstats_napis(), i, j, ph;
    const samsa_reqstats_api_t  *a;
    const char                  *name;

    for (ph = 0; ph < SAMSA_PHASE_COUNT; ph++) {
        name = samsa_reqstats_phase_name((samsa_reqstats_phase_t) ph);
        mx_family(out, name, "histogram", mx_phase_help[ph]);
        for (i = 0; i < m->nservers; i++) {
            for (j = 0; j < napis; j++) {
                a = &snap->apis[i * napis + j];
                if (a->requests > 0) {
                    mx_histogram_one(out, name,
                                     samsa_reqstats_kind(m->servers[i].rs),
                                     j, a->buckets[ph], a->sum_ns[ph]);
                }
            }
        }
    }
}

/* ---- Prometheus: socket servers ------------------------------------------ */

/* One sample of name per network thread of each server, labelled with
 * its server, listener and processor: value of its stats. */
static void
mx_proc_samples(samsa_metrics_t *m, samsa_buf_t *out, const char *name,
                double (*value)(const samsa_netstats_proc_t *ps))
{
    samsa_netstats_proc_t  ps;
    size_t                 i, j;
    const char            *kind;

    for (i = 0; i < m->nservers; i++) {
        kind = samsa_reqstats_kind(m->servers[i].rs);
        for (j = 0; j < samsa_sockserver_proc_ids(m->servers[i].ss); j++) {
            if (!samsa_sockserver_proc_stats(m->servers[i].ss, j, &ps)) {
                continue;               /* removed: its series goes */
            }
            samsa_mx_printf(out, "%s{server=\"%s\",listener=\"%s\","
                      "processor=\"%u\"} ", name, kind, ps.listener,
                      (unsigned) ps.id);
            samsa_mx_double(out, value(&ps));
            samsa_mx_printf(out, "\n");
        }
    }
}

static double
mx_proc_response_queue_size(const samsa_netstats_proc_t *ps)
{
    return (double) ps->response_queue_size;
}

static double
mx_proc_idle_seconds(const samsa_netstats_proc_t *ps)
{
    return (double) ps->idle_ns / 1e9;
}

/* One sample of name per server: value of its socket server. */
static void
mx_server_samples(samsa_metrics_t *m, samsa_buf_t *out, const char *name,
                  size_t (*value)(samsa_sockserver_t *ss))
{
    size_t  i;

    for (i = 0; i < m->nservers; i++) {
        samsa_mx_printf(out, "%s{server=\"%s\"} %zu\n", name,
                  samsa_reqstats_kind(m->servers[i].rs),
                  value(m->servers[i].ss));
    }
}

static void
mx_queues(samsa_metrics_t *m, samsa_buf_t *out)
{
    mx_family(out, "samsa_request_queue_size", "gauge",
              "Requests waiting for a handler (RequestQueueSize).");
    mx_server_samples(m, out, "samsa_request_queue_size",
                      samsa_sockserver_request_queue_size);
    mx_family(out, "samsa_request_queue_size_max", "gauge",
              "The most requests that waited for a handler at once since "
              "start (at most queued.max.requests).");
    mx_server_samples(m, out, "samsa_request_queue_size_max",
                      samsa_sockserver_request_queue_max_size);
    mx_family(out, "samsa_response_queue_size", "gauge",
              "Responses waiting for their network thread "
              "(ResponseQueueSize, per processor).");
    mx_proc_samples(m, out, "samsa_response_queue_size",
                    mx_proc_response_queue_size);
}

/* One sample of the gauge name per server: the idle ratio of its handler
 * pool (handlers) or of its network threads, over the last window.
 * @locks takes m->lock for each ratio */
static void
mx_idle_ratios(samsa_metrics_t *m, samsa_buf_t *out, const char *name,
               bool handlers)
{
    size_t  i;

    for (i = 0; i < m->nservers; i++) {
        samsa_mx_printf(out, "%s{server=\"%s\"} ", name,
                  samsa_reqstats_kind(m->servers[i].rs));
        pthread_mutex_lock(&m->lock);
        samsa_mx_double(out, handlers ? m->servers[i].hdl_idle_ratio
                                : m->servers[i].net_idle_ratio);
        pthread_mutex_unlock(&m->lock);
        samsa_mx_printf(out, "\n");
    }
}

static void
mx_network_idle(samsa_metrics_t *m, samsa_buf_t *out)
{
    mx_family(out, "samsa_network_processor_idle_seconds_total", "counter",
              "Time each network thread spent waiting in epoll_wait.");
    mx_proc_samples(m, out, "samsa_network_processor_idle_seconds_total",
                    mx_proc_idle_seconds);
    mx_family(out, "samsa_network_processor_avg_idle_percent", "gauge",
              "Average idle fraction (0..1) of the network threads over the "
              "last window of at least 1 s (NetworkProcessorAvgIdlePercent).");
    mx_idle_ratios(m, out, "samsa_network_processor_avg_idle_percent", false);
}

static void
mx_handler_idle(samsa_metrics_t *m, samsa_buf_t *out)
{
    size_t       i, j;
    const char  *kind;

    mx_family(out, "samsa_request_handler_idle_seconds_total", "counter",
              "Time each request handler thread spent waiting for a "
              "request.");
    for (i = 0; i < m->nservers; i++) {
        kind = samsa_reqstats_kind(m->servers[i].rs);
        for (j = 0; j < samsa_sockserver_nhandlers(m->servers[i].ss); j++) {
            samsa_mx_printf(out, "samsa_request_handler_idle_seconds_total{"
                      "server=\"%s\",handler=\"%zu\"} ", kind, j);
            samsa_mx_double(out, (double) samsa_sockserver_handler_idle_ns(
                               m->servers[i].ss, j) / 1e9);
            samsa_mx_printf(out, "\n");
        }
    }
    mx_family(out, "samsa_request_handler_avg_idle_percent", "gauge",
              "Average idle fraction (0..1) of a handler pool over the last "
              "window of at least 1 s (RequestHandlerAvgIdlePercent).");
    mx_idle_ratios(m, out, "samsa_request_handler_avg_idle_percent", true);
}

/* A listener's connection counts, summed over its processors. */
typedef struct mx_listener_sums {
    int64_t   open;         /* connections open */
    uint64_t  created;      /* adopted since start */
    int64_t   mem_muted;    /* muted for memory now */
    uint64_t  mem_mutes;    /* muted for memory since start */
    uint64_t  auth_ok;      /* SASL successes since start */
    uint64_t  auth_failed;  /* SASL failures since start */
} mx_listener_sums_t;

static void
mx_listener_sums(samsa_sockserver_t *ss, const char *listener,
                 mx_listener_sums_t *sums)
{
    samsa_netstats_proc_t  ps;
    size_t                 j;

    memset(sums, 0, sizeof(*sums));
    /* every id: a removed thread's connections are closed (0 open, none
     * muted) and its counts stay in the totals */
    for (j = 0; j < samsa_sockserver_proc_ids(ss); j++) {
        (void) samsa_sockserver_proc_stats(ss, j, &ps);
        if (strcmp(ps.listener, listener) == 0) {
            sums->open += ps.connections;
            sums->created += ps.connections_created;
            sums->mem_muted += ps.mem_muted;
            sums->mem_mutes += ps.mem_mutes;
            sums->auth_ok += ps.auth_ok;
            sums->auth_failed += ps.auth_failed;
        }
    }
}

/* Kafka's successful-authentication-total / failed-authentication-total
 * (selector metrics), per listener: SASL exchanges only. */
static void
mx_authentications(samsa_metrics_t *m, samsa_buf_t *out, bool ok)
{
    samsa_sockserver_t  *ss;
    const char          *l;
    mx_listener_sums_t   sums;
    size_t               i, j;

    mx_family(out, ok ? "samsa_successful_authentication_total"
                      : "samsa_failed_authentication_total", "counter",
              ok ? "SASL authentications that succeeded, per listener "
                   "(successful-authentication-total)."
                 : "SASL authentications that failed, per listener "
                   "(failed-authentication-total).");
    for (i = 0; i < m->nservers; i++) {
        ss = m->servers[i].ss;
        for (j = 0; j < samsa_sockserver_nlisteners(ss); j++) {
            l = samsa_sockserver_listener_name(ss, j);
            mx_listener_sums(ss, l, &sums);
            samsa_mx_printf(out, "%s{server=\"%s\",listener=\"%s\"} %llu\n",
                      ok ? "samsa_successful_authentication_total"
                         : "samsa_failed_authentication_total",
                      samsa_reqstats_kind(m->servers[i].rs), l,
                      (unsigned long long) (ok ? sums.auth_ok
                                               : sums.auth_failed));
        }
    }
}

static void
mx_connections(samsa_metrics_t *m, samsa_buf_t *out, bool created)
{
    samsa_sockserver_t  *ss;
    const char          *l;
    mx_listener_sums_t   sums;
    size_t               i, j;

    if (created) {
        mx_family(out, "samsa_connections_created_total", "counter",
                  "Connections accepted, per listener "
                  "(connection-creation-total).");
    } else {
        mx_family(out, "samsa_connections", "gauge",
                  "Connections open, per listener (connection-count).");
    }
    for (i = 0; i < m->nservers; i++) {
        ss = m->servers[i].ss;
        for (j = 0; j < samsa_sockserver_nlisteners(ss); j++) {
            l = samsa_sockserver_listener_name(ss, j);
            mx_listener_sums(ss, l, &sums);
            if (created) {
                samsa_mx_printf(out, "samsa_connections_created_total{server=\"%s\","
                          "listener=\"%s\"} %llu\n",
                          samsa_reqstats_kind(m->servers[i].rs), l,
                          (unsigned long long) sums.created);
            } else {
                samsa_mx_printf(out, "samsa_connections{server=\"%s\","
                          "listener=\"%s\"} %lld\n",
                          samsa_reqstats_kind(m->servers[i].rs), l,
                          (long long) sums.open);
            }
        }
    }
}

/* The request memory pool (queued.max.request.bytes) of each server:
 * Kafka's MemoryPoolAvailable and MemoryPoolUsed, the most used at once,
 * and the connections muted because it was exhausted (per listener: now,
 * and how many times since start). */
static void
mx_memory_pool(samsa_metrics_t *m, samsa_buf_t *out)
{
    static const char *const  names[3] = {
        "samsa_memory_pool_available_bytes", "samsa_memory_pool_used_bytes",
        "samsa_memory_pool_used_bytes_max",
    };
    static const char *const  helps[3] = {
        "Request bytes the memory pool has left, queued.max.request.bytes "
        "minus those used; +Inf when unlimited (MemoryPoolAvailable).",
        "Request bytes taken from the memory pool now (MemoryPoolUsed).",
        "The most request bytes taken from the memory pool at once since "
        "start.",
    };
    samsa_sockserver_t  *ss;
    const char          *kind, *l;
    mx_listener_sums_t   sums;
    int64_t              cap, used, max_used, v;
    size_t               f, i, j;

    for (f = 0; f < 3; f++) {
        mx_family(out, names[f], "gauge", helps[f]);
        for (i = 0; i < m->nservers; i++) {
            samsa_sockserver_memory_pool(m->servers[i].ss, &cap, &used,
                                         &max_used);
            kind = samsa_reqstats_kind(m->servers[i].rs);
            if (f == 0 && cap <= 0) {
                samsa_mx_printf(out, "%s{server=\"%s\"} +Inf\n", names[f], kind);
                continue;
            }
            v = f == 0 ? cap - used : f == 1 ? used : max_used;
            samsa_mx_printf(out, "%s{server=\"%s\"} %lld\n", names[f], kind,
                      (long long) v);
        }
    }
    for (f = 0; f < 2; f++) {
        if (f == 0) {
            mx_family(out, "samsa_memory_pool_muted_connections", "gauge",
                      "Connections muted (not read) now because the memory "
                      "pool is exhausted, per listener.");
        } else {
            mx_family(out, "samsa_memory_pool_muted_total", "counter",
                      "Times a connection was muted because the memory "
                      "pool was exhausted, per listener.");
        }
        for (i = 0; i < m->nservers; i++) {
            ss = m->servers[i].ss;
            kind = samsa_reqstats_kind(m->servers[i].rs);
            for (j = 0; j < samsa_sockserver_nlisteners(ss); j++) {
                l = samsa_sockserver_listener_name(ss, j);
                mx_listener_sums(ss, l, &sums);
                if (f == 0) {
                    samsa_mx_printf(out, "samsa_memory_pool_muted_connections{"
                              "server=\"%s\",listener=\"%s\"} %lld\n", kind,
                              l, (long long) sums.mem_muted);
                } else {
                    samsa_mx_printf(out, "samsa_memory_pool_muted_total{"
                              "server=\"%s\",listener=\"%s\"} %llu\n", kind,
                              l, (unsigned long long) sums.mem_mutes);
                }
            }
        }
    }
}

/* Connection creation rate throttles (net/server/connquota.h), per server. */
static void
mx_conn_throttles(samsa_metrics_t *m, samsa_buf_t *out, bool ip)
{
    const char  *name = ip ? "samsa_connection_ip_throttled_total"
                           : "samsa_connection_accept_throttled_total";
    uint64_t     waits, ips;
    size_t       i;

    mx_family(out, name, "counter",
              ip ? "Connections closed over their IP's "
                   "connection_creation_rate quota."
                 : "Accepts delayed by max.connection.creation.rate.");
    for (i = 0; i < m->nservers; i++) {
        samsa_sockserver_conn_throttles(m->servers[i].ss, &waits, &ips);
        samsa_mx_printf(out, "%s{server=\"%s\"} %llu\n", name,
                  samsa_reqstats_kind(m->servers[i].rs),
                  (unsigned long long) (ip ? ips : waits));
    }
}

/* Kafka's connection-accept-throttle-time per listener, as a summary
 * without quantiles: the throttle times summed and their count (Kafka's
 * avg is _sum / _count; its max is not kept). */
static void
mx_accept_throttle_time(samsa_metrics_t *m, samsa_buf_t *out)
{
    samsa_sockserver_t  *ss;
    const char          *server;
    uint64_t             ms, n;
    size_t               i, j;

    mx_family(out, "samsa_connection_accept_throttle_time_seconds", "summary",
              "Time accepts waited for a connection creation rate, per "
              "listener (connection-accept-throttle-time).");
    for (i = 0; i < m->nservers; i++) {
        ss = m->servers[i].ss;
        server = samsa_reqstats_kind(m->servers[i].rs);
        for (j = 0; j < samsa_sockserver_nlisteners(ss); j++) {
            samsa_sockserver_accept_throttles(ss, j, &ms, &n);
            samsa_mx_printf(out, "samsa_connection_accept_throttle_time_seconds_sum"
                      "{server=\"%s\",listener=\"%s\"} %.3f\n", server,
                      samsa_sockserver_listener_name(ss, j),
                      (double) ms / 1000.0);
            samsa_mx_printf(out, "samsa_connection_accept_throttle_time_seconds_"
                      "count{server=\"%s\",listener=\"%s\"} %llu\n", server,
                      samsa_sockserver_listener_name(ss, j),
                      (unsigned long long) n);
        }
    }
}

/* ---- Prometheus: topics, partitions, purgatories, groups ----------------- */

typedef enum mx_topic_field {
    MX_MESSAGES_IN,
    MX_BYTES_IN,
    MX_BYTES_OUT,
} mx_topic_field_t;

static uint64_t
mx_topic_value(const samsa_metrics_part_t *p, mx_topic_field_t f)
{
    switch (f) {
    case MX_MESSAGES_IN:
        return p->st.messages_in;
    case MX_BYTES_IN:
        return p->st.bytes_in;
    case MX_BYTES_OUT:
        return p->st.bytes_out;
    }
    return 0;
}

/* One per-topic counter: the sum over its partitions (which the snapshot
 * holds together, in topic order). */
static void
mx_topic_counter(samsa_metrics_snap_t *snap, samsa_buf_t *out, const char *name,
                 const char *help, mx_topic_field_t f)
{
    size_t    i = 0, j;
    uint64_t  sum;

    mx_family(out, name, "counter", help);
    while (i < snap->nparts) {
        sum = 0;
        for (j = i; j < snap->nparts
                    && strcmp(snap->parts[j].topic, snap->parts[i].topic) == 0;
             j++) {
            sum += mx_topic_value(&snap->parts[j], f);
        }
        samsa_mx_printf(out, "%s{topic=\"", name);
        mx_label(out, snap->parts[i].topic);
        samsa_mx_printf(out, "\"} %llu\n", (unsigned long long) sum);
        i = j;
    }
}

static void
mx_part_gauge(samsa_metrics_snap_t *snap, samsa_buf_t *out, const char *name,
              const char *help, size_t field)
{
    const samsa_metrics_part_t  *p;
    int64_t                v;
    size_t                 i;

    mx_family(out, name, "gauge", help);
    for (i = 0; i < snap->nparts; i++) {
        p = &snap->parts[i];
        if (field >= 4 ? !p->hosted : !p->has_log) {
            continue;
        }
        v = field == 0   ? p->log_start
            : field == 1 ? p->log_end
            : field == 2 ? p->size_bytes
            : field == 3 ? (int64_t) p->segments
            : field == 4 ? (int64_t) p->under_min_isr
                         : (int64_t) p->under_replicated;
        samsa_mx_printf(out, "%s{topic=\"", name);
        mx_label(out, p->topic);
        samsa_mx_printf(out, "\",partition=\"%d\"} %lld\n", (int) p->partition,
                  (long long) v);
    }
}

static void
mx_partitions(samsa_metrics_snap_t *snap, samsa_buf_t *out)
{
    mx_topic_counter(snap, out, "samsa_topic_messages_in_total",
                     "Records appended for producers, per topic "
                     "(MessagesInPerSec).", MX_MESSAGES_IN);
    mx_topic_counter(snap, out, "samsa_topic_bytes_in_total",
                     "Record-batch bytes appended for producers, per topic "
                     "(BytesInPerSec).", MX_BYTES_IN);
    mx_topic_counter(snap, out, "samsa_topic_bytes_out_total",
                     "Record bytes sent to fetchers, per topic "
                     "(BytesOutPerSec).", MX_BYTES_OUT);
    mx_part_gauge(snap, out, "samsa_log_start_offset",
                  "First offset of the partition's log (LogStartOffset).", 0);
    mx_part_gauge(snap, out, "samsa_log_end_offset",
                  "Next offset of the partition's log (LogEndOffset).", 1);
    mx_part_gauge(snap, out, "samsa_log_size_bytes",
                  "Bytes of the partition's segments (Size).", 2);
    mx_part_gauge(snap, out, "samsa_log_segments",
                  "Segments of the partition's log (NumLogSegments).", 3);
    mx_part_gauge(snap, out, "samsa_partition_under_min_isr",
                  "1 when this node leads the partition and its ISR is "
                  "smaller than its min.insync.replicas (UnderMinIsr).", 4);
    mx_part_gauge(snap, out, "samsa_partition_under_replicated",
                  "1 when this node leads the partition and its ISR is "
                  "smaller than its replicas (UnderReplicated).", 5);
}

static void
mx_count(samsa_buf_t *out, const char *name, const char *help, uint64_t v,
         bool counter)
{
    mx_family(out, name, counter ? "counter" : "gauge", help);
    samsa_mx_printf(out, "%s %llu\n", name, (unsigned long long) v);
}

/* Kafka's ReplicaManager gauges for this node, and its controller gauges
 * (reported by the active controller, 0 on the others, as Kafka's
 * inactive controllers report them). */
static void
mx_replication(samsa_metrics_snap_t *snap, samsa_buf_t *out, bool controller)
{
    const samsa_image_stats_t  *st = &snap->stats;
    bool                        on = snap->active_controller;

    mx_count(out, "samsa_partitions", "Partitions with a replica on this "
             "node (PartitionCount).", st->partitions, false);
    mx_count(out, "samsa_leader_partitions", "Partitions this node leads "
             "(LeaderCount).", st->leaders, false);
    mx_count(out, "samsa_under_replicated_partitions", "Partitions this "
             "node leads whose ISR is smaller than their replicas "
             "(UnderReplicatedPartitions).", st->under_replicated, false);
    mx_count(out, "samsa_under_min_isr_partitions", "Partitions this node "
             "leads whose ISR is smaller than their min.insync.replicas "
             "(UnderMinIsrPartitionCount).", st->under_min_isr, false);
    mx_count(out, "samsa_at_min_isr_partitions", "Partitions this node "
             "leads whose ISR is exactly their min.insync.replicas "
             "(AtMinIsrPartitionCount).", st->at_min_isr, false);
    mx_count(out, "samsa_isr_shrinks_total", "ISR shrinks of partitions "
             "this node leads, committed by the controller "
             "(IsrShrinksPerSec).", snap->isr_shrinks, true);
    mx_count(out, "samsa_isr_expands_total", "ISR expansions of partitions "
             "this node leads, committed by the controller "
             "(IsrExpandsPerSec).", snap->isr_expands, true);
    if (!controller) {
        return;
    }
    mx_count(out, "samsa_active_controller_count", "1 on the active "
             "controller, else 0 (ActiveControllerCount).", on, false);
    mx_count(out, "samsa_offline_partitions", "Partitions without a leader "
             "(OfflinePartitionsCount; active controller only).",
             on ? st->offline : 0, false);
    mx_count(out, "samsa_global_topics", "Topics in the cluster "
             "(GlobalTopicCount; active controller only).",
             on ? st->topics : 0, false);
    mx_count(out, "samsa_global_partitions", "Partitions in the cluster "
             "(GlobalPartitionCount; active controller only).",
             on ? st->global_partitions : 0, false);
    mx_count(out, "samsa_preferred_replica_imbalance", "Partitions led by "
             "another than their first replica "
             "(PreferredReplicaImbalanceCount; active controller only).",
             on ? st->preferred_imbalance : 0, false);
    mx_count(out, "samsa_fenced_brokers", "Registered brokers that are "
             "fenced (FencedBrokerCount; active controller only).",
             on ? st->fenced_brokers : 0, false);
    mx_count(out, "samsa_active_brokers", "Registered brokers that are not "
             "fenced (ActiveBrokerCount; active controller only).",
             on ? st->active_brokers : 0, false);
}

/* The log layer's descriptor cache (log/fdcache.h, STORAGE.md). */
static void
mx_log_files(samsa_metrics_t *m, samsa_buf_t *out)
{
    samsa_logmgr_stats_t  st;

    samsa_logmgr_stats(m->brk->logs, &st);
    mx_family(out, "samsa_log_open_files", "gauge",
              "Descriptors the log layer holds open for segment and index "
              "files (the descriptor cache).");
    samsa_mx_printf(out, "samsa_log_open_files %lld\n",
              (long long) st.open_files);
    mx_family(out, "samsa_log_open_files_max", "gauge",
              "The descriptor cache's budget (log.open.files.max).");
    samsa_mx_printf(out, "samsa_log_open_files_max %lld\n",
              (long long) st.open_files_max);
    mx_family(out, "samsa_log_fd_evictions_total", "counter",
              "Segments whose files were closed to stay within "
              "log.open.files.max.");
    samsa_mx_printf(out, "samsa_log_fd_evictions_total %llu\n",
              (unsigned long long) st.fd_evictions);
    mx_family(out, "samsa_log_fd_exhausted_total", "counter",
              "Requests refused because no file descriptor was left "
              "(EMFILE/ENFILE), even after closing idle log files.");
    samsa_mx_printf(out, "samsa_log_fd_exhausted_total %llu\n",
              (unsigned long long) st.fd_exhausted);
}

static void
mx_purgatories(samsa_metrics_t *m, samsa_buf_t *out)
{
    samsa_purgatory_t  *p[2] = { m->brk->produce, m->brk->fetch };
    const char         *names[2] = { "Produce", "Fetch" };
    size_t              i;

    mx_family(out, "samsa_purgatory_size", "gauge",
              "Entries in a purgatory's watch lists (PurgatorySize).");
    for (i = 0; i < 2; i++) {
        samsa_mx_printf(out, "samsa_purgatory_size{delayed_operation=\"%s\"} %zu\n",
                  names[i], samsa_purgatory_watched(p[i]));
    }
    mx_family(out, "samsa_purgatory_delayed_operations", "gauge",
              "Operations waiting on their timer (NumDelayedOperations).");
    for (i = 0; i < 2; i++) {
        samsa_mx_printf(out, "samsa_purgatory_delayed_operations{"
                  "delayed_operation=\"%s\"} %zu\n", names[i],
                  samsa_purgatory_delayed(p[i]));
    }
}

/* ---- Prometheus: client quotas ------------------------------------------- */

typedef struct mx_quota_list {
    samsa_quota_stat_t  *v;
    char               **strs;          /* user, client id: owned copies */
    size_t               n;
    size_t               cap;
} mx_quota_list_t;

static void
mx_quota_collect(void *ctx, const samsa_quota_stat_t *st)
{
    mx_quota_list_t  *l = ctx;

    if (l->n == l->cap) {
        l->cap = l->cap * 2 + 8;
        l->v = samsa_realloc(l->v, l->cap * sizeof(*l->v));
        l->strs = samsa_realloc(l->strs, 2 * l->cap * sizeof(*l->strs));
    }
    l->v[l->n] = *st;
    l->strs[2 * l->n] = samsa_strdup(st->user);
    l->strs[2 * l->n + 1] = samsa_strdup(st->client_id);
    l->v[l->n].user = l->strs[2 * l->n];
    l->v[l->n].client_id = l->strs[2 * l->n + 1];
    l->n++;
}

/* name{quota_type="...",user="...",client_id="..."}, the controller
 * mutation series without quota_type. */
static void
mx_quota_labels(samsa_buf_t *out, const char *name,
                const samsa_quota_stat_t *st)
{
    if (st->type == SAMSA_QUOTA_MUTATION) {
        samsa_mx_printf(out, "%s{user=\"", name);
    } else {
        samsa_mx_printf(out, "%s{quota_type=\"%s\",user=\"", name,
                  samsa_quota_type_name(st->type));
    }
    mx_label(out, st->user);
    samsa_mx_printf(out, "\",client_id=\"");
    mx_label(out, st->client_id);
    samsa_mx_printf(out, "\"} ");
}

#define MX_QT(t)        (1u << (t))
#define MX_QT_CLIENT    (MX_QT(SAMSA_QUOTA_PRODUCE) | MX_QT(SAMSA_QUOTA_FETCH) \
                         | MX_QT(SAMSA_QUOTA_REQUEST))

/* What a quota family shows of a sensor. */
typedef enum mx_quota_value {
    MX_QV_RATE,
    MX_QV_TOKENS,
    MX_QV_QUOTA,
    MX_QV_THROTTLE_S,
    MX_QV_THROTTLED,
} mx_quota_value_t;

/* Kafka's per user/client-id quota metrics, one series per sensor of the
 * family's types: the client quotas' (byte-rate, request-time,
 * throttle-time; none until a quota of the type exists) and the
 * ControllerMutation ones (mutation-rate, tokens, throttle-time; none
 * until a controller_mutation_rate has applied to a request). */
static const struct {
    const char        *name, *type, *help;
    unsigned           types;           /* MX_QT bits */
    mx_quota_value_t   value;
} mx_quota_fams[] = {
    { "samsa_client_quota_byte_rate", "gauge",
      "Bytes per second a quota entity produced or fetched, over the quota "
      "windows (byte-rate).",
      MX_QT(SAMSA_QUOTA_PRODUCE) | MX_QT(SAMSA_QUOTA_FETCH), MX_QV_RATE },
    { "samsa_client_quota_request_time", "gauge",
      "Handler time of the entity's requests, in percent of one thread, "
      "over the quota windows (request-time).",
      MX_QT(SAMSA_QUOTA_REQUEST), MX_QV_RATE },
    { "samsa_client_quota_limit", "gauge",
      "The quota applied to the entity, bytes per second (Request: percent "
      "of one thread); 0: none.", MX_QT_CLIENT, MX_QV_QUOTA },
    { "samsa_client_quota_throttle_time_seconds_total", "counter",
      "Throttle time given to the entity's requests (throttle-time).",
      MX_QT_CLIENT, MX_QV_THROTTLE_S },
    { "samsa_client_quota_throttled_requests_total", "counter",
      "Requests of the entity that were throttled.", MX_QT_CLIENT,
      MX_QV_THROTTLED },
    { "samsa_controller_mutation_rate", "gauge",
      "Partition mutations per second of a quota entity, over the "
      "controller quota windows (mutation-rate).",
      MX_QT(SAMSA_QUOTA_MUTATION), MX_QV_RATE },
    { "samsa_controller_mutation_tokens", "gauge",
      "Credits left in the entity's token bucket; below 0: exhausted "
      "(tokens).", MX_QT(SAMSA_QUOTA_MUTATION), MX_QV_TOKENS },
    { "samsa_controller_mutation_quota", "gauge",
      "The controller_mutation_rate applied to the entity.",
      MX_QT(SAMSA_QUOTA_MUTATION), MX_QV_QUOTA },
    { "samsa_controller_mutation_throttle_time_seconds_total", "counter",
      "Throttle time given to the entity's requests (throttle-time).",
      MX_QT(SAMSA_QUOTA_MUTATION), MX_QV_THROTTLE_S },
    { "samsa_controller_mutation_throttled_requests_total", "counter",
      "Requests of the entity that were throttled.",
      MX_QT(SAMSA_QUOTA_MUTATION), MX_QV_THROTTLED },
};

static void
mx_quota_value(samsa_buf_t *out, mx_quota_value_t value,
               const samsa_quota_stat_t *st)
{
    switch (value) {
    case MX_QV_RATE:
        samsa_mx_double(out, st->rate);
        break;
    case MX_QV_TOKENS:
        samsa_mx_double(out, st->tokens);
        break;
    case MX_QV_QUOTA:
        samsa_mx_double(out, st->quota);
        break;
    case MX_QV_THROTTLE_S:
        samsa_mx_double(out, (double) st->throttle_time_ms / 1e3);
        break;
    case MX_QV_THROTTLED:
        samsa_mx_printf(out, "%llu", (unsigned long long) st->throttled);
        break;
    }
    samsa_mx_printf(out, "\n");
}

static void
mx_quotas(samsa_metrics_t *m, samsa_buf_t *out)
{
    mx_quota_list_t  l = { 0 };
    size_t           i, f;

    samsa_quota_snapshot(m->brk->quota, samsa_now_ms(), mx_quota_collect, &l);
    for (f = 0; f < sizeof(mx_quota_fams) / sizeof(mx_quota_fams[0]); f++) {
        mx_family(out, mx_quota_fams[f].name, mx_quota_fams[f].type,
                  mx_quota_fams[f].help);
        for (i = 0; i < l.n; i++) {
            if ((mx_quota_fams[f].types & MX_QT(l.v[i].type)) != 0) {
                mx_quota_labels(out, mx_quota_fams[f].name, &l.v[i]);
                mx_quota_value(out, mx_quota_fams[f].value, &l.v[i]);
            }
        }
    }
    for (i = 0; i < 2 * l.n; i++) {
        samsa_free(l.strs[i]);
    }
    samsa_free(l.strs);
    samsa_free(l.v);
}

int64_t
samsa_mx_lag(const samsa_metrics_lag_t *l)
{
    if (l->log_end < 0) {
        return -1;
    }
    return l->log_end > l->committed ? l->log_end - l->committed : 0;
}

static void
mx_groups(samsa_metrics_snap_t *snap, samsa_buf_t *out)
{
    size_t  counts[SAMSA_GRP_DEAD] = { 0 };
    size_t  i;

    for (i = 0; i < snap->ngroups; i++) {
        if (snap->groups[i].state < SAMSA_GRP_DEAD) {
            counts[snap->groups[i].state]++;
        }
    }
    mx_family(out, "samsa_groups", "gauge",
              "Consumer groups by state (NumGroups<State>).");
    for (i = 0; i < SAMSA_GRP_DEAD; i++) {
        samsa_mx_printf(out, "samsa_groups{state=\"%s\"} %zu\n",
                  samsa_grp_state_name((samsa_grp_state_t) i), counts[i]);
    }
    mx_family(out, "samsa_consumer_group_lag", "gauge",
              "Log end offset minus the group's committed offset, per "
              "committed partition (0 when the commit is ahead).");
    for (i = 0; i < snap->nlags; i++) {
        if (snap->lags[i].log_end < 0) {
            continue;
        }
        samsa_mx_printf(out, "samsa_consumer_group_lag{group=\"");
        mx_label(out, snap->lags[i].group);
        samsa_mx_printf(out, "\",topic=\"");
        mx_label(out, snap->lags[i].topic);
        samsa_mx_printf(out, "\",partition=\"%d\"} %lld\n",
                  (int) snap->lags[i].partition,
                  (long long) samsa_mx_lag(&snap->lags[i]));
    }
}

static void
mx_process(samsa_metrics_t *m, samsa_buf_t *out)
{
    samsa_metrics_proc_t  pr;

    samsa_metrics_proc_read(&pr);
    mx_family(out, "process_resident_memory_bytes", "gauge",
              "Resident memory size in bytes.");
    samsa_mx_printf(out, "process_resident_memory_bytes %lld\n",
              (long long) pr.rss_bytes);
    mx_family(out, "process_virtual_memory_bytes", "gauge",
              "Virtual memory size in bytes.");
    samsa_mx_printf(out, "process_virtual_memory_bytes %lld\n",
              (long long) pr.vsize_bytes);
    mx_family(out, "process_cpu_seconds_total", "counter",
              "User and system CPU time spent, in seconds.");
    samsa_mx_printf(out, "process_cpu_seconds_total ");
    samsa_mx_double(out, pr.cpu_seconds);
    samsa_mx_printf(out, "\n");
    mx_family(out, "process_open_fds", "gauge", "Open file descriptors.");
    samsa_mx_printf(out, "process_open_fds %lld\n", (long long) pr.open_fds);
    if (pr.max_fds >= 0) {
        mx_family(out, "process_max_fds", "gauge",
                  "Limit on open file descriptors.");
        samsa_mx_printf(out, "process_max_fds %lld\n", (long long) pr.max_fds);
    }
    mx_family(out, "process_start_time_seconds", "gauge",
              "Start time of the process since the Unix epoch, in seconds.");
    samsa_mx_printf(out, "process_start_time_seconds ");
    samsa_mx_double(out, (double) m->start_wall_ms / 1e3);
    samsa_mx_printf(out, "\n");
}

void
samsa_metrics_render_prom(samsa_metrics_t *m, samsa_buf_t *out)
{
    samsa_metrics_snap_t  snap;

    if (!samsa_metrics_is_ready(m)) {
        /* the servers and the broker are not there to read yet */
        mx_process(m, out);
        mx_family(out, "samsa_ready", "gauge",
                  "1 once the logs are loaded and every listener is up.");
        samsa_mx_printf(out, "samsa_ready 0\n");
        return;
    }
    samsa_metrics_snap_take(m, &snap);
    mx_requests_total(m, &snap, out);
    mx_errors(m, &snap, out);
    mx_histograms(m, &snap, out);
    mx_queues(m, out);
    mx_memory_pool(m, out);
    mx_network_idle(m, out);
    mx_handler_idle(m, out);
    mx_connections(m, out, false);
    mx_connections(m, out, true);
    mx_authentications(m, out, true);
    mx_authentications(m, out, false);
    mx_conn_throttles(m, out, false);
    mx_conn_throttles(m, out, true);
    mx_accept_throttle_time(m, out);
    if (m->brk != NULL) {
        mx_partitions(&snap, out);
        mx_replication(&snap, out,
                       m->brk->cfg->role_controller);
        mx_log_files(m, out);
        mx_purgatories(m, out);
        mx_quotas(m, out);
        mx_groups(&snap, out);
    }
    mx_process(m, out);
    mx_family(out, "samsa_ready", "gauge",
              "1 once the logs are loaded and every listener is up.");
    samsa_mx_printf(out, "samsa_ready %d\n", samsa_metrics_is_ready(m) ? 1 : 0);
    samsa_metrics_snap_free(&snap);
}
