/*
 * meta/controller/ctlbatch.h - the records one controller operation makes,
 * applied to a delta of the latest image as they are made, so that later
 * items of the same request see earlier ones.  The operations
 * (ctltopics.c, ctlconfigs.c, ctlquotas.c) fill a batch; the controller
 * (controller.c) opens it, commits it to the metadata log and closes it.
 * A batch carries what the operations read (this node, the broker config,
 * the base image) so that they need nothing of the controller itself.
 * Threads: the controller thread (and main during open).
 * Ownership: the batch owns its delta and its encoded records; img and
 * broker_cfg are borrowed for its life.
 */
#ifndef SAMSA_META_CONTROLLER_CTLBATCH_H
#define SAMSA_META_CONTROLLER_CTLBATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "meta/brokercfg.h"
#include "meta/image.h"
#include "util/arena.h"
#include "util/buf.h"

typedef struct samsa_ctlbatch {
    int32_t                node_id;     /* this node */
    const samsa_config_t  *broker_cfg;  /* the topic configs' fallbacks */
    const samsa_brokercfg_check_t *broker_check; /* this node's dynamic
                                                    configs' check; NULL:
                                                    none */
    samsa_image_t         *img;         /* the image the delta is on */
    samsa_image_delta_t   *delta;
    samsa_buf_t            data;        /* framed records back to back */
    size_t                *lens;
    size_t                 n;
    size_t                 cap;
    int64_t                next_offset; /* the next record's offset */
    bool                   overflow;    /* records were refused */
} samsa_ctlbatch_t;

/* An empty batch on a delta of img whose first record will have offset
 * next_offset. */
void samsa_ctlbatch_init(samsa_ctlbatch_t *b, samsa_image_t *img,
                         int64_t next_offset, int32_t node_id,
                         const samsa_config_t *broker_cfg);
void samsa_ctlbatch_fini(samsa_ctlbatch_t *b);

/* Add one record: encode it framed and replay it into the delta (it was
 * validated: a replay failure is a bug and asserts). */
void samsa_ctlbatch_add(samsa_ctlbatch_t *b,
                        const samsa_MetadataRecords_any_t *rec);

/* True if k more records keep the batch within
 * SAMSA_CONTROLLER_MAX_RECORDS; else marks it overflowed (the operation
 * then fails whole, as Kafka's BoundedList does) and returns false. */
bool samsa_ctlbatch_room(samsa_ctlbatch_t *b, int64_t k);

/* printf into arena: the controller's messages (the short name keeps the
 * many call sites on one line). */
#define samsa_ctl_msg  samsa_arena_printf

#endif /* SAMSA_META_CONTROLLER_CTLBATCH_H */
