/* Unit tests for the generated __consumer_offsets record codecs
 * (proto/gen/GroupRecords.c): each key and value round-trips at every
 * version, and OffsetCommitKey v1 / OffsetCommitValue v3 /
 * GroupMetadataKey v2 encode to the bytes Kafka writes. */
#include "unit.h"

#include <stdlib.h>

#include "proto/gen/GroupRecords.h"
#include "rt.h"

RT_DEFINE(OffsetCommitKey)
RT_DEFINE(OffsetCommitValue)
RT_DEFINE(GroupMetadataKey)
RT_DEFINE(GroupMetadataValue)

static void
test_GroupRecords_round_trip(void **state)
{
    samsa_OffsetCommitKey_t      k, ko;
    samsa_OffsetCommitValue_t    v, vo;
    samsa_GroupMetadataKey_t     gk, gko;
    samsa_GroupMetadataValue_t   gv, gvo;
    samsa_GroupMemberMetadata_t  mem = { S("m-1"), S("i-1"), S("c"),
                                         S("/127.0.0.1"), 30000, 10000,
                                         S("sub"), S("asg") };
    samsa_arena_t                arena;
    samsa_buf_t                  buf;
    int16_t                      ver;

    (void) state;
    samsa_arena_init(&arena);
    samsa_OffsetCommitKey_init(&k);
    k.Group = S("g");
    k.Topic = S("t");
    k.Partition = 7;
    samsa_OffsetCommitValue_init(&v);
    v.Offset = 99;
    v.LeaderEpoch = 2;
    v.Metadata = S("md");
    v.CommitTimestamp = 1234;
    v.ExpireTimestamp = 5678;
    samsa_GroupMetadataKey_init(&gk);
    gk.Group = S("g");
    samsa_GroupMetadataValue_init(&gv);
    gv.ProtocolType = S("consumer");
    gv.Generation = 5;
    gv.Protocol = S("range");
    gv.Leader = S("m-1");
    gv.CurrentStateTimestamp = 42;
    gv.Members = &mem;
    gv.Members_cnt = 1;
    for (ver = 0; ver <= 1; ver++) {
        rt_OffsetCommitKey(ver, &k, &ko, &arena, &buf);
        assert_int_equal(ko.Partition, 7);
        samsa_buf_fini(&buf);
    }
    for (ver = 0; ver <= 4; ver++) {
        rt_OffsetCommitValue(ver, &v, &vo, &arena, &buf);
        assert_int_equal(vo.Offset, 99);
        assert_int_equal(vo.LeaderEpoch, ver >= 3 ? 2 : -1);
        assert_int_equal(vo.ExpireTimestamp, ver == 1 ? 5678 : -1);
        samsa_buf_fini(&buf);
        rt_GroupMetadataValue(ver, &gv, &gvo, &arena, &buf);
        assert_int_equal(gvo.Generation, 5);
        assert_int_equal(gvo.Members[0].RebalanceTimeout,
                         ver >= 1 ? 30000 : 0);
        assert_int_equal(gvo.Members[0].GroupInstanceId.ptr != NULL,
                         ver >= 3);
        samsa_buf_fini(&buf);
    }
    rt_GroupMetadataKey(2, &gk, &gko, &arena, &buf);
    assert_true(samsa_slice_eq_cstr(gko.Group, "g"));
    samsa_buf_fini(&buf);
    samsa_arena_fini(&arena);
}

static void
test_GroupRecords_bytes(void **state)
{
    static const uint8_t       key[] = {
        0x00, 0x01, 'g', 0x00, 0x01, 't', 0x00, 0x00, 0x00, 0x03,
    };
    static const uint8_t       val[] = {
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a,
        0xff, 0xff, 0xff, 0xff, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
    };
    static const uint8_t       gkey[] = { 0x00, 0x01, 'g' };
    samsa_OffsetCommitKey_t    k;
    samsa_OffsetCommitValue_t  v;
    samsa_GroupMetadataKey_t   gk;

    (void) state;
    samsa_OffsetCommitKey_init(&k);
    k.Group = S("g");
    k.Topic = S("t");
    k.Partition = 3;
    RT_ENCODES_TO(OffsetCommitKey, 1, &k, key, sizeof(key));
    samsa_OffsetCommitValue_init(&v);
    v.Offset = 10;
    v.Metadata = S("");
    v.CommitTimestamp = 1;
    RT_ENCODES_TO(OffsetCommitValue, 3, &v, val, sizeof(val));
    samsa_GroupMetadataKey_init(&gk);
    gk.Group = S("g");
    RT_ENCODES_TO(GroupMetadataKey, 2, &gk, gkey, sizeof(gkey));
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_GroupRecords_round_trip),
        cmocka_unit_test(test_GroupRecords_bytes),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
