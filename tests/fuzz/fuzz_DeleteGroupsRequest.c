/* libFuzzer target: DeleteGroupsRequest bodies (2-byte version + body). */
#include "fuzz.h"

#include "proto/gen/DeleteGroups.h"

FUZZ_REQUEST_TARGET(DeleteGroupsRequest, SAMSA_DeleteGroups_VERSION_MIN,
                    SAMSA_DeleteGroups_VERSION_MAX)
