/*
 * broker/group/consumer_group_assign.c - server-side assignors of consumer groups
 * (KIP-848): uniform and range.  See consumer_group_assign.h.
 *
 * uniform has Kafka's UniformAssignor goals, by a simpler algorithm:
 *   1. every partition of the previous target stays with its member if
 *      the member still subscribes to its topic (sticky);
 *   2. each partition left goes to the subscribed member with the fewest
 *      partitions (ties: lowest member id);
 *   3. while a member has at least two more partitions than another
 *      member subscribed to one of them, its last such partition moves
 *      (each move lowers the sum of squared counts: it ends).
 * With the same subscription everywhere, counts then differ by at most
 * one and a member keeps what it had up to its share.
 * Threads: any (pure).
 */
#include "broker/group/consumer_group_assign.h"

#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"

bool
samsa_cga_known(const char *name, size_t len)
{
    return (len == 7 && memcmp(name, "uniform", 7) == 0)
           || (len == 5 && memcmp(name, "range", 5) == 0);
}

typedef struct cga {
    const samsa_cga_topic_t  *topics;
    size_t                    ntopics;
    samsa_cga_member_t       *members;
    size_t                    nmembers;
    size_t                   *ord;          /* members by member id */
    int32_t                 **owner;        /* [topic][partition]: member
                                               index, -1 none */
    size_t                   *count;        /* partitions per member */
} cga_t;

static bool
cga_subscribes(const samsa_cga_member_t *m, int32_t topic)
{
    size_t  i;

    for (i = 0; i < m->ntopics; i++) {
        if (m->topics[i] == topic) {
            return true;
        }
    }
    return false;
}

static int
cga_cmp_tp(const void *a, const void *b)
{
    const samsa_cga_tp_t  *x = a, *y = b;

    if (x->topic != y->topic) {
        return x->topic < y->topic ? -1 : 1;
    }
    return x->partition < y->partition ? -1 : x->partition > y->partition;
}

/* Members' out from the owner table. */
static void
cga_collect(cga_t *a)
{
    size_t   i, t;
    int32_t  p, o;

    for (i = 0; i < a->nmembers; i++) {
        samsa_free(a->members[i].out);
        a->members[i].out = samsa_calloc(a->count[i] + 1,
                                         sizeof(samsa_cga_tp_t));
        a->members[i].nout = 0;
    }
    for (t = 0; t < a->ntopics; t++) {
        for (p = 0; p < a->topics[t].npartitions; p++) {
            o = a->owner[t][p];
            if (o >= 0) {
                samsa_cga_member_t  *m = &a->members[o];

                m->out[m->nout++] = (samsa_cga_tp_t) { (int32_t) t, p };
            }
        }
    }
    for (i = 0; i < a->nmembers; i++) {
        qsort(a->members[i].out, a->members[i].nout, sizeof(samsa_cga_tp_t),
              cga_cmp_tp);
    }
}

/* The subscribed member with the fewest partitions (ties: member id), or
 * -1; with below >= 0 only one with fewer than below - 1. */
static int32_t
cga_least(cga_t *a, int32_t topic, int64_t below)
{
    size_t   k, i;
    int32_t  best = -1;

    for (k = 0; k < a->nmembers; k++) {
        i = a->ord[k];
        if (!cga_subscribes(&a->members[i], topic)) {
            continue;
        }
        if (best < 0 || a->count[i] < a->count[best]) {
            best = (int32_t) i;
        }
    }
    if (best >= 0 && below >= 0 && (int64_t) a->count[best] + 1 >= below) {
        return -1;
    }
    return best;
}

/* One balancing move (step 3); false when none is possible.  by is
 * scratch space for nmembers indexes. */
static bool
cga_move_one(cga_t *a, size_t *by)
{
    size_t   k, j, rich, x;
    int32_t  t, p, to;

    /* members by count, highest first; ties in member id order */
    for (k = 0; k < a->nmembers; k++) {
        x = a->ord[k];
        for (j = k; j > 0 && a->count[by[j - 1]] < a->count[x]; j--) {
            by[j] = by[j - 1];
        }
        by[j] = x;
    }
    for (k = 0; k < a->nmembers && a->count[by[k]] >= 2; k++) {
        rich = by[k];
        for (t = (int32_t) a->ntopics - 1; t >= 0; t--) {
            for (p = a->topics[t].npartitions - 1; p >= 0; p--) {
                if (a->owner[t][p] != (int32_t) rich) {
                    continue;
                }
                to = cga_least(a, t, (int64_t) a->count[rich]);
                if (to >= 0) {
                    a->owner[t][p] = to;
                    a->count[rich]--;
                    a->count[to]++;
                    return true;
                }
            }
        }
    }
    return false;
}

static void
cga_uniform(cga_t *a)
{
    size_t                 k, i, j;
    int32_t                t, p, to;
    const samsa_cga_tp_t  *tp;
    size_t                *by;

    for (k = 0; k < a->nmembers; k++) {                 /* 1. sticky */
        i = a->ord[k];
        for (j = 0; j < a->members[i].nprev; j++) {
            tp = &a->members[i].prev[j];
            if (tp->topic < 0 || (size_t) tp->topic >= a->ntopics
                || tp->partition < 0
                || tp->partition >= a->topics[tp->topic].npartitions
                || a->owner[tp->topic][tp->partition] >= 0
                || !cga_subscribes(&a->members[i], tp->topic)) {
                continue;
            }
            a->owner[tp->topic][tp->partition] = (int32_t) i;
            a->count[i]++;
        }
    }
    for (t = 0; t < (int32_t) a->ntopics; t++) {        /* 2. the rest */
        for (p = 0; p < a->topics[t].npartitions; p++) {
            if (a->owner[t][p] >= 0) {
                continue;
            }
            to = cga_least(a, t, -1);
            if (to >= 0) {
                a->owner[t][p] = to;
                a->count[to]++;
            }
        }
    }
    by = samsa_calloc(a->nmembers + 1, sizeof(*by));
    while (cga_move_one(a, by)) {                       /* 3. balance */
    }
    samsa_free(by);
}

static void
cga_range(cga_t *a)
{
    size_t   k, i, n, *subs = samsa_calloc(a->nmembers + 1, sizeof(*subs));
    int32_t  t, p, per, extra, len;

    for (t = 0; t < (int32_t) a->ntopics; t++) {
        n = 0;
        for (k = 0; k < a->nmembers; k++) {
            i = a->ord[k];
            if (cga_subscribes(&a->members[i], t)) {
                subs[n++] = i;
            }
        }
        if (n == 0) {
            continue;
        }
        per = a->topics[t].npartitions / (int32_t) n;
        extra = a->topics[t].npartitions % (int32_t) n;
        p = 0;
        for (k = 0; k < n; k++) {
            len = per + ((int32_t) k < extra ? 1 : 0);
            for (int32_t e = p + len; p < e; p++) {
                a->owner[t][p] = (int32_t) subs[k];
                a->count[subs[k]]++;
            }
        }
    }
    samsa_free(subs);
}

samsa_err_t
samsa_cga_assign(const char *assignor, const samsa_cga_topic_t *topics,
                 size_t ntopics, samsa_cga_member_t *members,
                 size_t nmembers)
{
    cga_t   a;
    size_t  i, k, t;
    int32_t p;
    bool    uniform = strcmp(assignor, "uniform") == 0;

    if (!uniform && strcmp(assignor, "range") != 0) {
        return SAMSA_ERR_INVALID_REQUEST;
    }
    memset(&a, 0, sizeof(a));
    a.topics = topics;
    a.ntopics = ntopics;
    a.members = members;
    a.nmembers = nmembers;
    a.ord = samsa_calloc(nmembers + 1, sizeof(*a.ord));
    a.count = samsa_calloc(nmembers + 1, sizeof(*a.count));
    a.owner = samsa_calloc(ntopics + 1, sizeof(*a.owner));
    for (i = 0; i < nmembers; i++) {    /* insertion sort by member id */
        for (k = i; k > 0 && strcmp(members[a.ord[k - 1]].member_id,
                                    members[i].member_id) > 0; k--) {
            a.ord[k] = a.ord[k - 1];
        }
        a.ord[k] = i;
    }
    for (t = 0; t < ntopics; t++) {
        a.owner[t] = samsa_calloc((size_t) topics[t].npartitions + 1,
                                  sizeof(int32_t));
        for (p = 0; p < topics[t].npartitions; p++) {
            a.owner[t][p] = -1;
        }
    }
    if (uniform) {
        cga_uniform(&a);
    } else {
        cga_range(&a);
    }
    cga_collect(&a);
    for (t = 0; t < ntopics; t++) {
        samsa_free(a.owner[t]);
    }
    samsa_free(a.owner);
    samsa_free(a.ord);
    samsa_free(a.count);
    return SAMSA_ERR_NONE;
}
