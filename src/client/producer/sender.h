/*
 * client/producer/sender.h - the producer's sender thread (Kafka's Sender): one per
 * producer.  Each turn: refresh metadata when due; with idempotence, get
 * (or bump) the producer id; ready() the accumulator, drop leaders whose
 * connection cannot take a request, drain() the rest up to
 * max.request.size each, assign sequences and mute partitions (ordering),
 * send one Produce request per leader; expire batches past
 * delivery.timeout.ms; poll the network.  Responses complete batches (the
 * delivery callbacks run here), retry them after backoff, or fail them.
 * Threads: samsa_sender_start/stop from the producer's app threads; all
 * the rest runs on the sender thread.
 */
#ifndef SAMSA_CLIENT_PRODUCER_SENDER_H
#define SAMSA_CLIENT_PRODUCER_SENDER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <samsa/errors.h>

#include "client/producer/accum.h"
#include "client/mdcache.h"
#include "client/netclient.h"
#include "client/producer/pconf.h"
#include "client/producer/txnmgr.h"

/* Counters shared by app threads and the sender: [atomic], relaxed. */
typedef struct samsa_pmetrics {
    _Atomic int64_t  record_send_total;
    _Atomic int64_t  record_error_total;
    _Atomic int64_t  record_retry_total;
    _Atomic int64_t  records_delivered;
    _Atomic int64_t  batch_total;
    _Atomic int64_t  request_total;
    _Atomic int64_t  bytes_sent;
    _Atomic int64_t  records_in_flight;
    _Atomic int64_t  metadata_requests;
    _Atomic int64_t  producer_id;
    _Atomic int32_t  producer_epoch;
    _Atomic int64_t  batch_split_total;
    _Atomic int32_t  partition_inflight_max;
} samsa_pmetrics_t;

typedef struct samsa_sender samsa_sender_t;

/* A sender over the producer's parts (all borrowed; they outlive it); tm
 * is the transaction manager of a transactional producer, else NULL.
 * The thread starts at once. */
samsa_sender_t *samsa_sender_start(const samsa_pconf_t *pc,
                                   samsa_accum_t *accum,
                                   samsa_mdcache_t *mdc,
                                   samsa_bufpool_t *pool,
                                   samsa_pmetrics_t *metrics,
                                   samsa_txnmgr_t *tm);

/* Wake the sender (a new or full batch, a flush, a metadata wait).
 * @thread any */
void samsa_sender_wakeup(samsa_sender_t *sender);

/* The fatal error that stops the producer (PRODUCER_FENCED, no
 * InitProducerId support...), or SAMSA_ERR_NONE.  @thread any */
samsa_err_t samsa_sender_fatal(samsa_sender_t *sender);

/* Stop: deliver what is queued and in flight for up to timeout_ms (-1: no
 * limit), then fail the rest with SAMSA_ERR__SHUTDOWN, join the thread and
 * free the sender.  The accumulator must be closed first.  Returns
 * SAMSA_ERR__TIMED_OUT if records had to be failed.  @thread app */
samsa_err_t samsa_sender_stop(samsa_sender_t *sender, int64_t timeout_ms);

#endif /* SAMSA_CLIENT_PRODUCER_SENDER_H */
