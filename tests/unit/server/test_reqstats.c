/*
 * tests/unit/server/test_reqstats.c - per-network-thread request stats:
 * buckets, phases, errors, and sums over the threads' blocks.
 */
#include "unit.h"

#include "proto/proto.h"
#include "server/reqstats.h"

static size_t
api_index(int16_t key)
{
    return (size_t) (samsa_proto_api_find(key) - samsa_proto_apis);
}

static void
test_reqstats_bucket_bounds(void **state)
{
    (void) state;
    assert_int_equal(samsa_reqstats_bucket(0), 0);
    assert_int_equal(samsa_reqstats_bucket(100000), 0);         /* 100 us */
    assert_int_equal(samsa_reqstats_bucket(100001), 1);
    assert_int_equal(samsa_reqstats_bucket(1000000), 3);        /* 1 ms */
    assert_int_equal(samsa_reqstats_bucket(10000000000LL), 15); /* 10 s */
    assert_int_equal(samsa_reqstats_bucket(10000000001LL),
                     SAMSA_REQSTATS_NBOUNDS);
}

static samsa_req_t
make_req(int16_t key, uint16_t proc)
{
    samsa_req_t  req;

    memset(&req, 0, sizeof(req));
    req.hdr.ApiKey = key;
    req.conn_id.proc = proc;
    req.start_ns = 1000000000;
    req.dequeue_ns = req.start_ns + 200000;             /* 200 us queued */
    req.local_done_ns = req.dequeue_ns + 3000000;       /* 3 ms local */
    req.resp_done_ns = req.local_done_ns;               /* no remote */
    req.resp_dequeue_ns = req.resp_done_ns + 50000;
    req.end_ns = req.resp_dequeue_ns + 50000;
    return req;
}

/* Two network threads' blocks sum; every phase lands in its bucket. */
static void
test_reqstats_record_and_sum(void **state)
{
    samsa_reqstats_t      *rs = samsa_reqstats_new("broker", 2);
    samsa_reqstats_api_t   a;
    samsa_req_t            r0 = make_req(0, 0), r1 = make_req(0, 1);

    (void) state;
    samsa_errtally_add(&r0.errors, 0);
    samsa_errtally_add(&r0.errors, 0);
    samsa_errtally_add(&r1.errors, 3);
    samsa_errtally_add(&r1.errors, 9999);               /* no name: other */
    samsa_reqstats_record(rs, &r0);
    samsa_reqstats_record(rs, &r1);
    samsa_reqstats_get(rs, api_index(0), &a);
    assert_int_equal(a.requests, 2);
    assert_int_equal(a.errors[0 + 1], 2);
    assert_int_equal(a.errors[3 + 1], 1);
    assert_int_equal(a.errors_other, 1);
    assert_int_equal(a.buckets[SAMSA_PHASE_REQUEST_QUEUE][1], 2); /* 250us */
    assert_int_equal(a.buckets[SAMSA_PHASE_LOCAL][5], 2);         /* 5 ms */
    assert_int_equal(a.buckets[SAMSA_PHASE_REMOTE][0], 2);        /* 0 */
    assert_int_equal(a.buckets[SAMSA_PHASE_TOTAL][5], 2);
    assert_int_equal(a.sum_ns[SAMSA_PHASE_TOTAL], 2 * 3300000);
    samsa_reqstats_get(rs, api_index(1), &a);                    /* Fetch */
    assert_int_equal(a.requests, 0);
    samsa_reqstats_free(rs);
}

/* A request missing stamps (dropped) counts 0 for those phases; an
 * unknown API or a processor out of range is ignored. */
static void
test_reqstats_missing_stamps_and_strays(void **state)
{
    samsa_reqstats_t      *rs = samsa_reqstats_new("controller", 1);
    samsa_reqstats_api_t   a;
    samsa_req_t            r = make_req(18, 0);
    size_t                 i, n = 0;

    (void) state;
    r.dequeue_ns = r.local_done_ns = r.resp_done_ns = 0;
    samsa_reqstats_record(rs, &r);
    r = make_req(18, 5);
    samsa_reqstats_record(rs, &r);
    r = make_req(-7, 0);
    samsa_reqstats_record(rs, &r);
    samsa_reqstats_get(rs, api_index(18), &a);
    assert_int_equal(a.requests, 1);
    assert_int_equal(a.buckets[SAMSA_PHASE_REQUEST_QUEUE][0], 1);
    assert_int_equal(a.sum_ns[SAMSA_PHASE_LOCAL], 0);
    for (i = 0; i < samsa_reqstats_napis(); i++) {
        samsa_reqstats_get(rs, i, &a);
        n += a.requests;
    }
    assert_int_equal(n, 1);
    assert_string_equal(samsa_reqstats_kind(rs), "controller");
    samsa_reqstats_free(rs);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_reqstats_bucket_bounds),
        cmocka_unit_test(test_reqstats_record_and_sum),
        cmocka_unit_test(test_reqstats_missing_stamps_and_strays),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
