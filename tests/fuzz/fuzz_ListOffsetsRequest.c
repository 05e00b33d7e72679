/* libFuzzer target: ListOffsetsRequest bodies (2-byte version + body). */
#include "fuzz.h"

#include "proto/gen/ListOffsets.h"

FUZZ_REQUEST_TARGET(ListOffsetsRequest, SAMSA_ListOffsets_VERSION_MIN,
                    SAMSA_ListOffsets_VERSION_MAX)
