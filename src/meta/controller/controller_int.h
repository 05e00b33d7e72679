/*
 * meta/controller/controller_int.h - what the controller's files share: the
 * controller itself and the batch one operation builds.  Private to
 * src/meta/controller/controller.c, ctltopics.c and ctlconfigs.c.
 * Threads: the controller thread (and main during open).
 */
#ifndef SAMSA_META_CONTROLLER_CONTROLLER_INT_H
#define SAMSA_META_CONTROLLER_CONTROLLER_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "meta/controller/controller.h"
#include "meta/image.h"
#include "meta/mlog.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/queue.h"

struct samsa_controller {
    samsa_controller_conf_t   conf;     /* [const] */
    samsa_mlog_t             *mlog;     /* [controller thread] */
    samsa_image_t            *img;      /* [controller thread] the latest
                                           published image (a reference) */
    bool                      failed;   /* [controller thread] the log
                                           failed: refuse changes */
    samsa_queue_t             ops;      /* operations for the thread */
    pthread_t                 thread;
    bool                      started;  /* [main] */
    atomic_bool               stop;     /* [atomic] close asked */
};

/* The records one operation makes, applied to a delta as they are made so
 * that later items of the same request see earlier ones. */
typedef struct samsa_ctlbatch {
    samsa_controller_t    *ctrl;
    samsa_image_delta_t   *delta;
    samsa_buf_t            data;        /* framed records back to back */
    size_t                *lens;
    size_t                 n;
    size_t                 cap;
    int64_t                next_offset; /* the next record's offset */
    bool                   overflow;    /* records were refused */
} samsa_ctlbatch_t;

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

/* ctltopics.c: the topic operations' validation and records. */
void samsa_ctltopics_create(samsa_ctlbatch_t *b,
                            const samsa_controller_create_topics_t *req,
                            samsa_arena_t *arena,
                            samsa_controller_topic_result_t *results);
void samsa_ctltopics_delete(samsa_ctlbatch_t *b,
                            const samsa_controller_topic_ref_t *refs,
                            size_t n, const samsa_controller_quota_t *quota,
                            samsa_arena_t *arena,
                            samsa_controller_delete_result_t *results);
void samsa_ctltopics_partitions(samsa_ctlbatch_t *b,
                                const samsa_controller_new_partitions_t *t,
                                size_t n,
                                const samsa_controller_quota_t *quota,
                                samsa_arena_t *arena,
                                samsa_controller_result_t *results);

/* ctlconfigs.c: AlterConfigs and IncrementalAlterConfigs. */
void samsa_ctlconfigs_alter(samsa_ctlbatch_t *b,
                            const samsa_controller_alter_config_t *res,
                            size_t n, bool incremental, samsa_arena_t *arena,
                            samsa_controller_result_t *results);

/* ctlquotas.c: AlterClientQuotas. */
void samsa_ctlquotas_alter(samsa_ctlbatch_t *b,
                           const samsa_controller_quota_alter_t *entries,
                           size_t n, samsa_arena_t *arena,
                           samsa_controller_result_t *results);

#endif /* SAMSA_META_CONTROLLER_CONTROLLER_INT_H */
