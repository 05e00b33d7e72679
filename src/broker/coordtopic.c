/*
 * broker/coordtopic.c - see coordtopic.h.
 */
#include "broker/coordtopic.h"

#include <stdbool.h>
#include <string.h>

#include "util/arena.h"
#include "util/diag.h"

samsa_err_t
samsa_coordtopic_create(samsa_meta_t *meta, samsa_controller_t *ctrl,
                        const char *name, int32_t nparts,
                        const samsa_image_config_t *configs, size_t nconfigs)
{
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
samsa_coordtopic_plog(samsa_meta_t *meta, samsa_logmgr_t *logs,
                      const char *name, int32_t partition,
                      samsa_plog_t **plog, int32_t *leader_epoch)
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
