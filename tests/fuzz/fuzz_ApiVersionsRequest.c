/* libFuzzer target: ApiVersionsRequest bodies (2-byte version + body). */
#include "fuzz.h"

#include "proto/gen/ApiVersions.h"

FUZZ_REQUEST_TARGET(ApiVersionsRequest, SAMSA_ApiVersions_VERSION_MIN,
                    SAMSA_ApiVersions_VERSION_MAX)
