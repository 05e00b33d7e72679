/*
 * client/mdcache.h - the client's metadata cache, one for the producer and
 * the consumer (Kafka's Metadata): for each topic, its partition count,
 * leaders, topic id and whether it is internal, as an immutable refcounted
 * snapshot; the cluster (brokers, controller id, cluster id) as the last
 * answer gave it; when to ask again (on demand, after a retriable error,
 * and every metadata.max.age.ms).  The client that owns the cache builds
 * and sends the Metadata requests itself (what it asks for is its own).
 *
 * Threads: any; one mutex and condition variable inside; wake() and
 * nothing else is called out of it, never with the lock held.
 *  - producer: app threads wait (up to max.block.ms) for a topic's first
 *    metadata with samsa_mdcache_wait(); the sender thread sends the
 *    requests and installs the answers; the cache keeps the topics asked
 *    about (SAMSA_MDCACHE_ASKED).
 *  - consumer: the background thread installs answers while holding
 *    c->lock, and every reader holds c->lock, so the consumer reads
 *    borrowed snapshots (samsa_mdcache_peek*) that stay valid while it
 *    holds c->lock; the cache keeps every topic answered
 *    (SAMSA_MDCACHE_ANSWERED: a pattern subscription asks for all).
 */
#ifndef SAMSA_CLIENT_MDCACHE_H
#define SAMSA_CLIENT_MDCACHE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <samsa/errors.h>

#include "proto/gen/Metadata.h"
#include "client/netclient.h"
#include "proto/types.h"

/* One topic's metadata at one time.  [const] after creation. */
typedef struct samsa_mdtopic {
    _Atomic int   refs;             /* [atomic] */
    char         *name;
    samsa_err_t   err;              /* topic-level error, or NONE */
    int32_t       npartitions;
    int32_t      *leaders;          /* by partition; -1 unknown */
    int32_t      *avail;            /* partitions with a leader, ascending */
    int32_t       navail;
    bool          internal;
    samsa_uuid_t  id;               /* zero: unknown (Metadata before v10) */
} samsa_mdtopic_t;

/* One broker as the last answer gave it. */
typedef struct samsa_mdbroker {
    int32_t   node_id;
    char     *host;
    int32_t   port;
    char     *rack;                 /* NULL: none */
} samsa_mdbroker_t;

/* Which topics the cache keeps, and which topic errors make it ask again
 * soon (besides a partition without a leader, which always does). */
typedef enum samsa_mdcache_mode {
    /* the topics waited for (samsa_mdcache_wait); any topic error is
     * asked about again soon (auto-creation): the producer */
    SAMSA_MDCACHE_ASKED = 0,
    /* every topic an answer names; only LEADER_NOT_AVAILABLE is asked
     * about again soon (an unknown topic waits for metadata.max.age.ms):
     * the consumer */
    SAMSA_MDCACHE_ANSWERED,
} samsa_mdcache_mode_t;

typedef struct samsa_mdcache samsa_mdcache_t;

/* wake is called (any thread, no lock held) when an app thread needs an
 * update: the producer wakes its sender; NULL: nobody to wake. */
samsa_mdcache_t *samsa_mdcache_new(samsa_mdcache_mode_t mode,
                                   int64_t max_age_ms,
                                   void (*wake)(void *ctx), void *wake_ctx);
void samsa_mdcache_free(samsa_mdcache_t *mdc);

/* The topic's metadata with partition (or any, if partition < 0) known,
 * waiting up to max_wait_ms.  SAMSA_ERR__TIMED_OUT if it did not come in
 * time; a topic-level error that is not retriable (e.g.
 * INVALID_TOPIC_EXCEPTION) at once; SAMSA_ERR__SHUTDOWN once closed.
 * Release *out with samsa_mdtopic_unref().  @thread app */
SAMSA_MUST_CHECK samsa_err_t samsa_mdcache_wait(samsa_mdcache_t *mdc,
                                                const char *topic,
                                                int32_t partition,
                                                int64_t max_wait_ms,
                                                samsa_mdtopic_t **out);

void samsa_mdtopic_unref(samsa_mdtopic_t *t);

/* Fail waiters with SAMSA_ERR__SHUTDOWN from now on. */
void samsa_mdcache_close(samsa_mdcache_t *mdc);

/* Ask for an update at the next chance (errors naming stale leaders). */
void samsa_mdcache_request_update(samsa_mdcache_t *mdc);

/* Is an update asked for (samsa_mdcache_request_update, or a retriable
 * error in the last answer) and not yet sent? */
bool samsa_mdcache_update_requested(samsa_mdcache_t *mdc);

/* Is an update due (requested, or metadata.max.age.ms passed since the
 * last answer)?  Sets *next_ms to the time until the next one is due
 * otherwise.  In SAMSA_MDCACHE_ASKED mode never while no topic was asked
 * about (*next_ms = INT64_MAX).  @thread the one that sends */
bool samsa_mdcache_update_due(samsa_mdcache_t *mdc, int64_t now_ms,
                              int64_t *next_ms);

/* A Metadata request went out: what was requested is being answered.
 * @thread the one that sends */
void samsa_mdcache_update_sent(samsa_mdcache_t *mdc);

/* The topics to ask about (SAMSA_MDCACHE_ASKED): a NULL-terminated array
 * of copies, freed with samsa_mdcache_topics_free().  @thread sender */
char **samsa_mdcache_topics(samsa_mdcache_t *mdc, int32_t *n);
void samsa_mdcache_topics_free(char **topics);

/* Install a Metadata response (topics, brokers, controller, cluster id);
 * wakes waiters; bumps the generation.  @thread the one that sends */
void samsa_mdcache_update(samsa_mdcache_t *mdc,
                          const samsa_MetadataResponse_t *resp,
                          int64_t now_ms);

/* What samsa_mdcache_send() did. */
typedef enum samsa_mdcache_send {
    SAMSA_MDCACHE_NO_NODE = 0,      /* no node ready: nothing was done */
    SAMSA_MDCACHE_SEND_FAILED,      /* a request was built, not queued */
    SAMSA_MDCACHE_SENT,             /* cb gets the answer (opaque: the
                                       version, for samsa_mdcache_answer) */
} samsa_mdcache_send_t;

/* Ask the least loaded ready node of nc for Metadata (v1-12) about
 * names[0..n), or about every topic when n < 0; counts as
 * samsa_mdcache_update_sent() unless no node was ready.  @thread nc's */
samsa_mdcache_send_t samsa_mdcache_send(samsa_mdcache_t *mdc,
                                        samsa_netclient_t *nc,
                                        const char *const *names, int32_t n,
                                        bool allow_auto_create,
                                        samsa_nc_resp_fn *cb, void *ctx,
                                        int64_t now);

/* A Metadata answer came (err: the netclient's): decode body (of
 * version), tell nc where the brokers are and install it; on an error ask
 * again soon.  Returns the error, if any.  @thread nc's */
samsa_err_t samsa_mdcache_answer(samsa_mdcache_t *mdc, samsa_netclient_t *nc,
                                 samsa_err_t err, samsa_rd_t *body,
                                 int16_t version);

/* A Metadata request failed: try again soon.  @thread sender */
void samsa_mdcache_update_failed(samsa_mdcache_t *mdc);

/* Bumped by every update. */
uint64_t samsa_mdcache_gen(samsa_mdcache_t *mdc);

/* Leader of (topic, partition), -1 if unknown.  Matches
 * samsa_accum_leader_fn (ctx = the mdcache). */
int32_t samsa_mdcache_leader(void *mdc, const char *topic,
                             int32_t partition);

/* Borrowed reads, for a client that serialises samsa_mdcache_update()
 * with its readers under a lock of its own (the consumer's c->lock): the
 * snapshot stays valid until the next update.  NULL: not known (or not
 * answered yet). */
const samsa_mdtopic_t *samsa_mdcache_peek(samsa_mdcache_t *mdc,
                                          const char *topic, size_t len);
/* The number of topics kept, and the i-th one's snapshot (NULL: not
 * answered yet); in no particular order. */
int32_t samsa_mdcache_count(samsa_mdcache_t *mdc);
const samsa_mdtopic_t *samsa_mdcache_peek_at(samsa_mdcache_t *mdc,
                                             int32_t i);
/* The name of the answered topic with id, or NULL (zero id: NULL). */
const char *samsa_mdcache_topic_by_id(samsa_mdcache_t *mdc,
                                      samsa_uuid_t id);

/* The cluster as the last answer gave it, read at one time: the brokers
 * (a copy, *n of them, freed with samsa_mdcache_brokers_free()), the
 * controller id (-1: unknown) and the cluster id (a copy to samsa_free,
 * NULL: unknown). */
samsa_mdbroker_t *samsa_mdcache_cluster(samsa_mdcache_t *mdc, int32_t *n,
                                        int32_t *controller_id,
                                        char **cluster_id);
void samsa_mdcache_brokers_free(samsa_mdbroker_t *b, int32_t n);

/* Tell the network client where the answer's brokers are (the producer,
 * consumer and admin client all do, after each Metadata answer).
 * @thread the netclient's */
void samsa_mdcache_nodes_set(samsa_netclient_t *nc,
                             const samsa_MetadataResponse_t *resp);

/* While err is set (not SAMSA_ERR_NONE), samsa_mdcache_wait() fails with
 * it at once, waiters included: the producer's sender sets it when SASL
 * refuses the client (Java's Metadata.fatalError with an
 * AuthenticationException) and clears it once a connection
 * authenticates. */
void samsa_mdcache_set_error(samsa_mdcache_t *mdc, samsa_err_t err);

#endif /* SAMSA_CLIENT_MDCACHE_H */
