/* libFuzzer target: HeartbeatRequest bodies (2-byte version + body). */
#include "fuzz.h"

#include "proto/gen/Heartbeat.h"

FUZZ_REQUEST_TARGET(HeartbeatRequest, SAMSA_Heartbeat_VERSION_MIN,
                    SAMSA_Heartbeat_VERSION_MAX)
