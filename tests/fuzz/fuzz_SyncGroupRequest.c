/* libFuzzer target: SyncGroupRequest bodies (2-byte version + body). */
#include "fuzz.h"

#include "proto/gen/SyncGroup.h"

FUZZ_REQUEST_TARGET(SyncGroupRequest, SAMSA_SyncGroup_VERSION_MIN,
                    SAMSA_SyncGroup_VERSION_MAX)
