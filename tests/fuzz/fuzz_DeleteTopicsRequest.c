/* libFuzzer target: DeleteTopicsRequest bodies (2-byte version + body). */
#include "fuzz.h"

#include "proto/gen/DeleteTopics.h"

FUZZ_REQUEST_TARGET(DeleteTopicsRequest, SAMSA_DeleteTopics_VERSION_MIN,
                    SAMSA_DeleteTopics_VERSION_MAX)
