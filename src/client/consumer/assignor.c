/*
 * client/consumer/assignor.c - range, roundrobin and cooperative-sticky (see
 * assignor.h).  Work is done on (topic index, partition) pairs over a
 * copy of the topic list sorted by name and the members sorted in Java's
 * MemberInfo order; results go back in the caller's member order.
 * Threads: pure.
 */
#include "client/consumer/assignor.h"

#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"

typedef struct asg_tp {
    int32_t  t;                 /* index into the sorted topics */
    int32_t  p;
} asg_tp_t;

typedef struct asg_list {
    asg_tp_t  *v;
    int32_t    n;
    int32_t    cap;
} asg_list_t;

typedef struct asg_ctx {
    const samsa_asg_member_t  *members;
    int32_t                    nm;
    int32_t                   *order;       /* sorted member indexes */
    samsa_asg_topic_t         *topics;      /* sorted copy */
    int32_t                    nt;
    asg_list_t                *out;         /* by caller's member index */
} asg_ctx_t;

bool
samsa_assignor_known(const char *name)
{
    return strcmp(name, "range") == 0 || strcmp(name, "roundrobin") == 0
           || strcmp(name, "cooperative-sticky") == 0;
}

bool
samsa_assignor_cooperative(const char *name)
{
    return strcmp(name, "cooperative-sticky") == 0;
}

static void
asg_push(asg_list_t *l, int32_t t, int32_t p)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 8;
        l->v = samsa_realloc(l->v, (size_t) l->cap * sizeof(*l->v));
    }
    l->v[l->n++] = (asg_tp_t) { t, p };
}

/* Java's MemberInfo.compareTo. */
static int
asg_member_cmp(const samsa_asg_member_t *a, const samsa_asg_member_t *b)
{
    if (a->instance_id != NULL && b->instance_id != NULL) {
        return strcmp(a->instance_id, b->instance_id);
    }
    if (a->instance_id != NULL) {
        return -1;
    }
    if (b->instance_id != NULL) {
        return 1;
    }
    return strcmp(a->member_id, b->member_id);
}

static int
asg_order_cmp(const void *a, const void *b, void *ctx)
{
    const samsa_asg_member_t  *members = ctx;

    return asg_member_cmp(&members[*(const int32_t *) a],
                          &members[*(const int32_t *) b]);
}

static int
asg_topic_cmp(const void *a, const void *b)
{
    return strcmp(((const samsa_asg_topic_t *) a)->name,
                  ((const samsa_asg_topic_t *) b)->name);
}

static int
asg_tp_cmp(const void *a, const void *b)
{
    const asg_tp_t  *x = a, *y = b;

    if (x->t != y->t) {
        return (x->t > y->t) - (x->t < y->t);
    }
    return (x->p > y->p) - (x->p < y->p);
}

static int32_t
asg_topic_index(const asg_ctx_t *c, const char *name)
{
    int32_t  i;

    for (i = 0; i < c->nt; i++) {
        if (strcmp(c->topics[i].name, name) == 0) {
            return i;
        }
    }
    return -1;
}

static bool
asg_subscribes(const samsa_asg_member_t *m, const char *topic)
{
    int32_t  i;

    for (i = 0; i < m->sub->ntopics; i++) {
        if (strcmp(m->sub->topics[i], topic) == 0) {
            return true;
        }
    }
    return false;
}

static bool
asg_any_subscribes(const asg_ctx_t *c, int32_t t)
{
    int32_t  i;

    for (i = 0; i < c->nm; i++) {
        if (asg_subscribes(&c->members[i], c->topics[t].name)) {
            return true;
        }
    }
    return false;
}

/* ---- range -------------------------------------------------------------- */

static void
asg_range(asg_ctx_t *c)
{
    int32_t  t, i, k, n, per, extra, start, len, *subs;

    subs = samsa_calloc((size_t) c->nm + 1, sizeof(int32_t));
    for (t = 0; t < c->nt; t++) {
        n = 0;
        for (i = 0; i < c->nm; i++) {
            if (asg_subscribes(&c->members[c->order[i]], c->topics[t].name)) {
                subs[n++] = c->order[i];
            }
        }
        if (n == 0) {
            continue;
        }
        per = c->topics[t].nparts / n;
        extra = c->topics[t].nparts % n;
        for (i = 0; i < n; i++) {
            start = per * i + (i < extra ? i : extra);
            len = per + (i < extra ? 1 : 0);
            for (k = start; k < start + len; k++) {
                asg_push(&c->out[subs[i]], t, k);
            }
        }
    }
    samsa_free(subs);
}

/* ---- roundrobin --------------------------------------------------------- */

static void
asg_roundrobin(asg_ctx_t *c)
{
    int32_t  t, p, next = 0, tries, m;

    if (c->nm == 0) {
        return;
    }
    for (t = 0; t < c->nt; t++) {
        if (!asg_any_subscribes(c, t)) {
            continue;
        }
        for (p = 0; p < c->topics[t].nparts; p++) {
            for (tries = 0; tries < c->nm; tries++) {
                m = c->order[next];
                next = (next + 1) % c->nm;
                if (asg_subscribes(&c->members[m], c->topics[t].name)) {
                    asg_push(&c->out[m], t, p);
                    break;
                }
            }
        }
    }
}

/* ---- cooperative-sticky ------------------------------------------------- */

/* Previous owner (caller's member index) of every partition, -1 none:
 * a claim counts if the partition exists and the member still subscribes
 * to its topic; of two claims the higher generation wins. */
static int32_t **
asg_prev_owners(const asg_ctx_t *c)
{
    int32_t                    **owner, t, i, j, k, p, o;
    const samsa_asg_member_t    *m;
    const samsa_cproto_topic_t  *ot;

    owner = samsa_calloc((size_t) c->nt + 1, sizeof(int32_t *));
    for (t = 0; t < c->nt; t++) {
        owner[t] = samsa_calloc((size_t) c->topics[t].nparts + 1,
                                sizeof(int32_t));
        for (p = 0; p < c->topics[t].nparts; p++) {
            owner[t][p] = -1;
        }
    }
    for (i = 0; i < c->nm; i++) {
        m = &c->members[c->order[i]];
        for (j = 0; j < m->sub->nowned; j++) {
            ot = &m->sub->owned[j];
            t = asg_topic_index(c, ot->topic);
            if (t < 0 || !asg_subscribes(m, ot->topic)) {
                continue;
            }
            for (k = 0; k < ot->nparts; k++) {
                p = ot->parts[k];
                if (p < 0 || p >= c->topics[t].nparts) {
                    continue;
                }
                o = owner[t][p];
                if (o < 0 || c->members[o].sub->generation
                                 < m->sub->generation) {
                    owner[t][p] = c->order[i];
                }
            }
        }
    }
    return owner;
}

static void
asg_sticky(asg_ctx_t *c)
{
    int32_t  **owner = asg_prev_owners(c);
    int32_t    t, p, i, total = 0, minq, extra, keep, best, m;
    int32_t   *kept = samsa_calloc((size_t) c->nm + 1, sizeof(int32_t));
    int32_t   *byown = samsa_calloc((size_t) c->nm + 1, sizeof(int32_t));
    int32_t  **now = samsa_calloc((size_t) c->nt + 1, sizeof(int32_t *));

    for (t = 0; t < c->nt; t++) {
        now[t] = samsa_calloc((size_t) c->topics[t].nparts + 1,
                              sizeof(int32_t));
        if (asg_any_subscribes(c, t)) {
            total += c->topics[t].nparts;
        }
        for (p = 0; p < c->topics[t].nparts; p++) {
            now[t][p] = -1;
            if (owner[t][p] >= 0) {
                byown[owner[t][p]]++;
            }
        }
    }
    minq = c->nm > 0 ? total / c->nm : 0;
    extra = c->nm > 0 ? total % c->nm : 0;
    /* 1. members keep what they own, up to their quota: the ones owning
       the most get the quotas of minq + 1 first */
    for (i = 0; i < c->nm; i++) {
        kept[i] = 0;
    }
    for (;;) {
        best = -1;
        for (i = 0; i < c->nm; i++) {
            m = c->order[i];
            if (byown[m] >= 0 && (best < 0 || byown[m] > byown[best])) {
                best = m;
            }
        }
        if (best < 0) {
            break;
        }
        keep = minq;
        if (byown[best] > minq && extra > 0) {
            keep = minq + 1;
            extra--;
        }
        for (t = 0; t < c->nt; t++) {
            for (p = 0; p < c->topics[t].nparts; p++) {
                if (owner[t][p] == best && kept[best] < keep) {
                    now[t][p] = best;
                    kept[best]++;
                }
            }
        }
        byown[best] = -1;               /* done */
    }
    /* 2. the rest, one by one, to the subscribed member with the fewest */
    for (t = 0; t < c->nt; t++) {
        for (p = 0; p < c->topics[t].nparts; p++) {
            if (now[t][p] >= 0) {
                continue;
            }
            best = -1;
            for (i = 0; i < c->nm; i++) {
                m = c->order[i];
                if (asg_subscribes(&c->members[m], c->topics[t].name)
                    && (best < 0 || kept[m] < kept[best])) {
                    best = m;
                }
            }
            if (best >= 0) {
                now[t][p] = best;
                kept[best]++;
            }
        }
    }
    /* 3. KIP-429: a partition moving to a new owner waits one round */
    for (t = 0; t < c->nt; t++) {
        for (p = 0; p < c->topics[t].nparts; p++) {
            m = now[t][p];
            if (m >= 0 && (owner[t][p] < 0 || owner[t][p] == m)) {
                asg_push(&c->out[m], t, p);
            }
        }
        samsa_free(now[t]);
        samsa_free(owner[t]);
    }
    samsa_free(now);
    samsa_free(owner);
    samsa_free(kept);
    samsa_free(byown);
}

/* ---- results ------------------------------------------------------------ */

static void
asg_result(const asg_ctx_t *c, asg_list_t *l, samsa_cproto_asg_t *out)
{
    int32_t  i, t = -1;

    memset(out, 0, sizeof(*out));
    out->version = SAMSA_CPROTO_VERSION_MAX;
    if (l->n == 0) {
        return;
    }
    qsort(l->v, (size_t) l->n, sizeof(*l->v), asg_tp_cmp);
    out->topics = samsa_calloc((size_t) l->n, sizeof(*out->topics));
    for (i = 0; i < l->n; i++) {
        samsa_cproto_topic_t  *ot;

        if (l->v[i].t != t) {
            t = l->v[i].t;
            ot = &out->topics[out->ntopics++];
            ot->topic = samsa_strdup(c->topics[t].name);
            ot->parts = samsa_calloc((size_t) l->n, sizeof(int32_t));
        }
        ot = &out->topics[out->ntopics - 1];
        ot->parts[ot->nparts++] = l->v[i].p;
    }
}

samsa_err_t
samsa_assignor_assign(const char *name, const samsa_asg_member_t *members,
                      int32_t nm, const samsa_asg_topic_t *topics,
                      int32_t nt, samsa_cproto_asg_t *out)
{
    asg_ctx_t  c;
    int32_t    i;

    if (!samsa_assignor_known(name)) {
        return SAMSA_ERR__INVALID_ARG;
    }
    memset(&c, 0, sizeof(c));
    c.members = members;
    c.nm = nm;
    c.nt = nt;
    c.order = samsa_calloc((size_t) nm + 1, sizeof(int32_t));
    c.topics = samsa_calloc((size_t) nt + 1, sizeof(*c.topics));
    c.out = samsa_calloc((size_t) nm + 1, sizeof(*c.out));
    for (i = 0; i < nm; i++) {
        c.order[i] = i;
    }
    qsort_r(c.order, (size_t) nm, sizeof(int32_t), asg_order_cmp,
            (void *) members);
    for (i = 0; i < nt; i++) {
        c.topics[i] = topics[i];
        if (c.topics[i].nparts < 0) {
            c.topics[i].nparts = 0;
        }
    }
    qsort(c.topics, (size_t) nt, sizeof(*c.topics), asg_topic_cmp);
    if (strcmp(name, "range") == 0) {
        asg_range(&c);
    } else if (strcmp(name, "roundrobin") == 0) {
        asg_roundrobin(&c);
    } else {
        asg_sticky(&c);
    }
    for (i = 0; i < nm; i++) {
        asg_result(&c, &c.out[i], &out[i]);
        samsa_free(c.out[i].v);
    }
    samsa_free(c.out);
    samsa_free(c.topics);
    samsa_free(c.order);
    return SAMSA_ERR_NONE;
}
