/*
 * net/mute.h - the five mute states of a connection and the events that
 * move between them (Kafka's KafkaChannel.ChannelMuteState and
 * ChannelMuteEvent), as one transition table.
 *
 * A connection is muted (not read) from the moment a request is queued
 * until its response is written, so that one connection's requests are
 * handled one at a time, in order.  MUTE and UNMUTE are Kafka's mute() and
 * maybeUnmute(): they act only from NOT_MUTED and MUTED respectively and are
 * no-ops elsewhere.  Any other pair not in the table is a bug.
 * Threads: pure functions over a state owned by the connection's network
 * thread.
 */
#ifndef SAMSA_NET_MUTE_H
#define SAMSA_NET_MUTE_H

#include <samsa/errors.h>

typedef enum samsa_mute_state {
    SAMSA_MUTE_NOT_MUTED = 0,
    SAMSA_MUTE_MUTED,
    SAMSA_MUTE_MUTED_AND_RESPONSE_PENDING,
    SAMSA_MUTE_MUTED_AND_THROTTLED,
    SAMSA_MUTE_MUTED_AND_THROTTLED_AND_RESPONSE_PENDING,
    SAMSA_MUTE__NSTATES
} samsa_mute_state_t;

typedef enum samsa_mute_event {
    SAMSA_MUTE_EV_MUTE = 0,             /* mute(): stop reading */
    SAMSA_MUTE_EV_UNMUTE,               /* maybeUnmute(): resume if MUTED */
    SAMSA_MUTE_EV_REQUEST_RECEIVED,
    SAMSA_MUTE_EV_RESPONSE_SENT,
    SAMSA_MUTE_EV_THROTTLE_STARTED,
    SAMSA_MUTE_EV_THROTTLE_ENDED,
    SAMSA_MUTE__NEVENTS
} samsa_mute_event_t;

/* Apply ev to *state.  SAMSA_ERR__STATE (state unchanged) if the table has
 * no such transition: the caller reports it as a bug. */
SAMSA_MUST_CHECK samsa_err_t samsa_mute_apply(samsa_mute_state_t *state,
                                              samsa_mute_event_t ev);

const char *samsa_mute_state_name(samsa_mute_state_t state);
const char *samsa_mute_event_name(samsa_mute_event_t ev);

#endif /* SAMSA_NET_MUTE_H */
