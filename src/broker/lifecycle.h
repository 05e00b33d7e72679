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
 * Controlled shutdown (KIP-631, controlled.shutdown.enable):
 * samsa_lifecycle_shutdown makes the thread heartbeat with WantShutDown
 * every SAMSA_LIFECYCLE_RETRY_MS until the controller, having moved the
 * broker's partition leadership away, answers ShouldShutDown; the wait is
 * bounded by broker.session.timeout.ms (Kafka's broker waits for the
 * controller's approval a fixed 5 minutes; after the session timeout the
 * controller would have fenced this broker anyway), and it gives up
 * sooner once SAMSA_LIFECYCLE_SHUTDOWN_TRIES heartbeats in a row find no
 * active controller or get no answer (the quorum is gone, as when the
 * last nodes of a cluster stop).
 * Threads: broker-lifecycle owns the registration (incarnation id,
 * correlation ids, the connection of each try); main starts and stops it;
 * lc->lock guards stop and epoch (-1 again while re-registering).
 */
#ifndef SAMSA_BROKER_LIFECYCLE_H
#define SAMSA_BROKER_LIFECYCLE_H

#include <stdint.h>

#include <samsa/errors.h>

#include "broker/broker.h"

#define SAMSA_LIFECYCLE_RETRY_MS   500
#define SAMSA_LIFECYCLE_IO_MS      2000   /* bounds a try, and so stop */
#define SAMSA_LIFECYCLE_SHUTDOWN_TRIES  2  /* unanswered heartbeats in a row
                                              that end a controlled
                                              shutdown (no quorum) */

typedef struct samsa_lifecycle samsa_lifecycle_t;

/* Start registering b (its node's endpoints final, its controller in
 * cluster mode), or NULL if the thread cannot start.  @thread main */
samsa_lifecycle_t *samsa_lifecycle_start(samsa_broker_t *b);

/* The broker epoch registration got, -1 until then.  @thread any */
int64_t samsa_lifecycle_epoch(samsa_lifecycle_t *lc);

/* Controlled shutdown, before samsa_lifecycle_stop: heartbeat with
 * WantShutDown until the active controller answers ShouldShutDown (the
 * broker then leads no partition) or broker.session.timeout.ms passes.
 * Returns at once (NONE) if lc is NULL, controlled.shutdown.enable is
 * false or the broker is not registered.  @returns SAMSA_ERR_NONE, or
 * SAMSA_ERR__TIMED_OUT when the controller did not approve in time.
 * @thread main */
SAMSA_MUST_CHECK samsa_err_t samsa_lifecycle_shutdown(samsa_lifecycle_t *lc);

/* Stop the thread (a try in progress ends within SAMSA_LIFECYCLE_IO_MS
 * per step), join and free it; NULL does nothing.  @thread main */
void samsa_lifecycle_stop(samsa_lifecycle_t *lc);

#endif /* SAMSA_BROKER_LIFECYCLE_H */
