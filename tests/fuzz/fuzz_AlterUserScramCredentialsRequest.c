/* libFuzzer target: AlterUserScramCredentialsRequest bodies (2-byte version + body). */
#include "fuzz.h"

#include "proto/gen/AlterUserScramCredentials.h"

FUZZ_REQUEST_TARGET(AlterUserScramCredentialsRequest, SAMSA_AlterUserScramCredentials_VERSION_MIN,
                    SAMSA_AlterUserScramCredentials_VERSION_MAX)
