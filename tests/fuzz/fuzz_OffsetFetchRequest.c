/* libFuzzer target: OffsetFetchRequest bodies (2-byte version + body). */
#include "fuzz.h"

#include "proto/gen/OffsetFetch.h"

FUZZ_REQUEST_TARGET(OffsetFetchRequest, SAMSA_OffsetFetch_VERSION_MIN,
                    SAMSA_OffsetFetch_VERSION_MAX)
