/*
 * proto/resphdr.c - see resphdr.h.  Threads: the writer's owner.
 */
#include "proto/resphdr.h"

#include "proto/proto.h"

size_t
samsa_resphdr_encode(samsa_wr_t *wr, int16_t api_key, int16_t api_version,
                     int32_t correlation_id)
{
    size_t  off = samsa_wr_i32(wr, correlation_id);

    if (api_key != SAMSA_API_ApiVersions
        && samsa_proto_req_is_flexible(api_key, api_version)) {
        samsa_wr_uvarint(wr, 0);                /* header v1: no tags */
    }
    return off;
}
