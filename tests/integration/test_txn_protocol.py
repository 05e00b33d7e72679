"""The transaction coordinator over the raw protocol (issue 5 item 2):
FindCoordinator for transactions, InitProducerId checks (timeouts, fencing
an open transaction with CONCURRENT_TRANSACTIONS until its abort is
written, KIP-360 retries), AddPartitionsToTxn and EndTxn errors in each
state, the KIP-890 partition check on Produce, DescribeTransactions,
ListTransactions, state and producer ids kept across a restart, and
transactional.id.expiration.ms. Client tests are in test_txn.py.
"""

import kwire
from samsa_harness import T
from txnwire import (E, OVERRIDES, add_partitions, create_topic,
                     describe_txns, end_txn, find_coordinator, init_pid,
                     init_pid_kip360, list_txns, wait_for)


def test_raw_coordinator_protocol(samsa):
    srv = samsa.start(overrides=OVERRIDES)
    assert srv.thread_names().count("txnmarker") == 1
    with srv.connect() as conn:
        create_topic(conn, "r", 2)
        err, node, host, port = find_coordinator(conn, "raw")
        assert (err, node, port) == (0, 1, srv.port)
        # an empty transactional id has a coordinator, as in Kafka 4.4
        # (tests/diff); InitProducerId is what rejects it
        assert find_coordinator(conn, "", 1)[:2] == (0, 1)
        assert init_pid(conn, "")[0] == E["INVALID_REQUEST"]
        assert init_pid(conn, "raw", 0)[0] == E["INVALID_TRANSACTION_TIMEOUT"]
        assert init_pid(conn, "raw", 900001)[0] == E["INVALID_TRANSACTION_TIMEOUT"]
        assert add_partitions(conn, "nobody", 1, 0, {"r": [0]}) == \
            {("r", 0): E["INVALID_PRODUCER_ID_MAPPING"]}
        err, pid, epoch = init_pid(conn, "raw")
        assert err == 0 and pid >= 0 and epoch == 0
        assert end_txn(conn, "raw", pid, epoch, True) == E["INVALID_TXN_STATE"]
        assert end_txn(conn, "raw", pid + 1, epoch, True) == \
            E["INVALID_PRODUCER_ID_MAPPING"]
        # unknown partition: it fails, the others are not attempted
        assert add_partitions(conn, "raw", pid, epoch, {"r": [0, 7]}) == \
            {("r", 0): E["OPERATION_NOT_ATTEMPTED"],
             ("r", 7): E["UNKNOWN_TOPIC_OR_PARTITION"]}
        # stale epoch: INVALID_PRODUCER_EPOCH before v2, PRODUCER_FENCED after
        assert add_partitions(conn, "raw", pid, epoch + 1, {"r": [0]}) == \
            {("r", 0): E["INVALID_PRODUCER_EPOCH"]}
        assert add_partitions(conn, "raw", pid, epoch + 1, {"r": [0]}, version=2) == \
            {("r", 0): E["PRODUCER_FENCED"]}
        assert add_partitions(conn, "raw", pid, epoch, {"r": [0]}) == {("r", 0): 0}

        def txn_batch(v, e=epoch):
            return kwire.encode_batch([kwire.Record(None, v)], producer_id=pid,
                                      producer_epoch=e, base_sequence=0,
                                      attributes=kwire.ATTR_TRANSACTIONAL)

        def produce(part, blob, txn_id="raw"):
            body = kwire.encode_produce_request(9, [("r", [(part, blob)])],
                                                transactional_id=txn_id)
            return conn.request(kwire.API_PRODUCE, 9, body, T(5))[
                "topics"][0]["partitions"][0]["error_code"]
        # KIP-890: only partitions of the ongoing transaction
        assert produce(0, txn_batch(b"in")) == 0
        assert produce(1, txn_batch(b"out")) == E["INVALID_TXN_STATE"]
        assert produce(0, txn_batch(b"old", epoch - 1)) == E["INVALID_PRODUCER_EPOCH"]
        assert produce(0, txn_batch(b"x"), "other") == E["INVALID_PRODUCER_ID_MAPPING"]
        d = describe_txns(conn, ["raw", "ghost"])
        assert d[0]["state"] == "Ongoing" and d[0]["topics"] == {"r": [0]}
        assert d[0]["pid"] == pid and d[0]["start_ms"] > 0
        assert d[1]["error"] == E["TRANSACTIONAL_ID_NOT_FOUND"]
        # a second InitProducerId fences: CONCURRENT_TRANSACTIONS until the
        # abort is written, then a bumped epoch
        assert init_pid(conn, "raw")[0] == E["CONCURRENT_TRANSACTIONS"]
        err, pid2, epoch2 = wait_for("InitProducerId", lambda: (
            lambda r: r if r[0] == 0 else None)(init_pid(conn, "raw")), T(10))
        assert (pid2, epoch2) == (pid, epoch + 2)
        assert produce(0, txn_batch(b"zombie")) == E["INVALID_PRODUCER_EPOCH"]
        err, unknown, listed = list_txns(conn, ["Empty", "Bogus"])
        assert err == 0 and unknown == ["Bogus"] and listed == [("raw", pid, "Empty")]
        assert list_txns(conn, ["Ongoing"])[2] == []
        assert list_txns(conn, (), [pid + 99])[2] == []
        assert add_partitions(conn, "raw", pid, epoch2, {"r": [1]}) == {("r", 1): 0}
        assert end_txn(conn, "raw", pid, epoch2, True) == 0
        # EndTxn retried after the markers: the same answer
        wait_for("CompleteCommit", lambda: describe_txns(conn, ["raw"])[0][
            "state"] == "CompleteCommit", T(10))
        assert end_txn(conn, "raw", pid, epoch2, True) == 0
        assert end_txn(conn, "raw", pid, epoch2, False) == E["INVALID_TXN_STATE"]
        # KIP-360 (v3+): the current epoch bumps, a retry with the previous
        # one gets the current again, anything else is fenced
        assert init_pid_kip360(conn, "raw", pid, epoch2) == (0, pid, epoch2 + 1)
        assert init_pid_kip360(conn, "raw", pid, epoch2) == (0, pid, epoch2 + 1)
        assert init_pid_kip360(conn, "raw", pid, epoch2 - 1)[0] == E["PRODUCER_FENCED"]
        assert init_pid_kip360(conn, "raw", pid, epoch2 - 1, 3)[0] == \
            E["INVALID_PRODUCER_EPOCH"]
        assert init_pid_kip360(conn, "raw", pid + 5, epoch2)[0] == E["PRODUCER_FENCED"]
    assert srv.stop() == []
    srv = samsa.start(overrides=OVERRIDES, workdir=srv.workdir)
    with srv.connect() as conn:
        d = describe_txns(conn, ["raw"])[0]
        assert (d["state"], d["pid"], d["epoch"]) == ("Empty", pid, epoch2 + 1)
        assert init_pid(conn, "raw") == (0, pid, epoch2 + 2)
        # a new id after the restart gets a producer id never handed out
        err, pid4, _ = init_pid(conn, "raw-2")
        assert err == 0 and pid4 > pid


def test_idle_transactional_id_expires(samsa):
    ov = dict(OVERRIDES)
    ov.update({"transactional.id.expiration.ms": "800",
               "transaction.remove.expired.transaction.cleanup.interval.ms": "200"})
    srv = samsa.start(overrides=ov)
    with srv.connect() as conn:
        create_topic(conn, "x", 1)
        err, pid, epoch = init_pid(conn, "idle")
        assert err == 0
        err, pid2, epoch2 = init_pid(conn, "busy", 60000)
        assert add_partitions(conn, "busy", pid2, epoch2, {"x": [0]}) == {("x", 0): 0}
        assert describe_txns(conn, ["idle"])[0]["state"] == "Empty"
        wait_for("the expiry", lambda: describe_txns(conn, ["idle"])[0][
            "error"] == E["TRANSACTIONAL_ID_NOT_FOUND"], T(10))
        # an open transaction does not expire
        assert describe_txns(conn, ["busy"])[0]["state"] == "Ongoing"
    assert srv.stop() == []
    srv = samsa.start(overrides=ov, workdir=srv.workdir)
    with srv.connect() as conn:
        assert describe_txns(conn, ["idle"])[0]["error"] == \
            E["TRANSACTIONAL_ID_NOT_FOUND"]
        assert list_txns(conn)[2] == [("busy", pid2, "Ongoing")]
