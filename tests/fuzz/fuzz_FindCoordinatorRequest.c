/* libFuzzer target: FindCoordinatorRequest bodies (2-byte version + body). */
#include "fuzz.h"

#include "proto/gen/FindCoordinator.h"

FUZZ_REQUEST_TARGET(FindCoordinatorRequest, SAMSA_FindCoordinator_VERSION_MIN,
                    SAMSA_FindCoordinator_VERSION_MAX)
