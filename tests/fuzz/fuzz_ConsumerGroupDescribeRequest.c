/* libFuzzer target: ConsumerGroupDescribeRequest bodies (2-byte version + body). */
#include "fuzz.h"

#include "proto/gen/ConsumerGroupDescribe.h"

FUZZ_REQUEST_TARGET(ConsumerGroupDescribeRequest, SAMSA_ConsumerGroupDescribe_VERSION_MIN,
                    SAMSA_ConsumerGroupDescribe_VERSION_MAX)
