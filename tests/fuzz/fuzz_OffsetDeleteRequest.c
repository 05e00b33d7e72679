/* libFuzzer target: OffsetDeleteRequest bodies (2-byte version + body). */
#include "fuzz.h"

#include "proto/gen/OffsetDelete.h"

FUZZ_REQUEST_TARGET(OffsetDeleteRequest, SAMSA_OffsetDelete_VERSION_MIN,
                    SAMSA_OffsetDelete_VERSION_MAX)
