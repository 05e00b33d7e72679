/* Unit tests for net/mute.c: every legal and illegal transition. */
#include "unit.h"

#include "net/mute.h"

#define NM  SAMSA_MUTE_NOT_MUTED
#define M   SAMSA_MUTE_MUTED
#define MRP SAMSA_MUTE_MUTED_AND_RESPONSE_PENDING
#define MT  SAMSA_MUTE_MUTED_AND_THROTTLED
#define MTR SAMSA_MUTE_MUTED_AND_THROTTLED_AND_RESPONSE_PENDING
#define BAD (-1)

/* Expected next state for [event][state], written out from Kafka's
 * KafkaChannel (handleChannelMuteEvent, mute, maybeUnmute), independently
 * of the table in mute.c. */
static const int  expected[SAMSA_MUTE__NEVENTS][SAMSA_MUTE__NSTATES] = {
    [SAMSA_MUTE_EV_MUTE]             = { M,   M,   MRP, MT,  MTR },
    [SAMSA_MUTE_EV_UNMUTE]           = { NM,  NM,  MRP, MT,  MTR },
    [SAMSA_MUTE_EV_REQUEST_RECEIVED] = { BAD, MRP, BAD, BAD, BAD },
    [SAMSA_MUTE_EV_RESPONSE_SENT]    = { BAD, BAD, M,   BAD, MT },
    [SAMSA_MUTE_EV_THROTTLE_STARTED] = { BAD, BAD, MTR, BAD, BAD },
    [SAMSA_MUTE_EV_THROTTLE_ENDED]   = { BAD, BAD, BAD, M,   MRP },
};

static void
test_mute_every_pair(void **state)
{
    int                 ev, st;
    samsa_mute_state_t  s;
    samsa_err_t         err;

    (void) state;
    for (ev = 0; ev < SAMSA_MUTE__NEVENTS; ev++) {
        for (st = 0; st < SAMSA_MUTE__NSTATES; st++) {
            s = (samsa_mute_state_t) st;
            err = samsa_mute_apply(&s, (samsa_mute_event_t) ev);
            if (expected[ev][st] == BAD) {
                assert_int_equal(err, SAMSA_ERR__STATE);
                assert_int_equal(s, st);        /* unchanged */
            } else {
                assert_int_equal(err, SAMSA_ERR_NONE);
                assert_int_equal(s, expected[ev][st]);
            }
        }
    }
}

/* One ordinary request: NOT_MUTED -> MUTED -> ..._RESPONSE_PENDING ->
 * MUTED -> NOT_MUTED (the seed's section 6). */
static void
test_mute_request_cycle(void **state)
{
    samsa_mute_state_t  s = NM;

    (void) state;
    assert_int_equal(samsa_mute_apply(&s, SAMSA_MUTE_EV_MUTE), 0);
    assert_int_equal(samsa_mute_apply(&s, SAMSA_MUTE_EV_REQUEST_RECEIVED), 0);
    assert_int_equal(s, MRP);
    assert_int_equal(samsa_mute_apply(&s, SAMSA_MUTE_EV_RESPONSE_SENT), 0);
    assert_int_equal(s, M);
    assert_int_equal(samsa_mute_apply(&s, SAMSA_MUTE_EV_UNMUTE), 0);
    assert_int_equal(s, NM);
}

/* Throttled with a response pending: the response being sent does not
 * unmute; the throttle ending then does. */
static void
test_mute_throttle_holds_unmute(void **state)
{
    samsa_mute_state_t  s = MRP;

    (void) state;
    assert_int_equal(samsa_mute_apply(&s, SAMSA_MUTE_EV_THROTTLE_STARTED), 0);
    assert_int_equal(samsa_mute_apply(&s, SAMSA_MUTE_EV_RESPONSE_SENT), 0);
    assert_int_equal(s, MT);
    assert_int_equal(samsa_mute_apply(&s, SAMSA_MUTE_EV_UNMUTE), 0);
    assert_int_equal(s, MT);                    /* still throttled */
    assert_int_equal(samsa_mute_apply(&s, SAMSA_MUTE_EV_THROTTLE_ENDED), 0);
    assert_int_equal(samsa_mute_apply(&s, SAMSA_MUTE_EV_UNMUTE), 0);
    assert_int_equal(s, NM);
}

static void
test_mute_out_of_range_and_names(void **state)
{
    samsa_mute_state_t  s = (samsa_mute_state_t) 99;

    (void) state;
    assert_int_equal(samsa_mute_apply(&s, SAMSA_MUTE_EV_MUTE),
                     SAMSA_ERR__STATE);
    s = NM;
    assert_int_equal(samsa_mute_apply(&s, (samsa_mute_event_t) 99),
                     SAMSA_ERR__STATE);
    assert_string_equal(samsa_mute_state_name(MTR),
                        "MUTED_AND_THROTTLED_AND_RESPONSE_PENDING");
    assert_string_equal(samsa_mute_event_name(SAMSA_MUTE_EV_RESPONSE_SENT),
                        "RESPONSE_SENT");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mute_every_pair),
        cmocka_unit_test(test_mute_request_cycle),
        cmocka_unit_test(test_mute_throttle_holds_unmute),
        cmocka_unit_test(test_mute_out_of_range_and_names),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
