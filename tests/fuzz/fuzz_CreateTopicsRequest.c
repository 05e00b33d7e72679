/* libFuzzer target: CreateTopicsRequest bodies (2-byte version + body). */
#include "fuzz.h"

#include "proto/gen/CreateTopics.h"

FUZZ_REQUEST_TARGET(CreateTopicsRequest, SAMSA_CreateTopics_VERSION_MIN,
                    SAMSA_CreateTopics_VERSION_MAX)
