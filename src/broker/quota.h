/*
 * broker/quota.h - the client quota manager (Kafka's ClientQuotaManager for
 * the Produce and Fetch byte rates, with its default quota callback): one
 * sensor per quota type and quota entity, each a util/qrate.h rate over
 * quota.window.num windows of quota.window.size.seconds, and the throttle
 * time a request earns by pushing its sensor over the entity's quota.
 * Also Kafka's ClientRequestQuotaManager: the Request type's sensors count
 * the time handler threads spend on a client's requests, as a percentage
 * of one thread (request_percentage), its throttle time capped at one
 * window.
 *
 * Which quota applies: the most specific of Kafka's eight levels that sets
 * the type's key (producer_byte_rate, consumer_byte_rate,
 * request_percentage), from
 * user+client-id through user+default client, user, default user+client-id,
 * default user+default client, default user, client-id, to default
 * client-id.  There is no authentication yet: every request's principal is
 * User:ANONYMOUS, so the user levels apply with the name "ANONYMOUS".  The
 * sensor is shared by all the clients the level groups: a user-level quota
 * by every client id of that user, a client-id level one per client id
 * (Kafka's metric tags).  With no client quota in the image at all nothing
 * is recorded (Kafka's quotasEnabled).
 *
 * controller_mutation_rate is stored by AlterClientQuotas and described,
 * but not enforced yet.
 *
 * Threads: samsa_quota_record from any handler thread (and the purgatory
 * threads completing a request), samsa_quota_record_request_net from the
 * network threads.  While the image holds no client quota a
 * request costs one atomic load and no lock.  The sensor table is guarded
 * by one mutex held only to find or add a sensor; each sensor has its own
 * mutex for recording.  The resolved quota of a client id is cached per metadata
 * image offset.  samsa_quota_snapshot from the metrics thread.
 */
#ifndef SAMSA_BROKER_QUOTA_H
#define SAMSA_BROKER_QUOTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "meta/meta.h"
#include "net/req.h"
#include "util/slice.h"

/* The principal of every request until authentication exists. */
#define SAMSA_QUOTA_ANONYMOUS  "ANONYMOUS"

typedef enum samsa_quota_type {
    SAMSA_QUOTA_PRODUCE = 0,
    SAMSA_QUOTA_FETCH,
    SAMSA_QUOTA_REQUEST,        /* request_percentage: handler time */
    SAMSA_QUOTA__NTYPES
} samsa_quota_type_t;

typedef struct samsa_quota_mgr samsa_quota_mgr_t;

/* samples: quota.window.num; window_s: quota.window.size.seconds.
 * meta outlives the manager.  @thread main */
samsa_quota_mgr_t *samsa_quota_mgr_new(samsa_meta_t *meta, int samples,
                                       int window_s);
void samsa_quota_mgr_free(samsa_quota_mgr_t *q);   /* NULL: no-op */

/* Record value (bytes; for SAMSA_QUOTA_REQUEST a percentage of one
 * thread's second) for the client under type at now_ms and return the
 * throttle time in ms it earned (0: within quota, or no quota); a Request
 * throttle time is capped at one window.  The throttle time is also added
 * to the sensor's throttle-time metric. */
int32_t samsa_quota_record(samsa_quota_mgr_t *q, samsa_quota_type_t type,
                           samsa_slice_t client_id, double value,
                           int64_t now_ms);

/* Kafka's ClientRequestQuotaManager.maybeRecordAndGetThrottleTimeMs for
 * req, whose response is being made: record the time a handler thread
 * spent on it (from dequeue to local completion, which is marked now if
 * not yet) as a percentage and return the throttle time it earned.  Sets
 * req->request_quota_done (recorded once) and req->request_quota_net
 * (client quotas exist: the network thread records its time too).
 * @thread handler or purgatory (whoever completes req) */
int32_t samsa_quota_record_request(samsa_quota_mgr_t *q, samsa_req_t *req);

/* Kafka's recordNetworkThreadTimeCallback: once req's response is sent,
 * add the ns the network thread spent on its connection to the client's
 * request-time sensor, without throttling.
 * @thread network: takes the manager's and the sensor's mutexes briefly */
void samsa_quota_record_request_net(samsa_quota_mgr_t *q,
                                    const samsa_req_t *req, int64_t ns);

/* The connection_creation_rate quota of ip: its own ip entity's, else the
 * default ip entity's, else INT32_MAX (none), from the current metadata
 * image, so an AlterClientQuotas applies to the next connection.  ctx is
 * the samsa_meta_t (a net/connquota.h samsa_connquota_ip_rate_fn).
 * @thread any (acceptors): lock-free */
int32_t samsa_quota_ip_conn_rate(void *meta, const char *ip);

/* "Produce", "Fetch", "Request": Kafka's QuotaType names (the metric's
 * type). */
const char *samsa_quota_type_name(samsa_quota_type_t type);

/* One sensor as the metrics see it. */
typedef struct samsa_quota_stat {
    samsa_quota_type_t  type;
    const char         *user;           /* "" when the level has none */
    const char         *client_id;      /* "" likewise */
    double              byte_rate;      /* now, per second (Request: the
                                           percentage of a thread) */
    double              quota;          /* bound; 0: none */
    uint64_t            throttle_time_ms;  /* throttle time earned, in all */
    uint64_t            throttled;      /* requests throttled, in all */
} samsa_quota_stat_t;

/* Call fn for every sensor.  Strings live for the call.
 * @thread metrics (any) */
void samsa_quota_snapshot(samsa_quota_mgr_t *q, int64_t now_ms,
                          void (*fn)(void *ctx, const samsa_quota_stat_t *s),
                          void *ctx);

/* The quota key (any client quota key: controller_mutation_rate, ...) of
 * client (NUL-terminated, "" for a null client id) at the most specific of
 * Kafka's eight levels that sets it in img, 0 when none does, and the
 * user and client-id tags of the sensor that level shares (pointing to
 * client or to static strings).  For the quota managers other than this
 * one (broker/quota_mut.h).  @thread any: lock-free */
double samsa_quota_resolve_key(const samsa_image_t *img, const char *key,
                               const char *client, const char **user_tag,
                               const char **client_tag);

#endif /* SAMSA_BROKER_QUOTA_H */
