/*
 * tests/unit/client/producer/test_txnmgr.c - the transactional producer's state
 * machine without a broker: Java's valid transitions, calls in the wrong
 * state (_STATE), a timed out init that is resumed by calling it again, a
 * fatal error that every later call returns, and the configuration rules
 * of transactional.id.
 */
#include "unit.h"

#include "client/producer/txnmgr.h"

static int  wakes;

static void
count_wake(void *ctx)
{
    (void) ctx;
    wakes++;
}

static samsa_err_t
load(samsa_pconf_t *pc, const char *const *kv, char *err, size_t n)
{
    samsa_conf_t  *conf = samsa_conf_new();
    samsa_err_t    e;

    assert_int_equal(samsa_conf_set(conf, "bootstrap.servers",
                                    "localhost:1", err, n), SAMSA_ERR_NONE);
    for (; *kv != NULL; kv++) {
        assert_int_equal(samsa_conf_set_kv(conf, *kv, err, n),
                         SAMSA_ERR_NONE);
    }
    e = samsa_pconf_load(pc, conf, err, n);
    samsa_conf_free(conf);
    return e;
}

static void
test_txn_transitions_are_javas(void **state)
{
    (void) state;
    assert_true(samsa_txn_transition_valid(SAMSA_TXN_UNINITIALIZED,
                                           SAMSA_TXN_INITIALIZING));
    assert_true(samsa_txn_transition_valid(SAMSA_TXN_INITIALIZING,
                                           SAMSA_TXN_READY));
    assert_true(samsa_txn_transition_valid(SAMSA_TXN_READY,
                                           SAMSA_TXN_IN_TRANSACTION));
    assert_true(samsa_txn_transition_valid(SAMSA_TXN_IN_TRANSACTION,
                                           SAMSA_TXN_COMMITTING));
    assert_true(samsa_txn_transition_valid(SAMSA_TXN_COMMITTING,
                                           SAMSA_TXN_READY));
    assert_true(samsa_txn_transition_valid(SAMSA_TXN_IN_TRANSACTION,
                                           SAMSA_TXN_ABORTABLE_ERROR));
    assert_true(samsa_txn_transition_valid(SAMSA_TXN_COMMITTING,
                                           SAMSA_TXN_ABORTABLE_ERROR));
    assert_true(samsa_txn_transition_valid(SAMSA_TXN_ABORTABLE_ERROR,
                                           SAMSA_TXN_ABORTING));
    assert_true(samsa_txn_transition_valid(SAMSA_TXN_ABORTING,
                                           SAMSA_TXN_READY));
    assert_true(samsa_txn_transition_valid(SAMSA_TXN_READY,
                                           SAMSA_TXN_FATAL_ERROR));
    /* not: */
    assert_false(samsa_txn_transition_valid(SAMSA_TXN_UNINITIALIZED,
                                            SAMSA_TXN_IN_TRANSACTION));
    assert_false(samsa_txn_transition_valid(SAMSA_TXN_READY,
                                            SAMSA_TXN_COMMITTING));
    assert_false(samsa_txn_transition_valid(SAMSA_TXN_ABORTABLE_ERROR,
                                            SAMSA_TXN_COMMITTING));
    assert_false(samsa_txn_transition_valid(SAMSA_TXN_ABORTABLE_ERROR,
                                            SAMSA_TXN_READY));
    assert_false(samsa_txn_transition_valid(SAMSA_TXN_FATAL_ERROR,
                                            SAMSA_TXN_READY));
    assert_false(samsa_txn_transition_valid(SAMSA_TXN_READY,
                                            SAMSA_TXN_UNINITIALIZED));
    assert_true(samsa_txn_err_fatal(SAMSA_ERR_PRODUCER_FENCED));
    assert_true(samsa_txn_err_fatal(SAMSA_ERR_INVALID_PRODUCER_EPOCH));
    assert_true(samsa_txn_err_fatal(
        SAMSA_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED));
    assert_false(samsa_txn_err_fatal(SAMSA_ERR_NOT_ENOUGH_REPLICAS));
}

static void
test_txn_calls_in_wrong_state(void **state)
{
    static const char *const  kv[] = { "transactional.id=t1", NULL };
    samsa_txn_offset_t        off = { "t", 0, 5, NULL };
    samsa_txn_group_t         grp = { "g", -1, NULL, NULL };
    samsa_pconf_t             pc;
    samsa_txnmgr_t           *tm;
    char                      err[256];

    (void) state;
    assert_int_equal(load(&pc, kv, err, sizeof(err)), SAMSA_ERR_NONE);
    assert_true(pc.idempotence);
    assert_int_equal(pc.transaction_timeout_ms, 60000);
    tm = samsa_txnmgr_new(&pc, NULL, count_wake, NULL);
    wakes = 0;
    assert_int_equal(samsa_txnmgr_state(tm), SAMSA_TXN_UNINITIALIZED);
    assert_int_equal(samsa_txnmgr_begin(tm), SAMSA_ERR__STATE);
    assert_int_equal(samsa_txnmgr_send_enter(tm), SAMSA_ERR__STATE);
    assert_int_equal(samsa_txnmgr_commit_begin(tm), SAMSA_ERR__STATE);
    assert_int_equal(samsa_txnmgr_abort(tm, 0), SAMSA_ERR__STATE);
    assert_int_equal(samsa_txnmgr_send_offsets(tm, &off, 1, &grp, 0),
                     SAMSA_ERR__STATE);
    assert_int_equal(samsa_txnmgr_send_offsets(tm, &off, 1, NULL, 0),
                     SAMSA_ERR__INVALID_ARG);
    /* no sender: init posts its operation and times out; calling it
     * again resumes the same operation (no second post) */
    assert_int_equal(samsa_txnmgr_init(tm, 20), SAMSA_ERR__TIMED_OUT);
    assert_int_equal(wakes, 1);
    assert_int_equal(samsa_txnmgr_state(tm), SAMSA_TXN_INITIALIZING);
    assert_int_equal(samsa_txnmgr_init(tm, 0), SAMSA_ERR__TIMED_OUT);
    assert_int_equal(wakes, 1);
    assert_int_equal(samsa_txnmgr_begin(tm), SAMSA_ERR__STATE);
    /* a fatal error: every call returns it from then on */
    samsa_txnmgr_batch_failed(tm, SAMSA_ERR_PRODUCER_FENCED, false);
    assert_int_equal(samsa_txnmgr_state(tm), SAMSA_TXN_FATAL_ERROR);
    assert_int_equal(samsa_txnmgr_begin(tm), SAMSA_ERR_PRODUCER_FENCED);
    assert_int_equal(samsa_txnmgr_send_enter(tm), SAMSA_ERR_PRODUCER_FENCED);
    assert_int_equal(samsa_txnmgr_abort(tm, 0), SAMSA_ERR_PRODUCER_FENCED);
    assert_int_equal(samsa_txnmgr_commit_begin(tm),
                     SAMSA_ERR_PRODUCER_FENCED);
    samsa_txnmgr_batch_failed(tm, SAMSA_ERR_NOT_ENOUGH_REPLICAS, true);
    assert_int_equal(samsa_txnmgr_begin(tm), SAMSA_ERR_PRODUCER_FENCED);
    samsa_txnmgr_free(tm);
    samsa_pconf_fini(&pc);
}

static void
test_txn_config_rules(void **state)
{
    static const char *const  noidem[] = { "transactional.id=t1",
                                           "enable.idempotence=false",
                                           NULL };
    static const char *const  acks1[] = { "transactional.id=t1", "acks=1",
                                          NULL };
    static const char *const  empty[] = { "transactional.id=", NULL };
    samsa_pconf_t             pc;
    char                      err[256];

    (void) state;
    assert_int_equal(load(&pc, noidem, err, sizeof(err)), SAMSA_ERR__CONFIG);
    assert_non_null(strstr(err, "enable.idempotence"));
    samsa_pconf_fini(&pc);
    /* idempotence is implied, so its conflicts are errors, not notes */
    assert_int_equal(load(&pc, acks1, err, sizeof(err)), SAMSA_ERR__CONFIG);
    assert_non_null(strstr(err, "'acks'"));
    samsa_pconf_fini(&pc);
    assert_int_equal(load(&pc, empty, err, sizeof(err)), SAMSA_ERR__CONFIG);
    assert_non_null(strstr(err, "transactional.id"));
    samsa_pconf_fini(&pc);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_txn_transitions_are_javas),
        cmocka_unit_test(test_txn_calls_in_wrong_state),
        cmocka_unit_test(test_txn_config_rules),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
