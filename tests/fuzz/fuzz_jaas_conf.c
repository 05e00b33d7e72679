/*
 * libFuzzer target: sasl.jaas.config's parser (client/jaas_conf.c), which
 * reads what a user's properties file or -X flag holds.  Whatever parses
 * must be consistent: a module and a flag, option keys and values that
 * are NUL-terminated strings, each key once, and the lookup finding each.
 * The SASL client's token steps are fed the rest as server tokens.
 */
#include "fuzz.h"

#include "client/jaas_conf.h"
#include "client/sasl_client.h"
#include "util/alloc.h"

static void
fuzz_sasl_tokens(const uint8_t *data, size_t size)
{
    samsa_sasl_client_t  *sc;
    samsa_buf_t           out = SAMSA_BUF_INIT;
    samsa_slice_t         in = { (const char *) data, size };
    char                  err[256];
    bool                  done;
    int                   i;

    sc = samsa_sasl_client_new(size % 2 ? SAMSA_SASL_SCRAM_SHA_256
                                        : SAMSA_SASL_SCRAM_SHA_512,
                               "user", "pencil");
    samsa_sasl_client_set_nonce(sc, "rOprNGfwEbeRWgbNEkqO");
    for (i = 0; i < 3; i++) {
        if (samsa_sasl_client_step(sc, i == 0 ? SAMSA_SLICE_NULL : in, &out,
                                   &done, err, sizeof(err))
                != SAMSA_ERR_NONE
            || done) {
            break;
        }
    }
    samsa_sasl_client_free(sc);
    samsa_buf_fini(&out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    samsa_jaas_conf_t  jc;
    char              *text = samsa_malloc(size + 1);
    char               err[256];
    size_t             i, j;

    memcpy(text, data, size);
    text[size] = '\0';
    if (samsa_jaas_conf_parse(text, &jc, err, sizeof(err))
        == SAMSA_ERR_NONE) {
        fuzz_require(jc.module != NULL && jc.module[0] != '\0');
        fuzz_require(jc.flag != NULL);
        for (i = 0; i < jc.nopts; i++) {
            fuzz_require(jc.keys[i][0] != '\0');
            fuzz_require(samsa_jaas_conf_get(&jc, jc.keys[i])
                         == jc.values[i]);
            for (j = 0; j < i; j++) {
                fuzz_require(strcmp(jc.keys[i], jc.keys[j]) != 0);
            }
        }
    } else {
        fuzz_require(memchr(err, '\0', sizeof(err)) != NULL);
    }
    samsa_jaas_conf_fini(&jc);
    samsa_free(text);
    fuzz_sasl_tokens(data, size);
    return 0;
}
