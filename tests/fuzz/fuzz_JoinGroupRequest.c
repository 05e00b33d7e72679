/* libFuzzer target: JoinGroupRequest bodies (2-byte version + body). */
#include "fuzz.h"

#include "proto/gen/JoinGroup.h"

FUZZ_REQUEST_TARGET(JoinGroupRequest, SAMSA_JoinGroup_VERSION_MIN,
                    SAMSA_JoinGroup_VERSION_MAX)
