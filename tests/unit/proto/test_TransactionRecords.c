/* Unit tests for the generated __transaction_state record codecs
 * (proto/gen/TransactionRecords.c): the key and both value versions
 * round-trip, v1's tagged fields survive, and key v0 / value v0 encode to
 * the bytes Kafka's TransactionLog writes. */
#include "unit.h"

#include <stdlib.h>

#include "proto/gen/TransactionRecords.h"
#include "rt.h"

RT_DEFINE(TransactionLogKey)
RT_DEFINE(TransactionLogValue)

static void
test_TransactionRecords_round_trip(void **state)
{
    samsa_TransactionLogKey_t    k, ko;
    samsa_TransactionLogValue_t  v, vo;
    samsa_PartitionsSchema_t     ps;
    int32_t                      parts[2] = { 0, 3 };
    samsa_arena_t                arena;
    samsa_buf_t                  buf;
    int16_t                      ver;

    (void) state;
    samsa_arena_init(&arena);
    samsa_TransactionLogKey_init(&k);
    k.TransactionalId = S("tx-1");
    rt_TransactionLogKey(0, &k, &ko, &arena, &buf);
    assert_true(samsa_slice_eq_cstr(ko.TransactionalId, "tx-1"));
    samsa_buf_fini(&buf);
    samsa_TransactionLogValue_init(&v);
    v.ProducerId = 4000;
    v.PreviousProducerId = 3999;
    v.ProducerEpoch = 7;
    v.TransactionTimeoutMs = 60000;
    v.TransactionStatus = 1;
    samsa_PartitionsSchema_init(&ps);
    ps.Topic = S("t");
    ps.PartitionIds = parts;
    ps.PartitionIds_cnt = 2;
    v.TransactionPartitions = &ps;
    v.TransactionPartitions_cnt = 1;
    v.TransactionLastUpdateTimestampMs = 20;
    v.TransactionStartTimestampMs = 10;
    v.ClientTransactionVersion = 2;
    for (ver = 0; ver <= 1; ver++) {
        rt_TransactionLogValue(ver, &v, &vo, &arena, &buf);
        assert_int_equal(vo.ProducerId, 4000);
        assert_int_equal(vo.PreviousProducerId, ver == 1 ? 3999 : -1);
        assert_int_equal(vo.ClientTransactionVersion, ver == 1 ? 2 : 0);
        assert_int_equal(vo.TransactionPartitions_cnt, 1);
        assert_int_equal(vo.TransactionPartitions[0].PartitionIds[1], 3);
        assert_int_equal(vo.TransactionStartTimestampMs, 10);
        samsa_buf_fini(&buf);
    }
    samsa_arena_fini(&arena);
}

static void
test_TransactionRecords_bytes(void **state)
{
    static const uint8_t         key[] = { 0x00, 0x02, 't', 'x' };
    static const uint8_t         val[] = {
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xe8,     /* pid 1000 */
        0x00, 0x02,                                         /* epoch */
        0x00, 0x00, 0xea, 0x60,                             /* 60000 ms */
        0x04,                                               /* CompleteCommit */
        0x00, 0x00, 0x00, 0x00,                             /* no partitions */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05,     /* updated */
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,     /* no start */
    };
    samsa_TransactionLogKey_t    k;
    samsa_TransactionLogValue_t  v;

    (void) state;
    samsa_TransactionLogKey_init(&k);
    k.TransactionalId = S("tx");
    RT_ENCODES_TO(TransactionLogKey, 0, &k, key, sizeof(key));
    samsa_TransactionLogValue_init(&v);
    v.ProducerId = 1000;
    v.ProducerEpoch = 2;
    v.TransactionTimeoutMs = 60000;
    v.TransactionStatus = 4;
    v.TransactionPartitions_cnt = 0;
    v.TransactionLastUpdateTimestampMs = 5;
    v.TransactionStartTimestampMs = -1;
    RT_ENCODES_TO(TransactionLogValue, 0, &v, val, sizeof(val));
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_TransactionRecords_round_trip),
        cmocka_unit_test(test_TransactionRecords_bytes),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
