/* Unit tests for broker/api_table.c: every response's ThrottleTimeMs is
 * where the generated table (proto/gen/apis.h) says, so samsa_apis_send
 * sets it in the struct before encoding; and the sizer that measures a
 * response before it is encoded (the fetch byte rate) agrees with the
 * encoder. */
#include "unit.h"

#include <string.h>

#include "broker/api_table.h"
#include "proto/proto.h"
#include "util/buf.h"
#include "util/endian.h"

#define MAGIC  0x7A7B7C7D

/* Encode the body of api's response at version with ThrottleTimeMs (where
 * the table places it) set to MAGIC and everything else as init leaves it;
 * returns what a sizer measured for the same. */
static size_t
encode_body(const samsa_proto_api_t *api, int16_t version, samsa_buf_t *buf)
{
    unsigned char  m[4096] __attribute__((aligned(16)));
    int32_t        magic = MAGIC;
    samsa_wr_t     wr, sizer = samsa_wr_sizer();

    assert_true(api->response_size <= sizeof(m));
    api->response_init(m);
    if (api->throttle_from >= 0) {
        memcpy(m + api->throttle_off, &magic, sizeof(magic));
    }
    samsa_wr_init(&wr, buf);
    api->response_encode(&wr, version, m);
    api->response_encode(&sizer, version, m);
    return sizer.size;
}

static bool
has_magic(const samsa_buf_t *buf)
{
    size_t  i;

    for (i = 0; i + 4 <= buf->len; i++) {
        if (samsa_load_be32(buf->data + i) == MAGIC) {
            return true;
        }
    }
    return false;
}

static void
test_api_table_throttle_offsets(void **state)
{
    const samsa_proto_api_t  *api;
    samsa_buf_t               buf;
    size_t                    i, measured;
    int16_t                   v;
    int                       without = 0;

    (void) state;
    for (i = 0; i < samsa_proto_apis_cnt; i++) {
        api = &samsa_proto_apis[i];
        without += api->throttle_from < 0;
        for (v = api->min_version; v <= api->max_version; v++) {
            samsa_buf_init(&buf, 64);
            measured = encode_body(api, v, &buf);
            assert_int_equal(measured, buf.len);
            if (api->throttle_from >= 0 && v >= api->throttle_from) {
                if (!has_magic(&buf)) {
                    fail_msg("API %d v%d: no ThrottleTimeMs", api->key, v);
                }
            } else if (has_magic(&buf)) {
                fail_msg("API %d v%d has ThrottleTimeMs (from v%d?)",
                         api->key, v, api->throttle_from);
            }
            samsa_buf_fini(&buf);
        }
    }
    /* every API has one, but for the coordinator-less ones Kafka never
     * throttles, and SaslHandshake / SaslAuthenticate, whose responses
     * have no ThrottleTimeMs in Kafka either */
    assert_true(without <= 4);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_api_table_throttle_offsets),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
