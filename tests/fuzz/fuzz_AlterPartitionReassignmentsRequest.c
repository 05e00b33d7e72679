/* libFuzzer target: AlterPartitionReassignmentsRequest bodies (2-byte
 * version + body). */
#include "fuzz.h"

#include "proto/gen/AlterPartitionReassignments.h"

FUZZ_REQUEST_TARGET(AlterPartitionReassignmentsRequest,
                    SAMSA_AlterPartitionReassignments_VERSION_MIN,
                    SAMSA_AlterPartitionReassignments_VERSION_MAX)
