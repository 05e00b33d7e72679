/* libFuzzer target: AddPartitionsToTxnRequest bodies (2-byte version + body). */
#include "fuzz.h"

#include "proto/gen/AddPartitionsToTxn.h"

FUZZ_REQUEST_TARGET(AddPartitionsToTxnRequest, SAMSA_AddPartitionsToTxn_VERSION_MIN,
                    SAMSA_AddPartitionsToTxn_VERSION_MAX)
