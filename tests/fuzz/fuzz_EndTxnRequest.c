/* libFuzzer target: EndTxnRequest bodies (2-byte version + body). */
#include "fuzz.h"

#include "proto/gen/EndTxn.h"

FUZZ_REQUEST_TARGET(EndTxnRequest, SAMSA_EndTxn_VERSION_MIN,
                    SAMSA_EndTxn_VERSION_MAX)
