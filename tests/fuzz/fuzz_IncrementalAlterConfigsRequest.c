/* libFuzzer target: IncrementalAlterConfigsRequest bodies (2-byte version
 * + body). */
#include "fuzz.h"

#include "proto/gen/IncrementalAlterConfigs.h"

FUZZ_REQUEST_TARGET(IncrementalAlterConfigsRequest,
                    SAMSA_IncrementalAlterConfigs_VERSION_MIN,
                    SAMSA_IncrementalAlterConfigs_VERSION_MAX)
