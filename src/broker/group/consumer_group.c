/*
 * broker/group/consumer_group.c - consumer-type groups (KIP-848): members, epochs, target
 * assignment and reconciliation (Kafka's ConsumerGroup,
 * ConsumerGroupMember, CurrentAssignmentBuilder and the consumer half of
 * GroupMetadataManager).  See consumer_group.h.
 *
 * Every change is written to __consumer_offsets (consumer_group_store.c) before
 * the heartbeat is answered.
 *
 * Threads: every function runs with the group's lock held (the timers'
 * callbacks run under it too); a samsa_consumer_group_t belongs to its samsa_grp_t.
 */
#include "broker/group/consumer_group.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/group/consumer_group_assign.h"
#include "broker/group/consumer_group_int.h"
#include "broker/group/grp_int.h"
#include "meta/image.h"
#include "util/alloc.h"
#include "util/diag.h"
#include "util/time.h"

enum { CG_TIMER_SESSION, CG_TIMER_REVOKE };

/* A member's session or revocation timer (Kafka's scheduled timeouts). */
struct cg_timer {
    grp_timer_t         t;              /* first: the op, the group ref, the
                                           member's id */
    int                 kind;
};

/* ---- sets ------------------------------------------------------------------ */

static int
cg_tp_cmp(const cg_tp_t *a, const cg_tp_t *b)
{
    int  c = memcmp(a->tid.b, b->tid.b, 16);

    if (c != 0) {
        return c;
    }
    return a->p < b->p ? -1 : a->p > b->p;
}

static int
cg_tp_qcmp(const void *a, const void *b)
{
    return cg_tp_cmp(a, b);
}

static bool
cg_set_has(const cg_set_t *s, const cg_tp_t *tp)
{
    return s->n > 0 && bsearch(tp, s->v, s->n, sizeof(*s->v), cg_tp_qcmp)
                           != NULL;
}

void
samsa_consumer_group_set_add(cg_set_t *s, const cg_tp_t *tp)
{
    s->v = samsa_realloc(s->v, (s->n + 1) * sizeof(*s->v));
    s->v[s->n++] = *tp;
}

void
samsa_consumer_group_set_sort(cg_set_t *s)
{
    if (s->n > 1) {
        qsort(s->v, s->n, sizeof(*s->v), cg_tp_qcmp);
    }
}

void
samsa_consumer_group_set_clear(cg_set_t *s)
{
    samsa_free(s->v);
    s->v = NULL;
    s->n = 0;
}

static bool
cg_set_eq(const cg_set_t *a, const cg_set_t *b)
{
    return a->n == b->n
           && (a->n == 0 || memcmp(a->v, b->v, a->n * sizeof(*a->v)) == 0);
}

static void
cg_set_copy(cg_set_t *dst, const cg_set_t *src)
{
    samsa_consumer_group_set_clear(dst);
    if (src->n > 0) {
        dst->v = samsa_malloc(src->n * sizeof(*dst->v));
        memcpy(dst->v, src->v, src->n * sizeof(*dst->v));
        dst->n = src->n;
    }
}

/* The member's owned partitions of a request (NULL: not given). */
static void
cg_set_from_owned(cg_set_t *s, const samsa_CGHeartbeatOwned_t *o, int32_t n)
{
    int32_t  i, j;
    cg_tp_t  tp;

    for (i = 0; i < n; i++) {
        for (j = 0; j < o[i].Partitions_cnt; j++) {
            tp.tid = o[i].TopicId;
            tp.p = o[i].Partitions[j];
            samsa_consumer_group_set_add(s, &tp);
        }
    }
    samsa_consumer_group_set_sort(s);
}

/* ---- members ---------------------------------------------------------------- */

static char *
cg_dup(samsa_slice_t s)
{
    return s.ptr != NULL ? samsa_strndup(s.ptr, s.len) : NULL;
}

static void cg_timer_stop(cg_timer_t **slot);

static void
cg_member_free(cg_member_t *m)
{
    size_t  i;

    cg_timer_stop(&m->session);
    cg_timer_stop(&m->revoke);
    for (i = 0; i < m->ntopics; i++) {
        samsa_free(m->topics[i]);
    }
    samsa_free(m->topics);
    if (m->regex != NULL) {
        samsa_re_free(m->re);
        samsa_free(m->regex);
    }
    samsa_free(m->id);
    samsa_free(m->instance_id);
    samsa_free(m->rack_id);
    samsa_free(m->client_id);
    samsa_free(m->client_host);
    samsa_free(m->assignor);
    for (i = 0; i < CG_REC_MEMBER_N; i++) {
        samsa_buf_fini(&m->rec[i]);
    }
    samsa_consumer_group_set_clear(&m->assigned);
    samsa_consumer_group_set_clear(&m->revoking);
    samsa_consumer_group_set_clear(&m->target);
    samsa_free(m);
}

static cg_member_t *
cg_member_find(const samsa_consumer_group_t *cg, samsa_slice_t id, size_t *at)
{
    size_t  i;

    for (i = 0; i < cg->nmembers; i++) {
        if (samsa_slice_eq_cstr(id, cg->members[i]->id)) {
            if (at != NULL) {
                *at = i;
            }
            return cg->members[i];
        }
    }
    return NULL;
}

static cg_member_t *
cg_member_find_instance(const samsa_consumer_group_t *cg, samsa_slice_t instance_id)
{
    size_t  i;

    for (i = 0; i < cg->nmembers; i++) {
        if (cg->members[i]->instance_id != NULL
            && samsa_slice_eq_cstr(instance_id,
                                   cg->members[i]->instance_id)) {
            return cg->members[i];
        }
    }
    return NULL;
}

/* Take m out of the member list (not freed). */
static void
cg_member_unlink(samsa_consumer_group_t *cg, cg_member_t *m)
{
    size_t  i;

    for (i = 0; i < cg->nmembers; i++) {
        if (cg->members[i] == m) {
            memmove(&cg->members[i], &cg->members[i + 1],
                    (cg->nmembers - i - 1) * sizeof(*cg->members));
            cg->nmembers--;
            break;
        }
    }
}

/* Take the member out and free it; bump is Kafka's group epoch bump of a
 * removal (not when a static member is replaced).  The last one out
 * starts the group's Empty time (offsets retention counts from it). */
static void
cg_member_remove(samsa_grp_t *g, cg_member_t *m, bool bump)
{
    samsa_consumer_group_t  *cg = g->cg;
    size_t         i;

    cg_member_unlink(cg, m);
    for (i = 0; i < CG_REC_MEMBER_N; i++) {
        if (m->rec[i].len > 0) {
            /* its records need tombstones (consumer_group_store.c) */
            cg->gone = samsa_realloc(cg->gone,
                                     (cg->ngone + 1) * sizeof(*cg->gone));
            cg->gone[cg->ngone++] = m->id;
            m->id = NULL;
            break;
        }
    }
    cg_member_free(m);
    if (bump) {
        cg->group_epoch++;
    }
    if (cg->nmembers == 0) {
        g->state_ts_ms = samsa_wall_ms();
    }
}

/* A member id as Kafka's Uuid.randomUuid().toString(): 22 characters of
 * URL-safe base64 (v0 joins; v1 clients bring their own). */
static char *
cg_new_member_id(void)
{
    static const char  b64[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    uint8_t            u[18] = { 0 };
    char              *out = samsa_malloc(25);
    size_t             i, n = 0;
    uint32_t           v;

    samsa_grp_random_bytes(u, 16);
    for (i = 0; i < 18; i += 3) {
        v = ((uint32_t) u[i] << 16) | ((uint32_t) u[i + 1] << 8) | u[i + 2];
        out[n++] = b64[(v >> 18) & 63];
        out[n++] = b64[(v >> 12) & 63];
        out[n++] = b64[(v >> 6) & 63];
        out[n++] = b64[v & 63];
    }
    out[22] = '\0';
    return out;
}

/* ---- timers --------------------------------------------------------------- */

static void
cg_timer_on_complete(samsa_delayed_op_t *op)
{
    cg_timer_t    *t = (cg_timer_t *) op;
    samsa_grp_t   *g = t->t.grp;
    cg_member_t   *m;

    if (g->cg == NULL) {
        return;
    }
    m = cg_member_find(g->cg, samsa_slice_cstr(t->t.member_id), NULL);
    if (m == NULL) {
        return;
    }
    if (t->kind == CG_TIMER_SESSION && m->session == t) {
        m->session = NULL;
    } else if (t->kind == CG_TIMER_REVOKE && m->revoke == t) {
        m->revoke = NULL;
    } else {
        return;
    }
    if (!t->t.expired || atomic_load(&g->gc->stopping)) {
        return;
    }
    if (t->kind == CG_TIMER_SESSION) {
        samsa_info("group %s: member %s has no heartbeat for %d ms: "
                   "removing it", g->id, m->id,
                   (int) g->gc->cg_session_timeout_ms);
    } else {
        samsa_info("group %s: member %s did not revoke its partitions "
                   "within %d ms: fencing it", g->id, m->id,
                   (int) m->rebalance_timeout_ms);
    }
    cg_member_remove(g, m, true);
    if (samsa_consumer_group_store_write(g) != SAMSA_ERR_NONE) {
        /* kept as changed: the next write of the group retries */
        samsa_warn("group %s: cannot write the removal of a member",
                   g->id);
    }
}

static const samsa_delayed_op_ops_t  cg_timer_ops = {
    .try_complete = samsa_grp_timer_never_ready,   /* completed by stop or
                                                      expiry */
    .on_complete = cg_timer_on_complete,
    .on_expire = samsa_grp_timer_on_expire,
    .free = samsa_grp_timer_free,
};

static void
cg_timer_stop(cg_timer_t **slot)
{
    cg_timer_t  *old = *slot;

    if (old == NULL) {
        return;
    }
    *slot = NULL;
    samsa_grp_timer_complete(&old->t);
}

static void
cg_timer_start(samsa_grp_t *g, cg_member_t *m, int kind, int32_t ms)
{
    cg_timer_t  **slot = kind == CG_TIMER_SESSION ? &m->session : &m->revoke;
    cg_timer_t   *t;

    cg_timer_stop(slot);
    t = samsa_grp_member_timer_new(sizeof(*t), &cg_timer_ops, g, m->id, ms);
    if (t != NULL) {
        t->kind = kind;
        *slot = t;
        samsa_grp_timer_watch(&t->t, g->gc->heartbeat);
    }
}

/* ---- subscription metadata and target assignment ---------------------------- */

/* A SubscribedTopicRegex in RE2 syntax that must match the whole topic
 * name (Kafka's RE2J matches(), util/re.h); false with why set. */
bool
samsa_consumer_group_regex_compile(const char *pattern, size_t len,
                                   samsa_re_t **re, char *why, size_t why_size)
{
    *re = samsa_re_compile(pattern, len, why, why_size);
    return *re != NULL;
}

/* Whether the member subscribes to topic: by name or by its regex. */
static bool
cg_member_subscribes(const cg_member_t *m, const char *topic)
{
    size_t  i;

    for (i = 0; i < m->ntopics; i++) {
        if (strcmp(m->topics[i], topic) == 0) {
            return true;
        }
    }
    return m->regex != NULL && samsa_re_match(m->re, topic);
}

static int
cg_str_qcmp(const void *a, const void *b)
{
    return strcmp(*(char *const *) a, *(char *const *) b);
}

/* The subscription of a request, sorted and unique (Kafka keeps a set). */
static char **
cg_topics_from(const samsa_slice_t *names, int32_t n, size_t *out_n)
{
    char    **v = samsa_calloc((size_t) n + 1, sizeof(*v));
    size_t    k = 0, i;

    for (i = 0; i < (size_t) n; i++) {
        v[k++] = cg_dup(names[i].ptr != NULL ? names[i]
                                             : samsa_slice_cstr(""));
    }
    qsort(v, k, sizeof(*v), cg_str_qcmp);
    for (i = 1; i < k;) {
        if (strcmp(v[i], v[i - 1]) == 0) {
            samsa_free(v[i]);
            memmove(&v[i], &v[i + 1], (k - i - 1) * sizeof(*v));
            k--;
        } else {
            i++;
        }
    }
    *out_n = k;
    return v;
}

static void
cg_topics_free(cg_topic_t *t, size_t n)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        samsa_free(t[i].name);
    }
    samsa_free(t);
}

/* Re-read the subscribed topics' ids and partition counts; true if they
 * changed since the last group epoch (Kafka bumps the epoch then). */
static bool
cg_refresh_topics(samsa_grp_t *g)
{
    samsa_consumer_group_t               *cg = g->cg;
    samsa_image_t              *img = samsa_meta_image_get(g->gc->conf.meta);
    const samsa_image_topic_t  *it;
    cg_topic_t                 *v = NULL;
    size_t                      n = 0, i, j, k;
    bool                        seen, changed;

    for (i = 0; i < cg->nmembers; i++) {
        for (j = 0; j < cg->members[i]->ntopics; j++) {
            const char  *name = cg->members[i]->topics[j];

            seen = false;
            for (k = 0; k < n && !seen; k++) {
                seen = strcmp(v[k].name, name) == 0;
            }
            it = seen ? NULL : samsa_image_topic_find(img, name, strlen(name));
            if (it == NULL) {
                continue;
            }
            v = samsa_realloc(v, (n + 1) * sizeof(*v));
            v[n].name = samsa_strdup(name);
            v[n].id = it->id;
            v[n].npartitions = it->npartitions;
            n++;
        }
    }
    for (j = 0; j < samsa_image_topic_count(img); j++) {
        it = samsa_image_topic_at(img, j);
        if (it == NULL || it->is_internal) {
            continue;               /* regexes never match internal topics */
        }
        seen = false;
        for (k = 0; k < n && !seen; k++) {
            seen = strcmp(v[k].name, it->name) == 0;
        }
        for (i = 0; !seen && i < cg->nmembers; i++) {
            if (cg->members[i]->regex != NULL
                && samsa_re_match(cg->members[i]->re, it->name)) {
                v = samsa_realloc(v, (n + 1) * sizeof(*v));
                v[n].name = samsa_strdup(it->name);
                v[n].id = it->id;
                v[n].npartitions = it->npartitions;
                n++;
                seen = true;
            }
        }
    }
    samsa_image_put(img);
    for (i = 1; i < n; i++) {                   /* sort by name */
        cg_topic_t  x = v[i];

        for (k = i; k > 0 && strcmp(v[k - 1].name, x.name) > 0; k--) {
            v[k] = v[k - 1];
        }
        v[k] = x;
    }
    changed = n != cg->ntopics;
    for (i = 0; !changed && i < n; i++) {
        changed = strcmp(v[i].name, cg->topics[i].name) != 0
                  || !samsa_uuid_eq(v[i].id, cg->topics[i].id)
                  || v[i].npartitions != cg->topics[i].npartitions;
    }
    if (changed) {
        cg_topics_free(cg->topics, cg->ntopics);
        cg->topics = v;
        cg->ntopics = n;
    } else {
        cg_topics_free(v, n);
    }
    return changed;
}

static const cg_topic_t *
cg_topic_by_id(const samsa_consumer_group_t *cg, samsa_uuid_t id, int32_t *index)
{
    size_t  i;

    for (i = 0; i < cg->ntopics; i++) {
        if (samsa_uuid_eq(cg->topics[i].id, id)) {
            if (index != NULL) {
                *index = (int32_t) i;
            }
            return &cg->topics[i];
        }
    }
    return NULL;
}

/* Kafka's default assignor choice: the ServerAssignor most members ask
 * for (ties: the configured order), else the first configured. */
static const char *
cg_pick_assignor(const samsa_grpcoord_t *gc, const samsa_consumer_group_t *cg)
{
    size_t  a, i, best = 0, nbest = 0, cnt;

    for (a = 0; a < gc->cg_nassignors; a++) {
        cnt = 0;
        for (i = 0; i < cg->nmembers; i++) {
            if (cg->members[i]->assignor != NULL
                && strcmp(cg->members[i]->assignor, gc->cg_assignors[a])
                       == 0) {
                cnt++;
            }
        }
        if (cnt > nbest) {
            best = a;
            nbest = cnt;
        }
    }
    return gc->cg_assignors[best];
}

/* A new target assignment for the group epoch. */
static samsa_err_t
cg_compute_target(samsa_grp_t *g)
{
    samsa_consumer_group_t        *cg = g->cg;
    samsa_cga_topic_t   *topics = samsa_calloc(cg->ntopics + 1,
                                               sizeof(*topics));
    samsa_cga_member_t  *ms = samsa_calloc(cg->nmembers + 1, sizeof(*ms));
    const char          *assignor = cg_pick_assignor(g->gc, cg);
    samsa_err_t          err;
    size_t               i, j;
    int32_t              ti;

    for (i = 0; i < cg->ntopics; i++) {
        topics[i].name = cg->topics[i].name;
        topics[i].npartitions = cg->topics[i].npartitions;
    }
    for (i = 0; i < cg->nmembers; i++) {
        cg_member_t     *m = cg->members[i];
        int32_t         *st = samsa_calloc(cg->ntopics + 1, sizeof(*st));
        samsa_cga_tp_t  *prev = samsa_calloc(m->target.n + 1, sizeof(*prev));
        size_t           nst = 0, nprev = 0;

        for (j = 0; j < cg->ntopics; j++) {
            if (cg_member_subscribes(m, cg->topics[j].name)) {
                st[nst++] = (int32_t) j;
            }
        }
        for (j = 0; j < m->target.n; j++) {
            if (cg_topic_by_id(cg, m->target.v[j].tid, &ti) != NULL) {
                prev[nprev++] = (samsa_cga_tp_t) { ti, m->target.v[j].p };
            }
        }
        ms[i].member_id = m->id;
        ms[i].topics = st;
        ms[i].ntopics = nst;
        ms[i].prev = prev;
        ms[i].nprev = nprev;
    }
    err = samsa_cga_assign(assignor, topics, cg->ntopics, ms, cg->nmembers);
    for (i = 0; i < cg->nmembers; i++) {
        cg_member_t  *m = cg->members[i];

        if (err == SAMSA_ERR_NONE) {
            samsa_consumer_group_set_clear(&m->target);
            for (j = 0; j < ms[i].nout; j++) {
                cg_tp_t  tp = { cg->topics[ms[i].out[j].topic].id,
                                ms[i].out[j].partition };

                samsa_consumer_group_set_add(&m->target, &tp);
            }
            samsa_consumer_group_set_sort(&m->target);
        }
        samsa_free((void *) ms[i].topics);
        samsa_free((void *) ms[i].prev);
        samsa_free(ms[i].out);
    }
    samsa_free(ms);
    samsa_free(topics);
    if (err == SAMSA_ERR_NONE) {
        samsa_free(cg->assignor);
        cg->assignor = samsa_strdup(assignor);
        cg->assignment_epoch = cg->group_epoch;
    }
    return err;
}

/* ---- reconciliation (Kafka's CurrentAssignmentBuilder) ---------------------- */

/* Whether another member still holds tp (assigned or pending
 * revocation): it cannot be given yet. */
static bool
cg_held_by_other(const samsa_consumer_group_t *cg, const cg_member_t *self,
                 const cg_tp_t *tp)
{
    size_t  i;

    for (i = 0; i < cg->nmembers; i++) {
        const cg_member_t  *o = cg->members[i];

        if (o != self && (cg_set_has(&o->assigned, tp)
                          || cg_set_has(&o->revoking, tp))) {
            return true;
        }
    }
    return false;
}

static void
cg_compute_next(samsa_consumer_group_t *cg, cg_member_t *m)
{
    cg_set_t  keep = { NULL, 0 }, revoke = { NULL, 0 };
    bool      unreleased = false;
    size_t    i;

    for (i = 0; i < m->assigned.n; i++) {
        samsa_consumer_group_set_add(cg_set_has(&m->target, &m->assigned.v[i]) ? &keep
                                                             : &revoke,
                   &m->assigned.v[i]);
    }
    if (revoke.n > 0) {
        /* revoke first, keeping the epoch */
        samsa_consumer_group_set_clear(&m->assigned);
        m->assigned = keep;
        samsa_consumer_group_set_clear(&m->revoking);
        m->revoking = revoke;
        m->state = CG_UNREVOKED;
        return;
    }
    for (i = 0; i < m->target.n; i++) {
        if (cg_set_has(&keep, &m->target.v[i])) {
            continue;
        }
        if (cg_held_by_other(cg, m, &m->target.v[i])) {
            unreleased = true;
        } else {
            samsa_consumer_group_set_add(&keep, &m->target.v[i]);
        }
    }
    samsa_consumer_group_set_sort(&keep);
    samsa_consumer_group_set_clear(&m->assigned);
    m->assigned = keep;
    samsa_consumer_group_set_clear(&m->revoking);
    if (m->epoch != cg->assignment_epoch) {
        m->prev_epoch = m->epoch;
        m->epoch = cg->assignment_epoch;
    }
    m->state = unreleased ? CG_UNRELEASED : CG_STABLE;
}

/* One step of the member towards its target; owned: what it reported
 * (NULL: not given). */
static void
cg_reconcile(samsa_consumer_group_t *cg, cg_member_t *m, const cg_set_t *owned)
{
    size_t  i;

    switch (m->state) {
    case CG_UNREVOKED:
        if (owned == NULL) {
            return;
        }
        for (i = 0; i < m->revoking.n; i++) {
            if (cg_set_has(owned, &m->revoking.v[i])) {
                return;                 /* still owns some of them */
            }
        }
        cg_compute_next(cg, m);
        return;
    case CG_UNRELEASED:
        cg_compute_next(cg, m);
        return;
    case CG_STABLE:
    default:
        if (m->epoch != cg->assignment_epoch) {
            cg_compute_next(cg, m);
        }
        return;
    }
}

/* ---- heartbeat ---------------------------------------------------------------- */

typedef struct cg_hb {
    samsa_grpcoord_t                              *gc;
    int16_t                                        version;
    const samsa_ConsumerGroupHeartbeatRequest_t   *rq;
    samsa_arena_t                                 *arena;
    samsa_ConsumerGroupHeartbeatResponse_t        *out;
} cg_hb_t;

static void
cg_fail(cg_hb_t *h, samsa_err_t err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
cg_fail(cg_hb_t *h, samsa_err_t err, const char *fmt, ...)
{
    char     buf[512];
    va_list  ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    h->out->ErrorCode = (int16_t) err;
    h->out->HeartbeatIntervalMs = 0;    /* Kafka's error answers leave it 0 */
    h->out->ErrorMessage = samsa_slice_cstr(
        samsa_arena_strndup(h->arena, buf, strlen(buf)));
}

static bool
cg_empty_str(samsa_slice_t s)
{
    return s.ptr != NULL && s.len == 0;
}

static bool
cg_assignor_configured(const samsa_grpcoord_t *gc, samsa_slice_t name)
{
    size_t  i;

    for (i = 0; i < gc->cg_nassignors; i++) {
        if (samsa_slice_eq_cstr(name, gc->cg_assignors[i])) {
            return samsa_cga_known(name.ptr, name.len);
        }
    }
    return false;
}

/* Kafka's throwIfConsumerGroupHeartbeatRequestIsInvalid (its messages). */
static bool
cg_validate(cg_hb_t *h)
{
    const samsa_ConsumerGroupHeartbeatRequest_t  *rq = h->rq;
    char                                          list[256];
    size_t                                        i, n = 0;

    if (rq->GroupId.len == 0) {
        cg_fail(h, SAMSA_ERR_INVALID_REQUEST, "GroupId can't be empty.");
        return false;
    }
    if (cg_empty_str(rq->InstanceId)) {
        cg_fail(h, SAMSA_ERR_INVALID_REQUEST, "InstanceId can't be empty.");
        return false;
    }
    if (cg_empty_str(rq->RackId)) {
        cg_fail(h, SAMSA_ERR_INVALID_REQUEST, "RackId can't be empty.");
        return false;
    }
    if ((h->version >= 1 || rq->MemberEpoch != 0) && rq->MemberId.len == 0) {
        cg_fail(h, SAMSA_ERR_INVALID_REQUEST, "MemberId can't be empty.");
        return false;
    }
    if (rq->MemberEpoch == 0) {
        if (rq->RebalanceTimeoutMs == -1) {
            cg_fail(h, SAMSA_ERR_INVALID_REQUEST,
                    "RebalanceTimeoutMs must be provided in first request.");
            return false;
        }
        if (rq->TopicPartitions_cnt != 0) {
            cg_fail(h, SAMSA_ERR_INVALID_REQUEST,
                    "TopicPartitions must be empty when (re-)joining.");
            return false;
        }
        if (rq->SubscribedTopicNames_cnt < 0
            && rq->SubscribedTopicRegex.ptr == NULL) {
            cg_fail(h, SAMSA_ERR_INVALID_REQUEST,
                    "SubscribedTopicNames or SubscribedTopicRegex must be "
                    "set in first request.");
            return false;
        }
    } else if (rq->MemberEpoch == CG_LEAVE_STATIC_EPOCH) {
        if (rq->InstanceId.ptr == NULL) {
            cg_fail(h, SAMSA_ERR_INVALID_REQUEST,
                    "InstanceId can't be null.");
            return false;
        }
    } else if (rq->MemberEpoch < CG_LEAVE_STATIC_EPOCH) {
        cg_fail(h, SAMSA_ERR_INVALID_REQUEST, "MemberEpoch is invalid.");
        return false;
    }
    if (rq->SubscribedTopicRegex.ptr != NULL
        && rq->SubscribedTopicRegex.len > 0) {
        samsa_re_t  *re;
        char     why[128];

        if (!samsa_consumer_group_regex_compile(rq->SubscribedTopicRegex.ptr,
                              rq->SubscribedTopicRegex.len, &re, why,
                              sizeof(why))) {
            cg_fail(h, SAMSA_ERR_INVALID_REGULAR_EXPRESSION,
                    "SubscribedTopicRegex `%.*s` is not a valid regular "
                    "expression: %s.", (int) rq->SubscribedTopicRegex.len,
                    rq->SubscribedTopicRegex.ptr, why);
            return false;
        }
        samsa_re_free(re);
    }
    if (rq->ServerAssignor.ptr != NULL
        && !cg_assignor_configured(h->gc, rq->ServerAssignor)) {
        list[0] = '\0';
        for (i = 0; i < h->gc->cg_nassignors; i++) {
            n += (size_t) snprintf(list + n, n < sizeof(list)
                                                 ? sizeof(list) - n : 0,
                                   "%s%s", i > 0 ? ", " : "",
                                   h->gc->cg_assignors[i]);
            if (n >= sizeof(list)) {
                n = sizeof(list) - 1;
            }
        }
        cg_fail(h, SAMSA_ERR_UNSUPPORTED_ASSIGNOR,
                "ServerAssignor %.*s is not supported. Supported assignors: "
                "%s.", (int) rq->ServerAssignor.len, rq->ServerAssignor.ptr,
                list);
        return false;
    }
    return true;
}

/* FENCED_MEMBER_EPOCH for a member whose epoch got is "greater" or
 * "smaller" (than) the one the coordinator knows; always false. */
static bool
cg_fence_epoch(cg_hb_t *h, const char *than, int32_t got, int32_t known)
{
    cg_fail(h, SAMSA_ERR_FENCED_MEMBER_EPOCH,
            "The consumer group member has a %s member epoch (%d) than the "
            "one known by the group coordinator (%d). The member must "
            "abandon all its partitions and rejoin.",
            than, (int) got, (int) known);
    return false;
}

/* Kafka's throwIfMemberEpochIsInvalid. */
static bool
cg_check_epoch(cg_hb_t *h, const cg_member_t *m, const cg_set_t *owned)
{
    int32_t  got = h->rq->MemberEpoch;
    size_t   i;
    bool     subset = owned != NULL;

    if (got > m->epoch) {
        return cg_fence_epoch(h, "greater", got, m->epoch);
    }
    if (got < m->epoch) {
        for (i = 0; subset && i < owned->n; i++) {
            subset = cg_set_has(&m->assigned, &owned->v[i]);
        }
        if (got != m->prev_epoch || !subset) {
            return cg_fence_epoch(h, "smaller", got, m->epoch);
        }
    }
    return true;
}

/* The group, made a consumer group if it may be; NULL after cg_fail. */
static samsa_grp_t *
cg_group(cg_hb_t *h)
{
    samsa_grp_t  *g;
    bool          join = h->rq->MemberEpoch == 0;

    g = samsa_grp_get(h->gc, h->rq->GroupId, join);
    if (g == NULL) {
        cg_fail(h, SAMSA_ERR_UNKNOWN_MEMBER_ID, "Group %.*s not found.",
                (int) h->rq->GroupId.len, h->rq->GroupId.ptr);
        return NULL;
    }
    pthread_mutex_lock(&g->lock);
    if (g->state == SAMSA_GRP_DEAD) {
        cg_fail(h, SAMSA_ERR_COORDINATOR_NOT_AVAILABLE,
                "Group %s is being deleted.", g->id);
    } else if (g->cg == NULL
               && (g->state != SAMSA_GRP_EMPTY || g->nmembers > 0
                   || g->npending > 0)) {
        cg_fail(h, SAMSA_ERR_GROUP_ID_NOT_FOUND,
                "Group %s is not a consumer group.", g->id);
    } else if (g->cg == NULL && !join) {
        cg_fail(h, SAMSA_ERR_UNKNOWN_MEMBER_ID, "Group %s not found.", g->id);
    } else {
        if (g->cg == NULL) {
            /* a new group, or an Empty classic one (offsets only, or all
             * its members gone): it becomes a consumer group, keeping its
             * committed offsets */
            g->cg = samsa_calloc(1, sizeof(*g->cg));
            samsa_free(g->protocol_type);
            g->protocol_type = samsa_strdup("consumer");
            samsa_free(g->protocol_name);
            g->protocol_name = NULL;
        }
        return g;
    }
    pthread_mutex_unlock(&g->lock);
    samsa_grp_unref(g);
    return NULL;
}

/* The member the request is about, created or taken over on a join;
 * NULL after cg_fail (or a leave, answered). */
static cg_member_t *
cg_hb_member(cg_hb_t *h, samsa_grp_t *g, const cg_set_t *owned, bool *bump)
{
    const samsa_ConsumerGroupHeartbeatRequest_t  *rq = h->rq;
    samsa_consumer_group_t                                 *cg = g->cg;
    cg_member_t                                  *m, *old;
    char                                         *id;

    if (rq->MemberEpoch != 0) {
        m = cg_member_find(cg, rq->MemberId, NULL);
        if (m == NULL) {
            cg_fail(h, SAMSA_ERR_UNKNOWN_MEMBER_ID,
                    "Member %.*s is not a member of group %s.",
                    (int) rq->MemberId.len, rq->MemberId.ptr, g->id);
            return NULL;
        }
        if (rq->MemberEpoch == CG_LEAVE_EPOCH
            || rq->MemberEpoch == CG_LEAVE_STATIC_EPOCH) {
            return m;
        }
        return cg_check_epoch(h, m, owned) ? m : NULL;
    }
    if (rq->InstanceId.ptr != NULL
        && (old = cg_member_find_instance(cg, rq->InstanceId)) != NULL) {
        if (samsa_slice_eq_cstr(rq->MemberId, old->id)) {
            return old;                 /* the same member joining again */
        }
        if (old->epoch != CG_LEAVE_STATIC_EPOCH) {
            cg_fail(h, SAMSA_ERR_UNRELEASED_INSTANCE_ID,
                    "Static member %.*s with instance id %.*s cannot join "
                    "the group because the instance id is owned by %s "
                    "member.", (int) rq->MemberId.len, rq->MemberId.ptr,
                    (int) rq->InstanceId.len, rq->InstanceId.ptr, old->id);
            return NULL;
        }
        /* the static member is back: the new id takes over its
         * assignment and target (no new group epoch) */
        m = samsa_calloc(1, sizeof(*m));
        m->id = rq->MemberId.len > 0 ? cg_dup(rq->MemberId)
                                     : cg_new_member_id();
        m->instance_id = samsa_strdup(old->instance_id);
        m->rebalance_timeout_ms = old->rebalance_timeout_ms;
        m->topics = old->topics;
        m->ntopics = old->ntopics;
        old->topics = NULL;
        old->ntopics = 0;
        if (old->regex != NULL) {
            char  why[128];

            /* compiled again rather than shared with old */
            if (samsa_consumer_group_regex_compile(old->regex, strlen(old->regex), &m->re, why,
                                 sizeof(why))) {
                m->regex = samsa_strdup(old->regex);
            }
        }
        m->assignor = old->assignor;
        old->assignor = NULL;
        m->assigned = old->assigned;
        old->assigned = (cg_set_t) { NULL, 0 };
        m->target = old->target;
        old->target = (cg_set_t) { NULL, 0 };
        m->state = CG_STABLE;
        cg_member_remove(g, old, false);
        cg->members = samsa_realloc(cg->members,
                                    (cg->nmembers + 1) * sizeof(*cg->members));
        cg->members[cg->nmembers++] = m;
        return m;
    }
    if (rq->MemberId.len > 0
        && (m = cg_member_find(cg, rq->MemberId, NULL)) != NULL) {
        return m;                       /* joining again: full answer */
    }
    if ((int64_t) cg->nmembers >= h->gc->cg_max_size) {
        cg_fail(h, SAMSA_ERR_GROUP_MAX_SIZE_REACHED,
                "The consumer group has reached its maximum capacity of %d "
                "members.", (int) h->gc->cg_max_size);
        return NULL;
    }
    id = rq->MemberId.len > 0 ? cg_dup(rq->MemberId) : cg_new_member_id();
    m = samsa_calloc(1, sizeof(*m));
    m->id = id;
    m->instance_id = cg_dup(rq->InstanceId);
    m->state = CG_STABLE;
    cg->members = samsa_realloc(cg->members,
                                (cg->nmembers + 1) * sizeof(*cg->members));
    cg->members[cg->nmembers++] = m;
    *bump = true;
    return m;
}

/* Apply what the request changes; true if the subscription changed. */
static bool
cg_update_member(cg_member_t *m, const cg_hb_t *h, samsa_slice_t client_id,
                 samsa_slice_t client_host)
{
    const samsa_ConsumerGroupHeartbeatRequest_t  *rq = h->rq;
    char                                        **topics;
    size_t                                        n, i;
    bool                                          changed = false;

    samsa_free(m->client_id);
    m->client_id = cg_dup(client_id.ptr != NULL ? client_id
                                                : samsa_slice_cstr(""));
    samsa_free(m->client_host);
    m->client_host = cg_dup(client_host);
    if (rq->RackId.ptr != NULL) {
        samsa_free(m->rack_id);
        m->rack_id = cg_dup(rq->RackId);
    }
    if (rq->RebalanceTimeoutMs != -1) {
        m->rebalance_timeout_ms = rq->RebalanceTimeoutMs;
    }
    if (rq->ServerAssignor.ptr != NULL
        && (m->assignor == NULL
            || !samsa_slice_eq_cstr(rq->ServerAssignor, m->assignor))) {
        samsa_free(m->assignor);
        m->assignor = cg_dup(rq->ServerAssignor);
        changed = true;                 /* may change the group's choice */
    }
    if (rq->SubscribedTopicRegex.ptr != NULL
        && (m->regex == NULL
            || !samsa_slice_eq_cstr(rq->SubscribedTopicRegex, m->regex))
        && !(m->regex == NULL && rq->SubscribedTopicRegex.len == 0)) {
        char  why[128];

        if (m->regex != NULL) {
            samsa_re_free(m->re);
            m->re = NULL;
            samsa_free(m->regex);
            m->regex = NULL;
        }
        if (rq->SubscribedTopicRegex.len > 0
            && samsa_consumer_group_regex_compile(rq->SubscribedTopicRegex.ptr,
                                rq->SubscribedTopicRegex.len, &m->re, why,
                                sizeof(why))) {
            m->regex = cg_dup(rq->SubscribedTopicRegex);   /* validated */
        }
        changed = true;
    }
    if (rq->SubscribedTopicNames_cnt >= 0) {
        topics = cg_topics_from(rq->SubscribedTopicNames,
                                rq->SubscribedTopicNames_cnt, &n);
        if (n != m->ntopics) {
            changed = true;
        }
        for (i = 0; !changed && i < n; i++) {
            changed = strcmp(topics[i], m->topics[i]) != 0;
        }
        for (i = 0; i < m->ntopics; i++) {
            samsa_free(m->topics[i]);
        }
        samsa_free(m->topics);
        m->topics = topics;
        m->ntopics = n;
    }
    return changed;
}

/* The member's assignment, by topic, into the response. */
static void
cg_hb_answer_assignment(cg_hb_t *h, const cg_member_t *m)
{
    samsa_CGHeartbeatAssignment_t  *a = &h->out->Assignment;
    size_t                          i, j, nt = 0;

    h->out->Assignment_null = false;
    a->TopicPartitions = samsa_arena_calloc(h->arena, m->assigned.n + 1,
                                            sizeof(*a->TopicPartitions));
    for (i = 0; i < m->assigned.n; i = j) {
        samsa_CGHeartbeatAssigned_t  *t = &a->TopicPartitions[nt++];

        for (j = i; j < m->assigned.n
                    && samsa_uuid_eq(m->assigned.v[j].tid,
                                     m->assigned.v[i].tid); j++) {
        }
        t->TopicId = m->assigned.v[i].tid;
        t->Partitions = samsa_arena_calloc(h->arena, j - i + 1,
                                           sizeof(int32_t));
        t->Partitions_cnt = (int32_t) (j - i);
        for (size_t k = i; k < j; k++) {
            t->Partitions[k - i] = m->assigned.v[k].p;
        }
    }
    a->TopicPartitions_cnt = (int32_t) nt;
}

void
samsa_consumer_group_heartbeat(samsa_grpcoord_t *gc, int16_t version,
                     const samsa_ConsumerGroupHeartbeatRequest_t *rq,
                     samsa_slice_t client_id, samsa_slice_t client_host,
                     samsa_arena_t *arena,
                     samsa_ConsumerGroupHeartbeatResponse_t *out)
{
    cg_hb_t       h = { gc, version, rq, arena, out };
    samsa_grp_t  *g;
    cg_member_t  *m;
    cg_set_t      owned = { NULL, 0 }, before = { NULL, 0 };
    int32_t       epoch_before;
    bool          bump = false, full;
    samsa_err_t   err;

    out->HeartbeatIntervalMs = gc->cg_heartbeat_interval_ms;
    if (!cg_validate(&h)) {
        return;
    }
    err = samsa_grpcoord_check(gc, rq->GroupId);
    if (err != SAMSA_ERR_NONE) {
        cg_fail(&h, err, "This is not the correct coordinator.");
        return;
    }
    if (samsa_grpcoord_ensure_topic(gc) != SAMSA_ERR_NONE) {
        /* the group's records need their partition */
        cg_fail(&h, SAMSA_ERR_COORDINATOR_NOT_AVAILABLE,
                "The coordinator is not available.");
        return;
    }
    if (rq->TopicPartitions_cnt >= 0) {
        cg_set_from_owned(&owned, rq->TopicPartitions,
                          rq->TopicPartitions_cnt);
    }
    g = cg_group(&h);
    if (g == NULL) {
        samsa_consumer_group_set_clear(&owned);
        return;
    }
    m = cg_hb_member(&h, g, rq->TopicPartitions_cnt >= 0 ? &owned : NULL,
                     &bump);
    if (m == NULL) {
        goto done;
    }
    out->MemberId = samsa_slice_cstr(samsa_arena_strndup(arena, m->id,
                                                         strlen(m->id)));
    if (rq->MemberEpoch == CG_LEAVE_EPOCH) {
        samsa_info("group %s: member %s left", g->id, m->id);
        cg_member_remove(g, m, true);
        out->MemberEpoch = CG_LEAVE_EPOCH;
        out->HeartbeatIntervalMs = 0;   /* Kafka's leave answer has none */
        goto done;
    }
    if (rq->MemberEpoch == CG_LEAVE_STATIC_EPOCH) {
        /* keeps its partitions for when it comes back (or until its
         * session times out) */
        m->epoch = CG_LEAVE_STATIC_EPOCH;
        samsa_consumer_group_set_clear(&m->revoking);
        cg_timer_stop(&m->revoke);
        m->state = CG_STABLE;
        out->MemberEpoch = CG_LEAVE_STATIC_EPOCH;
        out->HeartbeatIntervalMs = 0;
        cg_timer_start(g, m, CG_TIMER_SESSION, gc->cg_session_timeout_ms);
        goto done;
    }
    epoch_before = m->epoch;
    cg_set_copy(&before, &m->assigned);
    if (cg_update_member(m, &h, client_id, client_host)) {
        bump = true;
    }
    cg_timer_start(g, m, CG_TIMER_SESSION, gc->cg_session_timeout_ms);
    if (cg_refresh_topics(g)) {
        bump = true;
    }
    if (bump) {
        g->cg->group_epoch++;
    }
    if (g->cg->group_epoch > g->cg->assignment_epoch) {
        err = cg_compute_target(g);
        if (err != SAMSA_ERR_NONE) {
            cg_fail(&h, err, "The target assignment could not be computed.");
            goto done;
        }
    }
    cg_reconcile(g->cg, m, rq->TopicPartitions_cnt >= 0 ? &owned : NULL);
    if (m->state == CG_UNREVOKED && m->revoke == NULL) {
        cg_timer_start(g, m, CG_TIMER_REVOKE, m->rebalance_timeout_ms);
    } else if (m->state != CG_UNREVOKED) {
        cg_timer_stop(&m->revoke);
    }
    out->MemberEpoch = m->epoch;
    full = rq->RebalanceTimeoutMs != -1
           && (rq->SubscribedTopicNames_cnt >= 0
               || rq->SubscribedTopicRegex.ptr != NULL)
           && rq->TopicPartitions_cnt >= 0;
    if (rq->MemberEpoch == 0 || full || epoch_before != m->epoch
        || !cg_set_eq(&before, &m->assigned)) {
        cg_hb_answer_assignment(&h, m);
    }
done:
    /* as Kafka, the answer waits until what changed is in the log */
    err = g->cg != NULL ? samsa_consumer_group_store_write(g) : SAMSA_ERR_NONE;
    if (err != SAMSA_ERR_NONE && out->ErrorCode == SAMSA_ERR_NONE) {
        cg_fail(&h, err, "The group's records could not be written.");
        out->Assignment_null = true;
    }
    samsa_consumer_group_set_clear(&owned);
    samsa_consumer_group_set_clear(&before);
    pthread_mutex_unlock(&g->lock);
    samsa_grp_unref(g);
}

/* ---- describe, offsets, the classic side's questions ------------------------- */

static void
cg_describe_set(samsa_arena_t *arena, const samsa_image_t *img,
                const cg_set_t *s, samsa_CGDescribedAssignment_t *out)
{
    const samsa_image_topic_t  *it;
    size_t                      i, j, nt = 0;

    samsa_CGDescribedAssignment_init(out);
    out->TopicPartitions = samsa_arena_calloc(arena, s->n + 1,
                                              sizeof(*out->TopicPartitions));
    for (i = 0; i < s->n; i = j) {
        samsa_CGDescribedTopicPartitions_t  *t = &out->TopicPartitions[nt++];

        for (j = i; j < s->n && samsa_uuid_eq(s->v[j].tid, s->v[i].tid);
             j++) {
        }
        samsa_CGDescribedTopicPartitions_init(t);
        t->TopicId = s->v[i].tid;
        it = samsa_image_topic_find_id(img, s->v[i].tid);
        t->TopicName = it != NULL
            ? samsa_slice_cstr(samsa_arena_strndup(arena, it->name,
                                                   it->name_len))
            : samsa_slice_cstr("");
        t->Partitions = samsa_arena_calloc(arena, j - i + 1, sizeof(int32_t));
        t->Partitions_cnt = (int32_t) (j - i);
        for (size_t k = i; k < j; k++) {
            t->Partitions[k - i] = s->v[k].p;
        }
    }
    out->TopicPartitions_cnt = (int32_t) nt;
}

static samsa_slice_t
cg_adup(samsa_arena_t *arena, const char *s)
{
    if (s == NULL) {
        return SAMSA_SLICE_NULL;
    }
    return samsa_slice_cstr(samsa_arena_strndup(arena, s, strlen(s)));
}

void
samsa_consumer_group_describe(samsa_grpcoord_t *gc, samsa_slice_t group_id,
                    samsa_arena_t *arena, samsa_CGDescribedGroup_t *out)
{
    samsa_grp_t    *g;
    samsa_image_t  *img;
    samsa_consumer_group_t   *cg;
    size_t          i, j;
    char            msg[300];
    samsa_err_t     err;

    out->GroupId = group_id;
    if (group_id.len == 0) {
        out->ErrorCode = SAMSA_ERR_INVALID_GROUP_ID;
        return;
    }
    err = samsa_grpcoord_check(gc, group_id);
    if (err != SAMSA_ERR_NONE) {
        out->ErrorCode = (int16_t) err;
        out->ErrorMessage = samsa_slice_cstr(
            "This is not the correct coordinator.");
        return;
    }
    g = samsa_grp_get(gc, group_id, false);
    if (g != NULL) {
        pthread_mutex_lock(&g->lock);
    }
    if (g == NULL || g->cg == NULL || g->state == SAMSA_GRP_DEAD) {
        snprintf(msg, sizeof(msg), g != NULL && g->state != SAMSA_GRP_DEAD
                     ? "Group %.*s is not a consumer group."
                     : "Group %.*s not found.",
                 (int) group_id.len, group_id.ptr);
        out->ErrorCode = SAMSA_ERR_GROUP_ID_NOT_FOUND;
        out->ErrorMessage = cg_adup(arena, msg);
        out->GroupState = samsa_slice_cstr("");   /* as Kafka 4: no state */
        if (g != NULL) {
            pthread_mutex_unlock(&g->lock);
            samsa_grp_unref(g);
        }
        return;
    }
    cg = g->cg;
    img = samsa_meta_image_get(gc->conf.meta);
    out->GroupState = samsa_slice_cstr(samsa_consumer_group_state_name(cg));
    out->GroupEpoch = cg->group_epoch;
    out->AssignmentEpoch = cg->assignment_epoch;
    out->AssignorName = cg_adup(arena, cg->assignor != NULL
                                           ? cg->assignor
                                           : cg_pick_assignor(gc, cg));
    out->Members = samsa_arena_calloc(arena, cg->nmembers + 1,
                                      sizeof(*out->Members));
    out->Members_cnt = (int32_t) cg->nmembers;
    for (i = 0; i < cg->nmembers; i++) {
        const cg_member_t          *m = cg->members[i];
        samsa_CGDescribedMember_t  *dm = &out->Members[i];

        samsa_CGDescribedMember_init(dm);
        dm->MemberId = cg_adup(arena, m->id);
        dm->InstanceId = cg_adup(arena, m->instance_id);
        dm->RackId = cg_adup(arena, m->rack_id);
        dm->MemberEpoch = m->epoch;
        dm->ClientId = cg_adup(arena, m->client_id != NULL ? m->client_id
                                                           : "");
        dm->ClientHost = cg_adup(arena, m->client_host != NULL
                                            ? m->client_host : "");
        dm->SubscribedTopicNames = samsa_arena_calloc(
            arena, m->ntopics + 1, sizeof(*dm->SubscribedTopicNames));
        dm->SubscribedTopicNames_cnt = (int32_t) m->ntopics;
        for (j = 0; j < m->ntopics; j++) {
            dm->SubscribedTopicNames[j] = cg_adup(arena, m->topics[j]);
        }
        /* Kafka 4 describes a member without a regex with "", not null */
        dm->SubscribedTopicRegex = m->regex != NULL
                                       ? cg_adup(arena, m->regex)
                                       : samsa_slice_cstr("");
        cg_describe_set(arena, img, &m->assigned, &dm->Assignment);
        cg_describe_set(arena, img, &m->target, &dm->TargetAssignment);
        dm->MemberType = 1;             /* a consumer-protocol member */
    }
    samsa_image_put(img);
    pthread_mutex_unlock(&g->lock);
    samsa_grp_unref(g);
}

static samsa_err_t
cg_member_epoch_check(const samsa_consumer_group_t *cg, samsa_slice_t member_id,
                      int32_t member_epoch)
{
    const cg_member_t  *m;

    if (member_epoch < 0 && member_id.len == 0 && cg->nmembers == 0) {
        return SAMSA_ERR_NONE;          /* admin commits to an empty group */
    }
    m = cg_member_find(cg, member_id, NULL);
    if (m == NULL) {
        return SAMSA_ERR_UNKNOWN_MEMBER_ID;
    }
    if (member_epoch != m->epoch) {
        return SAMSA_ERR_STALE_MEMBER_EPOCH;
    }
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_consumer_group_commit_check(samsa_grp_t *g, samsa_slice_t member_id,
                        int32_t member_epoch)
{
    return cg_member_epoch_check(g->cg, member_id, member_epoch);
}

samsa_err_t
samsa_consumer_group_txn_commit_check(samsa_grp_t *g, samsa_slice_t member_id,
                            int32_t member_epoch)
{
    const cg_member_t  *m;

    if (member_id.len == 0) {
        return SAMSA_ERR_NONE;
    }
    m = cg_member_find(g->cg, member_id, NULL);
    if (m == NULL) {
        return SAMSA_ERR_UNKNOWN_MEMBER_ID;
    }
    if (member_epoch >= 0 && member_epoch != m->epoch) {
        return SAMSA_ERR_ILLEGAL_GENERATION;
    }
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_consumer_group_fetch_check(samsa_grpcoord_t *gc, samsa_slice_t group_id,
                       samsa_slice_t member_id, int32_t member_epoch)
{
    samsa_grp_t  *g = samsa_grp_get(gc, group_id, false);
    samsa_err_t   err = SAMSA_ERR_NONE;

    if (g == NULL) {
        return SAMSA_ERR_NONE;
    }
    pthread_mutex_lock(&g->lock);
    if (g->cg != NULL && member_id.ptr != NULL
        && !(member_id.len == 0 && member_epoch < 0)) {
        err = cg_member_epoch_check(g->cg, member_id, member_epoch);
    }
    pthread_mutex_unlock(&g->lock);
    samsa_grp_unref(g);
    return err;
}

void
samsa_consumer_group_free(samsa_consumer_group_t *cg)
{
    size_t  i;

    if (cg == NULL) {
        return;
    }
    for (i = 0; i < cg->nmembers; i++) {
        cg_member_free(cg->members[i]);
    }
    samsa_free(cg->members);
    cg_topics_free(cg->topics, cg->ntopics);
    samsa_free(cg->assignor);
    samsa_consumer_group_store_fini(cg);
    samsa_free(cg);
}

cg_member_t *
samsa_consumer_group_member_get(samsa_consumer_group_t *cg, samsa_slice_t id)
{
    cg_member_t  *m = cg_member_find(cg, id, NULL);

    if (m == NULL) {
        m = samsa_calloc(1, sizeof(*m));
        m->id = cg_dup(id);
        m->state = CG_STABLE;
        cg->members = samsa_realloc(cg->members, (cg->nmembers + 1)
                                                     * sizeof(*cg->members));
        cg->members[cg->nmembers++] = m;
    }
    return m;
}

void
samsa_consumer_group_member_drop(samsa_consumer_group_t *cg, cg_member_t *m)
{
    cg_member_unlink(cg, m);
    cg_member_free(m);
}

void
samsa_consumer_group_load_finish(samsa_grp_t *g)
{
    samsa_consumer_group_t  *cg = g->cg;
    cg_member_t   *m;
    size_t         i = 0;

    if (cg == NULL) {
        return;
    }
    while (i < cg->nmembers) {
        m = cg->members[i];
        if (!m->has_meta) {
            samsa_warn("group %s: member %s has assignment records but no "
                       "metadata: dropping it", g->id, m->id);
            samsa_consumer_group_member_drop(cg, m);
            continue;
        }
        cg_timer_start(g, m, CG_TIMER_SESSION,
                       g->gc->cg_session_timeout_ms);
        if (m->state == CG_UNREVOKED) {
            cg_timer_start(g, m, CG_TIMER_REVOKE, m->rebalance_timeout_ms);
        }
        i++;
    }
    if (cg->nmembers == 0 && cg->rec[CG_REC_GROUP].len == 0) {
        samsa_consumer_group_free(cg);
        g->cg = NULL;
        samsa_free(g->protocol_type);
        g->protocol_type = NULL;
    }
}

size_t
samsa_consumer_group_nmembers(const samsa_consumer_group_t *cg)
{
    return cg != NULL ? cg->nmembers : 0;
}

const char *
samsa_consumer_group_state_name(const samsa_consumer_group_t *cg)
{
    size_t  i;

    if (cg->nmembers == 0) {
        return "Empty";
    }
    if (cg->group_epoch > cg->assignment_epoch) {
        return "Assigning";
    }
    for (i = 0; i < cg->nmembers; i++) {
        if (cg->members[i]->epoch != CG_LEAVE_STATIC_EPOCH
            && (cg->members[i]->epoch != cg->assignment_epoch
                || cg->members[i]->state != CG_STABLE)) {
            return "Reconciling";
        }
    }
    return "Stable";
}

bool
samsa_consumer_group_subscribes(const samsa_consumer_group_t *cg, const char *topic)
{
    size_t  i;

    for (i = 0; i < cg->nmembers; i++) {
        if (cg_member_subscribes(cg->members[i], topic)) {
            return true;
        }
    }
    return false;
}

const samsa_grp_consumer_ops_t samsa_consumer_group_ops = {
    .free = samsa_consumer_group_free,
    .nmembers = samsa_consumer_group_nmembers,
    .state_name = samsa_consumer_group_state_name,
    .subscribes = samsa_consumer_group_subscribes,
    .commit_check = samsa_consumer_group_commit_check,
    .txn_commit_check = samsa_consumer_group_txn_commit_check,
    .store_forget = samsa_consumer_group_store_forget,
    .store_tombstones = samsa_consumer_group_store_tombstones,
    .store_load = samsa_consumer_group_store_load,
    .load_finish = samsa_consumer_group_load_finish,
};
