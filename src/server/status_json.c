/*
 * server/status_json.c - GET /api/status: the JSON document the status
 * page polls (requests, servers, partitions, groups and their lag, the
 * cluster as this node sees it, the process), from one metrics snapshot
 * (metrics_int.h).
 * Threads: metrics.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "meta/image.h"
#include "net/server/sockserver.h"
#include "server/metrics.h"
#include "server/metrics_int.h"
#include "server/reqstats.h"
#include "util/time.h"

/* A JSON string; bytes that are not UTF-8 become U+FFFD. */
static void
js_str(samsa_buf_t *out, const char *str)
{
    const unsigned char  *c = (const unsigned char *) str;
    size_t                n;

    samsa_buf_append(out, "\"", 1);
    while (*c != '\0') {
        n = samsa_mx_utf8_len(c);
        if (n == 0) {
            samsa_mx_printf(out, "\\ufffd");
            c++;
        } else if (*c == '"' || *c == '\\') {
            samsa_mx_printf(out, "\\%c", *c);
            c++;
        } else if (*c < 0x20) {
            samsa_mx_printf(out, "\\u%04x", *c);
            c++;
        } else {
            samsa_buf_append(out, c, n);
            c += n;
        }
    }
    samsa_buf_append(out, "\"", 1);
}

/* Requests per API and the total-time histogram summed over every API of
 * every server. */
static void
js_requests(samsa_metrics_t *m, samsa_metrics_snap_t *snap, samsa_buf_t *out)
{
    size_t                       napis = samsa_reqstats_napis(), i, j, k;
    uint64_t                     hist[SAMSA_REQSTATS_NBOUNDS + 1] = { 0 };
    uint64_t                     per_api, total = 0;
    const char                  *sep = "";

    samsa_mx_printf(out, "\"requests\":{");
    for (j = 0; j < napis; j++) {
        per_api = 0;
        for (i = 0; i < m->nservers; i++) {
            const samsa_reqstats_api_t  *a = &snap->apis[i * napis + j];

            per_api += a->requests;
            for (k = 0; k <= SAMSA_REQSTATS_NBOUNDS; k++) {
                hist[k] += a->buckets[SAMSA_PHASE_TOTAL][k];
            }
        }
        total += per_api;
        if (per_api > 0) {
            samsa_mx_printf(out, "%s\"%s\":%llu", sep, samsa_mx_api_name(j),
                      (unsigned long long) per_api);
            sep = ",";
        }
    }
    samsa_mx_printf(out, "},\"requests_total\":%llu,\"latency_bounds_s\":[",
              (unsigned long long) total);
    for (k = 0; k < SAMSA_REQSTATS_NBOUNDS; k++) {
        samsa_mx_printf(out, "%s", k > 0 ? "," : "");
        samsa_mx_double(out, (double) samsa_reqstats_bounds_us[k] / 1e6);
    }
    samsa_mx_printf(out, "],\"latency_buckets\":[");
    for (k = 0; k <= SAMSA_REQSTATS_NBOUNDS; k++) {
        samsa_mx_printf(out, "%s%llu", k > 0 ? "," : "",
                  (unsigned long long) hist[k]);
    }
    samsa_mx_printf(out, "]");
}

static void
js_servers(samsa_metrics_t *m, samsa_buf_t *out)
{
    samsa_netstats_proc_t  ps;
    size_t                 i, j, resp;
    int64_t                conns;

    samsa_mx_printf(out, ",\"servers\":[");
    for (i = 0; i < m->nservers; i++) {
        resp = 0;
        conns = 0;
        for (j = 0; j < samsa_sockserver_proc_ids(m->servers[i].ss); j++) {
            if (!samsa_sockserver_proc_stats(m->servers[i].ss, j, &ps)) {
                continue;
            }
            resp += ps.response_queue_size;
            conns += ps.connections;
        }
        samsa_mx_printf(out, "%s{\"server\":\"%s\",\"request_queue_size\":%zu,"
                  "\"response_queue_size\":%zu,\"connections\":%lld,"
                  "\"network_threads\":%zu,\"io_threads\":%zu,"
                  "\"network_idle\":", i > 0 ? "," : "",
                  samsa_reqstats_kind(m->servers[i].rs),
                  samsa_sockserver_request_queue_size(m->servers[i].ss),
                  resp, (long long) conns,
                  samsa_sockserver_nprocs(m->servers[i].ss),
                  samsa_sockserver_nhandlers(m->servers[i].ss));
        pthread_mutex_lock(&m->lock);
        samsa_mx_double(out, m->servers[i].net_idle_ratio);
        samsa_mx_printf(out, ",\"handler_idle\":");
        samsa_mx_double(out, m->servers[i].hdl_idle_ratio);
        pthread_mutex_unlock(&m->lock);
        samsa_mx_printf(out, "}");
    }
    samsa_mx_printf(out, "]");
}

static void
js_partitions(samsa_metrics_snap_t *snap, samsa_buf_t *out)
{
    const samsa_metrics_part_t  *p;
    size_t                 i;

    samsa_mx_printf(out, ",\"partitions\":[");
    for (i = 0; i < snap->nparts; i++) {
        p = &snap->parts[i];
        samsa_mx_printf(out, "%s{\"topic\":", i > 0 ? "," : "");
        js_str(out, p->topic);
        samsa_mx_printf(out, ",\"partition\":%d,\"has_log\":%s,"
                  "\"log_start_offset\":%lld,\"log_end_offset\":%lld,"
                  "\"size_bytes\":%lld,\"messages_in\":%llu,"
                  "\"bytes_in\":%llu,\"bytes_out\":%llu,"
                  "\"under_min_isr\":%s,\"under_replicated\":%s}",
                  (int) p->partition,
                  p->has_log ? "true" : "false", (long long) p->log_start,
                  (long long) p->log_end, (long long) p->size_bytes,
                  (unsigned long long) p->st.messages_in,
                  (unsigned long long) p->st.bytes_in,
                  (unsigned long long) p->st.bytes_out,
                  p->under_min_isr ? "true" : "false",
                  p->under_replicated ? "true" : "false");
    }
    samsa_mx_printf(out, "]");
}

static void
js_groups(samsa_metrics_snap_t *snap, samsa_buf_t *out)
{
    size_t  i;

    samsa_mx_printf(out, ",\"groups\":[");
    for (i = 0; i < snap->ngroups; i++) {
        samsa_mx_printf(out, "%s{\"group\":", i > 0 ? "," : "");
        js_str(out, snap->groups[i].group_id);
        samsa_mx_printf(out, ",\"state\":\"%s\"}",
                  samsa_grp_state_name(snap->groups[i].state));
    }
    samsa_mx_printf(out, "],\"lags\":[");
    for (i = 0; i < snap->nlags; i++) {
        samsa_mx_printf(out, "%s{\"group\":", i > 0 ? "," : "");
        js_str(out, snap->lags[i].group);
        samsa_mx_printf(out, ",\"topic\":");
        js_str(out, snap->lags[i].topic);
        samsa_mx_printf(out, ",\"partition\":%d,\"committed\":%lld,"
                  "\"log_end_offset\":%lld,\"lag\":%lld}",
                  (int) snap->lags[i].partition,
                  (long long) snap->lags[i].committed,
                  (long long) snap->lags[i].log_end,
                  (long long) samsa_mx_lag(&snap->lags[i]));
    }
    samsa_mx_printf(out, "]");
}

/* The cluster as this node's image has it: the node, the active
 * controller, the registered brokers and the partition counts
 * (meta/image_stats.h; offline and global counts over the whole image). */
static void
js_cluster(samsa_metrics_t *m, samsa_metrics_snap_t *snap, samsa_buf_t *out)
{
    const samsa_image_stats_t   *st = &snap->stats;
    const samsa_image_broker_t  *br;
    size_t                       i;

    if (m->brk == NULL || snap->img == NULL) {
        return;
    }
    samsa_mx_printf(out, ",\"cluster\":{\"node_id\":%d,"
                    "\"controller_id\":%d,\"brokers\":[",
                    (int) m->brk->node->node_id, (int) snap->controller_id);
    for (i = 0; i < samsa_image_broker_count(snap->img); i++) {
        br = samsa_image_broker_at(snap->img, i);
        samsa_mx_printf(out, "%s{\"id\":%d,\"fenced\":%s,"
                        "\"in_controlled_shutdown\":%s}", i > 0 ? "," : "",
                        (int) br->id, br->fenced ? "true" : "false",
                        br->in_controlled_shutdown ? "true" : "false");
    }
    samsa_mx_printf(out, "],\"partitions\":%zu,\"leaders\":%zu,"
                    "\"under_replicated\":%zu,\"under_min_isr\":%zu,"
                    "\"offline\":%zu,\"global_partitions\":%zu}",
                    st->partitions, st->leaders, st->under_replicated,
                    st->under_min_isr, st->offline, st->global_partitions);
}

void
samsa_metrics_render_json(samsa_metrics_t *m, samsa_buf_t *out)
{
    samsa_metrics_snap_t  snap;
    samsa_metrics_proc_t  pr;

    if (!samsa_metrics_is_ready(m)) {
        samsa_mx_printf(out, "{\"time_ms\":%lld,\"start_time_ms\":%lld,"
                  "\"ready\":false}\n", (long long) samsa_wall_ms(),
                  (long long) m->start_wall_ms);
        return;
    }
    samsa_metrics_snap_take(m, &snap);
    samsa_metrics_proc_read(&pr);
    samsa_mx_printf(out, "{\"time_ms\":%lld,\"start_time_ms\":%lld,\"ready\":true,",
              (long long) samsa_wall_ms(), (long long) m->start_wall_ms);
    js_requests(m, &snap, out);
    js_servers(m, out);
    js_partitions(&snap, out);
    js_groups(&snap, out);
    js_cluster(m, &snap, out);
    samsa_mx_printf(out, ",\"process\":{\"rss_bytes\":%lld,\"cpu_seconds\":",
              (long long) pr.rss_bytes);
    samsa_mx_double(out, pr.cpu_seconds);
    samsa_mx_printf(out, ",\"open_fds\":%lld}}\n", (long long) pr.open_fds);
    samsa_metrics_snap_free(&snap);
}
