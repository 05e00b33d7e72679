/*
 * client/producer/partitioner.c - murmur2 and the KIP-794 built-in partitioner.
 * Threads: samsa_sticky_t fields are guarded by its lock.
 */
#include "client/producer/partitioner.h"

#include <pthread.h>
#include <string.h>

#include "util/alloc.h"
#include "util/locked.h"

int32_t
samsa_murmur2(const void *data, size_t len)
{
    const uint8_t  *d = data;
    const uint32_t  m = 0x5bd1e995;
    uint32_t        h = 0x9747b28c ^ (uint32_t) len;
    uint32_t        k;
    size_t          i, n4 = len / 4;

    for (i = 0; i < n4; i++) {
        k = (uint32_t) d[i * 4] | (uint32_t) d[i * 4 + 1] << 8
            | (uint32_t) d[i * 4 + 2] << 16 | (uint32_t) d[i * 4 + 3] << 24;
        k *= m;
        k ^= k >> 24;
        k *= m;
        h *= m;
        h ^= k;
    }
    switch (len % 4) {
    case 3:
        h ^= (uint32_t) d[(len & ~(size_t) 3) + 2] << 16;
        /* fall through */
    case 2:
        h ^= (uint32_t) d[(len & ~(size_t) 3) + 1] << 8;
        /* fall through */
    case 1:
        h ^= d[len & ~(size_t) 3];
        h *= m;
        break;
    default:
        break;
    }
    h ^= h >> 13;
    h *= m;
    h ^= h >> 15;
    return (int32_t) h;
}

int32_t
samsa_partition_for_key(const void *key, size_t len, int32_t npartitions)
{
    uint32_t  pos = (uint32_t) samsa_murmur2(key, len) & 0x7fffffff;

    return (int32_t) (pos % (uint32_t) npartitions);
}

struct samsa_sticky {
    pthread_mutex_t  lock;
    size_t           batch_size;    /* [const] stickyBatchSize */
    bool             has_pick;      /* [lock] */
    int32_t          partition;     /* [lock] current sticky partition */
    uint64_t         gen;           /* [lock] bumped on every switch */
    size_t           produced;      /* [lock] bytes since the switch */
    uint64_t         rng;           /* [lock] xorshift64* state */
    int32_t         *deck;          /* [lock] shuffled partitions */
    int32_t          deck_len;      /* [lock] */
    int32_t          deck_pos;      /* [lock] next card */
    int32_t          deck_np;       /* [lock] npartitions it was built for */
    int32_t         *cum;           /* [lock] cumulative weights, or NULL */
    int32_t         *cum_ids;       /* [lock] partition of each weight */
    int32_t          ncum;          /* [lock] */
};

samsa_sticky_t *
samsa_sticky_new(size_t batch_size, uint64_t seed)
{
    samsa_sticky_t  *st = samsa_calloc(1, sizeof(*st));

    pthread_mutex_init(&st->lock, NULL);
    st->batch_size = batch_size;
    st->rng = seed != 0 ? seed : 0x9e3779b97f4a7c15ULL;
    return st;
}

void
samsa_sticky_free(samsa_sticky_t *st)
{
    if (st == NULL) {
        return;
    }
    pthread_mutex_destroy(&st->lock);
    samsa_free(st->deck);
    samsa_free(st->cum);
    samsa_free(st->cum_ids);
    samsa_free(st);
}

/* @locks st->lock held */
static uint32_t
sticky_random(samsa_sticky_t *st)
{
    uint64_t  x = st->rng;

    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    st->rng = x;
    return (uint32_t) ((x * 0x2545f4914f6cdd1dULL) >> 33);   /* 31 bits */
}

/* Next card of a shuffled deck of the available partitions (all of them
 * if none is known available).  @locks st->lock held */
static int32_t
sticky_deal(samsa_sticky_t *st, const samsa_partview_t *view)
{
    int32_t  n = view->navail > 0 ? view->navail : view->npartitions;
    int32_t  i, j, t;

    if (st->deck_pos >= st->deck_len || st->deck_np != view->npartitions
        || st->deck_len != n) {
        st->deck = samsa_realloc(st->deck, (size_t) n * sizeof(int32_t));
        for (i = 0; i < n; i++) {
            st->deck[i] = view->navail > 0 ? view->avail[i] : i;
        }
        for (i = n - 1; i > 0; i--) {
            j = (int32_t) (sticky_random(st) % (uint32_t) (i + 1));
            t = st->deck[i];
            st->deck[i] = st->deck[j];
            st->deck[j] = t;
        }
        /* Do not start a round with the partition we are leaving. */
        if (n > 1 && st->has_pick && st->deck[0] == st->partition) {
            st->deck[0] = st->deck[n - 1];
            st->deck[n - 1] = st->partition;
        }
        st->deck_len = n;
        st->deck_pos = 0;
        st->deck_np = view->npartitions;
    }
    return st->deck[st->deck_pos++];
}

/* nextPartition: weighted by load stats when there are some.
 * @locks st->lock held */
static int32_t
sticky_next(samsa_sticky_t *st, const samsa_partview_t *view)
{
    int32_t  r, lo, hi, mid;

    if (st->cum == NULL || st->ncum == 0) {
        return sticky_deal(st, view);
    }
    r = (int32_t) (sticky_random(st) % (uint32_t) st->cum[st->ncum - 1]);
    lo = 0;
    hi = st->ncum - 1;
    while (lo < hi) {                   /* first cum[i] > r */
        mid = (lo + hi) / 2;
        if (st->cum[mid] > r) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    if (st->cum_ids[lo] >= view->npartitions) {
        return sticky_deal(st, view);   /* stats older than the metadata */
    }
    return st->cum_ids[lo];
}

samsa_sticky_pick_t
samsa_sticky_peek(samsa_sticky_t *st, const samsa_partview_t *view)
{
    samsa_sticky_pick_t  pick;

    pthread_mutex_lock(&st->lock);
    if (!st->has_pick || st->partition >= view->npartitions) {
        st->partition = sticky_next(st, view);
        st->has_pick = true;
        st->produced = 0;
        st->gen++;
    }
    pick.partition = st->partition;
    pick.gen = st->gen;
    pthread_mutex_unlock(&st->lock);
    return pick;
}

bool
samsa_sticky_changed(samsa_sticky_t *st, samsa_sticky_pick_t pick)
{
    return SAMSA_LOCKED_READ(&st->lock, st->gen != pick.gen);
}

void
samsa_sticky_update(samsa_sticky_t *st, samsa_sticky_pick_t pick,
                    size_t appended, bool enable_switch,
                    const samsa_partview_t *view)
{
    pthread_mutex_lock(&st->lock);
    if (st->gen == pick.gen) {
        st->produced += appended;
        if ((st->produced >= st->batch_size && enable_switch)
            || st->produced >= st->batch_size * 2) {
            st->partition = sticky_next(st, view);
            st->produced = 0;
            st->gen++;
        }
    }
    pthread_mutex_unlock(&st->lock);
}

void
samsa_sticky_load_stats(samsa_sticky_t *st, const int32_t *queue_sizes,
                        const int32_t *partition_ids, int32_t n,
                        int32_t total)
{
    int32_t  i, lo, hi;

    pthread_mutex_lock(&st->lock);
    st->ncum = 0;
    if (queue_sizes != NULL && n > 0 && total >= 2) {
        lo = hi = queue_sizes[0];
        for (i = 1; i < n; i++) {
            lo = queue_sizes[i] < lo ? queue_sizes[i] : lo;
            hi = queue_sizes[i] > hi ? queue_sizes[i] : hi;
        }
        if (lo != hi || n < total) {
            /* Weight max+1-size, as a cumulative table (Java's
             * cumulativeFrequencyTable). */
            st->cum = samsa_realloc(st->cum, (size_t) n * sizeof(int32_t));
            st->cum_ids = samsa_realloc(st->cum_ids,
                                        (size_t) n * sizeof(int32_t));
            for (i = 0; i < n; i++) {
                st->cum[i] = hi + 1 - queue_sizes[i]
                             + (i > 0 ? st->cum[i - 1] : 0);
                st->cum_ids[i] = partition_ids[i];
            }
            st->ncum = n;
        }
    }
    pthread_mutex_unlock(&st->lock);
}
