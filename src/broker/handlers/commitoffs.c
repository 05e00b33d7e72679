/*
 * broker/handlers/commitoffs.c - see commitoffs.h.  Threads: any.
 */
#include "broker/handlers/commitoffs.h"

#include <string.h>

#include "meta/acl.h"
#include "proto/errmap.h"

#define AT(base, off)   ((char *) (base) + (off))

/* The request partition p as the offset to commit for topic name. */
static void
commitoffs_take(const samsa_commitoffs_rq_layout_t *l, samsa_slice_t name,
                const void *p, samsa_grp_offset_t *o)
{
    o->topic = name;
    memcpy(&o->partition, AT(p, l->index_off), sizeof(o->partition));
    memcpy(&o->offset, AT(p, l->offset_off), sizeof(o->offset));
    memcpy(&o->leader_epoch, AT(p, l->epoch_off), sizeof(o->leader_epoch));
    memcpy(&o->metadata, AT(p, l->metadata_off), sizeof(o->metadata));
    o->commit_timestamp_ms = -1;
    if (l->timestamp_off != SAMSA_COMMITOFFS_NO_TIMESTAMP) {
        memcpy(&o->commit_timestamp_ms, AT(p, l->timestamp_off),
               sizeof(o->commit_timestamp_ms));
    }
}

samsa_grp_offset_t *
samsa_commitoffs_from_request(samsa_arena_t *arena,
                              const samsa_tp_layout_t *rq,
                              const void *rq_topics, int32_t rq_cnt,
                              const samsa_commitoffs_rq_layout_t *part,
                              size_t *n)
{
    samsa_grp_offset_t  *offs;
    const char          *t, *parts;
    samsa_slice_t        name;
    int32_t              i, j, pn;
    size_t               k = 0;

    *n = samsa_tp_count(rq, rq_topics, rq_cnt);
    offs = samsa_arena_calloc(arena, *n + 1, sizeof(*offs));
    for (i = 0; i < rq_cnt; i++) {
        t = AT(rq_topics, (size_t) i * rq->topic_size);
        memcpy(&name, AT(t, rq->name_off), sizeof(name));
        memcpy(&parts, AT(t, rq->parts_off), sizeof(parts));
        memcpy(&pn, AT(t, rq->parts_cnt_off), sizeof(pn));
        for (j = 0; j < pn; j++, k++) {
            commitoffs_take(part, name, parts + (size_t) j * rq->part_size,
                            &offs[k]);
        }
    }
    return offs;
}

/* What commitoffs_fill reads: the results and the response layout. */
typedef struct commitoffs_answer {
    const samsa_grp_offset_t             *offs;
    const samsa_commitoffs_out_layout_t  *part;
} commitoffs_answer_t;

/* samsa_tp_fill_fn: the k-th partition's commit result */
static void
commitoffs_fill(void *ctx, samsa_slice_t name, size_t k, const void *rq,
                void *out)
{
    const commitoffs_answer_t  *a = ctx;
    int16_t                     code = samsa_err_wire(a->offs[k].error);

    (void) name;
    (void) rq;
    memcpy(AT(out, a->part->index_off), &a->offs[k].partition,
           sizeof(a->offs[k].partition));
    memcpy(AT(out, a->part->error_off), &code, sizeof(code));
}

void *
samsa_commitoffs_respond(samsa_arena_t *arena, const samsa_tp_layout_t *rq,
                         const void *rq_topics, int32_t rq_cnt,
                         const samsa_tp_layout_t *out,
                         const samsa_commitoffs_out_layout_t *part,
                         int32_t *out_cnt, const samsa_grp_offset_t *offs)
{
    commitoffs_answer_t  a = { offs, part };

    return samsa_tp_respond(arena, rq, rq_topics, rq_cnt, out, out_cnt,
                            commitoffs_fill, &a);
}

samsa_grp_offset_t *
samsa_commitoffs_authorize(samsa_apis_t *apis, samsa_req_t *req,
                           samsa_grp_offset_t *offs, size_t n, size_t *nok)
{
    samsa_grp_offset_t  *ok = samsa_arena_calloc(&req->arena, n + 1,
                                                 sizeof(*ok));
    size_t               i, k = 0;

    for (i = 0; i < n; i++) {
        if (samsa_apis_allowed(apis, req, NULL, SAMSA_ACL_OP_READ,
                               SAMSA_ACL_RESOURCE_TOPIC, offs[i].topic)) {
            ok[k++] = offs[i];
        } else {
            offs[i].error = SAMSA_ERR_TOPIC_AUTHORIZATION_FAILED;
        }
    }
    *nok = k;
    return ok;
}

void
samsa_commitoffs_merge(samsa_grp_offset_t *offs, size_t n,
                       const samsa_grp_offset_t *ok, size_t nok)
{
    size_t  i, k = 0;

    for (i = 0; i < n && k < nok; i++) {
        if (offs[i].error != SAMSA_ERR_TOPIC_AUTHORIZATION_FAILED) {
            offs[i].error = ok[k++].error;
        }
    }
}

void
samsa_commitoffs_fail(samsa_grp_offset_t *offs, size_t n, samsa_err_t err)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        offs[i].error = err;
    }
}
