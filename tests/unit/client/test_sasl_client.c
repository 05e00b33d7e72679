/*
 * tests/unit/client/test_sasl_client.c - the client side of SASL
 * (client/sasl_client.c): PLAIN's token, RFC 7677's SCRAM-SHA-256
 * exchange byte for byte, SCRAM-SHA-512 against a server made of
 * net/scram.h's primitives, and every way a server's token is refused
 * (wrong signature, a nonce that does not extend ours, iterations out of
 * bounds, "e=" errors, malformed messages).
 */
#include "unit.h"

#include <stdio.h>

#include "client/sasl_client.h"
#include "net/scram.h"

#define CNONCE "rOprNGfwEbeRWgbNEkqO"
#define CF   "n,,n=user,r=" CNONCE
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
assert_buf(const samsa_buf_t *b, const char *want)
{
    assert_int_equal(b->len, strlen(want));
    assert_memory_equal(b->data, want, b->len);
}

/* A fresh SCRAM-SHA-256 client for user/pencil with RFC 7677's nonce,
 * past client-first. */
static samsa_sasl_client_t *
rfc_client(samsa_buf_t *out)
{
    samsa_sasl_client_t  *sc = samsa_sasl_client_new(SAMSA_SASL_SCRAM_SHA_256,
                                                      "user", "pencil");
    char                  err[256];
    bool                  done = true;

    samsa_sasl_client_set_nonce(sc, CNONCE);
    assert_int_equal(samsa_sasl_client_step(sc, SAMSA_SLICE_NULL, out, &done,
                                            err, sizeof(err)),
                     SAMSA_ERR_NONE);
    assert_false(done);
    assert_buf(out, CF);
    return sc;
}

static void
test_sasl_mech_names(void **state)
{
    samsa_sasl_mech_t  m;

    (void) state;
    assert_true(samsa_sasl_client_mech_from_name("PLAIN", &m));
    assert_int_equal(m, SAMSA_SASL_PLAIN);
    assert_true(samsa_sasl_client_mech_from_name("SCRAM-SHA-256", &m));
    assert_int_equal(m, SAMSA_SASL_SCRAM_SHA_256);
    assert_true(samsa_sasl_client_mech_from_name("SCRAM-SHA-512", &m));
    assert_string_equal(samsa_sasl_client_mech_name(m), "SCRAM-SHA-512");
    assert_false(samsa_sasl_client_mech_from_name("GSSAPI", &m));
    assert_true(samsa_sasl_client_mech_from_name("OAUTHBEARER", &m));
    assert_int_equal(m, SAMSA_SASL_OAUTHBEARER);
    assert_false(samsa_sasl_client_mech_from_name("oauthbearer", &m));
    assert_false(samsa_sasl_client_mech_from_name("plain", &m));
    assert_false(samsa_sasl_client_mech_from_name(NULL, &m));
}

static void
test_sasl_plain(void **state)
{
    samsa_sasl_client_t  *sc = samsa_sasl_client_new(SAMSA_SASL_PLAIN, "bob",
                                                      "pw");
    samsa_buf_t           out = SAMSA_BUF_INIT;
    char                  err[256];
    bool                  done = true;

    (void) state;
    assert_int_equal(samsa_sasl_client_step(sc, SAMSA_SLICE_NULL, &out,
                                            &done, err, sizeof(err)),
                     SAMSA_ERR_NONE);
    assert_false(done);
    assert_int_equal(out.len, 7);
    assert_memory_equal(out.data, "\0bob\0pw", 7);
    assert_int_equal(samsa_sasl_client_step(sc, s_(""), &out, &done, err,
                                            sizeof(err)), SAMSA_ERR_NONE);
    assert_true(done);
    assert_int_equal(out.len, 0);
    /* over: no more steps */
    assert_int_equal(samsa_sasl_client_step(sc, s_(""), &out, &done, err,
                                            sizeof(err)), SAMSA_ERR__STATE);
    samsa_sasl_client_free(sc);
    samsa_buf_fini(&out);
}

static void
test_sasl_scram_rfc7677(void **state)
{
    samsa_buf_t           out = SAMSA_BUF_INIT;
    samsa_sasl_client_t  *sc = rfc_client(&out);
    char                  err[256];
    bool                  done = true;

    (void) state;
    assert_int_equal(samsa_sasl_client_step(sc, s_(SF), &out, &done, err,
                                            sizeof(err)), SAMSA_ERR_NONE);
    assert_false(done);
    assert_buf(&out, CFIN);
    assert_int_equal(samsa_sasl_client_step(sc, s_(SFIN), &out, &done, err,
                                            sizeof(err)), SAMSA_ERR_NONE);
    assert_true(done);
    samsa_sasl_client_free(sc);
    samsa_buf_fini(&out);
}

/* server-final tokens that must fail the exchange after RFC 7677's
 * client-final */
static void
test_sasl_scram_bad_server_final(void **state)
{
    static const struct {
        const char  *sfin;
        const char  *why;
    } bad[] = {
        /* one bit of the signature changed */
        { "v=7rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=", "does not "
                                                           "verify" },
        /* a signature of the wrong length */
        { "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5n", "does not verify" },
        { "e=invalid-proof", "invalid-proof" },
        { "x=1", "format" },
        { "v=!!!!", "signature" },
        { "", "format" },
    };
    samsa_buf_t           out = SAMSA_BUF_INIT;
    samsa_sasl_client_t  *sc;
    char                  err[256];
    bool                  done;
    size_t                i;

    (void) state;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        sc = rfc_client(&out);
        assert_int_equal(samsa_sasl_client_step(sc, s_(SF), &out, &done, err,
                                                sizeof(err)),
                         SAMSA_ERR_NONE);
        err[0] = '\0';
        if (samsa_sasl_client_step(sc, s_(bad[i].sfin), &out, &done, err,
                                   sizeof(err))
                != SAMSA_ERR_SASL_AUTHENTICATION_FAILED
            || done || strstr(err, bad[i].why) == NULL) {
            fail_msg("'%s': got '%s', want '%s'", bad[i].sfin, err,
                     bad[i].why);
        }
        /* a failed exchange stays failed */
        assert_int_equal(samsa_sasl_client_step(sc, s_(SFIN), &out, &done,
                                                err, sizeof(err)),
                         SAMSA_ERR__STATE);
        samsa_sasl_client_free(sc);
    }
    samsa_buf_fini(&out);
}

static void
test_sasl_scram_bad_server_first(void **state)
{
    static const struct {
        const char  *sf;
        const char  *why;
    } bad[] = {
        /* the server's nonce must extend ours, and be longer */
        { "r=XOprNGfwEbeRWgbNEkqO%hvY,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
          "does not extend" },
        { "r=" CNONCE ",s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
          "does not extend" },
        { "r=rOprNG,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096", "does not extend" },
        /* Kafka's iteration bounds */
        { "r=" CNONCE "x,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4095", "out of bounds" },
        { "r=" CNONCE "x,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=16385",
          "out of bounds" },
        { "r=" CNONCE "x,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=999999999",
          "out of bounds" },
        { "r=" CNONCE "x,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=-1", "iteration" },
        { "r=" CNONCE "x,s=,i=4096", "salt" },
        { "r=" CNONCE "x,i=4096", "salt" },
        { "e=unknown-user", "unknown-user" },
        { "garbage", "nonce" },
    };
    samsa_buf_t           out = SAMSA_BUF_INIT;
    samsa_sasl_client_t  *sc;
    char                  err[256];
    bool                  done;
    size_t                i;

    (void) state;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        sc = rfc_client(&out);
        err[0] = '\0';
        if (samsa_sasl_client_step(sc, s_(bad[i].sf), &out, &done, err,
                                   sizeof(err))
                != SAMSA_ERR_SASL_AUTHENTICATION_FAILED
            || out.len != 0 || strstr(err, bad[i].why) == NULL) {
            fail_msg("'%s': got '%s', want '%s'", bad[i].sf, err,
                     bad[i].why);
        }
        samsa_sasl_client_free(sc);
    }
    samsa_buf_fini(&out);
}

/* The whole exchange against a server made of net/scram.h: a random
 * nonce, an escaped user name, the proof verified by the stored key, and
 * the server signature the client checks. */
static void
test_sasl_scram_512_against_server(void **state)
{
    samsa_sasl_client_t         *sc;
    samsa_scram_client_first_t   cf;
    samsa_scram_client_final_t   fin;
    samsa_scram_cred_t           cred;
    samsa_buf_t                  out = SAMSA_BUF_INIT;
    uint8_t                      salt[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
    uint8_t                      sig[SAMSA_SCRAM_MAX_HASH];
    char                         sf[256], am[1024], b64[200], sfin[256];
    char                         salt64[64], err[256], first_bare[256];
    bool                         done;

    (void) state;
    assert_int_equal(samsa_scram_cred_from_password(SAMSA_SCRAM_SHA_512,
                                                    "s3cret", salt,
                                                    sizeof(salt), 4096,
                                                    &cred),
                     SAMSA_ERR_NONE);
    sc = samsa_sasl_client_new(SAMSA_SASL_SCRAM_SHA_512, "a,b=c", "s3cret");
    assert_int_equal(samsa_sasl_client_step(sc, SAMSA_SLICE_NULL, &out,
                                            &done, err, sizeof(err)),
                     SAMSA_ERR_NONE);
    assert_int_equal(samsa_scram_parse_client_first(
                         (samsa_slice_t) { (char *) out.data, out.len }, &cf,
                         err, sizeof(err)), SAMSA_ERR_NONE);
    assert_string_equal(cf.username, "a,b=c");
    assert_non_null(memmem(out.data, out.len, "n=a=2Cb=3Dc,", 12));
    assert_int_equal(cf.nonce.len, 44);            /* 32 random bytes */
    snprintf(first_bare, sizeof(first_bare), "%.*s", (int) cf.bare.len,
             cf.bare.ptr);
    assert_int_equal(samsa_scram_b64_encode(salt, sizeof(salt), salt64,
                                            sizeof(salt64)), SAMSA_ERR_NONE);
    snprintf(sf, sizeof(sf), "r=%.*sSERVER,s=%s,i=4096", (int) cf.nonce.len,
             cf.nonce.ptr, salt64);
    assert_int_equal(samsa_sasl_client_step(sc, s_(sf), &out, &done, err,
                                            sizeof(err)), SAMSA_ERR_NONE);
    assert_int_equal(samsa_scram_parse_client_final(
                         (samsa_slice_t) { (char *) out.data, out.len },
                         &fin, err, sizeof(err)), SAMSA_ERR_NONE);
    snprintf(am, sizeof(am), "%s,%s,%.*s", first_bare, sf,
             (int) fin.without_proof.len, fin.without_proof.ptr);
    assert_true(samsa_scram_verify_proof(&cred, am, strlen(am), fin.proof,
                                         fin.proof_len));
    samsa_scram_server_signature(SAMSA_SCRAM_SHA_512, cred.server_key, am,
                                 strlen(am), sig);
    assert_int_equal(samsa_scram_b64_encode(sig, 64, b64, sizeof(b64)),
                     SAMSA_ERR_NONE);
    snprintf(sfin, sizeof(sfin), "v=%s", b64);
    assert_int_equal(samsa_sasl_client_step(sc, s_(sfin), &out, &done, err,
                                            sizeof(err)), SAMSA_ERR_NONE);
    assert_true(done);
    samsa_sasl_client_free(sc);

    /* the same exchange with a wrong password: the server refuses the
     * proof (what a broker answers SASL_AUTHENTICATION_FAILED for) */
    sc = samsa_sasl_client_new(SAMSA_SASL_SCRAM_SHA_512, "a,b=c", "wrong");
    assert_int_equal(samsa_sasl_client_step(sc, SAMSA_SLICE_NULL, &out,
                                            &done, err, sizeof(err)),
                     SAMSA_ERR_NONE);
    assert_int_equal(samsa_scram_parse_client_first(
                         (samsa_slice_t) { (char *) out.data, out.len }, &cf,
                         err, sizeof(err)), SAMSA_ERR_NONE);
    snprintf(first_bare, sizeof(first_bare), "%.*s", (int) cf.bare.len,
             cf.bare.ptr);
    snprintf(sf, sizeof(sf), "r=%.*sSERVER,s=%s,i=4096", (int) cf.nonce.len,
             cf.nonce.ptr, salt64);
    assert_int_equal(samsa_sasl_client_step(sc, s_(sf), &out, &done, err,
                                            sizeof(err)), SAMSA_ERR_NONE);
    assert_int_equal(samsa_scram_parse_client_final(
                         (samsa_slice_t) { (char *) out.data, out.len },
                         &fin, err, sizeof(err)), SAMSA_ERR_NONE);
    snprintf(am, sizeof(am), "%s,%s,%.*s", first_bare, sf,
             (int) fin.without_proof.len, fin.without_proof.ptr);
    assert_false(samsa_scram_verify_proof(&cred, am, strlen(am), fin.proof,
                                          fin.proof_len));
    samsa_sasl_client_free(sc);
    samsa_buf_fini(&out);
}

/* Two clients never send the same nonce. */
static void
test_sasl_scram_fresh_nonce(void **state)
{
    samsa_sasl_client_t  *a = samsa_sasl_client_new(SAMSA_SASL_SCRAM_SHA_256,
                                                     "u", "p");
    samsa_sasl_client_t  *b = samsa_sasl_client_new(SAMSA_SASL_SCRAM_SHA_256,
                                                     "u", "p");
    samsa_buf_t           x = SAMSA_BUF_INIT, y = SAMSA_BUF_INIT;
    char                  err[256];
    bool                  done;

    (void) state;
    assert_int_equal(samsa_sasl_client_step(a, SAMSA_SLICE_NULL, &x, &done,
                                            err, sizeof(err)),
                     SAMSA_ERR_NONE);
    assert_int_equal(samsa_sasl_client_step(b, SAMSA_SLICE_NULL, &y, &done,
                                            err, sizeof(err)),
                     SAMSA_ERR_NONE);
    assert_int_equal(x.len, y.len);
    assert_memory_not_equal(x.data, y.data, x.len);
    samsa_sasl_client_free(a);
    samsa_sasl_client_free(b);
    samsa_buf_fini(&x);
    samsa_buf_fini(&y);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_sasl_mech_names),
        cmocka_unit_test(test_sasl_plain),
        cmocka_unit_test(test_sasl_scram_rfc7677),
        cmocka_unit_test(test_sasl_scram_bad_server_final),
        cmocka_unit_test(test_sasl_scram_bad_server_first),
        cmocka_unit_test(test_sasl_scram_512_against_server),
        cmocka_unit_test(test_sasl_scram_fresh_nonce),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
