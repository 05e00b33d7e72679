/* libFuzzer target: FetchRequest bodies (2-byte version + body). */
#include "fuzz.h"

#include "proto/gen/Fetch.h"

FUZZ_REQUEST_TARGET(FetchRequest, SAMSA_Fetch_VERSION_MIN,
                    SAMSA_Fetch_VERSION_MAX)
