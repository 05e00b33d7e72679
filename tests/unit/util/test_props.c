/* Unit tests for util/props.c: the .properties syntax of Kafka's
 * server.properties (java.util.Properties.load rules). */
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/props.h"

/* Parse text (a C string) into a new set; fails the test on error. */
static samsa_props_t *
parse_ok(const char *text)
{
    samsa_props_t  *props = samsa_props_new();
    char            errstr[256] = "";

    assert_int_equal(samsa_props_parse(props, text, strlen(text), "t.props",
                                       errstr, sizeof(errstr)),
                     SAMSA_ERR_NONE);
    assert_string_equal(errstr, "");
    return props;
}

static void
test_props_separators(void **state)
{
    samsa_props_t  *props;

    (void) state;
    props = parse_ok("a=1\n"
                     "b: 2\n"
                     "c 3\n"
                     "d   =   4\n"
                     "e\t:\tfive six  \n"
                     "f\n"
                     "g=\n"
                     "h==x\n"
                     "i = = y\n"
                     "j:k=l\n");
    assert_string_equal(samsa_props_get(props, "a"), "1");
    assert_string_equal(samsa_props_get(props, "b"), "2");
    assert_string_equal(samsa_props_get(props, "c"), "3");
    assert_string_equal(samsa_props_get(props, "d"), "4");
    assert_string_equal(samsa_props_get(props, "e"), "five six  ");
    assert_string_equal(samsa_props_get(props, "f"), "");
    assert_string_equal(samsa_props_get(props, "g"), "");
    assert_string_equal(samsa_props_get(props, "h"), "=x");
    assert_string_equal(samsa_props_get(props, "i"), "= y");
    assert_string_equal(samsa_props_get(props, "j"), "k=l");
    assert_null(samsa_props_get(props, "z"));
    assert_int_equal(samsa_props_count(props), 10);
    samsa_props_free(props);
}

static void
test_props_comments_and_blanks(void **state)
{
    samsa_props_t  *props;

    (void) state;
    props = parse_ok("# a comment\n"
                     "   ! another = comment\n"
                     "\n"
                     "   \t\n"
                     "   key = value # not a comment\n"
                     "#comment ending in backslash \\\n"
                     "next=1\r\n"
                     "cr=2\rlast=3");
    assert_int_equal(samsa_props_count(props), 4);
    assert_string_equal(samsa_props_get(props, "key"),
                        "value # not a comment");
    assert_string_equal(samsa_props_get(props, "next"), "1");
    assert_string_equal(samsa_props_get(props, "cr"), "2");
    assert_string_equal(samsa_props_get(props, "last"), "3");
    assert_string_equal(samsa_props_origin(props, 0), "t.props:5");
    assert_string_equal(samsa_props_origin(props, 1), "t.props:7");
    assert_string_equal(samsa_props_origin(props, 2), "t.props:8");
    assert_string_equal(samsa_props_origin(props, 3), "t.props:9");
    samsa_props_free(props);
}

static void
test_props_continuation(void **state)
{
    samsa_props_t  *props;

    (void) state;
    props = parse_ok("listeners=PLAINTEXT://:9092,\\\n"
                     "          CONTROLLER://:9093\n"
                     "two=a\\\\\n"
                     "three=b\\\\\\\n"
                     "  c\n"
                     "# a continued line is not a comment:\n"
                     "four=x\\\n"
                     "#y\n"
                     "five=\\\n"
                     "\n"
                     "six=6\\");
    assert_string_equal(samsa_props_get(props, "listeners"),
                        "PLAINTEXT://:9092,CONTROLLER://:9093");
    assert_string_equal(samsa_props_get(props, "two"), "a\\");
    assert_string_equal(samsa_props_get(props, "three"), "b\\c");
    assert_string_equal(samsa_props_get(props, "four"), "x#y");
    assert_string_equal(samsa_props_get(props, "five"), "");
    assert_string_equal(samsa_props_get(props, "six"), "6");
    assert_string_equal(samsa_props_origin(props, 0), "t.props:1");
    assert_string_equal(samsa_props_origin(props, 2), "t.props:4");
    assert_string_equal(samsa_props_origin(props, 5), "t.props:11");
    samsa_props_free(props);
}

static void
test_props_escapes(void **state)
{
    samsa_props_t  *props;

    (void) state;
    props = parse_ok("tab=a\\tb\\nc\\rd\\fe\n"
                     "sep\\=key\\:x\\ y=v\\=\\:\\\\\n"
                     "plain=\\q\\#\n"
                     "uni=\\u00e9\\u20AC\\uD83D\\uDE00\n"
                     "ascii=\\u0041\n"
                     "raw=caf\xc3\xa9\n");
    assert_string_equal(samsa_props_get(props, "tab"), "a\tb\nc\rd\fe");
    assert_string_equal(samsa_props_get(props, "sep=key:x y"), "v=:\\");
    assert_string_equal(samsa_props_get(props, "plain"), "q#");
    assert_string_equal(samsa_props_get(props, "uni"),
                        "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
    assert_string_equal(samsa_props_get(props, "ascii"), "A");
    assert_string_equal(samsa_props_get(props, "raw"), "caf\xc3\xa9");
    samsa_props_free(props);
}

/* A bad escape fails naming origin and line; earlier lines stay set. */
static void
test_props_bad_escapes(void **state)
{
    static const char *const  bad[] = {
        "a=1\nb=\\u12G4\n", "a=1\nb=\\u12\n", "a=1\nb=\\uD83D\n",
        "a=1\nb=\\uDE00x\n", "a=1\nb=\\u0000\n", "a=1\nb=\\uD83D\\u0041\n",
    };
    samsa_props_t            *props;
    char                      errstr[256];
    size_t                    i;

    (void) state;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        props = samsa_props_new();
        assert_int_equal(samsa_props_parse(props, bad[i], strlen(bad[i]),
                                           "x.properties", errstr,
                                           sizeof(errstr)),
                         SAMSA_ERR__CONFIG);
        assert_non_null(strstr(errstr, "x.properties:2: "));
        assert_string_equal(samsa_props_get(props, "a"), "1");
        samsa_props_free(props);
    }
}

static void
test_props_nul_byte_rejected(void **state)
{
    static const char  text[] = "a=1\nb=x\0y\n";
    samsa_props_t     *props = samsa_props_new();
    char               errstr[256];

    (void) state;
    assert_int_equal(samsa_props_parse(props, text, sizeof(text) - 1, "n",
                                       errstr, sizeof(errstr)),
                     SAMSA_ERR__CONFIG);
    assert_string_equal(errstr, "n:2: NUL byte in text");
    samsa_props_free(props);
}

/* A later set wins but the key keeps its first place. */
static void
test_props_later_set_wins(void **state)
{
    samsa_props_t  *props;

    (void) state;
    props = parse_ok("a=1\nb=2\na=3\n");
    assert_int_equal(samsa_props_count(props), 2);
    assert_string_equal(samsa_props_key(props, 0), "a");
    assert_string_equal(samsa_props_value(props, 0), "3");
    assert_string_equal(samsa_props_origin(props, 0), "t.props:3");
    samsa_props_set(props, "b", "override", "--override");
    assert_string_equal(samsa_props_get(props, "b"), "override");
    assert_string_equal(samsa_props_origin(props, 1), "--override");
    assert_null(samsa_props_key(props, 2));
    samsa_props_free(props);
    samsa_props_free(NULL);
}

static void
test_props_load_file(void **state)
{
    char            path[] = "/tmp/samsa-test-props-XXXXXX";
    const char      text[] = "# server.properties\nnum.io.threads=4\n";
    samsa_props_t  *props = samsa_props_new();
    char            errstr[256] = "";
    int             fd;

    (void) state;
    fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, sizeof(text) - 1),
                     (ssize_t) sizeof(text) - 1);
    close(fd);
    assert_int_equal(samsa_props_load_file(props, path, errstr,
                                           sizeof(errstr)),
                     SAMSA_ERR_NONE);
    assert_string_equal(samsa_props_get(props, "num.io.threads"), "4");
    assert_non_null(strstr(samsa_props_origin(props, 0), path));
    assert_non_null(strstr(samsa_props_origin(props, 0), ":2"));
    unlink(path);
    samsa_props_free(props);
}

static void
test_props_load_file_errors(void **state)
{
    samsa_props_t  *props = samsa_props_new();
    char            errstr[256];

    (void) state;
    assert_int_equal(samsa_props_load_file(props, "/nonexistent/x.properties",
                                           errstr, sizeof(errstr)),
                     SAMSA_ERR__NOENT);
    assert_non_null(strstr(errstr, "/nonexistent/x.properties"));
    assert_non_null(strstr(errstr, "No such file or directory"));
    assert_int_equal(samsa_props_load_file(props, "/", errstr,
                                           sizeof(errstr)),
                     SAMSA_ERR__IO);
    assert_non_null(strstr(errstr, "'/'"));
    assert_non_null(strstr(errstr, "Is a directory"));
    samsa_props_free(props);
}

/* An errstr too small (or empty) is truncated, never overrun. */
static void
test_props_small_errstr(void **state)
{
    samsa_props_t  *props = samsa_props_new();
    char            errstr[8];

    (void) state;
    memset(errstr, 'x', sizeof(errstr));
    assert_int_equal(samsa_props_parse(props, "a=\\u", 4, "origin", errstr,
                                       sizeof(errstr)),
                     SAMSA_ERR__CONFIG);
    assert_int_equal(strlen(errstr), sizeof(errstr) - 1);
    assert_int_equal(samsa_props_parse(props, "a=\\u", 4, "origin", NULL, 0),
                     SAMSA_ERR__CONFIG);
    samsa_props_free(props);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_props_separators),
        cmocka_unit_test(test_props_comments_and_blanks),
        cmocka_unit_test(test_props_continuation),
        cmocka_unit_test(test_props_escapes),
        cmocka_unit_test(test_props_bad_escapes),
        cmocka_unit_test(test_props_nul_byte_rejected),
        cmocka_unit_test(test_props_later_set_wins),
        cmocka_unit_test(test_props_load_file),
        cmocka_unit_test(test_props_load_file_errors),
        cmocka_unit_test(test_props_small_errstr),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
