/*
 * broker/handlers/h_DescribeClientQuotas.c - DescribeClientQuotas (key 48, KIP-546):
 * the client quota entities of the metadata image that match a filter, as
 * Kafka's ClientQuotasImage.describe answers: each component names an
 * entity type and matches one name (0), the default entity (1) or any
 * specified name, the default excluded (2); strict also drops entities
 * with types the filter does not name.  A bad filter fails the whole
 * request (top-level error, no entries).
 * Threads: handler.
 */
#include "broker/api_table.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/broker.h"
#include "meta/acl.h"
#include "meta/qentity.h"
#include "net/server/reqchan.h"
#include "proto/errmap.h"
#include "proto/gen/DescribeClientQuotas.h"
#include "proto/wr.h"

#define MATCH_EXACT     0
#define MATCH_DEFAULT   1
#define MATCH_SPECIFIED 2

/* The filter: per type, whether named and how. */
typedef struct dcq_filter {
    bool           has[SAMSA_QENTITY__NTYPES];
    int8_t         match[SAMSA_QENTITY__NTYPES];
    samsa_slice_t  name[SAMSA_QENTITY__NTYPES];
    bool           strict;
} dcq_filter_t;

static const char *dcq_msg(samsa_arena_t *arena, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static const char *
dcq_msg(samsa_arena_t *arena, const char *fmt, ...)
{
    char     tmp[512];
    va_list  ap;

    va_start(ap, fmt);
    vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    return samsa_arena_strndup(arena, tmp, strlen(tmp));
}

static const char *
dcq_filter_build(const samsa_DescribeClientQuotasRequest_t *rq,
                 samsa_arena_t *arena, dcq_filter_t *f, samsa_err_t *err)
{
    const samsa_DescribeClientQuotasComponent_t  *c;
    int32_t                                        i;
    int                                            t;

    memset(f, 0, sizeof(*f));
    f->strict = rq->Strict;
    *err = SAMSA_ERR_INVALID_REQUEST;
    for (i = 0; i < rq->Components_cnt; i++) {
        c = &rq->Components[i];
        if (c->EntityType.len == 0) {
            return "Invalid empty entity type.";
        }
        t = samsa_qentity_type_find(c->EntityType);
        if (t >= 0 && f->has[t]) {
            return dcq_msg(arena, "Entity type %s cannot appear "
                                       "more than once in the filter.",
                                       samsa_qentity_type_name(t));
        }
        if (t < 0) {
            *err = SAMSA_ERR_UNSUPPORTED_VERSION;
            return dcq_msg(arena, "Unsupported entity type %.*s",
                                       (int) c->EntityType.len,
                                       c->EntityType.ptr);
        }
        switch (c->MatchType) {
        case MATCH_EXACT:
            if (c->Match.ptr == NULL) {
                return "Request specified MATCH_TYPE_EXACT, but set match "
                       "string to null.";
            }
            break;
        case MATCH_DEFAULT:
            if (c->Match.ptr != NULL) {
                return "Request specified MATCH_TYPE_DEFAULT, but also "
                       "specified a match string.";
            }
            break;
        case MATCH_SPECIFIED:
            if (c->Match.ptr != NULL) {
                return "Request specified MATCH_TYPE_SPECIFIED, but also "
                       "specified a match string.";
            }
            break;
        default:
            *err = SAMSA_ERR_UNSUPPORTED_VERSION;
            return dcq_msg(arena, "Unknown match type %d",
                                       (int) c->MatchType);
        }
        f->has[t] = true;
        f->match[t] = c->MatchType;
        f->name[t] = c->Match;
    }
    if (f->has[SAMSA_QENTITY_IP]
        && (f->has[SAMSA_QENTITY_USER] || f->has[SAMSA_QENTITY_CLIENT_ID])) {
        return "Invalid entity filter component combination. IP filter "
               "component should not be used with user or clientId filter "
               "component.";
    }
    *err = SAMSA_ERR_NONE;
    return NULL;
}

static bool
dcq_matches(const dcq_filter_t *f, const samsa_qentity_t *e)
{
    int  t;

    for (t = 0; t < SAMSA_QENTITY__NTYPES; t++) {
        if (!f->has[t]) {
            if (f->strict && e->has[t]) {
                return false;
            }
            continue;
        }
        if (!e->has[t]) {
            return false;
        }
        switch (f->match[t]) {
        case MATCH_EXACT:
            if (e->name[t].ptr == NULL || !samsa_slice_eq(e->name[t],
                                                          f->name[t])) {
                return false;
            }
            break;
        case MATCH_DEFAULT:
            if (e->name[t].ptr != NULL) {
                return false;
            }
            break;
        default:
            if (e->name[t].ptr == NULL) {
                return false;
            }
            break;
        }
    }
    return true;
}

/* One entry for entity e with its n quotas cfgs, copied into the arena
 * (the image is released before the response is encoded). */
static void
dcq_entry(samsa_req_t *req, const samsa_qentity_t *e,
          const samsa_image_config_t *cfgs, size_t n,
          samsa_DescribeClientQuotasEntry_t *out)
{
    size_t  i;
    int     t, k = 0;

    samsa_DescribeClientQuotasEntry_init(out);
    out->Entity = samsa_arena_calloc(&req->arena, SAMSA_QENTITY__NTYPES,
                                     sizeof(*out->Entity));
    for (t = 0; t < SAMSA_QENTITY__NTYPES; t++) {
        if (!e->has[t]) {
            continue;
        }
        samsa_DescribeClientQuotasEntity_init(&out->Entity[k]);
        out->Entity[k].EntityType = samsa_slice_cstr(
            samsa_qentity_type_name(t));
        if (e->name[t].ptr != NULL) {
            out->Entity[k].EntityName = (samsa_slice_t) {
                samsa_arena_strndup(&req->arena, e->name[t].ptr,
                                    e->name[t].len),
                e->name[t].len };
        } else {
            out->Entity[k].EntityName = (samsa_slice_t) { NULL, 0 };
        }
        k++;
    }
    out->Entity_cnt = k;
    out->Values = samsa_arena_calloc(&req->arena, n + 1, sizeof(*out->Values));
    for (i = 0; i < n; i++) {
        samsa_DescribeClientQuotasValue_init(&out->Values[i]);
        out->Values[i].Key = (samsa_slice_t) {
            samsa_arena_strndup(&req->arena, cfgs[i].name,
                                strlen(cfgs[i].name)),
            strlen(cfgs[i].name) };
        out->Values[i].Value = strtod(cfgs[i].value, NULL);
    }
    out->Values_cnt = (int32_t) n;
}

static void
dcq_describe(samsa_apis_t *apis, samsa_req_t *req, const dcq_filter_t *f,
             samsa_DescribeClientQuotasResponse_t *m)
{
    samsa_image_t               *img = samsa_apis_image(apis->broker, req);
    const samsa_image_config_t  *cfgs;
    const char                  *name;
    samsa_qentity_t              e;
    size_t                       i, n, cnt = samsa_image_resource_count(img),
                                 k = 0;
    int8_t                       type;

    m->Entries = samsa_arena_calloc(&req->arena, cnt + 1,
                                    sizeof(*m->Entries));
    for (i = 0; i < cnt; i++) {
        cfgs = samsa_image_resource_at(img, i, &type, &name, &n);
        if (type != SAMSA_IMAGE_RESOURCE_CLIENT_QUOTA || n == 0
            || samsa_qentity_parse(name, &e) != SAMSA_ERR_NONE
            || !dcq_matches(f, &e)) {
            continue;
        }
        dcq_entry(req, &e, cfgs, n, &m->Entries[k++]);
    }
    m->Entries_cnt = (int32_t) k;
}

void
samsa_h_DescribeClientQuotas(samsa_apis_t *apis, samsa_req_t *req, void *body)
{
    samsa_DescribeClientQuotasRequest_t  *rq = body;
    samsa_DescribeClientQuotasResponse_t  m;
    dcq_filter_t                          f;
    samsa_err_t                           err;
    const char                           *msg;

    samsa_DescribeClientQuotasResponse_init(&m);
    msg = dcq_filter_build(rq, &req->arena, &f, &err);
    /* Kafka: DESCRIBE_CONFIGS on the cluster */
    if (msg == NULL
        && !samsa_apis_allowed_cluster(apis, req,
                                       SAMSA_ACL_OP_DESCRIBE_CONFIGS)) {
        err = SAMSA_ERR_CLUSTER_AUTHORIZATION_FAILED;
        msg = "Cluster authorization failed.";
    }
    if (msg != NULL) {
        m.ErrorCode = samsa_err_wire(err);
        m.ErrorMessage = samsa_slice_cstr(msg);
        m.Entries = NULL;
        m.Entries_cnt = -1;
    } else {
        dcq_describe(apis, req, &f, &m);
    }
    samsa_apis_send(apis->broker, req, &m);
}
