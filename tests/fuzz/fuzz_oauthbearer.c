/*
 * libFuzzer target: SASL OAUTHBEARER on what an unauthenticated client
 * sends: the initial response (net/oauthbearer.c), the unsecured-JWT
 * validator (server/oauth_unsecured.c: base64, JSON, claims) on the token
 * it names and on the whole input as a token, and the exchange of
 * net/sasl.c.  Whatever comes back must be consistent: the slices inside
 * the input, a success names a principal, a failure says why with a
 * status, the error JSON fits its buffer.
 */
#include "fuzz.h"

#include <string.h>

#include "net/oauthbearer.h"
#include "net/sasl.h"
#include "server/oauth_unsecured.h"

static void
fuzz_token(const samsa_oauth_conf_t *c, samsa_slice_t token)
{
    samsa_oauth_token_t  t;
    char                 json[128];
    size_t               n;

    if (samsa_oauth_validate_unsecured(c, token, 1800000000000LL, &t)
        == SAMSA_ERR_NONE) {
        fuzz_require(t.principal[0] != '\0');
        return;
    }
    fuzz_require(t.status[0] != '\0' && t.why[0] != '\0');
    n = samsa_oauth_error_json(&t, json, sizeof(json));
    fuzz_require(n < sizeof(json) && json[n] == '\0');
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    samsa_oauth_conf_t      c;
    samsa_oauth_initial_t   ir;
    samsa_sasl_conf_t       conf;
    samsa_sasl_t            sasl;
    samsa_sasl_result_t     res;
    samsa_slice_t           msg = { (const char *) data, size };
    char                    why[192];

    samsa_oauth_conf_init(&c);
    if (samsa_oauth_parse_initial(msg, &ir, why, sizeof(why))
        == SAMSA_ERR_NONE) {
        fuzz_require(ir.token.ptr >= msg.ptr
                     && ir.token.ptr + ir.token.len <= msg.ptr + msg.len
                     && ir.token.len > 0);
        fuzz_token(&c, ir.token);
    } else {
        fuzz_require(why[0] != '\0');
    }
    fuzz_token(&c, msg);

    memset(&conf, 0, sizeof(conf));
    conf.mechs = SAMSA_SASL_M_OAUTHBEARER;
    conf.oauth_validate = samsa_oauth_unsecured_validate;
    conf.oauth_ctx = &c;
    samsa_sasl_init(&sasl, &conf);
    samsa_sasl_handshake(&sasl, 1, samsa_slice_cstr("OAUTHBEARER"), &res);
    samsa_sasl_token(&sasl, 1, msg, 0, &res);
    fuzz_require(res.token_len <= sizeof(res.token));
    if (res.complete) {
        fuzz_require(sasl.user[0] != '\0');
    } else if (!res.close) {
        fuzz_require(sasl.oauth_error_sent && res.token_len > 0);
        samsa_sasl_token(&sasl, 1, samsa_slice_cstr("\x01"), 0, &res);
        fuzz_require(res.close);
    }
    samsa_sasl_fini(&sasl);
    samsa_oauth_conf_fini(&c);
    return 0;
}
