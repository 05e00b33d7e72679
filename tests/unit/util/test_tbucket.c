/* Unit tests for util/tbucket.c: Kafka's TokenBucket and the controller
 * mutation throttle time, with the expected values worked out by hand. */
#include "unit.h"

#include <math.h>

#include "util/tbucket.h"

/* burst = samples * window (s) * rate; a new bucket is full. */
static void
test_tbucket_burst(void **state)
{
    samsa_tbucket_t  t;

    (void) state;
    assert_true(fabs(samsa_tbucket_burst(2.0, 11, 1000) - 22.0) < 1e-9);
    assert_true(fabs(samsa_tbucket_burst(5.0, 100, 1000) - 500.0) < 1e-9);
    assert_true(fabs(samsa_tbucket_burst(1.5, 2, 3000) - 9.0) < 1e-9);
    samsa_tbucket_init(&t);
    assert_true(fabs(samsa_tbucket_measure(&t, 2.0, 22.0, 5) - 22.0) < 1e-9);
}

/* Kafka's example (TokenBucket's javadoc): quota 5, 100 windows of 1 s,
 * burst 500; a burst of 560 leaves -60, which needs 12 s to refill to 0. */
static void
test_tbucket_kafka_example(void **state)
{
    samsa_tbucket_t  t;
    double           burst = samsa_tbucket_burst(5.0, 100, 1000);

    (void) state;
    samsa_tbucket_init(&t);
    samsa_tbucket_record(&t, 560.0, 5.0, burst, 1000);
    assert_true(fabs(samsa_tbucket_measure(&t, 5.0, burst, 1000) + 60.0)
                < 1e-9);
    assert_int_equal(samsa_tbucket_throttle_ms(t.tokens, 5.0), 12000);
    /* 2 s later 10 credits came back: -50, 10 s to go */
    assert_true(fabs(samsa_tbucket_measure(&t, 5.0, burst, 3000) + 50.0)
                < 1e-9);
    assert_int_equal(samsa_tbucket_throttle_ms(t.tokens, 5.0), 10000);
    /* 12 s after the burst: back to 0, not exhausted */
    assert_true(fabs(samsa_tbucket_measure(&t, 5.0, burst, 13000)) < 1e-9);
    assert_int_equal(samsa_tbucket_throttle_ms(t.tokens, 5.0), 0);
}

/* Refills continuously, never above the burst. */
static void
test_tbucket_refill_cap(void **state)
{
    samsa_tbucket_t  t;

    (void) state;
    samsa_tbucket_init(&t);
    samsa_tbucket_record(&t, 20.0, 2.0, 22.0, 0);
    assert_true(fabs(t.tokens - 2.0) < 1e-9);
    /* 250 ms at 2/s: half a credit */
    assert_true(fabs(samsa_tbucket_measure(&t, 2.0, 22.0, 250) - 2.5)
                < 1e-9);
    /* an hour later: full, not more */
    assert_true(fabs(samsa_tbucket_measure(&t, 2.0, 22.0, 3600000) - 22.0)
                < 1e-9);
    /* a negative value (never recorded by Kafka) still caps at burst */
    samsa_tbucket_record(&t, -5.0, 2.0, 22.0, 3600000);
    assert_true(fabs(t.tokens - 22.0) < 1e-9);
    /* a smaller quota (lowered by AlterClientQuotas) caps at its burst */
    assert_true(fabs(samsa_tbucket_measure(&t, 1.0, 11.0, 3600001) - 11.0)
                < 1e-9);
}

/* round(-tokens / rate * 1000), half up as Math.round; 0 when not
 * exhausted. */
static void
test_tbucket_throttle(void **state)
{
    (void) state;
    assert_int_equal(samsa_tbucket_throttle_ms(-1.0, 2.0), 500);
    assert_int_equal(samsa_tbucket_throttle_ms(-0.0015, 1.0), 2);
    assert_int_equal(samsa_tbucket_throttle_ms(-0.0014, 1.0), 1);
    assert_int_equal(samsa_tbucket_throttle_ms(-10.0, 3.0), 3333);
    assert_int_equal(samsa_tbucket_throttle_ms(0.0, 3.0), 0);
    assert_int_equal(samsa_tbucket_throttle_ms(4.0, 3.0), 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tbucket_burst),
        cmocka_unit_test(test_tbucket_kafka_example),
        cmocka_unit_test(test_tbucket_refill_cap),
        cmocka_unit_test(test_tbucket_throttle),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
