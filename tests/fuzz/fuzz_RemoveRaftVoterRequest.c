/* libFuzzer target: RemoveRaftVoterRequest bodies (version + body). */
#include "fuzz.h"

#include "proto/gen/RemoveRaftVoter.h"

FUZZ_REQUEST_TARGET(RemoveRaftVoterRequest,
                    SAMSA_RemoveRaftVoter_VERSION_MIN,
                    SAMSA_RemoveRaftVoter_VERSION_MAX)
