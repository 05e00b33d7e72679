/*
 * libFuzzer target: the SASL server (net/sasl.c) on what an
 * unauthenticated client sends: the PLAIN message parser and the
 * exchange's states.  The first byte picks the mechanism (0 PLAIN, 1
 * SCRAM-SHA-256, 2 SCRAM-SHA-512, 3 PLAIN after a v0 handshake); the rest
 * is the token (PLAIN) or two tokens split at the first NUL (SCRAM, whose
 * user "alice" has a credential).  Whatever comes back must be
 * consistent: a parse's slices inside the input, a failure closes, a
 * success names a user, the token fits its buffer.
 */
#include "fuzz.h"

#include <string.h>

#include "net/sasl.h"

static bool
fuzz_lookup(void *ctx, samsa_scram_mech_t mech, const char *user,
            samsa_scram_cred_t *cred)
{
    static const uint8_t  salt[16] = "0123456789abcdef";

    (void) ctx;
    if (strcmp(user, "alice") != 0) {
        return false;
    }
    return samsa_scram_cred_from_salted(mech, (const uint8_t *)
                                        "salted-password-salted-password-"
                                        "salted-password-salted-password-",
                                        salt, sizeof(salt), 4096, cred)
           == SAMSA_ERR_NONE;
}

static void
fuzz_check(const samsa_sasl_t *sasl, const samsa_sasl_result_t *res)
{
    fuzz_require(res->token_len <= sizeof(res->token));
    fuzz_require(memchr(res->message, '\0', sizeof(res->message)) != NULL);
    if (res->close) {
        fuzz_require(!res->complete && sasl->state == SAMSA_SASL_FAILED);
    }
    if (res->complete) {
        fuzz_require(sasl->state == SAMSA_SASL_COMPLETE
                     && sasl->user[0] != '\0');
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char               pw[] = "alice-pw", name[] = "alice";
    static samsa_sasl_user_t  users[] = { { name, pw } };
    samsa_sasl_conf_t         conf;
    samsa_sasl_t              sasl;
    samsa_sasl_result_t       res;
    samsa_sasl_plain_t        pm;
    samsa_slice_t             msg, first, final;
    const char               *mechs[] = { "PLAIN", "SCRAM-SHA-256",
                                          "SCRAM-SHA-512", "PLAIN" };
    const char               *nul;
    char                      err[192], why[256];
    int                       sel;

    if (size < 1) {
        return 0;
    }
    sel = data[0] % 4;
    msg = (samsa_slice_t) { (const char *) data + 1, size - 1 };
    if (samsa_sasl_plain_parse(msg, &pm, err, sizeof(err)) == SAMSA_ERR_NONE) {
        fuzz_require(pm.authzid.len + pm.user.len + pm.password.len + 2
                     == msg.len);
    }
    memset(&conf, 0, sizeof(conf));
    conf.mechs = SAMSA_SASL_M_PLAIN | SAMSA_SASL_M_SCRAM_SHA_256
                 | SAMSA_SASL_M_SCRAM_SHA_512;
    conf.plain_users = users;
    conf.nplain_users = 1;
    conf.scram_lookup = fuzz_lookup;
    samsa_sasl_init(&sasl, &conf);
    fuzz_require(samsa_sasl_route(&sasl, 18, 0, why, sizeof(why))
                 == SAMSA_SASL_ROUTE_HANDLERS);
    fuzz_require(samsa_sasl_route(&sasl, 17, 0, why, sizeof(why))
                 == SAMSA_SASL_ROUTE_HANDSHAKE);
    samsa_sasl_handshake(&sasl, sel == 3 ? 0 : 1,
                         samsa_slice_cstr(mechs[sel]), &res);
    fuzz_require(res.error == 0 && samsa_sasl_expects_raw(&sasl) == (sel == 3));
    if (sel == 0 || sel == 3) {
        samsa_sasl_token(&sasl, sel == 3 ? -1 : 2, msg, 0, &res);
        fuzz_check(&sasl, &res);
    } else {
        nul = memchr(msg.ptr, '\0', msg.len);
        first = (samsa_slice_t) { msg.ptr, nul != NULL ? (size_t) (nul - msg.ptr)
                                                       : msg.len };
        final = nul != NULL ? (samsa_slice_t) { nul + 1, msg.len - first.len - 1 }
                            : SAMSA_SLICE_NULL;
        samsa_sasl_token(&sasl, 2, first, 0, &res);
        fuzz_check(&sasl, &res);
        if (!res.close) {
            fuzz_require(samsa_sasl_route(&sasl, 36, 0, why, sizeof(why))
                         == SAMSA_SASL_ROUTE_AUTHENTICATE);
            samsa_sasl_token(&sasl, 2, final, 0, &res);
            fuzz_check(&sasl, &res);
        }
    }
    samsa_sasl_fini(&sasl);
    return 0;
}
