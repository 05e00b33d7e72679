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

import os
import time

import pytest

import kwire
from samsa_harness import T, faults_binary
import test_groups_protocol as gp

TOPIC = "fp"
FLUSHED = "fp-flush1"
GROUP = "fp-group"
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
    ("log.checkpoint.before_rename", 4),
    ("group.store.before_append", 30),
    ("group.store.after_append", 30),
    ("metadata.append.before_write", 8),
]

OVERRIDES = {
    "log.retention.check.interval.ms": "300",
    "log.flush.offset.checkpoint.interval.ms": "300",
    "log.flush.start.offset.checkpoint.interval.ms": "300",
    "offsets.topic.num.partitions": "3",
}


def batch(seq):
    recs = [kwire.Record((b"%08d/%02d:" % (seq, i)).ljust(REC, b"~"))
            for i in range(PER_REQ)]
    return kwire.encode_batch(recs)


def prepare(samsa):
    srv = samsa.start(overrides=OVERRIDES, binary=faults_binary())
    with srv.connect(timeout=T(5)) as c:
        for name, cfg in ((TOPIC, {"segment.bytes": str(1 << 20),
                                   "retention.bytes": str(3 << 20),
                                   "file.delete.delay.ms": "0"}),
                          (FLUSHED, {"flush.messages": "1"})):
            r = c.create_topic(name, 1, cfg, timeout=T(10))
            assert r["error_code"] == 0, (name, kwire.error_name(r["error_code"]))
            c.wait_topic(name, 1, timeout=T(10))
        assert gp.commit(c, GROUP, -1, "", {(TOPIC, 0): 0}, version=2) == {(TOPIC, 0): 0}
    srv.stop()
    return srv.workdir


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
        err, offs = gp.fetch_offsets(c, GROUP, [(TOPIC, [0])], version=2)
        committed = offs[(TOPIC, 0)][0]
        assert committed in (state["commit_acked"], state["commit_inflight"]), \
            "%s: committed offset %d, last acknowledged %d, in flight %d" % (
                point, committed, state["commit_acked"], state["commit_inflight"])
        if state["topics"]:
            md = c.metadata(version=1, topics=state["topics"], timeout=T(10))
            bad = [t["name"] for t in md["topics"] if t["error_code"] != 0]
            assert not bad, "%s: acknowledged topics missing: %s" % (point, bad)


@pytest.mark.parametrize("point,nth", POINTS, ids=[p for p, _ in POINTS])
def test_crash_at_fault_point(samsa, point, nth):
    workdir = prepare(samsa)
    state = {"seq": 0, "acked": {}, "acked_flushed": {}, "commit_acked": 0,
             "commit_inflight": 0, "topics": []}
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
