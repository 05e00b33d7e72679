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

bool
samsa_proto_software_valid(samsa_slice_t s)
{
    size_t  i;
    char    c;

    if (s.ptr == NULL || s.len == 0) {
        return false;
    }
    for (i = 0; i < s.len; i++) {
        c = s.ptr[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
              || (c >= '0' && c <= '9')
              || ((c == '-' || c == '.') && i > 0 && i + 1 < s.len))) {
            return false;
        }
    }
    return true;
}
