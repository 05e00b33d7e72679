/*
 * proto/proto.h - questions about the protocol answered from the generated
 * API table (proto/gen/apis.h): which request versions are flexible.
 * Threads: const data and pure functions; any thread.
 */
#ifndef SAMSA_PROTO_PROTO_H
#define SAMSA_PROTO_PROTO_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/gen/apis.h"
#include "util/slice.h"

/* True if (key, version) is a flexible version (KIP-482: compact strings
 * and arrays, tagged fields, request header v2 and, except for
 * ApiVersions, response header v1).  Flexibility is open-ended: every
 * version from the API's first flexible one on, including versions past
 * the schema's maximum.  False for keys not in the table. */
bool samsa_proto_req_is_flexible(int16_t key, int16_t version);

/* KIP-511: a client software name or version (ApiVersions v3+) is
 * letters, digits, '-' and '.', starting and ending with a letter or digit
 * (Kafka's ApiVersionsRequest.isValid). */
bool samsa_proto_software_valid(samsa_slice_t s);

#endif /* SAMSA_PROTO_PROTO_H */
