/*
 * tests/unit/client/test_oauth_login.c - unsecured OAUTHBEARER tokens
 * (client/oauth_login.c) from OAuthBearerLoginModule options: the header
 * and claims decoded back to their JSON at a fixed time, lists, numbers,
 * extensions and their order, JSON escaping, and every refusal (reserved
 * claims, no principal, bad numbers, bad extension names and values);
 * then the OAUTHBEARER exchange of client/sasl_client.c.
 */
#include "unit.h"

#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>

#include "client/jaas_conf.h"
#include "client/oauth_login.h"
#include "client/sasl_client.h"

#define NOW_MS  1700000000123LL

/* base64url without padding back to text. */
static void
b64url_decode(const char *p, size_t n, char *out, size_t size)
{
    char    tmp[2048];
    size_t  i;
    int     len;

    assert_true(n + 4 < sizeof(tmp));
    for (i = 0; i < n; i++) {
        tmp[i] = p[i] == '-' ? '+' : p[i] == '_' ? '/' : p[i];
    }
    while (i % 4 != 0) {
        tmp[i++] = '=';
    }
    tmp[i] = '\0';
    len = EVP_DecodeBlock((unsigned char *) out, (unsigned char *) tmp,
                          (int) i);
    assert_true(len >= 0 && (size_t) len < size);
    /* EVP_DecodeBlock counts the padding's zero bytes */
    while (i > 0 && tmp[i - 1] == '=') {
        len--;
        i--;
    }
    out[len] = '\0';
}

/* The token of jaas at NOW_MS, split into header and claims JSON. */
static samsa_err_t
make(const char *jaas, char *header, char *claims, char *ext, char *errstr)
{
    samsa_jaas_conf_t  jc;
    samsa_buf_t        token = SAMSA_BUF_INIT, extensions = SAMSA_BUF_INIT;
    const char        *t, *dot1, *dot2;
    samsa_err_t        err;

    assert_int_equal(samsa_jaas_conf_parse(jaas, &jc, errstr, 256),
                     SAMSA_ERR_NONE);
    err = samsa_oauth_login_token(&jc, NOW_MS, &token, &extensions, errstr,
                                  256);
    samsa_jaas_conf_fini(&jc);
    if (err == SAMSA_ERR_NONE) {
        t = (const char *) token.data;
        assert_int_equal(strlen(t), token.len);
        dot1 = strchr(t, '.');
        assert_non_null(dot1);
        dot2 = strchr(dot1 + 1, '.');
        assert_non_null(dot2);
        assert_int_equal(dot2[1], '\0');        /* no signature */
        assert_null(strpbrk(t, "+/="));         /* the URL alphabet */
        b64url_decode(t, (size_t) (dot1 - t), header, 512);
        b64url_decode(dot1 + 1, (size_t) (dot2 - dot1 - 1), claims, 1024);
        strcpy(ext, (const char *) extensions.data);
    } else {
        assert_int_equal(token.len, 0);
    }
    samsa_buf_fini(&token);
    samsa_buf_fini(&extensions);
    return err;
}

#define MODULE SAMSA_JAAS_OAUTHBEARER_MODULE " required "

static void
test_token_claims(void **state)
{
    char  h[512], c[1024], e[256], err[256];

    (void) state;
    assert_int_equal(make(MODULE "unsecuredLoginStringClaim_sub=\"alice\";",
                          h, c, e, err), SAMSA_ERR_NONE);
    assert_string_equal(h, "{\"alg\":\"none\"}");
    assert_string_equal(c, "{\"exp\":1700003600.123,\"iat\":1700000000.123,"
                           "\"sub\":\"alice\"}");
    assert_string_equal(e, "");
    /* lifetime, numbers, lists, another principal claim, escaping */
    assert_int_equal(make(MODULE
                          "unsecuredLoginPrincipalClaimName=\"user\" "
                          "unsecuredLoginStringClaim_user=\"b\\\"o\\\\b\" "
                          "unsecuredLoginLifetimeSeconds=\"60\" "
                          "unsecuredLoginNumberClaim_level=\"-2.5e3\" "
                          "unsecuredLoginListClaim_scope=\"|read|write\" "
                          "unsecuredLoginListClaim_empty=\",\" "
                          "unsecuredLoginListClaim_gaps=\",a,,b\";",
                          h, c, e, err), SAMSA_ERR_NONE);
    assert_string_equal(c, "{\"exp\":1700000060.123,\"iat\":1700000000.123,"
                           "\"user\":\"b\\\"o\\\\b\",\"level\":-2.5e3,"
                           "\"scope\":[\"read\",\"write\"],\"empty\":[],"
                           "\"gaps\":[\"a\",\"\",\"b\"]}");
    /* extensions in order; the last of a repeated option counts */
    assert_int_equal(make(MODULE "unsecuredLoginStringClaim_sub=\"x\" "
                          "unsecuredLoginExtension_traceId=\"123\" "
                          "unsecuredLoginExtension_zone=\"eu west\" "
                          "unsecuredLoginStringClaim_sub=\"y\";",
                          h, c, e, err), SAMSA_ERR_NONE);
    assert_string_equal(e, "\x01traceId=123\x01zone=eu west");
    assert_non_null(strstr(c, "\"sub\":\"y\""));
    assert_null(strstr(c, "\"sub\":\"x\""));
}

static void
test_token_refused(void **state)
{
    static const struct {
        const char  *opts;
        const char  *why;
    } bad[] = {
        { "", "no principal: the string claim 'sub'" },
        { "unsecuredLoginStringClaim_sub=\"\"", "is missing or empty" },
        { "unsecuredLoginPrincipalClaimName=\"user\" "
          "unsecuredLoginStringClaim_sub=\"a\"", "claim 'user'" },
        { "unsecuredLoginStringClaim_sub=\"a\" "
          "unsecuredLoginNumberClaim_exp=\"1\"",
          "Cannot explicitly set the 'exp' claim" },
        { "unsecuredLoginStringClaim_sub=\"a\" "
          "unsecuredLoginStringClaim_iat=\"1\"",
          "Cannot explicitly set the 'iat' claim" },
        { "unsecuredLoginStringClaim_sub=\"a\" "
          "unsecuredLoginLifetimeSeconds=\"soon\"",
          "unsecuredLoginLifetimeSeconds=\"soon\" is not a number" },
        { "unsecuredLoginStringClaim_sub=\"a\" "
          "unsecuredLoginNumberClaim_n=\"NaN\"", "is not a number" },
        { "unsecuredLoginStringClaim_sub=\"a\" "
          "unsecuredLoginNumberClaim_n=\"0x10\"", "is not a number" },
        { "unsecuredLoginStringClaim_sub=\"a\" "
          "unsecuredLoginExtension_auth=\"x\"",
          "Extension name auth is invalid" },
        { "unsecuredLoginStringClaim_sub=\"a\" "
          "unsecuredLoginExtension_tr4ce=\"x\"",
          "Extension name tr4ce is invalid" },
        { "unsecuredLoginStringClaim_sub=\"a\" "
          "unsecuredLoginExtension_t=\"\\001\"",
          "Extension value for extension t is invalid" },
    };
    char    jaas[512], h[512], c[1024], e[256], err[256];
    size_t  i;

    (void) state;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(jaas, sizeof(jaas), MODULE "%s;", bad[i].opts);
        err[0] = '\0';
        assert_int_equal(make(jaas, h, c, e, err), SAMSA_ERR__CONFIG);
        if (strstr(err, bad[i].why) == NULL) {
            fail_msg("%s: got '%s', want '%s'", bad[i].opts, err, bad[i].why);
        }
        assert_non_null(strstr(err, SAMSA_JAAS_OAUTHBEARER_MODULE));
    }
}

static void
test_sasl_exchange(void **state)
{
    samsa_sasl_client_t  *sc;
    samsa_buf_t           out = SAMSA_BUF_INIT;
    samsa_sasl_mech_t     mech;
    char                  err[256];
    bool                  done;

    (void) state;
    assert_true(samsa_sasl_client_mech_from_name("OAUTHBEARER", &mech));
    assert_int_equal(mech, SAMSA_SASL_OAUTHBEARER);
    assert_string_equal(samsa_sasl_client_mech_name(mech), "OAUTHBEARER");
    /* accepted: the initial response, then an empty challenge */
    sc = samsa_sasl_client_new_oauthbearer("h.c.", "\x01traceId=1");
    assert_int_equal(samsa_sasl_client_step(sc, SAMSA_SLICE_NULL, &out, &done,
                                            err, sizeof(err)),
                     SAMSA_ERR_NONE);
    assert_false(done);
    assert_int_equal(out.len, strlen("n,,\x01" "auth=Bearer h.c.\x01traceId=1"
                                     "\x01\x01"));
    assert_memory_equal(out.data, "n,,\x01" "auth=Bearer h.c.\x01traceId=1"
                                  "\x01\x01", out.len);
    assert_int_equal(samsa_sasl_client_step(sc, samsa_slice_cstr(""), &out,
                                            &done, err, sizeof(err)),
                     SAMSA_ERR_NONE);
    assert_true(done);
    assert_int_equal(out.len, 0);
    samsa_sasl_client_free(sc);
    /* refused: the error JSON is answered with ^A, then the exchange ends */
    sc = samsa_sasl_client_new_oauthbearer("h.c.", "");
    assert_int_equal(samsa_sasl_client_step(sc, SAMSA_SLICE_NULL, &out, &done,
                                            err, sizeof(err)),
                     SAMSA_ERR_NONE);
    assert_int_equal(samsa_sasl_client_step(
                         sc, samsa_slice_cstr("{\"status\":\"invalid_token\"}"),
                         &out, &done, err, sizeof(err)),
                     SAMSA_ERR_NONE);
    assert_false(done);
    assert_int_equal(out.len, 1);
    assert_int_equal(out.data[0], 0x01);
    assert_int_equal(samsa_sasl_client_step(sc, samsa_slice_cstr("x"), &out,
                                            &done, err, sizeof(err)),
                     SAMSA_ERR_SASL_AUTHENTICATION_FAILED);
    assert_non_null(strstr(err, "OAUTHBEARER"));
    samsa_sasl_client_free(sc);
    samsa_buf_fini(&out);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_token_claims),
        cmocka_unit_test(test_token_refused),
        cmocka_unit_test(test_sasl_exchange),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
