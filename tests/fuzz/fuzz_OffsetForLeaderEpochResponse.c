/* libFuzzer target: OffsetForLeaderEpochResponse bodies (2-byte version +
 * body): a follower's fetcher decodes the leader's answer
 * (broker/replica.c, OFFSET_OUT_OF_RANGE). */
#include "fuzz.h"

#include "proto/gen/OffsetForLeaderEpoch.h"

FUZZ_REQUEST_TARGET(OffsetForLeaderEpochResponse,
                    SAMSA_OffsetForLeaderEpoch_VERSION_MIN,
                    SAMSA_OffsetForLeaderEpoch_VERSION_MAX)
