/*
 * tests/unit/client/test_jaas_conf.c - sasl.jaas.config's grammar
 * (client/jaas_conf.c) and the SASL keys' checks and resolution
 * (client/conf.c, client_config.c): Java's JaasConfig accepts and refuses
 * the same texts, errors name the key and never show a password.
 */
#include "unit.h"

#include <stdio.h>

#include <samsa/conf.h>

#include "client/client_config.h"
#include "client/jaas_conf.h"
#include "client/sasl_client.h"

static void
test_jaas_plain_and_scram(void **state)
{
    samsa_jaas_conf_t  jc;
    char               err[256];

    (void) state;
    assert_int_equal(samsa_jaas_conf_parse(
        "org.apache.kafka.common.security.plain.PlainLoginModule required "
        "username=\"alice\" password=\"alice-secret\";", &jc, err,
        sizeof(err)), SAMSA_ERR_NONE);
    assert_string_equal(jc.module, SAMSA_JAAS_PLAIN_MODULE);
    assert_string_equal(jc.flag, "required");
    assert_int_equal(jc.nopts, 2);
    assert_string_equal(samsa_jaas_conf_get(&jc, "username"), "alice");
    assert_string_equal(samsa_jaas_conf_get(&jc, "password"),
                        "alice-secret");
    assert_null(samsa_jaas_conf_get(&jc, "user_alice"));
    samsa_jaas_conf_fini(&jc);

    /* unquoted words, another flag in another case, comments, new lines,
     * escapes inside quotes, a repeated key (the last wins) */
    assert_int_equal(samsa_jaas_conf_parse(
        "  /* scram */ org.apache.kafka.common.security.scram."
        "ScramLoginModule\n  SUFFICIENT // the flag\n  username=bob_1.x "
        "password=\"a \\\"q\\\" \\\\ b\\n\\101\" tokenauth=true "
        "username=\"carol\" ;  ", &jc, err, sizeof(err)), SAMSA_ERR_NONE);
    assert_string_equal(jc.module, SAMSA_JAAS_SCRAM_MODULE);
    assert_string_equal(jc.flag, "SUFFICIENT");
    assert_int_equal(jc.nopts, 3);
    assert_string_equal(samsa_jaas_conf_get(&jc, "username"), "carol");
    assert_string_equal(samsa_jaas_conf_get(&jc, "password"),
                        "a \"q\" \\ b\nA");
    assert_string_equal(samsa_jaas_conf_get(&jc, "tokenauth"), "true");
    samsa_jaas_conf_fini(&jc);

    /* no options at all */
    assert_int_equal(samsa_jaas_conf_parse("a.B optional;", &jc, err,
                                           sizeof(err)), SAMSA_ERR_NONE);
    assert_int_equal(jc.nopts, 0);
    samsa_jaas_conf_fini(&jc);
}

static void
test_jaas_refused(void **state)
{
    static const struct {
        const char  *text;
        const char  *why;
    } bad[] = {
        { "", "login module not specified" },
        { "   // only a comment", "login module not specified" },
        { "m.M required username=\"a\"", "does not end with ';'" },
        { "m.M required", "does not end with ';'" },
        { "m.M maybe;", "control flag" },
        { "m.M;", "control flag" },
        { "\"m.M\" required;", "class name" },
        { "m.M required username;", "value not specified for key "
                                    "'username'" },
        { "m.M required username=;", "value not specified" },
        { "m.M required username=\"a;", "unterminated quote" },
        { "m.M required username='a';", "single quotes" },
        { "m.M required /* open", "unterminated" },
        { "m.M required \"k\"=v;", "option name" },
        { "m.M required a=b; n.N required;", "more than one login module" },
        { "m.M required a=b; ;", "unexpected text" },
        { "m.M required a=b c;", "value not specified for key 'c'" },
        { "m.M required a=b, c=d;", "option name" },
    };
    samsa_jaas_conf_t  jc;
    char               err[256];
    size_t             i;

    (void) state;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        if (samsa_jaas_conf_parse(bad[i].text, &jc, err, sizeof(err))
            != SAMSA_ERR__CONFIG || strstr(err, bad[i].why) == NULL) {
            fail_msg("'%s': got '%s', want '%s'", bad[i].text, err,
                     bad[i].why);
        }
        samsa_jaas_conf_fini(&jc);
    }
}

/* samsa_client_config_load() of conf; the error text in err. */
static samsa_err_t
load(samsa_conf_t *conf, samsa_client_config_t *cc, char *err, size_t size)
{
    samsa_err_t  e;

    assert_int_equal(samsa_conf_set(conf, "bootstrap.servers", "h:1", err,
                                    size), SAMSA_ERR_NONE);
    e = samsa_client_config_load(cc, conf, err, size);
    return e;
}

static void
set_ok(samsa_conf_t *conf, const char *k, const char *v)
{
    char  err[256];

    assert_int_equal(samsa_conf_set(conf, k, v, err, sizeof(err)),
                     SAMSA_ERR_NONE);
}

static void
test_sasl_keys(void **state)
{
    samsa_client_config_t  cc;
    samsa_conf_t          *conf;
    char                   err[512];

    (void) state;
    /* sasl.mechanism's default is Java's GSSAPI: refused once SASL is on,
     * naming the key */
    conf = samsa_conf_new();
    assert_string_equal(samsa_conf_default("sasl.mechanism"), "GSSAPI");
    set_ok(conf, "security.protocol", "SASL_PLAINTEXT");
    set_ok(conf, "sasl.username", "u");
    set_ok(conf, "sasl.password", "p");
    assert_int_equal(load(conf, &cc, err, sizeof(err)), SAMSA_ERR__CONFIG);
    assert_non_null(strstr(err, "'sasl.mechanism'"));
    assert_non_null(strstr(err, "GSSAPI"));
    samsa_client_config_fini(&cc);
    /* librdkafka's names */
    set_ok(conf, "sasl.mechanism", "SCRAM-SHA-512");
    assert_int_equal(load(conf, &cc, err, sizeof(err)), SAMSA_ERR_NONE);
    assert_int_equal(cc.sasl_mech, SAMSA_SASL_SCRAM_SHA_512);
    assert_string_equal(cc.sasl_username, "u");
    assert_string_equal(cc.sasl_password, "p");
    assert_null(cc.tls);
    samsa_client_config_fini(&cc);
    /* Java's JAAS value wins over them */
    set_ok(conf, "sasl.jaas.config", SAMSA_JAAS_SCRAM_MODULE
           " required username=\"j\" password=\"jp\";");
    assert_int_equal(load(conf, &cc, err, sizeof(err)), SAMSA_ERR_NONE);
    assert_string_equal(cc.sasl_username, "j");
    assert_string_equal(cc.sasl_password, "jp");
    samsa_client_config_fini(&cc);
    /* a module libsamsa cannot stand in for */
    set_ok(conf, "sasl.jaas.config", "org.apache.kafka.common.security."
           "oauthbearer.OAuthBearerLoginModule required;");
    assert_int_equal(load(conf, &cc, err, sizeof(err)), SAMSA_ERR__CONFIG);
    assert_non_null(strstr(err, "'sasl.jaas.config'"));
    assert_non_null(strstr(err, "OAuthBearerLoginModule"));
    samsa_client_config_fini(&cc);
    set_ok(conf, "sasl.jaas.config", SAMSA_JAAS_PLAIN_MODULE
           " required username=\"j\";");
    assert_int_equal(load(conf, &cc, err, sizeof(err)), SAMSA_ERR__CONFIG);
    assert_non_null(strstr(err, "no password option"));
    samsa_client_config_fini(&cc);
    samsa_conf_free(conf);

    /* without SASL the keys are ignored (as Java's) */
    conf = samsa_conf_new();
    set_ok(conf, "sasl.mechanism", "OAUTHBEARER");
    assert_int_equal(load(conf, &cc, err, sizeof(err)), SAMSA_ERR_NONE);
    assert_int_equal(cc.sasl_mech, 0);
    samsa_client_config_fini(&cc);
    /* SASL without credentials */
    set_ok(conf, "security.protocol", "SASL_SSL");
    set_ok(conf, "sasl.mechanism", "PLAIN");
    assert_int_equal(load(conf, &cc, err, sizeof(err)), SAMSA_ERR__CONFIG);
    assert_non_null(strstr(err, "'sasl.jaas.config'"));
    assert_non_null(strstr(err, "'sasl.username'"));
    samsa_client_config_fini(&cc);
    samsa_conf_free(conf);
}

static void
test_sasl_bad_values_name_the_key(void **state)
{
    samsa_conf_t  *conf = samsa_conf_new();
    char           err[512];

    (void) state;
    assert_int_equal(samsa_conf_set(conf, "security.protocol", "SASL", err,
                                    sizeof(err)), SAMSA_ERR__CONFIG);
    assert_non_null(strstr(err, "'security.protocol'"));
    assert_non_null(strstr(err, "SASL_SSL"));
    assert_int_equal(samsa_conf_set(conf, "sasl.mechanism", "scram sha", err,
                                    sizeof(err)), SAMSA_ERR__CONFIG);
    assert_non_null(strstr(err, "'sasl.mechanism'"));
    assert_int_equal(samsa_conf_set(conf, "sasl.mechanism", "", err,
                                    sizeof(err)), SAMSA_ERR__CONFIG);
    /* a JAAS value that does not parse: named, and hidden */
    assert_int_equal(samsa_conf_set(conf, "sasl.jaas.config",
                                    SAMSA_JAAS_PLAIN_MODULE " required "
                                    "username=\"u\" password=\"s3cr3t\"",
                                    err, sizeof(err)), SAMSA_ERR__CONFIG);
    assert_non_null(strstr(err, "'sasl.jaas.config'"));
    assert_null(strstr(err, "s3cr3t"));
    samsa_conf_free(conf);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_jaas_plain_and_scram),
        cmocka_unit_test(test_jaas_refused),
        cmocka_unit_test(test_sasl_keys),
        cmocka_unit_test(test_sasl_bad_values_name_the_key),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
