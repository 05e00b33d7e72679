/* Unit tests for cli/table.c: columns as wide as their widest cell
 * (UTF-8 characters, not bytes), two spaces apart, right alignment on
 * request, no trailing blanks, "-" for NULL cells. */
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>

#include "cli/table.h"

/* Print t into a string (caller frees). */
static char *
render(const samsa_table_t *t)
{
    char    *buf = NULL;
    size_t   len = 0;
    FILE    *f = open_memstream(&buf, &len);

    samsa_table_print(t, f);
    fclose(f);
    return buf;
}

static void
test_table_aligns_columns(void **state)
{
    static const char *const  hdr[] = { "TOPIC", "PARTITION", "LAG" };
    samsa_table_t            *t = samsa_table_new(3, hdr);
    char                     *out;

    (void) state;
    samsa_table_align_right(t, 1);
    samsa_table_align_right(t, 2);
    samsa_table_row(t);
    samsa_table_cell(t, "%s", "orders");
    samsa_table_cell(t, "%d", 0);
    samsa_table_cell(t, "%lld", 12345LL);
    samsa_table_row(t);
    samsa_table_cell(t, "%s", "a-much-longer-topic");
    samsa_table_cell(t, "%d", 10);
    samsa_table_cell(t, NULL);
    assert_int_equal(samsa_table_nrows(t), 2);
    out = render(t);
    assert_string_equal(out,
        "TOPIC                PARTITION    LAG\n"
        "orders                       0  12345\n"
        "a-much-longer-topic         10      -\n");
    free(out);
    samsa_table_free(t);
}

static void
test_table_no_trailing_blanks_and_missing_cells(void **state)
{
    static const char *const  hdr[] = { "A", "B" };
    samsa_table_t            *t = samsa_table_new(2, hdr);
    char                     *out;

    (void) state;
    samsa_table_row(t);
    samsa_table_cell(t, "%s", "x");
    samsa_table_cell(t, "%s", "longer");
    samsa_table_cell(t, "%s", "dropped");      /* beyond ncols */
    samsa_table_row(t);
    samsa_table_cell(t, "%s", "yyyy");          /* B missing */
    out = render(t);
    assert_string_equal(out,
        "A     B\n"
        "x     longer\n"
        "yyyy\n");
    free(out);
    samsa_table_free(t);
}

static void
test_table_utf8_width(void **state)
{
    static const char *const  hdr[] = { "NAME", "N" };
    samsa_table_t            *t = samsa_table_new(2, hdr);
    char                     *out;

    (void) state;
    assert_int_equal(samsa_table_width("h\xc3\xa9llo"), 5);    /* héllo */
    assert_int_equal(samsa_table_width(""), 0);
    assert_int_equal(samsa_table_width(NULL), 0);
    samsa_table_row(t);
    samsa_table_cell(t, "%s", "caf\xc3\xa9s");                  /* cafés */
    samsa_table_cell(t, "%d", 1);
    samsa_table_row(t);
    samsa_table_cell(t, "%s", "tea");
    samsa_table_cell(t, "%d", 2);
    out = render(t);
    assert_string_equal(out,
        "NAME   N\n"
        "caf\xc3\xa9s  1\n"
        "tea    2\n");
    free(out);
    samsa_table_free(t);
}

static void
test_table_header_only(void **state)
{
    static const char *const  hdr[] = { "GROUP", "STATE" };
    samsa_table_t            *t = samsa_table_new(2, hdr);
    char                     *out;

    (void) state;
    assert_int_equal(samsa_table_nrows(t), 0);
    out = render(t);
    assert_string_equal(out, "GROUP  STATE\n");
    free(out);
    samsa_table_free(t);
    samsa_table_free(NULL);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_table_aligns_columns),
        cmocka_unit_test(test_table_no_trailing_blanks_and_missing_cells),
        cmocka_unit_test(test_table_utf8_width),
        cmocka_unit_test(test_table_header_only),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
