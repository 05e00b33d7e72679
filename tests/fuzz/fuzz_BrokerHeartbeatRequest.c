/* libFuzzer target: BrokerHeartbeatRequest bodies (version + body). */
#include "fuzz.h"

#include "proto/gen/BrokerHeartbeat.h"

FUZZ_REQUEST_TARGET(BrokerHeartbeatRequest,
                    SAMSA_BrokerHeartbeat_VERSION_MIN,
                    SAMSA_BrokerHeartbeat_VERSION_MAX)
