/*
 * libFuzzer target: whole requests as they come off the socket (without
 * the 4-byte size): the request header, then, for APIs with a schema, the
 * body through its decoder with the same round-trip checks as the
 * per-request targets.
 */
#include "fuzz.h"

#include "proto/gen/ApiVersions.h"
#include "proto/gen/DescribeCluster.h"
#include "proto/gen/Metadata.h"
#include "proto/reqhdr.h"

FUZZ_DEFINE(ApiVersionsRequest)
FUZZ_DEFINE(MetadataRequest)
FUZZ_DEFINE(DescribeClusterRequest)

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    samsa_reqhdr_t  hdr;
    samsa_rd_t      rd;
    size_t          body;

    samsa_rd_init(&rd, data, size);
    if (samsa_reqhdr_decode(&rd, &hdr) != SAMSA_ERR_NONE) {
        return 0;
    }
    fuzz_require(rd.p >= data && rd.p <= data + size);
    body = (size_t) (rd.p - data);
    switch (hdr.ApiKey) {
    case SAMSA_API_ApiVersions:
        fuzz_ApiVersionsRequest(hdr.ApiVersion, rd.p, size - body);
        break;
    case SAMSA_API_Metadata:
        fuzz_MetadataRequest(hdr.ApiVersion, rd.p, size - body);
        break;
    case SAMSA_API_DescribeCluster:
        fuzz_DescribeClusterRequest(hdr.ApiVersion, rd.p, size - body);
        break;
    default:
        break;
    }
    return 0;
}
