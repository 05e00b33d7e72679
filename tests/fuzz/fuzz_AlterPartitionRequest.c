/* libFuzzer target: AlterPartitionRequest bodies (version + body). */
#include "fuzz.h"

#include "proto/gen/AlterPartition.h"

FUZZ_REQUEST_TARGET(AlterPartitionRequest,
                    SAMSA_AlterPartition_VERSION_MIN,
                    SAMSA_AlterPartition_VERSION_MAX)
