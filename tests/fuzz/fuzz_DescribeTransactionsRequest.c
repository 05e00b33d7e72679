/* libFuzzer target: DescribeTransactionsRequest bodies (2-byte version + body). */
#include "fuzz.h"

#include "proto/gen/DescribeTransactions.h"

FUZZ_REQUEST_TARGET(DescribeTransactionsRequest, SAMSA_DescribeTransactions_VERSION_MIN,
                    SAMSA_DescribeTransactions_VERSION_MAX)
