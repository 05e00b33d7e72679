/*
 * client/consumer/assignor.h - the consumer group leader's client-side partition
 * assignors, as Kafka's: "range" (RangeAssignor: per topic, consecutive
 * ranges to the subscribed members in member order), "roundrobin"
 * (RoundRobinAssignor: every partition of every subscribed topic dealt in
 * turn to the next member subscribed to it) and "cooperative-sticky"
 * (CooperativeStickyAssignor: balanced, keeps what members own as far as
 * balance allows, and leaves out of this round every partition that moves
 * from one member to another, so that its owner revokes it first and the
 * follow-up rebalance hands it over - KIP-429).  Member order is Java's
 * MemberInfo order: static members by group.instance.id first, then the
 * others by member id.
 * Threads: pure; any thread (the consumer's background thread).
 */
#ifndef SAMSA_CLIENT_CONSUMER_ASSIGNOR_H
#define SAMSA_CLIENT_CONSUMER_ASSIGNOR_H

#include <stdbool.h>
#include <stdint.h>

#include <samsa/errors.h>

#include "client/consumer/cproto.h"

typedef struct samsa_asg_member {
    const char                *member_id;
    const char                *instance_id;     /* NULL if dynamic */
    const samsa_cproto_sub_t  *sub;     /* topics, owned, generation */
} samsa_asg_member_t;

/* A topic the metadata knows, with its partition count. */
typedef struct samsa_asg_topic {
    const char  *name;
    int32_t      nparts;
} samsa_asg_topic_t;

/* Is name one of the assignors above? */
bool samsa_assignor_known(const char *name);

/* True for cooperative-sticky (COOPERATIVE rebalance protocol). */
bool samsa_assignor_cooperative(const char *name);

/* Assign the partitions of topics to members.  out[i] (nm entries,
 * caller's storage) gets member i's assignment: topics by name, each
 * with ascending partitions; free each with samsa_cproto_asg_fini().
 * Subscribed topics missing from topics are left out.
 * SAMSA_ERR__INVALID_ARG for an unknown assignor. */
SAMSA_MUST_CHECK samsa_err_t samsa_assignor_assign(
    const char *name, const samsa_asg_member_t *members, int32_t nm,
    const samsa_asg_topic_t *topics, int32_t nt, samsa_cproto_asg_t *out);

#endif /* SAMSA_CLIENT_CONSUMER_ASSIGNOR_H */
