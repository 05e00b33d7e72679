/*
 * config/config_int.h - what config.c and config_net.c share while a
 * configuration loads: each key's value, the loader's state, and the small
 * parsing helpers both use.  Private to src/config/config*.c.
 * Threads: main, during samsa_config_load().
 */
#ifndef SAMSA_CONFIG_CONFIG_INT_H
#define SAMSA_CONFIG_CONFIG_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>
#include "config/config.h"
#include "config/config_parse.h"

#define SAMSA_CONFIG_HOST_MAX  256  /* host name or literal, with its NUL */

/* The value of one samsa_config_defs[] row; cfg->vals[i] for row i. */
struct samsa_config_val {
    char     *text;                 /* trimmed (passwords: as given);
                                       NULL: Kafka's null */
    char     *source;               /* "default" or the props origin */
    int64_t   num;                  /* INT, LONG */
    double    dbl;                  /* DOUBLE */
    bool      flag;                 /* BOOL */
    char    **items;                /* LIST */
    size_t    nitems;
};

/* One entry of listener.security.protocol.map. */
typedef struct samsa_config_proto {
    char  name[64];                 /* listener name, upper case */
    char  protocol[32];             /* PLAINTEXT, SSL, ... */
} samsa_config_proto_t;

/* State of one samsa_config_load(). */
typedef struct samsa_config_loader {
    samsa_config_t        *cfg;
    char                  *errstr;
    size_t                 errstr_size;
    samsa_config_proto_t  *protos;  /* filled by config_net.c */
    size_t                 nprotos;
    char                   hostname[SAMSA_CONFIG_HOST_MAX];
} samsa_config_loader_t;

/* Fill errstr with "invalid value '<text>' for configuration '<key>':
 * <why> (<source>)"; returns SAMSA_ERR__CONFIG. */
samsa_err_t samsa_config_bad(samsa_config_loader_t *ld, const char *key,
                             const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The value of a key of the table (asserts it exists). */
samsa_config_val_t *samsa_config_val_find(const samsa_config_t *cfg,
                                          const char *key);

/* A copy of s without white space around it. */
char *samsa_config_strdup_trim(const char *s);
void  samsa_config_upcase(char *s);

/* Comma-separated, trimmed items (empty text: none): NULL, or why not.
 * *items is set (to free with samsa_config_strv_free) in both cases. */
const char *samsa_config_split_list(const char *text, char ***items,
                                    size_t *n);
void        samsa_config_strv_free(char **v, size_t n);

/* config_net.c: listener.security.protocol.map, controller.listener.names,
 * listeners against process.roles, advertised.listeners, the quorum keys
 * and max.connections.per.ip.overrides.  Needs roles and node_id filled. */
SAMSA_MUST_CHECK samsa_err_t samsa_config_net_load(samsa_config_loader_t *ld);

/* Free what samsa_config_net_load() put in cfg. */
void samsa_config_net_fini(samsa_config_t *cfg);

/* config_net.c: "host:port" (IPv6 in brackets) with port min_port..65535;
 * host gets SAMSA_CONFIG_HOST_MAX bytes.  False with why naming s. */
bool samsa_config_net_parse_hostport(const char *s, char *host, int *port,
                                     int min_port, char *why,
                                     size_t why_size);

/* config_net.c: true if host:port names one of this node's controller
 * listeners (localhost, a loopback literal or the host name included). */
bool samsa_config_net_is_own_controller(samsa_config_loader_t *ld,
                                        const char *host, int port);

/* config_kraft.c: cfg->kraft from process.roles, node.id, the quorum keys
 * and inter.broker.listener.name, with Kafka's cross-key checks.  Needs
 * samsa_config_net_load() done (listeners, advertised listeners). */
SAMSA_MUST_CHECK samsa_err_t samsa_config_kraft_load(
    samsa_config_loader_t *ld);

#endif /* SAMSA_CONFIG_CONFIG_INT_H */
