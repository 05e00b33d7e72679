/* libFuzzer target: DescribeGroupsRequest bodies (2-byte version + body). */
#include "fuzz.h"

#include "proto/gen/DescribeGroups.h"

FUZZ_REQUEST_TARGET(DescribeGroupsRequest, SAMSA_DescribeGroups_VERSION_MIN,
                    SAMSA_DescribeGroups_VERSION_MAX)
