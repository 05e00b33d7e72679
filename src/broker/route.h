/*
 * broker/route.h - which broker serves a partition, from the metadata
 * image alone (the image is the one source of brokers and leaders, as
 * Kafka's KRaftMetadataCache): the alive brokers a client is told about
 * on a listener (Metadata, DescribeCluster), and the leader check of the
 * partition APIs (Produce, Fetch, ListOffsets, DeleteRecords), with the
 * KIP-951 hint of the current leader for a NOT_LEADER_OR_FOLLOWER answer.
 * Threads: handler threads, each on its own request; the image is borrowed
 * for the call.
 * Ownership: every node and string handed out is copied into the caller's
 * arena, so answers outlive the image they were read from.
 */
#ifndef SAMSA_BROKER_ROUTE_H
#define SAMSA_BROKER_ROUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>
#include "meta/image.h"
#include "util/arena.h"

/* One broker as a client reaches it on one listener (Kafka's Node). */
typedef struct samsa_route_node {
    int32_t      id;
    const char  *host;                  /* in the arena */
    int32_t      port;
    const char  *rack;                  /* in the arena; NULL: none */
} samsa_route_node_t;

/* The leaders a response names in its NodeEndpoints (KIP-951), each once,
 * in the order first met.  Zero it to start; nodes live in the arena. */
typedef struct samsa_route_leaders {
    samsa_route_node_t  *nodes;
    size_t               n;
    size_t               cap;
} samsa_route_leaders_t;

/* Kafka's getAliveBrokerNodes: every registered broker that is unfenced
 * (fenced ones too if include_fenced) with an endpoint named listener
 * (case-insensitive), in id order, in *out (arena); returns how many.
 * Brokers without that listener are left out. */
size_t samsa_route_alive_nodes(const samsa_image_t *img, const char *listener,
                               bool include_fenced, samsa_arena_t *arena,
                               samsa_route_node_t **out);

/* Kafka's getAliveBrokerNode: true and *out if broker id is registered,
 * unfenced and has an endpoint on listener. */
bool samsa_route_alive_node(const samsa_image_t *img, int32_t id,
                            const char *listener, samsa_arena_t *arena,
                            samsa_route_node_t *out);

/* Add the node of broker id on listener to leaders, if it is alive and
 * not there already. */
void samsa_route_leaders_add(samsa_route_leaders_t *leaders,
                             const samsa_image_t *img, int32_t id,
                             const char *listener, samsa_arena_t *arena);

/* May node self serve partition p as its leader?  NONE when p's leader in
 * the image is self; else NOT_LEADER_OR_FOLLOWER (another node leads it,
 * or none does: Kafka's ReplicaManager answers a partition this node does
 * not lead with NOT_LEADER_OR_FOLLOWER either way, so that the client
 * refreshes its metadata).  On NOT_LEADER_OR_FOLLOWER *leader_id and
 * *leader_epoch get the image's leader (-1 when none) and its epoch, and
 * when leaders is not NULL the leader's node on listener, if alive, is
 * added to it (each id once). */
samsa_err_t samsa_route_check(const samsa_image_t *img,
                              const samsa_image_partition_t *p, int32_t self,
                              const char *listener, samsa_arena_t *arena,
                              samsa_route_leaders_t *leaders,
                              int32_t *leader_id, int32_t *leader_epoch);

/* Kafka's coordinator lookup (KafkaApis.getCoordinator): the leader of
 * partition of the internal topic (__consumer_offsets, __transaction_state)
 * in img, on listener, in *out.  SAMSA_ERR_NONE, or COORDINATOR_NOT_AVAILABLE
 * when the topic or partition is not in img, the partition has no leader
 * (-1), or the leader is not alive or has no endpoint on listener. */
SAMSA_MUST_CHECK samsa_err_t samsa_route_coordinator(
    const samsa_image_t *img, const char *topic, int32_t partition,
    const char *listener, samsa_arena_t *arena, samsa_route_node_t *out);

/* Kafka's Partition.checkCurrentLeaderEpoch: a request's CurrentLeaderEpoch
 * against the partition's leader epoch; -1 skips the check.
 * SAMSA_ERR_NONE, FENCED_LEADER_EPOCH (older) or UNKNOWN_LEADER_EPOCH
 * (newer). */
static inline samsa_err_t
samsa_route_check_leader_epoch(int32_t requested, int32_t current)
{
    if (requested < 0 || requested == current) {
        return SAMSA_ERR_NONE;
    }
    return requested < current ? SAMSA_ERR_FENCED_LEADER_EPOCH
                               : SAMSA_ERR_UNKNOWN_LEADER_EPOCH;
}

#endif /* SAMSA_BROKER_ROUTE_H */
