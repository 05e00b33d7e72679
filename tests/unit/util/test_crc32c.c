/* Unit tests for util/crc32c.c: CRC-32C over ISA-L. */
#include "unit.h"

#include <stdlib.h>

#include "util/crc32c.h"

/* Bit-at-a-time CRC-32C (reflected polynomial 0x82F63B78), the reference
 * the fast one must agree with. */
static uint32_t
crc32c_ref(const uint8_t *p, size_t len)
{
    uint32_t  crc = 0xffffffff;
    size_t    i;
    int       k;

    for (i = 0; i < len; i++) {
        crc ^= p[i];
        for (k = 0; k < 8; k++) {
            crc = (crc >> 1) ^ (0x82f63b78 & (0u - (crc & 1)));
        }
    }
    return ~crc;
}

static void
test_crc32c_check_value(void **state)
{
    (void) state;
    assert_int_equal(samsa_crc32c(0, "123456789", 9), 0xe3069283);
    assert_int_equal(samsa_crc32c(0, "", 0), 0);
}

/* RFC 3720 B.4 test vectors: 32 bytes of zeros, of ones, ascending. */
static void
test_crc32c_iscsi_vectors(void **state)
{
    uint8_t  b[32];
    int      i;

    (void) state;
    memset(b, 0, sizeof(b));
    assert_int_equal(samsa_crc32c(0, b, sizeof(b)), 0x8a9136aa);
    memset(b, 0xff, sizeof(b));
    assert_int_equal(samsa_crc32c(0, b, sizeof(b)), 0x62a8ab43);
    for (i = 0; i < 32; i++) {
        b[i] = (uint8_t) i;
    }
    assert_int_equal(samsa_crc32c(0, b, sizeof(b)), 0x46dd794e);
}

static void
test_crc32c_chains_and_matches_reference(void **state)
{
    uint8_t  *b;
    size_t    n = 100003, i, cut;
    uint32_t  whole;

    (void) state;
    b = malloc(n);
    for (i = 0; i < n; i++) {
        b[i] = (uint8_t) (i * 2654435761u >> 13);
    }
    whole = samsa_crc32c(0, b, n);
    assert_int_equal(whole, crc32c_ref(b, n));
    for (cut = 0; cut < n; cut += 9973) {
        assert_int_equal(samsa_crc32c(samsa_crc32c(0, b, cut), b + cut,
                                      n - cut),
                         whole);
    }
    for (i = 0; i < 64; i++) {                  /* every short length */
        assert_int_equal(samsa_crc32c(0, b + 1, i), crc32c_ref(b + 1, i));
    }
    free(b);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc32c_check_value),
        cmocka_unit_test(test_crc32c_iscsi_vectors),
        cmocka_unit_test(test_crc32c_chains_and_matches_reference),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
