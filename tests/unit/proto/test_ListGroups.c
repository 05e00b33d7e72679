/* Unit tests for the generated group admin codecs: ListGroups,
 * DescribeGroups, DeleteGroups and OffsetDelete
 * (proto/gen/{ListGroups,DescribeGroups,DeleteGroups,OffsetDelete}.c):
 * round trips over every version and bytes assembled by hand from Kafka's
 * message definitions. */
#include "unit.h"

#include <stdlib.h>

#include "proto/gen/DeleteGroups.h"
#include "proto/gen/DescribeGroups.h"
#include "proto/gen/ListGroups.h"
#include "proto/gen/OffsetDelete.h"
#include "rt.h"

RT_DEFINE(ListGroupsRequest)
RT_DEFINE(ListGroupsResponse)
RT_DEFINE(DescribeGroupsRequest)
RT_DEFINE(DescribeGroupsResponse)
RT_DEFINE(DeleteGroupsRequest)
RT_DEFINE(DeleteGroupsResponse)
RT_DEFINE(OffsetDeleteRequest)
RT_DEFINE(OffsetDeleteResponse)

static void
test_ListGroups_round_trip(void **state)
{
    samsa_ListGroupsRequest_t   in, out;
    samsa_ListGroupsResponse_t  rin, rout;
    samsa_slice_t               states[1] = { S("Stable") };
    samsa_slice_t               types[1] = { S("classic") };
    samsa_ListedGroup_t         g[2] = {
        { S("g1"), S("consumer"), S("Stable"), S("classic") },
        { S("g2"), S(""), S("Empty"), S("classic") },
    };
    samsa_arena_t               arena;
    samsa_buf_t                 buf;
    int16_t                     v;

    (void) state;
    samsa_arena_init(&arena);
    samsa_ListGroupsRequest_init(&in);
    in.StatesFilter = states;
    in.StatesFilter_cnt = 1;
    in.TypesFilter = types;
    in.TypesFilter_cnt = 1;
    samsa_ListGroupsResponse_init(&rin);
    rin.Groups = g;
    rin.Groups_cnt = 2;
    for (v = 0; v <= SAMSA_ListGroups_VERSION_MAX; v++) {
        rt_ListGroupsRequest(v, &in, &out, &arena, &buf);
        assert_int_equal(out.StatesFilter_cnt, v >= 4 ? 1 : 0);
        assert_int_equal(out.TypesFilter_cnt, v >= 5 ? 1 : 0);
        samsa_buf_fini(&buf);
        rt_ListGroupsResponse(v, &rin, &rout, &arena, &buf);
        assert_int_equal(rout.Groups_cnt, 2);
        assert_true(samsa_slice_eq_cstr(rout.Groups[0].ProtocolType,
                                        "consumer"));
        assert_true(samsa_slice_eq_cstr(rout.Groups[1].GroupState,
                                        v >= 4 ? "Empty" : ""));
        samsa_buf_fini(&buf);
    }
    samsa_arena_fini(&arena);
}

/* Response v0 with one group "g"/"consumer"; v4 with its state. */
static void
test_ListGroupsResponse_bytes(void **state)
{
    static const uint8_t        v0[] = {
        0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 'g',
        0x00, 0x08, 'c', 'o', 'n', 's', 'u', 'm', 'e', 'r',
    };
    static const uint8_t        v4[] = {
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 'g',
        0x09, 'c', 'o', 'n', 's', 'u', 'm', 'e', 'r',
        0x07, 'S', 't', 'a', 'b', 'l', 'e', 0x00, 0x00,
    };
    samsa_ListGroupsResponse_t  m;
    samsa_ListedGroup_t         g = { S("g"), S("consumer"), S("Stable"),
                                      S("classic") };

    (void) state;
    samsa_ListGroupsResponse_init(&m);
    m.Groups = &g;
    m.Groups_cnt = 1;
    RT_ENCODES_TO(ListGroupsResponse, 0, &m, v0, sizeof(v0));
    RT_ENCODES_TO(ListGroupsResponse, 4, &m, v4, sizeof(v4));
}

static void
test_DescribeGroups_round_trip(void **state)
{
    samsa_DescribeGroupsRequest_t   in, out;
    samsa_DescribeGroupsResponse_t  rin, rout;
    samsa_slice_t                   names[2] = { S("g1"), S("g2") };
    samsa_DescribedGroupMember_t    mem = { S("m-1"), S("i-1"), S("c"),
                                            S("/127.0.0.1"), S("meta"),
                                            S("assign") };
    samsa_DescribedGroup_t          g = { 0, S("g1"), S("Stable"),
                                          S("consumer"), S("range"), &mem,
                                          1, 0x1234 };
    samsa_arena_t                   arena;
    samsa_buf_t                     buf;
    int16_t                         v;

    (void) state;
    samsa_arena_init(&arena);
    samsa_DescribeGroupsRequest_init(&in);
    in.Groups = names;
    in.Groups_cnt = 2;
    in.IncludeAuthorizedOperations = true;
    samsa_DescribeGroupsResponse_init(&rin);
    rin.Groups = &g;
    rin.Groups_cnt = 1;
    for (v = 0; v <= SAMSA_DescribeGroups_VERSION_MAX; v++) {
        rt_DescribeGroupsRequest(v, &in, &out, &arena, &buf);
        assert_int_equal(out.Groups_cnt, 2);
        assert_int_equal(out.IncludeAuthorizedOperations, v >= 3);
        samsa_buf_fini(&buf);
        rt_DescribeGroupsResponse(v, &rin, &rout, &arena, &buf);
        assert_true(samsa_slice_eq_cstr(rout.Groups[0].ProtocolData,
                                        "range"));
        assert_true(samsa_slice_eq_cstr(rout.Groups[0].Members[0].ClientHost,
                                        "/127.0.0.1"));
        assert_int_equal(rout.Groups[0].Members[0].GroupInstanceId.ptr
                             != NULL, v >= 4);
        assert_int_equal(rout.Groups[0].AuthorizedOperations,
                         v >= 3 ? 0x1234 : INT32_MIN);
        samsa_buf_fini(&buf);
    }
    samsa_arena_fini(&arena);
}

static void
test_DeleteGroups_round_trip(void **state)
{
    samsa_DeleteGroupsRequest_t   in, out;
    samsa_DeleteGroupsResponse_t  rin, rout;
    samsa_slice_t                 names[2] = { S("g1"), S("g2") };
    samsa_DeletableGroupResult_t  r[2] = { { S("g1"), 0 }, { S("g2"), 68 } };
    samsa_arena_t                 arena;
    samsa_buf_t                   buf;
    int16_t                       v;

    (void) state;
    samsa_arena_init(&arena);
    samsa_DeleteGroupsRequest_init(&in);
    in.GroupsNames = names;
    in.GroupsNames_cnt = 2;
    samsa_DeleteGroupsResponse_init(&rin);
    rin.ThrottleTimeMs = 1;
    rin.Results = r;
    rin.Results_cnt = 2;
    for (v = 0; v <= SAMSA_DeleteGroups_VERSION_MAX; v++) {
        rt_DeleteGroupsRequest(v, &in, &out, &arena, &buf);
        assert_true(samsa_slice_eq_cstr(out.GroupsNames[1], "g2"));
        samsa_buf_fini(&buf);
        rt_DeleteGroupsResponse(v, &rin, &rout, &arena, &buf);
        assert_int_equal(rout.Results[1].ErrorCode, 68);
        samsa_buf_fini(&buf);
    }
    samsa_arena_fini(&arena);
}

/* DeleteGroups v0 and v2 of ["g"]; OffsetDelete v0 of g/t/0. */
static void
test_DeleteGroups_OffsetDelete_bytes(void **state)
{
    static const uint8_t              d0[] = { 0x00, 0x00, 0x00, 0x01,
                                               0x00, 0x01, 'g' };
    static const uint8_t              d2[] = { 0x02, 0x02, 'g', 0x00 };
    static const uint8_t              o0[] = {
        0x00, 0x01, 'g', 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 't',
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
    };
    samsa_DeleteGroupsRequest_t       d;
    samsa_OffsetDeleteRequest_t       o;
    samsa_slice_t                     name = S("g");
    samsa_OffsetDeleteRequestPartition_t p = { 0 };
    samsa_OffsetDeleteRequestTopic_t  t = { S("t"), &p, 1 };

    (void) state;
    samsa_DeleteGroupsRequest_init(&d);
    d.GroupsNames = &name;
    d.GroupsNames_cnt = 1;
    RT_ENCODES_TO(DeleteGroupsRequest, 0, &d, d0, sizeof(d0));
    RT_ENCODES_TO(DeleteGroupsRequest, 2, &d, d2, sizeof(d2));
    samsa_OffsetDeleteRequest_init(&o);
    o.GroupId = S("g");
    o.Topics = &t;
    o.Topics_cnt = 1;
    RT_ENCODES_TO(OffsetDeleteRequest, 0, &o, o0, sizeof(o0));
}

static void
test_OffsetDelete_round_trip(void **state)
{
    samsa_OffsetDeleteRequest_t             in, out;
    samsa_OffsetDeleteResponse_t            rin, rout;
    samsa_OffsetDeleteRequestPartition_t    p[2] = { { 0 }, { 3 } };
    samsa_OffsetDeleteRequestTopic_t        t = { S("t"), p, 2 };
    samsa_OffsetDeleteResponsePartition_t   rp[2] = { { 0, 0 }, { 3, 86 } };
    samsa_OffsetDeleteResponseTopic_t       rt = { S("t"), rp, 2 };
    samsa_arena_t                           arena;
    samsa_buf_t                             buf;

    (void) state;
    samsa_arena_init(&arena);
    samsa_OffsetDeleteRequest_init(&in);
    in.GroupId = S("g");
    in.Topics = &t;
    in.Topics_cnt = 1;
    rt_OffsetDeleteRequest(0, &in, &out, &arena, &buf);
    assert_int_equal(out.Topics[0].Partitions[1].PartitionIndex, 3);
    samsa_buf_fini(&buf);
    samsa_OffsetDeleteResponse_init(&rin);
    rin.ErrorCode = 0;
    rin.Topics = &rt;
    rin.Topics_cnt = 1;
    rt_OffsetDeleteResponse(0, &rin, &rout, &arena, &buf);
    assert_int_equal(rout.Topics[0].Partitions[1].ErrorCode, 86);
    samsa_buf_fini(&buf);
    samsa_arena_fini(&arena);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_ListGroups_round_trip),
        cmocka_unit_test(test_ListGroupsResponse_bytes),
        cmocka_unit_test(test_DescribeGroups_round_trip),
        cmocka_unit_test(test_DeleteGroups_round_trip),
        cmocka_unit_test(test_DeleteGroups_OffsetDelete_bytes),
        cmocka_unit_test(test_OffsetDelete_round_trip),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
