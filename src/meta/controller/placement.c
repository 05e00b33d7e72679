/*
 * meta/controller/placement.c - Kafka's striped replica placement; see
 * placement.h.  The state is Kafka's: per rack a sorted list of unfenced
 * and one of fenced broker ids, each with a random starting offset and an
 * index into it valid for one "epoch" (one partition); the racks sorted by
 * name with a random starting rack.  Racks are visited in order from the
 * starting rack, which advances per partition; within an epoch each broker
 * list hands out each of its brokers at most once, and a list seen first
 * in a new epoch restarts one further along.
 */
#include "meta/controller/placement.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/diag.h"

/* ---- the seedable generator */

void
samsa_placement_rng_seed(samsa_placement_rng_t *rng, uint64_t seed)
{
    rng->state = seed;
}

static uint64_t
placement_rng_u64(samsa_placement_rng_t *rng)
{
    uint64_t  z = (rng->state += UINT64_C(0x9e3779b97f4a7c15));

    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

uint32_t
samsa_placement_rng_next(void *ctx, uint32_t bound)
{
    samsa_placement_rng_t  *rng = ctx;
    uint64_t                limit, v;

    samsa_assert(bound > 0);
    /* reject the top sliver so that every value is equally likely */
    limit = UINT64_MAX - UINT64_MAX % bound;
    do {
        v = placement_rng_u64(rng);
    } while (v >= limit);
    return (uint32_t) (v % bound);
}

/* ---- broker lists (Kafka's BrokerList) */

typedef struct place_list {
    int32_t   *ids;                 /* sorted, later shuffled */
    uint32_t   n;
    uint32_t   index;               /* next of this epoch: ids[index+offset] */
    uint32_t   offset;
    uint64_t   epoch;
} place_list_t;

static uint32_t
place_rand(const samsa_placement_rand_t *rnd, uint32_t bound)
{
    uint32_t  v = rnd->next(rnd->ctx, bound);

    samsa_assert(v < bound);
    return v;
}

static void
place_list_init(place_list_t *l, const samsa_placement_rand_t *rnd)
{
    if (l->n > 0) {
        l->offset = place_rand(rnd, l->n);
    }
}

/* Collections.shuffle: Fisher-Yates from the end. */
static void
place_list_shuffle(place_list_t *l, const samsa_placement_rand_t *rnd)
{
    uint32_t  i, j;
    int32_t   t;

    for (i = l->n; i > 1; i--) {
        j = place_rand(rnd, i);
        t = l->ids[i - 1];
        l->ids[i - 1] = l->ids[j];
        l->ids[j] = t;
    }
}

/* The list's next broker of this epoch: false once it gave them all. */
static bool
place_list_next(place_list_t *l, uint64_t epoch, int32_t *id)
{
    if (l->n == 0) {
        return false;
    }
    if (l->epoch != epoch) {
        l->epoch = epoch;
        l->index = 0;
        l->offset = (l->offset + 1) % l->n;
    }
    if (l->index >= l->n) {
        return false;
    }
    *id = l->ids[(l->index + l->offset) % l->n];
    l->index++;
    return true;
}

/* ---- racks (Kafka's Rack and RackList) */

typedef struct place_rack {
    const char    *name;            /* NULL: no rack */
    place_list_t   unfenced;
    place_list_t   fenced;
} place_rack_t;

typedef struct place_racks {
    place_rack_t                  *racks;   /* by name, later shuffled */
    uint32_t                       nracks;
    uint32_t                       nunfenced;
    uint64_t                       epoch;   /* partitions since a shuffle */
    uint32_t                       offset;  /* the first rack to try */
    const samsa_placement_rand_t  *rnd;
} place_racks_t;

/* Unfenced first, then fenced. */
static bool
place_rack_next(place_rack_t *r, uint64_t epoch, int32_t *id)
{
    return place_list_next(&r->unfenced, epoch, id)
           || place_list_next(&r->fenced, epoch, id);
}

/* NULL (no rack) first, then strcmp order: Kafka's
 * OptionalStringComparator. */
static int
place_rack_cmp(const char *a, const char *b)
{
    if (a == NULL || b == NULL) {
        return (a != NULL) - (b != NULL);
    }
    return strcmp(a, b);
}

static int
place_broker_cmp(const void *x, const void *y)
{
    const samsa_placement_broker_t  *a = x;
    const samsa_placement_broker_t  *b = y;
    int                              c = place_rack_cmp(a->rack, b->rack);

    if (c != 0) {
        return c;
    }
    return (a->id > b->id) - (a->id < b->id);
}

/* Build the racks over sorted (by rack, then id); ids holds nbrokers ids
 * that the lists point into. */
static void
place_racks_build(place_racks_t *rs, const samsa_placement_broker_t *sorted,
                  size_t nbrokers, int32_t *ids)
{
    size_t         i, k = 0;
    place_rack_t  *r = NULL;
    bool           fenced;

    for (i = 0; i < nbrokers; i++) {
        if (r == NULL || place_rack_cmp(r->name, sorted[i].rack) != 0) {
            r = &rs->racks[rs->nracks++];
            r->name = sorted[i].rack;
        }
    }
    for (fenced = false; ; fenced = true) {     /* unfenced, then fenced */
        r = NULL;
        for (i = 0; i < nbrokers; i++) {
            place_list_t  *l;

            if (r == NULL || place_rack_cmp(r->name, sorted[i].rack) != 0) {
                r = r == NULL ? rs->racks : r + 1;
            }
            if (sorted[i].fenced != fenced) {
                continue;
            }
            l = fenced ? &r->fenced : &r->unfenced;
            if (l->n == 0) {
                l->ids = &ids[k];
            }
            ids[k++] = sorted[i].id;
            l->n++;
            rs->nunfenced += fenced ? 0 : 1;
        }
        if (fenced) {
            break;
        }
    }
}

static void
place_racks_shuffle(place_racks_t *rs)
{
    uint32_t      i, j;
    place_rack_t  t;

    for (i = rs->nracks; i > 1; i--) {
        j = place_rand(rs->rnd, i);
        t = rs->racks[i - 1];
        rs->racks[i - 1] = rs->racks[j];
        rs->racks[j] = t;
    }
    for (i = 0; i < rs->nracks; i++) {
        place_list_shuffle(&rs->racks[i].fenced, rs->rnd);
        place_list_shuffle(&rs->racks[i].unfenced, rs->rnd);
    }
}

/* One partition's rf replicas into out (Kafka's RackList.place); the
 * caller checked rf against the brokers. */
static void
place_racks_one(place_racks_t *rs, int32_t rf, int32_t *out)
{
    uint32_t  first, ri;
    int32_t   i;
    bool      skip_first = true, got;

    if (rs->epoch == rs->nunfenced && rs->nunfenced > 1) {
        place_racks_shuffle(rs);        /* avoid repeating the last cycle */
        rs->epoch = 0;
    }
    if (rs->offset == rs->nracks) {
        rs->offset = 0;
    }
    /* the leader: the first rack from offset with an unfenced broker left */
    for (first = rs->offset;
         !place_list_next(&rs->racks[first].unfenced, rs->epoch, &out[0]);
         first = (first + 1) % rs->nracks) {
    }
    /* the followers: racks round-robin from offset, skipping the leader's
     * rack on its first turn only */
    ri = rs->offset;
    for (i = 1; i < rf; i++) {
        do {
            if (skip_first && ri == first) {
                skip_first = false;
                got = false;
            } else {
                got = place_rack_next(&rs->racks[ri], rs->epoch, &out[i]);
            }
            ri = (ri + 1) % rs->nracks;
        } while (!got);
    }
    rs->epoch++;
    rs->offset++;
}

/* ---- checks and placement */

samsa_err_t
samsa_placement_check(const samsa_placement_spec_t *spec,
                      const samsa_placement_broker_t *brokers,
                      size_t nbrokers, char *errstr, size_t errstr_size)
{
    int32_t  rf = spec->replication_factor;
    size_t   i, nunfenced = 0;

    for (i = 0; i < nbrokers; i++) {
        nunfenced += brokers[i].fenced ? 0 : 1;
    }
    if (rf <= 0) {
        snprintf(errstr, errstr_size, "Invalid replication factor %" PRId32
                 ": the replication factor must be positive.", rf);
        return SAMSA_ERR_INVALID_REPLICATION_FACTOR;
    }
    if (nunfenced == 0) {
        snprintf(errstr, errstr_size, "All brokers are currently fenced.");
        return SAMSA_ERR_INVALID_REPLICATION_FACTOR;
    }
    if ((size_t) rf > nbrokers) {
        snprintf(errstr, errstr_size, "The target replication factor of %"
                 PRId32 " cannot be reached because only %zu broker(s) are "
                 "registered.", rf, nbrokers);
        return SAMSA_ERR_INVALID_REPLICATION_FACTOR;
    }
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_placement_place(const samsa_placement_spec_t *spec,
                      const samsa_placement_broker_t *brokers,
                      size_t nbrokers, const samsa_placement_rand_t *rnd,
                      int32_t *replicas, char *errstr, size_t errstr_size)
{
    samsa_placement_broker_t  *sorted;
    int32_t                   *ids;
    place_racks_t              rs;
    int32_t                    rf = spec->replication_factor, p;
    uint32_t                   i;
    samsa_err_t                err;

    samsa_assert(spec->num_partitions >= 0);
    err = samsa_placement_check(spec, brokers, nbrokers, errstr,
                                errstr_size);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    sorted = samsa_calloc(nbrokers, sizeof(*sorted));
    memcpy(sorted, brokers, nbrokers * sizeof(*sorted));
    qsort(sorted, nbrokers, sizeof(*sorted), place_broker_cmp);
    ids = samsa_calloc(nbrokers, sizeof(*ids));
    memset(&rs, 0, sizeof(rs));
    rs.racks = samsa_calloc(nbrokers, sizeof(*rs.racks));
    rs.rnd = rnd;
    place_racks_build(&rs, sorted, nbrokers, ids);
    for (i = 0; i < rs.nracks; i++) {
        place_list_init(&rs.racks[i].fenced, rnd);
        place_list_init(&rs.racks[i].unfenced, rnd);
    }
    rs.offset = place_rand(rnd, rs.nracks);
    for (p = 0; p < spec->num_partitions; p++) {
        place_racks_one(&rs, rf, &replicas[(size_t) p * (size_t) rf]);
    }
    samsa_free(rs.racks);
    samsa_free(ids);
    samsa_free(sorted);
    return SAMSA_ERR_NONE;
}
