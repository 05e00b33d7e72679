/*
 * broker/group/consumer_group_assign.h - the server-side assignors of consumer groups
 * (KIP-848): "uniform" (Kafka's UniformAssignor: balanced and sticky) and
 * "range" (Kafka's RangeAssignor: per topic, contiguous ranges over the
 * subscribed members sorted by member id).  Pure functions over arrays:
 * no locks, no I/O.  Deterministic: the same input gives the same output
 * whatever the order of members.
 *
 * Threads: any; the caller owns every array it passes.
 */
#ifndef SAMSA_BROKER_GROUP_CONSUMER_GROUP_ASSIGN_H
#define SAMSA_BROKER_GROUP_CONSUMER_GROUP_ASSIGN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>

/* One partition: topic is an index into the topics passed in. */
typedef struct samsa_cga_tp {
    int32_t  topic;
    int32_t  partition;
} samsa_cga_tp_t;

typedef struct samsa_cga_topic {
    const char  *name;                  /* orders the topics (range) */
    int32_t      npartitions;
} samsa_cga_topic_t;

typedef struct samsa_cga_member {
    const char            *member_id;   /* unique; orders the members */
    const int32_t         *topics;      /* subscribed topic indexes */
    size_t                 ntopics;
    const samsa_cga_tp_t  *prev;        /* previous target (stickiness) */
    size_t                 nprev;
    samsa_cga_tp_t        *out;         /* out: the new target, sorted by
                                           (topic, partition); samsa_free */
    size_t                 nout;
} samsa_cga_member_t;

/* Whether name is an assignor this file implements. */
bool samsa_cga_known(const char *name, size_t len);

/* Assign every partition of the topics to the members subscribed to it
 * with assignor (uniform or range); each member's out is set (freed and
 * replaced if set).  INVALID_REQUEST for an unknown assignor. */
SAMSA_MUST_CHECK samsa_err_t samsa_cga_assign(const char *assignor,
                                              const samsa_cga_topic_t *topics,
                                              size_t ntopics,
                                              samsa_cga_member_t *members,
                                              size_t nmembers);

#endif /* SAMSA_BROKER_GROUP_CONSUMER_GROUP_ASSIGN_H */
