/* libFuzzer target: AlterConfigsRequest bodies (2-byte version + body). */
#include "fuzz.h"

#include "proto/gen/AlterConfigs.h"

FUZZ_REQUEST_TARGET(AlterConfigsRequest, SAMSA_AlterConfigs_VERSION_MIN,
                    SAMSA_AlterConfigs_VERSION_MAX)
