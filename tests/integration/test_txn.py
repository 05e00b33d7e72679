"""Transactions, the coordinator's side (issue 5 item 2): confluent_kafka
(librdkafka 2.0.2) and kafkajs 2.2.4 transactional producers against
samsa-server, checked through what the log holds (a raw read_uncommitted
Fetch shows the data batches and the commit/abort control batches) and the
group coordinator's offsets (OffsetFetch):

- commit: the records, then a commit marker (control batch, key type 1)
  with the producer's id and epoch, in every partition of the transaction;
- abort: an abort marker (key type 0);
- consume-transform-produce with send_offsets_to_transaction: the group's
  offsets appear only once the transaction commits (RequireStable sees
  UNSTABLE_OFFSET_COMMIT before), never after an abort;
- a second producer with the same transactional.id fences the first;
- a transaction left open past transaction.timeout.ms is aborted (with an
  epoch bump) by the coordinator;
- kill -9 between PrepareCommit and the markers: after the restart the
  markers and the group's offsets are there;

Raw protocol checks of the coordinator are in test_txn_protocol.py.

read_committed visibility: a confluent_kafka read_committed consumer sees
committed records only (Fetch below the last stable offset, the aborted
transactions list), a read_uncommitted one sees both.
"""

import json
import os
import shutil
import signal
import subprocess
import time

import pytest

import kwire
import samsa_harness
from samsa_harness import T
from txnwire import (E, OVERRIDES, create_topic, describe_txns, log_of,
                     offset_fetch, summary, wait_for)

HERE = os.path.dirname(os.path.abspath(__file__))
JS_DIR = os.path.join(HERE, "js")



# -- confluent_kafka -------------------------------------------------------------

def txn_producer(bs, txn_id, **extra):
    from confluent_kafka import Producer
    conf = {"bootstrap.servers": bs, "transactional.id": txn_id,
            "linger.ms": 5}
    conf.update(extra)
    p = Producer(conf)
    p.init_transactions(T(20))
    return p


def test_confluent_commit_and_abort_markers(samsa):
    srv = samsa.start(overrides=OVERRIDES)
    with srv.connect() as conn:
        create_topic(conn, "t", 2)
    p = txn_producer(srv.bootstrap(), "ck-1")
    p.begin_transaction()
    for i in range(6):
        p.produce("t", value=b"c%d" % i, partition=i % 2)
    p.commit_transaction(T(20))
    p.begin_transaction()
    for i in range(3):
        p.produce("t", value=b"a%d" % i, partition=0)
    assert p.flush(T(20)) == 0              # written before the abort
    p.abort_transaction(T(20))
    with srv.connect() as conn:
        s0 = wait_for("the abort marker", lambda: (
            lambda s: s if len(s) >= 4 and s[-1][0] == "abort" else None)(
                summary(log_of(conn, "t", 0))), T(10))
        s1 = summary(log_of(conn, "t", 1))
        d = describe_txns(conn, ["ck-1"])[0]
    pid, epoch = d["pid"], d["epoch"]
    assert d["error"] == 0 and d["state"] == "CompleteAbort" and d["topics"] == {}
    assert [x for x in s0 if x[0] == "data"][0][2:] == (pid, epoch)
    values0 = [v for x in s0 if x[0] == "data" for v in x[1]]
    assert values0 == [b"c0", b"c2", b"c4", b"a0", b"a1", b"a2"]
    kinds0 = [x[0] for x in s0]
    # every committed record sits before the commit marker, the aborted
    # ones between it and the abort marker
    assert kinds0.count("commit") == 1 and kinds0[-1] == "abort"
    assert kinds0.index("commit") < [i for i, x in enumerate(s0)
                                     if x[0] == "data" and b"a0" in x[1]][0]
    assert ("commit", pid, epoch) in s0 and ("abort", pid, epoch) in s0
    assert [x[0] for x in s1][-1] == "commit" and ("commit", pid, epoch) in s1
    assert [v for x in s1 if x[0] == "data" for v in x[1]] == [b"c1", b"c3", b"c5"]


def test_confluent_read_committed_sees_only_committed(samsa):
    from confluent_kafka import Consumer, TopicPartition
    srv = samsa.start(overrides=OVERRIDES)
    with srv.connect() as conn:
        create_topic(conn, "rc", 1)
    p = txn_producer(srv.bootstrap(), "ck-rc")
    p.begin_transaction()
    p.produce("rc", value=b"yes1", partition=0)
    p.commit_transaction(T(20))
    p.begin_transaction()
    p.produce("rc", value=b"no", partition=0)
    assert p.flush(T(20)) == 0
    p.abort_transaction(T(20))
    p.begin_transaction()
    p.produce("rc", value=b"yes2", partition=0)
    p.commit_transaction(T(20))
    got = {}
    for level in ("read_committed", "read_uncommitted"):
        c = Consumer({"bootstrap.servers": srv.bootstrap(), "group.id": "g-" + level,
                      "isolation.level": level, "enable.auto.commit": False})
        c.assign([TopicPartition("rc", 0, 0)])
        vals, end = [], time.monotonic() + T(10)
        while time.monotonic() < end and len(vals) < 3:
            m = c.poll(0.2)
            if m is not None and not m.error():
                vals.append(m.value())
        c.close()
        got[level] = vals
    assert got["read_committed"] == [b"yes1", b"yes2"]
    assert got["read_uncommitted"] == [b"yes1", b"no", b"yes2"]


def consume_n(c, n, timeout):
    out, end = [], time.monotonic() + timeout
    while time.monotonic() < end and len(out) < n:
        m = c.poll(0.2)
        if m is not None and not m.error():
            out.append(m)
    return out


def test_confluent_consume_transform_produce_offsets(samsa):
    from confluent_kafka import Consumer, Producer, TopicPartition
    srv = samsa.start(overrides=OVERRIDES)
    with srv.connect() as conn:
        create_topic(conn, "in", 1)
        create_topic(conn, "out", 1)
    src = Producer({"bootstrap.servers": srv.bootstrap()})
    for i in range(10):
        src.produce("in", value=b"%d" % i, partition=0)
    assert src.flush(T(20)) == 0
    c = Consumer({"bootstrap.servers": srv.bootstrap(), "group.id": "ctp",
                  "enable.auto.commit": False, "auto.offset.reset": "earliest",
                  "isolation.level": "read_committed"})
    c.assign([TopicPartition("in", 0, 0)])
    p = txn_producer(srv.bootstrap(), "ctp-1")

    def round_trip(n, commit, before):
        msgs = consume_n(c, n, T(15))
        assert len(msgs) == n
        p.begin_transaction()
        for m in msgs:
            p.produce("out", value=b"x" + m.value(), partition=0)
        p.send_offsets_to_transaction(c.position(c.assignment()),
                                      c.consumer_group_metadata(), T(20))
        with srv.connect() as conn:
            # pending: not visible, and unstable for RequireStable readers
            assert offset_fetch(conn, "ctp", {"in": [0]}) == {("in", 0): (before, 0)}
            assert offset_fetch(conn, "ctp", {"in": [0]}, True) == \
                {("in", 0): (-1, E["UNSTABLE_OFFSET_COMMIT"])}
        if commit:
            p.commit_transaction(T(20))
        else:
            assert p.flush(T(20)) == 0
            p.abort_transaction(T(20))
        return msgs[-1].offset() + 1

    first = round_trip(4, True, -1)
    with srv.connect() as conn:
        assert wait_for("the committed offset", lambda: offset_fetch(
            conn, "ctp", {"in": [0]}) == {("in", 0): (first, 0)}, T(10))
    round_trip(3, False, first)
    with srv.connect() as conn:
        out = wait_for("the abort marker", lambda: (
            lambda s: s if s[-1][0] == "abort" else None)(
                summary(log_of(conn, "out", 0))), T(10))
        # stable again once the coordinator wrote its marker to
        # __consumer_offsets too (EndTxn answers before the markers are
        # all written, as Kafka's; the one on "out" may come first)
        assert wait_for("the offsets stable again", lambda: offset_fetch(
            conn, "ctp", {"in": [0]}, True) == {("in", 0): (first, 0)}, T(10))
    assert [x[0] for x in out if x[0] != "data"] == ["commit", "abort"]
    assert [v for x in out if x[0] == "data" for v in x[1]] == \
        [b"x%d" % i for i in range(7)]
    c.close()


def test_confluent_second_producer_fences_the_first(samsa):
    from confluent_kafka import KafkaError, KafkaException
    srv = samsa.start(overrides=OVERRIDES)
    with srv.connect() as conn:
        create_topic(conn, "f", 1)
    p1 = txn_producer(srv.bootstrap(), "fence")
    p1.begin_transaction()
    p1.produce("f", value=b"old", partition=0)
    assert p1.flush(T(20)) == 0
    p2 = txn_producer(srv.bootstrap(), "fence")     # aborts p1's transaction
    with srv.connect() as conn:
        d = describe_txns(conn, ["fence"])[0]
        s = summary(log_of(conn, "f", 0))
    assert d["state"] == "Empty"
    old_epoch = s[0][3]
    # p1's transaction was aborted with the fenced (bumped) epoch; p2 has the
    # next one
    assert s[-1] == ("abort", d["pid"], old_epoch + 1)
    assert d["epoch"] == old_epoch + 2
    with pytest.raises(KafkaException) as ei:
        p1.produce("f", value=b"zombie", partition=0)
        p1.commit_transaction(T(20))
    err = ei.value.args[0]
    assert err.fatal(), err
    assert err.code() in (KafkaError._FENCED, KafkaError.PRODUCER_FENCED,
                          KafkaError.INVALID_PRODUCER_EPOCH), err
    p2.begin_transaction()
    p2.produce("f", value=b"new", partition=0)
    p2.commit_transaction(T(20))     # answered before the markers
    with srv.connect() as conn:
        s = wait_for("p2's commit marker", lambda: (
            lambda s: s if s[-1][0] == "commit" else None)(
                summary(log_of(conn, "f", 0))), T(10))
    assert b"zombie" not in [v for x in s if x[0] == "data" for v in x[1]]
    assert s[-1] == ("commit", d["pid"], d["epoch"])


def test_confluent_open_transaction_times_out(samsa):
    from confluent_kafka import KafkaException
    srv = samsa.start(overrides=OVERRIDES)
    with srv.connect() as conn:
        create_topic(conn, "to", 1)
    p = txn_producer(srv.bootstrap(), "slow", **{"transaction.timeout.ms": 1500})
    p.begin_transaction()
    p.produce("to", value=b"late", partition=0)
    assert p.flush(T(20)) == 0
    with srv.connect() as conn:
        d0 = describe_txns(conn, ["slow"])[0]
        assert d0["state"] == "Ongoing" and d0["topics"] == {"to": [0]}
        assert d0["timeout_ms"] == 1500
        s = wait_for("the coordinator's abort", lambda: (
            lambda s: s if s[-1][0] == "abort" else None)(
                summary(log_of(conn, "to", 0))), T(10))
        d = describe_txns(conn, ["slow"])[0]
    assert d["state"] == "CompleteAbort" and d["epoch"] == d0["epoch"] + 1
    assert s[-1] == ("abort", d0["pid"], d0["epoch"] + 1)
    with pytest.raises(KafkaException):
        p.commit_transaction(T(20))


def test_kill9_during_prepare_commit_completes_after_restart(samsa):
    from confluent_kafka import Consumer, TopicPartition
    env = {"SAMSA_TEST_TXN_STOP_AFTER_PREPARE": "1"}
    srv = samsa.start(overrides=OVERRIDES, env=env,
                      binary=samsa_harness.faults_binary())
    with srv.connect() as conn:
        create_topic(conn, "k", 2)
        create_topic(conn, "kin", 1)
        conn.produce("kin", 0, kwire.encode_batch([kwire.Record(b"k", b"v")] * 3))
    c = Consumer({"bootstrap.servers": srv.bootstrap(), "group.id": "kg",
                  "enable.auto.commit": False})
    meta = c.consumer_group_metadata()
    p = txn_producer(srv.bootstrap(), "crash")
    p.begin_transaction()
    for i in range(4):
        p.produce("k", value=b"v%d" % i, partition=i % 2)
    p.send_offsets_to_transaction([TopicPartition("kin", 0, 3)], meta, T(20))
    p.commit_transaction(T(20))         # answered once PrepareCommit is durable
    with srv.connect() as conn:
        d = describe_txns(conn, ["crash"])[0]
        assert d["state"] == "PrepareCommit"
        assert all(x[0] == "data" for x in summary(log_of(conn, "k", 0)))
        assert offset_fetch(conn, "kg", {"kin": [0]}) == {("kin", 0): (-1, 0)}
    srv.proc.send_signal(signal.SIGKILL)
    srv.proc.wait(timeout=T(10))
    srv.stopped = True                  # killed on purpose
    srv = samsa.start(overrides=OVERRIDES, workdir=srv.workdir)
    with srv.connect() as conn:
        for part in (0, 1):
            s = wait_for("the commit marker in k-%d" % part, lambda: (
                lambda s: s if s[-1][0] == "commit" else None)(
                    summary(log_of(conn, "k", part))), T(10))
            assert s[-1] == ("commit", d["pid"], d["epoch"])
        assert wait_for("the offsets", lambda: offset_fetch(
            conn, "kg", {"kin": [0]}, True) == {("kin", 0): (3, 0)}, T(10))
        assert describe_txns(conn, ["crash"])[0]["state"] == "CompleteCommit"
    c.close()


# -- kafkajs ---------------------------------------------------------------------------

def node():
    return shutil.which("node") or shutil.which("nodejs")


def test_kafkajs_transactions(samsa):
    if not node() or not os.path.isdir(os.path.join(JS_DIR, "node_modules", "kafkajs")):
        pytest.fail("node or kafkajs missing: run scripts/deps.sh")
    srv = samsa.start(overrides=OVERRIDES)
    with srv.connect() as conn:
        create_topic(conn, "js", 1)
        create_topic(conn, "jsin", 1)
        conn.produce("jsin", 0, kwire.encode_batch([kwire.Record(b"k", b"v")] * 5))
    out = subprocess.run([node(), os.path.join(JS_DIR, "txn.js"), srv.bootstrap(),
                          "js", "jsin", "jsgroup"], capture_output=True, text=True,
                         timeout=T(60), cwd=JS_DIR)
    assert out.returncode == 0, out.stdout + out.stderr
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert res["ok"], res
    with srv.connect() as conn:
        s = wait_for("both markers", lambda: (
            lambda s: s if [x[0] for x in s if x[0] != "data"] == ["commit", "abort"]
            else None)(summary(log_of(conn, "js", 0))), T(10))
        kinds = [x[0] for x in s]
        # the committed records (in one or more batches), its marker, then
        # the aborted record and its marker: nothing of the aborted
        # transaction may sit before the commit marker
        assert kinds.count("commit") == 1 and kinds.count("abort") == 1, kinds
        cut = kinds.index("commit")
        assert kinds[-1] == "abort", kinds
        before = [v for x in s[:cut] if x[0] == "data" for v in x[1]]
        after = [v for x in s[cut + 1:] if x[0] == "data" for v in x[1]]
        assert before == [b"c0", b"c1"], s
        assert after == [b"a0"], s
        assert offset_fetch(conn, "jsgroup", {"jsin": [0]}) == {("jsin", 0): (5, 0)}

