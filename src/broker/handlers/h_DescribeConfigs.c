/*
 * broker/handlers/h_DescribeConfigs.c - DescribeConfigs (key 32): a topic's configs
 * (overrides, else the broker's fallbacks, else Kafka's defaults, each with
 * its source and, on request, its synonyms and documentation), or this
 * broker's configs (its dynamic value, else the cluster-wide dynamic
 * default, else server.properties and --override, else the default; the
 * keys of meta/brokercfg.h are not read-only; then the
 * listener.name.<listener>. keys set at any of those levels), or, for the
 * resource name
 * "", the cluster-wide dynamic defaults alone, as Kafka answers; or, for
 * BROKER_LOGGER named by this broker's id, its loggers and their levels
 * (broker/brokerlog.h, source DYNAMIC_BROKER_LOGGER_CONFIG).
 * Threads: handler.
 */
#include "broker/api_table.h"

#include <stdio.h>
#include <string.h>

#include "broker/broker.h"
#include "broker/brokerlog.h"
#include "broker/fwdcheck.h"
#include "meta/acl.h"
#include "meta/brokercfg.h"
#include "meta/topic_config.h"
#include "net/server/reqchan.h"
#include "proto/errmap.h"
#include "proto/gen/DescribeConfigs.h"
#include "proto/wr.h"
#include "config/config_defs.h"

#define RESOURCE_TOPIC  2
#define RESOURCE_BROKER 4

typedef struct dc_ctx {
    samsa_broker_t                       *b;
    samsa_req_t                          *req;
    const samsa_DescribeConfigsRequest_t *rq;
    const samsa_DescribeConfigsResource_t *res;
    samsa_brokercfg_levels_t              lv;     /* broker resources */
} dc_ctx_t;

/* Is key wanted (the resource's key list is null: all)? */
static bool
dc_wanted(const dc_ctx_t *c, const char *key)
{
    int32_t  i;

    if (c->res->ConfigurationKeys_cnt < 0) {
        return true;
    }
    for (i = 0; i < c->res->ConfigurationKeys_cnt; i++) {
        if (samsa_slice_eq_cstr(c->res->ConfigurationKeys[i], key)) {
            return true;
        }
    }
    return false;
}

static samsa_DescribeConfigsResourceResult_t *
dc_alloc(const dc_ctx_t *c, size_t n)
{
    return samsa_arena_calloc(&c->req->arena, n + 1,
                              sizeof(samsa_DescribeConfigsResourceResult_t));
}

static void
dc_topic_entry(const dc_ctx_t *c, const samsa_topic_config_entry_t *e,
               samsa_DescribeConfigsResourceResult_t *r)
{
    size_t  i;

    samsa_DescribeConfigsResourceResult_init(r);
    r->Name = samsa_slice_cstr(e->def->name);
    r->Value = samsa_slice_cstr(e->value);
    r->IsDefault = e->source == SAMSA_CONFIG_SOURCE_DEFAULT_CONFIG;
    r->ConfigSource = (int8_t) e->source;
    r->ConfigType = (int8_t) samsa_topic_config_wire_type(e->def);
    /* null unless asked for, as Kafka's ConfigHelper (the field's
     * default is "", which clients would show as an empty text) */
    r->Documentation = c->rq->IncludeDocumentation
                           ? samsa_slice_cstr(e->def->doc) : SAMSA_SLICE_NULL;
    r->Synonyms_cnt = 0;
    if (!c->rq->IncludeSynonyms) {
        return;
    }
    r->Synonyms = samsa_arena_calloc(&c->req->arena, e->nsynonyms + 1,
                                     sizeof(*r->Synonyms));
    for (i = 0; i < e->nsynonyms; i++) {
        samsa_DescribeConfigsSynonym_init(&r->Synonyms[i]);
        r->Synonyms[i].Name = samsa_slice_cstr(e->synonyms[i].name);
        r->Synonyms[i].Value = samsa_slice_cstr(e->synonyms[i].value);
        r->Synonyms[i].Source = (int8_t) e->synonyms[i].source;
    }
    r->Synonyms_cnt = (int32_t) e->nsynonyms;
}

static void
dc_topic(const dc_ctx_t *c, samsa_DescribeConfigsResult_t *out)
{
    samsa_image_t               *img = samsa_apis_image(c->b, c->req);
    const samsa_image_topic_t   *t;
    samsa_topic_config_entry_t   e;
    size_t                       i, n = 0;

    t = samsa_image_topic_find(img, c->res->ResourceName.ptr != NULL
                                        ? c->res->ResourceName.ptr : "",
                               c->res->ResourceName.len);
    if (t == NULL) {
        out->ErrorCode = SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION;
        out->ErrorMessage = samsa_slice_cstr("Topic does not exist.");
        return;
    }
    out->Configs = dc_alloc(c, samsa_topic_config_ndefs);
    for (i = 0; i < samsa_topic_config_ndefs; i++) {
        if (!dc_wanted(c, samsa_topic_config_defs[i].name)
            || samsa_topic_config_resolve(c->b->cfg, img, t->configs,
                                          t->nconfigs,
                                          samsa_topic_config_defs[i].name,
                                          &c->req->arena, &e)
                   != SAMSA_ERR_NONE) {
            continue;
        }
        dc_topic_entry(c, &e, &out->Configs[n++]);
    }
    out->Configs_cnt = (int32_t) n;
}

static int8_t
dc_broker_type(samsa_config_type_t t)
{
    switch (t) {
    case SAMSA_CONFIG_INT:      return SAMSA_CONFIG_WIRE_INT;
    case SAMSA_CONFIG_LONG:     return SAMSA_CONFIG_WIRE_LONG;
    case SAMSA_CONFIG_DOUBLE:   return SAMSA_CONFIG_WIRE_DOUBLE;
    case SAMSA_CONFIG_BOOL:     return SAMSA_CONFIG_WIRE_BOOLEAN;
    case SAMSA_CONFIG_LIST:     return SAMSA_CONFIG_WIRE_LIST;
    case SAMSA_CONFIG_PASSWORD: return SAMSA_CONFIG_WIRE_PASSWORD;
    default:                    return SAMSA_CONFIG_WIRE_STRING;
    }
}

/* One synonym: the value at one level. */
/* v copied into the request's arena: the image it came from is released
 * before the response is encoded. */
static const char *
dc_dup(const dc_ctx_t *c, const char *v)
{
    return v == NULL ? NULL : samsa_arena_strndup(&c->req->arena, v,
                                                  strlen(v));
}

static void
dc_synonym(samsa_DescribeConfigsSynonym_t *y, const char *name,
           const char *value, int source)
{
    samsa_DescribeConfigsSynonym_init(y);
    y->Name = samsa_slice_cstr(name);
    y->Value = samsa_slice_cstr(value);
    y->Source = (int8_t) source;
}

/* Kafka's synonyms, most specific first: each level that has a value. */
static void
dc_broker_synonyms(const dc_ctx_t *c, const samsa_config_def_t *d,
                   samsa_DescribeConfigsResourceResult_t *r)
{
    samsa_brokercfg_levels_t  lv = c->lv, none = { 0 };
    int                       source;
    const char               *v;
    size_t                    n = 0;

    r->Synonyms = samsa_arena_calloc(&c->req->arena, 4, sizeof(*r->Synonyms));
    while (n < 3) {
        v = samsa_brokercfg_value(c->b->cfg, &lv, d->name, &source);
        dc_synonym(&r->Synonyms[n++], d->name,
                   d->type == SAMSA_CONFIG_PASSWORD ? NULL : dc_dup(c, v),
                   source);
        if (source == SAMSA_CONFIG_SOURCE_DYNAMIC_BROKER_CONFIG) {
            lv.node = NULL;
            lv.nnode = 0;
        } else if (source == SAMSA_CONFIG_SOURCE_DYNAMIC_DEFAULT_BROKER_CONFIG) {
            lv = none;
        } else {
            break;
        }
    }
    r->Synonyms_cnt = (int32_t) n;
}

static void
dc_broker_entry(const dc_ctx_t *c, const samsa_config_def_t *d,
                samsa_DescribeConfigsResourceResult_t *r)
{
    bool         secret = d->type == SAMSA_CONFIG_PASSWORD;
    int          source;
    const char  *v = samsa_brokercfg_value(c->b->cfg, &c->lv, d->name,
                                           &source);

    samsa_DescribeConfigsResourceResult_init(r);
    r->Name = samsa_slice_cstr(d->name);
    r->Value = secret ? SAMSA_SLICE_NULL : samsa_slice_cstr(dc_dup(c, v));
    r->ReadOnly = !samsa_brokercfg_is_dynamic(d->name);
    r->IsDefault = source == SAMSA_CONFIG_SOURCE_DEFAULT_CONFIG;
    r->IsSensitive = secret;
    r->ConfigSource = (int8_t) source;
    r->ConfigType = dc_broker_type(d->type);
    /* null unless asked for, as Kafka's ConfigHelper (the field's
     * default is "", which clients would show as an empty text) */
    r->Documentation = c->rq->IncludeDocumentation
                           ? samsa_slice_cstr(d->doc) : SAMSA_SLICE_NULL;
    r->Synonyms_cnt = 0;
    if (c->rq->IncludeSynonyms) {
        dc_broker_synonyms(c, d, r);
    }
}

/* key's value at one of Kafka's four levels, NULL when it is not set
 * there: 0 the node's dynamic configs (none for the resource ""), 1 the
 * cluster default's, 2 server.properties and --override, 3 the key's
 * default (Kafka's staticDefaultConfigs: none for a prefixed key). */
static const char *
dc_level_value(const dc_ctx_t *c, int level, const char *key, int *source)
{
    const samsa_listener_value_t  *sv;
    const char                    *rest;
    char                           listener[64];
    size_t                         d;
    bool                           prefixed;

    prefixed = samsa_config_listener_key(key, listener, sizeof(listener),
                                         &rest, &d);
    switch (level) {
    case 0:
        *source = SAMSA_CONFIG_SOURCE_DYNAMIC_BROKER_CONFIG;
        return samsa_brokercfg_find(c->lv.node, c->lv.nnode, key);
    case 1:
        *source = SAMSA_CONFIG_SOURCE_DYNAMIC_DEFAULT_BROKER_CONFIG;
        return samsa_brokercfg_find(c->lv.dflt, c->lv.ndflt, key);
    case 2:
        *source = SAMSA_CONFIG_SOURCE_STATIC_BROKER_CONFIG;
        if (prefixed) {
            sv = samsa_config_listener_value(c->b->cfg, listener, rest);
            return sv != NULL ? sv->text : NULL;
        }
        return strcmp(samsa_config_source(c->b->cfg, key), "default") != 0
                   ? samsa_config_text(c->b->cfg, key) : NULL;
    default:
        *source = SAMSA_CONFIG_SOURCE_DEFAULT_CONFIG;
        d = samsa_config_defs_index(key);
        return prefixed || d == samsa_config_ndefs ? NULL
                                                   : samsa_config_defs[d].dflt;
    }
}

/* Kafka's configSynonyms over brokerConfigSynonyms(key, true): key and
 * its base key at each level, levels in order, less those before the
 * first of key itself. */
static void
dc_listener_synonyms(const dc_ctx_t *c, const char *key, const char *base,
                     samsa_DescribeConfigsResourceResult_t *r)
{
    const char  *names[2] = { key, base };
    const char  *v;
    int          level, i, source;
    size_t       n = 0;

    r->Synonyms = samsa_arena_calloc(&c->req->arena, 9, sizeof(*r->Synonyms));
    for (level = 0; level < 4; level++) {
        for (i = 0; i < 2; i++) {
            v = dc_level_value(c, level, names[i], &source);
            if (v != NULL && (n > 0 || i == 0)) {
                dc_synonym(&r->Synonyms[n++], names[i],
                           r->IsSensitive ? NULL : dc_dup(c, v), source);
            }
        }
    }
    r->Synonyms_cnt = (int32_t) n;
}

/* A listener.name.<listener>.<key> that is set at some level (Kafka lists
 * KafkaConfig's originals, which hold them): its value in effect and that
 * level as its source; read-only as Kafka says (its AllDynamicConfigs
 * names the base keys only), typed as its base key, no documentation. */
static void
dc_listener_entry(const dc_ctx_t *c, const char *key, const char *base,
                  samsa_DescribeConfigsResourceResult_t *r)
{
    const char  *v = NULL;
    int          level, source = SAMSA_CONFIG_SOURCE_DEFAULT_CONFIG;
    bool         secret = samsa_config_defs[samsa_config_defs_index(base)].type
                          == SAMSA_CONFIG_PASSWORD;

    for (level = 0; level < 3 && v == NULL; level++) {
        v = dc_level_value(c, level, key, &source);
    }
    samsa_DescribeConfigsResourceResult_init(r);
    r->Name = samsa_slice_cstr(key);
    /* a password (listener.name.<l>.ssl.key.password ...) is never shown,
     * as Kafka's */
    r->Value = secret ? SAMSA_SLICE_NULL : samsa_slice_cstr(dc_dup(c, v));
    r->IsSensitive = secret;
    r->ReadOnly = true;
    r->ConfigSource = (int8_t) source;
    r->ConfigType = dc_broker_type(
        samsa_config_defs[samsa_config_defs_index(base)].type);
    r->Documentation = SAMSA_SLICE_NULL;
    r->Synonyms_cnt = 0;
    if (c->rq->IncludeSynonyms) {
        dc_listener_synonyms(c, key, base, r);
    }
}

/* Was key listed already (one of out's first n)? */
static bool
dc_listed(const samsa_DescribeConfigsResult_t *out, size_t n,
          const char *key)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        if (samsa_slice_eq_cstr(out->Configs[i].Name, key)) {
            return true;
        }
    }
    return false;
}

/* One candidate listener-prefixed key: listed once if wanted. */
static void
dc_listener_add(const dc_ctx_t *c, const char *key,
                samsa_DescribeConfigsResult_t *out, size_t *n)
{
    const char  *base, *name;
    char         listener[64];
    size_t       d;

    if (!samsa_config_listener_key(key, listener, sizeof(listener), &base,
                                   &d)
        || !dc_wanted(c, key) || dc_listed(out, *n, key)) {
        return;
    }
    name = dc_dup(c, key);          /* base points into it, past the image */
    base = name + (base - key);
    dc_listener_entry(c, name, base, &out->Configs[(*n)++]);
}

/* The listener-prefixed keys set for the resource: dynamic per-broker
 * and cluster-default values and static ones, or for the resource ""
 * the cluster-default values alone (Kafka's
 * currentDynamicDefaultConfigs). */
static void
dc_broker_listeners(const dc_ctx_t *c, bool is_default,
                    samsa_DescribeConfigsResult_t *out, size_t *n)
{
    const samsa_config_t  *cfg = c->b->cfg;
    size_t                 i;

    for (i = 0; i < c->lv.nnode && !is_default; i++) {
        dc_listener_add(c, c->lv.node[i].name, out, n);
    }
    for (i = 0; i < c->lv.ndflt; i++) {
        dc_listener_add(c, c->lv.dflt[i].name, out, n);
    }
    for (i = 0; i < cfg->nlistener_values && !is_default; i++) {
        dc_listener_add(c, cfg->listener_values[i].key, out, n);
    }
}

static void
dc_broker(dc_ctx_t *c, samsa_DescribeConfigsResult_t *out)
{
    samsa_image_t  *img;
    char            me[16];
    size_t          i, n = 0;
    bool            is_default = c->res->ResourceName.len == 0;

    snprintf(me, sizeof(me), "%d", (int) c->b->node->node_id);
    if (!is_default && !samsa_slice_eq_cstr(c->res->ResourceName, me)) {
        out->ErrorCode = SAMSA_ERR_INVALID_REQUEST;
        out->ErrorMessage = samsa_slice_cstr(
            "Unexpected broker id: this is the only broker");
        return;
    }
    img = samsa_apis_image(c->b, c->req);
    samsa_brokercfg_levels(img, c->b->node->node_id, &c->lv);
    if (is_default) {
        /* Kafka: only the dynamic defaults, with no node level */
        c->lv.node = NULL;
        c->lv.nnode = 0;
    }
    out->Configs = dc_alloc(c, samsa_config_ndefs + c->lv.nnode
                                   + c->lv.ndflt
                                   + c->b->cfg->nlistener_values);
    for (i = 0; i < samsa_config_ndefs; i++) {
        const samsa_config_def_t  *d = &samsa_config_defs[i];
        int                        source;

        if (!dc_wanted(c, d->name)) {
            continue;
        }
        if (is_default) {
            samsa_brokercfg_value(c->b->cfg, &c->lv, d->name, &source);
            if (source != SAMSA_CONFIG_SOURCE_DYNAMIC_DEFAULT_BROKER_CONFIG) {
                continue;
            }
        }
        dc_broker_entry(c, d, &out->Configs[n++]);
    }
    dc_broker_listeners(c, is_default, out, &n);
    out->Configs_cnt = (int32_t) n;
}

/* Kafka's ConfigHelper over Log4jController.loggers: each logger, its
 * level as the value, not read-only, no synonyms, no type. */
static void
dc_broker_logger(const dc_ctx_t *c, samsa_DescribeConfigsResult_t *out)
{
    const char                             *msg;
    samsa_DescribeConfigsResourceResult_t  *r;
    size_t                                  i, n = 0;

    if (samsa_brokerlog_describe_check(c->b->node->node_id,
                                       c->res->ResourceName, &c->req->arena,
                                       &msg) != SAMSA_ERR_NONE) {
        out->ErrorCode = SAMSA_ERR_INVALID_REQUEST;
        out->ErrorMessage = samsa_slice_cstr(msg);
        return;
    }
    out->Configs = dc_alloc(c, samsa_brokerlog_count());
    for (i = 0; i < samsa_brokerlog_count(); i++) {
        if (!dc_wanted(c, samsa_brokerlog_name(i))) {
            continue;
        }
        r = &out->Configs[n++];
        samsa_DescribeConfigsResourceResult_init(r);
        r->Name = samsa_slice_cstr(samsa_brokerlog_name(i));
        r->Value = samsa_slice_cstr(samsa_brokerlog_level(i));
        r->ConfigSource = SAMSA_CONFIG_SOURCE_DYNAMIC_BROKER_LOGGER_CONFIG;
        r->Synonyms_cnt = 0;
    }
    out->Configs_cnt = (int32_t) n;
}

void
samsa_h_DescribeConfigs(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_DescribeConfigsRequest_t  *rq = body;
    samsa_DescribeConfigsResponse_t  m;
    samsa_DescribeConfigsResult_t   *out;
    dc_ctx_t                         c = { apis->broker, req, rq, NULL,
                                             { 0 } };
    samsa_err_t                      denied;
    int32_t                          i;

    samsa_DescribeConfigsResponse_init(&m);
    m.Results = samsa_apis_resp_array(req, rq->Resources_cnt,
                                      sizeof(*m.Results), &m.Results_cnt);
    for (i = 0; i < m.Results_cnt; i++) {
        out = &m.Results[i];
        c.res = &rq->Resources[i];
        samsa_DescribeConfigsResult_init(out);
        out->ResourceType = c.res->ResourceType;
        out->ResourceName = c.res->ResourceName;
        out->Configs_cnt = 0;
        /* Kafka: DESCRIBE_CONFIGS on the topic, group or cluster */
        if (!samsa_fwdcheck_config_allowed(apis, req, NULL,
                                           SAMSA_ACL_OP_DESCRIBE_CONFIGS,
                                           c.res->ResourceType,
                                           c.res->ResourceName, &denied)) {
            out->ErrorCode = samsa_err_wire(denied);
            out->ErrorMessage = samsa_slice_cstr(
                denied == SAMSA_ERR_TOPIC_AUTHORIZATION_FAILED
                    ? "Topic authorization failed."
                : denied == SAMSA_ERR_GROUP_AUTHORIZATION_FAILED
                    ? "Group authorization failed."
                    : "Cluster authorization failed.");
            continue;
        }
        if (c.res->ResourceType == RESOURCE_TOPIC) {
            dc_topic(&c, out);
        } else if (c.res->ResourceType == RESOURCE_BROKER) {
            dc_broker(&c, out);
        } else if (c.res->ResourceType
                   == SAMSA_CONFIG_RESOURCE_BROKER_LOGGER) {
            dc_broker_logger(&c, out);
        } else {
            out->ErrorCode = SAMSA_ERR_INVALID_REQUEST;
            out->ErrorMessage = samsa_slice_cstr("Unsupported resource type");
        }
    }
    samsa_apis_send(apis->broker, req, &m);
}
