/*
 * client/consumer/membership.c - the KIP-848 member state machine (see membership.h).
 * Threads: the caller's (under the consumer's lock); no I/O.
 */
#include "client/consumer/membership.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"

/* ---- helpers ------------------------------------------------------------ */

/* Free what the pointer at byte offset off of each of the n elements
 * (size bytes each) of arr points to, then arr. */
static void
membership_free_each(void *arr, int32_t n, size_t size, size_t off)
{
    void     *p;
    int32_t   i;

    for (i = 0; i < n; i++) {
        memcpy(&p, (uint8_t *) arr + (size_t) i * size + off, sizeof(p));
        samsa_free(p);
    }
    samsa_free(arr);
}

void
samsa_membership_tps_free(samsa_membership_tp_t *tps, int32_t n)
{
    membership_free_each(tps, n, sizeof(*tps),
                         offsetof(samsa_membership_tp_t, topic));
}

void
samsa_membership_topics_free(samsa_membership_topic_t *topics, int32_t n)
{
    membership_free_each(topics, n, sizeof(*topics),
                         offsetof(samsa_membership_topic_t, parts));
}

static void
membership_strs_free(char **s, int32_t n)
{
    membership_free_each(s, n, sizeof(*s), 0);
}

static int
membership_tp_cmp(const void *a, const void *b)
{
    const samsa_membership_tp_t  *x = a, *y = b;
    int                      c = memcmp(x->id.b, y->id.b, sizeof(x->id.b));

    if (c != 0) {
        return c;
    }
    return x->partition < y->partition ? -1 : x->partition > y->partition;
}

static bool
membership_tp_has(const samsa_membership_tp_t *tps, int32_t n,
             const samsa_membership_tp_t *tp)
{
    return n > 0 && bsearch(tp, tps, (size_t) n, sizeof(*tps),
                            membership_tp_cmp) != NULL;
}

static bool
membership_tps_eq(const samsa_membership_tp_t *a, int32_t na,
             const samsa_membership_tp_t *b, int32_t nb)
{
    int32_t  i;

    if (na != nb) {
        return false;
    }
    for (i = 0; i < na; i++) {
        if (membership_tp_cmp(&a[i], &b[i]) != 0) {
            return false;
        }
    }
    return true;
}

static samsa_membership_tp_t *
membership_tps_dup(const samsa_membership_tp_t *tps, int32_t n)
{
    samsa_membership_tp_t  *out = samsa_calloc((size_t) n + 1, sizeof(*out));
    int32_t            i;

    for (i = 0; i < n; i++) {
        out[i] = tps[i];
        out[i].topic = samsa_strdup(tps[i].topic);
    }
    return out;
}

/* Drop the topic names last sent. */
static void
membership_sent_topics_clear(samsa_membership_t *sm)
{
    membership_strs_free(sm->sent_topics, sm->nsent_topics);
    sm->sent_topics = NULL;
    sm->nsent_topics = 0;
}

/* Forget what the coordinator has: the next heartbeat sends it all. */
static void
membership_sent_reset(samsa_membership_t *sm)
{
    sm->sent_all = false;
    membership_sent_topics_clear(sm);
    sm->sent_topics_valid = false;
    sm->sent_regex = false;
    samsa_membership_tps_free(sm->sent_owned, sm->nsent_owned);
    sm->sent_owned = NULL;
    sm->nsent_owned = 0;
    sm->sent_owned_valid = false;
}

static void
membership_assignment_reset(samsa_membership_t *sm)
{
    samsa_membership_topics_free(sm->target, sm->ntarget);
    sm->target = NULL;
    sm->ntarget = 0;
    sm->target_new = false;
    samsa_membership_tps_free(sm->owned, sm->nowned);
    sm->owned = NULL;
    sm->nowned = 0;
    samsa_membership_tps_free(sm->pending, sm->npending);
    sm->pending = NULL;
    sm->npending = 0;
    sm->unresolved = false;
}

/* ---- life --------------------------------------------------------------- */

void
samsa_membership_init(samsa_membership_t *sm, const uint8_t random[16],
                 bool is_static)
{
    static const char  b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrst"
                               "uvwxyz0123456789-_";
    uint32_t           acc = 0;
    int32_t            bits = 0, i, o = 0;

    memset(sm, 0, sizeof(*sm));
    sm->is_static = is_static;
    sm->interval_ms = 5000;     /* until the coordinator says */
    /* URL-safe base64 without padding: 22 characters for 16 bytes */
    for (i = 0; i < 16; i++) {
        acc = (acc << 8) | random[i];
        bits += 8;
        while (bits >= 6) {
            bits -= 6;
            sm->member_id[o++] = b64[(acc >> bits) & 0x3f];
        }
    }
    if (bits > 0) {
        sm->member_id[o++] = b64[(acc << (6 - bits)) & 0x3f];
    }
    sm->member_id[o] = '\0';
}

void
samsa_membership_fini(samsa_membership_t *sm)
{
    membership_sent_reset(sm);
    membership_assignment_reset(sm);
    samsa_membership_topics_free(sm->req_owned, sm->nreq_owned);
    memset(sm, 0, sizeof(*sm));
}

void
samsa_membership_join(samsa_membership_t *sm)
{
    if (sm->state != SAMSA_MEMBERSHIP_UNSUBSCRIBED) {
        return;
    }
    sm->state = SAMSA_MEMBERSHIP_JOINING;
    sm->epoch = 0;
    sm->hb_next_ms = 0;
    membership_sent_reset(sm);
}

void
samsa_membership_sub_changed(samsa_membership_t *sm)
{
    sm->sent_topics_valid = false;
    if (sm->state == SAMSA_MEMBERSHIP_UNSUBSCRIBED) {
        samsa_membership_join(sm);
    } else if (sm->state != SAMSA_MEMBERSHIP_FATAL) {
        sm->hb_next_ms = 0;
    }
}

bool
samsa_membership_leave(samsa_membership_t *sm)
{
    if (sm->state == SAMSA_MEMBERSHIP_FATAL) {
        return false;
    }
    if (sm->epoch <= 0 || sm->state == SAMSA_MEMBERSHIP_UNSUBSCRIBED
        || sm->state == SAMSA_MEMBERSHIP_FENCED) {
        samsa_membership_reset(sm);
        return false;
    }
    sm->state = SAMSA_MEMBERSHIP_LEAVING;
    sm->hb_next_ms = 0;
    return true;
}

void
samsa_membership_reset(samsa_membership_t *sm)
{
    membership_sent_reset(sm);
    membership_assignment_reset(sm);
    if (sm->state != SAMSA_MEMBERSHIP_FATAL) {
        sm->state = SAMSA_MEMBERSHIP_UNSUBSCRIBED;
    }
    sm->epoch = 0;
    sm->leave_sent = false;
}

/* ---- heartbeats --------------------------------------------------------- */

bool
samsa_membership_hb_due(const samsa_membership_t *sm, int64_t now)
{
    switch (sm->state) {
    case SAMSA_MEMBERSHIP_JOINING:
    case SAMSA_MEMBERSHIP_RECONCILING:
    case SAMSA_MEMBERSHIP_ACKNOWLEDGING:
    case SAMSA_MEMBERSHIP_STABLE:
    case SAMSA_MEMBERSHIP_LEAVING:
        return !sm->hb_inflight && now >= sm->hb_next_ms;
    default:
        return false;
    }
}

static bool
membership_topics_eq(char *const *a, int32_t na, const char *const *b, int32_t nb)
{
    int32_t  i, j;

    if (na != nb) {
        return false;
    }
    for (i = 0; i < nb; i++) {
        for (j = 0; j < na && strcmp(a[j], b[i]) != 0; j++) {
        }
        if (j == na) {
            return false;
        }
    }
    return true;
}

/* sm->owned (sorted by id) grouped per topic id into sm->req_owned. */
static void
membership_group_owned(samsa_membership_t *sm)
{
    int32_t  i;

    samsa_membership_topics_free(sm->req_owned, sm->nreq_owned);
    sm->req_owned = samsa_calloc((size_t) sm->nowned + 1,
                                 sizeof(*sm->req_owned));
    sm->nreq_owned = 0;
    for (i = 0; i < sm->nowned; i++) {
        samsa_membership_topic_t  *t;

        if (sm->nreq_owned == 0
            || !samsa_uuid_eq(sm->req_owned[sm->nreq_owned - 1].id,
                              sm->owned[i].id)) {
            t = &sm->req_owned[sm->nreq_owned++];
            t->id = sm->owned[i].id;
            t->parts = samsa_calloc((size_t) sm->nowned + 1,
                                    sizeof(int32_t));
        }
        t = &sm->req_owned[sm->nreq_owned - 1];
        t->parts[t->nparts++] = sm->owned[i].partition;
    }
}

void
samsa_membership_hb_build(samsa_membership_t *sm, int64_t now,
                     const char *const *topics, int32_t ntopics,
                     const char *regex,
                     const char *instance_id, const char *rack_id,
                     int32_t rebalance_timeout_ms,
                     const char *server_assignor, samsa_membership_hbreq_t *req)
{
    bool     full = sm->epoch == 0 || !sm->sent_all;
    int32_t  i;

    memset(req, 0, sizeof(*req));
    req->member_id = sm->member_id;
    req->rebalance_timeout_ms = -1;
    req->topics_null = true;
    req->owned_null = true;
    sm->hb_inflight = true;
    sm->hb_next_ms = now + sm->interval_ms;
    if (sm->state == SAMSA_MEMBERSHIP_LEAVING) {
        req->epoch = sm->is_static ? SAMSA_MEMBERSHIP_LEAVE_STATIC_EPOCH
                                   : SAMSA_MEMBERSHIP_LEAVE_EPOCH;
        req->instance_id = instance_id;
        sm->leave_sent = true;
        return;
    }
    req->epoch = sm->epoch;
    if (full) {
        req->instance_id = instance_id;
        req->rack_id = rack_id;
        req->rebalance_timeout_ms = rebalance_timeout_ms;
        req->server_assignor = server_assignor;
    }
    if (regex != NULL) {
        if (full || !sm->sent_topics_valid || !sm->sent_regex) {
            if (!full && sm->nsent_topics > 0) {
                req->ntopics = 0;           /* names given up */
                req->topics_null = false;
            }
            req->regex = regex;
            membership_sent_topics_clear(sm);
            sm->sent_regex = true;
            sm->sent_topics_valid = true;
        }
    } else if (full || !sm->sent_topics_valid || sm->sent_regex
               || !membership_topics_eq(sm->sent_topics, sm->nsent_topics,
                                   topics, ntopics)) {
        if (!full && sm->sent_regex) {
            req->regex = "";                /* the regex given up */
        }
        sm->sent_regex = false;
        req->topics = topics;
        req->ntopics = ntopics;
        req->topics_null = false;
        membership_strs_free(sm->sent_topics, sm->nsent_topics);
        sm->sent_topics = samsa_calloc((size_t) ntopics + 1, sizeof(char *));
        for (i = 0; i < ntopics; i++) {
            sm->sent_topics[i] = samsa_strdup(topics[i]);
        }
        sm->nsent_topics = ntopics;
        sm->sent_topics_valid = true;
    }
    if (full || !sm->sent_owned_valid
        || !membership_tps_eq(sm->sent_owned, sm->nsent_owned, sm->owned,
                         sm->nowned)) {
        membership_group_owned(sm);
        req->owned = sm->req_owned;
        req->nowned = sm->nreq_owned;
        req->owned_null = false;
        samsa_membership_tps_free(sm->sent_owned, sm->nsent_owned);
        sm->sent_owned = membership_tps_dup(sm->owned, sm->nowned);
        sm->nsent_owned = sm->nowned;
        sm->sent_owned_valid = true;
    }
    if (sm->state == SAMSA_MEMBERSHIP_ACKNOWLEDGING) {
        sm->state = SAMSA_MEMBERSHIP_STABLE;     /* Java: acked once sent */
    }
}

void
samsa_membership_hb_failed(samsa_membership_t *sm, int64_t now, int64_t backoff_ms)
{
    sm->hb_inflight = false;
    sm->leave_sent = false;
    sm->hb_next_ms = now + backoff_ms;
    membership_sent_reset(sm);
}

/* Errors worth another heartbeat after a backoff; every other error not
 * handled by name is fatal (Java's ConsumerHeartbeatRequestManager:
 * GROUP_AUTHORIZATION_FAILED, INVALID_REQUEST, GROUP_MAX_SIZE_REACHED,
 * UNSUPPORTED_ASSIGNOR, UNRELEASED_INSTANCE_ID, UNSUPPORTED_VERSION, and
 * GROUP_ID_NOT_FOUND for a classic group of the same id ...). */
static bool
membership_retriable_err(samsa_err_t err)
{
    return err == SAMSA_ERR_COORDINATOR_LOAD_IN_PROGRESS
           || err == SAMSA_ERR_REQUEST_TIMED_OUT
           || err == SAMSA_ERR_NETWORK_EXCEPTION;
}

samsa_membership_act_t
samsa_membership_hb_result(samsa_membership_t *sm, int64_t now, int64_t backoff_ms,
                      const samsa_membership_hbresp_t *resp)
{
    samsa_err_t  err = resp->err;
    int32_t      i;

    sm->hb_inflight = false;
    if (sm->state == SAMSA_MEMBERSHIP_LEAVING) {
        if (!sm->leave_sent) {
            return SAMSA_MEMBERSHIP_ACT_NONE;    /* an older one: leave next */
        }
        samsa_membership_reset(sm);
        return SAMSA_MEMBERSHIP_ACT_LEFT;
    }
    if (sm->state == SAMSA_MEMBERSHIP_UNSUBSCRIBED
        || sm->state == SAMSA_MEMBERSHIP_FATAL) {
        return SAMSA_MEMBERSHIP_ACT_NONE;
    }
    if (err == SAMSA_ERR_NONE) {
        if (resp->member_id != NULL && resp->member_id[0] != '\0'
            && strlen(resp->member_id) < sizeof(sm->member_id)) {
            strcpy(sm->member_id, resp->member_id);
        }
        if (sm->state == SAMSA_MEMBERSHIP_FENCED) {
            return SAMSA_MEMBERSHIP_ACT_NONE;    /* answered before the fence */
        }
        sm->epoch = resp->epoch;
        if (resp->interval_ms > 0) {
            sm->interval_ms = resp->interval_ms;
        }
        sm->hb_next_ms = now + sm->interval_ms;
        sm->sent_all = true;
        if (sm->state == SAMSA_MEMBERSHIP_JOINING && sm->epoch > 0) {
            sm->state = SAMSA_MEMBERSHIP_STABLE;
        }
        if (resp->has_assignment) {
            samsa_membership_topics_free(sm->target, sm->ntarget);
            sm->target = samsa_calloc((size_t) resp->ntopics + 1,
                                      sizeof(*sm->target));
            for (i = 0; i < resp->ntopics; i++) {
                const samsa_membership_topic_t  *t = &resp->topics[i];

                sm->target[i].id = t->id;
                sm->target[i].nparts = t->nparts;
                sm->target[i].parts = samsa_calloc((size_t) t->nparts + 1,
                                                   sizeof(int32_t));
                if (t->nparts > 0) {
                    memcpy(sm->target[i].parts, t->parts,
                           (size_t) t->nparts * sizeof(int32_t));
                }
            }
            sm->ntarget = resp->ntopics;
            sm->target_new = true;
        }
        return sm->target_new || sm->unresolved ? SAMSA_MEMBERSHIP_ACT_RECONCILE
                                                : SAMSA_MEMBERSHIP_ACT_NONE;
    }
    membership_sent_reset(sm);
    if (err == SAMSA_ERR_FENCED_MEMBER_EPOCH
        || err == SAMSA_ERR_UNKNOWN_MEMBER_ID) {
        if (sm->state == SAMSA_MEMBERSHIP_FENCED) {
            return SAMSA_MEMBERSHIP_ACT_NONE;
        }
        sm->epoch = 0;
        samsa_membership_topics_free(sm->target, sm->ntarget);
        sm->target = NULL;
        sm->ntarget = 0;
        sm->target_new = false;
        sm->unresolved = false;
        if (sm->nowned > 0 || sm->state == SAMSA_MEMBERSHIP_RECONCILING) {
            samsa_membership_tps_free(sm->pending, sm->npending);
            sm->pending = NULL;
            sm->npending = 0;
            sm->state = SAMSA_MEMBERSHIP_FENCED;
            return SAMSA_MEMBERSHIP_ACT_LOST;
        }
        sm->state = SAMSA_MEMBERSHIP_JOINING;
        sm->hb_next_ms = now;
        return SAMSA_MEMBERSHIP_ACT_NONE;
    }
    if (err == SAMSA_ERR_NOT_COORDINATOR
        || err == SAMSA_ERR_COORDINATOR_NOT_AVAILABLE
        || err < SAMSA_ERR_UNKNOWN_SERVER_ERROR) {
        sm->hb_next_ms = now;
        return SAMSA_MEMBERSHIP_ACT_COORD;
    }
    if (membership_retriable_err(err)) {
        sm->hb_next_ms = now + backoff_ms;
        return SAMSA_MEMBERSHIP_ACT_RETRY;
    }
    sm->fatal = err;
    sm->state = SAMSA_MEMBERSHIP_FATAL;
    return SAMSA_MEMBERSHIP_ACT_FATAL;
}

/* ---- reconciliation ----------------------------------------------------- */

bool
samsa_membership_reconcile(samsa_membership_t *sm, samsa_membership_resolve_fn *fn,
                      void *ctx, samsa_membership_tp_t **added, int32_t *nadded,
                      samsa_membership_tp_t **revoked, int32_t *nrevoked,
                      bool *need_md)
{
    samsa_membership_tp_t  *res;
    int32_t            n = 0, total = 0, i, j;

    *added = *revoked = NULL;
    *nadded = *nrevoked = 0;
    *need_md = false;
    if ((sm->state != SAMSA_MEMBERSHIP_STABLE
         && sm->state != SAMSA_MEMBERSHIP_ACKNOWLEDGING)
        || (!sm->target_new && !sm->unresolved)) {
        return false;
    }
    for (i = 0; i < sm->ntarget; i++) {
        total += sm->target[i].nparts;
    }
    res = samsa_calloc((size_t) total + 1, sizeof(*res));
    sm->unresolved = false;
    for (i = 0; i < sm->ntarget; i++) {
        const char  *name = fn(ctx, sm->target[i].id);

        if (name == NULL) {
            sm->unresolved = true;      /* wait for metadata */
            continue;
        }
        for (j = 0; j < sm->target[i].nparts; j++) {
            res[n].topic = samsa_strdup(name);
            res[n].id = sm->target[i].id;
            res[n].partition = sm->target[i].parts[j];
            n++;
        }
    }
    *need_md = sm->unresolved;
    sm->target_new = false;
    qsort(res, (size_t) n, sizeof(*res), membership_tp_cmp);
    for (i = 1, j = n > 0 ? 1 : 0; i < n; i++) {    /* duplicates out */
        if (membership_tp_cmp(&res[i], &res[j - 1]) == 0) {
            samsa_free(res[i].topic);
        } else {
            res[j++] = res[i];
        }
    }
    n = j;
    if (membership_tps_eq(res, n, sm->owned, sm->nowned)) {
        samsa_membership_tps_free(res, n);
        return false;
    }
    *added = samsa_calloc((size_t) n + 1, sizeof(**added));
    *revoked = samsa_calloc((size_t) sm->nowned + 1, sizeof(**revoked));
    for (i = 0; i < n; i++) {
        if (!membership_tp_has(sm->owned, sm->nowned, &res[i])) {
            (*added)[*nadded] = res[i];
            (*added)[(*nadded)++].topic = samsa_strdup(res[i].topic);
        }
    }
    for (i = 0; i < sm->nowned; i++) {
        if (!membership_tp_has(res, n, &sm->owned[i])) {
            (*revoked)[*nrevoked] = sm->owned[i];
            (*revoked)[(*nrevoked)++].topic =
                samsa_strdup(sm->owned[i].topic);
        }
    }
    samsa_membership_tps_free(sm->pending, sm->npending);
    sm->pending = res;
    sm->npending = n;
    sm->state = SAMSA_MEMBERSHIP_RECONCILING;
    return true;
}

void
samsa_membership_reconciled(samsa_membership_t *sm)
{
    if (sm->state != SAMSA_MEMBERSHIP_RECONCILING) {
        return;                 /* fenced or left meanwhile */
    }
    samsa_membership_tps_free(sm->owned, sm->nowned);
    sm->owned = sm->pending;
    sm->nowned = sm->npending;
    sm->pending = NULL;
    sm->npending = 0;
    sm->state = SAMSA_MEMBERSHIP_ACKNOWLEDGING;
    sm->hb_next_ms = 0;
}

void
samsa_membership_lost_done(samsa_membership_t *sm)
{
    if (sm->state != SAMSA_MEMBERSHIP_FENCED) {
        return;
    }
    membership_assignment_reset(sm);
    membership_sent_reset(sm);
    sm->state = SAMSA_MEMBERSHIP_JOINING;
    sm->epoch = 0;
    sm->hb_next_ms = 0;
}

const char *
samsa_membership_state_name(samsa_membership_state_t s)
{
    static const char *const  names[] = {
        "UNSUBSCRIBED", "JOINING", "RECONCILING", "ACKNOWLEDGING",
        "STABLE", "FENCED", "LEAVING", "FATAL",
    };

    return (size_t) s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}
