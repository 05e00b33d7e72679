/* libFuzzer target: DeleteAclsRequest bodies (2-byte version + body). */
#include "fuzz.h"

#include "proto/gen/DeleteAcls.h"

FUZZ_REQUEST_TARGET(DeleteAclsRequest, SAMSA_DeleteAcls_VERSION_MIN,
                    SAMSA_DeleteAcls_VERSION_MAX)
