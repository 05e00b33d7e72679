/* Unit tests for net/server/connquota.c: per-IP limits, overrides, the total,
 * the broker-wide creation rate and the per-IP creation rate quota, the
 * listeners' own limits and limits changed at run time. */
#include "unit.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "net/server/connquota.h"
#include "util/time.h"

static _Atomic bool  running = true;
static int64_t       delay;

static void
test_connquota_per_ip_and_overrides(void **state)
{
    samsa_connquota_override_t  ov[] = { { "10.0.0.9", 3 }, { "10.0.0.8", 0 } };
    samsa_connquota_t           q;

    (void) state;
    samsa_connquota_init(&q, 100, 2, ov, 2, 1);
    assert_int_equal(samsa_connquota_take(&q, 0, "127.0.0.1", &running, 10, &delay), 0);
    assert_int_equal(samsa_connquota_take(&q, 0, "127.0.0.1", &running, 10, &delay), 0);
    assert_int_equal(samsa_connquota_take(&q, 0, "127.0.0.1", &running, 10, &delay),
                     SAMSA_ERR__FULL);
    assert_int_equal(samsa_connquota_take(&q, 0, "127.0.0.2", &running, 10, &delay), 0);
    assert_int_equal(samsa_connquota_take(&q, 0, "10.0.0.9", &running, 10, &delay), 0);
    assert_int_equal(samsa_connquota_take(&q, 0, "10.0.0.9", &running, 10, &delay), 0);
    assert_int_equal(samsa_connquota_take(&q, 0, "10.0.0.9", &running, 10, &delay), 0);
    assert_int_equal(samsa_connquota_take(&q, 0, "10.0.0.9", &running, 10, &delay),
                     SAMSA_ERR__FULL);
    assert_int_equal(samsa_connquota_take(&q, 0, "10.0.0.8", &running, 10, &delay),
                     SAMSA_ERR__FULL);
    assert_int_equal(samsa_connquota_total(&q), 6);
    samsa_connquota_give(&q, 0, "127.0.0.1");
    assert_int_equal(samsa_connquota_take(&q, 0, "127.0.0.1", &running, 10, &delay), 0);
    samsa_connquota_give(&q, 0, "127.0.0.1");
    samsa_connquota_give(&q, 0, "127.0.0.1");
    samsa_connquota_give(&q, 0, "127.0.0.2");
    assert_int_equal(samsa_connquota_total(&q), 3);
    assert_false(samsa_connquota_over(&q));
    samsa_connquota_fini(&q);
}

typedef struct giver {
    samsa_connquota_t  *q;
} giver_t;

static void *
giver_main(void *arg)
{
    giver_t  *g = arg;

    usleep(100000);
    samsa_connquota_give(g->q, 0, "127.0.0.1");
    return NULL;
}

/* At max.connections the taker waits until a slot is given back, and gives
 * up when told to stop. */
static void
test_connquota_total_waits_for_a_slot(void **state)
{
    samsa_connquota_t  q;
    giver_t            g = { &q };
    pthread_t          t;
    _Atomic bool       stopped = false;

    (void) state;
    samsa_connquota_init(&q, 1, 10, NULL, 0, 1);
    assert_int_equal(samsa_connquota_take(&q, 0, "127.0.0.1", &running, 10, &delay), 0);
    pthread_create(&t, NULL, giver_main, &g);
    assert_int_equal(samsa_connquota_take(&q, 0, "127.0.0.1", &running, 10, &delay), 0);
    pthread_join(t, NULL);
    assert_int_equal(samsa_connquota_take(&q, 0, "127.0.0.1", &stopped, 10, &delay),
                     SAMSA_ERR__SHUTDOWN);
    samsa_connquota_give(&q, 0, "127.0.0.1");
    samsa_connquota_fini(&q);
}

/* max.connection.creation.rate=5 over 2 windows of 1 s: a young rate
 * divides by one window, so 5 connections pass at once and the 6th waits
 * Kafka's (6 - 5) / 5 * 1000 = 200 ms (never refused), which the
 * listener's accept throttle time records. */
static void
test_connquota_creation_rate_delays(void **state)
{
    samsa_connquota_t  q;
    int64_t            t0, waited;
    uint64_t           throttle_ms, throttles;
    int                i;

    (void) state;
    samsa_connquota_init(&q, 100, 100, NULL, 0, 1);
    samsa_connquota_set_rates(&q, 5, 2, 1000, NULL, NULL);
    t0 = samsa_now_ms();
    for (i = 0; i < 5; i++) {
        assert_int_equal(samsa_connquota_take(&q, 0, "127.0.0.1", &running, 10,
                                              &delay), 0);
    }
    assert_true(samsa_now_ms() - t0 < 150);
    assert_int_equal(atomic_load(&q.rate_waits), 0);
    assert_int_equal(samsa_connquota_take(&q, 0, "127.0.0.1", &running, 10,
                                          &delay), 0);
    waited = samsa_now_ms() - t0;
    assert_true(waited >= 190);
    assert_true(waited < 1000);
    assert_int_equal(atomic_load(&q.rate_waits), 1);
    /* the listener's connection-accept-throttle-time: the 200 ms given */
    samsa_connquota_listener_throttles(&q, 0, &throttle_ms, &throttles);
    assert_int_equal(throttles, 1);
    assert_in_range(throttle_ms, 190, 210);
    assert_int_equal(samsa_connquota_total(&q), 6);
    for (i = 0; i < 6; i++) {
        samsa_connquota_give(&q, 0, "127.0.0.1");
    }
    samsa_connquota_fini(&q);
}

static int32_t  ip_rate_now = 2;

static int32_t
test_ip_rate(void *ctx, const char *ip)
{
    (void) ctx;
    return strcmp(ip, "10.0.0.1") == 0 ? ip_rate_now : INT32_MAX;
}

/* connection_creation_rate=2 for 10.0.0.1 (2 windows of 1 s): two pass,
 * the third is refused with Kafka's (3 - 2) / 2 * 1000 = 500 ms close
 * delay and is not counted (the fourth is refused alike), another IP is
 * not limited, and lifting the quota lets the IP in at once. */
static void
test_connquota_ip_creation_rate(void **state)
{
    samsa_connquota_t  q;
    int                i;

    (void) state;
    samsa_connquota_init(&q, 100, 100, NULL, 0, 1);
    samsa_connquota_set_rates(&q, INT32_MAX, 2, 1000, test_ip_rate, NULL);
    ip_rate_now = 2;
    for (i = 0; i < 2; i++) {
        assert_int_equal(samsa_connquota_take(&q, 0, "10.0.0.1", &running, 10,
                                              &delay), 0);
        assert_int_equal(delay, 0);
    }
    for (i = 0; i < 2; i++) {
        assert_int_equal(samsa_connquota_take(&q, 0, "10.0.0.1", &running, 10,
                                              &delay), SAMSA_ERR__FULL);
        /* 500 ms at the instant of the first take; the rate's span moves
         * with the clock, so a slow (sanitizer, loaded) run sees a little
         * less or more */
        assert_in_range(delay, 400, 600);
    }
    assert_int_equal(atomic_load(&q.ip_throttled), 2);
    for (i = 0; i < 5; i++) {
        assert_int_equal(samsa_connquota_take(&q, 0, "10.0.0.2", &running, 10,
                                              &delay), 0);
    }
    assert_int_equal(samsa_connquota_total(&q), 7);
    ip_rate_now = INT32_MAX;
    assert_int_equal(samsa_connquota_take(&q, 0, "10.0.0.1", &running, 10,
                                          &delay), 0);
    assert_int_equal(delay, 0);
    for (i = 0; i < 3; i++) {
        samsa_connquota_give(&q, 0, "10.0.0.1");
    }
    for (i = 0; i < 5; i++) {
        samsa_connquota_give(&q, 0, "10.0.0.2");
    }
    assert_int_equal(samsa_connquota_total(&q), 0);
    samsa_connquota_fini(&q);
}

typedef struct taker {
    samsa_connquota_t  *q;
    size_t              listener;
    _Atomic bool        done;
    samsa_err_t         err;
} taker_t;

static void *
taker_main(void *arg)
{
    taker_t  *t = arg;
    int64_t   d;

    t->err = samsa_connquota_take(t->q, t->listener, "127.0.0.1", &running,
                                  10, &d);
    atomic_store(&t->done, true);
    return NULL;
}

static bool
wait_done(taker_t *t, int ms)
{
    for (; ms > 0 && !atomic_load(&t->done); ms -= 5) {
        usleep(5000);
    }
    return atomic_load(&t->done);
}

/* Listener 0 limited to 2 (listener.name.x.max.connections): its third
 * connection waits while listener 1 still takes them; a give on listener 0
 * lets it in.  Then max.connections lowered at run time to the total makes
 * listener 1 wait too, until it is raised again. */
static void
test_connquota_listener_and_run_time_limits(void **state)
{
    samsa_connquota_t  q;
    int32_t            lmax[] = { 2, INT32_MAX }, lrate[] = { INT32_MAX,
                                                              INT32_MAX };
    taker_t            t = { &q, 0, false, SAMSA_ERR_NONE };
    taker_t            u = { &q, 1, false, SAMSA_ERR_NONE };
    pthread_t          th, uh;

    (void) state;
    samsa_connquota_init(&q, 100, 100, NULL, 0, 2);
    samsa_connquota_set_limits(&q, 100, 100, NULL, 0, INT32_MAX, lmax, lrate);
    assert_int_equal(samsa_connquota_take(&q, 0, "127.0.0.1", &running, 10, &delay), 0);
    assert_int_equal(samsa_connquota_take(&q, 0, "127.0.0.1", &running, 10, &delay), 0);
    pthread_create(&th, NULL, taker_main, &t);
    assert_false(wait_done(&t, 200));               /* listener 0 is full */
    assert_int_equal(samsa_connquota_take(&q, 1, "127.0.0.1", &running, 10, &delay), 0);
    samsa_connquota_give(&q, 0, "127.0.0.1");
    assert_true(wait_done(&t, 5000));
    pthread_join(th, NULL);
    assert_int_equal(t.err, SAMSA_ERR_NONE);
    assert_int_equal(samsa_connquota_total(&q), 3);

    /* run time: max.connections 3 (the total now), listener 0 unlimited */
    lmax[0] = INT32_MAX;
    samsa_connquota_set_limits(&q, 3, 100, NULL, 0, INT32_MAX, lmax, lrate);
    assert_int_equal(samsa_connquota_max_total(&q), 3);
    pthread_create(&uh, NULL, taker_main, &u);
    assert_false(wait_done(&u, 200));
    samsa_connquota_set_limits(&q, 4, 100, NULL, 0, INT32_MAX, lmax, lrate);
    assert_true(wait_done(&u, 5000));
    pthread_join(uh, NULL);
    assert_int_equal(u.err, SAMSA_ERR_NONE);
    /* lowering it under the total: over, nothing closed here */
    samsa_connquota_set_limits(&q, 2, 100, NULL, 0, INT32_MAX, lmax, lrate);
    assert_true(samsa_connquota_over(&q));
    /* max.connections.per.ip changed at run time: 127.0.0.1 has 4 */
    samsa_connquota_set_limits(&q, 100, 4, NULL, 0, INT32_MAX, lmax, lrate);
    assert_int_equal(samsa_connquota_take(&q, 1, "127.0.0.1", &running, 10, &delay),
                     SAMSA_ERR__FULL);
    assert_int_equal(samsa_connquota_take(&q, 1, "127.0.0.2", &running, 10, &delay), 0);
    samsa_connquota_give(&q, 1, "127.0.0.2");
    samsa_connquota_give(&q, 0, "127.0.0.1");
    samsa_connquota_give(&q, 0, "127.0.0.1");
    samsa_connquota_give(&q, 1, "127.0.0.1");
    samsa_connquota_give(&q, 1, "127.0.0.1");
    assert_int_equal(samsa_connquota_total(&q), 0);
    samsa_connquota_fini(&q);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_connquota_per_ip_and_overrides),
        cmocka_unit_test(test_connquota_total_waits_for_a_slot),
        cmocka_unit_test(test_connquota_creation_rate_delays),
        cmocka_unit_test(test_connquota_ip_creation_rate),
        cmocka_unit_test(test_connquota_listener_and_run_time_limits),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
