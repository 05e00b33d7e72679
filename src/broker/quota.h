/*
 * broker/quota.h - the client quota manager: Kafka's ClientQuotaManager
 * for the Produce and Fetch byte rates (with its default quota callback),
 * its ClientRequestQuotaManager for request time and its
 * ControllerMutationQuotaManager (KIP-599) for partition mutations, as one
 * manager with a quota type per Kafka manager.  Each type has one sensor
 * per quota entity and earns a request a throttle time by pushing the
 * sensor over the entity's quota:
 *
 *  - Produce, Fetch (producer_byte_rate, consumer_byte_rate): a
 *    util/qrate.h rate over quota.window.num windows of
 *    quota.window.size.seconds.
 *  - Request (request_percentage): the same rate of the time handler and
 *    network threads spend on a client's requests, as a percentage of one
 *    thread, its throttle time capped at one window.
 *  - Mutation (controller_mutation_rate): a util/tbucket.h token bucket
 *    (burst controller.quota.window.num *
 *    controller.quota.window.size.seconds * quota) of the partitions a
 *    client creates (CreateTopics, CreatePartitions) and deletes
 *    (DeleteTopics), and a util/qrate.h mutation rate over the same
 *    windows (the metric only).
 *
 * Which quota applies: the most specific of Kafka's eight levels that sets
 * the type's key, from user+client-id through user+default client, user,
 * default user+client-id, default user+default client, default user,
 * client-id, to default client-id.  The user is the name of the
 * request's principal (Kafka's session user: "alice" for User:alice,
 * "ANONYMOUS" on a listener without authentication, the certificate's
 * mapped name over mTLS), matched as it is against the quota entity's user
 * name (Kafka sanitizes both the same way).  The sensor is shared by all the clients the level
 * groups: a user-level quota by every client id of that user, a client-id
 * level one per client id (Kafka's metric tags).  Each type is enabled on
 * its own (Kafka's quotasEnabled, one per manager): while no entity in the
 * image sets the type's key, nothing is recorded under it.  A Produce,
 * Fetch or Request sensor exists for every client id seen while its type
 * is enabled (limit 0 when no level applies to it); a Mutation sensor only
 * once a quota applies to the client.
 *
 * A controller mutation request takes a samsa_quota_mutation_t (Kafka's
 * ControllerMutationQuota): strict for CreateTopics v6+, CreatePartitions
 * v3+ and DeleteTopics v5+, permissive for older versions.  The controller
 * charges it each topic's partitions in turn (meta/controller/controller.h's
 * samsa_controller_quota_t).  Strict: a topic is refused
 * (THROTTLING_QUOTA_EXCEEDED) while the bucket is below zero when it comes,
 * else accepted and charged even if that takes the bucket below zero; the
 * request's throttle time is the one the last refusal computed.
 * Permissive: every topic is accepted and charged, and a charge that
 * leaves the bucket below zero sets the throttle time.  Either way the
 * throttle time is round(-credits / quota * 1000) ms at that moment, less
 * the time since, not capped (Kafka caps only request_percentage
 * throttles).
 *
 * Threads: samsa_quota_record, samsa_quota_unrecord and
 * samsa_quota_max_in_window from any handler thread (and the purgatory
 * threads completing a request), samsa_quota_record_request_net from the
 * network threads, samsa_quota_mutation_begin and _end on a handler
 * thread; the controller thread calls a mutation quota's apply while the
 * handler that began it waits for the operation (the
 * samsa_quota_mutation_t is the handler's, lent for the call).  While the
 * image sets no key of a type, recording under it costs one atomic load
 * and no lock.  The client and sensor tables are guarded by the manager's
 * mutex, held only to find or add an entry; each sensor has its own mutex
 * for recording.  The resolved quota of a client id is cached per type
 * and metadata image offset.  samsa_quota_snapshot from the metrics
 * thread.
 */
#ifndef SAMSA_BROKER_QUOTA_H
#define SAMSA_BROKER_QUOTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "meta/controller/controller.h"
#include "meta/meta.h"
#include "net/server/req.h"
#include "util/slice.h"

/* The user name of User:ANONYMOUS, and of a NULL user below. */
#define SAMSA_QUOTA_ANONYMOUS  "ANONYMOUS"

/* The quota user of principal ("User:alice" -> "alice", the part after
 * the principal type, as Kafka's KafkaPrincipal.getName), pointing into
 * it; "ANONYMOUS" for NULL or a principal without a type. */
const char *samsa_quota_user(const char *principal);

typedef enum samsa_quota_type {
    SAMSA_QUOTA_PRODUCE = 0,
    SAMSA_QUOTA_FETCH,
    SAMSA_QUOTA_REQUEST,        /* request_percentage: handler time */
    SAMSA_QUOTA_MUTATION,       /* controller_mutation_rate: a token
                                   bucket of partition mutations */
    SAMSA_QUOTA__NTYPES
} samsa_quota_type_t;

typedef struct samsa_quota_mgr samsa_quota_mgr_t;
typedef struct samsa_quota_sensor samsa_quota_sensor_t;

/* samples, window_s: quota.window.num and quota.window.size.seconds
 * (Produce, Fetch, Request); ctl_samples, ctl_window_s:
 * controller.quota.window.num and controller.quota.window.size.seconds
 * (Mutation).  meta outlives the manager.  @thread main */
samsa_quota_mgr_t *samsa_quota_mgr_new(samsa_meta_t *meta, int samples,
                                       int window_s, int ctl_samples,
                                       int ctl_window_s);
void samsa_quota_mgr_free(samsa_quota_mgr_t *q);   /* NULL: no-op */

/* Record value (bytes; for SAMSA_QUOTA_REQUEST a percentage of one
 * thread's second) for the client (user, NULL for ANONYMOUS, and client
 * id) under type (not Mutation) at now_ms and
 * return the throttle time in ms it earned (0: within quota, or no quota);
 * a Request throttle time is capped at one window.  The throttle time is
 * also added to the sensor's throttle-time metric. */
int32_t samsa_quota_record(samsa_quota_mgr_t *q, samsa_quota_type_t type,
                           const char *user, samsa_slice_t client_id,
                           double value, int64_t now_ms);

/* Kafka's unrecordQuotaSensor: take value back out of the client's sensor
 * under type (not Mutation) at now_ms, without throttling (a throttled
 * Fetch whose records are not sent).  The throttle time the recording
 * earned stays in the sensor's throttle-time metric. */
void samsa_quota_unrecord(samsa_quota_mgr_t *q, samsa_quota_type_t type,
                          const char *user, samsa_slice_t client_id,
                          double value, int64_t now_ms);

/* Whether type is enabled (Kafka's quotasEnabled): some entity of the
 * image sets its key.  While it is not, recording under it does nothing,
 * so a caller may skip measuring what it would record.  @locks q->lock */
bool samsa_quota_enabled(samsa_quota_mgr_t *q, samsa_quota_type_t type);

/* Kafka's getMaxValueInQuotaWindow: the most the client may use of type
 * (not Mutation) in one quota span, its quota * (quota.window.num - 1) *
 * quota.window.size.seconds, or INT64_MAX when the type is not enabled or
 * no quota applies to the client.  Like a record, it makes the client's
 * sensor if the type is enabled. */
int64_t samsa_quota_max_in_window(samsa_quota_mgr_t *q,
                                  samsa_quota_type_t type, const char *user,
                                  samsa_slice_t client_id);

/* Kafka's ClientRequestQuotaManager.maybeRecordAndGetThrottleTimeMs for
 * req, whose response is being made: record the time a handler thread
 * spent on it (from dequeue to local completion, which is marked now if
 * not yet) as a percentage and return the throttle time it earned.  Sets
 * req->request_quota_done (recorded once) and req->request_quota_net
 * (request quotas are enabled: the network thread records its time too).
 * @thread handler or purgatory (whoever completes req) */
int32_t samsa_quota_record_request(samsa_quota_mgr_t *q, samsa_req_t *req);

/* Kafka's recordNetworkThreadTimeCallback: once req's response is sent,
 * add the ns the network thread spent on its connection to the client's
 * request-time sensor, without throttling.
 * @thread network: takes the manager's and the sensor's mutexes briefly */
void samsa_quota_record_request_net(samsa_quota_mgr_t *q,
                                    const samsa_req_t *req, int64_t ns);

/* One request's controller mutation quota, on its handler's stack. */
typedef struct samsa_quota_mutation {
    samsa_quota_mgr_t         *mgr;         /* [const] */
    samsa_quota_sensor_t      *sensor;      /* [const] NULL: unbounded */
    double                     bound;       /* [const] the quota */
    bool                       strict;      /* [const] */
    int64_t                    throttle_ms; /* the last violation's */
    int64_t                    throttle_at; /* when it was computed */
    samsa_controller_quota_t   ctl;         /* [const] what the controller
                                               calls */
} samsa_quota_mutation_t;

/* Kafka's newQuotaFor(request, strictSinceVersion): the mutation quota of
 * user (NULL: ANONYMOUS) and client_id (strict or permissive) as the
 * current image sets it.
 * @thread handler */
void samsa_quota_mutation_begin(samsa_quota_mgr_t *q,
                                samsa_quota_mutation_t *mq,
                                const char *user, samsa_slice_t client_id,
                                bool strict);

/* What to pass the controller: NULL when mq is unbounded. */
const samsa_controller_quota_t *samsa_quota_mutation_ctl(
    samsa_quota_mutation_t *mq);

/* Charge permits (partitions) at now_ms: false when a strict quota
 * refuses them (the bucket was already below zero).  @thread any, while
 * the handler that began mq waits */
bool samsa_quota_mutation_record(samsa_quota_mutation_t *mq, double permits,
                                 int64_t now_ms);

/* The request's throttle time at now_ms (Kafka's throttleTime: the last
 * violation's less the time since, 0: none), also added to the sensor's
 * throttle metrics.  @thread handler */
int32_t samsa_quota_mutation_end(samsa_quota_mutation_t *mq, int64_t now_ms);

/* The connection_creation_rate quota of ip: its own ip entity's, else the
 * default ip entity's, else INT32_MAX (none), from the current metadata
 * image, so an AlterClientQuotas applies to the next connection.  ctx is
 * the samsa_meta_t (a net/server/connquota.h samsa_connquota_ip_rate_fn).
 * @thread any (acceptors): lock-free */
int32_t samsa_quota_ip_conn_rate(void *meta, const char *ip);

/* "Produce", "Fetch", "Request", "ControllerMutation": Kafka's QuotaType
 * names (the metric's type). */
const char *samsa_quota_type_name(samsa_quota_type_t type);

/* One sensor as the metrics see it. */
typedef struct samsa_quota_stat {
    samsa_quota_type_t  type;
    const char         *user;           /* "" when the level has none */
    const char         *client_id;      /* "" likewise */
    double              rate;           /* now, per second: bytes,
                                           Request: the percentage of a
                                           thread, Mutation: partition
                                           mutations */
    double              tokens;         /* Mutation: credits left in the
                                           bucket; else 0 */
    double              quota;          /* the last bound applied; 0: none */
    uint64_t            throttle_time_ms;  /* throttle time earned, in all */
    uint64_t            throttled;      /* requests throttled, in all */
} samsa_quota_stat_t;

/* Call fn for every sensor.  Strings live for the call.
 * @thread metrics (any) */
void samsa_quota_snapshot(samsa_quota_mgr_t *q, int64_t now_ms,
                          void (*fn)(void *ctx, const samsa_quota_stat_t *s),
                          void *ctx);

#endif /* SAMSA_BROKER_QUOTA_H */
