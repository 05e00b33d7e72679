/*
 * meta/controller/controller_int.h - the operations the controller thread
 * runs on a batch (ctlbatch.h): controller.c calls them, ctltopics.c,
 * ctlconfigs.c, ctlquotas.c and ctlacls.c define them.  Private to
 * src/meta/controller/.  The operations see the batch and the image, never
 * the controller (its struct is controller.c's).
 * Threads: the controller thread.
 */
#ifndef SAMSA_META_CONTROLLER_CONTROLLER_INT_H
#define SAMSA_META_CONTROLLER_CONTROLLER_INT_H

#include <stdbool.h>

#include "meta/controller/controller.h"
#include "meta/controller/ctlbatch.h"
#include "meta/image.h"
#include "util/arena.h"

/* ctltopics.c: the topic operations' validation and records. */
void samsa_ctltopics_create(samsa_ctlbatch_t *b,
                            const samsa_controller_create_topics_t *req,
                            samsa_arena_t *arena,
                            samsa_controller_topic_result_t *results);
void samsa_ctltopics_delete(samsa_ctlbatch_t *b,
                            const samsa_controller_topic_ref_t *refs,
                            size_t n, const samsa_controller_quota_t *quota,
                            samsa_arena_t *arena,
                            samsa_controller_delete_result_t *results);
void samsa_ctltopics_partitions(samsa_ctlbatch_t *b,
                                const samsa_controller_new_partitions_t *t,
                                size_t n,
                                const samsa_controller_quota_t *quota,
                                samsa_arena_t *arena,
                                samsa_controller_result_t *results);
/* Kafka's validateManualPartitionAssignment of n replicas: NULL when
 * valid, else its message (in arena).  rf < 0: no replication factor to
 * match. */
const char *samsa_ctltopics_check_manual(samsa_ctlbatch_t *b,
                                         const int32_t *replicas, int32_t n,
                                         int32_t rf, samsa_arena_t *arena);

/* ctlconfigs.c: AlterConfigs and IncrementalAlterConfigs. */
void samsa_ctlconfigs_alter(samsa_ctlbatch_t *b,
                            const samsa_controller_alter_config_t *res,
                            size_t n, bool incremental, samsa_arena_t *arena,
                            samsa_controller_result_t *results);

/* ctlquotas.c: AlterClientQuotas. */
void samsa_ctlquotas_alter(samsa_ctlbatch_t *b,
                           const samsa_controller_quota_alter_t *entries,
                           size_t n, samsa_arena_t *arena,
                           samsa_controller_result_t *results);

/* ctlscram.c: AlterUserScramCredentials. */
void samsa_ctlscram_alter(samsa_ctlbatch_t *b,
                          const samsa_controller_scram_op_t *ops, size_t n,
                          samsa_arena_t *arena,
                          samsa_controller_result_t *results);
/* ctlacls.c: CreateAcls and DeleteAcls. */
void samsa_ctlacls_create(samsa_ctlbatch_t *b, const samsa_acl_t *acls,
                          size_t n, samsa_arena_t *arena,
                          samsa_controller_result_t *results);
void samsa_ctlacls_delete(samsa_ctlbatch_t *b,
                          const samsa_acl_filter_t *filters, size_t n,
                          samsa_arena_t *arena,
                          samsa_controller_acl_delete_result_t *results);

/* ctlbrokers.c: is id one of the n broker ids of ids (replicas, an
 * ISR)? */
bool samsa_ctlbrokers_has(const int32_t *ids, int32_t n, int32_t id);
/* ctlbrokers.c: Kafka's isActive for leader election: registered,
 * unfenced, not in controlled shutdown, as the batch so far says. */
bool samsa_ctlbrokers_active(const samsa_ctlbatch_t *b, int32_t id);
/* ctlbrokers.c: Kafka's effective unclean.leader.election.enable of t. */
bool samsa_ctlbrokers_unclean(const samsa_ctlbatch_t *b,
                              const samsa_image_topic_t *t);
/* ctlbrokers.c: broker registration; *epoch gets the broker epoch. */
void samsa_ctlbrokers_register(samsa_ctlbatch_t *b,
                               const samsa_controller_broker_reg_t *reg,
                               bool unfence, int64_t *epoch);
void samsa_ctlbrokers_fence(samsa_ctlbatch_t *b, int32_t broker_id,
                            int64_t broker_epoch, int8_t fenced);
/* Kafka's ClusterControlManager.checkBrokerEpoch: NONE when broker_id is
 * registered with broker_epoch, else STALE_BROKER_EPOCH. */
samsa_err_t samsa_ctlbrokers_check_epoch(samsa_ctlbatch_t *b,
                                         int32_t broker_id,
                                         int64_t broker_epoch);
void samsa_ctlbrokers_heartbeat(samsa_ctlbatch_t *b,
                                const samsa_controller_heartbeat_t *hb,
                                samsa_controller_heartbeat_result_t *res);
/* UnregisterBroker: *error gets NONE or BROKER_ID_NOT_REGISTERED. */
void samsa_ctlbrokers_unregister(samsa_ctlbatch_t *b, int32_t broker_id,
                                 samsa_err_t *error);

/* ElectLeaders (samsa_controller_elect_leaders's records). */
void samsa_ctlbrokers_elect_leaders(samsa_ctlbatch_t *b, int8_t type,
                                    const samsa_controller_elect_t *parts,
                                    size_t n, samsa_arena_t *arena,
                                    samsa_controller_elect_result_t *results);
/* The automatic leader balance (Kafka's
 * ReplicationControlManager.maybeBalancePartitionLeaders): a preferred
 * election of up to max partitions whose first replica does not lead but
 * is in the ISR and active.  Returns how many. */
size_t samsa_ctlbrokers_balance_leaders(samsa_ctlbatch_t *b, size_t max);

/* ctlisr.c: AlterPartition (samsa_controller_alter_partition's checks
 * and records).  @returns NONE or STALE_BROKER_EPOCH (nothing done). */
samsa_err_t samsa_ctlisr_alter(samsa_ctlbatch_t *b, int32_t broker_id,
                               int64_t broker_epoch,
                               const samsa_controller_isr_change_t *changes,
                               size_t n, samsa_arena_t *arena,
                               samsa_controller_isr_result_t *results);

/* ctlreassign.c: AlterPartitionReassignments (KIP-455), the records of
 * samsa_controller_alter_reassignments. */
void samsa_ctlreassign_alter(samsa_ctlbatch_t *b,
                             const samsa_controller_reassign_t *parts,
                             size_t n, samsa_arena_t *arena,
                             samsa_controller_result_t *results);
/* ctlreassign.c: Kafka's completeReassignmentIfNeeded for an ISR change
 * of partition of topic t to isr: when the partition is being reassigned
 * and isr holds every target replica, writes the completing
 * PartitionChangeRecord (replicas = target, ISR = isr minus the removed,
 * adding and removing cleared, a leader from the target when the current
 * one was removed) and returns true; false: nothing written. */
bool samsa_ctlreassign_complete(samsa_ctlbatch_t *b,
                                const samsa_image_topic_t *t,
                                int32_t partition, const int32_t *isr,
                                int32_t nisr);

#endif /* SAMSA_META_CONTROLLER_CONTROLLER_INT_H */
