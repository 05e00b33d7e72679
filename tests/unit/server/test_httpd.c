/*
 * tests/unit/server/test_httpd.c - metrics.listener parsing (http:// and
 * https://).
 */
#include "unit.h"

#include "server/httpd.h"

static void
test_httpd_listener_accepted(void **state)
{
    char  host[256], err[256];
    int   port = -1;
    bool  tls = true;

    (void) state;
    assert_int_equal(samsa_httpd_parse_listener("http://127.0.0.1:9644", host,
                                                &port, &tls, err, sizeof(err)),
                     SAMSA_ERR_NONE);
    assert_string_equal(host, "127.0.0.1");
    assert_int_equal(port, 9644);
    assert_false(tls);
    assert_int_equal(samsa_httpd_parse_listener("http://:0", host, &port, &tls, err,
                                                sizeof(err)),
                     SAMSA_ERR_NONE);
    assert_string_equal(host, "");
    assert_int_equal(port, 0);
    assert_int_equal(samsa_httpd_parse_listener("http://[::1]:80/", host,
                                                &port, &tls, err, sizeof(err)),
                     SAMSA_ERR_NONE);
    assert_string_equal(host, "::1");
    assert_int_equal(port, 80);
    assert_int_equal(samsa_httpd_parse_listener("http://localhost:65535",
                                                host, &port, &tls, err,
                                                sizeof(err)),
                     SAMSA_ERR_NONE);
    assert_int_equal(port, 65535);
    assert_false(tls);
    assert_int_equal(samsa_httpd_parse_listener("https://127.0.0.1:9443",
                                                host, &port, &tls, err,
                                                sizeof(err)),
                     SAMSA_ERR_NONE);
    assert_string_equal(host, "127.0.0.1");
    assert_int_equal(port, 9443);
    assert_true(tls);
    assert_int_equal(samsa_httpd_parse_listener("https://[::1]:0", host,
                                                &port, &tls, err,
                                                sizeof(err)),
                     SAMSA_ERR_NONE);
    assert_string_equal(host, "::1");
    assert_true(tls);
}

static void
test_httpd_listener_refused(void **state)
{
    static const char *const  bad[] = {
        "127.0.0.1:9644", "http://host", "http://host:", "http://host:70000",
        "http://h:12x", "htps://h:1", "https://h", "https//h:1",
        "http://[::1]80", "http://h:-1",
        "http://a/b:1", "",
    };
    char                      host[256], err[256];
    int                       port;
    bool                      tls;
    size_t                    i;

    (void) state;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        assert_int_equal(samsa_httpd_parse_listener(bad[i], host, &port,
                                                    &tls, err, sizeof(err)),
                         SAMSA_ERR__CONFIG);
        assert_non_null(strstr(err, "metrics.listener"));
    }
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_httpd_listener_accepted),
        cmocka_unit_test(test_httpd_listener_refused),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
