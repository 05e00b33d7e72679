/*
 * libFuzzer target: the .properties reader (server.properties and
 * --command-config files).  Whatever parses must round-trip: every key
 * and value read back is a NUL-free string, and a second parse of the
 * same text gives the same entries.
 */
#include "fuzz.h"

#include <string.h>

#include "util/props.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    samsa_props_t  *a = samsa_props_new(), *b = samsa_props_new();
    char            errstr[256];
    samsa_err_t     ea, eb;
    size_t          i;

    ea = samsa_props_parse(a, (const char *) data, size, "fuzz", errstr,
                           sizeof(errstr));
    eb = samsa_props_parse(b, (const char *) data, size, "fuzz", errstr,
                           sizeof(errstr));
    fuzz_require(ea == eb);
    fuzz_require(ea == SAMSA_ERR_NONE || ea == SAMSA_ERR__CONFIG);
    fuzz_require(samsa_props_count(a) == samsa_props_count(b));
    for (i = 0; i < samsa_props_count(a); i++) {
        const char  *k = samsa_props_key(a, i), *v = samsa_props_value(a, i);

        fuzz_require(k != NULL && v != NULL);
        fuzz_require(strcmp(k, samsa_props_key(b, i)) == 0);
        fuzz_require(strcmp(v, samsa_props_value(b, i)) == 0);
        fuzz_require(samsa_props_get(a, k) != NULL);
    }
    samsa_props_free(a);
    samsa_props_free(b);
    return 0;
}
