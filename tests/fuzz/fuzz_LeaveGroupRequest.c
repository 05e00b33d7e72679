/* libFuzzer target: LeaveGroupRequest bodies (2-byte version + body). */
#include "fuzz.h"

#include "proto/gen/LeaveGroup.h"

FUZZ_REQUEST_TARGET(LeaveGroupRequest, SAMSA_LeaveGroup_VERSION_MIN,
                    SAMSA_LeaveGroup_VERSION_MAX)
