/*
 * broker/coordtopic.c - see coordtopic.h.
 */
#include "broker/coordtopic.h"

#include <stdbool.h>
#include <string.h>

#include "broker/forward.h"
#include "proto/batch.h"
#include "proto/recbuild.h"
#include "proto/rd.h"
#include "util/alloc.h"
#include "util/arena.h"
#include "util/diag.h"
#include "util/fault.h"
#include "util/time.h"

#define COORDTOPIC_IO_MS       30000

/* Create the topic unless the latest image has it (see
 * samsa_coordtopic_ensure). */
static samsa_err_t
coordtopic_create(samsa_meta_t *meta, samsa_controller_t *ctrl,
                  const samsa_config_kraft_t *kraft, int32_t node_id,
                  const char *name, int32_t nparts,
                  const samsa_image_config_t *configs, size_t nconfigs)
{
    int32_t                           active;
    samsa_controller_create_topics_t  req;
    samsa_controller_new_topic_t      nt;
    samsa_controller_topic_result_t   res;
    samsa_image_t                    *img;
    samsa_arena_t                     arena;
    samsa_err_t                       err;
    bool                              exists;

    img = samsa_meta_image_get(meta);
    exists = samsa_image_topic_find(img, name, strlen(name)) != NULL;
    samsa_image_put(img);
    if (exists) {
        return SAMSA_ERR_NONE;
    }
    if (ctrl == NULL) {
        return SAMSA_ERR_COORDINATOR_NOT_AVAILABLE;
    }
    active = samsa_controller_active_id(ctrl);
    if (kraft != NULL && kraft->is_cluster && active != node_id) {
        /* a cluster node that is not the active controller: ask it */
        err = active < 0 ? SAMSA_ERR_NOT_CONTROLLER
                         : samsa_forward_create_topic(kraft, node_id, active,
                                                      name, nparts, 1, configs,
                                                      nconfigs,
                                                      COORDTOPIC_IO_MS);
        if (err != SAMSA_ERR_NONE) {
            samsa_warn("cannot create %s through the active controller %d: "
                       "%s", name, (int) active, samsa_err_name(err));
            return SAMSA_ERR_COORDINATOR_NOT_AVAILABLE;
        }
        samsa_info("created %s with %d partitions through the active "
                   "controller %d", name, (int) nparts, (int) active);
        /* this node's image has it once the record is applied here */
        img = samsa_meta_image_get(meta);
        exists = samsa_image_topic_find(img, name, strlen(name)) != NULL;
        samsa_image_put(img);
        return exists ? SAMSA_ERR_NONE : SAMSA_ERR_COORDINATOR_NOT_AVAILABLE;
    }
    memset(&nt, 0, sizeof(nt));
    nt.name = samsa_slice_cstr(name);
    nt.num_partitions = nparts;
    nt.replication_factor = 1;      /* one node: the internal topics'
                                       replication factors are capped */
    nt.configs = configs;
    nt.nconfigs = nconfigs;
    memset(&req, 0, sizeof(req));
    req.topics = &nt;
    req.ntopics = 1;
    req.internal = true;
    memset(&res, 0, sizeof(res));
    samsa_arena_init(&arena);
    err = samsa_controller_create_topics(ctrl, &req, &arena, &res);
    if (err == SAMSA_ERR_NONE && res.error != SAMSA_ERR_NONE
        && res.error != SAMSA_ERR_TOPIC_ALREADY_EXISTS) {
        err = res.error;
    }
    if (err != SAMSA_ERR_NONE) {
        samsa_error("cannot create %s: %s (%s)", name, samsa_err_name(err),
                    res.message != NULL ? res.message : "");
        err = SAMSA_ERR_COORDINATOR_NOT_AVAILABLE;
    } else {
        samsa_info("created %s with %d partitions", name, (int) nparts);
    }
    samsa_arena_fini(&arena);
    return err;
}

samsa_err_t
samsa_coordtopic_ensure(samsa_meta_t *meta, samsa_controller_t *ctrl,
                        const samsa_config_kraft_t *kraft, int32_t node_id,
                        const char *name, int32_t nparts,
                        const samsa_image_config_t *configs, size_t nconfigs,
                        pthread_mutex_t *lock, _Atomic bool *ready)
{
    samsa_err_t  err;

    pthread_mutex_lock(lock);
    err = coordtopic_create(meta, ctrl, kraft, node_id, name, nparts,
                            configs, nconfigs);
    if (err == SAMSA_ERR_NONE) {
        atomic_store_explicit(ready, true, memory_order_release);
    }
    pthread_mutex_unlock(lock);
    return err;
}

bool
samsa_coordtopic_leads(const samsa_image_t *img, const char *name,
                       int32_t partition, int32_t node_id)
{
    const samsa_image_topic_t  *t = samsa_image_topic_find(img, name,
                                                           strlen(name));

    return t != NULL && partition >= 0 && partition < t->npartitions
           && t->partitions[partition].leader == node_id;
}

samsa_err_t
samsa_coordtopic_owner_check(samsa_meta_t *meta, const samsa_image_t *img,
                             const samsa_config_kraft_t *kraft,
                             int32_t node_id, const char *name,
                             int32_t partition)
{
    samsa_image_t  *own = NULL;
    bool            leads;

    if (kraft == NULL || !kraft->is_cluster) {
        return SAMSA_ERR_NONE;
    }
    if (img == NULL) {
        own = samsa_meta_image_get(meta);
        img = own;
    }
    leads = samsa_coordtopic_leads(img, name, partition, node_id);
    if (own != NULL) {
        samsa_image_put(own);
    }
    return leads ? SAMSA_ERR_NONE : SAMSA_ERR_NOT_COORDINATOR;
}

/* The partition log of partition of the internal topic name (a reference:
 * samsa_plog_unref it) and its leader epoch; NULL and
 * COORDINATOR_NOT_AVAILABLE when the topic or the partition is not
 * there. */
static samsa_err_t
coordtopic_plog(samsa_meta_t *meta, samsa_logmgr_t *logs, const char *name,
                int32_t partition, samsa_plog_t **plog, int32_t *leader_epoch)
{
    samsa_image_t              *img;
    const samsa_image_topic_t  *t;

    *plog = NULL;
    img = samsa_meta_image_get(meta);
    t = samsa_image_topic_find(img, name, strlen(name));
    if (t == NULL || partition >= t->npartitions) {
        samsa_image_put(img);
        return SAMSA_ERR_COORDINATOR_NOT_AVAILABLE;
    }
    *leader_epoch = t->partitions[partition].leader_epoch;
    samsa_image_put(img);
    *plog = samsa_logmgr_plog_ref(logs, name, partition);
    return *plog != NULL ? SAMSA_ERR_NONE : SAMSA_ERR_COORDINATOR_NOT_AVAILABLE;
}

/* The batch of n records, built in *mem (the caller frees it); its size. */
static samsa_err_t
coordtopic_batch(const samsa_coordtopic_rec_t *recs, size_t n,
                 const samsa_coordtopic_append_t *how, uint8_t **mem,
                 size_t *size)
{
    samsa_recbuild_t  rb;
    samsa_buf_t       scratch = SAMSA_BUF_INIT;
    samsa_err_t       err;
    size_t            i, cap = SAMSA_RECBATCH_HDR_SIZE, used;
    int64_t           now = samsa_wall_ms();
    const void       *value;

    for (i = 0; i < n; i++) {
        cap += samsa_recbuild_size_upper(recs[i].key.len, recs[i].value.len,
                                         NULL, 0);
    }
    *mem = samsa_malloc(cap);
    samsa_recbuild_init(&rb, *mem, cap, SAMSA_CODEC_NONE, 0);
    for (i = 0; i < n; i++) {
        value = recs[i].value.data != NULL ? (const void *) recs[i].value.data
                                           : (const void *) "";
        samsa_assert(samsa_recbuild_append(
            &rb, now, recs[i].key.data, recs[i].key.len,
            recs[i].tombstone ? NULL : value, recs[i].value.len, NULL, 0,
            &used));
    }
    if (how->producer_id >= 0) {
        samsa_recbuild_set_producer(&rb, how->producer_id,
                                    how->producer_epoch,
                                    SAMSA_RECBATCH_NO_SEQ, true);
    }
    err = samsa_recbuild_close(&rb, &scratch);
    samsa_buf_fini(&scratch);
    *size = samsa_recbuild_size(&rb);
    return err;
}

samsa_err_t
samsa_coordtopic_append(samsa_meta_t *meta, samsa_logmgr_t *logs,
                        const char *name, int32_t partition,
                        const samsa_coordtopic_rec_t *recs, size_t n,
                        const samsa_coordtopic_append_t *how)
{
    samsa_plog_append_opts_t     opts;
    samsa_plog_append_result_t   res;
    samsa_plog_t                *plog;
    samsa_err_t                  err;
    uint8_t                     *mem;
    size_t                       size;
    int64_t                      flushed;

    if (n == 0) {
        return SAMSA_ERR_NONE;
    }
    memset(&opts, 0, sizeof(opts));
    err = coordtopic_plog(meta, logs, name, partition, &plog,
                          &opts.leader_epoch);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    err = coordtopic_batch(recs, n, how, &mem, &size);
    if (err == SAMSA_ERR_NONE) {
        memset(&res, 0, sizeof(res));
        if (how->fault_before != NULL) {
            SAMSA_FAULT(how->fault_before);
        }
        err = samsa_plog_append(plog, mem, size, &opts, &res);
        if (how->fault_after != NULL) {
            SAMSA_FAULT(how->fault_after);
        }
    }
    if (err == SAMSA_ERR_NONE && how->durable) {
        err = samsa_plog_flush(plog, SAMSA_PLOG_FLUSH_DATA, &flushed);
    }
    samsa_free(mem);
    samsa_plog_unref(plog);
    return err;
}
