/*
 * config/config.c - see config.h.  Loading runs in three steps: every key
 * gets its text (from props, else its default), each text is parsed and
 * checked on its own against its config_defs.c row, then the keys that
 * depend on each other are checked together and the typed fields of
 * samsa_config_t filled (the listener side in config_net.c).  The command
 * line is parsed here too.
 * Threads: main, before any other thread starts; read-only afterwards.
 */
#include "config/config.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config/config_int.h"
#include "util/alloc.h"
#include "util/diag.h"

samsa_err_t
samsa_config_bad(samsa_config_loader_t *ld, const char *key, const char *fmt,
                 ...)
{
    size_t                     i = samsa_config_defs_index(key);
    const samsa_config_val_t  *val;
    const char                *text;
    char                       why[512];
    va_list                    ap;

    samsa_assert(i < samsa_config_ndefs);
    val = &ld->cfg->vals[i];
    text = val->text != NULL ? val->text : "null";
    if (samsa_config_defs[i].type == SAMSA_CONFIG_PASSWORD) {
        text = "[hidden]";
    }
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    snprintf(ld->errstr, ld->errstr_size,
             "invalid value '%s' for configuration '%s': %s (%s)", text, key,
             why, val->source);
    return SAMSA_ERR__CONFIG;
}

/* A copy of s without leading and trailing white space. */
char *
samsa_config_strdup_trim(const char *s)
{
    size_t  n = strlen(s);

    samsa_config_trim_span(&s, &n, SAMSA_CONFIG_TRIM_SPACE);
    return samsa_strndup(s, n);
}

void
samsa_config_upcase(char *s)
{
    for (; *s != '\0'; s++) {
        *s = (char) toupper((unsigned char) *s);
    }
}

/* Split a comma-separated list into trimmed items; empty text is an empty
 * list.  NULL or why (an empty item). */
const char *
samsa_config_split_list(const char *text, char ***items, size_t *n)
{
    samsa_config_list_t   it;
    const char           *item;
    size_t                len;

    *items = NULL;
    *n = 0;
    samsa_config_list_init(&it, text);
    while (samsa_config_list_next(&it, &item, &len)) {
        samsa_config_trim_span(&item, &len, SAMSA_CONFIG_TRIM_SPACE);
        *items = samsa_realloc(*items, (*n + 1) * sizeof(char *));
        (*items)[(*n)++] = samsa_strndup(item, len);
        if (len == 0) {
            return "empty item in list";
        }
    }
    return NULL;
}

void
samsa_config_strv_free(char **v, size_t n)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        samsa_free(v[i]);
    }
    samsa_free(v);
}

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

#define CONFIG_LISTENER_PREFIX  "listener.name."

/* "<mechanism>.sasl.jaas.config",
 * "<mechanism>.sasl.server.callback.handler.class" or
 * "<mechanism>.sasl.oauthbearer.<...>": a mechanism name in lower case
 * (letters, digits, '-', '_'); *key gets the key after it. */
static bool
config_listener_mech_key(const char *rest, const char **key)
{
    const char  *dot = strchr(rest, '.');
    const char  *p;

    if (dot == NULL || dot == rest
        || (strcmp(dot + 1, "sasl.jaas.config") != 0
            && strcmp(dot + 1, "sasl.server.callback.handler.class") != 0
            && strncmp(dot + 1, "sasl.oauthbearer.", 17) != 0)) {
        return false;
    }
    *key = dot + 1;
    for (p = rest; p < dot; p++) {
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')
              || *p == '-' || *p == '_')) {
            return false;
        }
    }
    return true;
}

bool
samsa_config_listener_key(const char *key, char *listener,
                          size_t listener_size, const char **rest,
                          size_t *def)
{
    const char  *name, *dot, *mkey;
    size_t       d;

    if (strncmp(key, CONFIG_LISTENER_PREFIX,
                strlen(CONFIG_LISTENER_PREFIX)) != 0) {
        return false;
    }
    name = key + strlen(CONFIG_LISTENER_PREFIX);
    dot = strchr(name, '.');
    if (dot == NULL || dot == name || (size_t) (dot - name) >= listener_size) {
        return false;
    }
    d = samsa_config_defs_index(dot + 1);
    if (d == samsa_config_ndefs && config_listener_mech_key(dot + 1, &mkey)) {
        /* listener.name.<l>.<mechanism>.sasl.jaas.config (Kafka's
         * ListenerName.saslMechanismConfigPrefix) */
        d = samsa_config_defs_index(mkey);
    }
    if (d == samsa_config_ndefs || !samsa_config_defs[d].per_listener) {
        return false;
    }
    memcpy(listener, name, (size_t) (dot - name));
    listener[dot - name] = '\0';
    *rest = dot + 1;
    *def = d;
    return true;
}

/* Keep a listener.name.<listener>.<key> value (the later one of a key
 * winning, as for any key); checked once the listeners are known. */
static void
config_listener_value_put(samsa_config_t *cfg, const char *key,
                          const char *listener, size_t def, const char *text,
                          const char *origin)
{
    samsa_listener_value_t  *v = NULL;
    size_t                   i;

    for (i = 0; i < cfg->nlistener_values; i++) {
        if (strcmp(cfg->listener_values[i].key, key) == 0) {
            v = &cfg->listener_values[i];
            samsa_free(v->text);
            samsa_free(v->source);
            break;
        }
    }
    if (v == NULL) {
        cfg->listener_values = samsa_realloc(
            cfg->listener_values,
            (cfg->nlistener_values + 1) * sizeof(*cfg->listener_values));
        v = &cfg->listener_values[cfg->nlistener_values++];
        memset(v, 0, sizeof(*v));
        v->key = samsa_strdup(key);
        v->listener = samsa_strdup(listener);
        v->def = def;
    }
    v->text = samsa_config_strdup_trim(text);
    v->source = samsa_strdup(origin);
}

/* Take every known key's text from props; log unknown and unused ones. */
static void
config_vals_apply(samsa_config_t *cfg, const samsa_props_t *props)
{
    const char          *key, *origin, *rest;
    samsa_config_val_t  *val;
    char                 listener[64];
    size_t               i, d;

    for (i = 0; props != NULL && i < samsa_props_count(props); i++) {
        key = samsa_props_key(props, i);
        origin = samsa_props_origin(props, i);
        if (samsa_config_listener_key(key, listener, sizeof(listener),
                                      &rest, &d)) {
            config_listener_value_put(cfg, key, listener, d,
                                      samsa_props_value(props, i), origin);
            continue;
        }
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
        if (samsa_config_defs[d].type == SAMSA_CONFIG_PASSWORD) {
            val->text = samsa_strdup(samsa_props_value(props, i));
        } else {
            val->text = samsa_config_strdup_trim(samsa_props_value(props, i));
        }
        val->source = samsa_strdup(origin);
    }
}

static samsa_err_t
config_check_range(samsa_config_loader_t *ld, const samsa_config_def_t *def,
                   const samsa_config_val_t *val)
{
    int64_t  type_max = def->type == SAMSA_CONFIG_INT ? INT32_MAX : INT64_MAX;

    if (def->type == SAMSA_CONFIG_DOUBLE) {
        if (!(val->dbl >= def->dmin && val->dbl <= def->dmax)) {   /* NaN too */
            return samsa_config_bad(ld, def->name,
                                    "must be between %g and %g", def->dmin,
                                    def->dmax);
        }
    } else if (val->num < def->min || val->num > def->max) {
        if (def->max == type_max) {
            return samsa_config_bad(ld, def->name, "must be at least %lld",
                                    (long long) def->min);
        }
        return samsa_config_bad(ld, def->name,
                                "must be between %lld and %lld",
                                (long long) def->min, (long long) def->max);
    }
    return SAMSA_ERR_NONE;
}

static samsa_err_t
config_parse_scalar(samsa_config_loader_t *ld, const samsa_config_def_t *def,
                    samsa_config_val_t *val)
{
    const char  *why = NULL;

    switch (def->type) {
    case SAMSA_CONFIG_INT:
        why = samsa_config_parse_i64(val->text, INT32_MIN, INT32_MAX,
                                     &val->num);
        break;
    case SAMSA_CONFIG_LONG:
        why = samsa_config_parse_i64(val->text, INT64_MIN, INT64_MAX,
                                     &val->num);
        break;
    case SAMSA_CONFIG_DOUBLE:
        why = samsa_config_parse_double(val->text, &val->dbl);
        break;
    case SAMSA_CONFIG_BOOL:
        if (!samsa_config_parse_bool(val->text, &val->flag)) {
            why = "not a boolean (true or false)";
        }
        break;
    default:
        break;
    }
    if (why != NULL) {
        return samsa_config_bad(ld, def->name, "%s", why);
    }
    return SAMSA_ERR_NONE;
}

/* Each item of a list key: ENUM membership, no repeats of an ENUM item. */
static samsa_err_t
config_check_items(samsa_config_loader_t *ld, const samsa_config_def_t *def,
                   const samsa_config_val_t *val)
{
    char    names[256];
    size_t  i, j;

    if (def->nonempty && val->nitems == 0) {
        return samsa_config_bad(ld, def->name, "must not be empty");
    }
    if (def->check != SAMSA_CONFIG_CHECK_ENUM) {
        return SAMSA_ERR_NONE;
    }
    for (i = 0; i < val->nitems; i++) {
        if (!samsa_config_in(def->names, val->items[i])) {
            samsa_config_join(def->names, names, sizeof(names));
            return samsa_config_bad(ld, def->name, "'%s' is not one of: %s",
                                    val->items[i], names);
        }
        for (j = 0; j < i; j++) {
            if (strcmp(val->items[i], val->items[j]) == 0) {
                return samsa_config_bad(ld, def->name,
                                        "'%s' is listed twice",
                                        val->items[i]);
            }
        }
    }
    return SAMSA_ERR_NONE;
}

/* Parse and check one key's text (a null value passes). */
static samsa_err_t
config_parse_val(samsa_config_loader_t *ld, size_t i)
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
        why = samsa_config_split_list(val->text, &val->items, &val->nitems);
        if (why != NULL) {
            return samsa_config_bad(ld, def->name, "%s", why);
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
        if (!samsa_config_in(def->names, val->text)) {
            samsa_config_join(def->names, names, sizeof(names));
            return samsa_config_bad(ld, def->name, "must be one of: %s",
                                    names);
        }
        return SAMSA_ERR_NONE;
    case SAMSA_CONFIG_CHECK_FN:
        if (!def->fn(val->text, val->num, fnwhy, sizeof(fnwhy))) {
            return samsa_config_bad(ld, def->name, "%s", fnwhy);
        }
        return SAMSA_ERR_NONE;
    default:
        return SAMSA_ERR_NONE;
    }
}

samsa_config_val_t *
samsa_config_val_find(const samsa_config_t *cfg, const char *key)
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

/* A scalar key's value, which always has one (its default, if nothing
 * else). */
static const samsa_config_val_t *
config_val_scalar(const samsa_config_t *cfg, const char *key,
                  samsa_config_type_t type)
{
    const samsa_config_val_t  *val = config_val_typed(cfg, key, type);

    samsa_assert(val->text != NULL);
    return val;
}

int32_t
samsa_config_int(const samsa_config_t *cfg, const char *key)
{
    return (int32_t) config_val_scalar(cfg, key, SAMSA_CONFIG_INT)->num;
}

int64_t
samsa_config_long(const samsa_config_t *cfg, const char *key)
{
    return config_val_scalar(cfg, key, SAMSA_CONFIG_LONG)->num;
}

double
samsa_config_double(const samsa_config_t *cfg, const char *key)
{
    return config_val_scalar(cfg, key, SAMSA_CONFIG_DOUBLE)->dbl;
}

bool
samsa_config_bool(const samsa_config_t *cfg, const char *key)
{
    return config_val_scalar(cfg, key, SAMSA_CONFIG_BOOL)->flag;
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
    return samsa_config_val_find(cfg, key)->text != NULL;
}

const char *
samsa_config_source(const samsa_config_t *cfg, const char *key)
{
    return samsa_config_val_find(cfg, key)->source;
}

const char *
samsa_config_text(const samsa_config_t *cfg, const char *key)
{
    return samsa_config_val_find(cfg, key)->text;
}

/* Copy the plain numeric and boolean keys into their fields. */
/* node.id, or broker.id (its alias) when only that is set. */
static samsa_err_t
config_fill_node_id(samsa_config_loader_t *ld)
{
    samsa_config_t      *cfg = ld->cfg;
    samsa_config_val_t  *node = samsa_config_val_find(cfg, "node.id");
    samsa_config_val_t  *broker = samsa_config_val_find(cfg, "broker.id");
    bool                 node_set = strcmp(node->source, "default") != 0;

    cfg->node_id = (int32_t) node->num;
    if (broker->text == NULL) {
        return SAMSA_ERR_NONE;
    }
    if (node_set && broker->num != node->num) {
        return samsa_config_bad(ld, "broker.id", "differs from node.id=%d "
                                "(%s); broker.id is an alias of node.id",
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
    const samsa_config_val_t  *val;
    size_t                     i;

    val = samsa_config_val_find(cfg, "process.roles");
    if (val->text == NULL) {            /* single-node default: both */
        cfg->role_broker = true;
        cfg->role_controller = true;
        return;
    }
    for (i = 0; i < val->nitems; i++) {
        if (strcmp(val->items[i], "broker") == 0) {
            cfg->role_broker = true;
        } else {
            cfg->role_controller = true;
        }
    }
}

/* log.dirs, or log.dir when log.dirs is null; no duplicates. */
static samsa_err_t
config_fill_log_dirs(samsa_config_loader_t *ld)
{
    samsa_config_t            *cfg = ld->cfg;
    const char                *key = "log.dirs";
    const samsa_config_val_t  *val;
    size_t                     i, j;

    if (!samsa_config_is_set(cfg, key)) {
        key = "log.dir";
    }
    val = samsa_config_val_find(cfg, key);
    cfg->log_dirs = samsa_calloc(val->nitems, sizeof(char *));
    for (i = 0; i < val->nitems; i++) {
        for (j = 0; j < i; j++) {
            if (strcmp(val->items[i], val->items[j]) == 0) {
                return samsa_config_bad(ld, key, "'%s' is listed twice",
                                        val->items[i]);
            }
        }
        cfg->log_dirs[i] = samsa_strdup(val->items[i]);
        cfg->nlog_dirs++;
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
config_check_network(samsa_config_loader_t *ld)
{
    samsa_config_t  *cfg = ld->cfg;
    int64_t          queued =
        samsa_config_long(cfg, "queued.max.request.bytes");
    int32_t          request_max =
        samsa_config_int(cfg, "socket.request.max.bytes");

    if (queued > 0 && queued < request_max) {
        return samsa_config_bad(ld, "queued.max.request.bytes", "must be -1 "
                                "(no limit) or at least "
                                "socket.request.max.bytes (%d)",
                                request_max);
    }
    if (samsa_config_int(cfg, "max.connections.per.ip") == 0
        && cfg->nmax_connections_per_ip_overrides == 0) {
        return samsa_config_bad(ld, "max.connections.per.ip", "may be 0 "
                                "only when max.connections.per.ip.overrides "
                                "is set");
    }
    return SAMSA_ERR_NONE;
}

/* A text (string, list, password) listener.name.<l>. value: an ENUM
 * key's value (each item of a list) must be one of its names.  NULL if
 * it passes, else why (in buf). */
static const char *
config_listener_text_check(const samsa_config_def_t *def, const char *text,
                           char *buf, size_t size)
{
    char    names[256], item[128];
    size_t  len;

    if (def->check != SAMSA_CONFIG_CHECK_ENUM) {
        return NULL;
    }
    samsa_config_join(def->names, names, sizeof(names));
    while (*text != '\0') {
        while (*text == ' ' || *text == ',') {
            text++;
        }
        len = strcspn(text, ",");
        while (len > 0 && text[len - 1] == ' ') {
            len--;
        }
        if (len == 0) {
            break;
        }
        snprintf(item, sizeof(item), "%.*s", (int) len, text);
        if (!samsa_config_in(def->names, item)) {
            /* a long list of names may be cut short: the message
             * still names the bad item first */
            if (snprintf(buf, size, "'%s' is not one of: %s", item, names)
                < 0) {
                buf[0] = '\0';
            }
            return buf;
        }
        text += len;
        if (def->type != SAMSA_CONFIG_LIST && *text != '\0') {
            break;
        }
        text += strcspn(text, ",");
    }
    return NULL;
}

/* listener.name.<listener>.<key>: the listener, named in lower case as
 * Kafka's prefix is, must be one of listeners; the value is checked as
 * the key's own.  Errors name the whole key. */
static samsa_err_t
config_check_listener_values(samsa_config_loader_t *ld)
{
    samsa_config_t          *cfg = ld->cfg;
    samsa_listener_value_t  *v;
    const samsa_config_def_t *def;
    const char              *why;
    char                    *up, range[96];
    size_t                   i, j;
    bool                     found;

    for (i = 0; i < cfg->nlistener_values; i++) {
        v = &cfg->listener_values[i];
        def = &samsa_config_defs[v->def];
        why = NULL;
        for (j = 0; v->listener[j] != '\0' && why == NULL; j++) {
            if (v->listener[j] >= 'A' && v->listener[j] <= 'Z') {
                why = "the listener name in listener.name.<listener>. must "
                      "be in lower case";
            }
        }
        up = samsa_strdup(v->listener);
        samsa_config_upcase(up);
        found = false;
        for (j = 0; j < cfg->nlisteners && !found; j++) {
            found = strcmp(cfg->listeners[j].name, up) == 0;
        }
        samsa_free(v->listener);
        v->listener = up;
        if (why == NULL && !found) {
            why = "no such listener in listeners";
        }
        if (why == NULL && def->type != SAMSA_CONFIG_INT
            && def->type != SAMSA_CONFIG_LONG) {
            why = config_listener_text_check(def, v->text, range,
                                             sizeof(range));
        } else if (why == NULL) {
            why = samsa_config_parse_i64(
                v->text, def->type == SAMSA_CONFIG_INT ? INT32_MIN : INT64_MIN,
                def->type == SAMSA_CONFIG_INT ? INT32_MAX : INT64_MAX,
                &v->num);
        }
        if (why == NULL && def->check == SAMSA_CONFIG_CHECK_RANGE
            && (v->num < def->min || v->num > def->max)) {
            snprintf(range, sizeof(range), "must be between %lld and %lld",
                     (long long) def->min, (long long) def->max);
            if (def->max == (def->type == SAMSA_CONFIG_INT ? INT32_MAX
                                                           : INT64_MAX)) {
                snprintf(range, sizeof(range), "must be at least %lld",
                         (long long) def->min);
            }
            why = range;
        }
        if (why != NULL) {
            snprintf(ld->errstr, ld->errstr_size, "invalid value '%s' for "
                     "configuration '%s': %s (%s)", v->text, v->key, why,
                     v->source);
            return SAMSA_ERR__CONFIG;
        }
    }
    return SAMSA_ERR_NONE;
}

const samsa_listener_value_t *
samsa_config_listener_value(const samsa_config_t *cfg, const char *listener,
                            const char *key)
{
    const samsa_listener_value_t  *v;
    size_t                         i;

    for (i = 0; i < cfg->nlistener_values; i++) {
        v = &cfg->listener_values[i];
        if (strcasecmp(v->listener, listener) == 0
            && strcmp(samsa_config_defs[v->def].name, key) == 0) {
            return v;
        }
    }
    return NULL;
}

/* Step 3: the checks across keys and the typed fields, in order. */
static samsa_err_t
config_fill(samsa_config_loader_t *ld)
{
    samsa_config_t  *cfg = ld->cfg;
    samsa_err_t      err;

    config_fill_roles(cfg);
    if ((err = config_fill_node_id(ld)) != SAMSA_ERR_NONE
        || (err = samsa_config_net_load(ld)) != SAMSA_ERR_NONE
        || (err = samsa_config_kraft_load(ld)) != SAMSA_ERR_NONE
        || (err = config_check_listener_values(ld)) != SAMSA_ERR_NONE
        || (err = config_fill_log_dirs(ld)) != SAMSA_ERR_NONE
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
    samsa_config_loader_t  ld = {
        .cfg = cfg, .errstr = errstr, .errstr_size = errstr_size,
    };
    samsa_err_t            err = SAMSA_ERR_NONE;
    size_t                 i;

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

    samsa_config_net_fini(cfg);
    samsa_config_kraft_fini(&cfg->kraft);
    samsa_config_strv_free(cfg->log_dirs, cfg->nlog_dirs);
    samsa_free(cfg->request_log_file);
    samsa_free(cfg->config_file);
    for (i = 0; cfg->vals != NULL && i < samsa_config_ndefs; i++) {
        samsa_free(cfg->vals[i].text);
        samsa_free(cfg->vals[i].source);
        samsa_config_strv_free(cfg->vals[i].items, cfg->vals[i].nitems);
    }
    samsa_free(cfg->vals);
    for (i = 0; i < cfg->nlistener_values; i++) {
        samsa_free(cfg->listener_values[i].key);
        samsa_free(cfg->listener_values[i].listener);
        samsa_free(cfg->listener_values[i].text);
        samsa_free(cfg->listener_values[i].source);
    }
    samsa_free(cfg->listener_values);
    memset(cfg, 0, sizeof(*cfg));
}

const samsa_config_kraft_t *
samsa_config_kraft(const samsa_config_t *cfg)
{
    return &cfg->kraft;
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

void
samsa_config_usage(FILE *out)
{
    fputs("Usage: samsa-server [server.properties] [--override key=value]..."
          "\n"
          "       samsa-server format --cluster-id ID [server.properties]\n"
          "                           [--override key=value]... "
          "[--ignore-formatted]\n"
          "       samsa-server random-cluster-id\n\n"
          "Runs a Samsa node: a Kafka-protocol broker and, by default, its\n"
          "own single controller.  The properties file uses Kafka's\n"
          "server.properties keys and format; each --override sets one key\n"
          "and wins over the file.  See docs/CONFIG.md for every key.\n\n"
          "Options:\n"
          "  --override key=value  set a configuration key (repeatable)\n"
          "  -h, --help            print this help and exit\n"
          "  -V, --version         print the version and exit\n\n"
          "Commands (as kafka-storage): format writes meta.properties into\n"
          "every log dir, as a node with process.roles set needs before its\n"
          "first start (see format --help); random-cluster-id prints a new\n"
          "cluster id.\n\n"
          "Without a file: one node, broker and controller, node.id=1,\n"
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
    key = samsa_config_strdup_trim(raw);
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
