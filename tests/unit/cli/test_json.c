/* Unit tests for cli/json.c: commas and nesting placed by the writer,
 * strings escaped per RFC 8259, null for NULL strings. */
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>

#include "cli/json.h"

static void
test_json_nesting_and_commas(void **state)
{
    char          *buf = NULL;
    size_t         len = 0;
    FILE          *f = open_memstream(&buf, &len);
    samsa_json_t   j;

    (void) state;
    samsa_json_init(&j, f);
    samsa_json_obj(&j);
    samsa_json_key(&j, "a");
    samsa_json_int(&j, -1);
    samsa_json_key(&j, "list");
    samsa_json_arr(&j);
    samsa_json_int(&j, 1);
    samsa_json_obj(&j);
    samsa_json_obj_end(&j);
    samsa_json_arr(&j);
    samsa_json_arr_end(&j);
    samsa_json_bool(&j, true);
    samsa_json_null(&j);
    samsa_json_str(&j, NULL);
    samsa_json_arr_end(&j);
    samsa_json_key(&j, "b");
    samsa_json_bool(&j, false);
    samsa_json_obj_end(&j);
    samsa_json_end(&j);
    fclose(f);
    assert_string_equal(buf, "{\"a\": -1, \"list\": [1, {}, [], true, null, "
                             "null], \"b\": false}\n");
    free(buf);
}

static void
test_json_escapes(void **state)
{
    char    *buf = NULL;
    size_t   len = 0;
    FILE    *f = open_memstream(&buf, &len);

    (void) state;
    samsa_json_quote(f, "q\"b\\n\nt\tr\r\x01\x7f caf\xc3\xa9");
    fclose(f);
    assert_string_equal(buf, "\"q\\\"b\\\\n\\nt\\tr\\r\\u0001\\u007f "
                             "caf\xc3\xa9\"");
    free(buf);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_json_nesting_and_commas),
        cmocka_unit_test(test_json_escapes),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
