/* libFuzzer target: ListPartitionReassignmentsRequest bodies (2-byte
 * version + body). */
#include "fuzz.h"

#include "proto/gen/ListPartitionReassignments.h"

FUZZ_REQUEST_TARGET(ListPartitionReassignmentsRequest,
                    SAMSA_ListPartitionReassignments_VERSION_MIN,
                    SAMSA_ListPartitionReassignments_VERSION_MAX)
