/* libFuzzer target: ElectLeadersRequest bodies (2-byte version + body). */
#include "fuzz.h"

#include "proto/gen/ElectLeaders.h"

FUZZ_REQUEST_TARGET(ElectLeadersRequest, SAMSA_ElectLeaders_VERSION_MIN,
                    SAMSA_ElectLeaders_VERSION_MAX)
