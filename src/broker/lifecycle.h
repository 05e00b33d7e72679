/*
 * broker/lifecycle.h - a KRaft cluster node's broker registration, Kafka's
 * BrokerLifecycleManager in the small: once the ports are bound, the
 * "broker-lifecycle" thread sends a BrokerRegistration (API 62) to the
 * active controller's CONTROLLER listener (the quorum's leader id, its
 * address from controller.quorum.voters; broker/forward.h's
 * samsa_forward_roundtrip), every SAMSA_LIFECYCLE_RETRY_MS until one
 * answers a broker epoch: no leader yet, NOT_CONTROLLER (leadership moved),
 * an unreachable controller or another error all retry.  Each start
 * registers anew with a new incarnation id, as Kafka's broker does, and
 * gets a new broker epoch.
 * Once registered it sends a BrokerHeartbeat (API 63) every
 * broker.heartbeat.interval.ms with its broker epoch and the offset of the
 * image it last applied; STALE_BROKER_EPOCH or BROKER_ID_NOT_REGISTERED
 * makes it register again (a new broker epoch).  Each broker epoch (or -1
 * while none) is handed to the producer-id manager, which sends it with
 * AllocateProducerIds (broker/pidmgr.h).
 * Not done (docs/CLUSTER.md): controlled shutdown (WantShutDown).
 * Threads: broker-lifecycle owns the registration (incarnation id,
 * correlation ids, the connection of each try); main starts and stops it;
 * lc->lock guards stop and epoch (-1 again while re-registering).
 */
#ifndef SAMSA_BROKER_LIFECYCLE_H
#define SAMSA_BROKER_LIFECYCLE_H

#include <stdint.h>

#include "broker/broker.h"

#define SAMSA_LIFECYCLE_RETRY_MS   500
#define SAMSA_LIFECYCLE_IO_MS      2000   /* bounds a try, and so stop */

typedef struct samsa_lifecycle samsa_lifecycle_t;

/* Start registering b (its node's endpoints final, its controller in
 * cluster mode), or NULL if the thread cannot start.  @thread main */
samsa_lifecycle_t *samsa_lifecycle_start(samsa_broker_t *b);

/* The broker epoch registration got, -1 until then.  @thread any */
int64_t samsa_lifecycle_epoch(samsa_lifecycle_t *lc);

/* Stop the thread (a try in progress ends within SAMSA_LIFECYCLE_IO_MS
 * per step), join and free it; NULL does nothing.  @thread main */
void samsa_lifecycle_stop(samsa_lifecycle_t *lc);

#endif /* SAMSA_BROKER_LIFECYCLE_H */
