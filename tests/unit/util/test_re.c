/* Unit tests for util/re.c: RE2 syntax matched against whole names, as
 * Kafka's RE2J Pattern.matches(), and the PCRE2-only constructs refused. */
#include "unit.h"

#include <string.h>

#include "util/re.h"

static bool
re_ok(const char *pattern, const char *s)
{
    char         why[128];
    samsa_re_t  *re = samsa_re_compile(pattern, strlen(pattern), why,
                                       sizeof(why));
    bool         ok;

    assert_non_null(re);
    ok = samsa_re_match(re, s);
    samsa_re_free(re);
    return ok;
}

/* Refused, with the reason's text containing want. */
static void
re_refused(const char *pattern, const char *want)
{
    char         why[128];
    samsa_re_t  *re = samsa_re_compile(pattern, strlen(pattern), why,
                                       sizeof(why));

    assert_null(re);
    assert_non_null(strstr(why, want));
}

static void
test_re_groups(void **state)
{
    (void) state;
    /* what franz-go sends for kgo.ConsumeRegex("^franz-re-consumer-.*") */
    assert_true(re_ok(".*(?:(?:^franz-re-consumer-.*)).*",
                      "franz-re-consumer-a"));
    assert_false(re_ok(".*(?:(?:^franz-re-consumer-.*)).*",
                       "x-franz-re-consumer-a"));
    assert_true(re_ok("(?:ab)+", "ababab"));
    assert_false(re_ok("(?:ab)+", "ababa"));
    assert_true(re_ok("(?P<n>t)-(?i:X)", "t-x"));
    assert_true(re_ok("a{2,3}", "aaa"));
    assert_false(re_ok("a{2,3}", "aaaa"));
}

static void
test_re_classes(void **state)
{
    (void) state;
    assert_true(re_ok("t\\d+", "t42"));
    assert_false(re_ok("t\\d+", "t4x"));
    assert_true(re_ok("\\w+", "topic_1"));
    assert_false(re_ok("\\w+", "topic-1"));
    assert_true(re_ok("[a-c][^0-9][[:digit:]]", "bx7"));
    assert_false(re_ok("[a-c][^0-9][[:digit:]]", "b77"));
    assert_true(re_ok("[]a]x", "]x"));
    assert_true(re_ok("\\Q(?=\\E.", "(?=z"));   /* quoted: not a lookahead */
    assert_true(re_ok("a.*?b", "aXXb"));        /* lazy is RE2 */
}

/* The whole name must match: no substring matches, and an alternation's
 * shorter branch does not stop the longer one from matching. */
static void
test_re_anchored(void **state)
{
    (void) state;
    assert_false(re_ok("topic", "my-topic-1"));
    assert_false(re_ok("topic", "topic-1"));
    assert_false(re_ok("topic", "a-topic"));
    assert_true(re_ok(".*topic.*", "my-topic-1"));
    assert_true(re_ok("a|ab", "ab"));
    assert_true(re_ok("ab|a", "a"));
    assert_false(re_ok("a|b", "ab"));
    assert_true(re_ok("a$", "a"));
    assert_false(re_ok("a$", "a\n"));           /* RE2: $ is the very end */
    assert_true(re_ok("", ""));
    assert_false(re_ok("", "x"));
}

static void
test_re_invalid(void **state)
{
    char         why[128];
    samsa_re_t  *re;

    (void) state;
    re_refused("(", "missing closing parenthesis");
    re_refused("[a-", "offset");
    re_refused("*a", "offset");
    re_refused("a{2,1}", "offset");
    /* what RE2 refuses and PCRE2 would take */
    re_refused("(a)\\1", "backreferences");
    re_refused("(?P<n>a)(?P=n)", "backreferences");
    re_refused("(?<n>a)\\k<n>", "backreferences");
    re_refused("(a)\\g1", "backreferences");
    re_refused("a(?=b)b", "lookarounds");
    re_refused("a(?!b).", "lookarounds");
    re_refused("(?<=a)b", "lookarounds");
    re_refused("(?<!a)b", "lookarounds");
    re_refused("(?>a+)b", "not supported");
    re_refused("a++", "possessive");
    re_refused("a{2}+", "possessive");
    re_refused("(a|b(?1))", "not supported");
    re_refused("(?R)", "not supported");
    re_refused("(*UTF)a", "not supported");
    re_refused("a\\Kb", "not supported");
    re_refused("[\\h]", "not supported");
    /* the pattern need not be terminated; a short errstr stays terminated */
    re = samsa_re_compile("ab(", 2, why, sizeof(why));
    assert_non_null(re);
    assert_true(samsa_re_match(re, "ab"));
    samsa_re_free(re);
    assert_null(samsa_re_compile("[[:digit:]]", 9, why, sizeof(why)));
    assert_null(samsa_re_compile("(", 1, why, 4));
    assert_int_equal(strlen(why), 3);
    samsa_re_free(NULL);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_re_groups),
        cmocka_unit_test(test_re_classes),
        cmocka_unit_test(test_re_anchored),
        cmocka_unit_test(test_re_invalid),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
