/* libFuzzer target: the answers a cluster node's broker decodes when it
 * forwards an admin request to the active controller (broker/forward.c:
 * it looks for NOT_CONTROLLER in them and may rewrite it to
 * REQUEST_TIMED_OUT).  Input: 1 byte picks the API (an index into the
 * forwarded APIs below), 2 bytes the version (folded into the schema's
 * range), the rest is the response body.  A body that decodes must
 * survive error_replace and encode, decode again and re-encode to the
 * same bytes (as fuzz.h's FUZZ_DEFINE checks for one message). */
#include "fuzz.h"

#include "proto/gen/apis.h"
#include "util/endian.h"

static const int16_t  fuzz_keys[] = {
    SAMSA_API_CreateTopics, SAMSA_API_DeleteTopics, SAMSA_API_CreateAcls,
    SAMSA_API_DeleteAcls, SAMSA_API_AlterConfigs, SAMSA_API_CreatePartitions,
    SAMSA_API_ElectLeaders, SAMSA_API_IncrementalAlterConfigs,
    SAMSA_API_AlterPartitionReassignments, SAMSA_API_AlterClientQuotas,
    SAMSA_API_AlterUserScramCredentials, SAMSA_API_DescribeQuorum,
    SAMSA_API_UnregisterBroker,
};

/* Decode p as api's response of version into a fresh struct; NULL when
 * it does not decode. */
static void *
fuzz_decode(const samsa_proto_api_t *api, int16_t version, const uint8_t *p,
            size_t n, samsa_arena_t *arena)
{
    void        *m = samsa_arena_calloc(arena, 1, api->response_size);
    samsa_rd_t   rd;

    samsa_rd_init(&rd, p, n);
    if (api->response_decode(&rd, version, arena, m) != SAMSA_ERR_NONE) {
        return NULL;
    }
    return m;
}

static void
fuzz_one(const samsa_proto_api_t *api, int16_t version, const uint8_t *p,
         size_t n)
{
    samsa_arena_t   arena;
    samsa_buf_t     b1 = SAMSA_BUF_INIT, b2 = SAMSA_BUF_INIT;
    samsa_wr_t      wr;
    void           *m, *again;
    int32_t         cnt;

    samsa_arena_init(&arena);
    m = fuzz_decode(api, version, p, n, &arena);
    if (m != NULL) {
        cnt = api->response_error_replace(m, 41, 41);   /* only counts */
        fuzz_require(cnt >= 0);
        fuzz_require(api->response_error_replace(m, 41, 7) == cnt);
        fuzz_require(api->response_error_replace(m, 41, 41) == 0);
        samsa_wr_init(&wr, &b1);
        api->response_encode(&wr, version, m);
        again = fuzz_decode(api, version, b1.data, b1.len, &arena);
        fuzz_require(again != NULL);
        samsa_wr_init(&wr, &b2);
        api->response_encode(&wr, version, again);
        fuzz_require(b1.len == b2.len);
        fuzz_require(b1.len == 0 || memcmp(b1.data, b2.data, b1.len) == 0);
    }
    samsa_buf_fini(&b1);
    samsa_buf_fini(&b2);
    samsa_arena_fini(&arena);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const samsa_proto_api_t  *api;
    int16_t                   version, lo, hi;

    if (size < 3) {
        return 0;
    }
    api = samsa_proto_api_find(
        fuzz_keys[data[0] % (sizeof(fuzz_keys) / sizeof(fuzz_keys[0]))]);
    fuzz_require(api != NULL);
    lo = api->min_version;
    hi = api->max_version;
    version = (int16_t) samsa_load_be16(data + 1);
    if (version < lo || version > hi) {
        version = (int16_t) (lo + (uint16_t) version % (hi - lo + 1));
    }
    fuzz_one(api, version, data + 3, size - 3);
    return 0;
}
