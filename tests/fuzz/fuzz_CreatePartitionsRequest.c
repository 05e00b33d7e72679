/* libFuzzer target: CreatePartitionsRequest bodies (2-byte version + body). */
#include "fuzz.h"

#include "proto/gen/CreatePartitions.h"

FUZZ_REQUEST_TARGET(CreatePartitionsRequest, SAMSA_CreatePartitions_VERSION_MIN,
                    SAMSA_CreatePartitions_VERSION_MAX)
