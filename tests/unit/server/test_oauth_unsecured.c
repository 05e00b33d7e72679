/* Unit tests for net/oauthbearer.c (the OAUTHBEARER initial response, the
 * error JSON), server/oauth_unsecured.c (Kafka's unsecured-JWT validator,
 * its messages) and the OAUTHBEARER exchange of net/sasl.c. */
#include "unit.h"

#include <stdio.h>
#include <string.h>

#include "net/oauthbearer.h"
#include "net/sasl.h"
#include "server/oauth_unsecured.h"
#include "util/alloc.h"
#include "util/time.h"

#define NOW_MS  1800000000000LL         /* 2027-01-15 */

static void
b64url(const char *in, char *out)
{
    static const char  abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                               "0123456789-_";
    size_t    n = strlen(in), i, o = 0;
    uint32_t  v;

    for (i = 0; i + 2 < n; i += 3) {
        v = (uint32_t) (unsigned char) in[i] << 16
            | (uint32_t) (unsigned char) in[i + 1] << 8
            | (unsigned char) in[i + 2];
        out[o++] = abc[v >> 18 & 63];
        out[o++] = abc[v >> 12 & 63];
        out[o++] = abc[v >> 6 & 63];
        out[o++] = abc[v & 63];
    }
    if (n - i == 1) {
        v = (uint32_t) (unsigned char) in[i] << 16;
        out[o++] = abc[v >> 18 & 63];
        out[o++] = abc[v >> 12 & 63];
    } else if (n - i == 2) {
        v = (uint32_t) (unsigned char) in[i] << 16
            | (uint32_t) (unsigned char) in[i + 1] << 8;
        out[o++] = abc[v >> 18 & 63];
        out[o++] = abc[v >> 12 & 63];
        out[o++] = abc[v >> 6 & 63];
    }
    out[o] = '\0';
}

/* header.claims. (an unsecured JWS) into out (1024 bytes) */
static void
jws(const char *header, const char *claims, char *out)
{
    char  h[256], c[700];

    assert_true(strlen(header) < 180 && strlen(claims) < 500);
    b64url(header, h);
    b64url(claims, c);
    snprintf(out, 1024, "%s.%s.", h, c);
}

static samsa_err_t
check(const samsa_oauth_conf_t *c, const char *token, samsa_oauth_token_t *t)
{
    return samsa_oauth_validate_unsecured(c, samsa_slice_cstr(token), NOW_MS,
                                          t);
}

/* A failure with why (and status). */
static void
refused(const samsa_oauth_conf_t *c, const char *token, const char *status,
        const char *why)
{
    samsa_oauth_token_t  t;

    assert_int_equal(check(c, token, &t),
                     SAMSA_ERR_SASL_AUTHENTICATION_FAILED);
    assert_string_equal(t.status, status);
    assert_string_equal(t.why, why);
}

static void
test_oauth_initial_response(void **state)
{
    samsa_oauth_initial_t  ir;
    char                   why[192];
    static const char      ok[] = "n,,\x01" "auth=Bearer a.b.\x01\x01";
    static const char      az[] = "n,a=alice,\x01" "host=h\x01"
                                  "auth=bearer x-y_z.~+/=\x01"
                                  "port=9092\x01\x01";

    (void) state;
    assert_int_equal(samsa_oauth_parse_initial(samsa_slice_cstr(ok), &ir,
                                               why, sizeof(why)),
                     SAMSA_ERR_NONE);
    assert_int_equal(ir.authzid.len, 0);
    assert_true(samsa_slice_eq_cstr(ir.token, "a.b."));
    assert_int_equal(samsa_oauth_parse_initial(samsa_slice_cstr(az), &ir,
                                               why, sizeof(why)),
                     SAMSA_ERR_NONE);
    assert_true(samsa_slice_eq_cstr(ir.authzid, "alice"));
    assert_true(samsa_slice_eq_cstr(ir.token, "x-y_z.~+/="));
    /* Kafka's SaslException texts */
    assert_int_equal(samsa_oauth_parse_initial(
                         samsa_slice_cstr("n,,\x01" "host=h\x01\x01"), &ir,
                         why, sizeof(why)), SAMSA_ERR__BAD_MSG);
    assert_string_equal(why, "Invalid OAUTHBEARER client first message: "
                             "'auth' not specified");
    assert_int_equal(samsa_oauth_parse_initial(
                         samsa_slice_cstr("n,,\x01" "auth=Basic abc\x01\x01"),
                         &ir, why, sizeof(why)), SAMSA_ERR__BAD_MSG);
    assert_string_equal(why, "Invalid scheme in OAUTHBEARER client first "
                             "message: Basic");
    assert_int_equal(samsa_oauth_parse_initial(
                         samsa_slice_cstr("n,,\x01" "auth=Bearer\x01\x01"),
                         &ir, why, sizeof(why)), SAMSA_ERR__BAD_MSG);
    assert_string_equal(why, "Invalid OAUTHBEARER client first message: "
                             "invalid 'auth' format");
    assert_int_equal(samsa_oauth_parse_initial(
                         samsa_slice_cstr("y,,\x01" "auth=Bearer t\x01\x01"),
                         &ir, why, sizeof(why)), SAMSA_ERR__BAD_MSG);
    assert_string_equal(why, "Invalid OAUTHBEARER client first message");
    /* no closing ^A, something after it, a key that is not letters */
    assert_int_equal(samsa_oauth_parse_initial(
                         samsa_slice_cstr("n,,\x01" "auth=Bearer t\x01"),
                         &ir, why, sizeof(why)), SAMSA_ERR__BAD_MSG);
    assert_int_equal(samsa_oauth_parse_initial(
                         samsa_slice_cstr("n,,\x01" "auth=Bearer t\x01\x01x"),
                         &ir, why, sizeof(why)), SAMSA_ERR__BAD_MSG);
    assert_int_equal(samsa_oauth_parse_initial(
                         samsa_slice_cstr("n,,\x01" "a1=b\x01"
                                          "auth=Bearer t\x01\x01"),
                         &ir, why, sizeof(why)), SAMSA_ERR__BAD_MSG);
}

static void
test_oauth_unsecured_tokens(void **state)
{
    samsa_oauth_conf_t   c;
    samsa_oauth_token_t  t;
    char                 tok[1024], claims[512], part[64];
    static const char    none[] = "{\"alg\":\"none\"}";

    (void) state;
    samsa_oauth_conf_init(&c);
    jws(none, "{\"sub\":\"alice\",\"exp\":1800000060,\"iat\":1799999990,"
              "\"scope\":\"a b\"}", tok);
    assert_int_equal(check(&c, tok, &t), SAMSA_ERR_NONE);
    assert_string_equal(t.principal, "alice");
    assert_int_equal(t.lifetime_ms, 1800000060000LL);
    assert_int_equal(t.start_ms, 1799999990000LL);
    /* the clock */
    jws(none, "{\"sub\":\"alice\",\"exp\":1800000000}", tok);
    refused(&c, tok, "invalid_token", "The indicated time (1800000000000 ms) "
            "minus allowable clock skew (0 ms) was on or after the "
            "Expiration Time value (1800000000.000000 seconds)");
    c.clock_skew_ms = 1;
    assert_int_equal(check(&c, tok, &t), SAMSA_ERR_NONE);
    c.clock_skew_ms = 0;
    jws(none, "{\"sub\":\"alice\",\"exp\":1800000100,\"iat\":1800000001}",
        tok);
    refused(&c, tok, "invalid_token", "The Issued At value (1800000001.000000 "
            "seconds) was after the indicated time (1800000000000 ms) plus "
            "allowable clock skew (0 ms)");
    jws(none, "{\"sub\":\"alice\",\"exp\":1799999000,\"iat\":1799999000}",
        tok);
    c.clock_skew_ms = 10000000;
    refused(&c, tok, "invalid_token", "The Expiration Time time "
            "(1799999000.000000 seconds) was not after the Issued At time "
            "(1799999000.000000 seconds)");
    c.clock_skew_ms = 0;
    /* the claims */
    jws(none, "{\"sub\":\"alice\"}", tok);
    refused(&c, tok, "invalid_token", "No expiration time in JWT");
    jws(none, "{\"sub\":\"alice\",\"exp\":\"soon\"}", tok);
    refused(&c, tok, "invalid_token",
            "The 'exp' claim was not of type Number: String");
    jws(none, "{\"exp\":1800000060}", tok);
    refused(&c, tok, "invalid_token", "No principal name in JWT claim: sub");
    jws(none, "{\"sub\":\"  \",\"exp\":1800000060}", tok);
    refused(&c, tok, "invalid_token", "No principal name in JWT claim: sub");
    jws(none, "{\"sub\":7,\"exp\":1800000060}", tok);
    refused(&c, tok, "invalid_token",
            "The 'sub' claim was not of type String: Integer");
    /* another principal claim */
    samsa_free(c.principal_claim);
    c.principal_claim = samsa_strdup("client_id");
    jws(none, "{\"sub\":\"alice\",\"client_id\":\"svc\",\"exp\":1800000060}",
        tok);
    assert_int_equal(check(&c, tok, &t), SAMSA_ERR_NONE);
    assert_string_equal(t.principal, "svc");
    samsa_free(c.principal_claim);
    c.principal_claim = samsa_strdup("sub");
    /* the required scope: a string or a list in the token */
    c.required_scope = samsa_calloc(2, sizeof(char *));
    c.required_scope[0] = samsa_strdup("a");
    c.required_scope[1] = samsa_strdup("b");
    c.nrequired_scope = 2;
    jws(none, "{\"sub\":\"alice\",\"exp\":1800000060,\"scope\":[\"b\",\"a\"]}",
        tok);
    assert_int_equal(check(&c, tok, &t), SAMSA_ERR_NONE);
    jws(none, "{\"sub\":\"alice\",\"exp\":1800000060,\"scope\":\"a c\"}", tok);
    refused(&c, tok, "insufficient_scope", "The provided scope was missing a "
            "required scope (b)");
    assert_int_equal(check(&c, tok, &t), SAMSA_ERR_SASL_AUTHENTICATION_FAILED);
    assert_string_equal(t.scope, "[a, b]");
    assert_int_equal(samsa_oauth_error_json(&t, claims, sizeof(claims)),
                     strlen("{\"status\":\"insufficient_scope\", "
                            "\"scope\":\"[a, b]\"}"));
    assert_string_equal(claims, "{\"status\":\"insufficient_scope\", "
                                "\"scope\":\"[a, b]\"}");
    samsa_oauth_conf_fini(&c);
    samsa_oauth_conf_init(&c);
    /* the form */
    jws("{\"alg\":\"HS256\"}", "{\"sub\":\"alice\",\"exp\":1800000060}", tok);
    refused(&c, tok, "invalid_token",
            "Unsecured JWS must have 'none' for an algorithm");
    jws("{\"typ\":\"JWT\"}", "{\"sub\":\"alice\",\"exp\":1800000060}", tok);
    refused(&c, tok, "invalid_token",
            "JWS header must have an Algorithm value");
    jws(none, "{\"sub\":\"alice\",\"exp\":1800000060}", tok);
    snprintf(tok + strlen(tok), sizeof(tok) - strlen(tok), "c2ln");
    refused(&c, tok, "invalid_token",
            "Unsecured JWS must not contain a digital signature");
    refused(&c, "a.b", "invalid_token", "Unsecured JWS compact "
            "serializations must have 3 dot-separated Base64URL-encoded "
            "values");
    refused(&c, "a.b.c.", "invalid_token", "Unsecured JWS compact "
            "serializations must have 3 dot-separated Base64URL-encoded "
            "values");
    refused(&c, "a..b", "invalid_token",
            "Malformed compact serialization contains '..'");
    refused(&c, "a*.b.", "invalid_token",
            "malformed Base64 URL encoded value");
    b64url("{\"alg\":", part);
    snprintf(tok, sizeof(tok), "%s.%s.", part, part);
    refused(&c, tok, "invalid_token", "malformed JSON");
    b64url("[1]", part);
    snprintf(tok, sizeof(tok), "%s.%s.", part, part);
    refused(&c, tok, "invalid_token", "malformed JSON");
    samsa_oauth_conf_fini(&c);
}

/* The exchange: a refused token gets the error JSON as a challenge, ^A
 * then fails with it; a good one completes with the token's lifetime. */
static void
test_oauth_sasl_exchange(void **state)
{
    samsa_oauth_conf_t    oc;
    samsa_sasl_conf_t     conf;
    samsa_sasl_t          s;
    samsa_sasl_result_t   r;
    char                  tok[1024], msg[1400], claims[256];
    int64_t               exp_s = samsa_wall_ms() / 1000 + 3600;
    int                   n;

    (void) state;
    samsa_oauth_conf_init(&oc);
    memset(&conf, 0, sizeof(conf));
    conf.mechs = SAMSA_SASL_M_OAUTHBEARER;
    conf.oauth_validate = samsa_oauth_unsecured_validate;
    conf.oauth_ctx = &oc;
    assert_int_equal(samsa_sasl_mech_from_name(samsa_slice_cstr("OAUTHBEARER")),
                     SAMSA_SASL_M_OAUTHBEARER);

    samsa_sasl_init(&s, &conf);
    samsa_sasl_handshake(&s, 1, samsa_slice_cstr("OAUTHBEARER"), &r);
    assert_int_equal(r.error, 0);
    jws("{\"alg\":\"none\"}", "{\"sub\":\"alice\",\"exp\":1000}", tok);
    n = snprintf(msg, sizeof(msg), "n,,\x01" "auth=Bearer %s\x01\x01", tok);
    samsa_sasl_token(&s, 1, (samsa_slice_t) { msg, (size_t) n },
                     samsa_now_ns(), &r);
    assert_int_equal(r.error, 0);
    assert_false(r.complete);
    assert_false(r.close);
    assert_int_equal(r.token_len, strlen("{\"status\":\"invalid_token\"}"));
    assert_memory_equal(r.token, "{\"status\":\"invalid_token\"}", r.token_len);
    samsa_sasl_token(&s, 1, samsa_slice_cstr("\x01"), samsa_now_ns(), &r);
    assert_int_equal(r.error, SAMSA_ERR_SASL_AUTHENTICATION_FAILED);
    assert_string_equal(r.message, "{\"status\":\"invalid_token\"}");
    assert_true(r.close);
    samsa_sasl_fini(&s);

    /* a bad initial response: Kafka's generic SaslException answer */
    samsa_sasl_init(&s, &conf);
    samsa_sasl_handshake(&s, 1, samsa_slice_cstr("OAUTHBEARER"), &r);
    samsa_sasl_token(&s, 1, samsa_slice_cstr("garbage"), samsa_now_ns(), &r);
    assert_int_equal(r.error, SAMSA_ERR_SASL_AUTHENTICATION_FAILED);
    assert_string_equal(r.message, "Authentication failed during "
                        "authentication due to invalid credentials with SASL "
                        "mechanism OAUTHBEARER");
    samsa_sasl_fini(&s);

    /* a good token: the principal, the session ends with the token */
    snprintf(claims, sizeof(claims), "{\"sub\":\"alice\",\"exp\":%lld}",
             (long long) exp_s);
    jws("{\"alg\":\"none\"}", claims, tok);
    samsa_sasl_init(&s, &conf);
    samsa_sasl_handshake(&s, 1, samsa_slice_cstr("OAUTHBEARER"), &r);
    n = snprintf(msg, sizeof(msg), "n,a=bob,\x01" "auth=Bearer %s\x01\x01",
                 tok);
    samsa_sasl_token(&s, 1, (samsa_slice_t) { msg, (size_t) n },
                     samsa_now_ns(), &r);
    assert_int_equal(r.error, SAMSA_ERR_SASL_AUTHENTICATION_FAILED);
    assert_string_equal(r.message, "Authentication failed: Client requested "
                        "an authorization id (bob) that is different from the "
                        "token's principal name (alice)");
    samsa_sasl_fini(&s);
    samsa_sasl_init(&s, &conf);
    samsa_sasl_handshake(&s, 1, samsa_slice_cstr("OAUTHBEARER"), &r);
    n = snprintf(msg, sizeof(msg), "n,a=alice,\x01" "auth=Bearer %s\x01\x01",
                 tok);
    samsa_sasl_token(&s, 1, (samsa_slice_t) { msg, (size_t) n },
                     samsa_now_ns(), &r);
    assert_int_equal(r.error, 0);
    assert_true(r.complete);
    assert_string_equal(s.user, "alice");
    assert_true(r.session_lifetime_ms > 3590000
                && r.session_lifetime_ms <= 3600000);
    samsa_sasl_fini(&s);
    /* connections.max.reauth.ms shorter than the token: it wins */
    conf.reauth_ms = 60000;
    samsa_sasl_init(&s, &conf);
    samsa_sasl_handshake(&s, 1, samsa_slice_cstr("OAUTHBEARER"), &r);
    samsa_sasl_token(&s, 1, (samsa_slice_t) { msg, (size_t) n },
                     samsa_now_ns(), &r);
    assert_true(r.complete);
    assert_int_equal(r.session_lifetime_ms, 60000);
    samsa_sasl_fini(&s);
    samsa_oauth_conf_fini(&oc);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oauth_initial_response),
        cmocka_unit_test(test_oauth_unsecured_tokens),
        cmocka_unit_test(test_oauth_sasl_exchange),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
