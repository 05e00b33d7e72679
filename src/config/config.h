/*
 * config/config.h - the broker's configuration: server.properties plus
 * --override key=value, checked against the definitions in config_defs.c
 * (Kafka's names and defaults) and turned into typed fields.
 * Threads: the main thread builds the samsa_config_t before any other thread
 * starts; afterwards it is read-only and any thread may read it.
 * Ownership: the caller owns the samsa_config_t storage; everything it
 * points to belongs to it and is freed by samsa_config_fini().
 */
#ifndef SAMSA_CONFIG_CONFIG_H
#define SAMSA_CONFIG_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <samsa/errors.h>
#include "config/config_defs.h"
#include "config/config_kraft.h"
#include "util/props.h"

/* One entry of listeners or advertised.listeners: NAME://host:port. */
typedef struct samsa_listener {
    char  *name;                /* "PLAINTEXT", stored upper case */
    char  *host;                /* "" = all interfaces (listeners only);
                                   an IPv6 literal without its brackets */
    int    port;                /* 0..65535; 0 = any free port */
    char  *security_protocol;   /* from listener.security.protocol.map;
                                   any of Kafka's four for broker
                                   listeners, PLAINTEXT for controller
                                   ones */
    bool   is_controller;       /* name is in controller.listener.names */
} samsa_listener_t;

/* One address of max.connections.per.ip.overrides. */
typedef struct samsa_ip_override {
    char     ip[64];            /* numeric, as inet_ntop writes it */
    int32_t  max;
} samsa_ip_override_t;

/* One listener-prefixed value, listener.name.<listener>.<key> (Kafka's
 * ListenerName.configPrefix: the listener in lower case), for the keys
 * of samsa_config_defs[] marked per_listener. */
typedef struct samsa_listener_value {
    char     *key;              /* the whole key, as given */
    char     *listener;         /* upper case, one of listeners' names */
    size_t    def;              /* its samsa_config_defs[] row */
    char     *text;             /* trimmed */
    char     *source;           /* props origin */
    int64_t   num;              /* INT, LONG: parsed and checked */
} samsa_listener_value_t;

typedef struct samsa_config_val samsa_config_val_t;    /* config.c */

typedef struct samsa_config {
    /* Command line (samsa_config_from_args) */
    bool                 show_help;     /* --help: print usage, exit 0 */
    bool                 show_version;  /* --version: print it, exit 0 */
    char                *config_file;   /* the server.properties given, or
                                           NULL */

    /* process.roles (absent: both, Samsa's single-node default), node.id
     * (or its alias broker.id); kraft has them with the quorum keys */
    bool                 role_broker;
    bool                 role_controller;
    int32_t              node_id;
    samsa_config_kraft_t kraft;         /* read via samsa_config_kraft() */

    /* listeners, in the order given; port 0 binds any free port */
    samsa_listener_t    *listeners;
    size_t               nlisteners;
    /* advertised.listeners, or by default the non-controller listeners with
     * an empty host replaced by gethostname(); a port of 0 here stands for
     * the port the listener of that name actually bound. */
    samsa_listener_t    *advertised_listeners;
    size_t               nadvertised_listeners;
    char               **controller_listener_names;    /* upper case */
    size_t               ncontroller_listener_names;

    /* log.dirs, or log.dir when log.dirs is not set; never empty */
    char               **log_dirs;
    size_t               nlog_dirs;

    /* max.connections.per.ip.overrides, resolved (the scalar keys are read
     * through samsa_config_int() and friends, or at run time through
     * meta/brokercfg.h, which layers the dynamic values over these) */
    samsa_ip_override_t *max_connections_per_ip_overrides; /* one per
                                                              address */
    size_t               nmax_connections_per_ip_overrides;

    /* Samsa's request log (request.log.enable: samsa_config_bool()) */
    char                *request_log_file;  /* resolved: a path, or
                                               "stderr" */

    /* Every key of samsa_config_defs[], same index: its text, parsed value
     * and source.  Read through the getters below. */
    samsa_config_val_t  *vals;

    /* listener.name.<listener>.<key> values, checked against listeners */
    samsa_listener_value_t  *listener_values;
    size_t                   nlistener_values;
} samsa_config_t;

/* Parse the command line "samsa-server [server.properties]
 * [--override key=value]..." (also --override=key=value; overrides win over
 * the file whatever their order) and load the result as
 * samsa_config_load() does.  "-h"/"--help" and "-V"/"--version" only set
 * show_help / show_version and return SAMSA_ERR_NONE without loading.
 * cfg need not be initialised; call samsa_config_fini() after any result.
 * Errors: SAMSA_ERR__CONFIG (bad argument or value), SAMSA_ERR__NOENT /
 * SAMSA_ERR__IO (file), SAMSA_ERR__RESOLVE; errstr says what and where.
 * @thread main */
SAMSA_MUST_CHECK samsa_err_t samsa_config_from_args(samsa_config_t *cfg,
                                                    int argc, char **argv,
                                                    char *errstr,
                                                    size_t errstr_size);

/* Initialise cfg from props: every key gets its value from props or its
 * default, is parsed as its type and checked; then the keys are checked
 * together (roles, listeners, quorum...) and the typed fields filled.  An
 * unknown key is logged as a warning, a known key Samsa does not use yet as
 * info; neither fails.  A bad value fails with errstr like "invalid value
 * 'abc' for configuration 'num.io.threads': not a number
 * (server.properties:3)".  Returns SAMSA_ERR__CONFIG, or SAMSA_ERR__RESOLVE
 * when a host name in max.connections.per.ip.overrides does not resolve.
 * props may be NULL (all defaults).  cfg need not be initialised; call
 * samsa_config_fini() after any result.
 * @thread main */
SAMSA_MUST_CHECK samsa_err_t samsa_config_load(samsa_config_t *cfg,
                                               const samsa_props_t *props,
                                               char *errstr,
                                               size_t errstr_size);

/* Free everything cfg owns and zero it; safe twice. */
void samsa_config_fini(samsa_config_t *cfg);

/* Print the command-line usage to out. */
void samsa_config_usage(FILE *out);

/* Log (info) every key whose value does not come from its default, as
 * "key = value (source)"; passwords are shown as [hidden]. */
void samsa_config_log_values(const samsa_config_t *cfg);

/* Typed values of any key in samsa_config_defs[], by Kafka's name.  Each
 * asserts that the key exists, has that type (int: INT; long: LONG; ...;
 * str: STRING, PASSWORD, or LIST as its trimmed text) and, for numbers and
 * booleans, a value: check samsa_config_is_set() first for keys whose
 * default is null.  samsa_config_str() returns NULL for a null value.
 * Strings are borrowed from cfg. */
int32_t     samsa_config_int(const samsa_config_t *cfg, const char *key);
int64_t     samsa_config_long(const samsa_config_t *cfg, const char *key);
double      samsa_config_double(const samsa_config_t *cfg, const char *key);
bool        samsa_config_bool(const samsa_config_t *cfg, const char *key);
const char *samsa_config_str(const samsa_config_t *cfg, const char *key);

/* Items of a LIST key (trimmed, never empty); *n gets their count. */
char *const *samsa_config_list(const samsa_config_t *cfg, const char *key,
                               size_t *n);

/* False if the key has no value: default null and not set. */
bool samsa_config_is_set(const samsa_config_t *cfg, const char *key);

/* Any key's value as text (trimmed; a password as given), or NULL for
 * Kafka's null: what DescribeConfigs shows. */
const char *samsa_config_text(const samsa_config_t *cfg, const char *key);

/* Parse max.connections.per.ip.overrides text ("host:count, ...", a host
 * name standing for every address it resolves to, a later entry for an
 * address winning) into *out (to free with samsa_free) and *n.
 * SAMSA_ERR__CONFIG or SAMSA_ERR__RESOLVE with why filled (*out NULL).
 * @thread any (may block resolving a host name) */
SAMSA_MUST_CHECK samsa_err_t samsa_config_ip_overrides_parse(
    const char *text, samsa_ip_override_t **out, size_t *n, char *why,
    size_t why_size);

/* listener.name.<listener>.<key> as set (listener: a listener's name,
 * any case; key: a per_listener key), or NULL when it is not set. */
const samsa_listener_value_t *samsa_config_listener_value(
    const samsa_config_t *cfg, const char *listener, const char *key);

/* Split key "listener.name.<listener>.<rest>": true with the listener
 * part (as written) in listener and *rest pointing into key, if rest is a
 * per_listener key of samsa_config_defs[] (*def its row). */
bool samsa_config_listener_key(const char *key, char *listener,
                               size_t listener_size, const char **rest,
                               size_t *def);

/* The KRaft view of the configuration (config_kraft.h): roles, node id,
 * voters, bootstrap servers, listener names, quorum timeouts.  Borrowed
 * from cfg. */
const samsa_config_kraft_t *samsa_config_kraft(const samsa_config_t *cfg);

/* Where the key's value came from: "default", "server.properties:12",
 * "--override" (as the props origin said). */
const char *samsa_config_source(const samsa_config_t *cfg, const char *key);

#endif /* SAMSA_CONFIG_CONFIG_H */
