/*
 * libFuzzer target: the SCRAM message parsers (net/scram.c), which read
 * what an unauthenticated client (or a broker, on the client side) sends.
 * The first byte picks the message; whatever parses must be consistent:
 * slices inside the input, a user name that escapes back to what was
 * sent, lengths within the structs' arrays.
 */
#include "fuzz.h"

#include "net/scram.h"

static int
inside(samsa_slice_t s, const uint8_t *p, size_t n)
{
    return s.len == 0 || ((const uint8_t *) s.ptr >= p
                          && (const uint8_t *) s.ptr + s.len <= p + n);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    samsa_scram_client_first_t  cf;
    samsa_scram_server_first_t  sf;
    samsa_scram_client_final_t  fin;
    samsa_scram_server_final_t  sfin;
    samsa_slice_t               msg;
    char                        err[256], esc[3 * SAMSA_SCRAM_MAX_USER];
    uint8_t                     raw[256];
    size_t                      rawn;

    if (size < 1) {
        return 0;
    }
    msg = (samsa_slice_t) { (const char *) data + 1, size - 1 };
    switch (data[0] % 5) {
    case 0:
        if (samsa_scram_parse_client_first(msg, &cf, err, sizeof(err)) == 0) {
            fuzz_require(inside(cf.nonce, data, size));
            fuzz_require(inside(cf.bare, data, size));
            fuzz_require(inside(cf.authzid, data, size));
            fuzz_require(strlen(cf.username) > 0);
            fuzz_require(samsa_scram_escape_user(cf.username, esc,
                                                 sizeof(esc)) == 0);
            fuzz_require(cf.bare.len >= 2 + strlen(esc));
            fuzz_require(memcmp(cf.bare.ptr + 2, esc, strlen(esc)) == 0);
        }
        break;
    case 1:
        if (samsa_scram_parse_server_first(msg, &sf, err, sizeof(err)) == 0) {
            fuzz_require(inside(sf.nonce, data, size));
            fuzz_require(sf.salt_len > 0 && sf.salt_len <= sizeof(sf.salt));
            fuzz_require(sf.iterations >= 0);
        }
        break;
    case 2:
        if (samsa_scram_parse_client_final(msg, &fin, err, sizeof(err)) == 0) {
            fuzz_require(inside(fin.without_proof, data, size));
            fuzz_require(fin.without_proof.ptr == msg.ptr);
            fuzz_require(fin.proof_len > 0
                         && fin.proof_len <= sizeof(fin.proof));
        }
        break;
    case 3:
        if (samsa_scram_parse_server_final(msg, &sfin, err, sizeof(err)) == 0) {
            fuzz_require(sfin.signature_len <= sizeof(sfin.signature));
        }
        break;
    default:
        if (samsa_scram_b64_decode(msg, raw, sizeof(raw), &rawn) == 0) {
            char  enc[4 * sizeof(raw) / 3 + 8];

            fuzz_require(rawn <= sizeof(raw));
            fuzz_require(samsa_scram_b64_encode(raw, rawn, enc,
                                                sizeof(enc)) == 0);
            fuzz_require(strlen(enc) == msg.len);
            fuzz_require(memcmp(enc, msg.ptr, msg.len) == 0);
        }
        break;
    }
    return 0;
}
