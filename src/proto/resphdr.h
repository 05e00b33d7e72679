/*
 * proto/resphdr.h - the Kafka response header: v1 (correlation id plus an
 * empty tagged-field section) iff the response version is flexible, else
 * v0 (correlation id only).  ApiVersions always answers with v0, whatever
 * its version, so that a client can read the reply to any version it sent.
 * Threads: the writer's owner.
 */
#ifndef SAMSA_PROTO_RESPHDR_H
#define SAMSA_PROTO_RESPHDR_H

#include <stdint.h>

#include "proto/wr.h"

/* Write the response header for (api_key, api_version).
 * @returns the offset it was written at */
size_t samsa_resphdr_encode(samsa_wr_t *wr, int16_t api_key,
                            int16_t api_version, int32_t correlation_id);

#endif /* SAMSA_PROTO_RESPHDR_H */
