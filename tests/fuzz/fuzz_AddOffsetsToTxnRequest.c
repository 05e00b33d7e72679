/* libFuzzer target: AddOffsetsToTxnRequest bodies (2-byte version + body). */
#include "fuzz.h"

#include "proto/gen/AddOffsetsToTxn.h"

FUZZ_REQUEST_TARGET(AddOffsetsToTxnRequest, SAMSA_AddOffsetsToTxn_VERSION_MIN,
                    SAMSA_AddOffsetsToTxn_VERSION_MAX)
