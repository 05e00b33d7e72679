/* libFuzzer target: InitProducerIdRequest bodies (2-byte version + body). */
#include "fuzz.h"

#include "proto/gen/InitProducerId.h"

FUZZ_REQUEST_TARGET(InitProducerIdRequest, SAMSA_InitProducerId_VERSION_MIN,
                    SAMSA_InitProducerId_VERSION_MAX)
