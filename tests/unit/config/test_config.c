/* Unit tests for server/config.c and server/config_defs.c: defaults,
 * command line, validators, listeners, roles and quorum rules, per-IP
 * overrides, getters, and docs/CONFIG.md staying in step with the table. */
#include "unit.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "config/config.h"
#include "config/config_defs.h"
#include "util/props.h"

#define ORIGIN "server.properties:3"

/* ---- helpers ------------------------------------------------------------ */

/* Load from "k1", "v1", "k2", "v2", ..., NULL, each set with ORIGIN. */
static samsa_err_t
load_kv(samsa_config_t *cfg, char *errstr, size_t size, const char *k, ...)
{
    samsa_props_t  *props = samsa_props_new();
    samsa_err_t     err;
    va_list         ap;

    va_start(ap, k);
    for (; k != NULL; k = va_arg(ap, const char *)) {
        samsa_props_set(props, k, va_arg(ap, const char *), ORIGIN);
    }
    va_end(ap);
    errstr[0] = '\0';
    err = samsa_config_load(cfg, props, errstr, size);
    samsa_props_free(props);
    return err;
}

#define LOAD_OK(cfg, ...)                                                 \
    do {                                                                  \
        char  e_[512];                                                    \
        samsa_err_t  r_ = load_kv((cfg), e_, sizeof(e_), __VA_ARGS__,     \
                                  NULL);                                  \
        if (r_ != SAMSA_ERR_NONE) {                                       \
            fail_msg("load failed: %s", e_);                              \
        }                                                                 \
    } while (0)

/* Loading key=value alone (plus extra pairs) fails with errstr holding
 * the key, the value, the origin and why. */
static void
expect_bad(const char *key, const char *value, const char *why)
{
    samsa_config_t  cfg;
    char            errstr[1024], head[512];

    assert_int_equal(load_kv(&cfg, errstr, sizeof(errstr), key, value,
                             NULL),
                     SAMSA_ERR__CONFIG);
    snprintf(head, sizeof(head),
             "invalid value '%s' for configuration '%s': ", value, key);
    if (strstr(errstr, head) == NULL || strstr(errstr, why) == NULL
        || strstr(errstr, "(" ORIGIN ")") == NULL) {
        fail_msg("%s=%s: errstr '%s' lacks '%s'", key, value, errstr, why);
    }
    samsa_config_fini(&cfg);
}

/* Loading the pairs fails and errstr contains why. */
static void
expect_fail(const char *why, const char *k1, const char *v1, const char *k2,
            const char *v2)
{
    samsa_config_t  cfg;
    char            errstr[1024];

    assert_int_not_equal(load_kv(&cfg, errstr, sizeof(errstr), k1, v1, k2,
                                 v2, NULL),
                         SAMSA_ERR_NONE);
    if (strstr(errstr, why) == NULL) {
        fail_msg("%s=%s %s=%s: errstr '%s' lacks '%s'", k1, v1,
                 k2 != NULL ? k2 : "", v2 != NULL ? v2 : "", errstr, why);
    }
    samsa_config_fini(&cfg);
}

/* Redirect stderr (where diag writes) to a temp file; returns the saved
 * descriptor for stderr_end(). */
static int
stderr_begin(char *path)
{
    int  saved, fd;

    fflush(stderr);
    saved = dup(STDERR_FILENO);
    fd = mkstemp(path);
    assert_true(fd >= 0);
    dup2(fd, STDERR_FILENO);
    close(fd);
    return saved;
}

/* Restore stderr and return what was written (free it). */
static char *
stderr_end(int saved, const char *path)
{
    char   *text = calloc(1, 65536);
    FILE   *f;
    size_t  n;

    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    f = fopen(path, "r");
    assert_non_null(f);
    n = fread(text, 1, 65535, f);
    text[n] = '\0';
    fclose(f);
    unlink(path);
    return text;
}

static const samsa_ip_override_t *
find_override(const samsa_config_t *cfg, const char *ip)
{
    size_t  i;

    for (i = 0; i < cfg->nmax_connections_per_ip_overrides; i++) {
        if (strcmp(cfg->max_connections_per_ip_overrides[i].ip, ip) == 0) {
            return &cfg->max_connections_per_ip_overrides[i];
        }
    }
    return NULL;
}

static void
assert_listener(const samsa_listener_t *l, const char *name,
                const char *host, int port, bool is_controller)
{
    assert_string_equal(l->name, name);
    assert_string_equal(l->host, host);
    assert_int_equal(l->port, port);
    assert_string_equal(l->security_protocol, "PLAINTEXT");
    assert_int_equal(l->is_controller, is_controller);
}

/* ---- defaults and command line ------------------------------------------ */

static void
test_config_defaults_without_args(void **state)
{
    char           *argv[] = { "samsa-server", NULL };
    samsa_config_t  cfg;
    char            errstr[512] = "";

    (void) state;
    assert_int_equal(samsa_config_from_args(&cfg, 1, argv, errstr,
                                            sizeof(errstr)),
                     SAMSA_ERR_NONE);
    assert_false(cfg.show_help || cfg.show_version);
    assert_null(cfg.config_file);
    assert_true(cfg.role_broker && cfg.role_controller);
    assert_int_equal(cfg.node_id, 1);
    assert_int_equal(cfg.nlisteners, 2);
    assert_listener(&cfg.listeners[0], "PLAINTEXT", "localhost", 9092, false);
    assert_listener(&cfg.listeners[1], "CONTROLLER", "localhost", 9093, true);
    assert_int_equal(cfg.nadvertised_listeners, 1);
    assert_listener(&cfg.advertised_listeners[0], "PLAINTEXT", "localhost",
                    9092, false);
    assert_int_equal(cfg.ncontroller_listener_names, 1);
    assert_string_equal(cfg.controller_listener_names[0], "CONTROLLER");
    assert_int_equal(cfg.nlog_dirs, 1);
    assert_string_equal(cfg.log_dirs[0], "./samsa-data");
    assert_int_equal(samsa_config_int(&cfg, "num.network.threads"), 3);
    assert_int_equal(samsa_config_int(&cfg, "num.io.threads"), 8);
    assert_int_equal(samsa_config_int(&cfg, "queued.max.requests"), 500);
    assert_int_equal(samsa_config_long(&cfg, "queued.max.request.bytes"), -1);
    assert_int_equal(samsa_config_int(&cfg, "socket.request.max.bytes"),
                     104857600);
    assert_int_equal(samsa_config_int(&cfg, "socket.send.buffer.bytes"),
                     102400);
    assert_int_equal(samsa_config_int(&cfg, "socket.receive.buffer.bytes"),
                     102400);
    assert_int_equal(samsa_config_int(&cfg, "socket.listen.backlog.size"), 50);
    assert_int_equal(samsa_config_long(&cfg, "connections.max.idle.ms"),
                     600000);
    assert_int_equal(samsa_config_int(&cfg, "max.connections"), 2147483647);
    assert_int_equal(samsa_config_int(&cfg, "max.connections.per.ip"),
                     2147483647);
    assert_int_equal(cfg.nmax_connections_per_ip_overrides, 0);
    assert_false(samsa_config_bool(&cfg, "request.log.enable"));
    assert_string_equal(cfg.request_log_file,
                        "./samsa-data/samsa-request.log");
    assert_string_equal(samsa_config_source(&cfg, "num.io.threads"),
                        "default");
    samsa_config_fini(&cfg);
    samsa_config_fini(&cfg);                    /* safe twice */
}

static void
test_config_help_and_version(void **state)
{
    char           *help[] = { "samsa-server", "--bogus", "--help", NULL };
    char           *h[] = { "samsa-server", "-h", NULL };
    char           *ver[] = { "samsa-server", "--version", NULL };
    char           *v[] = { "samsa-server", "x.properties", "-V", NULL };
    char           *ov[] = { "samsa-server", "--override", "--help", NULL };
    samsa_config_t  cfg;
    char            errstr[512];

    (void) state;
    assert_int_equal(samsa_config_from_args(&cfg, 3, help, errstr, 512), 0);
    assert_true(cfg.show_help);
    samsa_config_fini(&cfg);
    assert_int_equal(samsa_config_from_args(&cfg, 2, h, errstr, 512), 0);
    assert_true(cfg.show_help);
    samsa_config_fini(&cfg);
    assert_int_equal(samsa_config_from_args(&cfg, 2, ver, errstr, 512), 0);
    assert_true(cfg.show_version && !cfg.show_help);
    samsa_config_fini(&cfg);
    assert_int_equal(samsa_config_from_args(&cfg, 3, v, errstr, 512), 0);
    assert_true(cfg.show_version);
    samsa_config_fini(&cfg);
    /* "--help" as the value of --override is not a request for help */
    assert_int_equal(samsa_config_from_args(&cfg, 3, ov, errstr, 512),
                     SAMSA_ERR__CONFIG);
    assert_false(cfg.show_help);
    assert_non_null(strstr(errstr, "key=value"));
    samsa_config_fini(&cfg);
}

static void
test_config_usage_names_options(void **state)
{
    char    *text = NULL;
    size_t   len = 0;
    FILE    *f = open_memstream(&text, &len);

    (void) state;
    samsa_config_usage(f);
    fclose(f);
    assert_non_null(strstr(text, "samsa-server [server.properties]"));
    assert_non_null(strstr(text, "--override key=value"));
    assert_non_null(strstr(text, "--help"));
    assert_non_null(strstr(text, "--version"));
    free(text);
}

/* Overrides win over the file, wherever they stand on the command line. */
static void
test_config_overrides_win_over_file(void **state)
{
    char            path[] = "/tmp/samsa-test-config-XXXXXX";
    const char      text[] = "# test\n"
                             "num.io.threads=4\n"
                             "num.network.threads = 5\n"
                             "queued.max.requests: 6\n";
    char           *argv[] = { "samsa-server", "--override",
                               "num.io.threads=9", path,
                               "--override=queued.max.requests= 70 ",
                               NULL };
    samsa_config_t  cfg;
    char            errstr[512] = "", where[512];
    int             fd;

    (void) state;
    fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, sizeof(text) - 1),
                     (ssize_t) sizeof(text) - 1);
    close(fd);
    if (samsa_config_from_args(&cfg, 5, argv, errstr, sizeof(errstr))
        != SAMSA_ERR_NONE) {
        fail_msg("%s", errstr);
    }
    assert_string_equal(cfg.config_file, path);
    assert_int_equal(samsa_config_int(&cfg, "num.io.threads"), 9);
    assert_int_equal(samsa_config_int(&cfg, "num.network.threads"), 5);
    assert_int_equal(samsa_config_int(&cfg, "queued.max.requests"), 70);
    assert_string_equal(samsa_config_source(&cfg, "num.io.threads"),
                        "--override");
    assert_string_equal(samsa_config_source(&cfg, "queued.max.requests"),
                        "--override");
    snprintf(where, sizeof(where), "%s:3", path);
    assert_string_equal(samsa_config_source(&cfg, "num.network.threads"),
                        where);
    assert_string_equal(samsa_config_source(&cfg, "num.partitions"),
                        "default");
    samsa_config_fini(&cfg);
    unlink(path);
}

static void
test_config_bad_arguments(void **state)
{
    char           *unknown[] = { "samsa-server", "--bogus", NULL };
    char           *two[] = { "samsa-server", "a.properties", "b", NULL };
    char           *novalue[] = { "samsa-server", "--override", NULL };
    char           *noeq[] = { "samsa-server", "--override", "x", NULL };
    char           *nokey[] = { "samsa-server", "--override", " =1", NULL };
    char           *missing[] = { "samsa-server", "/nonexistent/s.props",
                                  NULL };
    char           *badval[] = { "samsa-server", "--override",
                                 "num.io.threads=abc", NULL };
    samsa_config_t  cfg;
    char            errstr[512];

    (void) state;
    assert_int_equal(samsa_config_from_args(&cfg, 2, unknown, errstr, 512),
                     SAMSA_ERR__CONFIG);
    assert_non_null(strstr(errstr, "'--bogus'"));
    samsa_config_fini(&cfg);
    assert_int_equal(samsa_config_from_args(&cfg, 3, two, errstr, 512),
                     SAMSA_ERR__CONFIG);
    assert_non_null(strstr(errstr, "more than one"));
    samsa_config_fini(&cfg);
    assert_int_equal(samsa_config_from_args(&cfg, 2, novalue, errstr, 512),
                     SAMSA_ERR__CONFIG);
    samsa_config_fini(&cfg);
    assert_int_equal(samsa_config_from_args(&cfg, 3, noeq, errstr, 512),
                     SAMSA_ERR__CONFIG);
    assert_non_null(strstr(errstr, "got 'x'"));
    samsa_config_fini(&cfg);
    assert_int_equal(samsa_config_from_args(&cfg, 3, nokey, errstr, 512),
                     SAMSA_ERR__CONFIG);
    samsa_config_fini(&cfg);
    assert_int_equal(samsa_config_from_args(&cfg, 2, missing, errstr, 512),
                     SAMSA_ERR__NOENT);
    assert_non_null(strstr(errstr, "/nonexistent/s.props"));
    samsa_config_fini(&cfg);
    assert_int_equal(samsa_config_from_args(&cfg, 3, badval, errstr, 512),
                     SAMSA_ERR__CONFIG);
    assert_string_equal(errstr, "invalid value 'abc' for configuration "
                                "'num.io.threads': not a number "
                                "(--override)");
    samsa_config_fini(&cfg);
}

/* ---- single-key validators ---------------------------------------------- */

static void
test_config_validators_reject(void **state)
{
    (void) state;
    expect_bad("num.io.threads", "abc", "not a number");
    expect_bad("num.io.threads", "12x", "not a number");
    expect_bad("num.io.threads", "", "not a number");
    expect_bad("num.io.threads", "0x10", "not a number");
    expect_bad("num.io.threads", "0", "must be at least 1");
    expect_bad("num.io.threads", "2147483648", "out of range for an int");
    expect_bad("num.network.threads", "-1", "must be at least 1");
    expect_bad("queued.max.requests", "0", "must be at least 1");
    expect_bad("socket.request.max.bytes", "0", "must be at least 1");
    expect_bad("socket.send.buffer.bytes", "-2", "must be at least -1");
    expect_bad("socket.listen.backlog.size", "0", "must be at least 1");
    expect_bad("max.connections", "-1", "must be at least 0");
    expect_bad("queued.max.request.bytes", "9223372036854775808",
               "out of range for a long");
    expect_bad("connections.max.idle.ms", "-2", "must be at least -1");
    expect_bad("request.log.enable", "yes", "not a boolean");
    expect_bad("compression.type", "lz5", "must be one of: uncompressed");
    expect_bad("compression.lz4.level", "18", "must be between 1 and 17");
    expect_bad("compression.gzip.level", "0", "must be -1 or between 1");
    expect_bad("log.cleaner.min.cleanable.ratio", "1.5",
               "must be between 0 and 1");
    expect_bad("log.cleaner.min.cleanable.ratio", "nan", "not a number");
    expect_bad("log.cleaner.min.cleanable.ratio", "NaN",
               "must be between 0 and 1");
    expect_bad("log.cleaner.min.cleanable.ratio", "1e999", "out of range");
    expect_bad("process.roles", "broker,foo", "'foo' is not one of: broker");
    expect_bad("process.roles", "broker,broker", "listed twice");
    expect_bad("process.roles", "", "must not be empty");
    expect_bad("log.cleanup.policy", "delete,,compact", "empty item");
    expect_bad("log.dirs", "/a, /a", "listed twice");
    expect_bad("log.dir", "", "must not be empty");
    expect_bad("node.id", "-1", "must be at least 0");
    expect_bad("queued.max.request.bytes", "1000", "must be -1");
    expect_bad("max.connections.per.ip", "0", "may be 0 only");
    expect_bad("listener.security.protocol.map",
               "PLAINTEXT:PLAINTEXT,CONTROLLER:FOO",
               "unknown security protocol 'FOO'");
    expect_bad("listener.security.protocol.map",
               "PLAINTEXT:PLAINTEXT,plaintext:SSL,CONTROLLER:PLAINTEXT",
               "mapped twice");
    expect_bad("listener.security.protocol.map", "PLAINTEXT",
               "not NAME:PROTOCOL");
    expect_bad("controller.listener.names", "CONTROLLER,controller",
               "listed twice");
}

/* Values are trimmed; signs, case-insensitive booleans and Long.MAX pass. */
static void
test_config_values_accepted(void **state)
{
    samsa_config_t  cfg;

    (void) state;
    LOAD_OK(&cfg, "num.io.threads", "  +12\t", "request.log.enable", "TRUE",
            "log.retention.bytes", "-5", "log.flush.interval.messages",
            "9223372036854775807", "log.cleaner.min.cleanable.ratio", "0.25",
            "queued.max.request.bytes", "104857600",
            "max.connections.per.ip", "0",
            "max.connections.per.ip.overrides", "127.0.0.1:5");
    assert_int_equal(samsa_config_int(&cfg, "num.io.threads"), 12);
    assert_true(samsa_config_bool(&cfg, "request.log.enable"));
    assert_int_equal(samsa_config_long(&cfg, "log.retention.bytes"), -5);
    assert_true(samsa_config_long(&cfg, "log.flush.interval.messages")
                == INT64_MAX);
    assert_true(samsa_config_double(&cfg, "log.cleaner.min.cleanable.ratio")
                == 0.25);
    assert_int_equal(samsa_config_long(&cfg, "queued.max.request.bytes"),
                     104857600);
    assert_int_equal(samsa_config_int(&cfg, "max.connections.per.ip"), 0);
    samsa_config_fini(&cfg);
}

/* ---- listeners ---------------------------------------------------------- */

static void
test_config_listeners_parse(void **state)
{
    samsa_config_t  cfg;
    char            host[256];

    (void) state;
    LOAD_OK(&cfg, "listeners",
            "plaintext://[::1]:9092, CONTROLLER://:9093,"
            "internal://broker-1.example:0,EXTERNAL://10.0.0.1:0,"
            "Other://:19092",
            "listener.security.protocol.map",
            "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,INTERNAL:plaintext,"
            "EXTERNAL:PLAINTEXT,OTHER:PLAINTEXT");
    assert_int_equal(cfg.nlisteners, 5);
    assert_listener(&cfg.listeners[0], "PLAINTEXT", "::1", 9092, false);
    assert_listener(&cfg.listeners[1], "CONTROLLER", "", 9093, true);
    assert_listener(&cfg.listeners[2], "INTERNAL", "broker-1.example", 0,
                    false);
    assert_listener(&cfg.listeners[3], "EXTERNAL", "10.0.0.1", 0, false);
    assert_int_equal(cfg.nadvertised_listeners, 4);
    assert_listener(&cfg.advertised_listeners[0], "PLAINTEXT", "::1", 9092,
                    false);
    assert_listener(&cfg.advertised_listeners[1], "INTERNAL",
                    "broker-1.example", 0, false);
    /* an empty host is advertised as this machine's name */
    assert_int_equal(gethostname(host, sizeof(host)), 0);
    assert_listener(&cfg.advertised_listeners[3], "OTHER", host, 19092,
                    false);
    samsa_config_fini(&cfg);
}

static void
test_config_listeners_reject(void **state)
{
    (void) state;
    expect_bad("listeners", "PLAINTEXT://::1:9092,CONTROLLER://:9093",
               "must be in brackets");
    expect_bad("listeners", "PLAINTEXT://[::1:9092,CONTROLLER://:9093",
               "expected [IPv6]:port");
    expect_bad("listeners", "PLAINTEXT://[1.2.3.4]:9092", "bad host");
    expect_bad("listeners", "PLAINTEXT://localhost,CONTROLLER://:9093",
               "missing ':'");
    expect_bad("listeners", "PLAINTEXT://localhost:65536", "port must be");
    expect_bad("listeners", "PLAINTEXT://localhost:-1", "port must be");
    expect_bad("listeners", "PLAINTEXT://localhost:", "port must be");
    expect_bad("listeners", "PLAINTEXT://bad_host!:1", "bad host");
    expect_bad("listeners", "localhost:9092", "not NAME://host:port");
    expect_bad("listeners", "://localhost:9092", "not NAME://host:port");
    expect_bad("listeners", "PLAIN TEXT://localhost:9092",
               "bad listener name");
    expect_bad("listeners",
               "PLAINTEXT://a:9092,plaintext://b:9094,CONTROLLER://:9093",
               "listener name 'PLAINTEXT' is used twice");
    expect_bad("listeners", "PLAINTEXT://a:9092,CONTROLLER://b:9092",
               "use the same port 9092");
    expect_bad("listeners", "FOO://:9092,CONTROLLER://:9093",
               "'FOO' has no security protocol");
    expect_bad("listeners", "", "must not be empty");
    /* a controller listener mapped to SSL or SASL is rejected (broker
     * listeners take all four protocols) */
    expect_fail("controller listener 'CONTROLLER' uses security protocol "
                "SASL_PLAINTEXT", "listener.security.protocol.map",
                "CONTROLLER:SASL_PLAINTEXT,PLAINTEXT:PLAINTEXT", NULL, NULL);
    expect_fail("security protocol SSL", "listener.security.protocol.map",
                "CONTROLLER:SSL,PLAINTEXT:PLAINTEXT", NULL, NULL);
}

static void
test_config_advertised_listeners(void **state)
{
    samsa_config_t  cfg;

    (void) state;
    LOAD_OK(&cfg, "advertised.listeners", "PLAINTEXT://public.example:19092");
    assert_int_equal(cfg.nadvertised_listeners, 1);
    assert_listener(&cfg.advertised_listeners[0], "PLAINTEXT",
                    "public.example", 19092, false);
    samsa_config_fini(&cfg);
    expect_bad("advertised.listeners", "CONTROLLER://h:9093",
               "'CONTROLLER' is a controller listener");
    expect_bad("advertised.listeners", "OTHER://h:1",
               "'OTHER' is not the name of a listener");
    expect_bad("advertised.listeners", "PLAINTEXT://0.0.0.0:9092",
               "wildcard address");
    expect_bad("advertised.listeners", "PLAINTEXT://h:0", "port 0");
    expect_bad("advertised.listeners", "PLAINTEXT://a:1,PLAINTEXT://b:2",
               "used twice");
    /* by default a wildcard listener cannot be advertised */
    expect_fail("set advertised.listeners", "listeners",
                "PLAINTEXT://0.0.0.0:9092,CONTROLLER://:9093", NULL, NULL);
}

/* ---- roles, node id, quorum --------------------------------------------- */

static void
test_config_controller_rules(void **state)
{
    samsa_config_t  cfg;

    (void) state;
    /* a broker-only node (more in test_config_kraft.c) */
    expect_fail("controller.listener.names must not contain a value "
                "appearing in the 'listeners' configuration when running "
                "KRaft with just the broker role", "process.roles", "broker",
                NULL, NULL);
    expect_fail("every listener must be a controller listener",
                "process.roles", "controller", NULL, NULL);
    expect_fail("no listener is named in controller.listener.names",
                "listeners", "PLAINTEXT://:9092", NULL, NULL);
    expect_fail("must be set when process.roles includes controller",
                "controller.listener.names", "", NULL, NULL);
    expect_fail("every listener is a controller listener", "listeners",
                "CONTROLLER://:9093", NULL, NULL);

    LOAD_OK(&cfg, "process.roles", "controller", "listeners",
            "CONTROLLER://:9093", "node.id", "1", "controller.quorum.voters",
            "1@localhost:9093");
    assert_true(cfg.role_controller && !cfg.role_broker);
    assert_int_equal(cfg.nadvertised_listeners, 0);
    samsa_config_fini(&cfg);

    LOAD_OK(&cfg, "process.roles", " controller , broker ",
            "controller.listener.names", "ctl", "listeners",
            "ctl://:1,PLAINTEXT://:2", "listener.security.protocol.map",
            "CTL:PLAINTEXT,PLAINTEXT:PLAINTEXT", "node.id", "1",
            "controller.quorum.bootstrap.servers", "localhost:1");
    assert_true(cfg.role_controller && cfg.role_broker);
    assert_listener(&cfg.listeners[0], "CTL", "", 1, true);
    assert_listener(&cfg.listeners[1], "PLAINTEXT", "", 2, false);
    samsa_config_fini(&cfg);
}

static void
test_config_node_id_and_alias(void **state)
{
    samsa_config_t  cfg;

    (void) state;
    LOAD_OK(&cfg, "node.id", "7");
    assert_int_equal(cfg.node_id, 7);
    samsa_config_fini(&cfg);
    LOAD_OK(&cfg, "broker.id", "5");
    assert_int_equal(cfg.node_id, 5);
    assert_int_equal(samsa_config_int(&cfg, "node.id"), 5);
    assert_string_equal(samsa_config_source(&cfg, "node.id"), ORIGIN);
    samsa_config_fini(&cfg);
    LOAD_OK(&cfg, "broker.id", "5", "node.id", "5");
    assert_int_equal(cfg.node_id, 5);
    samsa_config_fini(&cfg);
    expect_fail("differs from node.id=6", "broker.id", "5", "node.id", "6");
    expect_bad("broker.id", "-1", "must be at least 0");
}

static void
test_config_quorum_single_node_only(void **state)
{
    samsa_config_t  cfg;

    (void) state;
    LOAD_OK(&cfg, "controller.quorum.voters", "1@localhost:9093");
    samsa_config_fini(&cfg);
    LOAD_OK(&cfg, "controller.quorum.bootstrap.servers",
            "localhost:9093, 127.0.0.1:9093");
    samsa_config_fini(&cfg);
    LOAD_OK(&cfg, "node.id", "3", "controller.quorum.voters",
            "3@[::1]:9093");
    samsa_config_fini(&cfg);
    expect_bad("controller.quorum.voters", "2@localhost:9093",
               "a multi-node quorum needs process.roles set");
    expect_bad("controller.quorum.voters",
               "1@localhost:9093,2@other:9093",
               "'2@other:9093' is not this node");
    expect_bad("controller.quorum.voters", "1@elsewhere.example:9093",
               "a multi-node quorum needs process.roles set");
    expect_bad("controller.quorum.voters", "1@localhost:9999",
               "a multi-node quorum needs process.roles set");
    expect_bad("controller.quorum.voters", "x@localhost:9093",
               "the voter id 'x' is not a number");
    expect_bad("controller.quorum.voters", "localhost:9093",
               "is not of the form {id}@{host}:{port}");
    expect_bad("controller.quorum.bootstrap.servers", "other.example:9093",
               "a multi-node quorum needs process.roles set");
    expect_bad("controller.quorum.bootstrap.servers", "localhost:9092",
               "a multi-node quorum needs process.roles set");
    expect_bad("controller.quorum.bootstrap.servers", "localhost",
               "missing ':'");
}

static void
test_config_log_dirs_and_request_log(void **state)
{
    samsa_config_t  cfg;

    (void) state;
    LOAD_OK(&cfg, "log.dir", "/x", "log.dirs", " /a , /b ");
    assert_int_equal(cfg.nlog_dirs, 2);
    assert_string_equal(cfg.log_dirs[0], "/a");
    assert_string_equal(cfg.log_dirs[1], "/b");
    assert_string_equal(cfg.request_log_file, "/a/samsa-request.log");
    samsa_config_fini(&cfg);
    LOAD_OK(&cfg, "log.dir", "/x", "request.log.file", "stderr",
            "request.log.enable", "true");
    assert_int_equal(cfg.nlog_dirs, 1);
    assert_string_equal(cfg.log_dirs[0], "/x");
    assert_string_equal(cfg.request_log_file, "stderr");
    assert_true(samsa_config_bool(&cfg, "request.log.enable"));
    samsa_config_fini(&cfg);
    LOAD_OK(&cfg, "request.log.file", "/var/log/samsa/req.log");
    assert_string_equal(cfg.request_log_file, "/var/log/samsa/req.log");
    samsa_config_fini(&cfg);
}

/* ---- max.connections.per.ip.overrides ----------------------------------- */

static void
test_config_ip_overrides(void **state)
{
    samsa_config_t              cfg;
    const samsa_ip_override_t  *o;

    (void) state;
    LOAD_OK(&cfg, "max.connections.per.ip.overrides",
            "10.1.2.3:5, [::1]:6, fe80::2:7, 10.1.2.3 : 8");
    assert_int_equal(cfg.nmax_connections_per_ip_overrides, 3);
    o = find_override(&cfg, "10.1.2.3");
    assert_non_null(o);
    assert_int_equal(o->max, 8);                /* the later entry wins */
    o = find_override(&cfg, "::1");
    assert_non_null(o);
    assert_int_equal(o->max, 6);
    o = find_override(&cfg, "fe80::2");
    assert_non_null(o);
    assert_int_equal(o->max, 7);
    samsa_config_fini(&cfg);

    /* a name stands for every address it resolves to */
    LOAD_OK(&cfg, "max.connections.per.ip.overrides", "localhost:3");
    assert_true(cfg.nmax_connections_per_ip_overrides >= 1);
    o = find_override(&cfg, "127.0.0.1");
    assert_non_null(o);
    assert_int_equal(o->max, 3);
    samsa_config_fini(&cfg);

    expect_bad("max.connections.per.ip.overrides", "10.0.0.1",
               "missing ':'");
    expect_bad("max.connections.per.ip.overrides", "10.0.0.1:x",
               "the count must be");
    expect_bad("max.connections.per.ip.overrides", "10.0.0.1:-1",
               "the count must be");
    expect_bad("max.connections.per.ip.overrides", ":5", "missing host");
    expect_bad("max.connections.per.ip.overrides", "10.0.0.1:1,",
               "empty item");
}

static void
test_config_ip_override_unresolvable(void **state)
{
    samsa_config_t  cfg;
    char            errstr[512];

    (void) state;
    assert_int_equal(load_kv(&cfg, errstr, sizeof(errstr),
                             "max.connections.per.ip.overrides",
                             "no-such-host.invalid:1", NULL),
                     SAMSA_ERR__RESOLVE);
    assert_non_null(strstr(errstr, "cannot resolve host "
                                   "'no-such-host.invalid'"));
    assert_non_null(strstr(errstr, "max.connections.per.ip.overrides"));
    samsa_config_fini(&cfg);
}

/* ---- unknown keys, getters, sources ------------------------------------- */

static void
test_config_unknown_key_warns_but_loads(void **state)
{
    char            path[] = "/tmp/samsa-test-stderr-XXXXXX";
    samsa_config_t  cfg;
    char           *out;
    int             saved;

    (void) state;
    saved = stderr_begin(path);
    LOAD_OK(&cfg, "no.such.key", "1", "num.partitions", "3",
            "background.threads", "4");
    samsa_config_log_values(&cfg);
    out = stderr_end(saved, path);
    assert_non_null(strstr(out, "WARN"));
    assert_non_null(strstr(out, "unknown configuration 'no.such.key' "
                                "(" ORIGIN ") is ignored"));
    /* num.partitions is used (topics created without a count) */
    assert_null(strstr(out, "'num.partitions' (" ORIGIN ") is accepted"));
    assert_non_null(strstr(out, "configuration 'background.threads' ("
                                ORIGIN ") is accepted but not used yet"));
    assert_non_null(strstr(out, "config num.partitions = 3 (" ORIGIN ")"));
    assert_null(strstr(out, "num.io.threads"));
    assert_int_equal(samsa_config_int(&cfg, "num.partitions"), 3);
    free(out);
    samsa_config_fini(&cfg);
}

static void
test_config_getters_and_sources(void **state)
{
    samsa_config_t   cfg;
    char *const     *items;
    size_t           n;

    (void) state;
    LOAD_OK(&cfg, "log.retention.ms", "1000", "ssl.key.password", " s3cret ",
            "log.cleanup.policy", "compact, delete");
    assert_int_equal(samsa_config_int(&cfg, "num.network.threads"), 3);
    assert_int_equal(samsa_config_int(&cfg, "log.retention.hours"), 168);
    assert_int_equal(samsa_config_long(&cfg, "log.retention.ms"), 1000);
    assert_int_equal(samsa_config_long(&cfg, "connections.max.idle.ms"),
                     600000);
    assert_true(samsa_config_double(&cfg, "log.cleaner.min.cleanable.ratio")
                == 0.5);
    assert_true(samsa_config_bool(&cfg, "auto.create.topics.enable"));
    assert_false(samsa_config_bool(&cfg, "request.log.enable"));
    assert_string_equal(samsa_config_str(&cfg, "compression.type"),
                        "producer");
    assert_string_equal(samsa_config_str(&cfg, "ssl.key.password"),
                        " s3cret ");                /* not trimmed */
    assert_string_equal(samsa_config_str(&cfg, "request.log.file"), "");
    assert_null(samsa_config_str(&cfg, "broker.rack"));
    assert_false(samsa_config_is_set(&cfg, "log.roll.ms"));
    assert_true(samsa_config_is_set(&cfg, "log.retention.ms"));
    assert_true(samsa_config_is_set(&cfg, "log.retention.hours"));
    items = samsa_config_list(&cfg, "log.cleanup.policy", &n);
    assert_int_equal(n, 2);
    assert_string_equal(items[0], "compact");
    assert_string_equal(items[1], "delete");
    assert_string_equal(samsa_config_source(&cfg, "log.retention.ms"),
                        ORIGIN);
    assert_string_equal(samsa_config_source(&cfg, "log.retention.hours"),
                        "default");
    samsa_config_fini(&cfg);
}

/* Every row is well formed: known type, parseable default, doc line. */
static void
test_config_defs_table_consistent(void **state)
{
    const samsa_config_def_t  *def;
    size_t                     i, j;

    (void) state;
    assert_true(samsa_config_ndefs > 100);
    for (i = 0; i < samsa_config_ndefs; i++) {
        def = &samsa_config_defs[i];
        assert_int_equal(samsa_config_defs_index(def->name), i);
        assert_true(def->doc != NULL && def->doc[0] != '\0');
        assert_string_not_equal(samsa_config_defs_type_name(def->type), "?");
        if (def->check == SAMSA_CONFIG_CHECK_ENUM) {
            assert_non_null(def->names);
        }
        if (def->check == SAMSA_CONFIG_CHECK_FN) {
            assert_non_null(def->fn);
        }
        for (j = 0; j < i; j++) {
            assert_string_not_equal(def->name, samsa_config_defs[j].name);
        }
    }
    assert_int_equal(samsa_config_defs_index("no.such.key"),
                     samsa_config_ndefs);
}

/* The whole file at path, NUL-terminated (*size: its length). */
static char *
read_whole(const char *path, long *size)
{
    FILE  *f = fopen(path, "r");
    char  *text;

    if (f == NULL) {
        fail_msg("cannot open %s", path);
    }
    fseek(f, 0, SEEK_END);
    *size = ftell(f);
    rewind(f);
    text = calloc(1, (size_t) *size + 1);
    assert_int_equal(fread(text, 1, (size_t) *size, f), (size_t) *size);
    fclose(f);
    return text;
}

/* docs/CONFIG.md's generated table matches samsa_config_defs_markdown().
 * With SAMSA_WRITE_CONFIG_DOC=1 in the environment the file is rewritten
 * instead (scripts/gen_config_doc.sh). */
static void
test_config_doc_in_sync(void **state)
{
    static const char  begin[] = "<!-- BEGIN GENERATED TABLE -->\n";
    static const char  end[] = "<!-- END GENERATED TABLE -->";
    const char        *suffix = "tests/unit/config/test_config.c";
    char               path[4096], *doc, *gen = NULL, *b, *e;
    size_t             genlen = 0, rootlen = strlen(__FILE__)
                                                - strlen(suffix);
    FILE              *f;
    long               size;

    (void) state;
    if (__FILE__[0] != '/' || strcmp(&__FILE__[rootlen], suffix) != 0) {
        skip();
    }
    snprintf(path, sizeof(path), "%.*sdocs/CONFIG.md", (int) rootlen,
             __FILE__);
    doc = read_whole(path, &size);
    f = open_memstream(&gen, &genlen);
    samsa_config_defs_markdown(f);
    fclose(f);
    b = strstr(doc, begin);
    e = b != NULL ? strstr(b, end) : NULL;
    assert_non_null(e);
    b += strlen(begin);
    if (getenv("SAMSA_WRITE_CONFIG_DOC") != NULL) {
        f = fopen(path, "w");
        assert_non_null(f);
        fprintf(f, "%.*s%s%s", (int) (b - doc), doc, gen, e);
        fclose(f);
    } else if ((size_t) (e - b) != genlen || memcmp(b, gen, genlen) != 0) {
        fail_msg("docs/CONFIG.md is stale: run scripts/gen_config_doc.sh");
    }
    free(gen);
    free(doc);
}

/* The project root from __FILE__ (an absolute path under CMake). */
static size_t
test_root_len(void)
{
    const char  *suffix = "tests/unit/config/test_config.c";
    size_t       rootlen = strlen(__FILE__) - strlen(suffix);

    if (__FILE__[0] != '/' || strcmp(&__FILE__[rootlen], suffix) != 0) {
        fail_msg("built with a relative __FILE__: %s", __FILE__);
    }
    return rootlen;
}

/* config/server.properties is samsa_config_defs_properties()'s output
 * (SAMSA_WRITE_CONFIG_DOC=1 rewrites it); as shipped it sets nothing, and
 * with every line that has a value uncommented it loads (every default is
 * a valid value of its key, written as the parser reads it back). */
static void
test_config_sample_properties(void **state)
{
    size_t          rootlen = test_root_len(), genlen = 0, n = 0;
    char            path[4096], errstr[1024], *gen = NULL, *on, *line, *eq;
    char           *save = NULL;
    samsa_props_t  *props;
    samsa_config_t  cfg;
    FILE           *f;
    long            size;
    char           *doc;

    (void) state;
    snprintf(path, sizeof(path), "%.*sconfig/server.properties",
             (int) rootlen, __FILE__);
    f = open_memstream(&gen, &genlen);
    samsa_config_defs_properties(f);
    fclose(f);
    if (getenv("SAMSA_WRITE_CONFIG_DOC") != NULL) {
        f = fopen(path, "w");
        assert_non_null(f);
        assert_int_equal(fwrite(gen, 1, genlen, f), genlen);
        fclose(f);
    }
    doc = read_whole(path, &size);
    if ((size_t) size != genlen || memcmp(doc, gen, genlen) != 0) {
        fail_msg("config/server.properties is stale: run "
                 "scripts/gen_config_doc.sh");
    }
    props = samsa_props_new();
    assert_int_equal(samsa_props_parse(props, doc, (size_t) size, "sample",
                                       errstr, sizeof(errstr)),
                     SAMSA_ERR_NONE);
    assert_int_equal(samsa_props_count(props), 0);
    samsa_props_free(props);
    /* uncomment "#key=value" lines (not the comments, which have blanks) */
    on = calloc(1, (size_t) size + 1);
    for (line = strtok_r(doc, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        eq = strchr(line, '=');
        if (line[0] == '#' && line[1] != ' ' && eq != NULL && eq[1] != '\0'
            && memchr(line, ' ', (size_t) (eq - line)) == NULL) {
            strcat(strcat(on, line + 1), "\n");
            n++;
        }
    }
    assert_true(n > samsa_config_ndefs / 2);
    props = samsa_props_new();
    assert_int_equal(samsa_props_parse(props, on, strlen(on), "uncommented",
                                       errstr, sizeof(errstr)),
                     SAMSA_ERR_NONE);
    assert_int_equal(samsa_props_count(props), n);
    if (samsa_config_load(&cfg, props, errstr, sizeof(errstr))
        != SAMSA_ERR_NONE) {
        fail_msg("the sample's defaults do not load: %s", errstr);
    }
    samsa_config_fini(&cfg);
    samsa_props_free(props);
    free(on);
    free(doc);
    free(gen);
}

/* listener.name.<listener>.<key> for the per-listener keys: the listener
 * in lower case and among listeners, the value checked as the key's own;
 * other keys with the prefix are unknown (ignored). */
static void
test_config_listener_prefixed(void **state)
{
    samsa_config_t                 cfg;
    const samsa_listener_value_t  *v;
    char                           listener[64];
    const char                    *rest;
    size_t                         def;

    (void) state;
    LOAD_OK(&cfg, "listener.name.plaintext.max.connections", " 5 ",
            "listener.name.plaintext.max.connection.creation.rate", "7",
            "listener.name.plaintext.num.io.threads", "3");
    v = samsa_config_listener_value(&cfg, "PLAINTEXT", "max.connections");
    assert_non_null(v);
    assert_int_equal(v->num, 5);
    assert_string_equal(v->listener, "PLAINTEXT");
    assert_string_equal(v->source, ORIGIN);
    v = samsa_config_listener_value(&cfg, "plaintext",
                                    "max.connection.creation.rate");
    assert_non_null(v);
    assert_int_equal(v->num, 7);
    assert_null(samsa_config_listener_value(&cfg, "CONTROLLER",
                                            "max.connections"));
    assert_int_equal(cfg.nlistener_values, 2);     /* num.io.threads: no */
    samsa_config_fini(&cfg);
    assert_true(samsa_config_listener_key(
        "listener.name.x.max.connections", listener, sizeof(listener), &rest,
        &def));
    assert_string_equal(listener, "x");
    assert_string_equal(rest, "max.connections");
    assert_false(samsa_config_listener_key(
        "listener.name.x.num.io.threads", listener, sizeof(listener), &rest,
        &def));
    assert_false(samsa_config_listener_key(
        "listener.name.max.connections", listener, sizeof(listener), &rest,
        &def));

    expect_bad("listener.name.plaintext.max.connections", "-1",
               "must be at least 0");
    expect_bad("listener.name.plaintext.max.connections", "many",
               "not a number");
    expect_bad("listener.name.other.max.connections", "5",
               "no such listener in listeners");
    expect_bad("listener.name.PLAINTEXT.max.connections", "5",
               "must be in lower case");
}

/* SSL broker listeners load; listener.name.<l>.ssl.* values are kept as
 * text (an ENUM key checked against its names, a list item by item). */
static void
test_config_ssl_listener(void **state)
{
    samsa_config_t                 cfg;
    const samsa_listener_value_t  *v;

    (void) state;
    LOAD_OK(&cfg, "listeners", "PLAINTEXT://:9092,CONTROLLER://:9093,"
            "SSL://:9094",
            "listener.name.ssl.ssl.client.auth", "required",
            "listener.name.ssl.ssl.enabled.protocols", "TLSv1.3, TLSv1.2",
            "listener.name.ssl.ssl.keystore.location", " /k.pem ");
    assert_int_equal(cfg.nlisteners, 3);
    assert_string_equal(cfg.listeners[2].security_protocol, "SSL");
    v = samsa_config_listener_value(&cfg, "SSL", "ssl.client.auth");
    assert_non_null(v);
    assert_string_equal(v->text, "required");
    v = samsa_config_listener_value(&cfg, "SSL", "ssl.keystore.location");
    assert_non_null(v);
    assert_string_equal(v->text, "/k.pem");
    assert_string_equal(v->key, "listener.name.ssl.ssl.keystore.location");
    samsa_config_fini(&cfg);
    expect_fail("'sometimes' is not one of", "listeners",
                "PLAINTEXT://:9092,CONTROLLER://:9093,SSL://:9094",
                "listener.name.ssl.ssl.client.auth", "sometimes");
    expect_fail("'TLSv1.1' is not one of", "listeners",
                "PLAINTEXT://:9092,CONTROLLER://:9093,SSL://:9094",
                "listener.name.ssl.ssl.enabled.protocols", "TLSv1.3,TLSv1.1");
    expect_bad("ssl.enabled.protocols", "TLSv1.1", "is not one of");
    expect_bad("ssl.client.auth", "always", "must be one of");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_defaults_without_args),
        cmocka_unit_test(test_config_help_and_version),
        cmocka_unit_test(test_config_usage_names_options),
        cmocka_unit_test(test_config_overrides_win_over_file),
        cmocka_unit_test(test_config_bad_arguments),
        cmocka_unit_test(test_config_validators_reject),
        cmocka_unit_test(test_config_values_accepted),
        cmocka_unit_test(test_config_listeners_parse),
        cmocka_unit_test(test_config_listeners_reject),
        cmocka_unit_test(test_config_ssl_listener),
        cmocka_unit_test(test_config_advertised_listeners),
        cmocka_unit_test(test_config_controller_rules),
        cmocka_unit_test(test_config_node_id_and_alias),
        cmocka_unit_test(test_config_quorum_single_node_only),
        cmocka_unit_test(test_config_log_dirs_and_request_log),
        cmocka_unit_test(test_config_ip_overrides),
        cmocka_unit_test(test_config_ip_override_unresolvable),
        cmocka_unit_test(test_config_unknown_key_warns_but_loads),
        cmocka_unit_test(test_config_getters_and_sources),
        cmocka_unit_test(test_config_defs_table_consistent),
        cmocka_unit_test(test_config_doc_in_sync),
        cmocka_unit_test(test_config_sample_properties),
        cmocka_unit_test(test_config_listener_prefixed),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
