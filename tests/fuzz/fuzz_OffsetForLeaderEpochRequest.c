/* libFuzzer target: OffsetForLeaderEpochRequest bodies (2-byte version +
 * body). */
#include "fuzz.h"

#include "proto/gen/OffsetForLeaderEpoch.h"

FUZZ_REQUEST_TARGET(OffsetForLeaderEpochRequest,
                    SAMSA_OffsetForLeaderEpoch_VERSION_MIN,
                    SAMSA_OffsetForLeaderEpoch_VERSION_MAX)
