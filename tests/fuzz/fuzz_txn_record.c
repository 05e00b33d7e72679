/* libFuzzer target: one __transaction_state key or value as the
 * transaction coordinator reads it back at load: the first byte picks the
 * message (TransactionLogKey, TransactionLogValue), then Kafka's int16
 * version and the body. */
#include "fuzz.h"

#include "proto/gen/TransactionRecords.h"
#include "util/endian.h"

FUZZ_DEFINE(TransactionLogKey)
FUZZ_DEFINE(TransactionLogValue)

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int16_t  version;

    if (size < 3) {
        return 0;
    }
    version = (int16_t) samsa_load_be16(data + 1);
    if ((data[0] & 1) == 0) {
        fuzz_TransactionLogKey(version, data + 3, size - 3);
    } else {
        fuzz_TransactionLogValue(version, data + 3, size - 3);
    }
    return 0;
}
