/*
 * tests/unit/client/producer/test_accum.c - the record accumulator: append and its
 * flags, double-checked allocation under contention, the keyless sticky
 * partitioner (uniformity, switching after about batch.size bytes,
 * adaptive avoidance of a slow broker), and the sender's ready/drain
 * (linger, full, retry backoff, rotating drain index), expiry and flush.
 */
#include "unit.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "client/producer/accum.h"
#include "util/crc32c.h"
#include "util/endian.h"
#include "util/time.h"

typedef struct fixture {
    samsa_bufpool_t  *pool;
    samsa_accum_t    *accum;
} fixture_t;

static fixture_t
fx_new_codec(size_t batch_size, int64_t memory, int64_t linger_ms,
             samsa_codec_t codec)
{
    fixture_t           fx;
    samsa_accum_conf_t  conf = {
        .batch_size = batch_size,
        .codec = codec,
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

static fixture_t
fx_new(size_t batch_size, int64_t memory, int64_t linger_ms)
{
    return fx_new_codec(batch_size, memory, linger_ms, SAMSA_CODEC_NONE);
}

static void
release_list(fixture_t *fx, samsa_producer_batch_t *b, int64_t *records)
{
    samsa_producer_batch_t  *next;

    for (; b != NULL; b = next) {
        next = b->next;
        if (records != NULL) {
            *records += b->rb.count;
        }
        samsa_producer_batch_complete(b, b->pq->topic->name, b->pq->partition, 0, -1,
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
    samsa_producer_batch_t  *list;
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
    samsa_producer_batch_t      *b;
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
    samsa_producer_batch_t      *b;
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
        samsa_producer_batch_t  *next = b->next;

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
    samsa_producer_batch_t      *b;
    int                 calls = 0;
    int64_t             now = samsa_now_ms();

    (void) state;
    assert_int_equal(samsa_accum_append(fx.accum, "t", 0, NULL, 1, NULL, 0,
                                        "v", 1, NULL, 0, count_cb, &calls,
                                        NULL, 0, &res), SAMSA_ERR_NONE);
    assert_null(samsa_accum_expired(fx.accum, now + 1000));
    b = samsa_accum_expired(fx.accum, now + 120001);
    assert_non_null(b);
    samsa_producer_batch_complete(b, "t", 0, -1, -1, SAMSA_ERR__TIMED_OUT);
    assert_int_equal(calls, 1);
    assert_int_equal(completed_err, SAMSA_ERR__TIMED_OUT);
    assert_int_equal(samsa_accum_flush_wait(fx.accum, 50),
                     SAMSA_ERR__TIMED_OUT);
    samsa_accum_release(fx.accum, b);
    assert_int_equal(samsa_accum_flush_wait(fx.accum, 50), SAMSA_ERR_NONE);
    assert_false(samsa_accum_has_queued(fx.accum));
    fx_free(&fx);
}

static bool  busy_answer;

static bool
busy_fn(void *ctx, int32_t node)
{
    (void) ctx;
    assert_int_equal(node, 1);
    return busy_answer;
}

/* Appends skip the sender's wakeup while their queue is marked busy (its
 * leader at max.in.flight, or muted); a queue that stops being busy while
 * holding batches appended meanwhile asks the sender for another turn. */
static void
test_accum_sender_busy(void **state)
{
    fixture_t           fx = fx_new(1024, 1 << 20, 0);
    samsa_append_res_t  res;
    samsa_ready_t       ready = { 0 };
    samsa_pq_t         *pq;

    (void) state;
    assert_int_equal(append(&fx, 0, NULL, 100, &res), SAMSA_ERR_NONE);
    assert_true(res.new_batch);
    assert_false(res.sender_busy);          /* never marked: wake */
    samsa_accum_ready(fx.accum, 1, leader_one, NULL, samsa_now_ms(), &ready);
    busy_answer = true;
    assert_false(samsa_accum_set_busy(fx.accum, busy_fn, NULL));
    assert_int_equal(append(&fx, 0, NULL, 1000, &res), SAMSA_ERR_NONE);
    assert_true(res.new_batch);
    assert_true(res.sender_busy);           /* no wakeup for this one */
    /* not busy any more, with batches queued meanwhile: another turn */
    busy_answer = false;
    assert_true(samsa_accum_set_busy(fx.accum, busy_fn, NULL));
    assert_false(samsa_accum_set_busy(fx.accum, busy_fn, NULL));
    assert_int_equal(append(&fx, 0, NULL, 1000, &res), SAMSA_ERR_NONE);
    assert_false(res.sender_busy);
    /* a muted partition is busy whatever its leader */
    pq = samsa_accum_pq_find(fx.accum, "t", 0);
    assert_non_null(pq);
    pq->muted = true;
    assert_false(samsa_accum_set_busy(fx.accum, busy_fn, NULL));
    assert_int_equal(append(&fx, 0, NULL, 1000, &res), SAMSA_ERR_NONE);
    assert_true(res.sender_busy);
    pq->muted = false;
    samsa_ready_fini(&ready);
    fx_free(&fx);
}

/* ---- splitting a batch rejected as too large --------------------------- */

static int32_t  split_order[64];
static int      split_ncalls;

static void
split_cb(const samsa_record_md_t *md, samsa_err_t err, void *opaque)
{
    assert_int_equal(err, SAMSA_ERR_NONE);
    assert_true(md->offset >= 0);
    split_order[split_ncalls++] = (int32_t) (intptr_t) opaque;
}

/* Record i: key "k<i>" on even i (null on odd), a 100-byte value starting
 * "v<i>:", a header ("h", "x<i>") on every third. */
static void
split_append(fixture_t *fx, int i)
{
    samsa_append_res_t  res;
    samsa_rechdr_t      h;
    char                key[16], val[100], hv[16];

    snprintf(key, sizeof(key), "k%d", i);
    memset(val, 'a' + i % 26, sizeof(val));
    val[snprintf(val, sizeof(val), "v%d:", i)] = ':';
    snprintf(hv, sizeof(hv), "x%d", i);
    h = (samsa_rechdr_t) { "h", 1, hv, strlen(hv) };
    assert_int_equal(samsa_accum_append(fx->accum, "t", 0, NULL, 1000 + i,
                                        i % 2 == 0 ? key : NULL,
                                        i % 2 == 0 ? strlen(key) : 0, val,
                                        sizeof(val), i % 3 == 0 ? &h : NULL,
                                        i % 3 == 0 ? 1 : 0, split_cb,
                                        (void *) (intptr_t) i, NULL, 0,
                                        &res),
                     SAMSA_ERR_NONE);
}

typedef struct split_walk {
    int      first;
    int32_t  n;
} split_walk_t;

/* samsa_recwalk_fn: record first+i as split_append wrote it? */
static samsa_err_t
split_walk_rec(void *ctx, int32_t i, int64_t ts, const void *key,
               size_t key_len, const void *value, size_t value_len,
               const samsa_rechdr_t *hdrs, size_t nhdrs)
{
    split_walk_t  *w = ctx;
    int            r = w->first + i;
    char           want[16];

    assert_int_equal(i, w->n);
    assert_int_equal(ts, 1000 + r);
    if (r % 2 == 0) {
        snprintf(want, sizeof(want), "k%d", r);
        assert_non_null(key);
        assert_int_equal(key_len, strlen(want));
        assert_memory_equal(key, want, strlen(want));
    } else {
        assert_null(key);
    }
    snprintf(want, sizeof(want), "v%d:", r);
    assert_int_equal(value_len, 100);
    assert_memory_equal(value, want, strlen(want));
    assert_int_equal(nhdrs, r % 3 == 0 ? 1 : 0);
    if (r % 3 == 0) {
        snprintf(want, sizeof(want), "x%d", r);
        assert_int_equal(hdrs[0].key_len, 1);
        assert_memory_equal(hdrs[0].key, "h", 1);
        assert_int_equal(hdrs[0].value_len, strlen(want));
        assert_memory_equal(hdrs[0].value, want, strlen(want));
    }
    w->n++;
    return SAMSA_ERR_NONE;
}

/* Check a drained (closed) batch holds records first..first+count-1 as
 * split_append wrote them; returns count. */
static int32_t
split_check(samsa_producer_batch_t *b, int first)
{
    samsa_buf_t   scratch = SAMSA_BUF_INIT;
    split_walk_t  w = { first, 0 };

    assert_true(b->rb.closed);
    assert_int_equal(samsa_load_be32(b->rb.buf + 17),      /* CRC */
                     samsa_crc32c(0, b->rb.buf + 21, b->rb.len - 21));
    assert_int_equal(samsa_recbuild_walk(&b->rb, &scratch, split_walk_rec,
                                         &w),
                     SAMSA_ERR_NONE);
    assert_int_equal(w.n, b->rb.count);
    samsa_buf_fini(&scratch);
    return w.n;
}

static void
split_run(samsa_codec_t codec)
{
    fixture_t       fx = fx_new_codec(1024, 1 << 20, 0, codec);
    samsa_ready_t   ready = { 0 };
    samsa_producer_batch_t  *big, *b, *single;
    int64_t         now = samsa_now_ms();
    int32_t         n, got = 0, seq = 40, first = 0;
    int             i;

    split_ncalls = 0;
    for (i = 0; i < 8; i++) {
        split_append(&fx, i);
    }
    samsa_accum_ready(fx.accum, 1, leader_one, NULL, now, &ready);
    big = samsa_accum_drain(fx.accum, 1, 1 << 20, now);
    assert_non_null(big);
    assert_null(big->next);
    assert_int_equal(big->rb.count, 8);
    /* as if sent with sequences 40..47 and refused */
    samsa_recbuild_set_producer(&big->rb, 77, 3, 40, false);
    big->has_seq = true;
    n = samsa_accum_split_reenqueue(fx.accum, big);
    assert_true(n >= 2);
    assert_int_equal(samsa_accum_incomplete(fx.accum), n);
    split_append(&fx, 8);           /* goes after the pieces */
    assert_int_equal(samsa_accum_incomplete(fx.accum), n + 1);
    /* A flush started now waits for the pieces (they are the big batch). */
    assert_int_equal(samsa_accum_flush_wait(fx.accum, 10),
                     SAMSA_ERR__TIMED_OUT);
    for (i = 0; i < n; i++) {
        b = samsa_accum_drain(fx.accum, 1, 1, now);     /* one at a time */
        assert_non_null(b);
        assert_null(b->next);
        assert_true(b->off_pool);
        assert_true(b->has_seq);
        assert_int_equal(b->attempts, 0);
        /* at most half of the rejected records each */
        assert_true(b->rb.count <= 4);
        assert_int_equal(b->rb.producer_id, 77);
        assert_int_equal(b->rb.producer_epoch, 3);
        assert_int_equal(b->rb.base_seq, seq);
        assert_int_equal((int32_t) samsa_load_be32(b->rb.buf + 53),
                         seq);                  /* BaseSequence */
        got += split_check(b, first);
        seq += b->rb.count;
        first += b->rb.count;
        release_list(&fx, b, NULL);
    }
    assert_int_equal(got, 8);
    b = samsa_accum_drain(fx.accum, 1, 1 << 20, now);
    assert_non_null(b);
    assert_int_equal(split_check(b, 8), 1);
    /* a single record cannot be split: untouched */
    single = b;
    assert_int_equal(samsa_accum_split_reenqueue(fx.accum, single), 0);
    assert_int_equal(single->nthunks, 1);
    release_list(&fx, single, NULL);
    assert_int_equal(split_ncalls, 9);
    for (i = 0; i < 9; i++) {
        assert_int_equal(split_order[i], i);
    }
    assert_int_equal(samsa_accum_flush_wait(fx.accum, 10), SAMSA_ERR_NONE);
    samsa_ready_fini(&ready);
    fx_free(&fx);
}

static void
test_accum_split(void **state)
{
    (void) state;
    split_run(SAMSA_CODEC_NONE);
}

static void
test_accum_split_compressed(void **state)
{
    (void) state;
    split_run(SAMSA_CODEC_GZIP);
}

/* A piece refused again is split again, down to single records. */
static void
test_accum_split_repeats(void **state)
{
    fixture_t       fx = fx_new(1024, 1 << 20, 0);
    samsa_ready_t   ready = { 0 };
    samsa_producer_batch_t  *b;
    int64_t         now = samsa_now_ms();
    int32_t         splits = 0, delivered = 0, n;
    int             i, rounds;

    (void) state;
    split_ncalls = 0;
    for (i = 0; i < 8; i++) {
        split_append(&fx, i);
    }
    samsa_accum_ready(fx.accum, 1, leader_one, NULL, now, &ready);
    /* the "broker" takes single records only */
    for (rounds = 0; rounds < 100; rounds++) {
        b = samsa_accum_drain(fx.accum, 1, 1, now);
        if (b == NULL) {
            break;
        }
        if (b->rb.count > 1) {
            n = samsa_accum_split_reenqueue(fx.accum, b);
            assert_true(n >= 2);
            splits++;
        } else {
            assert_int_equal(split_check(b, delivered), 1);
            delivered++;
            release_list(&fx, b, NULL);
        }
    }
    assert_int_equal(delivered, 8);
    /* each split halves at least: 8 -> 4+4 -> ... -> 1s takes 7 splits
     * at most; uneven records may make three pieces of one */
    assert_true(splits >= 3 && splits <= 7);
    for (i = 0; i < 8; i++) {
        assert_int_equal(split_order[i], i);
    }
    samsa_ready_fini(&ready);
    fx_free(&fx);
}

/* ---- idempotent pipelining ---------------------------------------------- */

/* What the sender does when it sends b: sequence it, count it in flight. */
static void
pipe_send(samsa_producer_batch_t *b, int16_t epoch, int32_t *next_seq)
{
    if (!b->has_seq || b->rb.producer_epoch != epoch) {
        samsa_recbuild_set_producer(&b->rb, 7, epoch, *next_seq, false);
        *next_seq += b->rb.count;
        b->has_seq = true;
    }
    b->pq->inflight++;
}

/* Several batches of a partition in flight; a retry of the second goes
 * back in sequence order with the later ones that failed behind it
 * (whatever order they come back in), and the drain then sends only the
 * head retry, one at a time, until every sequenced batch is resolved. */
static void
test_accum_idempotent_pipeline(void **state)
{
    fixture_t           fx = fx_new(1024, 1 << 20, 0);
    samsa_append_res_t  res;
    samsa_ready_t       ready = { 0 };
    samsa_producer_batch_t      *b[5], *x;
    samsa_pq_t         *pq;
    int64_t             now = samsa_now_ms();
    int32_t             next_seq = 0;
    int                 i;

    (void) state;
    for (i = 0; i < 48; i++) {
        assert_int_equal(append(&fx, 0, NULL, 100, &res), SAMSA_ERR_NONE);
    }
    pq = samsa_accum_pq_find(fx.accum, "t", 0);
    samsa_accum_ready(fx.accum, 1, leader_one, NULL, now, &ready);
    for (i = 0; i < 5; i++) {           /* new batches pipeline */
        b[i] = samsa_accum_drain(fx.accum, 1, 1 << 20, now);
        assert_non_null(b[i]);
        assert_false(b[i]->has_seq);
        pipe_send(b[i], 0, &next_seq);
        assert_int_equal(b[i]->rb.base_seq, 8 * i);
    }
    assert_int_equal(pq->inflight, 5);
    /* the second fails with a retriable error: back at the front */
    pq->inflight--;
    assert_false(samsa_accum_has_earlier(fx.accum, b[1]));
    samsa_accum_reenqueue(fx.accum, b[1], 0, now);
    /* the drain stops behind it while others are in flight */
    samsa_accum_ready(fx.accum, 1, leader_one, NULL, now + 1, &ready);
    assert_int_equal(ready.nnodes, 0);
    assert_null(samsa_accum_drain(fx.accum, 1, 1 << 20, now + 1));
    /* the first succeeds; the later ones come back out of order behind
     * the retry (OUT_OF_ORDER_SEQUENCE_NUMBER: expected, retried) */
    pq->inflight--;
    release_list(&fx, b[0], NULL);
    for (i = 4; i >= 2; i--) {
        pq->inflight--;
        assert_true(samsa_accum_has_earlier(fx.accum, b[i]));
        samsa_accum_reenqueue(fx.accum, b[i], 0, now);
    }
    assert_int_equal(pq->inflight, 0);
    for (i = 1; i < 5; i++) {           /* in order, one at a time */
        samsa_accum_ready(fx.accum, 1, leader_one, NULL, now + 1, &ready);
        assert_int_equal(ready.nnodes, 1);
        x = samsa_accum_drain(fx.accum, 1, 1 << 20, now + 1);
        assert_ptr_equal(x, b[i]);
        assert_int_equal(x->rb.base_seq, 8 * i);
        pipe_send(x, 0, &next_seq);
        if (i < 4) {                    /* a retry waits for the one */
            assert_null(samsa_accum_drain(fx.accum, 1, 1 << 20, now + 1));
        }
        pq->inflight--;
        release_list(&fx, x, NULL);
    }
    /* then new batches pipeline again, sequenced after them */
    b[0] = samsa_accum_drain(fx.accum, 1, 1 << 20, now + 1);
    assert_non_null(b[0]);
    assert_false(b[0]->has_seq);
    pipe_send(b[0], 0, &next_seq);
    assert_int_equal(b[0]->rb.base_seq, 40);
    pq->inflight--;
    release_list(&fx, b[0], NULL);
    samsa_ready_fini(&ready);
    fx_free(&fx);
}

/* After an epoch bump the retried batches keep their old sequences only
 * to stay in order: a batch of the new epoch never sorts among them, and
 * a failure of the new epoch behind an old-epoch retry is a real gap. */
static void
test_accum_idempotent_epoch_bump(void **state)
{
    fixture_t           fx = fx_new(1024, 1 << 20, 0);
    samsa_append_res_t  res;
    samsa_ready_t       ready = { 0 };
    samsa_producer_batch_t      *b[3], *x;
    samsa_pq_t         *pq;
    int64_t             now = samsa_now_ms();
    int32_t             next_seq = 100;
    int                 i;

    (void) state;
    for (i = 0; i < 24; i++) {
        assert_int_equal(append(&fx, 0, NULL, 100, &res), SAMSA_ERR_NONE);
    }
    pq = samsa_accum_pq_find(fx.accum, "t", 0);
    samsa_accum_ready(fx.accum, 1, leader_one, NULL, now, &ready);
    for (i = 0; i < 3; i++) {
        b[i] = samsa_accum_drain(fx.accum, 1, 1 << 20, now);
        assert_non_null(b[i]);
        pipe_send(b[i], 0, &next_seq);
    }
    /* all three fail needing a bump (UNKNOWN_PRODUCER_ID), in order */
    for (i = 0; i < 3; i++) {
        pq->inflight--;
        samsa_accum_reenqueue(fx.accum, b[i], 0, now);
    }
    /* bumped: epoch 1, sequences from 0; the head goes out re-sequenced */
    next_seq = 0;
    x = samsa_accum_drain(fx.accum, 1, 1 << 20, now);
    assert_ptr_equal(x, b[0]);
    pipe_send(x, 1, &next_seq);
    assert_int_equal(x->rb.base_seq, 0);
    assert_int_equal(x->rb.producer_epoch, 1);
    /* old-epoch sequences are not "earlier" than new-epoch ones */
    assert_false(samsa_accum_has_earlier(fx.accum, x));
    /* it fails again: it goes before the old-epoch ones, whose stale
     * sequences (108, 116) would otherwise sort before 0..7 wrongly */
    pq->inflight--;
    samsa_accum_reenqueue(fx.accum, x, 0, now);
    for (i = 0; i < 3; i++) {
        x = samsa_accum_drain(fx.accum, 1, 1 << 20, now);
        assert_ptr_equal(x, b[i]);
        pipe_send(x, 1, &next_seq);
        assert_int_equal(x->rb.base_seq, 8 * i);
        assert_null(samsa_accum_drain(fx.accum, 1, 1 << 20, now));
        pq->inflight--;
        release_list(&fx, x, NULL);
    }
    samsa_ready_fini(&ready);
    fx_free(&fx);
}

/* Split pieces of a batch go back in sequence order behind an earlier
 * retry, not in front of it. */
static void
test_accum_split_behind_retry(void **state)
{
    fixture_t       fx = fx_new(1024, 1 << 20, 0);
    samsa_ready_t   ready = { 0 };
    samsa_producer_batch_t  *b[2], *x;
    int64_t         now = samsa_now_ms();
    int32_t         next_seq = 0, seq = 0, n;
    int             i;

    (void) state;
    split_ncalls = 0;
    for (i = 0; i < 16; i++) {
        split_append(&fx, i);
    }
    samsa_accum_ready(fx.accum, 1, leader_one, NULL, now, &ready);
    for (i = 0; i < 2; i++) {
        b[i] = samsa_accum_drain(fx.accum, 1, 1 << 20, now);
        assert_non_null(b[i]);
        pipe_send(b[i], 0, &next_seq);
    }
    b[0]->pq->inflight -= 2;
    samsa_accum_reenqueue(fx.accum, b[0], 0, now);     /* retriable */
    n = samsa_accum_split_reenqueue(fx.accum, b[1]);   /* too large */
    assert_true(n >= 2);
    x = samsa_accum_drain(fx.accum, 1, 1 << 20, now);
    assert_ptr_equal(x, b[0]);
    for (;;) {
        pipe_send(x, 0, &next_seq);     /* later batches get new ones */
        x->pq->inflight--;
        assert_int_equal(x->rb.base_seq, seq);
        seq += x->rb.count;
        release_list(&fx, x, NULL);
        x = samsa_accum_drain(fx.accum, 1, 1 << 20, now);
        if (x == NULL) {
            break;
        }
    }
    assert_int_equal(seq, 16);
    for (i = 0; i < 16; i++) {
        assert_int_equal(split_order[i], i);
    }
    samsa_ready_fini(&ready);
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
        cmocka_unit_test(test_accum_sender_busy),
        cmocka_unit_test(test_accum_split),
        cmocka_unit_test(test_accum_split_compressed),
        cmocka_unit_test(test_accum_split_repeats),
        cmocka_unit_test(test_accum_idempotent_pipeline),
        cmocka_unit_test(test_accum_idempotent_epoch_bump),
        cmocka_unit_test(test_accum_split_behind_retry),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
