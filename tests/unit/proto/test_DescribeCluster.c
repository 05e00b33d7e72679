/* Unit tests for the generated DescribeCluster codecs
 * (proto/gen/DescribeCluster.c): flexible from v0, EndpointType from v1.
 * No client available here sends DescribeCluster, so the golden bytes are
 * assembled by hand from Kafka's message definitions. */
#include "unit.h"

#include <stdlib.h>

#include "proto/gen/DescribeCluster.h"
#include "rt.h"

RT_DEFINE(DescribeClusterRequest)
RT_DEFINE(DescribeClusterResponse)

static void
test_DescribeClusterRequest_round_trip(void **state)
{
    samsa_DescribeClusterRequest_t  in, out;
    samsa_arena_t                   arena;
    samsa_buf_t                     buf;
    int16_t                         v;

    (void) state;
    samsa_arena_init(&arena);
    samsa_DescribeClusterRequest_init(&in);
    assert_int_equal(in.EndpointType, 1);
    for (v = 0; v <= SAMSA_DescribeCluster_VERSION_MAX; v++) {
        in.IncludeClusterAuthorizedOperations = true;
        in.EndpointType = 2;
        rt_DescribeClusterRequest(v, &in, &out, &arena, &buf);
        assert_true(out.IncludeClusterAuthorizedOperations);
        assert_int_equal(out.EndpointType, v >= 1 ? 2 : 1);
        samsa_buf_fini(&buf);
    }
    samsa_arena_fini(&arena);
}

static void
test_DescribeClusterRequest_bytes(void **state)
{
    static const uint8_t            v0[] = { 0x01, 0x00 };
    static const uint8_t            v1[] = { 0x01, 0x02, 0x00 };
    samsa_DescribeClusterRequest_t  m;

    (void) state;
    samsa_DescribeClusterRequest_init(&m);
    m.IncludeClusterAuthorizedOperations = true;
    m.EndpointType = 2;
    RT_ENCODES_TO(DescribeClusterRequest, 0, &m, v0, sizeof(v0));
    RT_ENCODES_TO(DescribeClusterRequest, 1, &m, v1, sizeof(v1));
}

static samsa_DescribeClusterBroker_t  brokers[2] = {
    { .BrokerId = 1, .Host = { "h1", 2 }, .Port = 9092, .Rack = { "r", 1 } },
    { .BrokerId = 2, .Host = { "h2", 2 }, .Port = 9093, .Rack = { NULL, 0 } },
};

static void
test_DescribeClusterResponse_round_trip(void **state)
{
    samsa_DescribeClusterResponse_t  in, out;
    samsa_arena_t                    arena;
    samsa_buf_t                      buf;
    int16_t                          v;

    (void) state;
    samsa_arena_init(&arena);
    for (v = 0; v <= SAMSA_DescribeCluster_VERSION_MAX; v++) {
        samsa_DescribeClusterResponse_init(&in);
        assert_null(in.ErrorMessage.ptr);
        assert_int_equal(in.ClusterAuthorizedOperations, INT32_MIN);
        in.ThrottleTimeMs = 5;
        in.ErrorCode = 31;
        in.ErrorMessage = S("no");
        in.EndpointType = 2;
        in.ClusterId = S("cid");
        in.ControllerId = 2;
        in.Brokers = brokers;
        in.Brokers_cnt = 2;
        in.ClusterAuthorizedOperations = 0xff;
        rt_DescribeClusterResponse(v, &in, &out, &arena, &buf);
        assert_int_equal(out.ThrottleTimeMs, 5);
        assert_int_equal(out.ErrorCode, 31);
        assert_true(samsa_slice_eq_cstr(out.ErrorMessage, "no"));
        assert_int_equal(out.EndpointType, v >= 1 ? 2 : 1);
        assert_true(samsa_slice_eq_cstr(out.ClusterId, "cid"));
        assert_int_equal(out.ControllerId, 2);
        assert_int_equal(out.Brokers_cnt, 2);
        assert_true(samsa_slice_eq_cstr(out.Brokers[0].Rack, "r"));
        assert_null(out.Brokers[1].Rack.ptr);
        assert_int_equal(out.Brokers[1].Port, 9093);
        assert_int_equal(out.ClusterAuthorizedOperations, 0xff);
        samsa_buf_fini(&buf);
    }
    samsa_arena_fini(&arena);
}

static void
test_DescribeClusterResponse_bytes(void **state)
{
    static const uint8_t  v1[] = {
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00,         /* throttle, error */
        0x00,                                       /* ErrorMessage null */
        0x01,                                       /* EndpointType */
        0x02, 'c', 0x00, 0x00, 0x00, 0x01,          /* ClusterId, ctrl */
        0x02, 0x00, 0x00, 0x00, 0x01, 0x03, 'h', '1', 0x00, 0x00, 0x23,
        0x84, 0x02, 'r', 0x00,                      /* Brokers [1] */
        0x80, 0x00, 0x00, 0x00, 0x00,
    };
    samsa_DescribeClusterResponse_t  m;

    (void) state;
    samsa_DescribeClusterResponse_init(&m);
    m.ClusterId = S("c");
    m.ControllerId = 1;
    m.Brokers = brokers;
    m.Brokers_cnt = 1;
    RT_ENCODES_TO(DescribeClusterResponse, 1, &m, v1, sizeof(v1));
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_DescribeClusterRequest_round_trip),
        cmocka_unit_test(test_DescribeClusterRequest_bytes),
        cmocka_unit_test(test_DescribeClusterResponse_round_trip),
        cmocka_unit_test(test_DescribeClusterResponse_bytes),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
