/* Unit tests for config/config_parse.c: the one double parser (Java's
 * Double.parseDouble), which the broker, dynamic broker and topic tables
 * all check DOUBLE values with. */
#include "unit.h"

#include <math.h>

#include "config/config_parse.h"

/* What Java's Double.parseDouble takes: decimal and hexadecimal numbers,
 * NaN and Infinity spelt as Java spells them, a float/double suffix, blanks
 * around the value. */
static void
test_config_parse_double_java_accepts(void **state)
{
    double  d;

    (void) state;
    assert_null(samsa_config_parse_double("1.5e6", &d));
    assert_true(d == 1.5e6);
    assert_null(samsa_config_parse_double("-.5", &d));
    assert_true(d == -0.5);
    assert_null(samsa_config_parse_double("5.", &d));
    assert_true(d == 5.0);
    assert_null(samsa_config_parse_double("+2E-3", &d));
    assert_true(d == 2e-3);
    assert_null(samsa_config_parse_double(" 0.25\t", &d));
    assert_true(d == 0.25);
    assert_null(samsa_config_parse_double("1.5d", &d));
    assert_true(d == 1.5);
    assert_null(samsa_config_parse_double("7F", &d));
    assert_true(d == 7.0);
    assert_null(samsa_config_parse_double("0x1.8p1", &d));
    assert_true(d == 3.0);
    assert_null(samsa_config_parse_double("-Infinity", &d));
    assert_true(isinf(d) && d < 0);
    assert_null(samsa_config_parse_double("NaN", &d));
    assert_true(isnan(d));
    assert_null(samsa_config_parse_double("1e-400", &d));   /* Java: 0.0 */
    assert_true(d == 0.0);
}

/* What it rejects: C's extra spellings (inf, nan, hex without its binary
 * exponent), junk, empty text; and past the largest double, where Java
 * would give Infinity, Samsa names the range. */
static void
test_config_parse_double_rejects(void **state)
{
    static const char *const  bad[] = {
        "", " ", "inf", "infinity", "nan", "NaNd", "0x10", "1e", "1e+",
        ".", "e5", "1.5x", "1.5dd", "--1", "1 5", "fast", "0x1p", NULL,
    };
    double                    d;
    size_t                    i;

    (void) state;
    for (i = 0; bad[i] != NULL; i++) {
        assert_string_equal(samsa_config_parse_double(bad[i], &d),
                            "not a number");
    }
    assert_string_equal(samsa_config_parse_double("1e999", &d),
                        "out of range for a double");
    assert_string_equal(samsa_config_parse_double("-1e999", &d),
                        "out of range for a double");
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_config_parse_double_java_accepts),
        cmocka_unit_test(test_config_parse_double_rejects),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
