/* Unit tests for util/timerwheel.c: ordering, overflow levels, cancel,
 * many timers, accuracy against the real clock, add/cancel from threads. */
#include "unit.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/time.h"
#include "util/timerwheel.h"

static _Atomic int64_t  fake_now_ms;

static int64_t
fake_clock(void)
{
    return atomic_load(&fake_now_ms);
}

static uint64_t  rng_state = 88172645463325252ULL;

static uint64_t
rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* A test object with an embedded timer. */
typedef struct tt {
    samsa_timer_t   timer;
    int             id;
    _Atomic int     fired;
    _Atomic int     cancelled;
    _Atomic int     added;
    int64_t         fired_at;       /* clock at firing (fake ms or real ns) */
} tt_t;

static tt_t *
tt_of(samsa_timer_t *timer)
{
    return (tt_t *) (void *) ((char *) timer - offsetof(tt_t, timer));
}

/* Firing log for the single-threaded tests. */
static int      fired_log[4096];
static size_t   nfired_log;
static int64_t  prev_advance_ms;    /* clock of the previous advance */

static void
tt_on_fire_fake(samsa_timer_t *timer)
{
    tt_t  *t = tt_of(timer);

    t->fired_at = fake_clock();
    atomic_fetch_add(&t->fired, 1);
    /* Fired no earlier than its deadline and at the first advance that
     * reached it. */
    assert_true(timer->deadline_ms <= t->fired_at);
    assert_true(timer->deadline_ms > prev_advance_ms);
    if (nfired_log < sizeof(fired_log) / sizeof(fired_log[0])) {
        fired_log[nfired_log++] = t->id;
    }
}

static void
tt_on_fire_real(samsa_timer_t *timer)
{
    tt_t  *t = tt_of(timer);

    t->fired_at = samsa_now_ns();
    atomic_fetch_add(&t->fired, 1);
}

static void
fake_reset(int64_t start_ms)
{
    atomic_store(&fake_now_ms, start_ms);
    prev_advance_ms = start_ms - 1;
    nfired_log = 0;
}

/* Set the fake clock to now_ms and fire what is due. */
static size_t
fake_advance_to(samsa_timerwheel_t *tw, int64_t now_ms)
{
    size_t  n;

    atomic_store(&fake_now_ms, now_ms);
    n = samsa_timerwheel_advance(tw, 0);
    prev_advance_ms = now_ms;
    return n;
}

/* Stepping 1 ms at a time, each timer fires exactly at its deadline, in
 * deadline order. */
static void
test_timerwheel_fires_in_deadline_order(void **state)
{
    static tt_t          t[500];
    samsa_timerwheel_t  *tw;
    int64_t              now;
    size_t               i;

    (void) state;
    fake_reset(1000);
    tw = samsa_timerwheel_new(fake_clock);
    for (i = 0; i < 500; i++) {
        samsa_timer_init(&t[i].timer, tt_on_fire_fake);
        t[i].id = (int) i;
        atomic_init(&t[i].fired, 0);
        samsa_timerwheel_add(tw, &t[i].timer,
                             1000 + 1 + (int64_t) ((i * 37) % 500));
    }
    assert_int_equal(samsa_timerwheel_size(tw), 500);
    for (now = 1001; now <= 1600; now++) {
        fake_advance_to(tw, now);
    }
    assert_int_equal(nfired_log, 500);
    for (i = 0; i < 500; i++) {
        assert_int_equal(atomic_load(&t[i].fired), 1);
        assert_int_equal(t[i].fired_at, t[i].timer.deadline_ms);
        if (i > 0) {
            assert_true(t[fired_log[i - 1]].timer.deadline_ms
                        <= t[fired_log[i]].timer.deadline_ms);
        }
    }
    assert_int_equal(samsa_timerwheel_size(tw), 0);
    samsa_timerwheel_free(tw);
}

/* One big jump fires everything in one advance, still in deadline order
 * (buckets cascade down in expiry order). */
static void
test_timerwheel_jump_keeps_order(void **state)
{
    static tt_t          t[500];
    samsa_timerwheel_t  *tw;
    size_t               i;

    (void) state;
    fake_reset(1000);
    tw = samsa_timerwheel_new(fake_clock);
    for (i = 0; i < 500; i++) {
        samsa_timer_init(&t[i].timer, tt_on_fire_fake);
        t[i].id = (int) i;
        atomic_init(&t[i].fired, 0);
        samsa_timerwheel_add(tw, &t[i].timer,
                             1000 + 1 + (int64_t) ((i * 37) % 500));
    }
    assert_int_equal(fake_advance_to(tw, 1000 + 600), 500);
    for (i = 1; i < 500; i++) {
        assert_true(t[fired_log[i - 1]].timer.deadline_ms
                    <= t[fired_log[i]].timer.deadline_ms);
    }
    samsa_timerwheel_free(tw);
}

/* Deadlines at every level boundary up to 10^12 ms go through the overflow
 * wheels and fire neither a millisecond early nor late. */
static void
test_timerwheel_far_deadlines_cascade(void **state)
{
    static const int64_t  delays[] = {
        1, 19, 20, 21, 399, 400, 401, 7999, 8000, 8001, 159999, 160000,
        3200000, 3200001, 64000000, 1280000000, 25600000000,
        1000000000000,
    };
    static tt_t           t[sizeof(delays) / sizeof(delays[0])];
    tt_t                  never;
    samsa_timerwheel_t   *tw;
    size_t                i, n = sizeof(delays) / sizeof(delays[0]);
    int64_t               start = 5, d;

    (void) state;
    fake_reset(start);
    tw = samsa_timerwheel_new(fake_clock);
    for (i = 0; i < n; i++) {
        samsa_timer_init(&t[i].timer, tt_on_fire_fake);
        t[i].id = (int) i;
        atomic_init(&t[i].fired, 0);
        samsa_timerwheel_add(tw, &t[i].timer, start + delays[i]);
    }
    samsa_timer_init(&never.timer, tt_on_fire_fake);
    samsa_timerwheel_add(tw, &never.timer, INT64_MAX);
    for (i = 0; i < n; i++) {
        d = start + delays[i];
        if (i == 0 || delays[i - 1] < delays[i] - 1) {
            assert_int_equal(fake_advance_to(tw, d - 1), 0);
        }
        assert_int_equal(fake_advance_to(tw, d), 1);
        assert_int_equal(atomic_load(&t[i].fired), 1);
        assert_int_equal(samsa_timerwheel_size(tw), n - i);
    }
    assert_true(samsa_timerwheel_cancel(tw, &never.timer));
    assert_int_equal(samsa_timerwheel_size(tw), 0);
    samsa_timerwheel_free(tw);
}

/* Random deadlines over nine orders of magnitude, random clock jumps and
 * random cancels: each live timer fires at the first advance reaching its
 * deadline (checked in tt_on_fire_fake), each cancelled one never. */
static void
test_timerwheel_random_jumps_fire_on_time(void **state)
{
    enum { N = 3000 };
    static tt_t          t[N];
    samsa_timerwheel_t  *tw;
    int64_t              now = 123456, span;
    size_t               i, ncancelled = 0, nfired = 0;

    (void) state;
    fake_reset(now);
    tw = samsa_timerwheel_new(fake_clock);
    for (i = 0; i < N; i++) {
        samsa_timer_init(&t[i].timer, tt_on_fire_fake);
        atomic_init(&t[i].fired, 0);
        span = 10;
        for (int k = (int) (rng() % 9); k > 0; k--) {
            span *= 10;
        }
        samsa_timerwheel_add(tw, &t[i].timer, now + (int64_t) (rng() % span));
    }
    while (samsa_timerwheel_size(tw) > 0) {
        span = (int64_t) 1 << (rng() % 32);
        now += 1 + (int64_t) (rng() % (uint64_t) span);
        nfired += fake_advance_to(tw, now);
        i = rng() % N;
        if (samsa_timerwheel_cancel(tw, &t[i].timer)) {
            atomic_store(&t[i].cancelled, 1);
            ncancelled++;
        }
    }
    assert_int_equal(nfired + ncancelled, N);
    for (i = 0; i < N; i++) {
        assert_int_equal(atomic_load(&t[i].fired)
                         + atomic_load(&t[i].cancelled), 1);
    }
    samsa_timerwheel_free(tw);
}

/* Cancel takes a timer out before it fires, exactly once; cancelling a
 * fired or never-added timer reports false. */
static void
test_timerwheel_cancel(void **state)
{
    static tt_t          t[100];
    tt_t                 idle;
    samsa_timerwheel_t  *tw;
    size_t               i;

    (void) state;
    fake_reset(0);
    tw = samsa_timerwheel_new(fake_clock);
    for (i = 0; i < 100; i++) {
        samsa_timer_init(&t[i].timer, tt_on_fire_fake);
        atomic_init(&t[i].fired, 0);
        samsa_timerwheel_add(tw, &t[i].timer, 1 + (int64_t) i * 7);
    }
    for (i = 0; i < 100; i += 2) {
        assert_true(samsa_timerwheel_cancel(tw, &t[i].timer));
        assert_false(samsa_timerwheel_cancel(tw, &t[i].timer));
    }
    assert_int_equal(samsa_timerwheel_size(tw), 50);
    assert_int_equal(fake_advance_to(tw, 1000), 50);
    for (i = 0; i < 100; i++) {
        assert_int_equal(atomic_load(&t[i].fired), (int) (i % 2));
        assert_false(samsa_timerwheel_cancel(tw, &t[i].timer));
    }
    samsa_timer_init(&idle.timer, tt_on_fire_fake);
    assert_false(samsa_timerwheel_cancel(tw, &idle.timer));
    /* A cancelled timer can be armed again. */
    samsa_timerwheel_add(tw, &t[0].timer, 1010);
    assert_int_equal(fake_advance_to(tw, 1010), 1);
    assert_int_equal(atomic_load(&t[0].fired), 1);
    samsa_timerwheel_free(tw);
}

/* A deadline already passed fires at the next advance; so does every armed
 * timer on expire_all. */
static void
test_timerwheel_past_deadline_and_expire_all(void **state)
{
    static tt_t          t[10];
    samsa_timerwheel_t  *tw;
    size_t               i;

    (void) state;
    fake_reset(5000);
    prev_advance_ms = INT64_MIN;                /* first one is overdue */
    tw = samsa_timerwheel_new(fake_clock);
    samsa_timer_init(&t[0].timer, tt_on_fire_fake);
    samsa_timerwheel_add(tw, &t[0].timer, 10);
    assert_int_equal(fake_advance_to(tw, 5000), 1);
    for (i = 0; i < 10; i++) {
        samsa_timer_init(&t[i].timer, tt_on_fire_real);
        atomic_init(&t[i].fired, 0);
        samsa_timerwheel_add(tw, &t[i].timer, 5000 + (int64_t) i * 100000);
    }
    assert_int_equal(samsa_timerwheel_expire_all(tw), 10);
    for (i = 0; i < 10; i++) {
        assert_int_equal(atomic_load(&t[i].fired), 1);
    }
    assert_int_equal(samsa_timerwheel_size(tw), 0);
    assert_int_equal(fake_advance_to(tw, 1000000000), 0);
    samsa_timerwheel_free(tw);
}

/* A callback may arm its own timer again (periodic timer). */
static samsa_timerwheel_t  *rearm_tw;
static int                  rearm_count;

static void
rearm_on_fire(samsa_timer_t *timer)
{
    if (++rearm_count < 5) {
        samsa_timerwheel_add(rearm_tw, timer, fake_clock() + 10);
    }
}

static void
test_timerwheel_callback_rearms(void **state)
{
    samsa_timer_t  timer;
    int64_t        now;

    (void) state;
    fake_reset(0);
    rearm_tw = samsa_timerwheel_new(fake_clock);
    rearm_count = 0;
    samsa_timer_init(&timer, rearm_on_fire);
    samsa_timerwheel_add(rearm_tw, &timer, 10);
    for (now = 1; now <= 100; now++) {
        fake_advance_to(rearm_tw, now);
    }
    assert_int_equal(rearm_count, 5);
    assert_int_equal(samsa_timerwheel_size(rearm_tw), 0);
    samsa_timerwheel_free(rearm_tw);
}

/* 200,000 timers over a minute, every third cancelled, stepped 1 ms at a
 * time; reports add+cancel throughput. */
static void
test_timerwheel_many_timers(void **state)
{
    enum { N = 200000 };
    tt_t                *t = samsa_calloc(N, sizeof(*t));
    samsa_timerwheel_t  *tw;
    int64_t              now, t0;
    size_t               i, nfired = 0;

    (void) state;
    fake_reset(0);
    tw = samsa_timerwheel_new(fake_clock);
    t0 = samsa_now_ns();
    for (i = 0; i < N; i++) {
        samsa_timer_init(&t[i].timer, tt_on_fire_fake);
        samsa_timerwheel_add(tw, &t[i].timer, 1 + (int64_t) (rng() % 60000));
    }
    for (i = 0; i < N; i += 3) {
        assert_true(samsa_timerwheel_cancel(tw, &t[i].timer));
    }
    printf("# timerwheel: %d adds + %d cancels in %.1f ms\n", N, (N + 2) / 3,
           (double) (samsa_now_ns() - t0) / 1e6);
    for (now = 1; now <= 60000; now++) {
        nfired += fake_advance_to(tw, now);
    }
    assert_int_equal(nfired, N - (N + 2) / 3);
    for (i = 0; i < N; i++) {
        assert_int_equal(atomic_load(&t[i].fired), i % 3 == 0 ? 0 : 1);
    }
    samsa_timerwheel_free(tw);
    samsa_free(t);
}

typedef struct reaper_arg {
    samsa_timerwheel_t  *tw;
    _Atomic int          stop;
} reaper_arg_t;

static void *
reaper_main(void *varg)
{
    reaper_arg_t  *arg = varg;

    while (!atomic_load(&arg->stop)) {
        samsa_timerwheel_advance(arg->tw, 100);
    }
    return NULL;
}

static void
reaper_stop(reaper_arg_t *arg, pthread_t thread)
{
    atomic_store(&arg->stop, 1);
    samsa_timerwheel_wakeup(arg->tw);
    pthread_join(thread, NULL);
}

static int
cmp_i64(const void *a, const void *b)
{
    int64_t  x = *(const int64_t *) a, y = *(const int64_t *) b;

    return (x > y) - (x < y);
}

/* Against the real clock, with a reaper that sleeps until the next bucket:
 * timers fire after their deadline and within a few ms of it, including
 * ones added (earlier) while the reaper sleeps on a later one. */
static void
test_timerwheel_deadline_accuracy(void **state)
{
    enum { N = 100 };
    static tt_t    t[N];
    int64_t        late_us[N], start_ms;
    reaper_arg_t   arg = { .tw = samsa_timerwheel_new(NULL) };
    pthread_t      thread;
    int            i;

    (void) state;
    pthread_create(&thread, NULL, reaper_main, &arg);
    usleep(20000);
    start_ms = samsa_now_ms();
    for (i = N - 1; i >= 0; i--) {                  /* latest first */
        samsa_timer_init(&t[i].timer, tt_on_fire_real);
        atomic_init(&t[i].fired, 0);
        samsa_timerwheel_add(arg.tw, &t[i].timer, start_ms + 20 + i * 5);
    }
    while (samsa_timerwheel_size(arg.tw) > 0) {
        usleep(10000);
    }
    usleep(10000);
    reaper_stop(&arg, thread);
    for (i = 0; i < N; i++) {
        assert_int_equal(atomic_load(&t[i].fired), 1);
        late_us[i] = (t[i].fired_at - t[i].timer.deadline_ms * 1000000)
                     / 1000;
        assert_true(late_us[i] >= 0);
    }
    qsort(late_us, N, sizeof(late_us[0]), cmp_i64);
    printf("# timerwheel lateness: p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
           (double) late_us[N / 2] / 1000, (double) late_us[N * 99 / 100]
           / 1000, (double) late_us[N - 1] / 1000);
    assert_true(late_us[N / 2] < 5000);             /* median within 5 ms */
    assert_true(late_us[N - 1] < 50000);            /* no outlier > 50 ms */
    samsa_timerwheel_free(arg.tw);
}

/* advance returns as soon as another thread calls wakeup. */
static void
test_timerwheel_wakeup(void **state)
{
    reaper_arg_t  arg = { .tw = samsa_timerwheel_new(NULL) };
    pthread_t     thread;
    int64_t       t0 = samsa_now_ms();

    (void) state;
    atomic_store(&arg.stop, 1);                     /* one advance only */
    pthread_create(&thread, NULL, reaper_main, &arg);
    usleep(30000);
    samsa_timerwheel_wakeup(arg.tw);
    pthread_join(thread, NULL);
    assert_true(samsa_now_ms() - t0 < 1000);
    samsa_timerwheel_free(arg.tw);
}

/* Adders arm timers due within 0-4 ms while cancellers cancel them from
 * other threads and a reaper fires them: every timer ends either cancelled
 * (cancel returned true) or fired, never both, never neither. */
enum { CONC_THREADS = 2, CONC_PER_THREAD = 20000 };

typedef struct conc {
    samsa_timerwheel_t  *tw;
    tt_t                *t;
    size_t               base;
} conc_t;

static void *
conc_adder(void *varg)
{
    conc_t  *c = varg;
    size_t   i;
    tt_t    *x;

    for (i = c->base; i < c->base + CONC_PER_THREAD; i++) {
        x = &c->t[i];
        samsa_timerwheel_add(c->tw, &x->timer,
                             samsa_now_ms() + (int64_t) (i % 5));
        atomic_store_explicit(&x->added, 1, memory_order_release);
        if (i % 4 == 0 && samsa_timerwheel_cancel(c->tw, &x->timer)) {
            atomic_fetch_add(&x->cancelled, 1);     /* own cancel */
        }
    }
    return NULL;
}

static void *
conc_canceller(void *varg)
{
    conc_t  *c = varg;
    size_t   i;
    tt_t    *x;

    for (i = c->base; i < c->base + CONC_PER_THREAD; i++) {
        x = &c->t[i];
        while (!atomic_load_explicit(&x->added, memory_order_acquire)) {
            sched_yield();
        }
        /* Some cancels aim at the moment the reaper fires the timer. */
        while (i % 6 == 1 && samsa_now_ms() < x->timer.deadline_ms) {
            sched_yield();
        }
        if (i % 2 == 1 && samsa_timerwheel_cancel(c->tw, &x->timer)) {
            atomic_fetch_add(&x->cancelled, 1);
        }
    }
    return NULL;
}

static void
test_timerwheel_concurrent_add_cancel(void **state)
{
    size_t         n = CONC_THREADS * CONC_PER_THREAD, i, ncancelled = 0;
    tt_t          *t = samsa_calloc(n, sizeof(*t));
    reaper_arg_t   arg = { .tw = samsa_timerwheel_new(NULL) };
    conc_t         c[CONC_THREADS];
    pthread_t      reaper, adders[CONC_THREADS], cancellers[CONC_THREADS];
    int            k;

    (void) state;
    for (i = 0; i < n; i++) {
        samsa_timer_init(&t[i].timer, tt_on_fire_real);
    }
    pthread_create(&reaper, NULL, reaper_main, &arg);
    for (k = 0; k < CONC_THREADS; k++) {
        c[k] = (conc_t) { arg.tw, t, (size_t) k * CONC_PER_THREAD };
        pthread_create(&adders[k], NULL, conc_adder, &c[k]);
        pthread_create(&cancellers[k], NULL, conc_canceller, &c[k]);
    }
    for (k = 0; k < CONC_THREADS; k++) {
        pthread_join(adders[k], NULL);
        pthread_join(cancellers[k], NULL);
    }
    while (samsa_timerwheel_size(arg.tw) > 0) {
        usleep(5000);
    }
    reaper_stop(&arg, reaper);
    for (i = 0; i < n; i++) {
        assert_int_equal(atomic_load(&t[i].fired)
                         + atomic_load(&t[i].cancelled), 1);
        ncancelled += (size_t) atomic_load(&t[i].cancelled);
    }
    printf("# timerwheel concurrent: %zu timers, %zu cancelled, %zu fired\n",
           n, ncancelled, n - ncancelled);
    samsa_timerwheel_free(arg.tw);
    samsa_free(t);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_timerwheel_fires_in_deadline_order),
        cmocka_unit_test(test_timerwheel_jump_keeps_order),
        cmocka_unit_test(test_timerwheel_far_deadlines_cascade),
        cmocka_unit_test(test_timerwheel_random_jumps_fire_on_time),
        cmocka_unit_test(test_timerwheel_cancel),
        cmocka_unit_test(test_timerwheel_past_deadline_and_expire_all),
        cmocka_unit_test(test_timerwheel_callback_rearms),
        cmocka_unit_test(test_timerwheel_many_timers),
        cmocka_unit_test(test_timerwheel_deadline_accuracy),
        cmocka_unit_test(test_timerwheel_wakeup),
        cmocka_unit_test(test_timerwheel_concurrent_add_cancel),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
