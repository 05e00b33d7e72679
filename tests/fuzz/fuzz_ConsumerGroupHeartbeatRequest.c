/* libFuzzer target: ConsumerGroupHeartbeatRequest bodies (2-byte version + body). */
#include "fuzz.h"

#include "proto/gen/ConsumerGroupHeartbeat.h"

FUZZ_REQUEST_TARGET(ConsumerGroupHeartbeatRequest, SAMSA_ConsumerGroupHeartbeat_VERSION_MIN,
                    SAMSA_ConsumerGroupHeartbeat_VERSION_MAX)
