/* libFuzzer target: AlterClientQuotasRequest bodies (2-byte version + body). */
#include "fuzz.h"

#include "proto/gen/AlterClientQuotas.h"

FUZZ_REQUEST_TARGET(AlterClientQuotasRequest, SAMSA_AlterClientQuotas_VERSION_MIN,
                    SAMSA_AlterClientQuotas_VERSION_MAX)
