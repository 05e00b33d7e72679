/* Unit tests for the generated FindCoordinator codecs
 * (proto/gen/FindCoordinator.c): v0-v6 round-trip (v1 KeyType, v3
 * flexible, v4 batched keys and coordinators); kcat and kafka-python
 * requests decode and re-encode byte for byte, v4 assembled by hand
 * (golden_capture.py handmade_data); responses match bytes assembled by
 * hand from Kafka's message definitions. */
#include "unit.h"

#include <stdlib.h>

#include "golden.h"
#include "proto/gen/FindCoordinator.h"
#include "rt.h"

RT_DEFINE(FindCoordinatorRequest)
RT_DEFINE(FindCoordinatorResponse)

static void
test_FindCoordinatorRequest_round_trip(void **state)
{
    samsa_FindCoordinatorRequest_t  in, out;
    samsa_slice_t                   keys[2] = { S("group-a"), S("group-b") };
    samsa_arena_t                   arena;
    samsa_buf_t                     buf;
    int16_t                         v;

    (void) state;
    samsa_arena_init(&arena);
    samsa_FindCoordinatorRequest_init(&in);
    in.Key = S("txn-1");
    in.KeyType = 1;                             /* transaction */
    in.CoordinatorKeys = keys;
    in.CoordinatorKeys_cnt = 2;
    for (v = 0; v <= SAMSA_FindCoordinator_VERSION_MAX; v++) {
        rt_FindCoordinatorRequest(v, &in, &out, &arena, &buf);
        assert_true(samsa_slice_eq_cstr(out.Key, v <= 3 ? "txn-1" : ""));
        assert_int_equal(out.KeyType, v >= 1 ? 1 : 0);
        if (v >= 4) {
            assert_int_equal(out.CoordinatorKeys_cnt, 2);
            assert_true(samsa_slice_eq_cstr(out.CoordinatorKeys[1],
                                            "group-b"));
        } else {
            assert_int_equal(out.CoordinatorKeys_cnt, 0);
        }
        samsa_buf_fini(&buf);
    }
    samsa_arena_fini(&arena);
}

/* Group "g": v0, v1, v3 and (batched) v4. */
static void
test_FindCoordinatorRequest_bytes(void **state)
{
    static const uint8_t            v0[] = { 0x00, 0x01, 'g' };
    static const uint8_t            v1[] = { 0x00, 0x01, 'g', 0x00 };
    static const uint8_t            v3[] = { 0x02, 'g', 0x00, 0x00 };
    static const uint8_t            v4[] = { 0x00, 0x02, 0x02, 'g', 0x00 };
    samsa_FindCoordinatorRequest_t  m;
    samsa_slice_t                   key = S("g");

    (void) state;
    samsa_FindCoordinatorRequest_init(&m);
    m.Key = key;
    m.CoordinatorKeys = &key;
    m.CoordinatorKeys_cnt = 1;
    RT_ENCODES_TO(FindCoordinatorRequest, 0, &m, v0, sizeof(v0));
    RT_ENCODES_TO(FindCoordinatorRequest, 1, &m, v1, sizeof(v1));
    RT_ENCODES_TO(FindCoordinatorRequest, 2, &m, v1, sizeof(v1));
    RT_ENCODES_TO(FindCoordinatorRequest, 3, &m, v3, sizeof(v3));
    RT_ENCODES_TO(FindCoordinatorRequest, 4, &m, v4, sizeof(v4));
    RT_ENCODES_TO(FindCoordinatorRequest, 6, &m, v4, sizeof(v4));
}

/* The group coordinator of samsa-golden-group. */
static void
check_golden(const uint8_t *frame, size_t len, size_t hdr_len,
             int16_t version)
{
    samsa_FindCoordinatorRequest_t  m;
    samsa_arena_t                   arena;

    samsa_arena_init(&arena);
    assert_int_equal(RT_DECODE(FindCoordinatorRequest, version,
                               frame + hdr_len, len - hdr_len, &arena, &m),
                     SAMSA_ERR_NONE);
    assert_int_equal(m.KeyType, 0);
    if (version >= 4) {
        assert_int_equal(m.CoordinatorKeys_cnt, 1);
        assert_true(samsa_slice_eq_cstr(m.CoordinatorKeys[0],
                                        "samsa-golden-group"));
    } else {
        assert_true(samsa_slice_eq_cstr(m.Key, "samsa-golden-group"));
    }
    RT_ENCODES_TO(FindCoordinatorRequest, version, &m, frame + hdr_len,
                  len - hdr_len);
    samsa_arena_fini(&arena);
}

#define GOLDEN(g, v)                                                      \
    check_golden(GOLDEN_##g, sizeof(GOLDEN_##g), GOLDEN_##g##_HDR_LEN, v)

static void
test_FindCoordinatorRequest_golden(void **state)
{
    (void) state;
    GOLDEN(kcat_group_FindCoordinator_v2, 2);
    GOLDEN(kafka_python_data_FindCoordinator_v0, 0);
    GOLDEN(handmade_FindCoordinator_v4, 4);
}

static void
test_FindCoordinatorResponse_round_trip(void **state)
{
    samsa_FindCoordinatorResponse_t  in, out;
    samsa_Coordinator_t              c[2] = {
        { S("group-a"), 1, S("h1"), 9092, 0, SAMSA_SLICE_NULL },
        { S("group-b"), -1, S(""), -1, 15, S("not available") },
    };
    samsa_arena_t                    arena;
    samsa_buf_t                      buf;
    int16_t                          v;

    (void) state;
    samsa_arena_init(&arena);
    samsa_FindCoordinatorResponse_init(&in);
    in.ThrottleTimeMs = 4;
    in.ErrorCode = 15;                          /* COORDINATOR_NOT_AVAIL. */
    in.ErrorMessage = S("loading");
    in.NodeId = 2;
    in.Host = S("h2");
    in.Port = 9093;
    in.Coordinators = c;
    in.Coordinators_cnt = 2;
    for (v = 0; v <= SAMSA_FindCoordinator_VERSION_MAX; v++) {
        rt_FindCoordinatorResponse(v, &in, &out, &arena, &buf);
        assert_int_equal(out.ThrottleTimeMs, v >= 1 ? 4 : 0);
        if (v <= 3) {
            assert_int_equal(out.ErrorCode, 15);
            assert_true(samsa_slice_eq_cstr(out.ErrorMessage,
                                            v >= 1 ? "loading" : ""));
            assert_int_equal(out.NodeId, 2);
            assert_true(samsa_slice_eq_cstr(out.Host, "h2"));
            assert_int_equal(out.Port, 9093);
            assert_int_equal(out.Coordinators_cnt, 0);
        } else {
            assert_int_equal(out.ErrorCode, 0);
            assert_int_equal(out.NodeId, 0);
            assert_int_equal(out.Coordinators_cnt, 2);
            assert_true(samsa_slice_eq_cstr(out.Coordinators[0].Key,
                                            "group-a"));
            assert_int_equal(out.Coordinators[0].NodeId, 1);
            assert_int_equal(out.Coordinators[0].Port, 9092);
            assert_null(out.Coordinators[0].ErrorMessage.ptr);
            assert_int_equal(out.Coordinators[1].ErrorCode, 15);
            assert_true(samsa_slice_eq_cstr(out.Coordinators[1].ErrorMessage,
                                            "not available"));
        }
        samsa_buf_fini(&buf);
    }
    samsa_arena_fini(&arena);
}

/* Broker 1 at "h":9092 coordinates "g": v0, v1 (message null), v3, v4. */
static void
test_FindCoordinatorResponse_bytes(void **state)
{
    static const uint8_t             v0[] = {
        0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 'h',
        0x00, 0x00, 0x23, 0x84,
    };
    static const uint8_t             v1[] = {
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff,
        0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 'h', 0x00, 0x00, 0x23, 0x84,
    };
    static const uint8_t             v3[] = {
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x01, 0x02, 'h', 0x00, 0x00, 0x23, 0x84, 0x00,
    };
    static const uint8_t             v4[] = {
        0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 'g',
        0x00, 0x00, 0x00, 0x01, 0x02, 'h', 0x00, 0x00, 0x23, 0x84,
        0x00, 0x00, 0x00, 0x00, 0x00,               /* error, null, tags */
    };
    samsa_FindCoordinatorResponse_t  m;
    samsa_Coordinator_t              c = { S("g"), 1, S("h"), 9092, 0,
                                           SAMSA_SLICE_NULL };

    (void) state;
    samsa_FindCoordinatorResponse_init(&m);
    m.ErrorMessage = SAMSA_SLICE_NULL;
    m.NodeId = 1;
    m.Host = S("h");
    m.Port = 9092;
    m.Coordinators = &c;
    m.Coordinators_cnt = 1;
    RT_ENCODES_TO(FindCoordinatorResponse, 0, &m, v0, sizeof(v0));
    RT_ENCODES_TO(FindCoordinatorResponse, 1, &m, v1, sizeof(v1));
    RT_ENCODES_TO(FindCoordinatorResponse, 2, &m, v1, sizeof(v1));
    RT_ENCODES_TO(FindCoordinatorResponse, 3, &m, v3, sizeof(v3));
    RT_ENCODES_TO(FindCoordinatorResponse, 4, &m, v4, sizeof(v4));
    RT_ENCODES_TO(FindCoordinatorResponse, 6, &m, v4, sizeof(v4));
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_FindCoordinatorRequest_round_trip),
        cmocka_unit_test(test_FindCoordinatorRequest_bytes),
        cmocka_unit_test(test_FindCoordinatorRequest_golden),
        cmocka_unit_test(test_FindCoordinatorResponse_round_trip),
        cmocka_unit_test(test_FindCoordinatorResponse_bytes),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
