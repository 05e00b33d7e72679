/* libFuzzer target: OffsetCommitRequest bodies (2-byte version + body). */
#include "fuzz.h"

#include "proto/gen/OffsetCommit.h"

FUZZ_REQUEST_TARGET(OffsetCommitRequest, SAMSA_OffsetCommit_VERSION_MIN,
                    SAMSA_OffsetCommit_VERSION_MAX)
