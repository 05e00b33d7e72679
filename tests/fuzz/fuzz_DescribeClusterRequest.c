/* libFuzzer target: DescribeClusterRequest bodies (2-byte version + body). */
#include "fuzz.h"

#include "proto/gen/DescribeCluster.h"

FUZZ_REQUEST_TARGET(DescribeClusterRequest, SAMSA_DescribeCluster_VERSION_MIN,
                    SAMSA_DescribeCluster_VERSION_MAX)
