/* libFuzzer target: UnregisterBrokerRequest bodies (version + body). */
#include "fuzz.h"

#include "proto/gen/UnregisterBroker.h"

FUZZ_REQUEST_TARGET(UnregisterBrokerRequest,
                    SAMSA_UnregisterBroker_VERSION_MIN,
                    SAMSA_UnregisterBroker_VERSION_MAX)
