/* libFuzzer target: AllocateProducerIdsRequest bodies (version + body). */
#include "fuzz.h"

#include "proto/gen/AllocateProducerIds.h"

FUZZ_REQUEST_TARGET(AllocateProducerIdsRequest,
                    SAMSA_AllocateProducerIds_VERSION_MIN,
                    SAMSA_AllocateProducerIds_VERSION_MAX)
