/* libFuzzer target: SaslHandshakeRequest bodies (2-byte version + body). */
#include "fuzz.h"

#include "proto/gen/SaslHandshake.h"

FUZZ_REQUEST_TARGET(SaslHandshakeRequest, SAMSA_SaslHandshake_VERSION_MIN,
                    SAMSA_SaslHandshake_VERSION_MAX)
