/*
 * util/timerwheel.h - a hierarchical timing wheel (Kafka's TimingWheel and
 * SystemTimer): tick 1 ms, 20 buckets per level, a coarser overflow level
 * created on demand for deadlines past the current levels' reach.  Each
 * bucket is a doubly linked list, so add and cancel are O(1); non-empty
 * buckets sit in a delay queue (a min-heap on their expiry) so the thread
 * advancing the wheel sleeps until the next bucket is due instead of
 * ticking every millisecond.
 *
 * Threads: samsa_timerwheel_add/cancel/size from any thread;
 * samsa_timerwheel_advance and samsa_timerwheel_expire_all from one thread
 * at a time (the purgatory's reaper).  Callbacks run on the thread that
 * advances, never holding the wheel's lock, so they may add or cancel.
 * Ownership: timers are embedded in the caller's objects; the wheel never
 * allocates or frees them.  A caller must keep a timer's memory alive while
 * it is armed and while its callback runs (the purgatory uses refcounts).
 */
#ifndef SAMSA_UTIL_TIMERWHEEL_H
#define SAMSA_UTIL_TIMERWHEEL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct samsa_timerwheel  samsa_timerwheel_t;   /* opaque */
typedef struct samsa_twbucket    samsa_twbucket_t;     /* opaque */
typedef struct samsa_timer       samsa_timer_t;

/* Runs once per expiry on the advancing thread, no lock held.  The timer is
 * disarmed by then: the callback may re-add it or release its memory. */
typedef void samsa_timer_cb_t(samsa_timer_t *timer);

/* Monotonic milliseconds; tests substitute their own clock. */
typedef int64_t samsa_timerwheel_clock_t(void);

/* Deadlines further than this from the wheel's time are placed at this
 * distance (about 35,000 years: they never fire in practice). */
#define SAMSA_TIMERWHEEL_MAX_DELAY_MS  (INT64_C(1) << 50)

/* A timer, embedded in the caller's object.  Callers set it up with
 * samsa_timer_init and read deadline_ms; every other field is the wheel's.
 * Shared between the arming thread and the advancing thread. */
struct samsa_timer {
    samsa_timer_cb_t   *cb;             /* [const while armed] */
    int64_t             deadline_ms;    /* [const while armed] monotonic */
    samsa_twbucket_t   *bucket;         /* [wheel lock] list it is in */
    samsa_timer_t      *prev;           /* [wheel lock] */
    samsa_timer_t      *next;           /* [wheel lock] */
    _Atomic int         state;          /* [atomic] idle/armed/firing;
                                           changed under the wheel lock,
                                           except firing -> idle */
};

/* A new wheel whose time starts at clock() (NULL: samsa_now_ms). */
samsa_timerwheel_t *samsa_timerwheel_new(samsa_timerwheel_clock_t *clock);

/* Free the wheel.  Timers still armed are disarmed without running; their
 * owners keep them.  @thread no other thread may use tw any more */
void samsa_timerwheel_free(samsa_timerwheel_t *tw);

/* Prepare a timer that will call cb.  Not while the timer is armed. */
void samsa_timer_init(samsa_timer_t *timer, samsa_timer_cb_t *cb);

/* Arm timer to fire at deadline_ms (monotonic ms).  A deadline already
 * passed fires on the next advance.  The timer must be idle: new, cancelled,
 * or inside/after its callback.  @thread any  @locks wheel lock taken */
void samsa_timerwheel_add(samsa_timerwheel_t *tw, samsa_timer_t *timer,
                          int64_t deadline_ms);

/* Disarm timer.  True: it was armed and its callback will not run.  False:
 * it was not armed, or its callback runs or has run (the advancing thread
 * took it first): exactly one of the two happens.  @thread any
 * @locks wheel lock taken */
bool samsa_timerwheel_cancel(samsa_timerwheel_t *tw, samsa_timer_t *timer);

/* Wait up to timeout_ms (0: not at all) for the earliest armed timer to be
 * due, then fire every due timer.  Returns how many callbacks ran.  Returns
 * early, firing what is due, after samsa_timerwheel_wakeup.
 * @thread one at a time (the reaper)  @locks wheel lock taken, released
 * around the callbacks */
size_t samsa_timerwheel_advance(samsa_timerwheel_t *tw, int64_t timeout_ms);

/* Fire every armed timer now, whatever its deadline (shutdown).  Returns
 * how many callbacks ran.  @thread as samsa_timerwheel_advance */
size_t samsa_timerwheel_expire_all(samsa_timerwheel_t *tw);

/* Make a waiting (or the next) samsa_timerwheel_advance return at once.
 * @thread any */
void samsa_timerwheel_wakeup(samsa_timerwheel_t *tw);

/* Armed timers (Kafka's SystemTimer.size).  @thread any */
size_t samsa_timerwheel_size(samsa_timerwheel_t *tw);

#endif /* SAMSA_UTIL_TIMERWHEEL_H */
