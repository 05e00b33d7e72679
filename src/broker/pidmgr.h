/*
 * broker/pidmgr.h - the broker's producer-id manager, Kafka's
 * ProducerIdManager: hands out producer ids one by one from blocks of
 * SAMSA_CONTROLLER_PRODUCER_ID_BLOCK that the active controller allocates
 * and records in the metadata log (ProducerIdsRecord), so that an id is
 * never handed out twice, across restarts and nodes too.  Used by
 * InitProducerId (and the transaction coordinator).
 *
 * Where blocks come from (Kafka's RPCProducerIdManager, KIP-730): the node
 * that is the active controller (and a single node) asks its own
 * controller; any other KRaft cluster node sends AllocateProducerIds
 * (API 67) with its broker id and broker epoch to the active controller's
 * CONTROLLER listener.  Once the current block is 90% used
 * (samsa_pidmgr_prefetch_due) the "pid-fetch" thread gets the next one, so
 * that a handler finds it at hand; a cluster node fetches its first block
 * as soon as it is registered.  A handler never waits on the network: with
 * no block at hand, samsa_pidmgr_next answers COORDINATOR_LOAD_IN_PROGRESS
 * (retriable) and wakes the thread; only on the active controller does it
 * ask the local controller itself (the metadata log commit), as before.
 * The thread retries failures with a backoff (SAMSA_PIDMGR_BACKOFF_MS
 * doubling up to SAMSA_PIDMGR_BACKOFF_MAX_MS); after NOT_CONTROLLER the
 * next try asks whichever node the quorum then names, as broker/lifecycle.h
 * does; STALE_BROKER_EPOCH waits for broker-lifecycle to register again
 * (samsa_pidmgr_broker_epoch_set).
 *
 * Threads: handlers call samsa_pidmgr_next; broker-lifecycle calls
 * samsa_pidmgr_broker_epoch_set; the "pid-fetch" thread owns the fetch
 * (its correlation ids, the connection of each try); main creates and frees
 * the manager.  pm->lock guards the current and next block, the broker
 * epoch, the wanted flag, the backoff and stop; it is never held across a
 * fetch.
 */
#ifndef SAMSA_BROKER_PIDMGR_H
#define SAMSA_BROKER_PIDMGR_H

#include <stdbool.h>
#include <stdint.h>

#include <samsa/errors.h>

#include "config/config_kraft.h"
#include "meta/controller/controller.h"

#define SAMSA_PIDMGR_BACKOFF_MS       50
#define SAMSA_PIDMGR_BACKOFF_MAX_MS   2000
#define SAMSA_PIDMGR_IO_MS            2000  /* bounds each step of a
                                               remote fetch, and so free */

typedef struct samsa_pidmgr samsa_pidmgr_t;

/* Get one block: *first its first id, *len how many.  Called on the
 * pid-fetch thread, and on a handler on the active controller. */
typedef samsa_err_t samsa_pidmgr_fetch_fn(void *ctx, int64_t broker_epoch,
                                          int64_t *first, int32_t *len);

typedef struct samsa_pidmgr_conf {
    samsa_controller_t          *ctrl;      /* this node's controller */
    const samsa_config_kraft_t  *kraft;     /* the voters' addresses;
                                               NULL or !is_cluster: one
                                               node, always local */
    int32_t                      node_id;
    /* Tests: fetch replaces the controller (local or AllocateProducerIds)
     * and fetch_local says whether a handler may call it itself. */
    samsa_pidmgr_fetch_fn       *fetch;
    void                        *fetch_ctx;
    bool                         fetch_local;
} samsa_pidmgr_conf_t;

/* Start the manager and its pid-fetch thread: *out.  ctrl and kraft
 * outlive it.  @returns SAMSA_ERR__IO when the thread cannot start.
 * @thread main */
SAMSA_MUST_CHECK samsa_err_t samsa_pidmgr_new(const samsa_pidmgr_conf_t *conf,
                                              samsa_pidmgr_t **out);

/* Stop the thread (a fetch in progress ends within SAMSA_PIDMGR_IO_MS per
 * step), join and free it; NULL: no-op.  @thread main */
void samsa_pidmgr_free(samsa_pidmgr_t *pm);

/* The broker epoch registration got (-1 while re-registering): what
 * AllocateProducerIds sends.  The first one makes a cluster node fetch its
 * first block.  @thread broker-lifecycle */
void samsa_pidmgr_broker_epoch_set(samsa_pidmgr_t *pm, int64_t epoch);

/* The next unused producer id.  @returns COORDINATOR_LOAD_IN_PROGRESS
 * (retriable, as Kafka answers when no block is at hand) while the next
 * block is on its way, or the controller could not allocate one.
 * @thread handler */
SAMSA_MUST_CHECK samsa_err_t samsa_pidmgr_next(samsa_pidmgr_t *pm,
                                               int64_t *pid);

/* Kafka's PID_PREFETCH_THRESHOLD: true once next (the next id to hand
 * out) has reached 90% of the block [first, end).  @thread any */
bool samsa_pidmgr_prefetch_due(int64_t first, int64_t next, int64_t end);

#endif /* SAMSA_BROKER_PIDMGR_H */
