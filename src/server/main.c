/*
 * server/main.c - samsa-server: run the storage commands (format,
 * random-cluster-id: server/format.c), or read the configuration, format
 * or check the log dirs, open the broker's and the controller's socket
 * servers (a combined node runs both, as Kafka's BrokerServer and
 * ControllerServer),
 * start them, and wait for SIGTERM/SIGINT to shut down cleanly: stop
 * accepting, let in-flight requests finish, close.
 * Threads: main.  Every other thread is started from here.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>
#include <pthread.h>

#include "broker/api_table.h"
#include "broker/broker.h"
#include "broker/lifecycle.h"
#include "broker/node.h"
#include "broker/quota.h"
#include "meta/bootvoters.h"
#include "meta/metaprops.h"
#include "meta/quorum.h"
#include "meta/quorum_transport.h"
#include "meta/brokercfg.h"
#include "meta/topic_config.h"
#include "net/server/sockserver.h"
#include "config/config.h"
#include "server/format.h"
#include "server/httpd.h"
#include "server/metrics.h"
#include "server/reqlog.h"
#include "server/reqstats.h"
#include "server/saslconf.h"
#include "server/tlsconf.h"
#include "util/alloc.h"
#include "util/diag.h"
#include "util/fault.h"

#ifndef SAMSA_VERSION                   /* CMake: the project version */
#define SAMSA_VERSION          "0.1.0"
#endif
#define SHUTDOWN_DRAIN_MS      10000    /* in-flight requests get this long */

/* One socket server and what it serves. */
typedef struct server_side {
    const char            *kind;
    samsa_netlistener_t   *listeners;
    size_t                 nlisteners;
    size_t                *cfg_index;  /* listener i is cfg->listeners[j] */
    samsa_apis_t           apis;
    samsa_sockserver_t    *ss;
    samsa_reqstats_t      *rs;          /* NULL: no metrics listener */
    samsa_reqlog_t        *reqlog;      /* written while enabled */
} server_side_t;

typedef struct server {
    samsa_config_t               cfg;
    samsa_node_t                 node;
    samsa_reqlog_t               reqlog;
    samsa_broker_t               brk;       /* logs, metadata, purgatories */
    bool                         brk_open;
    samsa_connquota_override_t  *overrides;
    samsa_tlsconf_t              tls;       /* the TLS listeners' contexts */
    samsa_saslconf_t             sasl;      /* the SASL listeners' confs */
    server_side_t                broker;
    server_side_t                controller;
    samsa_metrics_t             *metrics;   /* NULL: no metrics listener */
    samsa_httpd_t               *httpd;
    samsa_lifecycle_t           *lifecycle; /* cluster mode: registration */
} server_t;

/* The socket server's completion hook: request metrics, then the request
 * log.  @thread network */
static void
server_request_done(void *ctx, const samsa_req_t *req)
{
    server_side_t  *side = ctx;

    if (side->rs != NULL) {
        samsa_reqstats_record(side->rs, req);
    }
    if (side->reqlog != NULL) {
        samsa_reqlog_done(side->reqlog, req);
    }
}

/* Check one dir's meta.properties, formatting it if allowed. */
static samsa_err_t
server_check_dir(server_t *srv, const char *dir, bool may_format,
                 char *errstr, size_t errstr_size)
{
    samsa_err_t  err;
    bool         formatted;

    err = samsa_metaprops_ensure(dir, srv->cfg.node_id, srv->node.cluster_id,
                                 may_format, &formatted, errstr,
                                 errstr_size);
    if (err == SAMSA_ERR_NONE && formatted) {
        samsa_info("formatted log dir %s (cluster.id %s, node.id %d)", dir,
                   srv->node.cluster_id, (int) srv->cfg.node_id);
    }
    return err;
}

/* Every log dir's meta.properties (and in KRaft cluster mode
 * metadata.log.dir's) must name this node and one cluster.  A single node
 * (no process.roles) formats empty dirs on its first start; a cluster node
 * needs `samsa-server format` first, as Kafka. */
static samsa_err_t
server_format_dirs(server_t *srv, char *errstr, size_t errstr_size)
{
    const samsa_config_kraft_t  *k = samsa_config_kraft(&srv->cfg);
    const char                  *mdir = NULL;
    samsa_err_t                  err;
    size_t                       i;

    srv->node.cluster_id[0] = '\0';
    if (k->is_cluster) {
        mdir = samsa_config_str(&srv->cfg, "metadata.log.dir");
    }
    for (i = 0; i < srv->cfg.nlog_dirs; i++) {
        err = server_check_dir(srv, srv->cfg.log_dirs[i], !k->is_cluster,
                               errstr, errstr_size);
        if (err != SAMSA_ERR_NONE) {
            return err;
        }
        if (mdir != NULL && strcmp(mdir, srv->cfg.log_dirs[i]) == 0) {
            mdir = NULL;
        }
    }
    if (mdir != NULL) {
        return server_check_dir(srv, mdir, false, errstr, errstr_size);
    }
    return SAMSA_ERR_NONE;
}

/* A dynamic quorum (KIP-853: controller.quorum.bootstrap.servers, no
 * controller.quorum.voters): the initial voters come from the metadata
 * dir, as `samsa-server format` wrote them (meta/bootvoters.h), into the
 * configuration's voters before any thread reads them.  What this build
 * cannot run yet is refused: a broker-only node (it would need the
 * voters' addresses to dial in to) and a combined node that is not an
 * initial voter (it would be added as an observer, with no address). */
static samsa_err_t
server_load_quorum_voters(server_t *srv, char *errstr, size_t errstr_size)
{
    const samsa_config_kraft_t  *k = samsa_config_kraft(&srv->cfg);
    const char                  *mdir;
    samsa_config_voter_t        *voters;
    size_t                       n;
    samsa_err_t                  err;

    if (!k->is_cluster || !k->dynamic) {
        return SAMSA_ERR_NONE;
    }
    if (!(k->roles & SAMSA_CONFIG_ROLE_F_CONTROLLER)) {
        snprintf(errstr, errstr_size, "controller.quorum.bootstrap.servers "
                 "without controller.quorum.voters on a broker-only node is "
                 "not supported by this build yet: give brokers "
                 "controller.quorum.voters");
        return SAMSA_ERR__CONFIG;
    }
    mdir = samsa_config_str(&srv->cfg, "metadata.log.dir");
    if (mdir == NULL) {
        mdir = srv->cfg.log_dirs[0];
    }
    err = samsa_bootvoters_read(mdir, &voters, &n, errstr, errstr_size);
    if (err != SAMSA_ERR_NONE) {
        return err == SAMSA_ERR__NOENT ? SAMSA_ERR__CONFIG : err;
    }
    samsa_config_kraft_set_voters(&srv->cfg, voters, n);
    if ((k->roles & SAMSA_CONFIG_ROLE_F_BROKER)
        && !samsa_config_kraft_is_voter(k, k->node_id)) {
        snprintf(errstr, errstr_size, "a node with process.roles=broker,"
                 "controller formatted with --no-initial-controllers (not an "
                 "initial voter of its dynamic quorum) is not supported by "
                 "this build yet: use process.roles=controller");
        return SAMSA_ERR__CONFIG;
    }
    return SAMSA_ERR_NONE;
}

/* The listeners of one side: controller listeners or all the others. */
static void
server_side_listeners(server_t *srv, server_side_t *side, bool controller)
{
    size_t  i;

    side->listeners = samsa_calloc(srv->cfg.nlisteners,
                                   sizeof(*side->listeners));
    side->cfg_index = samsa_calloc(srv->cfg.nlisteners,
                                   sizeof(*side->cfg_index));
    side->nlisteners = 0;
    for (i = 0; i < srv->cfg.nlisteners; i++) {
        const samsa_listener_t  *l = &srv->cfg.listeners[i];

        if (l->is_controller != controller) {
            continue;
        }
        side->listeners[side->nlisteners] = (samsa_netlistener_t) {
            l->name, l->host, l->port, l->security_protocol,
            srv->tls.ctx != NULL ? srv->tls.ctx[i] : NULL,
            srv->sasl.conf != NULL ? srv->sasl.conf[i] : NULL
        };
        side->cfg_index[side->nlisteners++] = i;
    }
}

/* A dynamic broker config's value in effect: the metadata log's dynamic
 * value (replayed by samsa_broker_open), else the static one. */
static int32_t
server_dynamic_int(server_t *srv, const char *key)
{
    samsa_brokercfg_levels_t  lv;
    samsa_image_t            *img = samsa_meta_image_get(srv->brk.meta);
    int32_t                   v;

    samsa_brokercfg_levels(img, srv->cfg.node_id, &lv);
    v = samsa_brokercfg_int(&srv->cfg, &lv, key);
    samsa_image_put(img);
    return v;
}

/* The connection limits in effect for one side (Kafka's
 * DynamicConnectionQuota and, per listener, ListenerConnectionQuota:
 * listener.name.<listener>.<key>, else the key's own value).  Kafka's
 * controller listeners are protected from the broker-wide creation rate:
 * on the controller side only a listener's own rate applies. */
typedef struct server_conn_limits {
    int32_t                      max_connections;
    int32_t                      max_per_ip;
    int32_t                      max_rate;
    int32_t                     *listener_max;  /* one per listener of the
                                                   side */
    int32_t                     *listener_rate;
    const samsa_connquota_override_t *overrides; /* srv's or own below */
    size_t                       noverrides;
    samsa_connquota_override_t  *own;           /* a dynamic value's */
} server_conn_limits_t;

/* max.connections.per.ip.overrides in effect: a dynamic value (resolved
 * now; checked when it was set, so a failure here is a name that no
 * longer resolves: the static overrides stay), else server.properties'. */
static void
server_conn_overrides(const server_t *srv,
                      const samsa_brokercfg_levels_t *lv,
                      server_conn_limits_t *out)
{
    samsa_ip_override_t  *ov;
    size_t                nov, i;
    int                   source;
    const char           *v;
    char                  why[512];

    out->overrides = srv->overrides;
    out->noverrides = srv->cfg.nmax_connections_per_ip_overrides;
    out->own = NULL;
    v = samsa_brokercfg_value(&srv->cfg, lv,
                              "max.connections.per.ip.overrides", &source);
    if (source == SAMSA_CONFIG_SOURCE_STATIC_BROKER_CONFIG
        || source == SAMSA_CONFIG_SOURCE_DEFAULT_CONFIG) {
        return;
    }
    if (samsa_config_ip_overrides_parse(v, &ov, &nov, why, sizeof(why))
        != SAMSA_ERR_NONE) {
        samsa_error("cannot apply max.connections.per.ip.overrides=%s: %s",
                    v, why);
        return;
    }
    out->own = samsa_calloc(nov + 1, sizeof(*out->own));
    for (i = 0; i < nov; i++) {
        snprintf(out->own[i].ip, sizeof(out->own[i].ip), "%s", ov[i].ip);
        out->own[i].max = ov[i].max;
    }
    samsa_free(ov);
    out->overrides = out->own;
    out->noverrides = nov;
}

static void
server_conn_limits(const server_t *srv, const samsa_brokercfg_levels_t *lv,
                   const server_side_t *side, bool controller,
                   server_conn_limits_t *out)
{
    const samsa_config_t  *cfg = &srv->cfg;
    const char            *name;
    bool                   prefixed;
    int32_t                rate;
    size_t                 i;

    out->max_connections = samsa_brokercfg_int(cfg, lv, "max.connections");
    out->max_per_ip = samsa_brokercfg_int(cfg, lv, "max.connections.per.ip");
    out->max_rate = controller
                        ? INT32_MAX
                        : samsa_brokercfg_int(cfg, lv,
                                              "max.connection.creation.rate");
    server_conn_overrides(srv, lv, out);
    out->listener_max = samsa_calloc(side->nlisteners + 1, sizeof(int32_t));
    out->listener_rate = samsa_calloc(side->nlisteners + 1, sizeof(int32_t));
    for (i = 0; i < side->nlisteners; i++) {
        name = side->listeners[i].name;
        out->listener_max[i] = samsa_brokercfg_listener_int(
            cfg, lv, name, "max.connections", &prefixed);
        rate = samsa_brokercfg_listener_int(
            cfg, lv, name, "max.connection.creation.rate", &prefixed);
        out->listener_rate[i] = controller && !prefixed ? INT32_MAX : rate;
    }
}

static void
server_conn_limits_free(server_conn_limits_t *l)
{
    samsa_free(l->listener_max);
    samsa_free(l->listener_rate);
    samsa_free(l->own);
}

/* The broker's reconf hook: apply the thread counts in effect to both
 * socket servers' handler pools and listeners (as Kafka resizes the
 * broker's and the controller's), and the log cleaner's settings to the
 * log manager.  @thread controller (or main, when installed) */
/* A dynamic key store update (tlsconf.h) in img: the changed listeners'
 * new contexts go to their socket servers for new connections.
 * @thread the image listener's (main at the start) */
static void
server_tls_reconf(server_t *srv, const samsa_image_t *img)
{
    server_side_t             *sides[2] = { &srv->broker, &srv->controller };
    samsa_brokercfg_levels_t   lv;
    samsa_tls_ctx_t          **next;
    size_t                     i, j, k;

    if (srv->tls.n == 0) {
        return;
    }
    samsa_brokercfg_levels(img, srv->cfg.node_id, &lv);
    next = samsa_calloc(srv->tls.n, sizeof(*next));
    samsa_tlsconf_update(&srv->tls, &srv->cfg, &lv, next);
    for (i = 0; i < srv->tls.n; i++) {
        for (j = 0; next[i] != NULL && j < 2; j++) {
            for (k = 0; sides[j]->ss != NULL && k < sides[j]->nlisteners;
                 k++) {
                if (sides[j]->cfg_index[k] == i) {
                    (void) samsa_sockserver_set_tls(sides[j]->ss, k, next[i]);
                }
            }
        }
        samsa_tls_ctx_unref(next[i]);
    }
    samsa_free(next);
}

/* samsa_brokercfg_check_t: this node's next key stores must load.
 * @thread controller */
static samsa_err_t
server_tls_check(void *ctx, const samsa_brokercfg_levels_t *next,
                 char *errstr, size_t errstr_size)
{
    server_t  *srv = ctx;

    return samsa_tlsconf_check(&srv->tls, &srv->cfg, next, errstr,
                               errstr_size);
}

static void
server_reconf(void *ctx, const samsa_image_t *img)
{
    server_t                 *srv = ctx;
    server_side_t            *sides[2] = { &srv->broker, &srv->controller };
    samsa_brokercfg_levels_t  lv;
    server_conn_limits_t      lim;
    samsa_cleaner_config_t    cleaner;
    int32_t                   io, net;
    size_t                    i;

    server_tls_reconf(srv, img);
    samsa_brokercfg_levels(img, srv->cfg.node_id, &lv);
    io = samsa_brokercfg_int(&srv->cfg, &lv, "num.io.threads");
    net = samsa_brokercfg_int(&srv->cfg, &lv, "num.network.threads");
    for (i = 0; i < 2; i++) {
        if (sides[i]->ss == NULL) {
            continue;
        }
        if (samsa_sockserver_set_io_threads(sides[i]->ss, io)
            != SAMSA_ERR_NONE) {
            samsa_error("%s: cannot apply num.io.threads=%d",
                        sides[i]->kind, (int) io);
        }
        /* every listener, as Kafka applies it to each one's acceptor */
        if (samsa_sockserver_set_network_threads(sides[i]->ss, net)
            != SAMSA_ERR_NONE) {
            samsa_error("%s: cannot apply num.network.threads=%d",
                        sides[i]->kind, (int) net);
        }
        server_conn_limits(srv, &lv, sides[i], sides[i] == &srv->controller,
                           &lim);
        samsa_sockserver_set_conn_limits(
            sides[i]->ss, lim.max_connections, lim.max_per_ip, lim.overrides,
            lim.noverrides, lim.max_rate, lim.listener_max,
            lim.listener_rate);
        server_conn_limits_free(&lim);
    }
    samsa_brokercfg_cleaner(&srv->cfg, &lv, &cleaner);
    if (samsa_logmgr_cleaner_reconfigure(srv->brk.logs, &cleaner)
        != SAMSA_ERR_NONE) {
        samsa_error("cannot apply the log cleaner settings "
                    "(log.cleaner.threads=%d)", (int) cleaner.threads);
    }
}

/* The CONTROLLER listeners of a cluster node also take the metadata
 * quorum's raft connections (meta/quorum_transport.h): the network
 * threads hand them to the quorum.  @thread network */
static bool
server_raft_match(void *ctx, const uint8_t *buf, size_t len)
{
    (void) ctx;
    return samsa_quorum_transport_is_magic(buf, len);
}

static void
server_raft_take(void *ctx, int fd)
{
    samsa_broker_t  *brk = ctx;
    samsa_quorum_t  *q = brk->ctrl != NULL
                         ? samsa_controller_quorum(brk->ctrl) : NULL;

    if (q == NULL) {
        close(fd);
        return;
    }
    if (samsa_quorum_adopt_fd(q, fd) != SAMSA_ERR_NONE) {
        samsa_debug("metadata quorum: a raft connection was refused");
    }
}

static samsa_err_t
server_side_open(server_t *srv, server_side_t *side, const char *kind,
                 bool controller, char *errstr, size_t errstr_size)
{
    const samsa_config_t     *cfg = &srv->cfg;
    samsa_sockserver_conf_t   conf;
    samsa_brokercfg_levels_t  lv;
    server_conn_limits_t      lim;
    samsa_image_t            *img;
    samsa_err_t               err;

    side->kind = kind;
    server_side_listeners(srv, side, controller);
    if (side->nlisteners == 0) {
        return SAMSA_ERR_NONE;
    }
    if (samsa_config_kraft(cfg)->is_cluster) {
        /* a cluster node's controller listeners also serve the admin APIs
         * (Kafka's ControllerApis), which its broker listeners forward
         * to the active controller (broker/forward.h) */
        samsa_apis_init(&side->apis, kind, &srv->node, &srv->brk,
                        controller ? SAMSA_API_F_CONTROLLER | SAMSA_API_F_ADMIN
                                     | SAMSA_API_F_QUORUM
                                   : SAMSA_API_F_BROKER | SAMSA_API_F_QUORUM);
        side->apis.forward = !controller;
    } else {
        samsa_apis_init(&side->apis, kind, &srv->node,
                        controller ? NULL : &srv->brk,
                        controller ? SAMSA_API_F_CONTROLLER
                                   : SAMSA_API_F_BROKER);
    }
    memset(&conf, 0, sizeof(conf));
    conf.kind = kind;
    conf.listeners = side->listeners;
    conf.nlisteners = side->nlisteners;
    conf.num_network_threads = server_dynamic_int(srv,
                                                  "num.network.threads");
    conf.num_io_threads = server_dynamic_int(srv, "num.io.threads");
    conf.queued_max_requests = samsa_config_int(cfg, "queued.max.requests");
    conf.queued_max_request_bytes =
        samsa_config_long(cfg, "queued.max.request.bytes");
    conf.socket_request_max_bytes =
        samsa_config_int(cfg, "socket.request.max.bytes");
    conf.socket_send_buffer_bytes =
        samsa_config_int(cfg, "socket.send.buffer.bytes");
    conf.socket_receive_buffer_bytes =
        samsa_config_int(cfg, "socket.receive.buffer.bytes");
    conf.socket_listen_backlog_size =
        samsa_config_int(cfg, "socket.listen.backlog.size");
    conf.connections_max_idle_ms =
        samsa_config_long(cfg, "connections.max.idle.ms");
    img = samsa_meta_image_get(srv->brk.meta);
    samsa_brokercfg_levels(img, cfg->node_id, &lv);
    server_conn_limits(srv, &lv, side, controller, &lim);
    samsa_image_put(img);
    conf.max_connections = lim.max_connections;
    conf.max_connections_per_ip = lim.max_per_ip;
    conf.overrides = lim.overrides;
    conf.noverrides = lim.noverrides;
    conf.max_connection_creation_rate = lim.max_rate;
    conf.listener_max_connections = lim.listener_max;
    conf.listener_max_connection_creation_rate = lim.listener_rate;
    /* the ip quotas are the broker's */
    conf.quota_window_num = samsa_config_int(cfg, "quota.window.num");
    conf.quota_window_ms =
        (int64_t) samsa_config_int(cfg, "quota.window.size.seconds") * 1000;
    conf.ip_rate = controller ? NULL : samsa_quota_ip_conn_rate;
    conf.ip_rate_ctx = controller ? NULL : srv->brk.meta;
    conf.gate = samsa_apis_gate;
    conf.handle = samsa_apis_handle;
    /* the request-time quota is the broker's, as the other client quotas */
    conf.net_time = controller ? NULL : samsa_apis_net_time;
    conf.ctx = &side->apis;
    if (samsa_config_str(cfg, "metrics.listener")[0] != '\0') {
        /* every id the server may give a network thread: they change
         * with num.network.threads at run time */
        side->rs = samsa_reqstats_new(kind, SAMSA_SOCKSERVER_MAX_PROCS);
    }
    /* the request log may be turned on at run time (kafka.request.logger) */
    side->reqlog = &srv->reqlog;
    conf.done = server_request_done;
    conf.done_ctx = side;
    if (controller && samsa_config_kraft(cfg)->is_cluster) {
        conf.handoff_match = server_raft_match;
        conf.handoff_take = server_raft_take;
        conf.handoff_ctx = &srv->brk;
    }
    err = samsa_sockserver_open(&side->ss, &conf, errstr, errstr_size);
    server_conn_limits_free(&lim);
    return err;
}

/* Advertised endpoints; a port of 0 (listener bound to any free port)
 * becomes the port the listener of that name actually got. */
static void
server_fill_endpoints(server_t *srv)
{
    const samsa_config_t  *cfg = &srv->cfg;
    server_side_t         *side = &srv->broker;
    size_t                 i, j;

    /* node_id and controller_id were set before the broker opened: the
     * quorum thread (cluster mode) reads them from then on */
    srv->node.nendpoints = cfg->nadvertised_listeners;
    srv->node.endpoints = samsa_calloc(cfg->nadvertised_listeners + 1,
                                       sizeof(*srv->node.endpoints));
    for (i = 0; i < cfg->nadvertised_listeners; i++) {
        const samsa_listener_t  *a = &cfg->advertised_listeners[i];
        samsa_endpoint_t        *ep = &srv->node.endpoints[i];

        ep->listener = a->name;
        ep->host = a->host;
        ep->port = a->port;
        ep->security_protocol = a->security_protocol;
        for (j = 0; ep->port == 0 && j < side->nlisteners; j++) {
            if (strcasecmp(side->listeners[j].name, a->name) == 0) {
                ep->port = samsa_sockserver_port(side->ss, j);
            }
        }
    }
}

/* Test hook of samsa-server-faults (util/fault.h): SAMSA_TEST_OPEN_DELAY_MS
 * holds the start after the metrics listener opened and before the logs
 * load, so tests can see /ready answer 503. */
static void
server_test_open_delay(void)
{
    long              ms = SAMSA_TEST_HOOK("SAMSA_TEST_OPEN_DELAY_MS", 0);
    struct timespec   ts;

    if (ms <= 0) {
        return;
    }
    samsa_warn("test hook: start held %ld ms (SAMSA_TEST_OPEN_DELAY_MS)", ms);
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (ms % 1000) * 1000000L;
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* The metrics listener, when metrics.listener is set, opened first so
 * that /health answers (and /ready says 503) while the logs load.  It
 * reads the broker and the socket servers only once main has declared
 * the server ready. */
static samsa_err_t
server_open_metrics(server_t *srv, char *errstr, size_t errstr_size)
{
    const char          *url = samsa_config_str(&srv->cfg,
                                                "metrics.listener");
    samsa_httpd_conf_t   hc;
    samsa_err_t          err;

    if (url[0] == '\0') {
        samsa_info("metrics listener disabled (metrics.listener is empty)");
        return SAMSA_ERR_NONE;
    }
    srv->metrics = samsa_metrics_new(srv->cfg.role_broker ? &srv->brk : NULL);
    hc = (samsa_httpd_conf_t) {
        .url = url,
        .admin_token = samsa_config_str(&srv->cfg,
                                        "metrics.listener.admin.token"),
        .keystore_location = samsa_config_str(
            &srv->cfg, "metrics.listener.ssl.keystore.location"),
        .key_password = samsa_config_str(&srv->cfg,
                                         "metrics.listener.ssl.key.password"),
    };
    err = samsa_httpd_open(&srv->httpd, &hc, srv->metrics, errstr,
                           errstr_size);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    samsa_info("metrics listener %s bound to port %d (/metrics, /health, "
               "/ready, /)", url, samsa_httpd_port(srv->httpd));
    server_test_open_delay();
    return SAMSA_ERR_NONE;
}

/* Hand the socket servers to the metrics (before they are declared
 * ready: the metrics thread does not read them until then). */
static void
server_observe(server_t *srv)
{
    server_side_t  *sides[2] = { &srv->broker, &srv->controller };
    size_t          i;

    for (i = 0; i < 2 && srv->metrics != NULL; i++) {
        if (sides[i]->ss != NULL) {
            samsa_metrics_add_server(srv->metrics, sides[i]->ss, sides[i]->rs);
        }
    }
}

/* A SCRAM credential from the current metadata image (network threads:
 * a lock-free reference, released before any I/O). */
static bool
server_scram_lookup(void *ctx, samsa_scram_mech_t mech, const char *user,
                    samsa_scram_cred_t *cred)
{
    server_t       *srv = ctx;
    samsa_image_t  *img;
    bool            found;

    if (srv->brk.meta == NULL) {
        return false;
    }
    img = samsa_meta_image_get(srv->brk.meta);
    found = samsa_image_scram_credential(img, user, mech, cred);
    samsa_image_put(img);
    return found;
}

static samsa_err_t
server_open(server_t *srv, char *errstr, size_t errstr_size)
{
    const samsa_config_t  *cfg = &srv->cfg;
    samsa_err_t            err;
    size_t                 i;

    err = server_load_quorum_voters(srv, errstr, errstr_size);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    /* TLS first: a bad key store stops the start before anything opens */
    err = samsa_tlsconf_open(&srv->tls, cfg, errstr, errstr_size);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    err = samsa_saslconf_open(&srv->sasl, cfg, server_scram_lookup, srv,
                              errstr, errstr_size);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    err = server_open_metrics(srv, errstr, errstr_size);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    err = server_format_dirs(srv, errstr, errstr_size);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    srv->node.node_id = cfg->node_id;
    srv->node.controller_id = cfg->node_id;
    srv->brk_open = true;
    err = samsa_broker_open(&srv->brk, cfg, &srv->node, errstr, errstr_size);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    if (srv->brk.ctrl != NULL) {
        samsa_brokercfg_check_t  check = { server_tls_check, srv };

        samsa_controller_set_broker_check(srv->brk.ctrl, &check);
    }
    /* kafka.request.logger: DEBUG from request.log.enable, else WARN as
     * Kafka's log4j.properties; an operator may change it at run time */
    samsa_reqlog_init(&srv->reqlog, cfg->request_log_file);
    samsa_diag_logger_hook(SAMSA_DIAG_LOGGER_REQUEST,
                           samsa_reqlog_enable_hook, &srv->reqlog);
    if (samsa_config_bool(cfg, "request.log.enable")
        && !samsa_diag_logger_update(SAMSA_DIAG_LOGGER_REQUEST, false,
                                     SAMSA_DIAG_DEBUG, errstr,
                                     errstr_size)) {
        return SAMSA_ERR__IO;
    }
    srv->overrides = samsa_calloc(cfg->nmax_connections_per_ip_overrides + 1,
                                  sizeof(*srv->overrides));
    for (i = 0; i < cfg->nmax_connections_per_ip_overrides; i++) {
        snprintf(srv->overrides[i].ip, sizeof(srv->overrides[i].ip), "%s",
                 cfg->max_connections_per_ip_overrides[i].ip);
        srv->overrides[i].max = cfg->max_connections_per_ip_overrides[i].max;
    }
    if (cfg->role_controller) {
        err = server_side_open(srv, &srv->controller, "controller", true,
                               errstr, errstr_size);
        if (err != SAMSA_ERR_NONE) {
            return err;
        }
    }
    if (cfg->role_broker) {
        err = server_side_open(srv, &srv->broker, "broker", false, errstr,
                               errstr_size);
        if (err != SAMSA_ERR_NONE) {
            return err;
        }
    }
    server_fill_endpoints(srv);
    if (cfg->role_broker && !samsa_config_kraft(cfg)->is_cluster) {
        /* the image lists brokers: this one, now that its ports are known
         * (a cluster node registers with the active controller once its
         * servers run: server_start, broker/lifecycle.h) */
        err = samsa_broker_register(&srv->brk, errstr, errstr_size);
        if (err != SAMSA_ERR_NONE) {
            return err;
        }
    }
    server_observe(srv);
    return SAMSA_ERR_NONE;
}

/* Controller first, as Kafka starts its ControllerServer before the
 * BrokerServer in combined mode. */
static samsa_err_t
server_start(server_t *srv)
{
    samsa_err_t     err = SAMSA_ERR_NONE;
    samsa_image_t  *img;

    /* the dynamic key stores of the metadata log before any handshake */
    img = samsa_meta_image_get(srv->brk.meta);
    server_tls_reconf(srv, img);
    samsa_image_put(img);
    if (srv->controller.ss != NULL) {
        err = samsa_sockserver_start(srv->controller.ss);
    }
    if (err == SAMSA_ERR_NONE && srv->broker.ss != NULL) {
        err = samsa_sockserver_start(srv->broker.ss);
    }
    if (err == SAMSA_ERR_NONE) {
        samsa_broker_set_reconf(&srv->brk, server_reconf, srv);
    }
    if (err == SAMSA_ERR_NONE && srv->cfg.role_broker
        && samsa_config_kraft(&srv->cfg)->is_cluster) {
        /* BrokerRegistration to the active controller, in the background
         * (no leader may be elected yet; this node's own controller
         * listener serves it too) */
        srv->lifecycle = samsa_lifecycle_start(&srv->brk);
        if (srv->lifecycle == NULL) {
            err = SAMSA_ERR__IO;
        }
    }
    return err;
}

/* The metrics thread reads the servers: it goes first; no
 * reconfiguration touches them from here on.  A second call does nothing. */
static void
server_quiet(server_t *srv)
{
    samsa_httpd_close(srv->httpd);
    srv->httpd = NULL;
    if (srv->brk_open) {
        samsa_broker_set_reconf(&srv->brk, NULL, NULL);
    }
}

static void
server_stop(server_t *srv)
{
    server_side_t  *sides[2] = { &srv->broker, &srv->controller };
    size_t          i;

    server_quiet(srv);
    /* KIP-631: leadership moves off this broker before it goes */
    if (samsa_lifecycle_shutdown(srv->lifecycle) != SAMSA_ERR_NONE) {
        samsa_warn("controlled shutdown: the controller did not approve it "
                   "within broker.session.timeout.ms: shutting down anyway");
    }
    samsa_lifecycle_stop(srv->lifecycle);
    srv->lifecycle = NULL;
    for (i = 0; i < 2; i++) {
        if (sides[i]->ss != NULL) {
            samsa_sockserver_stop_accepting(sides[i]->ss);
        }
    }
    for (i = 0; i < 2; i++) {
        if (sides[i]->ss != NULL) {
            samsa_sockserver_drain(sides[i]->ss, SHUTDOWN_DRAIN_MS);
        }
    }
    for (i = 0; i < 2; i++) {
        if (sides[i]->ss != NULL) {
            samsa_sockserver_stop_handlers(sides[i]->ss);
        }
    }
}

static void
server_free(server_t *srv)
{
    server_side_t  *sides[2] = { &srv->broker, &srv->controller };
    size_t          i;

    /* Handlers have stopped; requests still waiting in a purgatory are
     * answered while their network threads' queues still exist. */
    server_quiet(srv);
    samsa_lifecycle_stop(srv->lifecycle);   /* if server_stop did not */
    srv->lifecycle = NULL;
    if (srv->brk_open) {
        samsa_broker_answer_waiting(&srv->brk);
    }
    for (i = 0; i < 2; i++) {
        samsa_sockserver_free(sides[i]->ss);
        sides[i]->ss = NULL;
        samsa_reqstats_free(sides[i]->rs);
        sides[i]->rs = NULL;
    }
    samsa_metrics_free(srv->metrics);
    srv->metrics = NULL;
    if (srv->brk_open) {
        samsa_broker_close(&srv->brk);
    }
    for (i = 0; i < 2; i++) {
        samsa_free(sides[i]->listeners);
        samsa_free(sides[i]->cfg_index);
    }
    samsa_free(srv->node.endpoints);
    samsa_free(srv->overrides);
    samsa_tlsconf_fini(&srv->tls);
    samsa_saslconf_fini(&srv->sasl);
    samsa_reqlog_close(&srv->reqlog);
    samsa_config_fini(&srv->cfg);
}

/* diag.level (checked against its names when the config loaded). */
static void
server_set_diag_level(const samsa_config_t *cfg)
{
    samsa_diag_level_t  level;

    if (samsa_diag_level_parse(samsa_config_str(cfg, "diag.level"),
                               &level)) {
        samsa_diag_set_level(level);
    }
}

/* Block the signals every thread should leave to main (threads inherit
 * the mask), then wait for one of them. */
static void
server_block_signals(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGINT);
    pthread_sigmask(SIG_BLOCK, set, NULL);
    signal(SIGPIPE, SIG_IGN);
}

int
main(int argc, char **argv)
{
    server_t   srv;
    sigset_t   set;
    char       errstr[1024] = "";
    int        sig = 0, rc = 1;

    memset(&srv, 0, sizeof(srv));
    prctl(PR_SET_NAME, "samsa-server", 0, 0, 0);
    if (samsa_format_is_command(argc, argv)) {
        return samsa_format_main(argc, argv);
    }
    server_block_signals(&set);
    if (samsa_config_from_args(&srv.cfg, argc, argv, errstr, sizeof(errstr))
        != SAMSA_ERR_NONE) {
        fprintf(stderr, "samsa-server: %s\n", errstr);
        goto out;
    }
    if (srv.cfg.show_help || srv.cfg.show_version) {
        if (srv.cfg.show_help) {
            samsa_config_usage(stdout);
        } else {
            printf("samsa-server %s\n", SAMSA_VERSION);
        }
        rc = 0;
        goto out;
    }
    server_set_diag_level(&srv.cfg);
    samsa_config_log_values(&srv.cfg);
    if (server_open(&srv, errstr, sizeof(errstr)) != SAMSA_ERR_NONE) {
        fprintf(stderr, "samsa-server: %s\n", errstr);
        goto out;
    }
    if (server_start(&srv) != SAMSA_ERR_NONE) {
        fprintf(stderr, "samsa-server: cannot start threads\n");
        goto out;
    }
    if (srv.metrics != NULL) {
        samsa_metrics_set_ready(srv.metrics, true);
    }
    samsa_info("samsa-server %s started: node.id=%d cluster.id=%s "
               "process.roles=%s%s%s", SAMSA_VERSION, (int) srv.cfg.node_id,
               srv.node.cluster_id, srv.cfg.role_broker ? "broker" : "",
               srv.cfg.role_broker && srv.cfg.role_controller ? "," : "",
               srv.cfg.role_controller ? "controller" : "");
    while (sigwait(&set, &sig) != 0) {
    }
    samsa_info("received %s: shutting down", strsignal(sig));
    server_stop(&srv);
    samsa_info("shut down cleanly");
    rc = 0;
out:
    server_free(&srv);
    return rc;
}
