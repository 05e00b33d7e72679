/*
 * proto/errmap.h - local error codes to Kafka wire codes.  The only place
 * where a SAMSA_ERR__* code becomes something a client can see.
 * Threads: pure function; any thread.
 */
#ifndef SAMSA_PROTO_ERRMAP_H
#define SAMSA_PROTO_ERRMAP_H

#include <stdint.h>

#include <samsa/errors.h>

/* err as a Kafka error code: Kafka codes (>= -1) pass through, local codes
 * map to the nearest Kafka code or UNKNOWN_SERVER_ERROR. */
int16_t samsa_err_wire(samsa_err_t err);

#endif /* SAMSA_PROTO_ERRMAP_H */
