/* Unit tests for the transaction coordinator (broker/txn/txn.c, txnstore.c,
 * txnmark.c): Kafka's state names and transitions, TransactionLog records
 * replayed into the table, the coordinator's answers in each state (with no
 * __transaction_state to write to, so every state change fails and must
 * leave the state as it was), the KIP-890 partition check, Describe/List,
 * and the commit/abort control batch. */
#include "unit.h"

#include <stdlib.h>
#include <string.h>

#include "broker/txn/txn_int.h"
#include "proto/batch.h"
#include "proto/gen/TransactionRecords.h"
#include "proto/wr.h"
#include "config/config.h"

typedef struct fixture {
    samsa_config_t         cfg;
    samsa_txncoord_conf_t  conf;
    samsa_txncoord_t      *tc;
} fixture_t;

static int
setup(void **state)
{
    fixture_t  *f = calloc(1, sizeof(*f));
    char        errstr[256];
    char       *argv[] = { "samsa-server", NULL };

    assert_int_equal(samsa_config_from_args(&f->cfg, 1, argv, errstr,
                                            sizeof(errstr)),
                     SAMSA_ERR_NONE);
    f->conf.cfg = &f->cfg;
    f->conf.meta = samsa_meta_new();
    assert_int_equal(samsa_txncoord_open(&f->conf, &f->tc, errstr,
                                         sizeof(errstr)),
                     SAMSA_ERR_NONE);
    *state = f;
    return 0;
}

static int
teardown(void **state)
{
    fixture_t  *f = *state;

    samsa_txncoord_close(f->tc);
    samsa_meta_free(f->conf.meta);
    samsa_config_fini(&f->cfg);
    free(f);
    return 0;
}

/* Apply a TransactionLogValue v0 for id as the load does. */
static samsa_err_t
put(samsa_txncoord_t *tc, const char *id, int64_t pid, int16_t epoch,
    samsa_txn_state_t st, const char *topic, int32_t partition)
{
    samsa_TransactionLogKey_t    k;
    samsa_TransactionLogValue_t  v;
    samsa_PartitionsSchema_t     ps;
    samsa_buf_t                  kb = SAMSA_BUF_INIT, vb = SAMSA_BUF_INIT;
    samsa_wr_t                   wr;
    samsa_err_t                  err;

    samsa_TransactionLogKey_init(&k);
    k.TransactionalId = samsa_slice_cstr(id);
    samsa_wr_init(&wr, &kb);
    samsa_wr_i16(&wr, 0);
    samsa_TransactionLogKey_encode(&wr, 0, &k);
    samsa_TransactionLogValue_init(&v);
    v.ProducerId = pid;
    v.ProducerEpoch = epoch;
    v.TransactionTimeoutMs = 60000;
    v.TransactionStatus = (int8_t) st;
    v.TransactionLastUpdateTimestampMs = 1000;
    v.TransactionStartTimestampMs = topic != NULL ? 900 : -1;
    samsa_PartitionsSchema_init(&ps);
    ps.Topic = samsa_slice_cstr(topic);
    ps.PartitionIds = &partition;
    ps.PartitionIds_cnt = 1;
    v.TransactionPartitions = &ps;
    v.TransactionPartitions_cnt = topic != NULL ? 1 : 0;
    samsa_wr_init(&wr, &vb);
    samsa_wr_i16(&wr, 0);
    samsa_TransactionLogValue_encode(&wr, 0, &v);
    err = samsa_txnstore_apply(tc, kb.data, kb.len, vb.data, vb.len);
    samsa_buf_fini(&kb);
    samsa_buf_fini(&vb);
    return err;
}

static samsa_txn_state_t
state_of(samsa_txncoord_t *tc, const char *id)
{
    samsa_txn_described_t  d;
    samsa_arena_t          arena;

    samsa_arena_init(&arena);
    samsa_txn_describe(tc, samsa_slice_cstr(id), &arena, &d);
    samsa_arena_fini(&arena);
    return d.error == SAMSA_ERR_NONE ? d.state : SAMSA_TXN_DEAD;
}

static void
test_txn_state_names_and_transitions(void **state)
{
    static const char *const  names[] = {
        "Empty", "Ongoing", "PrepareCommit", "PrepareAbort",
        "CompleteCommit", "CompleteAbort", "Dead", "PrepareEpochFence",
    };
    /* Kafka's TransactionState.validPreviousStates, row = target */
    static const char *const  prev[SAMSA_TXN_STATE_COUNT] = {
        "EUV", "OEUV", "O", "OF", "P", "A", "EUV", "O",
    };
    static const char         letter[] = "EOPAUVDF";
    samsa_txn_state_t         st;
    int                       from, to;

    (void) state;
    for (to = 0; to < SAMSA_TXN_STATE_COUNT; to++) {
        assert_string_equal(samsa_txn_state_name(to), names[to]);
        assert_true(samsa_txn_state_parse(samsa_slice_cstr(names[to]), &st));
        assert_int_equal(st, to);
        for (from = 0; from < SAMSA_TXN_STATE_COUNT; from++) {
            assert_int_equal(samsa_txn_transition_ok(from, to),
                             strchr(prev[to], letter[from]) != NULL);
        }
    }
    assert_false(samsa_txn_state_parse(samsa_slice_cstr("empty"), &st));
    assert_false(samsa_txn_transition_ok(SAMSA_TXN_STATE_COUNT,
                                         SAMSA_TXN_EMPTY));
    assert_string_equal(samsa_txn_state_name(SAMSA_TXN_STATE_COUNT),
                        "Unknown");
}

static void
test_txn_records_replay(void **state)
{
    fixture_t              *f = *state;
    samsa_txn_described_t   d;
    samsa_arena_t           arena;
    samsa_buf_t             kb = SAMSA_BUF_INIT;
    samsa_wr_t              wr;
    const uint8_t           junk[] = { 0, 0, 0, 1, 'x', 9 };

    assert_int_equal(put(f->tc, "a", 7, 3, SAMSA_TXN_ONGOING, "t", 2),
                     SAMSA_ERR_NONE);
    assert_int_equal(put(f->tc, "b", 8, 0, SAMSA_TXN_EMPTY, NULL, 0),
                     SAMSA_ERR_NONE);
    samsa_arena_init(&arena);
    samsa_txn_describe(f->tc, samsa_slice_cstr("a"), &arena, &d);
    assert_int_equal(d.error, SAMSA_ERR_NONE);
    assert_int_equal(d.state, SAMSA_TXN_ONGOING);
    assert_int_equal(d.producer_id, 7);
    assert_int_equal(d.epoch, 3);
    assert_int_equal(d.timeout_ms, 60000);
    assert_int_equal(d.start_ms, 900);
    assert_int_equal(d.ntopics, 1);
    assert_string_equal(d.topics[0].topic, "t");
    assert_int_equal(d.topics[0].partitions[0], 2);
    /* the last record wins */
    assert_int_equal(put(f->tc, "a", 7, 4, SAMSA_TXN_COMPLETE_ABORT, NULL, 0),
                     SAMSA_ERR_NONE);
    samsa_txn_describe(f->tc, samsa_slice_cstr("a"), &arena, &d);
    assert_int_equal(d.state, SAMSA_TXN_COMPLETE_ABORT);
    assert_int_equal(d.epoch, 4);
    assert_int_equal(d.ntopics, 0);
    /* bad records change nothing */
    assert_int_equal(put(f->tc, "a", 7, 5, SAMSA_TXN_PREPARE_EPOCH_FENCE,
                         NULL, 0),
                     SAMSA_ERR_CORRUPT_MESSAGE);
    assert_int_equal(put(f->tc, "c", 9, 0, (samsa_txn_state_t) 42, NULL, 0),
                     SAMSA_ERR_CORRUPT_MESSAGE);
    assert_int_equal(state_of(f->tc, "c"), SAMSA_TXN_DEAD);
    assert_int_equal(samsa_txnstore_apply(f->tc, junk, sizeof(junk), junk,
                                          sizeof(junk)),
                     SAMSA_ERR_CORRUPT_MESSAGE);
    assert_int_equal(samsa_txncoord_count(f->tc), 2);
    /* a tombstone removes the id */
    samsa_wr_init(&wr, &kb);
    samsa_wr_i16(&wr, 0);
    samsa_wr_str(&wr, samsa_slice_cstr("b"));
    assert_int_equal(samsa_txnstore_apply(f->tc, kb.data, kb.len, NULL, 0),
                     SAMSA_ERR_NONE);
    samsa_txn_describe(f->tc, samsa_slice_cstr("b"), &arena, &d);
    assert_int_equal(d.error, SAMSA_ERR_TRANSACTIONAL_ID_NOT_FOUND);
    assert_int_equal(samsa_txncoord_count(f->tc), 1);
    samsa_buf_fini(&kb);
    samsa_arena_fini(&arena);
}

/* EndTxn in each state (Kafka's endTransaction table). */
static void
test_txn_end_in_each_state(void **state)
{
    fixture_t          *f = *state;
    samsa_slice_t       id = samsa_slice_cstr("e");
    static const struct {
        samsa_txn_state_t  st;
        samsa_err_t        commit;
        samsa_err_t        abort;
    } rows[] = {
        { SAMSA_TXN_EMPTY, SAMSA_ERR_INVALID_TXN_STATE,
          SAMSA_ERR_INVALID_TXN_STATE },
        { SAMSA_TXN_PREPARE_COMMIT, SAMSA_ERR_CONCURRENT_TRANSACTIONS,
          SAMSA_ERR_INVALID_TXN_STATE },
        { SAMSA_TXN_PREPARE_ABORT, SAMSA_ERR_INVALID_TXN_STATE,
          SAMSA_ERR_CONCURRENT_TRANSACTIONS },
        { SAMSA_TXN_COMPLETE_COMMIT, SAMSA_ERR_NONE,
          SAMSA_ERR_INVALID_TXN_STATE },
        { SAMSA_TXN_COMPLETE_ABORT, SAMSA_ERR_INVALID_TXN_STATE,
          SAMSA_ERR_NONE },
        /* the PrepareCommit record cannot be written here: the state
         * stays */
        { SAMSA_TXN_ONGOING, SAMSA_ERR_COORDINATOR_NOT_AVAILABLE,
          SAMSA_ERR_COORDINATOR_NOT_AVAILABLE },
    };
    size_t  i;

    assert_int_equal(samsa_txn_end(f->tc, id, 1, 0, true),
                     SAMSA_ERR_INVALID_PRODUCER_ID_MAPPING);
    assert_int_equal(samsa_txn_end(f->tc, samsa_slice_cstr(""), 1, 0, true),
                     SAMSA_ERR_INVALID_REQUEST);
    for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        assert_int_equal(put(f->tc, "e", 5, 2, rows[i].st, "t", 0),
                         SAMSA_ERR_NONE);
        assert_int_equal(samsa_txn_end(f->tc, id, 5, 2, true),
                         rows[i].commit);
        assert_int_equal(samsa_txn_end(f->tc, id, 5, 2, false),
                         rows[i].abort);
        assert_int_equal(state_of(f->tc, "e"), rows[i].st);
        assert_int_equal(samsa_txn_end(f->tc, id, 6, 2, true),
                         SAMSA_ERR_INVALID_PRODUCER_ID_MAPPING);
        assert_int_equal(samsa_txn_end(f->tc, id, 5, 1, true),
                         SAMSA_ERR_PRODUCER_FENCED);
        assert_int_equal(samsa_txn_end(f->tc, id, 5, 3, true),
                         SAMSA_ERR_PRODUCER_FENCED);
    }
}

static void
test_txn_add_and_partition_check(void **state)
{
    fixture_t       *f = *state;
    samsa_slice_t    id = samsa_slice_cstr("p");
    samsa_slice_t    t = samsa_slice_cstr("t");
    samsa_txn_tp_t   tp = { samsa_slice_cstr("nope"), 0, SAMSA_ERR_NONE };

    /* unknown topic: refused before the coordinator looks */
    samsa_txn_add_partitions(f->tc, id, 5, 2, &tp, 1);
    assert_int_equal(tp.error, SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION);
    assert_int_equal(samsa_txn_add_offsets(f->tc, id, 5, 2,
                                           samsa_slice_cstr("")),
                     SAMSA_ERR_INVALID_GROUP_ID);
    assert_int_equal(samsa_txn_partition_in_txn(f->tc, id, 5, 2, t, 0),
                     SAMSA_ERR_INVALID_PRODUCER_ID_MAPPING);
    assert_int_equal(put(f->tc, "p", 5, 2, SAMSA_TXN_ONGOING, "t", 0),
                     SAMSA_ERR_NONE);
    assert_int_equal(samsa_txn_partition_in_txn(f->tc, id, 5, 2, t, 0),
                     SAMSA_ERR_NONE);
    assert_int_equal(samsa_txn_verify_hook(f->tc, id, 5, 2, "t", 0),
                     SAMSA_ERR_NONE);
    assert_int_equal(samsa_txn_verify_hook(f->tc, id, 5, 2, "t", 9),
                     SAMSA_ERR_INVALID_TXN_STATE);
    assert_int_equal(samsa_txn_partition_in_txn(f->tc, id, 5, 2, t, 1),
                     SAMSA_ERR_INVALID_TXN_STATE);
    assert_int_equal(samsa_txn_partition_in_txn(
                         f->tc, id, 5, 2, samsa_slice_cstr("u"), 0),
                     SAMSA_ERR_INVALID_TXN_STATE);
    assert_int_equal(samsa_txn_partition_in_txn(f->tc, id, 5, 1, t, 0),
                     SAMSA_ERR_INVALID_PRODUCER_EPOCH);
    assert_int_equal(samsa_txn_partition_in_txn(f->tc, id, 4, 2, t, 0),
                     SAMSA_ERR_INVALID_PRODUCER_ID_MAPPING);
    assert_int_equal(put(f->tc, "p", 5, 2, SAMSA_TXN_PREPARE_COMMIT, "t", 0),
                     SAMSA_ERR_NONE);
    assert_int_equal(samsa_txn_partition_in_txn(f->tc, id, 5, 2, t, 0),
                     SAMSA_ERR_INVALID_TXN_STATE);
}

static void
test_txn_init_checks(void **state)
{
    fixture_t      *f = *state;
    int64_t         pid;
    int16_t         epoch;

    assert_int_equal(samsa_txn_init_producer_id(f->tc, samsa_slice_cstr(""),
                                                1000, -1, -1, &pid, &epoch),
                     SAMSA_ERR_INVALID_REQUEST);
    assert_int_equal(samsa_txn_init_producer_id(f->tc, samsa_slice_cstr("i"),
                                                0, -1, -1, &pid, &epoch),
                     SAMSA_ERR_INVALID_TRANSACTION_TIMEOUT);
    assert_int_equal(samsa_txn_init_producer_id(f->tc, samsa_slice_cstr("i"),
                                                900001, -1, -1, &pid, &epoch),
                     SAMSA_ERR_INVALID_TRANSACTION_TIMEOUT);
    /* no __transaction_state and no controller to create it */
    assert_int_equal(samsa_txn_init_producer_id(f->tc, samsa_slice_cstr("i"),
                                                1000, -1, -1, &pid, &epoch),
                     SAMSA_ERR_COORDINATOR_NOT_AVAILABLE);
    assert_int_equal(samsa_txn_alloc_producer_id(f->tc, &pid),
                     SAMSA_ERR_COORDINATOR_NOT_AVAILABLE);
    assert_int_equal(samsa_txncoord_count(f->tc), 0);
}

static void
test_txn_list_filters(void **state)
{
    fixture_t           *f = *state;
    samsa_txn_listed_t  *out;
    samsa_arena_t        arena;
    samsa_txn_state_t    ongoing = SAMSA_TXN_ONGOING;
    int64_t              pid = 8;

    assert_int_equal(put(f->tc, "x", 7, 0, SAMSA_TXN_ONGOING, "t", 0),
                     SAMSA_ERR_NONE);
    assert_int_equal(put(f->tc, "y", 8, 0, SAMSA_TXN_COMPLETE_COMMIT, NULL, 0),
                     SAMSA_ERR_NONE);
    samsa_arena_init(&arena);
    assert_int_equal(samsa_txn_list(f->tc, NULL, 0, NULL, 0, -1, &arena, &out),
                     2);
    assert_int_equal(samsa_txn_list(f->tc, &ongoing, 1, NULL, 0, -1, &arena,
                                    &out),
                     1);
    assert_string_equal(out[0].txn_id, "x");
    assert_int_equal(samsa_txn_list(f->tc, NULL, 0, &pid, 1, -1, &arena,
                                    &out),
                     1);
    assert_string_equal(out[0].txn_id, "y");
    assert_int_equal(out[0].state, SAMSA_TXN_COMPLETE_COMMIT);
    /* started at 900 ms after the epoch: long ago */
    assert_int_equal(samsa_txn_list(f->tc, NULL, 0, NULL, 0, 1000, &arena,
                                    &out),
                     1);
    samsa_arena_fini(&arena);
}

static void
test_txn_marker_batch(void **state)
{
    uint8_t            buf[SAMSA_TXNMARK_BATCH_MAX];
    samsa_batch_hdr_t  hdr;
    samsa_record_it_t  it;
    samsa_record_t     rec;
    size_t             len;
    int                commit;

    (void) state;
    for (commit = 0; commit < 2; commit++) {
        len = samsa_txnmark_build(buf, 1234, 7, commit, 3, 1700000000000LL);
        assert_int_equal(samsa_batch_parse(buf, len, &hdr), SAMSA_ERR_NONE);
        assert_int_equal(samsa_batch_size(&hdr), len);
        assert_true(samsa_batch_is_control(&hdr));
        assert_true(samsa_batch_is_transactional(&hdr));
        assert_int_equal(samsa_batch_codec(&hdr), 0);
        assert_int_equal(hdr.ProducerId, 1234);
        assert_int_equal(hdr.ProducerEpoch, 7);
        assert_int_equal(hdr.BaseSequence, -1);
        assert_int_equal(hdr.RecordsCount, 1);
        assert_int_equal(samsa_batch_crc_compute(buf, len), hdr.Crc);
        samsa_record_it_init(&it, buf, len);
        assert_true(samsa_record_it_next(&it, &rec));
        assert_int_equal(rec.KeyLen, 4);
        assert_memory_equal(rec.Key, ((const uint8_t[]) { 0, 0, 0,
                                                          (uint8_t) commit }),
                            4);
        assert_int_equal(rec.ValueLen, 6);
        assert_memory_equal(rec.Value,
                            ((const uint8_t[]) { 0, 0, 0, 0, 0, 3 }), 6);
        assert_false(samsa_record_it_next(&it, &rec));
    }
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_txn_state_names_and_transitions),
        cmocka_unit_test_setup_teardown(test_txn_records_replay, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_txn_end_in_each_state, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_txn_add_and_partition_check,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_txn_init_checks, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_txn_list_filters, setup,
                                        teardown),
        cmocka_unit_test(test_txn_marker_batch),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
