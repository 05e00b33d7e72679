/* Unit tests for broker/api_table.c: the table's ThrottleTimeMs columns
 * agree with the generated encoders, where the request-time quota patches
 * the throttle into a response already encoded (broker/quota.h). */
#include "unit.h"

#include "broker/api_table.h"
#include "proto/gen/AddOffsetsToTxn.h"
#include "proto/gen/AddPartitionsToTxn.h"
#include "proto/gen/AlterClientQuotas.h"
#include "proto/gen/AlterConfigs.h"
#include "proto/gen/ApiVersions.h"
#include "proto/gen/ConsumerGroupDescribe.h"
#include "proto/gen/ConsumerGroupHeartbeat.h"
#include "proto/gen/CreatePartitions.h"
#include "proto/gen/CreateTopics.h"
#include "proto/gen/DeleteGroups.h"
#include "proto/gen/DeleteRecords.h"
#include "proto/gen/DeleteTopics.h"
#include "proto/gen/DescribeClientQuotas.h"
#include "proto/gen/DescribeCluster.h"
#include "proto/gen/DescribeConfigs.h"
#include "proto/gen/DescribeGroups.h"
#include "proto/gen/DescribeLogDirs.h"
#include "proto/gen/DescribeProducers.h"
#include "proto/gen/DescribeTransactions.h"
#include "proto/gen/EndTxn.h"
#include "proto/gen/Fetch.h"
#include "proto/gen/FindCoordinator.h"
#include "proto/gen/Heartbeat.h"
#include "proto/gen/IncrementalAlterConfigs.h"
#include "proto/gen/InitProducerId.h"
#include "proto/gen/JoinGroup.h"
#include "proto/gen/LeaveGroup.h"
#include "proto/gen/ListGroups.h"
#include "proto/gen/ListOffsets.h"
#include "proto/gen/ListTransactions.h"
#include "proto/gen/Metadata.h"
#include "proto/gen/OffsetCommit.h"
#include "proto/gen/OffsetDelete.h"
#include "proto/gen/OffsetFetch.h"
#include "proto/gen/Produce.h"
#include "proto/gen/SyncGroup.h"
#include "proto/gen/TxnOffsetCommit.h"
#include "util/buf.h"
#include "util/endian.h"

#define MAGIC  0x7A7B7C7D

/* Every API the table may hold, by the generated names. */
#define API_LIST \
    X(Produce) \
    X(Fetch) \
    X(ListOffsets) \
    X(Metadata) \
    X(OffsetCommit) \
    X(OffsetFetch) \
    X(FindCoordinator) \
    X(JoinGroup) \
    X(Heartbeat) \
    X(LeaveGroup) \
    X(SyncGroup) \
    X(DescribeGroups) \
    X(ListGroups) \
    X(ApiVersions) \
    X(CreateTopics) \
    X(DeleteTopics) \
    X(DeleteRecords) \
    X(InitProducerId) \
    X(AddPartitionsToTxn) \
    X(AddOffsetsToTxn) \
    X(EndTxn) \
    X(TxnOffsetCommit) \
    X(DescribeConfigs) \
    X(AlterConfigs) \
    X(DescribeLogDirs) \
    X(CreatePartitions) \
    X(DeleteGroups) \
    X(IncrementalAlterConfigs) \
    X(OffsetDelete) \
    X(DescribeClientQuotas) \
    X(AlterClientQuotas) \
    X(DescribeCluster) \
    X(DescribeProducers) \
    X(DescribeTransactions) \
    X(ListTransactions) \
    X(ConsumerGroupHeartbeat) \
    X(ConsumerGroupDescribe)

/* Encode the body of api's response at version with ThrottleTimeMs set to
 * MAGIC and everything else as init leaves it. */
static void
encode_body(int16_t key, int16_t version, samsa_buf_t *buf)
{
    samsa_wr_t  wr;

    samsa_wr_init(&wr, buf);
    switch (key) {
#define X(Api)                                                              \
    case SAMSA_API_##Api: {                                                 \
        samsa_##Api##Response_t  m;                                         \
                                                                            \
        samsa_##Api##Response_init(&m);                                     \
        m.ThrottleTimeMs = MAGIC;                                           \
        samsa_##Api##Response_encode(&wr, version, &m);                     \
        return;                                                             \
    }
    API_LIST
#undef X
    default:
        fail_msg("API %d is missing from API_LIST", key);
    }
}

static bool
has_magic(const samsa_buf_t *buf)
{
    size_t  i;

    for (i = 0; i + 4 <= buf->len; i++) {
        if (samsa_load_be32(buf->data + i) == MAGIC) {
            return true;
        }
    }
    return false;
}

static void
test_api_table_throttle_offsets(void **state)
{
    samsa_apis_t            apis;
    const samsa_api_def_t  *def;
    samsa_buf_t             buf;
    int16_t                 key, v;
    int                     self = 0;

    (void) state;
    samsa_apis_init(&apis, "test", NULL, NULL,
                    SAMSA_API_F_BROKER | SAMSA_API_F_CONTROLLER);
    for (key = 0; key < SAMSA_API_KEY_LIMIT; key++) {
        def = samsa_apis_find(&apis, key);
        if (def == NULL) {
            continue;
        }
        if (def->throttle_from < 0) {
            /* the handler records it: the field follows an array */
            assert_true(key == SAMSA_API_Produce
                        || key == SAMSA_API_ApiVersions);
            self++;
            continue;
        }
        for (v = def->min_version; v <= def->max_version; v++) {
            samsa_buf_init(&buf, 64);
            encode_body(key, v, &buf);
            if (v >= def->throttle_from) {
                assert_true(buf.len >= def->throttle_at + 4u);
                if (samsa_load_be32(buf.data + def->throttle_at) != MAGIC) {
                    fail_msg("API %d v%d: ThrottleTimeMs not at %d", key, v,
                             def->throttle_at);
                }
            } else if (has_magic(&buf)) {
                fail_msg("API %d v%d has ThrottleTimeMs (from v%d?)", key, v,
                         def->throttle_from);
            }
            samsa_buf_fini(&buf);
        }
    }
    assert_int_equal(self, 2);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_api_table_throttle_offsets),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
