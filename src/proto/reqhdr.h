/*
 * proto/reqhdr.h - the Kafka request header (v1 and v2) every request
 * starts with.  The header version follows from the API table: v2 (v1 plus
 * tagged fields) iff the request version is flexible.  ClientId stays an
 * int16-length nullable string in v2.  Version support is not checked
 * here: the broker's API table does that.
 * The response header lives in proto/resphdr.h, included for convenience.
 * Threads: decoding belongs to the thread that owns the receive buffer.
 */
#ifndef SAMSA_PROTO_REQHDR_H
#define SAMSA_PROTO_REQHDR_H

#include <stdint.h>

#include <samsa/errors.h>

#include "proto/proto.h"
#include "proto/rd.h"
#include "proto/resphdr.h"
#include "util/slice.h"

typedef struct samsa_reqhdr {
    int16_t        ApiKey;
    int16_t        ApiVersion;
    int32_t        CorrelationId;
    samsa_slice_t  ClientId;        /* borrows rd's buffer; may be null */
} samsa_reqhdr_t;

/* Decode the header at rd into hdr, leaving rd at the request body.
 * @returns SAMSA_ERR_NONE; SAMSA_ERR_INVALID_REQUEST for an ApiKey the API
 * table does not know (hdr->ApiKey and ApiVersion are filled in, the rest
 * zero); SAMSA_ERR__UNDERFLOW or SAMSA_ERR__BAD_MSG for short or malformed
 * input. */
SAMSA_MUST_CHECK samsa_err_t samsa_reqhdr_decode(samsa_rd_t *rd,
                                                 samsa_reqhdr_t *hdr);

#endif /* SAMSA_PROTO_REQHDR_H */
