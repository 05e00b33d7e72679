/* Unit tests for net/jaas.c (Kafka's sasl.jaas.config syntax) and
 * net/sasl.c (the server's SASL states, PLAIN and SCRAM, re-authentication
 * with connections.max.reauth.ms). */
#include "unit.h"

#include <stdio.h>
#include <string.h>

#include "net/jaas.h"
#include "net/sasl.h"

#define API_ApiVersions       18
#define API_SaslHandshake     17
#define API_SaslAuthenticate  36
#define API_Metadata          3

static samsa_slice_t
s_(const char *s)
{
    return samsa_slice_cstr(s);
}

static samsa_err_t
jaas(const char *text, samsa_jaas_t *out, char *why)
{
    return samsa_jaas_parse(text, strlen(text), out, why, 192);
}

static void
test_jaas_kafka_forms(void **state)
{
    samsa_jaas_t  j;
    char          why[192];

    (void) state;
    assert_int_equal(jaas("org.apache.kafka.common.security.plain."
                          "PlainLoginModule required\n  user_admin=\"a b\"\n"
                          "  user_alice=\"q\\\"x\\\\\" username=admin;",
                          &j, why), SAMSA_ERR_NONE);
    assert_int_equal(j.nmodules, 1);
    assert_string_equal(j.modules[0].class_name,
                        "org.apache.kafka.common.security.plain."
                        "PlainLoginModule");
    assert_string_equal(j.modules[0].flag, "required");
    assert_int_equal(j.modules[0].nopts, 3);
    assert_string_equal(samsa_jaas_opt(&j.modules[0], "user_admin"), "a b");
    assert_string_equal(samsa_jaas_opt(&j.modules[0], "user_alice"),
                        "q\"x\\");
    assert_string_equal(samsa_jaas_opt(&j.modules[0], "username"), "admin");
    assert_null(samsa_jaas_opt(&j.modules[0], "nope"));
    samsa_jaas_fini(&j);

    assert_int_equal(jaas("a.B optional; c.D sufficient k='v';", &j, why),
                     SAMSA_ERR_NONE);
    assert_int_equal(j.nmodules, 2);
    assert_string_equal(j.modules[1].class_name, "c.D");
    assert_string_equal(samsa_jaas_opt(&j.modules[1], "k"), "v");
    samsa_jaas_fini(&j);
}

static void
test_jaas_malformed(void **state)
{
    static const struct {
        const char  *text;
        const char  *why;
    } bad[] = {
        { "", "no login module" },
        { "a.B required user_x=\"1\"", "must end with ';'" },
        { "a.B maybe;", "invalid control flag 'maybe'" },
        { "a.B required x;", "'=' expected after option 'x'" },
        { "a.B required x=\"open;", "unterminated quoted value" },
        { "a.B", "a control flag expected" },
        { "a.B required x=;", "an option value expected" },
    };
    samsa_jaas_t  j;
    char          why[192];
    size_t        i;

    (void) state;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(jaas(bad[i].text, &j, why), SAMSA_ERR__CONFIG);
        if (strstr(why, bad[i].why) == NULL) {
            fail_msg("'%s': '%s' lacks '%s'", bad[i].text, why, bad[i].why);
        }
        samsa_jaas_fini(&j);
    }
}

static void
test_plain_parse(void **state)
{
    samsa_sasl_plain_t  pm;
    char                err[192];

    (void) state;
    assert_int_equal(samsa_sasl_plain_parse((samsa_slice_t) { "z\0u\0p", 5 },
                                            &pm, err, sizeof(err)),
                     SAMSA_ERR_NONE);
    assert_true(samsa_slice_eq(pm.authzid, s_("z")));
    assert_true(samsa_slice_eq(pm.user, s_("u")));
    assert_true(samsa_slice_eq(pm.password, s_("p")));
    assert_int_equal(samsa_sasl_plain_parse((samsa_slice_t) { "\0\0", 2 },
                                            &pm, err, sizeof(err)),
                     SAMSA_ERR_NONE);
    assert_int_equal(pm.user.len, 0);
    assert_int_equal(samsa_sasl_plain_parse((samsa_slice_t) { "a\0b", 3 },
                                            &pm, err, sizeof(err)),
                     SAMSA_ERR__BAD_MSG);
    assert_string_equal(err, "Invalid SASL/PLAIN response: expected 3 "
                             "tokens, got 2");
    assert_int_equal(samsa_sasl_plain_parse((samsa_slice_t) { "a\0b\0c\0", 6 },
                                            &pm, err, sizeof(err)),
                     SAMSA_ERR__BAD_MSG);
    assert_string_equal(err, "Invalid SASL/PLAIN response: expected 3 "
                             "tokens, got 4");
}

/* ---- the state machine ---------------------------------------------------- */

static char  user_alice[] = "alice", pw_alice[] = "alice-pw";
static char  user_bob[] = "bob", pw_bob[] = "bob-pw";
static samsa_sasl_user_t  users[] = { { user_alice, pw_alice },
                                      { user_bob, pw_bob } };
static char  *names[] = { (char *) "PLAIN", (char *) "SCRAM-SHA-256" };
static const uint8_t  salt[16] = "0123456789abcdef";

static bool
lookup(void *ctx, samsa_scram_mech_t mech, const char *user,
       samsa_scram_cred_t *cred)
{
    (void) ctx;
    if (strcmp(user, "carol") != 0 || mech != SAMSA_SCRAM_SHA_256) {
        return false;
    }
    return samsa_scram_cred_from_password(mech, "carol-pw", salt,
                                          sizeof(salt), 4096, cred)
           == SAMSA_ERR_NONE;
}

static samsa_sasl_conf_t
conf_of(int64_t reauth_ms)
{
    samsa_sasl_conf_t  c;

    memset(&c, 0, sizeof(c));
    c.mechs = SAMSA_SASL_M_PLAIN | SAMSA_SASL_M_SCRAM_SHA_256;
    c.mech_names = names;
    c.nmech_names = 2;
    c.plain_users = users;
    c.nplain_users = 2;
    c.reauth_ms = reauth_ms;
    c.scram_lookup = lookup;
    return c;
}

static void
test_sasl_routes_before_authentication(void **state)
{
    samsa_sasl_conf_t  c = conf_of(0);
    samsa_sasl_t       s;
    char               why[256];

    (void) state;
    samsa_sasl_init(&s, &c);
    assert_int_equal(samsa_sasl_route(&s, API_Metadata, 0, why, sizeof(why)),
                     SAMSA_SASL_ROUTE_CLOSE);
    assert_string_equal(why, "Unexpected Kafka request of type METADATA "
                             "during SASL handshake.");
    samsa_sasl_fini(&s);

    samsa_sasl_init(&s, &c);
    assert_int_equal(samsa_sasl_route(&s, API_ApiVersions, 0, why, 256),
                     SAMSA_SASL_ROUTE_HANDLERS);
    assert_int_equal(samsa_sasl_route(&s, API_ApiVersions, 0, why, 256),
                     SAMSA_SASL_ROUTE_CLOSE);
    samsa_sasl_fini(&s);

    samsa_sasl_init(&s, &c);
    assert_int_equal(samsa_sasl_route(&s, API_SaslAuthenticate, 0, why, 256),
                     SAMSA_SASL_ROUTE_CLOSE);
    samsa_sasl_fini(&s);
}

static void
test_sasl_plain(void **state)
{
    samsa_sasl_conf_t    c = conf_of(0);
    samsa_sasl_result_t  r;
    samsa_sasl_t         s;
    char                 why[256];

    (void) state;
    samsa_sasl_init(&s, &c);
    assert_int_equal(samsa_sasl_route(&s, API_SaslHandshake, 0, why, 256),
                     SAMSA_SASL_ROUTE_HANDSHAKE);
    samsa_sasl_handshake(&s, 1, s_("PLAIN"), &r);
    assert_int_equal(r.error, 0);
    assert_false(r.close);
    assert_false(samsa_sasl_expects_raw(&s));
    assert_int_equal(samsa_sasl_route(&s, API_Metadata, 0, why, 256),
                     SAMSA_SASL_ROUTE_CLOSE);
    assert_string_equal(why, "Unexpected Kafka request of type METADATA "
                             "during SASL authentication.");
    samsa_sasl_fini(&s);

    samsa_sasl_init(&s, &c);
    samsa_sasl_handshake(&s, 1, s_("PLAIN"), &r);
    assert_int_equal(samsa_sasl_route(&s, API_SaslAuthenticate, 0, why, 256),
                     SAMSA_SASL_ROUTE_AUTHENTICATE);
    samsa_sasl_token(&s, 2, (samsa_slice_t) { "\0bob\0bob-pw", 11 }, 0, &r);
    assert_int_equal(r.error, 0);
    assert_true(r.complete);
    assert_string_equal(s.user, "bob");
    assert_int_equal(r.session_lifetime_ms, 0);
    assert_int_equal(samsa_sasl_route(&s, API_Metadata, 1, why, 256),
                     SAMSA_SASL_ROUTE_HANDLERS);
    /* no re-authentication without connections.max.reauth.ms: a new
     * handshake goes to the handlers (ILLEGAL_SASL_STATE) */
    assert_int_equal(samsa_sasl_route(&s, API_SaslHandshake, 1, why, 256),
                     SAMSA_SASL_ROUTE_HANDLERS);
    samsa_sasl_fini(&s);

    /* a wrong password, and another user's */
    samsa_sasl_init(&s, &c);
    samsa_sasl_handshake(&s, 0, s_("PLAIN"), &r);
    assert_true(samsa_sasl_expects_raw(&s));
    samsa_sasl_token(&s, -1, (samsa_slice_t) { "\0alice\0bob-pw", 13 }, 0,
                     &r);
    assert_int_equal(r.error, SAMSA_ERR_SASL_AUTHENTICATION_FAILED);
    assert_string_equal(r.message, SAMSA_SASL_PLAIN_BAD_PASSWORD);
    assert_true(r.close);
    assert_false(r.complete);
    assert_int_equal(samsa_sasl_route(&s, API_ApiVersions, 0, why, 256),
                     SAMSA_SASL_ROUTE_CLOSE);
    samsa_sasl_fini(&s);

    /* unknown and disabled mechanisms */
    samsa_sasl_init(&s, &c);
    samsa_sasl_handshake(&s, 1, s_("SCRAM-SHA-512"), &r);
    assert_int_equal(r.error, SAMSA_ERR_UNSUPPORTED_SASL_MECHANISM);
    assert_true(r.close);
    samsa_sasl_fini(&s);
    samsa_sasl_init(&s, &c);
    samsa_sasl_handshake(&s, 1, s_("plain"), &r);
    assert_int_equal(r.error, SAMSA_ERR_UNSUPPORTED_SASL_MECHANISM);
    samsa_sasl_fini(&s);
}

/* Client side of SCRAM-SHA-256 for carol with password pw; true if the
 * server accepted.  cnonce_again: repeat the client nonce in front of the
 * final nonce, as librdkafka does. */
static bool
scram_login(samsa_sasl_t *s, const char *pw, bool cnonce_again)
{
    samsa_scram_server_first_t  sf;
    samsa_sasl_result_t         r;
    uint8_t                     sp[SAMSA_SCRAM_MAX_HASH];
    uint8_t                     proof[SAMSA_SCRAM_MAX_HASH];
    char                        sfirst[1024], wo[1024], am[2048], fin[1200];
    char                        err[192], p64[100];
    const char                 *bare = "n=carol,r=clientnonce";
    int                         n;

    samsa_sasl_handshake(s, 1, s_("SCRAM-SHA-256"), &r);
    assert_int_equal(r.error, 0);
    samsa_sasl_token(s, 2, s_("n,,n=carol,r=clientnonce"), 0, &r);
    if (r.close) {
        return false;
    }
    snprintf(sfirst, sizeof(sfirst), "%.*s", (int) r.token_len,
             (const char *) r.token);
    assert_int_equal(samsa_scram_parse_server_first(s_(sfirst), &sf, err,
                                                    sizeof(err)),
                     SAMSA_ERR_NONE);
    assert_int_equal(strncmp(sf.nonce.ptr, "clientnonce", 11), 0);
    assert_int_equal(sf.iterations, 4096);
    assert_int_equal(samsa_scram_salted_password(SAMSA_SCRAM_SHA_256, pw,
                                                 strlen(pw), sf.salt,
                                                 sf.salt_len, 4096, sp),
                     SAMSA_ERR_NONE);
    snprintf(wo, sizeof(wo), "c=biws,r=%s%.*s",
             cnonce_again ? "clientnonce" : "", (int) sf.nonce.len,
             sf.nonce.ptr);
    n = snprintf(am, sizeof(am), "%s,%s,%s", bare, sfirst, wo);
    assert_true(n > 0 && (size_t) n < sizeof(am));
    samsa_scram_client_proof(SAMSA_SCRAM_SHA_256, sp, am, strlen(am), proof);
    assert_int_equal(samsa_scram_b64_encode(proof, 32, p64, sizeof(p64)),
                     SAMSA_ERR_NONE);
    n = snprintf(fin, sizeof(fin), "%s,p=%s", wo, p64);
    assert_true(n > 0 && (size_t) n < sizeof(fin));
    samsa_sasl_token(s, 2, s_(fin), 0, &r);
    if (!r.complete) {
        assert_true(r.close);
        assert_string_equal(r.message, "Authentication failed during "
                            "authentication due to invalid credentials "
                            "with SASL mechanism SCRAM-SHA-256");
        return false;
    }
    assert_int_equal(strncmp((const char *) r.token, "v=", 2), 0);
    return true;
}

static void
test_sasl_scram(void **state)
{
    samsa_sasl_conf_t    c = conf_of(0);
    samsa_sasl_result_t  r;
    samsa_sasl_t         s;

    (void) state;
    samsa_sasl_init(&s, &c);
    assert_true(scram_login(&s, "carol-pw", false));
    assert_string_equal(s.user, "carol");
    samsa_sasl_fini(&s);
    samsa_sasl_init(&s, &c);
    assert_true(scram_login(&s, "carol-pw", true));
    samsa_sasl_fini(&s);
    samsa_sasl_init(&s, &c);
    assert_false(scram_login(&s, "wrong", false));
    samsa_sasl_fini(&s);
    /* an unknown user fails at once */
    samsa_sasl_init(&s, &c);
    samsa_sasl_handshake(&s, 1, s_("SCRAM-SHA-256"), &r);
    samsa_sasl_token(&s, 2, s_("n,,n=dave,r=abc"), 0, &r);
    assert_true(r.close);
    assert_int_equal(r.error, SAMSA_ERR_SASL_AUTHENTICATION_FAILED);
    samsa_sasl_fini(&s);
}

static void
test_sasl_reauthentication(void **state)
{
    samsa_sasl_conf_t    c = conf_of(1000);
    samsa_sasl_result_t  r;
    samsa_sasl_t         s;
    char                 why[256];
    int64_t              t0 = 5000000000LL;

    (void) state;
    samsa_sasl_init(&s, &c);
    samsa_sasl_handshake(&s, 1, s_("PLAIN"), &r);
    samsa_sasl_token(&s, 1, (samsa_slice_t) { "\0bob\0bob-pw", 11 }, t0, &r);
    assert_true(r.complete);
    assert_int_equal(r.session_lifetime_ms, 1000);
    assert_int_equal(samsa_sasl_route(&s, API_Metadata, t0 + 999000000LL,
                                      why, 256),
                     SAMSA_SASL_ROUTE_HANDLERS);
    /* re-authenticate as the same user: a new session */
    assert_int_equal(samsa_sasl_route(&s, API_SaslHandshake, t0 + 900000000LL,
                                      why, 256),
                     SAMSA_SASL_ROUTE_HANDSHAKE);
    samsa_sasl_handshake(&s, 1, s_("PLAIN"), &r);
    assert_int_equal(r.error, 0);
    samsa_sasl_token(&s, 2, (samsa_slice_t) { "\0bob\0bob-pw", 11 },
                     t0 + 900000000LL, &r);
    assert_true(r.complete);
    assert_int_equal(samsa_sasl_route(&s, API_Metadata, t0 + 1500000000LL,
                                      why, 256),
                     SAMSA_SASL_ROUTE_HANDLERS);
    /* the session ends: the next request closes */
    assert_int_equal(samsa_sasl_route(&s, API_Metadata, t0 + 2000000000LL,
                                      why, 256),
                     SAMSA_SASL_ROUTE_CLOSE);
    assert_non_null(strstr(why, "expired"));
    samsa_sasl_fini(&s);

    /* another principal on re-authentication fails */
    samsa_sasl_init(&s, &c);
    samsa_sasl_handshake(&s, 1, s_("PLAIN"), &r);
    samsa_sasl_token(&s, 1, (samsa_slice_t) { "\0bob\0bob-pw", 11 }, t0, &r);
    assert_int_equal(samsa_sasl_route(&s, API_SaslHandshake, t0, why, 256),
                     SAMSA_SASL_ROUTE_HANDSHAKE);
    samsa_sasl_handshake(&s, 1, s_("PLAIN"), &r);
    samsa_sasl_token(&s, 1, (samsa_slice_t) { "\0alice\0alice-pw", 15 }, t0,
                     &r);
    assert_false(r.complete);
    assert_true(r.close);
    assert_string_equal(r.message, "Cannot change principals during "
                                   "re-authentication");
    samsa_sasl_fini(&s);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_jaas_kafka_forms),
        cmocka_unit_test(test_jaas_malformed),
        cmocka_unit_test(test_plain_parse),
        cmocka_unit_test(test_sasl_routes_before_authentication),
        cmocka_unit_test(test_sasl_plain),
        cmocka_unit_test(test_sasl_scram),
        cmocka_unit_test(test_sasl_reauthentication),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
