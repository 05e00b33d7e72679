/* libFuzzer target: DescribeUserScramCredentialsRequest bodies (2-byte version + body). */
#include "fuzz.h"

#include "proto/gen/DescribeUserScramCredentials.h"

FUZZ_REQUEST_TARGET(DescribeUserScramCredentialsRequest, SAMSA_DescribeUserScramCredentials_VERSION_MIN,
                    SAMSA_DescribeUserScramCredentials_VERSION_MAX)
