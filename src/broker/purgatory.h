/*
 * broker/purgatory.h - delayed operations and the purgatory that holds them
 * (Kafka's DelayedOperation and DelayedOperationPurgatory): a request that
 * cannot be answered yet (a Fetch short of fetch.min.bytes, an acks=all
 * Produce, a JoinGroup waiting for members) parks a samsa_delayed_op_t,
 * watched under keys ("topic-partition", a group id) and timed by a timer
 * wheel.  Whoever changes what a key stands for calls
 * samsa_purgatory_check_and_complete(key); the reaper thread
 * ("reaper-<name>") expires operations whose deadline passes.
 *
 * Threads: any handler thread calls try_complete_else_watch and
 * check_and_complete concurrently; the reaper expires; the callbacks of one
 * op run one at a time under the op's lock (its own, or one given at init),
 * on whichever of those threads gets there.  on_complete runs exactly once
 * per op, on_expire at most once and only just before it.
 * Ownership: ops are embedded in the caller's objects and refcounted: the
 * creator holds one ref from init, the purgatory one per watch-list entry
 * and one while the op is timed; the last unref calls ops->free.
 * Lock order: op lock -> watcher shard lock; op lock -> timer wheel lock.
 * No lock is held while the purgatory calls back, except the op's own.
 */
#ifndef SAMSA_BROKER_PURGATORY_H
#define SAMSA_BROKER_PURGATORY_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/timerwheel.h"

typedef struct samsa_purgatory   samsa_purgatory_t;     /* opaque */
typedef struct samsa_delayed_op  samsa_delayed_op_t;

/* Kafka's {fetch,producer}.purgatory.purge.interval.requests default. */
#define SAMSA_PURGATORY_PURGE_INTERVAL_DEFAULT  1000

/* What a kind of delayed operation does.  Every callback gets the op and
 * runs with the op's lock held. */
typedef struct samsa_delayed_op_ops {
    /* Check whether the op can be completed now; if so call
     * samsa_delayed_op_force_complete and return its result, else return
     * false.  Never called once the op is completed.  Required. */
    bool (*try_complete)(samsa_delayed_op_t *op);
    /* Build and send the response: exactly once.  Required. */
    void (*on_complete)(samsa_delayed_op_t *op);
    /* The deadline passed (or the purgatory is shutting down); runs right
     * before on_complete.  May be NULL. */
    void (*on_expire)(samsa_delayed_op_t *op);
    /* Release the object holding op: the last ref is gone.  May be NULL. */
    void (*free)(samsa_delayed_op_t *op);
} samsa_delayed_op_ops_t;

/* One delayed operation, embedded in the caller's object.  Callers set it
 * up with samsa_delayed_op_init and read it through the functions below. */
struct samsa_delayed_op {
    const samsa_delayed_op_ops_t  *ops;         /* [const] */
    pthread_mutex_t               *lock;        /* [const] own_lock or the
                                                   caller's (a group's) */
    pthread_mutex_t                own_lock;    /* serialises callbacks */
    int64_t                        timeout_ms;  /* [const] */
    samsa_purgatory_t             *purg;        /* [const once watched] */
    _Atomic bool                   completed;   /* [atomic] set once */
    _Atomic uint32_t               refs;        /* [atomic] */
    samsa_timer_t                  timer;       /* armed while timed */
};

/* Set up op with one ref (the caller's).  timeout_ms counts from
 * samsa_purgatory_try_complete_else_watch.  lock: the lock the op's
 * callbacks run under; NULL for the op's own (Kafka's lockOpt).
 * @thread any */
void samsa_delayed_op_init(samsa_delayed_op_t *op,
                           const samsa_delayed_op_ops_t *ops,
                           int64_t timeout_ms, pthread_mutex_t *lock);

void samsa_delayed_op_ref(samsa_delayed_op_t *op);

/* Drop a ref; the last one destroys the op's own lock and calls
 * ops->free.  @thread any, holding no lock that free takes */
void samsa_delayed_op_unref(samsa_delayed_op_t *op);

/* Complete op if nobody has: stop its timer and call on_complete.  True if
 * this call completed it.  @locks op->lock held (inside try_complete, or
 * the caller's own lock)  @thread any, holding a ref */
bool samsa_delayed_op_force_complete(samsa_delayed_op_t *op);

bool samsa_delayed_op_is_completed(const samsa_delayed_op_t *op);

/* A purgatory whose reaper thread is "reaper-<name>" (cut to 15 chars),
 * purging completed ops from watch lists once more than purge_interval of
 * them may linger.  NULL if the thread cannot start.  @thread any */
samsa_purgatory_t *samsa_purgatory_new(const char *name,
                                       int32_t purge_interval);

/* Stop the reaper, then expire and complete every op still pending (each
 * request gets its answer: on_expire, on_complete), drop every ref the
 * purgatory holds and free it.  @thread no other thread uses purg any
 * more (handler pools stopped) */
void samsa_purgatory_free(samsa_purgatory_t *purg);

/* Try to complete op; if it cannot be yet, watch it under every key, try
 * once more (an event may have come between the first try and the
 * watches), and if still pending start its timer.  True if op is complete
 * on return.  Once per op.  The caller keeps its own ref and may drop it
 * at once.
 * @thread any, holding a ref  @locks op->lock taken */
bool samsa_purgatory_try_complete_else_watch(samsa_purgatory_t *purg,
                                             samsa_delayed_op_t *op,
                                             const char *const *keys,
                                             size_t nkeys);

/* Try to complete every op watched under key (after an append to that
 * partition, a group change...).  Returns how many this call completed.
 * @thread any  @locks none held by the caller that an op's callbacks take */
size_t samsa_purgatory_check_and_complete(samsa_purgatory_t *purg,
                                          const char *key);

/* Entries in all watch lists, completed ops not yet purged included
 * (Kafka's PurgatorySize).  @thread any */
size_t samsa_purgatory_watched(samsa_purgatory_t *purg);

/* Ops waiting on their timer (Kafka's NumDelayedOperations).  @thread any */
size_t samsa_purgatory_delayed(samsa_purgatory_t *purg);

/* "topic-partition", the key a partition's operations watch (Kafka's
 * TopicPartitionOperationKey). */
#define SAMSA_PURGATORY_TP_KEY_MAX 272
void samsa_purgatory_tp_key(char out[SAMSA_PURGATORY_TP_KEY_MAX],
                            const char *topic, size_t topic_len,
                            int32_t partition);

#endif /* SAMSA_BROKER_PURGATORY_H */
