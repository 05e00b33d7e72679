/*
 * tests/unit/client/test_mdcache.c - the client's one metadata cache, in
 * both its modes: the producer's (keeps the topics waited for, asks again
 * soon after any topic error) and the consumer's (keeps every topic an
 * answer names, asks again soon only for a missing leader), and what both
 * share: snapshots, topic ids, brokers, controller, cluster id, when an
 * update is due, waiters.
 */
#include "unit.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include "client/mdcache.h"
#include "util/alloc.h"
#include "util/slice.h"

#define MAX_AGE_MS  1000

typedef struct fake_answer {
    samsa_MetadataResponse_t            resp;
    samsa_MetadataResponseTopic_t       topics[4];
    samsa_MetadataResponsePartition_t   parts[4][4];
    samsa_MetadataResponseBroker_t      brokers[2];
} fake_answer_t;

/* An answer with two brokers (1, 2), controller 2, cluster "c1". */
static void
answer_init(fake_answer_t *a)
{
    memset(a, 0, sizeof(*a));
    a->brokers[0].NodeId = 1;
    a->brokers[0].Host = samsa_slice_cstr("h1");
    a->brokers[0].Port = 9091;
    a->brokers[1].NodeId = 2;
    a->brokers[1].Host = samsa_slice_cstr("h2");
    a->brokers[1].Port = 9092;
    a->brokers[1].Rack = samsa_slice_cstr("r2");
    a->resp.Brokers = a->brokers;
    a->resp.Brokers_cnt = 2;
    a->resp.ControllerId = 2;
    a->resp.ClusterId = samsa_slice_cstr("c1");
    a->resp.Topics = a->topics;
}

/* Add topic name with err and leaders[0..n) (-1: none). */
static void
answer_topic(fake_answer_t *a, const char *name, samsa_err_t err,
             const int32_t *leaders, int32_t n, uint8_t id)
{
    samsa_MetadataResponseTopic_t  *t = &a->topics[a->resp.Topics_cnt];
    int32_t                         p;

    t->Name = samsa_slice_cstr(name);
    t->ErrorCode = (int16_t) err;
    t->TopicId.b[0] = id;
    t->IsInternal = name[0] == '_';
    t->Partitions = a->parts[a->resp.Topics_cnt];
    for (p = 0; p < n; p++) {
        t->Partitions[p].PartitionIndex = p;
        t->Partitions[p].LeaderId = leaders[p];
    }
    t->Partitions_cnt = n;
    a->resp.Topics_cnt++;
}

static int  wakes;

static void
count_wake(void *ctx)
{
    (void) ctx;
    wakes++;
}

static void
test_mdcache_asked_keeps_waited_topics(void **state)
{
    samsa_mdcache_t   *mdc;
    samsa_mdtopic_t   *md;
    fake_answer_t      a;
    const int32_t      leaders[] = { 1, 2 };
    int64_t            next;
    char             **topics;
    int32_t            n;

    (void) state;
    wakes = 0;
    mdc = samsa_mdcache_new(SAMSA_MDCACHE_ASKED, MAX_AGE_MS, count_wake,
                            NULL);
    assert_false(samsa_mdcache_update_due(mdc, 0, &next));
    assert_int_equal(next, INT64_MAX);  /* nothing asked about */
    assert_int_equal(samsa_mdcache_wait(mdc, "t", -1, 0, &md),
                     SAMSA_ERR__TIMED_OUT);
    assert_int_equal(wakes, 1);
    assert_true(samsa_mdcache_update_due(mdc, 0, &next));
    topics = samsa_mdcache_topics(mdc, &n);
    assert_int_equal(n, 1);
    assert_string_equal(topics[0], "t");
    samsa_mdcache_topics_free(topics);
    samsa_mdcache_update_sent(mdc);
    assert_false(samsa_mdcache_update_requested(mdc));

    answer_init(&a);
    answer_topic(&a, "t", SAMSA_ERR_NONE, leaders, 2, 7);
    answer_topic(&a, "other", SAMSA_ERR_NONE, leaders, 1, 8);
    samsa_mdcache_update(mdc, &a.resp, 10);
    assert_int_equal(samsa_mdcache_gen(mdc), 1);
    assert_int_equal(samsa_mdcache_count(mdc), 1);     /* not "other" */
    assert_null(samsa_mdcache_peek(mdc, "other", 5));
    assert_int_equal(samsa_mdcache_leader(mdc, "t", 1), 2);
    assert_int_equal(samsa_mdcache_leader(mdc, "t", 2), -1);
    assert_int_equal(samsa_mdcache_wait(mdc, "t", 1, 0, &md),
                     SAMSA_ERR_NONE);
    assert_int_equal(md->npartitions, 2);
    assert_int_equal(md->navail, 2);
    samsa_mdtopic_unref(md);
    assert_false(samsa_mdcache_update_due(mdc, 10 + MAX_AGE_MS - 1, &next));
    assert_int_equal(next, 1);
    assert_true(samsa_mdcache_update_due(mdc, 10 + MAX_AGE_MS, &next));

    /* any topic error: ask again soon (auto-creation) */
    answer_init(&a);
    answer_topic(&a, "t", SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION, NULL, 0, 0);
    samsa_mdcache_update(mdc, &a.resp, 20);
    assert_true(samsa_mdcache_update_requested(mdc));
    samsa_mdcache_free(mdc);
}

static void
test_mdcache_answered_keeps_every_topic(void **state)
{
    samsa_mdcache_t         *mdc;
    const samsa_mdtopic_t   *t;
    fake_answer_t            a;
    const int32_t            leaders[] = { 1, 2, 1 };
    samsa_uuid_t             id = { { 0 } };
    int64_t                  next;

    (void) state;
    mdc = samsa_mdcache_new(SAMSA_MDCACHE_ANSWERED, MAX_AGE_MS, NULL, NULL);
    assert_true(samsa_mdcache_update_due(mdc, 0, &next));  /* first */
    samsa_mdcache_update_sent(mdc);
    answer_init(&a);
    answer_topic(&a, "a", SAMSA_ERR_NONE, leaders, 3, 1);
    answer_topic(&a, "__consumer_offsets", SAMSA_ERR_NONE, leaders, 1, 2);
    answer_topic(&a, "gone", SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION, NULL, 0,
                 0);
    samsa_mdcache_update(mdc, &a.resp, 100);
    assert_int_equal(samsa_mdcache_count(mdc), 3);
    /* an unknown topic waits for metadata.max.age.ms */
    assert_false(samsa_mdcache_update_requested(mdc));
    assert_false(samsa_mdcache_update_due(mdc, 100 + MAX_AGE_MS - 1, &next));
    t = samsa_mdcache_peek(mdc, "a", 1);
    assert_non_null(t);
    assert_int_equal(t->npartitions, 3);
    assert_int_equal(t->leaders[2], 1);
    assert_false(t->internal);
    t = samsa_mdcache_peek(mdc, "__consumer_offsets", 18);
    assert_non_null(t);
    assert_true(t->internal);
    t = samsa_mdcache_peek(mdc, "gone", 4);
    assert_non_null(t);
    assert_int_equal(t->err, SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION);
    id.b[0] = 1;
    assert_string_equal(samsa_mdcache_topic_by_id(mdc, id), "a");
    id.b[0] = 9;
    assert_null(samsa_mdcache_topic_by_id(mdc, id));
    id.b[0] = 0;
    assert_null(samsa_mdcache_topic_by_id(mdc, id));  /* zero: unknown */

    /* a partition without a leader, or LEADER_NOT_AVAILABLE: soon */
    answer_init(&a);
    answer_topic(&a, "a", SAMSA_ERR_NONE, (const int32_t[]) { 1, -1 }, 2, 1);
    samsa_mdcache_update(mdc, &a.resp, 200);
    assert_true(samsa_mdcache_update_requested(mdc));
    assert_int_equal(samsa_mdcache_count(mdc), 3);     /* others stay */
    assert_int_equal(samsa_mdcache_peek(mdc, "a", 1)->npartitions, 2);
    samsa_mdcache_update_sent(mdc);
    answer_init(&a);
    answer_topic(&a, "b", SAMSA_ERR_LEADER_NOT_AVAILABLE, NULL, 0, 3);
    samsa_mdcache_update(mdc, &a.resp, 300);
    assert_true(samsa_mdcache_update_requested(mdc));
    samsa_mdcache_update_sent(mdc);
    samsa_mdcache_update_failed(mdc);
    assert_true(samsa_mdcache_update_requested(mdc));
    samsa_mdcache_free(mdc);
}

static void
test_mdcache_cluster(void **state)
{
    samsa_mdcache_t    *mdc;
    samsa_mdbroker_t   *b;
    fake_answer_t       a;
    char               *cid;
    int32_t             n, ctl;

    (void) state;
    mdc = samsa_mdcache_new(SAMSA_MDCACHE_ANSWERED, MAX_AGE_MS, NULL, NULL);
    b = samsa_mdcache_cluster(mdc, &n, &ctl, &cid);
    assert_int_equal(n, 0);
    assert_int_equal(ctl, -1);
    assert_null(cid);
    samsa_mdcache_brokers_free(b, n);
    answer_init(&a);
    samsa_mdcache_update(mdc, &a.resp, 1);
    b = samsa_mdcache_cluster(mdc, &n, &ctl, &cid);
    assert_int_equal(ctl, 2);
    assert_string_equal(cid, "c1");
    samsa_free(cid);
    assert_int_equal(n, 2);
    assert_int_equal(b[0].node_id, 1);
    assert_string_equal(b[0].host, "h1");
    assert_int_equal(b[0].port, 9091);
    assert_null(b[0].rack);
    assert_string_equal(b[1].rack, "r2");
    samsa_mdcache_brokers_free(b, n);
    samsa_mdcache_free(mdc);
}

/* A hostile partition index neither overflows nor allocates gigabytes. */
static void
test_mdcache_huge_partition_index(void **state)
{
    samsa_mdcache_t         *mdc;
    const samsa_mdtopic_t   *t;
    fake_answer_t            a;
    const int32_t            leaders[] = { 1, 1 };

    (void) state;
    mdc = samsa_mdcache_new(SAMSA_MDCACHE_ANSWERED, MAX_AGE_MS, NULL, NULL);
    answer_init(&a);
    answer_topic(&a, "t", SAMSA_ERR_NONE, leaders, 2, 1);
    a.parts[0][1].PartitionIndex = INT32_MAX;
    samsa_mdcache_update(mdc, &a.resp, 1);
    t = samsa_mdcache_peek(mdc, "t", 1);
    assert_int_equal(t->npartitions, 1);
    samsa_mdcache_free(mdc);
}

typedef struct waiter {
    samsa_mdcache_t  *mdc;
    samsa_err_t       err;
    int32_t           npartitions;
} waiter_t;

static void *
waiter_main(void *arg)
{
    waiter_t         *w = arg;
    samsa_mdtopic_t  *md;

    w->err = samsa_mdcache_wait(w->mdc, "t", 0, 10000, &md);
    if (w->err == SAMSA_ERR_NONE) {
        w->npartitions = md->npartitions;
        samsa_mdtopic_unref(md);
    }
    return NULL;
}

static void
wake_nothing(void *ctx)
{
    (void) ctx;
}

/* A waiter is woken by the answer, and by close. */
static void
test_mdcache_waiters(void **state)
{
    waiter_t       w = { 0 };
    pthread_t      th;
    fake_answer_t  a;
    const int32_t  leaders[] = { 1 };
    int64_t        next;

    (void) state;
    w.mdc = samsa_mdcache_new(SAMSA_MDCACHE_ASKED, MAX_AGE_MS, wake_nothing,
                              NULL);
    assert_int_equal(pthread_create(&th, NULL, waiter_main, &w), 0);
    while (!samsa_mdcache_update_due(w.mdc, 0, &next)
           || samsa_mdcache_count(w.mdc) == 0) {
        sched_yield();
    }
    answer_init(&a);
    answer_topic(&a, "t", SAMSA_ERR_NONE, leaders, 1, 1);
    samsa_mdcache_update(w.mdc, &a.resp, 1);
    pthread_join(th, NULL);
    assert_int_equal(w.err, SAMSA_ERR_NONE);
    assert_int_equal(w.npartitions, 1);
    samsa_mdcache_free(w.mdc);

    memset(&w, 0, sizeof(w));
    w.mdc = samsa_mdcache_new(SAMSA_MDCACHE_ASKED, MAX_AGE_MS, wake_nothing,
                              NULL);
    assert_int_equal(pthread_create(&th, NULL, waiter_main, &w), 0);
    while (samsa_mdcache_count(w.mdc) == 0) {
        sched_yield();
    }
    samsa_mdcache_close(w.mdc);
    pthread_join(th, NULL);
    assert_int_equal(w.err, SAMSA_ERR__SHUTDOWN);
    samsa_mdcache_free(w.mdc);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_mdcache_asked_keeps_waited_topics),
        cmocka_unit_test(test_mdcache_answered_keeps_every_topic),
        cmocka_unit_test(test_mdcache_cluster),
        cmocka_unit_test(test_mdcache_huge_partition_index),
        cmocka_unit_test(test_mdcache_waiters),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
