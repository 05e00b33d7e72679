/* libFuzzer target: CreateAclsRequest bodies (2-byte version + body). */
#include "fuzz.h"

#include "proto/gen/CreateAcls.h"

FUZZ_REQUEST_TARGET(CreateAclsRequest, SAMSA_CreateAcls_VERSION_MIN,
                    SAMSA_CreateAcls_VERSION_MAX)
