/*
 * tests/unit/client/producer/test_bufpool.c - buffer.memory: free-list reuse,
 * blocking until memory comes back, max.block.ms timeouts, FIFO fairness
 * between large and small requests, close.
 */
#include "unit.h"

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "client/producer/bufpool.h"
#include "util/time.h"

static void
test_bufpool_alloc_dealloc_reuse(void **state)
{
    samsa_bufpool_t  *pool = samsa_bufpool_new(1024, 256);
    uint8_t          *a, *b, *c;

    (void) state;
    assert_int_equal(samsa_bufpool_alloc(pool, 256, 0, &a), SAMSA_ERR_NONE);
    assert_int_equal(samsa_bufpool_available(pool), 768);
    assert_int_equal(samsa_bufpool_alloc(pool, 300, 0, &b), SAMSA_ERR_NONE);
    assert_int_equal(samsa_bufpool_available(pool), 468);
    samsa_bufpool_dealloc(pool, a, 256);            /* to the free list */
    assert_int_equal(samsa_bufpool_available(pool), 724);
    assert_int_equal(samsa_bufpool_unallocated(pool), 468);
    assert_int_equal(samsa_bufpool_alloc(pool, 256, 0, &c), SAMSA_ERR_NONE);
    assert_ptr_equal(c, a);                         /* reused */
    samsa_bufpool_dealloc(pool, b, 300);            /* not poolable: freed */
    assert_int_equal(samsa_bufpool_unallocated(pool), 768);
    samsa_bufpool_dealloc(pool, c, 256);
    /* A non-poolable request larger than what is unallocated frees the
     * free list to make room. */
    assert_int_equal(samsa_bufpool_alloc(pool, 1024, 0, &a), SAMSA_ERR_NONE);
    assert_int_equal(samsa_bufpool_available(pool), 0);
    samsa_bufpool_dealloc(pool, a, 1024);
    assert_int_equal(samsa_bufpool_alloc(pool, 1025, 0, &a),
                     SAMSA_ERR_MESSAGE_TOO_LARGE);
    assert_null(a);
    samsa_bufpool_free(pool);
}

static void
test_bufpool_timeout_is_prompt(void **state)
{
    samsa_bufpool_t  *pool = samsa_bufpool_new(1024, 256);
    uint8_t          *all, *b;
    int64_t           t0, ms;

    (void) state;
    assert_int_equal(samsa_bufpool_alloc(pool, 1024, 0, &all),
                     SAMSA_ERR_NONE);
    t0 = samsa_now_ms();
    assert_int_equal(samsa_bufpool_alloc(pool, 256, 100, &b),
                     SAMSA_ERR__TIMED_OUT);
    ms = samsa_now_ms() - t0;
    assert_true(ms >= 95 && ms < 1000);
    assert_null(b);
    assert_int_equal(samsa_bufpool_waiters(pool), 0);
    assert_true(samsa_bufpool_wait_ns(pool) >= 90 * 1000000LL);
    samsa_bufpool_dealloc(pool, all, 1024);
    assert_int_equal(samsa_bufpool_available(pool), 1024);
    samsa_bufpool_free(pool);
}

typedef struct waiter_arg {
    samsa_bufpool_t  *pool;
    size_t            size;
    int64_t           max_block_ms;
    samsa_err_t       err;
    uint8_t          *buf;
    _Atomic int      *order;
    int               done_at;
} waiter_arg_t;

static void *
waiter_main(void *p)
{
    waiter_arg_t  *w = p;

    w->err = samsa_bufpool_alloc(w->pool, w->size, w->max_block_ms, &w->buf);
    w->done_at = atomic_fetch_add(w->order, 1);
    return NULL;
}

static void
wait_waiters(samsa_bufpool_t *pool, int n)
{
    int  i;

    for (i = 0; i < 5000 && samsa_bufpool_waiters(pool) != n; i++) {
        usleep(1000);
    }
    assert_int_equal(samsa_bufpool_waiters(pool), n);
}

static void
test_bufpool_blocks_until_dealloc(void **state)
{
    samsa_bufpool_t  *pool = samsa_bufpool_new(512, 256);
    _Atomic int       order = 0;
    waiter_arg_t      w = { pool, 256, 10000, SAMSA_ERR__STATE, NULL, &order,
                            -1 };
    uint8_t          *a, *b;
    pthread_t         th;

    (void) state;
    assert_int_equal(samsa_bufpool_alloc(pool, 256, 0, &a), SAMSA_ERR_NONE);
    assert_int_equal(samsa_bufpool_alloc(pool, 256, 0, &b), SAMSA_ERR_NONE);
    pthread_create(&th, NULL, waiter_main, &w);
    wait_waiters(pool, 1);
    assert_int_equal(atomic_load(&order), 0);
    samsa_bufpool_dealloc(pool, a, 256);
    pthread_join(th, NULL);
    assert_int_equal(w.err, SAMSA_ERR_NONE);
    assert_ptr_equal(w.buf, a);
    samsa_bufpool_dealloc(pool, w.buf, 256);
    samsa_bufpool_dealloc(pool, b, 256);
    samsa_bufpool_free(pool);
}

/* The oldest waiter is woken once buffer.memory/16 is free, not at every
 * freed buffer; but with less free for 10 ms it takes what there is (so
 * memory held by batches that never complete cannot keep it waiting until
 * max.block.ms). */
static void
test_bufpool_wakes_at_threshold_or_after_patience(void **state)
{
    samsa_bufpool_t  *pool = samsa_bufpool_new(64 * 256, 256);
    _Atomic int       order = 0;
    waiter_arg_t      w = { pool, 256, 10000, SAMSA_ERR__STATE, NULL, &order,
                            -1 };
    uint8_t          *bufs[64];
    pthread_t         th;
    int64_t           t0;
    int               i;

    (void) state;
    for (i = 0; i < 64; i++) {
        assert_int_equal(samsa_bufpool_alloc(pool, 256, 0, &bufs[i]),
                         SAMSA_ERR_NONE);
    }
    /* one buffer free, below the threshold (4 buffers): the waiter still
     * gets it, after its patience, long before max.block.ms */
    pthread_create(&th, NULL, waiter_main, &w);
    wait_waiters(pool, 1);
    t0 = samsa_now_ms();
    samsa_bufpool_dealloc(pool, bufs[0], 256);
    pthread_join(th, NULL);
    assert_int_equal(w.err, SAMSA_ERR_NONE);
    assert_ptr_equal(w.buf, bufs[0]);
    assert_true(samsa_now_ms() - t0 < 5000);
    bufs[0] = w.buf;
    /* the threshold freed at once: woken (and served) too */
    w.err = SAMSA_ERR__STATE;
    w.buf = NULL;
    pthread_create(&th, NULL, waiter_main, &w);
    wait_waiters(pool, 1);
    for (i = 0; i < 4; i++) {
        samsa_bufpool_dealloc(pool, bufs[i], 256);
    }
    pthread_join(th, NULL);
    assert_int_equal(w.err, SAMSA_ERR_NONE);
    assert_non_null(w.buf);
    samsa_bufpool_dealloc(pool, w.buf, 256);
    for (i = 4; i < 64; i++) {
        samsa_bufpool_dealloc(pool, bufs[i], 256);
    }
    assert_int_equal(samsa_bufpool_available(pool), 64 * 256);
    samsa_bufpool_free(pool);
}

/* A large request queued first is served before a small one queued after
 * it, even though the small one could have been met earlier. */
static void
test_bufpool_fifo_mixed_sizes(void **state)
{
    samsa_bufpool_t  *pool = samsa_bufpool_new(1000, 100);
    _Atomic int       order = 0;
    waiter_arg_t      big = { pool, 500, 10000, SAMSA_ERR__STATE, NULL,
                              &order, -1 };
    waiter_arg_t      small = { pool, 100, 10000, SAMSA_ERR__STATE, NULL,
                                &order, -1 };
    uint8_t          *bufs[10];
    pthread_t         tb, ts;
    int               i;

    (void) state;
    for (i = 0; i < 10; i++) {
        assert_int_equal(samsa_bufpool_alloc(pool, 100, 0, &bufs[i]),
                         SAMSA_ERR_NONE);
    }
    pthread_create(&tb, NULL, waiter_main, &big);
    wait_waiters(pool, 1);
    pthread_create(&ts, NULL, waiter_main, &small);
    wait_waiters(pool, 2);
    for (i = 0; i < 4; i++) {
        samsa_bufpool_dealloc(pool, bufs[i], 100);
        usleep(20000);
        /* 100..400 bytes back: enough for small, not for big; small must
         * still wait behind big. */
        assert_int_equal(atomic_load(&order), 0);
    }
    samsa_bufpool_dealloc(pool, bufs[4], 100);      /* big is complete */
    pthread_join(tb, NULL);
    assert_int_equal(big.err, SAMSA_ERR_NONE);
    assert_int_equal(big.done_at, 0);
    samsa_bufpool_dealloc(pool, bufs[5], 100);
    pthread_join(ts, NULL);
    assert_int_equal(small.err, SAMSA_ERR_NONE);
    assert_int_equal(small.done_at, 1);
    samsa_bufpool_dealloc(pool, big.buf, 500);
    samsa_bufpool_dealloc(pool, small.buf, 100);
    for (i = 6; i < 10; i++) {
        samsa_bufpool_dealloc(pool, bufs[i], 100);
    }
    assert_int_equal(samsa_bufpool_available(pool), 1000);
    samsa_bufpool_free(pool);
}

/* A waiter that times out gives back what it had collected and lets the
 * next waiter have it. */
static void
test_bufpool_timeout_returns_partial(void **state)
{
    samsa_bufpool_t  *pool = samsa_bufpool_new(1000, 100);
    _Atomic int       order = 0;
    waiter_arg_t      big = { pool, 800, 150, SAMSA_ERR__STATE, NULL,
                              &order, -1 };
    waiter_arg_t      small = { pool, 200, 10000, SAMSA_ERR__STATE, NULL,
                                &order, -1 };
    uint8_t          *all;
    pthread_t         tb, ts;

    (void) state;
    assert_int_equal(samsa_bufpool_alloc(pool, 1000, 0, &all),
                     SAMSA_ERR_NONE);
    pthread_create(&tb, NULL, waiter_main, &big);
    wait_waiters(pool, 1);
    pthread_create(&ts, NULL, waiter_main, &small);
    wait_waiters(pool, 2);
    samsa_bufpool_dealloc(pool, all, 1000);  /* big takes 800: done */
    pthread_join(tb, NULL);
    pthread_join(ts, NULL);
    assert_int_equal(big.err, SAMSA_ERR_NONE);
    assert_int_equal(small.err, SAMSA_ERR_NONE);
    samsa_bufpool_dealloc(pool, big.buf, 800);
    samsa_bufpool_dealloc(pool, small.buf, 200);

    /* Now: big cannot be met in time; what it collected goes to small. */
    assert_int_equal(samsa_bufpool_alloc(pool, 900, 0, &all),
                     SAMSA_ERR_NONE);
    atomic_store(&order, 0);
    big.err = small.err = SAMSA_ERR__STATE;
    pthread_create(&tb, NULL, waiter_main, &big);
    wait_waiters(pool, 1);
    pthread_create(&ts, NULL, waiter_main, &small);
    wait_waiters(pool, 2);
    pthread_join(tb, NULL);
    assert_int_equal(big.err, SAMSA_ERR__TIMED_OUT);
    /* 100 unallocated: small (200) still waits. */
    assert_int_equal(atomic_load(&order), 1);
    samsa_bufpool_dealloc(pool, all, 900);
    pthread_join(ts, NULL);
    assert_int_equal(small.err, SAMSA_ERR_NONE);
    samsa_bufpool_dealloc(pool, small.buf, 200);
    assert_int_equal(samsa_bufpool_available(pool), 1000);
    samsa_bufpool_free(pool);
}

static void
test_bufpool_close_wakes_waiters(void **state)
{
    samsa_bufpool_t  *pool = samsa_bufpool_new(256, 256);
    _Atomic int       order = 0;
    waiter_arg_t      w = { pool, 256, 60000, SAMSA_ERR__STATE, NULL, &order,
                            -1 };
    uint8_t          *a;
    pthread_t         th;

    (void) state;
    assert_int_equal(samsa_bufpool_alloc(pool, 256, 0, &a), SAMSA_ERR_NONE);
    pthread_create(&th, NULL, waiter_main, &w);
    wait_waiters(pool, 1);
    samsa_bufpool_close(pool);
    pthread_join(th, NULL);
    assert_int_equal(w.err, SAMSA_ERR__SHUTDOWN);
    samsa_bufpool_dealloc(pool, a, 256);
    samsa_bufpool_free(pool);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_bufpool_alloc_dealloc_reuse),
        cmocka_unit_test(test_bufpool_timeout_is_prompt),
        cmocka_unit_test(test_bufpool_blocks_until_dealloc),
        cmocka_unit_test(test_bufpool_fifo_mixed_sizes),
        cmocka_unit_test(test_bufpool_timeout_returns_partial),
        cmocka_unit_test(test_bufpool_close_wakes_waiters),
        cmocka_unit_test(test_bufpool_wakes_at_threshold_or_after_patience),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
