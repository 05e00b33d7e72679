/*
 * client/consumer/consumer_pos.c - the consumer's positions and lookups
 * (samsa/consumer.h): seek, position, pause/resume, lag, ListOffsets
 * lookups (offsets_for_times, beginning/end offsets), partitions_for,
 * commits and committed(), member id and metrics.  Split from consumer.c
 * (the API's core: create, assign/subscribe, poll, close); the shared
 * state is consumer_int.h's.
 * Threads: app thread (operations are run by the background thread and
 * waited for on c->cond).
 */
#include <samsa/consumer.h>

#include <stdlib.h>
#include <string.h>

#include "client/consumer/consumer_int.h"
#include "util/alloc.h"
#include "util/diag.h"
#include "util/time.h"

/* ---- positions ---------------------------------------------------------- */

/* Set p's position to offset (or a reset to the beginning/end).
 * @locks c->lock */
static void
consumer_seek_part(samsa_consumer_t *c, samsa_cpart_t *p, int64_t offset)
{
    samsa_consumer_part_drop_chunks(p);
    p->gen = samsa_consumer_next_gen(c);
    p->err = SAMSA_ERR_NONE;
    p->blocked = false;
    p->fetch_inflight = false;
    p->lo_inflight = false;
    p->of_inflight = false;
    if (offset == SAMSA_OFFSET_BEGINNING || offset == SAMSA_OFFSET_END) {
        p->state = SAMSA_CPART_NEED_RESET;
        p->reset_to = offset;
        p->position = p->fetch_offset = SAMSA_OFFSET_INVALID;
    } else {
        p->state = SAMSA_CPART_READY;
        p->position = p->fetch_offset = offset;
    }
    samsa_netclient_wakeup(c->nc);
}

samsa_err_t
samsa_consumer_seek(samsa_consumer_t *c, const char *topic, int32_t partition,
                    int64_t offset)
{
    samsa_cpart_t  *p;

    if (topic == NULL || (offset < 0 && offset != SAMSA_OFFSET_BEGINNING
                          && offset != SAMSA_OFFSET_END)) {
        return SAMSA_ERR__INVALID_ARG;
    }
    pthread_mutex_lock(&c->lock);
    p = samsa_consumer_part_find(c, topic, strlen(topic), partition);
    if (p != NULL) {
        consumer_seek_part(c, p, offset);
    }
    pthread_mutex_unlock(&c->lock);
    return p != NULL ? SAMSA_ERR_NONE : SAMSA_ERR__STATE;
}

static samsa_err_t
consumer_seek_many(samsa_consumer_t *c, const samsa_topic_partition_t *tps,
                   size_t n, int64_t offset)
{
    samsa_err_t  err = SAMSA_ERR_NONE;
    size_t       i;
    int32_t      k;

    if (n > 0) {
        for (i = 0; i < n; i++) {
            samsa_err_t  e = samsa_consumer_seek(c, tps[i].topic,
                                                 tps[i].partition, offset);

            err = err == SAMSA_ERR_NONE ? e : err;
        }
        return err;
    }
    pthread_mutex_lock(&c->lock);
    for (k = 0; k < c->nparts; k++) {
        consumer_seek_part(c, c->parts[k], offset);
    }
    pthread_mutex_unlock(&c->lock);
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_consumer_seek_to_beginning(samsa_consumer_t *c,
                                 const samsa_topic_partition_t *tps, size_t n)
{
    return consumer_seek_many(c, tps, n, SAMSA_OFFSET_BEGINNING);
}

samsa_err_t
samsa_consumer_seek_to_end(samsa_consumer_t *c,
                           const samsa_topic_partition_t *tps, size_t n)
{
    return consumer_seek_many(c, tps, n, SAMSA_OFFSET_END);
}

samsa_err_t
samsa_consumer_position(samsa_consumer_t *c, const char *topic,
                        int32_t partition, int64_t timeout_ms,
                        int64_t *offsetp)
{
    samsa_cpart_t  *p;
    samsa_err_t     err = SAMSA_ERR__TIMED_OUT;
    int64_t         deadline = samsa_consumer_deadline_ms(c, timeout_ms);

    *offsetp = SAMSA_OFFSET_INVALID;
    if (topic == NULL) {
        return SAMSA_ERR__INVALID_ARG;
    }
    pthread_mutex_lock(&c->lock);
    for (;;) {
        p = samsa_consumer_part_find(c, topic, strlen(topic), partition);
        if (p == NULL) {
            err = SAMSA_ERR__STATE;
            break;
        }
        if (p->state == SAMSA_CPART_READY) {
            *offsetp = p->position;
            err = SAMSA_ERR_NONE;
            break;
        }
        if (p->err != SAMSA_ERR_NONE) {
            err = p->err;
            break;
        }
        if (!samsa_consumer_wait(c, deadline)) {
            break;
        }
    }
    pthread_mutex_unlock(&c->lock);
    return err;
}

static samsa_err_t
consumer_pause_set(samsa_consumer_t *c, const samsa_topic_partition_t *tps,
                   size_t n, bool paused)
{
    samsa_err_t  err = SAMSA_ERR_NONE;
    size_t       i;

    pthread_mutex_lock(&c->lock);
    for (i = 0; i < n; i++) {
        samsa_cpart_t  *p = tps[i].topic == NULL ? NULL
                            : samsa_consumer_part_find(c, tps[i].topic,
                                                       strlen(tps[i].topic),
                                                       tps[i].partition);

        if (p == NULL) {
            err = SAMSA_ERR__STATE;
            continue;
        }
        p->paused = paused;
    }
    samsa_netclient_wakeup(c->nc);
    pthread_mutex_unlock(&c->lock);
    return err;
}

samsa_err_t
samsa_consumer_pause(samsa_consumer_t *c, const samsa_topic_partition_t *tps,
                     size_t n)
{
    return consumer_pause_set(c, tps, n, true);
}

samsa_err_t
samsa_consumer_resume(samsa_consumer_t *c, const samsa_topic_partition_t *tps,
                      size_t n)
{
    return consumer_pause_set(c, tps, n, false);
}

samsa_err_t
samsa_consumer_current_lag(samsa_consumer_t *c, const char *topic,
                           int32_t partition, int64_t *lagp)
{
    samsa_cpart_t  *p;
    samsa_err_t     err = SAMSA_ERR__STATE;
    int64_t         end;

    *lagp = -1;
    if (topic == NULL) {
        return SAMSA_ERR__INVALID_ARG;
    }
    pthread_mutex_lock(&c->lock);
    p = samsa_consumer_part_find(c, topic, strlen(topic), partition);
    if (p != NULL && p->state == SAMSA_CPART_READY && p->high_watermark >= 0) {
        end = c->cc.read_committed && p->last_stable_offset >= 0
                  ? p->last_stable_offset : p->high_watermark;
        *lagp = end > p->position ? end - p->position : 0;
        err = SAMSA_ERR_NONE;
    }
    pthread_mutex_unlock(&c->lock);
    return err;
}

/* ---- operations run by the background thread ---------------------------- */

/* An operation of kind on a copy of the n entries tps, each answer
 * INVALID and timed out until the background thread gives one. */
static samsa_cop_t *
consumer_tps_op_new(samsa_cop_kind_t kind, const samsa_topic_partition_t *tps,
                    size_t n)
{
    samsa_cop_t  *op = samsa_calloc(1, sizeof(*op));
    size_t        i;

    op->kind = kind;
    op->tps = samsa_consumer_tps_dup(tps, n);
    op->n = n;
    for (i = 0; i < n; i++) {
        op->tps[i].offset = SAMSA_OFFSET_INVALID;
        op->tps[i].err = SAMSA_ERR__TIMED_OUT;
    }
    return op;
}

/* Run op (within timeout_ms, -1: default.api.timeout.ms) and copy its
 * answers into results.  @owns op  @thread app */
static samsa_err_t
consumer_tps_op_run(samsa_consumer_t *c, samsa_cop_t *op, int64_t timeout_ms,
                    samsa_topic_partition_t *results)
{
    samsa_err_t  err;

    pthread_mutex_lock(&c->lock);
    err = samsa_consumer_op_run(c, op,
                                samsa_consumer_deadline_ms(c, timeout_ms),
                                results);
    pthread_mutex_unlock(&c->lock);
    return err;
}

static samsa_err_t
consumer_list_offsets(samsa_consumer_t *c, samsa_topic_partition_t *tps,
                      size_t n, int64_t timeout_ms, int64_t fixed_ts)
{
    samsa_cop_t  *op;
    samsa_err_t   err;
    size_t        i;

    if (n == 0) {
        return SAMSA_ERR_NONE;
    }
    for (i = 0; i < n; i++) {
        if (tps[i].topic == NULL || tps[i].partition < 0) {
            return SAMSA_ERR__INVALID_ARG;
        }
    }
    op = consumer_tps_op_new(SAMSA_COP_LIST_OFFSETS, tps, n);
    for (i = 0; fixed_ts != 0 && i < n; i++) {
        op->tps[i].timestamp = fixed_ts;
    }
    err = consumer_tps_op_run(c, op, timeout_ms, tps);
    if (err == SAMSA_ERR_NONE) {
        for (i = 0; i < n; i++) {
            if (tps[i].err != SAMSA_ERR_NONE) {
                return tps[i].err;
            }
        }
    }
    return err;
}

samsa_err_t
samsa_consumer_offsets_for_times(samsa_consumer_t *c,
                                 samsa_topic_partition_t *tps, size_t n,
                                 int64_t timeout_ms)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        if (tps[i].timestamp < 0) {
            return SAMSA_ERR__INVALID_ARG;
        }
    }
    return consumer_list_offsets(c, tps, n, timeout_ms, 0);
}

samsa_err_t
samsa_consumer_beginning_offsets(samsa_consumer_t *c,
                                 samsa_topic_partition_t *tps, size_t n,
                                 int64_t timeout_ms)
{
    return consumer_list_offsets(c, tps, n, timeout_ms,
                                 SAMSA_OFFSET_BEGINNING);
}

samsa_err_t
samsa_consumer_end_offsets(samsa_consumer_t *c, samsa_topic_partition_t *tps,
                           size_t n, int64_t timeout_ms)
{
    return consumer_list_offsets(c, tps, n, timeout_ms, SAMSA_OFFSET_END);
}

static samsa_cop_t *
consumer_commit_op(samsa_consumer_t *c, const samsa_topic_partition_t *tps,
                   size_t n, samsa_err_t *errp)
{
    samsa_cop_t  *op;
    size_t        i;

    *errp = SAMSA_ERR_NONE;
    if (c->cc.group_id == NULL) {
        *errp = SAMSA_ERR__INVALID_ARG;
        return NULL;
    }
    for (i = 0; tps != NULL && i < n; i++) {
        if (tps[i].topic == NULL || tps[i].offset < 0) {
            *errp = SAMSA_ERR__INVALID_ARG;
            return NULL;
        }
    }
    op = samsa_calloc(1, sizeof(*op));
    op->kind = SAMSA_COP_COMMIT;
    if (tps != NULL) {
        op->tps = samsa_consumer_tps_dup(tps, n);
        op->n = n;
    } else {
        op->tps = samsa_consumer_positions(c, &op->n, false);
    }
    return op;
}

samsa_err_t
samsa_consumer_commit_sync(samsa_consumer_t *c,
                           const samsa_topic_partition_t *tps, size_t n,
                           int64_t timeout_ms)
{
    samsa_cop_t  *op;
    samsa_err_t   err;

    pthread_mutex_lock(&c->lock);
    op = consumer_commit_op(c, tps, n, &err);
    if (op != NULL && op->n == 0) {
        samsa_consumer_op_free(op);
        op = NULL;
    }
    if (op != NULL) {
        err = samsa_consumer_op_run(c, op,
                                    samsa_consumer_deadline_ms(c,
                                                               timeout_ms),
                                    NULL);
    }
    pthread_mutex_unlock(&c->lock);
    return err;
}

samsa_err_t
samsa_consumer_commit_async(samsa_consumer_t *c,
                            const samsa_topic_partition_t *tps, size_t n,
                            samsa_commit_cb *cb, void *opaque)
{
    samsa_cop_t  *op;
    samsa_err_t   err;

    pthread_mutex_lock(&c->lock);
    op = consumer_commit_op(c, tps, n, &err);
    if (op != NULL) {
        op->cb = cb;
        op->opaque = opaque;
        op->deadline_ms = samsa_consumer_deadline_ms(c, -1);
        if (op->n == 0) {
            samsa_consumer_op_done(c, op, SAMSA_ERR_NONE);
        } else {
            samsa_consumer_op_push(c, op);
        }
    }
    pthread_mutex_unlock(&c->lock);
    return err;
}

samsa_err_t
samsa_consumer_committed(samsa_consumer_t *c, samsa_topic_partition_t *tps,
                         size_t n, int64_t timeout_ms)
{
    samsa_cop_t  *op;
    size_t        i;

    if (c->cc.group_id == NULL) {
        return SAMSA_ERR__INVALID_ARG;
    }
    if (n == 0) {
        return SAMSA_ERR_NONE;
    }
    for (i = 0; i < n; i++) {
        if (tps[i].topic == NULL) {
            return SAMSA_ERR__INVALID_ARG;
        }
    }
    op = consumer_tps_op_new(SAMSA_COP_COMMITTED, tps, n);
    return consumer_tps_op_run(c, op, timeout_ms, tps);
}

samsa_err_t
samsa_consumer_partitions_for(samsa_consumer_t *c, const char *topic,
                              int64_t timeout_ms, int32_t *countp)
{
    const samsa_mdtopic_t  *t;
    samsa_err_t         err = SAMSA_ERR__TIMED_OUT;
    int64_t             deadline = samsa_consumer_deadline_ms(c, timeout_ms);
    uint64_t            gen;

    *countp = 0;
    if (topic == NULL || topic[0] == '\0') {
        return SAMSA_ERR__INVALID_ARG;
    }
    pthread_mutex_lock(&c->lock);
    samsa_consumer_md_want(c, topic);
    samsa_consumer_md_request(c);
    gen = samsa_mdcache_gen(c->mdc);
    for (;;) {
        t = samsa_consumer_md_find(c, topic, strlen(topic));
        if (t != NULL && samsa_mdcache_gen(c->mdc) > gen) {
            if (t->err == SAMSA_ERR_NONE && t->npartitions > 0) {
                *countp = t->npartitions;
                err = SAMSA_ERR_NONE;
                break;
            }
            if (t->err != SAMSA_ERR_NONE
                && t->err != SAMSA_ERR_LEADER_NOT_AVAILABLE) {
                err = t->err;
                break;
            }
        }
        if (samsa_netclient_auth_error(c->nc, NULL, 0) != SAMSA_ERR_NONE) {
            err = samsa_netclient_auth_error(c->nc, NULL, 0);
            break;
        }
        if (!samsa_consumer_wait(c, deadline)) {
            break;
        }
    }
    pthread_mutex_unlock(&c->lock);
    return err;
}

char *
samsa_consumer_member_id(samsa_consumer_t *c)
{
    char  *id = NULL;

    pthread_mutex_lock(&c->lock);
    if (c->grp.member_id[0] != '\0') {
        id = samsa_strdup(c->grp.member_id);
    }
    pthread_mutex_unlock(&c->lock);
    return id;
}

void
samsa_consumer_str_free(char *s)
{
    samsa_free(s);
}

void
samsa_consumer_metrics(samsa_consumer_t *c, samsa_consumer_metrics_t *m)
{
    memset(m, 0, sizeof(*m));
    m->records_consumed_total = atomic_load(&c->m_records);
    m->bytes_consumed_total = atomic_load(&c->m_bytes);
    m->fetch_total = atomic_load(&c->m_fetches);
    m->fetch_latency_ns_total = atomic_load(&c->m_fetch_ns);
    m->rebalance_total = atomic_load(&c->m_rebalances);
    m->rebalance_latency_ns_total = atomic_load(&c->m_rebalance_ns);
    m->commit_total = atomic_load(&c->m_commits);
    pthread_mutex_lock(&c->lock);
    m->assigned_partitions = c->nparts;
    pthread_mutex_unlock(&c->lock);
}

