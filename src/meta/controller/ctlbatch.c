/*
 * meta/controller/ctlbatch.c - see ctlbatch.h.
 */
#include "meta/controller/ctlbatch.h"

#include <string.h>

#include "meta/controller/controller.h"
#include "proto/wr.h"
#include "util/alloc.h"
#include "util/diag.h"

void
samsa_ctlbatch_init(samsa_ctlbatch_t *b, samsa_image_t *img,
                    int64_t next_offset, int32_t node_id,
                    const samsa_config_t *broker_cfg)
{
    memset(b, 0, sizeof(*b));
    b->node_id = node_id;
    b->broker_cfg = broker_cfg;
    b->img = img;
    b->delta = samsa_image_delta_new(img);
    b->next_offset = next_offset;
}

void
samsa_ctlbatch_fini(samsa_ctlbatch_t *b)
{
    samsa_image_delta_free(b->delta);
    samsa_buf_fini(&b->data);
    samsa_free(b->lens);
}

void
samsa_ctlbatch_add(samsa_ctlbatch_t *b, const samsa_MetadataRecords_any_t *rec)
{
    samsa_wr_t   wr;
    size_t       before = b->data.len;
    char         err[512];
    samsa_err_t  e;

    samsa_wr_init(&wr, &b->data);
    samsa_MetadataRecords_encode_framed(&wr, rec);
    if (b->n == b->cap) {
        b->cap = b->cap * 2 + 16;
        b->lens = samsa_realloc(b->lens, b->cap * sizeof(*b->lens));
    }
    b->lens[b->n++] = b->data.len - before;
    e = samsa_image_delta_replay(b->delta, rec, b->next_offset++, err,
                                 sizeof(err));
    if (e != SAMSA_ERR_NONE) {
        samsa_error("controller: a record it made does not apply: %s", err);
        samsa_assert(!"controller record does not apply");
    }
}

bool
samsa_ctlbatch_room(samsa_ctlbatch_t *b, int64_t k)
{
    if ((int64_t) b->n + k > SAMSA_CONTROLLER_MAX_RECORDS) {
        b->overflow = true;
    }
    return !b->overflow;
}
