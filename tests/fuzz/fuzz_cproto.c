/*
 * libFuzzer target: the ConsumerProtocol Subscription and Assignment
 * decoders (other members' JoinGroup metadata and the leader's SyncGroup
 * assignment, relayed by the coordinator).  The first byte picks which;
 * whatever decodes must encode and decode again to the same bytes (at the
 * version it carries, capped at the newest we know, for the fields that
 * version has).
 */
#include "fuzz.h"

#include "client/consumer/cproto.h"

static void
fuzz_cproto_sub(const uint8_t *p, size_t n)
{
    samsa_cproto_sub_t  a, b;
    samsa_buf_t         e1 = SAMSA_BUF_INIT, e2 = SAMSA_BUF_INIT;

    if (samsa_cproto_sub_decode(p, n, &a) != SAMSA_ERR_NONE) {
        samsa_cproto_sub_fini(&a);
        return;
    }
    if (a.version > SAMSA_CPROTO_VERSION_MAX) {
        a.version = SAMSA_CPROTO_VERSION_MAX;
    }
    samsa_cproto_sub_encode(&a, &e1);
    fuzz_require(samsa_cproto_sub_decode(e1.data, e1.len, &b)
                 == SAMSA_ERR_NONE);
    samsa_cproto_sub_encode(&b, &e2);
    fuzz_require(e1.len == e2.len && memcmp(e1.data, e2.data, e1.len) == 0);
    samsa_cproto_sub_fini(&a);
    samsa_cproto_sub_fini(&b);
    samsa_buf_fini(&e1);
    samsa_buf_fini(&e2);
}

static void
fuzz_cproto_asg(const uint8_t *p, size_t n)
{
    samsa_cproto_asg_t  a, b;
    samsa_buf_t         e1 = SAMSA_BUF_INIT, e2 = SAMSA_BUF_INIT;

    if (samsa_cproto_asg_decode(p, n, &a) != SAMSA_ERR_NONE) {
        samsa_cproto_asg_fini(&a);
        return;
    }
    samsa_cproto_asg_encode(&a, &e1);
    fuzz_require(samsa_cproto_asg_decode(e1.data, e1.len, &b)
                 == SAMSA_ERR_NONE);
    samsa_cproto_asg_encode(&b, &e2);
    fuzz_require(e1.len == e2.len && memcmp(e1.data, e2.data, e1.len) == 0);
    samsa_cproto_asg_fini(&a);
    samsa_cproto_asg_fini(&b);
    samsa_buf_fini(&e1);
    samsa_buf_fini(&e2);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) {
        return 0;
    }
    if (data[0] & 1) {
        fuzz_cproto_asg(data + 1, size - 1);
    } else {
        fuzz_cproto_sub(data + 1, size - 1);
    }
    return 0;
}
