/*
 * net/connquota.c - see connquota.h.  The per-IP table is a small array
 * searched linearly: it holds distinct client IPs, not connections.
 */
#include "net/connquota.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "util/alloc.h"
#include "util/diag.h"

void
samsa_connquota_init(samsa_connquota_t *q, int32_t max_total,
                     int32_t max_per_ip,
                     const samsa_connquota_override_t *overrides,
                     size_t noverrides)
{
    pthread_condattr_t  attr;

    memset(q, 0, sizeof(*q));
    pthread_mutex_init(&q->lock, NULL);
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&q->freed, &attr);
    pthread_condattr_destroy(&attr);
    q->max_total = max_total;
    q->max_per_ip = max_per_ip;
    if (noverrides > 0) {
        q->overrides = samsa_calloc(noverrides, sizeof(*overrides));
        memcpy(q->overrides, overrides, noverrides * sizeof(*overrides));
    }
    q->noverrides = noverrides;
    atomic_init(&q->total, 0);
}

void
samsa_connquota_fini(samsa_connquota_t *q)
{
    samsa_free(q->overrides);
    samsa_free(q->ips);
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

/* @locks q->lock held */
static bool
connquota_wait_slot(samsa_connquota_t *q, _Atomic bool *running, int wait_ms)
{
    struct timespec  ts;

    while (atomic_load_explicit(&q->total, memory_order_relaxed)
           >= q->max_total) {
        if (!atomic_load_explicit(running, memory_order_acquire)) {
            return false;
        }
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_nsec += (long) wait_ms * 1000000L;
        ts.tv_sec += ts.tv_nsec / 1000000000L;
        ts.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&q->freed, &q->lock, &ts);
    }
    return true;
}

samsa_err_t
samsa_connquota_take(samsa_connquota_t *q, const char *ip,
                     _Atomic bool *running, int wait_ms)
{
    samsa_connquota_ip_t  *e;
    samsa_err_t            err = SAMSA_ERR_NONE;

    pthread_mutex_lock(&q->lock);
    if (!connquota_wait_slot(q, running, wait_ms)) {
        err = SAMSA_ERR__SHUTDOWN;
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
    atomic_fetch_add_explicit(&q->total, 1, memory_order_relaxed);
out_unlock:
    pthread_mutex_unlock(&q->lock);
    return err;
}

void
samsa_connquota_give(samsa_connquota_t *q, const char *ip)
{
    samsa_connquota_ip_t  *e;

    pthread_mutex_lock(&q->lock);
    e = connquota_ip_find(q, ip, false);
    samsa_assert(e != NULL && e->count > 0);
    if (--e->count == 0) {
        *e = q->ips[--q->nips];
    }
    atomic_fetch_sub_explicit(&q->total, 1, memory_order_relaxed);
    pthread_cond_signal(&q->freed);
    pthread_mutex_unlock(&q->lock);
}

int32_t
samsa_connquota_total(samsa_connquota_t *q)
{
    return atomic_load_explicit(&q->total, memory_order_relaxed);
}

bool
samsa_connquota_over(samsa_connquota_t *q)
{
    return samsa_connquota_total(q) > q->max_total;
}
