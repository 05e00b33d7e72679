/*
 * client/consumer/membership.h - the KIP-848 member state machine (Java's
 * ConsumerMembershipManager + HeartbeatState), kept free of I/O so that
 * unit tests drive it with constructed heartbeat answers.  coordinator_consumer.c
 * turns its requests into ConsumerGroupHeartbeat frames, its answers
 * into samsa_membership_hbresp_t, and runs the callbacks it asks for.
 *
 * Life of a member:
 *   UNSUBSCRIBED --join--> JOINING (epoch 0, every field sent)
 *   JOINING/STABLE --answer with an assignment--> RECONCILING: the glue
 *     resolves topic ids to names (samsa_membership_reconcile), revokes what
 *     left (commit, REVOKED callback), adds what came (ASSIGNED), then
 *     samsa_membership_reconciled() --> ACKNOWLEDGING: the next heartbeat, sent
 *     at once, carries the owned partitions --> STABLE.
 *   FENCED_MEMBER_EPOCH / UNKNOWN_MEMBER_ID --> FENCED: the glue runs the
 *     LOST callback, then samsa_membership_lost_done() --> JOINING (epoch 0,
 *     same member id).
 *   leave --> LEAVING: one heartbeat with epoch -1 (dynamic) or -2
 *     (static) --> UNSUBSCRIBED.
 * Fields the coordinator already has are sent as null (Java's
 * HeartbeatState); after a failed heartbeat everything is sent again.
 *
 * Threads: owned by one consumer's samsa_coordinator_t, used under c->lock
 * (the background thread, and the app thread when it finishes a
 * callback).  Pure functions otherwise.
 */
#ifndef SAMSA_CLIENT_CONSUMER_MEMBERSHIP_H
#define SAMSA_CLIENT_CONSUMER_MEMBERSHIP_H

#include <stdbool.h>
#include <stdint.h>

#include <samsa/errors.h>

#include "proto/types.h"

#define SAMSA_MEMBERSHIP_LEAVE_EPOCH         (-1)
#define SAMSA_MEMBERSHIP_LEAVE_STATIC_EPOCH  (-2)
#define SAMSA_MEMBERSHIP_MEMBER_ID_MAX       64

typedef enum samsa_membership_state {
    SAMSA_MEMBERSHIP_UNSUBSCRIBED = 0,
    SAMSA_MEMBERSHIP_JOINING,
    SAMSA_MEMBERSHIP_RECONCILING,
    SAMSA_MEMBERSHIP_ACKNOWLEDGING,
    SAMSA_MEMBERSHIP_STABLE,
    SAMSA_MEMBERSHIP_FENCED,
    SAMSA_MEMBERSHIP_LEAVING,
    SAMSA_MEMBERSHIP_FATAL,
} samsa_membership_state_t;

/* Partitions of one topic, by id (the wire form).  Owned arrays. */
typedef struct samsa_membership_topic {
    samsa_uuid_t   id;
    int32_t       *parts;
    int32_t        nparts;
} samsa_membership_topic_t;

/* One owned partition with its topic's name and id. */
typedef struct samsa_membership_tp {
    char          *topic;
    samsa_uuid_t   id;
    int32_t        partition;
} samsa_membership_tp_t;

/* What a heartbeat carries; pointers borrowed from the state machine and
 * the caller, valid until the next call.  NULL / _null: not sent. */
typedef struct samsa_membership_hbreq {
    const char                 *member_id;
    int32_t                     epoch;
    const char                 *instance_id;
    const char                 *rack_id;
    int32_t                     rebalance_timeout_ms;   /* -1 unchanged */
    const char *const          *topics;
    int32_t                     ntopics;
    bool                        topics_null;
    const char                 *regex;          /* NULL: not sent */
    const char                 *server_assignor;
    const samsa_membership_topic_t  *owned;
    int32_t                     nowned;
    bool                        owned_null;
} samsa_membership_hbreq_t;

/* A heartbeat answer as the state machine needs it. */
typedef struct samsa_membership_hbresp {
    samsa_err_t                 err;
    const char                 *member_id;      /* NULL: not given */
    int32_t                     epoch;
    int32_t                     interval_ms;
    bool                        has_assignment;
    const samsa_membership_topic_t  *topics;
    int32_t                     ntopics;
} samsa_membership_hbresp_t;

/* What the glue must do after an answer. */
typedef enum samsa_membership_act {
    SAMSA_MEMBERSHIP_ACT_NONE = 0,
    SAMSA_MEMBERSHIP_ACT_RECONCILE,  /* a new target: call reconcile */
    SAMSA_MEMBERSHIP_ACT_LOST,       /* fenced: LOST callback, then lost_done */
    SAMSA_MEMBERSHIP_ACT_COORD,      /* find the coordinator again */
    SAMSA_MEMBERSHIP_ACT_RETRY,      /* try again after retry.backoff.ms */
    SAMSA_MEMBERSHIP_ACT_FATAL,      /* sm->fatal says why */
    SAMSA_MEMBERSHIP_ACT_LEFT,       /* the leave heartbeat was answered */
} samsa_membership_act_t;

/* Topic id -> name, or NULL when metadata does not know it (yet). */
typedef const char *samsa_membership_resolve_fn(void *ctx, samsa_uuid_t id);

typedef struct samsa_membership {
    samsa_membership_state_t   state;
    char                  member_id[SAMSA_MEMBERSHIP_MEMBER_ID_MAX];
    int32_t               epoch;
    int32_t               interval_ms;          /* from the coordinator */
    bool                  is_static;
    bool                  hb_inflight;
    bool                  leave_sent;           /* the one in flight */
    int64_t               hb_next_ms;
    samsa_err_t           fatal;
    /* what the coordinator has (HeartbeatState) */
    bool                  sent_all;             /* fields sent since join */
    char                **sent_topics;
    int32_t               nsent_topics;
    bool                  sent_topics_valid;
    bool                  sent_regex;           /* the coordinator has
                                                   the regex */
    samsa_membership_tp_t     *sent_owned;
    int32_t               nsent_owned;
    bool                  sent_owned_valid;
    /* the request being built (owned topics grouped by id) */
    samsa_membership_topic_t  *req_owned;
    int32_t               nreq_owned;
    /* target assignment (latest from the coordinator) */
    samsa_membership_topic_t  *target;
    int32_t               ntarget;
    bool                  target_new;
    /* owned now, and the resolved target being reconciled */
    samsa_membership_tp_t     *owned;
    int32_t               nowned;
    samsa_membership_tp_t     *pending;
    int32_t               npending;
    bool                  unresolved;           /* ids metadata lacks */
} samsa_membership_t;

/* random: 16 bytes (the member id is their URL-safe base64, as Kafka's
 * Uuid.toString(), KIP-1082). */
void samsa_membership_init(samsa_membership_t *sm, const uint8_t random[16],
                      bool is_static);
void samsa_membership_fini(samsa_membership_t *sm);

/* Start joining (epoch 0) unless in the group already. */
void samsa_membership_join(samsa_membership_t *sm);

/* The subscription changed: the next heartbeat carries it, now. */
void samsa_membership_sub_changed(samsa_membership_t *sm);

/* Leave: one heartbeat with epoch -1 / -2.  False when not a member
 * (nothing to send). */
bool samsa_membership_leave(samsa_membership_t *sm);

/* Is a heartbeat due at now? */
bool samsa_membership_hb_due(const samsa_membership_t *sm, int64_t now);

/* Fill req for the heartbeat to send now (topics: the subscription, or
 * regex: a pattern the coordinator resolves (v1, SubscribedTopicRegex),
 * then topics are not sent; instance_id, rack_id, server_assignor: NULL
 * when none) and remember what was sent.  @pre samsa_membership_hb_due() */
void samsa_membership_hb_build(samsa_membership_t *sm, int64_t now,
                          const char *const *topics, int32_t ntopics,
                          const char *regex,
                          const char *instance_id, const char *rack_id,
                          int32_t rebalance_timeout_ms,
                          const char *server_assignor,
                          samsa_membership_hbreq_t *req);

/* The heartbeat could not go out (no connection): send everything again
 * next time. */
void samsa_membership_hb_failed(samsa_membership_t *sm, int64_t now,
                           int64_t backoff_ms);

/* The answer to the heartbeat in flight. */
samsa_membership_act_t samsa_membership_hb_result(samsa_membership_t *sm, int64_t now,
                                        int64_t backoff_ms,
                                        const samsa_membership_hbresp_t *resp);

/* Start reconciling the target when it differs from what is owned and
 * nothing is being reconciled: *added and *revoked (caller frees with
 * samsa_membership_tps_free) are what to assign and revoke; returns true when
 * reconciliation started (then call samsa_membership_reconciled() once the
 * revocation ran).  *need_md: some target ids are unknown to metadata. */
bool samsa_membership_reconcile(samsa_membership_t *sm, samsa_membership_resolve_fn *fn,
                           void *ctx, samsa_membership_tp_t **added,
                           int32_t *nadded, samsa_membership_tp_t **revoked,
                           int32_t *nrevoked, bool *need_md);

/* The revocation ran and the new partitions were added: own the target,
 * acknowledge it with the next heartbeat (at once). */
void samsa_membership_reconciled(samsa_membership_t *sm);

/* The LOST callback ran: drop everything, join again with epoch 0. */
void samsa_membership_lost_done(samsa_membership_t *sm);

/* Give up the membership at once (poll timeout, unsubscribe): owned
 * partitions dropped, state UNSUBSCRIBED. */
void samsa_membership_reset(samsa_membership_t *sm);

void samsa_membership_tps_free(samsa_membership_tp_t *tps, int32_t n);
void samsa_membership_topics_free(samsa_membership_topic_t *topics, int32_t n);

const char *samsa_membership_state_name(samsa_membership_state_t s);

#endif /* SAMSA_CLIENT_CONSUMER_MEMBERSHIP_H */
