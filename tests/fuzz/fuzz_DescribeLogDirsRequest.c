/* libFuzzer target: DescribeLogDirsRequest bodies (2-byte version + body). */
#include "fuzz.h"

#include "proto/gen/DescribeLogDirs.h"

FUZZ_REQUEST_TARGET(DescribeLogDirsRequest, SAMSA_DescribeLogDirs_VERSION_MIN,
                    SAMSA_DescribeLogDirs_VERSION_MAX)
