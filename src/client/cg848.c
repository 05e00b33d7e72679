/*
 * client/cg848.c - the KIP-848 member state machine (see cg848.h).
 * Threads: the caller's (under the consumer's lock); no I/O.
 */
#include "client/cg848.h"

#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"

/* ---- helpers ------------------------------------------------------------ */

void
samsa_cg848_tps_free(samsa_cg848_tp_t *tps, int32_t n)
{
    int32_t  i;

    for (i = 0; i < n; i++) {
        samsa_free(tps[i].topic);
    }
    samsa_free(tps);
}

void
samsa_cg848_topics_free(samsa_cg848_topic_t *topics, int32_t n)
{
    int32_t  i;

    for (i = 0; i < n; i++) {
        samsa_free(topics[i].parts);
    }
    samsa_free(topics);
}

static void
cg848_strs_free(char **s, int32_t n)
{
    int32_t  i;

    for (i = 0; i < n; i++) {
        samsa_free(s[i]);
    }
    samsa_free(s);
}

static int
cg848_tp_cmp(const void *a, const void *b)
{
    const samsa_cg848_tp_t  *x = a, *y = b;
    int                      c = memcmp(x->id.b, y->id.b, sizeof(x->id.b));

    if (c != 0) {
        return c;
    }
    return x->partition < y->partition ? -1 : x->partition > y->partition;
}

static bool
cg848_tp_has(const samsa_cg848_tp_t *tps, int32_t n,
             const samsa_cg848_tp_t *tp)
{
    return n > 0 && bsearch(tp, tps, (size_t) n, sizeof(*tps),
                            cg848_tp_cmp) != NULL;
}

static bool
cg848_tps_eq(const samsa_cg848_tp_t *a, int32_t na,
             const samsa_cg848_tp_t *b, int32_t nb)
{
    int32_t  i;

    if (na != nb) {
        return false;
    }
    for (i = 0; i < na; i++) {
        if (cg848_tp_cmp(&a[i], &b[i]) != 0) {
            return false;
        }
    }
    return true;
}

static samsa_cg848_tp_t *
cg848_tps_dup(const samsa_cg848_tp_t *tps, int32_t n)
{
    samsa_cg848_tp_t  *out = samsa_calloc((size_t) n + 1, sizeof(*out));
    int32_t            i;

    for (i = 0; i < n; i++) {
        out[i] = tps[i];
        out[i].topic = samsa_strdup(tps[i].topic);
    }
    return out;
}

/* Forget what the coordinator has: the next heartbeat sends it all. */
static void
cg848_sent_reset(samsa_cg848_t *sm)
{
    sm->sent_all = false;
    cg848_strs_free(sm->sent_topics, sm->nsent_topics);
    sm->sent_topics = NULL;
    sm->nsent_topics = 0;
    sm->sent_topics_valid = false;
    sm->sent_regex = false;
    samsa_cg848_tps_free(sm->sent_owned, sm->nsent_owned);
    sm->sent_owned = NULL;
    sm->nsent_owned = 0;
    sm->sent_owned_valid = false;
}

static void
cg848_assignment_reset(samsa_cg848_t *sm)
{
    samsa_cg848_topics_free(sm->target, sm->ntarget);
    sm->target = NULL;
    sm->ntarget = 0;
    sm->target_new = false;
    samsa_cg848_tps_free(sm->owned, sm->nowned);
    sm->owned = NULL;
    sm->nowned = 0;
    samsa_cg848_tps_free(sm->pending, sm->npending);
    sm->pending = NULL;
    sm->npending = 0;
    sm->unresolved = false;
}

/* ---- life --------------------------------------------------------------- */

void
samsa_cg848_init(samsa_cg848_t *sm, const uint8_t random[16],
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
samsa_cg848_fini(samsa_cg848_t *sm)
{
    cg848_sent_reset(sm);
    cg848_assignment_reset(sm);
    samsa_cg848_topics_free(sm->req_owned, sm->nreq_owned);
    memset(sm, 0, sizeof(*sm));
}

void
samsa_cg848_join(samsa_cg848_t *sm)
{
    if (sm->state != SAMSA_CG848_UNSUBSCRIBED) {
        return;
    }
    sm->state = SAMSA_CG848_JOINING;
    sm->epoch = 0;
    sm->hb_next_ms = 0;
    cg848_sent_reset(sm);
}

void
samsa_cg848_sub_changed(samsa_cg848_t *sm)
{
    sm->sent_topics_valid = false;
    if (sm->state == SAMSA_CG848_UNSUBSCRIBED) {
        samsa_cg848_join(sm);
    } else if (sm->state != SAMSA_CG848_FATAL) {
        sm->hb_next_ms = 0;
    }
}

bool
samsa_cg848_leave(samsa_cg848_t *sm)
{
    if (sm->state == SAMSA_CG848_FATAL) {
        return false;
    }
    if (sm->epoch <= 0 || sm->state == SAMSA_CG848_UNSUBSCRIBED
        || sm->state == SAMSA_CG848_FENCED) {
        samsa_cg848_reset(sm);
        return false;
    }
    sm->state = SAMSA_CG848_LEAVING;
    sm->hb_next_ms = 0;
    return true;
}

void
samsa_cg848_reset(samsa_cg848_t *sm)
{
    cg848_sent_reset(sm);
    cg848_assignment_reset(sm);
    if (sm->state != SAMSA_CG848_FATAL) {
        sm->state = SAMSA_CG848_UNSUBSCRIBED;
    }
    sm->epoch = 0;
    sm->leave_sent = false;
}

/* ---- heartbeats --------------------------------------------------------- */

bool
samsa_cg848_hb_due(const samsa_cg848_t *sm, int64_t now)
{
    switch (sm->state) {
    case SAMSA_CG848_JOINING:
    case SAMSA_CG848_RECONCILING:
    case SAMSA_CG848_ACKNOWLEDGING:
    case SAMSA_CG848_STABLE:
    case SAMSA_CG848_LEAVING:
        return !sm->hb_inflight && now >= sm->hb_next_ms;
    default:
        return false;
    }
}

static bool
cg848_topics_eq(char *const *a, int32_t na, const char *const *b, int32_t nb)
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
cg848_group_owned(samsa_cg848_t *sm)
{
    int32_t  i;

    samsa_cg848_topics_free(sm->req_owned, sm->nreq_owned);
    sm->req_owned = samsa_calloc((size_t) sm->nowned + 1,
                                 sizeof(*sm->req_owned));
    sm->nreq_owned = 0;
    for (i = 0; i < sm->nowned; i++) {
        samsa_cg848_topic_t  *t;

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
samsa_cg848_hb_build(samsa_cg848_t *sm, int64_t now,
                     const char *const *topics, int32_t ntopics,
                     const char *regex,
                     const char *instance_id, const char *rack_id,
                     int32_t rebalance_timeout_ms,
                     const char *server_assignor, samsa_cg848_hbreq_t *req)
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
    if (sm->state == SAMSA_CG848_LEAVING) {
        req->epoch = sm->is_static ? SAMSA_CG848_LEAVE_STATIC_EPOCH
                                   : SAMSA_CG848_LEAVE_EPOCH;
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
            cg848_strs_free(sm->sent_topics, sm->nsent_topics);
            sm->sent_topics = NULL;
            sm->nsent_topics = 0;
            sm->sent_regex = true;
            sm->sent_topics_valid = true;
        }
    } else if (full || !sm->sent_topics_valid || sm->sent_regex
               || !cg848_topics_eq(sm->sent_topics, sm->nsent_topics,
                                   topics, ntopics)) {
        if (!full && sm->sent_regex) {
            req->regex = "";                /* the regex given up */
        }
        sm->sent_regex = false;
        req->topics = topics;
        req->ntopics = ntopics;
        req->topics_null = false;
        cg848_strs_free(sm->sent_topics, sm->nsent_topics);
        sm->sent_topics = samsa_calloc((size_t) ntopics + 1, sizeof(char *));
        for (i = 0; i < ntopics; i++) {
            sm->sent_topics[i] = samsa_strdup(topics[i]);
        }
        sm->nsent_topics = ntopics;
        sm->sent_topics_valid = true;
    }
    if (full || !sm->sent_owned_valid
        || !cg848_tps_eq(sm->sent_owned, sm->nsent_owned, sm->owned,
                         sm->nowned)) {
        cg848_group_owned(sm);
        req->owned = sm->req_owned;
        req->nowned = sm->nreq_owned;
        req->owned_null = false;
        samsa_cg848_tps_free(sm->sent_owned, sm->nsent_owned);
        sm->sent_owned = cg848_tps_dup(sm->owned, sm->nowned);
        sm->nsent_owned = sm->nowned;
        sm->sent_owned_valid = true;
    }
    if (sm->state == SAMSA_CG848_ACKNOWLEDGING) {
        sm->state = SAMSA_CG848_STABLE;     /* Java: acked once sent */
    }
}

void
samsa_cg848_hb_failed(samsa_cg848_t *sm, int64_t now, int64_t backoff_ms)
{
    sm->hb_inflight = false;
    sm->leave_sent = false;
    sm->hb_next_ms = now + backoff_ms;
    cg848_sent_reset(sm);
}

/* Errors worth another heartbeat after a backoff; every other error not
 * handled by name is fatal (Java's ConsumerHeartbeatRequestManager:
 * GROUP_AUTHORIZATION_FAILED, INVALID_REQUEST, GROUP_MAX_SIZE_REACHED,
 * UNSUPPORTED_ASSIGNOR, UNRELEASED_INSTANCE_ID, UNSUPPORTED_VERSION, and
 * GROUP_ID_NOT_FOUND for a classic group of the same id ...). */
static bool
cg848_retriable_err(samsa_err_t err)
{
    return err == SAMSA_ERR_COORDINATOR_LOAD_IN_PROGRESS
           || err == SAMSA_ERR_REQUEST_TIMED_OUT
           || err == SAMSA_ERR_NETWORK_EXCEPTION;
}

samsa_cg848_act_t
samsa_cg848_hb_result(samsa_cg848_t *sm, int64_t now, int64_t backoff_ms,
                      const samsa_cg848_hbresp_t *resp)
{
    samsa_err_t  err = resp->err;
    int32_t      i;

    sm->hb_inflight = false;
    if (sm->state == SAMSA_CG848_LEAVING) {
        if (!sm->leave_sent) {
            return SAMSA_CG848_ACT_NONE;    /* an older one: leave next */
        }
        samsa_cg848_reset(sm);
        return SAMSA_CG848_ACT_LEFT;
    }
    if (sm->state == SAMSA_CG848_UNSUBSCRIBED
        || sm->state == SAMSA_CG848_FATAL) {
        return SAMSA_CG848_ACT_NONE;
    }
    if (err == SAMSA_ERR_NONE) {
        if (resp->member_id != NULL && resp->member_id[0] != '\0'
            && strlen(resp->member_id) < sizeof(sm->member_id)) {
            strcpy(sm->member_id, resp->member_id);
        }
        if (sm->state == SAMSA_CG848_FENCED) {
            return SAMSA_CG848_ACT_NONE;    /* answered before the fence */
        }
        sm->epoch = resp->epoch;
        if (resp->interval_ms > 0) {
            sm->interval_ms = resp->interval_ms;
        }
        sm->hb_next_ms = now + sm->interval_ms;
        sm->sent_all = true;
        if (sm->state == SAMSA_CG848_JOINING && sm->epoch > 0) {
            sm->state = SAMSA_CG848_STABLE;
        }
        if (resp->has_assignment) {
            samsa_cg848_topics_free(sm->target, sm->ntarget);
            sm->target = samsa_calloc((size_t) resp->ntopics + 1,
                                      sizeof(*sm->target));
            for (i = 0; i < resp->ntopics; i++) {
                const samsa_cg848_topic_t  *t = &resp->topics[i];

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
        return sm->target_new || sm->unresolved ? SAMSA_CG848_ACT_RECONCILE
                                                : SAMSA_CG848_ACT_NONE;
    }
    cg848_sent_reset(sm);
    if (err == SAMSA_ERR_FENCED_MEMBER_EPOCH
        || err == SAMSA_ERR_UNKNOWN_MEMBER_ID) {
        if (sm->state == SAMSA_CG848_FENCED) {
            return SAMSA_CG848_ACT_NONE;
        }
        sm->epoch = 0;
        samsa_cg848_topics_free(sm->target, sm->ntarget);
        sm->target = NULL;
        sm->ntarget = 0;
        sm->target_new = false;
        sm->unresolved = false;
        if (sm->nowned > 0 || sm->state == SAMSA_CG848_RECONCILING) {
            samsa_cg848_tps_free(sm->pending, sm->npending);
            sm->pending = NULL;
            sm->npending = 0;
            sm->state = SAMSA_CG848_FENCED;
            return SAMSA_CG848_ACT_LOST;
        }
        sm->state = SAMSA_CG848_JOINING;
        sm->hb_next_ms = now;
        return SAMSA_CG848_ACT_NONE;
    }
    if (err == SAMSA_ERR_NOT_COORDINATOR
        || err == SAMSA_ERR_COORDINATOR_NOT_AVAILABLE
        || err < SAMSA_ERR_UNKNOWN_SERVER_ERROR) {
        sm->hb_next_ms = now;
        return SAMSA_CG848_ACT_COORD;
    }
    if (cg848_retriable_err(err)) {
        sm->hb_next_ms = now + backoff_ms;
        return SAMSA_CG848_ACT_RETRY;
    }
    sm->fatal = err;
    sm->state = SAMSA_CG848_FATAL;
    return SAMSA_CG848_ACT_FATAL;
}

/* ---- reconciliation ----------------------------------------------------- */

bool
samsa_cg848_reconcile(samsa_cg848_t *sm, samsa_cg848_resolve_fn *fn,
                      void *ctx, samsa_cg848_tp_t **added, int32_t *nadded,
                      samsa_cg848_tp_t **revoked, int32_t *nrevoked,
                      bool *need_md)
{
    samsa_cg848_tp_t  *res;
    int32_t            n = 0, total = 0, i, j;

    *added = *revoked = NULL;
    *nadded = *nrevoked = 0;
    *need_md = false;
    if ((sm->state != SAMSA_CG848_STABLE
         && sm->state != SAMSA_CG848_ACKNOWLEDGING)
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
    qsort(res, (size_t) n, sizeof(*res), cg848_tp_cmp);
    for (i = 1, j = n > 0 ? 1 : 0; i < n; i++) {    /* duplicates out */
        if (cg848_tp_cmp(&res[i], &res[j - 1]) == 0) {
            samsa_free(res[i].topic);
        } else {
            res[j++] = res[i];
        }
    }
    n = j;
    if (cg848_tps_eq(res, n, sm->owned, sm->nowned)) {
        samsa_cg848_tps_free(res, n);
        return false;
    }
    *added = samsa_calloc((size_t) n + 1, sizeof(**added));
    *revoked = samsa_calloc((size_t) sm->nowned + 1, sizeof(**revoked));
    for (i = 0; i < n; i++) {
        if (!cg848_tp_has(sm->owned, sm->nowned, &res[i])) {
            (*added)[*nadded] = res[i];
            (*added)[(*nadded)++].topic = samsa_strdup(res[i].topic);
        }
    }
    for (i = 0; i < sm->nowned; i++) {
        if (!cg848_tp_has(res, n, &sm->owned[i])) {
            (*revoked)[*nrevoked] = sm->owned[i];
            (*revoked)[(*nrevoked)++].topic =
                samsa_strdup(sm->owned[i].topic);
        }
    }
    samsa_cg848_tps_free(sm->pending, sm->npending);
    sm->pending = res;
    sm->npending = n;
    sm->state = SAMSA_CG848_RECONCILING;
    return true;
}

void
samsa_cg848_reconciled(samsa_cg848_t *sm)
{
    if (sm->state != SAMSA_CG848_RECONCILING) {
        return;                 /* fenced or left meanwhile */
    }
    samsa_cg848_tps_free(sm->owned, sm->nowned);
    sm->owned = sm->pending;
    sm->nowned = sm->npending;
    sm->pending = NULL;
    sm->npending = 0;
    sm->state = SAMSA_CG848_ACKNOWLEDGING;
    sm->hb_next_ms = 0;
}

void
samsa_cg848_lost_done(samsa_cg848_t *sm)
{
    if (sm->state != SAMSA_CG848_FENCED) {
        return;
    }
    cg848_assignment_reset(sm);
    cg848_sent_reset(sm);
    sm->state = SAMSA_CG848_JOINING;
    sm->epoch = 0;
    sm->hb_next_ms = 0;
}

const char *
samsa_cg848_state_name(samsa_cg848_state_t s)
{
    static const char *const  names[] = {
        "UNSUBSCRIBED", "JOINING", "RECONCILING", "ACKNOWLEDGING",
        "STABLE", "FENCED", "LEAVING", "FATAL",
    };

    return (size_t) s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}
