/*
 * server/metrics_int.h - what metrics.c (the Prometheus text) and
 * status_json.c (the status page's JSON) share: the metrics object, one
 * scrape's snapshot and the text helpers.
 * Threads: metrics (the HTTP listener's thread), except where a field
 * says otherwise.
 */
#ifndef SAMSA_SERVER_METRICS_INT_H
#define SAMSA_SERVER_METRICS_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "broker/group/grp.h"
#include "log/plog.h"
#include "meta/image_stats.h"
#include "server/metrics.h"
#include "util/arena.h"
#include "util/buf.h"

#define METRICS_MAX_SERVERS   2
#define METRICS_WINDOW_NS     1000000000LL  /* idle ratios: 1 s at least */

/* One observed socket server and its idle-ratio window. */
typedef struct samsa_metrics_server {
    samsa_sockserver_t  *ss;            /* [const] borrowed */
    samsa_reqstats_t    *rs;            /* [const] borrowed */
    /* [lock] the window the ratios were last computed over */
    int64_t              win_ns;
    uint64_t             win_net_idle_ns;
    uint64_t             win_hdl_idle_ns;
    double               net_idle_ratio;
    double               hdl_idle_ratio;
} samsa_metrics_server_t;

struct samsa_metrics {
    samsa_broker_t          *brk;       /* [const] may be NULL */
    samsa_metrics_server_t   servers[METRICS_MAX_SERVERS];
    size_t                   nservers;  /* [const] once the thread runs */
    int64_t                  start_wall_ms;     /* [const] */
    _Atomic bool             ready;     /* [atomic] */
    pthread_mutex_t          lock;      /* guards the servers' windows */
};

/* ---- snapshot ------------------------------------------------------------ */

typedef struct samsa_metrics_part {
    const char          *topic;         /* the image's */
    int32_t              partition;
    bool                 has_log;
    int64_t              log_start;
    int64_t              log_end;
    int64_t              size_bytes;
    size_t               segments;
    samsa_plog_stats_t   st;
    bool                 under_min_isr; /* led here (UnderMinIsr) */
    bool                 under_replicated; /* led here (UnderReplicated) */
    bool                 hosted;        /* a replica here, or a log */
} samsa_metrics_part_t;

typedef struct samsa_metrics_lag {
    const char  *group;
    const char  *topic;
    int32_t      partition;
    int64_t      committed;
    int64_t      log_end;               /* -1: no log here */
} samsa_metrics_lag_t;

typedef struct samsa_metrics_snap {
    samsa_image_t           *img;       /* ref; NULL without a broker */
    samsa_metrics_part_t          *parts;
    size_t                   nparts;
    samsa_arena_t            arena;     /* groups and offsets */
    samsa_grp_listed_t      *groups;
    size_t                   ngroups;
    samsa_metrics_lag_t           *lags;
    size_t                   nlags;
    samsa_reqstats_api_t    *apis;      /* [server * napis + api] */
    samsa_image_stats_t      stats;     /* of img, for this node */
    uint64_t                 isr_shrinks, isr_expands;
    int32_t                  controller_id;     /* the active one, -1 */
    bool                     active_controller; /* this node is it */
} samsa_metrics_snap_t;

typedef struct samsa_metrics_proc {
    int64_t  rss_bytes;
    int64_t  vsize_bytes;
    double   cpu_seconds;
    int64_t  open_fds;
    int64_t  max_fds;
} samsa_metrics_proc_t;

/* One scrape's snapshot of m: samsa_metrics_snap_free it. */
void samsa_metrics_snap_take(samsa_metrics_t *m, samsa_metrics_snap_t *snap);
void samsa_metrics_snap_free(samsa_metrics_snap_t *snap);

/* This process's memory, CPU time and descriptors (/proc/self). */
void samsa_metrics_proc_read(samsa_metrics_proc_t *pr);

/* printf onto out. */
void samsa_mx_printf(samsa_buf_t *out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The length of the UTF-8 sequence at s, 0 if it is not one. */
size_t samsa_mx_utf8_len(const unsigned char *s);

/* A double the way Prometheus (and JSON) read it. */
void samsa_mx_double(samsa_buf_t *out, double v);

/* The name of API index i (samsa_proto_apis). */
const char *samsa_mx_api_name(size_t i);

/* A group's lag on a partition: -1 without a log here. */
int64_t samsa_mx_lag(const samsa_metrics_lag_t *l);

#endif /* SAMSA_SERVER_METRICS_INT_H */
