/* libFuzzer target: AddRaftVoterRequest bodies (version + body). */
#include "fuzz.h"

#include "proto/gen/AddRaftVoter.h"

FUZZ_REQUEST_TARGET(AddRaftVoterRequest,
                    SAMSA_AddRaftVoter_VERSION_MIN,
                    SAMSA_AddRaftVoter_VERSION_MAX)
