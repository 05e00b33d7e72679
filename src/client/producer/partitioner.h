/*
 * client/producer/partitioner.h - how send() picks a partition: Java's
 * Utils.murmur2 for keyed records (toPositive(murmur2(key)) % partitions,
 * bit-identical), and the built-in uniform sticky partitioner of KIP-794
 * for the rest: stick to one partition until about batch.size bytes went
 * to it (2 x batch.size at most; batch.size once its last batch is full),
 * then move on.  With adaptive partitioning the next partition is drawn
 * with weights that favour short queues (the accumulator's ready() feeds
 * queue sizes and leaves out partitions whose leader could not be drained
 * for partitioner.availability.timeout.ms).  With equal load the next
 * partition comes from a shuffled deck (each partition once per round),
 * which keeps keyless traffic uniform within one sticky run.
 * Threads: samsa_sticky_t is shared by app threads (send) and the sender
 * (load stats); one small mutex inside.  Lock order: accumulator deque
 * lock, then the sticky lock.
 */
#ifndef SAMSA_CLIENT_PRODUCER_PARTITIONER_H
#define SAMSA_CLIENT_PRODUCER_PARTITIONER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Java's Utils.murmur2 (seed 0x9747b28c), its int result as bits. */
int32_t samsa_murmur2(const void *data, size_t len);

/* toPositive(murmur2(key)) % npartitions, as Java's BuiltInPartitioner
 * .partitionForKey.  npartitions > 0. */
int32_t samsa_partition_for_key(const void *key, size_t len,
                                int32_t npartitions);

/* What the partitioner knows of a topic: its partition count and the
 * partitions whose leader is known ("available"), ascending. */
typedef struct samsa_partview {
    int32_t         npartitions;
    const int32_t  *avail;
    int32_t         navail;
} samsa_partview_t;

typedef struct samsa_sticky samsa_sticky_t;

/* The current sticky choice; gen tells whether it is still current. */
typedef struct samsa_sticky_pick {
    int32_t   partition;
    uint64_t  gen;
} samsa_sticky_pick_t;

samsa_sticky_t *samsa_sticky_new(size_t batch_size, uint64_t seed);
void samsa_sticky_free(samsa_sticky_t *st);

/* The current sticky partition, choosing one if there is none
 * (peekCurrentPartitionInfo).  view->npartitions > 0. */
samsa_sticky_pick_t samsa_sticky_peek(samsa_sticky_t *st,
                                      const samsa_partview_t *view);

/* True if another thread moved the sticky partition since pick was taken
 * (isPartitionChanged): the caller retries with a new peek. */
bool samsa_sticky_changed(samsa_sticky_t *st, samsa_sticky_pick_t pick);

/* Count appended bytes against pick and switch partitions when due:
 * produced >= batch.size and enable_switch (the partition's last batch is
 * full), or produced >= 2 x batch.size (updatePartitionInfo). */
void samsa_sticky_update(samsa_sticky_t *st, samsa_sticky_pick_t pick,
                         size_t appended, bool enable_switch,
                         const samsa_partview_t *view);

/* Adaptive partitioning input (updatePartitionLoadStats): queue sizes (in
 * batches) of the n partitions partition_ids[] that are available, out of
 * total partitions considered.  NULL, or all-equal sizes with nothing left
 * out (n == total), mean "uniform"; a single partition (total < 2) too.
 * The arrays are copied. */
void samsa_sticky_load_stats(samsa_sticky_t *st, const int32_t *queue_sizes,
                             const int32_t *partition_ids, int32_t n,
                             int32_t total);

#endif /* SAMSA_CLIENT_PRODUCER_PARTITIONER_H */
