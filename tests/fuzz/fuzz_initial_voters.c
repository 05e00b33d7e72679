/*
 * libFuzzer target: the dynamic quorum's initial voters parser
 * (config/config_kraft.c, samsa_config_initial_voters_parse), which reads
 * `samsa-server format --initial-controllers` and the metadata dir's
 * bootstrap.voters file.  What parses must be consistent: ids unique,
 * ports in range, hosts and directory ids NUL-terminated, a directory id
 * 22 characters or none (and present for every voter when required).
 */
#include "fuzz.h"

#include <string.h>

#include "config/config_kraft.h"
#include "util/alloc.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    samsa_config_voter_t  *v = NULL;
    char                  *text = samsa_malloc(size + 1);
    char                   why[512];
    size_t                 n = 0, i, j;
    bool                   need = size > 0 && (data[0] & 1);

    memcpy(text, data, size);
    text[size] = '\0';
    if (samsa_config_initial_voters_parse(text, need, &v, &n, why,
                                          sizeof(why)) == SAMSA_ERR_NONE) {
        for (i = 0; i < n; i++) {
            fuzz_require(v[i].id >= 0);
            fuzz_require(v[i].addr.port >= 1 && v[i].addr.port <= 65535);
            fuzz_require(memchr(v[i].addr.host, '\0',
                              sizeof(v[i].addr.host)) != NULL);
            fuzz_require(strlen(v[i].dir_id) == 0 || strlen(v[i].dir_id) == 22);
            fuzz_require(!need || strlen(v[i].dir_id) == 22);
            for (j = 0; j < i; j++) {
                fuzz_require(v[j].id != v[i].id);
            }
        }
    } else {
        fuzz_require(v == NULL && memchr(why, '\0', sizeof(why)) != NULL);
    }
    samsa_free(v);
    samsa_free(text);
    return 0;
}
