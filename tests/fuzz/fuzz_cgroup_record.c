/* libFuzzer target: one KIP-848 consumer group key or value of
 * __consumer_offsets as the group coordinator reads it back at load: the
 * first byte picks the message (the six keys, then the six values of
 * proto/gen/ConsumerGroupRecords.h), then Kafka's int16 version and the
 * body. */
#include "fuzz.h"

#include "proto/gen/ConsumerGroupRecords.h"
#include "util/endian.h"

FUZZ_DEFINE(ConsumerGroupMetadataKey)
FUZZ_DEFINE(ConsumerGroupPartitionMetadataKey)
FUZZ_DEFINE(ConsumerGroupMemberMetadataKey)
FUZZ_DEFINE(ConsumerGroupTargetAssignmentMetadataKey)
FUZZ_DEFINE(ConsumerGroupTargetAssignmentMemberKey)
FUZZ_DEFINE(ConsumerGroupCurrentMemberAssignmentKey)
FUZZ_DEFINE(ConsumerGroupMetadataValue)
FUZZ_DEFINE(ConsumerGroupPartitionMetadataValue)
FUZZ_DEFINE(ConsumerGroupMemberMetadataValue)
FUZZ_DEFINE(ConsumerGroupTargetAssignmentMetadataValue)
FUZZ_DEFINE(ConsumerGroupTargetAssignmentMemberValue)
FUZZ_DEFINE(ConsumerGroupCurrentMemberAssignmentValue)

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t  *body = data + 3;
    size_t          n = size - 3;
    int16_t         version;

    if (size < 3) {
        return 0;
    }
    version = (int16_t) samsa_load_be16(data + 1);
    switch (data[0] % 12) {
    case 0:
        fuzz_ConsumerGroupMetadataKey(version, body, n);
        break;
    case 1:
        fuzz_ConsumerGroupPartitionMetadataKey(version, body, n);
        break;
    case 2:
        fuzz_ConsumerGroupMemberMetadataKey(version, body, n);
        break;
    case 3:
        fuzz_ConsumerGroupTargetAssignmentMetadataKey(version, body, n);
        break;
    case 4:
        fuzz_ConsumerGroupTargetAssignmentMemberKey(version, body, n);
        break;
    case 5:
        fuzz_ConsumerGroupCurrentMemberAssignmentKey(version, body, n);
        break;
    case 6:
        fuzz_ConsumerGroupMetadataValue(version, body, n);
        break;
    case 7:
        fuzz_ConsumerGroupPartitionMetadataValue(version, body, n);
        break;
    case 8:
        fuzz_ConsumerGroupMemberMetadataValue(version, body, n);
        break;
    case 9:
        fuzz_ConsumerGroupTargetAssignmentMetadataValue(version, body, n);
        break;
    case 10:
        fuzz_ConsumerGroupTargetAssignmentMemberValue(version, body, n);
        break;
    default:
        fuzz_ConsumerGroupCurrentMemberAssignmentValue(version, body, n);
        break;
    }
    return 0;
}
