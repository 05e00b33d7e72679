/*
 * broker/handlers/tpresp.c - see tpresp.h.  Threads: any, but
 * samsa_tp_respond_image a handler.
 */
#include "broker/handlers/tpresp.h"

#include <string.h>

#include "broker/api_table.h"
#include "meta/acl.h"

#define AT(base, off)   ((char *) (base) + (off))

static int32_t
tp_parts_cnt(const samsa_tp_layout_t *l, const void *topic)
{
    int32_t  cnt;

    memcpy(&cnt, AT(topic, l->parts_cnt_off), sizeof(cnt));
    return cnt > 0 ? cnt : 0;
}

static void *
tp_parts(const samsa_tp_layout_t *l, const void *topic)
{
    void  *p;

    memcpy(&p, AT(topic, l->parts_off), sizeof(p));
    return p;
}

size_t
samsa_tp_count(const samsa_tp_layout_t *rq, const void *rq_topics,
               int32_t rq_cnt)
{
    size_t   n = 0;
    int32_t  i;

    for (i = 0; i < rq_cnt; i++) {
        n += (size_t) tp_parts_cnt(rq, AT(rq_topics, (size_t) i
                                                         * rq->topic_size));
    }
    return n;
}

void *
samsa_tp_respond(samsa_arena_t *arena, const samsa_tp_layout_t *rq,
                 const void *rq_topics, int32_t rq_cnt,
                 const samsa_tp_layout_t *out, int32_t *out_cnt,
                 samsa_tp_fill_fn *fill, void *ctx)
{
    int32_t        n = rq_cnt > 0 ? rq_cnt : 0, i, j, pn;
    char          *topics = samsa_arena_calloc(arena, (size_t) n + 1,
                                               out->topic_size);
    const char    *rt, *rp;
    char          *ot, *op;
    samsa_slice_t  name;
    size_t         k = 0;

    for (i = 0; i < n; i++) {
        rt = AT(rq_topics, (size_t) i * rq->topic_size);
        ot = topics + (size_t) i * out->topic_size;
        if (out->topic_init != NULL) {
            out->topic_init(ot);
        }
        memcpy(&name, AT(rt, rq->name_off), sizeof(name));
        memcpy(AT(ot, out->name_off), &name, sizeof(name));
        pn = tp_parts_cnt(rq, rt);
        op = samsa_arena_calloc(arena, (size_t) pn + 1, out->part_size);
        memcpy(AT(ot, out->parts_off), &op, sizeof(op));
        memcpy(AT(ot, out->parts_cnt_off), &pn, sizeof(pn));
        rp = tp_parts(rq, rt);
        for (j = 0; j < pn; j++, k++) {
            if (out->part_init != NULL) {
                out->part_init(op + (size_t) j * out->part_size);
            }
            fill(ctx, name, k, rp + (size_t) j * rq->part_size,
                 op + (size_t) j * out->part_size);
        }
    }
    *out_cnt = n;
    return topics;
}

void *
samsa_tp_respond_image(samsa_broker_t *b, samsa_req_t *req,
                       const samsa_tp_layout_t *rq, const void *rq_topics,
                       int32_t rq_cnt, const samsa_tp_layout_t *out,
                       int32_t *out_cnt, samsa_tp_fill_fn *fill, void *arg)
{
    samsa_image_t     *img = samsa_apis_image(b, req);
    samsa_tp_image_t   c = { b, req, img, arg, NULL, 0 };
    void              *topics;

    topics = samsa_tp_respond(&req->arena, rq, rq_topics, rq_cnt, out,
                              out_cnt, fill, &c);
    return topics;
}

void *
samsa_tp_respond_checked(samsa_apis_t *apis, samsa_req_t *req,
                         int8_t operation, const samsa_tp_layout_t *rq,
                         const void *rq_topics, int32_t rq_cnt,
                         const samsa_tp_layout_t *out, int32_t *out_cnt,
                         samsa_tp_fill_fn *fill, void *arg)
{
    samsa_image_t     *img = samsa_apis_image(apis->broker, req);
    samsa_tp_image_t   c = { apis->broker, req, img, arg, apis, operation };

    return samsa_tp_respond(&req->arena, rq, rq_topics, rq_cnt, out,
                            out_cnt, fill, &c);
}

bool
samsa_tp_allowed(const samsa_tp_image_t *c, samsa_slice_t name)
{
    return c->apis == NULL
           || samsa_apis_allowed(c->apis, c->req, c->img, c->op,
                                 SAMSA_ACL_RESOURCE_TOPIC, name);
}
