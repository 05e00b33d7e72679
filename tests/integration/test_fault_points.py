"""Crash at every named fault point: nothing acknowledged is lost.

samsa-server-faults is samsa-server with its fault points compiled in
(src/util/fault.h): SAMSA_FAULT=<point>:<n> kills it with SIGKILL the n-th
time it passes <point>.  For each point the test runs a mixed workload
against it until it dies there:
- produce (acks=all) of 16 x 4 KiB records per request to a topic with
  1 MiB segments (a roll every ~16 requests), retention.bytes of 3 MiB
  and file.delete.delay.ms=0 (segments deleted while it runs);
- a topic with flush.messages=1 (every append flushed before its ack);
- offset commits of a growing offset for a group;
- a topic created now and then (metadata log appends);
then restarts the plain samsa-server on the same directory and checks:
- every acknowledged batch at or above the log start offset is there, at
  the offset its acknowledgement named, with its content; offsets are dense
  from the log start to the high watermark;
- the group's committed offset is the last acknowledged commit or the one
  in flight at the kill;
- every acknowledged topic exists.
A point the workload never reaches within the time limit fails the test.
"""

import time

import pytest

import kwire
from samsa_harness import T, faults_binary
import test_groups_protocol as gp
import txnwire as tx

TOPIC = "fp"
FLUSHED = "fp-flush1"
COMPACT = "fp-compact"
TXN_TOPIC = "fp-txn"
TXN_ID = "fp-tx"
GROUP = "fp-group"
KEYS = 8
REC = 4096
PER_REQ = 16

# (point, n-th pass): late enough that the workload is well under way
POINTS = [
    ("log.append.before_write", 60),
    ("log.append.after_write", 60),
    ("log.flush.before_sync", 40),
    ("log.roll.after_seal", 3),
    ("log.roll.after_open", 3),
    ("log.retention.after_rename", 1),
    ("log.retention.before_unlink", 1),
    ("log.checkpoint.before_rename", 20),  # after the set-up's topic creations
    ("group.store.before_append", 30),
    ("group.store.after_append", 30),
    ("metadata.append.before_write", 8),
    ("cleaner.swap.after_mark_deleted", 1),
    ("cleaner.swap.after_rename", 1),
    ("txn.markers.before_first", 20),
    ("txn.markers.after_one", 20),
    ("txn.markers.before_complete", 20),
]

OVERRIDES = {
    "log.retention.check.interval.ms": "300",
    "log.flush.offset.checkpoint.interval.ms": "300",
    "log.flush.start.offset.checkpoint.interval.ms": "300",
    "offsets.topic.num.partitions": "3",
    "transaction.state.log.num.partitions": "3",
    "log.cleaner.backoff.ms": "100",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "500",
}


def batch(seq):
    recs = [kwire.Record((b"%08d/%02d:" % (seq, i)).ljust(REC, b"~"))
            for i in range(PER_REQ)]
    return kwire.encode_batch(recs)


def keyed_batch(seq):
    recs = [kwire.Record((b"%08d/%02d:" % (seq, i)).ljust(REC, b"~"),
                         key=b"k%d" % ((seq * PER_REQ + i) % KEYS))
            for i in range(PER_REQ)]
    return kwire.encode_batch(recs)


def txn_produce(c, batch):
    body = kwire.encode_produce_request(9, [(TXN_TOPIC, [(0, batch)])],
                                        transactional_id=TXN_ID)
    return c.request(kwire.API_PRODUCE, 9, body, timeout=T(10))["topics"][0]["partitions"][0]


def prepare(samsa):
    srv = samsa.start(overrides=OVERRIDES, binary=faults_binary())
    with srv.connect(timeout=T(5)) as c:
        for name, cfg in ((TOPIC, {"segment.bytes": str(1 << 20),
                                   "retention.bytes": str(3 << 20),
                                   "file.delete.delay.ms": "0"}),
                          (FLUSHED, {"flush.messages": "1"}),
                          (COMPACT, {"cleanup.policy": "compact",
                                     "segment.bytes": str(1 << 20),
                                     "min.cleanable.dirty.ratio": "0.01"}),
                          (TXN_TOPIC, {})):
            r = c.create_topic(name, 1, cfg, timeout=T(10))
            assert r["error_code"] == 0, (name, kwire.error_name(r["error_code"]))
            c.wait_topic(name, 1, timeout=T(10))
        assert gp.commit(c, GROUP, -1, "", {(TOPIC, 0): 0}, version=2) == {(TOPIC, 0): 0}
    srv.stop()
    return srv.workdir


def txn_step(c, state, seq):
    """One transaction of one batch, committed; state["txn_done"] lists the
    seqs whose EndTxn was answered."""
    if "pid" not in state:
        # a short timeout: a transaction left open by the crash is aborted
        # soon after the restart, so check_txn can wait for LSO == HW
        err, pid, epoch = tx.init_pid(c, TXN_ID, timeout_ms=5000)
        if err != 0:
            return
        state["pid"], state["epoch"], state["tseq"] = pid, epoch, 0
    pid, epoch = state["pid"], state["epoch"]
    for _ in range(100):
        r = tx.add_partitions(c, TXN_ID, pid, epoch, {TXN_TOPIC: [0]})
        if r[(TXN_TOPIC, 0)] != tx.E["CONCURRENT_TRANSACTIONS"]:
            break
        time.sleep(0.02)
    if r[(TXN_TOPIC, 0)] != 0:
        return
    b = kwire.idempotent_batch([b"t%08d" % seq], pid, epoch, state["tseq"],
                               transactional=True)
    p = txn_produce(c, b)
    if p["error_code"] != 0:
        return
    state["tseq"] += 1
    state["txn_inflight"] = seq
    if tx.end_txn(c, TXN_ID, pid, epoch, True) == 0:
        state["txn_done"].append(seq)


def workload(srv, state, limit_s):
    """Runs until the server dies; returns why it stopped."""
    deadline = time.monotonic() + limit_s
    try:
        with srv.connect(timeout=T(5)) as c:
            i = 0
            while time.monotonic() < deadline:
                seq = state["seq"]
                state["seq"] += 1
                p = c.produce(TOPIC, 0, batch(seq), timeout=T(10))
                if p["error_code"] == 0:
                    state["acked"][seq] = p["base_offset"]
                q = c.produce(FLUSHED, 0, batch(seq), timeout=T(10))
                if q["error_code"] == 0:
                    state["acked_flushed"][seq] = q["base_offset"]
                k = c.produce(COMPACT, 0, keyed_batch(seq), timeout=T(10))
                if k["error_code"] == 0:
                    for r in range(PER_REQ):
                        state["compact"][b"k%d" % ((seq * PER_REQ + r) % KEYS)] = (seq, r)
                txn_step(c, state, seq)
                state["commit_inflight"] = seq
                r = gp.commit(c, GROUP, -1, "", {(TOPIC, 0): seq}, version=2)
                if r == {(TOPIC, 0): 0}:
                    state["commit_acked"] = seq
                if i % 5 == 4:
                    name = "fp-extra-%d" % seq
                    r = c.create_topic(name, 1, timeout=T(10))
                    if r["error_code"] == 0:
                        state["topics"].append(name)
                i += 1
    except (OSError, kwire.ConnectionClosed, kwire.FrameTimeout) as e:
        return "connection lost: %s" % type(e).__name__
    return "time limit"


def check(srv, state, point):
    with srv.connect(timeout=T(5)) as c:
        for topic, acked in ((TOPIC, state["acked"]), (FLUSHED, state["acked_flushed"])):
            c.wait_topic(topic, 1, timeout=T(10))
            lso = c.list_offsets(topic, 0, -2, timeout=T(10))    # earliest
            assert lso["error_code"] == 0, kwire.error_name(lso["error_code"])
            batches, last = c.fetch_all(topic, 0, lso["offset"], timeout=T(30))
            assert last["error_code"] == 0, kwire.error_name(last["error_code"])
            assert all(b["crc_ok"] for b in batches), "%s: a batch fails its CRC" % point
            recs = kwire.records_of(batches)
            start = lso["offset"]
            offs = [r["offset"] for r in recs]
            assert offs == list(range(start, start + len(recs))), \
                "%s: %s offsets not dense" % (point, topic)
            assert start + len(recs) == last["high_watermark"]
            at = {r["offset"]: r["value"] for r in recs}
            for seq, base in acked.items():
                if base + PER_REQ <= start:
                    continue                # removed by retention
                for k in range(PER_REQ):
                    if base + k < start:
                        continue
                    v = at.get(base + k)
                    assert v is not None and v.startswith(b"%08d/%02d:" % (seq, k)), \
                        "%s: %s acknowledged record %d/%d at offset %d is %r" % (
                            point, topic, seq, k, base + k, v and v[:12])
        check_compacted(c, state, point)
        check_txn(c, state, point)
        err, offs = gp.fetch_offsets(c, GROUP, [(TOPIC, [0])], version=2)
        committed = offs[(TOPIC, 0)][0]
        assert committed in (state["commit_acked"], state["commit_inflight"]), \
            "%s: committed offset %d, last acknowledged %d, in flight %d" % (
                point, committed, state["commit_acked"], state["commit_inflight"])
        if state["topics"]:
            md = c.metadata(version=1, topics=state["topics"], timeout=T(10))
            bad = [t["name"] for t in md["topics"] if t["error_code"] != 0]
            assert not bad, "%s: acknowledged topics missing: %s" % (point, bad)


def check_compacted(c, state, point):
    """The latest acknowledged value of every key is there (or a later one
    that was in flight at the kill)."""
    lso = c.list_offsets(COMPACT, 0, -2, timeout=T(10))
    batches, last = c.fetch_all(COMPACT, 0, lso["offset"], timeout=T(30))
    assert last["error_code"] == 0, kwire.error_name(last["error_code"])
    assert all(b["crc_ok"] for b in batches), "%s: a compacted batch fails its CRC" % point
    latest = {}
    for r in kwire.records_of(batches):
        latest[r["key"]] = (int(r["value"][:8]), int(r["value"][9:11]))
    for key, (seq, i) in state["compact"].items():
        got = latest.get(key)
        assert got is not None and got >= (seq, i), \
            "%s: key %r: acknowledged %d/%d, found %r" % (point, key, seq, i, got)


def check_txn(c, state, point):
    """Every committed transaction is visible to read_committed once the
    coordinator has finished its markers (after a restart it completes
    what was prepared)."""
    want = set(state["txn_done"])
    deadline = time.monotonic() + T(20)
    while True:
        batches, last = c.fetch_all(TXN_TOPIC, 0, 0, timeout=T(10))
        lso = last.get("last_stable_offset", -1)
        seen = set()
        for b in batches:
            for r in kwire.records_of([b]):
                if r["offset"] < lso and r["value"][:1] == b"t":
                    seen.add(int(r["value"][1:]))
        if want <= seen and lso == last["high_watermark"]:
            break
        assert time.monotonic() < deadline, \
            "%s: committed transactions not visible below the LSO (%d of %d; LSO %d, HW %d)" % (
                point, len(want & seen), len(want), lso, last["high_watermark"])
        time.sleep(0.2)


@pytest.mark.parametrize("point,nth", POINTS, ids=[p for p, _ in POINTS])
def test_crash_at_fault_point(samsa, point, nth):
    workdir = prepare(samsa)
    state = {"seq": 0, "acked": {}, "acked_flushed": {}, "commit_acked": 0,
             "commit_inflight": 0, "topics": [], "compact": {}, "txn_done": []}
    srv = samsa.start(overrides=OVERRIDES, workdir=workdir, binary=faults_binary(),
                      env={"SAMSA_FAULT": "%s:%d" % (point, nth)})
    why = workload(srv, state, T(20))
    assert srv.wait_exit(T(10)) is not None, \
        "%s:%d never reached (%s, %d requests)" % (point, nth, why, state["seq"])
    srv.stopped = True                  # killed on purpose
    assert "fault point %s" % point in srv.stderr_text(), srv.stderr_tail()
    assert state["acked"], "nothing was acknowledged before the crash"
    srv = samsa.start(overrides=OVERRIDES, workdir=workdir)
    check(srv, state, point)
