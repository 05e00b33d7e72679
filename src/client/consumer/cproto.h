/*
 * client/consumer/cproto.h - the consumer protocol's embedded encodings (Kafka's
 * ConsumerProtocolSubscription / ConsumerProtocolAssignment, versions
 * 0-3), carried as JoinGroup member metadata and SyncGroup assignments
 * with protocol type "consumer".  Classic (non-flexible) encoding:
 *   Subscription: Version i16 | Topics [string] | UserData nullable bytes
 *                 | v1+ OwnedPartitions [Topic string, Partitions [i32]]
 *                 | v2+ GenerationId i32 | v3+ RackId nullable string
 *   Assignment:   Version i16 | AssignedPartitions [Topic string,
 *                 Partitions [i32]] | UserData nullable bytes
 * A reader takes the fields its version knows and ignores the rest (a
 * newer member's additions), as Java's ConsumerProtocol does.  Decoders
 * take untrusted bytes (other members' data relayed by the coordinator).
 * Threads: pure; any thread.
 */
#ifndef SAMSA_CLIENT_CONSUMER_CPROTO_H
#define SAMSA_CLIENT_CONSUMER_CPROTO_H

#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>

#include "util/buf.h"

#define SAMSA_CPROTO_VERSION_MAX 3

/* A topic and some of its partitions.  Owned strings/arrays. */
typedef struct samsa_cproto_topic {
    char     *topic;
    int32_t  *parts;
    int32_t   nparts;
} samsa_cproto_topic_t;

typedef struct samsa_cproto_sub {
    int16_t                version;
    char                 **topics;
    int32_t                ntopics;
    uint8_t               *userdata;        /* NULL: null */
    int32_t                userdata_len;
    samsa_cproto_topic_t  *owned;           /* v1+ */
    int32_t                nowned;
    int32_t                generation;      /* v2+; -1 none */
    char                  *rack;            /* v3+; NULL none */
} samsa_cproto_sub_t;

typedef struct samsa_cproto_asg {
    int16_t                version;
    samsa_cproto_topic_t  *topics;
    int32_t                ntopics;
    uint8_t               *userdata;        /* NULL: null */
    int32_t                userdata_len;
} samsa_cproto_asg_t;

/* Append the encoding of sub (at sub->version) to out. */
void samsa_cproto_sub_encode(const samsa_cproto_sub_t *sub, samsa_buf_t *out);

/* Decode len bytes; SAMSA_ERR__BAD_MSG / _UNDERFLOW on malformed input
 * (sub is then empty).  Call samsa_cproto_sub_fini() either way. */
SAMSA_MUST_CHECK samsa_err_t samsa_cproto_sub_decode(const uint8_t *p,
                                                     size_t len,
                                                     samsa_cproto_sub_t *sub);
void samsa_cproto_sub_fini(samsa_cproto_sub_t *sub);

void samsa_cproto_asg_encode(const samsa_cproto_asg_t *asg, samsa_buf_t *out);

/* An empty input (a member given nothing by some leaders) decodes as an
 * empty assignment. */
SAMSA_MUST_CHECK samsa_err_t samsa_cproto_asg_decode(const uint8_t *p,
                                                     size_t len,
                                                     samsa_cproto_asg_t *asg);
void samsa_cproto_asg_fini(samsa_cproto_asg_t *asg);

void samsa_cproto_topics_free(samsa_cproto_topic_t *topics, int32_t n);

#endif /* SAMSA_CLIENT_CONSUMER_CPROTO_H */
