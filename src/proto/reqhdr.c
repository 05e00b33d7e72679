/*
 * proto/reqhdr.c - see reqhdr.h.  Threads: the receive buffer's owner.
 */
#include "proto/reqhdr.h"

#include <string.h>

samsa_err_t
samsa_reqhdr_decode(samsa_rd_t *rd, samsa_reqhdr_t *hdr)
{
    memset(hdr, 0, sizeof(*hdr));
    hdr->ApiKey = samsa_rd_i16(rd);
    hdr->ApiVersion = samsa_rd_i16(rd);
    if (rd->err != SAMSA_ERR_NONE) {
        return rd->err;
    }
    if (samsa_proto_api_find(hdr->ApiKey) == NULL) {
        return SAMSA_ERR_INVALID_REQUEST;
    }
    hdr->CorrelationId = samsa_rd_i32(rd);
    hdr->ClientId = samsa_rd_nullable_str(rd);
    if (samsa_proto_req_is_flexible(hdr->ApiKey, hdr->ApiVersion)) {
        samsa_rd_tags_skip(rd);                 /* header v2 */
    }
    return rd->err;
}
