/*
 * tests/unit/client/test_accum.c - the record accumulator: append and its
 * flags, double-checked allocation under contention, the keyless sticky
 * partitioner (uniformity, switching after about batch.size bytes,
 * adaptive avoidance of a slow broker), and the sender's ready/drain
 * (linger, full, retry backoff, rotating drain index), expiry and flush.
 */
#include "unit.h"

#include <pthread.h>
#include <stdio.h>

#include "client/accum.h"
#include "util/time.h"

typedef struct fixture {
    samsa_bufpool_t  *pool;
    samsa_accum_t    *accum;
} fixture_t;

static fixture_t
fx_new(size_t batch_size, int64_t memory, int64_t linger_ms)
{
    fixture_t           fx;
    samsa_accum_conf_t  conf = {
        .batch_size = batch_size,
        .codec = SAMSA_CODEC_NONE,
        .level = SAMSA_CODEC_LEVEL_DEFAULT,
        .linger_ms = linger_ms,
        .delivery_timeout_ms = 120000,
        .adaptive = true,
        .availability_timeout_ms = 0,
        .seed = 12345,
    };

    fx.pool = samsa_bufpool_new(memory, batch_size);
    conf.pool = fx.pool;
    fx.accum = samsa_accum_new(&conf);
    return fx;
}

static void
release_list(fixture_t *fx, samsa_batch_t *b, int64_t *records)
{
    samsa_batch_t  *next;

    for (; b != NULL; b = next) {
        next = b->next;
        if (records != NULL) {
            *records += b->rb.count;
        }
        samsa_batch_complete(b, b->pq->topic->name, b->pq->partition, 0, -1,
                             SAMSA_ERR_NONE);
        samsa_accum_release(fx->accum, b);
    }
}

static void
fx_free(fixture_t *fx)
{
    release_list(fx, samsa_accum_take_all(fx->accum), NULL);
    assert_int_equal(samsa_accum_incomplete(fx->accum), 0);
    assert_int_equal(samsa_bufpool_available(fx->pool),
                     samsa_bufpool_total(fx->pool));
    samsa_accum_free(fx->accum);
    samsa_bufpool_free(fx->pool);
}

static samsa_err_t
append(fixture_t *fx, int32_t partition, const samsa_partview_t *view,
       size_t value_len, samsa_append_res_t *res)
{
    static const char  v[4096];

    return samsa_accum_append(fx->accum, "t", partition, view, 1000, NULL, 0,
                              v, value_len, NULL, 0, NULL, NULL, NULL, 0,
                              res);
}

static void
test_accum_append_flags(void **state)
{
    fixture_t           fx = fx_new(1024, 1 << 20, 0);
    samsa_append_res_t  res;
    int                 i;

    (void) state;
    assert_int_equal(append(&fx, 3, NULL, 100, &res), SAMSA_ERR_NONE);
    assert_int_equal(res.partition, 3);
    assert_true(res.new_batch);
    assert_false(res.batch_full);
    /* 100-byte values are 107 bytes on the wire: 8 fit in 1024 - 61 */
    for (i = 1; i < 8; i++) {
        assert_int_equal(append(&fx, 3, NULL, 100, &res), SAMSA_ERR_NONE);
        assert_false(res.new_batch);
        assert_false(res.batch_full);
    }
    assert_int_equal(append(&fx, 3, NULL, 100, &res), SAMSA_ERR_NONE);
    assert_true(res.new_batch);
    assert_true(res.batch_full);        /* two batches queued */
    assert_int_equal(append(&fx, 3, NULL, 100, &res), SAMSA_ERR_NONE);
    assert_false(res.new_batch);
    assert_true(res.batch_full);
    /* a record larger than batch.size gets a batch of its own size */
    assert_int_equal(append(&fx, 3, NULL, 3000, &res), SAMSA_ERR_NONE);
    assert_true(res.new_batch);
    assert_int_equal(samsa_accum_incomplete(fx.accum), 3);
    /* larger than the whole pool */
    assert_int_equal(samsa_accum_append(fx.accum, "t", 0, NULL, 0, NULL, 0,
                                        NULL, (size_t) 2 << 20, NULL, 0,
                                        NULL, NULL, NULL, 0, &res),
                     SAMSA_ERR_MESSAGE_TOO_LARGE);
    samsa_accum_close(fx.accum);
    assert_int_equal(append(&fx, 3, NULL, 100, &res), SAMSA_ERR__SHUTDOWN);
    fx_free(&fx);
}

typedef struct racer {
    fixture_t  *fx;
    int         n;
    int         new_batches;
} racer_t;

static void *
racer_main(void *p)
{
    racer_t             *r = p;
    samsa_append_res_t   res;
    int                  i;

    for (i = 0; i < r->n; i++) {
        assert_int_equal(append(r->fx, 0, NULL, 50, &res), SAMSA_ERR_NONE);
        r->new_batches += res.new_batch;
    }
    return NULL;
}

/* Eight threads append to one partition at once: every record lands in
 * exactly one batch, each new batch is made once, and every buffer taken
 * by a thread that lost the race goes back to the pool. */
static void
test_accum_append_contention(void **state)
{
    fixture_t       fx = fx_new(512, 64 << 20, 0);
    racer_t         r[8];
    pthread_t       th[8];
    samsa_batch_t  *list;
    int64_t         records = 0, nb;
    int             i, made = 0;

    (void) state;
    for (i = 0; i < 8; i++) {
        r[i] = (racer_t) { &fx, 5000, 0 };
        pthread_create(&th[i], NULL, racer_main, &r[i]);
    }
    for (i = 0; i < 8; i++) {
        pthread_join(th[i], NULL);
        made += r[i].new_batches;
    }
    nb = samsa_accum_incomplete(fx.accum);
    assert_int_equal(made, nb);
    /* unused buffers went back: what is out is one buffer per batch */
    assert_int_equal(samsa_bufpool_total(fx.pool)
                         - samsa_bufpool_available(fx.pool), nb * 512);
    list = samsa_accum_take_all(fx.accum);
    release_list(&fx, list, &records);
    assert_int_equal(records, 8 * 5000);
    fx_free(&fx);
}

/* 100 000 keyless records over 12 partitions: within 5% of 1/12 each. */
static void
test_accum_keyless_uniform(void **state)
{
    fixture_t           fx = fx_new(16384, 64 << 20, 0);
    samsa_partview_t    view = { 12, NULL, 0 };
    samsa_append_res_t  res;
    int                 counts[12] = { 0 };
    int                 i;

    (void) state;
    for (i = 0; i < 100000; i++) {
        assert_int_equal(append(&fx, -1, &view, 100, &res), SAMSA_ERR_NONE);
        counts[res.partition]++;
    }
    for (i = 0; i < 12; i++) {
        assert_true(counts[i] > 100000 / 12 * 0.95);
        assert_true(counts[i] < 100000 / 12 * 1.05);
    }
    fx_free(&fx);
}

/* The sticky partition holds until about batch.size bytes went to it. */
static void
test_accum_sticky_moves_after_batch_size(void **state)
{
    fixture_t           fx = fx_new(2048, 64 << 20, 0);
    samsa_partview_t    view = { 6, NULL, 0 };
    samsa_append_res_t  res;
    int32_t             cur = -1;
    size_t              run = 0, rec = 107;     /* 100-byte value */
    int                 i, runs = 0;

    (void) state;
    for (i = 0; i < 5000; i++) {
        assert_int_equal(append(&fx, -1, &view, 100, &res), SAMSA_ERR_NONE);
        if (res.partition != cur) {
            if (cur >= 0) {
                assert_true(run >= 2048 - 61 - rec);
                assert_true(run <= 2 * 2048 + rec);
                runs++;
            }
            cur = res.partition;
            run = 0;
        }
        run += rec;
    }
    assert_true(runs > 100);
    fx_free(&fx);
}

static int32_t
leader_mod3(void *ctx, const char *topic, int32_t partition)
{
    (void) ctx;
    (void) topic;
    return partition % 3 + 1;           /* nodes 1, 2, 3 */
}

/* Adaptive partitioning skips partitions whose leader could not be
 * drained for longer than partitioner.availability.timeout.ms. */
static void
test_accum_adaptive_avoids_slow_broker(void **state)
{
    fixture_t           fx = fx_new(1024, 64 << 20, 1000);
    samsa_accum_conf_t  conf;
    samsa_partview_t    view = { 12, NULL, 0 };
    samsa_append_res_t  res;
    samsa_ready_t       ready = { 0 };
    int                 counts[12] = { 0 };
    int64_t             t0 = samsa_now_ms();
    int                 i;

    (void) state;
    /* rebuild with an availability timeout */
    samsa_accum_free(fx.accum);
    conf = (samsa_accum_conf_t) {
        .batch_size = 1024, .codec = SAMSA_CODEC_NONE,
        .level = SAMSA_CODEC_LEVEL_DEFAULT, .linger_ms = 100000,
        .delivery_timeout_ms = 120000, .adaptive = true,
        .availability_timeout_ms = 100, .pool = fx.pool, .seed = 1,
    };
    fx.accum = samsa_accum_new(&conf);
    for (i = 0; i < 12; i++) {
        assert_int_equal(append(&fx, i, NULL, 10, &res), SAMSA_ERR_NONE);
    }
    /* Test hook: node 3 had batches ready but could not take them for
     * 200 ms (its connection is saturated); nodes 1 and 2 drain fine. */
    for (i = 1; i <= 3; i++) {
        samsa_accum_node_latency(fx.accum, i, t0, true);
        samsa_accum_node_latency(fx.accum, i, t0 + 200, i != 3);
    }
    samsa_accum_ready(fx.accum, 1, leader_mod3, NULL, t0 + 200, &ready);
    for (i = 0; i < 3000; i++) {
        assert_int_equal(append(&fx, -1, &view, 100, &res), SAMSA_ERR_NONE);
        counts[res.partition]++;
    }
    /* the run in progress may finish where it was; then never node 3 */
    for (i = 2; i < 12; i += 3) {
        assert_true(counts[i] <= 20);
    }
    /* node 3 recovers: its partitions come back */
    samsa_accum_node_latency(fx.accum, 3, t0 + 300, true);
    samsa_accum_ready(fx.accum, 1, leader_mod3, NULL, t0 + 300, &ready);
    memset(counts, 0, sizeof(counts));
    for (i = 0; i < 6000; i++) {
        assert_int_equal(append(&fx, -1, &view, 100, &res), SAMSA_ERR_NONE);
        counts[res.partition]++;
    }
    assert_true(counts[2] + counts[5] + counts[8] + counts[11] > 0);
    samsa_ready_fini(&ready);
    fx_free(&fx);
}

static void
test_accum_ready_linger_and_full(void **state)
{
    fixture_t           fx = fx_new(1024, 1 << 20, 50);
    samsa_append_res_t  res;
    samsa_ready_t       ready = { 0 };
    samsa_batch_t      *b;
    int64_t             t0;
    int                 i;

    (void) state;
    assert_int_equal(append(&fx, 0, NULL, 10, &res), SAMSA_ERR_NONE);
    t0 = samsa_now_ms();
    samsa_accum_ready(fx.accum, 1, leader_mod3, NULL, t0, &ready);
    assert_int_equal(ready.nnodes, 0);
    assert_true(ready.next_check_ms > 0 && ready.next_check_ms <= 50);
    samsa_accum_ready(fx.accum, 1, leader_mod3, NULL, t0 + 60, &ready);
    assert_int_equal(ready.nnodes, 1);
    assert_int_equal(ready.nodes[0], 1);
    /* full: partition 1 (node 2) gets two batches, ready at once */
    for (i = 0; i < 12; i++) {
        assert_int_equal(append(&fx, 1, NULL, 100, &res), SAMSA_ERR_NONE);
    }
    samsa_accum_ready(fx.accum, 1, leader_mod3, NULL, t0, &ready);
    assert_int_equal(ready.nnodes, 1);
    assert_int_equal(ready.nodes[0], 2);
    b = samsa_accum_drain(fx.accum, 2, 1 << 20, t0);
    assert_non_null(b);
    assert_null(b->next);               /* one batch per partition */
    assert_true(b->rb.closed);
    assert_int_equal(b->rb.count, 8);
    /* retry backoff: put it back, not ready before the backoff passes */
    samsa_accum_reenqueue(fx.accum, b, 100, t0);
    samsa_accum_ready(fx.accum, 1, leader_mod3, NULL, t0 + 40, &ready);
    assert_int_equal(ready.nnodes, 0);
    assert_true(ready.next_check_ms <= 60);
    assert_null(samsa_accum_drain(fx.accum, 2, 1 << 20, t0 + 40));
    samsa_accum_ready(fx.accum, 1, leader_mod3, NULL, t0 + 101, &ready);
    assert_int_equal(ready.nnodes, 2);          /* partition 0 lingered */
    b = samsa_accum_drain(fx.accum, 2, 1 << 20, t0 + 101);
    assert_non_null(b);
    assert_int_equal(b->attempts, 1);
    assert_true(b->in_retry);
    release_list(&fx, b, NULL);
    /* flushing makes a lingering batch ready */
    assert_int_equal(append(&fx, 2, NULL, 10, &res), SAMSA_ERR_NONE);
    samsa_accum_ready(fx.accum, 1, leader_mod3, NULL, samsa_now_ms(), &ready);
    for (i = 0; i < ready.nnodes; i++) {
        assert_int_not_equal(ready.nodes[i], 3);
    }
    samsa_accum_flush_begin(fx.accum);
    samsa_accum_ready(fx.accum, 1, leader_mod3, NULL, samsa_now_ms(), &ready);
    assert_int_equal(ready.nnodes, 3);
    samsa_accum_flush_end(fx.accum);
    /* a muted partition is never ready */
    samsa_accum_pq_find(fx.accum, "t", 2)->muted = true;
    samsa_accum_ready(fx.accum, 1, leader_mod3, NULL, t0 + 100000, &ready);
    assert_int_equal(ready.nnodes, 2);
    samsa_accum_pq_find(fx.accum, "t", 2)->muted = false;
    /* unknown leader */
    samsa_ready_fini(&ready);
    fx_free(&fx);
}

static int32_t
leader_one(void *ctx, const char *topic, int32_t partition)
{
    (void) ctx;
    (void) topic;
    return partition == 5 ? -1 : 1;
}

/* Drain rotates its start partition so that low partitions do not starve
 * the others when max.request.size allows one batch per request. */
static void
test_accum_drain_rotates(void **state)
{
    fixture_t           fx = fx_new(1024, 1 << 20, 0);
    samsa_append_res_t  res;
    samsa_ready_t       ready = { 0 };
    samsa_batch_t      *b;
    int64_t             now = samsa_now_ms();
    int32_t             seen[9];
    int                 i, j;

    (void) state;
    for (i = 0; i < 3; i++) {
        for (j = 0; j < 30; j++) {
            assert_int_equal(append(&fx, i, NULL, 100, &res), SAMSA_ERR_NONE);
        }
    }
    assert_int_equal(append(&fx, 5, NULL, 100, &res), SAMSA_ERR_NONE);
    samsa_accum_ready(fx.accum, 1, leader_one, NULL, now, &ready);
    assert_true(ready.unknown_leaders);
    assert_int_equal(ready.nnodes, 1);
    for (i = 0; i < 9; i++) {
        b = samsa_accum_drain(fx.accum, 1, 1, now);   /* one batch each */
        assert_non_null(b);
        assert_null(b->next);
        seen[i] = b->pq->partition;
        release_list(&fx, b, NULL);
    }
    for (i = 0; i < 9; i++) {
        assert_int_equal(seen[i], i % 3);
    }
    /* with room, one request takes one batch of every partition */
    b = samsa_accum_drain(fx.accum, 1, 1 << 20, now);
    for (i = 0; b != NULL; i++) {
        samsa_batch_t  *next = b->next;

        b->next = NULL;
        release_list(&fx, b, NULL);
        b = next;
    }
    assert_int_equal(i, 3);
    samsa_ready_fini(&ready);
    fx_free(&fx);
}

static int  completed_err;

static void
count_cb(const samsa_record_md_t *md, samsa_err_t err, void *opaque)
{
    (void) md;
    (*(int *) opaque)++;
    completed_err = err;
}

static void
test_accum_expiry_and_flush(void **state)
{
    fixture_t           fx = fx_new(1024, 1 << 20, 100000);
    samsa_append_res_t  res;
    samsa_batch_t      *b;
    int                 calls = 0;
    int64_t             now = samsa_now_ms();

    (void) state;
    assert_int_equal(samsa_accum_append(fx.accum, "t", 0, NULL, 1, NULL, 0,
                                        "v", 1, NULL, 0, count_cb, &calls,
                                        NULL, 0, &res), SAMSA_ERR_NONE);
    assert_null(samsa_accum_expired(fx.accum, now + 1000));
    b = samsa_accum_expired(fx.accum, now + 120001);
    assert_non_null(b);
    samsa_batch_complete(b, "t", 0, -1, -1, SAMSA_ERR__TIMED_OUT);
    assert_int_equal(calls, 1);
    assert_int_equal(completed_err, SAMSA_ERR__TIMED_OUT);
    assert_int_equal(samsa_accum_flush_wait(fx.accum, 50),
                     SAMSA_ERR__TIMED_OUT);
    samsa_accum_release(fx.accum, b);
    assert_int_equal(samsa_accum_flush_wait(fx.accum, 50), SAMSA_ERR_NONE);
    assert_false(samsa_accum_has_queued(fx.accum));
    fx_free(&fx);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_accum_append_flags),
        cmocka_unit_test(test_accum_append_contention),
        cmocka_unit_test(test_accum_keyless_uniform),
        cmocka_unit_test(test_accum_sticky_moves_after_batch_size),
        cmocka_unit_test(test_accum_adaptive_avoids_slow_broker),
        cmocka_unit_test(test_accum_ready_linger_and_full),
        cmocka_unit_test(test_accum_drain_rotates),
        cmocka_unit_test(test_accum_expiry_and_flush),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
