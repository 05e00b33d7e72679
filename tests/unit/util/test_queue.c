/* Unit tests for util/queue.c: bounded, blocking put, timed take. */
#include "unit.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/queue.h"
#include "util/time.h"

static int  items[8];

static void
test_queue_fifo_and_offer_when_full(void **state)
{
    samsa_queue_t  q;

    (void) state;
    samsa_queue_init(&q, 2);
    assert_int_equal(samsa_queue_max_size(&q), 0);
    assert_true(samsa_queue_offer(&q, &items[0]));
    assert_true(samsa_queue_offer(&q, &items[1]));
    assert_false(samsa_queue_offer(&q, &items[2]));     /* full */
    assert_int_equal(samsa_queue_size(&q), 2);
    assert_ptr_equal(samsa_queue_take(&q, 0), &items[0]);
    assert_true(samsa_queue_offer(&q, &items[2]));      /* wraps */
    assert_ptr_equal(samsa_queue_take(&q, 0), &items[1]);
    assert_ptr_equal(samsa_queue_take(&q, 0), &items[2]);
    assert_null(samsa_queue_take(&q, 0));
    assert_int_equal(samsa_queue_max_size(&q), 2);  /* high-water mark */
    samsa_queue_fini(&q);
}

static void
test_queue_take_times_out(void **state)
{
    samsa_queue_t  q;
    int64_t        t0, waited_ms;

    (void) state;
    samsa_queue_init(&q, 1);
    t0 = samsa_now_ns();
    assert_null(samsa_queue_take(&q, 100));
    waited_ms = (samsa_now_ns() - t0) / 1000000;
    assert_true(waited_ms >= 95);
    assert_true(waited_ms < 2000);
    samsa_queue_fini(&q);
}

typedef struct putter {
    samsa_queue_t  *q;
    atomic_int      done;
} putter_t;

static void *
putter_main(void *arg)
{
    putter_t  *p = arg;

    samsa_queue_put(p->q, &items[1]);      /* blocks: the queue is full */
    atomic_store(&p->done, 1);
    return NULL;
}

/* put blocks while the queue is full and completes once a take makes room:
 * the back pressure of the request queue. */
static void
test_queue_put_blocks_until_room(void **state)
{
    samsa_queue_t  q;
    putter_t       p;
    pthread_t      t;

    (void) state;
    samsa_queue_init(&q, 1);
    samsa_queue_put(&q, &items[0]);
    p.q = &q;
    atomic_init(&p.done, 0);
    pthread_create(&t, NULL, putter_main, &p);
    usleep(100000);
    assert_int_equal(atomic_load(&p.done), 0);           /* still blocked */
    assert_ptr_equal(samsa_queue_take(&q, 0), &items[0]);
    assert_ptr_equal(samsa_queue_take(&q, 5000), &items[1]);
    pthread_join(t, NULL);
    assert_int_equal(atomic_load(&p.done), 1);
    samsa_queue_fini(&q);
}

/* A take waiting with a timeout is woken by a put. */
static void *
late_put_main(void *arg)
{
    usleep(50000);
    samsa_queue_put(arg, &items[3]);
    return NULL;
}

static void
test_queue_take_woken_by_put(void **state)
{
    samsa_queue_t  q;
    pthread_t      t;

    (void) state;
    samsa_queue_init(&q, 4);
    pthread_create(&t, NULL, late_put_main, &q);
    assert_ptr_equal(samsa_queue_take(&q, 5000), &items[3]);
    pthread_join(t, NULL);
    samsa_queue_fini(&q);
}

/* Four producers and four consumers through a queue of 8: every item
 * comes out exactly once (the semaphore's count and the ring agree), with
 * timed and untimed takes and blocking puts mixed. */
#define MPMC_THREADS  4
#define MPMC_ITEMS    20000

typedef struct mpmc {
    samsa_queue_t    q;
    int              vals[MPMC_THREADS * MPMC_ITEMS];
    _Atomic int      seen[MPMC_THREADS * MPMC_ITEMS];
    _Atomic int      taken;
    _Atomic int      next_producer;
} mpmc_t;

static void *
mpmc_producer(void *arg)
{
    mpmc_t  *m = arg;
    int      id = atomic_fetch_add(&m->next_producer, 1);
    int      i;

    for (i = 0; i < MPMC_ITEMS; i++) {
        int  *v = &m->vals[id * MPMC_ITEMS + i];

        if ((i & 1) || !samsa_queue_offer(&m->q, v)) {
            samsa_queue_put(&m->q, v);
        }
    }
    return NULL;
}

static void *
mpmc_consumer(void *arg)
{
    mpmc_t  *m = arg;
    int     *v;

    while (atomic_load(&m->taken) < MPMC_THREADS * MPMC_ITEMS) {
        v = samsa_queue_take(&m->q, (atomic_load(&m->taken) & 1) ? 20 : 0);
        if (v != NULL) {
            atomic_fetch_add(&m->seen[*v], 1);
            atomic_fetch_add(&m->taken, 1);
        }
    }
    return NULL;
}

static void
test_queue_many_producers_and_consumers(void **state)
{
    mpmc_t     *m = calloc(1, sizeof(*m));
    pthread_t   t[2 * MPMC_THREADS];
    int         i;

    (void) state;
    samsa_queue_init(&m->q, 8);
    for (i = 0; i < MPMC_THREADS * MPMC_ITEMS; i++) {
        m->vals[i] = i;
    }
    for (i = 0; i < MPMC_THREADS; i++) {
        pthread_create(&t[i], NULL, mpmc_consumer, m);
        pthread_create(&t[MPMC_THREADS + i], NULL, mpmc_producer, m);
    }
    for (i = 0; i < 2 * MPMC_THREADS; i++) {
        pthread_join(t[i], NULL);
    }
    assert_int_equal(atomic_load(&m->taken), MPMC_THREADS * MPMC_ITEMS);
    for (i = 0; i < MPMC_THREADS * MPMC_ITEMS; i++) {
        assert_int_equal(atomic_load(&m->seen[i]), 1);
    }
    assert_int_equal(samsa_queue_size(&m->q), 0);
    assert_null(samsa_queue_take(&m->q, 0));
    assert_true(samsa_queue_max_size(&m->q) <= 8);
    samsa_queue_fini(&m->q);
    free(m);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_queue_many_producers_and_consumers),
        cmocka_unit_test(test_queue_fifo_and_offer_when_full),
        cmocka_unit_test(test_queue_take_times_out),
        cmocka_unit_test(test_queue_put_blocks_until_room),
        cmocka_unit_test(test_queue_take_woken_by_put),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
