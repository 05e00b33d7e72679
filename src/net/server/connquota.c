/*
 * net/server/connquota.c - see connquota.h.  The per-IP tables are small arrays
 * searched linearly: they hold distinct client IPs, not connections.  An
 * IP's rate is dropped once all its windows are too old to count (Kafka
 * expires an idle sensor after an hour).
 */
#include "net/server/connquota.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "util/alloc.h"
#include "util/diag.h"
#include "util/time.h"

static void
connquota_set_overrides(samsa_connquota_t *q,
                        const samsa_connquota_override_t *overrides,
                        size_t noverrides)
{
    samsa_free(q->overrides);
    q->overrides = NULL;
    if (noverrides > 0) {
        q->overrides = samsa_calloc(noverrides, sizeof(*overrides));
        memcpy(q->overrides, overrides, noverrides * sizeof(*overrides));
    }
    q->noverrides = noverrides;
}

void
samsa_connquota_init(samsa_connquota_t *q, int32_t max_total,
                     int32_t max_per_ip,
                     const samsa_connquota_override_t *overrides,
                     size_t noverrides, size_t nlisteners)
{
    size_t              i;
    pthread_condattr_t  attr;

    memset(q, 0, sizeof(*q));
    pthread_mutex_init(&q->lock, NULL);
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&q->freed, &attr);
    pthread_condattr_destroy(&attr);
    atomic_init(&q->max_total, max_total);
    q->max_per_ip = max_per_ip;
    connquota_set_overrides(q, overrides, noverrides);
    atomic_init(&q->total, 0);
    q->max_rate = INT32_MAX;
    q->samples = 1;
    q->window_ms = 1000;
    samsa_qrate_init(&q->rate, q->samples, q->window_ms);
    q->listeners = samsa_calloc(nlisteners + 1, sizeof(*q->listeners));
    q->nlisteners = nlisteners;
    for (i = 0; i < nlisteners; i++) {
        q->listeners[i].max = INT32_MAX;
        q->listeners[i].max_rate = INT32_MAX;
        samsa_qrate_init(&q->listeners[i].rate, q->samples, q->window_ms);
        atomic_init(&q->listeners[i].throttle_ms, 0);
        atomic_init(&q->listeners[i].throttles, 0);
    }
    atomic_init(&q->rate_waits, 0);
    atomic_init(&q->ip_throttled, 0);
}

void
samsa_connquota_set_rates(samsa_connquota_t *q, int32_t max_rate,
                          int samples, int64_t window_ms,
                          samsa_connquota_ip_rate_fn ip_rate, void *ctx)
{
    q->max_rate = max_rate;
    q->samples = samples;
    q->window_ms = window_ms;
    q->ip_rate = ip_rate;
    q->ip_rate_ctx = ctx;
    samsa_qrate_init(&q->rate, samples, window_ms);
    for (size_t i = 0; i < q->nlisteners; i++) {
        samsa_qrate_init(&q->listeners[i].rate, samples, window_ms);
    }
}

void
samsa_connquota_set_limits(samsa_connquota_t *q, int32_t max_total,
                           int32_t max_per_ip,
                           const samsa_connquota_override_t *overrides,
                           size_t noverrides, int32_t max_rate,
                           const int32_t *listener_max,
                           const int32_t *listener_rate)
{
    size_t  i;

    pthread_mutex_lock(&q->lock);
    atomic_store_explicit(&q->max_total, max_total, memory_order_relaxed);
    q->max_per_ip = max_per_ip;
    connquota_set_overrides(q, overrides, noverrides);
    /* a connection already waiting on the old rate keeps its delay, as
     * Kafka's updateBrokerMaxConnectionRate says */
    q->max_rate = max_rate;
    for (i = 0; i < q->nlisteners; i++) {
        q->listeners[i].max = listener_max[i];
        q->listeners[i].max_rate = listener_rate[i];
    }
    pthread_cond_broadcast(&q->freed);
    pthread_mutex_unlock(&q->lock);
}

void
samsa_connquota_fini(samsa_connquota_t *q)
{
    samsa_free(q->overrides);
    samsa_free(q->ips);
    for (size_t i = 0; i < q->niprates; i++) {
        samsa_free(q->iprates[i]);
    }
    samsa_free(q->iprates);
    samsa_free(q->listeners);
    pthread_cond_destroy(&q->freed);
    pthread_mutex_destroy(&q->lock);
}

static int32_t
connquota_limit(const samsa_connquota_t *q, const char *ip)
{
    size_t  i;

    for (i = 0; i < q->noverrides; i++) {
        if (strcmp(q->overrides[i].ip, ip) == 0) {
            return q->overrides[i].max;
        }
    }
    return q->max_per_ip;
}

/* @locks q->lock held */
static samsa_connquota_ip_t *
connquota_ip_find(samsa_connquota_t *q, const char *ip, bool create)
{
    size_t  i;

    for (i = 0; i < q->nips; i++) {
        if (strcmp(q->ips[i].ip, ip) == 0) {
            return &q->ips[i];
        }
    }
    if (!create) {
        return NULL;
    }
    if (q->nips == q->ips_cap) {
        q->ips_cap = q->ips_cap == 0 ? 8 : q->ips_cap * 2;
        q->ips = samsa_realloc(q->ips, q->ips_cap * sizeof(*q->ips));
    }
    memset(&q->ips[q->nips], 0, sizeof(q->ips[0]));
    snprintf(q->ips[q->nips].ip, sizeof(q->ips[0].ip), "%s", ip);
    return &q->ips[q->nips++];
}

/* Record one connection in r against bound (connections per second) and
 * return the throttle time in ms, capped at one window as Kafka's
 * ConnectionQuotas caps it.  No bound (INT32_MAX): nothing recorded. */
static int64_t
connquota_rate_record(const samsa_connquota_t *q, samsa_qrate_t *r,
                      int32_t bound, int64_t now_ms)
{
    if (bound >= INT32_MAX) {
        return 0;
    }
    return samsa_qrate_record_throttle(r, 1.0, (double) bound, q->window_ms,
                                       now_ms);
}

/* Wait on the cond for ms at most.  @locks q->lock held */
static void
connquota_cond_wait(samsa_connquota_t *q, int64_t ms)
{
    struct timespec  ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += (time_t) (ms / 1000);
    ts.tv_nsec += (long) (ms % 1000) * 1000000L;
    ts.tv_sec += ts.tv_nsec / 1000000000L;
    ts.tv_nsec %= 1000000000L;
    pthread_cond_timedwait(&q->freed, &q->lock, &ts);
}

/* Kafka's connectionSlotAvailable: the listener below its own
 * max.connections, and the total below the broker's.  @locks q->lock held */
static bool
connquota_slot_available(samsa_connquota_t *q,
                         const samsa_connquota_listener_t *l)
{
    return l->count < l->max
           && atomic_load_explicit(&q->total, memory_order_relaxed)
                  < atomic_load_explicit(&q->max_total,
                                         memory_order_relaxed);
}

/* Kafka's waitForConnectionSlot: record the connection in the broker-wide
 * and the listener's rates, then wait out the longer throttle time and
 * until a slot is available.  @locks q->lock held */
static bool
connquota_wait_slot(samsa_connquota_t *q, samsa_connquota_listener_t *l,
                    _Atomic bool *running, int wait_ms)
{
    int64_t  now = samsa_now_ms();
    int64_t  ms = connquota_rate_record(q, &q->rate, q->max_rate, now);
    int64_t  lms = connquota_rate_record(q, &l->rate, l->max_rate, now);
    int64_t  end = now + (lms > ms ? lms : ms);
    int64_t  left;

    if (end > now) {
        /* Kafka records the throttle time in the listener's
         * connection-accept-throttle-time sensor */
        atomic_fetch_add_explicit(&q->rate_waits, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&l->throttle_ms, (uint64_t) (end - now),
                                  memory_order_relaxed);
        atomic_fetch_add_explicit(&l->throttles, 1, memory_order_relaxed);
    }
    for (;;) {
        left = end - samsa_now_ms();
        if (left <= 0 && connquota_slot_available(q, l)) {
            return true;
        }
        if (!atomic_load_explicit(running, memory_order_acquire)) {
            return false;
        }
        connquota_cond_wait(q, left > 0 && left < wait_ms ? left : wait_ms);
    }
}

/* The rate of ip, made if need be; idle ones are dropped while looking.
 * @locks q->lock held */
static samsa_qrate_t *
connquota_iprate(samsa_connquota_t *q, const char *ip, int64_t now_ms)
{
    samsa_connquota_iprate_t  *e, *found = NULL;
    int64_t                    idle = (int64_t) q->samples * q->window_ms;
    size_t                     i = 0;

    while (i < q->niprates) {
        e = q->iprates[i];
        if (strcmp(e->ip, ip) == 0) {
            found = e;
            i++;
        } else if (now_ms - e->last_ms > idle) {
            samsa_free(e);
            q->iprates[i] = q->iprates[--q->niprates];
        } else {
            i++;
        }
    }
    if (found == NULL) {
        found = samsa_calloc(1, sizeof(*found));
        snprintf(found->ip, sizeof(found->ip), "%s", ip);
        samsa_qrate_init(&found->rate, q->samples, q->window_ms);
        q->iprates = samsa_realloc(q->iprates, (q->niprates + 1)
                                                   * sizeof(*q->iprates));
        q->iprates[q->niprates++] = found;
    }
    found->last_ms = now_ms;
    return &found->rate;
}

/* Kafka's recordIpConnectionMaybeThrottle: the throttle time of one more
 * connection from ip under its quota; a throttled one is taken back out of
 * its rate and the broker's and listener's (it is closed, not counted).
 * @locks q->lock held */
static int64_t
connquota_ip_throttle(samsa_connquota_t *q, samsa_connquota_listener_t *l,
                      const char *ip, int32_t bound)
{
    int64_t         now = samsa_now_ms(), ms;
    samsa_qrate_t  *r;

    if (bound >= INT32_MAX) {
        return 0;
    }
    r = connquota_iprate(q, ip, now);
    ms = connquota_rate_record(q, r, bound, now);
    if (ms > 0) {
        samsa_qrate_record(r, -1.0, now);
        if (q->max_rate < INT32_MAX) {
            samsa_qrate_record(&q->rate, -1.0, now);
        }
        if (l->max_rate < INT32_MAX) {
            samsa_qrate_record(&l->rate, -1.0, now);
        }
        atomic_fetch_add_explicit(&q->ip_throttled, 1, memory_order_relaxed);
    }
    return ms;
}

samsa_err_t
samsa_connquota_take(samsa_connquota_t *q, size_t listener, const char *ip,
                     _Atomic bool *running, int wait_ms,
                     int64_t *close_delay_ms)
{
    samsa_connquota_listener_t  *l = &q->listeners[listener];
    samsa_connquota_ip_t        *e;
    samsa_err_t                  err = SAMSA_ERR_NONE;
    int32_t                      ip_bound = INT32_MAX;

    samsa_assert(listener < q->nlisteners);
    *close_delay_ms = 0;
    if (q->ip_rate != NULL) {
        ip_bound = q->ip_rate(q->ip_rate_ctx, ip);
    }
    pthread_mutex_lock(&q->lock);
    if (!connquota_wait_slot(q, l, running, wait_ms)) {
        err = SAMSA_ERR__SHUTDOWN;
        goto out_unlock;
    }
    *close_delay_ms = connquota_ip_throttle(q, l, ip, ip_bound);
    if (*close_delay_ms > 0) {
        err = SAMSA_ERR__FULL;
        goto out_unlock;
    }
    e = connquota_ip_find(q, ip, true);
    if (e->count >= connquota_limit(q, ip)) {
        err = SAMSA_ERR__FULL;
        if (e->count == 0) {            /* limit 0: drop the empty entry */
            *e = q->ips[--q->nips];
        }
        goto out_unlock;
    }
    e->count++;
    l->count++;
    atomic_fetch_add_explicit(&q->total, 1, memory_order_relaxed);
out_unlock:
    pthread_mutex_unlock(&q->lock);
    return err;
}

void
samsa_connquota_give(samsa_connquota_t *q, size_t listener, const char *ip)
{
    samsa_connquota_ip_t  *e;

    samsa_assert(listener < q->nlisteners);
    pthread_mutex_lock(&q->lock);
    e = connquota_ip_find(q, ip, false);
    samsa_assert(e != NULL && e->count > 0
                 && q->listeners[listener].count > 0);
    if (--e->count == 0) {
        *e = q->ips[--q->nips];
    }
    q->listeners[listener].count--;
    atomic_fetch_sub_explicit(&q->total, 1, memory_order_relaxed);
    /* every acceptor: the one of this listener may be the one waiting */
    pthread_cond_broadcast(&q->freed);
    pthread_mutex_unlock(&q->lock);
}

void
samsa_connquota_listener_throttles(samsa_connquota_t *q, size_t listener,
                                   uint64_t *throttle_ms, uint64_t *throttles)
{
    samsa_connquota_listener_t  *l = &q->listeners[listener];

    *throttle_ms = atomic_load_explicit(&l->throttle_ms,
                                        memory_order_relaxed);
    *throttles = atomic_load_explicit(&l->throttles, memory_order_relaxed);
}

int32_t
samsa_connquota_total(samsa_connquota_t *q)
{
    return atomic_load_explicit(&q->total, memory_order_relaxed);
}

int32_t
samsa_connquota_max_total(samsa_connquota_t *q)
{
    return atomic_load_explicit(&q->max_total, memory_order_relaxed);
}

bool
samsa_connquota_over(samsa_connquota_t *q)
{
    return samsa_connquota_total(q) > samsa_connquota_max_total(q);
}
