/* Unit tests for broker/purgatory.c: immediate and later completion,
 * expiry, several keys, purge of completed watchers, shutdown, and
 * completion racing expiry across threads with exactly-once counters. */
#include "unit.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#include "broker/purgatory.h"
#include "util/alloc.h"
#include "util/time.h"

/* What happened to one op; outlives the op itself. */
typedef struct op_stats {
    _Atomic int      tries;
    _Atomic int      completes;
    _Atomic int      expires;
    _Atomic int      frees;
    _Atomic int      in_callback;   /* callbacks running now (must be <= 1) */
    _Atomic int      overlaps;      /* times two callbacks overlapped */
    _Atomic int      bad_order;     /* on_expire after on_complete */
    _Atomic int64_t  done_ns;       /* when on_complete ran */
    char             expire_thread[16];
} op_stats_t;

typedef struct top {
    samsa_delayed_op_t   op;
    op_stats_t          *stats;
    _Atomic int64_t     *gen;       /* completes once *gen >= need */
    int64_t              need;
} top_t;

static top_t *
top_of(samsa_delayed_op_t *op)
{
    return (top_t *) (void *) ((char *) op - offsetof(top_t, op));
}

static void
top_enter(op_stats_t *st)
{
    if (atomic_fetch_add(&st->in_callback, 1) != 0) {
        atomic_fetch_add(&st->overlaps, 1);
    }
}

static void
top_leave(op_stats_t *st)
{
    atomic_fetch_sub(&st->in_callback, 1);
}

static bool
top_try_complete(samsa_delayed_op_t *op)
{
    top_t  *t = top_of(op);
    bool    done = false;

    top_enter(t->stats);
    atomic_fetch_add(&t->stats->tries, 1);
    if (atomic_load(t->gen) >= t->need) {
        top_leave(t->stats);                /* on_complete enters again */
        return samsa_delayed_op_force_complete(op);
    }
    top_leave(t->stats);
    return done;
}

static void
top_on_complete(samsa_delayed_op_t *op)
{
    top_t  *t = top_of(op);

    top_enter(t->stats);
    atomic_fetch_add(&t->stats->completes, 1);
    atomic_store(&t->stats->done_ns, samsa_now_ns());
    top_leave(t->stats);
}

static void
top_on_expire(samsa_delayed_op_t *op)
{
    top_t  *t = top_of(op);

    top_enter(t->stats);
    if (atomic_load(&t->stats->completes) != 0) {
        atomic_fetch_add(&t->stats->bad_order, 1);
    }
    atomic_fetch_add(&t->stats->expires, 1);
    pthread_getname_np(pthread_self(), t->stats->expire_thread,
                       sizeof(t->stats->expire_thread));
    top_leave(t->stats);
}

static void
top_free(samsa_delayed_op_t *op)
{
    top_t  *t = top_of(op);

    atomic_fetch_add(&t->stats->frees, 1);
    samsa_free(t);
}

static const samsa_delayed_op_ops_t  top_ops = {
    .try_complete = top_try_complete,
    .on_complete = top_on_complete,
    .on_expire = top_on_expire,
    .free = top_free,
};

static top_t *
top_new(op_stats_t *stats, _Atomic int64_t *gen, int64_t need,
        int64_t timeout_ms, pthread_mutex_t *lock)
{
    top_t  *t = samsa_calloc(1, sizeof(*t));

    t->stats = stats;
    t->gen = gen;
    t->need = need;
    samsa_delayed_op_init(&t->op, &top_ops, timeout_ms, lock);
    return t;
}

/* Wait up to 5 s for *v to reach want. */
static bool
wait_for(_Atomic int *v, int want)
{
    int  i;

    for (i = 0; i < 500 && atomic_load(v) < want; i++) {
        usleep(10000);
    }
    return atomic_load(v) >= want;
}

static void
stats_assert_once(op_stats_t *st, int expires)
{
    assert_int_equal(atomic_load(&st->completes), 1);
    assert_int_equal(atomic_load(&st->expires), expires);
    assert_int_equal(atomic_load(&st->overlaps), 0);
    assert_int_equal(atomic_load(&st->bad_order), 0);
}

/* An op that can complete at once is completed, never watched or timed. */
static void
test_purgatory_complete_immediately(void **state)
{
    samsa_purgatory_t  *purg = samsa_purgatory_new("test", 1000);
    op_stats_t          st = { 0 };
    _Atomic int64_t     gen = 1;
    const char         *keys[] = { "t-0" };
    top_t              *t = top_new(&st, &gen, 1, 30000, NULL);

    (void) state;
    assert_true(samsa_purgatory_try_complete_else_watch(purg, &t->op, keys,
                                                        1));
    stats_assert_once(&st, 0);
    assert_int_equal(samsa_purgatory_watched(purg), 0);
    assert_int_equal(samsa_purgatory_delayed(purg), 0);
    samsa_delayed_op_unref(&t->op);
    assert_int_equal(atomic_load(&st.frees), 1);
    samsa_purgatory_free(purg);
}

/* A waiting op completes on the check after its condition holds; its timer
 * and watch entry go, and every ref is released. */
static void
test_purgatory_complete_on_later_check(void **state)
{
    samsa_purgatory_t  *purg = samsa_purgatory_new("test", 1000);
    op_stats_t          st = { 0 };
    _Atomic int64_t     gen = 0;
    const char         *keys[] = { "t-0" };
    top_t              *t = top_new(&st, &gen, 1, 30000, NULL);

    (void) state;
    assert_false(samsa_purgatory_try_complete_else_watch(purg, &t->op, keys,
                                                         1));
    assert_int_equal(atomic_load(&st.tries), 2);    /* before+after watch */
    assert_int_equal(samsa_purgatory_watched(purg), 1);
    assert_int_equal(samsa_purgatory_delayed(purg), 1);
    samsa_delayed_op_unref(&t->op);                 /* purgatory keeps it */
    assert_int_equal(samsa_purgatory_check_and_complete(purg, "t-0"), 0);
    assert_int_equal(samsa_purgatory_check_and_complete(purg, "t-1"), 0);
    assert_int_equal(atomic_load(&st.completes), 0);
    atomic_store(&gen, 1);
    assert_int_equal(samsa_purgatory_check_and_complete(purg, "t-0"), 1);
    stats_assert_once(&st, 0);
    assert_int_equal(samsa_purgatory_delayed(purg), 0);
    assert_int_equal(samsa_purgatory_watched(purg), 0);
    assert_int_equal(atomic_load(&st.frees), 1);
    assert_int_equal(samsa_purgatory_check_and_complete(purg, "t-0"), 0);
    samsa_purgatory_free(purg);
}

/* Past its deadline an op is expired by the reaper thread: on_expire then
 * on_complete, once each, no earlier than the timeout. */
static void
test_purgatory_expires(void **state)
{
    samsa_purgatory_t  *purg = samsa_purgatory_new("fetch", 1000);
    op_stats_t          st = { 0 };
    _Atomic int64_t     gen = 0;
    const char         *keys[] = { "t-0" };
    top_t              *t = top_new(&st, &gen, 1, 30, NULL);
    int64_t             t0 = samsa_now_ns(), waited_ms;

    (void) state;
    assert_false(samsa_purgatory_try_complete_else_watch(purg, &t->op, keys,
                                                         1));
    samsa_delayed_op_unref(&t->op);
    assert_true(wait_for(&st.completes, 1));
    waited_ms = (atomic_load(&st.done_ns) - t0) / 1000000;
    printf("# purgatory: 30 ms op expired after %lld ms\n",
           (long long) waited_ms);
    assert_true(waited_ms >= 30);
    assert_true(waited_ms < 1000);
    stats_assert_once(&st, 1);
    assert_string_equal(st.expire_thread, "reaper-fetch");
    assert_int_equal(samsa_purgatory_delayed(purg), 0);
    /* Still listed until a check (or a purge) sweeps it. */
    assert_int_equal(samsa_purgatory_watched(purg), 1);
    assert_int_equal(atomic_load(&st.frees), 0);
    atomic_store(&gen, 1);
    assert_int_equal(samsa_purgatory_check_and_complete(purg, "t-0"), 0);
    assert_int_equal(samsa_purgatory_watched(purg), 0);
    assert_int_equal(atomic_load(&st.frees), 1);
    stats_assert_once(&st, 1);
    samsa_purgatory_free(purg);
}

/* An op watched under three keys completes through any one of them; the
 * other lists drop it lazily.  Two ops sharing a caller's lock work too. */
static void
test_purgatory_multiple_keys(void **state)
{
    samsa_purgatory_t  *purg = samsa_purgatory_new("test", 1000);
    op_stats_t          st[3] = { 0 };
    _Atomic int64_t     gen = 0;
    const char         *keys[] = { "a-0", "b-0", "c-0" };
    pthread_mutex_t     group_lock = PTHREAD_MUTEX_INITIALIZER;
    top_t              *t0 = top_new(&st[0], &gen, 1, 30000, NULL);
    top_t              *t1 = top_new(&st[1], &gen, 1, 30000, &group_lock);
    top_t              *t2 = top_new(&st[2], &gen, 1, 30000, &group_lock);

    (void) state;
    assert_false(samsa_purgatory_try_complete_else_watch(purg, &t0->op, keys,
                                                         3));
    assert_false(samsa_purgatory_try_complete_else_watch(purg, &t1->op,
                                                         &keys[1], 1));
    assert_false(samsa_purgatory_try_complete_else_watch(purg, &t2->op,
                                                         &keys[1], 2));
    assert_int_equal(samsa_purgatory_watched(purg), 6);
    assert_int_equal(samsa_purgatory_delayed(purg), 3);
    atomic_store(&gen, 1);
    assert_int_equal(samsa_purgatory_check_and_complete(purg, "b-0"), 3);
    assert_int_equal(samsa_purgatory_watched(purg), 3);    /* a-0, c-0 x2 */
    assert_int_equal(samsa_purgatory_delayed(purg), 0);
    assert_int_equal(samsa_purgatory_check_and_complete(purg, "a-0"), 0);
    assert_int_equal(samsa_purgatory_watched(purg), 2);
    samsa_delayed_op_unref(&t0->op);
    samsa_delayed_op_unref(&t1->op);
    samsa_delayed_op_unref(&t2->op);
    assert_int_equal(atomic_load(&st[0].frees), 0);        /* c-0 holds it */
    assert_int_equal(atomic_load(&st[1].frees), 1);
    samsa_purgatory_free(purg);
    for (int i = 0; i < 3; i++) {
        stats_assert_once(&st[i], 0);
        assert_int_equal(atomic_load(&st[i].frees), 1);
    }
    pthread_mutex_destroy(&group_lock);
}

/* Completed ops left in other keys' lists are purged by the reaper once
 * more than purge_interval of them may linger. */
static void
test_purgatory_purges_completed_watchers(void **state)
{
    enum { N = 100 };
    samsa_purgatory_t  *purg = samsa_purgatory_new("test", 10);
    static op_stats_t   st[N];
    _Atomic int64_t     gen = 0;
    _Atomic int         nfreed = 0;
    char                own[N][16];
    const char         *keys[2];
    top_t              *t;
    int                 i, waited;

    (void) state;
    for (i = 0; i < N; i++) {
        snprintf(own[i], sizeof(own[i]), "own-%d", i);
        keys[0] = "all";
        keys[1] = own[i];
        t = top_new(&st[i], &gen, 1, 30000, NULL);
        assert_false(samsa_purgatory_try_complete_else_watch(purg, &t->op,
                                                             keys, 2));
        samsa_delayed_op_unref(&t->op);
    }
    assert_int_equal(samsa_purgatory_watched(purg), 2 * N);
    atomic_store(&gen, 1);
    assert_int_equal(samsa_purgatory_check_and_complete(purg, "all"), N);
    assert_int_equal(samsa_purgatory_watched(purg), N);    /* own-i lists */
    for (waited = 0; waited < 300 && samsa_purgatory_watched(purg) > 0;
         waited++) {
        usleep(10000);
    }
    assert_int_equal(samsa_purgatory_watched(purg), 0);
    for (i = 0; i < N; i++) {
        stats_assert_once(&st[i], 0);
        nfreed += atomic_load(&st[i].frees);
    }
    assert_int_equal(nfreed, N);                    /* before shutdown */
    samsa_purgatory_free(purg);
}

/* Freeing the purgatory expires and completes every pending op (watched
 * or only timed), so every request gets an answer, and frees them all. */
static void
test_purgatory_shutdown_expires_everything(void **state)
{
    enum { N = 50 };
    samsa_purgatory_t  *purg = samsa_purgatory_new("test", 1000);
    static op_stats_t   st[N];
    _Atomic int64_t     gen = 0;
    const char         *keys[] = { "x-0", "x-1" };
    top_t              *t;
    int                 i;

    (void) state;
    for (i = 0; i < N; i++) {
        t = top_new(&st[i], &gen, 1, 3600 * 1000, NULL);
        assert_false(samsa_purgatory_try_complete_else_watch(
            purg, &t->op, keys, (size_t) (i % 3)));
        samsa_delayed_op_unref(&t->op);
    }
    assert_int_equal(samsa_purgatory_delayed(purg), N);
    samsa_purgatory_free(purg);
    for (i = 0; i < N; i++) {
        stats_assert_once(&st[i], 1);
        assert_int_equal(atomic_load(&st[i].frees), 1);
    }
}

enum { RACE_OPS_PER_THREAD = 2500, RACE_MAKERS = 2, RACE_CHECKERS = 2 };

typedef struct race {
    samsa_purgatory_t  *purg;
    op_stats_t         *st;
    _Atomic int64_t     gen;
    _Atomic int         makers_done;
} race_t;

typedef struct race_arg {
    race_t  *race;
    int      id;
} race_arg_t;

/* Make ops due within 0-3 ms that complete once the generation moves past
 * the one they saw: checks and the reaper race for each. */
static void *
race_maker(void *varg)
{
    race_arg_t  *a = varg;
    race_t      *r = a->race;
    char         key[16];
    const char  *keys[2] = { key, "all" };
    top_t       *t;
    int          i, idx;

    for (i = 0; i < RACE_OPS_PER_THREAD; i++) {
        idx = a->id * RACE_OPS_PER_THREAD + i;
        snprintf(key, sizeof(key), "p-%d", i % 4);
        t = top_new(&r->st[idx], &r->gen, atomic_load(&r->gen) + 1, i % 4,
                    NULL);
        samsa_purgatory_try_complete_else_watch(r->purg, &t->op, keys,
                                                1 + (size_t) (i % 2));
        samsa_delayed_op_unref(&t->op);
    }
    atomic_fetch_add(&r->makers_done, 1);
    return NULL;
}

static void *
race_checker(void *varg)
{
    race_arg_t  *a = varg;
    race_t      *r = a->race;
    char         key[16];
    int          k = 0;

    while (atomic_load(&r->makers_done) < RACE_MAKERS
           || samsa_purgatory_delayed(r->purg) > 0) {
        atomic_fetch_add(&r->gen, 1);
        snprintf(key, sizeof(key), "p-%d", k++ % 4);
        samsa_purgatory_check_and_complete(r->purg, key);
        samsa_purgatory_check_and_complete(r->purg, "all");
    }
    return NULL;
}

static void
test_purgatory_complete_races_expiry(void **state)
{
    int          n = RACE_MAKERS * RACE_OPS_PER_THREAD, i, nexp = 0;
    race_t       r = { .purg = samsa_purgatory_new("race", 100) };
    race_arg_t   args[RACE_MAKERS + RACE_CHECKERS];
    pthread_t    th[RACE_MAKERS + RACE_CHECKERS];

    (void) state;
    r.st = samsa_calloc((size_t) n, sizeof(*r.st));
    for (i = 0; i < RACE_MAKERS + RACE_CHECKERS; i++) {
        args[i] = (race_arg_t) { &r, i };
        pthread_create(&th[i], NULL, i < RACE_MAKERS ? race_maker
                                                     : race_checker, &args[i]);
    }
    for (i = 0; i < RACE_MAKERS + RACE_CHECKERS; i++) {
        pthread_join(th[i], NULL);
    }
    samsa_purgatory_free(r.purg);
    for (i = 0; i < n; i++) {
        assert_int_equal(atomic_load(&r.st[i].completes), 1);
        assert_true(atomic_load(&r.st[i].expires) <= 1);
        assert_int_equal(atomic_load(&r.st[i].overlaps), 0);
        assert_int_equal(atomic_load(&r.st[i].bad_order), 0);
        assert_int_equal(atomic_load(&r.st[i].frees), 1);
        nexp += atomic_load(&r.st[i].expires);
    }
    printf("# purgatory race: %d ops, %d expired, %d completed by checks\n",
           n, nexp, n - nexp);
    samsa_free(r.st);
}

/* Throughput of watch + timer + complete + sweep on one thread: batches of
 * 100 ops per key, each batch completed by one check. */
static void
test_purgatory_add_complete_rate(void **state)
{
    enum { N = 100000, BATCH = 100 };
    samsa_purgatory_t  *purg = samsa_purgatory_new("rate", 1000);
    op_stats_t         *st = samsa_calloc(N, sizeof(*st));
    _Atomic int64_t     gen = 0;
    char                key[16];
    const char         *keys[] = { key };
    top_t              *t;
    int64_t             t0 = samsa_now_ns(), elapsed_ns;
    int                 i;
    size_t              done = 0;

    (void) state;
    for (i = 0; i < N; i++) {
        snprintf(key, sizeof(key), "t-%d", i / BATCH);
        t = top_new(&st[i], &gen, i / BATCH + 1, 30000, NULL);
        samsa_purgatory_try_complete_else_watch(purg, &t->op, keys, 1);
        samsa_delayed_op_unref(&t->op);
        if (i % BATCH == BATCH - 1) {
            atomic_store(&gen, i / BATCH + 1);
            done += samsa_purgatory_check_and_complete(purg, key);
        }
    }
    elapsed_ns = samsa_now_ns() - t0;
    assert_int_equal(done, N);
    assert_int_equal(samsa_purgatory_watched(purg), 0);
    assert_int_equal(samsa_purgatory_delayed(purg), 0);
    printf("# purgatory: %d watch+complete in %.1f ms: %.0f ops/s\n", N,
           (double) elapsed_ns / 1e6, (double) N * 1e9 / (double) elapsed_ns);
    samsa_purgatory_free(purg);
    for (i = 0; i < N; i++) {
        assert_int_equal(atomic_load(&st[i].frees), 1);
    }
    samsa_free(st);
}

/* The watch key is "%.*s-%d" of the topic and partition. */
static void
test_purgatory_tp_key_format(void **state)
{
    static const int32_t  parts[] = { 0, 7, 10, 99, 12345, INT32_MAX, -1,
                                      INT32_MIN };
    char                  got[SAMSA_PURGATORY_TP_KEY_MAX], want[300];
    char                  topic[250];
    size_t                i;

    (void) state;
    memset(topic, 'x', sizeof(topic) - 1);
    topic[sizeof(topic) - 1] = '\0';
    for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
        samsa_purgatory_tp_key(got, "orders", 6, parts[i]);
        snprintf(want, sizeof(want), "orders-%d", (int) parts[i]);
        assert_string_equal(got, want);
        /* the longest topic name Kafka allows, 249 characters */
        samsa_purgatory_tp_key(got, topic, 249, parts[i]);
        snprintf(want, sizeof(want), "%s-%d", topic, (int) parts[i]);
        assert_string_equal(got, want);
    }
    /* only the topic_len bytes count */
    samsa_purgatory_tp_key(got, "orders-eu", 6, 3);
    assert_string_equal(got, "orders-3");
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_purgatory_tp_key_format),
        cmocka_unit_test(test_purgatory_complete_immediately),
        cmocka_unit_test(test_purgatory_complete_on_later_check),
        cmocka_unit_test(test_purgatory_expires),
        cmocka_unit_test(test_purgatory_multiple_keys),
        cmocka_unit_test(test_purgatory_purges_completed_watchers),
        cmocka_unit_test(test_purgatory_shutdown_expires_everything),
        cmocka_unit_test(test_purgatory_complete_races_expiry),
        cmocka_unit_test(test_purgatory_add_complete_rate),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
