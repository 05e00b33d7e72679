/*
 * meta/image_stats.h - what an image says about a node's partitions and
 * the cluster's, counted as Kafka's ReplicaManager and controller gauges
 * count them (UnderReplicatedPartitions, LeaderCount, OfflinePartitions-
 * Count, ...): `/metrics` and the CLI read them.
 * Threads: any (pure functions over an image the caller holds).
 */
#ifndef SAMSA_META_IMAGE_STATS_H
#define SAMSA_META_IMAGE_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "meta/image.h"

/* Counts of one image as one node sees it. */
typedef struct samsa_image_stats {
    /* the node's own (Kafka's ReplicaManager gauges) */
    size_t  partitions;          /* a replica on the node (PartitionCount) */
    size_t  leaders;             /* led by the node (LeaderCount) */
    size_t  under_replicated;    /* led, ISR short of the replication
                                    factor (UnderReplicatedPartitions) */
    size_t  under_min_isr;       /* led, |ISR| < min.insync.replicas
                                    (UnderMinIsrPartitionCount) */
    size_t  at_min_isr;          /* led, |ISR| = min.insync.replicas
                                    (AtMinIsrPartitionCount) */
    /* the whole cluster (Kafka's controller gauges) */
    size_t  topics;              /* GlobalTopicCount */
    size_t  global_partitions;   /* GlobalPartitionCount */
    size_t  offline;             /* no leader (OfflinePartitionsCount) */
    size_t  preferred_imbalance; /* led by another than the first replica
                                    (PreferredReplicaImbalanceCount) */
    size_t  fenced_brokers;      /* FencedBrokerCount */
    size_t  active_brokers;      /* unfenced (ActiveBrokerCount) */
} samsa_image_stats_t;

/* A partition's replication factor as Kafka counts it for under-
 * replication: its replicas less those a reassignment is adding. */
int32_t samsa_image_partition_rf(const samsa_image_partition_t *p);

/* min.insync.replicas of topic t: its override when it is a valid
 * number >= 1, else dflt (the broker's). */
int32_t samsa_image_topic_min_isr(const samsa_image_topic_t *t,
                                  int32_t dflt);

/* Does node_id lead p with an ISR short of its replication factor?
 * (Kafka's Partition.isUnderReplicated.) */
bool samsa_image_partition_under_replicated(const samsa_image_partition_t *p,
                                            int32_t node_id);

/* Count img for node_id into *out; dflt_min_isr is the broker's
 * min.insync.replicas. */
void samsa_image_stats(const samsa_image_t *img, int32_t node_id,
                       int32_t dflt_min_isr, samsa_image_stats_t *out);

#endif /* SAMSA_META_IMAGE_STATS_H */
