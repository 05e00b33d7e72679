/* libFuzzer target: SaslAuthenticateRequest bodies (2-byte version + body). */
#include "fuzz.h"

#include "proto/gen/SaslAuthenticate.h"

FUZZ_REQUEST_TARGET(SaslAuthenticateRequest, SAMSA_SaslAuthenticate_VERSION_MIN,
                    SAMSA_SaslAuthenticate_VERSION_MAX)
