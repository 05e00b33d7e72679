/*
 * proto/errmap.c - see errmap.h.  Threads: any.
 */
#include "proto/errmap.h"

int16_t
samsa_err_wire(samsa_err_t err)
{
    if (err >= SAMSA_ERR_UNKNOWN_SERVER_ERROR) {
        return (int16_t) err;                   /* already a Kafka code */
    }
    switch (err) {
    case SAMSA_ERR__IO:         return SAMSA_ERR_KAFKA_STORAGE_ERROR;
    case SAMSA_ERR__UNDERFLOW:  return SAMSA_ERR_INVALID_REQUEST;
    case SAMSA_ERR__BAD_MSG:    return SAMSA_ERR_INVALID_REQUEST;
    case SAMSA_ERR__TIMED_OUT:  return SAMSA_ERR_REQUEST_TIMED_OUT;
    /* out of descriptors: transient, so a code clients retry (Produce
     * and most APIs retry REQUEST_TIMED_OUT), not KAFKA_STORAGE_ERROR */
    case SAMSA_ERR__NOFILE:     return SAMSA_ERR_REQUEST_TIMED_OUT;
    default:                    return SAMSA_ERR_UNKNOWN_SERVER_ERROR;
    }
}
