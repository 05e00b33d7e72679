/*
 * meta/controller/placement.h - where the replicas of new partitions go:
 * Kafka's StripedReplicaPlacer (metadata/placement), the placer KRaft's
 * controller uses for CreateTopics and CreatePartitions without manual
 * assignments.  Racks are taken round-robin from a random starting rack
 * that advances by one per partition, brokers round-robin within each
 * rack; a leader (first replica) is always an unfenced broker, followers
 * are unfenced brokers before fenced ones, no broker appears twice in a
 * partition, and after as many partitions as there are unfenced brokers
 * the rack and broker orders are shuffled.  Same checks and messages as
 * Kafka's (INVALID_REPLICATION_FACTOR).
 *
 * Pure code: no threads, no I/O, no global state; the random source is the
 * caller's (samsa_placement_rng_* is a seedable one), so tests can make a
 * placement deterministic.
 * Threads: any; a placement and its random source belong to one thread.
 * Ownership: every parameter is borrowed; the caller owns the output.
 */
#ifndef SAMSA_META_CONTROLLER_PLACEMENT_H
#define SAMSA_META_CONTROLLER_PLACEMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>

/* One broker replicas may be placed on (Kafka's UsableBroker: registered,
 * not in controlled shutdown).  Ids are unique within one call. */
typedef struct samsa_placement_broker {
    int32_t      id;
    const char  *rack;                  /* NULL: none (Kafka's empty
                                           Optional, sorted first) */
    bool         fenced;
} samsa_placement_broker_t;

/* What to place (Kafka's PlacementSpec). */
typedef struct samsa_placement_spec {
    int32_t  start_partition;           /* index of the first new partition;
                                           the striped placer, like Kafka's,
                                           does not depend on it */
    int32_t  num_partitions;            /* >= 0 */
    int32_t  replication_factor;
} samsa_placement_spec_t;

/* A random source: a uniform value in [0, bound), bound > 0 (Java's
 * Random.nextInt(bound) in Kafka's placer). */
typedef struct samsa_placement_rand {
    uint32_t  (*next)(void *ctx, uint32_t bound);
    void       *ctx;
} samsa_placement_rand_t;

/* A seedable generator (splitmix64) usable as a samsa_placement_rand_t:
 * { samsa_placement_rng_next, &rng }.  The same seed gives the same
 * sequence on every platform. */
typedef struct samsa_placement_rng {
    uint64_t  state;
} samsa_placement_rng_t;

void samsa_placement_rng_seed(samsa_placement_rng_t *rng, uint64_t seed);

/* @returns a value in [0, bound); ctx is a samsa_placement_rng_t. */
uint32_t samsa_placement_rng_next(void *ctx, uint32_t bound);

/* Kafka's checks of a placement, in the placer's order, without placing:
 * INVALID_REPLICATION_FACTOR if the replication factor is not positive
 * ("Invalid replication factor N: the replication factor must be
 * positive."), no broker is unfenced ("All brokers are currently
 * fenced.") or there are fewer brokers than replicas ("The target
 * replication factor of N cannot be reached because only M broker(s) are
 * registered."), with that message in errstr (Kafka's exception text; its
 * controller prefixes "Unable to replicate the partition N time(s): " for
 * CreateTopics). */
SAMSA_MUST_CHECK samsa_err_t samsa_placement_check(
    const samsa_placement_spec_t *spec,
    const samsa_placement_broker_t *brokers, size_t nbrokers,
    char *errstr, size_t errstr_size);

/* Place spec->num_partitions partitions over brokers (any order): the
 * replicas of new partition i (start_partition + i) are
 * replicas[i * rf .. i * rf + rf - 1], leader first.  replicas holds
 * num_partitions * replication_factor ids.  Fails as
 * samsa_placement_check() does, writing nothing. */
SAMSA_MUST_CHECK samsa_err_t samsa_placement_place(
    const samsa_placement_spec_t *spec,
    const samsa_placement_broker_t *brokers, size_t nbrokers,
    const samsa_placement_rand_t *rnd, int32_t *replicas,
    char *errstr, size_t errstr_size);

#endif /* SAMSA_META_CONTROLLER_PLACEMENT_H */
