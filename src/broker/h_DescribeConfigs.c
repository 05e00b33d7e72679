/*
 * broker/h_DescribeConfigs.c - DescribeConfigs (key 32): a topic's configs
 * (overrides, else the broker's fallbacks, else Kafka's defaults, each with
 * its source and, on request, its synonyms and documentation), or this
 * broker's configs (from server.properties and --override; read-only: no
 * dynamic broker configs yet).
 * Threads: handler.
 */
#include "broker/api_table.h"

#include <stdio.h>
#include <string.h>

#include "broker/broker.h"
#include "meta/topic_config.h"
#include "net/reqchan.h"
#include "proto/errmap.h"
#include "proto/gen/DescribeConfigs.h"
#include "proto/wr.h"
#include "util/config_defs.h"

#define RESOURCE_TOPIC  2
#define RESOURCE_BROKER 4

typedef struct dc_ctx {
    samsa_broker_t                       *b;
    samsa_req_t                          *req;
    const samsa_DescribeConfigsRequest_t *rq;
    const samsa_DescribeConfigsResource_t *res;
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
    if (c->rq->IncludeDocumentation) {
        r->Documentation = samsa_slice_cstr(e->def->doc);
    }
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
    samsa_image_t               *img = samsa_meta_image_get(c->b->meta);
    const samsa_image_topic_t   *t;
    samsa_topic_config_entry_t   e;
    size_t                       i, n = 0;

    t = samsa_image_topic_find(img, c->res->ResourceName.ptr != NULL
                                        ? c->res->ResourceName.ptr : "",
                               c->res->ResourceName.len);
    if (t == NULL) {
        out->ErrorCode = SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION;
        out->ErrorMessage = samsa_slice_cstr("Topic does not exist.");
        samsa_image_put(img);
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
    samsa_image_put(img);
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

static void
dc_broker_entry(const dc_ctx_t *c, const samsa_config_def_t *d,
                samsa_DescribeConfigsResourceResult_t *r)
{
    const samsa_config_t  *cfg = c->b->cfg;
    bool                   is_default;
    bool                   secret = d->type == SAMSA_CONFIG_PASSWORD;

    is_default = strcmp(samsa_config_source(cfg, d->name), "default") == 0;
    samsa_DescribeConfigsResourceResult_init(r);
    r->Name = samsa_slice_cstr(d->name);
    r->Value = secret ? SAMSA_SLICE_NULL
                      : samsa_slice_cstr(samsa_config_text(cfg, d->name));
    r->ReadOnly = true;
    r->IsDefault = is_default;
    r->IsSensitive = secret;
    r->ConfigSource = is_default ? SAMSA_CONFIG_SOURCE_DEFAULT_CONFIG
                                 : SAMSA_CONFIG_SOURCE_STATIC_BROKER_CONFIG;
    r->ConfigType = dc_broker_type(d->type);
    if (c->rq->IncludeDocumentation) {
        r->Documentation = samsa_slice_cstr(d->doc);
    }
    r->Synonyms_cnt = 0;
    if (c->rq->IncludeSynonyms) {
        r->Synonyms = samsa_arena_calloc(&c->req->arena, 1,
                                         sizeof(*r->Synonyms));
        samsa_DescribeConfigsSynonym_init(&r->Synonyms[0]);
        r->Synonyms[0].Name = r->Name;
        r->Synonyms[0].Value = r->Value;
        r->Synonyms[0].Source = r->ConfigSource;
        r->Synonyms_cnt = 1;
    }
}

static void
dc_broker(const dc_ctx_t *c, samsa_DescribeConfigsResult_t *out)
{
    char    me[16];
    size_t  i, n = 0;

    snprintf(me, sizeof(me), "%d", (int) c->b->node->node_id);
    if (c->res->ResourceName.len != 0
        && !samsa_slice_eq_cstr(c->res->ResourceName, me)) {
        out->ErrorCode = SAMSA_ERR_INVALID_REQUEST;
        out->ErrorMessage = samsa_slice_cstr(
            "Unexpected broker id: this is the only broker");
        return;
    }
    out->Configs = dc_alloc(c, samsa_config_ndefs);
    for (i = 0; i < samsa_config_ndefs; i++) {
        if (dc_wanted(c, samsa_config_defs[i].name)) {
            dc_broker_entry(c, &samsa_config_defs[i], &out->Configs[n++]);
        }
    }
    out->Configs_cnt = (int32_t) n;
}

void
samsa_h_DescribeConfigs(samsa_apis_t *apis, samsa_req_t *req)
{
    samsa_DescribeConfigsRequest_t   rq;
    samsa_DescribeConfigsResponse_t  m;
    samsa_DescribeConfigsResult_t   *out;
    dc_ctx_t                         c = { apis->broker, req, &rq, NULL };
    samsa_resp_t                    *resp;
    samsa_wr_t                       wr;
    int32_t                          i;

    samsa_DescribeConfigsRequest_init(&rq);
    if (samsa_DescribeConfigsRequest_decode(&req->body, req->hdr.ApiVersion,
                                            &req->arena, &rq)
        != SAMSA_ERR_NONE) {
        samsa_apis_close(req, "malformed request body");
        return;
    }
    samsa_DescribeConfigsResponse_init(&m);
    m.Results_cnt = rq.Resources_cnt > 0 ? rq.Resources_cnt : 0;
    m.Results = samsa_arena_calloc(&req->arena, (size_t) m.Results_cnt + 1,
                                   sizeof(*m.Results));
    for (i = 0; i < m.Results_cnt; i++) {
        out = &m.Results[i];
        c.res = &rq.Resources[i];
        samsa_DescribeConfigsResult_init(out);
        out->ResourceType = c.res->ResourceType;
        out->ResourceName = c.res->ResourceName;
        out->Configs_cnt = 0;
        if (c.res->ResourceType == RESOURCE_TOPIC) {
            dc_topic(&c, out);
        } else if (c.res->ResourceType == RESOURCE_BROKER) {
            dc_broker(&c, out);
        } else {
            out->ErrorCode = SAMSA_ERR_INVALID_REQUEST;
            out->ErrorMessage = samsa_slice_cstr("Unsupported resource type");
        }
    }
    resp = samsa_resp_new_send(req);
    wr = samsa_resp_wr(resp);
    samsa_DescribeConfigsResponse_encode(&wr, req->hdr.ApiVersion, &m);
    samsa_reqchan_respond(resp);
}
