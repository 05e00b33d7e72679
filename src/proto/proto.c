/*
 * proto/proto.c - see proto.h.  Threads: any.
 */
#include "proto/proto.h"

bool
samsa_proto_req_is_flexible(int16_t key, int16_t version)
{
    const samsa_proto_api_t  *api = samsa_proto_api_find(key);

    return api != NULL && api->flexible_min >= 0
           && version >= api->flexible_min;
}
