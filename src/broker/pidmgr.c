/*
 * broker/pidmgr.c - producer ids from controller-allocated blocks (see
 * pidmgr.h).
 */
#include "broker/pidmgr.h"

#include <pthread.h>

#include "util/alloc.h"
#include "util/diag.h"

struct samsa_pidmgr {
    samsa_controller_t  *ctrl;      /* [const] */
    pthread_mutex_t      lock;      /* guards next, end */
    int64_t              next;      /* [lock] next id of the block */
    int64_t              end;       /* [lock] first id past the block */
};

samsa_pidmgr_t *
samsa_pidmgr_new(samsa_controller_t *ctrl)
{
    samsa_pidmgr_t  *pm = samsa_calloc(1, sizeof(*pm));

    pm->ctrl = ctrl;
    pthread_mutex_init(&pm->lock, NULL);
    return pm;
}

void
samsa_pidmgr_free(samsa_pidmgr_t *pm)
{
    if (pm == NULL) {
        return;
    }
    pthread_mutex_destroy(&pm->lock);
    samsa_free(pm);
}

/* Take an id from the block if it has one.  @locks lock held */
static bool
pidmgr_take(samsa_pidmgr_t *pm, int64_t *pid)
{
    if (pm->next < pm->end) {
        *pid = pm->next++;
        return true;
    }
    return false;
}

samsa_err_t
samsa_pidmgr_next(samsa_pidmgr_t *pm, int64_t *pid)
{
    samsa_err_t  err;
    int64_t      first;
    bool         got;

    pthread_mutex_lock(&pm->lock);
    got = pidmgr_take(pm, pid);
    pthread_mutex_unlock(&pm->lock);
    if (got) {
        return SAMSA_ERR_NONE;
    }
    /* the controller writes and fsyncs the metadata log: no lock held */
    err = samsa_controller_alloc_producer_ids(pm->ctrl, &first);
    if (err != SAMSA_ERR_NONE) {
        samsa_warn("cannot allocate a block of producer ids: %s",
                   samsa_err_name(err));
        return SAMSA_ERR_COORDINATOR_LOAD_IN_PROGRESS;
    }
    pthread_mutex_lock(&pm->lock);
    if (pm->next >= pm->end) {      /* else another thread got one first:
                                       ours is left unused, never reused */
        pm->next = first;
        pm->end = first + SAMSA_CONTROLLER_PRODUCER_ID_BLOCK;
        samsa_debug("producer ids %lld..%lld allocated", (long long) first,
                    (long long) pm->end - 1);
    }
    got = pidmgr_take(pm, pid);
    pthread_mutex_unlock(&pm->lock);
    samsa_assert(got);
    return SAMSA_ERR_NONE;
}
