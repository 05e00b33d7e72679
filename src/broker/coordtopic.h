/*
 * broker/coordtopic.h - the internal topic a coordinator keeps its state
 * in: __consumer_offsets for the group coordinator (broker/group/),
 * __transaction_state for the transaction coordinator (broker/txn/).
 * Both create it on first use through the controller, as Kafka's
 * AutoTopicCreationManager does for internal topics, and append to the
 * partition their key hashes to.  What differs (name, partitions,
 * configs, what goes in the records) stays with each coordinator.
 * Threads: any handler thread, the txnmarker thread, main at load; the
 * caller serialises creation (each coordinator has a topic lock).
 */
#ifndef SAMSA_BROKER_COORDTOPIC_H
#define SAMSA_BROKER_COORDTOPIC_H

#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>
#include "log/logmgr.h"
#include "meta/controller/controller.h"
#include "meta/image.h"
#include "meta/meta.h"

/* Create the internal topic name (nparts partitions, replication factor
 * 1, configs) unless the latest image has it; ctrl NULL creates nothing.
 * SAMSA_ERR_NONE when it exists now, else COORDINATOR_NOT_AVAILABLE (the
 * reason is logged).  @thread any but the controller's */
SAMSA_MUST_CHECK samsa_err_t samsa_coordtopic_create(
    samsa_meta_t *meta, samsa_controller_t *ctrl, const char *name,
    int32_t nparts, const samsa_image_config_t *configs, size_t nconfigs);

/* The partition log of partition of the internal topic name (a reference:
 * samsa_plog_unref it) and its leader epoch, for an append; NULL and
 * COORDINATOR_NOT_AVAILABLE when the topic or the partition is not
 * there. */
SAMSA_MUST_CHECK samsa_err_t samsa_coordtopic_plog(
    samsa_meta_t *meta, samsa_logmgr_t *logs, const char *name,
    int32_t partition, samsa_plog_t **plog, int32_t *leader_epoch);

#endif /* SAMSA_BROKER_COORDTOPIC_H */
