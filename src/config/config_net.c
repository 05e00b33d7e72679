/*
 * config/config_net.c - the network side of loading a configuration:
 * listener.security.protocol.map, controller.listener.names, listeners and
 * their fit with process.roles, advertised.listeners and
 * max.connections.per.ip.overrides (host names resolved with getaddrinfo);
 * the quorum keys are config_kraft.c's.  See config_int.h.
 * Threads: main, during samsa_config_load().
 */
#include "config/config_int.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/alloc.h"

static const char *const  net_known_protocols[] = {
    "PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL", NULL,
};

static bool
net_is_space(char c)
{
    return isspace((unsigned char) c) != 0;
}

/* The protocol listener name maps to, or NULL if it maps to none. */
static const char *
config_net_protocol_of(const samsa_config_loader_t *ld, const char *name)
{
    size_t  i;

    for (i = 0; i < ld->nprotos; i++) {
        if (strcmp(ld->protos[i].name, name) == 0) {
            return ld->protos[i].protocol;
        }
    }
    return NULL;
}

/* listener.security.protocol.map into ld->protos. */
static samsa_err_t
config_net_fill_protocol_map(samsa_config_loader_t *ld)
{
    const char                *key = "listener.security.protocol.map";
    const samsa_config_val_t  *val = samsa_config_val_find(ld->cfg, key);
    samsa_config_proto_t            *p;
    const char                *item, *colon;
    size_t                     i, nlen;

    ld->protos = samsa_calloc(val->nitems + 1, sizeof(samsa_config_proto_t));
    for (i = 0; i < val->nitems; i++) {
        item = val->items[i];
        colon = strchr(item, ':');
        nlen = colon != NULL ? (size_t) (colon - item) : 0;
        if (nlen == 0 || nlen >= sizeof(p->name) || colon[1] == '\0'
            || strlen(colon + 1) >= sizeof(p->protocol)) {
            return samsa_config_bad(ld, key, "'%s' is not NAME:PROTOCOL", item);
        }
        p = &ld->protos[ld->nprotos];
        memcpy(p->name, item, nlen);
        strcpy(p->protocol, colon + 1);
        samsa_config_upcase(p->name);
        samsa_config_upcase(p->protocol);
        if (!samsa_config_in(net_known_protocols, p->protocol)) {
            return samsa_config_bad(ld, key, "unknown security protocol '%s' "
                                    "(PLAINTEXT, SSL, SASL_PLAINTEXT, "
                                    "SASL_SSL)", colon + 1);
        }
        if (config_net_protocol_of(ld, p->name) != NULL) {
            return samsa_config_bad(ld, key, "listener name '%s' is "
                                    "mapped twice", p->name);
        }
        ld->nprotos++;
    }
    return SAMSA_ERR_NONE;
}

static samsa_err_t
config_net_fill_controller_names(samsa_config_loader_t *ld)
{
    const char          *key = "controller.listener.names";
    samsa_config_t      *cfg = ld->cfg;
    samsa_config_val_t  *val = samsa_config_val_find(cfg, key);
    size_t               i, j;

    cfg->controller_listener_names = samsa_calloc(val->nitems + 1,
                                                  sizeof(char *));
    for (i = 0; i < val->nitems; i++) {
        cfg->controller_listener_names[i] = samsa_strdup(val->items[i]);
        samsa_config_upcase(cfg->controller_listener_names[i]);
        cfg->ncontroller_listener_names++;
        for (j = 0; j < i; j++) {
            if (strcmp(cfg->controller_listener_names[i],
                       cfg->controller_listener_names[j]) == 0) {
                return samsa_config_bad(ld, key, "'%s' is listed twice",
                                        val->items[i]);
            }
        }
    }
    if (cfg->role_controller && cfg->ncontroller_listener_names == 0) {
        return samsa_config_bad(ld, key, "must be set when process.roles "
                                "includes controller");
    }
    return SAMSA_ERR_NONE;
}

static bool
config_net_is_controller_name(const samsa_config_t *cfg, const char *name)
{
    size_t  i;

    for (i = 0; i < cfg->ncontroller_listener_names; i++) {
        if (strcmp(cfg->controller_listener_names[i], name) == 0) {
            return true;
        }
    }
    return false;
}

/* Host characters: a name or IPv4 literal, or inside brackets IPv6. */
static bool
config_net_host_chars_ok(const char *host, bool v6)
{
    const char  *ok = v6 ? "0123456789abcdefABCDEF:.%" : "._-";
    const char  *p;

    for (p = host; *p != '\0'; p++) {
        if (strchr(ok, *p) == NULL
            && !(isalnum((unsigned char) *p) && (!v6 || strchr(host, '%')))) {
            return false;
        }
    }
    return true;
}

/* Split "host:rest" or "[v6]:rest" at the colon that ends the host.  With
 * bare_v6, an unbracketed host may hold colons (split at the last one).
 * host gets the host without brackets; *rest what follows the colon. */
static bool
config_net_split_host(const char *s, bool bare_v6, char *host,
                      const char **rest, char *why, size_t why_size)
{
    const char  *hstart = s, *hend, *colon;
    bool         v6 = false;

    if (s[0] == '[') {
        hstart = s + 1;
        hend = strchr(s, ']');
        colon = hend != NULL ? hend + 1 : NULL;
        v6 = true;
        if (hend == NULL || *colon != ':') {
            snprintf(why, why_size, "'%s': expected [IPv6]:port", s);
            return false;
        }
    } else {
        colon = strrchr(s, ':');
        hend = colon;
        if (colon == NULL) {
            snprintf(why, why_size, "'%s': missing ':' before the port", s);
            return false;
        }
        v6 = memchr(s, ':', (size_t) (colon - s)) != NULL;
        if (v6 && !bare_v6) {
            snprintf(why, why_size, "'%s': an IPv6 literal must be in "
                     "brackets, as in [::1]:9092", s);
            return false;
        }
    }
    while (hstart < hend && net_is_space(*hstart)) {
        hstart++;
    }
    while (hend > hstart && net_is_space(hend[-1])) {
        hend--;
    }
    if ((size_t) (hend - hstart) >= SAMSA_CONFIG_HOST_MAX) {
        snprintf(why, why_size, "'%s': host name too long", s);
        return false;
    }
    memcpy(host, hstart, (size_t) (hend - hstart));
    host[hend - hstart] = '\0';
    if (!config_net_host_chars_ok(host, v6)
        || (v6 && strchr(host, ':') == NULL)) {
        snprintf(why, why_size, "'%s': bad host '%s'", s, host);
        return false;
    }
    *rest = colon + 1;
    while (net_is_space(**rest)) {
        (*rest)++;
    }
    return true;
}

/* "host:port" with port 0..65535 (min_port up). */
bool
samsa_config_net_parse_hostport(const char *s, char *host, int *port,
                                int min_port, char *why, size_t why_size)
{
    const char  *rest;
    int64_t      v;

    if (!config_net_split_host(s, false, host, &rest, why, why_size)) {
        return false;
    }
    if (*rest == '+' || *rest == '-'
        || samsa_config_parse_i64(rest, min_port, 65535, &v) != NULL) {
        snprintf(why, why_size, "'%s': port must be a number from %d to "
                 "65535", s, min_port);
        return false;
    }
    *port = (int) v;
    return true;
}

/* Parse one "NAME://host:port" (name upper-cased). */
static bool
config_net_listener_parse(const char *s, samsa_listener_t *l, char *why,
                          size_t why_size)
{
    const char  *sep = strstr(s, "://");
    char         host[SAMSA_CONFIG_HOST_MAX];
    size_t       nlen = sep != NULL ? (size_t) (sep - s) : 0;

    if (nlen == 0) {
        snprintf(why, why_size, "'%s' is not NAME://host:port", s);
        return false;
    }
    if (strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                  "0123456789_-.") != nlen) {
        snprintf(why, why_size, "'%s': bad listener name", s);
        return false;
    }
    if (!samsa_config_net_parse_hostport(sep + 3, host, &l->port, 0, why,
                                         why_size)) {
        return false;
    }
    l->name = samsa_strndup(s, nlen);
    samsa_config_upcase(l->name);
    l->host = samsa_strdup(host);
    return true;
}

static void
config_net_listener_fini(samsa_listener_t *l)
{
    samsa_free(l->name);
    samsa_free(l->host);
    samsa_free(l->security_protocol);
}

static void
config_net_listeners_free(samsa_listener_t *v, size_t n)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        config_net_listener_fini(&v[i]);
    }
    samsa_free(v);
}

/* Parse a listener list key into *v (n items; *v has room for all). */
static samsa_err_t
config_net_parse_listener_list(samsa_config_loader_t *ld, const char *key,
                               samsa_listener_t **v, size_t *n)
{
    const samsa_config_val_t  *val = samsa_config_val_find(ld->cfg, key);
    char                       why[512];
    size_t                     i, j;

    *v = samsa_calloc(val->nitems + 1, sizeof(samsa_listener_t));
    for (i = 0; i < val->nitems; i++) {
        if (!config_net_listener_parse(val->items[i], &(*v)[i], why,
                                       sizeof(why))) {
            return samsa_config_bad(ld, key, "%s", why);
        }
        (*n)++;
        for (j = 0; j < i; j++) {
            if (strcmp((*v)[i].name, (*v)[j].name) == 0) {
                return samsa_config_bad(ld, key, "listener name '%s' is used "
                                        "twice", (*v)[i].name);
            }
        }
    }
    return SAMSA_ERR_NONE;
}

/* Security protocol and controller flag of each listener. */
static samsa_err_t
config_net_resolve_listener(samsa_config_loader_t *ld, const char *key,
                            samsa_listener_t *l)
{
    const char  *protocol = config_net_protocol_of(ld, l->name);

    if (protocol == NULL) {
        return samsa_config_bad(ld, key, "listener name '%s' has no security "
                                "protocol in listener.security.protocol.map",
                                l->name);
    }
    l->is_controller = config_net_is_controller_name(ld->cfg, l->name);
    if (strcmp(protocol, "PLAINTEXT") != 0 && l->is_controller) {
        return samsa_config_bad(ld, key, "controller listener '%s' uses "
                                "security protocol %s, which Samsa does not "
                                "support yet (controller listeners are "
                                "PLAINTEXT: TLS and SASL between "
                                "controllers are not there yet)", l->name,
                                protocol);
    }
    l->security_protocol = samsa_strdup(protocol);
    return SAMSA_ERR_NONE;
}

static samsa_err_t
config_net_fill_listeners(samsa_config_loader_t *ld)
{
    samsa_config_t  *cfg = ld->cfg;
    samsa_err_t      err;
    size_t           i, j;

    err = config_net_parse_listener_list(ld, "listeners", &cfg->listeners,
                                         &cfg->nlisteners);
    for (i = 0; err == SAMSA_ERR_NONE && i < cfg->nlisteners; i++) {
        err = config_net_resolve_listener(ld, "listeners", &cfg->listeners[i]);
        for (j = 0; err == SAMSA_ERR_NONE && j < i; j++) {
            if (cfg->listeners[i].port != 0
                && cfg->listeners[i].port == cfg->listeners[j].port) {
                err = samsa_config_bad(ld, "listeners", "listeners '%s' and "
                                       "'%s' use the same port %d",
                                       cfg->listeners[j].name,
                                       cfg->listeners[i].name,
                                       cfg->listeners[i].port);
            }
        }
    }
    if (err == SAMSA_ERR_NONE && cfg->nlisteners == 0) {
        err = samsa_config_bad(ld, "listeners", "must not be empty");
    }
    return err;
}

static size_t
config_net_count_controller_listeners(const samsa_config_t *cfg)
{
    size_t  i, n = 0;

    for (i = 0; i < cfg->nlisteners; i++) {
        n += cfg->listeners[i].is_controller ? 1 : 0;
    }
    return n;
}

/* A broker-only node (KafkaConfig.validateValues): it reaches the
 * controllers through controller.listener.names, which must be set, have
 * a security protocol, and not be among its own listeners. */
static samsa_err_t
config_net_check_broker_only(samsa_config_loader_t *ld, size_t nctl)
{
    const char      *key = "controller.listener.names";
    samsa_config_t  *cfg = ld->cfg;
    size_t           i;

    if (cfg->ncontroller_listener_names == 0) {
        return samsa_config_bad(ld, key, "controller.listener.names must "
                                "contain at least one value when running "
                                "KRaft with just the broker role");
    }
    if (nctl > 0) {
        return samsa_config_bad(ld, key, "controller.listener.names must "
                                "not contain a value appearing in the "
                                "'listeners' configuration when running "
                                "KRaft with just the broker role");
    }
    for (i = 0; i < cfg->ncontroller_listener_names; i++) {
        if (config_net_protocol_of(ld, cfg->controller_listener_names[i])
            == NULL) {
            return samsa_config_bad(ld, key, "controller listener with name "
                                    "'%s' defined in "
                                    "controller.listener.names not found in "
                                    "listener.security.protocol.map",
                                    cfg->controller_listener_names[i]);
        }
    }
    return SAMSA_ERR_NONE;
}

/* process.roles against listeners and controller.listener.names. */
static samsa_err_t
config_net_check_roles(samsa_config_loader_t *ld)
{
    samsa_config_t    *cfg = ld->cfg;
    size_t             nctl = config_net_count_controller_listeners(cfg);

    if (cfg->role_controller && nctl == 0) {
        return samsa_config_bad(ld, "listeners", "process.roles includes "
                                "controller, but no listener is named in "
                                "controller.listener.names (%s)",
                                cfg->controller_listener_names[0]);
    }
    if (!cfg->role_broker && nctl < cfg->nlisteners) {
        return samsa_config_bad(ld, "listeners", "with "
                                "process.roles=controller every listener must "
                                "be a controller listener "
                                "(controller.listener.names)");
    }
    if (cfg->role_broker && !cfg->role_controller) {
        return config_net_check_broker_only(ld, nctl);
    }
    if (cfg->role_broker && nctl == cfg->nlisteners) {
        return samsa_config_bad(ld, "listeners", "process.roles includes "
                                "broker, but every listener is a controller "
                                "listener");
    }
    return SAMSA_ERR_NONE;
}

static bool
config_net_is_meta_address(const char *host)
{
    return strcmp(host, "0.0.0.0") == 0 || strcmp(host, "::") == 0;
}

/* Copy listener src for advertising; an empty host becomes the host
 * name.  False if its host is a wildcard address. */
static bool
config_net_advertise(samsa_config_loader_t *ld, const samsa_listener_t *src,
                     samsa_listener_t *dst)
{
    if (config_net_is_meta_address(src->host)) {
        return false;
    }
    dst->name = samsa_strdup(src->name);
    dst->host = samsa_strdup(src->host[0] != '\0' ? src->host
                                                  : ld->hostname);
    dst->port = src->port;
    dst->security_protocol = samsa_strdup(src->security_protocol);
    dst->is_controller = false;
    return true;
}

static samsa_err_t
config_net_fill_default_advertised(samsa_config_loader_t *ld)
{
    samsa_config_t          *cfg = ld->cfg;
    const samsa_listener_t  *l;
    size_t                   i;

    cfg->advertised_listeners = samsa_calloc(cfg->nlisteners,
                                             sizeof(samsa_listener_t));
    for (i = 0; i < cfg->nlisteners; i++) {
        l = &cfg->listeners[i];
        if (l->is_controller) {
            continue;
        }
        if (!config_net_advertise(ld, l, &cfg->advertised_listeners[
                                             cfg->nadvertised_listeners])) {
            return samsa_config_bad(ld, "advertised.listeners", "listener "
                                    "'%s' binds the wildcard address '%s', "
                                    "which cannot be advertised: set "
                                    "advertised.listeners", l->name, l->host);
        }
        cfg->nadvertised_listeners++;
    }
    return SAMSA_ERR_NONE;
}

static const samsa_listener_t *
config_net_find_listener(const samsa_config_t *cfg, const char *name)
{
    size_t  i;

    for (i = 0; i < cfg->nlisteners; i++) {
        if (strcmp(cfg->listeners[i].name, name) == 0) {
            return &cfg->listeners[i];
        }
    }
    return NULL;
}

/* One explicit advertised listener against the listeners. */
static samsa_err_t
config_net_check_advertised(samsa_config_loader_t *ld, samsa_listener_t *a)
{
    const char              *key = "advertised.listeners";
    const samsa_listener_t  *l = config_net_find_listener(ld->cfg, a->name);
    char                    *host;

    if (l == NULL) {
        return samsa_config_bad(ld, key, "'%s' is not the name of a listener "
                                "in listeners", a->name);
    }
    if (l->is_controller) {
        return samsa_config_bad(ld, key, "'%s' is a controller listener; "
                                "controller listeners are not advertised",
                                a->name);
    }
    if (config_net_is_meta_address(a->host)) {
        return samsa_config_bad(ld, key, "cannot advertise the wildcard "
                                "address '%s'", a->host);
    }
    if (a->port == 0) {
        return samsa_config_bad(ld, key, "cannot advertise port 0");
    }
    if (a->host[0] == '\0') {
        host = samsa_strdup(ld->hostname);
        samsa_free(a->host);
        a->host = host;
    }
    a->security_protocol = samsa_strdup(l->security_protocol);
    return SAMSA_ERR_NONE;
}

static samsa_err_t
config_net_fill_advertised(samsa_config_loader_t *ld)
{
    samsa_config_t  *cfg = ld->cfg;
    const char      *text;
    samsa_err_t      err;
    size_t           i;

    text = samsa_config_str(cfg, "advertised.listeners");
    if (text == NULL || text[0] == '\0') {
        return config_net_fill_default_advertised(ld);
    }
    err = config_net_parse_listener_list(ld, "advertised.listeners",
                                         &cfg->advertised_listeners,
                                         &cfg->nadvertised_listeners);
    for (i = 0; err == SAMSA_ERR_NONE && i < cfg->nadvertised_listeners;
         i++) {
        err = config_net_check_advertised(ld, &cfg->advertised_listeners[i]);
    }
    return err;
}

/* Set (or replace, the later entry winning) the override of ip. */
static void
config_net_override_put(samsa_ip_override_t **arr, size_t *n, const char *ip,
                        int32_t max)
{
    samsa_ip_override_t  *o;
    size_t                i;

    for (i = 0; i < *n; i++) {
        o = &(*arr)[i];
        if (strcmp(o->ip, ip) == 0) {
            o->max = max;
            return;
        }
    }
    *arr = samsa_realloc(*arr, (i + 1) * sizeof(samsa_ip_override_t));
    o = &(*arr)[i];
    memset(o, 0, sizeof(*o));
    snprintf(o->ip, sizeof(o->ip), "%s", ip);
    o->max = max;
    (*n)++;
}

/* Every address host resolves to (a literal resolves to itself). */
static samsa_err_t
config_net_override_host(samsa_ip_override_t **arr, size_t *n,
                         const char *host, int32_t max, char *why,
                         size_t why_size)
{
    struct addrinfo   hints = { .ai_socktype = SOCK_STREAM };
    struct addrinfo  *res, *ai;
    const void       *addr;
    char              ip[INET6_ADDRSTRLEN];
    int               rc;

    hints.ai_family = AF_UNSPEC;
    rc = getaddrinfo(host, NULL, &hints, &res);
    if (rc != 0) {
        snprintf(why, why_size, "cannot resolve host '%s': %s", host,
                 gai_strerror(rc));
        return SAMSA_ERR__RESOLVE;
    }
    for (ai = res; ai != NULL; ai = ai->ai_next) {
        if (ai->ai_family == AF_INET) {
            addr = &((struct sockaddr_in *) ai->ai_addr)->sin_addr;
        } else if (ai->ai_family == AF_INET6) {
            addr = &((struct sockaddr_in6 *) ai->ai_addr)->sin6_addr;
        } else {
            continue;
        }
        if (inet_ntop(ai->ai_family, addr, ip, sizeof(ip)) != NULL) {
            config_net_override_put(arr, n, ip, max);
        }
    }
    freeaddrinfo(res);
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_config_ip_overrides_parse(const char *text, samsa_ip_override_t **out,
                                size_t *n, char *why, size_t why_size)
{
    char                       host[SAMSA_CONFIG_HOST_MAX];
    char                     **items;
    const char                *rest, *bad;
    size_t                     i, nitems;
    int64_t                    max;
    samsa_err_t                err = SAMSA_ERR_NONE;

    *out = NULL;
    *n = 0;
    bad = samsa_config_split_list(text != NULL ? text : "", &items, &nitems);
    if (bad != NULL) {
        snprintf(why, why_size, "%s", bad);
        err = SAMSA_ERR__CONFIG;
    }
    for (i = 0; err == SAMSA_ERR_NONE && i < nitems; i++) {
        if (!config_net_split_host(items[i], true, host, &rest, why,
                                   why_size)) {
            err = SAMSA_ERR__CONFIG;
        } else if (host[0] == '\0') {
            snprintf(why, why_size, "'%s': missing host", items[i]);
            err = SAMSA_ERR__CONFIG;
        } else if (samsa_config_parse_i64(rest, 0, INT32_MAX, &max) != NULL) {
            snprintf(why, why_size, "'%s': the count must be a number from 0 "
                     "to 2147483647", items[i]);
            err = SAMSA_ERR__CONFIG;
        } else {
            err = config_net_override_host(out, n, host, (int32_t) max, why,
                                           why_size);
        }
    }
    samsa_config_strv_free(items, nitems);
    if (err != SAMSA_ERR_NONE) {
        samsa_free(*out);
        *out = NULL;
        *n = 0;
    }
    return err;
}

/* max.connections.per.ip.overrides: "host:count, ..." (Kafka's format; a
 * bare IPv6 literal splits at its last colon). */
static samsa_err_t
config_net_fill_overrides(samsa_config_loader_t *ld)
{
    const char                *key = "max.connections.per.ip.overrides";
    const samsa_config_val_t  *val = samsa_config_val_find(ld->cfg, key);
    char                       why[512];
    samsa_err_t                err;

    err = samsa_config_ip_overrides_parse(
        val->text, &ld->cfg->max_connections_per_ip_overrides,
        &ld->cfg->nmax_connections_per_ip_overrides, why, sizeof(why));
    if (err != SAMSA_ERR_NONE) {
        (void) samsa_config_bad(ld, key, "%s", why);
    }
    return err;
}

/* True if host:port names one of this node's controller listeners. */
bool
samsa_config_net_is_own_controller(samsa_config_loader_t *ld,
                                   const char *host, int port)
{
    const samsa_listener_t  *l;
    size_t                   i;

    for (i = 0; i < ld->cfg->nlisteners; i++) {
        l = &ld->cfg->listeners[i];
        if (!l->is_controller || (l->port != 0 && l->port != port)) {
            continue;
        }
        if (l->host[0] == '\0' || strcasecmp(host, l->host) == 0
            || strcasecmp(host, "localhost") == 0
            || strcmp(host, "127.0.0.1") == 0 || strcmp(host, "::1") == 0
            || strcasecmp(host, ld->hostname) == 0) {
            return true;
        }
    }
    return false;
}

/* This machine's name, advertised for listeners with an empty host. */
static void
config_net_hostname(samsa_config_loader_t *ld)
{
    if (gethostname(ld->hostname, sizeof(ld->hostname)) != 0
        || ld->hostname[0] == '\0') {
        strcpy(ld->hostname, "localhost");
    }
    ld->hostname[sizeof(ld->hostname) - 1] = '\0';
}

samsa_err_t
samsa_config_net_load(samsa_config_loader_t *ld)
{
    samsa_err_t  err;

    config_net_hostname(ld);
    if ((err = config_net_fill_protocol_map(ld)) != SAMSA_ERR_NONE
        || (err = config_net_fill_controller_names(ld)) != SAMSA_ERR_NONE
        || (err = config_net_fill_listeners(ld)) != SAMSA_ERR_NONE
        || (err = config_net_check_roles(ld)) != SAMSA_ERR_NONE
        || (err = config_net_fill_advertised(ld)) != SAMSA_ERR_NONE) {
        return err;
    }
    return config_net_fill_overrides(ld);
}

void
samsa_config_net_fini(samsa_config_t *cfg)
{
    config_net_listeners_free(cfg->listeners, cfg->nlisteners);
    config_net_listeners_free(cfg->advertised_listeners,
                                  cfg->nadvertised_listeners);
    samsa_config_strv_free(cfg->controller_listener_names,
                                 cfg->ncontroller_listener_names);
    samsa_free(cfg->max_connections_per_ip_overrides);
}
