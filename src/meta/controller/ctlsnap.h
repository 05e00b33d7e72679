/*
 * meta/controller/ctlsnap.h - the controller's records as the metadata
 * quorum carries them (u32 length, then one framed MetadataRecords
 * record, per record), for quorum entries and for snapshots, and the
 * snapshot writer: a whole image as records, as Kafka's ImageWriter
 * writes it (FeatureLevelRecord per feature, TopicRecord and its
 * PartitionRecords and ConfigRecords per topic, ConfigRecord per other
 * resource's key, ProducerIdsRecord, RegisterBrokerRecord per broker).
 * Client quotas, which the image keeps as the configs of a resource of
 * type SAMSA_IMAGE_RESOURCE_CLIENT_QUOTA, are written as those
 * ConfigRecords (replay restores them as they were); SCRAM credentials
 * (SAMSA_IMAGE_RESOURCE_SCRAM) as UserScramCredentialRecords, as Kafka
 * writes them; brokers keep what
 * the image has of them (no endpoints or features).
 * Threads: any (pure functions of their arguments).
 */
#ifndef SAMSA_META_CONTROLLER_CTLSNAP_H
#define SAMSA_META_CONTROLLER_CTLSNAP_H

#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>
#include "meta/image.h"
#include "util/buf.h"

/* Append rec to out (u32 length + framed record). */
void samsa_ctlsnap_add(samsa_buf_t *out,
                       const samsa_MetadataRecords_any_t *rec);

/* Append every record of img to out; *count gets how many. */
void samsa_ctlsnap_write(const samsa_image_t *img, samsa_buf_t *out,
                         uint32_t *count);

/* Replay the records of data[0..len) into delta: max records at most
 * (UINT32_MAX: up to the end), the i-th at offset first + i, or every one
 * at first when same_offset.  SAMSA_ERR__BAD_MSG (errstr says which) if a
 * record does not decode, or replay's error. */
SAMSA_MUST_CHECK samsa_err_t samsa_ctlsnap_replay(
    samsa_image_delta_t *delta, const uint8_t *data, size_t len,
    uint32_t max, int64_t first, bool same_offset, char *errstr,
    size_t errstr_size);

#endif /* SAMSA_META_CONTROLLER_CTLSNAP_H */
