/* libFuzzer target: ListTransactionsRequest bodies (2-byte version + body). */
#include "fuzz.h"

#include "proto/gen/ListTransactions.h"

FUZZ_REQUEST_TARGET(ListTransactionsRequest, SAMSA_ListTransactions_VERSION_MIN,
                    SAMSA_ListTransactions_VERSION_MAX)
