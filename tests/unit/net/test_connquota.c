/* Unit tests for net/connquota.c: per-IP limits, overrides, the total,
 * the broker-wide creation rate and the per-IP creation rate quota. */
#include "unit.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "net/connquota.h"
#include "util/time.h"

static _Atomic bool  running = true;
static int64_t       delay;

static void
test_connquota_per_ip_and_overrides(void **state)
{
    samsa_connquota_override_t  ov[] = { { "10.0.0.9", 3 }, { "10.0.0.8", 0 } };
    samsa_connquota_t           q;

    (void) state;
    samsa_connquota_init(&q, 100, 2, ov, 2);
    assert_int_equal(samsa_connquota_take(&q, "127.0.0.1", &running, 10, &delay), 0);
    assert_int_equal(samsa_connquota_take(&q, "127.0.0.1", &running, 10, &delay), 0);
    assert_int_equal(samsa_connquota_take(&q, "127.0.0.1", &running, 10, &delay),
                     SAMSA_ERR__FULL);
    assert_int_equal(samsa_connquota_take(&q, "127.0.0.2", &running, 10, &delay), 0);
    assert_int_equal(samsa_connquota_take(&q, "10.0.0.9", &running, 10, &delay), 0);
    assert_int_equal(samsa_connquota_take(&q, "10.0.0.9", &running, 10, &delay), 0);
    assert_int_equal(samsa_connquota_take(&q, "10.0.0.9", &running, 10, &delay), 0);
    assert_int_equal(samsa_connquota_take(&q, "10.0.0.9", &running, 10, &delay),
                     SAMSA_ERR__FULL);
    assert_int_equal(samsa_connquota_take(&q, "10.0.0.8", &running, 10, &delay),
                     SAMSA_ERR__FULL);
    assert_int_equal(samsa_connquota_total(&q), 6);
    samsa_connquota_give(&q, "127.0.0.1");
    assert_int_equal(samsa_connquota_take(&q, "127.0.0.1", &running, 10, &delay), 0);
    samsa_connquota_give(&q, "127.0.0.1");
    samsa_connquota_give(&q, "127.0.0.1");
    samsa_connquota_give(&q, "127.0.0.2");
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
    samsa_connquota_give(g->q, "127.0.0.1");
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
    samsa_connquota_init(&q, 1, 10, NULL, 0);
    assert_int_equal(samsa_connquota_take(&q, "127.0.0.1", &running, 10, &delay), 0);
    pthread_create(&t, NULL, giver_main, &g);
    assert_int_equal(samsa_connquota_take(&q, "127.0.0.1", &running, 10, &delay), 0);
    pthread_join(t, NULL);
    assert_int_equal(samsa_connquota_take(&q, "127.0.0.1", &stopped, 10, &delay),
                     SAMSA_ERR__SHUTDOWN);
    samsa_connquota_give(&q, "127.0.0.1");
    samsa_connquota_fini(&q);
}

/* max.connection.creation.rate=5 over 2 windows of 1 s: a young rate
 * divides by one window, so 5 connections pass at once and the 6th waits
 * Kafka's (6 - 5) / 5 * 1000 = 200 ms (never refused). */
static void
test_connquota_creation_rate_delays(void **state)
{
    samsa_connquota_t  q;
    int64_t            t0, waited;
    int                i;

    (void) state;
    samsa_connquota_init(&q, 100, 100, NULL, 0);
    samsa_connquota_set_rates(&q, 5, 2, 1000, NULL, NULL);
    t0 = samsa_now_ms();
    for (i = 0; i < 5; i++) {
        assert_int_equal(samsa_connquota_take(&q, "127.0.0.1", &running, 10,
                                              &delay), 0);
    }
    assert_true(samsa_now_ms() - t0 < 150);
    assert_int_equal(atomic_load(&q.rate_waits), 0);
    assert_int_equal(samsa_connquota_take(&q, "127.0.0.1", &running, 10,
                                          &delay), 0);
    waited = samsa_now_ms() - t0;
    assert_true(waited >= 190);
    assert_true(waited < 1000);
    assert_int_equal(atomic_load(&q.rate_waits), 1);
    assert_int_equal(samsa_connquota_total(&q), 6);
    for (i = 0; i < 6; i++) {
        samsa_connquota_give(&q, "127.0.0.1");
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
    samsa_connquota_init(&q, 100, 100, NULL, 0);
    samsa_connquota_set_rates(&q, INT32_MAX, 2, 1000, test_ip_rate, NULL);
    ip_rate_now = 2;
    for (i = 0; i < 2; i++) {
        assert_int_equal(samsa_connquota_take(&q, "10.0.0.1", &running, 10,
                                              &delay), 0);
        assert_int_equal(delay, 0);
    }
    for (i = 0; i < 2; i++) {
        assert_int_equal(samsa_connquota_take(&q, "10.0.0.1", &running, 10,
                                              &delay), SAMSA_ERR__FULL);
        assert_in_range(delay, 495, 505);
    }
    assert_int_equal(atomic_load(&q.ip_throttled), 2);
    for (i = 0; i < 5; i++) {
        assert_int_equal(samsa_connquota_take(&q, "10.0.0.2", &running, 10,
                                              &delay), 0);
    }
    assert_int_equal(samsa_connquota_total(&q), 7);
    ip_rate_now = INT32_MAX;
    assert_int_equal(samsa_connquota_take(&q, "10.0.0.1", &running, 10,
                                          &delay), 0);
    assert_int_equal(delay, 0);
    for (i = 0; i < 3; i++) {
        samsa_connquota_give(&q, "10.0.0.1");
    }
    for (i = 0; i < 5; i++) {
        samsa_connquota_give(&q, "10.0.0.2");
    }
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
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
