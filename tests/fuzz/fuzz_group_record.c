/* libFuzzer target: one __consumer_offsets key or value as the group
 * coordinator reads it back at load: the first byte picks the message
 * (OffsetCommitKey, OffsetCommitValue, GroupMetadataKey,
 * GroupMetadataValue), then Kafka's int16 version and the body. */
#include "fuzz.h"

#include "proto/gen/GroupRecords.h"
#include "util/endian.h"

FUZZ_DEFINE(OffsetCommitKey)
FUZZ_DEFINE(OffsetCommitValue)
FUZZ_DEFINE(GroupMetadataKey)
FUZZ_DEFINE(GroupMetadataValue)

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int16_t  version;

    if (size < 3) {
        return 0;
    }
    version = (int16_t) samsa_load_be16(data + 1);
    switch (data[0] & 3) {
    case 0:
        fuzz_OffsetCommitKey(version, data + 3, size - 3);
        break;
    case 1:
        fuzz_OffsetCommitValue(version, data + 3, size - 3);
        break;
    case 2:
        fuzz_GroupMetadataKey(version, data + 3, size - 3);
        break;
    default:
        fuzz_GroupMetadataValue(version, data + 3, size - 3);
        break;
    }
    return 0;
}
