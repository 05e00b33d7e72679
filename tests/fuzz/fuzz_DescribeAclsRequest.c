/* libFuzzer target: DescribeAclsRequest bodies (2-byte version + body). */
#include "fuzz.h"

#include "proto/gen/DescribeAcls.h"

FUZZ_REQUEST_TARGET(DescribeAclsRequest, SAMSA_DescribeAcls_VERSION_MIN,
                    SAMSA_DescribeAcls_VERSION_MAX)
