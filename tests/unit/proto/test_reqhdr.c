/* Unit tests for proto/reqhdr.c: request headers v1/v2, real clients'
 * headers (golden.h) and garbage. */
#include "unit.h"

#include "golden.h"
#include "proto/reqhdr.h"

static samsa_err_t
decode(const uint8_t *p, size_t n, samsa_reqhdr_t *hdr, samsa_rd_t *rd)
{
    samsa_rd_init(rd, p, n);
    return samsa_reqhdr_decode(rd, hdr);
}

/* Header v1 (non-flexible): key, version, correlation id, client id. */
static void
test_reqhdr_v1(void **state)
{
    static const uint8_t  in[] = {
        0x00, 0x03, 0x00, 0x08, 0x00, 0x00, 0x00, 0x2a, 0x00, 0x02, 'c', 'k',
        0xee,
    };
    samsa_reqhdr_t        hdr;
    samsa_rd_t            rd;

    (void) state;
    assert_int_equal(decode(in, sizeof(in), &hdr, &rd), SAMSA_ERR_NONE);
    assert_int_equal(hdr.ApiKey, 3);
    assert_int_equal(hdr.ApiVersion, 8);
    assert_int_equal(hdr.CorrelationId, 42);
    assert_true(samsa_slice_eq_cstr(hdr.ClientId, "ck"));
    assert_int_equal(samsa_rd_remain(&rd), 1);      /* body untouched */
}

/* A null ClientId is allowed. */
static void
test_reqhdr_null_client_id(void **state)
{
    static const uint8_t  in[] = {
        0x00, 0x12, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0xff, 0xff,
    };
    samsa_reqhdr_t        hdr;
    samsa_rd_t            rd;

    (void) state;
    assert_int_equal(decode(in, sizeof(in), &hdr, &rd), SAMSA_ERR_NONE);
    assert_null(hdr.ClientId.ptr);
}

/* Header v2 (flexible): v1 plus tagged fields, ClientId still int16. */
static void
test_reqhdr_v2_with_tags(void **state)
{
    static const uint8_t  in[] = {
        0x00, 0x03, 0x00, 0x0c, 0x00, 0x00, 0x00, 0x07, 0x00, 0x01, 'x',
        0x01, 0x09, 0x02, 0xaa, 0xbb, 0xee,
    };
    samsa_reqhdr_t        hdr;
    samsa_rd_t            rd;

    (void) state;
    assert_int_equal(decode(in, sizeof(in), &hdr, &rd), SAMSA_ERR_NONE);
    assert_int_equal(hdr.ApiVersion, 12);
    assert_true(samsa_slice_eq_cstr(hdr.ClientId, "x"));
    assert_int_equal(samsa_rd_remain(&rd), 1);
    assert_int_equal(*rd.p, 0xee);
}

/* Flexibility is open-ended: ApiVersions v99 has header v2. */
static void
test_reqhdr_api_versions_v99_is_v2(void **state)
{
    static const uint8_t  in[] = {
        0x00, 0x12, 0x00, 0x63, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00,
        0x01,
    };
    samsa_reqhdr_t        hdr;
    samsa_rd_t            rd;

    (void) state;
    assert_true(samsa_proto_req_is_flexible(SAMSA_API_ApiVersions, 99));
    assert_int_equal(decode(in, sizeof(in), &hdr, &rd), SAMSA_ERR_NONE);
    assert_int_equal(hdr.ApiVersion, 99);
    assert_int_equal(samsa_rd_remain(&rd), 1);      /* tag byte consumed */
}

/* An ApiKey not in the table: INVALID_REQUEST, key and version kept. */
static void
test_reqhdr_unknown_key(void **state)
{
    static const uint8_t  in[] = {
        0x7f, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
    };
    samsa_reqhdr_t        hdr;
    samsa_rd_t            rd;

    (void) state;
    assert_int_equal(decode(in, sizeof(in), &hdr, &rd),
                     SAMSA_ERR_INVALID_REQUEST);
    assert_int_equal(hdr.ApiKey, 0x7f00);
    assert_int_equal(hdr.ApiVersion, 2);
    assert_null(hdr.ClientId.ptr);
}

/* Every truncation fails with UNDERFLOW; bad lengths with BAD_MSG. */
static void
test_reqhdr_garbage(void **state)
{
    static const uint8_t  v2[] = {
        0x00, 0x03, 0x00, 0x0c, 0x00, 0x00, 0x00, 0x07, 0x00, 0x01, 'x',
        0x01, 0x09, 0x02, 0xaa, 0xbb,
    };
    static const uint8_t  badlen[] = {
        0x00, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00, 0x07, 0xff, 0xfe,
    };
    static const uint8_t  badtag[] = {
        0x00, 0x03, 0x00, 0x0c, 0x00, 0x00, 0x00, 0x07, 0xff, 0xff,
        0xff, 0xff, 0xff, 0xff, 0xff,
    };
    samsa_reqhdr_t        hdr;
    samsa_rd_t            rd;
    size_t                n;

    (void) state;
    for (n = 0; n < sizeof(v2); n++) {
        assert_int_equal(decode(v2, n, &hdr, &rd), SAMSA_ERR__UNDERFLOW);
    }
    assert_int_equal(decode(badlen, sizeof(badlen), &hdr, &rd),
                     SAMSA_ERR__BAD_MSG);
    assert_int_equal(decode(badtag, sizeof(badtag), &hdr, &rd),
                     SAMSA_ERR__BAD_MSG);
}

static void
check_golden(const uint8_t *p, size_t n, size_t hdr_len, int16_t key,
             int16_t version, int32_t corr, const char *client_id)
{
    samsa_reqhdr_t  hdr;
    samsa_rd_t      rd;

    assert_int_equal(decode(p, n, &hdr, &rd), SAMSA_ERR_NONE);
    assert_int_equal(hdr.ApiKey, key);
    assert_int_equal(hdr.ApiVersion, version);
    assert_int_equal(hdr.CorrelationId, corr);
    assert_true(samsa_slice_eq_cstr(hdr.ClientId, client_id));
    assert_ptr_equal(rd.p, p + hdr_len);
}

#define GOLDEN(name, key, ver, corr, cid)                                 \
    check_golden(GOLDEN_##name, sizeof(GOLDEN_##name),                    \
                 GOLDEN_##name##_HDR_LEN, key, ver, corr, cid)

/* The first requests of kcat, kafka-python, confluent-kafka and kafkajs. */
static void
test_reqhdr_golden_clients(void **state)
{
    (void) state;
    GOLDEN(kcat_ApiVersions_v3, 18, 3, 1, "rdkafka");
    GOLDEN(kcat_Metadata_v4, 3, 4, 2, "rdkafka");
    GOLDEN(kafka_python_ApiVersions_v0, 18, 0, 1, "samsa-golden");
    GOLDEN(kafka_python_Metadata_v0, 3, 0, 2, "samsa-golden");
    GOLDEN(confluent_ApiVersions_v3, 18, 3, 1, "samsa-golden");
    GOLDEN(confluent_Metadata_v4, 3, 4, 2, "samsa-golden");
    GOLDEN(kafkajs_ApiVersions_v2, 18, 2, 0, "samsa-golden");
    GOLDEN(kafkajs_Metadata_v6, 3, 6, 1, "samsa-golden");
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_reqhdr_v1),
        cmocka_unit_test(test_reqhdr_null_client_id),
        cmocka_unit_test(test_reqhdr_v2_with_tags),
        cmocka_unit_test(test_reqhdr_api_versions_v99_is_v2),
        cmocka_unit_test(test_reqhdr_unknown_key),
        cmocka_unit_test(test_reqhdr_garbage),
        cmocka_unit_test(test_reqhdr_golden_clients),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
