/*
 * broker/group/consumer_group.h - consumer-type groups (KIP-848, Kafka's ConsumerGroup and
 * the consumer half of GroupMetadataManager) beside the classic groups of
 * broker/group/grp.h, in the same table: a samsa_grp_t whose cg is set.  Members
 * heartbeat (ConsumerGroupHeartbeat); the coordinator keeps the group
 * epoch, computes the target assignment with a server-side assignor
 * (broker/group/consumer_group_assign.h) and reconciles each member towards it: a
 * partition reaches its new owner only once the previous owner stopped
 * reporting it (or was fenced).  Session and rebalance (revocation)
 * timeouts are delayed operations in the coordinator's heartbeat
 * purgatory, run under the group's lock.
 *
 * Persistent as in Kafka 4: the group's epoch, subscribed topics,
 * members, target and current assignments are records in
 * __consumer_offsets (broker/group/consumer_group_store.c), written before a heartbeat is
 * answered and read back at start, so members keep their epochs across a
 * restart; their session timers start again at load.
 *
 * Threads: any handler thread; everything under the group's lock (the
 * lock order of broker/group/grp.h).
 */
#ifndef SAMSA_BROKER_GROUP_CONSUMER_GROUP_H
#define SAMSA_BROKER_GROUP_CONSUMER_GROUP_H

#include "broker/group/grp.h"
#include "proto/gen/ConsumerGroupDescribe.h"
#include "proto/gen/ConsumerGroupHeartbeat.h"
#include "util/arena.h"

/* Kafka's ConsumerGroupHeartbeat handling: join (epoch 0), heartbeat,
 * leave (-1), static temporary leave (-2).  out (initialised by the
 * caller) gets the error and message, or the member's id, epoch,
 * heartbeat interval and, when it changed or was asked for in full, its
 * assignment; everything it points to lives in arena. */
void samsa_consumer_group_heartbeat(samsa_grpcoord_t *gc, int16_t version,
                          const samsa_ConsumerGroupHeartbeatRequest_t *rq,
                          samsa_slice_t client_id, samsa_slice_t client_host,
                          samsa_arena_t *arena,
                          samsa_ConsumerGroupHeartbeatResponse_t *out);

/* One group of ConsumerGroupDescribe into out (initialised by the
 * caller; strings and arrays in arena): GROUP_ID_NOT_FOUND for an unknown
 * or classic group. */
void samsa_consumer_group_describe(samsa_grpcoord_t *gc, samsa_slice_t group_id,
                         samsa_arena_t *arena, samsa_CGDescribedGroup_t *out);

/* OffsetFetch v9's member check for a consumer group: NONE when group_id
 * is not a consumer group or for an admin fetch (member id null, or "" with
 * epoch -1), else UNKNOWN_MEMBER_ID / STALE_MEMBER_EPOCH as Kafka's
 * ConsumerGroup.validateOffsetFetch. */
samsa_err_t samsa_consumer_group_fetch_check(samsa_grpcoord_t *gc,
                                   samsa_slice_t group_id,
                                   samsa_slice_t member_id,
                                   int32_t member_epoch);

/* The consumer side's table for samsa_grpcoord_conf_t.consumer_ops. */
extern const samsa_grp_consumer_ops_t samsa_consumer_group_ops;

#endif /* SAMSA_BROKER_GROUP_CONSUMER_GROUP_H */
