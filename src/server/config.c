/*
 * server/config.c - see config.h.  Loading runs in three steps: every key
 * gets its text (from props, else its default), each text is parsed and
 * checked on its own against its config_defs.c row, then the keys that
 * depend on each other (roles, listeners, quorum...) are checked together
 * and the typed fields of samsa_config_t are filled.
 * Threads: main, before any other thread starts; read-only afterwards.
 */
#include "server/config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/diag.h"

#define CONFIG_HOST_MAX  256        /* host name or literal, with its NUL */

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

/* listener.security.protocol.map, while loading. */
typedef struct config_proto {
    char  name[64];                 /* listener name, upper case */
    char  protocol[32];             /* PLAINTEXT, SSL, ... */
} config_proto_t;

/* State of one samsa_config_load(). */
typedef struct config_loader {
    samsa_config_t   *cfg;
    char             *errstr;
    size_t            errstr_size;
    config_proto_t   *protos;
    size_t            nprotos;
    char              hostname[CONFIG_HOST_MAX];
} config_loader_t;

static const char *const  config_known_protocols[] = {
    "PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL", NULL,
};

/* ---- errors ------------------------------------------------------------- */

static samsa_err_t
config_bad_code(config_loader_t *ld, samsa_err_t err, const char *key,
                const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Fill errstr with "invalid value '<text>' for configuration '<key>': <why>
 * (<source>)" and return err. */
static samsa_err_t
config_bad_code(config_loader_t *ld, samsa_err_t err, const char *key,
                const char *fmt, ...)
{
    size_t                     i = samsa_config_defs_index(key);
    const samsa_config_val_t  *val = &ld->cfg->vals[i];
    const char                *text = val->text != NULL ? val->text : "null";
    char                       why[512];
    va_list                    ap;

    samsa_assert(i < samsa_config_ndefs);
    if (samsa_config_defs[i].type == SAMSA_CONFIG_PASSWORD) {
        text = "[hidden]";
    }
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    snprintf(ld->errstr, ld->errstr_size,
             "invalid value '%s' for configuration '%s': %s (%s)", text, key,
             why, val->source);
    return err;
}

#define config_bad(ld, key, ...) \
    config_bad_code((ld), SAMSA_ERR__CONFIG, (key), __VA_ARGS__)

/* ---- text primitives ---------------------------------------------------- */

static bool
config_is_space(char c)
{
    return isspace((unsigned char) c) != 0;
}

/* A copy of s without leading and trailing white space. */
static char *
config_strdup_trim(const char *s)
{
    size_t  n;

    while (config_is_space(*s)) {
        s++;
    }
    n = strlen(s);
    while (n > 0 && config_is_space(s[n - 1])) {
        n--;
    }
    return samsa_strndup(s, n);
}

static void
config_upcase(char *s)
{
    for (; *s != '\0'; s++) {
        *s = (char) toupper((unsigned char) *s);
    }
}

/* Decimal with an optional sign, within [min, max].  NULL or why. */
static const char *
config_parse_i64(const char *text, int64_t min, int64_t max, int64_t *out)
{
    const char  *p = text;
    char        *end;
    long long    v;

    if (*p == '+' || *p == '-') {
        p++;
    }
    if (*p == '\0' || strspn(p, "0123456789") != strlen(p)) {
        return "not a number";
    }
    errno = 0;
    v = strtoll(text, &end, 10);
    if (errno == ERANGE || v < min || v > max) {
        return min == INT32_MIN ? "out of range for an int (32 bits)"
                                : "out of range for a long (64 bits)";
    }
    *out = v;
    return NULL;
}

static const char *
config_parse_double(const char *text, double *out)
{
    char  *end;

    if (*text == '\0' || strspn(text, "0123456789+-.eE") != strlen(text)) {
        return "not a number";
    }
    errno = 0;
    *out = strtod(text, &end);
    if (*end != '\0') {
        return "not a number";
    }
    if (errno == ERANGE) {
        return "out of range for a double";
    }
    return NULL;
}

/* Split a comma-separated list into trimmed items; empty text is an empty
 * list.  NULL or why (an empty item). */
static const char *
config_split_list(const char *text, char ***items, size_t *n)
{
    const char  *p = text, *comma;
    char        *item;

    *items = NULL;
    *n = 0;
    while (*text != '\0') {
        comma = strchr(p, ',');
        item = samsa_strndup(p, comma != NULL ? (size_t) (comma - p)
                                              : strlen(p));
        *items = samsa_realloc(*items, (*n + 1) * sizeof(char *));
        (*items)[(*n)++] = config_strdup_trim(item);
        samsa_free(item);
        if ((*items)[*n - 1][0] == '\0') {
            return "empty item in list";
        }
        if (comma == NULL) {
            break;
        }
        p = comma + 1;
    }
    return NULL;
}

static void
config_free_strv(char **v, size_t n)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        samsa_free(v[i]);
    }
    samsa_free(v);
}

static bool
config_in(const char *const *names, const char *s)
{
    size_t  i;

    for (i = 0; names[i] != NULL; i++) {
        if (strcmp(names[i], s) == 0) {
            return true;
        }
    }
    return false;
}

/* "a, b, c" into buf. */
static const char *
config_join(const char *const *names, char *buf, size_t size)
{
    size_t  i, off = 0;

    buf[0] = '\0';
    for (i = 0; names[i] != NULL && off < size; i++) {
        off += (size_t) snprintf(buf + off, size - off, "%s%s",
                                 i > 0 ? ", " : "", names[i]);
    }
    return buf;
}

/* ---- step 1 and 2: each key on its own ---------------------------------- */

static void
config_vals_init(samsa_config_t *cfg)
{
    size_t  i;

    cfg->vals = samsa_calloc(samsa_config_ndefs, sizeof(samsa_config_val_t));
    for (i = 0; i < samsa_config_ndefs; i++) {
        if (samsa_config_defs[i].dflt != NULL) {
            cfg->vals[i].text = samsa_strdup(samsa_config_defs[i].dflt);
        }
        cfg->vals[i].source = samsa_strdup("default");
    }
}

/* Take every known key's text from props; log unknown and unused ones. */
static void
config_vals_apply(samsa_config_t *cfg, const samsa_props_t *props)
{
    const char          *key, *origin;
    samsa_config_val_t  *val;
    size_t               i, d;

    for (i = 0; props != NULL && i < samsa_props_count(props); i++) {
        key = samsa_props_key(props, i);
        origin = samsa_props_origin(props, i);
        d = samsa_config_defs_index(key);
        if (d == samsa_config_ndefs) {
            samsa_warn("unknown configuration '%s' (%s) is ignored", key,
                       origin);
            continue;
        }
        if (!samsa_config_defs[d].implemented) {
            samsa_info("configuration '%s' (%s) is accepted but not used "
                       "yet", key, origin);
        }
        val = &cfg->vals[d];
        samsa_free(val->text);
        samsa_free(val->source);
        val->text = samsa_config_defs[d].type == SAMSA_CONFIG_PASSWORD
                        ? samsa_strdup(samsa_props_value(props, i))
                        : config_strdup_trim(samsa_props_value(props, i));
        val->source = samsa_strdup(origin);
    }
}

static samsa_err_t
config_check_range(config_loader_t *ld, const samsa_config_def_t *def,
                   const samsa_config_val_t *val)
{
    int64_t  type_max = def->type == SAMSA_CONFIG_INT ? INT32_MAX : INT64_MAX;

    if (def->type == SAMSA_CONFIG_DOUBLE) {
        if (val->dbl < def->dmin || val->dbl > def->dmax) {
            return config_bad(ld, def->name, "must be between %g and %g",
                              def->dmin, def->dmax);
        }
    } else if (val->num < def->min || val->num > def->max) {
        if (def->max == type_max) {
            return config_bad(ld, def->name, "must be at least %lld",
                              (long long) def->min);
        }
        return config_bad(ld, def->name, "must be between %lld and %lld",
                          (long long) def->min, (long long) def->max);
    }
    return SAMSA_ERR_NONE;
}

static samsa_err_t
config_parse_scalar(config_loader_t *ld, const samsa_config_def_t *def,
                    samsa_config_val_t *val)
{
    const char  *why = NULL;

    switch (def->type) {
    case SAMSA_CONFIG_INT:
        why = config_parse_i64(val->text, INT32_MIN, INT32_MAX, &val->num);
        break;
    case SAMSA_CONFIG_LONG:
        why = config_parse_i64(val->text, INT64_MIN, INT64_MAX, &val->num);
        break;
    case SAMSA_CONFIG_DOUBLE:
        why = config_parse_double(val->text, &val->dbl);
        break;
    case SAMSA_CONFIG_BOOL:
        val->flag = strcasecmp(val->text, "true") == 0;
        if (!val->flag && strcasecmp(val->text, "false") != 0) {
            why = "not a boolean (true or false)";
        }
        break;
    default:
        break;
    }
    if (why != NULL) {
        return config_bad(ld, def->name, "%s", why);
    }
    return SAMSA_ERR_NONE;
}

/* Each item of a list key: ENUM membership, no repeats of an ENUM item. */
static samsa_err_t
config_check_items(config_loader_t *ld, const samsa_config_def_t *def,
                   const samsa_config_val_t *val)
{
    char    names[256];
    size_t  i, j;

    if (def->nonempty && val->nitems == 0) {
        return config_bad(ld, def->name, "must not be empty");
    }
    if (def->check != SAMSA_CONFIG_CHECK_ENUM) {
        return SAMSA_ERR_NONE;
    }
    for (i = 0; i < val->nitems; i++) {
        if (!config_in(def->names, val->items[i])) {
            return config_bad(ld, def->name, "'%s' is not one of: %s",
                              val->items[i],
                              config_join(def->names, names, sizeof(names)));
        }
        for (j = 0; j < i; j++) {
            if (strcmp(val->items[i], val->items[j]) == 0) {
                return config_bad(ld, def->name, "'%s' is listed twice",
                                  val->items[i]);
            }
        }
    }
    return SAMSA_ERR_NONE;
}

/* Parse and check one key's text (a null value passes). */
static samsa_err_t
config_parse_val(config_loader_t *ld, size_t i)
{
    const samsa_config_def_t  *def = &samsa_config_defs[i];
    samsa_config_val_t        *val = &ld->cfg->vals[i];
    const char                *why;
    char                       names[256], fnwhy[256] = "";
    samsa_err_t                err;

    if (val->text == NULL) {
        return SAMSA_ERR_NONE;
    }
    if (def->type == SAMSA_CONFIG_LIST) {
        why = config_split_list(val->text, &val->items, &val->nitems);
        if (why != NULL) {
            return config_bad(ld, def->name, "%s", why);
        }
        return config_check_items(ld, def, val);
    }
    err = config_parse_scalar(ld, def, val);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    switch (def->check) {
    case SAMSA_CONFIG_CHECK_RANGE:
        return config_check_range(ld, def, val);
    case SAMSA_CONFIG_CHECK_ENUM:
        if (!config_in(def->names, val->text)) {
            return config_bad(ld, def->name, "must be one of: %s",
                              config_join(def->names, names, sizeof(names)));
        }
        return SAMSA_ERR_NONE;
    case SAMSA_CONFIG_CHECK_FN:
        if (!def->fn(val->text, val->num, fnwhy, sizeof(fnwhy))) {
            return config_bad(ld, def->name, "%s", fnwhy);
        }
        return SAMSA_ERR_NONE;
    default:
        return SAMSA_ERR_NONE;
    }
}

/* ---- lookups by key ------------------------------------------------------ */

static samsa_config_val_t *
config_val(const samsa_config_t *cfg, const char *key)
{
    size_t  i = samsa_config_defs_index(key);

    samsa_assert(i < samsa_config_ndefs);
    return &cfg->vals[i];
}

static const samsa_config_val_t *
config_val_typed(const samsa_config_t *cfg, const char *key,
                 samsa_config_type_t type)
{
    size_t  i = samsa_config_defs_index(key);

    samsa_assert(i < samsa_config_ndefs);
    samsa_assert(samsa_config_defs[i].type == type);
    return &cfg->vals[i];
}

int32_t
samsa_config_int(const samsa_config_t *cfg, const char *key)
{
    const samsa_config_val_t  *val;

    val = config_val_typed(cfg, key, SAMSA_CONFIG_INT);
    samsa_assert(val->text != NULL);
    return (int32_t) val->num;
}

int64_t
samsa_config_long(const samsa_config_t *cfg, const char *key)
{
    const samsa_config_val_t  *val;

    val = config_val_typed(cfg, key, SAMSA_CONFIG_LONG);
    samsa_assert(val->text != NULL);
    return val->num;
}

double
samsa_config_double(const samsa_config_t *cfg, const char *key)
{
    const samsa_config_val_t  *val;

    val = config_val_typed(cfg, key, SAMSA_CONFIG_DOUBLE);
    samsa_assert(val->text != NULL);
    return val->dbl;
}

bool
samsa_config_bool(const samsa_config_t *cfg, const char *key)
{
    const samsa_config_val_t  *val;

    val = config_val_typed(cfg, key, SAMSA_CONFIG_BOOL);
    samsa_assert(val->text != NULL);
    return val->flag;
}

const char *
samsa_config_str(const samsa_config_t *cfg, const char *key)
{
    size_t  i = samsa_config_defs_index(key);

    samsa_assert(i < samsa_config_ndefs);
    samsa_assert(samsa_config_defs[i].type == SAMSA_CONFIG_STRING
                 || samsa_config_defs[i].type == SAMSA_CONFIG_PASSWORD
                 || samsa_config_defs[i].type == SAMSA_CONFIG_LIST);
    return cfg->vals[i].text;
}

char *const *
samsa_config_list(const samsa_config_t *cfg, const char *key, size_t *n)
{
    const samsa_config_val_t  *val;

    val = config_val_typed(cfg, key, SAMSA_CONFIG_LIST);
    *n = val->nitems;
    return val->items;
}

bool
samsa_config_is_set(const samsa_config_t *cfg, const char *key)
{
    return config_val(cfg, key)->text != NULL;
}

const char *
samsa_config_source(const samsa_config_t *cfg, const char *key)
{
    return config_val(cfg, key)->source;
}

/* ---- step 3: keys together ---------------------------------------------- */

/* Copy the plain numeric and boolean keys into their fields. */
static void
config_fill_scalars(samsa_config_t *cfg)
{
    cfg->num_network_threads = samsa_config_int(cfg, "num.network.threads");
    cfg->num_io_threads = samsa_config_int(cfg, "num.io.threads");
    cfg->queued_max_requests = samsa_config_int(cfg, "queued.max.requests");
    cfg->queued_max_request_bytes =
        samsa_config_long(cfg, "queued.max.request.bytes");
    cfg->socket_request_max_bytes =
        samsa_config_int(cfg, "socket.request.max.bytes");
    cfg->socket_send_buffer_bytes =
        samsa_config_int(cfg, "socket.send.buffer.bytes");
    cfg->socket_receive_buffer_bytes =
        samsa_config_int(cfg, "socket.receive.buffer.bytes");
    cfg->socket_listen_backlog_size =
        samsa_config_int(cfg, "socket.listen.backlog.size");
    cfg->connections_max_idle_ms =
        samsa_config_long(cfg, "connections.max.idle.ms");
    cfg->max_connections = samsa_config_int(cfg, "max.connections");
    cfg->max_connections_per_ip =
        samsa_config_int(cfg, "max.connections.per.ip");
    cfg->request_log_enable = samsa_config_bool(cfg, "request.log.enable");
}

/* node.id, or broker.id (its alias) when only that is set. */
static samsa_err_t
config_fill_node_id(config_loader_t *ld)
{
    samsa_config_t      *cfg = ld->cfg;
    samsa_config_val_t  *node = config_val(cfg, "node.id");
    samsa_config_val_t  *broker = config_val(cfg, "broker.id");
    bool                 node_set = strcmp(node->source, "default") != 0;

    cfg->node_id = (int32_t) node->num;
    if (broker->text == NULL) {
        return SAMSA_ERR_NONE;
    }
    if (node_set && broker->num != node->num) {
        return config_bad(ld, "broker.id", "differs from node.id=%d (%s); "
                          "broker.id is an alias of node.id",
                          cfg->node_id, node->source);
    }
    cfg->node_id = (int32_t) broker->num;
    if (!node_set) {
        samsa_free(node->text);
        samsa_free(node->source);
        node->text = samsa_strdup(broker->text);
        node->source = samsa_strdup(broker->source);
        node->num = broker->num;
    }
    return SAMSA_ERR_NONE;
}

static void
config_fill_roles(samsa_config_t *cfg)
{
    const samsa_config_val_t  *val = config_val(cfg, "process.roles");
    size_t                     i;

    for (i = 0; i < val->nitems; i++) {
        if (strcmp(val->items[i], "broker") == 0) {
            cfg->role_broker = true;
        } else {
            cfg->role_controller = true;
        }
    }
}

/* listener.security.protocol.map into ld->protos. */
static samsa_err_t
config_fill_protocol_map(config_loader_t *ld)
{
    const char                *key = "listener.security.protocol.map";
    const samsa_config_val_t  *val = config_val(ld->cfg, key);
    config_proto_t            *p;
    const char                *item, *colon;
    size_t                     i, j, nlen;

    ld->protos = samsa_calloc(val->nitems + 1, sizeof(config_proto_t));
    for (i = 0; i < val->nitems; i++) {
        item = val->items[i];
        colon = strchr(item, ':');
        nlen = colon != NULL ? (size_t) (colon - item) : 0;
        if (nlen == 0 || nlen >= sizeof(p->name) || colon[1] == '\0'
            || strlen(colon + 1) >= sizeof(p->protocol)) {
            return config_bad(ld, key, "'%s' is not NAME:PROTOCOL", item);
        }
        p = &ld->protos[ld->nprotos];
        memcpy(p->name, item, nlen);
        strcpy(p->protocol, colon + 1);
        config_upcase(p->name);
        config_upcase(p->protocol);
        if (!config_in(config_known_protocols, p->protocol)) {
            return config_bad(ld, key, "unknown security protocol '%s' "
                              "(PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL)",
                              colon + 1);
        }
        for (j = 0; j < ld->nprotos; j++) {
            if (strcmp(ld->protos[j].name, p->name) == 0) {
                return config_bad(ld, key, "listener name '%s' is mapped "
                                  "twice", p->name);
            }
        }
        ld->nprotos++;
    }
    return SAMSA_ERR_NONE;
}

static const char *
config_protocol_of(const config_loader_t *ld, const char *name)
{
    size_t  i;

    for (i = 0; i < ld->nprotos; i++) {
        if (strcmp(ld->protos[i].name, name) == 0) {
            return ld->protos[i].protocol;
        }
    }
    return NULL;
}

static samsa_err_t
config_fill_controller_names(config_loader_t *ld)
{
    const char          *key = "controller.listener.names";
    samsa_config_t      *cfg = ld->cfg;
    samsa_config_val_t  *val = config_val(cfg, key);
    size_t               i, j;

    cfg->controller_listener_names = samsa_calloc(val->nitems + 1,
                                                  sizeof(char *));
    for (i = 0; i < val->nitems; i++) {
        cfg->controller_listener_names[i] = samsa_strdup(val->items[i]);
        config_upcase(cfg->controller_listener_names[i]);
        cfg->ncontroller_listener_names++;
        for (j = 0; j < i; j++) {
            if (strcmp(cfg->controller_listener_names[i],
                       cfg->controller_listener_names[j]) == 0) {
                return config_bad(ld, key, "'%s' is listed twice",
                                  val->items[i]);
            }
        }
    }
    if (cfg->role_controller && cfg->ncontroller_listener_names == 0) {
        return config_bad(ld, key, "must be set when process.roles "
                          "includes controller");
    }
    return SAMSA_ERR_NONE;
}

static bool
config_is_controller_name(const samsa_config_t *cfg, const char *name)
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
config_host_chars_ok(const char *host, bool v6)
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
config_split_host(const char *s, bool bare_v6, char *host, const char **rest,
                  char *why, size_t why_size)
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
    if ((size_t) (hend - hstart) >= CONFIG_HOST_MAX) {
        snprintf(why, why_size, "'%s': host name too long", s);
        return false;
    }
    memcpy(host, hstart, (size_t) (hend - hstart));
    host[hend - hstart] = '\0';
    if (!config_host_chars_ok(host, v6) || (v6 && strchr(host, ':') == NULL)) {
        snprintf(why, why_size, "'%s': bad host '%s'", s, host);
        return false;
    }
    *rest = colon + 1;
    return true;
}

/* "host:port" with port 0..65535 (min_port up). */
static bool
config_parse_hostport(const char *s, char *host, int *port, int min_port,
                      char *why, size_t why_size)
{
    const char  *rest;
    int64_t      v;

    if (!config_split_host(s, false, host, &rest, why, why_size)) {
        return false;
    }
    if (config_parse_i64(rest, min_port, 65535, &v) != NULL || *rest == '+'
        || *rest == '-') {
        snprintf(why, why_size, "'%s': port must be a number from %d to "
                 "65535", s, min_port);
        return false;
    }
    *port = (int) v;
    return true;
}

/* Parse one "NAME://host:port" (name upper-cased). */
static bool
config_listener_parse(const char *s, samsa_listener_t *l, char *why,
                      size_t why_size)
{
    const char  *sep = strstr(s, "://");
    char         host[CONFIG_HOST_MAX];
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
    if (!config_parse_hostport(sep + 3, host, &l->port, 0, why, why_size)) {
        return false;
    }
    l->name = samsa_strndup(s, nlen);
    config_upcase(l->name);
    l->host = samsa_strdup(host);
    return true;
}

static void
config_listener_fini(samsa_listener_t *l)
{
    samsa_free(l->name);
    samsa_free(l->host);
    samsa_free(l->security_protocol);
}

static void
config_listeners_free(samsa_listener_t *v, size_t n)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        config_listener_fini(&v[i]);
    }
    samsa_free(v);
}

/* Parse a listener list key into *v (n items; *v has room for all). */
static samsa_err_t
config_parse_listener_list(config_loader_t *ld, const char *key,
                           samsa_listener_t **v, size_t *n)
{
    const samsa_config_val_t  *val = config_val(ld->cfg, key);
    char                       why[512];
    size_t                     i, j;

    *v = samsa_calloc(val->nitems + 1, sizeof(samsa_listener_t));
    for (i = 0; i < val->nitems; i++) {
        if (!config_listener_parse(val->items[i], &(*v)[i], why,
                                   sizeof(why))) {
            return config_bad(ld, key, "%s", why);
        }
        (*n)++;
        for (j = 0; j < i; j++) {
            if (strcmp((*v)[i].name, (*v)[j].name) == 0) {
                return config_bad(ld, key, "listener name '%s' is used "
                                  "twice", (*v)[i].name);
            }
        }
    }
    return SAMSA_ERR_NONE;
}

/* Security protocol and controller flag of each listener. */
static samsa_err_t
config_resolve_listener(config_loader_t *ld, const char *key,
                        samsa_listener_t *l)
{
    const char  *protocol = config_protocol_of(ld, l->name);

    if (protocol == NULL) {
        return config_bad(ld, key, "listener name '%s' has no security "
                          "protocol in listener.security.protocol.map",
                          l->name);
    }
    if (strcmp(protocol, "PLAINTEXT") != 0) {
        return config_bad(ld, key, "listener '%s' uses security protocol "
                          "%s, which Samsa does not support yet (only "
                          "PLAINTEXT)", l->name, protocol);
    }
    l->security_protocol = samsa_strdup(protocol);
    l->is_controller = config_is_controller_name(ld->cfg, l->name);
    return SAMSA_ERR_NONE;
}

static samsa_err_t
config_fill_listeners(config_loader_t *ld)
{
    samsa_config_t  *cfg = ld->cfg;
    samsa_err_t      err;
    size_t           i, j;

    err = config_parse_listener_list(ld, "listeners", &cfg->listeners,
                                     &cfg->nlisteners);
    for (i = 0; err == SAMSA_ERR_NONE && i < cfg->nlisteners; i++) {
        err = config_resolve_listener(ld, "listeners", &cfg->listeners[i]);
        for (j = 0; err == SAMSA_ERR_NONE && j < i; j++) {
            if (cfg->listeners[i].port != 0
                && cfg->listeners[i].port == cfg->listeners[j].port) {
                err = config_bad(ld, "listeners", "listeners '%s' and '%s' "
                                 "use the same port %d",
                                 cfg->listeners[j].name,
                                 cfg->listeners[i].name,
                                 cfg->listeners[i].port);
            }
        }
    }
    if (err == SAMSA_ERR_NONE && cfg->nlisteners == 0) {
        err = config_bad(ld, "listeners", "must not be empty");
    }
    return err;
}

static size_t
config_count_controller_listeners(const samsa_config_t *cfg)
{
    size_t  i, n = 0;

    for (i = 0; i < cfg->nlisteners; i++) {
        n += cfg->listeners[i].is_controller ? 1 : 0;
    }
    return n;
}

/* process.roles against listeners and controller.listener.names. */
static samsa_err_t
config_check_roles(config_loader_t *ld)
{
    samsa_config_t  *cfg = ld->cfg;
    size_t           nctl = config_count_controller_listeners(cfg);

    if (cfg->role_controller && nctl == 0) {
        return config_bad(ld, "listeners", "process.roles includes "
                          "controller, but no listener is named in "
                          "controller.listener.names (%s)",
                          cfg->controller_listener_names[0]);
    }
    if (!cfg->role_broker && nctl < cfg->nlisteners) {
        return config_bad(ld, "listeners", "with process.roles=controller "
                          "every listener must be a controller listener "
                          "(controller.listener.names)");
    }
    if (cfg->role_broker && !cfg->role_controller && nctl > 0) {
        return config_bad(ld, "listeners", "with process.roles=broker the "
                          "listeners must not include a controller "
                          "listener (controller.listener.names), and a "
                          "broker-only node needs a separate controller "
                          "quorum, which Samsa does not support yet");
    }
    if (cfg->role_broker && !cfg->role_controller) {
        return config_bad(ld, "process.roles", "a broker-only node needs a "
                          "separate controller quorum, which Samsa does "
                          "not support yet; use process.roles=broker,"
                          "controller");
    }
    if (cfg->role_broker && nctl == cfg->nlisteners) {
        return config_bad(ld, "listeners", "process.roles includes broker, "
                          "but every listener is a controller listener");
    }
    return SAMSA_ERR_NONE;
}

static bool
config_is_meta_address(const char *host)
{
    return strcmp(host, "0.0.0.0") == 0 || strcmp(host, "::") == 0;
}

/* Copy listener src for advertising; an empty host becomes the host
 * name.  False if its host is a wildcard address. */
static bool
config_advertise(config_loader_t *ld, const samsa_listener_t *src,
                 samsa_listener_t *dst)
{
    if (config_is_meta_address(src->host)) {
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
config_fill_default_advertised(config_loader_t *ld)
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
        if (!config_advertise(ld, l, &cfg->advertised_listeners[
                                         cfg->nadvertised_listeners])) {
            return config_bad(ld, "advertised.listeners", "listener '%s' "
                              "binds the wildcard address '%s', which "
                              "cannot be advertised: set "
                              "advertised.listeners", l->name, l->host);
        }
        cfg->nadvertised_listeners++;
    }
    return SAMSA_ERR_NONE;
}

static const samsa_listener_t *
config_find_listener(const samsa_config_t *cfg, const char *name)
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
config_check_advertised(config_loader_t *ld, samsa_listener_t *a)
{
    const char              *key = "advertised.listeners";
    const samsa_listener_t  *l = config_find_listener(ld->cfg, a->name);
    char                    *host;

    if (l == NULL) {
        return config_bad(ld, key, "'%s' is not the name of a listener in "
                          "listeners", a->name);
    }
    if (l->is_controller) {
        return config_bad(ld, key, "'%s' is a controller listener; "
                          "controller listeners are not advertised",
                          a->name);
    }
    if (config_is_meta_address(a->host)) {
        return config_bad(ld, key, "cannot advertise the wildcard address "
                          "'%s'", a->host);
    }
    if (a->port == 0) {
        return config_bad(ld, key, "cannot advertise port 0");
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
config_fill_advertised(config_loader_t *ld)
{
    samsa_config_t  *cfg = ld->cfg;
    const char      *text;
    samsa_err_t      err;
    size_t           i;

    text = samsa_config_str(cfg, "advertised.listeners");
    if (text == NULL || text[0] == '\0') {
        return config_fill_default_advertised(ld);
    }
    err = config_parse_listener_list(ld, "advertised.listeners",
                                     &cfg->advertised_listeners,
                                     &cfg->nadvertised_listeners);
    for (i = 0; err == SAMSA_ERR_NONE && i < cfg->nadvertised_listeners;
         i++) {
        err = config_check_advertised(ld, &cfg->advertised_listeners[i]);
    }
    return err;
}

/* log.dirs, or log.dir when log.dirs is null; no duplicates. */
static samsa_err_t
config_fill_log_dirs(config_loader_t *ld)
{
    samsa_config_t            *cfg = ld->cfg;
    const char                *key = "log.dirs";
    const samsa_config_val_t  *val;
    size_t                     i, j;

    if (!samsa_config_is_set(cfg, key)) {
        key = "log.dir";
    }
    val = config_val(cfg, key);
    cfg->log_dirs = samsa_calloc(val->nitems, sizeof(char *));
    for (i = 0; i < val->nitems; i++) {
        for (j = 0; j < i; j++) {
            if (strcmp(val->items[i], val->items[j]) == 0) {
                return config_bad(ld, key, "'%s' is listed twice",
                                  val->items[i]);
            }
        }
        cfg->log_dirs[i] = samsa_strdup(val->items[i]);
        cfg->nlog_dirs++;
    }
    return SAMSA_ERR_NONE;
}

/* Set (or replace, the later entry winning) the override of ip. */
static void
config_override_put(samsa_config_t *cfg, const char *ip, int32_t max)
{
    samsa_ip_override_t  *o;
    size_t                i;

    for (i = 0; i < cfg->nmax_connections_per_ip_overrides; i++) {
        o = &cfg->max_connections_per_ip_overrides[i];
        if (strcmp(o->ip, ip) == 0) {
            o->max = max;
            return;
        }
    }
    cfg->max_connections_per_ip_overrides =
        samsa_realloc(cfg->max_connections_per_ip_overrides,
                      (i + 1) * sizeof(samsa_ip_override_t));
    o = &cfg->max_connections_per_ip_overrides[i];
    memset(o, 0, sizeof(*o));
    snprintf(o->ip, sizeof(o->ip), "%s", ip);
    o->max = max;
    cfg->nmax_connections_per_ip_overrides++;
}

/* Every address host resolves to (a literal resolves to itself). */
static samsa_err_t
config_override_host(config_loader_t *ld, const char *host, int32_t max)
{
    struct addrinfo   hints = { .ai_socktype = SOCK_STREAM };
    struct addrinfo  *res, *ai;
    const void       *addr;
    char              ip[INET6_ADDRSTRLEN];
    int               rc;

    hints.ai_family = AF_UNSPEC;
    rc = getaddrinfo(host, NULL, &hints, &res);
    if (rc != 0) {
        return config_bad_code(ld, SAMSA_ERR__RESOLVE,
                               "max.connections.per.ip.overrides",
                               "cannot resolve host '%s': %s", host,
                               gai_strerror(rc));
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
            config_override_put(ld->cfg, ip, max);
        }
    }
    freeaddrinfo(res);
    return SAMSA_ERR_NONE;
}

/* max.connections.per.ip.overrides: "host:count, ..." (Kafka's format; a
 * bare IPv6 literal splits at its last colon). */
static samsa_err_t
config_fill_overrides(config_loader_t *ld)
{
    const char                *key = "max.connections.per.ip.overrides";
    const samsa_config_val_t  *val = config_val(ld->cfg, key);
    char                       host[CONFIG_HOST_MAX], why[512];
    char                     **items;
    const char                *rest, *bad;
    size_t                     i, n;
    int64_t                    max;
    samsa_err_t                err = SAMSA_ERR_NONE;

    bad = config_split_list(val->text, &items, &n);
    if (bad != NULL) {
        err = config_bad(ld, key, "%s", bad);
    }
    for (i = 0; err == SAMSA_ERR_NONE && i < n; i++) {
        if (!config_split_host(items[i], true, host, &rest, why,
                               sizeof(why))) {
            err = config_bad(ld, key, "%s", why);
        } else if (host[0] == '\0') {
            err = config_bad(ld, key, "'%s': missing host", items[i]);
        } else if (config_parse_i64(rest, 0, INT32_MAX, &max) != NULL) {
            err = config_bad(ld, key, "'%s': the count must be a number "
                             "from 0 to 2147483647", items[i]);
        } else {
            err = config_override_host(ld, host, (int32_t) max);
        }
    }
    config_free_strv(items, n);
    return err;
}

/* True if host:port names one of this node's controller listeners. */
static bool
config_is_own_controller(config_loader_t *ld, const char *host, int port)
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

/* controller.quorum.voters: empty, or "id@host:port" naming this node. */
static samsa_err_t
config_check_voters(config_loader_t *ld)
{
    const char                *key = "controller.quorum.voters";
    const samsa_config_val_t  *val = config_val(ld->cfg, key);
    const char                *at;
    char                       host[CONFIG_HOST_MAX], why[512];
    char                       id[16];
    int64_t                    v;
    int                        port;

    if (val->nitems == 0) {
        return SAMSA_ERR_NONE;
    }
    if (val->nitems > 1) {
        return config_bad(ld, key, "multi-node quorums are not supported "
                          "yet; leave it empty or name only this node");
    }
    at = strchr(val->items[0], '@');
    if (at == NULL || (size_t) (at - val->items[0]) >= sizeof(id)) {
        return config_bad(ld, key, "'%s' is not id@host:port",
                          val->items[0]);
    }
    memcpy(id, val->items[0], (size_t) (at - val->items[0]));
    id[at - val->items[0]] = '\0';
    if (config_parse_i64(id, 0, INT32_MAX, &v) != NULL
        || !config_parse_hostport(at + 1, host, &port, 1, why, sizeof(why))) {
        return config_bad(ld, key, "'%s' is not id@host:port",
                          val->items[0]);
    }
    if (v != ld->cfg->node_id || !config_is_own_controller(ld, host, port)) {
        return config_bad(ld, key, "'%s' is not this node (node.id=%d and "
                          "its controller listener); multi-node quorums "
                          "are not supported yet", val->items[0],
                          ld->cfg->node_id);
    }
    return SAMSA_ERR_NONE;
}

/* controller.quorum.bootstrap.servers: empty, or this node's controller. */
static samsa_err_t
config_check_bootstrap(config_loader_t *ld)
{
    const char                *key = "controller.quorum.bootstrap.servers";
    const samsa_config_val_t  *val = config_val(ld->cfg, key);
    char                       host[CONFIG_HOST_MAX], why[512];
    size_t                     i;
    int                        port;

    for (i = 0; i < val->nitems; i++) {
        if (!config_parse_hostport(val->items[i], host, &port, 1, why,
                                   sizeof(why))) {
            return config_bad(ld, key, "%s", why);
        }
        if (!config_is_own_controller(ld, host, port)) {
            return config_bad(ld, key, "'%s' is not this node's controller "
                              "listener; multi-node quorums are not "
                              "supported yet", val->items[i]);
        }
    }
    return SAMSA_ERR_NONE;
}

static void
config_fill_request_log(samsa_config_t *cfg)
{
    const char  *file = samsa_config_str(cfg, "request.log.file");
    size_t       n;

    if (file[0] != '\0') {
        cfg->request_log_file = samsa_strdup(file);
        return;
    }
    n = strlen(cfg->log_dirs[0]) + sizeof("/samsa-request.log");
    cfg->request_log_file = samsa_malloc(n);
    snprintf(cfg->request_log_file, n, "%s/samsa-request.log",
             cfg->log_dirs[0]);
}

/* Kafka's cross-checks of the network keys (KafkaConfig.validateValues). */
static samsa_err_t
config_check_network(config_loader_t *ld)
{
    samsa_config_t  *cfg = ld->cfg;

    if (cfg->queued_max_request_bytes > 0
        && cfg->queued_max_request_bytes < cfg->socket_request_max_bytes) {
        return config_bad(ld, "queued.max.request.bytes", "must be -1 (no "
                          "limit) or at least socket.request.max.bytes "
                          "(%d)", cfg->socket_request_max_bytes);
    }
    if (cfg->max_connections_per_ip == 0
        && cfg->nmax_connections_per_ip_overrides == 0) {
        return config_bad(ld, "max.connections.per.ip", "may be 0 only "
                          "when max.connections.per.ip.overrides is set");
    }
    return SAMSA_ERR_NONE;
}

/* This machine's name, advertised for listeners with an empty host. */
static void
config_hostname(config_loader_t *ld)
{
    if (gethostname(ld->hostname, sizeof(ld->hostname)) != 0
        || ld->hostname[0] == '\0') {
        strcpy(ld->hostname, "localhost");
    }
    ld->hostname[sizeof(ld->hostname) - 1] = '\0';
}

/* Step 3: the checks across keys and the typed fields, in order. */
static samsa_err_t
config_fill(config_loader_t *ld)
{
    samsa_config_t  *cfg = ld->cfg;
    samsa_err_t      err;

    config_hostname(ld);
    config_fill_scalars(cfg);
    config_fill_roles(cfg);
    if ((err = config_fill_node_id(ld)) != SAMSA_ERR_NONE
        || (err = config_fill_protocol_map(ld)) != SAMSA_ERR_NONE
        || (err = config_fill_controller_names(ld)) != SAMSA_ERR_NONE
        || (err = config_fill_listeners(ld)) != SAMSA_ERR_NONE
        || (err = config_check_roles(ld)) != SAMSA_ERR_NONE
        || (err = config_fill_advertised(ld)) != SAMSA_ERR_NONE
        || (err = config_check_voters(ld)) != SAMSA_ERR_NONE
        || (err = config_check_bootstrap(ld)) != SAMSA_ERR_NONE
        || (err = config_fill_log_dirs(ld)) != SAMSA_ERR_NONE
        || (err = config_fill_overrides(ld)) != SAMSA_ERR_NONE
        || (err = config_check_network(ld)) != SAMSA_ERR_NONE) {
        return err;
    }
    config_fill_request_log(cfg);
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_config_load(samsa_config_t *cfg, const samsa_props_t *props,
                  char *errstr, size_t errstr_size)
{
    config_loader_t  ld = {
        .cfg = cfg, .errstr = errstr, .errstr_size = errstr_size,
    };
    samsa_err_t      err = SAMSA_ERR_NONE;
    size_t           i;

    memset(cfg, 0, sizeof(*cfg));
    config_vals_init(cfg);
    config_vals_apply(cfg, props);
    for (i = 0; err == SAMSA_ERR_NONE && i < samsa_config_ndefs; i++) {
        err = config_parse_val(&ld, i);
    }
    if (err == SAMSA_ERR_NONE) {
        err = config_fill(&ld);
    }
    samsa_free(ld.protos);
    return err;
}

void
samsa_config_fini(samsa_config_t *cfg)
{
    size_t  i;

    config_listeners_free(cfg->listeners, cfg->nlisteners);
    config_listeners_free(cfg->advertised_listeners,
                          cfg->nadvertised_listeners);
    config_free_strv(cfg->controller_listener_names,
                     cfg->ncontroller_listener_names);
    config_free_strv(cfg->log_dirs, cfg->nlog_dirs);
    samsa_free(cfg->max_connections_per_ip_overrides);
    samsa_free(cfg->request_log_file);
    samsa_free(cfg->config_file);
    for (i = 0; cfg->vals != NULL && i < samsa_config_ndefs; i++) {
        samsa_free(cfg->vals[i].text);
        samsa_free(cfg->vals[i].source);
        config_free_strv(cfg->vals[i].items, cfg->vals[i].nitems);
    }
    samsa_free(cfg->vals);
    memset(cfg, 0, sizeof(*cfg));
}

void
samsa_config_log_values(const samsa_config_t *cfg)
{
    const samsa_config_def_t  *def;
    const samsa_config_val_t  *val;
    const char                *text;
    size_t                     i;

    for (i = 0; i < samsa_config_ndefs; i++) {
        def = &samsa_config_defs[i];
        val = &cfg->vals[i];
        if (strcmp(val->source, "default") == 0) {
            continue;
        }
        text = val->text != NULL ? val->text : "null";
        if (def->type == SAMSA_CONFIG_PASSWORD) {
            text = "[hidden]";
        }
        samsa_info("config %s = %s (%s)", def->name, text, val->source);
    }
}

/* ---- command line ------------------------------------------------------- */

void
samsa_config_usage(FILE *out)
{
    fputs("Usage: samsa-server [server.properties] [--override key=value]..."
          "\n\n"
          "Runs a Samsa node: a Kafka-protocol broker and, by default, its\n"
          "own single controller.  The properties file uses Kafka's\n"
          "server.properties keys and format; each --override sets one key\n"
          "and wins over the file.  See docs/CONFIG.md for every key.\n\n"
          "Options:\n"
          "  --override key=value  set a configuration key (repeatable)\n"
          "  -h, --help            print this help and exit\n"
          "  -V, --version         print the version and exit\n\n"
          "Without a file: process.roles=broker,controller, node.id=1,\n"
          "listeners=PLAINTEXT://localhost:9092,CONTROLLER://localhost:9093"
          ",\nlog.dir=./samsa-data.\n", out);
}

/* Split "key=value" of an --override into props. */
static samsa_err_t
config_args_override(samsa_props_t *props, const char *kv, char *errstr,
                     size_t errstr_size)
{
    const char  *eq = strchr(kv, '=');
    char        *raw, *key;

    raw = samsa_strndup(kv, eq != NULL ? (size_t) (eq - kv) : 0);
    key = config_strdup_trim(raw);
    samsa_free(raw);
    if (eq == NULL || key[0] == '\0') {
        snprintf(errstr, errstr_size, "--override expects key=value, got "
                 "'%s'", kv);
        samsa_free(key);
        return SAMSA_ERR__CONFIG;
    }
    samsa_props_set(props, key, eq + 1, "--override");
    samsa_free(key);
    return SAMSA_ERR_NONE;
}

/* The override text of argv[*i] (stepping over its argument), NULL if
 * argv[*i] is not --override. */
static const char *
config_args_override_text(int argc, char **argv, int *i, bool *missing)
{
    const char  *a = argv[*i];

    *missing = false;
    if (strncmp(a, "--override=", 11) == 0) {
        return a + 11;
    }
    if (strcmp(a, "--override") != 0) {
        return NULL;
    }
    if (*i + 1 >= argc) {
        *missing = true;
        return NULL;
    }
    return argv[++*i];
}

/* Check the arguments and find the properties file (or NULL); with
 * apply, set the overrides into props. */
static samsa_err_t
config_args_scan(int argc, char **argv, samsa_props_t *props, bool apply,
                 const char **file, char *errstr, size_t errstr_size)
{
    const char  *kv;
    bool         missing;
    samsa_err_t  err = SAMSA_ERR_NONE;
    int          i;

    *file = NULL;
    for (i = 1; err == SAMSA_ERR_NONE && i < argc; i++) {
        kv = config_args_override_text(argc, argv, &i, &missing);
        if (missing) {
            snprintf(errstr, errstr_size, "--override needs key=value");
            err = SAMSA_ERR__CONFIG;
        } else if (kv != NULL) {
            err = apply ? config_args_override(props, kv, errstr,
                                               errstr_size)
                        : SAMSA_ERR_NONE;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            snprintf(errstr, errstr_size, "unknown option '%s' (see "
                     "--help)", argv[i]);
            err = SAMSA_ERR__CONFIG;
        } else if (*file != NULL) {
            snprintf(errstr, errstr_size, "more than one properties file "
                     "given ('%s' and '%s')", *file, argv[i]);
            err = SAMSA_ERR__CONFIG;
        } else {
            *file = argv[i];
        }
    }
    return err;
}

/* Sets show_help or show_version if asked for; true if one was. */
static bool
config_args_info(samsa_config_t *cfg, int argc, char **argv)
{
    int  i;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--override") == 0) {
            i++;                    /* its value is not an option */
        } else if (strcmp(argv[i], "-h") == 0
                   || strcmp(argv[i], "--help") == 0) {
            cfg->show_help = true;
        } else if (strcmp(argv[i], "-V") == 0
                   || strcmp(argv[i], "--version") == 0) {
            cfg->show_version = true;
        }
    }
    return cfg->show_help || cfg->show_version;
}

samsa_err_t
samsa_config_from_args(samsa_config_t *cfg, int argc, char **argv,
                       char *errstr, size_t errstr_size)
{
    samsa_props_t  *props;
    const char     *file;
    samsa_err_t     err;

    memset(cfg, 0, sizeof(*cfg));
    if (config_args_info(cfg, argc, argv)) {
        return SAMSA_ERR_NONE;
    }
    props = samsa_props_new();
    err = config_args_scan(argc, argv, props, false, &file, errstr,
                           errstr_size);
    if (err == SAMSA_ERR_NONE && file != NULL) {
        err = samsa_props_load_file(props, file, errstr, errstr_size);
    }
    if (err == SAMSA_ERR_NONE) {
        err = config_args_scan(argc, argv, props, true, &file, errstr,
                               errstr_size);
    }
    if (err == SAMSA_ERR_NONE) {
        err = samsa_config_load(cfg, props, errstr, errstr_size);
        cfg->config_file = file != NULL ? samsa_strdup(file) : NULL;
    }
    samsa_props_free(props);
    return err;
}
