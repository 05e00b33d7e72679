/* Unit tests for util/arena.c and util/buf.c. */
#include "unit.h"

#include <stdlib.h>

#include "util/arena.h"
#include "util/buf.h"

/* Allocations are zeroed, 8-byte aligned, and survive later growth. */
static void
test_arena_alloc_aligned_and_zeroed(void **state)
{
    samsa_arena_t  arena;
    char          *first, *big;
    int            i;

    (void) state;
    samsa_arena_init(&arena);
    first = samsa_arena_alloc(&arena, 3);
    memcpy(first, "ab", 3);
    for (i = 0; i < 1000; i++) {
        unsigned char *p = samsa_arena_alloc(&arena, (size_t) (i % 37) + 1);
        assert_int_equal((uintptr_t) p % 8, 0);
        assert_int_equal(p[0], 0);
    }
    big = samsa_arena_alloc(&arena, 100000);
    assert_non_null(big);
    assert_string_equal(first, "ab");
    assert_true(arena.used >= 100000);
    samsa_arena_fini(&arena);
    assert_null(arena.head);
}

static void
test_buf_append_grows_and_take_resets(void **state)
{
    samsa_buf_t  buf = SAMSA_BUF_INIT;
    uint8_t     *p;
    size_t       len, i;

    (void) state;
    for (i = 0; i < 1000; i++) {
        assert_int_equal(samsa_buf_append(&buf, "xyz", 3), i * 3);
    }
    assert_int_equal(buf.len, 3000);
    p = samsa_buf_take(&buf, &len);
    assert_int_equal(len, 3000);
    assert_null(buf.data);
    assert_memory_equal(p + 2997, "xyz", 3);
    free(p);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arena_alloc_aligned_and_zeroed),
        cmocka_unit_test(test_buf_append_grows_and_take_resets),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
