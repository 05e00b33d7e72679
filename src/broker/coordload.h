/*
 * broker/coordload.h - replaying a coordinator's internal topic at start
 * (__consumer_offsets for broker/group/, __transaction_state for
 * broker/txn/): every partition's batches in order, compressed ones
 * skipped with a warning (the coordinators never write them), each
 * record of a data batch and each control batch handed to the
 * coordinator.  What the records mean stays with each coordinator.
 * Threads: main, at load.
 */
#ifndef SAMSA_BROKER_COORDLOAD_H
#define SAMSA_BROKER_COORDLOAD_H

#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>
#include "config/config_kraft.h"
#include "log/logmgr.h"
#include "meta/meta.h"
#include "proto/batch.h"

typedef struct samsa_coordload_ops {
    /* A record of an uncompressed data batch of partition p. */
    void (*record)(void *ctx, int32_t p, const samsa_batch_hdr_t *hdr,
                   const samsa_record_t *rec);
    /* An uncompressed control batch (size bytes at batch); NULL: skip. */
    void (*control)(void *ctx, int32_t p, const samsa_batch_hdr_t *hdr,
                    const uint8_t *batch, size_t size);
} samsa_coordload_ops_t;

/* How many partitions the latest image gives topic (0: not there). */
int32_t samsa_coordload_npartitions(samsa_meta_t *meta, const char *topic);

/* Replay partitions 0..np-1 of topic (those this broker has; on a KRaft
 * cluster node only those the image names node_id the leader of, as
 * samsa_coordtopic_owner_check), read chunk_bytes at a time, stopping at the first error: it is returned and
 * described in errstr. */
SAMSA_MUST_CHECK samsa_err_t samsa_coordload_scan(
    samsa_logmgr_t *logs, samsa_meta_t *meta,
    const samsa_config_kraft_t *kraft, int32_t node_id, const char *topic,
    int32_t np, int32_t chunk_bytes,
    const samsa_coordload_ops_t *ops, void *ctx, char *errstr,
    size_t errstr_size);

#endif /* SAMSA_BROKER_COORDLOAD_H */
