/*
 * meta/image.h - the metadata image: one immutable snapshot of the cluster
 * metadata, KRaft's MetadataImage simplified for one node.  It holds the
 * topics (name, topic id, partitions, per-topic config overrides), the
 * dynamic configs of other resources (broker configs, for later), the
 * finalized features (metadata.version), the registered brokers (with
 * their endpoints, features and fenced state) and the producer-id
 * high-water mark, as of one offset of the metadata log.
 *
 * An image is built by replaying metadata records into a delta on top of
 * the previous image (samsa_image_delta_*), as Kafka's MetadataDelta does;
 * images share unchanged topics (each topic is itself immutable and
 * counted).  Images are published by meta/meta.h and read by handler
 * threads through a counted reference.
 *
 * Threads: an image is const after samsa_image_delta_apply() returns it;
 * any thread holding a reference may read it, without locks.  A delta
 * belongs to the one thread building it.
 * Ownership: each reference is released with samsa_image_put(); the last
 * one frees the image (and the topics no other image shares).  Everything
 * reachable from an image (topics, names, configs) lives as long as the
 * reference it was reached through.
 */
#ifndef SAMSA_META_IMAGE_H
#define SAMSA_META_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>
#include "meta/acl.h"
#include "meta/metaprops.h"             /* SAMSA_UUID_STR_SIZE */
#include "net/scram.h"
#include "proto/gen/MetadataRecords.h"
#include "proto/types.h"

/* metadata.version (Kafka's MetadataVersion feature level) written by a
 * first start: 3.3-IV3, the oldest level Kafka 4 reads, whose record
 * versions are the ones Samsa writes (PartitionRecord v0, ...). */
#define SAMSA_META_METADATA_VERSION       7
#define SAMSA_META_METADATA_VERSION_NAME  "metadata.version"

/* Kafka's ConfigResource.Type ids, as ConfigRecord.ResourceType. */
#define SAMSA_CONFIG_RESOURCE_TOPIC   2
#define SAMSA_CONFIG_RESOURCE_BROKER  4

/* Not a ConfigResource type: the image keeps each client quota entity's
 * quotas (ClientQuotaRecord) as a resource of this type named by its
 * samsa_qentity_key (meta/qentity.h), values as decimal strings. */
#define SAMSA_IMAGE_RESOURCE_CLIENT_QUOTA  100
/* Not one either: each user's SCRAM credentials (UserScramCredentialRecord)
 * as a resource of this type named by the user, one config per mechanism
 * ("SCRAM-SHA-256") whose value is samsa_image_scram_format's text. */
#define SAMSA_IMAGE_RESOURCE_SCRAM  101

/* One config override: a key and its value, both NUL-terminated. */
typedef struct samsa_image_config {
    const char  *name;
    const char  *value;
} samsa_image_config_t;

/* One partition.  [const] every field. */
typedef struct samsa_image_partition {
    int32_t         partition;          /* its index in the topic */
    int32_t         leader;             /* node id; -1: no leader */
    int32_t         leader_epoch;
    int32_t         partition_epoch;    /* bumped by every change */
    const int32_t  *replicas;           /* preferred order */
    int32_t         nreplicas;
    const int32_t  *isr;
    int32_t         nisr;
    /* a reassignment in progress (KIP-455): the replicas being added and
     * removed, both among replicas; none (0) when there is none */
    const int32_t  *adding;
    int32_t         nadding;
    const int32_t  *removing;
    int32_t         nremoving;
} samsa_image_partition_t;

/* One topic.  [const] every field; callers read, never write. */
typedef struct samsa_image_topic {
    const char                     *name;          /* NUL-terminated */
    size_t                          name_len;
    samsa_uuid_t                    id;            /* never zero */
    const samsa_image_partition_t  *partitions;    /* [i].partition == i */
    int32_t                         npartitions;
    const samsa_image_config_t     *configs;       /* overrides (Kafka's
                                                      DYNAMIC_TOPIC_CONFIG),
                                                      sorted by name */
    size_t                          nconfigs;
    bool                            is_internal;   /* __consumer_offsets,
                                                      __transaction_state */
} samsa_image_topic_t;

/* One endpoint of a registered broker (RegisterBrokerRecord's EndPoints):
 * where clients reach it on one listener.  [const] every field. */
typedef struct samsa_image_endpoint {
    const char  *listener;              /* listener name, as registered */
    const char  *host;
    uint16_t     port;
    int16_t      security_protocol;     /* Kafka's SecurityProtocol id:
                                           0 PLAINTEXT, 1 SSL, ... */
} samsa_image_endpoint_t;

/* One feature range a broker supports (RegisterBrokerRecord's Features). */
typedef struct samsa_image_broker_feature {
    const char  *name;
    int16_t      min_version;
    int16_t      max_version;
} samsa_image_broker_feature_t;

/* One registered broker (RegisterBrokerRecord, then FenceBrokerRecord,
 * UnfenceBrokerRecord and BrokerRegistrationChangeRecord change its state;
 * UnregisterBrokerRecord removes it).  [const] every field. */
typedef struct samsa_image_broker {
    int32_t                               id;
    int64_t                               epoch;
    samsa_uuid_t                          incarnation_id;
    bool                                  fenced;
    bool                                  in_controlled_shutdown;
    const char                           *rack;         /* NULL: none */
    const samsa_image_endpoint_t         *endpoints;    /* registered
                                                           order */
    size_t                                nendpoints;
    const samsa_image_broker_feature_t   *features;
    size_t                                nfeatures;
} samsa_image_broker_t;

typedef struct samsa_image samsa_image_t;
typedef struct samsa_image_delta samsa_image_delta_t;

/* ---- reading an image (any thread holding a reference) */

/* A new, empty image (offset -1, no features), with one reference. */
samsa_image_t *samsa_image_new_empty(void);

/* Take one more reference (atomic).  @returns img */
samsa_image_t *samsa_image_ref(samsa_image_t *img);

/* Release one reference; the last one frees the image.  NULL is a no-op. */
void samsa_image_put(samsa_image_t *img);

/* Offset of the last metadata log record the image includes; -1: none. */
int64_t samsa_image_offset(const samsa_image_t *img);

/* The topic of that name (len bytes, no NUL needed), or NULL. */
const samsa_image_topic_t *samsa_image_topic_find(const samsa_image_t *img,
                                                  const char *name,
                                                  size_t len);

/* The topic with that id, or NULL (also for the zero id). */
const samsa_image_topic_t *samsa_image_topic_find_id(
    const samsa_image_t *img, samsa_uuid_t id);

/* Topics in name order (strcmp): i from 0 to samsa_image_topic_count()-1;
 * this is the order of a Metadata request for all topics. */
size_t samsa_image_topic_count(const samsa_image_t *img);
const samsa_image_topic_t *samsa_image_topic_at(const samsa_image_t *img,
                                                size_t i);

/* The value of a topic override, or NULL if the topic has none for name. */
const char *samsa_image_topic_config(const samsa_image_topic_t *topic,
                                     const char *name);

/* Dynamic configs of a non-topic resource (type SAMSA_CONFIG_RESOURCE_*;
 * BROKER: name "" is the cluster default, "<node id>" one node), sorted by
 * name; *n gets their count (0 and NULL when there are none). */
const samsa_image_config_t *samsa_image_resource_configs(
    const samsa_image_t *img, int8_t type, const char *name, size_t *n);

/* Every non-topic resource (dynamic broker configs and client quota
 * entities), i from 0 to samsa_image_resource_count()-1, in no order;
 * an entity whose quotas were all removed stays with *n == 0. */
size_t samsa_image_resource_count(const samsa_image_t *img);
const samsa_image_config_t *samsa_image_resource_at(const samsa_image_t *img,
                                                    size_t i, int8_t *type,
                                                    const char **name,
                                                    size_t *n);

/* The client quota key (producer_byte_rate, ...) of the entity whose
 * samsa_qentity_key is entity_key: true and *value if set. */
bool samsa_image_client_quota(const samsa_image_t *img,
                              const char *entity_key, const char *key,
                              double *value);

/* The SCRAM credential of user for mech: true and *cred filled if the
 * image has one. */
bool samsa_image_scram_credential(const samsa_image_t *img, const char *user,
                                  samsa_scram_mech_t mech,
                                  samsa_scram_cred_t *cred);

/* A credential as the image keeps it: "ITERATIONS,SALT,STORED,SERVER"
 * (base64) into out (at least SAMSA_IMAGE_SCRAM_TEXT bytes); and back
 * (false for text that is not that). */
#define SAMSA_IMAGE_SCRAM_TEXT  512
void samsa_image_scram_format(const samsa_scram_cred_t *cred, char *out,
                              size_t size);
bool samsa_image_scram_parse(const char *text, samsa_scram_mech_t mech,
                             samsa_scram_cred_t *cred);

/* Finalized level of a feature ("metadata.version"); 0 when not set. */
int16_t samsa_image_feature_level(const samsa_image_t *img,
                                  const char *name);

/* Finalized features i from 0 to samsa_image_feature_count()-1, by name. */
size_t samsa_image_feature_count(const samsa_image_t *img);
const char *samsa_image_feature_at(const samsa_image_t *img, size_t i,
                                   int16_t *level);

/* The registered broker with this id, or NULL. */
const samsa_image_broker_t *samsa_image_broker_find(const samsa_image_t *img,
                                                    int32_t id);

/* Registered brokers (fenced ones too) in id order: i from 0 to
 * samsa_image_broker_count()-1. */
size_t samsa_image_broker_count(const samsa_image_t *img);
const samsa_image_broker_t *samsa_image_broker_at(const samsa_image_t *img,
                                                  size_t i);

/* Is id one of the n broker ids of ids (a partition's replicas, ISR,
 * adding or removing list)? */
bool samsa_image_ids_has(const int32_t *ids, int32_t n, int32_t id);

/* The broker's endpoint for listener (case-insensitive, as Kafka's
 * ListenerName.normalised), or NULL when it has none by that name. */
const samsa_image_endpoint_t *samsa_image_broker_endpoint(
    const samsa_image_broker_t *broker, const char *listener);

/* First producer id of the next block to hand out (ProducerIdsRecord's
 * NextProducerId); 0 before any block was allocated. */
int64_t samsa_image_next_producer_id(const samsa_image_t *img);

/* The ACL bindings (AccessControlEntryRecord, meta/acl.h); NULL when
 * there are none (the acl functions read NULL as an empty set). */
const samsa_acl_set_t *samsa_image_acls(const samsa_image_t *img);

/* ---- building images (the one writer thread) */

/* A delta on top of base (which it references until freed). */
samsa_image_delta_t *samsa_image_delta_new(samsa_image_t *base);

/* Apply one record read at (or about to be written at) offset.  Records
 * that contradict the image (a PartitionRecord of an unknown topic id, a
 * second TopicRecord for a name, a fence, unfence, change or unregister
 * of a broker not registered or registered with another epoch, as Kafka's
 * ClusterDelta refuses them...) fail with SAMSA_ERR__BAD_MSG and errstr
 * saying which record and why; the delta is then unusable (free it).
 * Strings of rec are copied. */
SAMSA_MUST_CHECK samsa_err_t samsa_image_delta_replay(
    samsa_image_delta_t *delta, const samsa_MetadataRecords_any_t *rec,
    int64_t offset, char *errstr, size_t errstr_size);

/* The image base + every record replayed, with one reference.  The delta
 * stays valid: more records may follow and apply again. */
samsa_image_t *samsa_image_delta_apply(samsa_image_delta_t *delta);

/* Free the delta and its reference to base.  NULL is a no-op. */
void samsa_image_delta_free(samsa_image_delta_t *delta);

/* The delta's current topic with that name/id, or NULL: what the image
 * would say if applied now (for a writer checking a batch of changes). */
const samsa_image_topic_t *samsa_image_delta_topic_find(
    const samsa_image_delta_t *delta, const char *name, size_t len);
const samsa_image_topic_t *samsa_image_delta_topic_find_id(
    const samsa_image_delta_t *delta, samsa_uuid_t id);
/* The delta's current dynamic configs of a non-topic resource (NULL and
 * *n = 0 when it has none), sorted by name. */
const samsa_image_config_t *samsa_image_delta_resource_configs(
    const samsa_image_delta_t *delta, int8_t type, const char *name,
    size_t len, size_t *n);

/* The delta's current registration of broker id, or NULL (for a writer
 * whose batch fences or unfences brokers). */
const samsa_image_broker_t *samsa_image_delta_broker_find(
    const samsa_image_delta_t *delta, int32_t id);

/* The delta's current ACL bindings (NULL: none). */
const samsa_acl_set_t *samsa_image_delta_acls(
    const samsa_image_delta_t *delta);

/* The delta's topics, for scans: slot i from 0 to
 * samsa_image_delta_topic_slots()-1 holds a topic or NULL (removed). */
size_t samsa_image_delta_topic_slots(const samsa_image_delta_t *delta);
const samsa_image_topic_t *samsa_image_delta_topic_slot(
    const samsa_image_delta_t *delta, size_t i);

/* ---- topic ids */

/* A random topic id as Kafka's Uuid.randomUuid() makes one: version 4,
 * never the zero or Kafka's reserved ids (0..1 in the low bits with zero
 * high bits), never starting with '-' in text. */
samsa_uuid_t samsa_image_id_random(void);

/* Kafka's text form of an id: URL-safe base64 without padding, 22
 * characters and a NUL. */
void samsa_image_id_str(samsa_uuid_t id, char out[SAMSA_UUID_STR_SIZE]);

#endif /* SAMSA_META_IMAGE_H */
