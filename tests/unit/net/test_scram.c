/* Unit tests for net/scram.c: RFC 7677's SCRAM-SHA-256 exchange end to
 * end, SHA-512 round trips, and malformed messages. */
#include "unit.h"

#include <stdio.h>

#include "net/scram.h"

#define CF   "n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
#define SF   "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0," \
             "s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
#define CFIN "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0," \
             "p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
#define SFIN "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="

static samsa_slice_t
s_(const char *s)
{
    return samsa_slice_cstr(s);
}

static void
auth_message(const samsa_scram_client_first_t *cf, const char *sf,
             const samsa_scram_client_final_t *fin, char *out, size_t size)
{
    snprintf(out, size, "%.*s,%s,%.*s", (int) cf->bare.len, cf->bare.ptr, sf,
             (int) fin->without_proof.len, fin->without_proof.ptr);
}

static void
test_scram_rfc7677(void **state)
{
    samsa_scram_client_first_t  cf;
    samsa_scram_server_first_t  sf;
    samsa_scram_client_final_t  fin;
    samsa_scram_server_final_t  sfin;
    samsa_scram_cred_t          cred;
    uint8_t                     sp[64], proof[64], sig[64];
    char                        am[512], err[128];

    (void) state;
    assert_int_equal(samsa_scram_parse_client_first(s_(CF), &cf, err,
                                                    sizeof(err)), 0);
    assert_string_equal(cf.username, "user");
    assert_int_equal(cf.authzid.len, 0);
    assert_true(samsa_slice_eq_cstr(cf.nonce, "rOprNGfwEbeRWgbNEkqO"));
    assert_int_equal(samsa_scram_parse_server_first(s_(SF), &sf, err,
                                                    sizeof(err)), 0);
    assert_int_equal(sf.iterations, 4096);
    assert_int_equal(sf.salt_len, 16);
    assert_int_equal(samsa_scram_parse_client_final(s_(CFIN), &fin, err,
                                                    sizeof(err)), 0);
    assert_int_equal(fin.proof_len, 32);
    assert_true(samsa_slice_eq_cstr(fin.channel_binding, "biws"));
    auth_message(&cf, SF, &fin, am, sizeof(am));

    /* the client's side */
    assert_int_equal(samsa_scram_salted_password(SAMSA_SCRAM_SHA_256,
                                                 "pencil", 6, sf.salt,
                                                 sf.salt_len, sf.iterations,
                                                 sp), 0);
    samsa_scram_client_proof(SAMSA_SCRAM_SHA_256, sp, am, strlen(am), proof);
    assert_memory_equal(proof, fin.proof, 32);

    /* the server's side, from the stored credential only */
    assert_int_equal(samsa_scram_cred_from_password(SAMSA_SCRAM_SHA_256,
                                                    "pencil", sf.salt,
                                                    sf.salt_len, 4096,
                                                    &cred), 0);
    assert_true(samsa_scram_verify_proof(&cred, am, strlen(am), fin.proof,
                                         fin.proof_len));
    samsa_scram_server_signature(SAMSA_SCRAM_SHA_256, cred.server_key, am,
                                 strlen(am), sig);
    assert_int_equal(samsa_scram_parse_server_final(s_(SFIN), &sfin, err,
                                                    sizeof(err)), 0);
    assert_int_equal(sfin.signature_len, 32);
    assert_memory_equal(sig, sfin.signature, 32);

    /* a wrong password or a flipped bit does not verify */
    fin.proof[3] ^= 1;
    assert_false(samsa_scram_verify_proof(&cred, am, strlen(am), fin.proof,
                                          fin.proof_len));
    assert_false(samsa_scram_verify_proof(&cred, am, strlen(am), fin.proof,
                                          31));
    assert_int_equal(samsa_scram_cred_from_password(SAMSA_SCRAM_SHA_256,
                                                    "pencil!", sf.salt,
                                                    sf.salt_len, 4096,
                                                    &cred), 0);
    fin.proof[3] ^= 1;
    assert_false(samsa_scram_verify_proof(&cred, am, strlen(am), fin.proof,
                                          fin.proof_len));
}

static void
test_scram_sha512_round_trip(void **state)
{
    samsa_scram_cred_t  cred;
    uint8_t             salt[24], sp[64], proof[64];
    const char         *am = "n=alice,r=abc,r=abcdef,s=xyz,i=8192,c=biws,r=abcdef";

    (void) state;
    assert_int_equal(samsa_scram_random(salt, sizeof(salt)), 0);
    assert_int_equal(samsa_scram_hash_len(SAMSA_SCRAM_SHA_512), 64);
    assert_int_equal(samsa_scram_cred_from_password(SAMSA_SCRAM_SHA_512,
                                                    "s3cret", salt,
                                                    sizeof(salt), 8192,
                                                    &cred), 0);
    assert_int_equal(samsa_scram_salted_password(SAMSA_SCRAM_SHA_512,
                                                 "s3cret", 6, salt,
                                                 sizeof(salt), 8192, sp), 0);
    samsa_scram_client_proof(SAMSA_SCRAM_SHA_512, sp, am, strlen(am), proof);
    assert_true(samsa_scram_verify_proof(&cred, am, strlen(am), proof, 64));
    /* iterations outside Kafka's 4096..16384 are refused */
    assert_int_equal(samsa_scram_salted_password(SAMSA_SCRAM_SHA_512, "x", 1,
                                                 salt, sizeof(salt), 4095,
                                                 sp), SAMSA_ERR__INVALID_ARG);
    assert_int_equal(samsa_scram_salted_password(SAMSA_SCRAM_SHA_512, "x", 1,
                                                 salt, sizeof(salt), 16385,
                                                 sp), SAMSA_ERR__INVALID_ARG);
}

static void
test_scram_names_and_escaping(void **state)
{
    samsa_scram_mech_t          m;
    samsa_scram_client_first_t  cf;
    char                        out[64], err[128];

    (void) state;
    assert_true(samsa_scram_mech_from_name("SCRAM-SHA-512", &m));
    assert_int_equal(m, SAMSA_SCRAM_SHA_512);
    assert_false(samsa_scram_mech_from_name("scram-sha-256", &m));
    assert_false(samsa_scram_mech_from_name("PLAIN", &m));
    assert_true(samsa_scram_mech_from_type(1, &m));
    assert_false(samsa_scram_mech_from_type(3, &m));
    assert_string_equal(samsa_scram_mech_name(SAMSA_SCRAM_SHA_256),
                        "SCRAM-SHA-256");

    assert_int_equal(samsa_scram_escape_user("a,b=c", out, sizeof(out)), 0);
    assert_string_equal(out, "a=2Cb=3Dc");
    assert_int_equal(samsa_scram_escape_user("abcdef", out, 4),
                     SAMSA_ERR__INVALID_ARG);
    assert_int_equal(samsa_scram_parse_client_first(
                         s_("n,a=admin,n=a=2Cb=3Dc,r=xyz,tokenauth=true"),
                         &cf, err, sizeof(err)), 0);
    assert_string_equal(cf.username, "a,b=c");
    assert_true(samsa_slice_eq_cstr(cf.authzid, "admin"));
    assert_true(cf.tokenauth);
    assert_true(samsa_slice_eq_cstr(cf.bare, "n=a=2Cb=3Dc,r=xyz,tokenauth=true"));
}

static void
test_scram_malformed(void **state)
{
    static const char *const    bad_first[] = {
        "", "n", "n,", "n,,", "y,,n=user,r=abc", "p=tls,,n=user,r=abc",
        "n,,r=abc", "n,,n=,r=abc", "n,,n=us=er,r=abc", "n,,n=user=2",
        "n,,n=user", "n,,n=user,r=", "n,,n=user,r=a b", "x,,n=u,r=a",
        "n,b=x,n=u,r=a", "n,,n=u,r=a,junk",
    };
    static const char *const    bad_server_first[] = {
        "", "r=abc", "r=abc,s=!!!!,i=4096", "r=abc,s=,i=4096",
        "r=abc,s=W22ZaJ0SNY7soEsUEjb6gQ==", "r=abc,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=",
        "r=abc,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=40x6", "e=unknown-user",
        "r=abc,s=W22ZaJ0SNY7soEsUEjb6gQ=,i=4096",
    };
    static const char *const    bad_final[] = {
        "", "c=biws", "c=biws,r=abc", "c=biws,r=abc,p=", "r=abc,c=biws,p=AAAA",
        "c=biws,r=abc,p=A===", "c=biws,r=abc,p=AAAA,x=1",
    };
    samsa_scram_client_first_t  cf;
    samsa_scram_server_first_t  sf;
    samsa_scram_client_final_t  fin;
    samsa_scram_server_final_t  sfin;
    char                        err[128];
    size_t                      i;

    (void) state;
    for (i = 0; i < sizeof(bad_first) / sizeof(bad_first[0]); i++) {
        err[0] = '\0';
        assert_int_equal(samsa_scram_parse_client_first(s_(bad_first[i]), &cf,
                                                        err, sizeof(err)),
                         SAMSA_ERR__BAD_MSG);
        assert_true(err[0] != '\0');
    }
    for (i = 0; i < sizeof(bad_server_first) / sizeof(bad_server_first[0]);
         i++) {
        assert_int_equal(samsa_scram_parse_server_first(s_(bad_server_first[i]),
                                                        &sf, err,
                                                        sizeof(err)),
                         SAMSA_ERR__BAD_MSG);
    }
    for (i = 0; i < sizeof(bad_final) / sizeof(bad_final[0]); i++) {
        assert_int_equal(samsa_scram_parse_client_final(s_(bad_final[i]), &fin,
                                                        err, sizeof(err)),
                         SAMSA_ERR__BAD_MSG);
    }
    assert_int_equal(samsa_scram_parse_server_final(s_("e=invalid-proof"),
                                                    &sfin, err, sizeof(err)),
                     0);
    assert_true(samsa_slice_eq_cstr(sfin.error, "invalid-proof"));
    assert_int_equal(samsa_scram_parse_server_final(s_("x=1"), &sfin, err,
                                                    sizeof(err)),
                     SAMSA_ERR__BAD_MSG);
    assert_int_equal(samsa_scram_parse_server_final(s_("v=@@@@"), &sfin, err,
                                                    sizeof(err)),
                     SAMSA_ERR__BAD_MSG);
}

static void
test_scram_base64(void **state)
{
    uint8_t  out[8];
    char     enc[16];
    size_t   n = 99;

    (void) state;
    assert_int_equal(samsa_scram_b64_decode(s_(""), out, sizeof(out), &n), 0);
    assert_int_equal(n, 0);
    assert_int_equal(samsa_scram_b64_decode(s_("YQ=="), out, sizeof(out), &n),
                     0);
    assert_int_equal(n, 1);
    assert_int_equal(out[0], 'a');
    assert_int_equal(samsa_scram_b64_decode(s_("YWI="), out, sizeof(out), &n),
                     0);
    assert_int_equal(n, 2);
    assert_int_equal(samsa_scram_b64_decode(s_("YWJj"), out, sizeof(out), &n),
                     0);
    assert_int_equal(n, 3);
    assert_int_equal(samsa_scram_b64_decode(s_("YR=="), out, sizeof(out), &n),
                     SAMSA_ERR__BAD_MSG);          /* not canonical */
    assert_int_equal(samsa_scram_b64_decode(s_("YW=j"), out, sizeof(out), &n),
                     SAMSA_ERR__BAD_MSG);
    assert_int_equal(samsa_scram_b64_decode(s_("YWJjYWJjYWJj"), out,
                                            sizeof(out), &n),
                     SAMSA_ERR__BAD_MSG);          /* 9 bytes > 8 */
    assert_int_equal(samsa_scram_b64_encode((const uint8_t *) "ab", 2, enc,
                                            sizeof(enc)), 0);
    assert_string_equal(enc, "YWI=");
    assert_int_equal(samsa_scram_b64_encode((const uint8_t *) "ab", 2, enc, 4),
                     SAMSA_ERR__INVALID_ARG);
    assert_int_equal(samsa_scram_nonce(enc, sizeof(enc)),
                     SAMSA_ERR__INVALID_ARG);      /* 45 needed */
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_scram_rfc7677),
        cmocka_unit_test(test_scram_sha512_round_trip),
        cmocka_unit_test(test_scram_names_and_escaping),
        cmocka_unit_test(test_scram_malformed),
        cmocka_unit_test(test_scram_base64),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
