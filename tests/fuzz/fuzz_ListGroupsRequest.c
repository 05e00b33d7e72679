/* libFuzzer target: ListGroupsRequest bodies (2-byte version + body). */
#include "fuzz.h"

#include "proto/gen/ListGroups.h"

FUZZ_REQUEST_TARGET(ListGroupsRequest, SAMSA_ListGroups_VERSION_MIN,
                    SAMSA_ListGroups_VERSION_MAX)
