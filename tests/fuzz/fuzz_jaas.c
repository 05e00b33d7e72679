/*
 * libFuzzer target: the sasl.jaas.config parser (net/jaas.c), which reads
 * an operator's text: any input parses into modules with a class, a valid
 * flag and named options, or fails with a reason; never a crash.
 */
#include "fuzz.h"

#include <string.h>

#include "net/jaas.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    samsa_jaas_t  jaas;
    char          why[192];
    size_t        i, j;

    why[0] = '\0';
    if (samsa_jaas_parse((const char *) data, size, &jaas, why, sizeof(why))
        == SAMSA_ERR_NONE) {
        fuzz_require(jaas.nmodules > 0);
        for (i = 0; i < jaas.nmodules; i++) {
            fuzz_require(jaas.modules[i].class_name != NULL
                         && jaas.modules[i].flag != NULL);
            for (j = 0; j < jaas.modules[i].nopts; j++) {
                fuzz_require(samsa_jaas_opt(&jaas.modules[i],
                                            jaas.modules[i].opts[j].name)
                             != NULL);
            }
        }
    } else {
        fuzz_require(why[0] != '\0');
    }
    samsa_jaas_fini(&jaas);
    return 0;
}
