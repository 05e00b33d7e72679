/* libFuzzer target: DescribeProducersRequest bodies (2-byte version + body). */
#include "fuzz.h"

#include "proto/gen/DescribeProducers.h"

FUZZ_REQUEST_TARGET(DescribeProducersRequest,
                    SAMSA_DescribeProducers_VERSION_MIN,
                    SAMSA_DescribeProducers_VERSION_MAX)
