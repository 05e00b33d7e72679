/* libFuzzer target: MetadataRequest bodies (2-byte version + body). */
#include "fuzz.h"

#include "proto/gen/Metadata.h"

FUZZ_REQUEST_TARGET(MetadataRequest, SAMSA_Metadata_VERSION_MIN,
                    SAMSA_Metadata_VERSION_MAX)
