/* libFuzzer target: ProduceRequest bodies (2-byte version + body). */
#include "fuzz.h"

#include "proto/gen/Produce.h"

FUZZ_REQUEST_TARGET(ProduceRequest, SAMSA_Produce_VERSION_MIN,
                    SAMSA_Produce_VERSION_MAX)
