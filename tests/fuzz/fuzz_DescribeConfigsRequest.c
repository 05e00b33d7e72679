/* libFuzzer target: DescribeConfigsRequest bodies (2-byte version + body). */
#include "fuzz.h"

#include "proto/gen/DescribeConfigs.h"

FUZZ_REQUEST_TARGET(DescribeConfigsRequest, SAMSA_DescribeConfigs_VERSION_MIN,
                    SAMSA_DescribeConfigs_VERSION_MAX)
