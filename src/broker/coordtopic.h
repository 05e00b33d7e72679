/*
 * broker/coordtopic.h - the internal topic a coordinator keeps its state
 * in: __consumer_offsets for the group coordinator (broker/group/),
 * __transaction_state for the transaction coordinator (broker/txn/).
 * Both create it on first use through the controller, as Kafka's
 * AutoTopicCreationManager does for internal topics, and append their
 * records, as uncompressed batches, to the partition their key hashes
 * to.  What differs (name, partitions, configs, what goes in the records)
 * stays with each coordinator.
 * Threads: any handler thread, the txnmarker thread, main at load;
 * creation is serialised by the coordinator's topic lock, which
 * samsa_coordtopic_ensure takes.
 */
#ifndef SAMSA_BROKER_COORDTOPIC_H
#define SAMSA_BROKER_COORDTOPIC_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>
#include "config/config_kraft.h"
#include "log/logmgr.h"
#include "meta/controller/controller.h"
#include "meta/image.h"
#include "meta/meta.h"
#include "util/buf.h"

/* One record of a coordinator's batch: key and value (tombstone: a null
 * value). */
typedef struct samsa_coordtopic_rec {
    samsa_buf_t  key;
    samsa_buf_t  value;
    bool         tombstone;
} samsa_coordtopic_rec_t;

/* How samsa_coordtopic_append writes its batch. */
typedef struct samsa_coordtopic_append {
    int64_t      producer_id;    /* >= 0: a transactional batch of this
                                    producer id and epoch; -1: not */
    int16_t      producer_epoch;
    bool         durable;        /* fdatasync the batch before returning */
    const char  *fault_before;   /* util/fault.h points just before and */
    const char  *fault_after;    /* after the log append, or NULL */
} samsa_coordtopic_append_t;

/* Create the internal topic name (nparts partitions, replication factor
 * 1, configs) unless the latest image has it; ctrl NULL creates nothing.
 * On a KRaft cluster node (kraft->is_cluster; kraft may be NULL: a single
 * node) that is not the active controller, node_id sends CreateTopics to
 * the active controller's CONTROLLER listener (broker/forward.h); the
 * topic counts as there once this node's image has it (until then
 * COORDINATOR_NOT_AVAILABLE, which clients retry).
 * One creation at a time, under lock; once the topic exists, *ready is
 * set (release), for the caller to skip the call next time.
 * SAMSA_ERR_NONE when it exists now, else COORDINATOR_NOT_AVAILABLE (the
 * reason is logged).  @thread any but the controller's  @locks takes lock */
SAMSA_MUST_CHECK samsa_err_t samsa_coordtopic_ensure(
    samsa_meta_t *meta, samsa_controller_t *ctrl,
    const samsa_config_kraft_t *kraft, int32_t node_id, const char *name,
    int32_t nparts, const samsa_image_config_t *configs, size_t nconfigs,
    pthread_mutex_t *lock, _Atomic bool *ready);

/* Kafka's isCoordinatorForGroup / isCoordinatorForTransactionalId: may
 * node_id coordinate the keys of partition of the internal topic name?
 * On a single node (kraft NULL or not a cluster) always SAMSA_ERR_NONE,
 * as every partition is local.  On a cluster node NONE when img names
 * node_id the partition's leader, else NOT_COORDINATOR (also while the
 * topic does not exist: FindCoordinator creates it).  img NULL: the
 * latest. */
SAMSA_MUST_CHECK samsa_err_t samsa_coordtopic_owner_check(
    samsa_meta_t *meta, const samsa_image_t *img,
    const samsa_config_kraft_t *kraft, int32_t node_id, const char *name,
    int32_t partition);

/* Does img name node_id the leader of partition of topic name (false when
 * either is not there)? */
bool samsa_coordtopic_leads(const samsa_image_t *img, const char *name,
                            int32_t partition, int32_t node_id);

/* Append n records as one uncompressed batch, stamped now, to partition
 * of the internal topic name, at its leader epoch; returns once they are
 * in the log (and on disk with how->durable).  Nothing to do for n 0.
 * COORDINATOR_NOT_AVAILABLE when the topic or the partition is not here
 * (the log never returns that code), else the partition log's error,
 * which the caller logs and maps to its coordinator's answer, as Kafka's
 * differ.  @thread any handler, the txnmarker, main at load */
SAMSA_MUST_CHECK samsa_err_t samsa_coordtopic_append(
    samsa_meta_t *meta, samsa_logmgr_t *logs, const char *name,
    int32_t partition, const samsa_coordtopic_rec_t *recs, size_t n,
    const samsa_coordtopic_append_t *how);

#endif /* SAMSA_BROKER_COORDTOPIC_H */
