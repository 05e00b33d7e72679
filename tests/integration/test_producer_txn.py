"""libsamsa's transactional producer (issue 6 item 7) against samsa-server,
driven through tests/integration/txn_probe.c; confluent_kafka consumers and
raw OffsetFetch check what became visible:

- commit: a read_committed consumer sees the records;
- abort: read_committed sees nothing, read_uncommitted sees them; records
  still queued at the abort fail with _TXN_ABORTED;
- send_offsets_to_transaction: the group's offsets appear after the commit,
  never after an abort;
- a second producer (confluent_kafka) with the same transactional.id
  fences the first: its commit fails with PRODUCER_FENCED (or
  INVALID_PRODUCER_EPOCH) and every later call fails with that error;
- API misuse in the wrong state (_STATE), and the configuration rule
  transactional.id + enable.idempotence=false.
"""

import json
import os
import subprocess
import time

import pytest

import samsa_harness
from samsa_harness import T
from txnwire import OVERRIDES, create_topic, offset_fetch, wait_for


def build_dir():
    d = os.environ.get("SAMSA_BUILD_DIR")
    if not d:
        pytest.skip("SAMSA_BUILD_DIR not set: run through ctest")
    return d


def probe(bs, txn_id, steps, conf=(), timeout=60):
    p = subprocess.run([os.path.join(build_dir(), "txn_probe"), bs, txn_id]
                       + list(conf) + ["--"] + list(steps),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=T(timeout))
    found = samsa_harness.sanitizer_reports(p.stderr)
    assert not found, "sanitizer report (%s):\n%s" % (found, p.stderr[-6000:])
    assert p.returncode == 0, p.stderr[-3000:]
    lines = [json.loads(x) for x in p.stdout.strip().splitlines()]
    return [x["err"] for x in lines[:-1]], lines[-1], p.stderr


def consume(bs, topic, nparts, level, want, timeout=8):
    from confluent_kafka import Consumer, TopicPartition
    c = Consumer({"bootstrap.servers": bs, "group.id": "g-" + level,
                  "isolation.level": level, "enable.auto.commit": False})
    c.assign([TopicPartition(topic, p, 0) for p in range(nparts)])
    vals, end = [], time.monotonic() + T(timeout)
    while time.monotonic() < end and len(vals) < want:
        m = c.poll(0.2)
        if m is not None and not m.error():
            vals.append(m.value())
    c.close()
    return sorted(vals)


def test_commit_visible_to_read_committed(samsa):
    srv = samsa.start(overrides=OVERRIDES)
    with srv.connect() as conn:
        create_topic(conn, "tc", 3)
    steps = ["init", "begin"] + ["send:tc:%d:c%d" % (i % 3, i) for i in range(9)] \
        + ["commit", "begin", "send:tc:0:second", "commit"]
    errs, last, _ = probe(srv.bootstrap(), "lt-commit", steps)
    assert errs == ["NONE"] * len(steps), errs
    assert last["delivered"] == 10 and last["failed"] == 0, last
    want = sorted([b"c%d" % i for i in range(9)] + [b"second"])
    assert consume(srv.bootstrap(), "tc", 3, "read_committed", 10) == want


def test_abort_hidden_from_read_committed(samsa):
    srv = samsa.start(overrides=OVERRIDES)
    with srv.connect() as conn:
        create_topic(conn, "ta", 2)
    steps = ["init", "begin", "send:ta:0:no1", "send:ta:1:no2", "flush",
             "abort",
             # queued, never sent: the abort fails them
             "begin", "send:ta:0:never", "abort",
             "begin", "send:ta:1:yes", "commit"]
    errs, last, _ = probe(srv.bootstrap(), "lt-abort", steps,
                          conf=["linger.ms=60000"])
    assert errs == ["NONE"] * len(steps), errs
    assert last["delivered"] == 3, last
    assert last["errors"] == {"_TXN_ABORTED": 1}, last
    assert consume(srv.bootstrap(), "ta", 2, "read_committed", 2, 5) == [b"yes"]
    assert consume(srv.bootstrap(), "ta", 2, "read_uncommitted", 3) == \
        [b"no1", b"no2", b"yes"]


def test_send_offsets_atomic_with_commit(samsa):
    srv = samsa.start(overrides=OVERRIDES)
    with srv.connect() as conn:
        create_topic(conn, "oin", 1)
        create_topic(conn, "oout", 1)
    bs = srv.bootstrap()
    errs, _, _ = probe(bs, "lt-offs", [
        "init", "begin", "send:oout:0:x", "offsets:og:oin:0:7", "abort"])
    assert errs == ["NONE"] * 5, errs
    with srv.connect() as conn:
        assert offset_fetch(conn, "og", {"oin": [0]}) == {("oin", 0): (-1, 0)}
    errs, _, _ = probe(bs, "lt-offs", [
        "init", "begin", "send:oout:0:y", "offsets:og:oin:0:42", "commit"])
    assert errs == ["NONE"] * 5, errs
    with srv.connect() as conn:
        assert wait_for("the committed offset", lambda: offset_fetch(
            conn, "og", {"oin": [0]}, True) == {("oin", 0): (42, 0)} or None,
            T(10))


def test_abortable_error_then_abort(samsa):
    # a record the broker refuses (over message.max.bytes) fails: the
    # transaction is ABORTABLE_ERROR, commit/send/begin return the record's
    # error, abort works (with an epoch bump: the failed batch's sequence
    # is unresolved) and the next transaction commits
    srv = samsa.start(overrides=dict(OVERRIDES, **{"message.max.bytes": "2000"}))
    with srv.connect() as conn:
        create_topic(conn, "tb", 2)
    steps = ["init", "begin", "send:tb:0:lost", "sendbig:tb:1:8000", "commit",
             "send:tb:0:refused", "begin", "abort", "begin", "send:tb:0:ok",
             "commit"]
    errs, last, err = probe(srv.bootstrap(), "lt-abortable", steps)
    assert errs[:4] == ["NONE"] * 4, errs
    bad = errs[4]
    assert bad not in ("NONE", "_STATE", "_TIMED_OUT"), errs
    assert errs[4:] == [bad, bad, bad, "NONE", "NONE", "NONE", "NONE"], errs
    assert last["errors"].get(bad) == 1, last
    assert last["delivered"] == 2, last
    assert consume(srv.bootstrap(), "tb", 2, "read_committed", 1, 5) == [b"ok"]
    # the abort bumped the epoch (InitProducerId with the id and epoch)
    assert "transactional id lt-abortable: producer id" in err, err[-2000:]
    assert "epoch 1" in err, err[-2000:]


def test_second_producer_fences_first(samsa, tmp_path):
    from confluent_kafka import Producer
    srv = samsa.start(overrides=OVERRIDES)
    with srv.connect() as conn:
        create_topic(conn, "tf", 1)
    bs = srv.bootstrap()
    ready, go = str(tmp_path / "ready"), str(tmp_path / "go")
    proc = subprocess.Popen(
        [os.path.join(build_dir(), "txn_probe"), bs, "lt-fence", "--",
         "init", "begin", "send:tf:0:old", "flush", "touch:" + ready,
         "wait:" + go, "commit", "begin", "send:tf:0:late", "abort", "init"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for("the first producer", lambda: os.path.exists(ready) or None,
                 T(20))
        p2 = Producer({"bootstrap.servers": bs, "transactional.id": "lt-fence"})
        p2.init_transactions(T(20))         # fences the first
        p2.begin_transaction()
        p2.produce("tf", value=b"new", partition=0)
        p2.commit_transaction(T(20))
        open(go, "w").close()
        out, err = proc.communicate(timeout=T(40))
    finally:
        if proc.poll() is None:
            proc.kill()
    found = samsa_harness.sanitizer_reports(err)
    assert not found, "sanitizer report (%s):\n%s" % (found, err[-6000:])
    lines = [json.loads(x) for x in out.strip().splitlines()]
    errs = [x["err"] for x in lines[:-1]]
    assert errs[:6] == ["NONE"] * 6, errs
    fenced = errs[6]
    assert fenced in ("PRODUCER_FENCED", "INVALID_PRODUCER_EPOCH"), errs
    # fatal: every later call fails with the same error
    assert errs[7:] == [fenced] * 4, errs
    assert consume(bs, "tf", 1, "read_committed", 1, 5) == [b"new"]


def test_wrong_state_and_config(samsa):
    srv = samsa.start(overrides=OVERRIDES)
    with srv.connect() as conn:
        create_topic(conn, "ts", 1)
    bs = srv.bootstrap()
    errs, last, _ = probe(bs, "lt-state", [
        "send:ts:0:before-init", "begin", "commit", "init", "init",
        "send:ts:0:outside", "commit", "abort", "begin", "begin",
        "send:ts:0:in", "commit"])
    assert errs == ["_STATE", "_STATE", "_STATE", "NONE", "_STATE",
                    "_STATE", "_STATE", "_STATE", "NONE", "_STATE",
                    "NONE", "NONE"], errs
    assert last["delivered"] == 1, last
    errs, last, _ = probe(bs, "lt-conf", ["init"],
                          conf=["enable.idempotence=false"])
    assert errs == [] and last["step"] == "new" and last["err"] == "_CONFIG"
    assert "enable.idempotence" in last["errstr"], last
    errs, last, _ = probe(bs, "lt-conf", ["init"], conf=["acks=1"])
    assert last["step"] == "new" and last["err"] == "_CONFIG"
    assert "acks" in last["errstr"], last
