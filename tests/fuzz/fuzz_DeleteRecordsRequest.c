/* libFuzzer target: DeleteRecordsRequest bodies (2-byte version + body). */
#include "fuzz.h"

#include "proto/gen/DeleteRecords.h"

FUZZ_REQUEST_TARGET(DeleteRecordsRequest, SAMSA_DeleteRecords_VERSION_MIN,
                    SAMSA_DeleteRecords_VERSION_MAX)
