/*
 * client/consumer/consumer.c - samsa_consumer_* (samsa/consumer.h): the
 * application-facing API's core (create, assign/subscribe, poll, close),
 * the background thread's loop and the consumer's metadata.  Positions,
 * lookups and commits are consumer_pos.c's, fetching cfetch.c's, the
 * group coordinator.c's;
 * the shared state and its locking are described in consumer_int.h.
 * Threads: API calls on the app thread; consumer_main and the Metadata
 * callback on the background thread.
 */
#include <samsa/consumer.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client/consumer/consumer_int.h"
#include "proto/gen/apis.h"
#include "util/alloc.h"
#include "util/arena.h"
#include "util/diag.h"
#include "util/time.h"

#define CONSUMER_MAX_WAIT_MS 100    /* the bg loop's longest sleep */

struct samsa_consumer_records {
    const samsa_consumer_record_t  **recs;
    size_t                           n;
    size_t                           cap;
    samsa_crecs_chunk_t            **chunks;
    size_t                           nchunks;
    size_t                           cap_chunks;
};

/* ---- small helpers ------------------------------------------------------ */

uint64_t
samsa_consumer_next_gen(samsa_consumer_t *c)
{
    return ++c->gen_seq;
}

samsa_cpart_t *
samsa_consumer_part_find(samsa_consumer_t *c, const char *topic,
                         size_t topic_len, int32_t partition)
{
    int32_t  i;

    for (i = 0; i < c->nparts; i++) {
        samsa_cpart_t  *p = c->parts[i];

        if (p->partition == partition && strlen(p->topic) == topic_len
            && memcmp(p->topic, topic, topic_len) == 0) {
            return p;
        }
    }
    return NULL;
}

samsa_cpart_t *
samsa_consumer_part_at_gen(samsa_consumer_t *c, const char *topic,
                           int32_t partition, uint64_t gen)
{
    samsa_cpart_t  *p = samsa_consumer_part_find(c, topic, strlen(topic),
                                                 partition);

    return p != NULL && p->gen == gen ? p : NULL;
}

const samsa_mdtopic_t *
samsa_consumer_md_find(samsa_consumer_t *c, const char *topic,
                       size_t topic_len)
{
    return samsa_mdcache_peek(c->mdc, topic, topic_len);
}

int32_t
samsa_consumer_leader(samsa_consumer_t *c, const char *topic,
                      int32_t partition)
{
    return samsa_mdcache_leader(c->mdc, topic, partition);
}

void
samsa_consumer_md_request(samsa_consumer_t *c)
{
    samsa_mdcache_request_update(c->mdc);
    if (c->nc != NULL) {
        samsa_netclient_wakeup(c->nc);
    }
}

void
samsa_consumer_part_drop_chunks(samsa_cpart_t *p)
{
    samsa_crecs_chunk_t  *ch, *next;

    for (ch = p->q_head; ch != NULL; ch = next) {
        next = ch->next;
        samsa_crecs_chunk_unref(ch);
    }
    p->q_head = p->q_tail = NULL;
    p->nchunks = 0;
}

static void
consumer_part_free(samsa_cpart_t *p)
{
    samsa_consumer_part_drop_chunks(p);
    samsa_free(p->topic);
    samsa_free(p);
}

static samsa_cpart_t *
consumer_part_new(samsa_consumer_t *c, const char *topic, int32_t partition)
{
    samsa_cpart_t  *p = samsa_calloc(1, sizeof(*p));

    p->topic = samsa_strdup(topic);
    p->partition = partition;
    p->state = c->cc.group_id != NULL ? SAMSA_CPART_NEED_COMMITTED
                                      : SAMSA_CPART_NEED_RESET;
    p->reset_to = c->cc.auto_offset_reset == SAMSA_RESET_EARLIEST
                      ? SAMSA_OFFSET_BEGINNING : SAMSA_OFFSET_END;
    p->position = p->fetch_offset = SAMSA_OFFSET_INVALID;
    p->high_watermark = p->last_stable_offset = p->log_start_offset = -1;
    p->committed = -1;
    p->preferred_replica = -1;
    p->gen = samsa_consumer_next_gen(c);
    return p;
}

samsa_topic_partition_t *
samsa_consumer_tps_dup(const samsa_topic_partition_t *tps, size_t n)
{
    samsa_topic_partition_t  *out = samsa_calloc(n + 1, sizeof(*out));
    size_t                    i;

    for (i = 0; i < n; i++) {
        out[i] = tps[i];
        out[i].topic = samsa_strdup(tps[i].topic != NULL ? tps[i].topic
                                                         : "");
    }
    return out;
}

void
samsa_tp_array_free(samsa_topic_partition_t *tps, size_t n)
{
    size_t  i;

    if (tps == NULL) {
        return;
    }
    for (i = 0; i < n; i++) {
        samsa_free((char *) tps[i].topic);
    }
    samsa_free(tps);
}

static void
consumer_event_free(samsa_cevent_t *ev)
{
    samsa_tp_array_free(ev->tps, ev->n);
    samsa_free(ev);
}

void
samsa_consumer_op_free(samsa_cop_t *op)
{
    samsa_tp_array_free(op->tps, op->n);
    samsa_free(op);
}

void
samsa_consumer_event_push(samsa_consumer_t *c, samsa_cevent_t *ev)
{
    ev->next = NULL;
    if (c->ev_tail != NULL) {
        c->ev_tail->next = ev;
    } else {
        c->ev_head = ev;
    }
    c->ev_tail = ev;
    pthread_cond_broadcast(&c->cond);
}

void
samsa_consumer_op_done(samsa_consumer_t *c, samsa_cop_t *op,
                       samsa_err_t err)
{
    samsa_cevent_t  *ev;

    op->done = true;
    op->err = err;
    if (op->waited) {
        pthread_cond_broadcast(&c->cond);
        return;
    }
    if (op->kind == SAMSA_COP_COMMIT && op->cb != NULL && !c->closing) {
        ev = samsa_calloc(1, sizeof(*ev));
        ev->kind = SAMSA_CEVENT_COMMIT;
        ev->tps = op->tps;
        ev->n = op->n;
        op->tps = NULL;
        op->n = 0;
        ev->err = err;
        ev->cb = op->cb;
        ev->opaque = op->opaque;
        samsa_consumer_event_push(c, ev);
    }
    samsa_consumer_op_free(op);
}

/* Queue op for the bg thread.  @locks c->lock */
void
samsa_consumer_op_push(samsa_consumer_t *c, samsa_cop_t *op)
{
    op->next = NULL;
    if (c->op_tail != NULL) {
        c->op_tail->next = op;
    } else {
        c->op_head = op;
    }
    c->op_tail = op;
    samsa_netclient_wakeup(c->nc);
}

void
samsa_consumer_op_unlink(samsa_consumer_t *c, samsa_cop_t *op)
{
    samsa_cop_t  **pp, *prev = NULL;

    for (pp = &c->op_head; *pp != NULL; prev = *pp, pp = &(*pp)->next) {
        if (*pp == op) {
            *pp = op->next;
            if (c->op_tail == op) {
                c->op_tail = prev;
            }
            op->next = NULL;
            return;
        }
    }
}

void
samsa_consumer_md_want(samsa_consumer_t *c, const char *topic)
{
    int32_t  i;

    for (i = 0; i < c->nmd_extra; i++) {
        if (strcmp(c->md_extra[i], topic) == 0) {
            return;
        }
    }
    c->md_extra = samsa_realloc(c->md_extra, (size_t) (c->nmd_extra + 1)
                                                 * sizeof(char *));
    c->md_extra[c->nmd_extra++] = samsa_strdup(topic);
    samsa_mdcache_request_update(c->mdc);
}

/* Wait on c->cond until deadline_ms (monotonic ms; INT64_MAX: no
 * limit).  False once it passed.  @locks c->lock (held once) */
bool
samsa_consumer_wait(samsa_consumer_t *c, int64_t deadline_ms)
{
    struct timespec  ts;
    int64_t          left = deadline_ms - samsa_now_ms();

    if (left <= 0) {
        return false;
    }
    if (deadline_ms == INT64_MAX || left > 1000) {
        left = 1000;                    /* re-check flags now and then */
    }
    ts = samsa_timespec_after(CLOCK_MONOTONIC, left);
    (void) pthread_cond_timedwait(&c->cond, &c->lock, &ts);
    return samsa_now_ms() < deadline_ms;
}

int64_t
samsa_consumer_deadline_ms(const samsa_consumer_t *c, int64_t timeout_ms)
{
    if (timeout_ms < 0) {
        timeout_ms = c->cc.default_api_timeout_ms;
    }
    return samsa_now_ms() + timeout_ms;
}

/* Run op on the bg thread and wait for it (or the deadline).  @owns op
 * @locks c->lock (held once) */
samsa_err_t
samsa_consumer_op_run(samsa_consumer_t *c, samsa_cop_t *op,
                      int64_t deadline_ms, samsa_topic_partition_t *results)
{
    samsa_err_t  err;
    size_t       i;

    op->waited = true;
    op->deadline_ms = deadline_ms;
    samsa_consumer_op_push(c, op);
    while (!op->done) {
        if (!samsa_consumer_wait(c, deadline_ms) && !op->done) {
            break;
        }
    }
    if (!op->done) {
        op->waited = false;             /* the bg thread frees it */
        op->cb = NULL;
        return SAMSA_ERR__TIMED_OUT;
    }
    err = op->err;
    if (results != NULL) {
        for (i = 0; i < op->n; i++) {
            results[i].offset = op->tps[i].offset;
            results[i].timestamp = op->tps[i].timestamp;
            results[i].err = op->tps[i].err;
        }
    }
    samsa_consumer_op_free(op);
    return err;
}

/* ---- metadata ----------------------------------------------------------- */

const char **
samsa_consumer_sub_topics(samsa_consumer_t *c, int32_t *n)
{
    const char             **out;
    const samsa_mdtopic_t   *t;
    int32_t                  i, nmd;

    *n = 0;
    if (c->sub_mode == SAMSA_CSUB_TOPICS) {
        out = samsa_calloc((size_t) c->nsub_topics + 1, sizeof(char *));
        for (i = 0; i < c->nsub_topics; i++) {
            out[(*n)++] = c->sub_topics[i];
        }
        return out;
    }
    nmd = samsa_mdcache_count(c->mdc);
    out = samsa_calloc((size_t) nmd + 1, sizeof(char *));
    if (c->sub_mode != SAMSA_CSUB_PATTERN || !c->has_re) {
        return out;
    }
    for (i = 0; i < nmd; i++) {
        t = samsa_mdcache_peek_at(c->mdc, i);
        if (t == NULL || t->err != SAMSA_ERR_NONE
            || (t->internal && c->cc.exclude_internal_topics)) {
            continue;
        }
        if (samsa_re_match(c->sub_re, t->name)) {
            out[(*n)++] = t->name;
        }
    }
    return out;
}

static void
consumer_names_add(const char ***names, int32_t *n, int32_t *cap,
                   const char *name)
{
    int32_t  i;

    for (i = 0; i < *n; i++) {
        if (strcmp((*names)[i], name) == 0) {
            return;
        }
    }
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 16;
        *names = samsa_realloc(*names, (size_t) *cap * sizeof(char *));
    }
    (*names)[(*n)++] = name;
}

/* Every topic the consumer needs metadata for.  @locks c->lock */
static const char **
consumer_md_wanted(samsa_consumer_t *c, int32_t *n)
{
    const char  **names = NULL;
    int32_t       cap = 0, i, j;

    *n = 0;
    for (i = 0; i < c->nparts; i++) {
        consumer_names_add(&names, n, &cap, c->parts[i]->topic);
    }
    for (i = 0; c->sub_mode == SAMSA_CSUB_TOPICS && i < c->nsub_topics; i++) {
        consumer_names_add(&names, n, &cap, c->sub_topics[i]);
    }
    for (i = 0; i < c->nmd_extra; i++) {
        consumer_names_add(&names, n, &cap, c->md_extra[i]);
    }
    for (i = 0; i < c->grp.nmembers; i++) {
        for (j = 0; j < c->grp.members[i].sub.ntopics; j++) {
            consumer_names_add(&names, n, &cap,
                               c->grp.members[i].sub.topics[j]);
        }
    }
    return names;
}

static void
consumer_on_metadata(void *ctx, int32_t node, samsa_err_t err,
                     samsa_rd_t *body, void *opaque)
{
    samsa_consumer_t  *c = ctx;

    (void) node;
    pthread_mutex_lock(&c->lock);
    c->md_inflight = false;
    if (samsa_mdcache_answer(c->mdc, c->nc, err, body,
                             (int16_t) (intptr_t) opaque) == SAMSA_ERR_NONE) {
        c->md_last_ms = samsa_now_ms();
        samsa_coordinator_md_changed(c);
        pthread_cond_broadcast(&c->cond);
    }
    pthread_mutex_unlock(&c->lock);
}

/* @thread bg @locks c->lock */
static void
consumer_maybe_metadata(samsa_consumer_t *c, int64_t now)
{
    samsa_mdcache_send_t   sent;
    const char           **names;
    int32_t                n;
    int64_t                next;
    bool                   all = c->sub_mode == SAMSA_CSUB_PATTERN;

    if (c->md_inflight
        || now - c->md_last_ms < c->cc.net.retry_backoff_ms
        || !samsa_mdcache_update_due(c->mdc, now, &next)) {
        return;
    }
    names = consumer_md_wanted(c, &n);
    if (n == 0 && !all) {
        samsa_free(names);
        return;
    }
    sent = samsa_mdcache_send(c->mdc, c->nc, names, all ? -1 : n,
                              c->cc.allow_auto_create_topics,
                              consumer_on_metadata, c, now);
    samsa_free(names);
    if (sent != SAMSA_MDCACHE_NO_NODE) {
        c->md_last_ms = now;
    }
    c->md_inflight = sent == SAMSA_MDCACHE_SENT;
}

/* ---- the background thread ---------------------------------------------- */

static void *
consumer_main(void *arg)
{
    samsa_consumer_t  *c = arg;
    int64_t            now, wait_ms;

    samsa_thread_name_set("samsa-consumer");
    while (atomic_load_explicit(&c->running, memory_order_acquire)) {
        pthread_mutex_lock(&c->lock);
        now = samsa_now_ms();
        consumer_maybe_metadata(c, now);
        wait_ms = samsa_coordinator_work(c, now);
        samsa_cfetch_work(c, now);
        pthread_mutex_unlock(&c->lock);
        if (wait_ms > CONSUMER_MAX_WAIT_MS || wait_ms < 0) {
            wait_ms = CONSUMER_MAX_WAIT_MS;
        }
        samsa_netclient_poll(c->nc, wait_ms);
    }
    return NULL;
}

/* ---- create ------------------------------------------------------------- */

samsa_err_t
samsa_consumer_new(const samsa_conf_t *conf, samsa_consumer_t **consumerp,
                   char *errstr, size_t errstr_size)
{
    samsa_consumer_t     *c;
    samsa_nc_conf_t       ncc;
    pthread_mutexattr_t   ma;
    pthread_condattr_t    ca;
    samsa_err_t           err;
    const char           *colon;
    char                 *host;
    size_t                i;

    *consumerp = NULL;
    c = samsa_calloc(1, sizeof(*c));
    err = samsa_cconf_load(&c->cc, conf, errstr, errstr_size);
    if (err != SAMSA_ERR_NONE) {
        samsa_cconf_fini(&c->cc);
        samsa_free(c);
        return err;
    }
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&c->lock, &ma);
    pthread_mutexattr_destroy(&ma);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c->cond, &ca);
    pthread_condattr_destroy(&ca);
    ncc = samsa_client_config_nc(&c->cc.net, 5, "consumer");
    /* a Fetch waits up to fetch.max.wait.ms on the broker */
    if (ncc.request_timeout_ms < c->cc.fetch_max_wait_ms + 5000) {
        ncc.request_timeout_ms = c->cc.fetch_max_wait_ms + 5000;
    }
    c->nc = samsa_netclient_new(&ncc);
    c->mdc = samsa_mdcache_new(SAMSA_MDCACHE_ANSWERED,
                               c->cc.net.metadata_max_age_ms, NULL, NULL);
    for (i = 0; i < c->cc.net.nbootstrap; i++) {
        colon = strrchr(c->cc.net.bootstrap[i], ':');
        host = samsa_strndup(c->cc.net.bootstrap[i],
                             (size_t) (colon - c->cc.net.bootstrap[i]));
        if (host[0] == '[' && host[strlen(host) - 1] == ']') {
            memmove(host, host + 1, strlen(host) - 2);
            host[strlen(host) - 2] = '\0';
        }
        samsa_netclient_node_set(c->nc, -1 - (int32_t) i, host,
                                 atoi(colon + 1));
        samsa_free(host);
    }
    c->grp.coord_id = -1;
    c->grp.coord_node = SAMSA_NC_NO_NODE;
    c->grp.generation = -1;
    c->grp.member_id = samsa_strdup("");
    c->md_last_ms = INT64_MIN / 2;
    c->last_poll_ms = samsa_now_ms();
    c->next_autocommit_ms = c->last_poll_ms + c->cc.auto_commit_interval_ms;
    atomic_init(&c->running, true);
    atomic_init(&c->woken, false);
    samsa_assert(pthread_create(&c->thread, NULL, consumer_main, c) == 0);
    *consumerp = c;
    return SAMSA_ERR_NONE;
}

void
samsa_consumer_set_rebalance_cb(samsa_consumer_t *c, samsa_rebalance_cb *cb,
                                void *opaque)
{
    pthread_mutex_lock(&c->lock);
    c->rebalance_cb = cb;
    c->rebalance_opaque = opaque;
    pthread_mutex_unlock(&c->lock);
}

/* ---- assignment --------------------------------------------------------- */

static void
consumer_parts_clear(samsa_consumer_t *c)
{
    int32_t  i;

    for (i = 0; i < c->nparts; i++) {
        consumer_part_free(c->parts[i]);
    }
    samsa_free(c->parts);
    c->parts = NULL;
    c->nparts = 0;
}

/* Add (topic, partition) unless assigned already.  @locks c->lock */
static void
consumer_part_add(samsa_consumer_t *c, const char *topic, int32_t partition)
{
    if (samsa_consumer_part_find(c, topic, strlen(topic), partition)
        != NULL) {
        return;
    }
    c->parts = samsa_realloc(c->parts, (size_t) (c->nparts + 1)
                                           * sizeof(*c->parts));
    c->parts[c->nparts++] = consumer_part_new(c, topic, partition);
}

static void
consumer_part_remove(samsa_consumer_t *c, const char *topic,
                     int32_t partition)
{
    int32_t  i;

    for (i = 0; i < c->nparts; i++) {
        if (c->parts[i]->partition == partition
            && strcmp(c->parts[i]->topic, topic) == 0) {
            consumer_part_free(c->parts[i]);
            c->parts[i] = c->parts[--c->nparts];
            return;
        }
    }
}

/* Exposed to coordinator.c through the events: add on ASSIGN happens on the
 * bg thread when the assignment arrives (so that positions are looked up
 * at once); see samsa_coordinator's sync handling. */
void samsa_consumer_parts_add(samsa_consumer_t *c,
                              const samsa_topic_partition_t *tps, size_t n);
void samsa_consumer_parts_remove(samsa_consumer_t *c,
                                 const samsa_topic_partition_t *tps,
                                 size_t n);

void
samsa_consumer_parts_add(samsa_consumer_t *c,
                         const samsa_topic_partition_t *tps, size_t n)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        consumer_part_add(c, tps[i].topic, tps[i].partition);
    }
    samsa_consumer_md_request(c);
}

void
samsa_consumer_parts_remove(samsa_consumer_t *c,
                            const samsa_topic_partition_t *tps, size_t n)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        consumer_part_remove(c, tps[i].topic, tps[i].partition);
    }
}

samsa_err_t
samsa_consumer_assign(samsa_consumer_t *c, const samsa_topic_partition_t *tps,
                      size_t n)
{
    size_t  i;

    if (n == 0) {
        return samsa_consumer_unsubscribe(c);
    }
    for (i = 0; i < n; i++) {
        if (tps[i].topic == NULL || tps[i].topic[0] == '\0'
            || tps[i].partition < 0) {
            return SAMSA_ERR__INVALID_ARG;
        }
    }
    pthread_mutex_lock(&c->lock);
    if (c->sub_mode == SAMSA_CSUB_TOPICS
        || c->sub_mode == SAMSA_CSUB_PATTERN) {
        pthread_mutex_unlock(&c->lock);
        return SAMSA_ERR__STATE;
    }
    /* keep the partitions that stay (and their positions) */
    for (i = 0; i < (size_t) c->nparts;) {
        samsa_cpart_t  *p = c->parts[i];
        size_t          j;
        bool            keep = false;

        for (j = 0; j < n && !keep; j++) {
            keep = tps[j].partition == p->partition
                   && strcmp(tps[j].topic, p->topic) == 0;
        }
        if (keep) {
            i++;
        } else {
            consumer_part_free(p);
            c->parts[i] = c->parts[--c->nparts];
        }
    }
    c->sub_mode = SAMSA_CSUB_ASSIGN;
    samsa_consumer_parts_add(c, tps, n);
    pthread_mutex_unlock(&c->lock);
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_consumer_assignment(samsa_consumer_t *c, samsa_topic_partition_t **tpsp,
                          size_t *np)
{
    samsa_topic_partition_t  *tps;
    int32_t                   i;

    pthread_mutex_lock(&c->lock);
    tps = samsa_calloc((size_t) c->nparts + 1, sizeof(*tps));
    for (i = 0; i < c->nparts; i++) {
        tps[i].topic = samsa_strdup(c->parts[i]->topic);
        tps[i].partition = c->parts[i]->partition;
        tps[i].offset = c->parts[i]->state == SAMSA_CPART_READY
                            ? c->parts[i]->position : SAMSA_OFFSET_INVALID;
    }
    *np = (size_t) c->nparts;
    *tpsp = tps;
    pthread_mutex_unlock(&c->lock);
    return SAMSA_ERR_NONE;
}

/* ---- subscribe ---------------------------------------------------------- */

static void
consumer_sub_clear(samsa_consumer_t *c)
{
    int32_t  i;

    for (i = 0; i < c->nsub_topics; i++) {
        samsa_free(c->sub_topics[i]);
    }
    samsa_free(c->sub_topics);
    c->sub_topics = NULL;
    c->nsub_topics = 0;
    if (c->has_re) {
        samsa_re_free(c->sub_re);
        c->sub_re = NULL;
        c->has_re = false;
    }
    samsa_free(c->sub_re_src);
    c->sub_re_src = NULL;
}

/* Start (or restart) joining.  @locks c->lock */
static void
consumer_join_request(samsa_consumer_t *c)
{
    if (c->grp.mship == NULL) {
        c->grp.mship = c->cc.group_protocol_consumer ? &samsa_group_protocol_consumer
                                                     : &samsa_group_protocol_classic;
    }
    c->grp.mship->join(c);
    samsa_consumer_md_request(c);
}

samsa_err_t
samsa_consumer_subscribe(samsa_consumer_t *c, const char *const *topics,
                         size_t n)
{
    size_t  i;

    if (c->cc.group_id == NULL) {
        return SAMSA_ERR__INVALID_ARG;
    }
    if (n == 0) {
        return samsa_consumer_unsubscribe(c);
    }
    for (i = 0; i < n; i++) {
        if (topics[i] == NULL || topics[i][0] == '\0') {
            return SAMSA_ERR__INVALID_ARG;
        }
    }
    pthread_mutex_lock(&c->lock);
    if (c->sub_mode == SAMSA_CSUB_ASSIGN) {
        pthread_mutex_unlock(&c->lock);
        return SAMSA_ERR__STATE;
    }
    consumer_sub_clear(c);
    c->sub_topics = samsa_calloc(n + 1, sizeof(char *));
    for (i = 0; i < n; i++) {
        c->sub_topics[i] = samsa_strdup(topics[i]);
    }
    c->nsub_topics = (int32_t) n;
    c->sub_mode = SAMSA_CSUB_TOPICS;
    consumer_join_request(c);
    pthread_mutex_unlock(&c->lock);
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_consumer_subscribe_pattern(samsa_consumer_t *c, const char *regex)
{
    samsa_re_t  *re;
    char         why[128];

    if (c->cc.group_id == NULL || regex == NULL) {
        return SAMSA_ERR__INVALID_ARG;
    }
    /* RE2 syntax over the whole topic name, as the coordinator reads the
     * same pattern (KIP-848's SubscribedTopicRegex) */
    re = samsa_re_compile(regex, strlen(regex), why, sizeof(why));
    if (re == NULL) {
        samsa_debug("consumer: pattern `%s` refused: %s", regex, why);
        return SAMSA_ERR__INVALID_ARG;
    }
    pthread_mutex_lock(&c->lock);
    if (c->sub_mode == SAMSA_CSUB_ASSIGN) {
        pthread_mutex_unlock(&c->lock);
        samsa_re_free(re);
        return SAMSA_ERR__STATE;
    }
    consumer_sub_clear(c);
    c->sub_re = re;
    c->has_re = true;
    c->sub_re_src = samsa_strdup(regex);
    c->sub_mode = SAMSA_CSUB_PATTERN;
    consumer_join_request(c);
    pthread_mutex_unlock(&c->lock);
    return SAMSA_ERR_NONE;
}

/* The assigned partitions with their positions (for commits).
 * @locks c->lock */
samsa_topic_partition_t *
samsa_consumer_positions(samsa_consumer_t *c, size_t *n, bool moved_only)
{
    samsa_topic_partition_t  *tps;
    int32_t                   i;

    tps = samsa_calloc((size_t) c->nparts + 1, sizeof(*tps));
    *n = 0;
    for (i = 0; i < c->nparts; i++) {
        samsa_cpart_t  *p = c->parts[i];

        if (p->state != SAMSA_CPART_READY || p->position < 0
            || (moved_only && p->position == p->committed)) {
            continue;
        }
        tps[*n].topic = samsa_strdup(p->topic);
        tps[*n].partition = p->partition;
        tps[*n].offset = p->position;
        (*n)++;
    }
    return tps;
}

/* Everything owned: auto-commit, REVOKED callback, drop.  For
 * unsubscribe() and close().  @thread app, lock not held */
static void
consumer_revoke_all(samsa_consumer_t *c, bool commit, int64_t deadline_ms)
{
    samsa_topic_partition_t  *tps, *all;
    size_t                    n, nall, i;
    samsa_rebalance_cb       *cb;
    void                     *opaque;
    bool                      in_group;

    pthread_mutex_lock(&c->lock);
    in_group = c->grp.generation >= 0 || c->sub_mode == SAMSA_CSUB_ASSIGN;
    tps = samsa_consumer_positions(c, &n, true);
    all = samsa_calloc((size_t) c->nparts + 1, sizeof(*all));
    nall = (size_t) c->nparts;
    for (i = 0; i < nall; i++) {
        all[i].topic = samsa_strdup(c->parts[i]->topic);
        all[i].partition = c->parts[i]->partition;
        all[i].offset = c->parts[i]->position;
    }
    cb = c->sub_mode != SAMSA_CSUB_ASSIGN ? c->rebalance_cb : NULL;
    opaque = c->rebalance_opaque;
    pthread_mutex_unlock(&c->lock);
    if (commit && c->cc.enable_auto_commit && in_group && n > 0) {
        int64_t      left = deadline_ms - samsa_now_ms();
        samsa_err_t  err = samsa_consumer_commit_sync(c, tps, n,
                                                      left > 0 ? left : 0);

        if (err != SAMSA_ERR_NONE) {
            samsa_warn("consumer: final commit failed: %s",
                       samsa_err_name(err));
        }
    }
    if (cb != NULL && nall > 0) {
        cb(c, SAMSA_REBALANCE_REVOKED, all, nall, opaque);
    }
    samsa_tp_array_free(tps, n);
    samsa_tp_array_free(all, nall);
}

/* LeaveGroup (dynamic members; static ones stay until their session
 * times out, as Java).  @thread app, lock not held */
static void
consumer_leave(samsa_consumer_t *c, int64_t deadline_ms)
{
    samsa_cop_t  *op;
    samsa_err_t   err;

    pthread_mutex_lock(&c->lock);
    if (c->grp.member_id[0] == '\0'
        || (c->cc.group_instance_id != NULL
            && !c->cc.group_protocol_consumer)) {
        c->grp.state = SAMSA_COORDINATOR_IDLE;
        pthread_mutex_unlock(&c->lock);
        return;
    }
    op = samsa_calloc(1, sizeof(*op));
    op->kind = SAMSA_COP_LEAVE;
    err = samsa_consumer_op_run(c, op, deadline_ms, NULL);
    if (err != SAMSA_ERR_NONE) {
        samsa_debug("consumer: LeaveGroup: %s", samsa_err_name(err));
    }
    pthread_mutex_unlock(&c->lock);
}

samsa_err_t
samsa_consumer_unsubscribe(samsa_consumer_t *c)
{
    samsa_csub_mode_t  mode;

    pthread_mutex_lock(&c->lock);
    mode = c->sub_mode;
    pthread_mutex_unlock(&c->lock);
    if (mode == SAMSA_CSUB_TOPICS || mode == SAMSA_CSUB_PATTERN) {
        consumer_revoke_all(c, true, samsa_consumer_deadline_ms(c, -1));
        consumer_leave(c, samsa_consumer_deadline_ms(c, -1));
    }
    pthread_mutex_lock(&c->lock);
    consumer_sub_clear(c);
    consumer_parts_clear(c);
    c->sub_mode = SAMSA_CSUB_NONE;
    if (c->grp.mship != NULL) {
        c->grp.mship->reset(c);
    }
    c->grp.state = SAMSA_COORDINATOR_IDLE;
    c->grp.generation = -1;
    pthread_mutex_unlock(&c->lock);
    return SAMSA_ERR_NONE;
}

/* ---- poll --------------------------------------------------------------- */

static void
consumer_rs_add(samsa_consumer_records_t *rs, samsa_crecs_chunk_t *ch,
                const samsa_consumer_record_t *r)
{
    if (rs->nchunks == 0 || rs->chunks[rs->nchunks - 1] != ch) {
        if (rs->nchunks == rs->cap_chunks) {
            rs->cap_chunks = rs->cap_chunks ? rs->cap_chunks * 2 : 8;
            rs->chunks = samsa_realloc(rs->chunks, rs->cap_chunks
                                                       * sizeof(*rs->chunks));
        }
        samsa_crecs_chunk_ref(ch);
        rs->chunks[rs->nchunks++] = ch;
    }
    if (rs->n == rs->cap) {
        rs->cap = rs->cap ? rs->cap * 2 : 64;
        rs->recs = samsa_realloc(rs->recs, rs->cap * sizeof(*rs->recs));
    }
    rs->recs[rs->n++] = r;
}

/* Take records of p into rs, up to max.  Returns an error the partition
 * holds once its records before it are out.  @locks c->lock */
static samsa_err_t
consumer_take(samsa_consumer_t *c, samsa_cpart_t *p,
              samsa_consumer_records_t *rs, size_t max)
{
    samsa_crecs_chunk_t  *ch;
    samsa_err_t           err;
    int64_t               bytes = 0;
    size_t                before = rs->n;

    while ((ch = p->q_head) != NULL && rs->n < max) {
        while (ch->pos < ch->n && rs->n < max) {
            const samsa_consumer_record_t  *r = &ch->recs[ch->pos++];

            if (r->offset < p->position) {
                continue;
            }
            consumer_rs_add(rs, ch, r);
            bytes += (int64_t) (r->key_len + r->value_len);
            p->position = r->offset + 1;
        }
        if (ch->pos < ch->n) {
            break;
        }
        if (ch->next_offset > p->position) {
            p->position = ch->next_offset;
        }
        if (ch->err != SAMSA_ERR_NONE) {
            p->err = ch->err;
            p->blocked = true;
            samsa_warn("consumer: %s [%d] at offset %lld: %s", p->topic,
                       p->partition, (long long) ch->err_offset,
                       samsa_err_name(ch->err));
        }
        p->q_head = ch->next;
        if (p->q_head == NULL) {
            p->q_tail = NULL;
        }
        p->nchunks--;
        samsa_crecs_chunk_unref(ch);
        samsa_netclient_wakeup(c->nc);  /* room to fetch again */
    }
    atomic_fetch_add_explicit(&c->m_records, (int64_t) (rs->n - before),
                              memory_order_relaxed);
    atomic_fetch_add_explicit(&c->m_bytes, bytes, memory_order_relaxed);
    err = SAMSA_ERR_NONE;
    if (p->q_head == NULL && p->err != SAMSA_ERR_NONE && rs->n == before) {
        err = p->err;
        p->err = SAMSA_ERR_NONE;
    }
    return err;
}

/* @locks c->lock */
static samsa_err_t
consumer_collect(samsa_consumer_t *c, samsa_consumer_records_t *rs)
{
    size_t       max = (size_t) c->cc.max_poll_records;
    samsa_err_t  err, first = SAMSA_ERR_NONE;
    int32_t      i, k, start = c->rr;

    for (k = 0; k < c->nparts && rs->n < max; k++) {
        samsa_cpart_t  *p;

        i = (start + k) % c->nparts;
        p = c->parts[i];
        if (p->paused || p->state != SAMSA_CPART_READY) {
            if (p->err != SAMSA_ERR_NONE && first == SAMSA_ERR_NONE) {
                first = p->err;
                p->err = SAMSA_ERR_NONE;
            }
            continue;
        }
        err = consumer_take(c, p, rs, max);
        if (err != SAMSA_ERR_NONE && first == SAMSA_ERR_NONE) {
            first = err;
        }
        c->rr = (i + 1) % (c->nparts > 0 ? c->nparts : 1);
    }
    return rs->n == 0 ? first : SAMSA_ERR_NONE;
}

/* Run queued events: rebalance and commit callbacks.
 * @thread app @locks c->lock (held once; released around callbacks) */
static void
consumer_run_events(samsa_consumer_t *c)
{
    samsa_cevent_t           *ev;
    samsa_topic_partition_t  *pos;
    size_t                    npos, i;
    samsa_rebalance_cb       *cb;
    void                     *opaque;
    bool                      commit;

    while ((ev = c->ev_head) != NULL) {
        c->ev_head = ev->next;
        if (c->ev_head == NULL) {
            c->ev_tail = NULL;
        }
        cb = c->rebalance_cb;
        opaque = c->rebalance_opaque;
        commit = ev->kind == SAMSA_CEVENT_REVOKE && c->cc.enable_auto_commit;
        pos = NULL;
        npos = 0;
        if (commit) {
            pos = samsa_calloc(ev->n + 1, sizeof(*pos));
            for (i = 0; i < ev->n; i++) {
                samsa_cpart_t  *p = samsa_consumer_part_find(
                    c, ev->tps[i].topic, strlen(ev->tps[i].topic),
                    ev->tps[i].partition);

                if (p != NULL && p->state == SAMSA_CPART_READY
                    && p->position >= 0 && p->position != p->committed) {
                    pos[npos].topic = samsa_strdup(p->topic);
                    pos[npos].partition = p->partition;
                    pos[npos].offset = p->position;
                    npos++;
                }
            }
        }
        pthread_mutex_unlock(&c->lock);
        if (npos > 0) {
            samsa_err_t  err = samsa_consumer_commit_sync(c, pos, npos, -1);

            if (err != SAMSA_ERR_NONE) {
                samsa_warn("consumer: commit before revoking failed: %s",
                           samsa_err_name(err));
            }
        }
        samsa_tp_array_free(pos, npos);
        switch (ev->kind) {
        case SAMSA_CEVENT_ASSIGN:
            if (cb != NULL) {
                cb(c, SAMSA_REBALANCE_ASSIGNED, ev->tps, ev->n, opaque);
            }
            break;
        case SAMSA_CEVENT_REVOKE:
        case SAMSA_CEVENT_LOST:
            if (cb != NULL && ev->n > 0) {
                cb(c, ev->kind == SAMSA_CEVENT_REVOKE
                          ? SAMSA_REBALANCE_REVOKED : SAMSA_REBALANCE_LOST,
                   ev->tps, ev->n, opaque);
            }
            break;
        case SAMSA_CEVENT_COMMIT:
            if (ev->cb != NULL) {
                ev->cb(c, ev->err, ev->tps, ev->n, ev->opaque);
            }
            break;
        }
        pthread_mutex_lock(&c->lock);
        if (ev->kind == SAMSA_CEVENT_REVOKE
            || ev->kind == SAMSA_CEVENT_LOST) {
            samsa_consumer_parts_remove(c, ev->tps, ev->n);
            if (c->grp.mship != NULL) {
                c->grp.mship->event_done(c, ev);
            }
        }
        consumer_event_free(ev);
    }
}

samsa_err_t
samsa_consumer_poll(samsa_consumer_t *c, int64_t timeout_ms,
                    samsa_consumer_records_t **recordsp)
{
    samsa_consumer_records_t  *rs;
    samsa_err_t                err = SAMSA_ERR_NONE;
    int64_t                    deadline;

    *recordsp = NULL;
    deadline = timeout_ms < 0 ? INT64_MAX : samsa_now_ms() + timeout_ms;
    rs = samsa_calloc(1, sizeof(*rs));
    pthread_mutex_lock(&c->lock);
    if (c->sub_mode == SAMSA_CSUB_NONE) {
        err = SAMSA_ERR__STATE;
        goto out;
    }
    for (;;) {
        c->last_poll_ms = samsa_now_ms();
        if (atomic_exchange_explicit(&c->woken, false,
                                     memory_order_acq_rel)) {
            err = SAMSA_ERR__SHUTDOWN;
            break;
        }
        consumer_run_events(c);
        samsa_coordinator_autocommit(c, c->last_poll_ms);
        if (c->grp.fatal != SAMSA_ERR_NONE) {
            err = c->grp.fatal;
            break;
        }
        /* Java's poll() throws AuthenticationException */
        err = samsa_netclient_auth_error(c->nc, NULL, 0);
        if (err != SAMSA_ERR_NONE) {
            break;
        }
        err = consumer_collect(c, rs);
        if (err != SAMSA_ERR_NONE || rs->n > 0) {
            break;
        }
        if (!samsa_consumer_wait(c, deadline) && c->ev_head == NULL) {
            c->last_poll_ms = samsa_now_ms();
            err = consumer_collect(c, rs);
            break;
        }
    }
out:
    pthread_mutex_unlock(&c->lock);
    if (err != SAMSA_ERR_NONE) {
        samsa_consumer_records_free(rs);
        return err;
    }
    *recordsp = rs;
    return SAMSA_ERR_NONE;
}

size_t
samsa_consumer_records_count(const samsa_consumer_records_t *rs)
{
    return rs != NULL ? rs->n : 0;
}

const samsa_consumer_record_t *
samsa_consumer_records_get(const samsa_consumer_records_t *rs, size_t i)
{
    return rs != NULL && i < rs->n ? rs->recs[i] : NULL;
}

void
samsa_consumer_records_free(samsa_consumer_records_t *rs)
{
    size_t  i;

    if (rs == NULL) {
        return;
    }
    for (i = 0; i < rs->nchunks; i++) {
        samsa_crecs_chunk_unref(rs->chunks[i]);
    }
    samsa_free(rs->chunks);
    samsa_free(rs->recs);
    samsa_free(rs);
}

void
samsa_consumer_wakeup(samsa_consumer_t *c)
{
    atomic_store_explicit(&c->woken, true, memory_order_release);
    pthread_mutex_lock(&c->lock);
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
}

/* ---- close -------------------------------------------------------------- */

samsa_err_t
samsa_consumer_close(samsa_consumer_t *c, int64_t timeout_ms)
{
    samsa_cevent_t  *ev, *evn;
    samsa_cop_t     *op, *opn;
    int64_t          deadline;
    int32_t          i;
    bool             grouped;

    if (c == NULL) {
        return SAMSA_ERR_NONE;
    }
    deadline = samsa_now_ms() + (timeout_ms < 0 ? 30000 : timeout_ms);
    pthread_mutex_lock(&c->lock);
    consumer_run_events(c);             /* pending commit callbacks */
    grouped = c->sub_mode == SAMSA_CSUB_TOPICS
              || c->sub_mode == SAMSA_CSUB_PATTERN;
    pthread_mutex_unlock(&c->lock);
    if (grouped || c->cc.enable_auto_commit) {
        consumer_revoke_all(c, true, deadline);
    }
    if (grouped) {
        consumer_leave(c, deadline);
    }
    pthread_mutex_lock(&c->lock);
    c->closing = true;
    pthread_mutex_unlock(&c->lock);
    atomic_store_explicit(&c->running, false, memory_order_release);
    samsa_netclient_wakeup(c->nc);
    pthread_join(c->thread, NULL);
    samsa_netclient_free(c->nc);        /* fails what is in flight */
    for (ev = c->ev_head; ev != NULL; ev = evn) {
        evn = ev->next;
        consumer_event_free(ev);
    }
    for (op = c->op_head; op != NULL; op = opn) {
        opn = op->next;
        samsa_consumer_op_free(op);
    }
    consumer_parts_clear(c);
    consumer_sub_clear(c);
    samsa_mdcache_free(c->mdc);
    for (i = 0; i < c->nmd_extra; i++) {
        samsa_free(c->md_extra[i]);
    }
    samsa_free(c->md_extra);
    samsa_free(c->fetch_nodes);
    samsa_coordinator_fini(&c->grp);
    samsa_cconf_fini(&c->cc);
    pthread_cond_destroy(&c->cond);
    pthread_mutex_destroy(&c->lock);
    samsa_free(c);
    return SAMSA_ERR_NONE;
}
