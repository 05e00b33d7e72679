/* libFuzzer target: TxnOffsetCommitRequest bodies (2-byte version + body). */
#include "fuzz.h"

#include "proto/gen/TxnOffsetCommit.h"

FUZZ_REQUEST_TARGET(TxnOffsetCommitRequest, SAMSA_TxnOffsetCommit_VERSION_MIN,
                    SAMSA_TxnOffsetCommit_VERSION_MAX)
