/* Unit tests for net/connquota.c: per-IP limits, overrides, the total. */
#include "unit.h"

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "net/connquota.h"

static _Atomic bool  running = true;

static void
test_connquota_per_ip_and_overrides(void **state)
{
    samsa_connquota_override_t  ov[] = { { "10.0.0.9", 3 }, { "10.0.0.8", 0 } };
    samsa_connquota_t           q;

    (void) state;
    samsa_connquota_init(&q, 100, 2, ov, 2);
    assert_int_equal(samsa_connquota_take(&q, "127.0.0.1", &running, 10), 0);
    assert_int_equal(samsa_connquota_take(&q, "127.0.0.1", &running, 10), 0);
    assert_int_equal(samsa_connquota_take(&q, "127.0.0.1", &running, 10),
                     SAMSA_ERR__FULL);
    assert_int_equal(samsa_connquota_take(&q, "127.0.0.2", &running, 10), 0);
    assert_int_equal(samsa_connquota_take(&q, "10.0.0.9", &running, 10), 0);
    assert_int_equal(samsa_connquota_take(&q, "10.0.0.9", &running, 10), 0);
    assert_int_equal(samsa_connquota_take(&q, "10.0.0.9", &running, 10), 0);
    assert_int_equal(samsa_connquota_take(&q, "10.0.0.9", &running, 10),
                     SAMSA_ERR__FULL);
    assert_int_equal(samsa_connquota_take(&q, "10.0.0.8", &running, 10),
                     SAMSA_ERR__FULL);
    assert_int_equal(samsa_connquota_total(&q), 6);
    samsa_connquota_give(&q, "127.0.0.1");
    assert_int_equal(samsa_connquota_take(&q, "127.0.0.1", &running, 10), 0);
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
    assert_int_equal(samsa_connquota_take(&q, "127.0.0.1", &running, 10), 0);
    pthread_create(&t, NULL, giver_main, &g);
    assert_int_equal(samsa_connquota_take(&q, "127.0.0.1", &running, 10), 0);
    pthread_join(t, NULL);
    assert_int_equal(samsa_connquota_take(&q, "127.0.0.1", &stopped, 10),
                     SAMSA_ERR__SHUTDOWN);
    samsa_connquota_give(&q, "127.0.0.1");
    samsa_connquota_fini(&q);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_connquota_per_ip_and_overrides),
        cmocka_unit_test(test_connquota_total_waits_for_a_slot),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
