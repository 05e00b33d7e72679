/*
 * broker/pidmgr.h - the broker's producer-id manager, Kafka's
 * ProducerIdManager: hands out producer ids one by one from blocks of
 * SAMSA_CONTROLLER_PRODUCER_ID_BLOCK that the controller allocates and
 * records in the metadata log (ProducerIdsRecord), so that an id is never
 * handed out twice, across restarts too.  Used by InitProducerId (and the
 * transaction coordinator).
 * Threads: any handler; a mutex guards the current block and is never
 * held while the controller allocates a new one.
 */
#ifndef SAMSA_BROKER_PIDMGR_H
#define SAMSA_BROKER_PIDMGR_H

#include <stdint.h>

#include <samsa/errors.h>

#include "meta/controller/controller.h"

typedef struct samsa_pidmgr samsa_pidmgr_t;

/* ctrl outlives the manager.  @thread main */
samsa_pidmgr_t *samsa_pidmgr_new(samsa_controller_t *ctrl);
void samsa_pidmgr_free(samsa_pidmgr_t *pm);     /* NULL: no-op */

/* The next unused producer id.  @returns COORDINATOR_LOAD_IN_PROGRESS
 * (retriable, as Kafka answers when no block is at hand) when the
 * controller could not allocate a block.  @thread handler */
SAMSA_MUST_CHECK samsa_err_t samsa_pidmgr_next(samsa_pidmgr_t *pm,
                                               int64_t *pid);

#endif /* SAMSA_BROKER_PIDMGR_H */
