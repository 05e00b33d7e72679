/* libFuzzer target: DescribeClientQuotasRequest bodies (2-byte version + body). */
#include "fuzz.h"

#include "proto/gen/DescribeClientQuotas.h"

FUZZ_REQUEST_TARGET(DescribeClientQuotasRequest, SAMSA_DescribeClientQuotas_VERSION_MIN,
                    SAMSA_DescribeClientQuotas_VERSION_MAX)
