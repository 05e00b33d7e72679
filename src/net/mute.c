/*
 * net/mute.c - the mute transition table (KafkaChannel.java's
 * handleChannelMuteEvent, mute() and maybeUnmute()).  Threads: any.
 */
#include "net/mute.h"

#define NM  SAMSA_MUTE_NOT_MUTED
#define M   SAMSA_MUTE_MUTED
#define MRP SAMSA_MUTE_MUTED_AND_RESPONSE_PENDING
#define MT  SAMSA_MUTE_MUTED_AND_THROTTLED
#define MTR SAMSA_MUTE_MUTED_AND_THROTTLED_AND_RESPONSE_PENDING
#define BAD (-1)

/* mute_next[event][state]: the next state, or BAD. */
static const int  mute_next[SAMSA_MUTE__NEVENTS][SAMSA_MUTE__NSTATES] = {
    /*                     NM    M     MRP   MT    MTR */
    [SAMSA_MUTE_EV_MUTE] = { M, M, MRP, MT, MTR },
    [SAMSA_MUTE_EV_UNMUTE] = { NM, NM, MRP, MT, MTR },
    [SAMSA_MUTE_EV_REQUEST_RECEIVED] = { BAD, MRP, BAD, BAD, BAD },
    [SAMSA_MUTE_EV_RESPONSE_SENT] = { BAD, BAD, M, BAD, MT },
    [SAMSA_MUTE_EV_THROTTLE_STARTED] = { BAD, BAD, MTR, BAD, BAD },
    [SAMSA_MUTE_EV_THROTTLE_ENDED] = { BAD, BAD, BAD, M, MRP },
};

static const char *const  mute_state_names[SAMSA_MUTE__NSTATES] = {
    "NOT_MUTED", "MUTED", "MUTED_AND_RESPONSE_PENDING",
    "MUTED_AND_THROTTLED", "MUTED_AND_THROTTLED_AND_RESPONSE_PENDING",
};

static const char *const  mute_event_names[SAMSA_MUTE__NEVENTS] = {
    "MUTE", "UNMUTE", "REQUEST_RECEIVED", "RESPONSE_SENT",
    "THROTTLE_STARTED", "THROTTLE_ENDED",
};

samsa_err_t
samsa_mute_apply(samsa_mute_state_t *state, samsa_mute_event_t ev)
{
    int  next;

    if ((unsigned) *state >= SAMSA_MUTE__NSTATES
        || (unsigned) ev >= SAMSA_MUTE__NEVENTS) {
        return SAMSA_ERR__STATE;
    }
    next = mute_next[ev][*state];
    if (next == BAD) {
        return SAMSA_ERR__STATE;
    }
    *state = (samsa_mute_state_t) next;
    return SAMSA_ERR_NONE;
}

const char *
samsa_mute_state_name(samsa_mute_state_t state)
{
    return (unsigned) state < SAMSA_MUTE__NSTATES ? mute_state_names[state]
                                                  : "?";
}

const char *
samsa_mute_event_name(samsa_mute_event_t ev)
{
    return (unsigned) ev < SAMSA_MUTE__NEVENTS ? mute_event_names[ev] : "?";
}
