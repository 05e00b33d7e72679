/* Unit tests for util/qrate.c: Kafka's sampled rate and throttle time,
 * with the expected values worked out by hand from the formulas. */
#include "unit.h"

#include <math.h>

#include "util/qrate.h"

/* A young rate divides by at least (samples - 1) windows. */
static void
test_qrate_young_span(void **state)
{
    samsa_qrate_t  r;

    (void) state;
    samsa_qrate_init(&r, 11, 1000);
    samsa_qrate_record(&r, 1000.0, 0);
    assert_int_equal(samsa_qrate_window_span_ms(&r, 0), 10000);
    assert_true(fabs(samsa_qrate_measure(&r, 0) - 100.0) < 1e-9);
    /* 2.5 s later: 2 full windows elapsed, 8 more assumed */
    assert_int_equal(samsa_qrate_window_span_ms(&r, 2500), 10500);
}

/* 100 bytes every 100 ms for 20 s: the last 11 windows (9 s .. 19.9 s)
 * hold 11000 bytes over 10.9 s. */
static void
test_qrate_steady(void **state)
{
    samsa_qrate_t  r;
    int64_t        t;

    (void) state;
    samsa_qrate_init(&r, 11, 1000);
    for (t = 0; t < 20000; t += 100) {
        samsa_qrate_record(&r, 100.0, t);
    }
    assert_int_equal(samsa_qrate_window_span_ms(&r, 19900), 10900);
    assert_true(fabs(samsa_qrate_measure(&r, 19900) - 11000.0 / 10.9)
                < 1e-6);
}

/* Windows older than samples * window are dropped before measuring. */
static void
test_qrate_purge(void **state)
{
    samsa_qrate_t  r;

    (void) state;
    samsa_qrate_init(&r, 11, 1000);
    samsa_qrate_record(&r, 1000.0, 0);
    assert_true(samsa_qrate_measure(&r, 10999) > 0.0);
    assert_true(samsa_qrate_measure(&r, 11000) == 0.0);
}

/* (rate - bound) / bound * span, rounded; capped only when asked. */
static void
test_qrate_throttle(void **state)
{
    samsa_qrate_t  r;

    (void) state;
    samsa_qrate_init(&r, 11, 1000);
    /* 400 bytes over a 10 s span is 40/s: within 50/s */
    assert_int_equal(samsa_qrate_record_throttle(&r, 400.0, 50.0, 0, 0), 0);
    /* 1000 bytes: 100/s, twice the bound: (100-50)/50 * 10000 ms */
    assert_int_equal(samsa_qrate_record_throttle(&r, 600.0, 50.0, 0, 0),
                     10000);
    samsa_qrate_init(&r, 11, 1000);
    assert_int_equal(samsa_qrate_record_throttle(&r, 1000.0, 50.0, 1000, 0),
                     1000);
    /* 1000 bytes at 0 is exactly 100/s (not over); 100 more at 0.5 s:
     * 1100 / 10.5 s = 104.76/s: (104.76 - 100) / 100 * 10500 = 500 ms */
    samsa_qrate_init(&r, 11, 1000);
    assert_int_equal(samsa_qrate_record_throttle(&r, 1000.0, 100.0, 0, 0),
                     0);
    assert_int_equal(samsa_qrate_record_throttle(&r, 100.0, 100.0, 0, 500),
                     500);
    /* no bound: never throttled */
    assert_int_equal(samsa_qrate_record_throttle(&r, 1e9, 0.0, 0, 600), 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_qrate_young_span),
        cmocka_unit_test(test_qrate_steady),
        cmocka_unit_test(test_qrate_purge),
        cmocka_unit_test(test_qrate_throttle),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
