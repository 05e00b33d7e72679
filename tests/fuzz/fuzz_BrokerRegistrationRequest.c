/* libFuzzer target: BrokerRegistrationRequest bodies (version + body). */
#include "fuzz.h"

#include "proto/gen/BrokerRegistration.h"

FUZZ_REQUEST_TARGET(BrokerRegistrationRequest,
                    SAMSA_BrokerRegistration_VERSION_MIN,
                    SAMSA_BrokerRegistration_VERSION_MAX)
