/*
 * broker/quota_mut.h - the controller mutation quota (KIP-599, Kafka's
 * ControllerMutationQuotaManager): controller_mutation_rate bounds the
 * partitions per second a user / client id may create (CreateTopics,
 * CreatePartitions) and delete (DeleteTopics).  One sensor per quota
 * entity, at the most specific of Kafka's eight levels that sets the key
 * (broker/quota.h's resolution and metric tags), holding a util/tbucket.h
 * token bucket (burst controller.quota.window.num *
 * controller.quota.window.size.seconds * quota) and a util/qrate.h
 * mutation rate over the same windows (the metric only).
 *
 * A request takes a samsa_mutquota_t (Kafka's ControllerMutationQuota):
 * strict for CreateTopics v6+, CreatePartitions v3+ and DeleteTopics v5+,
 * permissive for older versions.  The controller charges it each topic's
 * partitions in turn (meta/controller.h's samsa_controller_quota_t).
 * Strict: a topic is refused (THROTTLING_QUOTA_EXCEEDED) while the bucket
 * is below zero when it comes, else accepted and charged even if that
 * takes the bucket below zero; the request's throttle time is the one the
 * last refusal computed.  Permissive: every topic is accepted and charged,
 * and a charge that leaves the bucket below zero sets the throttle time.
 * Either way the throttle time is round(-credits / quota * 1000) ms at
 * that moment, less the time since, not capped (Kafka caps only
 * request_percentage throttles).  There is no authentication: the user is
 * ANONYMOUS (broker/quota.h).  With no controller_mutation_rate in the
 * image (Kafka's quotasEnabled) a request's quota is unbounded.
 *
 * Threads: samsa_mutquota_begin and _end on a handler thread; the
 * controller thread calls the request's apply while that handler waits
 * for the operation (the samsa_mutquota_t is the handler's, lent for the
 * call).  While the image holds no controller_mutation_rate a request
 * costs one atomic load and no lock.  The sensor tables are guarded by the
 * manager's mutex, held only to find or add a sensor; each sensor has its
 * own mutex.  samsa_mutquota_snapshot from the metrics thread.
 */
#ifndef SAMSA_BROKER_QUOTA_MUT_H
#define SAMSA_BROKER_QUOTA_MUT_H

#include <stdbool.h>
#include <stdint.h>

#include "meta/controller.h"
#include "meta/meta.h"
#include "util/slice.h"

typedef struct samsa_mutquota_mgr samsa_mutquota_mgr_t;
typedef struct samsa_mutquota_sensor samsa_mutquota_sensor_t;

/* samples: controller.quota.window.num; window_s:
 * controller.quota.window.size.seconds.  meta outlives the manager.
 * @thread main */
samsa_mutquota_mgr_t *samsa_mutquota_mgr_new(samsa_meta_t *meta, int samples,
                                             int window_s);
void samsa_mutquota_mgr_free(samsa_mutquota_mgr_t *q);   /* NULL: no-op */

/* One request's quota, on its handler's stack. */
typedef struct samsa_mutquota {
    samsa_mutquota_mgr_t      *mgr;         /* [const] */
    samsa_mutquota_sensor_t   *sensor;      /* [const] NULL: unbounded */
    double                     bound;       /* [const] the quota */
    bool                       strict;      /* [const] */
    int64_t                    throttle_ms; /* the last violation's */
    int64_t                    throttle_at; /* when it was computed */
    samsa_controller_quota_t   ctl;         /* [const] what the controller
                                               calls */
} samsa_mutquota_t;

/* Kafka's newQuotaFor(request, strictSinceVersion): the quota of client_id
 * (strict or permissive) as the current image sets it.  @thread handler */
void samsa_mutquota_begin(samsa_mutquota_mgr_t *q, samsa_mutquota_t *mq,
                          samsa_slice_t client_id, bool strict);

/* What to pass the controller: NULL when mq is unbounded. */
const samsa_controller_quota_t *samsa_mutquota_ctl(samsa_mutquota_t *mq);

/* Charge permits (partitions) at now_ms: false when a strict quota
 * refuses them (the bucket was already below zero).  @thread any, while
 * the handler that began mq waits */
bool samsa_mutquota_record(samsa_mutquota_t *mq, double permits,
                           int64_t now_ms);

/* The request's throttle time at now_ms (Kafka's throttleTime: the last
 * violation's less the time since, 0: none), also added to the sensor's
 * throttle metrics.  @thread handler */
int32_t samsa_mutquota_end(samsa_mutquota_t *mq, int64_t now_ms);

/* One sensor as the metrics see it. */
typedef struct samsa_mutquota_stat {
    const char  *user;              /* "" when the level has none */
    const char  *client_id;         /* "" likewise */
    double       rate;              /* partition mutations per second */
    double       tokens;            /* credits left in the bucket */
    double       quota;             /* the last quota applied */
    uint64_t     throttle_time_ms;  /* throttle time returned, in all */
    uint64_t     throttled;         /* requests throttled, in all */
} samsa_mutquota_stat_t;

/* Call fn for every sensor.  Strings live for the call.
 * @thread metrics (any) */
void samsa_mutquota_snapshot(samsa_mutquota_mgr_t *q, int64_t now_ms,
                             void (*fn)(void *ctx,
                                        const samsa_mutquota_stat_t *s),
                             void *ctx);

#endif /* SAMSA_BROKER_QUOTA_MUT_H */
