/* Unit tests for the generated DescribeProducers codecs
 * (proto/gen/DescribeProducers.c): v0 (flexible) round trips and bytes
 * assembled by hand from Kafka's DescribeProducersRequest.json and
 * DescribeProducersResponse.json (ProducerEpoch is an int32 there). */
#include "unit.h"

#include <stdlib.h>

#include "proto/gen/DescribeProducers.h"
#include "rt.h"

RT_DEFINE(DescribeProducersRequest)
RT_DEFINE(DescribeProducersResponse)

/* Topic "t", partitions 0 and 2. */
static void
test_DescribeProducersRequest_bytes(void **state)
{
    static const uint8_t              v0[] = {
        0x02, 0x02, 't', 0x03, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x02, 0x00, 0x00,
    };
    samsa_DescribeProducersRequest_t  m, out;
    samsa_DescribeProducersTopic_t    t;
    int32_t                           parts[2] = { 0, 2 };
    samsa_arena_t                     arena;
    samsa_buf_t                       buf;

    (void) state;
    samsa_DescribeProducersRequest_init(&m);
    samsa_DescribeProducersTopic_init(&t);
    t.Name = S("t");
    t.PartitionIndexes = parts;
    t.PartitionIndexes_cnt = 2;
    m.Topics = &t;
    m.Topics_cnt = 1;
    RT_ENCODES_TO(DescribeProducersRequest, 0, &m, v0, sizeof(v0));
    samsa_arena_init(&arena);
    rt_DescribeProducersRequest(0, &m, &out, &arena, &buf);
    assert_int_equal(out.Topics_cnt, 1);
    assert_true(samsa_slice_eq_cstr(out.Topics[0].Name, "t"));
    assert_int_equal(out.Topics[0].PartitionIndexes_cnt, 2);
    assert_int_equal(out.Topics[0].PartitionIndexes[1], 2);
    samsa_buf_fini(&buf);
    samsa_arena_fini(&arena);
}

/* One producer (id 5, epoch 1, last sequence 9, last timestamp 1000, no
 * coordinator epoch, no open transaction) in partition 0 of "t". */
static void
test_DescribeProducersResponse_bytes(void **state)
{
    static const uint8_t                        v0[] = {
        0x00, 0x00, 0x00, 0x00,                         /* throttle */
        0x02, 0x02, 't', 0x02,                          /* topics, name */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,       /* partition, err,
                                                           null message */
        0x02,                                           /* producers */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05,
        0x00, 0x00, 0x00, 0x01,
        0x00, 0x00, 0x00, 0x09,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xe8,
        0xff, 0xff, 0xff, 0xff,
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0x00, 0x00, 0x00, 0x00,                         /* tags */
    };
    samsa_DescribeProducersResponse_t           m, out;
    samsa_DescribeProducersTopicResponse_t      t;
    samsa_DescribeProducersPartitionResponse_t  p;
    samsa_ProducerState_t                       ps;
    samsa_arena_t                               arena;
    samsa_buf_t                                 buf;

    (void) state;
    samsa_DescribeProducersResponse_init(&m);
    samsa_DescribeProducersTopicResponse_init(&t);
    samsa_DescribeProducersPartitionResponse_init(&p);
    samsa_ProducerState_init(&ps);
    assert_int_equal(ps.LastSequence, -1);
    assert_int_equal(ps.CurrentTxnStartOffset, -1);
    ps.ProducerId = 5;
    ps.ProducerEpoch = 1;
    ps.LastSequence = 9;
    ps.LastTimestamp = 1000;
    ps.CoordinatorEpoch = -1;
    p.ActiveProducers = &ps;
    p.ActiveProducers_cnt = 1;
    t.Name = S("t");
    t.Partitions = &p;
    t.Partitions_cnt = 1;
    m.Topics = &t;
    m.Topics_cnt = 1;
    RT_ENCODES_TO(DescribeProducersResponse, 0, &m, v0, sizeof(v0));
    samsa_arena_init(&arena);
    rt_DescribeProducersResponse(0, &m, &out, &arena, &buf);
    assert_int_equal(out.Topics[0].Partitions[0].ActiveProducers[0].ProducerId,
                     5);
    assert_true(samsa_slice_is_null(out.Topics[0].Partitions[0].ErrorMessage));
    samsa_buf_fini(&buf);
    samsa_arena_fini(&arena);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_DescribeProducersRequest_bytes),
        cmocka_unit_test(test_DescribeProducersResponse_bytes),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
