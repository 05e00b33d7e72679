/* Unit tests for broker/pidmgr.c with a fake block source in place of the
 * controller: the 90% prefetch threshold (Kafka's PID_PREFETCH_THRESHOLD),
 * a cluster node that is not the active controller answering
 * COORDINATOR_LOAD_IN_PROGRESS until its pid-fetch thread has a block, the
 * prefetched block following the current one without a gap in service,
 * retries after failures, the first block fetched on registration, and the
 * active controller's synchronous local path. */
#include "unit.h"

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "broker/pidmgr.h"
#include "util/time.h"

#define BLOCK  1000

/* The fake controller: blocks 0, 1000, 2000, ... after fail_first
 * failures.  Called on pid-fetch (and a handler in local mode). */
typedef struct fake {
    atomic_int    calls;          /* successful fetches */
    atomic_int    tries;
    atomic_int    fail_first;
    atomic_llong  last_epoch;
    atomic_llong  next;
} fake_t;

static samsa_err_t
fake_fetch(void *ctx, int64_t broker_epoch, int64_t *first, int32_t *len)
{
    fake_t  *f = ctx;

    atomic_fetch_add(&f->tries, 1);
    atomic_store(&f->last_epoch, broker_epoch);
    if (atomic_load(&f->fail_first) > 0) {
        atomic_fetch_sub(&f->fail_first, 1);
        return SAMSA_ERR_NOT_CONTROLLER;
    }
    *first = atomic_fetch_add(&f->next, BLOCK);
    *len = BLOCK;
    atomic_fetch_add(&f->calls, 1);
    return SAMSA_ERR_NONE;
}

static samsa_pidmgr_t *
fake_pidmgr(fake_t *f, bool local)
{
    samsa_pidmgr_conf_t  conf;
    samsa_pidmgr_t      *pm = NULL;

    memset(&conf, 0, sizeof(conf));
    conf.node_id = 2;
    conf.fetch = fake_fetch;
    conf.fetch_ctx = f;
    conf.fetch_local = local;
    assert_int_equal(samsa_pidmgr_new(&conf, &pm), SAMSA_ERR_NONE);
    return pm;
}

/* samsa_pidmgr_next until it answers an id, within 5 s. */
static int64_t
next_wait(samsa_pidmgr_t *pm)
{
    int64_t      pid = -1, until = samsa_now_ms() + 5000;
    samsa_err_t  err;

    while ((err = samsa_pidmgr_next(pm, &pid)) != SAMSA_ERR_NONE) {
        assert_int_equal(err, SAMSA_ERR_COORDINATOR_LOAD_IN_PROGRESS);
        assert_true(samsa_now_ms() < until);
        usleep(5 * 1000);
    }
    return pid;
}

/* Wait (5 s at most) until f has answered n blocks. */
static void
calls_wait(fake_t *f, int n)
{
    int64_t  until = samsa_now_ms() + 5000;

    while (atomic_load(&f->calls) < n) {
        assert_true(samsa_now_ms() < until);
        usleep(2 * 1000);
    }
}

static void
test_pidmgr_prefetch_due(void **state)
{
    (void) state;
    assert_false(samsa_pidmgr_prefetch_due(0, 0, 1000));
    assert_false(samsa_pidmgr_prefetch_due(0, 899, 1000));
    assert_true(samsa_pidmgr_prefetch_due(0, 900, 1000));
    assert_true(samsa_pidmgr_prefetch_due(0, 1000, 1000));
    assert_false(samsa_pidmgr_prefetch_due(5000, 5899, 6000));
    assert_true(samsa_pidmgr_prefetch_due(5000, 5900, 6000));
    assert_false(samsa_pidmgr_prefetch_due(0, 0, 0));   /* no block */
    assert_false(samsa_pidmgr_prefetch_due(0, 8, 10));
    assert_true(samsa_pidmgr_prefetch_due(0, 9, 10));
}

/* Remote: the first call has no block (LOAD_IN_PROGRESS), the thread
 * fetches one; the second is fetched once 900 ids are out, and the
 * 1001st id comes from it at once. */
static void
test_pidmgr_remote_prefetch(void **state)
{
    fake_t           f = { 0 };
    samsa_pidmgr_t  *pm;
    int64_t          pid = -1, i;

    (void) state;
    pm = fake_pidmgr(&f, false);
    assert_int_equal(samsa_pidmgr_next(pm, &pid),
                     SAMSA_ERR_COORDINATOR_LOAD_IN_PROGRESS);
    assert_int_equal(next_wait(pm), 0);
    for (i = 1; i < 899; i++) {
        assert_int_equal(samsa_pidmgr_next(pm, &pid), SAMSA_ERR_NONE);
        assert_int_equal(pid, i);
    }
    usleep(50 * 1000);
    assert_int_equal(atomic_load(&f.calls), 1);     /* 899 out: not due */
    assert_int_equal(samsa_pidmgr_next(pm, &pid), SAMSA_ERR_NONE);
    assert_int_equal(pid, 899);                     /* 900 out: due */
    calls_wait(&f, 2);
    for (i = 900; i < 2 * BLOCK; i++) {
        assert_int_equal(samsa_pidmgr_next(pm, &pid), SAMSA_ERR_NONE);
        assert_int_equal(pid, i);
    }
    calls_wait(&f, 3);      /* the second block was 90% used as well */
    samsa_pidmgr_free(pm);
    assert_int_equal(atomic_load(&f.calls), 3);
}

/* Failures are retried (with a backoff) until a block comes. */
static void
test_pidmgr_retry(void **state)
{
    fake_t           f = { 0 };
    samsa_pidmgr_t  *pm;
    int64_t          pid = -1;

    (void) state;
    atomic_store(&f.fail_first, 3);
    pm = fake_pidmgr(&f, false);
    assert_int_equal(samsa_pidmgr_next(pm, &pid),
                     SAMSA_ERR_COORDINATOR_LOAD_IN_PROGRESS);
    assert_int_equal(next_wait(pm), 0);
    assert_int_equal(atomic_load(&f.tries), 4);
    samsa_pidmgr_free(pm);
}

/* Registration fetches the first block up front, with the broker epoch. */
static void
test_pidmgr_epoch_first_block(void **state)
{
    fake_t           f = { 0 };
    samsa_pidmgr_t  *pm;
    int64_t          pid = -1;

    (void) state;
    pm = fake_pidmgr(&f, false);
    samsa_pidmgr_broker_epoch_set(pm, 42);
    calls_wait(&f, 1);
    assert_int_equal(atomic_load(&f.last_epoch), 42);
    assert_int_equal(samsa_pidmgr_next(pm, &pid), SAMSA_ERR_NONE);
    assert_int_equal(pid, 0);
    samsa_pidmgr_free(pm);
}

/* Local (the active controller): the first call gets a block itself. */
static void
test_pidmgr_local(void **state)
{
    fake_t           f = { 0 };
    samsa_pidmgr_t  *pm;
    int64_t          pid = -1;

    (void) state;
    pm = fake_pidmgr(&f, true);
    assert_int_equal(samsa_pidmgr_next(pm, &pid), SAMSA_ERR_NONE);
    assert_true(pid == 0 || pid == BLOCK);  /* pid-fetch may race it */
    samsa_pidmgr_free(pm);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pidmgr_prefetch_due),
        cmocka_unit_test(test_pidmgr_remote_prefetch),
        cmocka_unit_test(test_pidmgr_retry),
        cmocka_unit_test(test_pidmgr_epoch_first_block),
        cmocka_unit_test(test_pidmgr_local),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
