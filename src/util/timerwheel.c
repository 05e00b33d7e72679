/*
 * util/timerwheel.c - see timerwheel.h.
 *
 * Shape (Kafka's TimingWheel): level i has 20 buckets of tick_i ms each
 * (tick_0 = 1, tick_i+1 = 20 * tick_i) and covers [current_i, current_i +
 * 20 * tick_i).  A timer goes to the finest level whose span holds its
 * deadline, in bucket (deadline / tick) % 20, and the bucket expires at
 * (deadline / tick) * tick.  When a bucket expires, the clocks of every
 * level move to its expiry and its timers are placed again: each lands one
 * level finer, or in the due list once its deadline is reached.
 * The delay queue holds exactly the non-empty wheel buckets (cancel removes
 * a bucket it empties), so the advancing thread sleeps until real work.
 *
 * Threads: one mutex guards the levels, the buckets, the delay queue and the
 * links of every armed timer.  The advancing thread moves due timers to a
 * private chain under the lock (state ARMED -> FIRING) and runs callbacks
 * after releasing it, marking each timer IDLE just before its callback: so
 * cancel, which only succeeds on an ARMED timer under the lock, and the
 * callback exclude each other.
 */
#include "util/timerwheel.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "util/alloc.h"
#include "util/diag.h"
#include "util/time.h"

#define TW_WHEEL_SIZE  20
#define TW_MAX_LEVELS  13       /* 20^12 ms > SAMSA_TIMERWHEEL_MAX_DELAY_MS */
#define TW_NOT_QUEUED  SIZE_MAX
#define TW_MAX_WAIT_MS 60000     /* longest single sleep; the loop re-waits */

enum {
    TIMER_IDLE   = 0,           /* not in the wheel */
    TIMER_ARMED  = 1,           /* in a bucket or the due list */
    TIMER_FIRING = 2,           /* taken by the advancing thread */
};

/* One bucket: a circular list around a sentinel.  [wheel lock] */
struct samsa_twbucket {
    samsa_timer_t   head;           /* sentinel; head.next is the first */
    int64_t         expire_ms;      /* bucket's expiry while queued */
    size_t          heap_idx;       /* index in the delay queue, or
                                       TW_NOT_QUEUED */
};

/* One level of the wheel.  [wheel lock] */
typedef struct tw_level {
    int64_t           tick_ms;      /* [const once created] */
    int64_t           interval_ms;  /* [const once created] 20 ticks */
    int64_t           current_ms;   /* multiple of tick_ms */
    samsa_twbucket_t  buckets[TW_WHEEL_SIZE];
} tw_level_t;

struct samsa_timerwheel {
    pthread_mutex_t            lock;    /* guards the [lock] fields and the
                                           links of every armed timer */
    pthread_cond_t             cond;    /* advance waits here (monotonic) */
    samsa_timerwheel_clock_t  *clock;   /* [const] */
    tw_level_t                 levels[TW_MAX_LEVELS];   /* [lock] */
    size_t                     nlevels;                 /* [lock] */
    samsa_twbucket_t           due;     /* [lock] armed timers whose
                                           deadline is reached */
    samsa_twbucket_t          *heap[TW_MAX_LEVELS * TW_WHEEL_SIZE];
                                        /* [lock] delay queue: min-heap of
                                           non-empty buckets on expire_ms */
    size_t                     nheap;   /* [lock] */
    bool                       wakeup;  /* [lock] advance returns at once */
    _Atomic size_t             size;    /* [atomic] armed timers; written
                                           under lock, read relaxed */
};

static void
tw_bucket_init(samsa_twbucket_t *b)
{
    b->head.next = &b->head;
    b->head.prev = &b->head;
    b->expire_ms = -1;
    b->heap_idx = TW_NOT_QUEUED;
}

static bool
tw_bucket_empty(const samsa_twbucket_t *b)
{
    return b->head.next == &b->head;
}

static void
tw_bucket_push(samsa_twbucket_t *b, samsa_timer_t *timer)
{
    timer->prev = b->head.prev;
    timer->next = &b->head;
    b->head.prev->next = timer;
    b->head.prev = timer;
    timer->bucket = b;
}

static void
tw_timer_unlink(samsa_timer_t *timer)
{
    timer->prev->next = timer->next;
    timer->next->prev = timer->prev;
    timer->prev = NULL;
    timer->next = NULL;
    timer->bucket = NULL;
}

static void
tw_heap_set(samsa_timerwheel_t *tw, size_t i, samsa_twbucket_t *b)
{
    tw->heap[i] = b;
    b->heap_idx = i;
}

static void
tw_heap_up(samsa_timerwheel_t *tw, size_t i)
{
    samsa_twbucket_t  *b = tw->heap[i];
    size_t             parent;

    while (i > 0) {
        parent = (i - 1) / 2;
        if (tw->heap[parent]->expire_ms <= b->expire_ms) {
            break;
        }
        tw_heap_set(tw, i, tw->heap[parent]);
        i = parent;
    }
    tw_heap_set(tw, i, b);
}

static void
tw_heap_down(samsa_timerwheel_t *tw, size_t i)
{
    samsa_twbucket_t  *b = tw->heap[i];
    size_t             child;

    for (;;) {
        child = 2 * i + 1;
        if (child >= tw->nheap) {
            break;
        }
        if (child + 1 < tw->nheap
            && tw->heap[child + 1]->expire_ms < tw->heap[child]->expire_ms) {
            child++;
        }
        if (b->expire_ms <= tw->heap[child]->expire_ms) {
            break;
        }
        tw_heap_set(tw, i, tw->heap[child]);
        i = child;
    }
    tw_heap_set(tw, i, b);
}

static void
tw_heap_push(samsa_timerwheel_t *tw, samsa_twbucket_t *b)
{
    samsa_assert(tw->nheap < TW_MAX_LEVELS * TW_WHEEL_SIZE);
    tw_heap_set(tw, tw->nheap++, b);
    tw_heap_up(tw, b->heap_idx);
}

static void
tw_heap_remove(samsa_timerwheel_t *tw, samsa_twbucket_t *b)
{
    size_t             i = b->heap_idx;
    samsa_twbucket_t  *last = tw->heap[--tw->nheap];

    b->heap_idx = TW_NOT_QUEUED;
    b->expire_ms = -1;
    if (last == b) {
        return;
    }
    tw_heap_set(tw, i, last);
    tw_heap_up(tw, i);
    tw_heap_down(tw, last->heap_idx);
}

static void
tw_level_init(tw_level_t *lvl, int64_t tick_ms, int64_t start_ms)
{
    size_t  i;

    lvl->tick_ms = tick_ms;
    lvl->interval_ms = tick_ms * TW_WHEEL_SIZE;
    lvl->current_ms = start_ms - start_ms % tick_ms;
    for (i = 0; i < TW_WHEEL_SIZE; i++) {
        tw_bucket_init(&lvl->buckets[i]);
    }
}

/* The level above the top one (Kafka's addOverflowWheel).  @locks held */
static tw_level_t *
tw_level_add(samsa_timerwheel_t *tw)
{
    tw_level_t  *below = &tw->levels[tw->nlevels - 1];
    tw_level_t  *lvl = &tw->levels[tw->nlevels];

    samsa_assert(tw->nlevels < TW_MAX_LEVELS);
    tw_level_init(lvl, below->interval_ms, below->current_ms);
    tw->nlevels++;
    return lvl;
}

/* Put timer in bucket b of the wheel, queueing b if it was empty, and wake
 * the advancing thread if b became the earliest bucket.  @locks held */
static void
tw_bucket_place(samsa_timerwheel_t *tw, samsa_twbucket_t *b,
                samsa_timer_t *timer, int64_t expire_ms)
{
    if (b->heap_idx == TW_NOT_QUEUED) {
        b->expire_ms = expire_ms;
        tw_heap_push(tw, b);
        if (b->heap_idx == 0) {
            pthread_cond_signal(&tw->cond);
        }
    }
    samsa_assert(b->expire_ms == expire_ms);
    tw_bucket_push(b, timer);
}

/* Put an armed timer where its deadline says (Kafka's TimingWheel.add, with
 * an already-expired timer going to the due list).  @locks held */
static void
tw_place(samsa_timerwheel_t *tw, samsa_timer_t *timer)
{
    int64_t      expire_ms = timer->deadline_ms;
    int64_t      cap_ms = tw->levels[0].current_ms
                          + SAMSA_TIMERWHEEL_MAX_DELAY_MS;
    tw_level_t  *lvl;
    int64_t      vid;
    size_t       i;

    if (expire_ms < tw->levels[0].current_ms + tw->levels[0].tick_ms) {
        if (tw_bucket_empty(&tw->due)) {
            pthread_cond_signal(&tw->cond);
        }
        tw_bucket_push(&tw->due, timer);
        return;
    }
    expire_ms = expire_ms < cap_ms ? expire_ms : cap_ms;
    for (i = 0;; i++) {
        lvl = i < tw->nlevels ? &tw->levels[i] : tw_level_add(tw);
        if (expire_ms < lvl->current_ms + lvl->interval_ms) {
            break;
        }
    }
    vid = expire_ms / lvl->tick_ms;
    tw_bucket_place(tw, &lvl->buckets[vid % TW_WHEEL_SIZE], timer,
                    vid * lvl->tick_ms);
}

/* Move every level's clock to time_ms (Kafka's advanceClock).  @locks held */
static void
tw_clock_advance(samsa_timerwheel_t *tw, int64_t time_ms)
{
    tw_level_t  *lvl;
    size_t       i;

    for (i = 0; i < tw->nlevels; i++) {
        lvl = &tw->levels[i];
        if (time_ms >= lvl->current_ms + lvl->tick_ms) {
            lvl->current_ms = time_ms - time_ms % lvl->tick_ms;
        }
    }
}

/* Expire every bucket due at now_ms: its timers move a level finer or to
 * the due list.  @locks held */
static void
tw_expire_buckets(samsa_timerwheel_t *tw, int64_t now_ms)
{
    samsa_twbucket_t  *b;
    samsa_timer_t     *timer;

    while (tw->nheap > 0 && tw->heap[0]->expire_ms <= now_ms) {
        b = tw->heap[0];
        tw_clock_advance(tw, b->expire_ms);
        tw_heap_remove(tw, b);
        while (!tw_bucket_empty(b)) {
            timer = b->head.next;
            tw_timer_unlink(timer);
            tw_place(tw, timer);
            samsa_assert(timer->bucket != b);
        }
    }
}

/* Timers taken for firing, oldest first, linked through next. */
typedef struct tw_chain {
    samsa_timer_t   *head;
    samsa_timer_t  **tailp;
} tw_chain_t;

/* Move every timer of b to the end of chain, marking each FIRING, and take
 * b out of the delay queue.  @locks held */
static void
tw_bucket_take(samsa_timerwheel_t *tw, samsa_twbucket_t *b, tw_chain_t *chain)
{
    samsa_timer_t  *timer;
    size_t          n = 0;

    while (!tw_bucket_empty(b)) {
        timer = b->head.next;
        tw_timer_unlink(timer);
        atomic_store_explicit(&timer->state, TIMER_FIRING,
                              memory_order_relaxed);
        *chain->tailp = timer;
        chain->tailp = &timer->next;
        n++;
    }
    if (b->heap_idx != TW_NOT_QUEUED) {
        tw_heap_remove(tw, b);
    }
    atomic_fetch_sub_explicit(&tw->size, n, memory_order_relaxed);
}

/* Run the callbacks of a chain taken by tw_bucket_take.  @locks none */
static size_t
tw_chain_run(samsa_timer_t *chain)
{
    samsa_timer_t     *timer, *next;
    samsa_timer_cb_t  *cb;
    size_t             n = 0;

    for (timer = chain; timer != NULL; timer = next) {
        next = timer->next;
        cb = timer->cb;
        timer->next = NULL;
        /* release: pairs with the acquire in add/cancel, which may now
         * reuse the timer's links */
        atomic_store_explicit(&timer->state, TIMER_IDLE,
                              memory_order_release);
        cb(timer);
        n++;
    }
    return n;
}

/* Until something is due, the wakeup flag is set or timeout_ms passed.
 * @locks held (released while waiting) */
static void
tw_wait(samsa_timerwheel_t *tw, int64_t timeout_ms)
{
    int64_t          now_ms = tw->clock();
    int64_t          end_ms = now_ms + (timeout_ms > 0 ? timeout_ms : 0);
    int64_t          until_ms, wait_ns;
    struct timespec  ts;

    while (!tw->wakeup && tw_bucket_empty(&tw->due)) {
        until_ms = end_ms;
        if (tw->nheap > 0 && tw->heap[0]->expire_ms < until_ms) {
            until_ms = tw->heap[0]->expire_ms;
        }
        if (until_ms <= now_ms) {
            break;
        }
        if (until_ms - now_ms > TW_MAX_WAIT_MS) {
            until_ms = now_ms + TW_MAX_WAIT_MS;
        }
        clock_gettime(CLOCK_MONOTONIC, &ts);
        wait_ns = ts.tv_nsec + (until_ms - now_ms) * 1000000;
        ts.tv_sec += wait_ns / 1000000000;
        ts.tv_nsec = wait_ns % 1000000000;
        pthread_cond_timedwait(&tw->cond, &tw->lock, &ts);
        now_ms = tw->clock();
    }
    tw->wakeup = false;
}

samsa_timerwheel_t *
samsa_timerwheel_new(samsa_timerwheel_clock_t *clock)
{
    samsa_timerwheel_t  *tw = samsa_calloc(1, sizeof(*tw));
    pthread_condattr_t   attr;

    tw->clock = clock != NULL ? clock : samsa_now_ms;
    pthread_mutex_init(&tw->lock, NULL);
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&tw->cond, &attr);
    pthread_condattr_destroy(&attr);
    tw_level_init(&tw->levels[0], 1, tw->clock());
    tw->nlevels = 1;
    tw_bucket_init(&tw->due);
    atomic_init(&tw->size, 0);
    return tw;
}

/* Disarm every timer of b without running it. */
static void
tw_bucket_drop(samsa_twbucket_t *b)
{
    samsa_timer_t  *timer;

    while (!tw_bucket_empty(b)) {
        timer = b->head.next;
        tw_timer_unlink(timer);
        atomic_store_explicit(&timer->state, TIMER_IDLE,
                              memory_order_release);
    }
}

void
samsa_timerwheel_free(samsa_timerwheel_t *tw)
{
    size_t  i, j;

    if (tw == NULL) {
        return;
    }
    for (i = 0; i < tw->nlevels; i++) {
        for (j = 0; j < TW_WHEEL_SIZE; j++) {
            tw_bucket_drop(&tw->levels[i].buckets[j]);
        }
    }
    tw_bucket_drop(&tw->due);
    pthread_cond_destroy(&tw->cond);
    pthread_mutex_destroy(&tw->lock);
    samsa_free(tw);
}

void
samsa_timer_init(samsa_timer_t *timer, samsa_timer_cb_t *cb)
{
    memset(timer, 0, sizeof(*timer));
    timer->cb = cb;
    atomic_init(&timer->state, TIMER_IDLE);
}

void
samsa_timerwheel_add(samsa_timerwheel_t *tw, samsa_timer_t *timer,
                     int64_t deadline_ms)
{
    pthread_mutex_lock(&tw->lock);
    samsa_assert(atomic_load_explicit(&timer->state, memory_order_acquire)
                 == TIMER_IDLE);
    timer->deadline_ms = deadline_ms;
    atomic_store_explicit(&timer->state, TIMER_ARMED, memory_order_relaxed);
    tw_place(tw, timer);
    atomic_fetch_add_explicit(&tw->size, 1, memory_order_relaxed);
    pthread_mutex_unlock(&tw->lock);
}

bool
samsa_timerwheel_cancel(samsa_timerwheel_t *tw, samsa_timer_t *timer)
{
    samsa_twbucket_t  *b;
    bool               armed;

    pthread_mutex_lock(&tw->lock);
    armed = atomic_load_explicit(&timer->state, memory_order_acquire)
            == TIMER_ARMED;
    if (armed) {
        b = timer->bucket;
        tw_timer_unlink(timer);
        atomic_store_explicit(&timer->state, TIMER_IDLE,
                              memory_order_relaxed);
        atomic_fetch_sub_explicit(&tw->size, 1, memory_order_relaxed);
        if (b->heap_idx != TW_NOT_QUEUED && tw_bucket_empty(b)) {
            tw_heap_remove(tw, b);
        }
    }
    pthread_mutex_unlock(&tw->lock);
    return armed;
}

size_t
samsa_timerwheel_advance(samsa_timerwheel_t *tw, int64_t timeout_ms)
{
    tw_chain_t  chain = { NULL, &chain.head };

    pthread_mutex_lock(&tw->lock);
    tw_wait(tw, timeout_ms);
    tw_expire_buckets(tw, tw->clock());
    tw_bucket_take(tw, &tw->due, &chain);
    pthread_mutex_unlock(&tw->lock);
    return tw_chain_run(chain.head);
}

size_t
samsa_timerwheel_expire_all(samsa_timerwheel_t *tw)
{
    tw_chain_t  chain = { NULL, &chain.head };
    size_t      i, j;

    pthread_mutex_lock(&tw->lock);
    tw_bucket_take(tw, &tw->due, &chain);
    for (i = 0; i < tw->nlevels; i++) {
        for (j = 0; j < TW_WHEEL_SIZE; j++) {
            tw_bucket_take(tw, &tw->levels[i].buckets[j], &chain);
        }
    }
    samsa_assert(tw->nheap == 0);
    pthread_mutex_unlock(&tw->lock);
    return tw_chain_run(chain.head);
}

void
samsa_timerwheel_wakeup(samsa_timerwheel_t *tw)
{
    pthread_mutex_lock(&tw->lock);
    tw->wakeup = true;
    pthread_cond_signal(&tw->cond);
    pthread_mutex_unlock(&tw->lock);
}

size_t
samsa_timerwheel_size(samsa_timerwheel_t *tw)
{
    return atomic_load_explicit(&tw->size, memory_order_relaxed);
}
